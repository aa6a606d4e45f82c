//! Zero-copy exchange of arrays with other libraries through
//! [DLPack](https://dmlc.github.io/dlpack/latest/): PyTorch, CuPy, JAX, NumPy, TensorFlow, and
//! Rust crates that speak it.
//!
//! - [`to_dlpack`] / [`to_dlpack_legacy`] hand an array to a consumer as a
//!   `DLManagedTensorVersioned` (DLPack 1.x) or a legacy `DLManagedTensor` (DLPack 0.x
//!   consumers). The tensor points at the array's own memory: nothing is copied.
//! - [`from_dlpack`] / [`from_dlpack_legacy`] take a producer's tensor as an array over the
//!   producer's memory: nothing is copied either, except in the cases listed under "Layouts".
//!
//! # Layouts
//!
//! Element `[i, j, k, l]` of a DLPack tensor is element `(i, j, k, l)` of the emberfire array,
//! as ArrayFire's Python bindings map NumPy arrays: shapes are not reversed. emberfire stores
//! arrays column-major, so an exported array is a tensor with Fortran-order strides
//! (`1, d0, d0*d1, ...`), and a row-major (C-order) tensor imports as a *strided view*: the
//! array reads the producer's memory through its strides, as it reads any view made by
//! indexing. The same holds for any strides, including zero (broadcast) and negative ones.
//! Operations that need contiguous memory (`device_ptr`, `lock`, in-place assignment) copy
//! a view into memory of its own first, as they do for every view.
//!
//! An import copies only where the memory cannot be read in place:
//! - host memory whose first element is not aligned for the element type;
//! - host bool tensors holding a byte other than 0 or 1 (a Rust `bool` must be one of them;
//!   such bytes are read as "not zero");
//! - tensors with no elements (nothing to share).
//!
//! An export copies only arrays that a view with negative strides describes (a flipped view
//! evaluates into memory of its own first, as [`Array::strides`] does) and bool arrays that
//! may hold bytes other than 0 and 1 (see "Bool tensors"); lazy arrays are evaluated.
//!
//! i8 tensors, a type emberfire does not have, import as i16 arrays that widen the
//! producer's bytes lazily (see [`from_dlpack`]). Tensors of more than four dimensions, other
//! element types emberfire does not have (float8, vector lanes), and devices emberfire does
//! not drive (or that this machine does not have) are errors ([`Error::Exchange`](crate::Error::Exchange)) that say which.
//!
//! # Where an imported array lives
//!
//! The tensor's device decides, not the active backend: a tensor in host memory (`kDLCPU`,
//! or CUDA's pinned `kDLCUDAHost`) becomes an array of the CPU backend, a CUDA tensor
//! (`kDLCUDA`, `kDLCUDAManaged`) an array of its own CUDA device, as PyTorch and JAX keep a
//! host tensor on the host. Every later operation runs where its operands live; operands of
//! two backends or devices never mix silently: the operation panics with a message naming
//! [`Array::to_backend`] and [`Array::to_device`], which move an array (a copy).
//!
//! # Bool tensors
//!
//! emberfire's bools are bytes, and arithmetic on bools keeps counts in them (see
//! [`DType::B8`](crate::DType::B8)); DLPack consumers read a bool byte as 0 or 1 only. An
//! export therefore hands out only 0 and 1:
//! - a bool array known to hold only 0 and 1 (a comparison, a logical operation, a cast to
//!   bool, data from the host, an import: host bytes are checked on import, and a CUDA bool
//!   tensor is taken to hold 0 and 1, as every producer's does) is exported as it is,
//!   without a copy;
//! - otherwise, in host memory, its bytes are checked (read, not copied) and the array is
//!   exported as it is when they are all 0 or 1;
//! - otherwise (bytes above 1 on the host, or an array of unknown bytes in CUDA memory, which
//!   is not read back to check), the export is a copy computed as `array != false`, fused
//!   with the array's own expression when that is lazy.

