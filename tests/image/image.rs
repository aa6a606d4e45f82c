//! Image processing against references computed here in f64, pixel by pixel with plain loops:
//! colour conversions written from their formulas, window filters by visiting every window
//! position, moments and histograms by counting.

use crate::common;

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

// ---- filters --------------------------------------------------------------------------------

#[test]
fn gaussian_kernel_matches_its_formula() {
    for (rows, cols) in [(1, 1), (1, 5), (3, 1), (3, 5), (7, 9), (4, 6)] {
        for (sr, sc) in [(0.0, 0.0), (1.5, 0.7), (-1.0, 2.0)] {
            let got = gaussian_kernel(rows, cols, sr, sc);
            let sig = |s: f64, n: i32| if s > 0.0 { s } else { 0.25 * n as f64 };
            let mut want = Vec::new();
            for j in 0..cols {
                for i in 0..rows {
                    let mut e = 0.0;
                    if rows > 1 {
                        let d = (i as f64 - (rows - 1) as f64 / 2.0) / sig(sr, rows);
                        e += d * d;
                    }
                    if cols > 1 {
                        let d = (j as f64 - (cols - 1) as f64 / 2.0) / sig(sc, cols);
                        e += d * d;
                    }
                    want.push((-0.5 * e).exp());
                }
            }
            let total: f64 = want.iter().sum();
            let want: Vec<f64> = want.iter().map(|w| w / total).collect();
            let what = format!("gaussian_kernel({rows}, {cols}, {sr}, {sc})");
            check(&got, d4(rows as usize, cols as usize, 1, 1), &want, 4.0, 0.0, &what);
        }
    }
}

#[test]
#[should_panic(expected = "gaussian_kernel: rows must be at least 1")]
fn gaussian_kernel_refuses_no_rows() {
    gaussian_kernel(0, 3, 1.0, 1.0);
}

#[test]
#[should_panic(expected = "gaussian_kernel: cols must be at least 1")]
fn gaussian_kernel_refuses_negative_cols() {
    gaussian_kernel(3, -2, 1.0, 1.0);
}

/// Shapes with batches along dimensions 2 and 3.
fn batched() -> Vec<[usize; 4]> {
    let mut v: Vec<[usize; 4]> = SIZES.iter().map(|&(h, w)| [h, w, 1, 1]).collect();
    v.extend([[3, 5, 2, 1], [4, 1, 2, 3], [1, 6, 1, 2], [5, 4, 3, 2]]);
    v
}

fn gradient_case<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        let n: usize = d.iter().product();
        let x: Vec<T> = (0..n).map(|_| T::small(&mut r)).collect();
        let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
        let (g0, g1) = gradient(&a);
        let xs: Vec<common::V> = x.iter().map(|v| v.to_v()).collect();
        let c = |i: usize| xs[i].c();
        let mut want = [vec![], vec![]];
        for (axis, w) in want.iter_mut().enumerate() {
            *w = (0..n)
                .map(|lin| {
                    let mut p = [0; 4];
                    let mut rest = lin;
                    for k in 0..4 {
                        p[k] = rest % d[k];
                        rest /= d[k];
                    }
                    let len = d[axis];
                    if len == 1 {
                        return common::V::C(c64::new(0.0, 0.0));
                    }
                    let mut lo = p;
                    let mut hi = p;
                    let (i, f) = if p[axis] == 0 {
                        (0, 1.0)
                    } else if p[axis] == len - 1 {
                        (len - 2, 1.0)
                    } else {
                        (p[axis] - 1, 0.5)
                    };
                    lo[axis] = i;
                    hi[axis] = if p[axis] == 0 {
                        1
                    } else if p[axis] == len - 1 {
                        len - 1
                    } else {
                        p[axis] + 1
                    };
                    let v = (c(at(d, hi[0], hi[1], hi[2], hi[3]))
                        - c(at(d, lo[0], lo[1], lo[2], lo[3])))
                        * f;
                    common::V::C(v)
                })
                .collect();
        }
        let tol = Tol::x(4.0).scale(8.0);
        assert_array(&g0, a.dims(), &want[0], tol, &format!("gradient dx {} {d:?}", T::TY.name));
        assert_array(&g1, a.dims(), &want[1], tol, &format!("gradient dy {} {d:?}", T::TY.name));
    }
}

#[test]
fn gradient_is_central_inside_and_one_sided_at_edges() {
    gradient_case::<f32>(51);
    gradient_case::<f64>(52);
    gradient_case::<c32>(53);
    gradient_case::<c64>(54);
    let e = Array::<f32>::new_empty(dim4!(0, 3));
    assert_eq!(gradient(&e).0.dims(), e.dims());
}

/// OpenCV's reflect-101 of coordinate `x` in `0..n` (the pixel itself when `n == 1`).
fn reflect101(x: i64, n: i64) -> usize {
    if n == 1 {
        return 0;
    }
    let p = 2 * (n - 1);
    let m = x.rem_euclid(p);
    (if m < n { m } else { p - m }) as usize
}

