//! Geometric transforms and histograms against references computed here in f64: every output
//! pixel's source point from the map written out by hand, sampled by each method's formula;
//! histograms by counting. Points within rounding distance of a method's decision (a half for
//! NEAREST, an integer for LOWER, the image's edge for the smooth methods) are skipped, since
//! the library computes points of f32 images in f32, and a point that lies on a decision in f64
//! may fall either side of it in f32.

use crate::common;

use common::{Elem, Rng, Rng64, SeedableRng, V};
use emberfire::*;

/// Image sizes (rows, columns): a pixel, a row, a column, odd sizes and a larger one.
const SIZES: [(usize, usize); 5] = [(1, 1), (1, 7), (6, 1), (3, 5), (67, 41)];

/// The 2D methods and whether each is "nearest-like" (samples one pixel).
const METHODS: [InterpType; 6] = [
    InterpType::NEAREST,
    InterpType::LOWER,
    InterpType::BILINEAR,
    InterpType::BILINEAR_COSINE,
    InterpType::BICUBIC,
    InterpType::BICUBIC_SPLINE,
];

fn d4(d: [usize; 4]) -> Dim4 {
    dim4!(d[0] as u64, d[1] as u64, d[2] as u64, d[3] as u64)
}

fn uniform<T: Elem>(r: &mut Rng64, n: usize, lo: f64, hi: f64) -> Vec<T> {
    (0..n).map(|_| T::from_v(V::F(r.gen_range(lo..hi)))).collect()
}

fn f64s<T: Elem>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_v().f()).collect()
}

/// Distance from `v` to the nearest value of the lattice `k + offset` (integers `k`).
fn lattice_gap(v: f64, offset: f64) -> f64 {
    let f = (v - offset).rem_euclid(1.0);
    f.min(1.0 - f)
}

fn cubic(v: [f64; 4], t: f64, spline: bool) -> f64 {
    // the interpolating cubic through v1 and v2 with Catmull-Rom slopes (spline), or the
    // cubic convolution polynomial of the library's CUBIC
    let (a0, a1, a2) = if spline {
        (
            -0.5 * v[0] + 1.5 * v[1] - 1.5 * v[2] + 0.5 * v[3],
            v[0] - 2.5 * v[1] + 2.0 * v[2] - 0.5 * v[3],
            0.5 * (v[2] - v[0]),
        )
    } else {
        let a0 = v[3] - v[2] - v[0] + v[1];
        (a0, v[0] - v[1] - a0, v[2] - v[0])
    };
    a0 * t * t * t + a1 * t * t + a2 * t + v[1]
}

/// The value of the `n0 x n1` image `img` at point (x, y) by `m`, or `None` where the point
/// is too close to a decision to tell (see the module notes). `clamp` is resize's rule for
/// NEAREST and LOWER.
fn sample(
    img: &[f64],
    n0: usize,
    n1: usize,
    x: f64,
    y: f64,
    m: InterpType,
    clamp: bool,
) -> Option<f64> {
    const EPS: f64 = 5e-5;
    let px = |i: i64, j: i64| {
        let i = i.clamp(0, n0 as i64 - 1) as usize;
        let j = j.clamp(0, n1 as i64 - 1) as usize;
        img[i + j * n0]
    };
    match m {
        InterpType::NEAREST | InterpType::LOWER => {
            let off = if m == InterpType::NEAREST { 0.5 } else { 0.0 };
            if lattice_gap(x, off) < EPS || lattice_gap(y, off) < EPS {
                return None;
            }
            let (mut i, mut j) = if m == InterpType::NEAREST {
                (x.round() as i64, y.round() as i64)
            } else {
                (x.floor() as i64, y.floor() as i64)
            };
            if clamp {
                i = i.clamp(0, n0 as i64 - 1);
                j = j.clamp(0, n1 as i64 - 1);
            }
            let inside = i >= 0 && i < n0 as i64 && j >= 0 && j < n1 as i64;
            Some(if inside { px(i, j) } else { 0.0 })
        }
        _ => {
            let near_edge = |v: f64, n: usize| (v + 1e-4).abs() < EPS || (v - n as f64).abs() < EPS;
            if near_edge(x, n0) || near_edge(y, n1) {
                return None;
            }
            if !(x >= -1e-4 && x < n0 as f64 && y >= -1e-4 && y < n1 as f64) {
                return Some(0.0);
            }
            let (x, y) = (x.max(0.0), y.max(0.0));
            let (i, j) = (x.floor() as i64, y.floor() as i64);
            let (mut tx, mut ty) = (x - i as f64, y - j as f64);
            Some(match m {
                InterpType::BILINEAR | InterpType::BILINEAR_COSINE => {
                    if m == InterpType::BILINEAR_COSINE {
                        tx = (1.0 - (tx * std::f64::consts::PI).cos()) / 2.0;
                        ty = (1.0 - (ty * std::f64::consts::PI).cos()) / 2.0;
                    }
                    let top = px(i, j) * (1.0 - tx) + px(i + 1, j) * tx;
                    let bottom = px(i, j + 1) * (1.0 - tx) + px(i + 1, j + 1) * tx;
                    top * (1.0 - ty) + bottom * ty
                }
                _ => {
                    let spline = m == InterpType::BICUBIC_SPLINE;
                    let row = |jj: i64| {
                        cubic([px(i - 1, jj), px(i, jj), px(i + 1, jj), px(i + 2, jj)], tx, spline)
                    };
                    cubic([row(j - 1), row(j), row(j + 1), row(j + 2)], ty, spline)
                }
            })
        }
    }
}

