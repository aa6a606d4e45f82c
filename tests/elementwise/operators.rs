//! The operators: `+ - * / % & | ^ << >>` with owned and borrowed arrays on either side and
//! with Rust scalars on either side, unary `-` and `!`, and the `*Assign` forms, for every
//! element type each accepts. They mean the functions with `batch = false`.

use crate::common;

use common::refs;
use common::*;
use emberfire::{bf16, c32, c64, dim4, f16, Array, Dim4};

const CASES: u32 = 16;

/// Inputs for one operator case: two arrays of shape `d` and a scalar.
struct Inputs<T: Elem> {
    a: Vec<T>,
    b: Vec<T>,
    s: T,
    d: Dim4,
}

fn inputs<T: Elem>(d: Dim4, seed: u64, gb: &dyn Fn(&mut Rng64) -> T) -> Inputs<T> {
    let mut r = Rng64::seed_from_u64(seed);
    let n = d.elements() as usize;
    let ga = |r: &mut Rng64| if T::TY.class == Class::Complex { T::small(r) } else { T::any(r) };
    let a = gen_vec(&mut r, n, &ga);
    let b = gen_vec(&mut r, n, gb);
    let s = gb(&mut r);
    Inputs { a, b, s, d }
}

/// The four array forms of a binary operator.
macro_rules! array_forms {
    ($x:expr, $y:expr, $op:tt) => {
        [
            ("a OP b", $x.clone() $op $y.clone()),
            ("a OP &b", $x.clone() $op &$y),
            ("&a OP b", &$x $op $y.clone()),
            ("&a OP &b", &$x $op &$y),
        ]
    };
}

/// Checks results of forms with the array on both sides against `reference(a[i], b[i])`.
fn check_arrays<T: Elem, O: Elem>(
    op: &str,
    inp: &Inputs<T>,
    results: &[(&str, Array<O>)],
    reference: refs::Bin,
    t: Ty,
) -> Result<(), String> {
    let want: Vec<V> =
        inp.a.iter().zip(&inp.b).map(|(x, y)| reference(x.to_v(), y.to_v(), t)).collect();
    for (form, got) in results {
        if got.dims() != inp.d {
            return Err(format!(
                "{} on {}: dims {} for {}",
                form.replace("OP", op),
                T::TY.name,
                got.dims(),
                inp.d
            ));
        }
        check_all(&got.to_vec(), &want, Tol::EXACT, &|i| {
            format!(
                "{} on {} {}, element {i}: {:?} and {:?}",
                form.replace("OP", op),
                T::TY.name,
                inp.d,
                inp.a[i],
                inp.b[i]
            )
        })?;
    }
    Ok(())
}

/// Checks `array OP scalar` forms (`rhs = true`) or `scalar OP array` forms.
fn check_scalar<T: Elem, O: Elem>(
    op: &str,
    inp: &Inputs<T>,
    results: &[(&str, Array<O>)],
    reference: refs::Bin,
    t: Ty,
    rhs: bool,
) -> Result<(), String> {
    let s = inp.s.to_v();
    let want: Vec<V> = inp
        .a
        .iter()
        .map(|x| if rhs { reference(x.to_v(), s, t) } else { reference(s, x.to_v(), t) })
        .collect();
    for (form, got) in results {
        check_all(&got.to_vec(), &want, Tol::EXACT, &|i| {
            format!(
                "{} on {} {}, element {i}: {:?} and scalar {:?}",
                form.replace("OP", op),
                T::TY.name,
                inp.d,
                inp.a[i],
                inp.s
            )
        })?;
    }
    Ok(())
}

fn nonzero_small<T: Elem>(r: &mut Rng64) -> T {
    loop {
        let v = if T::TY.class == Class::Complex { T::small(r) } else { T::any(r) };
        if T::TY.class != Class::Complex || v.to_v().nz() {
            return v;
        }
    }
}

