//! The iterative image algorithms (regions, canny, confidence_cc, mean_shift,
//! anisotropic_diffusion, iterative_deconv, inverse_deconv) against references computed
//! here on the host with plain loops: a breadth-first search for components, the Canny
//! stages pixel by pixel, diffusion steps over every pixel, a direct DFT for deconvolution.

use crate::common;

use common::{Elem, Rng, Rng64, SeedableRng, V};
use emberfire::*;

// ---- helpers --------------------------------------------------------------------------------

fn d4(a: usize, b: usize, c: usize, e: usize) -> Dim4 {
    dim4!(a as u64, b as u64, c as u64, e as u64)
}

/// `n` random values in `[lo, hi)`, converted to `T` (integers truncate).
fn uniform<T: Elem>(r: &mut Rng64, n: usize, lo: f64, hi: f64) -> Vec<T> {
    (0..n).map(|_| T::from_v(V::F(r.gen_range(lo..hi)))).collect()
}

fn f64s<T: Elem>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_v().f()).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}, element {i}: got {g}, want {w}");
    }
}

/// The offsets of the 4 or 8 neighbours along dimensions 0 and 1.
fn nbrs(eight: bool) -> Vec<(i64, i64)> {
    let mut v = vec![(-1, 0), (1, 0), (0, -1), (0, 1)];
    if eight {
        v.extend([(-1, -1), (1, -1), (-1, 1), (1, 1)]);
    }
    v
}

/// Breadth-first labelling of one `h x w` image: components numbered in the order of their
/// first pixel in column-major order.
fn label_ref(mask: &[bool], h: usize, w: usize, eight: bool) -> Vec<u32> {
    let mut out = vec![0u32; h * w];
    let mut next = 0;
    for start in 0..h * w {
        if !mask[start] || out[start] != 0 {
            continue;
        }
        next += 1;
        out[start] = next;
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(p) = queue.pop_front() {
            let (y, x) = ((p % h) as i64, (p / h) as i64);
            for (dy, dx) in nbrs(eight) {
                let (yy, xx) = (y + dy, x + dx);
                if yy < 0 || xx < 0 || yy >= h as i64 || xx >= w as i64 {
                    continue;
                }
                let q = yy as usize + h * xx as usize;
                if mask[q] && out[q] == 0 {
                    out[q] = next;
                    queue.push_back(q);
                }
            }
        }
    }
    out
}

// ---- regions --------------------------------------------------------------------------------

fn regions_case<O: Elem + RealNumber>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in [(1, 1), (1, 9), (7, 1), (3, 5), (67, 45)] {
        for density in [0.3, 0.55, 0.8] {
            let mask: Vec<bool> = (0..h * w).map(|_| r.gen_bool(density)).collect();
            let img = Array::new(&mask, d4(h, w, 1, 1));
            for (conn, eight) in [(Connectivity::FOUR, false), (Connectivity::EIGHT, true)] {
                let got: Array<O> = regions(&img, conn);
                assert_eq!(got.dims(), d4(h, w, 1, 1));
                assert_eq!(got.get_type(), O::TY.dtype);
                let want = label_ref(&mask, h, w, eight);
                let g: Vec<f64> = f64s(&got.to_vec());
                let wv: Vec<f64> = want.iter().map(|&x| x as f64).collect();
                assert_eq!(g, wv, "regions {h}x{w} density {density} {conn:?}");
            }
        }
    }
}

#[test]
fn regions_every_output_type() {
    regions_case::<f32>(1);
    regions_case::<f64>(2);
    regions_case::<i32>(3);
    regions_case::<u32>(4);
    regions_case::<i16>(5);
    regions_case::<u16>(6);
}

#[test]
fn regions_long_snake_converges() {
    // a serpentine path through a 41 x 41 image: one component whose diameter is ~800
    let n = 41;
    let mut mask = vec![false; n * n];
    for x in (0..n).step_by(2) {
        for y in 0..n {
            mask[y + n * x] = true;
        }
        if x + 1 < n {
            let y = if (x / 2) % 2 == 0 { n - 1 } else { 0 };
            mask[y + n * (x + 1)] = true;
        }
    }
    let img = Array::new(&mask, d4(n, n, 1, 1));
    let got: Array<i32> = regions(&img, Connectivity::FOUR);
    let want: Vec<i32> = mask.iter().map(|&m| m as i32).collect();
    assert_eq!(got.to_vec(), want);
}

#[test]
fn regions_empty_and_all_background() {
    let img = Array::new(&[false; 6], dim4!(2, 3));
    let got: Array<f32> = regions(&img, Connectivity::EIGHT);
    assert_eq!(got.to_vec(), vec![0.0; 6]);
    let all = Array::new(&[true; 6], dim4!(2, 3));
    let got: Array<u32> = regions(&all, Connectivity::FOUR);
    assert_eq!(got.to_vec(), vec![1; 6]);
}

