//! Image processing against references computed here in f64, pixel by pixel with plain loops:
//! colour conversions written from their formulas, window filters by visiting every window
//! position, moments and histograms by counting.

mod common;

use common::{assert_array, Elem, Rng, Rng64, SeedableRng, Tol, V};
use emberfire::*;

// ---- helpers --------------------------------------------------------------------------------

/// Image sizes (rows, columns): a pixel, a row, a column, odd sizes and a larger one.
const SIZES: [(usize, usize); 6] = [(1, 1), (1, 7), (6, 1), (3, 5), (8, 6), (67, 41)];

fn d4(a: usize, b: usize, c: usize, e: usize) -> Dim4 {
    dim4!(a as u64, b as u64, c as u64, e as u64)
}

/// Linear index of (row, column, channel, batch) in dims `d`.
fn at(d: [usize; 4], y: usize, x: usize, c: usize, b: usize) -> usize {
    y + d[0] * (x + d[1] * (c + d[2] * b))
}

/// `n` random values in `[lo, hi)`, converted to `T` (integers truncate).
fn uniform<T: Elem>(r: &mut Rng64, n: usize, lo: f64, hi: f64) -> Vec<T> {
    (0..n).map(|_| T::from_v(V::F(r.gen_range(lo..hi)))).collect()
}

fn f64s<T: Elem>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_v().f()).collect()
}

/// Asserts a result against real reference values: floating types within `factor` times the
/// type's tolerance relative to `|want| + scale`; integer types as the reference rounded to
/// nearest, where a result computed in f32 may round a value within f32's precision of a half
/// either way.
fn check<O: Elem>(got: &Array<O>, dims: Dim4, want: &[f64], factor: f64, scale: f64, what: &str) {
    if O::TY.dtype.is_integer() {
        assert_eq!(got.dims(), dims, "{what}: dims");
        assert_eq!(got.get_type(), O::TY.dtype, "{what}: type");
        let g = got.to_vec();
        assert_eq!(g.len(), want.len(), "{what}: element count");
        for (i, (x, &w)) in g.iter().zip(want).enumerate() {
            let x = x.to_v().f();
            // out-of-range results saturate, as the conversion to the type does
            let ok =
                x == O::from_v(V::F(w.round())).to_v().f() || (x - w).abs() <= 0.5 + w.abs() * 4e-7;
            assert!(ok, "{what}, element {i}: got {x}, want {w} rounded");
        }
        return;
    }
    let w: Vec<V> = want.iter().map(|&x| V::F(x)).collect();
    assert_array(got, dims, &w, Tol::x(factor).scale(scale), what);
}

// ---- colour ---------------------------------------------------------------------------------

fn gray_ref(x: &[f64], d: [usize; 4], w: [f64; 3]) -> Vec<f64> {
    let od = [d[0], d[1], 1, d[3]];
    let mut out = vec![0.0; od.iter().product()];
    for b in 0..d[3] {
        for xx in 0..d[1] {
            for y in 0..d[0] {
                out[at(od, y, xx, 0, b)] = (0..3).map(|c| w[c] * x[at(d, y, xx, c, b)]).sum();
            }
        }
    }
    out
}

fn rgb2gray_case<T: Elem + GrayRGBConvertible>(seed: u64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in SIZES {
        for batch in [1, 2] {
            let d = [h, w, 3, batch];
            let n = d.iter().product();
            let x: Vec<T> = uniform(&mut r, n, 0.0, hi);
            let wts =
                [r.gen_range(0.0..1.0f32), r.gen_range(0.0..1.0f32), r.gen_range(0.0..1.0f32)];
            let a = Array::new(&x, d4(h, w, 3, batch));
            let got = rgb2gray(&a, wts[0], wts[1], wts[2]);
            let want = gray_ref(&f64s(&x), d, wts.map(|v| v as f64));
            check(
                &got,
                d4(h, w, 1, batch),
                &want,
                4.0,
                hi,
                &format!("rgb2gray {} {h}x{w}x{batch}", T::TY.name),
            );
        }
    }
}

#[test]
fn rgb2gray_matches_weighted_sum() {
    rgb2gray_case::<f32>(1, 1.0);
    rgb2gray_case::<f64>(2, 1.0);
    rgb2gray_case::<u8>(3, 256.0);
    rgb2gray_case::<i16>(4, 1000.0);
    rgb2gray_case::<u32>(5, 10000.0);
}

