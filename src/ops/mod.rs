//! The public operations, one file per family.

pub(crate) mod arith;
pub(crate) mod build;
pub(crate) mod by_key;
pub(crate) mod data;
pub(crate) mod locate;
pub(crate) mod reduce;
pub(crate) mod set;
pub(crate) mod sort;
