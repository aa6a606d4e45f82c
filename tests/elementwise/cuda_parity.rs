//! The CUDA backend computes what the CPU backend computes: every element-wise operation, cast,
//! select and creation function, for every element type, evaluated on both and compared within
//! the type's tolerance. Needs a CUDA device (run with `--include-ignored` on a GPU machine).

#![allow(clippy::redundant_closure)] // closures keep every check in one uniform form

use emberfire::*;

/// Element values as (real, imaginary) f64 pairs, for comparing any two element types.
trait Parts: HasAfEnum {
    fn parts(self) -> (f64, f64);
}
macro_rules! parts_real {
    ($($t:ty),*) => { $( impl Parts for $t { fn parts(self) -> (f64, f64) { (self as f64, 0.0) } } )* };
}
parts_real!(f32, f64, u8, i16, u16, i32, u32, i64, u64);
impl Parts for bool {
    fn parts(self) -> (f64, f64) {
        (self as u8 as f64, 0.0)
    }
}
impl Parts for f16 {
    fn parts(self) -> (f64, f64) {
        (self.to_f64(), 0.0)
    }
}
impl Parts for bf16 {
    fn parts(self) -> (f64, f64) {
        (self.to_f64(), 0.0)
    }
}
impl Parts for c32 {
    fn parts(self) -> (f64, f64) {
        (self.re as f64, self.im as f64)
    }
}
impl Parts for c64 {
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

/// Relative tolerance by type: transcendental results differ by a few ulp between libraries.
fn tolerance(t: DType) -> f64 {
    match t {
        DType::F16 => 2e-3,
        // one ulp: a transcendental's f32 results may differ by an ulp of f32 between the
        // CPU's and CUDA's libraries, which can move a value across a bf16 rounding boundary
        DType::BF16 => 8e-3,
        DType::F32 | DType::C32 => 2e-5,
        DType::F64 | DType::C64 => 1e-12,
        _ => 0.0,
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b || (a.abs() > 1e30 && b.abs() > 1e30 && a.signum() == b.signum());
    }
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// Evaluates `f` on the CPU and on CUDA from the same host inputs and compares the results.
fn check<T: HasAfEnum, O: Parts>(
    what: &str,
    data: &[T],
    dims: Dim4,
    f: impl Fn(&Array<T>) -> Array<O>,
) {
    check_within(what, data, dims, 0.0, f)
}

/// Like `check`, also allowing an absolute difference of `abs_tol` (for integer results of
/// functions computed in f64, where the last bit of the f64 may round the other way).
fn check_within<T: HasAfEnum, O: Parts>(
    what: &str,
    data: &[T],
    dims: Dim4,
    abs_tol: f64,
    f: impl Fn(&Array<T>) -> Array<O>,
) {
    set_backend(Backend::CPU);
    let cpu = f(&Array::new(data, dims)).to_vec();
    set_backend(Backend::CUDA);
    let gpu = f(&Array::new(data, dims)).to_vec();
    assert_eq!(cpu.len(), gpu.len(), "{what}: lengths differ");
    let tol = tolerance(O::get_af_dtype());
    for (i, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
        let (c, g) = (c.parts(), g.parts());
        assert!(
            (close(c.0, g.0, tol) && close(c.1, g.1, tol))
                || ((c.0 - g.0).abs() <= abs_tol && (c.1 - g.1).abs() <= abs_tol),
            "{what} on {}: element {i}: cpu {c:?} cuda {g:?} (input {:?})",
            T::get_af_dtype().name(),
            data[i % data.len()]
        );
    }
}

fn dims() -> Dim4 {
    dim4!(37, 5, 3)
}

/// Deterministic inputs in a range that suits every function (plus a few special values).
fn reals(n: usize) -> Vec<f64> {
    let mut x = 12345u64;
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 8.0 - 4.0
        })
        .collect();
    v[0] = 0.0;
    v[1] = 1.0;
    v[2] = -1.0;
    v[3] = 0.5;
    v
}

