//! Cholesky factorization: [`cholesky`] and [`cholesky_inplace`].

use super::{array_of, dense, fail, square_size, zeros};
use crate::array::Array;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::ops::arith::{and, lt};
use crate::ops::data::{lower, range, select, upper};

fn factor<T: HasAfEnum>(func: &str, input: &Array<T>, is_upper: bool) -> (Array<T>, i32) {
    let n = square_size(func, "input", input.dims());
    if n == 0 {
        return (input.copy(), 0);
    }
    let (f, info) = input
        .node()
        .backend
        .ops()
        .potrf(&dense(func, input), is_upper)
        .unwrap_or_else(|e| fail(func, e));
    let info = info[0];
    // The other triangle, and on failure everything outside the leading factor, are zero
    // (cuSOLVER leaves them as they were; the CPU code already clears them).
    let f: Array<T> = array_of(f);
    let mut f = if is_upper { upper(&f, false) } else { lower(&f, false) };
    if info > 0 {
        let j = info - 1;
        let dims = input.dims();
        let inside = and(
            &lt(&range::<i32>(dims, 0), &j, false),
            &lt(&range::<i32>(dims, 1), &j, false),
            false,
        );
        f = select(&f, &inside, &zeros(dims, input.node().backend));
    }
    f.eval();
    (f, info)
}

/// Cholesky factorization of a Hermitian positive definite matrix: `(factor, info)`.
///
/// With `is_upper`, `factor` is upper triangular and `input = factorᴴ · factor`; otherwise it
/// is lower triangular and `input = factor · factorᴴ`. Only that triangle of the input is
/// read; the other triangle of `factor` is zero.
///
/// `info` is 0 on success. When the input is not positive definite, `info` is the order `j` of
/// the first leading minor that is not (LAPACK's `info`), and `factor` holds the factor of the
/// leading `(j-1)`×`(j-1)` block and zeros elsewhere. Panics for a matrix that is not square,
/// or a batch.
///
/// ```
/// use emberfire::{cholesky, dim4, Array};
/// let a = Array::new(&[4.0f64, 2.0, 2.0, 5.0], dim4!(2, 2)); // [4 2; 2 5]
/// let (r, info) = cholesky(&a, true);
/// assert_eq!(info, 0);
/// assert_eq!(r.to_vec(), vec![2.0, 0.0, 1.0, 2.0]); // [2 1; 0 2]
///
/// let indefinite = Array::new(&[1.0f64, 2.0, 2.0, 1.0], dim4!(2, 2));
/// assert_eq!(cholesky(&indefinite, true).1, 2);
/// ```
pub fn cholesky<T>(input: &Array<T>, is_upper: bool) -> (Array<T>, i32)
where
    T: HasAfEnum + FloatingPoint,
{
    factor("cholesky", input, is_upper)
}

/// Cholesky factorization in place: `input` is replaced by the factor (see [`cholesky`], whose
/// `info` this returns). Unlike ArrayFire, which leaves the input's other triangle as it was,
/// the other triangle is zeroed, so the result is the factor itself.
///
/// ```
/// use emberfire::{cholesky_inplace, dim4, Array};
/// let mut a = Array::new(&[9.0f32, 3.0, 3.0, 5.0], dim4!(2, 2)); // [9 3; 3 5]
/// assert_eq!(cholesky_inplace(&mut a, false), 0);
/// assert_eq!(a.to_vec(), vec![3.0, 1.0, 0.0, 2.0]); // [3 0; 1 2]
/// ```
pub fn cholesky_inplace<T>(input: &mut Array<T>, is_upper: bool) -> i32
where
    T: HasAfEnum + FloatingPoint,
{
    let (f, info) = factor("cholesky_inplace", input, is_upper);
    *input = f;
    info
}