fn gray2rgb_case<T: Elem + GrayRGBConvertible>(seed: u64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in SIZES {
        for batch in [1, 3] {
            let d = [h, w, 1, batch];
            let x: Vec<T> = uniform(&mut r, d.iter().product(), 0.0, hi);
            let f = [r.gen_range(0.0..1.0f32), r.gen_range(0.0..1.0f32), r.gen_range(0.0..1.0f32)];
            let got = gray2rgb(&Array::new(&x, d4(h, w, 1, batch)), f[0], f[1], f[2]);
            let od = [h, w, 3, batch];
            let xs = f64s(&x);
            let mut want = vec![0.0; od.iter().product()];
            for b in 0..batch {
                for c in 0..3 {
                    for xx in 0..w {
                        for y in 0..h {
                            want[at(od, y, xx, c, b)] = f[c] as f64 * xs[at(d, y, xx, 0, b)];
                        }
                    }
                }
            }
            check(
                &got,
                d4(h, w, 3, batch),
                &want,
                2.0,
                hi,
                &format!("gray2rgb {} {h}x{w}", T::TY.name),
            );
        }
    }
}

#[test]
fn gray2rgb_scales_each_channel() {
    gray2rgb_case::<f32>(11, 1.0);
    gray2rgb_case::<f64>(12, 1.0);
    gray2rgb_case::<u8>(13, 256.0);
    gray2rgb_case::<u16>(14, 60000.0);
    gray2rgb_case::<i32>(15, 1e6);
}

/// ArrayFire's HSV to RGB, written out per pixel.
fn hsv2rgb_px(h: f64, s: f64, v: f64) -> [f64; 3] {
    let m = (h * 6.0).trunc();
    let f = h * 6.0 - m;
    let (p, q, t) = (v * (1.0 - s), v * (1.0 - f * s), v * (1.0 - (1.0 - f) * s));
    match (m as i64) % 6 {
        0 => [v, t, p],
        1 => [q, v, p],
        2 => [p, v, t],
        3 => [p, q, v],
        4 => [t, p, v],
        5 => [v, p, q],
        _ => [0.0; 3],
    }
}

fn rgb2hsv_px(r: f64, g: f64, b: f64) -> [f64; 3] {
    let cmax = r.max(g).max(b);
    let cmin = r.min(g).min(b);
    let delta = cmax - cmin;
    let mut h = 0.0;
    if cmax != cmin {
        if cmax == r {
            h = (g - b) / delta + if g < b { 6.0 } else { 0.0 };
        }
        if cmax == g {
            h = (b - r) / delta + 2.0;
        }
        if cmax == b {
            h = (r - g) / delta + 4.0;
        }
        h /= 6.0;
    }
    [h, if cmax == 0.0 { 0.0 } else { delta / cmax }, cmax]
}

/// Applies a per-pixel three-channel function to an image of dims `d`.
fn per_pixel(x: &[f64], d: [usize; 4], f: impl Fn(f64, f64, f64) -> [f64; 3]) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    for b in 0..d[3] {
        for xx in 0..d[1] {
            for y in 0..d[0] {
                let p = f(x[at(d, y, xx, 0, b)], x[at(d, y, xx, 1, b)], x[at(d, y, xx, 2, b)]);
                for c in 0..3 {
                    out[at(d, y, xx, c, b)] = p[c];
                }
            }
        }
    }
    out
}

/// Random three-channel pixels in [0, 1] with some ties between channels, some grays and
/// blacks, and hues of exactly 0, 1 and below 0 (ArrayFire's sectors at the ends).
fn pixels<T: Elem>(r: &mut Rng64, n: usize) -> Vec<T> {
    let mut v: Vec<T> = uniform(r, n, 0.0, 1.0);
    for i in 0..n {
        match r.gen_range(0..12) {
            0 => v[i] = T::from_v(V::F(0.0)),
            1 => v[i] = T::from_v(V::F(1.0)),
            2 if i > 0 => v[i] = v[i - 1],
            3 => v[i] = T::from_v(V::F(-0.25)),
            _ => {}
        }
    }
    v
}

