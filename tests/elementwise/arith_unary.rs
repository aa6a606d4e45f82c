//! Unary element-wise functions, for every element type each accepts, on random shapes and
//! values (NaN, infinities and signed zeros included), against f64 / c64 references computed
//! on the host.

use crate::common;

use common::refs::*;
use common::special;
use common::*;
use emberfire as ef;
use emberfire::{bf16, c32, c64, f16, Array, Dim4};
use std::f64::consts::PI;

const CASES: u32 = 32;

// ---- input domains (f64 values, converted to the element type) -------------------------------

fn rsign(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.5) {
        -1.0
    } else {
        1.0
    }
}

/// Any magnitude from 1e-4 to 1e4, either sign, and halves (ties of rounding).
fn wide(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.3) {
        r.gen_range(-40..=40) as f64 * 0.5
    } else {
        rsign(r) * 10f64.powf(r.gen_range(-4.0..4.0))
    }
}

fn trig(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.9) {
        r.gen_range(-10.0..10.0)
    } else {
        r.gen_range(-1e4..1e4)
    }
}

fn unit(r: &mut Rng64) -> f64 {
    r.gen_range(-1.2..1.2)
}

fn mid(r: &mut Rng64) -> f64 {
    r.gen_range(-10.0..10.0)
}

fn expo(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.9) {
        r.gen_range(-30.0..30.0)
    } else {
        r.gen_range(-120.0..120.0)
    }
}

/// Mostly positive, any magnitude, for logarithms and roots.
fn positive(r: &mut Rng64) -> f64 {
    let m = 10f64.powf(r.gen_range(-6.0..6.0));
    if r.gen_bool(0.15) {
        -m
    } else {
        m
    }
}

/// Near 1 (where ln(x + sqrt(x² - 1)) cancels) and beyond.
fn acosh_dom(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.3) {
        1.0 + 10f64.powf(r.gen_range(-12.0..0.0))
    } else {
        r.gen_range(0.5..30.0)
    }
}

/// Near ±1 (where the library form of atanh cancels) and inside.
fn atanh_dom(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.3) {
        rsign(r) * (1.0 - 10f64.powf(r.gen_range(-12.0..0.0)))
    } else {
        r.gen_range(-1.2..1.2)
    }
}

fn log1p_dom(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.2) {
        rsign(r) * 10f64.powf(r.gen_range(-9.0..-2.0))
    } else {
        r.gen_range(-1.2..30.0)
    }
}

fn gamma_dom(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.3) {
        r.gen_range(-6..=14) as f64
    } else {
        r.gen_range(-8.0..14.0)
    }
}

fn lgamma_dom(r: &mut Rng64) -> f64 {
    if r.gen_bool(0.3) {
        r.gen_range(-6..=40) as f64
    } else {
        r.gen_range(-10.0..60.0)
    }
}

fn erf_dom(r: &mut Rng64) -> f64 {
    r.gen_range(-7.0..7.0)
}

fn sigmoid_dom(r: &mut Rng64) -> f64 {
    r.gen_range(-60.0..60.0)
}

/// A real input: the domain's values converted to `T`; floats also get NaN, ±inf and ±0, and
/// integers values from their whole range.
fn gen_real<T: Elem>(r: &mut Rng64, dom: fn(&mut Rng64) -> f64) -> T {
    match T::TY.class {
        Class::Float if r.gen_bool(0.08) => T::from_v(V::F(
            [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0][r.gen_range(0..5)],
        )),
        Class::Int | Class::Bool if r.gen_bool(0.1) => T::any(r),
        _ => T::from_v(V::F(dom(r))),
    }
}

fn small_c<T: Elem>(r: &mut Rng64) -> T {
    T::small(r)
}

/// Runs `$case::<T>(dims, seed)` for the eleven real element types.
macro_rules! real_types {
    ($case:ident, $d:expr, $s:expr) => {{
        $case::<bool>($d, $s)?;
        $case::<u8>($d, $s)?;
        $case::<i16>($d, $s)?;
        $case::<u16>($d, $s)?;
        $case::<i32>($d, $s)?;
        $case::<u32>($d, $s)?;
        $case::<i64>($d, $s)?;
        $case::<u64>($d, $s)?;
        $case::<f16>($d, $s)?;
        $case::<bf16>($d, $s)?;
        $case::<f32>($d, $s)?;
        $case::<f64>($d, $s)?;
    }};
}

