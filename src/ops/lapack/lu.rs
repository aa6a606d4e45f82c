//! LU factorization with partial pivoting and what is built on it: [`lu`], [`lu_inplace`],
//! [`solve_lu`] and [`det`].

use super::{array_of, dense, download, empty, fail, mat_dims, matrix_shape, square_size, upload};
use crate::array::Array;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::{c64, DType, FloatingPoint, HasAfEnum};
use crate::jit::Data;
use crate::ops::blas::MatProp;
use crate::ops::data::{lower, upper};
use crate::ops::index::{cols, rows};

/// The row permutation (0-based, `m` entries) that LAPACK's pivots (1-based swaps, in order)
/// describe: row `i` of `P·A` is row `perm[i]` of `A`.
pub(super) fn permutation(ipiv: &[i32], m: usize) -> Vec<i32> {
    let mut perm: Vec<i32> = (0..m as i32).collect();
    for (j, &p) in ipiv.iter().enumerate() {
        perm.swap(j, p as usize - 1);
    }
    perm
}

/// The packed factors and the pivots of a single matrix.
fn factor<T: HasAfEnum>(func: &str, input: &Array<T>) -> (Dense, Vec<i32>) {
    let (packed, ipiv, _info) =
        input.node().backend.ops().getrf(&dense(func, input)).unwrap_or_else(|e| fail(func, e));
    let ipiv = download(func, &ipiv).as_slice::<i32>().to_vec();
    (packed, ipiv)
}

/// LU factorization with partial pivoting: `(lower, upper, pivot)` with `input(pivot, :) =
/// lower · upper`.
///
/// For an `m`×`n` input with `k = min(m, n)`: `lower` is `m`×`k`, unit lower triangular
/// (ones on its diagonal); `upper` is `k`×`n`, upper triangular; `pivot` holds `m` 0-based row
/// indices, row `i` of `lower · upper` being row `pivot[i]` of the input (ArrayFire's
/// converted pivot). A singular input is factored all the same (`upper` then has a zero on
/// its diagonal). Panics if the input is a batch of matrices.
///
/// ```
/// use emberfire::{dim4, lu, matmul, Array, MatProp};
/// let a = Array::new(&[1.0f64, 4.0, 2.0, 3.0], dim4!(2, 2)); // [1 2; 4 3]
/// let (l, u, p) = lu(&a);
/// assert_eq!(p.to_vec(), vec![1, 0]); // row 1 (4 3) is the pivot of column 0
/// let lu = matmul(&l, &u, MatProp::NONE, MatProp::NONE).to_vec();
/// assert_eq!(lu, vec![4.0, 1.0, 3.0, 2.0]); // the rows of `a` in the order `p`
/// ```
pub fn lu<T>(input: &Array<T>) -> (Array<T>, Array<T>, Array<i32>)
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "lu";
    let (m, n) = matrix_shape(FUNC, "input", input.dims());
    let k = m.min(n);
    let backend = input.node().backend;
    if k == 0 {
        let pivot = upload(FUNC, (0..m as i32).collect(), mat_dims(m, 1), backend);
        return (empty(FUNC, mat_dims(m, 0), backend), empty(FUNC, mat_dims(0, n), backend), pivot);
    }
    let (packed, ipiv) = factor(FUNC, input);
    let packed: Array<T> = array_of(packed);
    let l = lower(&cols(&packed, 0, k as i64 - 1), true);
    let u = upper(&rows(&packed, 0, k as i64 - 1), false);
    let pivot = upload(FUNC, permutation(&ipiv, m), mat_dims(m, 1), backend);
    l.eval();
    u.eval();
    (l, u, pivot)
}

/// LU factorization in place: `input` is replaced by the packed factors (`upper` on and above
/// the diagonal, `lower` without its unit diagonal below it), and the pivots are returned.
///
/// With `is_lapack_piv`, the pivots are LAPACK's: `min(m, n)` 1-based entries, row `i` having
/// been swapped with row `pivot[i] - 1`, in order (the form [`solve_lu`] takes). Without it,
/// they are the `m` 0-based row indices that [`lu`] returns. Panics if the input is a batch
/// of matrices.
///
/// ```
/// use emberfire::{dim4, lu_inplace, Array};
/// let mut a = Array::new(&[1.0f32, 4.0, 2.0, 3.0], dim4!(2, 2)); // [1 2; 4 3]
/// let pivot = lu_inplace(&mut a, true);
/// assert_eq!(pivot.to_vec(), vec![2, 2]); // swap row 1 with row 2, then nothing
/// // U = [4 3; 0 1.25], L = [1 0; 0.25 1], packed together
/// assert_eq!(a.to_vec(), vec![4.0, 0.25, 3.0, 1.25]);
/// ```
pub fn lu_inplace<T>(input: &mut Array<T>, is_lapack_piv: bool) -> Array<i32>
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "lu_inplace";
    let (m, n) = matrix_shape(FUNC, "input", input.dims());
    let backend = input.node().backend;
    if m.min(n) == 0 {
        let count = if is_lapack_piv { 0 } else { m };
        return upload(FUNC, (0..count as i32).collect(), mat_dims(count, 1), backend);
    }
    let (packed, ipiv) = factor(FUNC, input);
    *input = array_of(packed);
    if is_lapack_piv {
        let k = ipiv.len();
        upload(FUNC, ipiv, mat_dims(k, 1), backend)
    } else {
        upload(FUNC, permutation(&ipiv, m), mat_dims(m, 1), backend)
    }
}

