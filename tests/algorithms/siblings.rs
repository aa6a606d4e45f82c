//! Sibling reductions: reductions along one dimension whose inputs share a lazy
//! sub-expression, evaluated together (read one of them, `eval_multiple`, or read a `join` of
//! them), run in one pass. Every result is checked against a reference computed here on the
//! host in f64 (i64 for the wrapping integer ones), on every dimension, on empty, size-1, odd
//! and large shapes, with NaN in the inputs, and in mixes of reductions and output types.

use emberfire::*;

use crate::common::Rng64;
use rand::{RngCore, SeedableRng};

/// The shared SplitMix64 generator started at `seed`.
fn rng(seed: u64) -> Rng64 {
    Rng64::from_seed(seed.to_le_bytes())
}

/// Mostly in ±[0.5, 1.5]; one in `nan_every` NaN (never, for 0).
fn real(rng: &mut Rng64, nan_every: u64) -> f32 {
    if nan_every > 0 && rng.next_u64().is_multiple_of(nan_every) {
        return f32::NAN;
    }
    let m = 0.5 + (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
    if rng.next_u64().is_multiple_of(2) {
        -m
    } else {
        m
    }
}

/// For each output element of reducing `dims` along `d`, the values of its run, in order.
fn runs<V: Copy>(vals: &[V], dims: Dim4, d: usize) -> Vec<Vec<V>> {
    let dd: Vec<usize> = (0..4).map(|k| dims[k] as usize).collect();
    let inner: usize = dd[..d].iter().product();
    let outer: usize = dd[d + 1..].iter().product();
    let r = dd[d];
    let mut out = Vec::with_capacity(inner * outer);
    for o in 0..outer {
        for i in 0..inner {
            out.push((0..r).map(|j| vals[i + inner * (j + r * o)]).collect());
        }
    }
    out
}

/// Whether `got` is `want` within `tol` relative to `scale` (NaN only matches NaN).
fn near(got: f64, want: f64, tol: f64, scale: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    (got - want).abs() <= tol * scale.max(1.0)
}

fn check_f(what: &str, got: &[f32], want: &[(f64, f64)], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (&g, &(w, scale))) in got.iter().zip(want).enumerate() {
        assert!(near(g as f64, w, tol, scale), "{what}[{k}] = {g}, want {w}");
    }
}

/// The f64 minimum (`min`) or maximum of a run, ignoring NaN; NaN when all are NaN or empty.
fn extreme(run: &[f32], min: bool) -> f64 {
    let vals = run.iter().filter(|v| !v.is_nan()).map(|&v| v as f64);
    let best = if min {
        vals.fold(f64::INFINITY, f64::min)
    } else {
        vals.fold(f64::NEG_INFINITY, f64::max)
    };
    if best.is_infinite() {
        f64::NAN
    } else {
        best
    }
}

/// Shapes: empty, one element, odd, long columns, long rows and a wide one whose reduction
/// along 1 covers many full chunks per row.
fn shapes() -> Vec<Dim4> {
    vec![
        dim4!(0, 3),
        dim4!(3, 0, 2),
        dim4!(1),
        dim4!(7, 5, 3, 2),
        dim4!(33, 17),
        dim4!(1, 129, 3),
        dim4!(5, 3, 1, 9),
        dim4!(100_003),
        dim4!(3, 70_001),
        dim4!(8_200, 70),
    ]
}

