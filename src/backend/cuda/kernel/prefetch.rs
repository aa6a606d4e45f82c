//! Reading NVRTC's files into the operating system's file cache before the first compile.
//!
//! On a freshly started machine nothing of NVRTC (its library and the builtins library it opens
//! when it compiles, together about 100 MB) is in memory, and a first compile pulls the pages
//! it touches from the disk one fault at a time: on an H200 machine with its file cache
//! dropped, the kernels of a first run compiled in 65 to 365 ms each where they compile in 15
//! to 30 ms with the files cached, so a program of eleven kernels (k-means) took 1.4 s. Read
//! in order from a thread of its own as soon as the CUDA backend starts, the same files arrive
//! at the disk's streaming rate while the driver initialises and the program makes its first
//! arrays; the compiles then find them in memory.
//!
//! `EMBERFIRE_PREFETCH=0` turns this off (for measuring the difference).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Once;

use super::nvrtc;

/// Starts the background read once per process (the CUDA backend's start calls it); returns at
/// once. Does nothing where NVRTC cannot be loaded: its absence is reported where it is needed.
pub(crate) fn start() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("EMBERFIRE_PREFETCH").is_some_and(|v| v == "0") {
            return;
        }
        // A thread that cannot be made only loses the head start.
        let _ = std::thread::Builder::new().name("emberfire-prefetch".into()).spawn(|| {
            if nvrtc::nvrtc().is_err() {
                return;
            }
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
            for file in nvrtc_files(&maps) {
                read_through(&file);
            }
        });
    });
}

/// NVRTC's files: each library named `libnvrtc*` that the process maps (read from
/// `/proc/self/maps`), then the builtins libraries beside each (`libnvrtc-builtins*`, which
/// NVRTC opens only when it first compiles), each once.
fn nvrtc_files(maps: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for path in maps.lines().filter_map(|l| l.split_whitespace().nth(5)) {
        let p = Path::new(path);
        let named =
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libnvrtc"));
        if named && p.is_absolute() && !files.iter().any(|f| f == p) {
            files.push(p.to_path_buf());
        }
    }
    let dirs: Vec<PathBuf> =
        files.iter().filter_map(|f| f.parent().map(Path::to_path_buf)).collect();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut builtins: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libnvrtc-builtins") && n.contains(".so"))
            })
            .collect();
        builtins.sort();
        for b in builtins {
            if !files.contains(&b) {
                files.push(b);
            }
        }
    }
    files
}

/// Reads `path` from start to end and drops what it read: the pages stay in the file cache.
fn read_through(path: &Path) {
    let Ok(mut f) = std::fs::File::open(path) else { return };
    let mut buf = vec![0u8; 4 << 20];
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nvrtc_files;

    #[test]
    fn finds_the_mapped_library_and_the_builtins_beside_it() {
        let dir = std::env::temp_dir().join(format!("ef-prefetch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "libnvrtc.so.12",
            "libnvrtc-builtins.so.12.9",
            "libnvrtc-builtins.alt.so.12.9",
            "libcublas.so.12",
        ] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        let lib = dir.join("libnvrtc.so.12");
        let maps = format!(
            "7f00-7f10 r--p 00000000 fd:01 1 {0}\n7f10-7f20 r-xp 00010000 fd:01 1 {0}\n\
             7f20-7f30 rw-p 00000000 00:00 0 [heap]\n7f30-7f40 r--p 00000000 fd:01 2 /usr/lib/libc.so.6\n",
            lib.display()
        );
        let files = nvrtc_files(&maps);
        assert_eq!(
            files,
            vec![
                lib,
                dir.join("libnvrtc-builtins.alt.so.12.9"),
                dir.join("libnvrtc-builtins.so.12.9")
            ]
        );
        assert!(nvrtc_files("").is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
