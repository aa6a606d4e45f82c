//! Geometric transforms: [`resize`], [`transform`], [`rotate`], [`translate`], [`scale`],
//! [`skew`], and [`transform_coords`].
//!
//! Every one of them is a warp: each output pixel `(x, y)` (`x` along dimension 0) reads the
//! input at the point a 3 x 3 map sends it to, `x' = m0 x + m1 y + m2`, `y' = m3 x + m4 y + m5`,
//! divided by `m6 x + m7 y + m8` for a projective map. The maps are worked out on the host
//! (a few numbers), and one kernel of the image family (`backend::image::Image::warp`, CUDA, CPU)
//! samples the whole output in one pass, so a resize reads the input once and writes the
//! output once.
//!
//! Sampling follows ArrayFire:
//! - `NEAREST` rounds the point (halves away from zero), `LOWER` floors it; a point outside
//!   the image gives 0, except in `resize`, which clamps it to the last pixel.
//! - `BILINEAR`, `BILINEAR_COSINE`, `BICUBIC` and `BICUBIC_SPLINE` give 0 for a point outside
//!   `[-1e-4, n)` along either dimension, and repeat the edge pixel for neighbours past it.
//!   The 1D names (`LINEAR`, `LINEAR_COSINE`, `CUBIC`, `CUBIC_SPLINE`) are accepted as their
//!   2D counterparts, as [`approx2`](crate::approx2) accepts them.
//! - `NEAREST` and `LOWER` copy samples, exactly for every type. The other methods compute in
//!   f32 (f64 for f64 and c64 images and 32- and 64-bit integers) and convert back to the
//!   image's type, integers truncated toward zero and saturated at their range. Complex
//!   images are warped part by part, bool images as u8 and f16 ones in f32.
//!
//! Two deliberate differences from ArrayFire: the forward affine map `transform` inverts is
//! inverted exactly (ArrayFire's inverse of a 3 x 2 matrix swaps the off-diagonal terms
//! without negating them, which is the inverse only for rotations and scalings), and so is
//! `skew`'s inverse; and `rotate` uses its sine and cosine as computed, where ArrayFire rounds
//! its map to three decimals.

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::image::WarpMaps;
use crate::device::with_active;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, RealFloating};
use crate::error_handler::OrRaise;
use crate::jit::{BinOp, Expr, Node, UnOp};
use crate::ops::build::{cast_node, common_backend, with_backend_of};
use crate::ops::index::index;
use crate::ops::movement::join;
use crate::ops::seq::Seq;
use crate::ops::signal::approx::method as interp_method;
use crate::ops::signal::InterpType;
use std::sync::Arc;

/// The identity map.
const IDENTITY: [f64; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

/// Checks the method of a 2D sampling function (ArrayFire's six, and the 1D synonyms).
fn check_method(func: &str, m: InterpType) -> crate::backend::signal::Interp {
    interp_method(func, m, true)
}

/// Warps the real image `node` (not f16 or bool) into shape `od`.
fn warp_real(
    func: &str,
    node: &Arc<Node>,
    maps: &WarpMaps,
    od: Dim4,
    m: InterpType,
    clamp_nearest: bool,
) -> Arc<Node> {
    let interp = check_method(func, m);
    let run = || -> crate::error::Result<Dense> {
        let d = Dense::of(node)?;
        d.backend.ops().warp(&d, maps, od, interp, clamp_nearest)
    };
    run().or_raise(func).into_node()
}

/// Warps `input` of any type into shape `od`: bool as u8 and f16 as f32, complex images part
/// by part.
fn warp<T: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    maps: &WarpMaps,
    od: Dim4,
    m: InterpType,
    clamp_nearest: bool,
) -> Array<T> {
    let node = input.node();
    let backend = common_backend(func, &[node]);
    let t = T::get_af_dtype();
    if input.elements() == 0 || od.elements() == 0 {
        // no pixel to read: every point lies outside
        check_method(func, m);
        let zero = with_active(backend, || crate::ops::data::constant(0.0f64, od));
        return Array::from_node(cast_node(zero.node(), t));
    }
    let out = if t.is_complex() {
        let rt = t.real_of();
        let part = |op: UnOp| Node::lazy(rt, node.dims, backend, Expr::Unary(op, node.clone()));
        let re = warp_real(func, &part(UnOp::Real), maps, od, m, clamp_nearest);
        let im = warp_real(func, &part(UnOp::Imag), maps, od, m, clamp_nearest);
        Node::lazy(t, od, backend, Expr::Binary(BinOp::Cplx2, re, im))
    } else {
        let wt = match t {
            DType::B8 => DType::U8,
            DType::F16 | DType::BF16 => DType::F32,
            _ => t,
        };
        let w = warp_real(func, &cast_node(node, wt), maps, od, m, clamp_nearest);
        cast_node(&w, t)
    };
    Array::from_node(out)
}

