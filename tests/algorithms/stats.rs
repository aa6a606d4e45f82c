//! Statistics: every function against references computed here on the host in f64, on random
//! shapes (empty and size-1 dimensions included), along each of the four dimensions (and -1),
//! for floating and integer inputs, weighted and unweighted, with both variance
//! normalisations; views with offsets and strides; and the panics for bad input.

use crate::common;

use std::fmt::Debug;

use common::{run_cases, Rng, Rng64, SeedableRng};
use emberfire::*;

/// What the tests need of an input type: random moderate values and an exact f64 view.
trait S: HasAfEnum + Copy + Debug + PartialEq {
    /// Relative accuracy of the type's mean output (f32 for 32-bit and smaller types).
    const EPS: f64;
    fn gen(r: &mut Rng64) -> Self;
    fn f(self) -> f64;
}

macro_rules! int_s {
    ($($t:ty: $lo:expr, $hi:expr);*) => {$(
        impl S for $t {
            const EPS: f64 = 1e-6;
            fn gen(r: &mut Rng64) -> Self {
                r.gen_range($lo..=$hi)
            }
            fn f(self) -> f64 {
                self as f64
            }
        }
    )*};
}
int_s!(u8: 0, 255; i16: -300, 300; u16: 0, 1000; i32: -1000, 1000; u32: 0, 5000;
       i64: -100000, 100000; u64: 0, 100000);

impl S for f32 {
    const EPS: f64 = 1e-6;
    fn gen(r: &mut Rng64) -> Self {
        r.gen_range(-10.0f32..10.0)
    }
    fn f(self) -> f64 {
        self as f64
    }
}

impl S for f64 {
    const EPS: f64 = 1e-13;
    fn gen(r: &mut Rng64) -> Self {
        r.gen_range(-10.0..10.0)
    }
    fn f(self) -> f64 {
        self
    }
}

fn rng(seed: u64) -> Rng64 {
    Rng64::from_seed(seed.to_le_bytes())
}

fn arr<T: S>(r: &mut Rng64, dims: Dim4) -> (Vec<T>, Array<T>) {
    let host: Vec<T> = (0..dims.elements()).map(|_| T::gen(r)).collect();
    let a = Array::new(&host, dims);
    (host, a)
}

/// Positive weights (a zero sometimes, never all zero along a run of more than one).
fn weights<W: HasAfEnum + From<f32>>(r: &mut Rng64, dims: Dim4) -> (Vec<f64>, Array<W>) {
    let host: Vec<f32> = (0..dims.elements()).map(|_| r.gen_range(1u8..=8) as f32 * 0.25).collect();
    let w: Vec<W> = host.iter().map(|&v| W::from(v)).collect();
    (host.iter().map(|&v| v as f64).collect(), Array::new(&w, dims))
}

/// The runs of `host` along dimension `d`, in the output's (column-major) order.
fn runs<T: Copy>(host: &[T], dims: Dim4, d: usize) -> Vec<Vec<T>> {
    let mut stride = [1u64; 4];
    for k in 1..4 {
        stride[k] = stride[k - 1] * dims[k - 1];
    }
    let mut out = Vec::new();
    for l in 0..if d == 3 { 1 } else { dims[3] } {
        for k in 0..if d == 2 { 1 } else { dims[2] } {
            for j in 0..if d == 1 { 1 } else { dims[1] } {
                for i in 0..if d == 0 { 1 } else { dims[0] } {
                    let base = i * stride[0] + j * stride[1] + k * stride[2] + l * stride[3];
                    out.push((0..dims[d]).map(|t| host[(base + t * stride[d]) as usize]).collect());
                }
            }
        }
    }
    out
}

fn reduced(dims: Dim4, d: usize) -> Dim4 {
    let mut o = dims;
    o[d] = 1;
    o
}

fn ref_mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn ref_var(x: &[f64], bias: VarianceBias) -> f64 {
    let m = ref_mean(x);
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    match bias {
        VarianceBias::SAMPLE => ss / x.len().saturating_sub(1) as f64,
        _ => ss / x.len() as f64,
    }
}

fn ref_wmean(x: &[f64], w: &[f64]) -> f64 {
    x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / w.iter().sum::<f64>()
}

fn ref_wvar(x: &[f64], w: &[f64]) -> f64 {
    let m = ref_wmean(x, w);
    x.iter().zip(w).map(|(a, b)| b * (a - m) * (a - m)).sum::<f64>() / w.iter().sum::<f64>()
}

