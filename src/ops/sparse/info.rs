//! What a sparse array holds: its parts, their count and its format.

use super::{parts_of, SparseFormat};
use crate::array::Array;
use crate::dtype::{FloatingPoint, HasAfEnum};

impl<T: HasAfEnum> Array<T> {
    /// Whether the array is sparse (made by [`sparse`](crate::sparse) and its relatives).
    ///
    /// ```
    /// use emberfire::{dim4, sparse_from_dense, Array, SparseFormat};
    /// let a = Array::new(&[0.0f32, 1.0], dim4!(1, 2));
    /// assert!(!a.is_sparse());
    /// assert!(sparse_from_dense(&a, SparseFormat::COO).is_sparse());
    /// ```
    pub fn is_sparse(&self) -> bool {
        self.node().sparse().is_some()
    }
}

/// The values, row indices, column indices and format of a sparse array (the arrays share
/// its memory). Panics if `input` is dense.
///
/// ```
/// use emberfire::{sparse_from_host, sparse_get_info, SparseFormat};
/// let s = sparse_from_host(2, 2, 1, &[4.0f32], &[1], &[0], SparseFormat::COO);
/// let (v, r, c, f) = sparse_get_info(&s);
/// assert_eq!((v.to_vec(), r.to_vec(), c.to_vec(), f), (vec![4.0], vec![1], vec![0], SparseFormat::COO));
/// ```
pub fn sparse_get_info<T>(input: &Array<T>) -> (Array<T>, Array<i32>, Array<i32>, SparseFormat)
where
    T: HasAfEnum + FloatingPoint,
{
    let p = parts_of("sparse_get_info", input);
    (
        Array::from_node(p.values.clone()),
        Array::from_node(p.rows.clone()),
        Array::from_node(p.cols.clone()),
        p.format,
    )
}

/// The stored values of a sparse array, in storage order. Panics if `input` is dense.
///
/// ```
/// use emberfire::{dim4, sparse_from_dense, sparse_get_values, Array, SparseFormat};
/// let a = Array::new(&[0.0f32, 2.0, 3.0, 0.0], dim4!(2, 2));
/// assert_eq!(sparse_get_values(&sparse_from_dense(&a, SparseFormat::CSC)).to_vec(), vec![2.0, 3.0]);
/// ```
pub fn sparse_get_values<T>(input: &Array<T>) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    Array::from_node(parts_of("sparse_get_values", input).values.clone())
}

/// The row offsets (CSR) or row indices (CSC, COO) of a sparse array. Panics if `input` is
/// dense.
///
/// ```
/// use emberfire::{dim4, sparse_from_dense, sparse_get_row_indices, Array, SparseFormat};
/// let a = Array::new(&[0.0f32, 2.0, 3.0, 0.0], dim4!(2, 2));
/// assert_eq!(sparse_get_row_indices(&sparse_from_dense(&a, SparseFormat::CSR)).to_vec(), vec![0, 1, 2]);
/// ```
pub fn sparse_get_row_indices<T>(input: &Array<T>) -> Array<i32>
where
    T: HasAfEnum + FloatingPoint,
{
    Array::from_node(parts_of("sparse_get_row_indices", input).rows.clone())
}

/// The column indices (CSR, COO) or column offsets (CSC) of a sparse array. Panics if `input`
/// is dense.
///
/// ```
/// use emberfire::{dim4, sparse_from_dense, sparse_get_col_indices, Array, SparseFormat};
/// let a = Array::new(&[0.0f32, 2.0, 3.0, 0.0], dim4!(2, 2));
/// assert_eq!(sparse_get_col_indices(&sparse_from_dense(&a, SparseFormat::CSR)).to_vec(), vec![1, 0]);
/// ```
pub fn sparse_get_col_indices<T>(input: &Array<T>) -> Array<i32>
where
    T: HasAfEnum + FloatingPoint,
{
    Array::from_node(parts_of("sparse_get_col_indices", input).cols.clone())
}

/// The number of stored values of a sparse array (0 for a dense one).
///
/// ```
/// use emberfire::{dim4, sparse_from_dense, sparse_get_nnz, Array, SparseFormat};
/// let a = Array::new(&[0.0f32, 2.0, 3.0, 0.0], dim4!(2, 2));
/// assert_eq!(sparse_get_nnz(&sparse_from_dense(&a, SparseFormat::COO)), 2);
/// assert_eq!(sparse_get_nnz(&a), 0);
/// ```
pub fn sparse_get_nnz<T: HasAfEnum>(input: &Array<T>) -> i64 {
    input.node().sparse().map_or(0, |p| p.nnz() as i64)
}

/// The storage format of an array: DENSE for a dense one.
///
/// ```
/// use emberfire::{dim4, sparse_get_format, Array, SparseFormat};
/// assert_eq!(sparse_get_format(&Array::new(&[1.0f32], dim4!(1))), SparseFormat::DENSE);
/// ```
pub fn sparse_get_format<T: HasAfEnum>(input: &Array<T>) -> SparseFormat {
    input.node().sparse().map_or(SparseFormat::DENSE, |p| p.format)
}