/// A real function: every real input type, computed in the output type (f32 for integers of
/// 32 bits or fewer, f64 for 64-bit ones, the type itself for floats).
macro_rules! real_unary {
    ($name:ident, $out:ident, $dom:expr, $f:expr, $tol:expr) => {
        #[test]
        fn $name() {
            fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String>
            where
                T::$out: Elem,
            {
                let f: fn(f64) -> f64 = $f;
                unary_case::<T, T::$out>(
                    stringify!($name),
                    d,
                    s,
                    &|r| gen_real::<T>(r, $dom),
                    &|a| ef::$name(a),
                    &|x| V::F(f(<T::$out>::from_v(x).to_v().f())),
                    $tol,
                )
            }
            run_cases(CASES, |d, s| {
                real_types!(case, d, s);
                Ok(())
            });
        }
    };
}

/// A complex function: c32 and c64, against a c64 reference.
macro_rules! complex_unary {
    ($test:ident, $name:ident, $f:expr, $tol:expr) => {
        #[test]
        fn $test() {
            let f: fn(c64) -> c64 = $f;
            run_cases(CASES, |d, s| {
                unary_case::<c32, c32>(
                    stringify!($name),
                    d,
                    s,
                    &small_c::<c32>,
                    &|a| ef::$name(a),
                    &|x| V::C(f(x.c())),
                    $tol,
                )?;
                unary_case::<c64, c64>(
                    stringify!($name),
                    d,
                    s,
                    &small_c::<c64>,
                    &|a| ef::$name(a),
                    &|x| V::C(f(x.c())),
                    $tol,
                )
            });
        }
    };
}

const ULP: Tol = Tol::EXACT;
/// References computed by series and approximations (erf, Γ) are good to about 1e-14.
fn approx() -> Tol {
    Tol::EXACT.reference(1e-11)
}

real_unary!(abs, AbsOutType, wide, |x| x.abs(), ULP);
real_unary!(trunc, AbsOutType, wide, |x| x.trunc(), ULP);
real_unary!(round, AbsOutType, wide, |x| x.round(), ULP);
real_unary!(floor, AbsOutType, wide, |x| x.floor(), ULP);
real_unary!(ceil, AbsOutType, wide, |x| x.ceil(), ULP);
real_unary!(sign, AbsOutType, wide, |x| if x < 0.0 { 1.0 } else { 0.0 }, ULP);
real_unary!(sigmoid, AbsOutType, sigmoid_dom, |x| 1.0 / (1.0 + (-x).exp()), ULP);
real_unary!(expm1, AbsOutType, expo, |x| x.exp_m1(), ULP);
real_unary!(erf, AbsOutType, erf_dom, special::erf, approx());
real_unary!(erfc, AbsOutType, erf_dom, special::erfc, approx());
real_unary!(log10, AbsOutType, positive, |x| x.log10(), ULP);
real_unary!(log1p, AbsOutType, log1p_dom, |x| x.ln_1p(), ULP);
real_unary!(log2, AbsOutType, positive, |x| x.log2(), ULP);
real_unary!(cbrt, AbsOutType, wide, |x| x.cbrt(), ULP);
real_unary!(tgamma, AbsOutType, gamma_dom, special::gamma, approx());
real_unary!(lgamma, AbsOutType, lgamma_dom, special::lgamma, approx().scale(1.0));
real_unary!(real, AbsOutType, wide, |x| x, ULP);
real_unary!(imag, AbsOutType, wide, |_| 0.0, ULP);
real_unary!(acosh, UnaryOutType, acosh_dom, special::acosh, ULP);
real_unary!(acos, UnaryOutType, unit, |x| x.acos(), ULP);
real_unary!(asin, UnaryOutType, unit, |x| x.asin(), ULP);
real_unary!(asinh, UnaryOutType, mid, |x| x.asinh(), ULP);
real_unary!(atan, UnaryOutType, mid, |x| x.atan(), ULP);
real_unary!(atanh, UnaryOutType, atanh_dom, special::atanh, ULP);
real_unary!(cos, UnaryOutType, trig, |x| x.cos(), ULP);
real_unary!(cosh, UnaryOutType, mid, |x| x.cosh(), ULP);
real_unary!(exp, UnaryOutType, expo, |x| x.exp(), ULP);
real_unary!(log, UnaryOutType, positive, |x| x.ln(), ULP);
real_unary!(sin, UnaryOutType, trig, |x| x.sin(), ULP);
real_unary!(sinh, UnaryOutType, mid, |x| x.sinh(), ULP);
real_unary!(sqrt, UnaryOutType, positive, |x| x.sqrt(), ULP);
real_unary!(rsqrt, UnaryOutType, positive, |x| 1.0 / x.sqrt(), ULP);
real_unary!(tan, UnaryOutType, trig, |x| x.tan(), ULP);
real_unary!(tanh, UnaryOutType, mid, |x| x.tanh(), ULP);
real_unary!(pow2, UnaryOutType, expo, |x| x.exp2(), ULP);
real_unary!(factorial, UnaryOutType, gamma_dom, |x| special::gamma(x + 1.0), approx());

