//! The semantics documented at the top of src/ops/arith.rs, case by case: integer division and
//! remainder by zero, wrapping, shifts past the width, `rem` versus `modulo` signs, integer
//! powers, `sign`, bool arithmetic, f16 rounding, and the ordering of complex numbers.
//! Expected values are worked out from those rules by hand.

use emberfire as ef;
use emberfire::{c32, c64, dim4, f16, Array};

fn arr<T: ef::HasAfEnum>(v: &[T]) -> Array<T> {
    Array::new(v, dim4!(v.len()))
}

macro_rules! div_by_zero {
    ($($t:ty),*) => { $(
        let a = arr(&[7 as $t, 0, <$t>::MAX, <$t>::MIN]);
        let z = arr(&[0 as $t; 4]);
        assert_eq!(ef::div(&a, &z, false).to_vec(), vec![0 as $t; 4], "{} / 0", stringify!($t));
        assert_eq!(ef::rem(&a, &z, false).to_vec(), vec![0 as $t; 4], "{} rem 0", stringify!($t));
        assert_eq!(ef::modulo(&a, &z, false).to_vec(), vec![0 as $t; 4], "{} mod 0", stringify!($t));
        assert_eq!((&a / &z).to_vec(), vec![0 as $t; 4], "{} / 0 (operator)", stringify!($t));
        assert_eq!((&a % 0 as $t).to_vec(), vec![0 as $t; 4], "{} % 0 (operator)", stringify!($t));
    )* };
}

#[test]
fn integer_division_and_remainder_by_zero_give_zero() {
    div_by_zero!(u8, i16, u16, i32, u32, i64, u64);
    let t = arr(&[true, false]);
    let f = arr(&[false, false]);
    assert_eq!(ef::div(&t, &f, false).to_vec(), vec![false, false]);
    assert_eq!(ef::rem(&t, &f, false).to_vec(), vec![false, false]);
}

#[test]
fn floating_division_by_zero_follows_ieee() {
    let a = arr(&[1.0f32, -1.0, 0.0]);
    let z = arr(&[0.0f32; 3]);
    let q = ef::div(&a, &z, false).to_vec();
    assert_eq!(q[0], f32::INFINITY);
    assert_eq!(q[1], f32::NEG_INFINITY);
    assert!(q[2].is_nan());
    let r = ef::rem(&a, &z, false).to_vec();
    assert!(r.iter().all(|x| x.is_nan()));
}

macro_rules! min_div_minus_one {
    ($($t:ty),*) => { $(
        let a = arr(&[<$t>::MIN, <$t>::MIN]);
        let m = arr(&[-1 as $t, -1 as $t]);
        assert_eq!(ef::div(&a, &m, false).to_vec(), vec![<$t>::MIN; 2], "{}::MIN / -1", stringify!($t));
        assert_eq!(ef::rem(&a, &m, false).to_vec(), vec![0; 2], "{}::MIN rem -1", stringify!($t));
        assert_eq!(ef::modulo(&a, &m, false).to_vec(), vec![0; 2], "{}::MIN mod -1", stringify!($t));
        assert_eq!((-&a).to_vec(), vec![<$t>::MIN; 2], "-{}::MIN", stringify!($t));
    )* };
}

#[test]
fn min_divided_by_minus_one_wraps() {
    min_div_minus_one!(i16, i32, i64);
}

#[test]
fn addition_subtraction_multiplication_and_negation_wrap() {
    assert_eq!((arr(&[i32::MAX]) + 1i32).to_vec(), vec![i32::MIN]);
    assert_eq!((arr(&[i64::MIN]) - 1i64).to_vec(), vec![i64::MAX]);
    assert_eq!((arr(&[0u8]) - 1u8).to_vec(), vec![255]);
    assert_eq!((arr(&[200u8]) * 2u8).to_vec(), vec![144]);
    assert_eq!((arr(&[u64::MAX]) * u64::MAX).to_vec(), vec![1]);
    assert_eq!((arr(&[i16::MAX]) * i16::MAX).to_vec(), vec![1]);
    assert_eq!((-arr(&[1u32, 0])).to_vec(), vec![u32::MAX, 0]);
    assert_eq!((-arr(&[i16::MIN, 5])).to_vec(), vec![i16::MIN, -5]);
}

