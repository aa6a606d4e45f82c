//! Element types: the `DType` tag, the `HasAfEnum` trait with its associated output types, the
//! `ImplicitPromote` table of mixed-type arithmetic, and the marker traits generic code written
//! for arrayfire-rust uses as bounds.

use half::{bf16, f16};
use num_complex::Complex;

/// Single precision complex number.
#[allow(non_camel_case_types)]
pub type c32 = Complex<f32>;
/// Double precision complex number.
#[allow(non_camel_case_types)]
pub type c64 = Complex<f64>;

/// The element type of an array, as a value. The order and names follow ArrayFire.
///
/// ```
/// use emberfire::{DType, HasAfEnum};
/// assert_eq!(f32::get_af_dtype(), DType::F32);
/// assert_eq!(DType::C64.size(), 16);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float
    F32,
    /// 32-bit complex
    C32,
    /// 64-bit float
    F64,
    /// 64-bit complex
    C64,
    /// bool, stored as a byte as ArrayFire's `b8` is: true when it is not zero. Comparisons,
    /// logical operations and casts to bool give 0 or 1; the convolution of a bool signal keeps
    /// its result in the byte (rounded, saturated into 0..=255), so a bool array can hold counts,
    /// and casts to numbers, arithmetic, `sum` and sorting read the byte. Reading to the host
    /// gives Rust `bool`s (a byte that is not zero is `true`).
    ///
    /// ```
    /// use emberfire::*;
    /// // a Life board: the convolution counts each cell's live neighbours into its byte
    /// let board = Array::new(&[true, true, true, false], dim4!(2, 2));
    /// let ring = Array::new(&[1.0f32, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0], dim4!(3, 3));
    /// let n = convolve2(&board, &ring, ConvMode::DEFAULT, ConvDomain::SPATIAL);
    /// assert_eq!(n.cast::<u8>().to_vec(), vec![2, 2, 2, 3]);
    /// assert_eq!(n.to_vec(), vec![true; 4]);
    /// assert_eq!(eq(&n, &constant(3.0f32, dim4!(1)), false).to_vec(), vec![false, false, false, true]);
    /// ```
    B8,
    /// 32-bit signed integer
    S32,
    /// 32-bit unsigned integer
    U32,
    /// 8-bit unsigned integer
    U8,
    /// 64-bit signed integer
    S64,
    /// 64-bit unsigned integer
    U64,
    /// 16-bit signed integer
    S16,
    /// 16-bit unsigned integer
    U16,
    /// 16-bit float
    F16,
    /// bfloat16: f32's 8-bit exponent (and so its range) with an 8-bit significand. It has no
    /// ArrayFire number; it comes after ArrayFire's types, so theirs keep their numbers.
    ///
    /// ```
    /// use emberfire::*;
    /// let a = Array::new(&[bf16::from_f32(1.5), bf16::from_f32(-2.0)], dim4!(2));
    /// assert_eq!(a.get_type(), DType::BF16);
    /// assert_eq!((&a * 2.0f32).to_vec(), vec![3.0f32, -4.0]);
    /// ```
    BF16,
}

/// The type with ArrayFire's number `t` (`F32` is 0, ..., `F16` is 12, in the order of
/// [`DType::ALL`]; `BF16`, which ArrayFire lacks, is 13). Panics for a larger number.
///
/// ```
/// use emberfire::DType;
/// assert_eq!(DType::from(2), DType::F64);
/// assert_eq!(DType::from(DType::U16 as u32), DType::U16);
/// ```
impl From<u32> for DType {
    fn from(t: u32) -> Self {
        *DType::ALL.get(t as usize).unwrap_or_else(|| {
            panic!("DType::from: {t} is not an element type number (0 to {})", DType::ALL.len() - 1)
        })
    }
}

impl DType {
    /// Every element type, in ArrayFire's order.
    pub const ALL: [DType; 14] = [
        DType::F32,
        DType::C32,
        DType::F64,
        DType::C64,
        DType::B8,
        DType::S32,
        DType::U32,
        DType::U8,
        DType::S64,
        DType::U64,
        DType::S16,
        DType::U16,
        DType::F16,
        DType::BF16,
    ];

