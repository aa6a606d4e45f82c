//! The CUDA backend's own handles that the layers above the backends need, in one place: the
//! public interop hooks (`emberfire::cuda`, `src/interop/cuda.rs`), DLPack's exchange of
//! device memory (`src/interop/dlpack/`), the collectives (`src/collective/`, NCCL), the
//! user-facing `Event` (`src/event.rs`), adopting and pinning the user's memory
//! (`src/array_memory.rs`, `src/compat/host_memory.rs`) and the kernel statistics
//! (`emberfire::jit_stats`).
//!
//! Nothing above `src/backend/` names `backend::cuda` itself: what it may touch of CUDA is
//! listed here, each item with the layer that uses it and why. Device queries that only need
//! a value (counts, descriptions, memory counters, synchronisation) are not here but methods of
//! `BackendKind` in `devices.rs`; copies between devices are in `peer.rs`.

use std::sync::Arc;

use cudarc::driver::sys;

use super::cuda::{self, driver_error};
use super::Buffer;
use crate::error::{Error, Result};

/// One CUDA device as emberfire uses it (its primary context, its own stream, its memory
/// manager and kernel cache). The interop hooks hand users its context and streams, order
/// their streams against emberfire's through its memory manager, and compile user kernels
/// through its cache; DLPack and the collectives order and allocate device memory through it.
pub(crate) use super::cuda::runtime::Device;

/// The device with CUDA ordinal `ordinal`, opened on first use and kept for the process, or
/// why it cannot be used: the way the interop hooks, DLPack and the collectives reach a
/// [`Device`].
pub(crate) use super::cuda::runtime::device;

/// Device memory of emberfire's memory manager (pool, borrowed or adopted): what a
/// `Buffer::Cuda` holds. The interop hooks, DLPack and the collectives read its address,
/// size and device, and order streams against the work that wrote it.
pub(crate) use super::cuda::memory::DeviceMem;

/// A CUDA stream as the memory manager records it. The interop hooks and DLPack turn the
/// user's raw `CUstream` into one to order emberfire's work against the user's.
pub(crate) use super::cuda::memory::StreamId;

/// The source of the device memory emberfire's pool takes, which users may replace; public
/// as `emberfire::cuda::DeviceAllocator`.
pub use super::cuda::memory::DeviceAllocator;

/// A CUDA event of one device, owned by the user-facing `Event` (`src/event.rs`), which marks
/// and waits for points in a device's queue with it.
pub(crate) use super::cuda::event::DeviceEvent;

/// A kernel loaded on one device: what `emberfire::cuda::compile_kernel` returns inside the
/// public `Kernel`, which launches it on the user's stream.
pub(crate) use super::cuda::kernel::KernelFn;

/// Page-locked host memory from the driver: what `alloc_pinned` (`src/compat/host_memory.rs`)
/// hands out on the CUDA backend, freed when dropped.
pub(crate) use super::cuda::runtime::PinnedBuffer;

/// How many kernels have been compiled and how many lookups the kernel caches answered;
/// public as `emberfire::JitStats`.
pub use super::cuda::kernel::JitStats;

/// The kernel statistics since the process started (all zero where nothing was compiled), for
/// the public `emberfire::jit_stats`.
pub(crate) fn jit_stats() -> JitStats {
    cuda::kernel::jit_stats()
}

/// Compiles `entry` of the user's CUDA C `source` for `dev` through its kernel cache (in
/// memory and on disk), with NVRTC's full front end as for every user source: the body of
/// `emberfire::cuda::compile_kernel`.
pub(crate) fn compile_user_kernel(
    dev: &Device,
    source: &str,
    entry: &str,
) -> Result<Arc<KernelFn>> {
    dev.kernels().source(dev, source, entry, cuda::kernel::Origin::User)
}

/// The context a stream belongs to (the legacy default stream's is the current context).
fn context_of_stream(stream: sys::CUstream) -> Result<sys::CUcontext> {
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer; the caller vouches for the stream.
    unsafe { sys::cuStreamGetCtx(stream, &mut ctx) }
        .result()
        .map_err(|e| driver_error("finding the context of a stream", e))?;
    Ok(ctx)
}