fn hsv_case<T: Elem + RealFloating>(seed: u64, factor: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in SIZES {
        for batch in [1, 2] {
            let d = [h, w, 3, batch];
            let x: Vec<T> = pixels(&mut r, d.iter().product());
            let a = Array::new(&x, d4(h, w, 3, batch));
            let xs = f64s(&x);
            let what = format!("{} {h}x{w}x3x{batch}", T::TY.name);
            let want = per_pixel(&xs, d, hsv2rgb_px);
            check(&hsv2rgb(&a), a.dims(), &want, factor, 1.0, &format!("hsv2rgb {what}"));
            let want = per_pixel(&xs, d, rgb2hsv_px);
            check(&rgb2hsv(&a), a.dims(), &want, factor, 1.0, &format!("rgb2hsv {what}"));
        }
    }
}

#[test]
fn hsv_conversions_follow_arrayfire_formulas() {
    hsv_case::<f32>(21, 8.0);
    hsv_case::<f64>(22, 8.0);
}

fn kbr(s: YCCStd) -> (f64, f64) {
    match s {
        YCCStd::YCC_601 => (0.114, 0.299),
        YCCStd::YCC_709 => (0.0722, 0.2126),
        YCCStd::YCC_2020 => (0.0593, 0.2627),
    }
}

fn rgb2ycbcr_px(s: YCCStd, r: f64, g: f64, b: f64) -> [f64; 3] {
    let (kb, kr) = kbr(s);
    let y = kr * r + (1.0 - kb - kr) * g + kb * b;
    let pb = (b - y) / (2.0 * (1.0 - kb));
    let pr = (r - y) / (2.0 * (1.0 - kr));
    [16.0 + 219.0 * y, 128.0 + 224.0 * pb, 128.0 + 224.0 * pr]
}

fn ycbcr2rgb_px(s: YCCStd, y: f64, cb: f64, cr: f64) -> [f64; 3] {
    let (kb, kr) = kbr(s);
    let (ey, pb, pr) = ((y - 16.0) / 219.0, (cb - 128.0) / 224.0, (cr - 128.0) / 224.0);
    let r = ey + 2.0 * (1.0 - kr) * pr;
    let b = ey + 2.0 * (1.0 - kb) * pb;
    let g = (ey - kr * r - kb * b) / (1.0 - kb - kr);
    [r, g, b]
}

fn ycc_case<T: Elem + RealFloating>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for s in [YCCStd::YCC_601, YCCStd::YCC_709, YCCStd::YCC_2020] {
        for (h, w) in SIZES {
            let d = [h, w, 3, 2];
            let n = d.iter().product();
            let x: Vec<T> = uniform(&mut r, n, 0.0, 1.0);
            let a = Array::new(&x, d4(h, w, 3, 2));
            let what = format!("{} {s:?} {h}x{w}", T::TY.name);
            let want = per_pixel(&f64s(&x), d, |p, q, t| rgb2ycbcr_px(s, p, q, t));
            check(&rgb2ycbcr(&a, s), a.dims(), &want, 8.0, 255.0, &format!("rgb2ycbcr {what}"));
            let y: Vec<T> = uniform(&mut r, n, 16.0, 240.0);
            let b = Array::new(&y, d4(h, w, 3, 2));
            let want = per_pixel(&f64s(&y), d, |p, q, t| ycbcr2rgb_px(s, p, q, t));
            check(&ycbcr2rgb(&b, s), b.dims(), &want, 64.0, 2.0, &format!("ycbcr2rgb {what}"));
        }
    }
}

#[test]
fn ycbcr_conversions_match_the_standards() {
    ycc_case::<f32>(31);
    ycc_case::<f64>(32);
}

