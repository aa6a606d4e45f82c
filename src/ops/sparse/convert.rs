//! Converting between storage formats, and to dense. Every conversion goes through
//! coordinates: offsets are expanded to one index per value, the coordinates are sorted by
//! (row, column) for CSR or (column, row) for CSC, and the leading index is compressed back to
//! offsets. The sort is emberfire's radix sort on 64-bit keys, so this runs on either backend.

use std::sync::Arc;

use super::{assemble, parts_of, SparseFormat};
use crate::array::Array;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::error_handler::OrRaise;
use crate::jit::sparse::SparseParts;
use crate::jit::Node;
use crate::ops::build::with_backend_of;
use crate::ops::data::range;
use crate::ops::indexer::lookup;
use crate::ops::sort::sort_by_key;

fn dense(func: &str, node: &Arc<Node>) -> Dense {
    Dense::of(node).or_raise(func)
}

/// Offsets (`n + 1` of them) of the ascending indices `sorted` into `0..n`: offset `k` is the
/// number of indices below `k`.
pub(crate) fn compress(func: &str, sorted: &Array<i32>, n: u64) -> Array<i32> {
    let sorted = dense(func, sorted.node());
    let out = sorted.backend.ops().compress(&sorted, n).or_raise(func);
    Array::from_node(out.into_node())
}

/// One index per value from offsets: value `j` gets the `k` with `offsets[k] <= j <
/// offsets[k + 1]`.
fn expand(func: &str, offsets: &Arc<Node>, nnz: u64) -> Array<i32> {
    let offsets = dense(func, offsets);
    let out = offsets.backend.ops().expand(&offsets, nnz).or_raise(func);
    Array::from_node(out.into_node())
}

/// A matrix's coordinates: values, row indices and column indices, one per value, in the
/// order the storage keeps them.
pub(crate) struct Coordinates<T: HasAfEnum> {
    pub values: Array<T>,
    pub rows: Array<i32>,
    pub cols: Array<i32>,
}

/// The coordinates of sparse parts.
pub(crate) fn coordinates<T: HasAfEnum>(func: &str, p: &SparseParts) -> Coordinates<T> {
    let nnz = p.nnz();
    let (rows, cols) = match p.format {
        SparseFormat::CSR => (expand(func, &p.rows, nnz), Array::from_node(p.cols.clone())),
        SparseFormat::CSC => (Array::from_node(p.rows.clone()), expand(func, &p.cols, nnz)),
        _ => (Array::from_node(p.rows.clone()), Array::from_node(p.cols.clone())),
    };
    Coordinates { values: Array::from_node(p.values.clone()), rows, cols }
}

impl<T: HasAfEnum> Coordinates<T> {
    /// The same coordinates sorted by row then column (`by_rows`), or by column then row.
    fn sorted(self, (rows, cols): (u64, u64), by_rows: bool) -> Coordinates<T> {
        let n = self.values.elements() as u64;
        if n == 0 {
            return self;
        }
        let (r, c) = (self.rows.cast::<i64>(), self.cols.cast::<i64>());
        let key = if by_rows { &r * cols as i64 + &c } else { &c * rows as i64 + &r };
        let order = range::<u32>(Dim4::new(&[n, 1, 1, 1]), 0);
        let (_, perm) = sort_by_key(&key, &order, 0, true);
        Coordinates {
            values: lookup(&self.values, &perm, 0),
            rows: lookup(&self.rows, &perm, 0),
            cols: lookup(&self.cols, &perm, 0),
        }
    }
}

/// `input` (sparse) stored in `format` (sparse): itself when it is stored so already.
pub(crate) fn to_format<T: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    format: SparseFormat,
) -> Array<T> {
    let p = parts_of(func, input);
    if p.format == format {
        return input.clone();
    }
    let d = input.dims();
    let shape = (d[0], d[1]);
    let c = coordinates::<T>(func, &p);
    // the permutation sorting the coordinates is made on `input`'s backend
    with_backend_of(input, || match format {
        SparseFormat::COO => assemble(func, shape, format, &c.values, &c.rows, &c.cols),
        SparseFormat::CSR => {
            let c = c.sorted(shape, true);
            let offsets = compress(func, &c.rows, shape.0);
            assemble(func, shape, format, &c.values, &offsets, &c.cols)
        }
        SparseFormat::CSC => {
            let c = c.sorted(shape, false);
            let offsets = compress(func, &c.cols, shape.1);
            assemble(func, shape, format, &c.values, &c.rows, &offsets)
        }
        SparseFormat::DENSE => to_dense(func, input),
    })
}

/// The dense matrix of sparse `input`.
pub(crate) fn to_dense<T: HasAfEnum>(func: &str, input: &Array<T>) -> Array<T> {
    let p = parts_of(func, input);
    let c = coordinates::<T>(func, &p);
    let d = input.dims();
    let out = c
        .values
        .node()
        .backend
        .ops()
        .scatter(
            &dense(func, c.values.node()),
            &dense(func, c.rows.node()),
            &dense(func, c.cols.node()),
            (d[0], d[1]),
        )
        .or_raise(func);
    Array::from_node(out.into_node())
}

/// `input` stored in `format`: a sparse array converted to another sparse format (or to a
/// dense one for DENSE), or a dense matrix made sparse (as [`sparse_from_dense`](crate::sparse_from_dense)).
/// A sparse array already in `format` is returned as it is (sharing its data).
///
/// Every pair of formats converts (ArrayFire refuses CSC); CSR and CSC come out with their
/// indices ascending within each row or column.
///
/// ```
/// use emberfire::{dim4, sparse_convert_to, sparse_from_dense, sparse_get_row_indices};
/// use emberfire::{sparse_get_col_indices, Array, SparseFormat};
/// let a = Array::new(&[1.0f32, 0.0, 0.0, 3.0, 2.0, 0.0], dim4!(2, 3));
/// let csr = sparse_from_dense(&a, SparseFormat::CSR);
/// let csc = sparse_convert_to(&csr, SparseFormat::CSC);
/// assert_eq!(sparse_get_row_indices(&csc).to_vec(), vec![0, 1, 0]);
/// assert_eq!(sparse_get_col_indices(&csc).to_vec(), vec![0, 1, 2, 3]);
/// ```
pub fn sparse_convert_to<T>(input: &Array<T>, format: SparseFormat) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    let func = "sparse_convert_to";
    match (input.is_sparse(), format) {
        (false, SparseFormat::DENSE) => input.clone(),
        (false, _) => super::create::from_dense(func, input, format),
        (true, _) => to_format(func, input, format),
    }
}

/// The dense matrix of a sparse array. Panics if `input` is dense.
///
/// ```
/// use emberfire::{sparse_from_host, sparse_to_dense, SparseFormat};
/// let s = sparse_from_host(2, 2, 1, &[4.0f32], &[0, 1, 1], &[1], SparseFormat::CSR); // (0, 1)
/// assert_eq!(sparse_to_dense(&s).to_vec(), vec![0.0, 0.0, 4.0, 0.0]);
/// ```
pub fn sparse_to_dense<T>(input: &Array<T>) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    to_dense("sparse_to_dense", input)
}
