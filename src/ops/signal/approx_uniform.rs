//! Interpolation of samples taken on a uniform grid along any dimension:
//! [`approx1_uniform`] and [`approx2_uniform`].
//!
//! The sample at index `i` along the interpolated dimension sits at the coordinate
//! `start + i * step`, and positions are given in those coordinates. Both functions turn the
//! positions into index units (`(pos - start) / step`, computed in f64 so the conversion adds
//! no error of its own), move the interpolated dimensions to the front with `reorder_v2`, run
//! [`approx1`] or [`approx2`], and move the dimensions back. Methods, off-grid rules and
//! element types are those of `approx1` and `approx2`.

use super::approx::{approx1, approx2, method};
use super::InterpType;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{FloatingPoint, HasAfEnum, RealFloating};
use crate::ops::movement::reorder_v2;

/// Checks a dimension argument and returns it as an index.
fn axis(func: &str, what: &str, d: i32, dims: Dim4) -> usize {
    assert!(
        (0..4).contains(&d),
        "{func}: `{what}` is {d}, but it must be 0, 1, 2 or 3; the input's dims are {dims}"
    );
    d as usize
}

/// Checks that a grid's start and step can place samples.
fn grid(func: &str, what: &str, start: f64, step: f64) {
    assert!(
        start.is_finite() && step.is_finite() && step != 0.0,
        "{func}: the grid along `{what}` must have a finite start and a finite, non-zero step, \
         but start is {start} and step is {step}"
    );
}

/// Positions in grid coordinates, as f64 index units.
fn to_index<P: HasAfEnum>(pos: &Array<P>, start: f64, step: f64) -> Array<f64> {
    (pos.cast::<f64>() - start) / step
}

/// Reorders `a` so that its dimension `perm[k]` becomes dimension `k`.
fn permute<T: HasAfEnum>(a: &Array<T>, perm: [usize; 4]) -> Array<T> {
    if perm == [0, 1, 2, 3] {
        return a.clone();
    }
    let rest = perm[2..].iter().map(|&k| k as u64).collect();
    reorder_v2(a, perm[0] as u64, perm[1] as u64, Some(rest))
}

/// The permutation that undoes `perm`.
fn inverse(perm: [usize; 4]) -> [usize; 4] {
    let mut inv = [0; 4];
    for (k, &p) in perm.iter().enumerate() {
        inv[p] = k;
    }
    inv
}

/// Interpolates `input`, sampled at `start + i * step` along dimension `interp_dim`, at the
/// positions `pos` (in the same coordinates), as ArrayFire's uniform `approx1`.
///
/// `pos` is a vector along `interp_dim` (the same positions for every line of `input` along
/// that dimension), or has `input`'s dims except along `interp_dim` (positions per line).
/// The result has `input`'s dims with `pos`'s length along `interp_dim`. A position outside
/// `[start, start + (n - 1) * step]`, or NaN, gives `off_grid`; a negative `step` describes
/// a descending grid. Otherwise as [`approx1`].
///
/// Panics if `interp_dim` is not 0 to 3, if `step` is zero or either grid value is not
/// finite, if `pos` has other dims, or for a 2D method.
///
/// ```
/// use emberfire::{approx1_uniform, dim4, Array, InterpType};
/// // Samples of 10 * t at t = 0.5, 1.0, 1.5, laid out along dimension 1.
/// let y = Array::new(&[5.0f32, 10.0, 15.0], dim4!(1, 3));
/// let t = Array::new(&[0.75f32, 1.5, 2.0], dim4!(1, 3));
/// let v = approx1_uniform(&y, &t, 1, 0.5, 0.5, InterpType::LINEAR, -1.0);
/// assert_eq!(v.dims(), dim4!(1, 3));
/// assert_eq!(v.to_vec(), vec![7.5, 15.0, -1.0]);
/// ```
pub fn approx1_uniform<T, P>(
    input: &Array<T>,
    pos: &Array<P>,
    interp_dim: i32,
    start: f64,
    step: f64,
    method_: InterpType,
    off_grid: f32,
) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    const FUNC: &str = "approx1_uniform";
    let (id, pd) = (input.dims(), pos.dims());
    let d = axis(FUNC, "interp_dim", interp_dim, id);
    grid(FUNC, "interp_dim", start, step);
    method(FUNC, method_, false);
    if pd.elements() != pd[d] {
        assert!(
            (0..4).all(|k| k == d || pd[k] == id[k]),
            "{FUNC}: `pos` (dims {pd}) must be a vector along dimension {d}, or match the input \
             (dims {id}) along every other dimension"
        );
    }
    // Swapping dimensions 0 and d is its own inverse.
    let mut perm = [0, 1, 2, 3];
    perm.swap(0, d);
    let idx = to_index(pos, start, step);
    let out = approx1(&permute(input, perm), &permute(&idx, perm), method_, off_grid);
    permute(&out, perm)
}

