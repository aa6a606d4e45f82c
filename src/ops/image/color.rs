//! Colour conversions: grayscale, RGB, HSV and YCbCr, channels along dimension 2, images
//! batched along dimension 3.
//!
//! Each conversion is one lazy element-wise expression over the output: the input's channels
//! are read in place (a mapped read per channel) and the output channel is chosen by its
//! index, so a conversion costs one fused pass and no intermediate image.
//!
//! Where emberfire differs from ArrayFire, it does so on purpose:
//! - `rgb2gray` and `gray2rgb` of an integer image return the element type they were given
//!   (arrayfire-rust's signature), the value computed in f32 and rounded to nearest;
//!   ArrayFire returns an f32 array whatever the signature says.
//! - `gray2rgb` writes the channels in the order red, green, blue; ArrayFire writes blue,
//!   red, green when the three factors are not all 1.
//! - the three-channel conversions keep the batch along dimension 3, which ArrayFire's
//!   `rgb2ycbcr` and `ycbcr2rgb` drop.

use super::calc::{finish, float_type, Val};
use super::{ColorSpace, YCCStd};
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, GrayRGBConvertible, HasAfEnum, RealFloating, RealNumber};
use crate::jit::UnOp;
use crate::ops::build::with_backend_of;
use crate::ops::movement::{offset_read, BorderType};

/// The element types of `rgb2gray` and `gray2rgb` (ArrayFire's list).
const GRAY_TYPES: [DType; 7] =
    [DType::F64, DType::F32, DType::S32, DType::U32, DType::S16, DType::U16, DType::U8];

fn check_type(func: &str, t: DType, allowed: &[DType]) {
    assert!(
        allowed.contains(&t),
        "{func}: input of type {} is not supported (accepted: {})",
        t.name(),
        allowed.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
    );
}

/// `dims` with `c` channels.
fn with_channels(dims: Dim4, c: u64) -> Dim4 {
    Dim4::new(&[dims[0], dims[1], c, dims[3]])
}

fn check_channels(func: &str, dims: Dim4, c: u64) {
    assert!(
        dims[2] == c,
        "{func}: input must have {c} channel(s) along dimension 2; its dims are {dims}"
    );
}

/// Channel `c` of `input`, as a lazy read converted to `to`.
fn channel<T: HasAfEnum>(input: &Array<T>, c: i64, to: DType) -> Val {
    let out = with_channels(input.dims(), 1);
    Val::of(&offset_read(input, out, [0, 0, c, 0], BorderType::ZERO), to)
}

/// The three channels of `input` in type `to`.
fn channels3<T: HasAfEnum>(input: &Array<T>, to: DType) -> [Val; 3] {
    [channel(input, 0, to), channel(input, 1, to), channel(input, 2, to)]
}

/// Three one-channel values as one three-channel value: the output channel is chosen by its
/// index, so the three stay one lazy expression.
fn stack3(like: Dim4, [a, b, c]: [Val; 3]) -> Val {
    let idx = a.index(with_channels(like, 3), 2, DType::S32);
    Val::select(&idx.eq(&idx.k(0.0)), &a, &Val::select(&idx.eq(&idx.k(1.0)), &b, &c))
}

/// An empty result with `c` channels (on `input`'s backend), when `input` has no elements.
fn empty<T: HasAfEnum>(input: &Array<T>, c: u64) -> Option<Array<T>> {
    let dims = input.dims();
    (dims.elements() == 0)
        .then(|| with_backend_of(input, || Array::new_empty(with_channels(dims, c))))
}

fn rgb2gray_of<T: HasAfEnum>(func: &str, input: &Array<T>, r: f32, g: f32, b: f32) -> Array<T> {
    check_type(func, T::get_af_dtype(), &GRAY_TYPES);
    let dims = input.dims();
    if let Some(e) = empty(input, 1) {
        return e;
    }
    check_channels(func, dims, 3);
    let ct = float_type(T::get_af_dtype());
    let [cr, cg, cb] = channels3(input, ct);
    let y = &cr * r as f64 + &cg * g as f64 + &cb * b as f64;
    finish(y, T::get_af_dtype()).array()
}

fn gray2rgb_of<T: HasAfEnum>(func: &str, input: &Array<T>, r: f32, g: f32, b: f32) -> Array<T> {
    check_type(func, T::get_af_dtype(), &GRAY_TYPES);
    let dims = input.dims();
    if let Some(e) = empty(input, 3) {
        return e;
    }
    check_channels(func, dims, 1);
    let ct = float_type(T::get_af_dtype());
    let x = Val::of(input, ct);
    let rgb = stack3(dims, [&x * r as f64, &x * g as f64, &x * b as f64]);
    finish(rgb, T::get_af_dtype()).array()
}

