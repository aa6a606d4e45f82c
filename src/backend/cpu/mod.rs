//! The CPU backend: fused, chunked, parallel evaluation of expression graphs.

pub(crate) mod blas;
pub(crate) mod eval;
pub(crate) mod kernels;
pub(crate) mod reduce;
pub(crate) mod vmath;