fn sobel_case<T: Elem + ImageFilterType>(seed: u64, lo: f64, hi: f64)
where
    T::SobelOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        let n: usize = d.iter().product();
        let x: Vec<T> = uniform(&mut r, n, lo, hi);
        let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
        let (dx, dy) = sobel(&a, 3);
        // the input converted to the output type first, as ArrayFire does
        let xs: Vec<f64> = x.iter().map(|v| T::SobelOutType::from_v(v.to_v()).to_v().f()).collect();
        let mut wx = vec![0.0; n];
        let mut wy = vec![0.0; n];
        for b in 0..d[3] {
            for c in 0..d[2] {
                for j in 0..d[1] {
                    for i in 0..d[0] {
                        let px = |di: i64, dj: i64| {
                            let y = reflect101(i as i64 + di, d[0] as i64);
                            let xx = reflect101(j as i64 + dj, d[1] as i64);
                            xs[at(d, y, xx, c, b)]
                        };
                        let o = at(d, i, j, c, b);
                        wx[o] = px(1, -1) + 2.0 * px(1, 0) + px(1, 1)
                            - px(-1, -1)
                            - 2.0 * px(-1, 0)
                            - px(-1, 1);
                        wy[o] = px(-1, 1) + 2.0 * px(0, 1) + px(1, 1)
                            - px(-1, -1)
                            - 2.0 * px(0, -1)
                            - px(1, -1);
                    }
                }
            }
        }
        let what = format!("sobel {} {d:?}", T::TY.name);
        check(&dx, a.dims(), &wx, 16.0, hi * 8.0, &format!("{what} dx"));
        check(&dy, a.dims(), &wy, 16.0, hi * 8.0, &format!("{what} dy"));
    }
}

#[test]
fn sobel_matches_the_3x3_kernels_with_reflected_borders() {
    sobel_case::<f32>(61, -1.0, 1.0);
    sobel_case::<f64>(62, -1.0, 1.0);
    sobel_case::<u8>(63, 0.0, 256.0);
    sobel_case::<i16>(64, -1000.0, 1000.0);
    sobel_case::<u32>(65, 0.0, 1e5);
    sobel_case::<bool>(66, 0.0, 2.0);
}

#[test]
#[should_panic(expected = "sobel: ker_size must be 3")]
fn sobel_refuses_other_sizes() {
    sobel(&Array::new(&[1.0f32; 25], dim4!(5, 5)), 5);
}

fn sat_case<T: Elem + RealNumber>(seed: u64, lo: f64, hi: f64, factor: f64)
where
    T::AggregateOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        let n: usize = d.iter().product();
        let x: Vec<T> = uniform(&mut r, n, lo, hi);
        let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
        let xs = f64s(&x);
        let mut want = vec![0.0; n];
        for b in 0..d[3] {
            for c in 0..d[2] {
                for j in 0..d[1] {
                    for i in 0..d[0] {
                        let mut s = 0.0;
                        for jj in 0..=j {
                            for ii in 0..=i {
                                s += xs[at(d, ii, jj, c, b)];
                            }
                        }
                        want[at(d, i, j, c, b)] = s;
                    }
                }
            }
        }
        check(&sat(&a), a.dims(), &want, factor, hi, &format!("sat {} {d:?}", T::TY.name));
    }
}

#[test]
fn sat_sums_every_rectangle_from_the_origin() {
    sat_case::<u8>(71, 0.0, 256.0, 1.0);
    sat_case::<i16>(72, -100.0, 100.0, 1.0);
    sat_case::<bool>(73, 0.0, 2.0, 1.0);
    sat_case::<u32>(74, 0.0, 1000.0, 1.0);
    sat_case::<f64>(75, -1.0, 1.0, 4000.0);
    sat_case::<f32>(76, -1.0, 1.0, 4000.0);
}

/// The summed-area table of `x` (dims `d`) by running sums in f64, image by image.
fn sat_ref(x: &[f64], d: [usize; 4]) -> Vec<f64> {
    let mut out = x.to_vec();
    let (w, h) = (d[0], d[1]);
    for img in out.chunks_mut((w * h).max(1)) {
        for j in 0..h {
            for i in 0..w {
                let mut s = img[i + j * w];
                if i > 0 {
                    s += img[i - 1 + j * w];
                }
                if j > 0 {
                    s += img[i + (j - 1) * w];
                }
                if i > 0 && j > 0 {
                    s -= img[i - 1 + (j - 1) * w];
                }
                img[i + j * w] = s;
            }
        }
    }
    out
}

fn sat_wide_case<T: Elem + RealNumber>(seed: u64, lo: f64, hi: f64, dims: &[[usize; 4]])
where
    T::AggregateOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for &d in dims {
        let n: usize = d.iter().product();
        // integers as whole values so that the f64 reference is exact
        let x: Vec<T> = uniform(&mut r, n, lo, hi);
        let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
        let want = sat_ref(&f64s(&x), d);
        check(&sat(&a), a.dims(), &want, 4000.0, hi, &format!("sat {} {d:?}", T::TY.name));
    }
}

#[test]
fn sat_of_wide_and_batched_images_matches_the_reference() {
    // Widths around what one block of the CUDA kernels covers (4096) and past it, widths that
    // are and are not multiples of 16-byte groups, heights cut into strips with a short last
    // one, several images.
    sat_wide_case::<f32>(81, -1.0, 1.0, &[[4096, 37, 1, 1], [4097, 3, 1, 1], [1000, 19, 2, 1]]);
    sat_wide_case::<u8>(82, 0.0, 256.0, &[[1024, 20, 2, 1], [1001, 17, 1, 1], [16, 40, 1, 3]]);
    sat_wide_case::<u16>(83, 0.0, 60000.0, &[[300, 17, 1, 3], [2, 100, 1, 1]]);
    sat_wide_case::<i32>(84, -1000.0, 1000.0, &[[257, 33, 1, 1], [4096, 2, 1, 1]]);
    sat_wide_case::<i64>(85, -1e6, 1e6, &[[129, 5, 2, 2]]);
    sat_wide_case::<u64>(86, 0.0, 1e6, &[[64, 64, 1, 1]]);
    sat_wide_case::<f64>(87, -1.0, 1.0, &[[2048, 18, 1, 1], [33, 1, 1, 1], [1, 50, 1, 1]]);
}