macro_rules! shifts {
    ($($t:ty),*) => { $(
        let w = <$t>::BITS as $t;
        let one = arr(&[1 as $t; 5]);
        let amounts = arr(&[w - 1, w, w + 1, 0, 3]);
        let top = (1 as $t) << (w - 1);
        assert_eq!(ef::shiftl(&one, &amounts, false).to_vec(), vec![top, 0, 0, 1, 8],
            "{} << amounts", stringify!($t));
        let all = arr(&[<$t>::MAX; 5]);
        let want_r: Vec<$t> = vec![<$t>::MAX >> (w - 1), 0, 0, <$t>::MAX, <$t>::MAX >> 3];
        assert_eq!(ef::shiftr(&all, &amounts, false).to_vec(), want_r, "{}::MAX >> amounts", stringify!($t));
    )* };
}

#[test]
fn shifts_by_the_width_or_more_give_zero() {
    shifts!(u8, i16, u16, i32, u32, i64, u64);
}

#[test]
fn shifts_by_negative_amounts_and_right_shifts_of_negative_values() {
    let x = arr(&[-8i32, 8, -8, 8, -1]);
    let s = arr(&[-1i32, -1, 32, 40, 31]);
    assert_eq!(ef::shiftl(&x, &s, false).to_vec(), vec![0, 0, 0, 0, i32::MIN]);
    assert_eq!(ef::shiftr(&x, &s, false).to_vec(), vec![-1, 0, -1, 0, -1]);
    // arithmetic right shift
    assert_eq!((arr(&[-16i64, -15]) >> 2i64).to_vec(), vec![-4, -4]);
    assert_eq!((arr(&[i16::MIN]) >> 15i16).to_vec(), vec![-1]);
    assert_eq!((arr(&[0x8000u16]) >> 15u16).to_vec(), vec![1]);
    // bits shifted out of the top are lost
    assert_eq!((arr(&[0x81u8]) << 1u8).to_vec(), vec![0x02]);
    assert_eq!((arr(&[0x4000i16]) << 1i16).to_vec(), vec![i16::MIN]);
}

#[test]
fn rem_keeps_the_dividends_sign_and_modulo_the_divisors() {
    let a = arr(&[-7i32, 7, -7, 7, 6, -6]);
    let b = arr(&[3i32, -3, -3, 3, 3, -3]);
    assert_eq!(ef::rem(&a, &b, false).to_vec(), vec![-1, 1, -1, 1, 0, 0]);
    assert_eq!((&a % &b).to_vec(), vec![-1, 1, -1, 1, 0, 0]);
    assert_eq!(ef::modulo(&a, &b, false).to_vec(), vec![2, -2, -1, 1, 0, 0]);
    let x = arr(&[-7.5f64, 7.5, -7.5, 7.5]);
    let y = arr(&[2.0f64, -2.0, -2.0, 2.0]);
    assert_eq!(ef::rem(&x, &y, false).to_vec(), vec![-1.5, 1.5, -1.5, 1.5]);
    assert_eq!(ef::modulo(&x, &y, false).to_vec(), vec![0.5, -0.5, -1.5, 1.5]);
    let u = arr(&[250u8, 7]);
    assert_eq!(ef::modulo(&u, &arr(&[7u8, 250]), false).to_vec(), vec![5, 7]);
}