/// Applies the row-major 3 x 3 map `m` to (x, y).
fn apply(m: &[f64; 9], x: f64, y: f64) -> (f64, f64) {
    let w = m[6] * x + m[7] * y + m[8];
    ((m[0] * x + m[1] * y + m[2]) / w, (m[3] * x + m[4] * y + m[5]) / w)
}

/// The inverse of a 3 x 3 row-major matrix by Gauss-Jordan elimination with pivoting.
fn invert(m: [f64; 9]) -> [f64; 9] {
    let mut a = [[0.0; 6]; 3];
    for r in 0..3 {
        for c in 0..3 {
            a[r][c] = m[r * 3 + c];
        }
        a[r][3 + r] = 1.0;
    }
    for c in 0..3 {
        let p = (c..3).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs())).unwrap();
        a.swap(c, p);
        let d = a[c][c];
        for v in a[c].iter_mut() {
            *v /= d;
        }
        let pivot = a[c];
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c];
                for (v, p) in row.iter_mut().zip(pivot) {
                    *v -= f * p;
                }
            }
        }
    }
    std::array::from_fn(|k| a[k / 3][3 + k % 3])
}

/// The reference warp of `img` (shape `id`) into shape `od` with one map per output image
/// (`map(z, w)`), and a mask of the pixels that could be decided.
fn warp_ref(
    img: &[f64],
    id: [usize; 4],
    od: [usize; 4],
    map: &dyn Fn(usize, usize) -> [f64; 9],
    m: InterpType,
    clamp: bool,
) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity(od.iter().product());
    for w in 0..od[3] {
        for z in 0..od[2] {
            let (iz, iw) = (if id[2] > 1 { z } else { 0 }, if id[3] > 1 { w } else { 0 });
            let base = (iz + id[2] * iw) * id[0] * id[1];
            let image = &img[base..base + id[0] * id[1]];
            let t = map(z, w);
            for y in 0..od[1] {
                for x in 0..od[0] {
                    let (xi, yi) = apply(&t, x as f64, y as f64);
                    out.push(sample(image, id[0], id[1], xi, yi, m, clamp));
                }
            }
        }
    }
    out
}

/// Asserts `got` against the decided pixels of `want`: floating types within `tol` relative
/// to the image's range, integers (truncated toward zero by the library) within one.
fn check_warp<T: Elem>(
    got: &Array<T>,
    od: [usize; 4],
    want: &[Option<f64>],
    range: f64,
    what: &str,
) {
    assert_eq!(got.dims(), d4(od), "{what}: dims");
    let g = got.to_vec();
    assert_eq!(g.len(), want.len(), "{what}: element count");
    let mut decided = 0;
    for (i, (x, w)) in g.iter().zip(want).enumerate() {
        let Some(w) = *w else { continue };
        decided += 1;
        let v = x.to_v();
        if T::TY.dtype.is_integer() {
            // truncated toward zero and saturated at the type's range
            let (x, w) = (v.f(), T::from_v(V::F(w)).to_v().f());
            assert!((x - w).abs() <= 1.0, "{what}, pixel {i}: got {x}, want {w}");
        } else {
            let x = v.f();
            let tol = if T::TY.dtype == DType::F64 { 1e-9 } else { 2e-4 } * range;
            assert!((x - w).abs() <= tol, "{what}, pixel {i}: got {x}, want {w}");
        }
    }
    if want.len() >= 16 {
        assert!(decided * 4 >= want.len(), "{what}: too few pixels could be decided ({decided})");
    }
}

// ---- resize ---------------------------------------------------------------------------------