#[test]
#[should_panic(expected = "regions: OutType u8 is not supported")]
fn regions_rejects_u8_output() {
    let img = Array::new(&[true; 4], dim4!(2, 2));
    let _: Array<u8> = regions(&img, Connectivity::FOUR);
}

#[test]
#[should_panic(expected = "regions: input must be one 2D image")]
fn regions_rejects_batches() {
    let img = Array::new(&[true; 8], dim4!(2, 2, 2));
    let _: Array<f32> = regions(&img, Connectivity::FOUR);
}

// ---- canny ----------------------------------------------------------------------------------

/// Pixel (y, x) of image `b` of an `h x w` batch.
fn px(v: &[f64], h: usize, w: usize, b: usize, y: usize, x: usize) -> f64 {
    v[y + h * (x + w * b)]
}

/// ArrayFire's Canny stages on the host, in f64.
fn canny_ref(
    x: &[f64],
    d: [usize; 4],
    ct: CannyThresholdType,
    low: f64,
    high: f64,
    fast: bool,
) -> Vec<bool> {
    let (h, w, nb) = (d[0], d[1], d[2] * d[3]);
    let taps = [-0.11021, -0.23691, -0.30576, -0.23691, -0.11021];
    let reflect = |c: i64, n: usize| -> usize {
        let n = n as i64;
        let p = 2 * (n - 1);
        let m = c.rem_euclid(p);
        (if m < n { m } else { p - m }) as usize
    };
    let mut sup = vec![0.0; h * w * nb];
    let mut gxs = vec![0.0; h * w * nb];
    let mut gys = vec![0.0; h * w * nb];
    let mut mags = vec![0.0; h * w * nb];
    for b in 0..nb {
        let mut s1 = vec![0.0; h * w];
        for xx in 0..w {
            for y in 0..h {
                for (k, t) in taps.iter().enumerate() {
                    let yy = y as i64 + k as i64 - 2;
                    if yy >= 0 && (yy as usize) < h {
                        s1[y + h * xx] += t * px(x, h, w, b, yy as usize, xx);
                    }
                }
            }
        }
        let mut s2 = vec![0.0; h * w];
        for xx in 0..w {
            for y in 0..h {
                for (k, t) in taps.iter().enumerate() {
                    let c = xx as i64 + k as i64 - 2;
                    if c >= 0 && (c as usize) < w {
                        s2[y + h * xx] += t * s1[y + h * c as usize];
                    }
                }
            }
        }
        for xx in 0..w {
            for y in 0..h {
                let p =
                    |a: i64, c: i64| s2[reflect(y as i64 + a, h) + h * reflect(xx as i64 + c, w)];
                let gx =
                    (p(1, -1) + 2.0 * p(1, 0) + p(1, 1)) - (p(-1, -1) + 2.0 * p(-1, 0) + p(-1, 1));
                let gy =
                    (p(-1, 1) + 2.0 * p(0, 1) + p(1, 1)) - (p(-1, -1) + 2.0 * p(0, -1) + p(1, -1));
                let i = y + h * (xx + w * b);
                gxs[i] = gx;
                gys[i] = gy;
                mags[i] = if fast { gx.abs() + gy.abs() } else { (gx * gx + gy * gy).sqrt() };
            }
        }
        for xx in 1..w - 1 {
            for y in 1..h - 1 {
                let i = y + h * (xx + w * b);
                let m = |a: i64, c: i64| {
                    px(&mags, h, w, b, (y as i64 + a) as usize, (xx as i64 + c) as usize)
                };
                let (dx, dy, cur) = (gxs[i], gys[i], mags[i]);
                // the two neighbours along the dominant axis and the diagonal ones, on each
                // side of the pixel along the gradient
                let (a1, a2, b1, b2, alpha);
                if dx >= 0.0 && dy >= 0.0 {
                    let g = dx >= dy;
                    a1 = if g { m(1, 0) } else { m(0, 1) };
                    a2 = if g { m(-1, 0) } else { m(0, -1) };
                    b1 = m(1, 1);
                    b2 = m(-1, -1);
                    alpha = if g { dy / dx } else { dx / dy };
                } else if dx >= 0.0 {
                    let g = dx + dy >= 0.0;
                    a1 = if g { m(1, 0) } else { m(0, -1) };
                    a2 = if g { m(-1, 0) } else { m(0, 1) };
                    b1 = m(1, -1);
                    b2 = m(-1, 1);
                    alpha = if g { -dy / dx } else { dx / -dy };
                } else if dy >= 0.0 {
                    let g = dx + dy >= 0.0;
                    a1 = if g { m(0, 1) } else { m(-1, 0) };
                    a2 = if g { m(0, -1) } else { m(1, 0) };
                    b1 = m(-1, 1);
                    b2 = m(1, -1);
                    alpha = if g { -dx / dy } else { dy / -dx };
                } else {
                    let g = dy - dx >= 0.0;
                    a1 = if g { m(-1, 0) } else { m(0, -1) };
                    a2 = if g { m(1, 0) } else { m(0, 1) };
                    b1 = m(-1, -1);
                    b2 = m(1, 1);
                    alpha = if g { dy / dx } else { dx / dy };
                }
                let m1 = (1.0 - alpha) * a1 + alpha * b1;
                let m2 = (1.0 - alpha) * a2 + alpha * b2;
                if cur > m1 && cur > m2 {
                    sup[i] = cur;
                }
            }
        }
    }
    let max = sup.iter().cloned().fold(f64::MIN, f64::max);
    let min = sup.iter().cloned().fold(f64::MAX, f64::min);
    let mut strong = vec![false; sup.len()];
    let mut weak = vec![false; sup.len()];
    for b in 0..nb {
        let img = &sup[h * w * b..h * w * (b + 1)];
        let (lo, hi, norm): (f64, f64, Box<dyn Fn(f64) -> f64>) = match ct {
            CannyThresholdType::MANUAL => (low, high, Box::new(|v| (v - min) / (max - min))),
            CannyThresholdType::OTSU => {
                let bins = max as usize;
                if bins < 2 {
                    return vec![false; sup.len()];
                }
                let mut hist = vec![0.0; bins];
                for &v in img {
                    hist[((v * bins as f64 / max).floor() as usize).min(bins - 1)] += 1.0;
                }
                let n = (h * w) as f64;
                let total: f64 = hist.iter().enumerate().map(|(i, c)| i as f64 * c / n).sum();
                let (mut best, mut at) = (-1.0, f64::INFINITY);
                let (mut q, mut mu) = (0.0, 0.0);
                for (i, c) in hist.iter().enumerate().take(bins - 1) {
                    q += c / n;
                    mu += i as f64 * c / n;
                    let s = (mu / q - (total - mu) / (1.0 - q)).powi(2) * q * (1.0 - q);
                    if s > best {
                        best = s;
                        at = i as f64;
                    }
                }
                (low * at, at, Box::new(|v| v))
            }
        };
        for y in 1..h - 1 {
            for xx in 1..w - 1 {
                let i = y + h * (xx + w * b);
                let v = norm(sup[i]);
                strong[i] = v >= hi;
                weak[i] = v >= lo && v < hi;
            }
        }
    }
    // hysteresis: from every strong pixel through weak ones, 8-connected
    let mut out = strong.clone();
    let mut stack: Vec<usize> = (0..out.len()).filter(|&i| out[i]).collect();
    while let Some(i) = stack.pop() {
        let (y, rest) = ((i % h) as i64, i / h);
        let (xx, b) = ((rest % w) as i64, rest / w);
        for (a, c) in nbrs(true) {
            let (yy, xc) = (y + a, xx + c);
            if yy < 0 || xc < 0 || yy >= h as i64 || xc >= w as i64 {
                continue;
            }
            let j = yy as usize + h * (xc as usize + w * b);
            if weak[j] && !out[j] {
                out[j] = true;
                stack.push(j);
            }
        }
    }
    out
}

