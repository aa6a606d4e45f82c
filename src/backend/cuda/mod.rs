//! The CUDA backend.

pub(crate) mod codegen;
pub(crate) mod launch;
