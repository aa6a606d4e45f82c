//! Linear algebra with arrayfire-rust's names and signatures: factorizations ([`lu`], [`qr`],
//! [`cholesky`], [`svd`]), solvers ([`solve`], [`solve_lu`], [`inverse`], [`pinverse`]) and
//! measures ([`det`], [`rank`], [`norm`]).
//!
//! Shared rules:
//! - Element types: f32, f64, c32 and c64 (arrayfire-rust's [`FloatingPoint`] bound).
//! - Arrays are column-major matrices of `dims[0]` rows and `dims[1]` columns. [`solve`] and
//!   [`pinverse`] also take batches of matrices along dimensions 2 and 3, as ArrayFire does;
//!   the other functions work on one matrix and panic, naming the function and the shape,
//!   when dimension 2 or 3 is larger than 1.
//! - Results follow LAPACK's and ArrayFire's conventions: `lu` gives a 0-based row
//!   permutation, `lu_inplace` LAPACK's 1-based pivots when asked, `cholesky` LAPACK's `info`,
//!   `det` a `(real, imaginary)` pair, `svd` `Vᴴ` rather than `V`.
//! - A programmer error (a matrix that must be square and is not, shapes that do not fit, an
//!   unsupported [`MatProp`](crate::MatProp)) panics with a message naming the function and the
//!   shapes. A matrix that is singular or not positive definite is not an error: `cholesky`
//!   reports it in `info`, `det` gives zero, and solving with it gives infinities or NaN, as
//!   LAPACK's division by a zero pivot does.
//! - Empty matrices give empty results of the documented shapes (`det` of a 0×0 matrix is 1,
//!   `rank` and `norm` of an empty one 0).
//!
//! On the CPU the factorizations are emberfire's own blocked LU and QR and faer's Cholesky
//! and SVD; on CUDA, cuSOLVER and cuBLAS on emberfire's stream (falling back to the CPU
//! through the host when cuSOLVER cannot be loaded). Everything else is composed from
//! emberfire's own operations (products, reductions, element-wise arithmetic) on the array's
//! backend.

mod cholesky;
mod lu;
mod measure;
mod norm;
mod qr;
mod solve;
mod svd;

pub use cholesky::{cholesky, cholesky_inplace};
pub use lu::{det, lu, lu_inplace, solve_lu};
pub use measure::{is_lapack_available, rank};
pub use norm::{norm, NormType};
pub use qr::{qr, qr_inplace};
pub use solve::{inverse, solve};
pub use svd::{pinverse, svd, svd_inplace};

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error::Error;
use crate::jit::{Data, Node};
use crate::storage::HostVec;

/// Panics with the text of a backend failure, naming the function.
fn fail(func: &str, e: Error) -> ! {
    crate::error_handler::raise(&e, format!("{func}: {e}"))
}

/// The value of a backend call, or a panic naming the function.
fn check<R>(func: &str, r: Result<R, Error>) -> R {
    r.unwrap_or_else(|e| fail(func, e))
}

/// `array` evaluated into dense memory on its backend.
fn dense<T: HasAfEnum>(func: &str, array: &Array<T>) -> Dense {
    Dense::of(array.node()).unwrap_or_else(|e| fail(func, e))
}

/// An array holding dense data.
fn array_of<T: HasAfEnum>(d: Dense) -> Array<T> {
    Array::from_node(d.into_node())
}

/// Host values as an array on `backend`.
fn upload<T: HasAfEnum>(func: &str, values: Vec<T>, dims: Dim4, backend: BackendKind) -> Array<T> {
    let buf = backend.ops().upload(T::wrap(values)).unwrap_or_else(|e| fail(func, e));
    Array::from_node(Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims)))
}

/// An empty array of shape `dims` on `backend`.
fn empty<T: HasAfEnum>(func: &str, dims: Dim4, backend: BackendKind) -> Array<T> {
    debug_assert_eq!(dims.elements(), 0);
    upload(func, Vec::new(), dims, backend)
}

/// Zeros of shape `dims` on `backend`, lazily.
fn zeros<T: HasAfEnum>(dims: Dim4, backend: BackendKind) -> Array<T> {
    Array::lazy(dims, backend, crate::jit::Expr::Scalar(T::wrap(vec![T::default()])))
}

/// The host values of dense data.
fn download(func: &str, d: &Dense) -> HostVec {
    crate::backend::download(&d.data, d.dims, d.dtype).unwrap_or_else(|e| fail(func, e))
}

/// `(rows, columns)` of a single matrix; panics naming `func` and `arg` when dimension 2 or 3
/// is larger than 1.
fn matrix_shape(func: &str, arg: &str, dims: Dim4) -> (usize, usize) {
    assert!(
        dims[2] == 1 && dims[3] == 1,
        "{func}: `{arg}` has dims {dims}, a batch of matrices; {func} works on one matrix \
         (dimensions 2 and 3 must be 1)"
    );
    (dims[0] as usize, dims[1] as usize)
}

/// The size of a single square matrix; panics naming `func` and `arg` otherwise.
fn square_size(func: &str, arg: &str, dims: Dim4) -> usize {
    let (m, n) = matrix_shape(func, arg, dims);
    assert!(m == n, "{func}: `{arg}` must be a square matrix, but its dims are {dims} ({m}×{n})");
    m
}

/// The dims of a single `rows`×`cols` matrix.
fn mat_dims(rows: usize, cols: usize) -> Dim4 {
    Dim4::new(&[rows as u64, cols as u64, 1, 1])
}
