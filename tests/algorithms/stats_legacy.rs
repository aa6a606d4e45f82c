//! The older statistics signatures (`var`, `cov`, `var_all`, `stdev`, `stdev_all`) against
//! host references in f64: the `isbiased` flag selects the sample normalisation (n - 1) when
//! true and the population one (n) when false, as in arrayfire-rust; every real element type;
//! empty and size-1 runs; NaN; and their panics.

#![allow(deprecated)]

use crate::common;

use common::{coords, Elem, Rng64, SeedableRng};
use emberfire::*;

/// An empty run has no mean, so its variance is NaN (emberfire's documented rule).
fn var_ref(x: &[f64], sample: bool) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    ss / if sample { n - 1.0 } else { n }
}

fn cov_ref(x: &[f64], y: &[f64], sample: bool) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let s: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    s / if sample { n - 1.0 } else { n }
}

fn near(got: f64, want: f64, rel: f64, what: &str) {
    if want.is_nan() || want.is_infinite() {
        assert!(got.is_nan() || got == want, "{what}: got {got}, want {want}");
        return;
    }
    let tol = rel * (want.abs() + 1.0);
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} (tolerance {tol})");
}

/// The run of `host` (shape `dims`) through output element `o` along `d`.
fn run(host: &[f64], dims: Dim4, d: usize, o: usize) -> Vec<f64> {
    let mut od = dims;
    od[d] = 1;
    let c = coords(od, o);
    (0..dims[d])
        .map(|t| {
            let mut at = c;
            at[d] = t;
            let lin: u64 = (0..4).map(|k| at[k] * (0..k).map(|q| dims[q]).product::<u64>()).sum();
            host[lin as usize]
        })
        .collect()
}

fn case<T>(rel: f64)
where
    T: Elem,
    T::MeanOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(7);
    for dims in [dim4!(5, 3), dim4!(1, 4, 2), dim4!(6), dim4!(2, 1, 1, 3), dim4!(3, 0)] {
        let host: Vec<T> = (0..dims.elements()).map(|_| T::small(&mut r)).collect();
        let x: Vec<f64> = host.iter().map(|v| v.to_v().f()).collect();
        let a = Array::new(&host, dims);
        for d in 0..4usize {
            let mut od = dims;
            od[d] = 1;
            for (sample, got) in
                [(false, var(&a, false, d as i64)), (true, var(&a, true, d as i64))]
            {
                assert_eq!(got.dims(), od);
                for (o, g) in got.to_vec().iter().enumerate() {
                    let want = var_ref(&run(&x, dims, d, o), sample);
                    let what =
                        format!("var {} dims {dims} dim {d} isbiased {sample} #{o}", T::TY.name);
                    near(g.to_v().f(), want, rel, &what);
                }
            }
            let got = stdev(&a, d as i64);
            for (o, g) in got.to_vec().iter().enumerate() {
                let want = var_ref(&run(&x, dims, d, o), false).sqrt();
                near(g.to_v().f(), want, rel, &format!("stdev {} dims {dims} dim {d}", T::TY.name));
            }
        }
        for sample in [false, true] {
            let (v, i) = var_all(&a, sample);
            near(v, var_ref(&x, sample), 1e-12, &format!("var_all {} {dims}", T::TY.name));
            assert_eq!(i, 0.0);
        }
        let (s, i) = stdev_all(&a);
        near(s, var_ref(&x, false).sqrt(), 1e-12, &format!("stdev_all {} {dims}", T::TY.name));
        assert_eq!(i, 0.0);
    }
}

#[test]
fn every_real_type() {
    case::<f32>(1e-5);
    case::<f64>(1e-12);
    case::<f16>(2e-2);
    case::<bf16>(8e-2);
    case::<bool>(1e-5);
    case::<u8>(1e-5);
    case::<i16>(1e-5);
    case::<u16>(1e-5);
    case::<i32>(1e-5);
    case::<u32>(1e-5);
    case::<i64>(1e-12);
    case::<u64>(1e-12);
}

fn cov_case<T>(rel: f64)
where
    T: Elem + CovarianceComputable,
    T::MeanOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(11);
    for dims in [dim4!(7), dim4!(4, 3), dim4!(1, 2), dim4!(0)] {
        let hx: Vec<T> = (0..dims.elements()).map(|_| T::small(&mut r)).collect();
        let hy: Vec<T> = (0..dims.elements()).map(|_| T::small(&mut r)).collect();
        let (fx, fy): (Vec<f64>, Vec<f64>) =
            hx.iter().zip(&hy).map(|(a, b)| (a.to_v().f(), b.to_v().f())).unzip();
        let (x, y) = (Array::new(&hx, dims), Array::new(&hy, dims));
        for sample in [false, true] {
            let got = cov(&x, &y, sample);
            assert_eq!(got.dims(), dim4!(1, dims[1]));
            for (o, g) in got.to_vec().iter().enumerate() {
                let rows = dims[0] as usize;
                let want =
                    cov_ref(&fx[o * rows..(o + 1) * rows], &fy[o * rows..(o + 1) * rows], sample);
                near(
                    g.to_v().f(),
                    want,
                    rel,
                    &format!("cov {} {dims} isbiased {sample}", T::TY.name),
                );
            }
        }
    }
}

#[test]
fn cov_every_real_type() {
    cov_case::<f32>(1e-5);
    cov_case::<f64>(1e-12);
    cov_case::<u8>(1e-5);
    cov_case::<i16>(1e-5);
    cov_case::<i32>(1e-5);
    cov_case::<u64>(1e-12);
}

#[test]
fn nan_propagates() {
    let a = Array::new(&[1.0f64, f64::NAN, 3.0, 4.0], dim4!(2, 2));
    let v = var(&a, true, 0).to_vec();
    assert!(v[0].is_nan());
    assert_eq!(v[1], 0.5);
    assert!(var_all(&a, false).0.is_nan());
    assert!(stdev_all(&a).0.is_nan());
}

#[test]
fn one_element_runs() {
    let a = Array::new(&[2.0f32, 5.0], dim4!(1, 2));
    assert_eq!(var(&a, false, 0).to_vec(), vec![0.0, 0.0]);
    // n - 1 = 0: 0 / 0
    assert!(var(&a, true, 0).to_vec().iter().all(|v| v.is_nan()));
    assert_eq!(stdev(&a, 0).to_vec(), vec![0.0, 0.0]);
}

#[test]
#[should_panic(expected = "cov_v2")]
fn cov_of_different_shapes() {
    let x = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
    let y = Array::new(&[1.0f64, 2.0], dim4!(2));
    cov(&x, &y, false);
}
