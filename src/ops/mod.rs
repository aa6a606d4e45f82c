//! The public operations, one file per family.

pub(crate) mod arith;
pub(crate) mod blas;
pub(crate) mod build;
pub(crate) mod data;
pub(crate) mod reduce;
