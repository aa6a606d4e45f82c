//! Making sparse arrays: from value and index arrays, from host slices, and from a dense
//! matrix.

use super::check;
use super::convert::compress;
use super::{assemble, SparseFormat};
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::ops::build::with_backend_of;
use crate::ops::indexer::lookup;
use crate::ops::locate::locate;
use crate::ops::movement::{flat, transpose};

/// A sparse `rows x cols` matrix in `format` from its values and index arrays: for CSR,
/// `row_indices` holds `rows + 1` row offsets and `col_indices` a column index per value; for
/// CSC, a row index per value and `cols + 1` column offsets; for COO, a row and a column index
/// per value. The arrays are used as they are where they are already evaluated and contiguous,
/// without a copy, as in arrayfire-rust.
///
/// Panics (naming the argument) if `format` is DENSE, an array is sparse, a length does not
/// fit the format, offsets do not run from 0 up to `nnz` without decreasing, or an index lies
/// outside the matrix. Checking the contents reads a few reductions of the index arrays.
///
/// ```
/// use emberfire::{dim4, sparse, sparse_to_dense, Array, SparseFormat};
/// // [[1 0 2]
/// //  [0 3 0]]
/// let values = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
/// let offsets = Array::new(&[0i32, 2, 3], dim4!(3));
/// let cols = Array::new(&[0i32, 2, 1], dim4!(3));
/// let s = sparse(2, 3, &values, &offsets, &cols, SparseFormat::CSR);
/// assert!(s.is_sparse());
/// assert_eq!(sparse_to_dense(&s).to_vec(), vec![1.0, 0.0, 0.0, 3.0, 2.0, 0.0]);
/// ```
pub fn sparse<T>(
    rows: u64,
    cols: u64,
    values: &Array<T>,
    row_indices: &Array<i32>,
    col_indices: &Array<i32>,
    format: SparseFormat,
) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    let func = "sparse";
    for (sparse, name) in [
        (values.is_sparse(), "values"),
        (row_indices.is_sparse(), "row_indices"),
        (col_indices.is_sparse(), "col_indices"),
    ] {
        assert!(!sparse, "{func}: `{name}` must be a dense array, not a sparse one");
    }
    let nnz = values.elements() as u64;
    let lens = [nnz, row_indices.elements() as u64, col_indices.elements() as u64];
    check::lengths(func, format, (rows, cols), lens);
    check::device(func, format, (rows, cols), nnz, [row_indices, col_indices]);
    assemble(func, (rows, cols), format, values, row_indices, col_indices)
}

/// Like [`sparse`], from host slices: `nzz` values, and index slices of the lengths the
/// format needs. The contents are checked on the host before anything is copied.
///
/// ```
/// use emberfire::{sparse_from_host, sparse_to_dense, SparseFormat};
/// // [[0 5]
/// //  [7 0]] as coordinates
/// let s = sparse_from_host(2, 2, 2, &[7.0f64, 5.0], &[1, 0], &[0, 1], SparseFormat::COO);
/// assert_eq!(sparse_to_dense(&s).to_vec(), vec![0.0, 7.0, 5.0, 0.0]);
/// ```
pub fn sparse_from_host<T>(
    rows: u64,
    cols: u64,
    nzz: u64,
    values: &[T],
    row_indices: &[i32],
    col_indices: &[i32],
    format: SparseFormat,
) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    let func = "sparse_from_host";
    assert!(
        values.len() as u64 == nzz,
        "{func}: `values` has {} elements but `nzz` is {nzz}",
        values.len()
    );
    let lens = [nzz, row_indices.len() as u64, col_indices.len() as u64];
    check::lengths(func, format, (rows, cols), lens);
    check::host(func, format, (rows, cols), nzz, [row_indices, col_indices]);
    let vector = |n: usize| Dim4::new(&[n as u64, 1, 1, 1]);
    assemble(
        func,
        (rows, cols),
        format,
        &Array::new(values, vector(values.len())),
        &Array::new(row_indices, vector(row_indices.len())),
        &Array::new(col_indices, vector(col_indices.len())),
    )
}

/// The nonzeros of a dense matrix in `format`. CSR lists them row by row; CSC and COO column
/// by column (column-major order), each with its indices ascending. NaN counts as nonzero.
///
/// Panics if `dense` is not a matrix (dimensions 2 and 3 must be 1), is sparse already, or
/// `format` is DENSE.
///
/// ```
/// use emberfire::{dim4, sparse_from_dense, sparse_get_col_indices, sparse_get_row_indices};
/// use emberfire::{sparse_get_values, Array, SparseFormat};
/// // [[1 0 2]
/// //  [0 3 0]]
/// let a = Array::new(&[1.0f32, 0.0, 0.0, 3.0, 2.0, 0.0], dim4!(2, 3));
/// let s = sparse_from_dense(&a, SparseFormat::CSR);
/// assert_eq!(sparse_get_values(&s).to_vec(), vec![1.0, 2.0, 3.0]);
/// assert_eq!(sparse_get_row_indices(&s).to_vec(), vec![0, 2, 3]);
/// assert_eq!(sparse_get_col_indices(&s).to_vec(), vec![0, 2, 1]);
/// ```
pub fn sparse_from_dense<T>(dense: &Array<T>, format: SparseFormat) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    from_dense("sparse_from_dense", dense, format)
}

/// [`sparse_from_dense`] under the name of the public function that called it.
pub(super) fn from_dense<T: HasAfEnum>(
    func: &str,
    dense: &Array<T>,
    format: SparseFormat,
) -> Array<T> {
    assert!(!dense.is_sparse(), "{func}: `dense` is sparse already");
    let d = dense.dims();
    assert!(
        d[2] == 1 && d[3] == 1,
        "{func}: `dense` must be a matrix (dimensions 2 and 3 of size 1), but its dims are {d}"
    );
    let (rows, cols) = (d[0], d[1]);
    assert!(
        rows * cols <= u32::MAX as u64 && rows <= i32::MAX as u64 && cols <= i32::MAX as u64,
        "{func}: a {rows} x {cols} matrix is too large for i32 sparse indices"
    );
    let shape = (rows, cols);
    // the empty results of an all-zero matrix are made on `dense`'s backend
    with_backend_of(dense, || match format {
        SparseFormat::DENSE => {
            panic!("{func}: `format` DENSE is not a sparse format (use CSR, CSC or COO)")
        }
        SparseFormat::CSR => {
            // the transpose's column-major order is the matrix's row-major order
            let (values, at) = nonzeros(&transpose(dense, false));
            let row = (&at / cols as u32).cast::<i32>();
            let col = (&at % cols as u32).cast::<i32>();
            assemble(func, shape, format, &values, &compress(func, &row, rows), &col)
        }
        SparseFormat::CSC | SparseFormat::COO => {
            let (values, at) = nonzeros(dense);
            let row = (&at % rows as u32).cast::<i32>();
            let col = (&at / rows as u32).cast::<i32>();
            let col = if format == SparseFormat::CSC { compress(func, &col, cols) } else { col };
            assemble(func, shape, format, &values, &row, &col)
        }
    })
}

/// The nonzero elements of `a` in column-major order, and their linear indices.
fn nonzeros<T: HasAfEnum>(a: &Array<T>) -> (Array<T>, Array<u32>) {
    let at = locate(a);
    if at.elements() == 0 || a.elements() == 0 {
        let none = Dim4::new(&[0, 1, 1, 1]);
        return (Array::new_empty(none), Array::new_empty(none));
    }
    (lookup(&flat(a), &at, 0), at)
}
