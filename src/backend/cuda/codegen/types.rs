//! The C types of element types in generated kernels, and how stored elements become computed
//! values and back (f16 and bf16 are computed in float; bool is computed on its stored byte, which is
//! true when it is not zero and keeps its number, as in `storage.rs`).

use crate::dtype::DType;

/// The C type of element type `t` in the hand-written kernels (`kernels/*.cu`), which name
/// their complex types `cf_` and `cd_` (generated kernels use [`storage_type`]'s `cf`/`cd`).
/// Those kernels take no f16, bf16 or bool elements.
pub(crate) fn c_type(t: DType) -> &'static str {
    match t {
        DType::C32 => "cf_",
        DType::C64 => "cd_",
        DType::F16 | DType::BF16 | DType::B8 => {
            unreachable!("internal error: a hand-written kernel for {}", t.name())
        }
        _ => storage_type(t),
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
        DType::U16 | DType::F16 | DType::BF16 => "unsigned short",
        DType::S32 => "int",
        DType::U32 => "unsigned int",
        DType::S64 => "long long",
        DType::U64 => "unsigned long long",
    }
}

/// The C type a value of `t` has while it is computed on.
pub(crate) fn reg_type(t: DType) -> &'static str {
    match t {
        DType::F16 | DType::BF16 => "float",
        _ => storage_type(t),
    }
}

/// The unsigned type of the same width as an integer type, used for wrapping arithmetic.
pub(super) fn unsigned_of(t: DType) -> &'static str {
    match t {
        DType::S16 | DType::U16 => "unsigned short",
        DType::S32 | DType::U32 => "unsigned int",
        DType::S64 | DType::U64 => "unsigned long long",
        _ => "unsigned char",
    }
}

pub(super) fn bits_of(t: DType) -> usize {
    t.size() * 8
}

pub(super) fn is_signed(t: DType) -> bool {
    matches!(t, DType::S16 | DType::S32 | DType::S64)
}

/// Integer limits as C literals (for saturating float-to-integer casts).
pub(super) fn int_limits(t: DType) -> (&'static str, &'static str) {
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

/// The float type used to compute a real floating step of type `t` (f16 and bf16 compute in
/// float).
pub(super) fn is_f32ish(t: DType) -> bool {
    matches!(t, DType::F32 | DType::F16 | DType::BF16)
}

/// Math function name for the step's precision: `f("sin", t)` is `sinf` for f32, f16 and bf16.
pub(super) fn f(name: &str, t: DType) -> String {
    if is_f32ish(t) {
        format!("{name}f")
    } else {
        name.to_string()
    }
}

/// The loaded (computed) form of a stored element expression.
pub(crate) fn load_expr(t: DType, raw: &str) -> String {
    match t {
        DType::F16 => format!("h2f({raw})"),
        DType::BF16 => format!("b2f({raw})"),
        _ => raw.to_string(),
    }
}

/// The stored form of a computed value.
pub(crate) fn store_expr(t: DType, v: &str) -> String {
    match t {
        DType::F16 => format!("f2h({v})"),
        DType::BF16 => format!("f2b({v})"),
        DType::B8 => format!("(unsigned char){v}"),
        _ => v.to_string(),
    }
}