/// Checks that `stream` belongs to `dev`'s primary context: what the interop hooks and DLPack
/// check of every stream a user gives before emberfire records on or waits on it.
pub(crate) fn check_stream(dev: &Device, stream: sys::CUstream) -> Result<()> {
    dev.bind()?;
    let ctx = context_of_stream(stream)?;
    if ctx != dev.context().cu_ctx() {
        return Err(Error::Driver(format!(
            "the stream belongs to another context than device {}'s primary context",
            dev.ordinal()
        )));
    }
    Ok(())
}

/// A buffer over `bytes` bytes of the user's device memory at `ptr` on CUDA device
/// `ordinal`, which emberfire frees when the last array using it drops (unless it is locked
/// then: it goes back to the user). The CUDA side of `Array::new_from_device_ptr`
/// (`src/array_memory.rs`); fails only if the device cannot be used.
///
/// # Safety
///
/// `ptr..ptr + bytes` is device memory on `ordinal` that nothing else frees while the buffer
/// lives, nor after it drops unlocked; unless the buffer is locked when it drops, `ptr` is the
/// start of a live `cuMemAlloc` allocation. Work already queued on it is ordered before this
/// thread's current stream (or has completed).
pub(crate) unsafe fn adopt_device_memory(ordinal: usize, ptr: u64, bytes: usize) -> Result<Buffer> {
    let dev = device(ordinal)?;
    // SAFETY: the caller's contract above, which is `adopt`'s.
    Ok(Buffer::Cuda(unsafe { dev.memory().adopt(ptr, bytes) }))
}

/// `bytes` bytes (at least one) of page-locked host memory in CUDA device `ordinal`'s
/// context, for `alloc_pinned` on the CUDA backend.
pub(crate) fn pinned_host(ordinal: usize, bytes: usize) -> Result<PinnedBuffer> {
    device(ordinal).and_then(|dev| dev.pinned(bytes))
}

/// NCCL, loaded at run time, as the collectives (`src/collective/`) and the sharded
/// reductions (`src/sharded/compute.rs`) use it: communicators, the element types NCCL moves
/// and reduces, and the calls, each re-exported from the CUDA backend's NCCL bindings.
pub(crate) mod nccl {
    /// NCCL's reduction operators, which `collective::ReduceOp` maps to.
    pub(crate) use crate::backend::cuda::vendor::nccl::Op;

    /// One collective call (all-reduce, broadcast, send, ...) with its operator or peer.
    pub(crate) use crate::backend::cuda::vendor::nccl::Call;

    /// A communicator of one rank on one device, which a `Communicator` keeps per local rank.
    pub(crate) use crate::backend::cuda::vendor::nccl::Comm;

    /// A unique id's raw bytes, exchanged between processes to create one communicator.
    pub(crate) use crate::backend::cuda::vendor::nccl::RawUniqueId;

    /// The loaded NCCL's version (`Communicator::nccl_version`).
    pub(crate) use crate::backend::cuda::vendor::nccl::version;

    /// A new unique id (`UniqueId::new`).
    pub(crate) use crate::backend::cuda::vendor::nccl::unique_id;

    /// Communicators of one process over the given devices (`Communicator::new`).
    pub(crate) use crate::backend::cuda::vendor::nccl::init_all;

    /// The communicator of one rank of a multi-process group (`Communicator::from_unique_id`).
    pub(crate) use crate::backend::cuda::vendor::nccl::init_rank;

    /// NCCL's type and count per element for moving elements of a type unchanged.
    pub(crate) use crate::backend::cuda::vendor::nccl::moving_type;

    /// NCCL's type for reducing elements of a type, if NCCL reduces it: also what the sharded
    /// reductions ask before choosing an all-reduce.
    pub(crate) use crate::backend::cuda::vendor::nccl::reducing_type;

    /// Queues one NCCL call on a communicator's device.
    pub(crate) use crate::backend::cuda::vendor::nccl::launch;

    /// Issues the calls queued inside it together (`ncclGroupStart`/`ncclGroupEnd`), which
    /// NCCL needs when one thread drives several ranks (`Communicator::group` and each call).
    pub(crate) use crate::backend::cuda::vendor::nccl::group;
}
