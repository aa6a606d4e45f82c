//! Element-wise kernels of the CPU backend over typed slices, one implementation per family of
//! element types (real floats, complex, integers, bool, f16). The semantics written here are the
//! reference the CUDA code generator follows; `docs/src/lazy-evaluation.md` lists the rules for
//! integer division by zero and out-of-range shifts.

use crate::dtype::{c32, c64};
use crate::jit::{BinOp, UnOp};
use crate::storage::{bool_bytes, u8_to_bool_bytes, BoolByte, Element, HostVec};
use half::{bf16, f16};

use super::vmath;

/// An operand: a run of elements, or one value standing for all of them.
#[derive(Clone, Copy)]
pub(crate) enum Src<'a, T> {
    Slice(&'a [T]),
    Splat(T),
}

impl<T: Copy> Src<'_, T> {
    /// The elements as a vector of `n` (materialising a splat).
    fn to_vec(self, n: usize) -> Vec<T> {
        match self {
            Src::Slice(s) => s.to_vec(),
            Src::Splat(v) => vec![v; n],
        }
    }
}

#[inline(always)]
fn map<T: Copy, U>(a: &[T], f: impl Fn(T) -> U) -> Vec<U> {
    a.iter().map(|&x| f(x)).collect()
}

/// Applies `f` pairwise; a splat operand is repeated. At least one operand is a slice unless
/// both are splats, in which case one element is produced.
#[inline(always)]
fn zip<T: Copy, U>(a: Src<T>, b: Src<T>, f: impl Fn(T, T) -> U) -> Vec<U> {
    match (a, b) {
        (Src::Slice(x), Src::Slice(y)) => x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect(),
        (Src::Slice(x), Src::Splat(q)) => x.iter().map(|&p| f(p, q)).collect(),
        (Src::Splat(p), Src::Slice(y)) => y.iter().map(|&q| f(p, q)).collect(),
        (Src::Splat(p), Src::Splat(q)) => vec![f(p, q)],
    }
}

/// Per-type element-wise arithmetic.
pub(crate) trait CpuMath: Element {
    fn unary(op: UnOp, a: &[Self]) -> HostVec;
    fn binary(op: BinOp, a: Src<Self>, b: Src<Self>) -> HostVec;
}

fn unsupported(what: &str, op: impl std::fmt::Debug, t: &str) -> ! {
    panic!("internal error: {what} {op:?} reached the CPU kernels for type {t}")
}

/// acosh(x) = ln(x + sqrt(x² - 1)), written as log1p(t + sqrt(2t + t²)) with t = x - 1 below
/// 2: the library form loses most digits to rounding next to 1. f32 calls this too and rounds
/// the f64 result once.
fn acosh_f64(x: f64) -> f64 {
    if x < 1.0 {
        return f64::NAN;
    }
    let t = x - 1.0;
    if t < 1.0 {
        (t + (2.0 * t + t * t).sqrt()).ln_1p()
    } else {
        x.acosh()
    }
}

/// atanh(x) = sign(x) · log1p(2|x| / (1 - |x|)) / 2: working on |x| keeps the argument of
/// log1p away from -1, where the library form loses digits for x next to -1.
fn atanh_f64(x: f64) -> f64 {
    let a = x.abs();
    (0.5 * (2.0 * a / (1.0 - a)).ln_1p()).copysign(x)
}