fn resize_case<T: Elem>(seed: u64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (n0, n1) in SIZES {
        for (o0, o1) in [(1, 1), (2 * n0 + 1, n1 + 2), ((n0 / 2).max(1), (n1 / 3).max(1)), (7, 4)] {
            let id = [n0, n1, 2, 1];
            let img: Vec<T> = uniform(&mut r, id.iter().product(), 0.0, hi);
            let a = Array::new(&img, d4(id));
            let x = f64s(&img);
            let od = [o0, o1, 2, 1];
            let (s0, s1) = (n0 as f64 / o0 as f64, n1 as f64 / o1 as f64);
            let map = [s0, 0.0, 0.0, 0.0, s1, 0.0, 0.0, 0.0, 1.0];
            for m in METHODS {
                let got = resize(&a, o0 as i64, o1 as i64, m);
                let want = warp_ref(&x, id, od, &|_, _| map, m, true);
                check_warp(&got, od, &want, hi, &format!("resize {n0}x{n1} to {o0}x{o1} by {m:?}"));
            }
        }
    }
}

#[test]
fn resize_samples_every_method() {
    resize_case::<f32>(1, 100.0);
    resize_case::<f64>(2, 1.0);
    resize_case::<u8>(3, 255.0);
    resize_case::<i32>(4, 1e6);
}

#[test]
fn resize_nearest_copies_large_integers_exactly() {
    let v: Vec<i64> = vec![i64::MAX - 1, -7, 1 << 60, 3];
    let a = Array::new(&v, dim4!(2, 2));
    let big = resize(&a, 4, 4, InterpType::NEAREST).to_vec();
    // x * 2 / 4 rounded: 0, 1 (0.5 rounds away from zero), 1, 2 -> clamped to 1
    assert_eq!(&big[0..4], &[v[0], v[1], v[1], v[1]]);
}

#[test]
fn resize_half_and_double_match_the_bilinear_formula() {
    // the benchmark's shapes, smaller: bilinear halving reads pixel (2x, 2y) exactly
    let mut r = Rng64::seed_from_u64(5);
    let img: Vec<f32> = uniform(&mut r, 64 * 48, 0.0, 255.0);
    let a = Array::new(&img, dim4!(64, 48));
    let half = resize(&a, 32, 24, InterpType::BILINEAR).to_vec();
    for y in 0..24 {
        for x in 0..32 {
            assert_eq!(half[x + 32 * y], img[2 * x + 64 * 2 * y], "half at ({x}, {y})");
        }
    }
    let double = resize(&a, 128, 96, InterpType::BILINEAR).to_vec();
    let (x, y) = (3, 5); // point (1.5, 2.5)
    let want = (img[1 + 64 * 2] + img[2 + 64 * 2] + img[1 + 64 * 3] + img[2 + 64 * 3]) / 4.0;
    assert!((double[x + 128 * y] - want).abs() < 1e-3);
}

/// Resizes by exactly two (halving and doubling) in the shapes the dedicated kernels take
/// (rows of multiples of four elements, several images) and those they leave to the general
/// ones (other sizes, views with an offset), in each element type they take, against the
/// reference; f32 halving exactly (it moves samples), the rest with `check_warp`'s tolerance.
fn by_two_case<T: Elem>(seed: u64, hi: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    // (n0, n1, images) halved, then doubled
    let halved = [(64, 48, 3), (8, 2, 1), (24, 10, 2), (136, 6, 1), (20, 6, 1), (66, 8, 1)];
    let doubled = [(4, 1, 1), (2, 2, 1), (32, 17, 2), (66, 3, 3), (6, 5, 1), (5, 3, 1), (1, 1, 2)];
    let cases = halved.iter().map(|&s| (s, true)).chain(doubled.iter().map(|&s| (s, false)));
    for ((n0, n1, k), halve) in cases {
        let (o0, o1) = if halve { (n0 / 2, n1 / 2) } else { (2 * n0, 2 * n1) };
        let id = [n0, n1, k, 1];
        let od = [o0, o1, k, 1];
        let img: Vec<T> = uniform(&mut r, id.iter().product(), 0.0, hi);
        let x = f64s(&img);
        let map = [n0 as f64 / o0 as f64, 0.0, 0.0, 0.0, n1 as f64 / o1 as f64, 0.0, 0.0, 0.0, 1.0];
        let want = warp_ref(&x, id, od, &|_, _| map, InterpType::BILINEAR, true);
        let what = format!("{n0}x{n1}x{k} to {o0}x{o1}");
        let a = Array::new(&img, d4(id));
        let got = resize(&a, o0 as i64, o1 as i64, InterpType::BILINEAR);
        check_warp(&got, od, &want, hi, &what);
        if halve && T::TY.dtype == DType::F32 {
            for (i, (g, w)) in got.to_vec().iter().zip(&want).enumerate() {
                assert_eq!(g.to_v().f(), w.unwrap(), "{what}: pixel {i} is a sample");
            }
        }
        // the same images as a view one column in (its start no longer aligned)
        let wider: Vec<T> = (0..(n0 + 1) * n1 * k)
            .map(|i| {
                let (c, rest) = (i % (n0 + 1), i / (n0 + 1));
                if c == 0 {
                    T::from_v(V::F(0.0))
                } else {
                    img[c - 1 + n0 * rest]
                }
            })
            .collect();
        let big = Array::new(&wider, dim4!(n0 as u64 + 1, n1 as u64, k as u64));
        let view = index(&big, &[Seq::new(1.0, n0 as f64, 1.0), Seq::default(), Seq::default()]);
        let got = resize(&view, o0 as i64, o1 as i64, InterpType::BILINEAR);
        check_warp(&got, od, &want, hi, &format!("{what} from a view"));
    }
}