/// `+ - * /` (and `%` for real types) in every array and scalar form, for a type that has
/// scalar operators.
macro_rules! arith_ops {
    ($t:ty, $d:expr, $s:expr, rem: $rem:tt) => {{
        let inp = inputs::<$t>($d, $s, &|r| nonzero_small::<$t>(r));
        let (x, y, s) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d), inp.s);
        let t = <$t as Elem>::TY;
        check_arrays("+", &inp, &array_forms!(x, y, +), refs::add, t)?;
        check_arrays("-", &inp, &array_forms!(x, y, -), refs::sub, t)?;
        check_arrays("*", &inp, &array_forms!(x, y, *), refs::mul, t)?;
        check_arrays("/", &inp, &array_forms!(x, y, /), refs::div, t)?;
        check_scalar("+", &inp, &[("&a OP s", &x + s), ("a OP s", x.clone() + s)], refs::add, t, true)?;
        check_scalar("+", &inp, &[("s OP &a", s + &x), ("s OP a", s + x.clone())], refs::add, t, false)?;
        check_scalar("-", &inp, &[("&a OP s", &x - s), ("a OP s", x.clone() - s)], refs::sub, t, true)?;
        check_scalar("-", &inp, &[("s OP &a", s - &x), ("s OP a", s - x.clone())], refs::sub, t, false)?;
        check_scalar("*", &inp, &[("&a OP s", &x * s), ("a OP s", x.clone() * s)], refs::mul, t, true)?;
        check_scalar("*", &inp, &[("s OP &a", s * &x), ("s OP a", s * x.clone())], refs::mul, t, false)?;
        check_scalar("/", &inp, &[("&a OP s", &x / s), ("a OP s", x.clone() / s)], refs::div, t, true)?;
        check_scalar("/", &inp, &[("s OP &a", s / &x), ("s OP a", s / x.clone())], refs::div, t, false)?;
        arith_ops!(@rem $rem, inp, x, y, s, t);
    }};
    (@rem yes, $inp:ident, $x:ident, $y:ident, $s:ident, $t:ident) => {
        check_arrays("%", &$inp, &array_forms!($x, $y, %), refs::rem, $t)?;
        check_scalar("%", &$inp, &[("&a OP s", &$x % $s), ("a OP s", $x.clone() % $s)], refs::rem, $t, true)?;
        check_scalar("%", &$inp, &[("s OP &a", $s % &$x), ("s OP a", $s % $x.clone())], refs::rem, $t, false)?;
    };
    (@rem no, $inp:ident, $x:ident, $y:ident, $s:ident, $t:ident) => {};
}

#[test]
fn arithmetic_operators() {
    run_cases(CASES, |d, s| {
        arith_ops!(u8, d, s, rem: yes);
        arith_ops!(i16, d, s, rem: yes);
        arith_ops!(u16, d, s, rem: yes);
        arith_ops!(i32, d, s, rem: yes);
        arith_ops!(u32, d, s, rem: yes);
        arith_ops!(i64, d, s, rem: yes);
        arith_ops!(u64, d, s, rem: yes);
        arith_ops!(f16, d, s, rem: yes);
        arith_ops!(bf16, d, s, rem: yes);
        arith_ops!(f32, d, s, rem: yes);
        arith_ops!(f64, d, s, rem: yes);
        arith_ops!(c32, d, s, rem: no);
        arith_ops!(c64, d, s, rem: no);
        // bool has no scalar arithmetic operators; its array forms:
        let inp = inputs::<bool>(d, s, &|r| bool::any(r));
        let (x, y) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d));
        let t = bool::TY;
        check_arrays("+", &inp, &array_forms!(x, y, +), refs::add, t)?;
        check_arrays("-", &inp, &array_forms!(x, y, -), refs::sub, t)?;
        check_arrays("*", &inp, &array_forms!(x, y, *), refs::mul, t)?;
        check_arrays("/", &inp, &array_forms!(x, y, /), refs::div, t)?;
        check_arrays("%", &inp, &array_forms!(x, y, %), refs::rem, t)
    });
}

fn shift_amount<T: Elem>(r: &mut Rng64) -> T {
    T::from_v(V::I(r.gen_range(-2..=T::TY.bits as i128 + 2)))
}

