//! Tests of the CUDA runtime layer that need a CUDA device. They are ignored by default (CI has
//! no GPU) and run on a GPU machine with `--include-ignored`. Timings are printed (visible
//! with `--nocapture`) but not asserted: they vary with the machine.

use std::path::PathBuf;
use std::sync::{Arc, Barrier, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use cudarc::driver::result as cu;

use super::kernel::{self, nvrtc, KernelArgs, KernelCache, Origin};
use super::memory::{DeviceMem, StreamId};
use super::runtime::{self, Device};
use crate::error::Error;

/// Held by every test here: one of them fills the device's memory, which would make others
/// that run at the same time fail. GPU tests elsewhere in the crate can take it too.
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    static GPU: Mutex<()> = Mutex::new(());
    GPU.lock().unwrap_or_else(|e| e.into_inner())
}

/// The device under test: the process's default CUDA device (`EMBERFIRE_DEVICE`, else 0).
fn dev() -> &'static Device {
    let ordinal = match crate::device::active_kind() {
        crate::backend::BackendKind::Cuda(d) => d,
        crate::backend::BackendKind::Cpu => 0,
    };
    runtime::device(ordinal).expect("a CUDA device")
}

/// Bytes that differ at every position, so misplaced or stale data shows.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed as u8).collect()
}

/// A kernel source no earlier run has compiled (so caches start cold).
fn unique_source(tag: &str) -> String {
    let nonce = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    format!(
        "// {tag} {nonce} {pid}\n\
         extern \"C\" __global__ void add_one(float* x, unsigned n) {{\n\
             unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) x[i] = x[i] + 1.0f;\n\
         }}\n",
        pid = std::process::id()
    )
}

fn temp_cache_dir(tag: &str) -> PathBuf {
    let nonce = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    std::env::temp_dir().join(format!("emberfire-kc-{tag}-{}-{nonce}", std::process::id()))
}

