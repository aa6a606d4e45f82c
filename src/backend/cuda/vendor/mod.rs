//! NVIDIA's vendor libraries, loaded at run time, as one layer.
//!
//! Layers, bottom up (as in cudarc's sys/result/safe split):
//! - [`search`]: where a library file is looked for (the override variable, CUDA toolkits,
//!   NVIDIA's Python wheels, the system's folders), best first;
//! - [`loader`]: a [`loader::Library`] describes one library (stem, soname majors, override
//!   variable, wheel folders, the libraries to open before it, what it is needed for);
//!   [`loader::open`] opens it and keeps it for the process, or returns the one
//!   `BackendUnavailable` text saying what is missing, where it was looked for and which
//!   variable to set. [`loader::make_loadable`] does the same for the libraries cudarc binds
//!   itself (cuBLAS, NVRTC), and one list keeps every library opened for another's sake;
//! - [`read_ahead`]: a loaded library's files read into the file cache at once, so that its
//!   code's first run does not fault its pages in from disk one at a time;
//! - one file per library bound here ([`cudnn`], [`cufft`], [`cusolver`], [`nccl`]): its
//!   description, its entry points as plain C function pointers bound with
//!   [`loader::Opened::sym`], its constants and status texts;
//! - [`handles`]: the per-device handles of cuBLAS, cuSOLVER and cuDNN, owned by
//!   `runtime::Device` and created on first use;
//! - the users (`cuda::blas`, `cuda::lapack`, `cuda::ml`, `cuda::fft`, `collective`), which
//!   call the entry points on a device's memory and stream.
//!
//! Binding another vendor library:
//! 1. add `vendor/<name>.rs` with a `static` [`loader::Library`] describing it, and a table
//!    struct of the entry points used, typed as their C signatures with plain `c_int`
//!    statuses (never Rust enums: a value from another release would be undefined behaviour);
//! 2. a `bind(lib: Opened)` that fills the table with `lib.sym("name")?` and a `fn <name>()`
//!    that loads and binds once per process (`OnceLock<Result<Table, Error>>`);
//! 3. a `check(doing, status)` turning a failed status into `Error::Driver` with its name;
//! 4. if the library needs a handle per device, a slot in [`handles::Handles`];
//! 5. unit tests of its candidate list and its missing-library message that run without CUDA.

pub(crate) mod cudnn;
pub(crate) mod cufft;
pub(crate) mod cusolver;
pub(crate) mod handles;
pub(crate) mod loader;
pub(crate) mod nccl;
pub(crate) mod read_ahead;
pub(crate) mod search;