macro_rules! real_float {
    ($t:ident, $var:ident, $cx:ident, $sin:path, $cos:path, $exp:path, $log:path, $tanh:path,
     $sigmoid:path) => {
        impl CpuMath for $t {
            fn unary(op: UnOp, a: &[$t]) -> HostVec {
                use UnOp::*;
                let fast = |f: fn(&[$t], &mut [$t])| {
                    let mut out = vec![0.0 as $t; a.len()];
                    f(a, &mut out);
                    HostVec::$var(out)
                };
                match op {
                    Neg => HostVec::$var(map(a, |x| -x)),
                    Not | IsZero => bools(map(a, |x| x == 0.0)),
                    IsInf => bools(map(a, |x| x.is_infinite())),
                    IsNan => bools(map(a, |x| x.is_nan())),
                    Abs => HostVec::$var(map(a, |x| x.abs())),
                    Arg => HostVec::$var(map(a, |x| {
                        if x.is_nan() {
                            x
                        } else if x < 0.0 {
                            std::$t::consts::PI
                        } else {
                            0.0
                        }
                    })),
                    Sign => HostVec::$var(map(a, |x| if x < 0.0 { 1.0 } else { 0.0 })),
                    Round => HostVec::$var(map(a, |x| x.round())),
                    Trunc => HostVec::$var(map(a, |x| x.trunc())),
                    Floor => HostVec::$var(map(a, |x| x.floor())),
                    Ceil => HostVec::$var(map(a, |x| x.ceil())),
                    Sigmoid => fast($sigmoid),
                    Expm1 => HostVec::$var(map(a, |x| x.exp_m1())),
                    Erf => HostVec::$var(map(a, |x| libm::erf(x as f64) as $t)),
                    Erfc => HostVec::$var(map(a, |x| libm::erfc(x as f64) as $t)),
                    Log10 => HostVec::$var(map(a, |x| x.log10())),
                    Log1p => HostVec::$var(map(a, |x| x.ln_1p())),
                    Log2 => HostVec::$var(map(a, |x| x.log2())),
                    Cbrt => HostVec::$var(map(a, |x| x.cbrt())),
                    Tgamma => HostVec::$var(map(a, |x| libm::tgamma(x as f64) as $t)),
                    Lgamma => HostVec::$var(map(a, |x| libm::lgamma(x as f64) as $t)),
                    Factorial => HostVec::$var(map(a, |x| libm::tgamma(x as f64 + 1.0) as $t)),
                    Sin => fast($sin),
                    Cos => fast($cos),
                    Tan => HostVec::$var(map(a, |x| x.tan())),
                    Asin => HostVec::$var(map(a, |x| x.asin())),
                    Acos => HostVec::$var(map(a, |x| x.acos())),
                    Atan => HostVec::$var(map(a, |x| x.atan())),
                    Sinh => HostVec::$var(map(a, |x| x.sinh())),
                    Cosh => HostVec::$var(map(a, |x| x.cosh())),
                    Tanh => fast($tanh),
                    Asinh => HostVec::$var(map(a, |x| x.asinh())),
                    Acosh => HostVec::$var(map(a, |x| acosh_f64(x as f64) as $t)),
                    Atanh => HostVec::$var(map(a, |x| atanh_f64(x as f64) as $t)),
                    Exp => fast($exp),
                    Log => fast($log),
                    Sqrt => HostVec::$var(map(a, |x| x.sqrt())),
                    Rsqrt => HostVec::$var(map(a, |x| 1.0 / x.sqrt())),
                    Pow2 => HostVec::$var(map(a, |x| x.exp2())),
                    Real => HostVec::$var(map(a, |x| x)),
                    Imag => HostVec::$var(map(a, |_| 0.0)),
                    Conjg | BitNot => unsupported("unary", op, stringify!($t)),
                }
            }

            fn binary(op: BinOp, a: Src<$t>, b: Src<$t>) -> HostVec {
                use BinOp::*;
                match op {
                    Add => HostVec::$var(zip(a, b, |x, y| x + y)),
                    Sub => HostVec::$var(zip(a, b, |x, y| x - y)),
                    Mul => HostVec::$var(zip(a, b, |x, y| x * y)),
                    Div => HostVec::$var(zip(a, b, |x, y| x / y)),
                    Rem => HostVec::$var(zip(a, b, |x, y| x % y)),
                    Mod => HostVec::$var(zip(a, b, |x, y| {
                        let r = x % y;
                        if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                            r + y
                        } else {
                            r
                        }
                    })),
                    Pow => HostVec::$var(zip(a, b, |x, y| x.powf(y))),
                    Root => HostVec::$var(zip(a, b, |n, v| v.powf(1.0 / n))),
                    Atan2 => HostVec::$var(zip(a, b, |y, x| y.atan2(x))),
                    Hypot => HostVec::$var(zip(a, b, |x, y| x.hypot(y))),
                    Min => HostVec::$var(zip(a, b, |x, y| x.min(y))),
                    Max => HostVec::$var(zip(a, b, |x, y| x.max(y))),
                    Cplx2 => HostVec::$cx(zip(a, b, |x, y| num_complex::Complex::new(x, y))),
                    Lt => bools(zip(a, b, |x, y| x < y)),
                    Gt => bools(zip(a, b, |x, y| x > y)),
                    Le => bools(zip(a, b, |x, y| x <= y)),
                    Ge => bools(zip(a, b, |x, y| x >= y)),
                    Eq => bools(zip(a, b, |x, y| x == y)),
                    Neq => bools(zip(a, b, |x, y| x != y)),
                    And => bools(zip(a, b, |x, y| x != 0.0 && y != 0.0)),
                    Or => bools(zip(a, b, |x, y| x != 0.0 || y != 0.0)),
                    BitAnd | BitOr | BitXor | Shl | Shr => {
                        unsupported("binary", op, stringify!($t))
                    }
                }
            }
        }
    };
}