/// A requested output size: positive, or (where `zero_means_input`) 0 for the input's size.
fn out_size(func: &str, name: &str, v: i64) -> u64 {
    assert!(v >= 0, "{func}: {name} must not be negative (got {v})");
    v as u64
}

/// Resizes every image (dimensions 0 and 1) of `input` to `odim0 x odim1`; dimensions 2 and 3
/// are kept. Output pixel `(x, y)` samples the input at `(x * n0 / odim0, y * n1 / odim1)`
/// (ArrayFire's rule: pixel 0 maps to pixel 0), by `method`: `NEAREST` and `LOWER` clamp to
/// the last pixel, the smooth methods repeat the edge (see the module notes).
///
/// ```
/// use emberfire::{dim4, resize, Array, InterpType};
/// let img = Array::new(&[0.0f32, 10.0, 20.0, 30.0], dim4!(2, 2));
/// let big = resize(&img, 4, 4, InterpType::BILINEAR);
/// assert_eq!(big.dims(), dim4!(4, 4));
/// // column 0: 0, 5, 10, 10 (the last two past the edge); the first row: 0, 10, 20, 20
/// let v = big.to_vec();
/// assert_eq!(&v[0..4], &[0.0, 5.0, 10.0, 10.0]);
/// assert_eq!((v[4], v[8], v[12]), (10.0, 20.0, 20.0));
/// let near = resize(&img, 1, 1, InterpType::NEAREST);
/// assert_eq!(near.to_vec(), vec![0.0]);
/// ```
///
/// Panics if `odim0` or `odim1` is not positive, or the method is not one of the 2D methods.
pub fn resize<T: HasAfEnum>(
    input: &Array<T>,
    odim0: i64,
    odim1: i64,
    method: InterpType,
) -> Array<T> {
    const FUNC: &str = "resize";
    let (o0, o1) = (out_size(FUNC, "odim0", odim0), out_size(FUNC, "odim1", odim1));
    assert!(o0 > 0 && o1 > 0, "{FUNC}: odim0 and odim1 must be positive (got {o0} x {o1})");
    let d = input.dims();
    let (s0, s1) = (d[0] as f64 / o0 as f64, d[1] as f64 / o1 as f64);
    let map = [s0, 0.0, 0.0, 0.0, s1, 0.0, 0.0, 0.0, 1.0];
    let od = Dim4::new(&[o0, o1, d[2], d[3]]);
    warp(FUNC, input, &WarpMaps::one(map), od, method, true)
}

/// The exact inverse of map `m` (affine or projective). Panics naming `func` if it is
/// singular.
fn inverse(func: &str, m: [f64; 9]) -> [f64; 9] {
    let [a, b, c, d, e, f, g, h, i] = m;
    let adj = [
        e * i - f * h,
        -(b * i - c * h),
        b * f - c * e,
        -(d * i - f * g),
        a * i - c * g,
        -(a * f - c * d),
        d * h - e * g,
        -(a * h - b * g),
        a * e - b * d,
    ];
    let det = a * adj[0] + b * adj[3] + c * adj[6];
    assert!(det != 0.0 && det.is_finite(), "{func}: the transform {m:?} is not invertible");
    let mut out = adj.map(|v| v / det);
    // keep an affine map affine, with its last row exactly (0, 0, 1)
    if g == 0.0 && h == 0.0 {
        let s = out[8];
        out = out.map(|v| v / s);
        out[6] = 0.0;
        out[7] = 0.0;
        out[8] = 1.0;
    }
    out
}