/// Converts RGB images to grayscale: `r * red + g * green + b * blue` per pixel. The input
/// has 3 channels along dimension 2; the output has 1 (dimension 3 stays a batch).
///
/// Accepts f64, f32, i32, u32, i16, u16 and u8 (ArrayFire's list); integer results are
/// computed in f32 and rounded to nearest (see the module documentation). An empty input
/// gives an empty output.
///
/// ```
/// use emberfire::{dim4, rgb2gray, Array};
/// // one pixel, channels along dimension 2
/// let px = Array::new(&[0.5f32, 1.0, 0.25], dim4!(1, 1, 3));
/// let g = rgb2gray(&px, 0.2126, 0.7152, 0.0722).to_vec();
/// assert!((g[0] - (0.5 * 0.2126 + 0.7152 + 0.25 * 0.0722)).abs() < 1e-6);
/// ```
///
/// Panics if the input does not have 3 channels or its type is not accepted.
pub fn rgb2gray<T>(input: &Array<T>, r: f32, g: f32, b: f32) -> Array<T>
where
    T: HasAfEnum + GrayRGBConvertible,
{
    rgb2gray_of("rgb2gray", input, r, g, b)
}

/// Converts grayscale images to RGB: the channels are `r * gray`, `g * gray` and `b * gray`.
/// The input has 1 channel along dimension 2; the output has 3 (dimension 3 stays a batch).
///
/// Accepts the types of [`rgb2gray`], with the same rounding of integer results.
///
/// ```
/// use emberfire::{dim4, gray2rgb, Array};
/// let g = Array::new(&[10u8, 20], dim4!(2));
/// let rgb = gray2rgb(&g, 1.0, 0.5, 0.0);
/// assert_eq!(rgb.dims(), dim4!(2, 1, 3));
/// assert_eq!(rgb.to_vec(), vec![10, 20, 5, 10, 0, 0]);
/// ```
///
/// Panics if the input has more than 1 channel or its type is not accepted.
pub fn gray2rgb<T>(input: &Array<T>, r: f32, g: f32, b: f32) -> Array<T>
where
    T: HasAfEnum + GrayRGBConvertible,
{
    gray2rgb_of("gray2rgb", input, r, g, b)
}

fn float_three(func: &str, t: DType, dims: Dim4) {
    check_type(func, t, &[DType::F32, DType::F64]);
    check_channels(func, dims, 3);
}

fn hsv2rgb_of<T: HasAfEnum>(func: &str, input: &Array<T>) -> Array<T> {
    let (t, dims) = (T::get_af_dtype(), input.dims());
    if let Some(e) = empty(input, 3) {
        return e;
    }
    float_three(func, t, dims);
    let [h, s, v] = channels3(input, t);
    // ArrayFire's sector rule: m = (int)(6 h), the fraction 6 h - m, and the sector m % 6 in
    // C's sense (a negative hue lands in no sector and gives black).
    let h6 = &h * 6.0;
    let m = h6.unary(UnOp::Trunc);
    let f = &h6 - &m;
    let sector = m.rem(&m.k(6.0));
    let one = v.k(1.0);
    let p = &v * (&one - &s);
    let q = &v * (&one - &(&f * &s));
    let tt = &v * (&one - &(&(&one - &f) * &s));
    let zero = v.k(0.0);
    let pick = |c: [&Val; 6]| {
        (0..6)
            .rev()
            .fold(zero.clone(), |acc, k| Val::select(&sector.eq(&sector.k(k as f64)), c[k], &acc))
    };
    let r = pick([&v, &q, &p, &p, &tt, &v]);
    let g = pick([&tt, &v, &v, &q, &p, &p]);
    let b = pick([&p, &p, &tt, &v, &v, &q]);
    stack3(dims, [r, g, b]).array()
}

