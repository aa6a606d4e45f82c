//! `AnyArray`: an emberfire array of any element type, the value a Python `Array` holds, with
//! the type promotion and dispatch that Python's dynamic types need.

use emberfire::{bf16, c32, c64, f16, Array, DType, Dim4};

/// An array of one of emberfire's fourteen element types.
#[derive(Clone)]
pub enum AnyArray {
    F32(Array<f32>),
    F64(Array<f64>),
    F16(Array<f16>),
    BF16(Array<bf16>),
    C32(Array<c32>),
    C64(Array<c64>),
    B8(Array<bool>),
    U8(Array<u8>),
    S16(Array<i16>),
    U16(Array<u16>),
    S32(Array<i32>),
    U32(Array<u32>),
    S64(Array<i64>),
    U64(Array<u64>),
}

/// Runs `$body` with `$x` bound to the typed array inside an `AnyArray` (every arm must give
/// the same type: an `AnyArray` through `.into()`, a number, ...). `$T` names the element type.
macro_rules! each {
    ($a:expr, $x:ident, $T:ident => $body:expr) => {{
        use $crate::any::AnyArray as __A;
        match $a {
            __A::F32($x) => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            __A::F64($x) => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
            __A::F16($x) => {
                #[allow(dead_code)]
                type $T = emberfire::f16;
                $body
            }
            __A::BF16($x) => {
                #[allow(dead_code)]
                type $T = emberfire::bf16;
                $body
            }
            __A::C32($x) => {
                #[allow(dead_code)]
                type $T = emberfire::c32;
                $body
            }
            __A::C64($x) => {
                #[allow(dead_code)]
                type $T = emberfire::c64;
                $body
            }
            __A::B8($x) => {
                #[allow(dead_code)]
                type $T = bool;
                $body
            }
            __A::U8($x) => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            __A::S16($x) => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            __A::U16($x) => {
                #[allow(dead_code)]
                type $T = u16;
                $body
            }
            __A::S32($x) => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            __A::U32($x) => {
                #[allow(dead_code)]
                type $T = u32;
                $body
            }
            __A::S64($x) => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            __A::U64($x) => {
                #[allow(dead_code)]
                type $T = u64;
                $body
            }
        }
    }};
}
pub(crate) use each;

/// Runs `$body` with `$T` bound to the Rust type of a `DType`.
macro_rules! with_type {
    ($d:expr, $T:ident => $body:expr) => {{
        use emberfire::DType as __D;
        match $d {
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
            __D::F16 => {
                type $T = emberfire::f16;
                $body
            }
            __D::BF16 => {
                type $T = emberfire::bf16;
                $body
            }
            __D::C32 => {
                type $T = emberfire::c32;
                $body
            }
            __D::C64 => {
                type $T = emberfire::c64;
                $body
            }
            __D::B8 => {
                type $T = bool;
                $body
            }
            __D::U8 => {
                type $T = u8;
                $body
            }
            __D::S16 => {
                type $T = i16;
                $body
            }
            __D::U16 => {
                type $T = u16;
                $body
            }
            __D::S32 => {
                type $T = i32;
                $body
            }
            __D::U32 => {
                type $T = u32;
                $body
            }
            __D::S64 => {
                type $T = i64;
                $body
            }
            __D::U64 => {
                type $T = u64;
                $body
            }
        }
    }};
}
pub(crate) use with_type;

/// Runs `$body` on two arrays of the same element type (the caller promotes them first).
macro_rules! each_pair {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr) => {{
        use $crate::any::AnyArray as __A;
        match ($a, $b) {
            (__A::F32($x), __A::F32($y)) => $body,
            (__A::F64($x), __A::F64($y)) => $body,
            (__A::F16($x), __A::F16($y)) => $body,
            (__A::BF16($x), __A::BF16($y)) => $body,
            (__A::C32($x), __A::C32($y)) => $body,
            (__A::C64($x), __A::C64($y)) => $body,
            (__A::B8($x), __A::B8($y)) => $body,
            (__A::U8($x), __A::U8($y)) => $body,
            (__A::S16($x), __A::S16($y)) => $body,
            (__A::U16($x), __A::U16($y)) => $body,
            (__A::S32($x), __A::S32($y)) => $body,
            (__A::U32($x), __A::U32($y)) => $body,
            (__A::S64($x), __A::S64($y)) => $body,
            (__A::U64($x), __A::U64($y)) => $body,
            _ => unreachable!("operands are promoted to one type first"),
        }
    }};
}
pub(crate) use each_pair;

