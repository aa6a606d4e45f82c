//! # emberfire-cuda-interop
//!
//! Mix [`emberfire`] arrays with your own CUDA kernels, device memory and streams,
//! with no copies and no races, through [`cudarc`].
//!
//! - **Devices and handles**: [`get_device_native_id`], [`set_device_native_id`], the context
//!   ([`context`]) and the stream ([`get_stream`], [`stream`]) emberfire uses on a device. Your
//!   kernels on that stream are ordered with emberfire's work for free.
//! - **Your streams**: [`with_stream`] runs emberfire on a stream of yours for a scope;
//!   [`stream_wait_for_emberfire`] and [`emberfire_wait_for_stream`] order two streams with
//!   events, never by blocking the host.
//! - **Memory**: arrays over memory you allocated, adopted ([`array_from_device_ptr`]) or
//!   borrowed with an owner ([`array_from_borrowed_ptr`]); arrays from cudarc slices
//!   ([`array_from_slice`], [`array_from_shared_slice`]); an array's memory for your code,
//!   locked until a guard drops ([`lock`]), as a cudarc view ([`LockGuard::view`]).
//! - **Kernels**: [`RawKernel`] compiles CUDA C with NVRTC once (cached with emberfire's own
//!   kernels) and launches it on arrays.
//!
//! Every call that takes a handle checks it and returns an [`Error`] for a null pointer,
//! memory or a stream of another device or context, or a size that does not fit. Without a
//! CUDA device every call returns an error saying why; nothing panics.
//!
//! The book's chapter "CUDA interop" states the ownership and ordering rules and walks through
//! the examples `custom_kernel` and `cuda_af_app`.
//!
//! ```
//! use emberfire::{dim4, Array};
//! if emberfire_cuda_interop::device_count().is_ok() {
//!     emberfire::set_backend(emberfire::Backend::CUDA);
//!     let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3)) * 10.0f32;
//!     // Read the result with cudarc on emberfire's stream: no synchronisation needed.
//!     let guard = emberfire_cuda_interop::lock(&a).unwrap();
//!     let stream = emberfire_cuda_interop::stream(0).unwrap();
//!     assert_eq!(stream.clone_dtoh(&guard.view().unwrap()).unwrap(), vec![10.0, 20.0, 30.0]);
//! }
//! ```

#![warn(missing_docs)]

mod device;
mod error;
mod kernel;
mod lock;
mod memory;
mod streams;

/// The cudarc this crate (and emberfire) is built with, so that its types are the ones this
/// crate's functions take and return.
pub use cudarc;
pub use cudarc::driver::LaunchConfig;
pub use device::{
    context, device_count, get_device_native_id, get_stream, set_device_native_id, stream,
};
pub use error::{Error, Result};
pub use kernel::{arg, KernelArg, RawKernel};
pub use lock::{lock, LockGuard};
pub use memory::{
    array_from_borrowed_ptr, array_from_device_ptr, array_from_shared_slice, array_from_slice,
    unlock_device_ptr,
};
pub use streams::{emberfire_wait_for_stream, stream_wait_for_emberfire, with_stream};