real_float!(
    f32,
    F32,
    C32,
    vmath::sin_f32,
    vmath::cos_f32,
    vmath::exp_f32,
    vmath::log_f32,
    vmath::tanh_f32,
    vmath::sigmoid_f32
);
real_float!(
    f64,
    F64,
    C64,
    vmath::sin_f64,
    vmath::cos_f64,
    vmath::exp_f64,
    vmath::log_f64,
    vmath::tanh_f64,
    vmath::sigmoid_f64
);

/// Complex transcendental functions, evaluated in c64 (c32 results are rounded once, so they
/// are accurate to about an ulp of `|z|` instead of losing digits to the cancellations that
/// the textbook formulas suffer in single precision).
mod cmath {
    use crate::dtype::c64;

    /// `a / b` with both scaled by the larger part of `b`, so that `|b|²` neither overflows nor
    /// underflows.
    pub(super) fn div(a: c64, b: c64) -> c64 {
        let s = b.re.abs().max(b.im.abs());
        if s == 0.0 || !s.is_finite() {
            return a / b;
        }
        let (a, b) = (a / s, b / s);
        let d = b.re * b.re + b.im * b.im;
        c64::new((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d)
    }

    /// tan(a + ib) = (sin 2a + i sinh 2b) / (2 (cos² a + sinh² b)): the denominator is a sum
    /// of squares, so it does not cancel near the poles as `cos 2a + cosh 2b` does.
    pub(super) fn tan(z: c64) -> c64 {
        let (a, b) = (z.re, z.im);
        if b.abs() > 20.0 {
            // cosh 2b dominates: tan = 2 sin 2a e^(-2|b|) + i sign(b), to double precision.
            return c64::new(2.0 * (2.0 * a).sin() * (-2.0 * b.abs()).exp(), 1f64.copysign(b));
        }
        let (c, sh) = (a.cos(), b.sinh());
        let d = 2.0 * (c * c + sh * sh);
        c64::new((2.0 * a).sin() / d, (2.0 * b).sinh() / d)
    }

    /// tanh(z) = -i tan(iz).
    pub(super) fn tanh(z: c64) -> c64 {
        let t = tan(c64::new(-z.im, z.re));
        c64::new(t.im, -t.re)
    }

    /// 2^z = e^(z ln 2).
    pub(super) fn pow2(z: c64) -> c64 {
        (z * std::f64::consts::LN_2).exp()
    }
}

/// Comparisons and min/max of complex numbers order them by `|z|`, as ArrayFire does.
macro_rules! complex {
    ($t:ident, $var:ident, $re:ident, $revar:ident) => {
        impl CpuMath for $t {
            fn unary(op: UnOp, a: &[$t]) -> HostVec {
                use UnOp::*;
                // Evaluated in c64 and rounded once.
                let w = |f: fn(c64) -> c64| {
                    HostVec::$var(map(a, |z| {
                        let v = f(c64::new(z.re as f64, z.im as f64));
                        $t::new(v.re as $re, v.im as $re)
                    }))
                };
                match op {
                    Neg => HostVec::$var(map(a, |z| -z)),
                    Not | IsZero => bools(map(a, |z| z.re == 0.0 && z.im == 0.0)),
                    IsInf => bools(map(a, |z| z.re.is_infinite() || z.im.is_infinite())),
                    IsNan => bools(map(a, |z| z.re.is_nan() || z.im.is_nan())),
                    Abs => HostVec::$revar(map(a, |z| z.re.hypot(z.im))),
                    Arg => HostVec::$revar(map(a, |z| z.im.atan2(z.re))),
                    Real => HostVec::$revar(map(a, |z| z.re)),
                    Imag => HostVec::$revar(map(a, |z| z.im)),
                    Conjg => HostVec::$var(map(a, |z| z.conj())),
                    Sin => w(|z| z.sin()),
                    Cos => w(|z| z.cos()),
                    Tan => w(cmath::tan),
                    Asin => w(|z| z.asin()),
                    Acos => w(|z| z.acos()),
                    Atan => w(|z| z.atan()),
                    Sinh => w(|z| z.sinh()),
                    Cosh => w(|z| z.cosh()),
                    Tanh => w(cmath::tanh),
                    Asinh => w(|z| z.asinh()),
                    Acosh => w(|z| z.acosh()),
                    Atanh => w(|z| z.atanh()),
                    Exp => w(|z| z.exp()),
                    Log => w(|z| z.ln()),
                    Log10 => w(|z| z.ln() / std::f64::consts::LN_10),
                    Log2 => w(|z| z.ln() / std::f64::consts::LN_2),
                    Sqrt => w(|z| z.sqrt()),
                    Rsqrt => w(|z| cmath::div(c64::new(1.0, 0.0), z.sqrt())),
                    Pow2 => w(cmath::pow2),
                    _ => unsupported("unary", op, stringify!($t)),
                }
            }

            fn binary(op: BinOp, a: Src<$t>, b: Src<$t>) -> HostVec {
                use BinOp::*;
                let nz = |z: $t| z.re != 0.0 || z.im != 0.0;
                // Evaluated in c64 and rounded once.
                let w = |f: fn(c64, c64) -> c64| {
                    HostVec::$var(zip(a, b, |x, y| {
                        let v = f(
                            c64::new(x.re as f64, x.im as f64),
                            c64::new(y.re as f64, y.im as f64),
                        );
                        $t::new(v.re as $re, v.im as $re)
                    }))
                };
                match op {
                    Add => HostVec::$var(zip(a, b, |x, y| x + y)),
                    Sub => HostVec::$var(zip(a, b, |x, y| x - y)),
                    Mul => HostVec::$var(zip(a, b, |x, y| x * y)),
                    Div => w(cmath::div),
                    Pow => w(|x, y| x.powc(y)),
                    Min => {
                        HostVec::$var(zip(
                            a,
                            b,
                            |x, y| if y.norm_sqr() < x.norm_sqr() { y } else { x },
                        ))
                    }
                    Max => {
                        HostVec::$var(zip(
                            a,
                            b,
                            |x, y| if y.norm_sqr() > x.norm_sqr() { y } else { x },
                        ))
                    }
                    Lt => bools(zip(a, b, |x, y| x.norm_sqr() < y.norm_sqr())),
                    Gt => bools(zip(a, b, |x, y| x.norm_sqr() > y.norm_sqr())),
                    Le => bools(zip(a, b, |x, y| x.norm_sqr() <= y.norm_sqr())),
                    Ge => bools(zip(a, b, |x, y| x.norm_sqr() >= y.norm_sqr())),
                    Eq => bools(zip(a, b, |x, y| x == y)),
                    Neq => bools(zip(a, b, |x, y| x != y)),
                    And => bools(zip(a, b, |x, y| nz(x) && nz(y))),
                    Or => bools(zip(a, b, |x, y| nz(x) || nz(y))),
                    _ => unsupported("binary", op, stringify!($t)),
                }
            }
        }
    };
}

complex!(c32, C32, f32, F32);
complex!(c64, C64, f64, F64);

/// `base^e` by squaring with wrapping multiplication, over every bit of the exponent.
fn wrapping_pow<T: Copy + num_traits::WrappingMul + num_traits::One>(mut base: T, mut e: u64) -> T {
    let mut acc = T::one();
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(&base);
        }
        e >>= 1;
        if e > 0 {
            base = base.wrapping_mul(&base);
        }
    }
    acc
}

