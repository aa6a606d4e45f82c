//! Devices: finding the driver, one primary context and one emberfire stream per device, and
//! host transfers that are ordered with that stream.
//!
//! Why these choices:
//! - **Nothing panics where CUDA is missing.** The driver library is looked for under cudarc's
//!   names (as its `is_culib_present` does) before any CUDA call (cudarc panics if a call finds no library), and the
//!   first calls run under `catch_unwind` in case an entry point is missing from an old driver.
//!   Every failure becomes [`Error::BackendUnavailable`] saying what is missing.
//! - **The primary context.** It is the context the CUDA runtime API, PyTorch, CuPy and most
//!   libraries use, so pointers, streams and events can be shared with them directly.
//! - **An emberfire stream.** Each device gets one non-blocking stream of its own: emberfire's
//!   work never serialises with the legacy default stream of other code, and the memory manager
//!   can reuse blocks in that stream's order with no events.
//! - **The current stream.** A thread can make a stream of the user's current for a scope
//!   (the memory manager keeps the scopes; see `memory.rs`). Kernels go to
//!   [`Device::stream_raw`], the thread's current stream, and new buffers are allocated for
//!   it. Host transfers always run on the own stream, after waiting (on the device) for the
//!   stream that wrote the memory: they wait for the copy on the host anyway, and the staging
//!   buffers' events belong to that stream.
//! - **Devices live for the process.** The table is filled lazily and never emptied: arrays in
//!   statics and other threads may use a device until exit, and tearing down a primary context
//!   at exit races with other libraries' destructors.
//! - **Pinned staging.** Copies of 1 MiB and more go through two reusable page-locked buffers
//!   per device, alternately, so the DMA engine copies one chunk while the host fills or empties
//!   the other (with several threads): pageable copies run at a fraction of PCIe speed.
//!
//! Compatibility: cudarc is built with its CUDA 13.0 bindings (so that the loader finds
//! `libnvrtc.so.13`); every driver entry point this module and the memory manager call
//! (`cuInit`, `cuDevicePrimaryCtxRetain`, `cuStreamCreate`, `cuMemAlloc_v2`,
//! `cuMemcpy*Async_v2`, `cuEventRecord`, `cuStreamWaitEvent`, `cuMemHostAlloc`, ...) exists
//! with the same signature in CUDA 12 drivers. (cudarc's `CudaEvent::elapsed_ms` does not: it
//! calls `cuEventElapsedTime_v2`, which needs a 12.8 or newer driver.)

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};

use cudarc::driver::{result as cu, sys, CudaContext, CudaEvent, CudaStream};

use super::driver_error;
use super::kernel::replay::Replays;
use super::kernel::KernelCache;
use super::memory::{DeviceMem, DriverAllocator, DriverStreamOrder, MemoryManager, StreamId};
use super::vendor::handles::Handles;
use crate::error::Error;

/// Copies at least this large are staged through pinned memory.
const STAGE_MIN: usize = 1 << 20;
/// The size of each of the two pinned staging buffers of a device.
const STAGE_CHUNK: usize = 8 << 20;

/// What the driver probe found: the device count, or why CUDA cannot be used.
fn probe() -> &'static Result<usize, Error> {
    static PROBE: OnceLock<Result<usize, Error>> = OnceLock::new();
    PROBE.get_or_init(|| {
        // The equivalent of cudarc's `is_culib_present`, keeping the library loaded.
        if !super::vendor::loader::keep_loaded(&["cuda", "nvcuda"]) {
            return Err(Error::BackendUnavailable(
                "CUDA: the NVIDIA driver library (libcuda.so.1) was not found: no NVIDIA \
                 driver is installed, or its library is not on the loader's search path"
                    .into(),
            ));
        }
        let found = catch_unwind(|| -> Result<usize, Error> {
            cu::init().map_err(|e| unavailable("the driver did not initialise (cuInit)", e))?;
            let n = cu::device::get_count()
                .map_err(|e| unavailable("the driver could not count devices", e))?;
            Ok(n.max(0) as usize)
        });
        match found {
            Ok(Ok(0)) => Err(Error::BackendUnavailable(
                "CUDA: the driver is installed but reports no CUDA device (is \
                 CUDA_VISIBLE_DEVICES empty?)"
                    .into(),
            )),
            Ok(r) => r,
            Err(p) => Err(Error::BackendUnavailable(format!(
                "CUDA: the driver library cannot be used: {}",
                panic_text(&p)
            ))),
        }
    })
}

