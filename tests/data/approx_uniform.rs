//! The uniform-grid interpolations (`approx1_uniform`, `approx2_uniform`) and the `_v2` forms
//! that write into an output array, against host references in f64: every element type and
//! position type they accept, random shapes (empty and size-1 dimensions included), every
//! interpolated dimension (and pair of them), shared and per-line positions, ascending and
//! descending grids, positions on the grid's ends, outside it and NaN; and their errors.

use crate::common;

use common::{check_all, coords, run_cases, Elem, Rng, Rng64, SeedableRng, Tol, V};
use emberfire::*;
use num_complex::Complex64;

/// Grids whose coordinates, and positions at multiples of 1/8 of a step, are exact in f32.
const STARTS: [f64; 3] = [0.0, -1.5, 2.25];
const STEPS: [f64; 4] = [0.5, 1.0, -0.25, 2.0];

/// Interpolates `n` samples (`at(i)`) at index `u` with `m`; None off the grid.
fn interp(n: usize, u: f64, m: InterpType, at: &dyn Fn(usize) -> Complex64) -> Option<Complex64> {
    if u.is_nan() || u < 0.0 || u > (n as f64 - 1.0) {
        return None;
    }
    let i = u.floor() as usize;
    Some(match m {
        InterpType::NEAREST => at(u.round() as usize),
        InterpType::LOWER => at(i),
        _ => {
            let f = u - i as f64;
            // At the last sample the next one has weight zero.
            let next = if i + 1 < n { at(i + 1) } else { at(i) };
            at(i) * (1.0 - f) + next * f
        }
    })
}

fn lin(c: [u64; 4], dims: Dim4) -> usize {
    (0..4).map(|k| c[k] * (0..k).map(|q| dims[q]).product::<u64>()).sum::<u64>() as usize
}

/// A position at index `k / 8` of the grid (k may be outside it), sometimes NaN.
fn position(r: &mut Rng64, n: usize, start: f64, step: f64) -> f64 {
    if r.gen_range(0..16) == 0 {
        return f64::NAN;
    }
    let k = r.gen_range(-8i64..=8 * n as i64 + 8);
    start + k as f64 / 8.0 * step
}

fn value<T: Elem>(v: Complex64) -> V {
    match T::to_v(T::small(&mut Rng64::seed_from_u64(0))) {
        V::C(_) => V::C(v),
        _ => V::F(v.re),
    }
}

const METHODS1: [InterpType; 3] = [InterpType::NEAREST, InterpType::LINEAR, InterpType::LOWER];

fn case1<T, P>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: Elem + FloatingPoint,
    P: Elem + RealFloating + Fromf64,
{
    let mut r = Rng64::seed_from_u64(seed);
    let d = r.gen_range(0..4usize);
    let n = dims[d] as usize;
    let (start, step) = (STARTS[r.gen_range(0..3)], STEPS[r.gen_range(0..4)]);
    let method = METHODS1[r.gen_range(0..3)];
    let m = r.gen_range(0..5u64);
    let host: Vec<T> = (0..dims.elements()).map(|_| T::small(&mut r)).collect();
    let shared = r.gen_bool(0.5);
    let mut pdims = if shared { dim4!(1) } else { dims };
    pdims[d] = m;
    let pos: Vec<P> =
        (0..pdims.elements()).map(|_| P::fromf64(position(&mut r, n, start, step))).collect();
    let mut odims = dims;
    odims[d] = m;
    let input = Array::new(&host, dims);
    let parr = Array::new(&pos, pdims);
    let got = approx1_uniform(&input, &parr, d as i32, start, step, method, -7.0);
    let what = format!("{}/{} dims {dims} dim {d} pos {pdims} {method:?}", T::TY.name, P::TY.name);
    if got.dims() != odims {
        return Err(format!("{what}: dims {}, want {odims}", got.dims()));
    }
    let want: Vec<V> = (0..odims.elements() as usize)
        .map(|o| {
            let c = coords(odims, o);
            let pc = if shared {
                let mut z = [0; 4];
                z[d] = c[d];
                z
            } else {
                c
            };
            let u = (pos[lin(pc, pdims)].to_v().f() - start) / step;
            let at = |i: usize| {
                let mut s = c;
                s[d] = i as u64;
                host[lin(s, dims)].to_v().c()
            };
            value::<T>(interp(n, u, method, &at).unwrap_or(Complex64::new(-7.0, 0.0)))
        })
        .collect();
    let tol = Tol::x(16.0).scale(8.0);
    check_all(&got.to_vec(), &want, tol, &|i| format!("{what}: element {i}"))?;
    // The _v2 form gives the same values into an array of the result's shape, and into an
    // empty one.
    let mut out = Array::new(&vec![T::from_v(V::F(99.0)); got.elements()], odims);
    let keep = out.clone();
    approx1_uniform_v2(&mut out, &input, &parr, d as i32, start, step, method, -7.0);
    check_all(&out.to_vec(), &want, tol, &|i| format!("{what}: v2 element {i}"))?;
    if keep.to_vec().iter().any(|v| v.to_v().c().re != 99.0) {
        return Err(format!("{what}: a clone of the output changed"));
    }
    let mut empty = Array::<T>::new_empty(dim4!(0));
    approx1_uniform_v2(&mut empty, &input, &parr, d as i32, start, step, method, -7.0);
    check_all(&empty.to_vec(), &want, tol, &|i| format!("{what}: v2 (empty) element {i}"))
}