/// A random picture with structure: a few bright discs on a gradient, plus noise.
fn picture(r: &mut Rng64, h: usize, w: usize, nb: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(h * w * nb);
    for _ in 0..nb {
        let discs: Vec<(f64, f64, f64, f64)> = (0..3)
            .map(|_| {
                let (cy, cx) = (r.gen_range(0.0..h as f64), r.gen_range(0.0..w as f64));
                (
                    cy,
                    cx,
                    r.gen_range(1.5..(h.min(w) as f64 / 2.0).max(2.0)),
                    r.gen_range(60.0..150.0),
                )
            })
            .collect();
        for x in 0..w {
            for y in 0..h {
                let mut p = 40.0 + 30.0 * x as f64 / w as f64 + r.gen_range(0.0..25.0);
                for &(cy, cx, rad, add) in &discs {
                    if (y as f64 - cy).powi(2) + (x as f64 - cx).powi(2) < rad * rad {
                        p += add;
                    }
                }
                v.push(p.min(255.0));
            }
        }
    }
    v
}

fn canny_case<T: Elem + EdgeComputable>(seed: u64, max_mismatch: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w, nb) in [(5, 5, 1), (7, 9, 2), (67, 45, 1)] {
        let x: Vec<T> = picture(&mut r, h, w, nb).iter().map(|&v| T::from_v(V::F(v))).collect();
        let img = Array::new(&x, d4(h, w, nb, 1));
        let xf = f64s(&x);
        for (ct, low, high) in [
            (CannyThresholdType::MANUAL, 0.1, 0.3),
            (CannyThresholdType::MANUAL, 0.25, 0.6),
            (CannyThresholdType::OTSU, 0.5, 0.0),
        ] {
            for fast in [false, true] {
                let got = canny(&img, ct, low as f32, high as f32, 3, fast);
                assert_eq!(got.dims(), d4(h, w, nb, 1));
                let want = canny_ref(&xf, [h, w, nb, 1], ct, low, high, fast);
                let got = got.to_vec();
                let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
                assert!(
                    bad as f64 <= max_mismatch * got.len() as f64,
                    "canny {h}x{w}x{nb} {ct:?} {low}/{high} fast {fast}: {bad} of {} pixels differ",
                    got.len()
                );
                if h > 20 {
                    assert!(want.iter().any(|&e| e), "the picture has edges");
                }
            }
        }
    }
}

