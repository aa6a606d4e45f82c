//! Conversions between [`Array`] and ndarray's arrays, by copy (feature `ndarray`).
//!
//! Both sides index elements the same way: element `(i, j)` of a 2-D emberfire array is
//! element `[i, j]` of the ndarray it converts to, and element `[i, j, k]` of an ndarray is
//! element `(i, j, k)` of the emberfire array made from it. Only the memory order differs:
//! emberfire stores arrays column-major (the first index varies fastest), ndarray's default is
//! row-major (the last index varies fastest), and ndarray views may have any strides. The
//! conversions reorder elements as they copy, so the logical contents always match.
//!
//! - [`Array::from_ndarray`] (and `From<&ArrayBase<S, D>>`, `From<ArrayBase<S, D>>`) accepts
//!   an ndarray array or view of any layout (row-major, column-major, transposed, sliced with
//!   steps, negative strides) with up to four axes. An ndarray with no axes becomes a
//!   one-element array. More than four axes is a programmer error and panics.
//! - [`Array::to_ndarray`] (and `From<&Array<T>>` for `ndarray::ArrayD<T>`) returns an owned
//!   `ArrayD<T>` in ndarray's standard (row-major) layout. Its number of axes is the position
//!   of the last dimension whose size is not 1, plus one, and at least one: emberfire does not
//!   distinguish a shape `[3, 2]` from `[3, 2, 1, 1]`, so trailing sizes of 1 are dropped.
//!   Use `into_dimensionality` for a fixed-dimension ndarray type.
//!
//! ```
//! use emberfire::{Array, dim4};
//! use ndarray::{array, Ix2};
//!
//! // Row-major ndarray in, column-major emberfire array out: same logical elements.
//! let m = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
//! let a = Array::from_ndarray(&m);
//! assert_eq!(a.dims(), dim4!(2, 3));
//! assert_eq!(a.to_vec(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//!
//! let back = (&a * 2.0f32).to_ndarray().into_dimensionality::<Ix2>().unwrap();
//! assert_eq!(back, array![[2.0f32, 4.0, 6.0], [8.0, 10.0, 12.0]]);
//! ```

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, ShapeBuilder};

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;

impl<T: HasAfEnum> Array<T> {
    /// Copies an ndarray array or view (any layout, up to four axes) into a new array on the
    /// active backend. Element `[i, j, k, l]` of `array` becomes element `(i, j, k, l)`; the
    /// elements are reordered into emberfire's column-major storage as they are copied.
    ///
    /// An ndarray with no axes becomes a one-element array. Panics if `array` has more than
    /// four axes.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// use ndarray::{array, s};
    ///
    /// let m = array![[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]];
    /// // A transposed, stepped view: rows 0 and 2 of m, read as columns.
    /// let v = m.slice(s![..;2, ..]).reversed_axes();
    /// let a = Array::from_ndarray(&v);
    /// assert_eq!(a.dims(), dim4!(4, 2));
    /// assert_eq!(a.to_vec(), vec![1, 2, 3, 4, 9, 10, 11, 12]);
    /// ```
    pub fn from_ndarray<S, D>(array: &ArrayBase<S, D>) -> Self
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        let shape = array.shape();
        assert!(
            shape.len() <= 4,
            "Array::from_ndarray: the ndarray has {} axes (shape {shape:?}); emberfire arrays \
             have at most 4 dimensions",
            shape.len()
        );
        let mut dims = [1u64; 4];
        for (d, &n) in dims.iter_mut().zip(shape) {
            *d = n as u64;
        }
        // Reversing the axes turns column-major order into ndarray's logical (row-major)
        // iteration order; a column-major source is then one contiguous slice.
        let reversed = array.t();
        let values: Vec<T> = match reversed.as_slice() {
            Some(s) => s.to_vec(),
            None => reversed.iter().copied().collect(),
        };
        Array::new(&values, Dim4::new(&dims))
    }

    /// Copies the array into a new ndarray `ArrayD` in standard (row-major) layout. Element
    /// `(i, j, k, l)` becomes element `[i, j, k, l]`.
    ///
    /// The result has as many axes as the position of the last dimension whose size is not 1,
    /// plus one, and at least one: a `[3, 2, 1, 1]` array gives shape `[3, 2]`, a single
    /// element gives shape `[1]`, and an empty `[0, 4, 1, 1]` array gives shape `[0, 4]`.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// use ndarray::{array, Ix2};
    ///
    /// let a = Array::new(&[1u8, 2, 3, 4, 5, 6], dim4!(3, 2)); // column-major input
    /// let m = a.to_ndarray();
    /// assert_eq!(m.shape(), &[3, 2]);
    /// assert_eq!(m[[2, 0]], 3);
    /// assert_eq!(m.into_dimensionality::<Ix2>().unwrap(), array![[1, 4], [2, 5], [3, 6]]);
    /// ```
    pub fn to_ndarray(&self) -> ArrayD<T> {
        let dims = *self.dims().get();
        let axes = dims.iter().rposition(|&d| d != 1).map_or(1, |i| i + 1);
        let shape: Vec<usize> = dims[..axes].iter().map(|&d| d as usize).collect();
        let column_major = ArrayD::from_shape_vec(IxDyn(&shape).f(), self.to_vec())
            .expect("internal error: element count does not match the shape");
        if column_major.is_standard_layout() {
            column_major
        } else {
            column_major.as_standard_layout().into_owned()
        }
    }
}

/// Same as [`Array::from_ndarray`].
///
/// ```
/// use emberfire::Array;
/// let a = Array::from(&ndarray::array![[1.0f64, 2.0], [3.0, 4.0]]);
/// assert_eq!(a.to_vec(), vec![1.0, 3.0, 2.0, 4.0]);
/// ```
impl<T, S, D> From<&ArrayBase<S, D>> for Array<T>
where
    T: HasAfEnum,
    S: Data<Elem = T>,
    D: Dimension,
{
    fn from(array: &ArrayBase<S, D>) -> Self {
        Array::from_ndarray(array)
    }
}

/// Same as [`Array::from_ndarray`], taking the ndarray by value.
///
/// ```
/// use emberfire::Array;
/// let a: Array<i32> = ndarray::Array1::from(vec![5, 6, 7]).into();
/// assert_eq!(a.to_vec(), vec![5, 6, 7]);
/// ```
impl<T, S, D> From<ArrayBase<S, D>> for Array<T>
where
    T: HasAfEnum,
    S: Data<Elem = T>,
    D: Dimension,
{
    fn from(array: ArrayBase<S, D>) -> Self {
        Array::from_ndarray(&array)
    }
}

/// Same as [`Array::to_ndarray`].
///
/// ```
/// use emberfire::{Array, dim4};
/// let m = ndarray::ArrayD::from(&Array::new(&[1i16, 2, 3, 4], dim4!(2, 2)));
/// assert_eq!(m[[0, 1]], 3);
/// ```
impl<T: HasAfEnum> From<&Array<T>> for ArrayD<T> {
    fn from(array: &Array<T>) -> Self {
        array.to_ndarray()
    }
}