/// Integer power with wrapping; negative exponents give the truncated reciprocal (0 unless the
/// base is 1 or -1).
macro_rules! int_pow {
    ($t:ty, signed) => {
        |x: $t, y: $t| -> $t {
            if y < 0 {
                return match x {
                    1 => 1,
                    -1 => {
                        if y % 2 == 0 {
                            1
                        } else {
                            -1
                        }
                    }
                    _ => 0,
                };
            }
            wrapping_pow(x, y as u64)
        }
    };
    ($t:ty, unsigned) => {
        |x: $t, y: $t| -> $t { wrapping_pow(x, y as u64) }
    };
}

macro_rules! integer {
    ($t:ident, $var:ident, $sign:ident) => {
        impl CpuMath for $t {
            fn unary(op: UnOp, a: &[$t]) -> HostVec {
                use UnOp::*;
                match op {
                    Neg => HostVec::$var(map(a, |x| x.wrapping_neg())),
                    BitNot => HostVec::$var(map(a, |x| !x)),
                    Not | IsZero => bools(map(a, |x| x == 0)),
                    IsInf | IsNan => bools(vec![false; a.len()]),
                    _ => unsupported("unary", op, stringify!($t)),
                }
            }

            fn binary(op: BinOp, a: Src<$t>, b: Src<$t>) -> HostVec {
                use BinOp::*;
                const BITS: $t = <$t>::BITS as $t;
                // computed in f64 and rounded to the nearest integer: truncating would turn
                // results that are integers in exact arithmetic (root(3, 27), hypot(3, 4))
                // into the integer below whenever the f64 result lands a hair under it
                let via_f64 = |f: fn(f64, f64) -> f64| {
                    HostVec::$var(zip(a, b, move |x, y| f(x as f64, y as f64).round() as $t))
                };
                match op {
                    Add => HostVec::$var(zip(a, b, |x, y| x.wrapping_add(y))),
                    Sub => HostVec::$var(zip(a, b, |x, y| x.wrapping_sub(y))),
                    Mul => HostVec::$var(zip(a, b, |x, y| x.wrapping_mul(y))),
                    Div => {
                        HostVec::$var(zip(a, b, |x, y| if y == 0 { 0 } else { x.wrapping_div(y) }))
                    }
                    Rem => {
                        HostVec::$var(zip(a, b, |x, y| if y == 0 { 0 } else { x.wrapping_rem(y) }))
                    }
                    #[allow(unused_comparisons)]
                    Mod => HostVec::$var(zip(a, b, |x, y| {
                        if y == 0 {
                            return 0;
                        }
                        let r = x.wrapping_rem(y);
                        if r != 0 && ((r < 0) != (y < 0)) {
                            r.wrapping_add(y)
                        } else {
                            r
                        }
                    })),
                    Pow => HostVec::$var(zip(a, b, int_pow!($t, $sign))),
                    Root => via_f64(|n, v| v.powf(1.0 / n)),
                    Atan2 => via_f64(f64::atan2),
                    Hypot => via_f64(f64::hypot),
                    Min => HostVec::$var(zip(a, b, |x, y| x.min(y))),
                    Max => HostVec::$var(zip(a, b, |x, y| x.max(y))),
                    BitAnd => HostVec::$var(zip(a, b, |x, y| x & y)),
                    BitOr => HostVec::$var(zip(a, b, |x, y| x | y)),
                    BitXor => HostVec::$var(zip(a, b, |x, y| x ^ y)),
                    Shl => {
                        HostVec::$var(zip(
                            a,
                            b,
                            |x, y| if !(0..BITS).contains(&y) { 0 } else { x << y },
                        ))
                    }
                    #[allow(unused_comparisons)]
                    Shr => HostVec::$var(zip(a, b, |x, y| {
                        if !(0..BITS).contains(&y) {
                            if x < 0 {
                                !0
                            } else {
                                0
                            }
                        } else {
                            x >> y
                        }
                    })),
                    Lt => bools(zip(a, b, |x, y| x < y)),
                    Gt => bools(zip(a, b, |x, y| x > y)),
                    Le => bools(zip(a, b, |x, y| x <= y)),
                    Ge => bools(zip(a, b, |x, y| x >= y)),
                    Eq => bools(zip(a, b, |x, y| x == y)),
                    Neq => bools(zip(a, b, |x, y| x != y)),
                    And => bools(zip(a, b, |x, y| x != 0 && y != 0)),
                    Or => bools(zip(a, b, |x, y| x != 0 || y != 0)),
                    Cplx2 => unsupported("binary", op, stringify!($t)),
                }
            }
        }
    };
}

