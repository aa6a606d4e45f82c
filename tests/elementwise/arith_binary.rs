//! Binary element-wise functions, for every element type each accepts: operands of equal
//! shapes, broadcast shapes (batch = true), Rust scalars and single-element arrays on either
//! side, random values including NaN, infinities, zeros and the integer extremes; against
//! references computed on the host. Also the mixed-type promotion table and `clamp`.

use crate::common;

use common::refs;
use common::*;
use emberfire as ef;
use emberfire::{bf16, c32, c64, dim4, f16, Array, DType, Dim4};

const CASES: u32 = 32;

/// The array and scalar forms of a function that accepts both (`add(&a, &2, false)`).
macro_rules! conv_forms {
    ($f:ident, $t:ty, $o:ty) => {
        BinOp::<$t, $t, $o> {
            arrays: &|a, b, batch| ef::$f(a, b, batch),
            scalar_rhs: Some(&|a, s| ef::$f(a, s, false)),
            scalar_lhs: Some(&|s, b| ef::$f(s, b, false)),
        }
    };
}

/// The form of a function that takes two arrays only.
macro_rules! array_forms {
    ($f:ident, $t:ty, $o:ty) => {
        BinOp::<$t, $t, $o> {
            arrays: &|a, b, batch| ef::$f(a, b, batch),
            scalar_rhs: None,
            scalar_lhs: None,
        }
    };
}

/// One test per function: every listed type, both operands of that type.
macro_rules! binary_test {
    ($f:ident, $forms:ident, $out:ty, [$($t:ty),*], $ga:expr, $gb:expr, $reference:expr, $tol:expr) => {
        #[test]
        fn $f() {
            #[allow(clippy::multiple_bound_locations)] // `$out` is sometimes `T` itself
            fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String>
            where
                $out: Elem,
            {
                let reference: refs::Bin = $reference;
                binary_case::<T, T, $out>(
                    stringify!($f),
                    d,
                    s,
                    &$ga,
                    &$gb,
                    &$forms!($f, T, $out),
                    &|a, b| reference(a, b, T::TY),
                    $tol,
                )
            }
            run_cases(CASES, |d, s| {
                $( case::<$t>(d, s)?; )*
                Ok(())
            });
        }
    };
}

// ---- generators ----------------------------------------------------------------------------

/// Whole-range values, or (a third of the time) small ones, so that equal operands and
/// zero divisors are common.
fn mixed<T: Elem>(r: &mut Rng64) -> T {
    if r.gen_bool(0.33) {
        T::small(r)
    } else {
        T::any(r)
    }
}

/// Exponents: mostly 0..=70 (integer powers wrap), some negative, some from the whole range;
/// non-integral exponents for floating types.
fn exponent<T: Elem>(r: &mut Rng64) -> T {
    match (T::TY.class, r.gen_range(0..10)) {
        (Class::Float, 0..=3) => T::from_v(V::F(r.gen_range(-4.0..4.0))),
        (Class::Complex, _) => T::small(r),
        (_, 0..=5) => T::from_v(V::I(r.gen_range(0..=70))),
        (_, 6..=7) => T::from_v(V::I(r.gen_range(-5..=5))),
        _ => T::any(r),
    }
}

/// Bases for `pow`: small values (whose powers stay in range for a while) or any value.
fn base<T: Elem>(r: &mut Rng64) -> T {
    if T::TY.class == Class::Complex {
        return T::small(r);
    }
    if r.gen_bool(0.5) {
        T::small(r)
    } else {
        T::any(r)
    }
}

/// Shift amounts around and beyond the width, negative ones included.
fn shift<T: Elem>(r: &mut Rng64) -> T {
    let w = T::TY.bits as i128;
    if r.gen_bool(0.85) {
        T::from_v(V::I(r.gen_range(-3..=w + 3)))
    } else {
        T::any(r)
    }
}

/// The degree of a root: small non-zero values.
fn degree<T: Elem>(r: &mut Rng64) -> T {
    match T::TY.class {
        Class::Float => {
            T::from_v(V::F(r.gen_range(0.25..6.0) * if r.gen_bool(0.3) { -1.0 } else { 1.0 }))
        }
        _ => T::from_v(V::I(r.gen_range(1..=6))),
    }
}