fn unavailable(what: &str, e: cudarc::driver::DriverError) -> Error {
    match driver_error(what, e) {
        Error::Driver(msg) => Error::BackendUnavailable(format!("CUDA: {msg}")),
        other => other,
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a call into it failed".into())
}

/// How many CUDA devices there are, or [`Error::BackendUnavailable`] saying what is missing
/// (the driver library, a working driver, a device). Probes once per process.
pub(crate) fn device_count() -> Result<usize, Error> {
    probe().clone()
}

/// The CUDA driver's version as (major, minor), e.g. (13, 0).
pub(crate) fn driver_version() -> Result<(u32, u32), Error> {
    device_count()?;
    let mut v = 0i32;
    // SAFETY: the driver is loaded and initialised (probe), and `v` is a valid out-pointer.
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(|e| driver_error("querying the driver version", e))?;
    Ok(((v / 1000) as u32, ((v % 1000) / 10) as u32))
}

/// The device with CUDA ordinal `ordinal`, opened on first use and kept for the process.
pub(crate) fn device(ordinal: usize) -> Result<&'static Device, Error> {
    static TABLE: OnceLock<Vec<OnceLock<Result<&'static Device, Error>>>> = OnceLock::new();
    let count = device_count()?;
    if ordinal >= count {
        return Err(Error::InvalidDevice { requested: ordinal as i32, count: count as i32 });
    }
    let table = TABLE.get_or_init(|| (0..count).map(|_| OnceLock::new()).collect());
    table[ordinal]
        .get_or_init(|| match catch_unwind(AssertUnwindSafe(|| Device::open(ordinal))) {
            Ok(Ok(d)) => Ok(&*Box::leak(Box::new(d))),
            Ok(Err(e)) => Err(e),
            Err(p) => Err(Error::BackendUnavailable(format!(
                "CUDA: device {ordinal} could not be opened: {}",
                panic_text(&p)
            ))),
        })
        .clone()
}

/// One CUDA device as emberfire uses it.
pub(crate) struct Device {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    compute_capability: (u32, u32),
    multiprocessors: u32,
    total_memory: usize,
    memory: MemoryManager,
    kernels: KernelCache,
    handles: Handles,
    replays: Replays,
    staging: Mutex<Staging>,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .field("multiprocessors", &self.multiprocessors)
            .field("total_memory", &self.total_memory)
            .finish_non_exhaustive()
    }
}

impl Device {
    fn open(ordinal: usize) -> Result<Device, Error> {
        let err = |what: &str| {
            let what = format!("device {ordinal}: {what}");
            move |e| driver_error(&what, e)
        };
        // Loading NVRTC (a large library) takes several milliseconds; do it while the context
        // is created (hundreds of milliseconds), so a kernel found in the disk cache is ready
        // at once. Failures are reported when a kernel is first needed.
        let _ = std::thread::Builder::new()
            .name("emberfire-nvrtc".into())
            .spawn(|| super::kernel::nvrtc::nvrtc().is_ok());
        let ctx = CudaContext::new(ordinal).map_err(err("retaining the primary context"))?;
        let (major, minor) = ctx.compute_capability().map_err(err("reading attributes"))?;
        let multiprocessors = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(err("reading attributes"))?;
        let name = ctx.name().map_err(err("reading its name"))?;
        let total_memory = ctx.total_mem().map_err(err("reading its memory size"))?;
        let stream = ctx.new_stream().map_err(err("creating the emberfire stream"))?;
        let memory = MemoryManager::new(
            ordinal,
            StreamId::of(&stream),
            Arc::new(DriverAllocator::new(ctx.clone())),
            Arc::new(DriverStreamOrder::new(ctx.clone())),
        );
        // Keep at most half the device in the cache: the rest stays free for libraries and
        // other processes even after a peak; an allocation that fails collects the cache anyway.
        memory.set_cache_limit(total_memory / 2);
        let compute_capability = (major.max(0) as u32, minor.max(0) as u32);
        Ok(Device {
            ordinal,
            ctx,
            stream,
            name,
            compute_capability,
            multiprocessors: multiprocessors.max(1) as u32,
            total_memory,
            memory,
            kernels: KernelCache::new(compute_capability),
            handles: Handles::new(),
            replays: Replays::default(),
            staging: Mutex::new(Staging::Untried),
        })
    }