fn case2<T, P>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: Elem + FloatingPoint,
    P: Elem + RealFloating + Fromf64,
{
    let mut r = Rng64::seed_from_u64(seed);
    let d0 = r.gen_range(0..4usize);
    let d1 = (d0 + r.gen_range(1..4usize)) % 4;
    let (n0, n1) = (dims[d0] as usize, dims[d1] as usize);
    let (s0, t0) = (STARTS[r.gen_range(0..3)], STEPS[r.gen_range(0..4)]);
    let (s1, t1) = (STARTS[r.gen_range(0..3)], STEPS[r.gen_range(0..4)]);
    let method = [InterpType::NEAREST, InterpType::BILINEAR, InterpType::LINEAR][r.gen_range(0..3)];
    let host: Vec<T> = (0..dims.elements()).map(|_| T::small(&mut r)).collect();
    let mut pdims = dims;
    for k in 0..4 {
        if r.gen_bool(0.5) {
            pdims[k] = 1;
        }
    }
    pdims[d0] = r.gen_range(0..4);
    pdims[d1] = r.gen_range(0..4);
    let p0: Vec<P> =
        (0..pdims.elements()).map(|_| P::fromf64(position(&mut r, n0, s0, t0))).collect();
    let p1: Vec<P> =
        (0..pdims.elements()).map(|_| P::fromf64(position(&mut r, n1, s1, t1))).collect();
    let mut odims = dims;
    odims[d0] = pdims[d0];
    odims[d1] = pdims[d1];
    let input = Array::new(&host, dims);
    let (a0, a1) = (Array::new(&p0, pdims), Array::new(&p1, pdims));
    let got = approx2_uniform(&input, &a0, d0 as i32, s0, t0, &a1, d1 as i32, s1, t1, method, 5.0);
    let what =
        format!("{}/{} dims {dims} dims {d0},{d1} pos {pdims} {method:?}", T::TY.name, P::TY.name);
    if got.dims() != odims {
        return Err(format!("{what}: dims {}, want {odims}", got.dims()));
    }
    let want: Vec<V> = (0..odims.elements() as usize)
        .map(|o| {
            let c = coords(odims, o);
            let pc: [u64; 4] = std::array::from_fn(|k| if pdims[k] == 1 { 0 } else { c[k] });
            let u = (p0[lin(pc, pdims)].to_v().f() - s0) / t0;
            let v = (p1[lin(pc, pdims)].to_v().f() - s1) / t1;
            let m1 = if method == InterpType::NEAREST { method } else { InterpType::LINEAR };
            let at = |i: usize, j: usize| {
                let mut s = c;
                s[d0] = i as u64;
                s[d1] = j as u64;
                host[lin(s, dims)].to_v().c()
            };
            // Off the grid in either direction gives the off-grid value.
            let out = interp(n1, v, m1, &|j| {
                interp(n0, u, m1, &|i| at(i, j)).unwrap_or(Complex64::new(f64::NAN, 0.0))
            });
            let out = match out {
                Some(x) if !x.re.is_nan() => x,
                _ => Complex64::new(5.0, 0.0),
            };
            value::<T>(out)
        })
        .collect();
    let tol = Tol::x(16.0).scale(8.0);
    check_all(&got.to_vec(), &want, tol, &|i| format!("{what}: element {i}"))?;
    let mut out = Array::<T>::new_empty(dim4!(0));
    approx2_uniform_v2(
        &mut out, &input, &a0, d0 as i32, s0, t0, &a1, d1 as i32, s1, t1, method, 5.0,
    );
    check_all(&out.to_vec(), &want, tol, &|i| format!("{what}: v2 element {i}"))
}

macro_rules! per_type {
    ($($name:ident: $t:ty, $p:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            run_cases(40, case1::<$t, $p>);
            run_cases(40, case2::<$t, $p>);
        }
    )*};
}

per_type!(
    f32_at_f32: f32, f32,
    f64_at_f64: f64, f64,
    f64_at_f32: f64, f32,
    c32_at_f32: c32, f32,
    c64_at_f64: c64, f64,
    f32_at_f64: f32, f64,
);

