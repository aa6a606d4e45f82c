//! Sparse matrices: arrays that store only their nonzeros, in CSR, CSC or COO form, with
//! arrayfire-rust's sparse functions, sparse-dense products (`matmul`) and arithmetic.
//!
//! A sparse array is an [`Array<T>`](crate::Array) of one of the four floating types (f32,
//! f64, c32, c64), as in arrayfire-rust: `dims()` is the matrix's dense shape, and
//! [`Array::is_sparse`](crate::Array::is_sparse) tells it apart. Its values and indices are
//! ordinary arrays on the same backend and device (`sparse_get_values`, ...), indices are i32.
//!
//! | format | `row_indices` | `col_indices` | order of the values |
//! |---|---|---|---|
//! | CSR | `rows + 1` row offsets | `nnz` column indices | row by row |
//! | CSC | `nnz` row indices | `cols + 1` column offsets | column by column |
//! | COO | `nnz` row indices | `nnz` column indices | any (column-major from a dense matrix) |
//!
//! Offsets start at 0, never decrease and end at `nnz`; indices lie inside the matrix. Both are
//! checked when a sparse array is made, so no kernel ever reads outside an array. Within a row
//! (CSR) or column (CSC) the indices need not be sorted; a position stored twice counts as the
//! sum of its values, in products and in `sparse_to_dense` alike.
//!
//! Where emberfire goes beyond ArrayFire: conversions exist between every pair of formats (ArrayFire
//! refuses CSC), and `matmul` takes a sparse left operand in any format (ArrayFire: CSR only;
//! others are converted to CSR first, which costs a sort).
//!
//! The products run on emberfire's own kernels on both backends. On CUDA the sparse-times-dense
//! kernel streams each block of rows' nonzeros through shared memory with coalesced reads and
//! sums each row from there (one warp per row where a block's rows are too long for it), which
//! measures faster than the vendor library's CSR product on the matrices of the benchmark (see
//! the performance chapter); on the CPU, rows are split between threads.

pub(crate) mod arith;
mod check;
mod convert;
mod create;
mod info;
pub(crate) mod matmul;

use std::sync::Arc;

pub use convert::{sparse_convert_to, sparse_to_dense};
pub use create::{sparse, sparse_from_dense, sparse_from_host};
pub use info::{
    sparse_get_col_indices, sparse_get_format, sparse_get_info, sparse_get_nnz,
    sparse_get_row_indices, sparse_get_values,
};

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;
pub use crate::jit::sparse::SparseFormat;
use crate::jit::sparse::SparseParts;
use crate::jit::Node;
use crate::ops::movement::flat;

/// The parts of a sparse `input`; panics naming `func` for a dense one.
pub(crate) fn parts_of<T: HasAfEnum>(func: &str, input: &Array<T>) -> Arc<SparseParts> {
    input
        .node()
        .sparse()
        .unwrap_or_else(|| panic!("{func}: `input` is a dense array, not a sparse one"))
}

/// `a` as a ready, contiguous column vector node (a view of its data where it already is one).
fn column<T: HasAfEnum>(func: &str, a: &Array<T>) -> Arc<Node> {
    let f = flat(a);
    let d = Dense::of(f.node()).or_raise(func);
    Node::ready(T::DTYPE, Dim4::new(&[d.dims.elements(), 1, 1, 1]), d.backend, d.data)
}

/// A sparse array of shape `rows x cols` from parts already checked against each other.
pub(crate) fn assemble<T: HasAfEnum>(
    func: &str,
    (rows, cols): (u64, u64),
    format: SparseFormat,
    values: &Array<T>,
    row_part: &Array<i32>,
    col_part: &Array<i32>,
) -> Array<T> {
    debug_assert!(format != SparseFormat::DENSE);
    let backend =
        crate::ops::build::common_backend(func, &[values.node(), row_part.node(), col_part.node()]);
    let parts = SparseParts {
        format,
        values: column(func, values),
        rows: column(func, row_part),
        cols: column(func, col_part),
        memo: Default::default(),
    };
    Array::from_node(Node::sparse_matrix(T::DTYPE, Dim4::new(&[rows, cols, 1, 1]), backend, parts))
}