    /// The CUDA ordinal.
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Compute capability (major, minor), e.g. (9, 0).
    pub(crate) fn compute_capability(&self) -> (u32, u32) {
        self.compute_capability
    }

    /// Number of streaming multiprocessors.
    pub(crate) fn multiprocessor_count(&self) -> u32 {
        self.multiprocessors
    }

    /// Number of streaming multiprocessors (the name the launch code uses).
    pub(crate) fn sm_count(&self) -> u32 {
        self.multiprocessors
    }

    /// Device memory in bytes.
    pub(crate) fn total_memory(&self) -> usize {
        self.total_memory
    }

    /// (free, total) device memory in bytes as the driver sees it now.
    pub(crate) fn memory_free_total(&self) -> Result<(usize, usize), Error> {
        self.ctx.mem_get_info().map_err(|e| driver_error("querying free memory", e))
    }

    /// The device's primary context.
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// emberfire's own stream on this device (owned by the device: never destroyed). Sends
    /// the launches held back first (`kernel/replay.rs`).
    #[track_caller]
    pub(crate) fn cu_stream(&self) -> &Arc<CudaStream> {
        self.send_held();
        &self.stream
    }

    /// Sends the launches held back on the own stream (`kernel/replay.rs`) now; a failure is
    /// reported by the next synchronisation.
    #[track_caller]
    pub(crate) fn send_held(&self) {
        self.replays.send_or_keep_error(self);
    }

    /// emberfire's own stream, handed to the user (who may queue work on it or capture it):
    /// what is held back is sent, and nothing is held on this device from now on.
    pub(crate) fn share_stream(&self) -> &Arc<CudaStream> {
        self.replays.share(self);
        &self.stream
    }

    /// The stream this thread's work on the device goes to, as a raw handle: the user's stream
    /// inside a scope that made one current, else emberfire's own. Every kernel launch and
    /// library call uses this one (and allocates its outputs with [`Device::alloc`]). Sends
    /// the launches held back first (`kernel/replay.rs`).
    pub(crate) fn stream_raw(&self) -> sys::CUstream {
        self.memory.current_stream().as_raw()
    }

    /// emberfire's own stream as a raw handle (never destroy it). Sends the launches held back
    /// first.
    #[track_caller]
    pub(crate) fn own_stream_raw(&self) -> sys::CUstream {
        self.send_held();
        self.stream.cu_stream()
    }

    /// emberfire's own stream as the memory manager names it.
    pub(crate) fn stream_id(&self) -> StreamId {
        StreamId::of(&self.stream)
    }

    /// This thread's current stream as the memory manager names it.
    pub(crate) fn current_stream_id(&self) -> StreamId {
        self.memory.current_stream()
    }

    /// The memory manager.
    pub(crate) fn memory(&self) -> &MemoryManager {
        &self.memory
    }

    /// The kernel cache.
    pub(crate) fn kernels(&self) -> &KernelCache {
        &self.kernels
    }

    /// The launches replayed from graphs on the device's own stream.
    pub(crate) fn replays(&self) -> &Replays {
        &self.replays
    }

    /// The device's vendor library handles (cuBLAS, cuSOLVER, cuDNN), made on first use.
    pub(crate) fn handles(&self) -> &Handles {
        &self.handles
    }

    /// Makes the primary context current on the calling thread (needed before raw driver
    /// calls; cudarc's safe calls do it themselves).
    pub(crate) fn bind(&self) -> Result<(), Error> {
        self.ctx.bind_to_thread().map_err(|e| driver_error("making the context current", e))
    }

