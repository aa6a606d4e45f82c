//! QR factorization: [`qr`] and [`qr_inplace`].

use super::{array_of, dense, empty, fail, mat_dims, matrix_shape};
use crate::array::Array;
use crate::device::with_active;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::ops::data::{identity, upper};

/// QR factorization: `(q, r, tau)` with `input = q · r`.
///
/// For an `m`×`n` input: `q` is `m`×`m` and unitary (`qᴴ·q = I`), `r` is `m`×`n` and upper
/// triangular, and `tau` holds the `min(m, n)` scalars of the Householder reflectors
/// (LAPACK's `geqrf`: `q = H(0)·…·H(k-1)`, `H(i) = I - tau[i]·v_i·v_iᴴ`). `r`'s diagonal is
/// real, of either sign. Panics if the input is a batch of matrices.
///
/// ```
/// use emberfire::{dim4, matmul, qr, Array, MatProp};
/// let a = Array::new(&[3.0f64, 4.0, 1.0, 2.0], dim4!(2, 2)); // [3 1; 4 2]
/// let (q, r, tau) = qr(&a);
/// assert_eq!((q.dims(), r.dims(), tau.dims()), (dim4!(2, 2), dim4!(2, 2), dim4!(2)));
/// assert_eq!(r.to_vec()[1], 0.0); // upper triangular
/// let back = matmul(&q, &r, MatProp::NONE, MatProp::NONE).to_vec();
/// for (x, y) in back.iter().zip(&[3.0, 4.0, 1.0, 2.0]) {
///     assert!((x - y).abs() < 1e-12);
/// }
/// ```
pub fn qr<T>(input: &Array<T>) -> (Array<T>, Array<T>, Array<T>)
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "qr";
    let (m, n) = matrix_shape(FUNC, "input", input.dims());
    let backend = input.node().backend;
    if m.min(n) == 0 {
        let q = if m == 0 {
            empty(FUNC, mat_dims(0, 0), backend)
        } else {
            with_active(backend, || identity(mat_dims(m, m)))
        };
        return (q, empty(FUNC, mat_dims(m, n), backend), empty(FUNC, mat_dims(0, 1), backend));
    }
    let (packed, tau) =
        input.node().backend.ops().geqrf(&dense(FUNC, input)).unwrap_or_else(|e| fail(FUNC, e));
    let q = packed.backend.ops().orgqr(&packed, &tau, m).unwrap_or_else(|e| fail(FUNC, e));
    let r = upper(&array_of::<T>(packed), false);
    r.eval();
    (array_of(q), r, array_of(tau))
}

/// QR factorization in place: `input` is replaced by the packed result (`r` on and above the
/// diagonal, the reflectors' vectors below it, as LAPACK's `geqrf` leaves them) and `tau` is
/// returned (see [`qr`]). Panics if the input is a batch of matrices.
///
/// ```
/// use emberfire::{dim4, qr_inplace, Array};
/// let mut a = Array::new(&[3.0f32, 4.0, 0.0, 5.0], dim4!(2, 2)); // [3 0; 4 5]
/// let tau = qr_inplace(&mut a);
/// assert_eq!(tau.elements(), 2);
/// let packed = a.to_vec();
/// assert!((packed[0].abs() - 5.0).abs() < 1e-6); // |r₀₀| is the first column's norm
/// ```
pub fn qr_inplace<T>(input: &mut Array<T>) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "qr_inplace";
    let (m, n) = matrix_shape(FUNC, "input", input.dims());
    if m.min(n) == 0 {
        return empty(FUNC, mat_dims(0, 1), input.node().backend);
    }
    let (packed, tau) =
        input.node().backend.ops().geqrf(&dense(FUNC, input)).unwrap_or_else(|e| fail(FUNC, e));
    *input = array_of(packed);
    array_of(tau)
}
