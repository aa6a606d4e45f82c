//! Exchange with the rest of the ecosystem: the public CUDA hooks (`emberfire::cuda`, which the
//! `emberfire-cuda-interop` crate wraps) and the conversions to and from `ndarray` (feature
//! `ndarray`).

pub mod cuda;
#[cfg(feature = "ndarray")]
pub(crate) mod ndarray;