/// Sine and cosine where the CUDA kernels take each of their two paths: arguments below 105615
/// in magnitude (the branch-free reduction) and larger, infinite or NaN ones (the accurate
/// functions), mixed within the vectors of a fused loop (64 elements, the far ones scattered)
/// and in its scalar tail (67), with the sign of zero kept by sine.
#[test]
fn sin_cos_near_and_far_arguments() {
    let near = [0.0, -0.0, 1e-30, -3.0, 0.785, 2.5, 1e4, -105614.0, 12.566370614359172, 1e-3];
    let far = [105615.0, -2e5, 1e6, 3.4e38, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 123456.7];
    for n in [64usize, 67] {
        let mut xs: Vec<f32> = (0..n).map(|i| near[i % near.len()] as f32).collect();
        for (k, &f) in far.iter().enumerate() {
            xs[(k * 7 + 3) % n] = f as f32;
        }
        let a = Array::new(&xs, Dim4::new(&[n as u64, 1, 1, 1]));
        let (s, c) = (ef::sin(&a).to_vec(), ef::cos(&a).to_vec());
        for (i, &x) in xs.iter().enumerate() {
            let x = f64::from(x);
            for (got, want, what) in [(s[i], x.sin(), "sin"), (c[i], x.cos(), "cos")] {
                let got = f64::from(got);
                if want.is_nan() {
                    assert!(got.is_nan(), "{what}({x}) of {n}: got {got}, want NaN");
                    continue;
                }
                // two f32 ulps at the result's magnitude
                let allowed = want.abs() * 2.4e-7 + 1e-38;
                assert!(
                    (got - want).abs() <= allowed,
                    "{what}({x}) of {n}: got {got}, want {want}"
                );
            }
            if x == 0.0 {
                assert_eq!(s[i].to_bits(), (x as f32).to_bits(), "sin({x}) keeps the sign of zero");
            }
        }
    }
}

complex_unary!(sin_complex, sin, csin, Tol::x(4.0));
complex_unary!(cos_complex, cos, ccos, Tol::x(4.0));
complex_unary!(tan_complex, tan, ctan, Tol::x(8.0));
complex_unary!(sinh_complex, sinh, csinh, Tol::x(4.0));
complex_unary!(cosh_complex, cosh, ccosh, Tol::x(4.0));
complex_unary!(tanh_complex, tanh, ctanh, Tol::x(8.0));
complex_unary!(asin_complex, asin, casin, Tol::x(8.0));
complex_unary!(acos_complex, acos, cacos, Tol::x(8.0));
complex_unary!(atan_complex, atan, catan, Tol::x(8.0));
complex_unary!(asinh_complex, asinh, casinh, Tol::x(8.0));
complex_unary!(acosh_complex, acosh, cacosh, Tol::x(8.0));
complex_unary!(atanh_complex, atanh, catanh, Tol::x(8.0));
complex_unary!(exp_complex, exp, cexp, Tol::x(4.0));
complex_unary!(log_complex, log, cln, Tol::x(4.0));
complex_unary!(sqrt_complex, sqrt, csqrt, Tol::x(4.0));
complex_unary!(rsqrt_complex, rsqrt, crsqrt, Tol::x(4.0));
complex_unary!(pow2_complex, pow2, cpow2, Tol::x(4.0));
complex_unary!(conjg_complex, conjg, |z| z.conj(), ULP);