/// The radicand of a root: non-negative values up to 1e4, some negative ones.
fn radicand<T: Elem>(r: &mut Rng64) -> T {
    let x = 10f64.powf(r.gen_range(-3.0..4.0));
    T::from_v(V::F(if r.gen_bool(0.1) { -x } else { x }))
}

/// Complex operands of moderate size and never zero (division, powers).
fn nonzero<T: Elem>(r: &mut Rng64) -> T {
    loop {
        let x = mixed::<T>(r);
        if x.to_v().nz() || T::TY.class != Class::Complex {
            return x;
        }
    }
}

fn cx_safe<T: Elem>(r: &mut Rng64) -> T {
    if T::TY.class == Class::Complex {
        // finite, non-zero, |z| between 1e-3 and 1e3
        let v = T::small(r);
        if v.to_v().nz() {
            v
        } else {
            T::from_v(V::C(c64::new(1.0, -0.5)))
        }
    } else {
        mixed::<T>(r)
    }
}

// ---- arithmetic ------------------------------------------------------------------------------

binary_test!(
    add,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::add,
    Tol::EXACT
);
binary_test!(
    sub,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::sub,
    Tol::EXACT
);
binary_test!(
    mul,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| cx_safe::<T>(r),
    |r| cx_safe::<T>(r),
    refs::mul,
    Tol::x(2.0)
);
binary_test!(
    div,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| cx_safe::<T>(r),
    |r| nonzero::<T>(r),
    refs::div,
    Tol::x(2.0)
);
binary_test!(
    rem,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::rem,
    Tol::EXACT
);
binary_test!(
    modulo,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::modulo,
    Tol::EXACT
);
binary_test!(
    pow,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| base::<T>(r),
    |r| exponent::<T>(r),
    refs::pow,
    Tol::x(8.0)
);
binary_test!(
    root,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64],
    |r| degree::<T>(r),
    |r| radicand::<T>(r),
    refs::root,
    Tol::x(4.0).slack()
);
binary_test!(
    atan2,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::atan2,
    Tol::EXACT.slack()
);
binary_test!(
    hypot,
    array_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::hypot,
    Tol::EXACT.slack()
);
binary_test!(
    minof,
    array_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::minof,
    Tol::EXACT
);
binary_test!(
    maxof,
    array_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::maxof,
    Tol::EXACT
);

// ---- bits ------------------------------------------------------------------------------------

binary_test!(
    bitand,
    array_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::bitand,
    Tol::EXACT
);
binary_test!(
    bitor,
    array_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::bitor,
    Tol::EXACT
);
binary_test!(
    bitxor,
    array_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::bitxor,
    Tol::EXACT
);
binary_test!(
    shiftl,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64],
    |r| mixed::<T>(r),
    |r| shift::<T>(r),
    refs::shiftl,
    Tol::EXACT
);
binary_test!(
    shiftr,
    conv_forms,
    T,
    [bool, u8, i16, u16, i32, u32, i64, u64],
    |r| mixed::<T>(r),
    |r| shift::<T>(r),
    refs::shiftr,
    Tol::EXACT
);

// ---- comparisons and logic -------------------------------------------------------------------

binary_test!(
    lt,
    conv_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::lt,
    Tol::EXACT
);
binary_test!(
    gt,
    conv_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::gt,
    Tol::EXACT
);
binary_test!(
    le,
    conv_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::le,
    Tol::EXACT
);
binary_test!(
    ge,
    conv_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::ge,
    Tol::EXACT
);
binary_test!(
    eq,
    conv_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::eq,
    Tol::EXACT
);
binary_test!(
    neq,
    array_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::neq,
    Tol::EXACT
);
binary_test!(
    and,
    array_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::and,
    Tol::EXACT
);
binary_test!(
    or,
    array_forms,
    bool,
    [bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64],
    |r| mixed::<T>(r),
    |r| mixed::<T>(r),
    refs::or,
    Tol::EXACT
);

