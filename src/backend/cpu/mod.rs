//! The CPU backend: fused, chunked, parallel evaluation of expression graphs.

pub(crate) mod copy;
pub(crate) mod eval;
pub(crate) mod gather;
pub(crate) mod kernels;
pub(crate) mod reduce;
pub(crate) mod transpose;
pub(crate) mod vmath;
