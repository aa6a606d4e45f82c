//! The CUDA implementations of the allocator and of stream ordering: `cuMemAlloc`/`cuMemFree`
//! and recycled events.

use std::sync::{Arc, Mutex};

use cudarc::driver::{result as cu, sys, CudaContext, DriverError};

use super::allocator::DeviceAllocator;
use super::stream_order::{Fence, StreamId, StreamOrder};
use crate::backend::cuda::driver_error;
use crate::backend::cuda::kernel::nvrtc;
use crate::error::Error;
use crate::sync::lock;

/// Maps a driver error, telling out-of-memory apart.
pub(crate) fn alloc_error(e: DriverError, bytes: usize) -> Error {
    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory { bytes }
    } else {
        driver_error(&format!("allocating {bytes} bytes"), e)
    }
}

/// The default allocator: `cuMemAlloc`/`cuMemFree` in the device's primary context.
///
/// Why not the stream-ordered `cuMemAllocAsync`: the pool above already makes reuse stream
/// ordered at no driver cost, and a second pool underneath would hide memory from
/// `device_gc` (the driver's pool keeps freed memory until trimmed) and from `mem_info`. Plain
/// `cuMemAlloc` memory is also valid on every stream and for every interop use (IPC, peer
/// access, other libraries) without pool attributes. Its cost (slow, synchronising) is paid
/// only on cache misses.
pub(crate) struct DriverAllocator {
    ctx: Arc<CudaContext>,
}

impl DriverAllocator {
    pub(crate) fn new(ctx: Arc<CudaContext>) -> DriverAllocator {
        DriverAllocator { ctx }
    }
}

// SAFETY: `cuMemAlloc` memory of the primary context, which is 256-byte aligned, usable from
// every stream of the context and owned by the caller until `cuMemFree`.
unsafe impl DeviceAllocator for DriverAllocator {
    fn allocate(&self, bytes: usize) -> Result<u64, Error> {
        self.ctx.bind_to_thread().map_err(|e| driver_error("binding the context", e))?;
        let started = std::time::Instant::now();
        // SAFETY: the context is current; the memory is returned uninitialised, which is what
        // an allocator promises.
        let ptr = unsafe { cu::malloc_sync(bytes) }.map_err(|e| alloc_error(e, bytes));
        nvrtc::trace_event(|| {
            let ms = started.elapsed().as_secs_f64() * 1e3;
            format!("cuMemAlloc of {bytes} bytes in {ms:.2} ms")
        });
        ptr
    }

    unsafe fn free(&self, ptr: u64, _bytes: usize) {
        // A failure here means the context is gone (process exit, sticky error): nothing to
        // recover, and panicking in a destructor would abort.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the caller passes a block `allocate` returned (a `cuMemAlloc` of this
        // context), not freed since and no longer used by queued work.
        let _ = unsafe { cu::free_sync(ptr) };
    }
}

/// Stream ordering with CUDA events, recycled through a free list (creating an event costs
/// more than recording one).
pub(crate) struct DriverStreamOrder {
    ctx: Arc<CudaContext>,
    spare: Mutex<Vec<u64>>,
}

impl DriverStreamOrder {
    pub(crate) fn new(ctx: Arc<CudaContext>) -> DriverStreamOrder {
        DriverStreamOrder { ctx, spare: Mutex::new(Vec::new()) }
    }

    fn bind(&self) -> Result<(), Error> {
        self.ctx.bind_to_thread().map_err(|e| driver_error("binding the context", e))
    }
}

impl StreamOrder for DriverStreamOrder {
    fn record(&self, stream: StreamId) -> Result<Fence, Error> {
        self.bind()?;
        let spare = lock(&self.spare).pop();
        let event = match spare {
            Some(e) => e as usize as sys::CUevent,
            None => cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| driver_error("creating an event", e))?,
        };
        // SAFETY: a live event of this context, and a stream the caller vouches for.
        match unsafe { cu::event::record(event, stream.as_raw()) } {
            Ok(()) => Ok(Fence(event as usize as u64)),
            Err(e) => {
                // SAFETY: the event is ours and unused.
                let _ = unsafe { cu::event::destroy(event) };
                Err(driver_error("recording an event", e))
            }
        }
    }

    fn wait(&self, stream: StreamId, fence: &Fence) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: a live event recorded by `record`, and a stream the caller vouches for.
        unsafe {
            cu::stream::wait_event(
                stream.as_raw(),
                fence.0 as usize as sys::CUevent,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|e| driver_error("making a stream wait for an event", e))
    }

    fn release(&self, fence: Fence) {
        lock(&self.spare).push(fence.0);
    }

    fn synchronize(&self, stream: StreamId) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: a stream the caller vouches for.
        unsafe { cu::stream::synchronize(stream.as_raw()) }
            .map_err(|e| driver_error("synchronising a stream", e))
    }

    fn synchronize_all(&self) -> Result<(), Error> {
        crate::backend::cuda::kernel::replay::send_all_held();
        self.ctx.synchronize().map_err(|e| driver_error("synchronising the device", e))
    }
}