#[test]
fn canny_f64_matches_exactly() {
    canny_case::<f64>(11, 0.0);
}

#[test]
fn canny_f32_and_u8() {
    // computed in f32: a pixel within rounding of a threshold may go either way
    canny_case::<f32>(12, 0.01);
    canny_case::<u8>(13, 0.01);
}

#[test]
fn canny_otsu_needs_two_bins() {
    let mut r = Rng64::seed_from_u64(14);
    let x: Vec<f32> = (0..64).map(|_| r.gen_range(0.0..0.01)).collect();
    let img = Array::new(&x, dim4!(8, 8));
    let got = canny(&img, CannyThresholdType::OTSU, 0.5, 0.0, 3, false);
    assert_eq!(got.to_vec(), vec![false; 64]);
}

#[test]
#[should_panic(expected = "canny: input images must be at least 5 x 5")]
fn canny_rejects_small_images() {
    let img = Array::new(&[1.0f32; 20], dim4!(4, 5));
    let _ = canny(&img, CannyThresholdType::MANUAL, 0.1, 0.3, 3, false);
}

#[test]
#[should_panic(expected = "canny: sobel_window must be 3 (got 5)")]
fn canny_rejects_other_sobel_windows() {
    let img = Array::new(&[1.0f32; 25], dim4!(5, 5));
    let _ = canny(&img, CannyThresholdType::MANUAL, 0.1, 0.3, 5, false);
}

// ---- anisotropic_diffusion ------------------------------------------------------------------

/// ArrayFire's central-difference gradient of one image along one axis.
fn grad_ref(v: &[f64], h: usize, w: usize, b: usize, y: usize, x: usize, axis0: bool) -> f64 {
    let (n, i) = if axis0 { (h, y) } else { (w, x) };
    if n == 1 {
        return 0.0;
    }
    let at = |k: usize| if axis0 { px(v, h, w, b, k, x) } else { px(v, h, w, b, y, k) };
    if i == 0 {
        at(1) - at(0)
    } else if i == n - 1 {
        at(n - 1) - at(n - 2)
    } else {
        (at(i + 1) - at(i - 1)) / 2.0
    }
}

fn diffusion_ref(
    x: &[f64],
    d: [usize; 4],
    dt: f64,
    k: f64,
    iters: u32,
    mcde: bool,
    quad: bool,
) -> Vec<f64> {
    let (h, w, nb) = (d[0], d[1], d[2] * d[3]);
    let mut cur = x.to_vec();
    for _ in 0..iters {
        let mut total = 0.0;
        for b in 0..nb {
            for xx in 0..w {
                for y in 0..h {
                    total += grad_ref(&cur, h, w, b, y, xx, true).powi(2)
                        + grad_ref(&cur, h, w, b, y, xx, false).powi(2);
                }
            }
        }
        let mct = if total == 0.0 { 0.0 } else { -(cur.len() as f64) / (2.0 * k * k * total) };
        let cond = |g: f64| if quad && !mcde { 1.0 / (1.0 - g * mct) } else { (g * mct).exp() };
        let mut next = cur.clone();
        for b in 0..nb {
            for xx in 0..w {
                for y in 0..h {
                    let p = |a: i64, c: i64| {
                        let yy = (y as i64 + a).clamp(0, h as i64 - 1) as usize;
                        let xc = (xx as i64 + c).clamp(0, w as i64 - 1) as usize;
                        px(&cur, h, w, b, yy, xc)
                    };
                    let c = p(0, 0);
                    let (dx, dy) = ((p(1, 0) - p(-1, 0)) / 2.0, (p(0, 1) - p(0, -1)) / 2.0);
                    // faces: (difference, squared gradient) for +dim0, -dim0, +dim1, -dim1
                    let faces = [
                        (
                            p(1, 0) - c,
                            (p(1, 0) - c).powi(2)
                                + 0.25 * (dy + 0.5 * (p(1, 1) - p(1, -1))).powi(2),
                        ),
                        (
                            c - p(-1, 0),
                            (c - p(-1, 0)).powi(2)
                                + 0.25 * (dy + 0.5 * (p(-1, 1) - p(-1, -1))).powi(2),
                        ),
                        (
                            p(0, 1) - c,
                            (p(0, 1) - c).powi(2)
                                + 0.25 * (dx + 0.5 * (p(1, 1) - p(-1, 1))).powi(2),
                        ),
                        (
                            c - p(0, -1),
                            (c - p(0, -1)).powi(2)
                                + 0.25 * (dx + 0.5 * (p(1, -1) - p(-1, -1))).powi(2),
                        ),
                    ];
                    let delta = if mcde {
                        let t = |(d, g): (f64, f64)| d / (1e-10 + g).sqrt() * (g * mct).exp();
                        let curv = t(faces[0]) - t(faces[1]) + t(faces[2]) - t(faces[3]);
                        let (f0, b0, f1, b1) = (faces[0].0, faces[1].0, faces[2].0, faces[3].0);
                        let grad2 = if curv > 0.0 {
                            b0.min(0.0).powi(2)
                                + f0.max(0.0).powi(2)
                                + b1.min(0.0).powi(2)
                                + f1.max(0.0).powi(2)
                        } else {
                            b0.max(0.0).powi(2)
                                + f0.min(0.0).powi(2)
                                + b1.max(0.0).powi(2)
                                + f1.min(0.0).powi(2)
                        };
                        grad2.sqrt() * curv
                    } else {
                        let t = |(d, g): (f64, f64)| cond(g) * d;
                        t(faces[0]) - t(faces[1]) + t(faces[2]) - t(faces[3])
                    };
                    next[y + h * (xx + w * b)] = c + dt * delta;
                }
            }
        }
        cur = next;
    }
    cur
}