integer!(u8, U8, unsigned);
integer!(u16, U16, unsigned);
integer!(u32, U32, unsigned);
integer!(u64, U64, unsigned);
integer!(i16, S16, signed);
integer!(i32, S32, signed);
integer!(i64, S64, signed);

/// Converts the result of an operation computed in a wider type back to `B8`/`F16`/`BF16` where the
/// operation's result type is the narrow type (comparisons already give `B8`).
fn narrow(v: HostVec, to: crate::dtype::DType) -> HostVec {
    if v.dtype() == crate::dtype::DType::B8 || v.dtype().is_complex() {
        v
    } else {
        v.cast(to)
    }
}

fn widen<T: Element, W: Element>(s: Src<T>) -> (Vec<W>, bool) {
    match s {
        Src::Slice(x) => (crate::storage::cast_slice(x), false),
        Src::Splat(v) => (vec![crate::storage::convert(v)], true),
    }
}

fn src_of<W>((v, splat): &(Vec<W>, bool)) -> Src<'_, W>
where
    W: Copy,
{
    if *splat {
        Src::Splat(v[0])
    } else {
        Src::Slice(v)
    }
}

/// Boolean results (0/1) as a `B8` vector, without a copy.
#[inline(always)]
fn bools(v: Vec<bool>) -> HostVec {
    bool::wrap(v)
}