/// Runs `add_one` over `x` (f32 values) on the device and returns the result.
fn run_add_one(k: &kernel::KernelFn, x: &[f32]) -> Vec<f32> {
    let d = dev();
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mem = d.upload(&bytes).unwrap();
    let mut args = KernelArgs::new();
    args.u64(mem.ptr()).u32(x.len() as u32);
    let grid = (x.len() as u32).div_ceil(256);
    // SAFETY: the parameters match `add_one(float*, unsigned)`; `mem` holds n floats.
    unsafe { k.launch(d, (grid, 1, 1), (256, 1, 1), 0, &mut args) }.unwrap();
    let mut out = vec![0u8; bytes.len()];
    d.download(&mem, 0, &mut out).unwrap();
    out.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn devices_are_enumerated() {
    let _gpu = exclusive();
    let n = runtime::device_count().unwrap();
    assert!(n >= 1);
    let d = dev();
    let (major, minor) = d.compute_capability();
    eprintln!(
        "device 0: {} sm_{major}{minor}, {} SMs, {} MiB; driver {:?}; NVRTC {:?}",
        d.name(),
        d.multiprocessor_count(),
        d.total_memory() >> 20,
        runtime::driver_version().unwrap(),
        nvrtc::nvrtc_version(),
    );
    assert!(!d.name().is_empty() && major >= 5 && d.multiprocessor_count() > 0);
    assert!(d.total_memory() > 1 << 30);
    assert!(d.ordinal() < n);
    assert!(!d.stream_raw().is_null(), "emberfire has a stream of its own");
    assert!(std::ptr::eq(dev(), runtime::device(d.ordinal()).unwrap()), "one Device per ordinal");
    assert_eq!(
        runtime::device(n).unwrap_err(),
        Error::InvalidDevice { requested: n as i32, count: n as i32 }
    );
    // The context is the primary one, so the runtime API and other libraries share it.
    let mut primary = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the device is initialised.
    unsafe { cudarc::driver::sys::cuDevicePrimaryCtxRetain(&mut primary, d.context().cu_device()) }
        .result()
        .unwrap();
    assert_eq!(primary, d.context().cu_ctx());
    // SAFETY: balances the retain above.
    unsafe { cudarc::driver::sys::cuDevicePrimaryCtxRelease_v2(d.context().cu_device()) }
        .result()
        .unwrap();
    d.sync().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn small_and_large_copies_round_trip() {
    let _gpu = exclusive();
    let d = dev();
    for len in [1usize, 1024, (1 << 20) - 1, 1 << 20, 64 << 20, (64 << 20) + 12345] {
        let data = pattern(len, len as u32);
        let mem = d.upload(&data).unwrap();
        assert_eq!(mem.len(), len);
        let mut back = vec![0u8; len];
        d.download(&mem, 0, &mut back).unwrap();
        assert!(back == data, "round trip of {len} bytes");
        // A window at an offset.
        let off = len / 3;
        let mut part = vec![0u8; len - off];
        d.download(&mem, off, &mut part).unwrap();
        assert!(part == data[off..], "download at offset {off} of {len} bytes");
        // Writes at an offset, and device-to-device copies.
        let other = d.alloc(len).unwrap();
        d.copy(&mem, 0, &other, 0, len).unwrap();
        let patch = pattern(len - off, 99);
        d.write(&other, off, &patch).unwrap();
        d.download(&other, 0, &mut back).unwrap();
        assert!(back[..off] == data[..off] && back[off..] == patch[..], "write at offset");
    }
    let empty = d.upload(&[]).unwrap();
    assert!(empty.is_empty());
    d.download(&empty, 0, &mut []).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn transfer_bandwidth() {
    let _gpu = exclusive();
    let d = dev();
    let len = 256 << 20;
    let data = pattern(len, 5);
    let mut back = vec![0u8; len];
    let mem = d.upload(&data).unwrap();
    let gbs = |secs: f64| len as f64 / secs / 1e9;
    let time = |f: &mut dyn FnMut()| {
        f();
        let t = Instant::now();
        for _ in 0..3 {
            f();
        }
        t.elapsed().as_secs_f64() / 3.0
    };
    let up = time(&mut || d.write(&mem, 0, &data).unwrap());
    let down = time(&mut || d.download(&mem, 0, &mut back).unwrap());
    let (up_direct, down_direct) = d.with_staging_busy(|| {
        (
            time(&mut || d.write(&mem, 0, &data).unwrap()),
            time(&mut || d.download(&mem, 0, &mut back).unwrap()),
        )
    });
    assert!(back == data);
    eprintln!(
        "256 MiB: upload {:.1} GB/s staged, {:.1} GB/s pageable; download {:.1} GB/s staged, \
         {:.1} GB/s pageable",
        gbs(up),
        gbs(up_direct),
        gbs(down),
        gbs(down_direct)
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn alloc_free_cycles_leave_the_books_where_they_started() {
    let _gpu = exclusive();
    let d = dev();
    let m = d.memory();
    let start = m.info();
    let allocs = m.stats().allocations;
    let t = Instant::now();
    for i in 0..100_000usize {
        let a = m.alloc(4000 + (i % 5) * 8).unwrap();
        let b = m.alloc(1 << 16).unwrap();
        drop(a);
        drop(b);
    }
    let per = t.elapsed().as_secs_f64() / 200_000.0 * 1e9;
    assert_eq!(m.info(), start);
    let new = m.stats().allocations - allocs;
    eprintln!("100,000 cycles: {per:.0} ns per alloc+free, {new} driver allocations");
    assert!(new <= 4, "the cache serves repeated sizes ({new} driver allocations)");
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_locked_block_survives_memory_pressure() {
    let _gpu = exclusive();
    let d = dev();
    let m = d.memory();
    let len = 64 << 20;
    let data = pattern(len, 42);
    let locked = d.upload(&data).unwrap();
    let (ptr, start_info) = (locked.ptr(), m.info());
    locked.lock();
    drop(locked); // the user holds the pointer now
    assert_eq!(m.info().2, start_info.2 + len);
    // Fill the device: 1 GiB blocks, then 64 MiB ones, until allocation fails; overwrite each.
    let mut held: Vec<DeviceMem> = Vec::new();
    for size in [1usize << 30, 64 << 20] {
        loop {
            match m.alloc(size) {
                Ok(b) => {
                    // SAFETY: `b` is live device memory of `size` bytes.
                    unsafe { cu::memset_d8_async(b.ptr(), 0xAB, size, d.stream_raw()) }.unwrap();
                    held.push(b);
                }
                Err(Error::OutOfMemory { .. }) => break,
                Err(e) => panic!("unexpected error under pressure: {e}"),
            }
        }
    }
    d.sync().unwrap();
    let filled: usize = held.iter().map(|b| b.len()).sum();
    eprintln!("filled {} MiB around a locked block", filled >> 20);
    assert!(filled > d.total_memory() / 2);
    for b in &held {
        let overlap = b.ptr() < ptr + len as u64 && ptr < b.ptr() + b.len() as u64;
        assert!(!overlap, "a locked block was handed out again");
    }
    drop(held);
    m.gc();
    // The locked contents are intact.
    // SAFETY: `ptr` is the locked block, still allocated; the owner is a placeholder.
    let view = unsafe { m.borrow(ptr, len, Arc::new(()), false) };
    let mut back = vec![0u8; len];
    d.download(&view, 0, &mut back).unwrap();
    drop(view);
    assert!(back == data, "locked contents changed");
    assert!(m.unlock_ptr(ptr));
    assert_eq!(m.info(), (start_info.0 - len, start_info.1 - 1, start_info.2, start_info.3));
}

#[test]
#[ignore = "needs a CUDA device"]
fn an_allocation_larger_than_the_device_is_out_of_memory() {
    let _gpu = exclusive();
    let d = dev();
    let too_big = d.total_memory() * 2;
    assert_eq!(d.alloc(too_big).unwrap_err(), Error::OutOfMemory { bytes: too_big });
    assert_eq!(d.upload(&[]).unwrap().len(), 0);
    let next = d.upload(&pattern(1 << 20, 1)).unwrap();
    let mut back = vec![0u8; 1 << 20];
    d.download(&next, 0, &mut back).unwrap();
    assert!(back == pattern(1 << 20, 1));
}

#[test]
#[ignore = "needs a CUDA device"]
fn reuse_across_streams_is_ordered_with_events() {
    let _gpu = exclusive();
    let d = dev();
    let m = d.memory();
    let user = d.context().new_stream().unwrap();
    let user_id = StreamId::of(&user);
    let len = 8 << 20;
    for round in 0..20u32 {
        // Write on the user stream, free, reuse on emberfire's stream and read back.
        let a = m.alloc_on(len, user_id).unwrap();
        // SAFETY: `a` is live memory of `len` bytes; the stream is live.
        unsafe { cu::memset_d8_async(a.ptr(), round as u8, len, user.cu_stream()) }.unwrap();
        drop(a);
        let b = m.alloc(len).unwrap();
        let mut back = vec![0u8; 4096];
        d.download(&b, len - 4096, &mut back).unwrap();
        assert!(back.iter().all(|&v| v == round as u8), "reuse overtook the user stream's work");
        b.mark_used_on(user_id);
    }
    user.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn adopted_memory_is_freed_by_the_driver() {
    let _gpu = exclusive();
    let d = dev();
    d.bind().unwrap();
    let before = d.memory().info();
    for _ in 0..100 {
        // SAFETY: a fresh cuMemAlloc block that nothing else frees.
        let raw = unsafe { cu::malloc_sync(1 << 20) }.unwrap();
        // SAFETY: `raw` is that block, of 1 MiB, adopted once; no work uses it yet.
        let mem = unsafe { d.memory().adopt(raw, 1 << 20) };
        d.write(&mem, 0, &pattern(1 << 20, 3)).unwrap();
        drop(mem);
    }
    assert_eq!(d.memory().info(), before);
}

#[test]
#[ignore = "needs a CUDA device"]
fn kernels_are_cached_in_memory_and_on_disk() {
    let _gpu = exclusive();
    let d = dev();
    let dir = temp_cache_dir("mem-disk");
    let src = unique_source("cache");
    let cache = KernelCache::with_dir(d.compute_capability(), Some(dir.clone()));
    let t = Instant::now();
    let k = cache.source(d, &src, "add_one", Origin::Own).unwrap();
    let first = t.elapsed();
    assert_eq!((cache.stats().compiles, cache.stats().memory_hits), (1, 0));
    let t = Instant::now();
    let k2 = cache.source(d, &src, "add_one", Origin::Own).unwrap();
    let hit = t.elapsed();
    assert_eq!((cache.stats().compiles, cache.stats().memory_hits), (1, 1));
    assert_eq!(k.cu_function(), k2.cu_function());
    assert_eq!(run_add_one(&k, &[1.0, 2.5, -3.0]), vec![2.0, 3.5, -2.0]);

    // A fresh cache (as in a new process) finds the file.
    let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "one file per kernel: {files:?}");
    let fresh = KernelCache::with_dir(d.compute_capability(), Some(dir.clone()));
    let t = Instant::now();
    let k3 = fresh.source(d, &src, "add_one", Origin::Own).unwrap();
    let disk = t.elapsed();
    assert_eq!((fresh.stats().compiles, fresh.stats().disk_hits), (0, 1));
    assert_eq!(run_add_one(&k3, &[0.5]), vec![1.5]);
    eprintln!(
        "kernel: first get {:.1} ms (compile + load), memory hit {:.1} us, disk hit {:.2} ms",
        first.as_secs_f64() * 1e3,
        hit.as_secs_f64() * 1e6,
        disk.as_secs_f64() * 1e3
    );

    // A corrupt file is ignored and rewritten.
    let good = std::fs::read(&files[0]).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xFF;
    std::fs::write(&files[0], &bad).unwrap();
    let again = KernelCache::with_dir(d.compute_capability(), Some(dir.clone()));
    let k4 = again.source(d, &src, "add_one", Origin::Own).unwrap();
    assert_eq!((again.stats().compiles, again.stats().disk_hits), (1, 0));
    assert_eq!(std::fs::read(&files[0]).unwrap(), good, "the file was rewritten");
    assert_eq!(run_add_one(&k4, &[7.0]), vec![8.0]);
    // A foreign file (another kernel's, under this name) is ignored too.
    std::fs::write(&files[0], b"EFKERNEL but not really").unwrap();
    let third = KernelCache::with_dir(d.compute_capability(), Some(dir.clone()));
    third.source(d, &src, "add_one", Origin::Own).unwrap();
    assert_eq!(third.stats().compiles, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs a CUDA device"]
fn racing_threads_compile_once() {
    let _gpu = exclusive();
    let d = dev();
    let src = unique_source("race");
    let cache = KernelCache::with_dir(d.compute_capability(), None);
    let barrier = Barrier::new(8);
    let funcs: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    cache.source(d, &src, "add_one", Origin::Own).unwrap().cu_function() as usize
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(funcs.iter().all(|&f| f == funcs[0]));
    let s = cache.stats();
    assert_eq!((s.compiles, s.memory_hits, s.disk_hits), (1, 7, 0));
    assert!(kernel::jit_stats().compiles >= 1);
}

#[test]
#[ignore = "needs a CUDA device"]
fn compile_errors_carry_nvrtcs_log_and_are_not_cached() {
    let _gpu = exclusive();
    let d = dev();
    let cache = KernelCache::with_dir(d.compute_capability(), None);
    let src = "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }";
    for _ in 0..2 {
        match cache.source(d, src, "broken", Origin::Own) {
            Err(Error::Driver(msg)) => {
                assert!(msg.contains("undefined_name") && msg.contains("broken"), "{msg}");
            }
            other => panic!("expected a compile error, got {other:?}"),
        }
    }
    assert_eq!(cache.len(), 0);
    let missing =
        cache.source(d, &unique_source("entry"), "no_such_kernel", Origin::Own).unwrap_err();
    assert!(matches!(missing, Error::Driver(ref m) if m.contains("no_such_kernel")), "{missing}");
}

/// Run twice, in two processes, with the same `EMBERFIRE_KERNEL_CACHE`: the first compiles, the
/// second loads from disk. Prints where the time of a cold start goes.
#[test]
#[ignore = "needs a CUDA device"]
fn a_new_process_finds_the_disk_cache() {
    let _gpu = exclusive();
    let t = Instant::now();
    let d = dev();
    let open = t.elapsed();
    let t = Instant::now();
    let version = nvrtc::nvrtc_version().unwrap();
    let load_nvrtc = t.elapsed();
    let cache = KernelCache::new(d.compute_capability());
    let src = "// a_new_process_finds_the_disk_cache\n\
               extern \"C\" __global__ void add_one(float* x, unsigned n) {\n\
                   unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                   if (i < n) x[i] = x[i] + 1.0f;\n\
               }\n";
    let t = Instant::now();
    let k = cache.source(d, src, "add_one", Origin::Own).unwrap();
    let get = t.elapsed();
    let s = cache.stats();
    eprintln!(
        "cold start: device open {:.1} ms, NVRTC {version:?} load {:.1} ms, kernel get {:.2} ms \
         ({s:?}, cache dir {:?})",
        open.as_secs_f64() * 1e3,
        load_nvrtc.as_secs_f64() * 1e3,
        get.as_secs_f64() * 1e3,
        cache.dir()
    );
    assert_eq!(s.compiles + s.disk_hits, 1);
    assert_eq!(run_add_one(&k, &[1.0]), vec![2.0]);
}
