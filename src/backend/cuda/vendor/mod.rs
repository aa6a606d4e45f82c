//! NVIDIA's vendor libraries, loaded at run time.
//!
//! Layers, as in cudarc's sys/result/safe split:
//! - [`libraries`]: where a library file is looked for (the override variable, CUDA
//!   toolkits, NVIDIA's Python wheels, the system's folders);
//! - one file per library bound here ([`cudnn`], [`cufft`], [`cusolver`], [`nccl`]): its
//!   entry points as plain C function pointers, its constants and status texts;
//! - the users (`cuda::blas`, `cuda::lapack`, `cuda::ml`, `cuda::fft`, `collective`), which
//!   call the entry points on a device's memory and stream.
//!
//! cuBLAS and NVRTC are bound by cudarc; this layer only makes them loadable when they are
//! not on the loader's path.

pub(crate) mod cudnn;
pub(crate) mod cufft;
pub(crate) mod cusolver;
pub(crate) mod libraries;
pub(crate) mod nccl;