fn rgb2hsv_of<T: HasAfEnum>(func: &str, input: &Array<T>) -> Array<T> {
    let (t, dims) = (T::get_af_dtype(), input.dims());
    if let Some(e) = empty(input, 3) {
        return e;
    }
    float_three(func, t, dims);
    let [r, g, b] = channels3(input, t);
    let cmax = r.max(&g).max(&b);
    let cmin = r.min(&g).min(&b);
    let delta = &cmax - &cmin;
    let zero = r.k(0.0);
    // ArrayFire tests red, then green, then blue, each overriding the last: blue wins ties
    let from_r = &(&g - &b) / &delta + Val::select(&g.lt(&b), &r.k(6.0), &zero);
    let from_g = &(&b - &r) / &delta + 2.0;
    let from_b = &(&r - &g) / &delta + 4.0;
    let h = Val::select(&cmax.eq(&b), &from_b, &Val::select(&cmax.eq(&g), &from_g, &from_r));
    let h = Val::select(&cmax.neq(&cmin), &(&h / 6.0), &zero);
    let s = Val::select(&cmax.eq(&zero), &zero, &(&delta / &cmax));
    stack3(dims, [h, s, cmax]).array()
}

/// Converts HSV images (hue, saturation, value in `[0, 1]`, along dimension 2) to RGB, with
/// ArrayFire's formula: the sector `m = trunc(6 h)` and its fraction pick the channels.
///
/// f32 and f64 only; images batched along dimension 3. An empty input gives an empty output.
///
/// ```
/// use emberfire::{dim4, hsv2rgb, Array};
/// let hsv = Array::new(&[1.0f32 / 3.0, 1.0, 0.5], dim4!(1, 1, 3)); // pure green, half value
/// let rgb = hsv2rgb(&hsv).to_vec();
/// assert!(rgb[0].abs() < 1e-6 && (rgb[1] - 0.5).abs() < 1e-6 && rgb[2].abs() < 1e-6);
/// ```
///
/// Panics if the input does not have 3 channels.
pub fn hsv2rgb<T>(input: &Array<T>) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    hsv2rgb_of("hsv2rgb", input)
}

/// Converts RGB images (in `[0, 1]`, channels along dimension 2) to HSV: value is the
/// largest channel, saturation `(max - min) / max` (0 for black), hue in `[0, 1)` (0 for
/// grays).
///
/// f32 and f64 only; images batched along dimension 3. An empty input gives an empty output.
///
/// ```
/// use emberfire::{dim4, rgb2hsv, Array};
/// let rgb = Array::new(&[0.0f64, 0.0, 0.8], dim4!(1, 1, 3)); // blue
/// let hsv = rgb2hsv(&rgb).to_vec();
/// assert!((hsv[0] - 2.0 / 3.0).abs() < 1e-12 && hsv[1] == 1.0 && hsv[2] == 0.8);
/// ```
///
/// Panics if the input does not have 3 channels.
pub fn rgb2hsv<T>(input: &Array<T>) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    rgb2hsv_of("rgb2hsv", input)
}

fn rgb2ycbcr_of<T: HasAfEnum>(func: &str, input: &Array<T>, standard: YCCStd) -> Array<T> {
    let (t, dims) = (T::get_af_dtype(), input.dims());
    if let Some(e) = empty(input, 3) {
        return e;
    }
    float_three(func, t, dims);
    let (kb, kr) = standard.weights();
    let kl = 1.0 - kb - kr;
    let [r, g, b] = channels3(input, t);
    let mix = |x: f64, y: f64, z: f64| &(&(&r * x) + &(&g * y)) + &(&b * z);
    let ey = mix(kr, kl, kb);
    let ecr = mix(0.5, 0.5 * kl / (kr - 1.0), 0.5 * kb / (kr - 1.0));
    let ecb = mix(0.5 * kr / (kb - 1.0), 0.5 * kl / (kb - 1.0), 0.5);
    let y = &ey * 219.0 + 16.0;
    let cb = &ecb * 224.0 + 128.0;
    let cr = &ecr * 224.0 + 128.0;
    stack3(dims, [y, cb, cr]).array()
}

fn ycbcr2rgb_of<T: HasAfEnum>(func: &str, input: &Array<T>, standard: YCCStd) -> Array<T> {
    let (t, dims) = (T::get_af_dtype(), input.dims());
    if let Some(e) = empty(input, 3) {
        return e;
    }
    float_three(func, t, dims);
    let (kb, kr) = standard.weights();
    let kl = 1.0 - kb - kr;
    let [y, cb, cr] = channels3(input, t);
    let y = &(&y - 16.0) / 219.0;
    let cb = &cb - 128.0;
    let cr = &cr - 128.0;
    let r = &y + &(&cr * ((1.0 - kr) / 112.0));
    let g =
        &(&y + &(&cr * ((kr - 1.0) * kr / kl / 112.0))) + &(&cb * ((kb - 1.0) * kb / kl / 112.0));
    let b = &y + &(&cb * ((1.0 - kb) / 112.0));
    stack3(dims, [r, g, b]).array()
}