//! # Ownership
//!
//! - An exported tensor keeps the array's buffer alive until the consumer calls its deleter
//!   (exactly once, from any thread). While it lives, emberfire never writes that buffer in
//!   place nor reuses it: it counts as one more array using it. (emberfire does not *lock* the
//!   buffer for this: a lock is one flag that the user may set or clear, where a reference is
//!   counted, so two exports and a user's own lock cannot undo each other.)
//! - An imported tensor's deleter runs when the last array using its memory is dropped, on the
//!   thread that drops it, exactly once; if that memory is locked then ([`Array::lock`]), it
//!   runs never on the CPU and at `cuda::unlock_device_ptr` on CUDA, as for any locked buffer.
//!   A tensor flagged read-only (`DLPACK_FLAG_BITMASK_READ_ONLY`) is never written in place:
//!   emberfire treats it as locked for writing ([`Array::is_locked`] reports it).
//! - Importing a tensor that emberfire exported gives back the original buffer (same memory,
//!   same strides).
//!
//! # Streams (CUDA)
//!
//! DLPack's rule: the consumer names its stream, and the producer makes that stream wait for
//! the work that writes the data. emberfire follows it both ways, with CUDA events, without
//! blocking the host:
//! - Export for a consumer stream ([`to_dlpack_for_stream`]): an event recorded on the stream
//!   that wrote the buffer (emberfire's own, or a `cuda::with_stream` stream) is waited for by
//!   the consumer's stream. [`to_dlpack`] does it for the legacy default stream, which is what
//!   a consumer that names none uses.
//! - Import with a producer stream ([`from_dlpack`]'s `producer_stream`): everything emberfire
//!   does with the memory waits for the work queued on that stream so far.
//! - When a tensor was exported for a default stream (legacy or per-thread), its deleter also
//!   makes emberfire's later reuse of the buffer wait for the work queued on that stream, so
//!   that a consumer that frees its tensor with kernels still reading it cannot race with
//!   emberfire's next allocation. For other consumer streams, the consumer must call the
//!   deleter once its reads are ordered (as PyTorch and CuPy do by freeing in stream order).
//!
//! Stream values follow the Python protocol (`__dlpack__(stream=...)`): `1` is the legacy
//! default stream, `2` the per-thread default stream, `-1` asks for no ordering, any other
//! value is a `CUstream` handle. On the CPU backend streams are ignored: every operation has
//! finished when its call returns.
//!
//! # Why `dlpack-ffi` and not `dlpark`
//!
//! The structures come from `dlpack-ffi` (bindings generated from DLPack's own header, no
//! dependencies). `dlpark`, the most complete DLPack crate, was evaluated first and not used:
//! its current release needs Rust 1.88 (emberfire supports 1.84), its cudarc feature fixes the
//! CUDA version at build time (emberfire loads CUDA at run time and builds without a toolkit),
//! and its ownership model (tensors wrapping their own Rust containers) does not fit buffers
//! that emberfire's memory manager owns and orders by stream. What is left once the structures
//! are given (the ownership and stream rules above) is emberfire's own.
//!
//! ```
//! use emberfire::{dim4, dlpack, Array};
//! let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
//! let t = dlpack::to_dlpack(&a).unwrap();
//! // SAFETY: a tensor from `to_dlpack`, given to `from_dlpack`, which calls its deleter.
//! let b: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
//! assert_eq!(b.to_vec(), a.to_vec());
//! ```

mod dtype;
mod export;
mod import;
mod stream;

pub use dlpack_ffi as ffi;
pub use dtype::{dl_data_type, dtype_of};
pub use export::{
    dlpack_device, to_dlpack, to_dlpack_for_stream, to_dlpack_legacy, to_dlpack_legacy_for_stream,
};
pub use import::{from_dlpack, from_dlpack_legacy};

#[cfg(doc)]
use crate::Array;