fn diffusion_case<T: Elem + EdgeComputable>(seed: u64, tol: f64)
where
    T::AbsOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w, nb) in [(1, 1, 1), (1, 9, 1), (3, 5, 2), (67, 45, 1)] {
        let x: Vec<T> = uniform(&mut r, h * w * nb, 0.0, 200.0);
        let img = Array::new(&x, d4(h, w, nb, 1));
        let xf = f64s(&x);
        for eq in [FluxFn::GRADIENT, FluxFn::MCDE, FluxFn::DEFAULT] {
            for flux in [DiffusionEq::QUADRATIC, DiffusionEq::EXPONENTIAL, DiffusionEq::DEFAULT] {
                let iters = if h > 10 { 2 } else { 3 };
                let got = anisotropic_diffusion(&img, 0.1, 1.5, iters, eq, flux);
                assert_eq!(got.dims(), d4(h, w, nb, 1));
                let mcde = eq == FluxFn::MCDE;
                let want = diffusion_ref(
                    &xf,
                    [h, w, nb, 1],
                    0.1f32 as f64,
                    1.5,
                    iters,
                    mcde,
                    flux == DiffusionEq::QUADRATIC,
                );
                let what = format!("diffusion {h}x{w}x{nb} {eq:?} {flux:?}");
                assert_close(&f64s(&got.to_vec()), &want, tol, &what);
            }
        }
    }
}

#[test]
fn anisotropic_diffusion_every_equation_and_flux() {
    diffusion_case::<f64>(21, 1e-10);
    diffusion_case::<f32>(22, 2e-4);
    diffusion_case::<u8>(23, 2e-4);
}

#[test]
fn anisotropic_diffusion_constant_image_is_unchanged() {
    let img = Array::new(&[7.0f64; 12], dim4!(3, 4));
    let out = anisotropic_diffusion(&img, 0.1, 1.0, 3, FluxFn::MCDE, DiffusionEq::DEFAULT);
    assert_eq!(out.to_vec(), vec![7.0; 12]);
}

#[test]
#[should_panic(expected = "anisotropic_diffusion: k must be finite and nonzero (got 0)")]
fn anisotropic_diffusion_rejects_zero_k() {
    let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
    let _ = anisotropic_diffusion(&img, 0.1, 0.0, 1, FluxFn::GRADIENT, DiffusionEq::DEFAULT);
}

#[test]
#[should_panic(expected = "anisotropic_diffusion: iters must be at least 1")]
fn anisotropic_diffusion_rejects_zero_iterations() {
    let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
    let _ = anisotropic_diffusion(&img, 0.1, 1.0, 0, FluxFn::GRADIENT, DiffusionEq::DEFAULT);
}

// ---- deconvolution --------------------------------------------------------------------------

/// The padded problem of the deconvolutions: the image grown (edges repeated) to the
/// smallest size at least its own plus the kernel's with no prime factor above 7.
struct DeconvGrid {
    n: [usize; 2],
    before: [usize; 2],
    image: Vec<f64>,
}

fn deconv_grid(x: &[f64], h: usize, w: usize, fh: usize, fw: usize) -> DeconvGrid {
    let smooth = |mut v: usize| {
        for p in [2, 3, 5, 7] {
            while v.is_multiple_of(p) {
                v /= p;
            }
        }
        v == 1
    };
    let mut n = [h + fh, w + fw];
    for v in &mut n {
        while !smooth(*v) {
            *v += 1;
        }
    }
    let before = [(n[0] - h) / 2, (n[1] - w) / 2];
    let mut image = vec![0.0; n[0] * n[1]];
    for j in 0..n[1] {
        for i in 0..n[0] {
            let y = (i as i64 - before[0] as i64).clamp(0, h as i64 - 1) as usize;
            let c = (j as i64 - before[1] as i64).clamp(0, w as i64 - 1) as usize;
            image[i + n[0] * j] = x[y + h * c];
        }
    }
    DeconvGrid { n, before, image }
}

