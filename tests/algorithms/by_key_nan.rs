//! `sum_by_key_nan` and `product_by_key_nan` against a host reference: every element type,
//! random shapes (empty and size-1 dimensions included), every dimension, runs of keys that
//! repeat, NaN in real and complex values (a NaN part replaces the whole value), and the
//! errors they share with the plain by-key reductions.

use crate::common;

use common::{check_all, coords, run_cases, Class, Elem, Rng, Rng64, SeedableRng, Tol, V};
use emberfire::*;
use num_complex::Complex64;

/// A value with NaN replaced by `by`, exactly as a number: a complex value with a NaN part
/// becomes `(by, 0)`.
fn replaced(v: V, by: f64) -> Complex64 {
    let c = v.c();
    if c.is_nan() {
        Complex64::new(by, 0.0)
    } else {
        c
    }
}

/// The exact result of a run as the output type holds it: integers exactly (the comparison
/// wraps them into the type), floats in f64, bool products as AND.
fn finish(acc: Complex64, int: Option<i128>, class: Class, out_bool: bool) -> V {
    match (int, class) {
        (Some(i), _) if out_bool => V::B(i != 0),
        (Some(i), _) => V::I(i),
        (None, Class::Complex) => V::C(acc),
        (None, _) => V::F(acc.re),
    }
}

fn case<T, S, P>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: Elem + HasAfEnum<AggregateOutType = S, ProductOutType = P>,
    S: Elem,
    P: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    let d = r.gen_range(0..4usize);
    let n = dims[d] as usize;
    let host: Vec<T> = (0..dims.elements())
        .map(|_| {
            if r.gen_range(0..5) == 0 && T::TY.class != Class::Int && T::TY.class != Class::Bool {
                T::from_v(V::F(f64::NAN))
            } else {
                T::small(&mut r)
            }
        })
        .collect();
    // Complex values may have a NaN imaginary part only.
    let host: Vec<T> = if T::TY.class == Class::Complex {
        host.iter()
            .map(|&x| {
                let c = x.to_v().c();
                if c.re.is_nan() && r.gen_bool(0.5) {
                    T::from_v(V::C(Complex64::new(1.5, f64::NAN)))
                } else {
                    x
                }
            })
            .collect()
    } else {
        host
    };
    let keys: Vec<i32> = (0..n).map(|_| r.gen_range(0..3)).collect();
    let by = [0.0, 2.5, -1.0][r.gen_range(0..3)];
    let vals = Array::new(&host, dims);
    let karr = Array::new(&keys, dim4!(n as u64));
    let (ks, sums) = sum_by_key_nan(&karr, &vals, d as i32, by);
    let (kp, prods) = product_by_key_nan(&karr, &vals, d as i32, by);

    let starts: Vec<usize> = (0..n).filter(|&i| i == 0 || keys[i] != keys[i - 1]).collect();
    let want_keys: Vec<i32> = starts.iter().map(|&i| keys[i]).collect();
    let what = format!("{} dims {dims} dim {d} nan->{by}", T::TY.name);
    if ks.to_vec() != want_keys || kp.to_vec() != want_keys {
        return Err(format!("{what}: keys {:?}, want {want_keys:?}", ks.to_vec()));
    }
    let mut odims = dims;
    odims[d] = starts.len() as u64;
    if sums.dims() != odims || prods.dims() != odims {
        return Err(format!("{what}: dims {} and {}, want {odims}", sums.dims(), prods.dims()));
    }
    let integral = matches!(T::TY.class, Class::Int | Class::Bool);
    let (mut ws, mut wp) = (Vec::new(), Vec::new());
    for o in 0..odims.elements() as usize {
        let c = coords(odims, o);
        let run = c[d] as usize;
        let end = starts.get(run + 1).copied().unwrap_or(n);
        let (mut s, mut p) = (Complex64::new(0.0, 0.0), Complex64::new(1.0, 0.0));
        let (mut si, mut pi) = (0i128, 1i128);
        for j in starts[run]..end {
            let mut at = c;
            at[d] = j as u64;
            let lin: usize = (0..4)
                .map(|k| at[k] as usize * (0..k).map(|q| dims[q] as usize).product::<usize>())
                .sum();
            let v = host[lin].to_v();
            let x = replaced(v, by);
            s += x;
            p *= x;
            si += x.re as i128;
            pi *= x.re as i128;
        }
        let int = |i: i128| if integral { Some(i) } else { None };
        ws.push(finish(s, int(si), T::TY.class, false));
        wp.push(finish(p, int(pi), T::TY.class, P::TY.class == Class::Bool));
    }
    let tol = Tol::x(4.0).scale(1.0);
    check_all(&sums.to_vec(), &ws, tol, &|i| format!("{what}: sum {i}"))?;
    check_all(&prods.to_vec(), &wp, tol, &|i| format!("{what}: product {i}"))
}

macro_rules! per_type {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            run_cases(40, case::<$t, <$t as HasAfEnum>::AggregateOutType,
                <$t as HasAfEnum>::ProductOutType>);
        }
    )*};
}

per_type!(
    f32_runs: f32,
    f64_runs: f64,
    f16_runs: f16,
    c32_runs: c32,
    c64_runs: c64,
    bool_runs: bool,
    u8_runs: u8,
    i16_runs: i16,
    u16_runs: u16,
    i32_runs: i32,
    u32_runs: u32,
    i64_runs: i64,
    u64_runs: u64,
);

#[test]
fn without_nan_they_equal_the_plain_forms() {
    let keys = Array::new(&[1u32, 1, 2], dim4!(3));
    let vals = Array::new(&[1.5f64, 2.0, -3.0, 4.0, 0.5, 8.0], dim4!(3, 2));
    assert_eq!(sum_by_key_nan(&keys, &vals, 0, 7.0).1.to_vec(), vec![3.5, -3.0, 4.5, 8.0]);
    assert_eq!(product_by_key_nan(&keys, &vals, 0, 7.0).1.to_vec(), vec![3.0, -3.0, 2.0, 8.0]);
}

#[test]
#[should_panic(expected = "sum_by_key_nan: `keys` must be a vector with one key per index")]
fn keys_of_the_wrong_length() {
    let keys = Array::new(&[1i32, 2], dim4!(2));
    sum_by_key_nan(&keys, &Array::new(&[1.0f32, 2.0, 3.0], dim4!(3)), 0, 0.0);
}

#[test]
#[should_panic(expected = "product_by_key_nan: `dim` is 4")]
fn bad_dim() {
    let keys = Array::new(&[1i32, 2, 3], dim4!(3));
    product_by_key_nan(&keys, &Array::new(&[1.0f32, 2.0, 3.0], dim4!(3)), 4, 0.0);
}