#[test]
fn sat_of_very_wide_and_very_tall_images_matches_the_reference() {
    // Rows of more than 32 chunks of 128 elements (the CUDA kernels' per-row carries walk them
    // 32 at a time), and more strips of 16 rows than the 16 groups their carries are summed in.
    sat_wide_case::<u8>(90, 0.0, 256.0, &[[9000, 20, 1, 1], [8193, 3, 2, 1]]);
    sat_wide_case::<f32>(91, -1.0, 1.0, &[[130, 600, 1, 1], [5000, 35, 1, 1]]);
    sat_wide_case::<i32>(92, -1000.0, 1000.0, &[[3, 1000, 2, 1]]);
}

#[test]
fn sat_reads_views_in_place() {
    // A view that starts one element in (no 16-byte alignment), one whose columns are every
    // other column of its parent, and a transposed view.
    let mut r = Rng64::seed_from_u64(89);
    let (w, h) = (1001usize, 40usize);
    let x: Vec<f32> = uniform(&mut r, w * h, -1.0, 1.0);
    let a = Array::new(&x, d4(w, h, 1, 1));
    let xs = f64s(&x);
    let pick = |rows: std::ops::Range<usize>, cols: &[usize]| -> Vec<f64> {
        cols.iter()
            .flat_map(|&j| rows.clone().map(move |i| (i, j)))
            .map(|(i, j)| xs[i + j * w])
            .collect()
    };
    let inner = index(&a, &[Seq::new(1.0, (w - 1) as f64, 1.0), Seq::default()]);
    let want = sat_ref(&pick(1..w, &(0..h).collect::<Vec<_>>()), [w - 1, h, 1, 1]);
    check(&sat(&inner), inner.dims(), &want, 4000.0, 1.0, "sat of an offset view");
    let every_other = index(&a, &[Seq::default(), Seq::new(0.0, (h - 1) as f64, 2.0)]);
    let cols: Vec<usize> = (0..h).step_by(2).collect();
    let want = sat_ref(&pick(0..w, &cols), [w, cols.len(), 1, 1]);
    check(&sat(&every_other), every_other.dims(), &want, 4000.0, 1.0, "sat of strided columns");
    let t = transpose(&a, false);
    let tx: Vec<f64> =
        (0..w).flat_map(|i| (0..h).map(move |j| (i, j))).map(|(i, j)| xs[i + j * w]).collect();
    let want = sat_ref(&tx, [h, w, 1, 1]);
    check(&sat(&t), t.dims(), &want, 4000.0, 1.0, "sat of a transposed image");
}

// ---- morphology and window filters -----------------------------------------------------------

/// The extremum over the mask's positive offsets of the positions inside the image; the
/// identity (`None`) where there is none. `x` has dims `d`, the mask `md` (3D).
fn morph_ref(
    x: &[f64],
    d: [usize; 4],
    mask: &[f64],
    md: [usize; 3],
    dilation: bool,
) -> Vec<Option<f64>> {
    let mut out = vec![None; x.len()];
    for b in 0..d[3] {
        for k in 0..d[2] {
            for j in 0..d[1] {
                for i in 0..d[0] {
                    let mut acc: Option<f64> = None;
                    for mk in 0..md[2] {
                        for mj in 0..md[1] {
                            for mi in 0..md[0] {
                                if mask[mi + md[0] * (mj + md[1] * mk)] <= 0.0 {
                                    continue;
                                }
                                let yi = i as i64 + mi as i64 - (md[0] / 2) as i64;
                                let xj = j as i64 + mj as i64 - (md[1] / 2) as i64;
                                let zk = k as i64 + mk as i64 - (md[2] / 2) as i64;
                                if yi < 0 || xj < 0 || zk < 0 {
                                    continue;
                                }
                                let (yi, xj, zk) = (yi as usize, xj as usize, zk as usize);
                                if yi >= d[0] || xj >= d[1] || zk >= d[2] {
                                    continue;
                                }
                                let v = x[at(d, yi, xj, zk, b)];
                                acc = Some(match acc {
                                    None => v,
                                    Some(a) if dilation => a.max(v),
                                    Some(a) => a.min(v),
                                });
                            }
                        }
                    }
                    out[at(d, i, j, k, b)] = acc;
                }
            }
        }
    }
    out
}

/// The identity of the fold for type `T`: its lowest value for a maximum, its highest for a
/// minimum (infinities for floats; false and true for bool).
fn identity<T: Elem>(dilation: bool) -> f64 {
    let v = if dilation { f64::NEG_INFINITY } else { f64::INFINITY };
    if T::TY.dtype == DType::B8 {
        return if dilation { 0.0 } else { 1.0 };
    }
    T::from_v(V::F(v)).to_v().f()
}

fn random_mask<T: Elem>(r: &mut Rng64, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_v(V::F(if r.gen_bool(0.6) { 1.0 } else { 0.0 }))).collect()
}