    /// Size of one element in bytes.
    ///
    /// ```
    /// assert_eq!(emberfire::DType::F16.size(), 2);
    /// ```
    pub fn size(self) -> usize {
        match self {
            DType::B8 | DType::U8 => 1,
            DType::S16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::S32 | DType::U32 => 4,
            DType::F64 | DType::C32 | DType::S64 | DType::U64 => 8,
            DType::C64 => 16,
        }
    }

    /// True for the two complex types.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::C64)
    }

    /// True for f16, bf16, f32 and f64.
    pub fn is_real_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// True for the two 16-bit floating types (f16, bf16), which are stored in 16 bits and
    /// computed in f32.
    ///
    /// ```
    /// use emberfire::DType;
    /// assert!(DType::BF16.is_16bit_float() && DType::F16.is_16bit_float());
    /// assert!(!DType::F32.is_16bit_float());
    /// ```
    pub fn is_16bit_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }

    /// True for real and complex floating point types.
    pub fn is_floating(self) -> bool {
        self.is_real_float() || self.is_complex()
    }

    /// True for the integer types (bool excluded).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DType::S32 | DType::U32 | DType::U8 | DType::S64 | DType::U64 | DType::S16 | DType::U16
        )
    }

    /// The real type of a complex type; other types map to themselves.
    pub fn real_of(self) -> DType {
        match self {
            DType::C32 => DType::F32,
            DType::C64 => DType::F64,
            t => t,
        }
    }

    /// The complex type with this real type's precision (f64 and 64-bit integers give c64).
    pub fn complex_of(self) -> DType {
        match self {
            DType::F64 | DType::C64 | DType::S64 | DType::U64 => DType::C64,
            _ => DType::C32,
        }
    }

    /// The Rust name of the element type (`"f32"`, `"c32"`, `"bool"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::C32 => "c32",
            DType::F64 => "f64",
            DType::C64 => "c64",
            DType::B8 => "bool",
            DType::S32 => "i32",
            DType::U32 => "u32",
            DType::U8 => "u8",
            DType::S64 => "i64",
            DType::U64 => "u64",
            DType::S16 => "i16",
            DType::U16 => "u16",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        }
    }
}

pub(crate) mod private {
    /// Seals `HasAfEnum`: the crate's evaluation code relies on knowing every element type.
    pub trait Sealed: std::fmt::Debug + Copy + Default + Send + Sync + PartialEq + 'static {}
}

/// The element types an `Array` can hold, with the output types of operations on them.
///
/// The associated types follow arrayfire-rust exactly, so generic code written against it
/// compiles unchanged.
///
/// ```
/// use emberfire::{Array, HasAfEnum, dim4};
/// fn total<T: HasAfEnum>(a: &Array<T>) -> usize { a.elements() }
/// assert_eq!(total(&Array::new(&[1u8, 2, 3], dim4!(3))), 3);
/// ```
pub trait HasAfEnum: private::Sealed + crate::storage::Element {
    /// Always `Self`.
    type InType: HasAfEnum;
    /// The real type holding one part of a complex number; `Self` for real types.
    type BaseType: HasAfEnum;
    /// Output of `abs` and the rounding and special functions: f32 for 32-bit and smaller
    /// types, f64 for 64-bit ones, the real type for complex.
    type AbsOutType: HasAfEnum;
    /// Output of `arg`.
    type ArgOutType: HasAfEnum;
    /// Output of trigonometric, exponential and power functions: `Self` for floating types,
    /// f32 (f64 for 64-bit integers) otherwise.
    type UnaryOutType: HasAfEnum;
    /// The complex type made from this type.
    type ComplexOutType;
    /// The type that holds a mean of values of this type.
    type MeanOutType: HasAfEnum;
    /// The type of a sum of values of this type.
    type AggregateOutType: HasAfEnum;
    /// The type of a product of values of this type.
    type ProductOutType: HasAfEnum;
    /// The output type of a Sobel filter.
    type SobelOutType: HasAfEnum;

