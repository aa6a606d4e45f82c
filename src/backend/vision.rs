//! The vision family: computer-vision kernels behind the backend-neutral layer, as one trait,
//! [`Vision`], implemented by `cpu::Cpu` (in `cpu/vision.rs`) and by `cuda::Cuda` (in
//! `cuda/vision.rs`). Callers pick the backend of their operands:
//! `query.backend.ops().nearest_ssd(...)`.
//!
//! Most of the vision family is built from array operations that run on every backend; what is
//! here is the one search that array operations cannot do without a matrix of every distance:
//! the nearest train descriptor of each query by SSD, fused on CUDA. Where a backend has no
//! fused path (the CPU) its methods say so (`false`, `Ok(None)`) and the array path runs.

use super::dense::Dense;
use crate::error::Error;

/// Fused vision kernels on one backend.
pub(crate) trait Vision {
    /// Whether [`Vision::nearest_ssd`] may take operands on this backend (it still checks
    /// their shapes): asked before the operands are evaluated into dense memory for it.
    fn fuses_nearest_ssd(&self) -> Result<bool, Error>;

    /// The index (u32) and sum of squared differences (f32) of the nearest column of `train`
    /// to each column of `query` (f32, descriptors along dimension 0), both of shape
    /// `(1, nq)`, where a fused kernel takes these operands; `None` where the caller's general
    /// path must run (always on a backend without the fused kernel).
    fn nearest_ssd(&self, query: &Dense, train: &Dense) -> Result<Option<(Dense, Dense)>, Error>;
}
