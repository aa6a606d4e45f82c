//! Interpolation at arbitrary positions along dimension 0 ([`approx1`]) or over dimensions 0
//! and 1 ([`approx2`]), with ArrayFire's methods and off-grid value.
//!
//! Positions are in index units (0 is the first sample). A position below 0, above the last
//! index, or NaN gives `off_grid`. Neighbours a method needs past an edge repeat the edge
//! sample (ArrayFire does this for the cubic methods; for the others such neighbours have
//! zero weight inside the grid). Positions are converted to the real type of the input's
//! precision first.

use super::InterpType;
use crate::array::Array;
use crate::backend::signal::{Dense, Interp};
use crate::dtype::{FloatingPoint, HasAfEnum, RealFloating};
use crate::error_handler::OrRaise;
use crate::ops::build::{cast_node, common_backend};

pub(crate) fn method(func: &str, m: InterpType, two_d: bool) -> Interp {
    match (m, two_d) {
        (InterpType::NEAREST, _) => Interp::Nearest,
        (InterpType::LOWER, _) => Interp::Lower,
        (InterpType::LINEAR, _) | (InterpType::BILINEAR, true) => Interp::Linear,
        (InterpType::LINEAR_COSINE, _) | (InterpType::BILINEAR_COSINE, true) => {
            Interp::LinearCosine
        }
        (InterpType::CUBIC, _) | (InterpType::BICUBIC, true) => Interp::Cubic,
        (InterpType::CUBIC_SPLINE, _) | (InterpType::BICUBIC_SPLINE, true) => Interp::CubicSpline,
        (other, _) => panic!(
            "{func}: {other:?} is a 2D method; use NEAREST, LOWER, LINEAR, LINEAR_COSINE, CUBIC \
             or CUBIC_SPLINE"
        ),
    }
}

/// Interpolates every column of `input` at the positions `pos` (index units along dimension
/// 0). `pos` is a column of positions used for every column of `input`, or has `input`'s
/// shape along dimensions 1 to 3 (positions per column). The result has `pos`'s length along
/// dimension 0 and `input`'s shape along the others. `off_grid` fills positions outside the
/// samples.
///
/// ```
/// use emberfire::{approx1, dim4, Array, InterpType};
/// let y = Array::new(&[1.0f64, 3.0, 2.0], dim4!(3));
/// let x = Array::new(&[0.5f64, 1.5, -1.0, 2.0], dim4!(4));
/// let v = approx1(&y, &x, InterpType::LINEAR, -9.0).to_vec();
/// assert_eq!(v, vec![2.0, 2.5, -9.0, 2.0]);
/// ```
pub fn approx1<T, P>(
    input: &Array<T>,
    pos: &Array<P>,
    method_: InterpType,
    off_grid: f32,
) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    const FUNC: &str = "approx1";
    let (i, p) = (input.node(), pos.node());
    common_backend(FUNC, &[i, p]);
    let m = method(FUNC, method_, false);
    let (id, pd) = (i.dims, p.dims);
    if pd.elements() != pd[0] {
        assert!(
            (1..4).all(|k| pd[k] == id[k]),
            "{FUNC}: `pos` (dims {pd}) must be a column of positions, or match the input (dims \
             {id}) along dimensions 1 to 3"
        );
    }
    let run = || -> crate::error::Result<Dense> {
        let input = Dense::of(i)?;
        let pos = Dense::of(&cast_node(p, T::DTYPE.real_of()))?;
        input.backend.ops().approx1(&input, &pos, m, off_grid as f64)
    };
    let out = run().or_raise(FUNC);
    Array::from_node(out.into_node())
}

/// Interpolates every image (dimensions 0 and 1) of `input` at the points
/// `(pos0[i, j], pos1[i, j])`, in index units along dimensions 0 and 1. `pos0` and `pos1`
/// have one shape: 2D (used for every image) or with `input`'s sizes along dimensions 2 and
/// 3 (points per image). The result has the positions' shape along dimensions 0 and 1 and
/// `input`'s along 2 and 3. The methods are separable: along dimension 0 in each row needed,
/// then along dimension 1.
///
/// ```
/// use emberfire::{approx2, dim4, Array, InterpType};
/// // f(x, y) = x + 10 y on a 2x2 grid
/// let img = Array::new(&[0.0f32, 1.0, 10.0, 11.0], dim4!(2, 2));
/// let x = Array::new(&[0.5f32], dim4!(1));
/// let y = Array::new(&[0.5f32], dim4!(1));
/// assert_eq!(approx2(&img, &x, &y, InterpType::BILINEAR, 0.0).to_vec(), vec![5.5]);
/// ```
pub fn approx2<T, P>(
    input: &Array<T>,
    pos0: &Array<P>,
    pos1: &Array<P>,
    method_: InterpType,
    off_grid: f32,
) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    const FUNC: &str = "approx2";
    let (i, p0, p1) = (input.node(), pos0.node(), pos1.node());
    common_backend(FUNC, &[i, p0, p1]);
    let m = method(FUNC, method_, true);
    let (id, pd) = (i.dims, p0.dims);
    assert!(
        p1.dims == pd,
        "{FUNC}: `pos0` (dims {pd}) and `pos1` (dims {}) must have the same shape",
        p1.dims
    );
    assert!(
        (2..4).all(|k| pd[k] == 1 || pd[k] == id[k]),
        "{FUNC}: the positions (dims {pd}) must be 2D or match the input (dims {id}) along \
         dimensions 2 and 3"
    );
    let run = || -> crate::error::Result<Dense> {
        let input = Dense::of(i)?;
        let rt = T::DTYPE.real_of();
        let x = Dense::of(&cast_node(p0, rt))?;
        let y = Dense::of(&cast_node(p1, rt))?;
        input.backend.ops().approx2(&input, &x, &y, m, off_grid as f64)
    };
    let out = run().or_raise(FUNC);
    Array::from_node(out.into_node())
}