/// `cplx2(re, im)`: computed in the real type of the complex result (f32 for integers of 32
/// bits or fewer, f64 for 64-bit ones).
#[test]
fn cplx2() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String>
    where
        T::ComplexOutType: Elem,
    {
        let part = if <T::ComplexOutType as Elem>::TY.dtype == DType::C64 {
            DType::F64
        } else {
            DType::F32
        };
        binary_case::<T, T, T::ComplexOutType>(
            "cplx2",
            d,
            s,
            &|r| mixed::<T>(r),
            &|r| mixed::<T>(r),
            &conv_forms!(cplx2, T, T::ComplexOutType),
            &|a, b| V::C(c64::new(refs::conv(a, part).f(), refs::conv(b, part).f())),
            Tol::EXACT,
        )
    }
    run_cases(CASES, |d, s| {
        case::<bool>(d, s)?;
        case::<u8>(d, s)?;
        case::<i16>(d, s)?;
        case::<u16>(d, s)?;
        case::<i32>(d, s)?;
        case::<u32>(d, s)?;
        case::<i64>(d, s)?;
        case::<u64>(d, s)?;
        case::<f32>(d, s)?;
        case::<f64>(d, s)
    });
}

/// `clamp(x, lo, hi)` = minof(maxof(x, lo), hi), with arrays (broadcast) or scalars as bounds.
#[test]
fn clamp() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let n = d.elements() as usize;
        let x = gen_vec(&mut r, n, &|r| mixed::<T>(r));
        let (lo, hi) = (mixed::<T>(&mut r), mixed::<T>(&mut r));
        let reference = |v: V, lo: V, hi: V| refs::minof(refs::maxof(v, lo, T::TY), hi, T::TY);
        // scalar bounds
        let got = ef::clamp(&Array::new(&x, d), &lo, &hi, false);
        let want: Vec<V> = x.iter().map(|v| reference(v.to_v(), lo.to_v(), hi.to_v())).collect();
        check_all(&got.to_vec(), &want, Tol::EXACT, &|i| {
            format!(
                "clamp({}) scalar bounds {lo:?} {hi:?}, dims {d}, element {i}, input {:?}",
                T::TY.name,
                x[i]
            )
        })?;
        // array bounds along dimension 0, broadcast over the others
        let bd = dim4!(d[0]);
        let lo_a = gen_vec(&mut r, bd.elements() as usize, &|r| mixed::<T>(r));
        let hi_a = gen_vec(&mut r, bd.elements() as usize, &|r| mixed::<T>(r));
        let got =
            ef::clamp(&Array::new(&x, d), &Array::new(&lo_a, bd), &Array::new(&hi_a, bd), true);
        if got.dims() != d {
            return Err(format!("clamp: dims {} for input {d}", got.dims()));
        }
        let want: Vec<V> = (0..n)
            .map(|i| {
                let j = bidx(d, bd, i);
                reference(x[i].to_v(), lo_a[j].to_v(), hi_a[j].to_v())
            })
            .collect();
        check_all(&got.to_vec(), &want, Tol::EXACT, &|i| {
            format!("clamp({}) array bounds, dims {d}, element {i}, input {:?}", T::TY.name, x[i])
        })
    }
    run_cases(CASES, |d, s| {
        case::<bool>(d, s)?;
        case::<u8>(d, s)?;
        case::<i16>(d, s)?;
        case::<u16>(d, s)?;
        case::<i32>(d, s)?;
        case::<u32>(d, s)?;
        case::<i64>(d, s)?;
        case::<u64>(d, s)?;
        case::<f16>(d, s)?;
        case::<f32>(d, s)?;
        case::<f64>(d, s)?;
        case::<c32>(d, s)?;
        case::<c64>(d, s)
    });
}