/// Transforms every image of `input` by the affine (`trans` of dims 3 x 2) or projective
/// (3 x 3) map `trans`, into `odim0 x odim1` pixels (the input's size where either is 0).
///
/// `trans` holds, column-major, the coefficients of `x' = t[0] x + t[1] y + t[2]` and
/// `y' = t[3] x + t[4] y + t[5]` (and `w = t[6] x + t[7] y + t[8]` for a projective map,
/// which divides both). With `is_inverse`, it maps output pixels to input points and is used
/// as it is; without, it maps input points to output pixels and is inverted first.
///
/// Batches, as ArrayFire's: `trans` of dims `(3, 2|3, t2, t3)` holds one map per image; a
/// single map applies to every image of the input, a single image is transformed by every
/// map, and otherwise the sizes along dimensions 2 and 3 must match or be 1. The maps are
/// read to the host (nine numbers each). Sampling as in the module notes.
///
/// ```
/// use emberfire::{dim4, transform, Array, InterpType};
/// let img = Array::new(&(0..12).map(|v| v as f32).collect::<Vec<_>>(), dim4!(3, 4));
/// // out(x, y) = in(x + 1, y): a shift by one pixel along dimension 0
/// let t = Array::new(&[1.0f32, 0.0, 1.0, 0.0, 1.0, 0.0], dim4!(3, 2));
/// let out = transform(&img, &t, 0, 0, InterpType::NEAREST, true).to_vec();
/// assert_eq!(&out[0..3], &[1.0, 2.0, 0.0]); // the last pixel reads outside
/// ```
///
/// Panics if `trans` is not 3 x 2 or 3 x 3 (batched as above), a map is singular (without
/// `is_inverse`), maps are batched but `odim0` or `odim1` is 0, or the method is not a 2D
/// method.
pub fn transform<T: HasAfEnum>(
    input: &Array<T>,
    trans: &Array<f32>,
    odim0: i64,
    odim1: i64,
    method: InterpType,
    is_inverse: bool,
) -> Array<T> {
    const FUNC: &str = "transform";
    let (id, td) = (input.dims(), trans.dims());
    assert!(
        td[0] == 3 && (td[1] == 2 || td[1] == 3),
        "{FUNC}: trans must be 3 x 2 (affine) or 3 x 3 (projective) per map; its dims are {td}"
    );
    let (o0, o1) = (out_size(FUNC, "odim0", odim0), out_size(FUNC, "odim1", odim1));
    let batched = td[2] * td[3] > 1;
    assert!(
        !batched || (o0 > 0 && o1 > 0),
        "{FUNC}: with several maps (trans dims {td}) odim0 and odim1 must be given"
    );
    for k in 2..4 {
        assert!(
            id[k] == td[k] || id[k] == 1 || td[k] == 1,
            "{FUNC}: the images (dims {id}) and the maps (dims {td}) differ along dimension {k}"
        );
    }
    let (o0, o1) = if o0 * o1 == 0 { (id[0], id[1]) } else { (o0, o1) };
    let od = Dim4::new(&[o0, o1, id[2].max(td[2]), id[3].max(td[3])]);
    let per = td[1] as usize * 3;
    let host = trans.to_vec();
    let maps: Vec<[f64; 9]> = host
        .chunks(per)
        .map(|c| {
            let mut m = IDENTITY;
            for (k, v) in c.iter().enumerate() {
                m[k] = f64::from(*v);
            }
            if is_inverse {
                m
            } else {
                inverse(FUNC, m)
            }
        })
        .collect();
    let maps = WarpMaps { maps, batch: [td[2], td[3]] };
    warp(FUNC, input, &maps, od, method, false)
}