impl DeconvGrid {
    /// Circular convolution with the kernel centred at (fh / 2, fw / 2); `transpose` gives
    /// the correlation (the adjoint).
    fn conv(&self, v: &[f64], k: &[f64], fh: usize, fw: usize, transpose: bool) -> Vec<f64> {
        let [n0, n1] = self.n;
        let mut out = vec![0.0; n0 * n1];
        for j in 0..n1 {
            for i in 0..n0 {
                let mut s = 0.0;
                for b in 0..fw {
                    for a in 0..fh {
                        let (da, db) = (a as i64 - (fh / 2) as i64, b as i64 - (fw / 2) as i64);
                        let (da, db) = if transpose { (da, db) } else { (-da, -db) };
                        let y = (i as i64 + da).rem_euclid(n0 as i64) as usize;
                        let c = (j as i64 + db).rem_euclid(n1 as i64) as usize;
                        s += k[a + fh * b] * v[y + n0 * c];
                    }
                }
                out[i + n0 * j] = s;
            }
        }
        out
    }

    fn crop(&self, v: &[f64], h: usize, w: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(h * w);
        for c in 0..w {
            for y in 0..h {
                out.push(v[y + self.before[0] + self.n[0] * (c + self.before[1])]);
            }
        }
        out
    }
}

/// A 2D DFT by rows then columns (`sign` -1 forward, +1 inverse, unscaled).
fn dft2(v: &[c64], n0: usize, n1: usize, sign: f64) -> Vec<c64> {
    let tw = |k: usize, m: usize, n: usize| {
        let a = sign * 2.0 * std::f64::consts::PI * ((k * m) % n) as f64 / n as f64;
        c64::new(a.cos(), a.sin())
    };
    let mut rows = vec![c64::new(0.0, 0.0); n0 * n1];
    for j in 0..n1 {
        for k in 0..n0 {
            rows[k + n0 * j] = (0..n0).map(|m| v[m + n0 * j] * tw(k, m, n0)).sum();
        }
    }
    let mut out = vec![c64::new(0.0, 0.0); n0 * n1];
    for k in 0..n1 {
        for i in 0..n0 {
            out[i + n0 * k] = (0..n1).map(|m| rows[i + n0 * m] * tw(k, m, n1)).sum();
        }
    }
    out
}

fn deconv_inputs<T: Elem>(r: &mut Rng64, h: usize, w: usize) -> (Vec<T>, Vec<f32>, usize, usize) {
    let x: Vec<T> = uniform(r, h * w, 1.0, 200.0);
    let (fh, fw) = (h.min(3), w.min(5));
    let mut k: Vec<f32> = (0..fh * fw).map(|_| r.gen_range(0.2..1.0)).collect();
    let total: f32 = k.iter().sum();
    k.iter_mut().for_each(|v| *v /= total);
    (x, k, fh, fw)
}

fn iterative_case<T: Elem + DeconvInput>(seed: u64)
where
    T::AbsOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in [(1, 1), (1, 9), (3, 5), (17, 13)] {
        let (x, k, fh, fw) = deconv_inputs::<T>(&mut r, h, w);
        let kf: Vec<f64> = k.iter().map(|&v| v as f64).collect();
        let g = deconv_grid(&f64s(&x), h, w, fh, fw);
        let img = Array::new(&x, d4(h, w, 1, 1));
        let ker = Array::new(&k, d4(fh, fw, 1, 1));
        let alpha = 0.8f32;
        for algo in [
            IterativeDeconvAlgo::LANDWEBER,
            IterativeDeconvAlgo::RICHARDSONLUCY,
            IterativeDeconvAlgo::DEFAULT,
        ] {
            let iters = 4;
            let got = iterative_deconv(&img, &ker, iters, alpha, algo);
            assert_eq!(got.dims(), d4(h, w, 1, 1));
            let mut est = g.image.clone();
            for _ in 0..iters {
                if algo == IterativeDeconvAlgo::RICHARDSONLUCY {
                    let blurred = g.conv(&est, &kf, fh, fw, false);
                    let ratio: Vec<f64> =
                        g.image.iter().zip(&blurred).map(|(a, b)| a / b).collect();
                    let corr = g.conv(&ratio, &kf, fh, fw, true);
                    est.iter_mut().zip(&corr).for_each(|(e, c)| *e *= c);
                } else {
                    let blurred = g.conv(&est, &kf, fh, fw, false);
                    let resid: Vec<f64> =
                        g.image.iter().zip(&blurred).map(|(a, b)| a - b).collect();
                    let corr = g.conv(&resid, &kf, fh, fw, true);
                    est.iter_mut().zip(&corr).for_each(|(e, c)| *e += alpha as f64 * c);
                }
            }
            let want = g.crop(&est, h, w);
            assert_close(&f64s(&got.to_vec()), &want, 2e-4, &format!("{algo:?} {h}x{w}"));
        }
    }
}

#[test]
fn iterative_deconv_every_algorithm() {
    iterative_case::<f32>(31);
    iterative_case::<u8>(32);
    iterative_case::<i16>(33);
    iterative_case::<u16>(34);
}

