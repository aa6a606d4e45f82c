//! Exchange with the rest of the ecosystem: the public CUDA hooks (`emberfire::cuda`, which the
//! `emberfire-cuda-interop` crate wraps), DLPack (`emberfire::dlpack`, which the Python module
//! builds on) and the conversions to and from `ndarray` (feature `ndarray`).

pub mod cuda;
pub mod dlpack;
#[cfg(feature = "ndarray")]
pub(crate) mod ndarray;
