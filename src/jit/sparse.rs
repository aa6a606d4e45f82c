//! The sparse state of a graph node: a matrix that stores only its nonzeros.
//!
//! A sparse array is an `Array<T>` like any other (as in arrayfire-rust): its node has the
//! matrix's dense shape and element type, and instead of data or an expression it holds three
//! ready arrays, the values and two index arrays, whose meaning the storage format gives (see
//! `ops::sparse`). Nothing lazy ever reads a sparse node: the operations that take sparse
//! arrays (arithmetic, `matmul`, the `sparse_*` functions) check for it first, and every other
//! operation refuses it with a message (`Node::lazy`, `Node::try_eval`).

use std::sync::Arc;

use super::Node;
pub(crate) use crate::backend::sparse::ProductMemo;
use crate::ops::sparse::SparseFormat;

/// The parts of a sparse matrix, each a ready, contiguous column vector on the matrix's
/// backend. The parts never change once made; `memo` keeps what products derive from them.
#[derive(Debug)]
pub(crate) struct SparseParts {
    /// CSR, CSC or COO (never DENSE).
    pub format: SparseFormat,
    /// The nonzero values, `nnz` of them, of the matrix's element type.
    pub values: Arc<Node>,
    /// i32: row offsets (`rows + 1`) for CSR, row indices (`nnz`) for CSC and COO.
    pub rows: Arc<Node>,
    /// i32: column offsets (`cols + 1`) for CSC, column indices (`nnz`) for CSR and COO.
    pub cols: Arc<Node>,
    /// What the products with the matrix keep between calls (on the CPU, its layout by
    /// diagonals); empty when the parts are made.
    pub memo: ProductMemo,
}

impl SparseParts {
    /// The number of stored values.
    pub(crate) fn nnz(&self) -> u64 {
        self.values.dims.elements()
    }
}

/// The message of an operation that takes dense arrays only and was given a sparse one.
pub(crate) fn dense_only_message(func: &str, format: SparseFormat) -> String {
    format!(
        "{func}: the array is sparse ({format:?}) and this operation takes dense arrays only; \
         sparse arrays take part in +, -, *, /, matmul and the sparse_* functions (convert with \
         sparse_to_dense first)"
    )
}