fn morph_case<T: Elem + ImageFilterType>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    let masks = [[1, 1], [3, 3], [5, 3], [2, 4], [1, 4], [3, 3]];
    for d in batched() {
        for (mi, m) in masks.iter().enumerate() {
            let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
            let mut mask: Vec<T> = random_mask(&mut r, m[0] * m[1]);
            if mi == masks.len() - 1 {
                mask = vec![T::from_v(V::F(0.0)); m[0] * m[1]]; // no position: the identity
            }
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            let ma = Array::new(&mask, d4(m[0], m[1], 1, 1));
            for dilation in [true, false] {
                let got = if dilation { dilate(&a, &ma) } else { erode(&a, &ma) };
                let want: Vec<T> = morph_ref(&f64s(&x), d, &f64s(&mask), [m[0], m[1], 1], dilation)
                    .into_iter()
                    .map(|v| T::from_v(V::F(v.unwrap_or_else(|| identity::<T>(dilation)))))
                    .collect();
                let what = format!(
                    "{} {} {d:?} mask {m:?}",
                    if dilation { "dilate" } else { "erode" },
                    T::TY.name
                );
                exact(&got, a.dims(), &want, &what);
            }
        }
    }
}

/// Asserts exact equality with reference values of the output type.
fn exact<O: Elem>(got: &Array<O>, dims: Dim4, want: &[O], what: &str) {
    assert_array(got, dims, &common::vs(want), Tol::EXACT, what);
}

#[test]
fn dilate_and_erode_fold_over_the_mask_inside_the_image() {
    morph_case::<u8>(81, 0.0, 256.0);
    morph_case::<i16>(82, -500.0, 500.0);
    morph_case::<f32>(83, -1.0, 1.0);
    morph_case::<f64>(84, -1.0, 1.0);
    morph_case::<bool>(85, 0.0, 2.0);
    morph_case::<u32>(86, 0.0, 1e9);
    morph_case::<i32>(87, -1e9, 1e9);
    morph_case::<u16>(88, 0.0, 65536.0);
}

fn morph3_case<T: Elem + ImageFilterType>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    let volumes = [[1, 1, 1, 1], [3, 5, 4, 1], [4, 3, 2, 2], [1, 6, 3, 1], [7, 5, 6, 1]];
    let masks = [[3, 3, 3], [1, 1, 1], [2, 3, 1], [3, 1, 4]];
    for d in volumes {
        for m in masks {
            let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
            let mask: Vec<T> = random_mask(&mut r, m.iter().product());
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            let ma = Array::new(&mask, d4(m[0], m[1], m[2], 1));
            for dilation in [true, false] {
                let got = if dilation { dilate3(&a, &ma) } else { erode3(&a, &ma) };
                let want: Vec<T> = morph_ref(&f64s(&x), d, &f64s(&mask), m, dilation)
                    .into_iter()
                    .map(|v| T::from_v(V::F(v.unwrap_or_else(|| identity::<T>(dilation)))))
                    .collect();
                let what = format!(
                    "{}3 {} {d:?} mask {m:?}",
                    if dilation { "dilate" } else { "erode" },
                    T::TY.name
                );
                exact(&got, a.dims(), &want, &what);
            }
        }
    }
}

#[test]
fn dilate3_and_erode3_fold_over_the_volume_mask() {
    morph3_case::<f32>(91, -1.0, 1.0);
    morph3_case::<u8>(92, 0.0, 256.0);
    morph3_case::<f64>(93, -1.0, 1.0);
    morph3_case::<bool>(94, 0.0, 2.0);
}

#[test]
#[should_panic(expected = "dilate: mask must be a non-empty 2D array")]
fn dilate_refuses_a_3d_mask() {
    let a = Array::new(&[1.0f32; 9], dim4!(3, 3));
    dilate(&a, &Array::new(&[1.0f32; 8], dim4!(2, 2, 2)));
}

#[test]
#[should_panic(expected = "erode3: mask must be a non-empty 3D array")]
fn erode3_refuses_an_empty_mask() {
    let a = Array::new(&[1u8; 8], dim4!(2, 2, 2));
    erode3(&a, &Array::<u8>::new_empty(dim4!(0, 3, 3)));
}

fn box_case<T: Elem + ImageFilterType>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        for (l, w) in [(1u64, 1u64), (3, 3), (3, 5), (2, 2), (5, 1)] {
            let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            let ones = vec![1.0; (l * w) as usize];
            for dilation in [true, false] {
                let got = if dilation {
                    maxfilt(&a, l, w, BorderType::ZERO)
                } else {
                    minfilt(&a, l, w, BorderType::ZERO)
                };
                let want: Vec<T> =
                    morph_ref(&f64s(&x), d, &ones, [l as usize, w as usize, 1], dilation)
                        .into_iter()
                        .map(|v| T::from_v(V::F(v.expect("the centre is inside"))))
                        .collect();
                let what = format!(
                    "{} {} {d:?} {l}x{w}",
                    if dilation { "maxfilt" } else { "minfilt" },
                    T::TY.name
                );
                exact(&got, a.dims(), &want, &what);
            }
        }
    }
}

#[test]
fn minfilt_and_maxfilt_take_the_window_inside_the_image() {
    box_case::<f32>(101, -1.0, 1.0);
    box_case::<u8>(102, 0.0, 256.0);
    box_case::<i16>(103, -300.0, 300.0);
    box_case::<f64>(104, -1.0, 1.0);
}

#[test]
#[should_panic(expected = "maxfilt: etype SYMMETRIC is not supported (ZERO only")]
fn maxfilt_refuses_symmetric_borders() {
    maxfilt(&Array::new(&[1.0f32; 9], dim4!(3, 3)), 3, 3, BorderType::SYMMETRIC);
}