/// |got - want| within `eps` relative to `scale`; NaN matches NaN.
fn near(got: f64, want: f64, eps: f64, scale: f64, what: &str) {
    if want.is_nan() {
        assert!(got.is_nan(), "{what}: got {got}, want NaN");
        return;
    }
    let tol = eps * (want.abs() + scale + 1.0) * 8.0;
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} (tolerance {tol})");
}

fn check_runs<O: HasAfEnum + Copy + Into<f64>>(
    got: &Array<O>,
    want: &[f64],
    dims: Dim4,
    eps: f64,
    scale: f64,
    what: &str,
) {
    assert_eq!(got.dims(), dims, "{what}: dims");
    let v = got.to_vec();
    assert_eq!(v.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in v.iter().zip(want).enumerate() {
        near(g.into(), w, eps, scale, &format!("{what}, element {i}"));
    }
}

const BIASES: [VarianceBias; 3] =
    [VarianceBias::DEFAULT, VarianceBias::SAMPLE, VarianceBias::POPULATION];

/// mean, var_v2, stdev_v2, meanvar (no weights) along each dim and -1, and the _all forms.
fn unweighted_case<T>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: S,
    T: HasAfEnum<MeanOutType = <T as MeanOf>::M>,
    T: MeanOf,
{
    let mut r = rng(seed);
    let (host, a) = arr::<T>(&mut r, dims);
    let x: Vec<f64> = host.iter().map(|v| v.f()).collect();
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let eps = T::EPS;
    let tname = std::any::type_name::<T>();
    for dim in [-1i64, 0, 1, 2, 3] {
        let d = if dim < 0 { (0..4).find(|&k| dims[k] > 1).unwrap_or(0) } else { dim as usize };
        let out = reduced(dims, d);
        let groups = runs(&x, dims, d);
        let what = format!("{tname} dims {dims} dim {dim}");
        let means: Vec<f64> = groups.iter().map(|g| ref_mean(g)).collect();
        check_runs(&mean(&a, dim), &means, out, eps, scale, &format!("mean {what}"));
        for bias in BIASES {
            let vars: Vec<f64> = groups.iter().map(|g| ref_var(g, bias)).collect();
            let sds: Vec<f64> = vars.iter().map(|v| v.sqrt()).collect();
            let w = format!("{what} {bias:?}");
            check_runs(
                &var_v2(&a, bias, dim),
                &vars,
                out,
                eps,
                scale * scale,
                &format!("var_v2 {w}"),
            );
            check_runs(&stdev_v2(&a, bias, dim), &sds, out, eps, scale, &format!("stdev_v2 {w}"));
            let none = Array::<f32>::new_empty(dim4!(0));
            let (m, v) = meanvar(&a, &none, bias, dim);
            check_runs(&m, &means, out, eps, scale, &format!("meanvar mean {w}"));
            check_runs(&v, &vars, out, eps, scale * scale, &format!("meanvar var {w}"));
        }
    }
    let what = format!("{tname} dims {dims}");
    let (m, im) = mean_all(&a);
    near(m, ref_mean(&x), 1e-13, scale, &format!("mean_all {what}"));
    assert_eq!(im, 0.0);
    for bias in BIASES {
        let v = ref_var(&x, bias);
        near(var_all_v2(&a, bias).0, v, 1e-13, scale * scale, &format!("var_all_v2 {what}"));
        near(stdev_all_v2(&a, bias).0, v.sqrt(), 1e-13, scale, &format!("stdev_all_v2 {what}"));
    }
    Ok(())
}

/// Names the mean output type so that the helpers can read it as f64.
trait MeanOf {
    type M: HasAfEnum + Copy + Into<f64>;
}
macro_rules! mean_of {
    ($($t:ty => $m:ty),*) => {$( impl MeanOf for $t { type M = $m; } )*};
}
mean_of!(f32 => f32, f64 => f64, u8 => f32, i16 => f32, u16 => f32, i32 => f32, u32 => f32,
         i64 => f64, u64 => f64);

#[test]
fn mean_var_stdev_meanvar_random_shapes_every_dim() {
    run_cases(24, unweighted_case::<f32>);
    run_cases(24, unweighted_case::<f64>);
    run_cases(12, unweighted_case::<i32>);
    run_cases(12, unweighted_case::<u8>);
    run_cases(8, unweighted_case::<i16>);
    run_cases(8, unweighted_case::<u16>);
    run_cases(8, unweighted_case::<u32>);
    run_cases(8, unweighted_case::<i64>);
    run_cases(8, unweighted_case::<u64>);
}

fn weighted_case<T, W>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: S + MeanOf + HasAfEnum<MeanOutType = <T as MeanOf>::M>,
    W: HasAfEnum + RealFloating + From<f32>,
{
    let mut r = rng(seed);
    let (host, a) = arr::<T>(&mut r, dims);
    let (wh, w) = weights::<W>(&mut r, dims);
    let x: Vec<f64> = host.iter().map(|v| v.f()).collect();
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let eps = T::EPS;
    let tname = std::any::type_name::<(T, W)>();
    for dim in [-1i64, 0, 1, 2, 3] {
        let d = if dim < 0 { (0..4).find(|&k| dims[k] > 1).unwrap_or(0) } else { dim as usize };
        let out = reduced(dims, d);
        let (gx, gw) = (runs(&x, dims, d), runs(&wh, dims, d));
        let means: Vec<f64> = gx.iter().zip(&gw).map(|(x, w)| ref_wmean(x, w)).collect();
        let vars: Vec<f64> = gx.iter().zip(&gw).map(|(x, w)| ref_wvar(x, w)).collect();
        let what = format!("{tname} dims {dims} dim {dim}");
        check_runs(
            &mean_weighted(&a, &w, dim),
            &means,
            out,
            eps,
            scale,
            &format!("mean_weighted {what}"),
        );
        check_runs(
            &var_weighted(&a, &w, dim),
            &vars,
            out,
            eps,
            scale * scale,
            &format!("var_weighted {what}"),
        );
        let (m, v) = meanvar(&a, &w, VarianceBias::SAMPLE, dim);
        check_runs(&m, &means, out, eps, scale, &format!("meanvar weighted mean {what}"));
        check_runs(&v, &vars, out, eps, scale * scale, &format!("meanvar weighted var {what}"));
    }
    let what = format!("{tname} dims {dims}");
    near(
        mean_all_weighted(&a, &w).0,
        ref_wmean(&x, &wh),
        1e-13,
        scale,
        &format!("mean_all_weighted {what}"),
    );
    near(
        var_all_weighted(&a, &w).0,
        ref_wvar(&x, &wh),
        1e-13,
        scale * scale,
        &format!("var_all_weighted {what}"),
    );
    Ok(())
}

#[test]
fn weighted_forms_random_shapes_every_dim() {
    run_cases(16, weighted_case::<f32, f32>);
    run_cases(16, weighted_case::<f64, f64>);
    run_cases(8, weighted_case::<f64, f32>);
    run_cases(8, weighted_case::<i32, f64>);
    run_cases(8, weighted_case::<u8, f32>);
}

fn cov_corr_case<T>(rows: u64, cols: u64, seed: u64)
where
    T: S + MeanOf + HasAfEnum<MeanOutType = <T as MeanOf>::M> + CovarianceComputable + RealNumber,
{
    let mut r = rng(seed);
    let dims = dim4!(rows, cols);
    let (hx, x) = arr::<T>(&mut r, dims);
    let (hy, y) = arr::<T>(&mut r, dims);
    let fx: Vec<f64> = hx.iter().map(|v| v.f()).collect();
    let fy: Vec<f64> = hy.iter().map(|v| v.f()).collect();
    let scale = fx.iter().chain(&fy).fold(0.0f64, |m, v| m.max(v.abs()));
    let what = format!("{} dims {dims}", std::any::type_name::<T>());
    for bias in BIASES {
        let want: Vec<f64> = runs(&fx, dims, 0)
            .iter()
            .zip(runs(&fy, dims, 0))
            .map(|(a, b)| {
                let (ma, mb) = (ref_mean(a), ref_mean(&b));
                let s: f64 = a.iter().zip(&b).map(|(p, q)| (p - ma) * (q - mb)).sum();
                s / if bias == VarianceBias::SAMPLE { (rows - 1) as f64 } else { rows as f64 }
            })
            .collect();
        check_runs(
            &cov_v2(&x, &y, bias),
            &want,
            dim4!(1, cols),
            T::EPS,
            scale * scale,
            &format!("cov_v2 {what} {bias:?}"),
        );
    }
    let (mx, my) = (ref_mean(&fx), ref_mean(&fy));
    let sxy: f64 = fx.iter().zip(&fy).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = fx.iter().map(|a| (a - mx) * (a - mx)).sum();
    let syy: f64 = fy.iter().map(|b| (b - my) * (b - my)).sum();
    let (c, im) = corrcoef(&x, &y);
    near(c, sxy / (sxx * syy).sqrt(), 1e-12, 0.0, &format!("corrcoef {what}"));
    assert_eq!(im, 0.0);
    // A perfectly correlated pair.
    near(corrcoef(&x, &x).0, 1.0, 1e-12, 0.0, &format!("corrcoef(x, x) {what}"));
}

#[test]
fn cov_v2_and_corrcoef_vectors_and_matrices() {
    for (i, (rows, cols)) in [(2, 1), (7, 1), (5, 3), (100, 4), (1000, 1)].into_iter().enumerate() {
        cov_corr_case::<f32>(rows, cols, i as u64);
        cov_corr_case::<f64>(rows, cols, 10 + i as u64);
        cov_corr_case::<i32>(rows, cols, 20 + i as u64);
        cov_corr_case::<u8>(rows, cols, 30 + i as u64);
        cov_corr_case::<u64>(rows, cols, 40 + i as u64);
    }
}

fn ref_median(g: &[f64]) -> f64 {
    let mut s = g.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

fn median_case<T: S + MedianComputable>(
    dims: Dim4,
    seed: u64,
    integer: bool,
) -> std::result::Result<(), String> {
    let mut r = rng(seed);
    let (host, a) = arr::<T>(&mut r, dims);
    let x: Vec<f64> = host.iter().map(|v| v.f()).collect();
    let tname = std::any::type_name::<T>();
    for dim in [-1i64, 0, 1, 2, 3] {
        let d = if dim < 0 { (0..4).find(|&k| dims[k] > 1).unwrap_or(0) } else { dim as usize };
        let got = median(&a, dim);
        assert_eq!(got.dims(), reduced(dims, d));
        for (i, (g, run)) in got.to_vec().iter().zip(runs(&x, dims, d)).enumerate() {
            let mut want = ref_median(&run);
            if integer {
                want = if want.is_nan() { 0.0 } else { want.trunc() };
            }
            near(
                g.f(),
                want,
                T::EPS,
                want.abs(),
                &format!("median {tname} dims {dims} dim {dim} element {i}"),
            );
        }
    }
    let want = ref_median(&x);
    near(median_all(&a).0, want, 1e-15, 0.0, &format!("median_all {tname} dims {dims}"));
    Ok(())
}

#[test]
fn median_and_median_all_random_shapes_every_dim() {
    run_cases(16, |d, s| median_case::<f32>(d, s, false));
    run_cases(16, |d, s| median_case::<f64>(d, s, false));
    run_cases(8, |d, s| median_case::<i32>(d, s, true));
    run_cases(8, |d, s| median_case::<u8>(d, s, true));
    run_cases(4, |d, s| median_case::<i16>(d, s, true));
    run_cases(4, |d, s| median_case::<u16>(d, s, true));
    run_cases(4, |d, s| median_case::<u32>(d, s, true));
}

fn topk_case<T: S>(dims: Dim4, seed: u64) -> std::result::Result<(), String> {
    let mut r = rng(seed);
    let (host, a) = arr::<T>(&mut r, dims);
    for d in 0..4usize {
        if dims[d] == 0 || dims.elements() == 0 {
            continue;
        }
        let k = 1 + r.gen_range(0..dims[d].min(5)) as u32;
        for order in [TopkFn::MIN, TopkFn::MAX, TopkFn::DEFAULT] {
            let (vals, idx) = topk(&a, k, d as i32, order);
            let mut out = dims;
            out[d] = k as u64;
            assert_eq!((vals.dims(), idx.dims()), (out, out));
            let (gv, gi) = (runs(&vals.to_vec(), out, d), runs(&idx.to_vec(), out, d));
            for (j, run) in runs(&host, dims, d).iter().enumerate() {
                // Reference: a stable selection by repeated scans for the best remaining.
                let mut taken = vec![false; run.len()];
                for t in 0..k as usize {
                    let mut best: Option<usize> = None;
                    for (p, v) in run.iter().enumerate() {
                        if taken[p] {
                            continue;
                        }
                        let better = match best {
                            None => true,
                            Some(b) => match order {
                                TopkFn::MIN => v.f() < run[b].f(),
                                _ => v.f() > run[b].f(),
                            },
                        };
                        if better {
                            best = Some(p);
                        }
                    }
                    let b = best.unwrap();
                    taken[b] = true;
                    let what = format!("topk {dims} dim {d} k {k} {order:?} run {j} rank {t}");
                    assert_eq!(gi[j][t], b as u32, "{what}: index");
                    assert_eq!(gv[j][t], run[b], "{what}: value");
                }
            }
        }
    }
    Ok(())
}

#[test]
fn topk_random_shapes_every_dim_both_orders() {
    run_cases(16, topk_case::<f32>);
    run_cases(8, topk_case::<f64>);
    run_cases(8, topk_case::<i32>);
    run_cases(8, topk_case::<u8>);
}

#[test]
fn histogram_counts_per_slice() {
    let mut r = rng(7);
    for dims in [dim4!(1), dim4!(17), dim4!(4, 5), dim4!(3, 2, 4), dim4!(2, 3, 2, 3), dim4!(0, 3)] {
        // Values k + 0.25 for integers k, bins of width 1 with integer edges: no value sits on
        // an edge, so the reference needs no rounding decisions.
        let host: Vec<f32> =
            (0..dims.elements()).map(|_| r.gen_range(-6i32..6) as f32 + 0.25).collect();
        let a = Array::new(&host, dims);
        let got = histogram(&a, 8, -4.0, 4.0);
        assert_eq!(got.dims(), dim4!(8, 1, dims[2], dims[3]), "histogram dims for {dims}");
        let per = (dims[0] * dims[1]) as usize;
        let got = got.to_vec();
        for s in 0..(dims[2] * dims[3]) as usize {
            let mut want = [0u32; 8];
            for &v in &host[s * per..(s + 1) * per] {
                let mut b = 0;
                while b < 7 && v as f64 > -4.0 + (b + 1) as f64 {
                    b += 1;
                }
                want[b] += 1;
            }
            assert_eq!(&got[s * 8..s * 8 + 8], &want, "histogram slice {s} of {dims}");
        }
    }
    let ints = Array::new(&[0u8, 1, 2, 3, 250], dim4!(5));
    assert_eq!(histogram(&ints, 4, 0.0, 4.0).to_vec(), vec![1, 1, 1, 2]);
}

#[test]
fn two_pass_variance_keeps_accuracy_with_a_large_mean() {
    // Values 1e8 + {0.5, 1.5, ...}: a one-pass E[x^2] - E[x]^2 loses every digit here.
    let host: Vec<f64> = (0..1000).map(|i| 1e8 + (i % 10) as f64 + 0.5).collect();
    let x: Vec<f64> = host.clone();
    let a = Array::new(&host, dim4!(1000));
    let want = ref_var(&x, VarianceBias::POPULATION);
    near(var_v2(&a, VarianceBias::POPULATION, 0).to_vec()[0], want, 1e-12, 0.0, "var_v2");
    near(var_all_v2(&a, VarianceBias::POPULATION).0, want, 1e-12, 0.0, "var_all_v2");
}

#[test]
fn views_with_offsets_and_strides() {
    let mut r = rng(3);
    let (host, a) = arr::<f64>(&mut r, dim4!(6, 5, 2));
    let view = cols(&rows(&a, 1, 4), 2, 4); // 4 x 3 x 2, offset and strided
    let dims = dim4!(4, 3, 2);
    let mut x = Vec::new();
    for k in 0..2 {
        for j in 2..5 {
            for i in 1..5 {
                x.push(host[i + 6 * j + 30 * k]);
            }
        }
    }
    for d in 0..3 {
        let g = runs(&x, dims, d);
        let means: Vec<f64> = g.iter().map(|g| ref_mean(g)).collect();
        let vars: Vec<f64> = g.iter().map(|g| ref_var(g, VarianceBias::SAMPLE)).collect();
        let meds: Vec<f64> = g.iter().map(|g| ref_median(g)).collect();
        let out = reduced(dims, d);
        check_runs(&mean(&view, d as i64), &means, out, 1e-13, 10.0, "mean of a view");
        check_runs(
            &var_v2(&view, VarianceBias::SAMPLE, d as i64),
            &vars,
            out,
            1e-13,
            100.0,
            "var_v2 of a view",
        );
        check_runs(&median(&view, d as i64), &meds, out, 1e-15, 10.0, "median of a view");
    }
    near(mean_all(&view).0, ref_mean(&x), 1e-13, 10.0, "mean_all of a view");
}

#[test]
fn empty_inputs_give_nan_means_and_empty_outputs() {
    let e = Array::<f32>::new_empty(dim4!(0, 3));
    let m = mean(&e, 0);
    assert_eq!(m.dims(), dim4!(1, 3));
    assert!(m.to_vec().iter().all(|v| v.is_nan()));
    assert_eq!(mean(&e, 1).dims(), dim4!(0, 1));
    assert!(mean_all(&e).0.is_nan());
    assert!(var_all_v2(&e, VarianceBias::POPULATION).0.is_nan());
    assert!(median_all(&e).0.is_nan());
    assert!(median(&e, 0).to_vec().iter().all(|v| v.is_nan()));
    assert_eq!(histogram(&e, 3, 0.0, 1.0).to_vec(), vec![0, 0, 0]);
    // A sample variance of one value divides by zero: NaN, as in ArrayFire.
    let one = Array::new(&[2.0f64], dim4!(1));
    assert!(var_v2(&one, VarianceBias::SAMPLE, 0).to_vec()[0].is_nan());
}

fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// A call that must panic.
type BadCall = Box<dyn FnOnce() + std::panic::UnwindSafe>;

#[test]
fn bad_input_panics_name_the_function_and_shapes() {
    let a = Array::new(&[1.0f32; 6], dim4!(2, 3));
    let w = Array::new(&[1.0f32; 6], dim4!(3, 2));
    let cases: Vec<(&str, &str, BadCall)> = vec![
        (
            "mean",
            "[2 3 1 1]",
            Box::new({
                let a = a.clone();
                move || {
                    mean(&a, 4);
                }
            }),
        ),
        (
            "var_v2",
            "[2 3 1 1]",
            Box::new({
                let a = a.clone();
                move || {
                    var_v2(&a, VarianceBias::SAMPLE, -2);
                }
            }),
        ),
        (
            "mean_weighted",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    mean_weighted(&a, &w, 0);
                }
            }),
        ),
        (
            "var_weighted",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    var_weighted(&a, &w, 0);
                }
            }),
        ),
        (
            "meanvar",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    meanvar(&a, &w, VarianceBias::DEFAULT, 0);
                }
            }),
        ),
        (
            "mean_all_weighted",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    mean_all_weighted(&a, &w);
                }
            }),
        ),
        (
            "var_all_weighted",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    var_all_weighted(&a, &w);
                }
            }),
        ),
        (
            "cov_v2",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    cov_v2(&a, &w, VarianceBias::SAMPLE);
                }
            }),
        ),
        (
            "cov_v2",
            "[1 1 2 1]",
            Box::new(|| {
                let c = Array::new(&[1.0f32, 2.0], dim4!(1, 1, 2));
                cov_v2(&c, &c, VarianceBias::SAMPLE);
            }),
        ),
        (
            "corrcoef",
            "[3 2 1 1]",
            Box::new({
                let (a, w) = (a.clone(), w.clone());
                move || {
                    corrcoef(&a, &w);
                }
            }),
        ),
        (
            "topk",
            "[2 3 1 1]",
            Box::new({
                let a = a.clone();
                move || {
                    topk(&a, 3, 0, TopkFn::MAX);
                }
            }),
        ),
        (
            "topk",
            "[2 3 1 1]",
            Box::new({
                let a = a.clone();
                move || {
                    topk(&a, 0, 1, TopkFn::MIN);
                }
            }),
        ),
        (
            "histogram",
            "[2 3 1 1]",
            Box::new({
                let a = a.clone();
                move || {
                    histogram(&a, 4, 1.0, 1.0);
                }
            }),
        ),
        (
            "median",
            "[2 3 1 1]",
            Box::new({
                let a = a.clone();
                move || {
                    median(&a, 7);
                }
            }),
        ),
        (
            "mean",
            "[2 1 1 1]",
            Box::new(|| {
                let c = Array::new(&[c32::new(1.0, 0.0); 2], dim4!(2));
                mean(&c, 0);
            }),
        ),
    ];
    for (func, shape, f) in cases {
        let msg = panic_message(f);
        assert!(msg.contains(func), "the message names {func}: {msg}");
        assert!(msg.contains(shape), "the message of {func} names {shape}: {msg}");
    }
}