macro_rules! from_array {
    ($($t:ty => $v:ident),*) => {$(
        impl From<Array<$t>> for AnyArray {
            fn from(a: Array<$t>) -> AnyArray {
                AnyArray::$v(a)
            }
        }
    )*};
}
from_array!(f32 => F32, f64 => F64, f16 => F16, bf16 => BF16, c32 => C32, c64 => C64, bool => B8, u8 => U8,
    i16 => S16, u16 => U16, i32 => S32, u32 => U32, i64 => S64, u64 => U64);

impl AnyArray {
    pub fn dtype(&self) -> DType {
        each!(self, x, T => x.get_type())
    }

    pub fn dims(&self) -> Dim4 {
        each!(self, x, T => x.dims())
    }

    /// The array converted to element type `to` (lazily: the JIT fuses the conversion).
    pub fn cast(&self, to: DType) -> AnyArray {
        if self.dtype() == to {
            return self.clone();
        }
        each!(self, x, S => with_type!(to, D => x.cast::<D>().into()))
    }
}

/// NumPy's name of an element type.
pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::F16 => "float16",
        // the name PyTorch, JAX and ml_dtypes give it (NumPy itself has none)
        DType::BF16 => "bfloat16",
        DType::C32 => "complex64",
        DType::C64 => "complex128",
        DType::B8 => "bool",
        DType::U8 => "uint8",
        DType::S16 => "int16",
        DType::U16 => "uint16",
        DType::S32 => "int32",
        DType::U32 => "uint32",
        DType::S64 => "int64",
        DType::U64 => "uint64",
    }
}

/// The element type of a NumPy name, `None` for types emberfire does not have.
pub fn dtype_from_name(name: &str) -> Option<DType> {
    Some(match name {
        "float32" => DType::F32,
        "float64" | "float" => DType::F64,
        "float16" => DType::F16,
        "bfloat16" => DType::BF16,
        "complex64" => DType::C32,
        "complex128" | "complex" => DType::C64,
        "bool" => DType::B8,
        "uint8" => DType::U8,
        "int16" => DType::S16,
        "uint16" => DType::U16,
        "int32" => DType::S32,
        "uint32" => DType::U32,
        "int64" | "int" => DType::S64,
        "uint64" => DType::U64,
        _ => return None,
    })
}

/// Where a type stands in promotion: bool, then integers by width, then floats by width.
fn rank(d: DType) -> u8 {
    match d {
        DType::B8 => 0,
        DType::U8 => 1,
        DType::S16 => 2,
        DType::U16 => 3,
        DType::S32 => 4,
        DType::U32 => 5,
        DType::S64 => 6,
        DType::U64 => 7,
        DType::F16 | DType::BF16 => 8,
        DType::F32 => 9,
        DType::F64 => 10,
        DType::C32 => 9,
        DType::C64 => 10,
    }
}

/// The type two operands are computed in: complex if either is (of the wider part), else the
/// higher of the two in `rank`. (Simpler than NumPy's table: mixed signed and unsigned
/// integers of one width take the unsigned type.)
pub fn promote(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    // f16 and bf16 each hold values the other cannot: f32 holds both, as PyTorch promotes them
    if a.is_16bit_float() && b.is_16bit_float() {
        return DType::F32;
    }
    let wide = rank(a).max(rank(b));
    if a.is_complex() || b.is_complex() {
        return if wide >= 10 { DType::C64 } else { DType::C32 };
    }
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}