/// `abs`, `arg`, `real` and `imag` of complex arrays give real arrays.
#[test]
fn complex_to_real() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String>
    where
        T::AbsOutType: Elem,
        T::ArgOutType: Elem,
    {
        let g = &|r: &mut Rng64| T::any(r);
        unary_case::<T, T::AbsOutType>(
            "abs",
            d,
            s,
            g,
            &|a| ef::abs(a),
            &|x| V::F(x.c().re.hypot(x.c().im)),
            ULP,
        )?;
        unary_case::<T, T::ArgOutType>(
            "arg",
            d,
            s,
            g,
            &|a| ef::arg(a),
            &|x| V::F(x.c().im.atan2(x.c().re)),
            ULP,
        )?;
        unary_case::<T, T::AbsOutType>(
            "real",
            d,
            s,
            g,
            &|a| ef::real(a),
            &|x| V::F(x.c().re),
            ULP,
        )?;
        unary_case::<T, T::AbsOutType>("imag", d, s, g, &|a| ef::imag(a), &|x| V::F(x.c().im), ULP)
    }
    run_cases(CASES, |d, s| {
        case::<c32>(d, s)?;
        case::<c64>(d, s)
    });
}

/// `arg` of a real array: π for negative values, 0 otherwise, in the type `ArgOutType` names
/// (the input type itself for integers and bool, so π truncates to 3).
#[test]
fn arg_real() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String>
    where
        T::ArgOutType: Elem,
    {
        unary_case::<T, T::ArgOutType>(
            "arg",
            d,
            s,
            &|r| gen_real::<T>(r, wide),
            &|a| ef::arg(a),
            &|x| V::F(real_arg(x.f())),
            ULP,
        )
    }
    run_cases(CASES, |d, s| {
        real_types!(case, d, s);
        Ok(())
    });
}

/// `conjg` and `cplx` of real arrays give complex arrays with zero imaginary parts; `cplx` of
/// a complex array is the array.
#[test]
fn real_to_complex() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String>
    where
        T::ComplexOutType: Elem,
    {
        let g = &|r: &mut Rng64| T::any(r);
        let to_c = &|x: V| V::C(<T::ComplexOutType>::from_v(x).to_v().c());
        unary_case::<T, T::ComplexOutType>("conjg", d, s, g, &|a| ef::conjg(a), to_c, ULP)?;
        unary_case::<T, T::ComplexOutType>("cplx", d, s, g, &|a| ef::cplx(a), to_c, ULP)
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
        case::<f64>(d, s)?;
        // cplx of a complex array is the array itself
        let g32 = &|r: &mut Rng64| c32::any(r);
        let g64 = &|r: &mut Rng64| c64::any(r);
        unary_case::<c32, c32>("cplx", d, s, g32, &|a| ef::cplx(a), &|x| x, ULP)?;
        unary_case::<c64, c64>("cplx", d, s, g64, &|a| ef::cplx(a), &|x| x, ULP)
    });
}

/// Runs `$case::<T>(dims, seed)` for all thirteen element types.
macro_rules! all_types {
    ($case:ident, $d:expr, $s:expr) => {{
        real_types!($case, $d, $s);
        $case::<c32>($d, $s)?;
        $case::<c64>($d, $s)?;
    }};
}

fn is_inf(x: V) -> bool {
    match x {
        V::F(f) => f.is_infinite(),
        V::C(c) => c.re.is_infinite() || c.im.is_infinite(),
        _ => false,
    }
}

fn is_nan(x: V) -> bool {
    match x {
        V::F(f) => f.is_nan(),
        V::C(c) => c.re.is_nan() || c.im.is_nan(),
        _ => false,
    }
}

