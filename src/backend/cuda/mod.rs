//! The CUDA backend.
//!
//! Layers, bottom up:
//! - [`runtime`]: finding the driver and devices, one primary context and one emberfire stream
//!   per device, host transfers;
//! - [`memory`]: the per-device caching, stream-ordered memory manager;
//! - [`kernel`]: every kernel's key, the one kernel cache per device (in memory and on disk),
//!   compiling CUDA C at run time with NVRTC for the device's own architecture, and launch
//!   arguments; the hand-written kernels' sources are the `.cu` files of `kernels/`;
//! - [`codegen`]: every generated kernel: its plan, key, CUDA C source and argument values, for
//!   element-wise programs, mapped leaves, random leaves and reductions fused with their producer;
//! - [`launch`] and [`reduce`]: running an element-wise program, and a fused reduction;
//! - [`vendor`]: NVIDIA's libraries (cuBLAS, cuDNN, cuFFT, cuSOLVER, NCCL, NVRTC) loaded at
//!   run time, and each device's handles of them.
//!
//! CUDA is loaded with `dlopen` when first needed (cudarc's `dynamic-loading`), so the crate
//! builds and runs on machines without a GPU; [`runtime::device_count`] says why CUDA is not
//! usable instead of panicking.

// A few accessors of these two (a block's home stream, the pool's open streams, a device's
// multiprocessor count, ...) are read only by their unit tests, which drive the pool with fake
// drivers and check its bookkeeping; the library itself never needs them.
#[allow(dead_code)]
pub(crate) mod memory;
#[allow(dead_code)]
pub(crate) mod runtime;

pub(crate) mod codegen;
pub(crate) mod copy;
pub(crate) mod dense;
mod device;
pub(crate) mod event;
pub(crate) mod fft;
pub(crate) mod image;
pub(crate) mod index_copy;
pub(crate) mod kernel;
pub(crate) mod launch;
pub(crate) mod ml;
mod movement;
pub(crate) mod peer;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod signal;
pub(crate) mod skinny;
pub(crate) mod sort;
pub(crate) mod sort_layout;
pub(crate) mod sparse;
pub(crate) mod tiled;
pub(crate) mod transpose;
pub(crate) mod vision;

pub(crate) mod blas;
pub(crate) mod lapack;
pub(crate) mod vendor;

#[cfg(test)]
pub(crate) mod tests;

use crate::error::Error;
use cudarc::driver::DriverError;

/// One CUDA device, as the family traits of `backend/` see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cuda {
    /// The device's CUDA ordinal.
    pub ordinal: usize,
}

/// An [`Error::Driver`] naming what was being done and the driver's own name and text for the
/// failure (e.g. "launching `k`: CUDA_ERROR_INVALID_VALUE: invalid argument").
pub(crate) fn driver_error(doing: &str, e: DriverError) -> Error {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned());
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned());
    match (name, text) {
        (Ok(n), Ok(t)) => Error::Driver(format!("{doing}: {n}: {t}")),
        _ => Error::Driver(format!("{doing}: CUresult {}", e.0 as u32)),
    }
}