#[test]
fn v2_forms_of_approx1_and_approx2_match_them() {
    let y = Array::new(&[1.0f64, 4.0, 2.0, 8.0, 3.0, 5.0], dim4!(3, 2));
    let x = Array::new(&[0.5f64, 2.0, -1.0], dim4!(3));
    let mut out = Array::new(&[0.0f64; 6], dim4!(3, 2));
    approx1_v2(&mut out, &y, &x, InterpType::LINEAR, 9.0);
    assert_eq!(out.to_vec(), vec![2.5, 2.0, 9.0, 5.5, 5.0, 9.0]);

    let p = Array::new(&[0.5f64, 1.0], dim4!(2));
    let q = Array::new(&[0.5f64, 1.0], dim4!(2));
    let mut out2 = Array::<f64>::new_empty(dim4!(0));
    approx2_v2(&mut out2, &y, &p, &q, InterpType::BILINEAR, 0.0);
    // (0.5, 0.5): mean of 1, 4, 8, 3; (1, 1): the sample at row 1, column 1
    assert_eq!(out2.to_vec(), vec![4.0, 3.0]);
}

#[test]
#[should_panic(expected = "approx1_v2: `output` has dims [2 1 1 1], but the result has dims")]
fn v2_output_of_another_shape() {
    let y = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    let x = Array::new(&[0.5f32, 1.5, 0.0], dim4!(3));
    let mut out = Array::new(&[0.0f32; 2], dim4!(2));
    approx1_v2(&mut out, &y, &x, InterpType::LINEAR, 0.0);
}

#[test]
#[should_panic(expected = "approx1_uniform: the grid along `interp_dim` must have a finite start")]
fn zero_step() {
    let y = Array::new(&[1.0f32, 2.0], dim4!(2));
    approx1_uniform(&y, &y, 0, 0.0, 0.0, InterpType::LINEAR, 0.0);
}

#[test]
#[should_panic(expected = "approx1_uniform: `interp_dim` is 4")]
fn bad_dim() {
    let y = Array::new(&[1.0f32, 2.0], dim4!(2));
    approx1_uniform(&y, &y, 4, 0.0, 1.0, InterpType::LINEAR, 0.0);
}

#[test]
#[should_panic(expected = "approx1_uniform: `pos` (dims [2 3 1 1]) must be a vector along")]
fn positions_that_do_not_fit() {
    let y = Array::new(&[1.0f32; 4], dim4!(2, 2));
    let p = Array::new(&[0.0f32; 6], dim4!(2, 3));
    approx1_uniform(&y, &p, 0, 0.0, 1.0, InterpType::LINEAR, 0.0);
}

#[test]
#[should_panic(expected = "approx1_uniform: BILINEAR is a 2D method")]
fn two_d_method_in_one_d() {
    let y = Array::new(&[1.0f32, 2.0], dim4!(2));
    approx1_uniform(&y, &y, 0, 0.0, 1.0, InterpType::BILINEAR, 0.0);
}

#[test]
#[should_panic(expected = "approx2_uniform: `interp_dim0` and `interp_dim1` are both 1")]
fn same_dims_twice() {
    let y = Array::new(&[1.0f64; 4], dim4!(2, 2));
    let p = Array::new(&[0.0f64], dim4!(1));
    approx2_uniform(&y, &p, 1, 0.0, 1.0, &p, 1, 0.0, 1.0, InterpType::BILINEAR, 0.0);
}

#[test]
#[should_panic(expected = "approx2_uniform: `pos0` (dims [1 1 1 1]) and `pos1` (dims [2 1 1 1])")]
fn positions_of_different_shapes() {
    let y = Array::new(&[1.0f64; 4], dim4!(2, 2));
    let p = Array::new(&[0.0f64], dim4!(1));
    let q = Array::new(&[0.0f64; 2], dim4!(2));
    approx2_uniform(&y, &p, 0, 0.0, 1.0, &q, 1, 0.0, 1.0, InterpType::BILINEAR, 0.0);
}

#[test]
fn plan_cache_size_does_not_change_results() {
    let x = Array::new(&[1.0f32, 2.0, 0.5, -1.0], dim4!(4));
    let before = fft(&x, 1.0, 4).to_vec();
    for size in [0, 1, 5] {
        set_fft_plan_cache_size(size);
        assert_eq!(fft(&x, 1.0, 4).to_vec(), before);
        assert_eq!(fft(&x, 1.0, 8).dims(), dim4!(8));
    }
    set_fft_plan_cache_size(16);
}

/// An image with no rows has no sample to interpolate: every point is off the grid.
#[test]
fn approx2_of_an_image_without_rows() {
    let img = Array::<f32>::new_empty(dim4!(2, 0));
    let p = Array::new(&[0.5f32], dim4!(1));
    assert_eq!(approx2(&img, &p, &p, InterpType::BILINEAR, 3.0).to_vec(), vec![3.0]);
}