// bool arithmetic is the u8 operation on the stored bytes, as ArrayFire computes its `b8` in
// `char`: the result keeps its byte (true + true is 2, which is true), comparisons compare the
// bytes, and logical operations test "not zero". The complement is logical not (a bitwise
// complement of 1 is never zero); negation leaves the byte as it is.
impl CpuMath for BoolByte {
    fn unary(op: UnOp, a: &[BoolByte]) -> HostVec {
        match op {
            UnOp::BitNot | UnOp::Not | UnOp::IsZero => bools(map(a, |x| x.0 == 0)),
            UnOp::IsInf | UnOp::IsNan => bools(vec![false; a.len()]),
            UnOp::Neg => HostVec::B8(a.to_vec()),
            _ => unsupported("unary", op, "bool"),
        }
    }
    fn binary(op: BinOp, a: Src<BoolByte>, b: Src<BoolByte>) -> HostVec {
        fn bytes(s: Src<'_, BoolByte>) -> Src<'_, u8> {
            match s {
                Src::Slice(x) => Src::Slice(bool_bytes(x)),
                Src::Splat(v) => Src::Splat(v.0),
            }
        }
        match u8::binary(op, bytes(a), bytes(b)) {
            HostVec::U8(v) => HostVec::B8(u8_to_bool_bytes(v)),
            other => other,
        }
    }
}

impl CpuMath for f16 {
    fn unary(op: UnOp, a: &[f16]) -> HostVec {
        narrow(f32::unary(op, &crate::storage::cast_slice::<f16, f32>(a)), crate::dtype::DType::F16)
    }
    fn binary(op: BinOp, a: Src<f16>, b: Src<f16>) -> HostVec {
        let (wa, wb) = (widen::<f16, f32>(a), widen::<f16, f32>(b));
        narrow(f32::binary(op, src_of(&wa), src_of(&wb)), crate::dtype::DType::F16)
    }
}

// bf16 as f16: computed in f32 and rounded once per operation (to nearest even, by the same
// function as casts), which is what the CUDA kernels do, so both backends give the same bits.
impl CpuMath for bf16 {
    fn unary(op: UnOp, a: &[bf16]) -> HostVec {
        narrow(
            f32::unary(op, &crate::storage::cast_slice::<bf16, f32>(a)),
            crate::dtype::DType::BF16,
        )
    }
    fn binary(op: BinOp, a: Src<bf16>, b: Src<bf16>) -> HostVec {
        let (wa, wb) = (widen::<bf16, f32>(a), widen::<bf16, f32>(b));
        narrow(f32::binary(op, src_of(&wa), src_of(&wb)), crate::dtype::DType::BF16)
    }
}

/// `cond ? a : b` element by element; a condition byte that is not zero is true.
pub(crate) fn select<T: Copy>(cond: Src<BoolByte>, a: Src<T>, b: Src<T>, n: usize) -> Vec<T> {
    match (cond, a, b) {
        (Src::Splat(c), a, b) => {
            if c.get() {
                a.to_vec(n)
            } else {
                b.to_vec(n)
            }
        }
        (Src::Slice(c), Src::Slice(x), Src::Slice(y)) => {
            c.iter().zip(x).zip(y).map(|((&c, &x), &y)| if c.get() { x } else { y }).collect()
        }
        (Src::Slice(c), Src::Slice(x), Src::Splat(y)) => {
            c.iter().zip(x).map(|(&c, &x)| if c.get() { x } else { y }).collect()
        }
        (Src::Slice(c), Src::Splat(x), Src::Slice(y)) => {
            c.iter().zip(y).map(|(&c, &y)| if c.get() { x } else { y }).collect()
        }
        (Src::Slice(c), Src::Splat(x), Src::Splat(y)) => {
            c.iter().map(|&c| if c.get() { x } else { y }).collect()
        }
    }
}
