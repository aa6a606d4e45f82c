//! `Scalar`: one value of any element type, tagged with its type, as arrayfire-rust defines it.

use crate::dtype::{c32, c64, DType};

/// One value of one of ArrayFire's element types (half precision has no variant, as in
/// arrayfire-rust).
///
/// ```
/// use emberfire::{DType, Scalar};
/// let s = Scalar::S32(-3);
/// assert_eq!(s.dtype(), DType::S32);
/// assert_ne!(s, Scalar::S64(-3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// 32-bit float
    F32(f32),
    /// 32-bit complex
    C32(c32),
    /// 64-bit float
    F64(f64),
    /// 64-bit complex
    C64(c64),
    /// bool
    B8(bool),
    /// 32-bit signed integer
    S32(i32),
    /// 32-bit unsigned integer
    U32(u32),
    /// 8-bit unsigned integer
    U8(u8),
    /// 64-bit signed integer
    S64(i64),
    /// 64-bit unsigned integer
    U64(u64),
    /// 16-bit signed integer
    S16(i16),
    /// 16-bit unsigned integer
    U16(u16),
}

impl Scalar {
    /// The element type of the value.
    ///
    /// ```
    /// use emberfire::{c32, DType, Scalar};
    /// assert_eq!(Scalar::C32(c32::new(1.0, 2.0)).dtype(), DType::C32);
    /// assert_eq!(Scalar::B8(true).dtype(), DType::B8);
    /// ```
    pub fn dtype(&self) -> DType {
        match self {
            Scalar::F32(_) => DType::F32,
            Scalar::C32(_) => DType::C32,
            Scalar::F64(_) => DType::F64,
            Scalar::C64(_) => DType::C64,
            Scalar::B8(_) => DType::B8,
            Scalar::S32(_) => DType::S32,
            Scalar::U32(_) => DType::U32,
            Scalar::U8(_) => DType::U8,
            Scalar::S64(_) => DType::S64,
            Scalar::U64(_) => DType::U64,
            Scalar::S16(_) => DType::S16,
            Scalar::U16(_) => DType::U16,
        }
    }
}
