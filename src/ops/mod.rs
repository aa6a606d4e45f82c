//! The public operations, one file per family.

pub(crate) mod arith;
pub(crate) mod build;
pub(crate) mod data;
pub(crate) mod movement;
pub(crate) mod reduce;