/// Rotates every image of `input` by `theta` radians about its centre. With `crop` the output
/// keeps the input's size; without, it grows to hold the whole rotated image
/// (`n0 |cos θ| + n1 |sin θ|` by `n1 |cos θ| + n0 |sin θ|`, truncated). Pixels that come from
/// outside the input are 0. Sampling as in the module notes.
///
/// ```
/// use emberfire::{dim4, rotate, Array, InterpType};
/// let img = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let r = rotate(&img, std::f64::consts::PI, true, InterpType::NEAREST);
/// assert_eq!(r.to_vec(), vec![4.0, 3.0, 2.0, 1.0]); // a half turn reverses both axes
/// ```
///
/// Panics if the method is not a 2D method.
pub fn rotate<T: HasAfEnum>(
    input: &Array<T>,
    theta: f64,
    crop: bool,
    method: InterpType,
) -> Array<T> {
    const FUNC: &str = "rotate";
    let d = input.dims();
    let (c, s) = ((-theta).cos(), (-theta).sin());
    let (o0, o1) = if crop {
        (d[0], d[1])
    } else {
        let (ac, as_) = (theta.cos().abs(), theta.sin().abs());
        (
            (d[0] as f64 * ac + d[1] as f64 * as_) as u64,
            (d[1] as f64 * ac + d[0] as f64 * as_) as u64,
        )
    };
    // the output's centre maps to the input's centre
    let (nx, ny) = (0.5 * (d[0] as f64 - 1.0), 0.5 * (d[1] as f64 - 1.0));
    let (mx, my) = (0.5 * (o0 as f64 - 1.0), 0.5 * (o1 as f64 - 1.0));
    let tx = nx - (mx * c - my * s);
    let ty = ny - (mx * s + my * c);
    let map = [c, -s, tx, s, c, ty, 0.0, 0.0, 1.0];
    let od = Dim4::new(&[o0, o1, d[2], d[3]]);
    warp(FUNC, input, &WarpMaps::one(map), od, method, false)
}

/// Translates every image of `input`: output pixel `(x, y)` reads the input at
/// `(x + trans0, y + trans1)` (ArrayFire's convention), into `odim0 x odim1` pixels (the
/// input's size where either is 0). Sampling as in the module notes.
///
/// ```
/// use emberfire::{dim4, translate, Array, InterpType};
/// let img = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
/// let t = translate(&img, 1.0, 0.0, 0, 0, InterpType::NEAREST);
/// assert_eq!(t.to_vec(), vec![2.0, 3.0, 4.0, 0.0]);
/// ```
///
/// Panics if the method is not a 2D method.
pub fn translate<T: HasAfEnum>(
    input: &Array<T>,
    trans0: f32,
    trans1: f32,
    odim0: i64,
    odim1: i64,
    method: InterpType,
) -> Array<T> {
    const FUNC: &str = "translate";
    let d = input.dims();
    let (o0, o1) = (out_size(FUNC, "odim0", odim0), out_size(FUNC, "odim1", odim1));
    let (o0, o1) = if o0 * o1 == 0 { (d[0], d[1]) } else { (o0, o1) };
    let map = [1.0, 0.0, f64::from(trans0), 0.0, 1.0, f64::from(trans1), 0.0, 0.0, 1.0];
    warp(FUNC, input, &WarpMaps::one(map), Dim4::new(&[o0, o1, d[2], d[3]]), method, false)
}

/// Scales every image of `input` by `scale0` along dimension 0 and `scale1` along dimension 1:
/// output pixel `(x, y)` reads the input at `(x / scale0, y / scale1)`. As in ArrayFire:
/// where `odim0` or `odim1` is 0 the output size is the input's times the scales (truncated);
/// where a scale is 0 it is the output size over the input size. Sampling as in the module
/// notes.
///
/// ```
/// use emberfire::{dim4, scale, Array, InterpType};
/// let img = Array::new(&[1.0f32, 2.0], dim4!(2));
/// let s = scale(&img, 2.0, 1.0, 0, 0, InterpType::LOWER);
/// assert_eq!(s.to_vec(), vec![1.0, 1.0, 2.0, 2.0]);
/// ```
///
/// Panics if both a scale and an output size are 0, or the method is not a 2D method.
pub fn scale<T: HasAfEnum>(
    input: &Array<T>,
    scale0: f32,
    scale1: f32,
    odim0: i64,
    odim1: i64,
    method: InterpType,
) -> Array<T> {
    const FUNC: &str = "scale";
    let d = input.dims();
    let (o0, o1) = (out_size(FUNC, "odim0", odim0), out_size(FUNC, "odim1", odim1));
    let (s0, s1) = (f64::from(scale0), f64::from(scale1));
    let (sx, sy, o0, o1) = if o0 == 0 || o1 == 0 {
        assert!(
            s0 != 0.0 && s1 != 0.0,
            "{FUNC}: with odim0 or odim1 0, scale0 and scale1 must not be 0 (got {s0}, {s1})"
        );
        let (sx, sy) = (1.0 / s0, 1.0 / s1);
        (sx, sy, (d[0] as f64 / sx) as u64, (d[1] as f64 / sy) as u64)
    } else if s0 == 0.0 || s1 == 0.0 {
        (d[0] as f64 / o0 as f64, d[1] as f64 / o1 as f64, o0, o1)
    } else {
        (1.0 / s0, 1.0 / s1, o0, o1)
    };
    let map = [sx, 0.0, 0.0, 0.0, sy, 0.0, 0.0, 0.0, 1.0];
    warp(FUNC, input, &WarpMaps::one(map), Dim4::new(&[o0, o1, d[2], d[3]]), method, false)
}

