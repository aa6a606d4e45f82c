//! `max_ragged` against a host reference: every element type, random shapes (empty and size-1
//! dimensions included), every dimension, lengths of 0, inside and past the run, NaN, ties,
//! infinities and the extreme integers; and its errors.

use crate::common;

use common::{close, coords, run_cases, Class, Elem, Rng, Rng64, SeedableRng, Tol, V};
use emberfire::*;

/// Whether `b` beats the current best `a` under `imax`'s rules: NaN never wins, complex values
/// compare by squared magnitude, and a tie keeps the earlier one.
fn beats(a: V, b: V) -> bool {
    match (a, b) {
        (V::F(x), V::F(y)) => !y.is_nan() && (x.is_nan() || y > x),
        (V::C(x), V::C(y)) => !y.is_nan() && (x.is_nan() || y.norm_sqr() > x.norm_sqr()),
        (V::I(x), V::I(y)) => y > x,
        (V::B(x), V::B(y)) => y & !x,
        _ => unreachable!(),
    }
}

fn is_nan(v: V) -> bool {
    match v {
        V::F(x) => x.is_nan(),
        V::C(c) => c.is_nan(),
        _ => false,
    }
}

fn case<T>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: Elem + HasAfEnum<InType = T>,
{
    let mut r = Rng64::seed_from_u64(seed);
    let d = r.gen_range(0..4usize);
    let n = dims[d] as usize;
    let host: Vec<T> = (0..dims.elements())
        .map(|_| if T::TY.class == Class::Complex { T::small(&mut r) } else { T::any(&mut r) })
        .collect();
    let mut ldims = dims;
    ldims[d] = 1;
    let lens: Vec<u32> = (0..ldims.elements()).map(|_| r.gen_range(0..=n as u32 + 2)).collect();
    let (out, idx) = max_ragged(&Array::new(&host, dims), &Array::new(&lens, ldims), d as i32);
    let what = format!("{} dims {dims} dim {d}", T::TY.name);
    if out.dims() != ldims || idx.dims() != ldims {
        return Err(format!("{what}: result dims {} and {}", out.dims(), idx.dims()));
    }
    let (got, gidx) = (out.to_vec(), idx.to_vec());
    let stride: usize = (0..d).map(|k| dims[k] as usize).product();
    for (o, &len) in lens.iter().enumerate() {
        let c = coords(ldims, o);
        let base: usize = (0..4)
            .map(|k| c[k] as usize * (0..k).map(|j| dims[j] as usize).product::<usize>())
            .sum();
        let mut best: Option<(V, u32)> = None;
        for i in 0..(len as usize).min(n) {
            let v = host[base + i * stride].to_v();
            if is_nan(v) {
                continue;
            }
            if best.is_none_or(|(b, _)| beats(b, v)) {
                best = Some((v, i as u32));
            }
        }
        let (g, gi) = (got[o], gidx[o]);
        match best {
            Some((v, i)) => {
                if !close(g, v, Tol::EXACT) || gi != i {
                    return Err(format!(
                        "{what}: run {o} (length {len}): got {g:?} at {gi}, want {v:?} at {i}"
                    ));
                }
            }
            // Nothing to compare: what imax gives for an empty run, at position 0.
            None => {
                let ok = match T::TY.class {
                    Class::Float | Class::Complex => is_nan(g.to_v()),
                    Class::Bool => g.to_v() == V::B(false),
                    Class::Int => {
                        let min = if T::TY.signed { -(1i128 << (T::TY.bits - 1)) } else { 0 };
                        g.to_v() == V::I(min)
                    }
                };
                if !ok || gi != 0 {
                    return Err(format!(
                        "{what}: run {o} (length {len}) has no value: got {g:?} at {gi}"
                    ));
                }
            }
        }
    }
    Ok(())
}

macro_rules! per_type {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            run_cases(48, case::<$t>);
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

/// arrayfire-rust's documented example, with its printed results checked.
#[test]
fn arrayfire_example() {
    #[allow(unused_imports)]
    use emberfire::{dim4, max_ragged, print, randu, Array};
    let vals: [f32; 6] = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let rlens: [u32; 2] = [9, 2];
    let varr = Array::new(&vals, dim4![3, 2]);
    let rarr = Array::new(&rlens, dim4![1, 2]);
    print(&varr);
    print(&rarr);
    let (out, idx) = max_ragged(&varr, &rarr, 0);
    print(&out);
    print(&idx);
    assert_eq!(out.to_vec(), vec![3.0, 5.0]);
    assert_eq!(idx.to_vec(), vec![2, 1]);
}

#[test]
fn lazy_input_and_lengths() {
    let a = Array::new(&[1.0f64, -4.0, 2.0, 8.0, -9.0, 3.0], dim4!(2, 3));
    let lens = Array::new(&[1u32, 3], dim4!(2)) + 0u32;
    let (v, i) = max_ragged(&(-&a), &lens, 1);
    assert_eq!(v.to_vec(), vec![-1.0, 4.0]);
    assert_eq!(i.to_vec(), vec![0, 0]);
}

#[test]
#[should_panic(expected = "max_ragged: `ragged_len` must have the input's dims")]
fn lengths_of_the_wrong_shape() {
    let a = Array::new(&[1.0f32; 6], dim4!(3, 2));
    max_ragged(&a, &Array::new(&[1u32, 2, 3], dim4!(3)), 0);
}

#[test]
#[should_panic(expected = "max_ragged: `dim` is -1")]
fn negative_dim() {
    let a = Array::new(&[1i32; 6], dim4!(3, 2));
    max_ragged(&a, &Array::new(&[1u32, 2], dim4!(1, 2)), -1);
}