    /// The `DType` of this element type.
    fn get_af_dtype() -> DType;
}

macro_rules! has_af_enum {
    ($t:ty, $dt:ident, base=$base:ty, abs=$abs:ty, arg=$arg:ty, unary=$un:ty, complex=$cx:ty,
     mean=$mean:ty, agg=$agg:ty, prod=$prod:ty, sobel=$sob:ty) => {
        impl private::Sealed for $t {}
        impl HasAfEnum for $t {
            type InType = Self;
            type BaseType = $base;
            type AbsOutType = $abs;
            type ArgOutType = $arg;
            type UnaryOutType = $un;
            type ComplexOutType = $cx;
            type MeanOutType = $mean;
            type AggregateOutType = $agg;
            type ProductOutType = $prod;
            type SobelOutType = $sob;
            fn get_af_dtype() -> DType {
                DType::$dt
            }
        }
    };
}

#[rustfmt::skip]
mod impls {
    use super::*;
    has_af_enum!(c32, C32, base=f32, abs=f32, arg=f32, unary=c32, complex=c32, mean=c32, agg=c32, prod=c32, sobel=c32);
    has_af_enum!(c64, C64, base=f64, abs=f64, arg=f64, unary=c64, complex=c64, mean=c64, agg=c64, prod=c64, sobel=c64);
    has_af_enum!(f32, F32, base=f32, abs=f32, arg=f32, unary=f32, complex=c32, mean=f32, agg=f32, prod=f32, sobel=f32);
    has_af_enum!(f64, F64, base=f64, abs=f64, arg=f64, unary=f64, complex=c64, mean=f64, agg=f64, prod=f64, sobel=f64);
    has_af_enum!(bool, B8, base=bool, abs=f32, arg=bool, unary=f32, complex=c32, mean=f32, agg=u32, prod=bool, sobel=i32);
    has_af_enum!(u8, U8, base=u8, abs=f32, arg=u8, unary=f32, complex=c32, mean=f32, agg=u32, prod=u32, sobel=i32);
    has_af_enum!(i16, S16, base=i16, abs=f32, arg=i16, unary=f32, complex=c32, mean=f32, agg=i32, prod=i32, sobel=i32);
    has_af_enum!(u16, U16, base=u16, abs=f32, arg=u16, unary=f32, complex=c32, mean=f32, agg=u32, prod=u32, sobel=i32);
    has_af_enum!(f16, F16, base=f16, abs=f16, arg=f16, unary=f16, complex=Complex<f16>, mean=f16, agg=f32, prod=f32, sobel=f16);
    has_af_enum!(bf16, BF16, base=bf16, abs=bf16, arg=bf16, unary=bf16, complex=Complex<bf16>, mean=bf16, agg=f32, prod=f32, sobel=bf16);
    has_af_enum!(i32, S32, base=i32, abs=f32, arg=i32, unary=f32, complex=c32, mean=f32, agg=i32, prod=i32, sobel=i32);
    has_af_enum!(u32, U32, base=u32, abs=f32, arg=u32, unary=f32, complex=c32, mean=f32, agg=u32, prod=u32, sobel=i32);
    has_af_enum!(i64, S64, base=i64, abs=f64, arg=i64, unary=f64, complex=c64, mean=f64, agg=i64, prod=i64, sobel=i64);
    has_af_enum!(u64, U64, base=u64, abs=f64, arg=u64, unary=f64, complex=c64, mean=f64, agg=u64, prod=u64, sobel=i64);
}

/// The result type of a binary operation between `Self` and `RHS`, as in arrayfire-rust.
///
/// ```
/// use emberfire::{Array, dim4};
/// let a = Array::new(&[1i32, 2], dim4!(2));
/// let b = Array::new(&[0.5f32, 0.25], dim4!(2));
/// let c: Array<f32> = &a + &b; // i32 with f32 gives f32
/// assert_eq!(c.to_vec(), vec![1.5, 2.25]);
/// ```
pub trait ImplicitPromote<RHS>: HasAfEnum {
    /// The type of the result.
    type Output: HasAfEnum;
}