/// Solves `A · x = b` from the packed LU factors of a square `A` and LAPACK's pivots, as
/// [`lu_inplace`] returns them with `is_lapack_piv` set.
///
/// `a` is `n`×`n`, `piv` holds `n` pivots in `1..=n`, `b` is `n`×`k`; the result is `n`×`k`.
/// `options` must be `MatProp::NONE`. Panics for other shapes, for pivots out of range, or for
/// batches (dimensions 2 and 3 larger than 1). A zero on the diagonal of `U` gives infinities
/// or NaN.
///
/// ```
/// use emberfire::{dim4, lu_inplace, solve_lu, Array, MatProp};
/// let a = Array::new(&[2.0f64, 1.0, 1.0, 3.0], dim4!(2, 2)); // [2 1; 1 3]
/// let b = Array::new(&[3.0f64, 5.0], dim4!(2, 1));
/// let mut packed = a.copy();
/// let piv = lu_inplace(&mut packed, true);
/// let x = solve_lu(&packed, &piv, &b, MatProp::NONE).to_vec();
/// assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12);
/// ```
pub fn solve_lu<T>(a: &Array<T>, piv: &Array<i32>, b: &Array<T>, options: MatProp) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "solve_lu";
    crate::ops::build::common_backend(FUNC, &[a.node(), piv.node(), b.node()]);
    assert!(
        options == MatProp::NONE,
        "{FUNC}: `options` is MatProp::{options:?}; solve_lu takes MatProp::NONE only"
    );
    let n = square_size(FUNC, "a", a.dims());
    let (bm, nrhs) = matrix_shape(FUNC, "b", b.dims());
    assert!(
        bm == n,
        "{FUNC}: `b` has {bm} rows (dims {}) but `a` is {n}×{n} (dims {})",
        b.dims(),
        a.dims()
    );
    // cuSOLVER reads rows through the pivots: out-of-range values would read outside the
    // matrix, so they are checked here.
    let pivots = piv.to_vec();
    assert!(
        pivots.len() == n && pivots.iter().all(|&p| p >= 1 && p as usize <= n),
        "{FUNC}: `piv` (dims {}) must hold {n} LAPACK pivots in 1..={n}, as lu_inplace(.., true) \
         returns them for `a` (dims {})",
        piv.dims(),
        a.dims()
    );
    if n == 0 || nrhs == 0 {
        return empty(FUNC, mat_dims(n, nrhs), b.node().backend);
    }
    let piv = piv.copy(); // a dense column of exactly n pivots
    let x = a
        .node()
        .backend
        .ops()
        .getrs(&dense(FUNC, a), &dense(FUNC, &piv), &dense(FUNC, b))
        .unwrap_or_else(|e| fail(FUNC, e));
    array_of(x)
}

/// The determinant of a square matrix, as `(real, imaginary)` (the imaginary part is 0 for
/// real types), from its LU factorization: the product of `U`'s diagonal, negated for each row
/// exchange. A singular matrix gives 0 and a 0×0 matrix 1. Panics for a matrix that is not
/// square, or a batch.
///
/// ```
/// use emberfire::{c32, det, dim4, Array};
/// let a = Array::new(&[1.0f64, 3.0, 2.0, 4.0], dim4!(2, 2)); // [1 2; 3 4]
/// let (re, im) = det(&a);
/// assert!((re + 2.0).abs() < 1e-12 && im == 0.0);
///
/// let z = Array::new(&[c32::new(0.0, 1.0)], dim4!(1, 1));
/// assert_eq!(det(&z), (0.0, 1.0));
/// ```
pub fn det<T>(input: &Array<T>) -> (f64, f64)
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "det";
    let n = square_size(FUNC, "input", input.dims());
    if n == 0 {
        return (1.0, 0.0);
    }
    let (packed, ipiv) = factor(FUNC, input);
    // The diagonal, read through a strided view so that only n elements are copied.
    let dims = Dim4::new(&[n as u64, 1, 1, 1]);
    let step = n as i64 + 1;
    let diagonal = Data { strides: [step, step * n as i64, 0, 0], ..packed.data.clone() };
    let diag = crate::backend::download(&diagonal, dims, T::DTYPE)
        .unwrap_or_else(|e| fail(FUNC, e))
        .cast(DType::C64);
    let mut value = diag.as_slice::<c64>().iter().fold(c64::new(1.0, 0.0), |acc, &d| acc * d);
    let swaps = ipiv.iter().enumerate().filter(|&(j, &p)| p as usize != j + 1).count();
    if swaps % 2 == 1 {
        value = -value;
    }
    (value.re, value.im)
}

#[cfg(test)]
mod tests {
    use super::permutation;

    #[test]
    fn lapack_pivots_become_a_permutation() {
        // swap 0↔2, then 1↔2 (1-based: 3, 3), then nothing
        assert_eq!(permutation(&[3, 3, 3], 3), vec![2, 0, 1]);
        // a tall matrix: two pivots, four rows
        assert_eq!(permutation(&[4, 2], 4), vec![3, 1, 2, 0]);
    }
}