/// Broadcasting along each of the four dimensions, from either side, and along two
/// dimensions at once from different sides (an outer sum).
#[test]
fn broadcast_each_dimension() {
    let full = dim4!(3, 4, 2, 5);
    let n = full.elements() as usize;
    let mut r = Rng64::seed_from_u64(7);
    let a: Vec<i32> = gen_vec(&mut r, n, &|r| i32::any(r));
    for k in 0..4 {
        let mut bd = full;
        bd[k] = 1;
        let b: Vec<i32> = gen_vec(&mut r, bd.elements() as usize, &|r| i32::any(r));
        let want: Vec<V> = (0..n)
            .map(|i| refs::add(V::I(a[i] as i128), V::I(b[bidx(full, bd, i)] as i128), i32::TY))
            .collect();
        let (aa, ba) = (Array::new(&a, full), Array::new(&b, bd));
        assert_array(&ef::add(&aa, &ba, true), full, &want, Tol::EXACT, &format!("add, rhs {bd}"));
        assert_array(&ef::add(&ba, &aa, true), full, &want, Tol::EXACT, &format!("add, lhs {bd}"));
        let fa: Vec<f32> = a.iter().map(|&x| x as f32).collect();
        let fb: Vec<f32> = b.iter().map(|&x| x as f32).collect();
        let want: Vec<V> =
            (0..n).map(|i| V::F(refs::fmax(fa[i] as f64, fb[bidx(full, bd, i)] as f64))).collect();
        let got = ef::maxof(&Array::new(&fb, bd), &Array::new(&fa, full), true);
        assert_array(&got, full, &want, Tol::EXACT, &format!("maxof, lhs {bd}"));
    }
    for (da, db) in [(dim4!(3, 1, 2, 1), dim4!(1, 4, 1, 5)), (dim4!(1, 4, 1, 1), dim4!(3, 1, 1, 5))]
    {
        let out = bcast(da, db);
        let x: Vec<f64> = gen_vec(&mut r, da.elements() as usize, &|r| f64::small(r));
        let y: Vec<f64> = gen_vec(&mut r, db.elements() as usize, &|r| f64::small(r));
        let want: Vec<V> = (0..out.elements() as usize)
            .map(|i| V::F(x[bidx(out, da, i)] * y[bidx(out, db, i)]))
            .collect();
        let got = ef::mul(&Array::new(&x, da), &Array::new(&y, db), true);
        assert_array(&got, out, &want, Tol::EXACT, &format!("mul {da} by {db}"));
    }
}

/// Two scalars give a single-element array; a scalar with a single-element array too.
#[test]
fn scalar_with_scalar() {
    let r = ef::add(&2.5f32, &0.25f32, false);
    assert_eq!((r.dims(), r.to_vec()), (dim4!(1), vec![2.75]));
    let r = ef::pow(&2i32, &10i32, false);
    assert_eq!(r.to_vec(), vec![1024]);
    let r = ef::lt(&Array::new(&[3u8], dim4!(1)), &4u8, false);
    assert_eq!(r.to_vec(), vec![true]);
    let r = ef::atan2(&0.0f64, &-1.0f64, true);
    assert_eq!(r.to_vec(), vec![std::f64::consts::PI]);
}

/// Empty operands: equal empty shapes, an empty shape broadcast against size 1, and a scalar
/// with an empty array all give empty results of the right shape.
#[test]
fn empty_operands() {
    let e = Array::<f32>::new(&[], dim4!(0, 3));
    let r = ef::add(&e, &e, false);
    assert_eq!((r.dims(), r.elements()), (dim4!(0, 3), 0));
    let row = Array::new(&[1.0f32, 2.0, 3.0], dim4!(1, 3));
    let r = ef::mul(&e, &row, true);
    assert_eq!(r.dims(), dim4!(0, 3));
    assert!(r.to_vec().is_empty());
    let r = ef::lt(&e, &1.0f32, false);
    assert_eq!(r.dims(), dim4!(0, 3));
    assert_eq!(r.to_vec(), Vec::<bool>::new());
    let r = &e + 1.0f32;
    assert!(r.is_empty());
}

// ---- promotion -------------------------------------------------------------------------------

/// ArrayFire's implicit promotion rule, written out independently of emberfire's table.
fn promoted(l: DType, r: DType) -> DType {
    use DType::*;
    let either = |t: DType| l == t || r == t;
    if l == r {
        l
    } else if either(C64) || (either(C32) && either(F64)) {
        C64
    } else if either(C32) {
        C32
    } else if either(F64) {
        F64
    } else if either(F32) || (either(F16) && either(BF16)) {
        // f16 with bf16: neither holds the other, f32 holds both (PyTorch's rule)
        F32
    } else if either(F16) {
        F16
    } else if either(BF16) {
        BF16
    } else {
        [U64, S64, U32, S32, U16, S16, U8].into_iter().find(|&t| either(t)).unwrap_or(B8)
    }
}

