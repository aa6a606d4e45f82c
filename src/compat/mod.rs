//! arrayfire-rust's API that exists for code written against it: ArrayFire's error codes and
//! C type names, raw host allocations, the memory step setting, the tagged `Scalar`, and the
//! statistics signatures arrayfire-rust 3.8 deprecated.
//!
//! Nothing here is needed by emberfire's own operations; each item is re-exported at the crate
//! root under arrayfire-rust's name, so a ported program finds it where it did before.

pub(crate) mod af_error;
pub(crate) mod ffi_types;
pub(crate) mod host_memory;
pub(crate) mod mem_step;
pub(crate) mod scalar;
pub(crate) mod stats_legacy;