#[test]
fn resize_by_exactly_two_in_every_shape_and_type() {
    by_two_case::<f32>(11, 100.0);
    by_two_case::<u8>(12, 255.0);
    by_two_case::<i16>(13, 3e4);
    by_two_case::<u16>(14, 6e4);
    by_two_case::<i32>(15, 1e6);
    by_two_case::<f64>(16, 1.0);
}

/// Infinities, NaN and negative zeros in images halved and doubled: the neighbours a sample
/// weighs by 0 still count (0 times an infinity is NaN) and +0 from a neighbour turns a -0
/// sample into +0, in the dedicated kernels as in the general ones and the reference.
#[test]
fn resize_by_exactly_two_keeps_the_formula_at_special_values() {
    let (n0, n1) = (16usize, 8usize);
    let mut img: Vec<f32> = (0..n0 * n1).map(|i| (i % 13) as f32 - 6.0).collect();
    for (at, v) in [(0, f32::INFINITY), (3, f32::NAN), (18, -0.0), (34, -0.0), (35, -1.0)] {
        img[at] = v;
    }
    img[16 * 5 + 9] = f32::NEG_INFINITY;
    let x: Vec<f64> = img.iter().map(|&v| v as f64).collect();
    let a = Array::new(&img, dim4!(n0 as u64, n1 as u64));
    for (o0, o1) in [(n0 / 2, n1 / 2), (2 * n0, 2 * n1)] {
        let map = [n0 as f64 / o0 as f64, 0.0, 0.0, 0.0, n1 as f64 / o1 as f64, 0.0, 0.0, 0.0, 1.0];
        let od = [o0, o1, 1, 1];
        let want = warp_ref(&x, [n0, n1, 1, 1], od, &|_, _| map, InterpType::BILINEAR, true);
        let got = resize(&a, o0 as i64, o1 as i64, InterpType::BILINEAR).to_vec();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let w = w.unwrap();
            let same = if w.is_nan() {
                g.is_nan()
            } else if w == 0.0 {
                g.to_bits() == (w as f32).to_bits()
            } else {
                (*g as f64 - w).abs() <= 1e-6 * w.abs() || *g as f64 == w
            };
            assert!(same, "{o0}x{o1}: pixel {i}: got {g:?}, want {w:?}");
        }
    }
}

#[test]
fn resize_warps_complex_images_part_by_part() {
    let v: Vec<c32> = (0..12).map(|k| c32::new(k as f32, -2.0 * k as f32)).collect();
    let a = Array::new(&v, dim4!(3, 4));
    let got = resize(&a, 5, 3, InterpType::BILINEAR).to_vec();
    let re: Vec<f32> = v.iter().map(|c| c.re).collect();
    let want = resize(&Array::new(&re, dim4!(3, 4)), 5, 3, InterpType::BILINEAR).to_vec();
    for (g, w) in got.iter().zip(&want) {
        assert!((g.re - w).abs() < 1e-5 && (g.im + 2.0 * w).abs() < 1e-5, "{g} vs {w}");
    }
}

#[test]
fn resize_of_an_empty_batch_is_empty() {
    let a = Array::new(&[] as &[f32], dim4!(3, 4, 0));
    let r = resize(&a, 5, 6, InterpType::BILINEAR);
    assert_eq!(r.dims(), dim4!(5, 6, 0));
}

#[test]
#[should_panic(expected = "resize: odim0 and odim1 must be positive")]
fn resize_refuses_an_empty_output() {
    resize(&Array::new(&[1.0f32], dim4!(1)), 0, 3, InterpType::NEAREST);
}

#[test]
#[should_panic(expected = "resize")]
fn resize_refuses_a_negative_size() {
    resize(&Array::new(&[1.0f32], dim4!(1)), -2, 3, InterpType::NEAREST);
}

// ---- transform ------------------------------------------------------------------------------

/// A 3 x 2 (affine) or 3 x 3 map as transform takes it: the row-major coefficients in order.
fn tf_array(maps: &[[f64; 9]], affine: bool, batch: [u64; 2]) -> Array<f32> {
    let per = if affine { 6 } else { 9 };
    let v: Vec<f32> = maps.iter().flat_map(|m| m[..per].iter().map(|&x| x as f32)).collect();
    Array::new(&v, dim4!(3, if affine { 2 } else { 3 }, batch[0], batch[1]))
}

