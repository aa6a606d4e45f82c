//! CUDA C code generation for fused element-wise programs.
//!
//! One kernel computes every output of a `Program` in a grid-stride loop. Sizes, strides,
//! pointers and scalar values are kernel parameters, so the source (and the compiled kernel)
//! depends only on the program's structure: its operations, element types, which inputs are read
//! linearly and which through strides, and the vector width. `plan` decides those, `key`
//! encodes them compactly for the in-memory cache, and `source` writes the kernel.
//!
//! The semantics of every operation mirror the CPU kernels (`backend/cpu/kernels.rs`): integer
//! arithmetic wraps (computed in unsigned types to avoid C++'s undefined signed overflow),
//! division by zero gives 0, float-to-integer casts saturate with NaN giving 0, f16 is computed
//! in f32 and rounded after every operation, bool arithmetic is computed on 0/1 bytes.

use std::fmt::Write;

use crate::dtype::DType;
use crate::jit::{BinOp, Instr, Program, UnOp};

/// How an input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Element `i` of the output reads element `i` of the input (after its offset).
    Linear,
    /// Read through four strides (0 along broadcast dimensions).
    Strided,
}

/// The structural choices a kernel is compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// For each step that is an `Input`, how it is read (indexed by step).
    pub access: Vec<Option<Access>>,
    /// Elements per thread per iteration in the linear loop (1, 2, 4, 8 or 16); 1 when any
    /// input is strided or any step needs coordinates.
    pub vector: usize,
    /// True when some step needs the coordinates of the element (strided input, range, iota).
    pub coords: bool,
    /// True when the (single) output is written through four strides into an existing buffer
    /// (`run_into`) instead of densely into a new one.
    pub strided_out: bool,
}

impl Plan {
    /// Writes the output through strides: needs coordinates, and one element per iteration.
    pub(crate) fn write_strided(&mut self) {
        self.strided_out = true;
        self.coords = true;
        self.vector = 1;
    }
}

/// The C type that stores elements of `t` in memory.
pub(crate) fn storage_type(t: DType) -> &'static str {
    match t {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::C32 => "cf",
        DType::C64 => "cd",
        DType::B8 | DType::U8 => "unsigned char",
        DType::S16 => "short",
        DType::U16 | DType::F16 => "unsigned short",
        DType::S32 => "int",
        DType::U32 => "unsigned int",
        DType::S64 => "long long",
        DType::U64 => "unsigned long long",
    }
}

/// The C type a value of `t` has while it is computed on.
pub(crate) fn reg_type(t: DType) -> &'static str {
    match t {
        DType::F16 => "float",
        DType::B8 => "bool",
        _ => storage_type(t),
    }
}

/// The unsigned type of the same width as an integer type, used for wrapping arithmetic.
fn unsigned_of(t: DType) -> &'static str {
    match t {
        DType::S16 | DType::U16 => "unsigned short",
        DType::S32 | DType::U32 => "unsigned int",
        DType::S64 | DType::U64 => "unsigned long long",
        _ => "unsigned char",
    }
}

fn bits_of(t: DType) -> usize {
    t.size() * 8
}

fn is_signed(t: DType) -> bool {
    matches!(t, DType::S16 | DType::S32 | DType::S64)
}

/// Integer limits as C literals (for saturating float-to-integer casts).
fn int_limits(t: DType) -> (&'static str, &'static str) {
    match t {
        DType::U8 => ("0.0", "255.0"),
        DType::S16 => ("-32768.0", "32767.0"),
        DType::U16 => ("0.0", "65535.0"),
        DType::S32 => ("-2147483648.0", "2147483647.0"),
        DType::U32 => ("0.0", "4294967295.0"),
        DType::S64 => ("-9223372036854775808.0", "9223372036854775807.0"),
        _ => ("0.0", "18446744073709551615.0"),
    }
}

/// Decides how each input is read and the vector width, given each input's contiguity and
/// alignment (`linear_ok[i]` for step i: true when it is laid out like the output, and
/// `align_ok(width)` when every linear pointer is aligned for `width` elements).
pub(crate) fn plan(p: &Program, linear: &[bool], aligned_for: impl Fn(usize) -> bool) -> Plan {
    let mut access = vec![None; p.steps.len()];
    let mut coords = false;
    for (i, s) in p.steps.iter().enumerate() {
        match s.instr {
            Instr::Input(_) => {
                let a = if linear[i] { Access::Linear } else { Access::Strided };
                coords |= a == Access::Strided;
                access[i] = Some(a);
            }
            Instr::Range(_) | Instr::Iota(_) | Instr::Mapped(..) => coords = true,
            _ => {}
        }
    }
    let mut vector = 1;
    if !coords {
        let widest = p
            .steps
            .iter()
            .enumerate()
            .filter(|(i, _)| access[*i].is_some() || p.outputs.contains(i))
            .map(|(_, s)| s.dtype.size())
            .max()
            .unwrap_or(4);
        let w = (16 / widest).max(1);
        if w > 1 && aligned_for(w) {
            vector = w;
        }
    }
    Plan { access, vector, coords, strided_out: false }
}