macro_rules! float_suite {
    ($name:ident, $t:ty) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            let n = dims().elements() as usize;
            let x: Vec<$t> = reals(n).iter().map(|&v| v as $t).collect();
            let y: Vec<$t> = reals(n).iter().rev().map(|&v| (v * 0.7 + 0.3) as $t).collect();
            let yy = y.clone();
            let by = move |a: &Array<$t>| Array::new(&yy, a.dims());
            check("abs", &x, dims(), |a| abs(a));
            check("arg", &x, dims(), |a| arg(a));
            check("sign", &x, dims(), |a| sign(a));
            check("round", &x, dims(), |a| round(a));
            check("trunc", &x, dims(), |a| trunc(a));
            check("floor", &x, dims(), |a| floor(a));
            check("ceil", &x, dims(), |a| ceil(a));
            check("sigmoid", &x, dims(), |a| sigmoid(a));
            check("expm1", &x, dims(), |a| expm1(a));
            check("erf", &x, dims(), |a| erf(a));
            check("erfc", &x, dims(), |a| erfc(a));
            check("log10", &x, dims(), |a| log10(&abs(a)));
            check("log1p", &x, dims(), |a| log1p(&abs(a)));
            check("log2", &x, dims(), |a| log2(&abs(a)));
            check("cbrt", &x, dims(), |a| cbrt(a));
            check("tgamma", &x, dims(), |a| tgamma(&(abs(a) + 0.25 as $t)));
            check("lgamma", &x, dims(), |a| lgamma(&(abs(a) + 0.25 as $t)));
            check("factorial", &x, dims(), |a| factorial(&abs(a)));
            check("sin", &x, dims(), |a| sin(a));
            check("cos", &x, dims(), |a| cos(a));
            check("tan", &x, dims(), |a| tan(a));
            check("asin", &x, dims(), |a| asin(&(a * 0.2 as $t)));
            check("acos", &x, dims(), |a| acos(&(a * 0.2 as $t)));
            check("atan", &x, dims(), |a| atan(a));
            check("sinh", &x, dims(), |a| sinh(a));
            check("cosh", &x, dims(), |a| cosh(a));
            check("tanh", &x, dims(), |a| tanh(a));
            check("asinh", &x, dims(), |a| asinh(a));
            check("acosh", &x, dims(), |a| acosh(&(abs(a) + 1.0 as $t)));
            check("atanh", &x, dims(), |a| atanh(&(a * 0.2 as $t)));
            check("exp", &x, dims(), |a| exp(a));
            check("log", &x, dims(), |a| log(&abs(a)));
            check("sqrt", &x, dims(), |a| sqrt(&abs(a)));
            check("rsqrt", &x, dims(), |a| rsqrt(&(abs(a) + 0.5 as $t)));
            check("pow2", &x, dims(), |a| pow2(a));
            check("neg", &x, dims(), |a| -a);
            check("iszero", &x, dims(), |a| iszero(a));
            check("isnan", &x, dims(), |a| isnan(&log(a)));
            check("isinf", &x, dims(), |a| isinf(&(a / 0.0 as $t)));
            check("add", &x, dims(), |a| a + &by(a));
            check("sub", &x, dims(), |a| a - &by(a));
            check("mul", &x, dims(), |a| a * &by(a));
            check("div", &x, dims(), |a| a / &by(a));
            check("rem", &x, dims(), |a| a % &by(a));
            check("modulo", &x, dims(), |a| modulo(a, &by(a), false));
            check("pow", &x, dims(), |a| pow(&abs(a), &by(a), false));
            check("root", &x, dims(), |a| root(&(3.0 as $t), &abs(a), false));
            check("atan2", &x, dims(), |a| atan2(a, &by(a), false));
            check("hypot", &x, dims(), |a| hypot(a, &by(a), false));
            check("minof", &x, dims(), |a| minof(a, &by(a), false));
            check("maxof", &x, dims(), |a| maxof(a, &by(a), false));
            check("lt", &x, dims(), |a| lt(a, &by(a), false));
            check("ge", &x, dims(), |a| ge(a, &by(a), false));
            check("eq", &x, dims(), |a| eq(a, &by(a), false));
            check("neq", &x, dims(), |a| neq(a, &by(a), false));
            check("and", &x, dims(), |a| and(a, &by(a), false));
            check("or", &x, dims(), |a| or(a, &by(a), false));
            check("clamp", &x, dims(), |a| clamp(a, &(-1.0 as $t), &(2.0 as $t), false));
            check("cplx2", &x, dims(), |a| cplx2(a, &by(a), false));
            check("select", &x, dims(), |a| select(a, &gt(a, &(0.0 as $t), false), &by(a)));
            check("broadcast row", &x, dims(), |a| {
                add(a, &Array::new(&[1.0 as $t, 2.0, 3.0, 4.0, 5.0], dim4!(1, 5)), true)
            });
            check("broadcast dim2", &x, dims(), |a| {
                mul(a, &Array::new(&[1.0 as $t, -2.0, 3.0], dim4!(1, 1, 3)), true)
            });
            check("range", &x, dims(), |a| a + &range::<$t>(a.dims(), 1));
            check("iota", &x, dims(), |a| a * &iota::<$t>(dim4!(37), dim4!(1, 5, 3)));
            check("identity", &x, dims(), |a| a + &identity::<$t>(a.dims()));
            check("lower", &x, dims(), |a| lower(a, true));
            check("chain", &x, dims(), |a| sin(a) * cos(&by(a)) + a * &by(a) - 0.5 as $t);
            check("cast u8", &x, dims(), |a| (a * 100.0 as $t).cast::<u8>());
            check("cast i16", &x, dims(), |a| (a * 1e4 as $t).cast::<i16>());
            check("cast i64", &x, dims(), |a| (a * 1e6 as $t).cast::<i64>());
            check("cast u64", &x, dims(), |a| (a * 1e6 as $t).cast::<u64>());
            check("cast f16", &x, dims(), |a| a.cast::<f16>());
            check("cast bool", &x, dims(), |a| a.cast::<bool>());
            check("cast c64", &x, dims(), |a| a.cast::<c64>());
            check("cast to int saturates", &x, dims(), |a| (a * 1e20 as $t).cast::<i32>());
        }
    };
}
float_suite!(parity_f32, f32);
float_suite!(parity_f64, f64);