impl<T: HasAfEnum> ImplicitPromote<T> for T {
    type Output = T;
}

macro_rules! implicit {
    ($lhs:ty => $( $rhs:ty : $out:ty ),* $(,)?) => {
        $( impl ImplicitPromote<$rhs> for $lhs { type Output = $out; } )*
    };
}

#[rustfmt::skip]
mod promote {
    use super::*;
    implicit!(c64 => c32: c64, f64: c64, f32: c64, i64: c64, u64: c64, i32: c64, u32: c64, i16: c64, u16: c64, bool: c64, u8: c64, f16: c64, bf16: c64);
    implicit!(c32 => c64: c64, f64: c64, f32: c32, i64: c32, u64: c32, i32: c32, u32: c32, i16: c32, u16: c32, bool: c32, u8: c32, f16: c32, bf16: c32);
    implicit!(f64 => c64: c64, c32: c64, f32: f64, i64: f64, u64: f64, i32: f64, u32: f64, i16: f64, u16: f64, bool: f64, u8: f64, f16: f64, bf16: f64);
    implicit!(f32 => c64: c64, c32: c32, f64: f64, i64: f32, u64: f32, i32: f32, u32: f32, i16: f32, u16: f32, bool: f32, u8: f32, f16: f32, bf16: f32);
    implicit!(i64 => c64: c64, c32: c32, f64: f64, f32: f32, u64: u64, i32: i64, u32: i64, i16: i64, u16: i64, bool: i64, u8: i64, f16: f16, bf16: bf16);
    implicit!(u64 => c64: c64, c32: c32, f64: f64, f32: f32, i64: u64, i32: u64, u32: u64, i16: u64, u16: u64, bool: u64, u8: u64, f16: f16, bf16: bf16);
    implicit!(i32 => c64: c64, c32: c32, f64: f64, f32: f32, i64: i64, u64: u64, u32: u32, i16: i32, u16: i32, bool: i32, u8: i32, f16: f16, bf16: bf16);
    implicit!(u32 => c64: c64, c32: c32, f64: f64, f32: f32, i64: i64, u64: u64, i32: u32, i16: u32, u16: u32, bool: u32, u8: u32, f16: f16, bf16: bf16);
    implicit!(i16 => c64: c64, c32: c32, f64: f64, f32: f32, i64: i64, u64: u64, i32: i32, u32: u32, u16: u16, bool: i16, u8: i16, f16: f16, bf16: bf16);
    implicit!(u16 => c64: c64, c32: c32, f64: f64, f32: f32, i64: i64, u64: u64, i32: i32, u32: u32, i16: u16, bool: u16, u8: u16, f16: f16, bf16: bf16);
    implicit!(u8 => c64: c64, c32: c32, f64: f64, f32: f32, i64: i64, u64: u64, i32: i32, u32: u32, i16: i16, u16: u16, bool: u8, f16: f16, bf16: bf16);
    implicit!(bool => c64: c64, c32: c32, f64: f64, f32: f32, i64: i64, u64: u64, i32: i32, u32: u32, i16: i16, u16: u16, u8: u8, f16: f16, bf16: bf16);
    implicit!(bf16 => c64: c64, c32: c32, f64: f64, f32: f32, i64: bf16, u64: bf16, i32: bf16, u32: bf16, i16: bf16, u16: bf16, bool: bf16, u8: bf16, f16: f32);
    implicit!(f16 => c64: c64, c32: c32, f64: f64, f32: f32, i64: f16, u64: f16, i32: f16, u32: f16, i16: f16, u16: f16, bool: f16, u8: f16, bf16: f32);
}

