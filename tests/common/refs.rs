//! Host references for emberfire's element-wise operations, written from the semantics that
//! src/ops/arith.rs documents. A binary reference receives both operands already converted to
//! the type the operation computes in (`t`) and returns the exact result; the comparison
//! converts it to the output type (wrapping integers, rounding floats).

use super::{Class, Elem, Ty, V};
use emberfire::{bf16, c32, c64, f16, DType};
use std::f64::consts::{FRAC_PI_2, LN_2, PI};

/// u8, the type bool arithmetic computes in.
pub const U8: Ty = <u8 as Elem>::TY;

/// `v` converted to element type `dt` with the documented cast rules, as an exact value.
pub fn conv(v: V, dt: DType) -> V {
    match dt {
        DType::F32 => f32::from_v(v).to_v(),
        DType::C32 => c32::from_v(v).to_v(),
        DType::F64 => f64::from_v(v).to_v(),
        DType::C64 => c64::from_v(v).to_v(),
        DType::B8 => bool::from_v(v).to_v(),
        DType::S32 => i32::from_v(v).to_v(),
        DType::U32 => u32::from_v(v).to_v(),
        DType::U8 => u8::from_v(v).to_v(),
        DType::S64 => i64::from_v(v).to_v(),
        DType::U64 => u64::from_v(v).to_v(),
        DType::S16 => i16::from_v(v).to_v(),
        DType::U16 => u16::from_v(v).to_v(),
        DType::F16 => f16::from_v(v).to_v(),
        DType::BF16 => bf16::from_v(v).to_v(),
    }
}

/// Type of a binary reference.
pub type Bin = fn(V, V, Ty) -> V;

/// bool arithmetic: on 0/1 as u8, the result read back as "not zero".
fn via_u8(a: V, b: V, f: Bin) -> V {
    match f(V::I(a.i()), V::I(b.i()), U8) {
        V::B(x) => V::B(x),
        // root, atan2 and hypot: the float result rounded to the nearest integer
        V::F(x) => V::B(u8::from_v(V::F(x.round())) != 0),
        v => V::B(u8::from_v(v) != 0),
    }
}

macro_rules! by_class {
    ($name:ident, |$a:ident, $b:ident, $t:ident| int: $int:expr, float: $float:expr, complex: $cx:expr) => {
        pub fn $name($a: V, $b: V, $t: Ty) -> V {
            let _ = $t;
            match $t.class {
                Class::Bool => via_u8($a, $b, $name),
                Class::Int => $int,
                Class::Float => $float,
                Class::Complex => $cx,
            }
        }
    };
}

fn no_complex(op: &str) -> V {
    panic!("test bug: {op} has no complex reference")
}

by_class!(add, |a, b, t| int: V::I(a.i().wrapping_add(b.i())),
    float: V::F(a.f() + b.f()), complex: V::C(a.c() + b.c()));
by_class!(sub, |a, b, t| int: V::I(a.i().wrapping_sub(b.i())),
    float: V::F(a.f() - b.f()), complex: V::C(a.c() - b.c()));
by_class!(mul, |a, b, t| int: V::I(a.i().wrapping_mul(b.i())),
    float: V::F(a.f() * b.f()), complex: V::C(a.c() * b.c()));
by_class!(div, |a, b, t| int: V::I(if b.i() == 0 { 0 } else { a.i() / b.i() }),
    float: V::F(a.f() / b.f()), complex: V::C(cdiv(a.c(), b.c())));
by_class!(rem, |a, b, t| int: V::I(if b.i() == 0 { 0 } else { a.i() % b.i() }),
    float: V::F(a.f() % b.f()), complex: no_complex("rem"));
by_class!(modulo, |a, b, t| int: {
        let (x, y) = (a.i(), b.i());
        if y == 0 {
            V::I(0)
        } else {
            let r = x % y;
            V::I(if r != 0 && (r < 0) != (y < 0) { r + y } else { r })
        }
    },
    float: {
        let (x, y) = (a.f(), b.f());
        let r = x % y;
        V::F(if r != 0.0 && (r < 0.0) != (y < 0.0) { r + y } else { r })
    },
    complex: no_complex("modulo"));
