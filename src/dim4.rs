//! `Dim4`: the shape of an array, up to four dimensions, column-major.

use std::fmt;
use std::ops::{Index, IndexMut};

/// The four dimensions of an array. Unused trailing dimensions are 1.
///
/// ```
/// use emberfire::Dim4;
/// let d = Dim4::new(&[3, 4, 1, 1]);
/// assert_eq!(d.elements(), 12);
/// assert_eq!(d.ndims(), 2);
/// assert_eq!(d[1], 4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim4 {
    dims: [u64; 4],
}

impl Default for Dim4 {
    /// `[1 1 1 1]`, a single element.
    fn default() -> Self {
        Self { dims: [1, 1, 1, 1] }
    }
}

impl Dim4 {
    /// A shape from four sizes.
    ///
    /// ```
    /// let d = emberfire::Dim4::new(&[2, 3, 1, 1]);
    /// assert_eq!(d.get(), &[2, 3, 1, 1]);
    /// ```
    pub fn new(dims: &[u64; 4]) -> Self {
        Self { dims: *dims }
    }

    /// The number of elements: the product of the four sizes. A product past `u64::MAX`
    /// saturates there instead of wrapping (or panicking in a debug build): no memory holds
    /// such an array, and an evaluation of it fails as out of memory (`Error::OutOfMemory`)
    /// rather than allocating a wrapped, small buffer.
    ///
    /// ```
    /// assert_eq!(emberfire::dim4!(2, 3, 4).elements(), 24);
    /// assert_eq!(emberfire::dim4!(1u64 << 32, 1u64 << 32, 2).elements(), u64::MAX);
    /// assert_eq!(emberfire::dim4!(1u64 << 32, 1u64 << 32, 2, 0).elements(), 0);
    /// ```
    pub fn elements(&self) -> u64 {
        self.dims.iter().fold(1u64, |n, &d| n.saturating_mul(d))
    }

    /// The number of dimensions that matter: the index of the last size that is not 1, plus one
    /// (0 for an empty shape, 1 for a single element, as ArrayFire counts).
    ///
    /// ```
    /// assert_eq!(emberfire::dim4!(5, 1, 3).ndims(), 3);
    /// assert_eq!(emberfire::dim4!(1).ndims(), 1);
    /// ```
    pub fn ndims(&self) -> usize {
        if self.elements() == 0 {
            return 0;
        }
        match self.dims.iter().rposition(|&d| d != 1) {
            Some(i) => i + 1,
            None => 1,
        }
    }

    /// The four sizes.
    ///
    /// ```
    /// assert_eq!(emberfire::dim4!(7).get(), &[7, 1, 1, 1]);
    /// ```
    pub fn get(&self) -> &[u64; 4] {
        &self.dims
    }

    /// Column-major strides (in elements) of a contiguous array of this shape.
    ///
    /// ```
    /// assert_eq!(emberfire::dim4!(2, 3, 4).strides().get(), &[1, 2, 6, 24]);
    /// ```
    pub fn strides(&self) -> Dim4 {
        let d = self.dims;
        Dim4::new(&[1, d[0], d[0] * d[1], d[0] * d[1] * d[2]])
    }
}

impl Index<usize> for Dim4 {
    type Output = u64;
    fn index(&self, i: usize) -> &u64 {
        &self.dims[i]
    }
}

impl IndexMut<usize> for Dim4 {
    fn index_mut(&mut self, i: usize) -> &mut u64 {
        &mut self.dims[i]
    }
}

impl fmt::Display for Dim4 {
    /// `[d0 d1 d2 d3]`, as ArrayFire prints shapes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.dims;
        write!(f, "[{} {} {} {}]", d[0], d[1], d[2], d[3])
    }
}

impl fmt::Debug for Dim4 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<[u64; 4]> for Dim4 {
    fn from(dims: [u64; 4]) -> Self {
        Self { dims }
    }
}
