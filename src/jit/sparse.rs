//! The sparse state of a graph node: a matrix that stores only its nonzeros.
//!
//! A sparse array is an `Array<T>` like any other (as in arrayfire-rust): its node has the
//! matrix's dense shape and element type, and instead of data or an expression it holds three
//! ready arrays, the values and two index arrays, whose meaning the storage format gives (see
//! `ops::sparse`). Nothing lazy ever reads a sparse node: the operations that take sparse
//! arrays (arithmetic, `matmul`, the `sparse_*` functions) check for it first, and every other
//! operation refuses it with a message (`Node::lazy`, `Node::try_eval`).

use std::any::Any;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use super::Node;

/// How a matrix is stored: dense, or one of the three sparse formats.
///
/// ```
/// use emberfire::{sparse_from_dense, sparse_get_format, Array, SparseFormat, dim4};
/// let a = Array::new(&[1.0f32, 0.0, 0.0, 2.0], dim4!(2, 2));
/// let s = sparse_from_dense(&a, SparseFormat::CSR);
/// assert_eq!(sparse_get_format(&s), SparseFormat::CSR);
/// assert_eq!(sparse_get_format(&a), SparseFormat::DENSE);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SparseFormat {
    /// Every element stored, column-major.
    DENSE = 0,
    /// Compressed sparse rows: row offsets, column indices.
    CSR = 1,
    /// Compressed sparse columns: row indices, column offsets.
    CSC = 2,
    /// Coordinates: a row and a column index per value.
    COO = 3,
}

/// What a backend's product keeps of a matrix between products: how many products it has
/// taken part in, and, from the second on, what the backend derived from the parts (the CPU's
/// layout by diagonals where that is compact, `None` where it is not; see
/// `cpu::sparse_diagonals`). The graph holds it without knowing its type, as it holds buffers.
#[derive(Debug, Default)]
pub(crate) struct ProductMemo {
    products: AtomicU32,
    kept: OnceLock<Option<Box<dyn Any + Send + Sync>>>,
}

impl ProductMemo {
    /// What `make` derives, made at the second call; `None` at the first call and where
    /// `make` finds nothing worth keeping. A memo keeps one type: the backend's own.
    pub(crate) fn kept<K: Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> Option<K>,
    ) -> Option<&K> {
        if self.products.fetch_add(1, Ordering::Relaxed) == 0 {
            return None;
        }
        let kept =
            self.kept.get_or_init(|| make().map(|k| Box::new(k) as Box<dyn Any + Send + Sync>));
        kept.as_ref().map(|k| k.downcast_ref().expect("internal error: a memo of another type"))
    }
}

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
