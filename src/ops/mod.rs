//! The public operations, one file per family.

pub(crate) mod arith;
pub(crate) mod blas;
pub(crate) mod build;
pub(crate) mod by_key;
pub(crate) mod data;
pub(crate) mod image;
pub(crate) mod movement;
pub(crate) mod ragged;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod vision;

pub(crate) mod assign;
pub(crate) mod index;
mod index_macros;
pub(crate) mod indexer;
pub(crate) mod lapack;
pub(crate) mod locate;
pub(crate) mod ml;
pub(crate) mod seq;
pub(crate) mod set;
pub(crate) mod signal;
pub(crate) mod sort;
pub(crate) mod sparse;
pub(crate) mod stats;
mod to_device;