/// A compact encoding of everything the generated source depends on.
pub(crate) fn key(p: &Program, plan: &Plan) -> Vec<u8> {
    let mut k = Vec::with_capacity(p.steps.len() * 8 + 8);
    k.push(plan.vector as u8);
    k.push(plan.coords as u8);
    k.push(plan.strided_out as u8);
    for (i, s) in p.steps.iter().enumerate() {
        k.push(s.dtype as u8);
        let operands: Vec<usize> = s.instr.operands();
        match &s.instr {
            Instr::Input(_) => k.extend([1, (plan.access[i] == Some(Access::Linear)) as u8]),
            Instr::Scalar(_) => k.push(2),
            Instr::Range(d) => k.extend([3, *d, broadcast_mask(s.dims)]),
            Instr::Iota(_) => k.extend([4, broadcast_mask(s.dims)]),
            Instr::Unary(op, _) => k.extend([5, *op as u8]),
            Instr::Binary(op, _, _) => k.extend([6, *op as u8]),
            Instr::Cast(_) => k.push(7),
            Instr::Select(..) => k.push(8),
            Instr::Mapped(_, m) => k.extend(super::mapped::key(m, s.dims)),
        }
        for o in operands {
            k.extend((o as u32).to_le_bytes());
        }
    }
    k.push(0xff);
    for &o in &p.outputs {
        k.extend((o as u32).to_le_bytes());
    }
    k
}

/// Bit k set when dimension k has size 1: range and iota read coordinate 0 along it, and that
/// choice is compiled into the source.
fn broadcast_mask(dims: crate::dim4::Dim4) -> u8 {
    (0..4).filter(|&k| dims[k] == 1).fold(0, |m, k| m | (1 << k))
}

/// The entry point's name in every generated kernel.
pub(crate) const ENTRY: &str = "ef_fused";