    /// Blocks until all work queued on emberfire's own stream and on this thread's current
    /// stream has finished.
    #[track_caller]
    pub(crate) fn sync(&self) -> Result<(), Error> {
        let started = std::time::Instant::now();
        self.sync_own()?;
        if let Some(e) = self.replays.take_failure() {
            return Err(e);
        }
        super::kernel::nvrtc::trace_event(|| {
            format!("waited {:.2} ms for the device", started.elapsed().as_secs_f64() * 1e3)
        });
        let current = self.memory.current_stream();
        if current != self.stream_id() {
            self.bind()?;
            // SAFETY: a stream made current by an open scope, which keeps it alive.
            unsafe { cu::stream::synchronize(current.as_raw()) }
                .map_err(|e| driver_error("synchronising the current stream", e))?;
        }
        Ok(())
    }

    /// Blocks until all work queued on emberfire's own stream has finished.
    #[track_caller]
    fn sync_own(&self) -> Result<(), Error> {
        self.replays.send(self)?;
        self.stream.synchronize().map_err(|e| driver_error("synchronising the stream", e))
    }

    /// Allocates `bytes` of device memory for use on this thread's current stream.
    pub(crate) fn alloc(&self, bytes: usize) -> Result<DeviceMem, Error> {
        self.memory.alloc(bytes)
    }

    /// Returns cached memory to the driver.
    pub(crate) fn gc(&self) -> usize {
        self.memory.gc()
    }

    /// Copies `bytes` into new device memory. Returns when the copy is complete.
    pub(crate) fn upload(&self, bytes: &[u8]) -> Result<DeviceMem, Error> {
        let mem = self.memory.alloc(bytes.len())?;
        self.write(&mem, 0, bytes)?;
        Ok(mem)
    }

    /// Copies `src` into `dst` at `byte_offset`, on emberfire's own stream after the work
    /// queued there and the work of the stream `dst` was allocated for. Returns when the copy
    /// is complete. Panics if the range is outside `dst` or `dst` is on
    /// another device.
    pub(crate) fn write(
        &self,
        dst: &DeviceMem,
        byte_offset: usize,
        src: &[u8],
    ) -> Result<(), Error> {
        self.check_range("write", dst, byte_offset, src.len());
        if src.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // The block may have been handed out for another stream; its earlier users must be
        // done before the own stream writes it.
        self.memory.order_use(dst, self.stream_id())?;
        let dptr = dst.ptr() + byte_offset as u64;
        if src.len() >= STAGE_MIN {
            if let Some(mut guard) = self.staging() {
                if let Staging::Ready(buffers) = &mut *guard {
                    return self.finish(self.upload_staged(buffers, dptr, src));
                }
            }
        }
        // SAFETY: `dptr..+len` lies in `dst` (checked); `src` outlives the copy because we
        // wait for the stream before returning.
        let r = unsafe { cu::memcpy_htod_async(dptr, src, self.own_stream_raw()) }
            .map_err(|e| driver_error("copying to the device", e));
        self.finish(r)
    }

    /// Copies `dst.len()` bytes from `src` at `byte_offset` to the host, after the work queued
    /// on emberfire's own stream and on the stream that wrote `src` (so the result of every
    /// kernel already launched is seen).
    /// Panics if the range is outside `src` or `src` is on another device.
    pub(crate) fn download(
        &self,
        src: &DeviceMem,
        byte_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), Error> {
        self.check_range("download", src, byte_offset, dst.len());
        if dst.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // Written on another stream (a user's): read it after that work.
        self.memory.order_use(src, self.stream_id())?;
        let sptr = src.ptr() + byte_offset as u64;
        if dst.len() >= STAGE_MIN {
            if let Some(mut guard) = self.staging() {
                if let Staging::Ready(buffers) = &mut *guard {
                    return self.finish(self.download_staged(buffers, sptr, dst));
                }
            }
        }
        // SAFETY: `sptr..+len` lies in `src` (checked); `dst` is not touched by us until the
        // stream has been waited for.
        let r = unsafe { cu::memcpy_dtoh_async(dst, sptr, self.own_stream_raw()) }
            .map_err(|e| driver_error("copying to the host", e));
        self.finish(r)
    }

