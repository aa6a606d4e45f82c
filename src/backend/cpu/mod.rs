//! The CPU backend: fused, chunked, parallel evaluation of expression graphs.

mod acc;
pub(crate) mod blas;
pub(crate) mod copy;
mod device;
pub(crate) mod eval;
pub(crate) mod fft;
mod fork;
pub(crate) mod gather;
#[cfg(target_arch = "x86_64")]
mod gemm_avx512;
pub(crate) mod host_table;
pub(crate) mod image;
pub(crate) mod kernels;
pub(crate) mod lapack;
pub(crate) mod ml;
mod movement;
pub(crate) mod radix;
pub(crate) mod random;
#[cfg(target_arch = "x86_64")]
mod random_avx2;
pub(crate) mod reduce;
pub(crate) mod scan;
mod shared_ptr;
pub(crate) mod signal;
pub(crate) mod sort;
pub(crate) mod sparse;
mod sparse_avx512;
pub(crate) mod sparse_diagonals;
mod stream;
pub(crate) mod transpose;
pub(crate) mod vision;
pub(crate) mod vmath;

pub(crate) mod index_copy;
pub(crate) mod write_into;

/// The CPU backend, as the family traits of `backend/` see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cpu;