#[test]
#[should_panic(expected = "minfilt: wwid must be at least 1")]
fn minfilt_refuses_an_empty_window() {
    minfilt(&Array::new(&[1.0f32; 9], dim4!(3, 3)), 3, 0, BorderType::ZERO);
}

/// The median of a `wl x ww` window per element (windows odd), ZERO or reflect-101 borders.
fn median_ref(x: &[f64], d: [usize; 4], wl: usize, ww: usize, sym: bool) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    for b in 0..d[3] {
        for c in 0..d[2] {
            for j in 0..d[1] {
                for i in 0..d[0] {
                    let mut win = Vec::new();
                    for dj in 0..ww {
                        for di in 0..wl {
                            let yi = i as i64 + di as i64 - (wl / 2) as i64;
                            let xj = j as i64 + dj as i64 - (ww / 2) as i64;
                            let inside =
                                yi >= 0 && xj >= 0 && (yi as usize) < d[0] && (xj as usize) < d[1];
                            win.push(if inside {
                                x[at(d, yi as usize, xj as usize, c, b)]
                            } else if sym {
                                x[at(
                                    d,
                                    reflect101(yi, d[0] as i64),
                                    reflect101(xj, d[1] as i64),
                                    c,
                                    b,
                                )]
                            } else {
                                0.0
                            });
                        }
                    }
                    win.sort_by(|p, q| p.partial_cmp(q).unwrap());
                    out[at(d, i, j, c, b)] = win[win.len() / 2];
                }
            }
        }
    }
    out
}

fn medfilt_case<T: Elem + ImageFilterType>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    let shapes =
        [[1, 1, 1, 1], [1, 7, 1, 1], [3, 5, 1, 1], [4, 6, 2, 1], [9, 8, 1, 2], [67, 41, 1, 1]];
    for d in shapes {
        for (l, w) in [(1usize, 1usize), (3, 3), (5, 5), (3, 5), (1, 3)] {
            if d[0] * d[1] > 1000 && l * w > 9 {
                continue; // the large image with the small windows only: CI time
            }
            let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            for (etype, sym) in [(BorderType::ZERO, false), (BorderType::SYMMETRIC, true)] {
                let got = medfilt(&a, l as u64, w as u64, etype);
                // a column is filtered in 1D with a window of wlen, as ArrayFire does
                let column = d[1] * d[2] * d[3] == 1;
                let want: Vec<T> = median_ref(&f64s(&x), d, l, if column { 1 } else { w }, sym)
                    .into_iter()
                    .map(|v| T::from_v(V::F(v)))
                    .collect();
                exact(
                    &got,
                    a.dims(),
                    &want,
                    &format!("medfilt {} {d:?} {l}x{w} {etype:?}", T::TY.name),
                );
            }
        }
    }
}

#[test]
fn medfilt_takes_the_window_median_with_both_borders() {
    medfilt_case::<u8>(111, 0.0, 256.0);
    medfilt_case::<f32>(112, -1.0, 1.0);
    medfilt_case::<i16>(113, -100.0, 100.0);
    medfilt_case::<f64>(114, -1.0, 1.0);
    medfilt_case::<bool>(115, 0.0, 2.0);
}

#[test]
fn medfilt1_filters_columns_and_medfilt_treats_a_column_so() {
    let mut r = Rng64::seed_from_u64(116);
    for d in [[1, 1, 1, 1], [7, 1, 1, 1], [9, 3, 2, 1], [5, 2, 1, 2], [67, 1, 1, 1]] {
        for wl in [1usize, 3, 5, 7] {
            let x: Vec<f32> = uniform(&mut r, d.iter().product(), -1.0, 1.0);
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            for (etype, sym) in [(BorderType::ZERO, false), (BorderType::SYMMETRIC, true)] {
                let want: Vec<f32> =
                    median_ref(&f64s(&x), d, wl, 1, sym).into_iter().map(|v| v as f32).collect();
                let what = format!("medfilt1 {d:?} {wl} {etype:?}");
                exact(&medfilt1(&a, wl as u64, etype), a.dims(), &want, &what);
                if d[1] * d[2] * d[3] == 1 {
                    // a column: ArrayFire's medfilt filters it in 1D with a window of wlen
                    exact(
                        &medfilt(&a, wl as u64, 3, etype),
                        a.dims(),
                        &want,
                        &format!("{what} via medfilt"),
                    );
                }
            }
        }
    }
}

#[test]
#[should_panic(expected = "medfilt: wlen must be odd (got 4)")]
fn medfilt_refuses_even_windows() {
    medfilt(&Array::new(&[1.0f32; 25], dim4!(5, 5)), 4, 4, BorderType::ZERO);
}

#[test]
#[should_panic(expected = "medfilt1: wlen must be odd (got 2)")]
fn medfilt1_refuses_even_windows() {
    medfilt1(&Array::new(&[1u8; 5], dim4!(5)), 2, BorderType::SYMMETRIC);
}

#[test]
#[should_panic(expected = "medfilt: etype CLAMP_TO_EDGE is not supported")]
fn medfilt_refuses_clamped_borders() {
    medfilt(&Array::new(&[1.0f32; 25], dim4!(5, 5)), 3, 3, BorderType::CLAMP_TO_EDGE);
}

// ---- moments and histogram equalisation ------------------------------------------------------