    /// Queues a device-to-device copy on this thread's current stream (does not wait). Panics
    /// if a range is outside its memory or the memory is on another device.
    pub(crate) fn copy(
        &self,
        src: &DeviceMem,
        src_offset: usize,
        dst: &DeviceMem,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<(), Error> {
        self.check_range("copy (source)", src, src_offset, bytes);
        self.check_range("copy (destination)", dst, dst_offset, bytes);
        if bytes == 0 {
            return Ok(());
        }
        self.bind()?;
        let stream = self.current_stream_id();
        self.memory.order_use(src, stream)?;
        self.memory.order_use(dst, stream)?;
        // SAFETY: both ranges lie in live device memory of this device (checked).
        unsafe {
            cu::memcpy_dtod_async(
                dst.ptr() + dst_offset as u64,
                src.ptr() + src_offset as u64,
                bytes,
                stream.as_raw(),
            )
        }
        .map_err(|e| driver_error("copying on the device", e))?;
        // Readers on the destination's home stream come after this copy.
        self.memory.producer_waits_for(dst, stream)
    }

    fn check_range(&self, what: &str, mem: &DeviceMem, offset: usize, len: usize) {
        assert_eq!(
            mem.ordinal(),
            self.ordinal,
            "{what}: memory of CUDA device {} used on device {}",
            mem.ordinal(),
            self.ordinal
        );
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= mem.len()),
            "{what}: {len} bytes at offset {offset} do not fit in {} bytes of device memory",
            mem.len()
        );
    }

    /// Waits for the stream after a copy, also after a failed one: pinned or caller memory
    /// must not be reused while the DMA engine may still read or write it.
    fn finish(&self, r: Result<(), Error>) -> Result<(), Error> {
        let synced = self.sync_own();
        r.and(synced)
    }

    /// The staging buffers, allocated on first use; `None` when another thread is using them
    /// (that copy then goes the pageable way rather than waiting) or they cannot be had.
    fn staging(&self) -> Option<std::sync::MutexGuard<'_, Staging>> {
        let mut guard = match self.staging.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        if let Staging::Untried = *guard {
            *guard = match StagingBuffers::new(&self.ctx) {
                Ok(b) => Staging::Ready(b),
                Err(_) => Staging::Unavailable,
            };
        }
        Some(guard)
    }

    /// Runs `f` while the staging buffers are taken, so copies in it go the pageable way
    /// (for comparing the two).
    #[cfg(test)]
    pub(crate) fn with_staging_busy<R>(&self, f: impl FnOnce() -> R) -> R {
        let _held = self.staging.lock();
        f()
    }

    fn upload_staged(&self, st: &mut StagingBuffers, dptr: u64, src: &[u8]) -> Result<(), Error> {
        let err = |e| driver_error("copying to the device (staged)", e);
        for (i, chunk) in src.chunks(STAGE_CHUNK).enumerate() {
            let b = i % 2;
            if i >= 2 {
                // The DMA from this buffer two chunks ago must be done before refilling it.
                st.events[b].synchronize().map_err(err)?;
            }
            let buf = &mut st.buffers[b].as_mut_slice()[..chunk.len()];
            copy_parallel(buf, chunk);
            let at = dptr + (i * STAGE_CHUNK) as u64;
            // SAFETY: `at..+len` lies in the destination (checked by the caller); the pinned
            // buffer is not written again until its event says this copy is done.
            unsafe { cu::memcpy_htod_async(at, &*buf, self.own_stream_raw()) }.map_err(err)?;
            st.events[b].record(&self.stream).map_err(err)?;
        }
        Ok(())
    }

    fn download_staged(
        &self,
        st: &mut StagingBuffers,
        sptr: u64,
        dst: &mut [u8],
    ) -> Result<(), Error> {
        let err = |e| driver_error("copying to the host (staged)", e);
        let total = dst.len();
        let n = total.div_ceil(STAGE_CHUNK);
        let issue = |st: &mut StagingBuffers, i: usize| -> Result<(), Error> {
            let len = STAGE_CHUNK.min(total - i * STAGE_CHUNK);
            let buf = &mut st.buffers[i % 2].as_mut_slice()[..len];
            // SAFETY: the source range lies in `src` (checked by the caller); the buffer is
            // read by the host only after its event has completed.
            unsafe {
                cu::memcpy_dtoh_async(buf, sptr + (i * STAGE_CHUNK) as u64, self.own_stream_raw())
            }
            .map_err(err)?;
            st.events[i % 2].record(&self.stream).map_err(err)
        };
        issue(st, 0)?;
        for i in 0..n {
            if i + 1 < n {
                issue(st, i + 1)?;
            }
            st.events[i % 2].synchronize().map_err(err)?;
            let start = i * STAGE_CHUNK;
            let len = STAGE_CHUNK.min(total - start);
            copy_parallel(&mut dst[start..start + len], &st.buffers[i % 2].as_slice()[..len]);
        }
        Ok(())
    }
}

