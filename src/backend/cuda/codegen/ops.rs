//! The CUDA C expression of every element-wise operation and cast, for each element type. The
//! semantics mirror the CPU kernels (`backend/cpu/kernels.rs`); see the module documentation of
//! `codegen` for the rules.

use super::types::{bits_of, f, int_limits, is_f32ish, is_signed, reg_type, unsigned_of};
use crate::dtype::DType;
use crate::jit::{BinOp, UnOp};

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
        // rounded once from the exact value, by the functions the CPU's casts mirror
        // (`storage/bf16_round.rs`); f16 values are exact in float, 64-bit integers are not
        // exact in double and round from their own bits
        DType::BF16 => match from {
            DType::C32 => format!("rb({v}.re)"),
            DType::C64 => format!("b2f(d2b({v}.re))"),
            DType::F32 | DType::F16 => format!("rb({v})"),
            DType::S64 => format!("b2f(l2b({v}))"),
            DType::U64 => format!("b2f(ul2b({v}))"),
            _ => format!("b2f(d2b((double){v}))"),
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
pub(super) fn max_literal(t: DType) -> String {
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
pub(super) fn transcendental(op: UnOp) -> bool {
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
pub(super) fn unary_expr(op: UnOp, a: &str, t: DType) -> String {
    use UnOp::*;
    let rt = reg_type(t);
    if t == DType::B8 {
        // computed on the stored byte: the complement is logical not, negation keeps the byte
        return match op {
            Neg => a.to_string(),
            Not | BitNot | IsZero => format!("((unsigned char)({a} == 0))"),
            IsInf | IsNan => "((unsigned char)0)".into(),
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
    // real floats; f16 and bf16 values are floats rounded after each operation
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
        // the prelude's sine and cosine in single precision (the same accuracy as sinf and
        // cosf in fewer instructions, see ef_trig_near)
        Sin if is_f32ish(t) => format!("ef_sinf({a})"),
        Cos if is_f32ish(t) => format!("ef_cosf({a})"),
        Sin => format!("sin({a})"),
        Cos => format!("cos({a})"),
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
        // CUDA's rsqrt (at most 2 ulp off in single precision, 1 in double), as ArrayFire's
        // and PyTorch's CUDA backends use it: one hardware instruction and a refinement where
        // a correctly rounded `1 / sqrt` is two IEEE operations of about ten instructions each,
        // which dominated kernels like n-body's pair interactions.
        Rsqrt => format!("{}({a})", f("rsqrt", t)),
        Pow2 => format!("{}({a})", f("exp2", t)),
        Real => a.to_string(),
        Imag => format!("({rt})0"),
        Conjg | BitNot => unreachable!("unary {op:?} on real floats"),
    };
    round_half(t, e)
}

/// The sine or cosine of a real `a` computed in float (f32, f16, bf16) on the prelude's
/// branch-free path, which sets the kernel's `far` flag where the argument needs the accurate
/// functions (`ef_trig_near`); `None` for every other operation and type. The vector loop uses
/// it for a first pass over its elements and repeats them with `unary_expr` when `far` is set.
pub(super) fn near_trig_expr(op: UnOp, a: &str, t: DType) -> Option<String> {
    if !is_f32ish(t) {
        return None;
    }
    let e = match op {
        UnOp::Sin => format!("ef_sinf_near({a}, far)"),
        UnOp::Cos => format!("ef_cosf_near({a}, far)"),
        _ => return None,
    };
    Some(round_half(t, e))
}

/// A real floating result `e` of type `t` as the value it stores: f16 and bf16 are computed in
/// float and rounded after every operation, as the CPU kernels round each operation's f32
/// result, so both backends give the same bits.
fn round_half(t: DType, e: String) -> String {
    match t {
        DType::F16 => format!("rh({e})"),
        DType::BF16 => format!("rb({e})"),
        _ => e,
    }
}

/// The C expression of a binary operation on `a` and `b` of type `t`.
pub(super) fn binary_expr(op: BinOp, a: &str, b: &str, t: DType) -> String {
    use BinOp::*;
    let rt = reg_type(t);
    if t == DType::B8 {
        // the u8 operation on the stored bytes; the result keeps its byte (comparisons and
        // logical operations give 0 or 1)
        let (x, y) = (format!("((unsigned char){a})"), format!("((unsigned char){b})"));
        return binary_expr(op, &x, &y, DType::U8);
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
    round_half(t, e)
}

/// Integer power by squaring with wrapping, for each integer type a program uses.
pub(super) fn ipow_fn(t: DType) -> String {
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