/// Converts RGB images (in `[0, 1]`, channels along dimension 2) to YCbCr with the standard's
/// weights: `Y = 16 + 219 Ey` and `Cb`, `Cr` = `128 + 224` times the scaled colour
/// differences, in the channel order Y, Cb, Cr.
///
/// f32 and f64 only; images batched along dimension 3. An empty input gives an empty output.
///
/// ```
/// use emberfire::{dim4, rgb2ycbcr, Array, YCCStd};
/// let black = Array::new(&[0.0f32, 0.0, 0.0], dim4!(1, 1, 3));
/// assert_eq!(rgb2ycbcr(&black, YCCStd::YCC_601).to_vec(), vec![16.0, 128.0, 128.0]);
/// ```
///
/// Panics if the input does not have 3 channels.
pub fn rgb2ycbcr<T>(input: &Array<T>, standard: YCCStd) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    rgb2ycbcr_of("rgb2ycbcr", input, standard)
}

/// Converts YCbCr images (channels Y, Cb, Cr along dimension 2) to RGB in `[0, 1]`, the
/// inverse of [`rgb2ycbcr`] with the same standard.
///
/// f32 and f64 only; images batched along dimension 3. An empty input gives an empty output.
///
/// ```
/// use emberfire::{dim4, rgb2ycbcr, ycbcr2rgb, Array, YCCStd};
/// let rgb = Array::new(&[0.2f64, 0.4, 0.6], dim4!(1, 1, 3));
/// let back = ycbcr2rgb(&rgb2ycbcr(&rgb, YCCStd::YCC_2020), YCCStd::YCC_2020).to_vec();
/// for (x, y) in back.iter().zip(&[0.2, 0.4, 0.6]) {
///     assert!((x - y).abs() < 1e-12);
/// }
/// ```
///
/// Panics if the input does not have 3 channels.
pub fn ycbcr2rgb<T>(input: &Array<T>, standard: YCCStd) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    ycbcr2rgb_of("ycbcr2rgb", input, standard)
}

/// Converts images from `fromspace` to `tospace`, with the pairs ArrayFire converts:
///
/// | from → to | as |
/// |---|---|
/// | RGB → GRAY | [`rgb2gray`] with the BT.709 weights 0.2126, 0.7152, 0.0722 |
/// | GRAY → RGB | [`gray2rgb`] with factors 1, 1, 1 |
/// | RGB → HSV, HSV → RGB | [`rgb2hsv`], [`hsv2rgb`] |
/// | RGB → YCbCr, YCbCr → RGB | [`rgb2ycbcr`], [`ycbcr2rgb`] with BT.601 |
/// | any space to itself | the input, unchanged |
///
/// The element type must be one the conversion accepts (f32 and f64 for HSV and YCbCr).
///
/// ```
/// use emberfire::{color_space, dim4, Array, ColorSpace};
/// let gray = Array::new(&[0.25f32, 0.5], dim4!(2));
/// let rgb = color_space(&gray, ColorSpace::RGB, ColorSpace::GRAY);
/// assert_eq!(rgb.to_vec(), vec![0.25, 0.5, 0.25, 0.5, 0.25, 0.5]);
/// ```
///
/// Panics for any other pair, naming the two spaces, or for an element type the conversion
/// does not accept.
pub fn color_space<T>(input: &Array<T>, tospace: ColorSpace, fromspace: ColorSpace) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    use ColorSpace::*;
    let func = "color_space";
    match (fromspace, tospace) {
        (f, t) if f == t => input.clone(),
        (RGB, GRAY) => rgb2gray_of(func, input, 0.2126, 0.7152, 0.0722),
        (GRAY, RGB) => gray2rgb_of(func, input, 1.0, 1.0, 1.0),
        (RGB, HSV) => rgb2hsv_of(func, input),
        (HSV, RGB) => hsv2rgb_of(func, input),
        (RGB, YCbCr) => rgb2ycbcr_of(func, input, YCCStd::YCC_601),
        (YCbCr, RGB) => ycbcr2rgb_of(func, input, YCCStd::YCC_601),
        (f, t) => panic!(
            "color_space: no conversion from fromspace {f:?} to tospace {t:?} (convert through \
             RGB)"
        ),
    }
}
