//! # emberfire
//!
//! Lazily evaluated arrays for Rust, in the spirit of ArrayFire: one [`Array`] type, up to four
//! dimensions, thirteen element types, on a fast multi-threaded CPU backend (and CUDA where a
//! GPU is present). Element-wise operations build an expression graph; nothing is computed
//! until a value is needed, and then a whole tree is computed in one fused pass.
//!
//! The API follows arrayfire-rust's names and signatures, so code written for it ports by
//! changing one `use` line.
//!
//! ```
//! use emberfire::*;
//! let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
//! let y = sin(&x) * cos(&x) + &x * 0.5f32; // lazy: one fused pass when read
//! let v = y.to_vec();
//! assert!((v[0] - (1f32.sin() * 1f32.cos() + 0.5)).abs() < 1e-6);
//! ```
//!
//! Programmer errors (mismatched shapes, host slices of the wrong length) panic with a message
//! naming the function and the shapes; failures of the environment are [`Error`]s returned by
//! the `try_` forms.

#![warn(missing_docs)]

mod array;
mod array_memory;
mod backend;
pub mod collective;
mod compat;
mod device;
mod dim4;
mod dtype;
pub mod error;
mod error_handler;
mod event;
mod graphics;
mod interop;
mod jit;
mod macros;
mod ops;
mod place;
mod print_format;
mod print_sparse;
mod random;
mod sharded;
mod storage;
mod sync;

pub use array::eval_multiple;
pub use array::{print, print_gen, Array};
pub use backend::schedule::{is_eval_manual, is_manual_eval, set_manual_eval};
pub use compat::af_error::AfError;
pub use compat::ffi_types::{af_array, dim_t, u64_t, void_ptr};
pub use compat::host_memory::{alloc_host, alloc_pinned, free_host, free_pinned, get_size};
pub use compat::mem_step::{get_mem_step_size, set_mem_step_size};
pub use compat::scalar::Scalar;
pub use device::{
    device_count, device_gc, device_info, device_mem_info, get_active_backend,
    get_available_backends, get_backend_count, get_device, get_device_native_id, get_revision,
    get_version, info, info_string, init, is_double_available, is_half_available, print_mem_info,
    set_backend, set_device, set_device_native_id, sync, try_set_backend, try_set_device, Backend,
};
pub use dim4::Dim4;
pub use dtype::{
    c32, c64, ComplexFloating, ConfidenceCCInput, CovarianceComputable, DType, DeconvInput,
    EdgeComputable, FloatingPoint, Fromf64, GrayRGBConvertible, HasAfEnum, ImageFilterType,
    ImageNativeType, ImplicitPromote, IndexableType, IntegralType, MedianComputable,
    MomentsComputable, RandomNormal, RealFloating, RealNumber, ReduceByKeyInput, Scanable,
};
pub use error::Error;
pub use error_handler::{
    get_last_error, handle_error_general, register_error_handler, Callback, ErrorCallback,
    HANDLE_ERROR,
};
pub use event::Event;
pub use interop::{cuda, dlpack};
pub use ops::arith::*;
pub use ops::blas::{
    dot, gemm, get_cublas_mode, matmul, set_cublas_mode, try_dot, try_gemm, try_matmul,
    CublasMathMode, GemmType, MatProp,
};
pub use ops::by_key::*;
pub use ops::data::{
    constant, diag_create, diag_extract, identity, iota, lower, range, replace, replace_scalar,
    select, selectl, selectr, upper, ConstGenerator,
};
#[allow(deprecated)]
pub use ops::movement::{
    flat, flip, join, join_many, moddims, pad, reorder, reorder_v2, shift, tile, transpose,
    transpose_inplace, BorderType,
};
pub use ops::ragged::max_ragged;
pub use ops::random::{randn, random_normal, random_uniform, randu};
pub use ops::reduce::*;
pub use ops::scan::{accum, diff1, diff2, scan, scan_by_key, BinaryOp};
pub use random::{
    get_default_random_engine, get_seed, set_default_random_engine_type, set_seed, RandomEngine,
    RandomEngineType, DEFAULT_RANDOM_ENGINE, MERSENNE, PHILOX, THREEFRY,
};

pub use graphics::{ColorMap, Frame, MarkerType, Window};
pub use ops::assign::{
    assign_gen, assign_seq, set_col, set_cols, set_row, set_rows, set_slice, set_slices,
};
pub use ops::image::*;
pub use ops::index::{col, cols, index, row, rows, slice, slices};
pub use ops::indexer::{index_gen, lookup, Indexable, Indexer};
pub use ops::lapack::{
    cholesky, cholesky_inplace, det, inverse, is_lapack_available, lu, lu_inplace, norm, pinverse,
    qr, qr_inplace, rank, solve, solve_lu, svd, svd_inplace, NormType,
};
pub use ops::locate::locate;
pub use ops::ml::{convolve2_gradient_nn, convolve2_nn, ConvGradientType};
pub use ops::seq::Seq;
pub use ops::set::{set_intersect, set_union, set_unique};
pub use ops::signal::*;
pub use ops::sort::{sort, sort_by_key, sort_index};
pub use ops::sparse::*;
pub use ops::vision::*;
pub use sharded::{ShardedArray, Sharding};

pub use backend::native::JitStats;

/// How many kernels have been compiled, and how many lookups the in-memory and on-disk kernel
/// caches answered, since the process started (all zero on the CPU backend, which compiles
/// nothing).
///
/// ```
/// let before = emberfire::jit_stats();
/// let after = emberfire::jit_stats();
/// assert!(after.compiles >= before.compiles);
/// ```
pub fn jit_stats() -> JitStats {
    backend::native::jit_stats()
}

/// Re-exported so that users can name `f16` without adding the crate.
pub use half::f16;

/// Re-exported so that users can name `bf16` without adding the crate.
///
/// ```
/// use emberfire::*;
/// let a = constant(bf16::from_f32(0.5), dim4!(3));
/// assert_eq!(a.to_vec(), vec![bf16::from_f32(0.5); 3]);
/// ```
pub use half::bf16;

// The README's example runs as a doc test, so it cannot drift from the code.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
pub use ops::stats::*;
// Exported for code written against arrayfire-rust's older signatures; using them warns.
#[allow(deprecated)]
pub use compat::stats_legacy::{cov, stdev, stdev_all, var, var_all};