#[test]
fn integer_powers_are_exact_with_wrapping() {
    assert_eq!(
        ef::pow(&arr(&[3i32, -2, 2, 0]), &arr(&[4i32, 3, 30, 0]), false).to_vec(),
        vec![81, -8, 1 << 30, 1]
    );
    assert_eq!(ef::pow(&arr(&[2i16, 3]), &arr(&[10i16, 11]), false).to_vec(), vec![1024, -19_461]); // 177147 wraps
    assert_eq!(ef::pow(&arr(&[2u8, 3]), &arr(&[8u8, 5]), false).to_vec(), vec![0, 243]);
    // 3^40 mod 2^64
    assert_eq!(
        ef::pow(&arr(&[3u64]), &arr(&[40u64]), false).to_vec(),
        vec![12_157_665_459_056_928_801]
    );
    // exponents beyond 2^32: 3^(2^32) mod 2^64 differs from 3^(2^32 - 1); an even base vanishes
    let e = 1u64 << 32;
    let got = ef::pow(&arr(&[3u64, 3, 2]), &arr(&[e, e - 1, e]), false).to_vec();
    let mut want = [1u64, 1, 0];
    let mut b = 3u64;
    for bit in 0..33 {
        // square-and-multiply on the host, bit by bit
        if (e >> bit) & 1 == 1 {
            want[0] = want[0].wrapping_mul(b);
        }
        if ((e - 1) >> bit) & 1 == 1 {
            want[1] = want[1].wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
    }
    assert_eq!(got, want.to_vec());
    assert_ne!(got[0], got[1]);
    // negative exponents: the truncated reciprocal
    let got = ef::pow(&arr(&[2i32, 1, -1, -1, 0]), &arr(&[-1i32, -5, -3, -4, -2]), false).to_vec();
    assert_eq!(got, vec![0, 1, -1, 1, 0]);
    let got = ef::pow(&arr(&[-1i64, 5]), &arr(&[i64::MAX, i64::MIN]), false).to_vec();
    assert_eq!(got, vec![-1, 0]);
}

#[test]
fn integer_root_atan2_and_hypot_round_to_the_nearest_integer() {
    let r = ef::root(&arr(&[3i32, 2, 2, 3]), &arr(&[27i32, 8, 2, 1000]), false).to_vec();
    assert_eq!(r, vec![3, 3, 1, 10]); // 2.83 rounds up, 1.41 down
    let h = ef::hypot(&arr(&[3u16, 1, 5, 1]), &arr(&[4u16, 1, 12, 2]), false).to_vec();
    assert_eq!(h, vec![5, 1, 13, 2]); // 1.41 rounds down, 2.24 down
    let t = ef::atan2(&arr(&[1i64, 1, -1, 0]), &arr(&[1i64, 0, 0, -1]), false).to_vec();
    assert_eq!(t, vec![1, 2, -2, 3]); // π/4, π/2, -π/2, π
    let b = ef::atan2(&arr(&[true, true]), &arr(&[true, false]), false).to_vec();
    assert_eq!(b, vec![true, true]); // 0.79 and 1.57 round to 1
}

#[test]
fn sign_is_one_for_negative_values() {
    let s = ef::sign(&arr(&[-3.5f32, 0.0, -0.0, 2.0, f32::NAN, f32::NEG_INFINITY])).to_vec();
    assert_eq!(s, vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    let s = ef::sign(&arr(&[-3i32, 0, 7, i32::MIN])).to_vec();
    assert_eq!(s, vec![1.0f32, 0.0, 0.0, 1.0]);
    let s = ef::sign(&arr(&[-3i64])).to_vec();
    assert_eq!(s, vec![1.0f64]);
}

#[test]
fn bool_arithmetic_reads_results_as_not_zero() {
    let a = arr(&[false, false, true, true]);
    let b = arr(&[false, true, false, true]);
    assert_eq!((&a + &b).to_vec(), vec![false, true, true, true]); // 1 + 1 = 2, not zero
    assert_eq!((&a - &b).to_vec(), vec![false, true, true, false]); // 0 - 1 wraps to 255
    assert_eq!((&a * &b).to_vec(), vec![false, false, false, true]);
    assert_eq!((&a / &b).to_vec(), vec![false, false, false, true]); // x / 0 = 0
    assert_eq!((&a & &b).to_vec(), vec![false, false, false, true]);
    assert_eq!((&a | &b).to_vec(), vec![false, true, true, true]);
    assert_eq!((&a ^ &b).to_vec(), vec![false, true, true, false]);
    assert_eq!((&a << &b).to_vec(), vec![false, false, true, true]); // 1 << 1 = 2
    assert_eq!((&a >> &b).to_vec(), vec![false, false, true, false]);
    assert_eq!(ef::pow(&a, &b, false).to_vec(), vec![true, false, true, true]); // 0^0 = 1
    assert_eq!(ef::bitnot(&a).to_vec(), vec![true, true, false, false]);
    assert_eq!((-&a).to_vec(), vec![false, false, true, true]); // -1 is not zero
    assert_eq!((!&a).to_vec(), vec![true, true, false, false]);
}

#[test]
fn f16_computes_in_f32_and_rounds_once() {
    let h = |x: f64| f16::from_f64(x);
    // 2048 + 1 is a tie between 2048 and 2050 and rounds to even
    assert_eq!((arr(&[h(2048.0)]) + h(1.0)).to_vec(), vec![h(2048.0)]);
    // 2048 + 1 + 1: fused into one tree, each step still rounds to f16
    let x = arr(&[h(2048.0)]);
    assert_eq!((&(&x + h(1.0)) + h(1.0)).to_vec(), vec![h(2048.0)]);
    // 1/3 rounded once to the nearest f16
    assert_eq!((arr(&[h(1.0)]) / h(3.0)).to_vec(), vec![h(1.0 / 3.0)]);
    // overflow to infinity
    assert_eq!((arr(&[h(60000.0)]) * h(2.0)).to_vec(), vec![f16::INFINITY]);
    // sqrt computed in f32 of an exactly representable square
    assert_eq!(ef::sqrt(&arr(&[h(6.25)])).to_vec(), vec![h(2.5)]);
}

#[test]
fn complex_ordering_compares_magnitudes() {
    let z = arr(&[c32::new(3.0, 4.0), c32::new(0.0, -1.0), c32::new(-6.0, 0.0)]);
    let w = arr(&[c32::new(-6.0, 0.0), c32::new(1.0, 0.0), c32::new(0.0, 5.0)]);
    assert_eq!(ef::lt(&z, &w, false).to_vec(), vec![true, false, false]);
    assert_eq!(ef::le(&z, &w, false).to_vec(), vec![true, true, false]);
    assert_eq!(ef::gt(&z, &w, false).to_vec(), vec![false, false, true]);
    assert_eq!(ef::ge(&z, &w, false).to_vec(), vec![false, true, true]);
    // equal magnitudes are not equal values
    assert_eq!(ef::eq(&z, &w, false).to_vec(), vec![false, false, false]);
    assert_eq!(ef::neq(&z, &w, false).to_vec(), vec![true, true, true]);
    // (which of two values of equal magnitude min and max return is not specified)
    let (lo, hi) = (ef::minof(&z, &w, false).to_vec(), ef::maxof(&z, &w, false).to_vec());
    assert_eq!((lo[0], lo[2]), (c32::new(3.0, 4.0), c32::new(0.0, 5.0)));
    assert_eq!((hi[0], hi[2]), (c32::new(-6.0, 0.0), c32::new(-6.0, 0.0)));
    // with a real scalar (promoted to complex)
    assert_eq!(ef::lt(&arr(&[c64::new(3.0, 4.0)]), &5.5f64, false).to_vec(), vec![true]);
    assert_eq!(ef::gt(&-10.0f64, &arr(&[c64::new(3.0, 4.0)]), false).to_vec(), vec![true]);
}

#[test]
fn minof_and_maxof_prefer_numbers_to_nan() {
    let a = arr(&[f64::NAN, 1.0, f64::NAN]);
    let b = arr(&[2.0f64, f64::NAN, f64::NAN]);
    let lo = ef::minof(&a, &b, false).to_vec();
    let hi = ef::maxof(&a, &b, false).to_vec();
    assert_eq!(&lo[..2], &[2.0, 1.0]);
    assert_eq!(&hi[..2], &[2.0, 1.0]);
    assert!(lo[2].is_nan() && hi[2].is_nan());
}

#[test]
fn casts_truncate_saturate_and_wrap() {
    let f = arr(&[1.7f32, -2.5, 300.0, -1e10, f32::NAN, f32::INFINITY]);
    assert_eq!(f.cast::<u8>().to_vec(), vec![1, 0, 255, 0, 0, 255]);
    assert_eq!(f.cast::<i32>().to_vec(), vec![1, -2, 300, i32::MIN, 0, i32::MAX]);
    assert_eq!(arr(&[300i32, -1]).cast::<u8>().to_vec(), vec![44, 255]);
    assert_eq!(arr(&[c32::new(-2.9, 5.0)]).cast::<i16>().to_vec(), vec![-2]);
    assert_eq!(
        arr(&[c64::new(0.0, 1.0), c64::new(0.0, 0.0)]).cast::<bool>().to_vec(),
        vec![true, false]
    );
    assert_eq!(arr(&[f64::NAN, 0.0, -0.0]).cast::<bool>().to_vec(), vec![true, false, false]);
    assert_eq!(arr(&[true, false]).cast::<f16>().to_vec(), vec![f16::ONE, f16::ZERO]);
    assert_eq!(arr(&[70000.0f64]).cast::<f16>().to_vec(), vec![f16::INFINITY]);
    assert_eq!(arr(&[u64::MAX]).cast::<f32>().to_vec(), vec![18_446_744_073_709_551_616.0]);
}