/// `& | ^ << >>` in every array and scalar form.
macro_rules! bit_ops {
    ($t:ty, $d:expr, $s:expr) => {{
        let t = <$t as Elem>::TY;
        let inp = inputs::<$t>($d, $s, &|r| <$t>::any(r));
        let (x, y, s) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d), inp.s);
        check_arrays("&", &inp, &array_forms!(x, y, &), refs::bitand, t)?;
        check_arrays("|", &inp, &array_forms!(x, y, |), refs::bitor, t)?;
        check_arrays("^", &inp, &array_forms!(x, y, ^), refs::bitxor, t)?;
        check_scalar("&", &inp, &[("&a OP s", &x & s), ("a OP s", x.clone() & s)], refs::bitand, t, true)?;
        check_scalar("&", &inp, &[("s OP &a", s & &x), ("s OP a", s & x.clone())], refs::bitand, t, false)?;
        check_scalar("|", &inp, &[("&a OP s", &x | s), ("a OP s", x.clone() | s)], refs::bitor, t, true)?;
        check_scalar("|", &inp, &[("s OP &a", s | &x), ("s OP a", s | x.clone())], refs::bitor, t, false)?;
        check_scalar("^", &inp, &[("&a OP s", &x ^ s), ("a OP s", x.clone() ^ s)], refs::bitxor, t, true)?;
        check_scalar("^", &inp, &[("s OP &a", s ^ &x), ("s OP a", s ^ x.clone())], refs::bitxor, t, false)?;
        let inp = inputs::<$t>($d, $s ^ 1, &|r| shift_amount::<$t>(r));
        let (x, y, s) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d), inp.s);
        check_arrays("<<", &inp, &array_forms!(x, y, <<), refs::shiftl, t)?;
        check_arrays(">>", &inp, &array_forms!(x, y, >>), refs::shiftr, t)?;
        check_scalar("<<", &inp, &[("&a OP s", &x << s), ("a OP s", x.clone() << s)], refs::shiftl, t, true)?;
        check_scalar(">>", &inp, &[("&a OP s", &x >> s), ("a OP s", x.clone() >> s)], refs::shiftr, t, true)?;
        // a scalar shifted by an array of amounts
        let amounts = Inputs { a: inp.b.clone(), b: inp.b.clone(), s: inp.a.first().copied().unwrap_or(s), d: inp.d };
        let y = Array::new(&amounts.a, amounts.d);
        let s = amounts.s;
        check_scalar("<<", &amounts, &[("s OP &a", s << &y), ("s OP a", s << y.clone())], refs::shiftl, t, false)?;
        check_scalar(">>", &amounts, &[("s OP &a", s >> &y), ("s OP a", s >> y.clone())], refs::shiftr, t, false)?;
    }};
}

#[test]
fn bitwise_operators() {
    run_cases(CASES, |d, s| {
        bit_ops!(bool, d, s);
        bit_ops!(u8, d, s);
        bit_ops!(i16, d, s);
        bit_ops!(u16, d, s);
        bit_ops!(i32, d, s);
        bit_ops!(u32, d, s);
        bit_ops!(i64, d, s);
        bit_ops!(u64, d, s);
        Ok(())
    });
}

