//! The disk cache's format: where it lives, how a compiled kernel's file is named and keyed,
//! and how a file is written so that a reader never sees part of one.
//!
//! A file is named by the target and a 128-bit FNV-1a hash of (format, options, NVRTC version,
//! target, entry, source), and holds a header (magic, format version, image kind, the full
//! key, length, checksum) and the image. A file that is truncated, corrupt, from another format
//! or for another key is ignored (and rewritten by the caller); files are written to a
//! temporary name and renamed, so concurrent processes at worst compile twice.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::nvrtc::{compile_options, Flags, Target};

/// Bump this number when the file layout or the compile options change, so old files are
/// not mistaken for current ones.
const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"EFKERNEL";
const HEADER_LEN: usize = 48;

/// The disk cache directory from the environment (see the module documentation).
pub(crate) fn cache_dir_from(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = env("EMBERFIRE_KERNEL_CACHE") {
        return if dir.is_empty() { None } else { Some(PathBuf::from(dir)) };
    }
    if let Some(xdg) = env("XDG_CACHE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(xdg.join("emberfire").join("kernels"));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("emberfire").join("kernels"))
}

/// FNV-1a, 128 bits: stable across builds and platforms (std's hashers are not).
pub(crate) fn fnv1a_128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for part in parts {
        // Length-prefix every part so ("ab", "c") and ("a", "bc") differ.
        for &b in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            h ^= b as u128;
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// FNV-1a, 64 bits: the checksum of a cached image.
pub(crate) fn fnv1a_64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The key of a compiled kernel on disk.
pub(crate) fn disk_key(
    source: &str,
    entry: &str,
    target: Target,
    nvrtc: (u32, u32),
    flags: Flags,
) -> u128 {
    let options = compile_options(target, flags).join(" ");
    fnv1a_128(&[
        &FORMAT_VERSION.to_le_bytes(),
        options.as_bytes(),
        &nvrtc.0.to_le_bytes(),
        &nvrtc.1.to_le_bytes(),
        target.to_string().as_bytes(),
        entry.as_bytes(),
        source.as_bytes(),
    ])
}

/// The file name of a kernel in the cache directory.
pub(crate) fn file_name(target: Target, key: u128) -> String {
    format!("{target}-{key:032x}.bin")
}

/// A cache file: header + image.
pub(crate) fn encode_entry(key: u128, target: Target, image: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + image.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&target.kind().to_le_bytes());
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&(image.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a_64(image).to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(image);
    out
}

/// The image in a cache file, if the file is whole, of this format and for this key.
pub(crate) fn decode_entry(file: &[u8], key: u128, target: Target) -> Option<&[u8]> {
    if file.len() < HEADER_LEN || &file[..8] != MAGIC {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(file[i..i + 8].try_into().expect("8 bytes"));
    let stored_key = u128::from_le_bytes(file[16..32].try_into().expect("16 bytes"));
    if u32_at(8) != FORMAT_VERSION || u32_at(12) != target.kind() || stored_key != key {
        return None;
    }
    let image = &file[HEADER_LEN..];
    if u64_at(32) != image.len() as u64 || u64_at(40) != fnv1a_64(image) || image.is_empty() {
        return None;
    }
    Some(image)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// readers see the old file or the new one, never a part. The file is not flushed to stable
/// storage: a flush cost more than the compile it saves on some file systems, and a file torn
/// by a crash fails `decode_entry`'s length and checksum test and is compiled again.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::kernel::nvrtc::FastCompile;
    use crate::backend::cuda::vendor::search::read_dir_names;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "emberfire-disk-cache-test-{tag}-{}-{:x}",
            std::process::id(),
            fnv1a_64(tag.as_bytes())
        ));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn fnv_matches_published_vectors() {
        // FNV-1a reference values (no length prefix) for "" and "a".
        let raw = |s: &[u8]| {
            let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
            for &b in s {
                h ^= b as u128;
                h = h.wrapping_mul(0x0000000001000000000000000000013B);
            }
            h
        };
        assert_eq!(raw(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(raw(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
        assert_eq!(fnv1a_64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn keys_are_stable_and_separate_their_parts() {
        // A fixed value: if this changes, every user's disk cache is invalidated; bump
        // FORMAT_VERSION deliberately instead.
        let min = Flags { minimal: true, ..Flags::default() };
        let k = disk_key("src", "k", Target::Cubin(90), (13, 0), min);
        assert_eq!(k, disk_key("src", "k", Target::Cubin(90), (13, 0), min));
        assert_eq!(format!("{k:032x}").len(), 32);
        assert_ne!(fnv1a_128(&[b"ab", b"c"]), fnv1a_128(&[b"a", b"bc"]));
        assert_ne!(k, disk_key("src", "k", Target::Cubin(80), (13, 0), min));
        assert_ne!(k, disk_key("src", "k", Target::Ptx(90), (13, 0), min));
        assert_ne!(k, disk_key("src", "k", Target::Cubin(90), (12, 8), min));
        assert_ne!(k, disk_key("src", "k2", Target::Cubin(90), (13, 0), min));
        assert_ne!(k, disk_key("src ", "k", Target::Cubin(90), (13, 0), min));
        assert_ne!(k, disk_key("src", "k", Target::Cubin(90), (13, 0), Flags::default()));
        let fast = Flags { fast: FastCompile::Min, ..min };
        assert_ne!(k, disk_key("src", "k", Target::Cubin(90), (13, 0), fast));
        assert_eq!(fnv1a_128(&[b"emberfire"]), {
            let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
            for &b in 9u64.to_le_bytes().iter().chain(b"emberfire".iter()) {
                h ^= b as u128;
                h = h.wrapping_mul(0x0000000001000000000000000000013B);
            }
            h
        });
    }

    #[test]
    fn entries_round_trip_and_reject_damage() {
        let key = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let image: Vec<u8> = (0..5000u32).map(|i| (i * 31) as u8).collect();
        let file = encode_entry(key, Target::Cubin(90), &image);
        assert_eq!(decode_entry(&file, key, Target::Cubin(90)), Some(&image[..]));
        // Another key (a foreign file under this name), another kind.
        assert_eq!(decode_entry(&file, key ^ 1, Target::Cubin(90)), None);
        assert_eq!(decode_entry(&file, key, Target::Ptx(90)), None);
        // Truncated anywhere, a flipped bit anywhere, junk, nothing.
        for cut in [0, 7, HEADER_LEN - 1, HEADER_LEN, file.len() - 1] {
            assert_eq!(decode_entry(&file[..cut], key, Target::Cubin(90)), None, "cut {cut}");
        }
        for i in (0..file.len()).step_by(97) {
            let mut bad = file.clone();
            bad[i] ^= 0x10;
            assert_eq!(decode_entry(&bad, key, Target::Cubin(90)), None, "flip at {i}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode_entry(&longer, key, Target::Cubin(90)), None);
        assert_eq!(decode_entry(b"not a kernel", key, Target::Cubin(90)), None);
        // Another format version.
        let mut old = file.clone();
        old[8] = old[8].wrapping_add(1);
        assert_eq!(decode_entry(&old, key, Target::Cubin(90)), None);
    }

    #[test]
    fn files_are_written_atomically_and_replace_old_ones() {
        let dir = temp_dir("atomic");
        let path = dir.join("nested").join(file_name(Target::Cubin(90), 42));
        write_atomically(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        write_atomically(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        let leftovers: Vec<_> = read_dir_names(path.parent().unwrap()).collect();
        assert_eq!(leftovers, vec![file_name(Target::Cubin(90), 42)], "no temporary files left");
        assert!(file_name(Target::Cubin(90), 42).starts_with("sm_90-0000"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_writers_leave_one_whole_file() {
        let dir = temp_dir("race");
        let path = dir.join("k.bin");
        let key = 7u128;
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let path = path.clone();
                s.spawn(move || {
                    let image = vec![t; 100_000];
                    for _ in 0..20 {
                        write_atomically(&path, &encode_entry(key, Target::Cubin(90), &image))
                            .unwrap();
                        let read = fs::read(&path).unwrap();
                        assert!(decode_entry(&read, key, Target::Cubin(90)).is_some());
                    }
                });
            }
        });
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_cache_directory_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        static ALL: [(&str, &str); 3] =
            [("EMBERFIRE_KERNEL_CACHE", "/x/kc"), ("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/u")];
        let all = &ALL;
        assert_eq!(cache_dir_from(&env(all)), Some(PathBuf::from("/x/kc")));
        assert_eq!(cache_dir_from(&env(&all[1..])), Some(PathBuf::from("/xdg/emberfire/kernels")));
        assert_eq!(
            cache_dir_from(&env(&all[2..])),
            Some(PathBuf::from("/home/u/.cache/emberfire/kernels"))
        );
        assert_eq!(
            cache_dir_from(&env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/emberfire/kernels")),
            "a relative XDG_CACHE_HOME is ignored, as the XDG spec says"
        );
        assert_eq!(cache_dir_from(&env(&[("EMBERFIRE_KERNEL_CACHE", ""), ("HOME", "/h")])), None);
        assert_eq!(cache_dir_from(&env(&[])), None);
    }
}
