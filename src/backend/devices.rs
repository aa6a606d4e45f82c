//! Device queries and control for the device registry above the backends (`device.rs`, and
//! `Array::try_to_device`): how many CUDA devices there are, opening and synchronising a
//! device, its description and memory counters, and returning cached memory.
//!
//! The per-device queries are the `Devices` family, implemented by `cpu::Cpu` in
//! `cpu/device.rs` and by `cuda::Cuda` in `cuda/device.rs`, so that the registry chooses
//! devices without naming either backend's modules (`kind.ops().sync_device()`).

use super::cuda;
use crate::error::Error;

/// How many CUDA devices can evaluate arrays, or [`Error::BackendUnavailable`] saying why none
/// can: no driver, no NVRTC (kernels are compiled at run time), or no device. The registry
/// asks this to decide whether the CUDA backend is available at all.
pub(crate) fn usable_cuda_devices() -> Result<usize, Error> {
    // kernels are compiled at run time, so CUDA without NVRTC cannot evaluate anything
    cuda::kernel::nvrtc::nvrtc_version()?;
    match cuda::runtime::device_count()? {
        0 => Err(Error::BackendUnavailable("CUDA: no CUDA device found".into())),
        n => Ok(n),
    }
}

/// How many CUDA devices the driver lists for this process, or why the driver cannot be used.
/// Unlike [`usable_cuda_devices`] it does not ask for NVRTC and counts zero devices as zero:
/// what the public `emberfire::cuda::device_count` reports and what device ids are checked
/// against when an array moves between devices.
pub(crate) fn cuda_device_count() -> Result<usize, Error> {
    cuda::runtime::device_count()
}

/// Device control on one backend (the device family).
pub(crate) trait Devices {
    /// Opens this backend's device now (on CUDA its context, stream and memory manager, kept
    /// for the process), or says why it cannot be opened; the CPU has nothing to open. Used by
    /// `try_set_device` and `init`, so that a bad device fails where it is chosen.
    fn open_device(&self) -> Result<(), Error>;

    /// Blocks until all work queued on this device (on CUDA, on emberfire's own stream and on
    /// this thread's current stream) has finished. CPU work is synchronous, so on the CPU this
    /// returns at once. Used by the public `sync`.
    fn sync_device(&self) -> Result<(), Error>;

    /// (device name, platform, toolkit version, compute capability) of this device, as the
    /// public `device_info` returns them; on a CUDA device that cannot be opened, the error's
    /// text in place of the name.
    fn device_description(&self) -> (String, String, String, String);

    /// Memory held by arrays on this device: (allocated bytes, allocated buffers, locked
    /// bytes, locked buffers), without memory cached for reuse; all zero for a CUDA device
    /// that cannot be opened. Used by the public `device_mem_info`.
    fn device_memory_info(&self) -> (usize, usize, usize, usize);

    /// Returns this device's cached memory to the system: on CUDA the memory manager's cache,
    /// on the CPU the large host buffers and the FFT working space kept for reuse. Memory held
    /// by arrays is not touched; a CUDA device that cannot be opened has nothing cached. Used
    /// by the public `device_gc`.
    fn device_gc(&self);
}

/// Held by tests outside the backend whose GPU allocations must not be seen by the CUDA
/// memory manager's counter tests running at the same time (the CUDA backend's own tests
/// take the same lock).
#[cfg(test)]
pub(crate) fn exclusive_gpu() -> std::sync::MutexGuard<'static, ()> {
    cuda::tests::exclusive()
}