/// The predicates and logical not, on every type.
#[test]
fn predicates_and_not() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let g = &|r: &mut Rng64| T::any(r);
        unary_case::<T, bool>("iszero", d, s, g, &|a| ef::iszero(a), &|x| V::B(!x.nz()), ULP)?;
        unary_case::<T, bool>("isinf", d, s, g, &|a| ef::isinf(a), &|x| V::B(is_inf(x)), ULP)?;
        unary_case::<T, bool>("isnan", d, s, g, &|a| ef::isnan(a), &|x| V::B(is_nan(x)), ULP)?;
        unary_case::<T, bool>("not", d, s, g, &|a| ef::not(a), &|x| V::B(!x.nz()), ULP)?;
        unary_case::<T, bool>("!&a", d, s, g, &|a| !a, &|x| V::B(!x.nz()), ULP)?;
        unary_case::<T, bool>("!a", d, s, g, &|a| !a.clone(), &|x| V::B(!x.nz()), ULP)
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

fn neg_ref(x: V) -> V {
    match x {
        // bool negates 0/1 as a u8 (0 or 255) and reads it back as "not zero"
        V::B(b) => V::B(b),
        V::I(i) => V::I(i.wrapping_neg()),
        V::F(f) => V::F(-f),
        V::C(c) => V::C(-c),
    }
}

/// Negation: wrapping for integers, sign flip for floats (NaN and zeros included).
#[test]
fn neg() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let g = &|r: &mut Rng64| T::any(r);
        unary_case::<T, T>("-&a", d, s, g, &|a| -a, &neg_ref, ULP)?;
        unary_case::<T, T>("-a", d, s, g, &|a| -(a.clone()), &neg_ref, ULP)?;
        // -0.0 must keep its sign: compare the bits through 1/x.
        if T::TY.class == Class::Float {
            let z = Array::new(&[T::from_v(V::F(0.0))], Dim4::default());
            let n = (-&z).to_vec()[0].to_v().f();
            if n != 0.0 || n.is_sign_positive() {
                return Err(format!("-0 of {} is {n}", T::TY.name));
            }
        }
        Ok(())
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

/// Bitwise complement of integers; logical not of bool.
#[test]
fn bitnot() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let g = &|r: &mut Rng64| T::any(r);
        unary_case::<T, T>(
            "bitnot",
            d,
            s,
            g,
            &|a| ef::bitnot(a),
            &|x| match x {
                V::B(b) => V::B(!b),
                v => V::I(!v.i()),
            },
            ULP,
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
        case::<u64>(d, s)
    });
}