/// `x OP= y` with an owned and a borrowed right-hand side, checked against `x OP y`.
macro_rules! assign_forms {
    ($x:expr, $y:expr, $op:tt) => {{
        let mut p = $x.clone();
        let mut q = $x.clone();
        assign_forms!(@apply p, q, $y, $op);
        [("a OP= b", p), ("a OP= &b", q)]
    }};
    (@apply $p:ident, $q:ident, $y:expr, +) => {{ $p += $y.clone(); $q += &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, -) => {{ $p -= $y.clone(); $q -= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, *) => {{ $p *= $y.clone(); $q *= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, /) => {{ $p /= $y.clone(); $q /= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, %) => {{ $p %= $y.clone(); $q %= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, &) => {{ $p &= $y.clone(); $q &= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, |) => {{ $p |= $y.clone(); $q |= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, ^) => {{ $p ^= $y.clone(); $q ^= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, <<) => {{ $p <<= $y.clone(); $q <<= &$y; }};
    (@apply $p:ident, $q:ident, $y:expr, >>) => {{ $p >>= $y.clone(); $q >>= &$y; }};
}

/// The arithmetic assignments of one type with array and scalar right-hand sides.
macro_rules! arith_assign {
    ($t:ty, $d:expr, $s:expr, rem: $rem:tt) => {{
        let inp = inputs::<$t>($d, $s, &|r| nonzero_small::<$t>(r));
        let (x, y, s) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d), inp.s);
        let t = <$t as Elem>::TY;
        check_arrays("+", &inp, &assign_forms!(x, y, +), refs::add, t)?;
        check_arrays("-", &inp, &assign_forms!(x, y, -), refs::sub, t)?;
        check_arrays("*", &inp, &assign_forms!(x, y, *), refs::mul, t)?;
        check_arrays("/", &inp, &assign_forms!(x, y, /), refs::div, t)?;
        arith_assign!(@rem $rem, inp, x, y, t);
        let (mut p, mut q, mut u, mut v) = (x.clone(), x.clone(), x.clone(), x.clone());
        p += s;
        q -= s;
        u *= s;
        v /= s;
        check_scalar("+", &inp, &[("a OP= s", p)], refs::add, t, true)?;
        check_scalar("-", &inp, &[("a OP= s", q)], refs::sub, t, true)?;
        check_scalar("*", &inp, &[("a OP= s", u)], refs::mul, t, true)?;
        check_scalar("/", &inp, &[("a OP= s", v)], refs::div, t, true)?;
        // the operand is not modified through a shared clone
        check_all(&x.to_vec(), &vs(&inp.a), Tol::EXACT, &|i| {
            format!("{}: an assignment changed another handle's element {i}", t.name)
        })?;
    }};
    (@rem yes, $inp:ident, $x:ident, $y:ident, $t:ident) => {
        check_arrays("%", &$inp, &assign_forms!($x, $y, %), refs::rem, $t)?;
    };
    (@rem no, $inp:ident, $x:ident, $y:ident, $t:ident) => {};
}

macro_rules! bit_assign {
    ($t:ty, $d:expr, $s:expr) => {{
        let t = <$t as Elem>::TY;
        let inp = inputs::<$t>($d, $s, &|r| <$t>::any(r));
        let (x, y) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d));
        check_arrays("&", &inp, &assign_forms!(x, y, &), refs::bitand, t)?;
        check_arrays("|", &inp, &assign_forms!(x, y, |), refs::bitor, t)?;
        check_arrays("^", &inp, &assign_forms!(x, y, ^), refs::bitxor, t)?;
        let inp = inputs::<$t>($d, $s ^ 1, &|r| shift_amount::<$t>(r));
        let (x, y) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d));
        check_arrays("<<", &inp, &assign_forms!(x, y, <<), refs::shiftl, t)?;
        check_arrays(">>", &inp, &assign_forms!(x, y, >>), refs::shiftr, t)?;
    }};
}

#[test]
fn assignment_operators() {
    run_cases(CASES, |d, s| {
        arith_assign!(u8, d, s, rem: yes);
        arith_assign!(i16, d, s, rem: yes);
        arith_assign!(u16, d, s, rem: yes);
        arith_assign!(i32, d, s, rem: yes);
        arith_assign!(u32, d, s, rem: yes);
        arith_assign!(i64, d, s, rem: yes);
        arith_assign!(u64, d, s, rem: yes);
        arith_assign!(f16, d, s, rem: yes);
        arith_assign!(bf16, d, s, rem: yes);
        arith_assign!(f32, d, s, rem: yes);
        arith_assign!(f64, d, s, rem: yes);
        arith_assign!(c32, d, s, rem: no);
        arith_assign!(c64, d, s, rem: no);
        bit_assign!(bool, d, s);
        bit_assign!(u8, d, s);
        bit_assign!(i16, d, s);
        bit_assign!(u16, d, s);
        bit_assign!(i32, d, s);
        bit_assign!(u32, d, s);
        bit_assign!(i64, d, s);
        bit_assign!(u64, d, s);
        let inp = inputs::<bool>(d, s, &|r| bool::any(r));
        let (x, y) = (Array::new(&inp.a, inp.d), Array::new(&inp.b, inp.d));
        check_arrays("+", &inp, &assign_forms!(x, y, +), refs::add, bool::TY)?;
        check_arrays("*", &inp, &assign_forms!(x, y, *), refs::mul, bool::TY)
    });
}

/// An assignment with an operand of another type computes in the promoted type and converts
/// the result back to the left operand's type (wrapping integers, truncating floats).
#[test]
fn mixed_type_assignment_converts_back() {
    let mut a = Array::new(&[1i32, -7, 100, i32::MAX], dim4!(4));
    a += &Array::new(&[0.75f32, 0.5, -0.25, 1e10], dim4!(4));
    // computed in f32, truncated toward zero, saturated
    assert_eq!(a.to_vec(), vec![1, -6, 99, i32::MAX]);
    let mut b = Array::new(&[250u8, 3], dim4!(2));
    b += 10i32; // u8 with i32 computes in i32; 260 wraps to 4
    assert_eq!(b.to_vec(), vec![4, 13]);
    let mut c = Array::new(&[c32::new(1.0, 1.0)], dim4!(1));
    c *= c64::new(0.0, 2.0);
    assert_eq!(c.to_vec(), vec![c32::new(-2.0, 2.0)]);
    let mut h = Array::new(&[f16::from_f64(1.0)], dim4!(1));
    h /= 3.0f64;
    assert_eq!(h.to_vec(), vec![f16::from_f64(1.0 / 3.0)]);
    let mut s = Array::new(&[1u16, 0x8000], dim4!(2));
    s <<= Array::new(&[3i32, 1], dim4!(2)); // u16 with i32 computes in i32, wraps back
    assert_eq!(s.to_vec(), vec![8, 0]);
}

/// Operators on arrays of different shapes panic (they do not broadcast; the functions with
/// batch = true do).
#[test]
#[should_panic(expected = "add: shapes [2 1 1 1] and [1 2 1 1] differ; pass batch = true")]
fn operator_shape_mismatch_panics() {
    let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    let b = Array::new(&[1.0f32, 2.0], dim4!(1, 2));
    let _ = &a + &b;
}

#[test]
#[should_panic(expected = "shiftl: shapes [3 1 1 1] and [2 1 1 1] differ")]
fn shift_operator_shape_mismatch_panics() {
    let a = Array::new(&[1u8, 2, 3], dim4!(3));
    let b = Array::new(&[1u8, 2], dim4!(2));
    let _ = a << b;
}