fn moments_case<T: Elem + MomentsComputable>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    use MomentType::*;
    for d in batched() {
        let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
        let xs = f64s(&x);
        let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
        for (m, which) in [
            (M00, vec![0]),
            (M01, vec![1]),
            (M10, vec![2]),
            (M11, vec![3]),
            (FIRST_ORDER, vec![0, 1, 2, 3]),
        ] {
            let mut want = Vec::new();
            for b in 0..d[3] {
                for c in 0..d[2] {
                    for &k in &which {
                        let mut s = 0.0;
                        for j in 0..d[1] {
                            for i in 0..d[0] {
                                let w = match k {
                                    0 => 1.0,
                                    1 => i as f64,
                                    2 => j as f64,
                                    _ => (i * j) as f64,
                                };
                                s += w * xs[at(d, i, j, c, b)];
                            }
                        }
                        want.push(s);
                    }
                }
            }
            let got = moments(&a, m);
            let what = format!("moments {} {d:?} {m:?}", T::TY.name);
            check(&got, d4(which.len(), 1, d[2], d[3]), &want, 4.0, 0.0, &what);
            if d[2] * d[3] == 1 {
                let one = moments_all(&a, m);
                assert!(
                    (one - want[0]).abs() <= 1e-5 * want[0].abs().max(1.0),
                    "{what}: moments_all {one} vs {}",
                    want[0]
                );
            }
        }
    }
}

#[test]
fn moments_weight_by_row_and_column_indices() {
    moments_case::<f32>(121, -1.0, 1.0);
    moments_case::<f64>(122, -1.0, 1.0);
    moments_case::<u8>(123, 0.0, 256.0);
    moments_case::<i32>(124, -1000.0, 1000.0);
    moments_case::<u16>(125, 0.0, 60000.0);
}

#[test]
#[should_panic(expected = "moments_all: input must be one image")]
fn moments_all_refuses_a_batch() {
    moments_all(&Array::new(&[1.0f32; 8], dim4!(2, 2, 2)), MomentType::M00);
}

fn hist_equal_case<T: Elem + RealNumber>(seed: u64, levels: usize) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in SIZES {
        let x: Vec<T> = uniform(&mut r, h * w, 0.0, levels as f64);
        let a = Array::new(&x, d4(h, w, 1, 1));
        let hist = histogram(&a, levels as u32, 0.0, levels as f64);
        // reference: the histogram counted here, its cumulative sum normalised
        let mut counts = vec![0.0f64; levels];
        for v in f64s(&x) {
            counts[(v.floor() as usize).min(levels - 1)] += 1.0;
        }
        assert_eq!(hist.to_vec().iter().map(|&c| c as f64).collect::<Vec<_>>(), counts);
        let cdf: Vec<f64> = counts
            .iter()
            .scan(0.0, |s, c| {
                *s += c;
                Some(*s)
            })
            .collect();
        let (lo, hi) = (cdf[0], cdf[levels - 1]);
        if hi == lo {
            continue; // every pixel in the first bin: the scale is infinite, as in ArrayFire
        }
        let got = hist_equal(&a, &hist).to_vec();
        for (i, v) in f64s(&x).iter().enumerate() {
            let want = (cdf[v.trunc() as usize] - lo) * (levels - 1) as f64 / (hi - lo);
            let g = got[i].to_v().f();
            let ok = if T::TY.dtype.is_integer() {
                // computed in f32 and truncated: one off where the value is within f32's
                // precision of an integer
                g == want.trunc() || ((g - want).abs() <= 1.0 && (want - want.round()).abs() < 1e-4)
            } else {
                (g - want).abs() <= 1e-5 * want.abs().max(1.0)
            };
            assert!(ok, "hist_equal {} {h}x{w} pixel {i}: got {g}, want {want}", T::TY.name);
        }
    }
}

#[test]
fn hist_equal_maps_through_the_normalised_cdf() {
    hist_equal_case::<u8>(131, 16);
    hist_equal_case::<f32>(132, 8);
    hist_equal_case::<f64>(133, 32);
    hist_equal_case::<i32>(134, 5);
}

#[test]
#[should_panic(expected = "hist_equal: hist must be a non-empty vector")]
fn hist_equal_refuses_a_matrix_histogram() {
    let a = Array::new(&[1u8; 4], dim4!(2, 2));
    hist_equal(&a, &Array::new(&[1u32; 4], dim4!(2, 2)));
}

#[test]
#[should_panic(expected = "hist_equal: input of type bool is not supported")]
fn hist_equal_refuses_bool() {
    let a = Array::new(&[true; 4], dim4!(2, 2));
    hist_equal(&a, &Array::new(&[1u32; 2], dim4!(2)));
}

// ---- bilateral --------------------------------------------------------------------------------

fn bilateral_case<T: Elem + ImageFilterType>(seed: u64, lo: f64, hi: f64, csigma: f32)
where
    T::AbsOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        for ssigma in [0.5f32, 1.0, 2.4] {
            let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            let got = bilateral(&a, ssigma, csigma, false);
            let xs = f64s(&x);
            let radius = ((ssigma * 1.5) as i64).max(1);
            let (svar, cvar) = ((ssigma * ssigma) as f64, (csigma * csigma) as f64);
            let mut want = vec![0.0; xs.len()];
            for b in 0..d[3] {
                for c in 0..d[2] {
                    for j in 0..d[1] {
                        for i in 0..d[0] {
                            let centre = xs[at(d, i, j, c, b)];
                            let (mut norm, mut sum) = (0.0, 0.0);
                            for wj in -radius..=radius {
                                let tj = (j as i64 + wj).clamp(0, d[1] as i64 - 1) as usize;
                                for wi in -radius..=radius {
                                    let ti = (i as i64 + wi).clamp(0, d[0] as i64 - 1) as usize;
                                    let v = xs[at(d, ti, tj, c, b)];
                                    let w = ((wi * wi + wj * wj) as f64 / (-2.0 * svar)
                                        + (centre - v) * (centre - v) / (-2.0 * cvar))
                                        .exp();
                                    norm += w;
                                    sum += v * w;
                                }
                            }
                            want[at(d, i, j, c, b)] = sum / norm;
                        }
                    }
                }
            }
            let what = format!("bilateral {} {d:?} sigma {ssigma}", T::TY.name);
            check(&got, a.dims(), &want, 200.0, hi.abs().max(lo.abs()), &what);
        }
    }
}

