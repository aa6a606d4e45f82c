//! The CPU backend: fused, chunked, parallel evaluation of expression graphs.

pub(crate) mod eval;
pub(crate) mod kernels;
pub(crate) mod reduce;
pub(crate) mod vmath;

pub(crate) mod index_copy;
pub(crate) mod write_into;