/// Skews every image of `input`: output pixel `(x, y)` reads the input at
/// `(x + tan(skew1) y, tan(skew0) x + y)` (ArrayFire's map), or, with `is_inverse`, at the
/// point that map's inverse gives, so that the two undo each other. The output has
/// `odim0 x odim1` pixels (the input's size where either is 0). Sampling as in the module
/// notes.
///
/// ```
/// use emberfire::{dim4, skew, Array, InterpType};
/// let img = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let same = skew(&img, 0.0, 0.0, 0, 0, InterpType::NEAREST, false);
/// assert_eq!(same.to_vec(), img.to_vec());
/// ```
///
/// Panics if the skew with `is_inverse` is not invertible (`tan(skew0) tan(skew1) == 1`), or
/// the method is not a 2D method.
pub fn skew<T: HasAfEnum>(
    input: &Array<T>,
    skew0: f32,
    skew1: f32,
    odim0: i64,
    odim1: i64,
    method: InterpType,
    is_inverse: bool,
) -> Array<T> {
    const FUNC: &str = "skew";
    let d = input.dims();
    let (o0, o1) = (out_size(FUNC, "odim0", odim0), out_size(FUNC, "odim1", odim1));
    let (o0, o1) = if o0 * o1 == 0 { (d[0], d[1]) } else { (o0, o1) };
    let (tx, ty) = (f64::from(skew0).tan(), f64::from(skew1).tan());
    let map = [1.0, ty, 0.0, tx, 1.0, 0.0, 0.0, 0.0, 1.0];
    let map = if is_inverse { inverse(FUNC, map) } else { map };
    warp(FUNC, input, &WarpMaps::one(map), Dim4::new(&[o0, o1, d[2], d[3]]), method, false)
}

/// The corners of a `d0 x d1` image under the projective map `tf` (3 x 3, column-major as in
/// [`transform`]): a 4 x 2 array whose rows are the images of the points `(0, 0)`,
/// `(0, d0)`, `(d1, d0)` and `(d1, 0)` (first coordinate in column 0), each divided by its
/// `w`, as ArrayFire orders them.
///
/// ```
/// use emberfire::{dim4, transform_coords, Array};
/// // a translation by (2, 3)
/// let tf = Array::new(&[1.0f32, 0.0, 2.0, 0.0, 1.0, 3.0, 0.0, 0.0, 1.0], dim4!(3, 3));
/// let c = transform_coords(&tf, 4.0, 5.0).to_vec();
/// assert_eq!(c, vec![2.0, 2.0, 7.0, 7.0, 3.0, 7.0, 7.0, 3.0]);
/// ```
///
/// Panics if `tf` is not 3 x 3.
pub fn transform_coords<T>(tf: &Array<T>, d0: f32, d1: f32) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    const FUNC: &str = "transform_coords";
    let td = tf.dims();
    assert!(
        td[0] == 3 && td[1] == 3 && td[2] == 1 && td[3] == 1,
        "{FUNC}: tf must be 3 x 3; its dims are {td}"
    );
    // the corners' two coordinates, then each coefficient as a one-element array (which
    // broadcasts): x' = (px t00 + py t10 + t20) / w, y' likewise with column 1, w with column 2
    let (d0, d1) = (f64::from(d0), f64::from(d1));
    let corner =
        |v: [f64; 4]| with_backend_of(tf, || Array::new(&v, Dim4::new(&[4, 1, 1, 1]))).cast::<T>();
    let (px, py) = (corner([0.0, 0.0, d1, d1]), corner([0.0, d0, d0, 0.0]));
    let t = |r: f64, c: f64| index(tf, &[Seq::new(r, r, 1.0), Seq::new(c, c, 1.0)]);
    let image = |c: f64| &(&(&px * &t(0.0, c)) + &(&py * &t(1.0, c))) + &t(2.0, c);
    let w = image(2.0);
    join(1, &(&image(0.0) / &w), &(&image(1.0) / &w))
}