#[test]
fn inverse_deconv_tikhonov() {
    let mut r = Rng64::seed_from_u64(35);
    for (h, w) in [(1, 1), (1, 9), (3, 5), (67, 45)] {
        let (x, k, fh, fw) = deconv_inputs::<u8>(&mut r, h, w);
        let g = deconv_grid(&f64s(&x), h, w, fh, fw);
        let [n0, n1] = g.n;
        let mut psf = vec![c64::new(0.0, 0.0); n0 * n1];
        for b in 0..fw {
            for a in 0..fh {
                let y = (a as i64 - (fh / 2) as i64).rem_euclid(n0 as i64) as usize;
                let c = (b as i64 - (fw / 2) as i64).rem_euclid(n1 as i64) as usize;
                psf[y + n0 * c] = c64::new(k[a + fh * b] as f64, 0.0);
            }
        }
        let p = dft2(&psf, n0, n1, -1.0);
        let img: Vec<c64> = g.image.iter().map(|&v| c64::new(v, 0.0)).collect();
        let i = dft2(&img, n0, n1, -1.0);
        let gamma = 0.05f32;
        for algo in [InverseDeconvAlgo::TIKHONOV, InverseDeconvAlgo::DEFAULT] {
            let spec: Vec<c64> = i
                .iter()
                .zip(&p)
                .map(|(a, b)| a * b.conj() / (b.norm_sqr() + gamma as f64))
                .collect();
            let back: Vec<f64> =
                dft2(&spec, n0, n1, 1.0).iter().map(|v| v.re / (n0 * n1) as f64).collect();
            let want = g.crop(&back, h, w);
            let got = inverse_deconv(
                &Array::new(&x, d4(h, w, 1, 1)),
                &Array::new(&k, d4(fh, fw, 1, 1)),
                gamma,
                algo,
            );
            assert_close(&f64s(&got.to_vec()), &want, 2e-4, &format!("tikhonov {h}x{w}"));
        }
    }
}

#[test]
#[should_panic(
    expected = "iterative_deconv: relaxation_factor must be finite and positive (got 0)"
)]
fn iterative_deconv_rejects_zero_relaxation() {
    let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
    let _ = iterative_deconv(
        &img,
        &constant(1.0f32, dim4!(1, 1)),
        2,
        0.0,
        IterativeDeconvAlgo::LANDWEBER,
    );
}

#[test]
#[should_panic(expected = "iterative_deconv: iterations must be at least 1")]
fn iterative_deconv_rejects_zero_iterations() {
    let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
    let _ = iterative_deconv(
        &img,
        &constant(1.0f32, dim4!(1, 1)),
        0,
        0.5,
        IterativeDeconvAlgo::DEFAULT,
    );
}

#[test]
#[should_panic(expected = "inverse_deconv: input must be one non-empty 2D image")]
fn inverse_deconv_rejects_batches() {
    let img = Array::new(&[1.0f32; 18], dim4!(3, 3, 2));
    let _ = inverse_deconv(&img, &constant(1.0f32, dim4!(1, 1)), 0.1, InverseDeconvAlgo::TIKHONOV);
}

#[test]
#[should_panic(expected = "inverse_deconv: gamma must be finite and positive (got NaN)")]
fn inverse_deconv_rejects_nan_gamma() {
    let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
    let _ =
        inverse_deconv(&img, &constant(1.0f32, dim4!(1, 1)), f32::NAN, InverseDeconvAlgo::DEFAULT);
}

// ---- confidence_cc --------------------------------------------------------------------------

