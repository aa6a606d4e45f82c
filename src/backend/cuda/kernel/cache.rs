//! The one kernel cache of a device: every CUDA kernel emberfire runs is found here by a
//! [`KernelKey`], compiled (or read from the disk cache) once, and counted.
//!
//! A key names a kernel family and holds the bytes that tell its variants apart: for the fused
//! element-wise and reduction kernels the structure of the program, for hand-written kernels
//! the element types and options their source is specialised for, for a source given as text
//! (a user's kernel) the text itself. The key is what is looked up on every launch, so the
//! source text of a generated kernel is written only on a miss.
//!
//! What is cached per key is whatever the family needs to launch: one [`KernelFn`], or a set
//! of entry points of one compiled module (the sort's and the scan's kernels). Threads that
//! ask for the same key at once share one build; the others wait and count as memory hits. A
//! failed build is forgotten, so a later call tries again (the cause may be transient).
//!
//! One lock rule: the table's lock is never held while compiling, and a lock poisoned by a
//! panicking thread is taken over (every change to the table is a single insert or removal,
//! so it is never left half-made).

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::ahead::{self, Compiling};
use super::disk::{
    cache_dir_from, decode_entry, disk_key, encode_entry, file_name, write_atomically,
};
use super::loaded::KernelFn;
use super::nvrtc::{
    choose_target, compile, nvrtc, trace_event, FastCompile, Flags, Origin, Target,
};
#[cfg(test)]
use super::stats::JitStats;
use super::stats::{Counters, Outcome};
use crate::backend::cuda::runtime::Device;
use crate::error::Error;
use crate::sync::lock;

/// The kernel families. Keys of different families never compare equal, whatever their bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    /// Fused element-wise programs (`codegen`).
    Elementwise,
    /// Reductions fused with their element-wise producer (`codegen::reduce`).
    Reduce,
    /// The tiled transpose (`kernels/transpose.cu`).
    Transpose,
    /// The strided copy (`kernels/copy.cu`).
    Copy,
    /// Gathers and scatters (`kernels/index_copy.cu`).
    IndexCopy,
    /// Signal processing (`kernels/signal.cu`).
    Signal,
    /// Random numbers (`kernels/random.cu`).
    Random,
    /// Scans (`kernels/scan.cu`).
    Scan,
    /// The radix sort and compaction (`kernels/sort.cu`).
    Sort,
    /// Sparse matrices (`kernels/sparse.cu`).
    Sparse,
    /// Image warps and histograms (`kernels/image.cu`).
    Image,
    /// Computer vision: the nearest-neighbour search (`kernels/nearest.cu`).
    Vision,
    /// A source given as text, keyed by the text and the entry point.
    Source,
    /// Matrix products with two small sizes (`kernels/skinny_gemm.cu`).
    Gemm,
}

/// What a kernel is looked up by. Its hash is computed once, when the key is made.
#[derive(Clone)]
pub(crate) struct KernelKey {
    family: Family,
    // A `Vec`, not a boxed slice: turning the family's `Vec` into a box could reallocate it
    // on every launch.
    bytes: Vec<u8>,
    hash: u64,
}

impl KernelKey {
    /// The key of a variant of `family` told apart by `bytes`.
    pub(crate) fn new(family: Family, bytes: impl Into<Vec<u8>>) -> KernelKey {
        let bytes = bytes.into();
        let hash = key_hash(family as u8, &bytes);
        KernelKey { family, bytes, hash }
    }

    /// The key of entry point `entry` of a source given as text, compiled as `origin`'s.
    pub(crate) fn of_source(source: &str, entry: &str, origin: Origin) -> KernelKey {
        let mut bytes = Vec::with_capacity(entry.len() + source.len() + 10);
        bytes.push(origin as u8);
        bytes.extend_from_slice(&(entry.len() as u64).to_le_bytes());
        bytes.extend_from_slice(entry.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(source.as_bytes());
        KernelKey::new(Family::Source, bytes)
    }
}

impl PartialEq for KernelKey {
    fn eq(&self, other: &KernelKey) -> bool {
        self.hash == other.hash && self.family == other.family && self.bytes == other.bytes
    }
}

impl Eq for KernelKey {}

impl Hash for KernelKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl fmt::Debug for KernelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelKey({:?}, {} bytes, {:016x})", self.family, self.bytes.len(), self.hash)
    }
}

/// A fast hash of a key's bytes (8 bytes at a time; equality compares the bytes, so a
/// collision costs only a comparison).
fn key_hash(family: u8, bytes: &[u8]) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ ((family as u64) << 56) ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
    for &b in words.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h ^ (h >> 32)
}