/// Copies with several threads: one thread's memcpy (about 10 GB/s) is slower than PCIe.
fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    const PIECE: usize = 1 << 20;
    if dst.len() <= PIECE {
        dst.copy_from_slice(src);
        return;
    }
    use rayon::prelude::*;
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

enum Staging {
    Untried,
    Ready(StagingBuffers),
    Unavailable,
}

struct StagingBuffers {
    buffers: [PinnedBuffer; 2],
    events: [CudaEvent; 2],
}

impl Device {
    /// `len` bytes of page-locked host memory in this device's context, for users who copy
    /// through their own pinned buffers (`alloc_pinned`).
    pub(crate) fn pinned(&self, len: usize) -> Result<PinnedBuffer, Error> {
        PinnedBuffer::new(&self.ctx, len.max(1))
    }
}

impl StagingBuffers {
    fn new(ctx: &Arc<CudaContext>) -> Result<StagingBuffers, Error> {
        let err = |e| driver_error("allocating pinned staging memory", e);
        Ok(StagingBuffers {
            buffers: [PinnedBuffer::new(ctx, STAGE_CHUNK)?, PinnedBuffer::new(ctx, STAGE_CHUNK)?],
            events: [ctx.new_event(None).map_err(err)?, ctx.new_event(None).map_err(err)?],
        })
    }
}

/// Page-locked host memory from `cuMemHostAlloc`.
pub(crate) struct PinnedBuffer {
    ctx: Arc<CudaContext>,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value; access goes through &/&mut.
unsafe impl Send for PinnedBuffer {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<PinnedBuffer, Error> {
        ctx.bind_to_thread().map_err(|e| driver_error("making the context current", e))?;
        // SAFETY: the context is current; the memory is only used as bytes.
        let ptr = unsafe { cu::malloc_host(len, 0) }
            .map_err(|e| driver_error("allocating pinned staging memory", e))?;
        Ok(PinnedBuffer { ctx: ctx.clone(), ptr: ptr as *mut u8, len })
    }

    /// The first byte; valid for `len` bytes until the buffer is dropped.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes of live host memory owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed uniquely.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemHostAlloc and freed only here.
        let _ = unsafe { cu::free_host(self.ptr as *mut std::ffi::c_void) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_means_an_error_not_a_panic() {
        // On machines with a GPU this is Ok; without one it must say what is missing.
        match device_count() {
            Ok(n) => assert!(n > 0),
            Err(Error::BackendUnavailable(why)) => {
                assert!(why.starts_with("CUDA: "), "{why}");
                assert!(device(0).is_err());
                assert!(driver_version().is_err());
            }
            Err(e) => panic!("unexpected error kind: {e:?}"),
        }
    }

    #[test]
    fn parallel_copy_copies_everything() {
        let src: Vec<u8> = (0..5_000_001u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        copy_parallel(&mut dst, &src);
        assert_eq!(dst, src);
        let mut small = [0u8; 3];
        copy_parallel(&mut small, &[1, 2, 3]);
        assert_eq!(small, [1, 2, 3]);
    }
}
