//! The singular value decomposition and what is built on it: [`svd`], [`svd_inplace`] and
//! [`pinverse`].

use super::{array_of, dense, download, empty, fail, mat_dims, matrix_shape, upload};
use crate::array::Array;
use crate::backend::lapack::batched_dims;
use crate::device::with_active;
use crate::dim4::Dim4;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::jit::BinOp;
use crate::ops::blas::{matmul, MatProp};
use crate::ops::build;
use crate::ops::data::identity;
use crate::ops::index::{cols, rows};
use crate::storage::Lit;

/// The singular values of every matrix of `input` (`min(m, n)` per matrix, in f64, largest
/// first), for the functions that need only them.
pub(super) fn singular_values<T: HasAfEnum>(func: &str, input: &Array<T>) -> Vec<f64> {
    let r = input
        .node()
        .backend
        .ops()
        .gesvd(&dense(func, input), false)
        .unwrap_or_else(|e| fail(func, e));
    download(func, &r.s).cast(crate::dtype::DType::F64).as_slice::<f64>().to_vec()
}

/// Singular value decomposition: `(u, s, vt)` with `input = u · diag(s) · vt`.
///
/// For an `m`×`n` input: `u` is `m`×`m` and unitary, `s` holds the `min(m, n)` singular
/// values (real, non-negative, largest first), and `vt` is `Vᴴ`, `n`×`n` and unitary. Panics
/// if the input is a batch of matrices.
///
/// ```
/// use emberfire::{dim4, svd, Array};
/// let a = Array::new(&[3.0f64, 0.0, 0.0, -4.0], dim4!(2, 2)); // [3 0; 0 -4]
/// let (u, s, vt) = svd(&a);
/// assert_eq!(s.to_vec(), vec![4.0, 3.0]);
/// assert_eq!((u.dims(), vt.dims()), (dim4!(2, 2), dim4!(2, 2)));
/// ```
pub fn svd<T>(input: &Array<T>) -> (Array<T>, Array<T::BaseType>, Array<T>)
where
    T: HasAfEnum + FloatingPoint,
    T::BaseType: HasAfEnum,
{
    decompose("svd", input)
}

/// Singular value decomposition, as [`svd`], of an input that ArrayFire may overwrite.
/// emberfire leaves `input` unchanged (ArrayFire leaves unspecified values in it).
///
/// ```
/// use emberfire::{dim4, svd_inplace, Array};
/// let mut a = Array::new(&[0.0f32, 2.0], dim4!(1, 2)); // [0 2]
/// let (u, s, vt) = svd_inplace(&mut a);
/// assert_eq!(s.to_vec(), vec![2.0]);
/// assert_eq!((u.dims(), vt.dims()), (dim4!(1, 1), dim4!(2, 2)));
/// ```
pub fn svd_inplace<T>(input: &mut Array<T>) -> (Array<T>, Array<T::BaseType>, Array<T>)
where
    T: HasAfEnum + FloatingPoint,
    T::BaseType: HasAfEnum,
{
    decompose("svd_inplace", input)
}

fn decompose<T>(func: &str, input: &Array<T>) -> (Array<T>, Array<T::BaseType>, Array<T>)
where
    T: HasAfEnum,
    T::BaseType: HasAfEnum,
{
    let (m, n) = matrix_shape(func, "input", input.dims());
    let backend = input.node().backend;
    if m.min(n) == 0 {
        let square = |k: usize| {
            if k == 0 {
                empty(func, mat_dims(0, 0), backend)
            } else {
                with_active(backend, || identity(mat_dims(k, k)))
            }
        };
        return (square(m), empty(func, mat_dims(0, 1), backend), square(n));
    }
    let r = input
        .node()
        .backend
        .ops()
        .gesvd(&dense(func, input), true)
        .unwrap_or_else(|e| fail(func, e));
    let (u, vt) = (r.u.expect("vectors were asked for"), r.vt.expect("vectors were asked for"));
    (array_of(u), array_of(r.s), array_of(vt))
}

/// The Moore-Penrose pseudo-inverse, from the singular value decomposition: `V · S⁺ · Uᴴ`,
/// where `S⁺` inverts the singular values at least `tolerance · max(m, n) · s_max` (and not
/// zero) and drops the others (ArrayFire's relative threshold).
///
/// An `m`×`n` input gives an `n`×`m` result. Dimensions 2 and 3 are batches: each matrix is
/// inverted on its own, with its own threshold. `option` must be `MatProp::NONE`; panics for
/// another property or a negative (or NaN) `tolerance`. Try 1e-6 for f32 and 1e-12 for f64.
///
/// ```
/// use emberfire::{dim4, pinverse, Array, MatProp};
/// // [1 0; 0 2; 0 0] has the pseudo-inverse [1 0 0; 0 0.5 0]
/// let a = Array::new(&[1.0f64, 0.0, 0.0, 0.0, 2.0, 0.0], dim4!(3, 2));
/// let p = pinverse(&a, 1e-12, MatProp::NONE);
/// assert_eq!(p.dims(), dim4!(2, 3));
/// let want = [1.0, 0.0, 0.0, 0.5, 0.0, 0.0];
/// for (x, y) in p.to_vec().iter().zip(&want) {
///     assert!((x - y).abs() < 1e-12);
/// }
/// ```
pub fn pinverse<T>(input: &Array<T>, tolerance: f64, option: MatProp) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "pinverse";
    let d = input.dims();
    assert!(
        option == MatProp::NONE,
        "{FUNC}: `option` is MatProp::{option:?}; pinverse takes MatProp::NONE only (input \
         dims {d})"
    );
    assert!(
        tolerance >= 0.0,
        "{FUNC}: `tolerance` is {tolerance}; it must be zero or positive (input dims {d})"
    );
    let (m, n) = (d[0] as usize, d[1] as usize);
    let k = m.min(n);
    let backend = input.node().backend;
    let out = batched_dims(n, m, d);
    if out.elements() == 0 {
        return empty(FUNC, out, backend);
    }
    let r = input
        .node()
        .backend
        .ops()
        .gesvd(&dense(FUNC, input), true)
        .unwrap_or_else(|e| fail(FUNC, e));
    let s = download(FUNC, &r.s).cast(crate::dtype::DType::F64);
    // S⁺ per matrix, on the host (k values each), as a row to scale U's columns by.
    let scale = tolerance * m.max(n) as f64;
    let inverted: Vec<T> = s
        .as_slice::<f64>()
        .chunks(k)
        .flat_map(|sv| {
            let threshold = scale * sv.iter().copied().fold(0.0, f64::max);
            sv.iter()
                .map(|&x| if x >= threshold && x > 0.0 { 1.0 / x } else { 0.0 })
                .map(|x| T::from_lit(Lit::Real(x)))
                .collect::<Vec<T>>()
        })
        .collect();
    let s_inv = upload(FUNC, inverted, Dim4::new(&[1, k as u64, d[2], d[3]]), backend);
    let (u, vt): (Array<T>, Array<T>) =
        (array_of(r.u.expect("asked")), array_of(r.vt.expect("asked")));
    // U_k·S⁺ (m×k), then pinv = (Vᴴ_k)ᴴ·(U_k·S⁺)ᴴ.
    let us: Array<T> = build::binary(
        FUNC,
        BinOp::Mul,
        cols(&u, 0, k as i64 - 1).node(),
        s_inv.node(),
        T::DTYPE,
        true,
    );
    matmul(&rows(&vt, 0, k as i64 - 1), &us, MatProp::CTRANS, MatProp::CTRANS)
}