/// Passes a [`KernelKey`]'s precomputed hash through.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by `KernelKey`; fold anything else in for completeness.
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type Built = Result<Arc<dyn Any + Send + Sync>, Error>;

/// One key's value, built once.
#[derive(Default)]
struct Entry {
    built: OnceLock<Built>,
}

/// The kernels of one device. See the module documentation.
pub(crate) struct KernelCache {
    cc: (u32, u32),
    dir: Option<PathBuf>,
    entries: Mutex<HashMap<KernelKey, Arc<Entry>, BuildHasherDefault<KeyHasher>>>,
    counters: Counters,
}

impl fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelCache")
            .field("compute_capability", &self.cc)
            .field("dir", &self.dir)
            .field("kernels", &self.len())
            .finish()
    }
}

impl KernelCache {
    /// A cache for a device of compute capability `cc`, with the disk cache directory taken
    /// from the environment (see [`cache_dir_from`]).
    pub(crate) fn new(cc: (u32, u32)) -> KernelCache {
        KernelCache::with_dir(cc, cache_dir_from(&|k| std::env::var_os(k)))
    }

    /// A cache with an explicit disk directory (`None`: memory only).
    pub(crate) fn with_dir(cc: (u32, u32), dir: Option<PathBuf>) -> KernelCache {
        KernelCache { cc, dir, entries: Mutex::default(), counters: Counters::new() }
    }

    /// The disk cache directory, if any.
    #[cfg(test)]
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// This cache's own counters (the process-wide ones are `stats::jit_stats`).
    #[cfg(test)]
    pub(crate) fn stats(&self) -> JitStats {
        self.counters.snapshot()
    }

    /// How many keys have a value.
    pub(crate) fn len(&self) -> usize {
        lock(&self.entries).values().filter(|e| matches!(e.built.get(), Some(Ok(_)))).count()
    }

    /// The value for `key`: found, or made by `build` on first use. `build` compiles what it
    /// needs through [`compile`](Self::compile) (which counts each compile or disk hit); a
    /// lookup that finds the value counts a memory hit.
    pub(crate) fn get_or_build<T: Any + Send + Sync>(
        &self,
        key: KernelKey,
        build: impl FnOnce() -> Result<T, Error>,
    ) -> Result<Arc<T>, Error> {
        // The common case, a hit, neither copies the key nor inserts.
        let found = lock(&self.entries).get(&key).cloned();
        let entry = match found {
            Some(e) => e,
            None => lock(&self.entries).entry(key.clone()).or_default().clone(),
        };
        let mut built_here = false;
        let built = entry.built.get_or_init(|| {
            built_here = true;
            build().map(|v| Arc::new(v) as Arc<dyn Any + Send + Sync>)
        });
        match built {
            Ok(v) => {
                if !built_here {
                    self.counters.count(Outcome::MemoryHit);
                }
                Ok(v.clone().downcast::<T>().unwrap_or_else(|_| {
                    panic!("internal error: kernel key {key:?} was built as another type")
                }))
            }
            Err(e) => {
                // Forget the failure so a later call tries again; callers that waited for
                // this build share its error.
                let mut entries = lock(&self.entries);
                if entries.get(&key).is_some_and(|e| Arc::ptr_eq(e, &entry)) {
                    entries.remove(&key);
                }
                Err(e.clone())
            }
        }
    }

    /// The kernel `entry` of emberfire's own source that `source()` writes, for `key`: the
    /// source is written and compiled only on the key's first use. A compile runs in the
    /// background (`ahead.rs`): the kernel returned may still be compiling, which its launch
    /// handles.
    pub(crate) fn kernel(
        &self,
        device: &Device,
        key: KernelKey,
        entry: &str,
        source: impl FnOnce() -> String,
    ) -> Result<Arc<KernelFn>, Error> {
        self.get_or_build(key, || {
            let started = Instant::now();
            let text = source();
            let written = Instant::now();
            let k = if ahead::enabled() {
                self.compile_ahead(device, text, entry)
            } else {
                self.compile(device, &text, entry, Origin::Own)
            };
            trace_event(|| {
                format!(
                    "new kernel `{entry}`: source in {:.2} ms, {} in {:.1} ms",
                    ms(started, written),
                    if k.as_ref().is_ok_and(|k| k.compiling_still()) {
                        "compiling in the background, handed over"
                    } else {
                        "ready"
                    },
                    ms(written, Instant::now())
                )
            });
            k
        })
    }

