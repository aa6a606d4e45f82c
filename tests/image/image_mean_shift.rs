//! mean_shift against ArrayFire's algorithm written here with plain loops over the pixels.
//!
//! The reference computes in f64 and rounds to f32 after each operation where ArrayFire's
//! accumulator is f32 (every type but f64): a rounding of f32 operands' exact f64 result to
//! f32 is the f32 operation's own result, so the reference follows ArrayFire's arithmetic
//! exactly. That matters here, because positions and colours are truncated to integers: a
//! mean of `1 - 2^-24` becomes 0, not 1. The results are compared exactly.

use crate::common;

use common::{Elem, Rng, Rng64, SeedableRng, V};
use emberfire::*;

fn d4(a: usize, b: usize, c: usize, e: usize) -> Dim4 {
    dim4!(a as u64, b as u64, c as u64, e as u64)
}

/// ArrayFire's mean shift of one image of `h x w` pixels with `ch` channels (channel `c` of
/// pixel `p` at `img[p + c * h * w]`), in the same layout. `single` rounds every step to f32.
#[allow(clippy::too_many_arguments)]
fn mean_shift_ref(
    img: &[f64],
    h: usize,
    w: usize,
    ch: usize,
    spatial: f32,
    chromatic: f32,
    iter: u32,
    single: bool,
) -> Vec<f64> {
    let r = |x: f64| if single { x as f32 as f64 } else { x };
    let radius = ((spatial * 1.5) as i64).max(1);
    let cvar = (chromatic * chromatic) as f64;
    let at = |i: i64, j: i64, c: usize| r(img[i as usize + h * j as usize + h * w * c]);
    let mut out = vec![0.0; h * w * ch];
    for j in 0..w as i64 {
        for i in 0..h as i64 {
            let mut centre: Vec<f64> = (0..ch).map(|c| at(i, j, c)).collect();
            let (mut pi, mut pj) = (i, j);
            for _ in 0..iter {
                let (oi, oj) = (pi, pj);
                let (mut count, mut sum_i, mut sum_j) = (0i64, 0i64, 0i64);
                let mut sums = vec![0.0; ch];
                for wj in -radius..=radius {
                    let tj = pj + wj;
                    if tj < 0 || tj >= w as i64 {
                        continue;
                    }
                    for wi in -radius..=radius {
                        let ti = pi + wi;
                        if ti < 0 || ti >= h as i64 {
                            continue;
                        }
                        let mut dist = 0.0;
                        for (c, &cc) in centre.iter().enumerate() {
                            let d = r(cc - at(ti, tj, c));
                            dist = r(dist + r(d * d));
                        }
                        if dist <= cvar {
                            for (c, s) in sums.iter_mut().enumerate() {
                                *s = r(*s + at(ti, tj, c));
                            }
                            count += 1;
                            sum_i += ti;
                            sum_j += tj;
                        }
                    }
                }
                if count == 0 {
                    break;
                }
                let inv = r(1.0 / count as f64);
                pi = r(r(sum_i as f64) * inv).trunc() as i64;
                pj = r(r(sum_j as f64) * inv).trunc() as i64;
                let mean: Vec<f64> = sums.iter().map(|&s| r(s * inv).trunc()).collect();
                let mut dist = 0.0;
                for (m, cc) in mean.iter().zip(&centre) {
                    let d = r(m - cc);
                    dist = r(dist + r(d * d));
                }
                let moved = ((oi - pi).abs() + (oj - pj).abs()) as f64;
                let stop = (pi == oi && pj == oj) || r(moved + dist) <= 1.0;
                centre = mean;
                if stop {
                    break;
                }
            }
            for (c, v) in centre.iter().enumerate() {
                out[i as usize + h * j as usize + h * w * c] = *v;
            }
        }
    }
    out
}

