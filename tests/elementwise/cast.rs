//! `Array::cast` between every pair of the thirteen element types, on random shapes and values
//! (NaN, infinities, extremes), against the documented rules: floats to integers truncate and
//! saturate (NaN gives 0), integers wrap, complex to real keeps the real part, anything to
//! bool is "not zero", bool gives 0 or 1.

use crate::common;

use common::*;
use emberfire::{bf16, c32, c64, f16, Array, Dim4};

const CASES: u32 = 16;

fn cast_case<A: Elem, B: Elem>(d: Dim4, s: u64) -> Result<(), String> {
    let mut r = Rng64::seed_from_u64(s);
    let a = gen_vec(&mut r, d.elements() as usize, &|r| A::any(r));
    let x = Array::new(&a, d);
    let what = |i: usize| {
        format!("cast {} -> {}, dims {d}, element {i}, input {:?}", A::TY.name, B::TY.name, a[i])
    };
    let got = x.cast::<B>();
    if got.get_type() != B::TY.dtype || got.dims() != d {
        return Err(format!("{}: type {:?} dims {}", what(0), got.get_type(), got.dims()));
    }
    let want: Vec<V> = a.iter().map(|v| v.to_v()).collect();
    check_all(&got.to_vec(), &want, Tol::EXACT, &what)?;
    // a cast inside a lazy tree: cast(x + 0) with the addition in A's type
    let zero = A::from_v(V::I(0));
    let lazy = (&x + &Array::new(&vec![zero; a.len()], d)).cast::<B>();
    let want: Vec<V> = a.iter().map(|v| common::refs::add(v.to_v(), zero.to_v(), A::TY)).collect();
    check_all(&lazy.to_vec(), &want, Tol::EXACT, &|i| format!("lazy {}", what(i)))
}

macro_rules! cast_row {
    ($d:expr, $s:expr; $a:ty => $($b:ty),*) => { $( cast_case::<$a, $b>($d, $s)?; )* };
}

macro_rules! cast_all {
    ($d:expr, $s:expr; $($a:ty),*) => {
        $( cast_row!($d, $s; $a => bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64); )*
    };
}

#[test]
fn every_pair_of_types() {
    run_cases(CASES, |d, s| {
        cast_all!(d, s; bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64);
        Ok(())
    });
}

/// Chains of casts apply each conversion in turn (narrowing in the middle is not skipped).
#[test]
fn chained_casts_narrow_in_between() {
    let x = Array::new(&[300.7f64, -1.5, 65_537.0, 1e10], Dim4::new(&[4, 1, 1, 1]));
    assert_eq!(x.cast::<i32>().cast::<u8>().cast::<f32>().to_vec(), vec![44.0, 255.0, 1.0, 255.0]);
    assert_eq!(x.cast::<u16>().cast::<i64>().to_vec(), vec![300, 0, 65_535, 65_535]);
    assert_eq!(x.cast::<f16>().cast::<f64>().to_vec()[0], 300.75);
    assert_eq!(x.cast::<bool>().cast::<i16>().to_vec(), vec![1, 1, 1, 1]);
    let z = Array::new(&[c64::new(1.5, -2.5)], Dim4::default());
    assert_eq!(z.cast::<c32>().cast::<f64>().to_vec(), vec![1.5]);
    assert_eq!(z.cast::<f32>().cast::<c64>().to_vec(), vec![c64::new(1.5, 0.0)]);
    let h = Array::new(&[f16::from_f64(-0.0)], Dim4::default());
    let back = h.cast::<c32>().to_vec()[0];
    assert!(back.re == 0.0 && back.re.is_sign_negative() && back.im == 0.0, "{back}");
}