const PRELUDE: &str = r#"
struct cf { float re, im; };
struct cd { double re, im; };
__device__ __forceinline__ float h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ unsigned short d2h(double f) { unsigned short h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(f)); return h; }
__device__ __forceinline__ float rh(float f) { return h2f(f2h(f)); }
__device__ __forceinline__ bool ef_isnan(float x) { return x != x; }
__device__ __forceinline__ bool ef_isnan(double x) { return x != x; }
__device__ __forceinline__ bool ef_isinf(float x) { return fabsf(x) == __int_as_float(0x7f800000); }
__device__ __forceinline__ bool ef_isinf(double x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000LL); }
#define CPLX_OPS(C, R, SQRT, EXP, LOG, SIN, COS, SINH, COSH, HYPOT, ATAN2) \
__device__ __forceinline__ C mk(R a, R b, C*) { C z; z.re = a; z.im = b; return z; } \
__device__ __forceinline__ C cadd(C a, C b) { return mk(a.re + b.re, a.im + b.im, (C*)0); } \
__device__ __forceinline__ C csub(C a, C b) { return mk(a.re - b.re, a.im - b.im, (C*)0); } \
__device__ __forceinline__ C cmul(C a, C b) { return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re, (C*)0); } \
__device__ __forceinline__ C cdiv(C a, C b) { R n = b.re * b.re + b.im * b.im; return mk((a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n, (C*)0); } \
__device__ __forceinline__ R cnorm2(C a) { return a.re * a.re + a.im * a.im; } \
__device__ __forceinline__ R cabs_(C a) { return HYPOT(a.re, a.im); } \
__device__ __forceinline__ C cexp_(C a) { R e = EXP(a.re); return mk(e * COS(a.im), e * SIN(a.im), (C*)0); } \
__device__ __forceinline__ C clog_(C a) { return mk(LOG(HYPOT(a.re, a.im)), ATAN2(a.im, a.re), (C*)0); } \
__device__ __forceinline__ C csqrt_(C a) { \
  if (a.re == 0 && a.im == 0) return mk(0, a.im, (C*)0); \
  R r = HYPOT(a.re, a.im); \
  if (a.re >= 0) { R t = SQRT((r + a.re) / 2); return mk(t, a.im / (2 * t), (C*)0); } \
  R t = SQRT((r - a.re) / 2); return mk((a.im < 0 ? -a.im : a.im) / (2 * t), a.im < 0 ? -t : t, (C*)0); } \
__device__ __forceinline__ C csin_(C a) { return mk(SIN(a.re) * COSH(a.im), COS(a.re) * SINH(a.im), (C*)0); } \
__device__ __forceinline__ C ccos_(C a) { return mk(COS(a.re) * COSH(a.im), -SIN(a.re) * SINH(a.im), (C*)0); } \
__device__ __forceinline__ C ctan_(C a) { \
  /* far from the real axis cosh 2b dominates (and overflows): tan = 2 sin 2a e^(-2|b|) + i sign b */ \
  R b = a.im, ab = b < 0 ? -b : b; \
  if (ab > 20) return mk(2 * SIN(2 * a.re) * EXP(-2 * ab), b < 0 ? (R)-1 : (R)1, (C*)0); \
  /* a sum of squares, which does not cancel near the poles as cos 2a + cosh 2b does */ \
  R c = COS(a.re), sh = SINH(b), d = 2 * (c * c + sh * sh); \
  return mk(SIN(2 * a.re) / d, SINH(2 * b) / d, (C*)0); } \
__device__ __forceinline__ C csinh_(C a) { return mk(SINH(a.re) * COS(a.im), COSH(a.re) * SIN(a.im), (C*)0); } \
__device__ __forceinline__ C ccosh_(C a) { return mk(COSH(a.re) * COS(a.im), SINH(a.re) * SIN(a.im), (C*)0); } \
__device__ __forceinline__ C ctanh_(C a) { C t = ctan_(mk(-a.im, a.re, (C*)0)); return mk(t.im, -t.re, (C*)0); } /* -i tan(iz) */ \
__device__ __forceinline__ C cmuli(C a) { return mk(-a.im, a.re, (C*)0); } \
__device__ __forceinline__ C cneg(C a) { return mk(-a.re, -a.im, (C*)0); } \
__device__ __forceinline__ C cone(C*) { return mk(1, 0, (C*)0); } \
__device__ __forceinline__ C casin_(C z) { C o = cone((C*)0); return cneg(cmuli(clog_(cadd(cmuli(z), csqrt_(csub(o, cmul(z, z))))))); } \
__device__ __forceinline__ C cacos_(C z) { C o = cone((C*)0); return cneg(cmuli(clog_(cadd(z, cmuli(csqrt_(csub(o, cmul(z, z)))))))); } \
__device__ __forceinline__ C catan_(C z) { C o = cone((C*)0); C iz = cmuli(z); C d = csub(clog_(csub(o, iz)), clog_(cadd(o, iz))); C h = mk(0, (R)0.5, (C*)0); return cmul(h, d); } \
__device__ __forceinline__ C casinh_(C z) { C o = cone((C*)0); return clog_(cadd(z, csqrt_(cadd(cmul(z, z), o)))); } \
__device__ __forceinline__ C cacosh_(C z) { C o = cone((C*)0); C h = mk((R)0.5, 0, (C*)0); C s = cadd(csqrt_(cmul(cadd(z, o), h)), csqrt_(cmul(csub(z, o), h))); C l = clog_(s); return mk(2 * l.re, 2 * l.im, (C*)0); } \
__device__ __forceinline__ C catanh_(C z) { C o = cone((C*)0); C d = csub(clog_(cadd(o, z)), clog_(csub(o, z))); return mk(d.re / 2, d.im / 2, (C*)0); } \
__device__ __forceinline__ C cpow_(C a, C b) { if (a.re == 0 && a.im == 0) { if (b.re == 0 && b.im == 0) return cone((C*)0); return mk(0, 0, (C*)0); } return cexp_(cmul(b, clog_(a))); }
CPLX_OPS(cf, float, sqrtf, expf, logf, sinf, cosf, sinhf, coshf, hypotf, atan2f)
CPLX_OPS(cd, double, sqrt, exp, log, sin, cos, sinh, cosh, hypot, atan2)
__device__ __forceinline__ cd c2d(cf a) { return mk((double)a.re, (double)a.im, (cd*)0); }
__device__ __forceinline__ cf d2c(cd a) { return mk((float)a.re, (float)a.im, (cf*)0); }
template <int B> struct Bytes;
template <> struct Bytes<1> { typedef unsigned char T; };
template <> struct Bytes<2> { typedef unsigned short T; };
template <> struct Bytes<4> { typedef unsigned int T; };
template <> struct Bytes<8> { typedef unsigned long long T; };
struct alignas(16) u128_ { unsigned long long a, b; };
template <> struct Bytes<16> { typedef u128_ T; };
template <typename T, int N> __device__ __forceinline__ void vload(T (&dst)[N], const T* src) {
  typedef typename Bytes<sizeof(T) * N>::T V;
  union { V v; T e[N]; } u; u.v = *reinterpret_cast<const V*>(src);
#pragma unroll
  for (int k = 0; k < N; k++) dst[k] = u.e[k];
}
template <typename T, int N> __device__ __forceinline__ void vstore(T* dst, const T (&src)[N]) {
  typedef typename Bytes<sizeof(T) * N>::T V;
  union { V v; T e[N]; } u;
#pragma unroll
  for (int k = 0; k < N; k++) u.e[k] = src[k];
  *reinterpret_cast<V*>(dst) = u.v;
}
"#;

/// The float type used to compute a real floating step of type `t` (f16 computes in float).
fn is_f32ish(t: DType) -> bool {
    matches!(t, DType::F32 | DType::F16)
}

/// Math function name for the step's precision: `f("sin", t)` is `sinf` for f32/f16.
fn f(name: &str, t: DType) -> String {
    if is_f32ish(t) {
        format!("{name}f")
    } else {
        name.to_string()
    }
}

/// The C expression converting `v`, a computed value of type `from`, to type `to`.
pub(crate) fn cast_expr(v: &str, from: DType, to: DType) -> String {
    if from == to {
        return v.to_string();
    }
    let rt = reg_type(to);
    match to {
        DType::B8 => match from {
            DType::C32 | DType::C64 => format!("({v}.re != 0 || {v}.im != 0)"),
            _ => format!("({v} != 0)"),
        },
        DType::C32 | DType::C64 => {
            let r = if to == DType::C32 { "float" } else { "double" };
            match from {
                DType::C32 | DType::C64 => format!("mk(({r}){v}.re, ({r}){v}.im, ({rt}*)0)"),
                _ => format!("mk(({r}){v}, ({r})0, ({rt}*)0)"),
            }
        }
        DType::F16 => match from {
            DType::C32 => format!("h2f(f2h({v}.re))"),
            DType::C64 => format!("h2f(d2h({v}.re))"),
            DType::F32 => format!("rh({v})"),
            _ => format!("h2f(d2h((double){v}))"),
        },
        DType::F32 | DType::F64 => match from {
            DType::C32 | DType::C64 => format!("({rt}){v}.re"),
            _ => format!("({rt}){v}"),
        },
        _ => {
            // integer destination
            let src = match from {
                DType::C32 | DType::C64 => format!("{v}.re"),
                _ => v.to_string(),
            };
            if from.is_floating() {
                let (lo, hi) = int_limits(to);
                let max = max_literal(to);
                format!(
                    "({src} != {src} ? ({rt})0 : (double){src} <= {lo} ? ({rt}){lo} : (double){src} >= {hi} ? {max} : ({rt}){src})"
                )
            } else {
                format!("({rt}){src}")
            }
        }
    }
}

/// The maximum of an integer type as a C expression of that type.
fn max_literal(t: DType) -> String {
    match t {
        DType::U8 => "(unsigned char)255".into(),
        DType::S16 => "(short)32767".into(),
        DType::U16 => "(unsigned short)65535".into(),
        DType::S32 => "(int)2147483647".into(),
        DType::U32 => "(unsigned int)4294967295u".into(),
        DType::S64 => "(long long)9223372036854775807LL".into(),
        _ => "(unsigned long long)18446744073709551615ULL".into(),
    }
}

/// Complex functions whose c32 form is computed in c64.
fn transcendental(op: UnOp) -> bool {
    use UnOp::*;
    matches!(
        op,
        Sin | Cos
            | Tan
            | Asin
            | Acos
            | Atan
            | Sinh
            | Cosh
            | Tanh
            | Asinh
            | Acosh
            | Atanh
            | Exp
            | Log
            | Log10
            | Log2
            | Sqrt
            | Rsqrt
            | Pow2
    )
}

/// The C expression of a unary operation on `a` of type `t`.
fn unary_expr(op: UnOp, a: &str, t: DType) -> String {
    use UnOp::*;
    let rt = reg_type(t);
    if t == DType::B8 {
        // computed on a 0/1 byte, read back as "not zero"
        return match op {
            Neg => a.to_string(),
            Not | BitNot | IsZero => format!("(!{a})"),
            IsInf | IsNan => "false".into(),
            _ => unreachable!("unary {op:?} on bool"),
        };
    }
    if t.is_integer() {
        let u = unsigned_of(t);
        return match op {
            Neg => format!("({rt})(({u})0 - ({u}){a})"),
            BitNot => format!("({rt})(~{a})"),
            Not | IsZero => format!("({a} == 0)"),
            IsInf | IsNan => "false".into(),
            _ => unreachable!("unary {op:?} on integers"),
        };
    }
    if t == DType::C32 && transcendental(op) {
        // computed in double and rounded once, as the CPU does: the textbook formulas lose
        // digits to cancellation in single precision (tan and tanh near their poles)
        let d = unary_expr(op, &format!("c2d({a})"), DType::C64);
        return format!("d2c({d})");
    }
    if t.is_complex() {
        let r = if t == DType::C32 { "float" } else { "double" };
        return match op {
            Neg => format!("cneg({a})"),
            Not | IsZero => format!("({a}.re == 0 && {a}.im == 0)"),
            IsInf => format!("(ef_isinf({a}.re) || ef_isinf({a}.im))"),
            IsNan => format!("(ef_isnan({a}.re) || ef_isnan({a}.im))"),
            Abs => format!("cabs_({a})"),
            Arg => format!("{}({a}.im, {a}.re)", if t == DType::C32 { "atan2f" } else { "atan2" }),
            Real => format!("{a}.re"),
            Imag => format!("{a}.im"),
            Conjg => format!("mk({a}.re, -{a}.im, ({rt}*)0)"),
            Sin => format!("csin_({a})"),
            Cos => format!("ccos_({a})"),
            Tan => format!("ctan_({a})"),
            Asin => format!("casin_({a})"),
            Acos => format!("cacos_({a})"),
            Atan => format!("catan_({a})"),
            Sinh => format!("csinh_({a})"),
            Cosh => format!("ccosh_({a})"),
            Tanh => format!("ctanh_({a})"),
            Asinh => format!("casinh_({a})"),
            Acosh => format!("cacosh_({a})"),
            Atanh => format!("catanh_({a})"),
            Exp => format!("cexp_({a})"),
            Log => format!("clog_({a})"),
            Log10 => format!("cdiv(clog_({a}), mk(({r})2.302585092994045684, ({r})0, ({rt}*)0))"),
            Log2 => format!("cdiv(clog_({a}), mk(({r})0.693147180559945309, ({r})0, ({rt}*)0))"),
            Sqrt => format!("csqrt_({a})"),
            Rsqrt => format!("cdiv(mk(({r})1, ({r})0, ({rt}*)0), csqrt_({a}))"),
            Pow2 => format!("cexp_(cmul({a}, mk(({r})0.693147180559945309, ({r})0, ({rt}*)0)))"),
            _ => unreachable!("unary {op:?} on complex"),
        };
    }
    // real floats; f16 values are floats rounded to half after each operation
    let one = if t == DType::F64 { "1.0" } else { "1.0f" };
    let e = match op {
        Neg => format!("(-{a})"),
        Not | IsZero => return format!("({a} == 0)"),
        IsInf => return format!("ef_isinf({a})"),
        IsNan => return format!("ef_isnan({a})"),
        Abs => format!("{}({a})", f("fabs", t)),
        Arg => format!("(ef_isnan({a}) ? {a} : {a} < 0 ? ({rt})3.14159265358979323846 : ({rt})0)"),
        Sign => format!("({a} < 0 ? ({rt})1 : ({rt})0)"),
        Round => format!("{}({a})", f("round", t)),
        Trunc => format!("{}({a})", f("trunc", t)),
        Floor => format!("{}({a})", f("floor", t)),
        Ceil => format!("{}({a})", f("ceil", t)),
        Sigmoid => format!("({one} / ({one} + {}(-{a})))", f("exp", t)),
        Expm1 => format!("{}({a})", f("expm1", t)),
        Erf => format!("{}({a})", f("erf", t)),
        Erfc => format!("{}({a})", f("erfc", t)),
        Log10 => format!("{}({a})", f("log10", t)),
        Log1p => format!("{}({a})", f("log1p", t)),
        Log2 => format!("{}({a})", f("log2", t)),
        Cbrt => format!("{}({a})", f("cbrt", t)),
        Tgamma => format!("({rt})tgamma((double){a})"),
        Lgamma => format!("({rt})lgamma((double){a})"),
        Factorial => format!("({rt})tgamma((double){a} + 1.0)"),
        Sin => format!("{}({a})", f("sin", t)),
        Cos => format!("{}({a})", f("cos", t)),
        Tan => format!("{}({a})", f("tan", t)),
        Asin => format!("{}({a})", f("asin", t)),
        Acos => format!("{}({a})", f("acos", t)),
        Atan => format!("{}({a})", f("atan", t)),
        Sinh => format!("{}({a})", f("sinh", t)),
        Cosh => format!("{}({a})", f("cosh", t)),
        Tanh => format!("{}({a})", f("tanh", t)),
        Asinh => format!("{}({a})", f("asinh", t)),
        Acosh => format!("{}({a})", f("acosh", t)),
        Atanh => format!("{}({a})", f("atanh", t)),
        Exp => format!("{}({a})", f("exp", t)),
        Log => format!("{}({a})", f("log", t)),
        Sqrt => format!("{}({a})", f("sqrt", t)),
        Rsqrt => format!("({one} / {}({a}))", f("sqrt", t)),
        Pow2 => format!("{}({a})", f("exp2", t)),
        Real => a.to_string(),
        Imag => format!("({rt})0"),
        Conjg | BitNot => unreachable!("unary {op:?} on real floats"),
    };
    if t == DType::F16 {
        format!("rh({e})")
    } else {
        e
    }
}

/// The C expression of a binary operation on `a` and `b` of type `t`.
fn binary_expr(op: BinOp, a: &str, b: &str, t: DType) -> String {
    use BinOp::*;
    let rt = reg_type(t);
    if t == DType::B8 {
        // computed on 0/1 bytes as the u8 operation, read back as "not zero"
        let (x, y) = (format!("((unsigned char){a})"), format!("((unsigned char){b})"));
        let r = binary_expr(op, &x, &y, DType::U8);
        return match op {
            Lt | Gt | Le | Ge | Eq | Neq | And | Or => r,
            _ => format!("({r} != 0)"),
        };
    }
    if t.is_integer() {
        let u = unsigned_of(t);
        let bits = bits_of(t);
        let signed = is_signed(t);
        let min = match t {
            DType::S16 => "(short)-32768",
            DType::S32 => "(int)(-2147483647 - 1)",
            _ => "(long long)(-9223372036854775807LL - 1)",
        };
        // computed in double and rounded to the nearest integer, as the CPU does
        let via_f64 = |e: String| cast_expr(&format!("round({e})"), DType::F64, t);
        return match op {
            Add => format!("({rt})(({u}){a} + ({u}){b})"),
            Sub => format!("({rt})(({u}){a} - ({u}){b})"),
            Mul => format!("({rt})(({u}){a} * ({u}){b})"),
            Div if signed => format!(
                "({b} == 0 ? ({rt})0 : ({b} == -1 && {a} == {min}) ? {a} : ({rt})({a} / {b}))"
            ),
            Div => format!("({b} == 0 ? ({rt})0 : ({rt})({a} / {b}))"),
            Rem if signed => format!("({b} == 0 || {b} == -1 ? ({rt})0 : ({rt})({a} % {b}))"),
            Rem => format!("({b} == 0 ? ({rt})0 : ({rt})({a} % {b}))"),
            Mod if signed => format!(
                "({b} == 0 || {b} == -1 ? ({rt})0 : ((({a} % {b}) != 0 && ((({a} % {b}) < 0) != ({b} < 0))) ? ({rt})({a} % {b} + {b}) : ({rt})({a} % {b})))"
            ),
            Mod => format!("({b} == 0 ? ({rt})0 : ({rt})({a} % {b}))"),
            Pow => format!("ipow_{}({a}, {b})", t.name()),
            Root => via_f64(format!("pow((double){b}, 1.0 / (double){a})")),
            Atan2 => via_f64(format!("atan2((double){a}, (double){b})")),
            Hypot => via_f64(format!("hypot((double){a}, (double){b})")),
            Min => format!("({b} < {a} ? {b} : {a})"),
            Max => format!("({b} > {a} ? {b} : {a})"),
            BitAnd => format!("({rt})({a} & {b})"),
            BitOr => format!("({rt})({a} | {b})"),
            BitXor => format!("({rt})({a} ^ {b})"),
            Shl => {
                let neg = if signed { format!("{b} < 0 || ") } else { String::new() };
                format!("({neg}{b} >= {bits} ? ({rt})0 : ({rt})(({u}){a} << {b}))")
            }
            Shr => {
                let neg = if signed { format!("{b} < 0 || ") } else { String::new() };
                let fill = if signed { format!("({a} < 0 ? ({rt})-1 : ({rt})0)") } else { format!("({rt})0") };
                format!("({neg}{b} >= {bits} ? {fill} : ({rt})({a} >> {b}))")
            }
            Lt => format!("({a} < {b})"),
            Gt => format!("({a} > {b})"),
            Le => format!("({a} <= {b})"),
            Ge => format!("({a} >= {b})"),
            Eq => format!("({a} == {b})"),
            Neq => format!("({a} != {b})"),
            And => format!("({a} != 0 && {b} != 0)"),
            Or => format!("({a} != 0 || {b} != 0)"),
            Cplx2 => unreachable!(),
        };
    }
    if t.is_complex() {
        let nz = |z: &str| format!("({z}.re != 0 || {z}.im != 0)");
        return match op {
            Add => format!("cadd({a}, {b})"),
            Sub => format!("csub({a}, {b})"),
            Mul => format!("cmul({a}, {b})"),
            Div => format!("cdiv({a}, {b})"),
            Pow if t == DType::C32 => format!("d2c(cpow_(c2d({a}), c2d({b})))"),
            Pow => format!("cpow_({a}, {b})"),
            Min => format!("(cnorm2({b}) < cnorm2({a}) ? {b} : {a})"),
            Max => format!("(cnorm2({b}) > cnorm2({a}) ? {b} : {a})"),
            Lt => format!("(cnorm2({a}) < cnorm2({b}))"),
            Gt => format!("(cnorm2({a}) > cnorm2({b}))"),
            Le => format!("(cnorm2({a}) <= cnorm2({b}))"),
            Ge => format!("(cnorm2({a}) >= cnorm2({b}))"),
            Eq => format!("({a}.re == {b}.re && {a}.im == {b}.im)"),
            Neq => format!("({a}.re != {b}.re || {a}.im != {b}.im)"),
            And => format!("({} && {})", nz(a), nz(b)),
            Or => format!("({} || {})", nz(a), nz(b)),
            _ => unreachable!("binary {op:?} on complex"),
        };
    }
    let one = if t == DType::F64 { "1.0" } else { "1.0f" };
    let e = match op {
        Add => format!("({a} + {b})"),
        Sub => format!("({a} - {b})"),
        Mul => format!("({a} * {b})"),
        Div => format!("({a} / {b})"),
        Rem => format!("{}({a}, {b})", f("fmod", t)),
        Mod => {
            let r = format!("{}({a}, {b})", f("fmod", t));
            format!("(({r}) != 0 && ((({r}) < 0) != ({b} < 0)) ? ({r}) + {b} : ({r}))")
        }
        Pow => format!("{}({a}, {b})", f("pow", t)),
        Root => format!("{}({b}, {one} / {a})", f("pow", t)),
        Atan2 => format!("{}({a}, {b})", f("atan2", t)),
        Hypot => format!("{}({a}, {b})", f("hypot", t)),
        Min => format!("{}({a}, {b})", f("fmin", t)),
        Max => format!("{}({a}, {b})", f("fmax", t)),
        Cplx2 => {
            let (c, r) = if t == DType::F64 { ("cd", "double") } else { ("cf", "float") };
            return format!("mk(({r}){a}, ({r}){b}, ({c}*)0)");
        }
        Lt => return format!("({a} < {b})"),
        Gt => return format!("({a} > {b})"),
        Le => return format!("({a} <= {b})"),
        Ge => return format!("({a} >= {b})"),
        Eq => return format!("({a} == {b})"),
        Neq => return format!("({a} != {b})"),
        And => return format!("({a} != 0 && {b} != 0)"),
        Or => return format!("({a} != 0 || {b} != 0)"),
        BitAnd | BitOr | BitXor | Shl | Shr => unreachable!("binary {op:?} on floats"),
    };
    if t == DType::F16 {
        format!("rh({e})")
    } else {
        e
    }
}

/// Integer power by squaring with wrapping, for each integer type a program uses.
fn ipow_fn(t: DType) -> String {
    let (rt, u) = (reg_type(t), unsigned_of(t));
    let neg = if is_signed(t) {
        format!("if (e < 0) return b == 1 ? ({rt})1 : b == -1 ? ((e & 1) ? ({rt})-1 : ({rt})1) : ({rt})0;\n")
    } else {
        String::new()
    };
    format!(
        "__device__ __forceinline__ {rt} ipow_{n}({rt} b, {rt} e) {{\n{neg}  {u} r = 1, x = ({u})b; unsigned long long k = (unsigned long long)e;\n  while (k) {{ if (k & 1) r = ({u})(r * x); x = ({u})(x * x); k >>= 1; }}\n  return ({rt})r;\n}}\n",
        n = t.name()
    )
}

/// The loaded (computed) form of a stored element expression.
pub(crate) fn load_expr(t: DType, raw: &str) -> String {
    match t {
        DType::F16 => format!("h2f({raw})"),
        DType::B8 => format!("({raw} != 0)"),
        _ => raw.to_string(),
    }
}

/// The stored form of a computed value.
pub(crate) fn store_expr(t: DType, v: &str) -> String {
    match t {
        DType::F16 => format!("f2h({v})"),
        DType::B8 => format!("(unsigned char){v}"),
        _ => v.to_string(),
    }
}

/// Writes the kernel's source. Parameter order (which `launch` follows): `n`; the output's d0,
/// d1, d2 when coordinates are needed; then, step by step, each input's pointer (and its four
/// strides when strided), each scalar's value, each iota's four block sizes; then one pointer
/// per output; then, for a strided output, its four strides.
pub(crate) fn source(p: &Program, plan: &Plan) -> String {
    let mut s = helpers(p);
    let mut params: Vec<String> = vec!["const long long n".into()];
    if plan.coords {
        params.extend(
            ["const long long d0", "const long long d1", "const long long d2"].map(String::from),
        );
    }
    params.extend(step_params(p, plan));
    for (o, &idx) in p.outputs.iter().enumerate() {
        params.push(format!("{}* __restrict__ out{o}", storage_type(p.steps[idx].dtype)));
    }
    if plan.strided_out {
        params.extend((0..4).map(|k| format!("const long long os_{k}")));
    }
    let _ = writeln!(s, "extern \"C\" __global__ void {ENTRY}({}) {{", params.join(", "));

    let w = plan.vector;
    if w > 1 {
        // Vector loop: each thread handles `w` consecutive elements with one wide load/store per
        // array, then a scalar tail handles the last n % w elements.
        let _ = writeln!(s, "  const long long nv = n / {w};");
        let _ = writeln!(
            s,
            "  for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {{"
        );
        let _ = writeln!(s, "    const long long i0 = v * {w};");
        for (i, st) in p.steps.iter().enumerate() {
            if let Instr::Input(_) = st.instr {
                let _ = writeln!(
                    s,
                    "    {} r{i}[{w}]; vload(r{i}, in{i} + i0);",
                    storage_type(st.dtype)
                );
            }
        }
        for (o, &idx) in p.outputs.iter().enumerate() {
            let _ = writeln!(s, "    {} w{o}[{w}];", storage_type(p.steps[idx].dtype));
        }
        let _ = writeln!(s, "#pragma unroll\n    for (int j = 0; j < {w}; j++) {{");
        body(&mut s, p, "      ", |i| format!("r{i}[j]"));
        for (o, &idx) in p.outputs.iter().enumerate() {
            let _ = writeln!(
                s,
                "      w{o}[j] = {};",
                store_expr(p.steps[idx].dtype, &format!("v{idx}"))
            );
        }
        let _ = writeln!(s, "    }}");
        for o in 0..p.outputs.len() {
            let _ = writeln!(s, "    vstore(out{o} + i0, w{o});");
        }
        let _ = writeln!(s, "  }}");
        let _ = writeln!(
            s,
            "  for (long long i = nv * {w} + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{"
        );
    } else {
        let _ = writeln!(
            s,
            "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{"
        );
    }
    if plan.coords {
        let _ = writeln!(
            s,
            "    const long long c0 = i % d0; long long t_ = i / d0; const long long c1 = t_ % d1; t_ /= d1; const long long c2 = t_ % d2; const long long c3 = t_ / d2;"
        );
    }
    body(&mut s, p, "    ", |i| element_read(p, plan, i));
    let out_at =
        if plan.strided_out { "c0 * os_0 + c1 * os_1 + c2 * os_2 + c3 * os_3" } else { "i" };
    for (o, &idx) in p.outputs.iter().enumerate() {
        let v = store_expr(p.steps[idx].dtype, &format!("v{idx}"));
        let _ = writeln!(s, "    out{o}[{out_at}] = {v};");
    }
    s.push_str("  }\n}\n");
    s
}

/// The shared device functions a program's kernel needs: the prelude, and integer powers for
/// each integer type the program raises to a power. Every kernel made from a program (the
/// element-wise one here, the reductions in `reduce_codegen`) starts with this.
pub(crate) fn helpers(p: &Program) -> String {
    let mut s = String::with_capacity(4096);
    s.push_str(PRELUDE);
    let mut pow_types: Vec<DType> = p
        .steps
        .iter()
        .filter(|st| matches!(st.instr, Instr::Binary(BinOp::Pow, ..)))
        .filter_map(|st| match st.instr {
            Instr::Binary(_, a, _) => Some(p.steps[a].dtype),
            _ => None,
        })
        .map(|t| if t == DType::B8 { DType::U8 } else { t })
        .filter(|t| t.is_integer())
        .collect();
    pow_types.sort_by_key(|t| *t as u8);
    pow_types.dedup();
    for t in pow_types {
        s.push_str(&ipow_fn(t));
    }
    s
}

/// The kernel parameters of a program's steps, in step order: each input's pointer (and its
/// four strides when strided), each scalar's value, each iota's four block sizes.
/// each mapped leaf's parameters (`mapped::params`). `launch::push_step_args` passes the
/// matching values.
pub(crate) fn step_params(p: &Program, plan: &Plan) -> Vec<String> {
    let mut params = Vec::new();
    for (i, st) in p.steps.iter().enumerate() {
        let ty = storage_type(st.dtype);
        match &st.instr {
            Instr::Input(_) => {
                params.push(format!("const {ty}* __restrict__ in{i}"));
                if plan.access[i] == Some(Access::Strided) {
                    for k in 0..4 {
                        params.push(format!("const long long s{i}_{k}"));
                    }
                }
            }
            Instr::Scalar(_) => params.push(format!("const {ty} k{i}")),
            Instr::Mapped(_, m) => params.extend(super::mapped::params(i, st.dtype, m)),
            Instr::Iota(_) => {
                for k in 0..4 {
                    params.push(format!("const long long b{i}_{k}"));
                }
            }
            _ => {}
        }
    }
    params
}

/// The stored element of input step `i` at the element with linear index `i` and coordinates
/// `c0..c3` (variables of the generated code), for a kernel that reads one element at a time.
pub(crate) fn element_read(p: &Program, plan: &Plan, i: usize) -> String {
    if let Instr::Mapped(_, m) = &p.steps[i].instr {
        super::mapped::element(i, p.steps[i].dtype, p.steps[i].dims, m)
    } else if plan.access[i] == Some(Access::Strided) {
        format!("in{i}[c0 * s{i}_0 + c1 * s{i}_1 + c2 * s{i}_2 + c3 * s{i}_3]")
    } else {
        format!("in{i}[i]")
    }
}

/// Writes the computation of every step for one element; `raw(i)` is the stored element of
/// input step `i`.
pub(crate) fn body(s: &mut String, p: &Program, ind: &str, raw: impl Fn(usize) -> String) {
    for (i, st) in p.steps.iter().enumerate() {
        let t = st.dtype;
        let rt = reg_type(t);
        let e = match &st.instr {
            Instr::Input(_) | Instr::Mapped(..) => load_expr(t, &raw(i)),
            Instr::Scalar(_) => load_expr(t, &format!("k{i}")),
            Instr::Range(d) => {
                let c = if st.dims[*d as usize] == 1 { "0".to_string() } else { format!("c{d}") };
                cast_expr(&format!("(unsigned long long){c}"), DType::U64, t)
            }
            Instr::Iota(_) => {
                let c = |k: usize| {
                    if st.dims[k] == 1 {
                        "0".to_string()
                    } else {
                        format!("c{k}")
                    }
                };
                let e = format!(
                    "(unsigned long long)({} % b{i}_0 + b{i}_0 * ({} % b{i}_1 + b{i}_1 * ({} % b{i}_2 + b{i}_2 * ({} % b{i}_3))))",
                    c(0),
                    c(1),
                    c(2),
                    c(3)
                );
                cast_expr(&e, DType::U64, t)
            }
            Instr::Unary(op, a) => unary_expr(*op, &format!("v{a}"), p.steps[*a].dtype),
            Instr::Binary(op, a, b) => {
                binary_expr(*op, &format!("v{a}"), &format!("v{b}"), p.steps[*a].dtype)
            }
            Instr::Cast(a) => cast_expr(&format!("v{a}"), p.steps[*a].dtype, t),
            Instr::Select(c, a, b) => format!("(v{c} ? v{a} : v{b})"),
        };
        let _ = writeln!(s, "{ind}const {rt} v{i} = {e};");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Buffer;
    use crate::dim4::Dim4;
    use crate::jit::program::Step;
    use crate::jit::Data;
    use crate::storage::HostVec;
    use std::sync::Arc;

    fn input(t: DType, dims: Dim4) -> Step {
        let buf = Arc::new(Buffer::host(HostVec::zeros(t, dims.elements() as usize)));
        Step { instr: Instr::Input(Data { buf, offset: 0, strides: [1, 1, 1, 1] }), dtype: t, dims }
    }

    fn program(steps: Vec<Step>, dims: Dim4) -> Program {
        let last = steps.len() - 1;
        Program { steps, outputs: vec![last], dims }
    }

    /// Every operation on every type it accepts, each cast between types, broadcasting and
    /// vector widths: the sources that `EMBERFIRE_DUMP_KERNELS=dir` writes for an offline
    /// compile check. Without the variable it checks that generation does not panic.
    #[test]
    fn generates_every_operation() {
        let d = Dim4::new(&[8, 3, 1, 1]);
        let mut kernels = Vec::new();
        for t in DType::ALL {
            for op in UNARY {
                if op.supports(t) {
                    let steps = vec![input(t, d), step(Instr::Unary(op, 0), op.out_type(t), d)];
                    kernels.push(program(steps, d));
                }
            }
            for op in BINARY {
                if op.supports(t) {
                    let steps = vec![
                        input(t, d),
                        input(t, Dim4::new(&[8, 1, 1, 1])),
                        step(Instr::Binary(op, 0, 1), op.out_type(t), d),
                    ];
                    kernels.push(program(steps, d));
                }
            }
            for u in DType::ALL {
                let steps = vec![input(t, d), step(Instr::Cast(0), u, d)];
                kernels.push(program(steps, d));
            }
            let steps = vec![
                step(Instr::Range(1), t, d),
                step(Instr::Iota([8, 1, 1, 1]), t, d),
                input(DType::B8, d),
                step(Instr::Select(2, 0, 1), t, d),
            ];
            kernels.push(program(steps, d));
        }
        let dump = std::env::var("EMBERFIRE_DUMP_KERNELS").ok();
        let mut all = String::from(PRELUDE);
        for (n, p) in kernels.iter().enumerate() {
            let linear: Vec<bool> = p.steps.iter().map(|s| s.dims == p.dims).collect();
            for aligned in [false, true] {
                let plan = plan(p, &linear, |_| aligned);
                let src = source(p, &plan);
                assert!(src.starts_with(PRELUDE));
                let body = src[PRELUDE.len()..].replace(ENTRY, &format!("k{n}_{aligned}"));
                all.push_str(&format!("namespace n{n}_{aligned} {{\n{body}}}\n"));
            }
        }
        if let Some(dir) = dump {
            std::fs::write(format!("{dir}/all_kernels.cu"), all).unwrap();
        }
    }

    /// Kernels writing through a strided output (`run_into`): a copy of every type, a scalar
    /// broadcast, and a fused expression of strided inputs; dumped like the others.
    #[test]
    fn generates_strided_outputs() {
        let d = Dim4::new(&[8, 3, 2, 1]);
        let mut kernels = Vec::new();
        for t in DType::ALL {
            kernels.push(program(vec![input(t, d)], d));
            kernels.push(program(vec![step(Instr::Scalar(HostVec::zeros(t, 1)), t, d)], d));
        }
        kernels.push(program(
            vec![
                input(DType::F32, d),
                input(DType::F32, Dim4::new(&[8, 1, 1, 1])),
                step(Instr::Binary(BinOp::Mul, 0, 1), DType::F32, d),
                step(Instr::Unary(UnOp::Sin, 2), DType::F32, d),
            ],
            d,
        ));
        let mut all = String::from(PRELUDE);
        for (n, p) in kernels.iter().enumerate() {
            let linear: Vec<bool> = p.steps.iter().map(|s| s.dims == p.dims).collect();
            let mut plan = plan(p, &linear, |_| true);
            plan.write_strided();
            assert!(plan.coords && plan.vector == 1);
            let dense = key(p, &super::plan(p, &linear, |_| true));
            assert_ne!(key(p, &plan), dense, "the strided form must have its own kernel");
            let src = source(p, &plan);
            assert!(src.contains("os_3") && src.contains("c0 * os_0"));
            let body = src[PRELUDE.len()..].replace(ENTRY, &format!("s{n}"));
            all.push_str(&format!("namespace s{n} {{\n{body}}}\n"));
        }
        if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
            std::fs::write(format!("{dir}/strided_out_kernels.cu"), all).unwrap();
        }
    }

    fn step(instr: Instr, dtype: DType, dims: Dim4) -> Step {
        Step { instr, dtype, dims }
    }

    const UNARY: [UnOp; 44] = {
        use UnOp::*;
        [
            Neg, Not, BitNot, Abs, Arg, Sign, Round, Trunc, Floor, Ceil, Sigmoid, Expm1, Erf, Erfc,
            Log10, Log1p, Log2, Cbrt, Tgamma, Lgamma, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh,
            Tanh, Asinh, Acosh, Atanh, Exp, Log, Sqrt, Rsqrt, Real, Imag, Conjg, Pow2, Factorial,
            IsZero, IsInf, IsNan,
        ]
    };
    const BINARY: [BinOp; 26] = {
        use BinOp::*;
        [
            Add, Sub, Mul, Div, Rem, Mod, Pow, Root, Atan2, Hypot, Min, Max, Cplx2, BitAnd, BitOr,
            BitXor, Shl, Shr, Lt, Gt, Le, Ge, Eq, Neq, And, Or,
        ]
    };
}