#[test]
fn color_space_converts_every_pair_arrayfire_allows() {
    use ColorSpace::*;
    let mut r = Rng64::seed_from_u64(41);
    let (h, w) = (3, 5);
    let x: Vec<f32> = pixels(&mut r, h * w * 3);
    let rgb = Array::new(&x, d4(h, w, 3, 1));
    let g: Vec<f32> = uniform(&mut r, h * w, 0.0, 1.0);
    let gray = Array::new(&g, d4(h, w, 1, 1));
    let same = |a: &Array<f32>, b: &Array<f32>, what: &str| {
        assert_eq!(a.dims(), b.dims(), "{what}");
        assert_eq!(a.to_vec(), b.to_vec(), "{what}");
    };
    same(&color_space(&rgb, GRAY, RGB), &rgb2gray(&rgb, 0.2126, 0.7152, 0.0722), "rgb->gray");
    same(&color_space(&gray, RGB, GRAY), &gray2rgb(&gray, 1.0, 1.0, 1.0), "gray->rgb");
    same(&color_space(&rgb, HSV, RGB), &rgb2hsv(&rgb), "rgb->hsv");
    same(&color_space(&rgb, RGB, HSV), &hsv2rgb(&rgb), "hsv->rgb");
    same(&color_space(&rgb, YCbCr, RGB), &rgb2ycbcr(&rgb, YCCStd::YCC_601), "rgb->ycbcr");
    same(&color_space(&rgb, RGB, YCbCr), &ycbcr2rgb(&rgb, YCCStd::YCC_601), "ycbcr->rgb");
    for s in [GRAY, RGB, HSV, YCbCr] {
        same(&color_space(&rgb, s, s), &rgb, "identity");
    }
    // integer images convert between gray and RGB
    let u: Vec<u8> = uniform(&mut r, h * w * 3, 0.0, 256.0);
    let want = gray_ref(&f64s(&u), [h, w, 3, 1], [0.2126, 0.7152, 0.0722]);
    check(
        &color_space(&Array::new(&u, d4(h, w, 3, 1)), GRAY, RGB),
        d4(h, w, 1, 1),
        &want,
        1.0,
        0.0,
        "u8 rgb->gray",
    );
}

#[test]
#[should_panic(expected = "color_space: no conversion from fromspace GRAY to tospace HSV")]
fn color_space_refuses_gray_to_hsv() {
    let g = Array::new(&[0.5f32; 4], dim4!(2, 2));
    color_space(&g, ColorSpace::HSV, ColorSpace::GRAY);
}

#[test]
#[should_panic(expected = "color_space: no conversion from fromspace HSV to tospace YCbCr")]
fn color_space_refuses_hsv_to_ycbcr() {
    let g = Array::new(&[0.5f32; 3], dim4!(1, 1, 3));
    color_space(&g, ColorSpace::YCbCr, ColorSpace::HSV);
}

#[test]
#[should_panic(expected = "color_space: input of type u8 is not supported")]
fn color_space_refuses_integers_for_hsv() {
    let g = Array::new(&[1u8; 3], dim4!(1, 1, 3));
    color_space(&g, ColorSpace::HSV, ColorSpace::RGB);
}

#[test]
#[should_panic(expected = "color_space: input of type bool is not supported")]
fn color_space_refuses_bool_for_gray() {
    let g = Array::new(&[true; 3], dim4!(1, 1, 3));
    color_space(&g, ColorSpace::GRAY, ColorSpace::RGB);
}

#[test]
#[should_panic(expected = "rgb2gray: input must have 3 channel(s) along dimension 2")]
fn rgb2gray_needs_three_channels() {
    rgb2gray(&Array::new(&[0.5f32; 8], dim4!(2, 2, 2)), 0.3, 0.3, 0.3);
}

#[test]
#[should_panic(expected = "gray2rgb: input must have 1 channel(s) along dimension 2")]
fn gray2rgb_needs_one_channel() {
    gray2rgb(&Array::new(&[0.5f32; 6], dim4!(1, 2, 3)), 1.0, 1.0, 1.0);
}

#[test]
#[should_panic(expected = "hsv2rgb: input must have 3 channel(s) along dimension 2")]
fn hsv2rgb_needs_three_channels() {
    hsv2rgb(&Array::new(&[0.5f64; 4], dim4!(2, 2)));
}

#[test]
#[should_panic(expected = "ycbcr2rgb: input must have 3 channel(s) along dimension 2")]
fn ycbcr2rgb_needs_three_channels() {
    ycbcr2rgb(&Array::new(&[0.5f32; 8], dim4!(1, 2, 4)), YCCStd::YCC_709);
}

#[test]
fn colour_conversions_of_empty_images_are_empty() {
    let e = Array::<f32>::new_empty(dim4!(0, 4, 3));
    assert_eq!(rgb2gray(&e, 0.3, 0.3, 0.3).dims(), dim4!(0, 4, 1));
    assert_eq!(rgb2hsv(&e).elements(), 0);
    assert_eq!(hsv2rgb(&e).elements(), 0);
    assert_eq!(rgb2ycbcr(&e, YCCStd::YCC_601).elements(), 0);
    assert_eq!(ycbcr2rgb(&e, YCCStd::YCC_601).elements(), 0);
    let g = Array::<u8>::new_empty(dim4!(3, 0));
    assert_eq!(gray2rgb(&g, 1.0, 1.0, 1.0).dims(), Dim4::new(&[3, 0, 3, 1]));
}