#[test]
fn bilateral_weighs_by_distance_and_difference() {
    bilateral_case::<f32>(141, -1.0, 1.0, 0.5);
    bilateral_case::<f64>(142, -1.0, 1.0, 0.3);
    bilateral_case::<u8>(143, 0.0, 256.0, 40.0);
    bilateral_case::<i16>(144, -100.0, 100.0, 30.0);
    bilateral_case::<bool>(145, 0.0, 2.0, 0.7);
}

// ---- empty images -----------------------------------------------------------------------------

#[test]
fn filters_of_empty_images_are_empty() {
    let e = Array::<f32>::new_empty(dim4!(0, 5));
    let d = e.dims();
    assert_eq!(sobel(&e, 3).0.dims(), d);
    assert_eq!(sat(&e).dims(), d);
    assert_eq!(dilate(&e, &constant(1.0f32, dim4!(3, 3))).dims(), d);
    assert_eq!(erode3(&e, &constant(1.0f32, dim4!(3, 3, 3))).dims(), d);
    assert_eq!(minfilt(&e, 3, 3, BorderType::ZERO).dims(), d);
    assert_eq!(medfilt(&e, 3, 3, BorderType::SYMMETRIC).dims(), d);
    assert_eq!(medfilt1(&e, 5, BorderType::ZERO).dims(), d);
    assert_eq!(bilateral(&e, 1.0, 1.0, false).dims(), d);
    assert_eq!(hist_equal(&e, &Array::new(&[1u32, 2], dim4!(2))).dims(), d);
    let m = moments(&e, MomentType::FIRST_ORDER);
    assert_eq!(m.dims(), dim4!(4));
    assert_eq!(m.to_vec(), vec![0.0; 4]);
}

// ---- patches ----------------------------------------------------------------------------------

/// (wx, wy, sx, sy, px, py) cases: square and not, overlapping and not, with padding.
const PATCHES: [(i64, i64, i64, i64, i64, i64); 6] = [
    (1, 1, 1, 1, 0, 0),
    (3, 3, 1, 1, 0, 0),
    (3, 3, 1, 1, 1, 1),
    (2, 3, 2, 1, 1, 2),
    (3, 2, 3, 2, 0, 1),
    (4, 4, 2, 3, 3, 0),
];

fn n_windows(n: i64, w: i64, s: i64, p: i64) -> i64 {
    (n + 2 * p - w) / s + 1
}

fn unwrap_case<T: Elem>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        for (wx, wy, sx, sy, px, py) in PATCHES {
            let (n0, n1) = (d[0] as i64, d[1] as i64);
            if wx > n0 + 2 * px || wy > n1 + 2 * py {
                continue;
            }
            let x: Vec<T> = uniform(&mut r, d.iter().product(), lo, hi);
            let a = Array::new(&x, d4(d[0], d[1], d[2], d[3]));
            let (nx, ny) = (n_windows(n0, wx, sx, px), n_windows(n1, wy, sy, py));
            let (k, m) = ((wx * wy) as usize, (nx * ny) as usize);
            let zero = T::from_v(V::F(0.0));
            let mut want = vec![zero; k * m * d[2] * d[3]];
            for b in 0..d[3] {
                for c in 0..d[2] {
                    for q in 0..m {
                        let (ax, by) = ((q as i64) % nx, (q as i64) / nx);
                        for p in 0..k {
                            let (i, j) = ((p as i64) % wx, (p as i64) / wx);
                            let (y, xx) = (ax * sx + i - px, by * sy + j - py);
                            if y >= 0 && xx >= 0 && y < n0 && xx < n1 {
                                want[p + k * (q + m * (c + d[2] * b))] =
                                    x[at(d, y as usize, xx as usize, c, b)];
                            }
                        }
                    }
                }
            }
            let what = format!("unwrap {} {d:?} {:?}", T::TY.name, (wx, wy, sx, sy, px, py));
            let cols = unwrap(&a, wx, wy, sx, sy, px, py, true);
            exact(&cols, d4(k, m, d[2], d[3]), &want, &what);
            let rows = unwrap(&a, wx, wy, sx, sy, px, py, false);
            let mut want_t = want.clone();
            for b in 0..d[2] * d[3] {
                for q in 0..m {
                    for p in 0..k {
                        want_t[q + m * (p + k * b)] = want[p + k * (q + m * b)];
                    }
                }
            }
            exact(&rows, d4(m, k, d[2], d[3]), &want_t, &format!("{what} as rows"));
        }
    }
}

#[test]
fn unwrap_lays_out_every_window() {
    unwrap_case::<f32>(151, -1.0, 1.0);
    unwrap_case::<i32>(152, -1000.0, 1000.0);
    unwrap_case::<u8>(153, 0.0, 256.0);
    unwrap_case::<bool>(154, 0.0, 2.0);
    unwrap_case::<f64>(155, -1.0, 1.0);
}

