//! Linear systems: [`solve`] (square, triangular and least squares, batched) and
//! [`inverse`].

use super::{array_of, check, dense, empty, mat_dims, square_size, zeros};
use crate::array::Array;
use crate::backend::lapack::batched_dims;
use crate::device::with_active;
use crate::dim4::Dim4;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::ops::blas::{matmul, MatProp};
use crate::ops::build::common_backend;
use crate::ops::data::identity;
use crate::ops::index::rows;
use crate::ops::movement::transpose;

/// Solves `a · x = b` for `x`.
///
/// - `options` `NONE`: a square `a` is solved through its LU factorization with partial
///   pivoting; a non-square one in the least squares sense through a QR factorization (the
///   solution that minimises `‖a·x - b‖` for a tall `a`, the one of least norm for a wide `a`;
///   both assume `a` has full rank, as LAPACK's `gels` does).
/// - `LOWER` or `UPPER`: `a` is square and triangular, and only that triangle is read.
///
/// `a` is `m`×`n` and `b` `m`×`k`; the result is `n`×`k`. Dimensions 2 and 3 are batches and
/// must be the same in `a` and `b`: each matrix of `b` is solved with the matching matrix of
/// `a`. Panics if `b`'s rows or batches differ from `a`'s, for another [`MatProp`], or for a
/// non-square `a` with `LOWER` or `UPPER`. A singular `a` gives infinities or NaN.
///
/// ```
/// use emberfire::{dim4, solve, Array, MatProp};
/// let a = Array::new(&[2.0f64, 1.0, 1.0, 3.0], dim4!(2, 2)); // [2 1; 1 3]
/// let b = Array::new(&[3.0f64, 5.0], dim4!(2, 1));
/// let x = solve(&a, &b, MatProp::NONE).to_vec();
/// assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12);
///
/// // A least squares line through (0, 1), (1, 2), (2, 4): y ≈ c0 + c1·t
/// let a = Array::new(&[1.0f64, 1.0, 1.0, 0.0, 1.0, 2.0], dim4!(3, 2));
/// let y = Array::new(&[1.0f64, 2.0, 4.0], dim4!(3, 1));
/// let c = solve(&a, &y, MatProp::NONE).to_vec();
/// assert!((c[0] - 5.0 / 6.0).abs() < 1e-12 && (c[1] - 1.5).abs() < 1e-12);
/// ```
pub fn solve<T>(a: &Array<T>, b: &Array<T>, options: MatProp) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "solve";
    let backend = common_backend(FUNC, &[a.node(), b.node()]);
    let (ad, bd) = (a.dims(), b.dims());
    let triangular = match options {
        MatProp::NONE => None,
        MatProp::LOWER => Some(true),
        MatProp::UPPER => Some(false),
        other => panic!(
            "{FUNC}: `options` is MatProp::{other:?}; solve takes NONE, LOWER or UPPER (a dims \
             {ad}, b dims {bd})"
        ),
    };
    assert!(
        ad[0] == bd[0] && ad[2] == bd[2] && ad[3] == bd[3],
        "{FUNC}: `a` (dims {ad}) and `b` (dims {bd}) must have the same number of rows and the \
         same batch dimensions 2 and 3"
    );
    let (m, n, k) = (ad[0] as usize, ad[1] as usize, bd[1] as usize);
    if triangular.is_some() {
        assert!(
            m == n,
            "{FUNC}: MatProp::{options:?} needs a square `a`, but its dims are {ad} ({m}×{n})"
        );
    }
    let out = batched_dims(n, k, ad);
    if out.elements() == 0 {
        return empty(FUNC, out, backend);
    }
    if m == 0 {
        // No equations: the least-norm solution is zero.
        return zeros(out, backend);
    }
    let x = if let Some(lower) = triangular {
        check(
            FUNC,
            a.node().backend.ops().trsm(&dense(FUNC, a), &dense(FUNC, b), lower, false, false),
        )
    } else if m == n {
        let (lu, ipiv, _info) = check(FUNC, a.node().backend.ops().getrf(&dense(FUNC, a)));
        check(FUNC, lu.backend.ops().getrs(&lu, &ipiv, &dense(FUNC, b)))
    } else if m > n {
        // a = Q·R: x = R⁻¹·(Qᴴ·b), with the first n columns of Q.
        let (packed, tau) = check(FUNC, a.node().backend.ops().geqrf(&dense(FUNC, a)));
        let q: Array<T> = array_of(check(FUNC, packed.backend.ops().orgqr(&packed, &tau, n)));
        let r = rows(&array_of::<T>(packed), 0, n as i64 - 1);
        let c = matmul(&q, b, MatProp::CTRANS, MatProp::NONE);
        check(
            FUNC,
            r.node().backend.ops().trsm(&dense(FUNC, &r), &dense(FUNC, &c), false, false, false),
        )
    } else {
        // aᴴ = Q·R: x = Q·(R⁻ᴴ·b), with the first m columns of Q.
        let (packed, tau) = check(FUNC, {
            let at = dense(FUNC, &transpose(a, true));
            at.backend.ops().geqrf(&at)
        });
        let q: Array<T> = array_of(check(FUNC, packed.backend.ops().orgqr(&packed, &tau, m)));
        let r = rows(&array_of::<T>(packed), 0, m as i64 - 1);
        let y: Array<T> = array_of(check(
            FUNC,
            r.node().backend.ops().trsm(&dense(FUNC, &r), &dense(FUNC, b), false, true, false),
        ));
        return matmul(&q, &y, MatProp::NONE, MatProp::NONE);
    };
    array_of(x)
}

/// The inverse of a square matrix, through its LU factorization with partial pivoting.
/// `options` must be `MatProp::NONE`. Panics for a matrix that is not square, or a batch; a
/// singular matrix gives infinities or NaN.
///
/// ```
/// use emberfire::{dim4, inverse, Array, MatProp};
/// let a = Array::new(&[4.0f64, 2.0, 7.0, 6.0], dim4!(2, 2)); // [4 7; 2 6]
/// let inv = inverse(&a, MatProp::NONE).to_vec();
/// let want = [0.6, -0.2, -0.7, 0.4];
/// for (x, y) in inv.iter().zip(&want) {
///     assert!((x - y).abs() < 1e-12);
/// }
/// ```
pub fn inverse<T>(input: &Array<T>, options: MatProp) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "inverse";
    assert!(
        options == MatProp::NONE,
        "{FUNC}: `options` is MatProp::{options:?}; inverse takes MatProp::NONE only (input \
         dims {})",
        input.dims()
    );
    let n = square_size(FUNC, "input", input.dims());
    let backend = input.node().backend;
    if n == 0 {
        return empty(FUNC, mat_dims(0, 0), backend);
    }
    let (lu, ipiv, _info) = check(FUNC, input.node().backend.ops().getrf(&dense(FUNC, input)));
    // the right-hand side goes to getrs with the factors: it must live where they do
    let eye: Array<T> = with_active(backend, || identity(Dim4::new(&[n as u64, n as u64, 1, 1])));
    array_of(check(FUNC, lu.backend.ops().getrs(&lu, &ipiv, &dense(FUNC, &eye))))
}