/// Rounds a map's coefficients to f32, as the library receives them.
fn f32_map(m: [f64; 9]) -> [f64; 9] {
    m.map(|v| v as f32 as f64)
}

#[test]
fn transform_affine_and_projective_both_ways() {
    let mut r = Rng64::seed_from_u64(6);
    let affine = [0.9, -0.3, 1.7, 0.25, 1.1, -2.2, 0.0, 0.0, 1.0];
    let projective = [1.05, 0.1, -0.5, -0.05, 0.95, 1.5, 0.004, -0.006, 1.0];
    for (n0, n1) in [(3, 5), (67, 41), (1, 7)] {
        let id = [n0, n1, 1, 1];
        let img: Vec<f32> = uniform(&mut r, n0 * n1, -10.0, 10.0);
        let (a, x) = (Array::new(&img, d4(id)), f64s(&img));
        for (map, is_affine) in [(affine, true), (projective, false)] {
            for inverse in [true, false] {
                let tf = tf_array(&[map], is_affine, [1, 1]);
                let used = if inverse { f32_map(map) } else { invert(f32_map(map)) };
                for m in METHODS {
                    let (o0, o1) = (n0 + 2, n1 + 1);
                    let got = transform(&a, &tf, o0 as i64, o1 as i64, m, inverse);
                    let od = [o0, o1, 1, 1];
                    let want = warp_ref(&x, id, od, &|_, _| used, m, false);
                    let what =
                        format!("transform {n0}x{n1} affine {is_affine} inverse {inverse} {m:?}");
                    check_warp(&got, od, &want, 20.0, &what);
                }
            }
        }
    }
}