macro_rules! marker {
    ($(#[$m:meta])* $name:ident: $($t:ty),*) => {
        $(#[$m])*
        pub trait $name: HasAfEnum {}
        $( impl $name for $t {} )*
    };
}

marker!(
    /// Real floating point types (f32, f64).
    RealFloating: f32, f64
);
marker!(
    /// Complex floating point types (c32, c64).
    ComplexFloating: c32, c64
);
marker!(
    /// Types that hold real numbers only.
    RealNumber: f64, f32, i32, u32, i16, u16, u8, bool, u64, i64
);
marker!(
    /// Types accepted by scans.
    Scanable: i32, u32, u64, i64
);
marker!(
    /// Types accepted by native image loading and saving.
    ImageNativeType: f32, u16, u8
);
marker!(
    /// Types accepted by image filters.
    ImageFilterType: f64, f32, i32, u32, i16, u16, u8, bool
);
marker!(
    /// Types convertible between grayscale and RGB.
    GrayRGBConvertible: f64, f32, i32, u32, i16, u16, u8
);
marker!(
    /// Types whose image moments can be computed.
    MomentsComputable: f64, f32, i32, u32, i16, u16, u8
);
marker!(
    /// Types whose median can be computed.
    MedianComputable: f64, f32, i32, u32, i16, u16, u8
);
marker!(
    /// Types accepted by edge detection.
    EdgeComputable: f64, f32, i32, u32, i16, u16, u8
);
marker!(
    /// Types whose covariance can be computed.
    CovarianceComputable: f64, f32, i32, u32, i16, u16, u8, u64, i64
);
marker!(
    /// Types accepted as keys of by-key reductions.
    ReduceByKeyInput: i32, u32
);
marker!(
    /// Types that can index arrays.
    IndexableType: f64, i64, u64, f32, i32, u32, i16, u16, u8
);
marker!(
    /// Integer types (bool included, as in arrayfire-rust).
    IntegralType: i64, u64, i32, u32, i16, u16, u8, bool
);
marker!(
    /// Inputs of confidence connected components.
    ConfidenceCCInput: f32, u32, u16, u8
);
marker!(
    /// Inputs of deconvolution.
    DeconvInput: f32, i16, u16, u8
);

/// Types `randn` and `random_normal` draw: the floating point types of [`FloatingPoint`], and
/// bf16 (f32 draws rounded to nearest even), which the linear algebra and FFT functions that
/// `FloatingPoint` admits do not take.
///
/// ```
/// use emberfire::*;
/// fn normal<T: RandomNormal>(n: u64) -> Array<T> { randn::<T>(dim4!(n)) }
/// assert_eq!(normal::<bf16>(5).elements(), 5);
/// ```
pub trait RandomNormal: HasAfEnum {}
impl RandomNormal for f32 {}
impl RandomNormal for f64 {}
impl RandomNormal for c32 {}
impl RandomNormal for c64 {}
impl RandomNormal for bf16 {}

/// Real or complex floating point types. Every one is also [`RandomNormal`], so code generic
/// over `FloatingPoint` can call `randn`.
pub trait FloatingPoint: RandomNormal {
    /// True for real types.
    fn is_real() -> bool {
        false
    }
    /// True for complex types.
    fn is_complex() -> bool {
        false
    }
}
impl FloatingPoint for c64 {
    fn is_complex() -> bool {
        true
    }
}
impl FloatingPoint for c32 {
    fn is_complex() -> bool {
        true
    }
}
impl FloatingPoint for f64 {
    fn is_real() -> bool {
        true
    }
}
impl FloatingPoint for f32 {
    fn is_real() -> bool {
        true
    }
}

/// Conversion of an f64 (the host type of whole-array reductions) to an element type.
pub trait Fromf64 {
    /// Converts, truncating toward zero for integers; bool is `value > 0`.
    fn fromf64(value: f64) -> Self;
}
macro_rules! fromf64 {
    ($($t:ty),*) => { $( impl Fromf64 for $t { fn fromf64(v: f64) -> Self { v as $t } } )* };
}
fromf64!(usize, f64, u64, i64, f32, u32, i32, u16, i16, u8);
impl Fromf64 for bool {
    fn fromf64(v: f64) -> Self {
        v > 0.0
    }
}
