//! Linear algebra and numerical kernels: matrix products, factorizations and solvers (and their
//! CUDA/CPU agreement), sparse arrays, signal processing and the neural-network convolutions.
//! Each module was a test binary of its own; they share this one, and its tests run in parallel
//! threads: none of them reads or changes process-wide state that another one would disturb
//! (those live in `tests/process`; the cuBLAS math mode is tested there, in `blas_global`).

#[path = "../common/mod.rs"]
mod common;

mod blas;
mod lapack;
mod lapack_cuda;
mod ml;
mod signal;
mod sparse;