/// A picture with structure for the filter to find: a few flat regions of different levels
/// (a disk, a band, a background ramp), plus uniform noise of `noise` either way, each
/// channel with its own levels; values are kept in `[0, 255]`.
fn picture(r: &mut Rng64, h: usize, w: usize, planes: usize, noise: f64) -> Vec<f64> {
    let mut v = Vec::with_capacity(h * w * planes);
    for p in 0..planes {
        for j in 0..w {
            for i in 0..h {
                let (y, x) = (i as f64 - h as f64 / 2.0, j as f64 - w as f64 / 3.0);
                let level = if y * y + x * x < (h.min(w) as f64 / 3.0).powi(2) {
                    180.0 - 20.0 * p as f64
                } else if j % 7 < 2 {
                    60.0 + 15.0 * p as f64
                } else {
                    20.0 + 4.0 * i as f64 + 10.0 * p as f64
                };
                let n = r.gen_range(-noise..noise);
                v.push((level + n).clamp(0.0, 255.0));
            }
        }
    }
    v
}

/// Filters `picture`s of shape `dims` (gray planes along dims 2 and 3, or colour images of 3
/// channels along dim 2 batched along dim 3) and compares with the reference, plane by plane.
fn check<T: Elem + RealNumber>(
    seed: u64,
    dims: [usize; 4],
    iscolor: bool,
    params: &[(f32, f32, u32)],
) {
    let mut r = Rng64::seed_from_u64(seed);
    let [h, w, d2, d3] = dims;
    let host: Vec<T> =
        picture(&mut r, h, w, d2 * d3, 12.0).into_iter().map(|x| T::from_v(V::F(x))).collect();
    let exact: Vec<f64> = host.iter().map(|x| x.to_v().f()).collect();
    let img = Array::new(&host, d4(h, w, d2, d3));
    let single = T::get_af_dtype() != DType::F64;
    let (ch, images) = if iscolor { (3, d3) } else { (1, d2 * d3) };
    let size = h * w * ch;
    for &(spatial, chromatic, iter) in params {
        let got: Vec<f64> = mean_shift(&img, spatial, chromatic, iter, iscolor)
            .to_vec()
            .into_iter()
            .map(|x| x.to_v().f())
            .collect();
        assert_eq!(got.len(), exact.len());
        for b in 0..images {
            let part = &exact[b * size..(b + 1) * size];
            let want = mean_shift_ref(part, h, w, ch, spatial, chromatic, iter, single);
            for (k, (g, wv)) in got[b * size..(b + 1) * size].iter().zip(&want).enumerate() {
                let (i, j, c) = (k % h, (k / h) % w, k / (h * w));
                assert!(
                    g == wv || (g.is_nan() && wv.is_nan()),
                    "{:?} dims {dims:?} iscolor {iscolor} sigmas ({spatial}, {chromatic}) \
                     iter {iter}: image {b}, pixel ({i}, {j}) channel {c}: got {g}, want {wv}",
                    T::get_af_dtype()
                );
            }
        }
    }
}

/// Sigmas and iteration counts: a small window with a wide range, a wide window with a
/// narrow range, a tiny sigma (radius 1), and a single iteration.
const PARAMS: [(f32, f32, u32); 4] =
    [(1.0, 40.0, 6), (2.5, 18.0, 10), (0.2, 1000.0, 4), (2.0, 25.0, 1)];

const SIZES: [(usize, usize); 5] = [(1, 1), (1, 7), (7, 1), (3, 5), (23, 17)];

fn gray_cases<T: Elem + RealNumber>(seed: u64) {
    for (k, &(h, w)) in SIZES.iter().enumerate() {
        check::<T>(seed + k as u64, [h, w, 1, 1], false, &PARAMS);
    }
    // gray images batched along dimensions 2 and 3
    check::<T>(seed + 10, [9, 6, 2, 3], false, &PARAMS[..2]);
}

fn colour_cases<T: Elem + RealNumber>(seed: u64) {
    for (k, &(h, w)) in SIZES.iter().enumerate() {
        check::<T>(seed + k as u64, [h, w, 3, 1], true, &PARAMS);
    }
    // colour images batched along dimension 3
    check::<T>(seed + 10, [9, 6, 3, 2], true, &PARAMS[..2]);
}

#[test]
fn gray_f32() {
    gray_cases::<f32>(1);
}

#[test]
fn gray_u8() {
    gray_cases::<u8>(2);
}