/// Interpolates `input`, sampled at `start0 + i * step0` along dimension `interp_dim0` and
/// `start1 + j * step1` along `interp_dim1`, at the points `(pos0[..], pos1[..])` in those
/// coordinates, as ArrayFire's uniform `approx2`.
///
/// `pos0` and `pos1` have one shape, whose sizes along the two interpolated dimensions give
/// the result's; along each other dimension it is 1 (the same points for every image) or
/// `input`'s size (points per image). The result has `input`'s sizes along the other
/// dimensions. Otherwise as [`approx2`] and [`approx1_uniform`].
///
/// Panics if the dimensions are not two different ones of 0 to 3, for a bad grid (as
/// [`approx1_uniform`]), if the positions' dims differ from each other or do not fit `input`.
///
/// ```
/// use emberfire::{approx2_uniform, dim4, Array, InterpType};
/// // f(x, y) = x + 10 y sampled at x = 0, 2 (dimension 0) and y = 1, 2 (dimension 1).
/// let img = Array::new(&[10.0f64, 12.0, 20.0, 22.0], dim4!(2, 2));
/// let x = Array::new(&[1.0f64, 2.0], dim4!(2));
/// let y = Array::new(&[1.5f64, 1.0], dim4!(2));
/// let v = approx2_uniform(&img, &x, 0, 0.0, 2.0, &y, 1, 1.0, 1.0, InterpType::BILINEAR, 0.0);
/// assert_eq!(v.to_vec(), vec![16.0, 12.0]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn approx2_uniform<T, P>(
    input: &Array<T>,
    pos0: &Array<P>,
    interp_dim0: i32,
    start0: f64,
    step0: f64,
    pos1: &Array<P>,
    interp_dim1: i32,
    start1: f64,
    step1: f64,
    method_: InterpType,
    off_grid: f32,
) -> Array<T>
where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    const FUNC: &str = "approx2_uniform";
    let (id, pd) = (input.dims(), pos0.dims());
    let d0 = axis(FUNC, "interp_dim0", interp_dim0, id);
    let d1 = axis(FUNC, "interp_dim1", interp_dim1, id);
    assert!(d0 != d1, "{FUNC}: `interp_dim0` and `interp_dim1` are both {d0}; they must differ");
    grid(FUNC, "interp_dim0", start0, step0);
    grid(FUNC, "interp_dim1", start1, step1);
    method(FUNC, method_, true);
    assert!(
        pos1.dims() == pd,
        "{FUNC}: `pos0` (dims {pd}) and `pos1` (dims {}) must have the same shape",
        pos1.dims()
    );
    assert!(
        (0..4).all(|k| k == d0 || k == d1 || pd[k] == 1 || pd[k] == id[k]),
        "{FUNC}: the positions (dims {pd}) must have size 1 or the input's size (dims {id}) \
         along every dimension but {d0} and {d1}"
    );
    // d0 first, d1 second, the others after them in their order.
    let mut perm = [d0, d1, 0, 0];
    let others = (0..4).filter(|&k| k != d0 && k != d1);
    for (slot, k) in perm[2..].iter_mut().zip(others) {
        *slot = k;
    }
    let x = permute(&to_index(pos0, start0, step0), perm);
    let y = permute(&to_index(pos1, start1, step1), perm);
    let out = approx2(&permute(input, perm), &x, &y, method_, off_grid);
    permute(&out, inverse(perm))
}
