//! Finite and infinite impulse response filters along dimension 0, batched over the other
//! dimensions as ArrayFire batches them.

use super::compute_type;
use super::convolve::{convolve_nodes, finish, prefers_frequency};
use crate::array::Array;
use crate::backend::signal::Dense;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;
use crate::jit::BinOp;
use crate::ops::build::{binary, cast_node, common_backend};

/// Finite impulse response filter: `y[n] = sum_k b[k] x[n - k]` along dimension 0, the
/// output as long as `x` (the start of the full convolution of `x` with `b`). Each column of
/// `x` is filtered; `b` is one filter for all, or one column per column of `x` (dimensions
/// of size 1 repeat). The domain is chosen as `ConvDomain::AUTO` does.
///
/// ```
/// use emberfire::{dim4, fir, Array};
/// let b = Array::new(&[0.5f32, 0.5], dim4!(2)); // two-point moving average
/// let x = Array::new(&[2.0f32, 4.0, 6.0, 8.0], dim4!(4));
/// assert_eq!(fir(&b, &x).to_vec(), vec![1.0, 3.0, 5.0, 7.0]);
/// ```
pub fn fir<B, X>(b: &Array<B>, x: &Array<X>) -> Array<X>
where
    B: HasAfEnum,
    X: HasAfEnum,
{
    let (bn, xn) = (b.node(), x.node());
    common_backend("fir", &[bn, xn]);
    if bn.dims.elements() == 0 || xn.dims.elements() == 0 {
        return x.clone();
    }
    let od = batch_shape("fir", xn.dims, bn.dims, "b");
    let freq = prefers_frequency(1, bn.dims);
    Array::from_node(convolve_nodes("fir", xn, bn, 1, od, [0; 4], freq))
}

/// The shape of a filter's output: `x`'s along dimension 0, broadcast with the coefficients'
/// (`name`) along the others.
fn batch_shape(func: &str, xd: Dim4, cd: Dim4, name: &str) -> Dim4 {
    let mut od = xd;
    for k in 1..4 {
        assert!(
            cd[k] == xd[k] || cd[k] == 1 || xd[k] == 1,
            "{func}: `{name}` (dims {cd}) has {} filters along dimension {k} but `x` (dims \
             {xd}) has {}; give one filter, or one per column",
            cd[k],
            xd[k]
        );
        od[k] = xd[k].max(cd[k]);
    }
    od
}

/// Infinite impulse response filter along dimension 0:
/// `a[0] y[n] = sum_k b[k] x[n - k] - sum_{k>=1} a[k] y[n - k]`.
/// `b` and `a` are one set of coefficients for every column of `x`, or one column each per
/// column of `x`. Floating types only (f32, f64, c32, c64), as in ArrayFire.
///
/// ```
/// use emberfire::{dim4, iir, Array};
/// // y[n] = x[n] + 0.5 y[n-1]
/// let b = Array::new(&[1.0f64], dim4!(1));
/// let a = Array::new(&[1.0f64, -0.5], dim4!(2));
/// let x = Array::new(&[1.0f64, 0.0, 0.0, 0.0], dim4!(4));
/// assert_eq!(iir(&b, &a, &x).to_vec(), vec![1.0, 0.5, 0.25, 0.125]);
/// ```
pub fn iir<T: HasAfEnum>(b: &Array<T>, a: &Array<T>, x: &Array<T>) -> Array<T> {
    const FUNC: &str = "iir";
    let (bn, an, xn) = (b.node(), a.node(), x.node());
    common_backend(FUNC, &[bn, an, xn]);
    assert!(
        T::DTYPE.is_floating() && !T::DTYPE.is_16bit_float(),
        "iir: defined for f32, f64, c32 and c64 arrays, not {}",
        T::DTYPE.name()
    );
    assert!(
        an.dims.elements() > 0 && bn.dims.elements() > 0,
        "iir: the coefficients must not be empty (`b` has dims {}, `a` has dims {})",
        bn.dims,
        an.dims
    );
    if xn.dims.elements() == 0 {
        return x.clone();
    }
    let od = batch_shape(FUNC, batch_shape(FUNC, xn.dims, bn.dims, "b"), an.dims, "a");
    let ct = compute_type(T::DTYPE);
    let forward = convolve_nodes(FUNC, xn, bn, 1, od, [0; 4], prefers_frequency(1, bn.dims));
    if an.dims[0] == 1 {
        // no feedback: divide by a[0] (broadcast over the columns)
        return binary::<T>(FUNC, BinOp::Div, &forward, an, ct, true);
    }
    let run = || -> crate::error::Result<Dense> {
        let c = Dense::of(&forward)?;
        let a = Dense::of(&cast_node(an, ct))?;
        c.backend.ops().iir(&c, &a)
    };
    let out = run().or_raise(FUNC);
    Array::from_node(finish(FUNC, out.into_node(), T::DTYPE))
}