#[test]
#[ignore = "needs a CUDA device"]
fn parity_f16() {
    let n = dims().elements() as usize;
    let x: Vec<f16> = reals(n).iter().map(|&v| f16::from_f64(v)).collect();
    let y: Vec<f16> = reals(n).iter().rev().map(|&v| f16::from_f64(v * 0.5 + 0.25)).collect();
    let by = |a: &Array<f16>| Array::new(&y, a.dims());
    check("f16 sin", &x, dims(), |a| sin(a));
    check("f16 exp", &x, dims(), |a| exp(a));
    check("f16 add", &x, dims(), |a| a + &by(a));
    check("f16 mul", &x, dims(), |a| a * &by(a));
    check("f16 div", &x, dims(), |a| a / &by(a));
    check("f16 lt", &x, dims(), |a| lt(a, &by(a), false));
    check("f16 to f32", &x, dims(), |a| a.cast::<f32>());
    check("f16 to i32", &x, dims(), |a| a.cast::<i32>());
    check("f16 chain", &x, dims(), |a| sqrt(&abs(a)) * &by(a) - &by(a));
}

/// Evaluates `f` on the CPU and on CUDA and requires the same bits: for bf16 results of
/// operations whose f32 result is exact or correctly rounded on both (+, -, *, casts), the one
/// rounding to bf16 must agree to the bit.
fn check_bits<T: HasAfEnum>(
    what: &str,
    data: &[T],
    dims: Dim4,
    f: impl Fn(&Array<T>) -> Array<bf16>,
) {
    set_backend(Backend::CPU);
    let cpu = f(&Array::new(data, dims)).to_vec();
    set_backend(Backend::CUDA);
    let gpu = f(&Array::new(data, dims)).to_vec();
    assert_eq!(cpu.len(), gpu.len(), "{what}: lengths differ");
    for (i, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
        let same = c.to_bits() == g.to_bits() || (c.is_nan() && g.is_nan());
        assert!(
            same,
            "{what}: element {i}: cpu {c:?} ({:#06x}) cuda {g:?} ({:#06x})",
            c.to_bits(),
            g.to_bits()
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn parity_bf16() {
    let n = dims().elements() as usize;
    let x: Vec<bf16> = reals(n).iter().map(|&v| bf16::from_f64(v)).collect();
    let y: Vec<bf16> = reals(n).iter().rev().map(|&v| bf16::from_f64(v * 0.5 + 0.25)).collect();
    let by = |a: &Array<bf16>| Array::new(&y, a.dims());
    check("bf16 sin", &x, dims(), |a| sin(a));
    check("bf16 exp", &x, dims(), |a| exp(a));
    check("bf16 div", &x, dims(), |a| a / &by(a));
    check("bf16 lt", &x, dims(), |a| lt(a, &by(a), false));
    check("bf16 to i32", &x, dims(), |a| (a * 100.0f32).cast::<i32>());
    check("bf16 sum", &x, dims(), |a| sum(a, 0));
    check("bf16 max", &x, dims(), |a| max(a, 1));
    check("bf16 cumsum", &x, dims(), |a| accum(a, 0));
    check("bf16 chain", &x, dims(), |a| sqrt(&abs(a)) * &by(a) - &by(a));
    check_bits("bf16 add", &x, dims(), |a| a + &by(a));
    check_bits("bf16 sub", &x, dims(), |a| a - &by(a));
    check_bits("bf16 mul", &x, dims(), |a| a * &by(a));
    check_bits("bf16 fused", &x, dims(), |a| (a * &by(a) + a) * &by(a));
    check_bits("bf16 mean", &x, dims(), |a| mean(a, 0));
    // casts into bf16 from values at and around ties, specials and huge integers
    let tie = 1.0 + 2f64.powi(-8);
    let f: Vec<f64> = vec![
        tie,
        tie + 2f64.powi(-40),
        1.0 + 3.0 * 2f64.powi(-8),
        -tie,
        1e300,
        -1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        1e-60,
        3.1e-39,
        6.5e37,
        -7.25e30,
    ];
    check_bits("f64 to bf16", &f, dim4!(f.len() as u64), |a| a.cast::<bf16>());
    let fs: Vec<f32> = f.iter().map(|&v| v as f32).collect();
    check_bits("f32 to bf16", &fs, dim4!(fs.len() as u64), |a| a.cast::<bf16>());
    let big_tie = (1i64 << 62) + (1i64 << 54);
    let i: Vec<i64> =
        vec![257, 259, -259, big_tie, big_tie + 1, -big_tie - 1, i64::MIN, i64::MAX, 0];
    check_bits("i64 to bf16", &i, dim4!(i.len() as u64), |a| a.cast::<bf16>());
    let u: Vec<u64> = vec![u64::MAX, (1u64 << 63) + (1u64 << 55) + 1, 255, 0];
    check_bits("u64 to bf16", &u, dim4!(u.len() as u64), |a| a.cast::<bf16>());
    let h: Vec<f16> =
        [0.1f64, 65504.0, -3.0e-5, 1.0 / 3.0].iter().map(|&v| f16::from_f64(v)).collect();
    check_bits("f16 to bf16", &h, dim4!(h.len() as u64), |a| a.cast::<bf16>());
    check_bits("c64 to bf16", &[c64::new(tie + 2f64.powi(-40), 3.0)], dim4!(1), |a| {
        a.cast::<bf16>()
    });
}

macro_rules! int_suite {
    ($name:ident, $t:ty) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            let n = dims().elements() as usize;
            let x: Vec<$t> = reals(n).iter().map(|&v| (v * 40.0) as i64 as $t).collect();
            let mut y: Vec<$t> = reals(n).iter().rev().map(|&v| (v * 3.0) as i64 as $t).collect();
            y[7] = 0 as $t;
            let by = |a: &Array<$t>| Array::new(&y, a.dims());
            check("add", &x, dims(), |a| a + &by(a));
            check("sub", &x, dims(), |a| a - &by(a));
            check("mul", &x, dims(), |a| a * &by(a));
            check("div", &x, dims(), |a| a / &by(a));
            check("rem", &x, dims(), |a| a % &by(a));
            check("modulo", &x, dims(), |a| modulo(a, &by(a), false));
            check("pow", &x, dims(), |a| pow(a, &by(a), false));
            check("minof", &x, dims(), |a| minof(a, &by(a), false));
            check("maxof", &x, dims(), |a| maxof(a, &by(a), false));
            check("bitand", &x, dims(), |a| bitand(a, &by(a), false));
            check("bitor", &x, dims(), |a| bitor(a, &by(a), false));
            check("bitxor", &x, dims(), |a| bitxor(a, &by(a), false));
            check("shiftl", &x, dims(), |a| shiftl(a, &by(a), false));
            check("shiftr", &x, dims(), |a| shiftr(a, &by(a), false));
            check("shift past width", &x, dims(), |a| shiftl(a, &(70 as $t), false));
            check("bitnot", &x, dims(), |a| bitnot(a));
            check("neg", &x, dims(), |a| -a);
            check("not", &x, dims(), |a| !a);
            check("lt", &x, dims(), |a| lt(a, &by(a), false));
            check("eq", &x, dims(), |a| eq(a, &by(a), false));
            check("abs", &x, dims(), |a| abs(a));
            check("sin", &x, dims(), |a| sin(a));
            check("sqrt", &x, dims(), |a| sqrt(a));
            check_within("atan2", &x, dims(), 1.0, |a| atan2(a, &by(a), false));
            check_within("hypot", &x, dims(), 1.0, |a| hypot(a, &by(a), false));
            check("arg", &x, dims(), |a| arg(a));
            check("cast f32", &x, dims(), |a| a.cast::<f32>());
            check("cast f16", &x, dims(), |a| a.cast::<f16>());
            check("cast u8", &x, dims(), |a| a.cast::<u8>());
            check("cast bool", &x, dims(), |a| a.cast::<bool>());
            check("cast c32", &x, dims(), |a| a.cast::<c32>());
            check("range", &x, dims(), |a| a + &range::<$t>(a.dims(), 2));
        }
    };
}
int_suite!(parity_u8, u8);
int_suite!(parity_i16, i16);
int_suite!(parity_u16, u16);
int_suite!(parity_i32, i32);
int_suite!(parity_u32, u32);
int_suite!(parity_i64, i64);
int_suite!(parity_u64, u64);

#[test]
#[ignore = "needs a CUDA device"]
fn parity_bool() {
    let n = dims().elements() as usize;
    let x: Vec<bool> = reals(n).iter().map(|&v| v > 0.0).collect();
    let y: Vec<bool> = reals(n).iter().rev().map(|&v| v > 1.0).collect();
    let by = |a: &Array<bool>| Array::new(&y, a.dims());
    check("bool add", &x, dims(), |a| a + &by(a));
    check("bool sub", &x, dims(), |a| a - &by(a));
    check("bool mul", &x, dims(), |a| a * &by(a));
    check("bool and", &x, dims(), |a| and(a, &by(a), false));
    check("bool or", &x, dims(), |a| or(a, &by(a), false));
    check("bool not", &x, dims(), |a| !a);
    check("bool xor", &x, dims(), |a| bitxor(a, &by(a), false));
    check("bool to f32", &x, dims(), |a| a.cast::<f32>());
    check("bool select", &x, dims(), |a| select(&a.cast::<i32>(), a, &constant(7i32, a.dims())));
}

/// Bool arrays holding bytes other than 0 and 1 (the neighbour counts of a convolution, as in
/// arrayfire-rust's `conway` example): every operation reads or tests the byte as the CPU does.
#[test]
#[ignore = "needs a CUDA device"]
fn parity_bool_bytes() {
    let n = dims().elements() as usize;
    let x: Vec<bool> = reals(n).iter().map(|&v| v > 0.0).collect();
    let y: Vec<bool> = reals(n).iter().rev().map(|&v| v > 1.0).collect();
    let ring = || Array::new(&[1.0f32, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0], dim4!(3, 3));
    let counts = |a: &Array<bool>| convolve2(a, &ring(), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let by = |a: &Array<bool>| Array::new(&y, a.dims());
    check("counts", &x, dims(), |a| counts(a).cast::<u8>());
    check("counts in frequency", &x, dims(), |a| {
        convolve2(a, &ring(), ConvMode::DEFAULT, ConvDomain::FREQUENCY).cast::<u8>()
    });
    check("counts to f32", &x, dims(), |a| counts(a).cast::<f32>());
    check("counts to bool", &x, dims(), |a| counts(a));
    check("counts eq 3", &x, dims(), |a| eq(&counts(a), &constant(3.0f32, dim4!(1)), false));
    check("counts add", &x, dims(), |a| (&counts(a) + &counts(a)).cast::<u8>());
    check("counts mul", &x, dims(), |a| (&counts(a) * &by(a)).cast::<u8>());
    check("counts sub", &x, dims(), |a| (&counts(a) - &by(a)).cast::<u8>());
    check("counts lt", &x, dims(), |a| lt(&counts(a), &by(a), false).cast::<u8>());
    check("counts and", &x, dims(), |a| and(&counts(a), &by(a), false).cast::<u8>());
    check("counts or", &x, dims(), |a| or(&counts(a), &by(a), false).cast::<u8>());
    check("counts not", &x, dims(), |a| (!&counts(a)).cast::<u8>());
    check("counts select", &x, dims(), |a| {
        select(&a.cast::<i32>(), &counts(a), &constant(7i32, a.dims()))
    });
    check("counts sum", &x, dims(), |a| sum(&counts(a), 0));
    check("counts count", &x, dims(), |a| count(&counts(a), 0));
    check("counts max", &x, dims(), |a| max(&counts(a), 0).cast::<u8>());
    check("counts any", &x, dims(), |a| any_true(&counts(a), 1).cast::<u8>());
    check("counts all", &x, dims(), |a| all_true(&counts(a), 1).cast::<u8>());
    check("counts accum", &x, dims(), |a| accum(&counts(a), 0));
    check("counts sort", &x, dims(), |a| sort(&counts(a), 0, true).cast::<u8>());
    check("conway step", &x, dims(), |a| {
        let c = counts(a);
        let c0 = eq(&c, &constant(2.0f32, dim4!(1)), false);
        let c1 = eq(&c, &constant(3.0f32, dim4!(1)), false);
        (a.clone() * &c0 + &c1).cast::<u8>()
    });
}

macro_rules! complex_suite {
    ($name:ident, $t:ident, $r:ty) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            let n = dims().elements() as usize;
            let re = reals(n);
            let x: Vec<$t> = re
                .iter()
                .zip(re.iter().rev())
                .map(|(&a, &b)| $t::new(a as $r, (b * 0.5) as $r))
                .collect();
            let y: Vec<$t> = re
                .iter()
                .rev()
                .zip(re.iter())
                .map(|(&a, &b)| $t::new((a * 0.3 + 0.1) as $r, b as $r))
                .collect();
            let by = |a: &Array<$t>| Array::new(&y, a.dims());
            for (name, f) in [
                ("sin", sin::<$t> as fn(&Array<$t>) -> Array<$t>),
                ("cos", cos::<$t>),
                ("tan", tan::<$t>),
                ("sinh", sinh::<$t>),
                ("cosh", cosh::<$t>),
                ("tanh", tanh::<$t>),
                ("asin", asin::<$t>),
                ("acos", acos::<$t>),
                ("atan", atan::<$t>),
                ("asinh", asinh::<$t>),
                ("acosh", acosh::<$t>),
                ("atanh", atanh::<$t>),
                ("exp", exp::<$t>),
                ("log", log::<$t>),
                ("sqrt", sqrt::<$t>),
                ("rsqrt", rsqrt::<$t>),
                ("pow2", pow2::<$t>),
            ] {
                check(name, &x, dims(), f);
            }
            check("abs", &x, dims(), |a| abs(a));
            check("arg", &x, dims(), |a| arg(a));
            check("real", &x, dims(), |a| real(a));
            check("imag", &x, dims(), |a| imag(a));
            check("conjg", &x, dims(), |a| conjg(a));
            check("add", &x, dims(), |a| a + &by(a));
            check("sub", &x, dims(), |a| a - &by(a));
            check("mul", &x, dims(), |a| a * &by(a));
            check("div", &x, dims(), |a| a / &by(a));
            check("pow", &x, dims(), |a| pow(a, &by(a), false));
            check("minof", &x, dims(), |a| minof(a, &by(a), false));
            check("lt", &x, dims(), |a| lt(a, &by(a), false));
            check("eq", &x, dims(), |a| eq(a, &by(a), false));
            check("to real", &x, dims(), |a| a.cast::<$r>());
            check("to i32", &x, dims(), |a| a.cast::<i32>());
        }
    };
}
complex_suite!(parity_c32, c32, f32);
complex_suite!(parity_c64, c64, f64);

#[test]
#[ignore = "needs a CUDA device"]
fn large_and_vectorised() {
    // sizes around the vector width and the grid size, odd tails included
    for n in [1usize, 3, 4, 5, 1023, 4096 + 3, 1 << 20, (1 << 20) + 7] {
        let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01).collect();
        check("axpy", &x, dim4!(n), |a| a * 2.5f32 + a);
        let b: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        check("u8 add", &b, dim4!(n), |a| a + 3u8);
        let d: Vec<f64> = (0..n).map(|i| i as f64).collect();
        check("f64 to f32", &d, dim4!(n), |a| a.cast::<f32>() * 0.5f32);
    }
    check("empty", &[] as &[f32], dim4!(0, 3), |a| a + 1.0f32);
}
