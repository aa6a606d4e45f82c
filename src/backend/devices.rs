//! Device queries and control for the device registry above the backends (`device.rs`, and
//! `Array::try_to_device`): how many CUDA devices there are, opening and synchronising a
//! device, its description and memory counters, and returning cached memory.
//!
//! Each query is a method of [`BackendKind`] that matches on the backend and asks the CPU or
//! the CUDA side, so that the registry chooses devices without naming either backend's
//! modules.

use super::{cpu, cuda, BackendKind};
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

/// The CPU's model name from `/proc/cpuinfo`, else the architecture's name.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|n| n.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

impl BackendKind {
    /// Opens this backend's device now (on CUDA its context, stream and memory manager, kept
    /// for the process), or says why it cannot be opened; the CPU has nothing to open. Used by
    /// `try_set_device` and `init`, so that a bad device fails where it is chosen.
    pub(crate) fn open_device(self) -> Result<(), Error> {
        match self {
            BackendKind::Cpu => Ok(()),
            BackendKind::Cuda(d) => cuda::runtime::device(d).map(|_| ()),
        }
    }

    /// Blocks until all work queued on this device (on CUDA, on emberfire's own stream and on
    /// this thread's current stream) has finished. CPU work is synchronous, so on the CPU this
    /// returns at once. Used by the public `sync`.
    pub(crate) fn sync_device(self) -> Result<(), Error> {
        match self {
            BackendKind::Cpu => Ok(()),
            BackendKind::Cuda(d) => cuda::runtime::device(d).and_then(|dev| dev.sync()),
        }
    }

    /// (device name, platform, toolkit version, compute capability) of this device, as the
    /// public `device_info` returns them; on a CUDA device that cannot be opened, the error's
    /// text in place of the name.
    pub(crate) fn device_description(self) -> (String, String, String, String) {
        match self {
            BackendKind::Cpu => (
                cpu_name(),
                "CPU".to_string(),
                format!("rayon, {} threads", rayon::current_num_threads()),
                std::env::consts::ARCH.to_string(),
            ),
            BackendKind::Cuda(d) => match cuda::runtime::device(d) {
                Ok(dev) => {
                    let (major, minor) = dev.compute_capability();
                    let driver = cuda::runtime::driver_version()
                        .map(|(a, b)| format!("CUDA driver {a}.{b}"))
                        .unwrap_or_else(|e| e.to_string());
                    (
                        dev.name().to_string(),
                        "CUDA".to_string(),
                        format!("{driver}, {} GiB", dev.total_memory() >> 30),
                        format!("{major}.{minor}"),
                    )
                }
                Err(e) => (e.to_string(), "CUDA".into(), String::new(), String::new()),
            },
        }
    }

    /// Memory held by arrays on this device: (allocated bytes, allocated buffers, locked
    /// bytes, locked buffers), without memory cached for reuse; all zero for a CUDA device
    /// that cannot be opened. Used by the public `device_mem_info`.
    pub(crate) fn device_memory_info(self) -> (usize, usize, usize, usize) {
        match self {
            BackendKind::Cpu => {
                let (bytes, buffers) = cpu::host_table::counted();
                let (lbytes, lbuffers) = cpu::host_table::host_locked();
                (bytes, buffers, lbytes, lbuffers)
            }
            BackendKind::Cuda(d) => {
                cuda::runtime::device(d).map(|dev| dev.memory().info()).unwrap_or((0, 0, 0, 0))
            }
        }
    }

    /// Returns this device's cached memory to the system: on CUDA the memory manager's cache,
    /// on the CPU the large host buffers and the FFT working space kept for reuse. Memory held
    /// by arrays is not touched; a CUDA device that cannot be opened has nothing cached. Used
    /// by the public `device_gc`.
    pub(crate) fn device_gc(self) {
        match self {
            BackendKind::Cpu => {
                crate::storage::cache::clear();
                cpu::fft::release_scratch();
            }
            BackendKind::Cuda(d) => {
                if let Ok(dev) = cuda::runtime::device(d) {
                    dev.gc();
                }
            }
        }
    }
}

/// Held by tests outside the backend whose GPU allocations must not be seen by the CUDA
/// memory manager's counter tests running at the same time (the CUDA backend's own tests
/// take the same lock).
#[cfg(test)]
pub(crate) fn exclusive_gpu() -> std::sync::MutexGuard<'static, ()> {
    cuda::tests::exclusive()
}