    /// The kernel `entry` (an `extern "C" __global__` function) of the CUDA C `source`,
    /// compiled as `origin`'s and keyed by the text.
    pub(crate) fn source(
        &self,
        device: &Device,
        source: &str,
        entry: &str,
        origin: Origin,
    ) -> Result<Arc<KernelFn>, Error> {
        let key = KernelKey::of_source(source, entry, origin);
        self.get_or_build(key, || self.compile(device, source, entry, origin))
    }

    /// Compiles `source` for `device` (the device this cache belongs to) and loads its kernel
    /// `entry`: from the disk cache when it holds this source, else with NVRTC (and then stored
    /// on disk). Counts a disk hit or a compile. A compile error is an [`Error::Driver`]
    /// holding NVRTC's log.
    pub(crate) fn compile(
        &self,
        device: &Device,
        source: &str,
        entry: &str,
        origin: Origin,
    ) -> Result<KernelFn, Error> {
        let job = self.job(source, entry, origin)?;
        if let Some(k) = self.disk_hit(device, &job) {
            return Ok(k);
        }
        dump_source(source, entry, job.key);
        self.counters.count(Outcome::Compiled);
        let (image, compiled) = job.image(source)?;
        let k = KernelFn::load(device, image, entry)?;
        trace_event(|| format!("`{entry}` loaded in {:.1} ms", ms(compiled, Instant::now())));
        Ok(k)
    }

    /// [`compile`](Self::compile) for emberfire's own `source`, with NVRTC's part on a thread of
    /// its own (`ahead.rs`): the kernel returned is loaded when first needed.
    fn compile_ahead(
        &self,
        device: &Device,
        source: String,
        entry: &str,
    ) -> Result<KernelFn, Error> {
        let job = self.job(&source, entry, Origin::Own)?;
        if let Some(k) = self.disk_hit(device, &job) {
            return Ok(k);
        }
        dump_source(&source, entry, job.key);
        self.counters.count(Outcome::Compiled);
        let compiling = Compiling::start(move || job.image(&source).map(|(image, _)| image));
        Ok(KernelFn::compiling(device, compiling, entry))
    }

    /// What compiling `source`'s `entry` for this cache's device means: target, options, disk
    /// key and file.
    fn job(&self, source: &str, entry: &str, origin: Origin) -> Result<Job, Error> {
        if entry.is_empty() || entry.contains('\0') {
            return Err(Error::Driver(format!("invalid kernel entry point name {entry:?}")));
        }
        let info = nvrtc()?;
        let target = choose_target(self.cc, &info.archs);
        let flags = origin.flags(info.version, FastCompile::from_env());
        let key = disk_key(source, entry, target, info.version, flags);
        let path = self.dir.as_ref().map(|d| d.join(file_name(target, key)));
        Ok(Job { entry: entry.to_string(), target, flags, key, path })
    }

    /// The kernel `job` makes, loaded from the disk cache if it holds it (counted as a disk hit).
    fn disk_hit(&self, device: &Device, job: &Job) -> Option<KernelFn> {
        let started = Instant::now();
        let bytes = fs::read(job.path.as_ref()?).ok()?;
        let read = Instant::now();
        let image = decode_entry(&bytes, job.key, job.target)?;
        let k = KernelFn::load(device, image.to_vec(), &job.entry).ok()?;
        self.counters.count(Outcome::DiskHit);
        trace_event(|| {
            format!(
                "`{}` ({} bytes) read from the disk cache in {:.2} ms, loaded in {:.2} ms",
                job.entry,
                bytes.len(),
                ms(started, read),
                ms(read, Instant::now())
            )
        });
        Some(k)
    }
}

/// One compile: its entry point, target and options, and where its image is stored.
struct Job {
    entry: String,
    target: Target,
    flags: Flags,
    key: u128,
    path: Option<PathBuf>,
}

impl Job {
    /// Compiles `source` with NVRTC (with the full front end and full optimisation if its
    /// flags fail) and
    /// stores the image on disk; returns it and when the compile finished.
    fn image(&self, source: &str) -> Result<(Vec<u8>, Instant), Error> {
        let entry = &self.entry;
        let started = Instant::now();
        let compile_with = |flags: Flags| {
            catch_unwind(AssertUnwindSafe(|| compile(source, entry, self.target, flags)))
                .unwrap_or_else(|_| {
                    Err(Error::Driver(format!(
                        "NVRTC failed while compiling `{entry}` (an entry point is missing?)"
                    )))
                })
        };
        // The image is stored under the key of the first choice even when the fallback made
        // it: either is code for this source, and the next process then finds it at once.
        let image = match compile_with(self.flags) {
            Err(_) if self.flags != Flags::default() => compile_with(Flags::default())?,
            done => done?,
        };
        let compiled = Instant::now();
        if let Some(p) = &self.path {
            // Best effort: a read-only or full disk only costs a compile next time.
            let _ = write_atomically(p, &encode_entry(self.key, self.target, &image));
        }
        trace_event(|| {
            format!(
                "`{entry}` ({} bytes of source) compiled in {:.1} ms, stored in {:.1} ms",
                source.len(),
                ms(started, compiled),
                ms(compiled, Instant::now())
            )
        });
        Ok((image, compiled))
    }
}