fn confidence_ref(
    x: &[f64],
    h: usize,
    w: usize,
    seeds: &[(usize, usize)],
    radius: usize,
    mult: f64,
    iterations: u32,
) -> Vec<bool> {
    let seeds: Vec<(usize, usize)> =
        seeds.iter().cloned().filter(|&(a, b)| a < h && b < w).collect();
    if seeds.is_empty() {
        return vec![false; h * w];
    }
    let (lo, hi) = x.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let v: Vec<f64> =
        x.iter().map(|&p| if hi - lo < 1e-6 { 2.0 } else { 1.0 + (p - lo) / (hi - lo) }).collect();
    let var = |s2: f64, s1: f64, n: f64| if n > 1.0 { (s2 - s1 * s1 / n) / (n - 1.0) } else { 0.0 };
    let (mut s1, mut s2, mut n) = (0.0, 0.0, 0.0);
    for &(sy, sx) in &seeds {
        for c in sx.saturating_sub(radius)..=(sx + radius).min(w - 1) {
            for y in sy.saturating_sub(radius)..=(sy + radius).min(h - 1) {
                let p = v[y + h * c];
                s1 += p;
                s2 += p * p;
                n += 1.0;
            }
        }
    }
    let seed_vals: Vec<f64> = seeds.iter().map(|&(y, c)| v[y + h * c]).collect();
    let smin = seed_vals.iter().cloned().fold(f64::MAX, f64::min);
    let smax = seed_vals.iter().cloned().fold(f64::MIN, f64::max);
    let fill = |mean: f64, var: f64| {
        let lower = (mean - mult * var.sqrt()).min(smin);
        let upper = (mean + mult * var.sqrt()).max(smax);
        let mut out = vec![false; h * w];
        let mut stack = Vec::new();
        for &(y, c) in &seeds {
            if !out[y + h * c] {
                out[y + h * c] = true;
                stack.push(y + h * c);
            }
        }
        while let Some(p) = stack.pop() {
            let (y, c) = ((p % h) as i64, (p / h) as i64);
            for (a, b) in nbrs(true) {
                let (yy, cc) = (y + a, c + b);
                if yy < 0 || cc < 0 || yy >= h as i64 || cc >= w as i64 {
                    continue;
                }
                let q = yy as usize + h * cc as usize;
                if !out[q] && v[q] >= lower && v[q] <= upper {
                    out[q] = true;
                    stack.push(q);
                }
            }
        }
        out
    };
    let first_var = var(s2, s1, n);
    let mut seg = fill(s1 / n, first_var);
    if first_var.abs() < 1e-6 {
        return seg;
    }
    for _ in 0..iterations {
        let kept: Vec<f64> = (0..h * w).filter(|&i| seg[i]).map(|i| v[i]).collect();
        if kept.is_empty() {
            break;
        }
        let n = kept.len() as f64;
        let s1: f64 = kept.iter().sum();
        let s2: f64 = kept.iter().map(|p| p * p).sum();
        let vv = var(s2, s1, n);
        seg = fill(s1 / n, vv);
        if vv.abs() < 1e-6 {
            break;
        }
    }
    seg
}

fn confidence_case<T: Elem + ConfidenceCCInput>(seed: u64, value: f64, large: (usize, usize)) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in [(1, 1), (1, 9), (3, 5), large] {
        // a few flat blocks with noise, so that regions have a shape
        let bh = r.gen_range(0..h.max(1));
        let bw = r.gen_range(0..w.max(1));
        let x: Vec<T> = (0..h * w)
            .map(|i| {
                let (y, c) = (i % h, i / h);
                let base = if y >= bh && c >= bw { 180.0 } else { 60.0 };
                T::from_v(V::F(base + r.gen_range(0.0..30.0)))
            })
            .collect();
        let mut seeds: Vec<(usize, usize)> =
            (0..3).map(|_| (r.gen_range(0..h), r.gen_range(0..w))).collect();
        seeds.push((h + 2, 0)); // outside: ignored
        let sx = Array::new(
            &seeds.iter().map(|s| s.0 as u32).collect::<Vec<_>>(),
            d4(seeds.len(), 1, 1, 1),
        );
        let sy = Array::new(
            &seeds.iter().map(|s| s.1 as u32).collect::<Vec<_>>(),
            d4(seeds.len(), 1, 1, 1),
        );
        for (radius, mult, iters) in [(1, 2, 0), (2, 1, 3), (0, 3, 2)] {
            let got = confidence_cc(
                &Array::new(&x, d4(h, w, 1, 1)),
                &sx,
                &sy,
                radius,
                mult,
                iters,
                value,
            );
            let want = confidence_ref(&f64s(&x), h, w, &seeds, radius as usize, mult as f64, iters);
            let want: Vec<T> =
                want.iter().map(|&b| T::from_v(V::F(if b { value } else { 0.0 }))).collect();
            assert_eq!(got.to_vec(), want, "confidence_cc {h}x{w} r {radius} m {mult} it {iters}");
        }
    }
}

#[test]
fn confidence_cc_every_type() {
    confidence_case::<f32>(41, 1.5, (15, 11));
    confidence_case::<u8>(42, 255.0, (67, 45));
    confidence_case::<u16>(43, 1000.0, (9, 13));
    confidence_case::<u32>(44, 7.0, (11, 7));
}

#[test]
fn confidence_cc_without_seeds_inside_is_empty() {
    let img = Array::new(&[5.0f32; 12], dim4!(3, 4));
    let s = Array::new(&[9u32], dim4!(1));
    assert_eq!(confidence_cc(&img, &s, &s, 1, 2, 2, 1.0).to_vec(), vec![0.0; 12]);
}

#[test]
#[should_panic(expected = "confidence_cc: seedx and seedy must be vectors of the same length")]
fn confidence_cc_rejects_unequal_seeds() {
    let img = Array::new(&[5.0f32; 12], dim4!(3, 4));
    let (a, b) = (Array::new(&[1u32, 2], dim4!(2)), Array::new(&[1u32], dim4!(1)));
    let _ = confidence_cc(&img, &a, &b, 1, 2, 2, 1.0);
}

#[test]
#[should_panic(expected = "confidence_cc: input must be one 2D image")]
fn confidence_cc_rejects_batches() {
    let img = Array::new(&[5u8; 18], dim4!(3, 3, 2));
    let s = Array::new(&[1u32], dim4!(1));
    let _ = confidence_cc(&img, &s, &s, 1, 2, 2, 1.0);
}