#[test]
fn gray_f64() {
    gray_cases::<f64>(3);
}

#[test]
fn colour_f32() {
    colour_cases::<f32>(4);
}

#[test]
fn colour_u8() {
    colour_cases::<u8>(5);
}

#[test]
fn colour_f64() {
    colour_cases::<f64>(6);
}

#[test]
fn three_gray_planes_without_iscolor() {
    // three channels but iscolor false: each plane is an image of its own
    check::<f32>(7, [8, 5, 3, 1], false, &PARAMS[..2]);
}

#[test]
fn signed_values_truncate_towards_zero() {
    let mut r = Rng64::seed_from_u64(8);
    let host: Vec<i16> = (0..6 * 5).map(|_| r.gen_range(-40i16..40)).collect();
    let exact: Vec<f64> = host.iter().map(|&x| x as f64).collect();
    let img = Array::new(&host, d4(6, 5, 1, 1));
    let got: Vec<f64> =
        mean_shift(&img, 1.0, 50.0, 5, false).to_vec().iter().map(|&x| x as f64).collect();
    assert_eq!(got, mean_shift_ref(&exact, 6, 5, 1, 1.0, 50.0, 5, true));
}

#[test]
fn a_flat_image_is_unchanged() {
    let img = constant(7.5f32, dim4!(4, 6));
    // the mean colour is truncated: 7.5 becomes 7 everywhere
    assert_eq!(mean_shift(&img, 3.0, 1.0, 3, false).to_vec(), vec![7.0f32; 24]);
}

#[test]
fn nan_pixels_keep_their_value() {
    // a NaN pixel is in range of nothing, not even itself: its window is empty at once
    let img = Array::new(&[1.0f32, f32::NAN, 3.0, 4.0], dim4!(2, 2));
    let out = mean_shift(&img, 1.0, 10.0, 3, false).to_vec();
    let want = mean_shift_ref(&[1.0, f64::NAN, 3.0, 4.0], 2, 2, 1, 1.0, 10.0, 3, true);
    assert!(out[1].is_nan() && want[1].is_nan());
    assert_eq!([out[0], out[2], out[3]].map(|x| x as f64), [want[0], want[2], want[3]]);
}

#[test]
fn empty_input() {
    let img = Array::<f32>::new_empty(dim4!(0, 4));
    assert_eq!(mean_shift(&img, 1.0, 1.0, 1, false).dims(), dim4!(0, 4));
}

#[test]
#[should_panic(expected = "mean_shift: spatial_sigma must be finite and at least 0 (got -1)")]
fn negative_spatial_sigma() {
    mean_shift(&constant(1.0f32, dim4!(3, 3)), -1.0, 1.0, 1, false);
}

#[test]
#[should_panic(expected = "mean_shift: spatial_sigma must be finite and at least 0 (got inf)")]
fn infinite_spatial_sigma() {
    mean_shift(&constant(1.0f32, dim4!(3, 3)), f32::INFINITY, 1.0, 1, false);
}

#[test]
#[should_panic(expected = "mean_shift: chromatic_sigma must be at least 0 (got NaN)")]
fn nan_chromatic_sigma() {
    mean_shift(&constant(1u8, dim4!(3, 3)), 1.0, f32::NAN, 1, false);
}

#[test]
#[should_panic(expected = "mean_shift: chromatic_sigma must be at least 0 (got -0.5)")]
fn negative_chromatic_sigma() {
    mean_shift(&constant(1u8, dim4!(3, 3)), 1.0, -0.5, 1, false);
}

#[test]
#[should_panic(expected = "mean_shift: iter must be at least 1")]
fn zero_iterations() {
    mean_shift(&constant(1.0f64, dim4!(3, 3)), 1.0, 1.0, 0, false);
}

#[test]
#[should_panic(
    expected = "mean_shift: iscolor needs 3 channels along dimension 2, but input has dims [3 3 2 1]"
)]
fn colour_without_three_channels() {
    mean_shift(&constant(1.0f32, dim4!(3, 3, 2)), 1.0, 1.0, 1, true);
}