fn promo_case<A, B>()
where
    A: Elem + emberfire::ImplicitPromote<B>,
    B: Elem + emberfire::ImplicitPromote<A>,
    <A as emberfire::ImplicitPromote<B>>::Output: Elem,
    <B as emberfire::ImplicitPromote<A>>::Output: Elem,
{
    type P<X, Y> = <X as emberfire::ImplicitPromote<Y>>::Output;
    let d = dim4!(4);
    // values exact in every type: 0..=3 (0 and 1 for bool)
    let a: Vec<A> = [1, 3, 0, 2].iter().map(|&v| A::from_v(V::I(v))).collect();
    let b: Vec<B> = [2, 1, 0, 3].iter().map(|&v| B::from_v(V::I(v))).collect();
    let (aa, ba) = (Array::new(&a, d), Array::new(&b, d));
    let t = <P<A, B> as Elem>::TY;
    assert_eq!(t.dtype, promoted(A::TY.dtype, B::TY.dtype), "{} + {}", A::TY.name, B::TY.name);
    assert_eq!(
        <P<B, A> as Elem>::TY.dtype,
        t.dtype,
        "promotion is symmetric: {} and {}",
        A::TY.name,
        B::TY.name
    );
    let conv = |v: V| refs::conv(v, t.dtype);
    let want: Vec<V> = (0..4).map(|i| refs::add(conv(a[i].to_v()), conv(b[i].to_v()), t)).collect();
    let what = format!("{} + {}", A::TY.name, B::TY.name);
    assert_array(&(&aa + &ba), d, &want, Tol::EXACT, &what);
    assert_array(&ef::add(&aa, &ba, false), d, &want, Tol::EXACT, &what);
    let want: Vec<V> = (0..4).map(|i| refs::lt(conv(a[i].to_v()), conv(b[i].to_v()), t)).collect();
    assert_array(&ef::lt(&aa, &ba, false), d, &want, Tol::EXACT, &format!("lt({what})"));
    // mixed operands with a scalar on the right
    let want: Vec<V> = (0..4).map(|i| refs::mul(conv(a[i].to_v()), conv(b[0].to_v()), t)).collect();
    assert_array(&ef::mul(&aa, &b[0], false), d, &want, Tol::EXACT, &format!("{what} (scalar)"));
}

macro_rules! promo_row {
    ($a:ty; $($b:ty),*) => { $( promo_case::<$a, $b>(); )* };
}

macro_rules! promo_all {
    ($($a:ty),*) => {
        $( promo_row!($a; bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64); )*
    };
}

/// Every pair of the thirteen element types: the result type follows ArrayFire's promotion,
/// and operands are converted to it before the operation.
#[test]
fn promotion_table() {
    promo_all!(bool, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, c32, c64);
}

/// Mixed-type operands whose conversion to the result type is not exact: the operation sees
/// the converted values (i64 to f32 rounds, u8 with i16 is signed, f64 with c32 is c64).
#[test]
fn promotion_converts_operands_first() {
    let big = Array::new(&[16_777_217i64, -3], dim4!(2));
    let half = Array::new(&[0.5f32, 0.25], dim4!(2));
    let r: Array<f32> = &big + &half;
    assert_eq!(r.to_vec(), vec![16_777_216.0 + 0.5, -2.75]);
    let u = Array::new(&[200u8, 5], dim4!(2));
    let s = Array::new(&[-100i16, -10], dim4!(2));
    let r: Array<i16> = &u + &s;
    assert_eq!(r.to_vec(), vec![100, -5]);
    let z = Array::new(&[c32::new(1.0, 2.0)], dim4!(1));
    let x = Array::new(&[0.1f64], dim4!(1));
    let r: Array<c64> = &z * &x;
    assert_eq!(r.to_vec(), vec![c64::new(0.1, 0.2)]);
    let h = Array::new(&[f16::from_f64(1.5)], dim4!(1));
    let i = Array::new(&[70_000i32], dim4!(1));
    let r: Array<f16> = &h + &i;
    assert_eq!(r.to_vec(), vec![f16::INFINITY]);
}