fn wrap_case<T: Elem>(seed: u64, lo: f64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for d in batched() {
        for (wx, wy, sx, sy, px, py) in PATCHES {
            let (ox, oy) = (d[0] as i64, d[1] as i64);
            if wx > ox + 2 * px || wy > oy + 2 * py {
                continue;
            }
            let (nx, ny) = (n_windows(ox, wx, sx, px), n_windows(oy, wy, sy, py));
            let (k, m) = ((wx * wy) as usize, (nx * ny) as usize);
            let v: Vec<T> = uniform(&mut r, k * m * d[2] * d[3], lo, hi);
            let a = Array::new(&v, d4(k, m, d[2], d[3]));
            let vs = f64s(&v);
            let mut want = vec![0.0; d.iter().product()];
            for b in 0..d[3] {
                for c in 0..d[2] {
                    for q in 0..m {
                        let (ax, by) = ((q as i64) % nx, (q as i64) / nx);
                        for p in 0..k {
                            let (i, j) = ((p as i64) % wx, (p as i64) / wx);
                            let (y, xx) = (ax * sx + i - px, by * sy + j - py);
                            if y >= 0 && xx >= 0 && y < ox && xx < oy {
                                want[at(d, y as usize, xx as usize, c, b)] +=
                                    vs[p + k * (q + m * (c + d[2] * b))];
                            }
                        }
                    }
                }
            }
            let want: Vec<T> = want.iter().map(|&w| T::from_v(V::F(w))).collect();
            let what = format!("wrap {} {d:?} {:?}", T::TY.name, (wx, wy, sx, sy, px, py));
            let got = wrap(&a, ox, oy, wx, wy, sx, sy, px, py, true);
            let dims = d4(d[0], d[1], d[2], d[3]);
            if T::TY.dtype.is_integer() || T::TY.dtype == DType::B8 {
                exact(&got, dims, &want, &what);
            } else {
                let w: Vec<f64> = f64s(&want);
                check(&got, dims, &w, 8.0, 4.0, &what);
            }
            let rows = wrap(&transpose(&a, false), ox, oy, wx, wy, sx, sy, px, py, false);
            assert_eq!(rows.to_vec(), got.to_vec(), "{what}: rows and columns agree");
        }
    }
}

#[test]
fn wrap_adds_every_window_back() {
    wrap_case::<f32>(161, -1.0, 1.0);
    wrap_case::<i16>(162, -100.0, 100.0);
    wrap_case::<u8>(163, 0.0, 16.0);
    wrap_case::<bool>(164, 0.0, 2.0);
    wrap_case::<f64>(165, -1.0, 1.0);
}

#[test]
#[should_panic(expected = "unwrap: px must be in 0..wx")]
fn unwrap_refuses_padding_as_large_as_the_window() {
    unwrap(&Array::new(&[1.0f32; 25], dim4!(5, 5)), 3, 3, 1, 1, 3, 0, true);
}

#[test]
#[should_panic(expected = "wrap: input dims")]
fn wrap_refuses_patches_of_the_wrong_size() {
    wrap(&Array::new(&[1.0f32; 16], dim4!(4, 4)), 3, 3, 3, 3, 1, 1, 0, 0, true);
}

#[test]
#[should_panic(expected = "medfilt1: etype PERIODIC is not supported")]
fn medfilt1_refuses_periodic_borders() {
    medfilt1(&Array::new(&[1.0f32; 5], dim4!(5)), 3, BorderType::PERIODIC);
}

#[test]
#[should_panic(expected = "minfilt: etype CLAMP_TO_EDGE is not supported (ZERO only")]
fn minfilt_refuses_clamped_borders() {
    minfilt(&Array::new(&[1u8; 9], dim4!(3, 3)), 3, 3, BorderType::CLAMP_TO_EDGE);
}

#[test]
fn filters_on_a_large_odd_image() {
    // 1023 x 769: odd sizes that fill no block or tile evenly on any backend
    let d = [1023, 769, 1, 1];
    let mut r = Rng64::seed_from_u64(200);
    let x: Vec<f32> = uniform(&mut r, d.iter().product(), 0.0, 255.0);
    let a = Array::new(&x, d4(d[0], d[1], 1, 1));
    let xs = f64s(&x);
    let want: Vec<f32> = median_ref(&xs, d, 3, 3, false).into_iter().map(|v| v as f32).collect();
    exact(&medfilt(&a, 3, 3, BorderType::ZERO), a.dims(), &want, "medfilt 3x3 of 1023x769");
    let square = vec![1.0f64; 25];
    let want: Vec<f32> = morph_ref(&xs, d, &square, [5, 5, 1], true)
        .into_iter()
        .map(|v| v.expect("a box always holds its centre") as f32)
        .collect();
    exact(&dilate(&a, &constant(1.0f32, dim4!(5, 5))), a.dims(), &want, "dilate 5x5 of 1023x769");
    let (dx, _) = sobel(&a, 3);
    let g = dx.to_vec();
    for (i, j) in [(0, 0), (1022, 768), (511, 384), (0, 768), (1022, 0), (7, 500)] {
        let px = |di: i64, dj: i64| {
            xs[at(d, reflect101(i as i64 + di, 1023), reflect101(j as i64 + dj, 769), 0, 0)]
        };
        let want = px(1, -1) + 2.0 * px(1, 0) + px(1, 1) - px(-1, -1) - 2.0 * px(-1, 0) - px(-1, 1);
        let got = g[at(d, i, j, 0, 0)] as f64;
        assert!((got - want).abs() < 1e-3, "sobel dx at ({i}, {j}): {got} vs {want}");
    }
}