/// Exact values the tests' special-function references must reproduce, so that a wrong
/// reference cannot hide a wrong result.
#[test]
fn reference_special_functions() {
    assert!((special::erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
    assert!((special::erf(2.5) - 0.999_593_047_982_555).abs() < 1e-15);
    assert!((special::erfc(3.0) - 2.209_049_699_858_544e-5).abs() < 1e-19);
    assert!((special::erfc(-1.0) - 1.842_700_792_949_715).abs() < 1e-15);
    assert!((special::gamma(5.0) - 24.0).abs() < 1e-12);
    assert!((special::gamma(0.5) - PI.sqrt()).abs() < 1e-14);
    assert!((special::gamma(-0.5) + 2.0 * PI.sqrt()).abs() < 1e-13);
    assert!(special::gamma(-2.0).is_nan());
    assert_eq!(special::gamma(-0.0), f64::NEG_INFINITY);
    assert!((special::lgamma(10.0) - 362_880f64.ln()).abs() < 1e-13);
    assert!((special::lgamma(-2.5) - (8.0 * PI.sqrt() / 15.0).ln()).abs() < 1e-13);
    assert_eq!(special::lgamma(-3.0), f64::INFINITY);
    let z = c64::new(0.5, -1.25);
    for (name, got, want) in [
        ("sin", csin(z), z.sin()),
        ("asin", casin(z), z.asin()),
        ("acos", cacos(z), z.acos()),
        ("atan", catan(z), z.atan()),
        ("asinh", casinh(z), z.asinh()),
        ("acosh", cacosh(z), z.acosh()),
        ("atanh", catanh(z), z.atanh()),
        ("sqrt", csqrt(-z), (-z).sqrt()),
        ("tan", ctan(z), z.tan()),
    ] {
        assert!((got - want).norm() < 1e-14, "{name}: {got} vs {want}");
    }
}

/// tan z = sin z / cos z with both divided by cosh(Im z), which cannot overflow.
fn tan_scaled(z: c64) -> c64 {
    let t = z.im.tanh();
    let (s, c) = (z.re.sin(), z.re.cos());
    cdiv(c64::new(s, c * t), c64::new(c, -s * t))
}

/// tanh z = -i tan(iz), through `tan_scaled`.
fn tanh_scaled(z: c64) -> c64 {
    let t = tan_scaled(c64::new(-z.im, z.re));
    c64::new(t.im, -t.re)
}

/// tan and tanh far from the real (imaginary) axis, where cosh overflows, and next to their
/// poles, where `cos 2a + cosh 2b` cancels: finite, and right to the type's precision.
#[test]
fn complex_tan_and_tanh_far_out_and_near_poles() {
    let points = [
        (1.0, 400.0),
        (0.3, -800.0),
        (-2.0, 30.0),
        (0.7, 21.0),
        (0.7, -19.0),
        (PI / 2.0, 1e-3),
        (PI / 2.0 - 1e-4, -2e-4),
        (-PI / 2.0 + 1e-3, 0.0),
    ];
    let tan_want: Vec<c64> = points.iter().map(|&(a, b)| tan_scaled(c64::new(a, b))).collect();
    let tanh_at: Vec<c64> = points.iter().map(|&(a, b)| c64::new(b, -a)).collect();
    let tanh_want: Vec<c64> = tanh_at.iter().map(|&z| tanh_scaled(z)).collect();
    let tan_at: Vec<c64> = points.iter().map(|&(a, b)| c64::new(a, b)).collect();
    let check = |what: &str, got: Vec<c64>, want: &[c64], tol: f64| {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(g.re.is_finite() && g.im.is_finite(), "{what} at {i}: {g}");
            assert!((g - w).norm() <= tol * w.norm(), "{what} at {i}: {g} vs {w}");
        }
    };
    let n = Dim4::new(&[points.len() as u64, 1, 1, 1]);
    let z64 = Array::new(&tan_at, n);
    check("tan c64", ef::tan(&z64).to_vec(), &tan_want, 1e-12);
    let h64 = Array::new(&tanh_at, n);
    check("tanh c64", ef::tanh(&h64).to_vec(), &tanh_want, 1e-12);
    let narrow =
        |v: &[c64]| v.iter().map(|z| c32::new(z.re as f32, z.im as f32)).collect::<Vec<_>>();
    let widen =
        |v: Vec<c32>| v.iter().map(|z| c64::new(z.re as f64, z.im as f64)).collect::<Vec<_>>();
    // the reference at the f32-rounded points, so that rounding the input is not an error
    let tan_at32 = widen(narrow(&tan_at));
    let tanh_at32 = widen(narrow(&tanh_at));
    let tan_want32: Vec<c64> = tan_at32.iter().map(|&z| tan_scaled(z)).collect();
    let tanh_want32: Vec<c64> = tanh_at32.iter().map(|&z| tanh_scaled(z)).collect();
    let z32 = Array::new(&narrow(&tan_at), n);
    check("tan c32", widen(ef::tan(&z32).to_vec()), &tan_want32, 1e-6);
    let h32 = Array::new(&narrow(&tanh_at), n);
    check("tanh c32", widen(ef::tanh(&h32).to_vec()), &tanh_want32, 1e-6);
}

/// Functions that ArrayFire defines only for real arrays panic for complex input.
#[test]
#[should_panic(expected = "sigmoid: not defined for complex arrays")]
fn sigmoid_of_complex_panics() {
    let _ = ef::sigmoid(&Array::new(&[c32::new(1.0, 1.0)], Dim4::default()));
}

/// log10 and log2 give `AbsOutType` (a real type for complex input), so, as in ArrayFire,
/// they are real-only.
#[test]
#[should_panic(expected = "log10: not defined for complex arrays")]
fn log10_of_complex_panics() {
    let _ = ef::log10(&Array::new(&[c32::new(1.0, 1.0)], Dim4::default()));
}

#[test]
#[should_panic(expected = "floor: not defined for complex arrays")]
fn floor_of_complex_panics() {
    let _ = ef::floor(&Array::new(&[c64::new(1.0, 1.0)], Dim4::default()));
}
