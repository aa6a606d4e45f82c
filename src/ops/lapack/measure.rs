//! [`rank`] and [`is_lapack_available`].

use super::matrix_shape;
use super::svd::singular_values;
use crate::array::Array;
use crate::dtype::{FloatingPoint, HasAfEnum};

/// The numerical rank of a matrix: how many of its singular values are larger than `tol`.
///
/// ArrayFire counts the rows of `R` (from a QR factorization without pivoting) that hold an
/// element larger than `tol`; the two agree for well-separated ranks, and the singular values
/// also give the right answer where QR without pivoting does not (for instance `[0 1; 0 0]`,
/// of rank 1). Panics if the input is a batch of matrices; an empty matrix has rank 0.
///
/// ```
/// use emberfire::{dim4, rank, Array};
/// // [1 2; 2 4; 3 6]: the second column is twice the first
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 2.0, 4.0, 6.0], dim4!(3, 2));
/// assert_eq!(rank(&a, 1e-10), 1);
/// assert_eq!(rank(&Array::new(&[1.0f32, 0.0, 0.0, 1.0], dim4!(2, 2)), 1e-5), 2);
/// ```
pub fn rank<T>(input: &Array<T>, tol: f64) -> u32
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "rank";
    let (m, n) = matrix_shape(FUNC, "input", input.dims());
    if m.min(n) == 0 {
        return 0;
    }
    singular_values(FUNC, input).iter().filter(|&&s| s > tol).count() as u32
}

/// Whether the linear algebra functions are available: always true, on both backends (the CPU
/// code is part of the crate, and CUDA falls back to it when cuSOLVER cannot be loaded).
///
/// ```
/// assert!(emberfire::is_lapack_available());
/// ```
pub fn is_lapack_available() -> bool {
    true
}