/// Eight reductions of one lazy `w = 0.5 x + 1` (f32, NaN in `x`), of four output types,
/// read through one of them; each against its reference.
#[test]
fn a_mix_of_reductions_of_one_expression() {
    let mut rng = rng(42);
    for dims in shapes() {
        let n = dims.elements() as usize;
        let xs: Vec<f32> = (0..n).map(|_| real(&mut rng, 13)).collect();
        let ws: Vec<f32> = xs.iter().map(|&x| x * 0.5 + 1.0).collect();
        let x = Array::new(&xs, dims);
        for d in 0..4usize {
            let w = &x * 0.5f32 + 1.0f32;
            let squares = sum(&(&w * &w), d as i32);
            let top = max(&w, d as i32);
            let low = min(&(&w - 2.0f32), d as i32);
            let big = count(&gt(&w, &1.0f32, false), d as i32);
            let small = any_true(&lt(&w, &0.8f32, false), d as i32);
            let positive = all_true(&gt(&w, &0.3f32, false), d as i32);
            let total = sum_nan(&w, d as i32, 2.5);
            let average = mean(&w, d as i64);
            // one read computes them all
            let squares_got = squares.to_vec();
            let what = |name: &str| format!("{name} along {d} of {dims}");
            let rs = runs(&ws, dims, d);
            let abs_sum = |run: &Vec<f32>, f: &dyn Fn(f32) -> f64| {
                run.iter().map(|&v| f(v).abs()).sum::<f64>()
            };
            let want: Vec<(f64, f64)> = rs
                .iter()
                .map(|run| {
                    let s: f64 = run.iter().map(|&v| (v * v) as f64).sum();
                    (s, abs_sum(run, &|v| (v * v) as f64))
                })
                .collect();
            check_f(&what("sum(w * w)"), &squares_got, &want, 1e-6);
            let want: Vec<(f64, f64)> = rs.iter().map(|run| (extreme(run, false), 1.0)).collect();
            check_f(&what("max(w)"), &top.to_vec(), &want, 0.0);
            let shifted: Vec<Vec<f32>> =
                rs.iter().map(|run| run.iter().map(|&v| v - 2.0).collect()).collect();
            let want: Vec<(f64, f64)> =
                shifted.iter().map(|run| (extreme(run, true), 1.0)).collect();
            check_f(&what("min(w - 2)"), &low.to_vec(), &want, 0.0);
            let want: Vec<u32> =
                rs.iter().map(|run| run.iter().filter(|&&v| v > 1.0).count() as u32).collect();
            assert_eq!(big.to_vec(), want, "{}", what("count(w > 1)"));
            let want: Vec<bool> = rs.iter().map(|run| run.iter().any(|&v| v < 0.8)).collect();
            assert_eq!(small.to_vec(), want, "{}", what("any_true(w < 0.8)"));
            let want: Vec<bool> = rs.iter().map(|run| run.iter().all(|&v| v > 0.3)).collect();
            assert_eq!(positive.to_vec(), want, "{}", what("all_true(w > 0.3)"));
            let nan_to = |v: f32| if v.is_nan() { 2.5 } else { v as f64 };
            let want: Vec<(f64, f64)> = rs
                .iter()
                .map(|run| (run.iter().map(|&v| nan_to(v)).sum(), abs_sum(run, &nan_to)))
                .collect();
            check_f(&what("sum_nan(w, 2.5)"), &total.to_vec(), &want, 1e-6);
            let want: Vec<(f64, f64)> = rs
                .iter()
                .map(|run| {
                    let s: f64 = run.iter().map(|&v| v as f64).sum();
                    (s / run.len() as f64, 1.0)
                })
                .collect();
            check_f(&what("mean(w)"), &average.to_vec(), &want, 1e-6);
        }
    }
}

/// Integer siblings wrap in their output types exactly as alone: a sum, a product, a
/// minimum and a maximum of one lazy i32 expression, read with `eval_multiple`.
#[test]
fn integer_siblings_wrap_as_alone() {
    let mut rng = rng(7);
    for dims in shapes() {
        let n = dims.elements() as usize;
        let xs: Vec<i32> =
            (0..n).map(|_| (rng.next_u64() % 2_000_001) as i32 - 1_000_000).collect();
        let vs: Vec<i32> = xs.iter().map(|&x| x.wrapping_mul(3).wrapping_sub(7)).collect();
        let x = Array::new(&xs, dims);
        for d in 0..4usize {
            let v = &x * 3i32 - 7i32;
            let parts =
                [sum(&v, d as i32), product(&v, d as i32), min(&v, d as i32), max(&v, d as i32)];
            eval_multiple(parts.iter().collect());
            let rs = runs(&vs, dims, d);
            let want_sum: Vec<i32> =
                rs.iter().map(|r| r.iter().fold(0i32, |a, &b| a.wrapping_add(b))).collect();
            let want_prod: Vec<i32> =
                rs.iter().map(|r| r.iter().fold(1i32, |a, &b| a.wrapping_mul(b))).collect();
            let want_min: Vec<i32> =
                rs.iter().map(|r| r.iter().copied().min().unwrap_or(i32::MAX)).collect();
            let want_max: Vec<i32> =
                rs.iter().map(|r| r.iter().copied().max().unwrap_or(i32::MIN)).collect();
            let what = |name: &str| format!("{name} along {d} of {dims}");
            assert_eq!(parts[0].to_vec(), want_sum, "{}", what("sum"));
            assert_eq!(parts[1].to_vec(), want_prod, "{}", what("product"));
            assert_eq!(parts[2].to_vec(), want_min, "{}", what("min"));
            assert_eq!(parts[3].to_vec(), want_max, "{}", what("max"));
        }
    }
}