/// Milliseconds from `a` to `b`, for the trace.
fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

/// With `EMBERFIRE_DUMP_KERNELS=dir`, writes each source compiled at run time to
/// `dir/ENTRY-KEY.cu` (for reading the generated code, or compiling it offline). Best effort.
fn dump_source(source: &str, entry: &str, key: u128) {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        std::env::var_os("EMBERFIRE_DUMP_KERNELS").filter(|d| !d.is_empty()).map(PathBuf::from)
    });
    if let Some(dir) = dir {
        let _ = fs::create_dir_all(dir);
        let _ = fs::write(dir.join(format!("{entry}-{key:032x}.cu")), source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_families_entries_and_sources_apart() {
        let k = |f, b: &[u8]| KernelKey::new(f, b.to_vec());
        assert_eq!(k(Family::Sort, &[4, 1]), k(Family::Sort, &[4, 1]));
        assert_ne!(k(Family::Sort, &[4, 1]), k(Family::Scan, &[4, 1]));
        assert_ne!(k(Family::Sort, &[4, 1]), k(Family::Sort, &[4, 0]));
        assert_ne!(k(Family::Sort, &[4]), k(Family::Sort, &[4, 0]));
        let s = |src, entry| KernelKey::of_source(src, entry, Origin::Own);
        assert_ne!(s("bc", "a"), s("c", "ab"));
        assert_ne!(s("x + y", "k"), s("x - y", "k"));
        assert_ne!(s("x", "k"), KernelKey::of_source("x", "k", Origin::User));
        assert_eq!(s("0123456789abcdef", "k"), s("0123456789abcdef", "k"));
        assert_eq!(key_hash(1, b"0123456789abcdef"), key_hash(1, b"0123456789abcdef"));
        assert_ne!(key_hash(1, b"0123456789abcdef"), key_hash(1, b"0123456789abcdeg"));
    }

    #[test]
    fn a_value_is_built_once_and_later_lookups_count_as_memory_hits() {
        let cache = KernelCache::with_dir((9, 0), None);
        let key = KernelKey::new(Family::Copy, vec![1u8]);
        let builds = std::sync::atomic::AtomicUsize::new(0);
        let build = || {
            builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok::<_, Error>(42u32)
        };
        assert_eq!(*cache.get_or_build(key.clone(), build).unwrap(), 42);
        assert_eq!(*cache.get_or_build(key.clone(), build).unwrap(), 42);
        assert_eq!(builds.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(cache.stats().memory_hits, 1);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn racing_threads_share_one_build() {
        let cache = KernelCache::with_dir((9, 0), None);
        let key = KernelKey::new(Family::Sort, vec![8u8, 1]);
        let builds = std::sync::atomic::AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(8);
        let values: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        *cache
                            .get_or_build(key.clone(), || {
                                builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                std::thread::sleep(std::time::Duration::from_millis(20));
                                Ok::<_, Error>(7u64)
                            })
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(values, vec![7; 8]);
        assert_eq!(builds.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(cache.stats().memory_hits, 7);
    }

    #[test]
    fn a_failed_build_is_forgotten_and_tried_again() {
        let cache = KernelCache::with_dir((9, 0), None);
        let key = KernelKey::new(Family::Signal, vec![3u8]);
        let failed: Result<Arc<u8>, Error> =
            cache.get_or_build(key.clone(), || Err(Error::Driver("no luck".into())));
        assert!(matches!(failed, Err(Error::Driver(ref m)) if m == "no luck"));
        assert_eq!(cache.len(), 0);
        assert_eq!(*cache.get_or_build(key, || Ok::<_, Error>(5u8)).unwrap(), 5);
        assert_eq!(cache.stats().memory_hits, 0);
    }

    #[test]
    fn a_poisoned_table_is_taken_over() {
        let cache = KernelCache::with_dir((9, 0), None);
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let _held = cache.entries.lock().unwrap();
                panic!("a thread dies holding the table");
            })
            .join()
        });
        assert!(cache.entries.is_poisoned());
        let key = KernelKey::new(Family::Random, vec![0u8]);
        assert_eq!(*cache.get_or_build(key, || Ok::<_, Error>(1i32)).unwrap(), 1);
    }
}
