//! The per-device handles of the vendor libraries: cuBLAS, cuSOLVER and cuDNN.
//!
//! Why here: a handle belongs to one device's context, like the device's kernels and memory,
//! so [`runtime::Device`](crate::backend::cuda::runtime::Device) owns one [`Handles`], created
//! empty with it. Each handle is created on its first use (a device that never multiplies a
//! matrix never loads cuBLAS), at most once, and lives as long as its device (which lives for
//! the process). A handle is used under its mutex; what it was last bound to (stream, math
//! mode) is kept beside it by its user. The failure to create one is kept too, so it is
//! reported again rather than retried at every call.
//!
//! Not here: cuFFT plans, which are kept across devices in one least-recently-used cache
//! (`cuda::fft`), and NCCL communicators, which belong to a communicator's ranks, not to a
//! device.

use std::sync::{Mutex, OnceLock};

use crate::backend::cuda::{blas, lapack, ml};
use crate::error::Error;

/// One device's vendor handles, each made on first use.
pub(crate) struct Handles {
    /// cuBLAS's handle, or why it could not be made.
    cublas: OnceLock<Result<Mutex<blas::Handle>, Error>>,
    /// cuSOLVER's dense handle, or why it could not be made.
    cusolver: OnceLock<Result<Mutex<lapack::Solver>, Error>>,
    /// cuDNN's handle; `None` where cuDNN could not make one.
    cudnn: OnceLock<Option<Mutex<ml::OwnedHandle>>>,
}

impl Handles {
    /// No handles yet.
    pub(crate) fn new() -> Handles {
        Handles { cublas: OnceLock::new(), cusolver: OnceLock::new(), cudnn: OnceLock::new() }
    }

    /// The cuBLAS handle, made by `create` on first use.
    pub(crate) fn cublas(
        &self,
        create: impl FnOnce() -> Result<blas::Handle, Error>,
    ) -> Result<&Mutex<blas::Handle>, Error> {
        self.cublas.get_or_init(|| create().map(Mutex::new)).as_ref().map_err(Clone::clone)
    }

    /// The cuSOLVER handle, made by `create` on first use.
    pub(crate) fn cusolver(
        &self,
        create: impl FnOnce() -> Result<lapack::Solver, Error>,
    ) -> Result<&Mutex<lapack::Solver>, Error> {
        self.cusolver.get_or_init(|| create().map(Mutex::new)).as_ref().map_err(Clone::clone)
    }

    /// The cuDNN handle, made by `create` on first use; `None` where it could not be made.
    pub(crate) fn cudnn(
        &self,
        create: impl FnOnce() -> Option<ml::OwnedHandle>,
    ) -> Option<&Mutex<ml::OwnedHandle>> {
        self.cudnn.get_or_init(|| create().map(Mutex::new)).as_ref()
    }
}