#[test]
fn transform_forward_then_inverse_restores_the_image() {
    // a rotation by a quarter turn about the centre of a square, forward then its own map
    let img: Vec<f64> = (0..25).map(|v| v as f64).collect();
    let a = Array::new(&img, dim4!(5, 5));
    let quarter = [0.0, -1.0, 4.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    let tf = tf_array(&[quarter], true, [1, 1]);
    let there = transform(&a, &tf, 0, 0, InterpType::NEAREST, false);
    let back = transform(&there, &tf, 0, 0, InterpType::NEAREST, true);
    assert_eq!(back.to_vec(), img);
}

#[test]
fn transform_batches_as_arrayfire_does() {
    let mut r = Rng64::seed_from_u64(7);
    let maps: Vec<[f64; 9]> = (0..6)
        .map(|k| {
            let t = 0.2 * k as f64;
            [t.cos(), -t.sin(), 0.5 * k as f64, t.sin(), t.cos(), -0.3 * k as f64, 0.0, 0.0, 1.0]
        })
        .collect();
    // (image dims 2 and 3, map dims 2 and 3): one map for all, one image for all maps,
    // one map per image, and crossed batches
    let cases: [([usize; 2], [u64; 2]); 4] =
        [([3, 2], [1, 1]), ([1, 1], [3, 2]), ([2, 3], [2, 3]), ([2, 1], [1, 3])];
    for (ib, tb) in cases {
        let id = [9, 7, ib[0], ib[1]];
        let img: Vec<f32> = uniform(&mut r, id.iter().product(), 0.0, 1.0);
        let (a, x) = (Array::new(&img, d4(id)), f64s(&img));
        let used: Vec<[f64; 9]> =
            maps[..(tb[0] * tb[1]) as usize].iter().map(|&m| f32_map(m)).collect();
        let tf = tf_array(&used, true, tb);
        let od = [10, 8, ib[0].max(tb[0] as usize), ib[1].max(tb[1] as usize)];
        let got = transform(&a, &tf, 10, 8, InterpType::BILINEAR, true);
        let pick = |z: usize, w: usize| {
            let (tz, tw) = (if tb[0] > 1 { z } else { 0 }, if tb[1] > 1 { w } else { 0 });
            used[tz + tb[0] as usize * tw]
        };
        let want = warp_ref(&x, id, od, &pick, InterpType::BILINEAR, false);
        check_warp(&got, od, &want, 1.0, &format!("batched transform {ib:?} by {tb:?}"));
    }
}

#[test]
#[should_panic(expected = "transform: trans must be 3 x 2 (affine) or 3 x 3")]
fn transform_refuses_a_bad_matrix() {
    let tf = Array::new(&[1.0f32; 4], dim4!(2, 2));
    transform(&Array::new(&[1.0f32; 4], dim4!(2, 2)), &tf, 0, 0, InterpType::NEAREST, true);
}

#[test]
#[should_panic(expected = "transform: the images (dims")]
fn transform_refuses_mismatched_batches() {
    let tf = Array::new(&[1.0f32, 0.0, 0.0, 0.0, 1.0, 0.0].repeat(2), dim4!(3, 2, 2));
    transform(&Array::new(&[1.0f32; 12], dim4!(2, 2, 3)), &tf, 2, 2, InterpType::NEAREST, true);
}

#[test]
#[should_panic(expected = "is not invertible")]
fn transform_refuses_a_singular_forward_map() {
    let tf = Array::new(&[1.0f32, 2.0, 0.0, 2.0, 4.0, 0.0], dim4!(3, 2));
    transform(&Array::new(&[1.0f32; 4], dim4!(2, 2)), &tf, 0, 0, InterpType::NEAREST, false);
}

// ---- rotate, translate, scale, skew ----------------------------------------------------------

#[test]
fn rotate_about_the_centre_with_and_without_crop() {
    let mut r = Rng64::seed_from_u64(8);
    for (n0, n1) in [(3, 5), (40, 31), (1, 1)] {
        let id = [n0, n1, 3, 1];
        let img: Vec<f64> = uniform(&mut r, id.iter().product(), 0.0, 1.0);
        let a = Array::new(&img, d4(id));
        for theta in [0.3f64, -1.2, 2.0] {
            for crop in [true, false] {
                let (o0, o1) = if crop {
                    (n0, n1)
                } else {
                    let (c, s) = (theta.cos().abs(), theta.sin().abs());
                    (
                        (n0 as f64 * c + n1 as f64 * s) as usize,
                        (n1 as f64 * c + n0 as f64 * s) as usize,
                    )
                };
                // output centre to input centre, turned by -theta
                let (c, s) = ((-theta).cos(), (-theta).sin());
                let (cx, cy) = ((n0 as f64 - 1.0) / 2.0, (n1 as f64 - 1.0) / 2.0);
                let (mx, my) = ((o0 as f64 - 1.0) / 2.0, (o1 as f64 - 1.0) / 2.0);
                let map = [c, -s, cx - c * mx + s * my, s, c, cy - s * mx - c * my, 0.0, 0.0, 1.0];
                for m in METHODS {
                    let got = rotate(&a, theta, crop, m);
                    let od = [o0, o1, 3, 1];
                    let want = warp_ref(&img, id, od, &|_, _| map, m, false);
                    check_warp(
                        &got,
                        od,
                        &want,
                        1.0,
                        &format!("rotate {n0}x{n1} by {theta} crop {crop} {m:?}"),
                    );
                }
            }
        }
    }
}

#[test]
fn translate_scale_and_skew_follow_their_maps() {
    let mut r = Rng64::seed_from_u64(9);
    let id = [13, 11, 1, 2];
    let img: Vec<f32> = uniform(&mut r, id.iter().product(), 0.0, 50.0);
    let (a, x) = (Array::new(&img, d4(id)), f64s(&img));
    let (t0, t1) = (2.3f32, -1.2f32);
    let (s0, s1) = (1.5f32, 0.75f32);
    let (k0, k1) = (0.2f32, -0.35f32);
    let (tx, ty) = ((k0 as f64).tan(), (k1 as f64).tan());
    let skew_map = [1.0, ty, 0.0, tx, 1.0, 0.0, 0.0, 0.0, 1.0];
    for m in METHODS {
        let got = translate(&a, t0, t1, 15, 9, m);
        let od = [15, 9, 1, 2];
        let map = [1.0, 0.0, t0 as f64, 0.0, 1.0, t1 as f64, 0.0, 0.0, 1.0];
        check_warp(
            &got,
            od,
            &warp_ref(&x, id, od, &|_, _| map, m, false),
            50.0,
            &format!("translate {m:?}"),
        );

        // sizes from the scales: 13 * 1.5 = 19.5 -> 19, 11 * 0.75 = 8.25 -> 8
        let got = scale(&a, s0, s1, 0, 0, m);
        let od = [19, 8, 1, 2];
        let map = [1.0 / s0 as f64, 0.0, 0.0, 0.0, 1.0 / s1 as f64, 0.0, 0.0, 0.0, 1.0];
        check_warp(
            &got,
            od,
            &warp_ref(&x, id, od, &|_, _| map, m, false),
            50.0,
            &format!("scale {m:?}"),
        );
        // scales from the sizes
        let got = scale(&a, 0.0, 0.0, 20, 5, m);
        let od = [20, 5, 1, 2];
        let map = [13.0 / 20.0, 0.0, 0.0, 0.0, 11.0 / 5.0, 0.0, 0.0, 0.0, 1.0];
        check_warp(
            &got,
            od,
            &warp_ref(&x, id, od, &|_, _| map, m, false),
            50.0,
            &format!("scale to size {m:?}"),
        );

        for inverse in [false, true] {
            let got = skew(&a, k0, k1, 0, 0, m, inverse);
            let od = [13, 11, 1, 2];
            let map = if inverse { invert(skew_map) } else { skew_map };
            let what = format!("skew inverse {inverse} {m:?}");
            check_warp(&got, od, &warp_ref(&x, id, od, &|_, _| map, m, false), 50.0, &what);
        }
    }
}

#[test]
fn transform_coords_maps_the_four_corners() {
    let tf = [1.1f64, 0.2, 3.0, -0.1, 0.9, -2.0, 0.001, 0.002, 1.0];
    // column-major 3 x 3: column c holds the coefficients of output coordinate c
    let cm: Vec<f64> = (0..9).map(|k| tf[(k % 3) + 3 * (k / 3)]).collect();
    let a = Array::new(&cm, dim4!(3, 3));
    let (d0, d1) = (40.0f32, 30.0f32);
    let got = transform_coords(&a, d0, d1);
    assert_eq!(got.dims(), dim4!(4, 2));
    let g = got.to_vec();
    let corners = [(0.0, 0.0), (0.0, d0 as f64), (d1 as f64, d0 as f64), (d1 as f64, 0.0)];
    for (i, (p, q)) in corners.into_iter().enumerate() {
        let w = p * tf[6] + q * tf[7] + tf[8];
        let x = (p * tf[0] + q * tf[1] + tf[2]) / w;
        let y = (p * tf[3] + q * tf[4] + tf[5]) / w;
        assert!((g[i] - x).abs() < 1e-9 && (g[4 + i] - y).abs() < 1e-9, "corner {i}");
    }
}

#[test]
#[should_panic(expected = "transform_coords: tf must be 3 x 3")]
fn transform_coords_refuses_an_affine_matrix() {
    transform_coords(&Array::new(&[0.0f32; 6], dim4!(3, 2)), 1.0, 1.0);
}

// ---- histogram ------------------------------------------------------------------------------

/// The reference histogram: bins by `floor((v - lo) * scale)` computed in the type the
/// library documents (f32, or f64 for 64-bit and f64 input), counted per 2D slice.
fn hist_ref(x: &[f64], slices: usize, nbins: usize, lo: f64, hi: f64, wide: bool) -> Vec<u32> {
    let mut out = vec![0u32; slices * nbins];
    let per = x.len().checked_div(slices).unwrap_or(0);
    for (s, slice) in x.chunks(per.max(1)).enumerate().take(slices) {
        for &v in slice {
            if v.is_nan() {
                continue;
            }
            let f = if wide {
                ((v - lo) * (nbins as f64 / (hi - lo))).floor()
            } else {
                let scale = (nbins as f64 / (hi - lo)) as f32;
                ((v as f32 - lo as f32) * scale).floor() as f64
            };
            let b = if f < 0.0 {
                0
            } else if f >= nbins as f64 {
                nbins - 1
            } else {
                f as usize
            };
            out[s * nbins + b] += 1;
        }
    }
    out
}

fn histogram_case<T: Elem + RealNumber>(seed: u64, lo: f64, hi: f64, wide: bool) {
    let mut r = Rng64::seed_from_u64(seed);
    for dims in [[1, 1, 1, 1], [1, 9, 1, 1], [37, 29, 1, 1], [5, 3, 2, 3], [300, 200, 1, 1]] {
        for (nbins, blo, bhi) in
            [(1, lo, hi), (7, lo, hi), (256, lo + 0.1 * (hi - lo), hi), (20_000, lo, hi)]
        {
            let n: usize = dims.iter().product();
            let v: Vec<T> = uniform(&mut r, n, lo, hi);
            let a = Array::new(&v, d4(dims));
            let got = histogram(&a, nbins as u32, blo, bhi);
            let slices = dims[2] * dims[3];
            assert_eq!(got.dims(), dim4!(nbins as u64, 1, dims[2] as u64, dims[3] as u64));
            let want = hist_ref(&f64s(&v), slices, nbins, blo, bhi, wide);
            assert_eq!(
                got.to_vec(),
                want,
                "histogram of {dims:?} into {nbins} bins over [{blo}, {bhi}]"
            );
        }
    }
}

#[test]
fn histogram_counts_every_type() {
    histogram_case::<f32>(10, -3.0, 7.0, false);
    histogram_case::<f64>(11, -3.0, 7.0, true);
    histogram_case::<u8>(12, 0.0, 256.0, false);
    histogram_case::<i16>(13, -300.0, 300.0, false);
    histogram_case::<u16>(14, 0.0, 60_000.0, false);
    histogram_case::<i32>(15, -1e6, 1e6, false);
    histogram_case::<u32>(16, 0.0, 4e9, false);
    histogram_case::<i64>(17, -1e12, 1e12, true);
    histogram_case::<u64>(18, 0.0, 1e12, true);
}

#[test]
fn histogram_of_u8_levels_has_one_bin_per_level() {
    let v: Vec<u8> = (0..=255u8).chain([0, 255, 128]).collect();
    let h = histogram(&Array::new(&v, dim4!(v.len() as u64)), 256, 0.0, 255.0).to_vec();
    let mut want = vec![1u32; 256];
    want[0] = 2;
    want[128] = 2;
    want[255] = 2;
    assert_eq!(h, want);
}

#[test]
fn histogram_of_large_u8_images_in_many_slices_matches_the_reference() {
    // Several counting tasks per slice, a length that is not a multiple of four, runs of equal
    // values, and a range narrower than the bytes (outliers clamp to the end bins).
    let mut r = Rng64::seed_from_u64(19);
    let (n0, n1, slices) = (517usize, 301usize, 3usize);
    let mut v: Vec<u8> = uniform(&mut r, n0 * n1 * slices, 0.0, 256.0);
    v[1000..5000].fill(77);
    let a = Array::new(&v, dim4!(n0 as u64, n1 as u64, slices as u64));
    for (nbins, lo, hi) in [(256, 0.0, 255.0), (100, 20.5, 230.0), (3, 100.0, 101.0)] {
        let got = histogram(&a, nbins as u32, lo, hi).to_vec();
        let want = hist_ref(&f64s(&v), slices, nbins, lo, hi, false);
        assert_eq!(got, want, "{nbins} bins over [{lo}, {hi}]");
    }
}

#[test]
fn histogram_skips_nan_and_clamps_outliers() {
    let v = [f32::NAN, -5.0, 0.0, 0.5, 1.0, 9.0, f32::INFINITY, f32::NEG_INFINITY];
    let h = histogram(&Array::new(&v, dim4!(8)), 2, 0.0, 1.0).to_vec();
    assert_eq!(h, vec![3, 4]); // -inf, -5, 0 | 0.5 (bin 0.5 * 2 = 1), 1, 9, inf
}

#[test]
fn histogram_of_bool_and_empty_input() {
    let b = Array::new(&[true, false, true, true], dim4!(2, 2));
    assert_eq!(histogram(&b, 2, 0.0, 2.0).to_vec(), vec![1, 3]);
    let e = Array::new(&[] as &[f32], dim4!(0, 3));
    assert_eq!(histogram(&e, 4, 0.0, 1.0).to_vec(), vec![0; 4]);
}

#[test]
#[should_panic(expected = "histogram: nbins is 0")]
fn histogram_refuses_zero_bins() {
    histogram(&Array::new(&[1.0f32], dim4!(1)), 0, 0.0, 1.0);
}

#[test]
#[should_panic(expected = "minval below maxval")]
fn histogram_refuses_an_empty_range() {
    histogram(&Array::new(&[1.0f32], dim4!(1)), 4, 1.0, 1.0);
}

#[test]
fn transforms_and_histograms_of_a_large_odd_image() {
    let id = [1023, 769, 1, 1];
    let mut r = Rng64::seed_from_u64(30);
    let img: Vec<f32> = uniform(&mut r, id.iter().product(), 0.0, 255.0);
    let (a, x) = (Array::new(&img, d4(id)), f64s(&img));
    for (o0, o1) in [(511, 384), (2046, 1538)] {
        let od = [o0, o1, 1, 1];
        let (s0, s1) = (1023.0 / o0 as f64, 769.0 / o1 as f64);
        let map = [s0, 0.0, 0.0, 0.0, s1, 0.0, 0.0, 0.0, 1.0];
        let got = resize(&a, o0 as i64, o1 as i64, InterpType::BILINEAR);
        let want = warp_ref(&x, id, od, &|_, _| map, InterpType::BILINEAR, true);
        check_warp(&got, od, &want, 255.0, &format!("resize 1023x769 to {o0}x{o1}"));
    }
    let theta = 0.7f64;
    let got = rotate(&a, theta, true, InterpType::BILINEAR);
    let (c, s) = ((-theta).cos(), (-theta).sin());
    let (m0, m1) = (511.0, 384.0);
    let map = [c, -s, m0 - c * m0 + s * m1, s, c, m1 - s * m0 - c * m1, 0.0, 0.0, 1.0];
    let want = warp_ref(&x, id, id, &|_, _| map, InterpType::BILINEAR, false);
    check_warp(&got, id, &want, 255.0, "rotate 1023x769");
    let levels: Vec<u8> = img.iter().map(|&v| v as u8).collect();
    let h = histogram(&Array::new(&levels, d4(id)), 256, 0.0, 255.0).to_vec();
    let mut want = vec![0u32; 256];
    for &v in &levels {
        want[(v as f64 * 256.0 / 255.0).floor().min(255.0) as usize] += 1;
    }
    assert_eq!(h, want, "histogram of 1023x769 levels");
}