by_class!(pow, |a, b, t| int: V::I(ipow(a.i(), b.i())),
    float: V::F(a.f().powf(b.f())), complex: V::C(cpow(a.c(), b.c())));
// integer results of root, atan2 and hypot are rounded to the nearest integer: these
// references give the exact float result, and `Tol::slack` compares it rounded
by_class!(root, |a, b, t| int: V::F(b.f().powf(1.0 / a.f())),
    float: V::F(b.f().powf(1.0 / a.f())), complex: no_complex("root"));
by_class!(atan2, |a, b, t| int: V::F(a.f().atan2(b.f())),
    float: V::F(a.f().atan2(b.f())), complex: no_complex("atan2"));
by_class!(hypot, |a, b, t| int: V::F(a.f().hypot(b.f())),
    float: V::F(a.f().hypot(b.f())), complex: no_complex("hypot"));
by_class!(minof, |a, b, t| int: V::I(a.i().min(b.i())),
    float: V::F(fmin(a.f(), b.f())),
    complex: if b.c().norm_sqr() < a.c().norm_sqr() { b } else { a });
by_class!(maxof, |a, b, t| int: V::I(a.i().max(b.i())),
    float: V::F(fmax(a.f(), b.f())),
    complex: if b.c().norm_sqr() > a.c().norm_sqr() { b } else { a });
by_class!(bitand, |a, b, t| int: V::I(a.i() & b.i()), float: no_complex("bitand"),
    complex: no_complex("bitand"));
by_class!(bitor, |a, b, t| int: V::I(a.i() | b.i()), float: no_complex("bitor"),
    complex: no_complex("bitor"));
by_class!(bitxor, |a, b, t| int: V::I(a.i() ^ b.i()), float: no_complex("bitxor"),
    complex: no_complex("bitxor"));
by_class!(shiftl, |a, b, t| int: {
        let (x, y) = (a.i(), b.i());
        V::I(if y < 0 || y >= t.bits as i128 { 0 } else { x << y })
    }, float: no_complex("shiftl"), complex: no_complex("shiftl"));
by_class!(shiftr, |a, b, t| int: {
        let (x, y) = (a.i(), b.i());
        V::I(if y < 0 || y >= t.bits as i128 { if x < 0 { -1 } else { 0 } } else { x >> y })
    }, float: no_complex("shiftr"), complex: no_complex("shiftr"));

macro_rules! compare {
    ($name:ident, $op:tt) => {
        by_class!($name, |a, b, t| int: V::B(a.i() $op b.i()), float: V::B(a.f() $op b.f()),
            complex: V::B(a.c().norm_sqr() $op b.c().norm_sqr()));
    };
}
compare!(lt, <);
compare!(gt, >);
compare!(le, <=);
compare!(ge, >=);

by_class!(eq, |a, b, t| int: V::B(a.i() == b.i()), float: V::B(a.f() == b.f()),
    complex: V::B(a.c() == b.c()));
by_class!(neq, |a, b, t| int: V::B(a.i() != b.i()), float: V::B(a.f() != b.f()),
    complex: V::B(a.c() != b.c()));
by_class!(and, |a, b, t| int: V::B(a.nz() && b.nz()), float: V::B(a.nz() && b.nz()),
    complex: V::B(a.nz() && b.nz()));
by_class!(or, |a, b, t| int: V::B(a.nz() || b.nz()), float: V::B(a.nz() || b.nz()),
    complex: V::B(a.nz() || b.nz()));

/// A complex number from two reals.
pub fn cplx2(a: V, b: V, _t: Ty) -> V {
    V::C(c64::new(a.f(), b.f()))
}

/// Minimum where NaN loses to a number.
pub fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x <= y {
        x
    } else {
        y
    }
}

/// Maximum where NaN loses to a number.
pub fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x >= y {
        x
    } else {
        y
    }
}

/// x^y with wrapping (modulo 2^128, which the caller narrows to the type's width); a negative
/// exponent gives the truncated reciprocal: 0 unless x is 1 or -1.
pub fn ipow(x: i128, y: i128) -> i128 {
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
    let (mut base, mut e, mut acc) = (x, y as u128, 1i128);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    acc
}