/// n-body's accelerations as benches/apps.rs computes them: three sums over one pair
/// expression, joined one by one, read once.
#[test]
fn nbody_sums_joined_one_by_one() {
    let mut rng = rng(3);
    for bodies in [1usize, 2, 37, 300] {
        let pos: Vec<f32> = (0..bodies * 3).map(|_| real(&mut rng, 0) * 4.0).collect();
        let ms: Vec<f32> = (0..bodies).map(|_| real(&mut rng, 0).abs()).collect();
        let p = Array::new(&pos, dim4!(bodies as u64, 3));
        let m = Array::new(&ms, dim4!(bodies as u64));
        let (x, y, z) = (col(&p, 0), col(&p, 1), col(&p, 2));
        let dx = sub(&transpose(&x, false), &x, true);
        let dy = sub(&transpose(&y, false), &y, true);
        let dz = sub(&transpose(&z, false), &z, true);
        let inv = rsqrt(&(&dx * &dx + &dy * &dy + &dz * &dz + 1e-6f32));
        let w = mul(&(&inv * &inv * &inv), &transpose(&m, false), true);
        let a = join(1, &join(1, &sum(&(&w * &dx), 1), &sum(&(&w * &dy), 1)), &sum(&(&w * &dz), 1));
        assert_eq!(a.dims(), dim4!(bodies as u64, 3));
        let got = a.to_vec();
        for i in 0..bodies {
            for c in 0..3 {
                let (mut s, mut scale) = (0.0f64, 0.0f64);
                for j in 0..bodies {
                    let d: Vec<f64> = (0..3)
                        .map(|k| (pos[j + bodies * k] - pos[i + bodies * k]) as f64)
                        .collect();
                    let r2 = d.iter().map(|v| v * v).sum::<f64>() + 1e-6;
                    let term = ms[j] as f64 / (r2 * r2.sqrt()) * d[c];
                    s += term;
                    scale += term.abs();
                }
                let g = got[i + bodies * c] as f64;
                assert!(near(g, s, 1e-4, scale), "body {i} of {bodies}, axis {c}: {g}, want {s}");
            }
        }
    }
}

/// Reductions that cannot share a pass still give their own values: one reads another's
/// result, and one reduces along another dimension of the same expression.
#[test]
fn dependent_and_unrelated_reductions_stay_correct() {
    let mut rng = rng(11);
    let dims = dim4!(13, 9, 2);
    let xs: Vec<f32> = (0..dims.elements()).map(|_| real(&mut rng, 0)).collect();
    let x = Array::new(&xs, dims);
    let w = &x * &x;
    let s = sum(&w, 0); // 1 x 9 x 2
    let centred = sub(&w, &s, true); // reads `s`
    let t = sum(&centred, 0);
    let u = sum(&w, 1); // another dimension
    let ws: Vec<f32> = xs.iter().map(|v| v * v).collect();
    let s_want: Vec<f64> =
        runs(&ws, dims, 0).iter().map(|r| r.iter().map(|&v| v as f64).sum()).collect();
    let t_want: Vec<(f64, f64)> = s_want.iter().map(|&v| (v - 13.0 * v, 14.0 * v.abs())).collect();
    check_f("sum(w - sum(w, 0), 0)", &t.to_vec(), &t_want, 1e-5);
    let s_want: Vec<(f64, f64)> = s_want.iter().map(|&v| (v, v.abs())).collect();
    check_f("sum(w, 0)", &s.to_vec(), &s_want, 1e-6);
    let u_want: Vec<(f64, f64)> = runs(&ws, dims, 1)
        .iter()
        .map(|r| (r.iter().map(|&v| v as f64).sum(), r.iter().map(|&v| v as f64).sum()))
        .collect();
    check_f("sum(w, 1)", &u.to_vec(), &u_want, 1e-6);
}

/// A mean and a variance of one array: the variance's own mean and the mean share a pass.
#[test]
fn mean_beside_variance() {
    let mut rng = rng(5);
    for dims in [dim4!(17, 6), dim4!(1000, 3, 2)] {
        let xs: Vec<f32> = (0..dims.elements()).map(|_| real(&mut rng, 0)).collect();
        let x = Array::new(&xs, dims);
        for d in 0..3usize {
            let m = mean(&x, d as i64);
            let v = var_v2(&x, VarianceBias::POPULATION, d as i64);
            let rs = runs(&xs, dims, d);
            let mw: Vec<f64> = rs
                .iter()
                .map(|r| r.iter().map(|&v| v as f64).sum::<f64>() / r.len() as f64)
                .collect();
            let vw: Vec<(f64, f64)> = rs
                .iter()
                .zip(&mw)
                .map(|(r, &mu)| {
                    (r.iter().map(|&v| (v as f64 - mu).powi(2)).sum::<f64>() / r.len() as f64, 1.0)
                })
                .collect();
            check_f(&format!("var along {d}"), &v.to_vec(), &vw, 1e-5);
            let mw: Vec<(f64, f64)> = mw.iter().map(|&v| (v, 1.0)).collect();
            check_f(&format!("mean along {d}"), &m.to_vec(), &mw, 1e-6);
        }
    }
}