// ---- complex functions, from their definitions in terms of real functions --------------------

fn c(re: f64, im: f64) -> c64 {
    c64::new(re, im)
}

/// Division by scaling: (a/s)·conj(b/s) / |b/s|² with s the larger part of b.
pub fn cdiv(a: c64, b: c64) -> c64 {
    let s = b.re.abs().max(b.im.abs());
    let (bs, as_) = (c(b.re / s, b.im / s), c(a.re / s, a.im / s));
    let d = bs.re * bs.re + bs.im * bs.im;
    c((as_.re * bs.re + as_.im * bs.im) / d, (as_.im * bs.re - as_.re * bs.im) / d)
}

pub fn cexp(z: c64) -> c64 {
    let e = z.re.exp();
    c(e * z.im.cos(), e * z.im.sin())
}

pub fn cln(z: c64) -> c64 {
    c(z.re.hypot(z.im).ln(), z.im.atan2(z.re))
}

/// Principal square root, computed without cancellation.
pub fn csqrt(z: c64) -> c64 {
    if z.re == 0.0 && z.im == 0.0 {
        return c(0.0, z.im);
    }
    let a = ((z.re.hypot(z.im) + z.re.abs()) / 2.0).sqrt();
    if z.re >= 0.0 {
        c(a, z.im / (2.0 * a))
    } else {
        c(z.im.abs() / (2.0 * a), a.copysign(z.im))
    }
}

pub fn csin(z: c64) -> c64 {
    c(z.re.sin() * z.im.cosh(), z.re.cos() * z.im.sinh())
}

pub fn ccos(z: c64) -> c64 {
    c(z.re.cos() * z.im.cosh(), -z.re.sin() * z.im.sinh())
}

pub fn ctan(z: c64) -> c64 {
    cdiv(csin(z), ccos(z))
}

pub fn csinh(z: c64) -> c64 {
    c(z.re.sinh() * z.im.cos(), z.re.cosh() * z.im.sin())
}

pub fn ccosh(z: c64) -> c64 {
    c(z.re.cosh() * z.im.cos(), z.re.sinh() * z.im.sin())
}

pub fn ctanh(z: c64) -> c64 {
    cdiv(csinh(z), ccosh(z))
}

/// asinh(z) = ln(z + sqrt(z² + 1)), using oddness to avoid cancellation for Re z < 0.
pub fn casinh(z: c64) -> c64 {
    if z.re < 0.0 {
        return -casinh(-z);
    }
    cln(z + csqrt(z * z + c(1.0, 0.0)))
}

/// asin(z) = -i asinh(iz).
pub fn casin(z: c64) -> c64 {
    let w = casinh(c(-z.im, z.re));
    c(w.im, -w.re)
}

/// acos(z) = π/2 - asin(z).
pub fn cacos(z: c64) -> c64 {
    c(FRAC_PI_2, 0.0) - casin(z)
}

/// atanh(z) = (ln(1 + z) - ln(1 - z)) / 2.
pub fn catanh(z: c64) -> c64 {
    let one = c(1.0, 0.0);
    (cln(one + z) - cln(one - z)) * 0.5
}

/// atan(z) = -i atanh(iz).
pub fn catan(z: c64) -> c64 {
    let w = catanh(c(-z.im, z.re));
    c(w.im, -w.re)
}

/// acosh(z) = ln(z + sqrt(z + 1) sqrt(z - 1)).
pub fn cacosh(z: c64) -> c64 {
    let one = c(1.0, 0.0);
    cln(z + csqrt(z + one) * csqrt(z - one))
}

pub fn cpow(a: c64, b: c64) -> c64 {
    cexp(b * cln(a))
}

pub fn cpow2(z: c64) -> c64 {
    cexp(z * LN_2)
}

pub fn crsqrt(z: c64) -> c64 {
    cdiv(c(1.0, 0.0), csqrt(z))
}

/// Phase of a real number, as emberfire defines it: π for negatives, 0 otherwise.
pub fn real_arg(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x < 0.0 {
        PI
    } else {
        0.0
    }
}
