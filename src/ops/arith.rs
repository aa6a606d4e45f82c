//! Element-wise arithmetic, math functions, comparisons and logic, as functions with
//! arrayfire-rust's names and as operators. All of them are lazy: they build graph nodes.
//!
//! Integer semantics (the same on every backend): `+ - *` and negation wrap; division and
//! remainder by zero give 0; `i32::MIN / -1` wraps to `i32::MIN`; shifting by a negative amount
//! or by at least the width gives 0 (or -1 for a right shift of a negative value). `rem` keeps
//! the sign of the dividend (like `%`), `modulo` the sign of the divisor (floored). `sign(x)` is
//! 1 for negative values and 0 otherwise, as in ArrayFire. `root`, `atan2` and `hypot` of
//! integers are computed in f64 and rounded to the nearest integer. Ordering comparisons and min/max of
//! complex numbers compare magnitudes. bool arithmetic computes on 0/1 and reads the result
//! back as "not zero"; f16 computes in f32 and rounds once.

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Shl, Shr, Sub};
use std::ops::{
    AddAssign, BitAndAssign, BitOrAssign, BitXorAssign, DivAssign, MulAssign, RemAssign, ShlAssign,
    ShrAssign, SubAssign,
};

use half::{bf16, f16};

use super::build;
use crate::array::Array;
use crate::dtype::{c32, c64, HasAfEnum, ImplicitPromote};
use crate::jit::{BinOp, UnOp};
use crate::ops::data::constant;

macro_rules! unary_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident, $out:ident) => {
        $(#[$doc])*
        pub fn $name<T: HasAfEnum>(input: &Array<T>) -> Array<T::$out>
        where
            T::$out: HasAfEnum,
        {
            build::unary(stringify!($name), UnOp::$op, input.node())
        }
    };
}

unary_fn!(
    /// Absolute value (magnitude for complex numbers).
    ///
    /// ```
    /// use emberfire::{abs, Array, dim4};
    /// assert_eq!(abs(&Array::new(&[-1.5f32, 2.0], dim4!(2))).to_vec(), vec![1.5, 2.0]);
    /// ```
    abs, Abs, AbsOutType
);
unary_fn!(
    /// Phase angle: `atan2(im, re)` for complex numbers; π for negative and 0 for other reals.
    ///
    /// ```
    /// use emberfire::{arg, Array, c32, dim4};
    /// let z = Array::new(&[c32::new(0.0, 1.0)], dim4!(1));
    /// assert!((arg(&z).to_vec()[0] - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    /// ```
    arg, Arg, ArgOutType
);
unary_fn!(
    /// Rounds toward zero.
    ///
    /// ```
    /// use emberfire::{trunc, Array, dim4};
    /// assert_eq!(trunc(&Array::new(&[-1.7f64, 1.7], dim4!(2))).to_vec(), vec![-1.0, 1.0]);
    /// ```
    trunc, Trunc, AbsOutType
);
unary_fn!(
    /// 1 where the value is negative, 0 elsewhere (ArrayFire's definition).
    ///
    /// ```
    /// use emberfire::{sign, Array, dim4};
    /// assert_eq!(sign(&Array::new(&[-3.0f32, 0.0, 2.0], dim4!(3))).to_vec(), vec![1.0, 0.0, 0.0]);
    /// ```
    sign, Sign, AbsOutType
);
unary_fn!(
    /// Rounds to the nearest integer, halfway cases away from zero.
    ///
    /// ```
    /// use emberfire::{round, Array, dim4};
    /// assert_eq!(round(&Array::new(&[2.5f32, -2.5], dim4!(2))).to_vec(), vec![3.0, -3.0]);
    /// ```
    round, Round, AbsOutType
);
unary_fn!(
    /// Rounds toward negative infinity.
    ///
    /// ```
    /// use emberfire::{floor, Array, dim4};
    /// assert_eq!(floor(&Array::new(&[-1.5f32], dim4!(1))).to_vec(), vec![-2.0]);
    /// ```
    floor, Floor, AbsOutType
);
unary_fn!(
    /// Rounds toward positive infinity.
    ///
    /// ```
    /// use emberfire::{ceil, Array, dim4};
    /// assert_eq!(ceil(&Array::new(&[-1.5f32], dim4!(1))).to_vec(), vec![-1.0]);
    /// ```
    ceil, Ceil, AbsOutType
);
unary_fn!(
    /// The logistic function `1 / (1 + exp(-x))`.
    ///
    /// ```
    /// use emberfire::{sigmoid, Array, dim4};
    /// assert_eq!(sigmoid(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![0.5]);
    /// ```
    sigmoid, Sigmoid, AbsOutType
);
unary_fn!(
    /// `exp(x) - 1`, accurate near zero.
    ///
    /// ```
    /// use emberfire::{expm1, Array, dim4};
    /// assert_eq!(expm1(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    expm1, Expm1, AbsOutType
);
unary_fn!(
    /// The error function.
    ///
    /// ```
    /// use emberfire::{erf, Array, dim4};
    /// assert_eq!(erf(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    erf, Erf, AbsOutType
);
unary_fn!(
    /// The complementary error function `1 - erf(x)`.
    ///
    /// ```
    /// use emberfire::{erfc, Array, dim4};
    /// assert_eq!(erfc(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![1.0]);
    /// ```
    erfc, Erfc, AbsOutType
);
unary_fn!(
    /// Base-10 logarithm.
    ///
    /// ```
    /// use emberfire::{log10, Array, dim4};
    /// assert_eq!(log10(&Array::new(&[100.0f64], dim4!(1))).to_vec(), vec![2.0]);
    /// ```
    log10, Log10, AbsOutType
);
unary_fn!(
    /// `ln(1 + x)`, accurate near zero.
    ///
    /// ```
    /// use emberfire::{log1p, Array, dim4};
    /// assert_eq!(log1p(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    log1p, Log1p, AbsOutType
);
unary_fn!(
    /// Base-2 logarithm.
    ///
    /// ```
    /// use emberfire::{log2, Array, dim4};
    /// assert_eq!(log2(&Array::new(&[8.0f32], dim4!(1))).to_vec(), vec![3.0]);
    /// ```
    log2, Log2, AbsOutType
);
unary_fn!(
    /// Cube root (negative for negative inputs).
    ///
    /// ```
    /// use emberfire::{cbrt, Array, dim4};
    /// assert_eq!(cbrt(&Array::new(&[-8.0f64], dim4!(1))).to_vec(), vec![-2.0]);
    /// ```
    cbrt, Cbrt, AbsOutType
);
unary_fn!(
    /// The gamma function.
    ///
    /// ```
    /// use emberfire::{tgamma, Array, dim4};
    /// assert!((tgamma(&Array::new(&[5.0f64], dim4!(1))).to_vec()[0] - 24.0).abs() < 1e-9);
    /// ```
    tgamma, Tgamma, AbsOutType
);
unary_fn!(
    /// `ln |Γ(x)|`.
    ///
    /// ```
    /// use emberfire::{lgamma, Array, dim4};
    /// assert!(lgamma(&Array::new(&[1.0f64], dim4!(1))).to_vec()[0].abs() < 1e-12);
    /// ```
    lgamma, Lgamma, AbsOutType
);
unary_fn!(
    /// Inverse hyperbolic cosine.
    ///
    /// ```
    /// use emberfire::{acosh, Array, dim4};
    /// assert_eq!(acosh(&Array::new(&[1.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    acosh, Acosh, UnaryOutType
);
unary_fn!(
    /// Inverse cosine.
    ///
    /// ```
    /// use emberfire::{acos, Array, dim4};
    /// assert_eq!(acos(&Array::new(&[1.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    acos, Acos, UnaryOutType
);
unary_fn!(
    /// Inverse sine.
    ///
    /// ```
    /// use emberfire::{asin, Array, dim4};
    /// assert_eq!(asin(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    asin, Asin, UnaryOutType
);
unary_fn!(
    /// Inverse hyperbolic sine.
    ///
    /// ```
    /// use emberfire::{asinh, Array, dim4};
    /// assert_eq!(asinh(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    asinh, Asinh, UnaryOutType
);
unary_fn!(
    /// Inverse tangent.
    ///
    /// ```
    /// use emberfire::{atan, Array, dim4};
    /// assert_eq!(atan(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    atan, Atan, UnaryOutType
);
unary_fn!(
    /// Inverse hyperbolic tangent.
    ///
    /// ```
    /// use emberfire::{atanh, Array, dim4};
    /// assert_eq!(atanh(&Array::new(&[0.0f64], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    atanh, Atanh, UnaryOutType
);
unary_fn!(
    /// Cosine.
    ///
    /// ```
    /// use emberfire::{cos, Array, dim4};
    /// assert_eq!(cos(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![1.0]);
    /// ```
    cos, Cos, UnaryOutType
);
unary_fn!(
    /// Hyperbolic cosine.
    ///
    /// ```
    /// use emberfire::{cosh, Array, dim4};
    /// assert_eq!(cosh(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![1.0]);
    /// ```
    cosh, Cosh, UnaryOutType
);
unary_fn!(
    /// `e` raised to the power of each element.
    ///
    /// ```
    /// use emberfire::{exp, Array, dim4};
    /// assert_eq!(exp(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![1.0]);
    /// ```
    exp, Exp, UnaryOutType
);
unary_fn!(
    /// Natural logarithm.
    ///
    /// ```
    /// use emberfire::{log, Array, dim4};
    /// assert_eq!(log(&Array::new(&[1.0f32], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    log, Log, UnaryOutType
);
unary_fn!(
    /// Sine.
    ///
    /// ```
    /// use emberfire::{sin, Array, dim4};
    /// assert_eq!(sin(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    sin, Sin, UnaryOutType
);
unary_fn!(
    /// Hyperbolic sine.
    ///
    /// ```
    /// use emberfire::{sinh, Array, dim4};
    /// assert_eq!(sinh(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    sinh, Sinh, UnaryOutType
);
unary_fn!(
    /// Square root.
    ///
    /// ```
    /// use emberfire::{sqrt, Array, dim4};
    /// assert_eq!(sqrt(&Array::new(&[9.0f32], dim4!(1))).to_vec(), vec![3.0]);
    /// ```
    sqrt, Sqrt, UnaryOutType
);
unary_fn!(
    /// Reciprocal square root `1 / sqrt(x)`.
    ///
    /// ```
    /// use emberfire::{rsqrt, Array, dim4};
    /// assert_eq!(rsqrt(&Array::new(&[4.0f32], dim4!(1))).to_vec(), vec![0.5]);
    /// ```
    rsqrt, Rsqrt, UnaryOutType
);
unary_fn!(
    /// Tangent.
    ///
    /// ```
    /// use emberfire::{tan, Array, dim4};
    /// assert_eq!(tan(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    tan, Tan, UnaryOutType
);
unary_fn!(
    /// Hyperbolic tangent.
    ///
    /// ```
    /// use emberfire::{tanh, Array, dim4};
    /// assert_eq!(tanh(&Array::new(&[0.0f32], dim4!(1))).to_vec(), vec![0.0]);
    /// ```
    tanh, Tanh, UnaryOutType
);
unary_fn!(
    /// The real part (the value itself for real types).
    ///
    /// ```
    /// use emberfire::{real, Array, c32, dim4};
    /// assert_eq!(real(&Array::new(&[c32::new(1.0, 2.0)], dim4!(1))).to_vec(), vec![1.0]);
    /// ```
    real, Real, AbsOutType
);
unary_fn!(
    /// The imaginary part (0 for real types).
    ///
    /// ```
    /// use emberfire::{imag, Array, c32, dim4};
    /// assert_eq!(imag(&Array::new(&[c32::new(1.0, 2.0)], dim4!(1))).to_vec(), vec![2.0]);
    /// ```
    imag, Imag, AbsOutType
);
unary_fn!(
    /// Two raised to the power of each element.
    ///
    /// ```
    /// use emberfire::{pow2, Array, dim4};
    /// assert_eq!(pow2(&Array::new(&[3.0f32], dim4!(1))).to_vec(), vec![8.0]);
    /// ```
    pow2, Pow2, UnaryOutType
);
unary_fn!(
    /// `Γ(x + 1)`, the factorial extended to real numbers.
    ///
    /// ```
    /// use emberfire::{factorial, Array, dim4};
    /// assert!((factorial(&Array::new(&[4.0f64], dim4!(1))).to_vec()[0] - 24.0).abs() < 1e-9);
    /// ```
    factorial, Factorial, UnaryOutType
);

/// A complex array from a real one (imaginary parts 0); complex input is returned as is.
///
/// ```
/// use emberfire::{cplx, Array, c32, dim4};
/// assert_eq!(cplx(&Array::new(&[2.0f32], dim4!(1))).to_vec(), vec![c32::new(2.0, 0.0)]);
/// ```
pub fn cplx<T: HasAfEnum>(input: &Array<T>) -> Array<T::ComplexOutType>
where
    T::ComplexOutType: HasAfEnum,
{
    input.cast()
}

/// The complex conjugate (of a real array: the same values as complex numbers).
///
/// ```
/// use emberfire::{conjg, Array, c64, dim4};
/// let z = Array::new(&[c64::new(1.0, 2.0)], dim4!(1));
/// assert_eq!(conjg(&z).to_vec(), vec![c64::new(1.0, -2.0)]);
/// ```
pub fn conjg<T: HasAfEnum>(input: &Array<T>) -> Array<T::ComplexOutType>
where
    T::ComplexOutType: HasAfEnum,
{
    build::unary("conjg", UnOp::Conjg, input.node())
}

/// Bitwise complement of an integer array (logical not for bool).
///
/// ```
/// use emberfire::{bitnot, Array, dim4};
/// assert_eq!(bitnot(&Array::new(&[0u8, 0xF0], dim4!(2))).to_vec(), vec![0xFF, 0x0F]);
/// ```
pub fn bitnot<T: HasAfEnum>(input: &Array<T>) -> Array<T> {
    build::unary("bitnot", UnOp::BitNot, input.node())
}

macro_rules! predicate_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident) => {
        $(#[$doc])*
        pub fn $name<T: HasAfEnum>(input: &Array<T>) -> Array<bool> {
            build::unary(stringify!($name), UnOp::$op, input.node())
        }
    };
}

predicate_fn!(
    /// True where the value is zero.
    ///
    /// ```
    /// use emberfire::{iszero, Array, dim4};
    /// assert_eq!(iszero(&Array::new(&[0i32, 3], dim4!(2))).to_vec(), vec![true, false]);
    /// ```
    iszero, IsZero
);
predicate_fn!(
    /// True where the value is infinite.
    ///
    /// ```
    /// use emberfire::{isinf, Array, dim4};
    /// assert_eq!(isinf(&Array::new(&[f32::INFINITY, 1.0], dim4!(2))).to_vec(), vec![true, false]);
    /// ```
    isinf, IsInf
);
predicate_fn!(
    /// True where the value is NaN.
    ///
    /// ```
    /// use emberfire::{isnan, Array, dim4};
    /// assert_eq!(isnan(&Array::new(&[f64::NAN, 1.0], dim4!(2))).to_vec(), vec![true, false]);
    /// ```
    isnan, IsNan
);

/// Logical not: true where the value is zero.
///
/// ```
/// use emberfire::{not, Array, dim4};
/// assert_eq!(not(&Array::new(&[true, false], dim4!(2))).to_vec(), vec![false, true]);
/// ```
pub fn not<T: HasAfEnum>(input: &Array<T>) -> Array<bool> {
    build::unary("not", UnOp::Not, input.node())
}

/// Turns an array or a scalar into an array, so the binary functions accept both.
///
/// ```
/// use emberfire::{add, Array, dim4};
/// let a = Array::new(&[1.0f32, 2.0], dim4!(2));
/// assert_eq!(add(&a, &1.0f32, false).to_vec(), vec![2.0, 3.0]);
/// assert_eq!(add(&1.0f32, &a, false).to_vec(), vec![2.0, 3.0]);
/// ```
pub trait Convertable {
    /// The element type of the array.
    type OutType: HasAfEnum;
    /// The value as an array (a scalar becomes a single element that broadcasts).
    fn convert(&self) -> Array<Self::OutType>;
}

impl<T: HasAfEnum> Convertable for T {
    type OutType = T;
    fn convert(&self) -> Array<T> {
        constant(*self, crate::dim4::Dim4::default())
    }
}

impl<T: HasAfEnum> Convertable for Array<T> {
    type OutType = T;
    fn convert(&self) -> Array<T> {
        self.clone()
    }
}

type Promoted<T, U> =
    <<T as Convertable>::OutType as ImplicitPromote<<U as Convertable>::OutType>>::Output;

macro_rules! convertable_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident) => {
        $(#[$doc])*
        ///
        /// Either argument may be an array or a scalar. With `batch`, dimensions of size 1
        /// broadcast against the other operand; a scalar or single-element array always does.
        pub fn $name<T, U>(arg1: &T, arg2: &U, batch: bool) -> Array<Promoted<T, U>>
        where
            T: Convertable,
            U: Convertable,
            T::OutType: ImplicitPromote<U::OutType>,
            U::OutType: ImplicitPromote<T::OutType>,
        {
            let (l, r) = (arg1.convert(), arg2.convert());
            build::binary(stringify!($name), BinOp::$op, l.node(), r.node(),
                <Promoted<T, U> as HasAfEnum>::get_af_dtype(), batch)
        }
    };
}

convertable_fn!(
    /// Element-wise sum.
    ///
    /// ```
    /// use emberfire::{add, Array, dim4};
    /// let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    /// let row = Array::new(&[10.0f32, 20.0, 30.0], dim4!(1, 3));
    /// let b = add(&a, &row, true); // 2x3 by broadcasting
    /// assert_eq!(b.to_vec(), vec![11.0, 12.0, 21.0, 22.0, 31.0, 32.0]);
    /// ```
    add, Add
);
convertable_fn!(
    /// Element-wise difference.
    ///
    /// ```
    /// use emberfire::{sub, Array, dim4};
    /// assert_eq!(sub(&Array::new(&[5i32], dim4!(1)), &2i32, false).to_vec(), vec![3]);
    /// ```
    sub, Sub
);
convertable_fn!(
    /// Element-wise product.
    ///
    /// ```
    /// use emberfire::{mul, Array, dim4};
    /// assert_eq!(mul(&Array::new(&[5i32], dim4!(1)), &2i32, false).to_vec(), vec![10]);
    /// ```
    mul, Mul
);
convertable_fn!(
    /// Element-wise quotient (integer division by zero gives 0).
    ///
    /// ```
    /// use emberfire::{div, Array, dim4};
    /// assert_eq!(div(&Array::new(&[7i32, 7], dim4!(2)), &Array::new(&[2i32, 0], dim4!(2)), false).to_vec(), vec![3, 0]);
    /// ```
    div, Div
);
convertable_fn!(
    /// Remainder with the sign of the dividend (integer remainder by zero gives 0).
    ///
    /// ```
    /// use emberfire::{rem, Array, dim4};
    /// assert_eq!(rem(&Array::new(&[-7i32], dim4!(1)), &3i32, false).to_vec(), vec![-1]);
    /// ```
    rem, Rem
);
convertable_fn!(
    /// Left shift (shifts by a negative amount or by the width or more give 0).
    ///
    /// ```
    /// use emberfire::{shiftl, Array, dim4};
    /// assert_eq!(shiftl(&Array::new(&[1u32], dim4!(1)), &4u32, false).to_vec(), vec![16]);
    /// ```
    shiftl, Shl
);
convertable_fn!(
    /// Right shift, arithmetic for signed types.
    ///
    /// ```
    /// use emberfire::{shiftr, Array, dim4};
    /// assert_eq!(shiftr(&Array::new(&[-16i32], dim4!(1)), &2i32, false).to_vec(), vec![-4]);
    /// ```
    shiftr, Shr
);
convertable_fn!(
    /// Floored modulo: the result has the sign of the divisor (modulo by integer zero gives 0).
    ///
    /// ```
    /// use emberfire::{modulo, Array, dim4};
    /// assert_eq!(modulo(&Array::new(&[-7i32], dim4!(1)), &3i32, false).to_vec(), vec![2]);
    /// ```
    modulo, Mod
);
convertable_fn!(
    /// Four-quadrant inverse tangent of `arg1 / arg2`.
    ///
    /// ```
    /// use emberfire::{atan2, Array, dim4};
    /// let y = Array::new(&[1.0f64], dim4!(1));
    /// assert!((atan2(&y, &1.0f64, false).to_vec()[0] - std::f64::consts::FRAC_PI_4).abs() < 1e-15);
    /// ```
    atan2, Atan2
);
convertable_fn!(
    /// `arg1` raised to the power `arg2` (integers: exact with wrapping; negative exponents
    /// truncate).
    ///
    /// ```
    /// use emberfire::{pow, Array, dim4};
    /// assert_eq!(pow(&Array::new(&[3i32], dim4!(1)), &4i32, false).to_vec(), vec![81]);
    /// ```
    pow, Pow
);
convertable_fn!(
    /// The `arg1`-th root of `arg2`: `arg2^(1/arg1)`, as ArrayFire orders the arguments.
    ///
    /// ```
    /// use emberfire::{root, Array, dim4};
    /// assert_eq!(root(&3.0f64, &Array::new(&[27.0f64], dim4!(1)), false).to_vec(), vec![3.0]);
    /// ```
    root, Root
);

/// A complex array from real parts `arg1` and imaginary parts `arg2`. (arrayfire-rust types
/// the result as the real type; emberfire returns the complex type it holds.)
///
/// ```
/// use emberfire::{cplx2, Array, c32, dim4};
/// let z = cplx2(&Array::new(&[1.0f32], dim4!(1)), &2.0f32, false);
/// assert_eq!(z.to_vec(), vec![c32::new(1.0, 2.0)]);
/// ```
pub fn cplx2<T, U>(
    arg1: &T,
    arg2: &U,
    batch: bool,
) -> Array<<Promoted<T, U> as HasAfEnum>::ComplexOutType>
where
    T: Convertable,
    U: Convertable,
    T::OutType: ImplicitPromote<U::OutType>,
    U::OutType: ImplicitPromote<T::OutType>,
    <Promoted<T, U> as HasAfEnum>::ComplexOutType: HasAfEnum,
{
    let (l, r) = (arg1.convert(), arg2.convert());
    let t = <Promoted<T, U> as HasAfEnum>::get_af_dtype();
    let compute = if t.is_real_float() { t } else { t.complex_of().real_of() };
    build::binary("cplx2", BinOp::Cplx2, l.node(), r.node(), compute, batch)
}

macro_rules! compare_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident) => {
        $(#[$doc])*
        ///
        /// Either argument may be an array or a scalar; operands are first converted to their
        /// promoted type. With `batch`, dimensions of size 1 broadcast.
        pub fn $name<T, U>(arg1: &T, arg2: &U, batch: bool) -> Array<bool>
        where
            T: Convertable,
            U: Convertable,
            T::OutType: ImplicitPromote<U::OutType>,
            U::OutType: ImplicitPromote<T::OutType>,
        {
            let (l, r) = (arg1.convert(), arg2.convert());
            build::binary(stringify!($name), BinOp::$op, l.node(), r.node(),
                <Promoted<T, U> as HasAfEnum>::get_af_dtype(), batch)
        }
    };
}

compare_fn!(
    /// True where `arg1 < arg2`.
    ///
    /// ```
    /// use emberfire::{lt, Array, dim4};
    /// assert_eq!(lt(&Array::new(&[1, 5], dim4!(2)), &3, false).to_vec(), vec![true, false]);
    /// ```
    lt, Lt
);
compare_fn!(
    /// True where `arg1 > arg2`.
    ///
    /// ```
    /// use emberfire::{gt, Array, dim4};
    /// assert_eq!(gt(&Array::new(&[1, 5], dim4!(2)), &3, false).to_vec(), vec![false, true]);
    /// ```
    gt, Gt
);
compare_fn!(
    /// True where `arg1 <= arg2`.
    ///
    /// ```
    /// use emberfire::{le, Array, dim4};
    /// assert_eq!(le(&Array::new(&[3, 5], dim4!(2)), &3, false).to_vec(), vec![true, false]);
    /// ```
    le, Le
);
compare_fn!(
    /// True where `arg1 >= arg2`.
    ///
    /// ```
    /// use emberfire::{ge, Array, dim4};
    /// assert_eq!(ge(&Array::new(&[3, 1], dim4!(2)), &3, false).to_vec(), vec![true, false]);
    /// ```
    ge, Ge
);
compare_fn!(
    /// True where `arg1 == arg2`.
    ///
    /// ```
    /// use emberfire::{eq, Array, dim4};
    /// assert_eq!(eq(&Array::new(&[3, 1], dim4!(2)), &3, false).to_vec(), vec![true, false]);
    /// ```
    eq, Eq
);

macro_rules! array_binary_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident) => {
        $(#[$doc])*
        ///
        /// With `batch`, dimensions of size 1 broadcast against the other operand.
        pub fn $name<A, B>(lhs: &Array<A>, rhs: &Array<B>, batch: bool) -> Array<A::Output>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            build::binary(stringify!($name), BinOp::$op, lhs.node(), rhs.node(),
                <A::Output as HasAfEnum>::get_af_dtype(), batch)
        }
    };
}

array_binary_fn!(
    /// Element-wise bitwise and of integer arrays.
    ///
    /// ```
    /// use emberfire::{bitand, Array, dim4};
    /// let a = Array::new(&[0b1100u8], dim4!(1));
    /// assert_eq!(bitand(&a, &Array::new(&[0b1010u8], dim4!(1)), false).to_vec(), vec![0b1000]);
    /// ```
    bitand, BitAnd
);
array_binary_fn!(
    /// Element-wise bitwise or of integer arrays.
    ///
    /// ```
    /// use emberfire::{bitor, Array, dim4};
    /// let a = Array::new(&[0b1100u8], dim4!(1));
    /// assert_eq!(bitor(&a, &Array::new(&[0b1010u8], dim4!(1)), false).to_vec(), vec![0b1110]);
    /// ```
    bitor, BitOr
);
array_binary_fn!(
    /// Element-wise bitwise exclusive or of integer arrays.
    ///
    /// ```
    /// use emberfire::{bitxor, Array, dim4};
    /// let a = Array::new(&[0b1100u8], dim4!(1));
    /// assert_eq!(bitxor(&a, &Array::new(&[0b1010u8], dim4!(1)), false).to_vec(), vec![0b0110]);
    /// ```
    bitxor, BitXor
);
array_binary_fn!(
    /// Element-wise minimum (NaN loses to a number; complex compares magnitudes).
    ///
    /// ```
    /// use emberfire::{minof, Array, dim4};
    /// let a = Array::new(&[1.0f32, 5.0], dim4!(2));
    /// assert_eq!(minof(&a, &Array::new(&[3.0f32, 3.0], dim4!(2)), false).to_vec(), vec![1.0, 3.0]);
    /// ```
    minof, Min
);
array_binary_fn!(
    /// Element-wise maximum (NaN loses to a number; complex compares magnitudes).
    ///
    /// ```
    /// use emberfire::{maxof, Array, dim4};
    /// let a = Array::new(&[1.0f32, 5.0], dim4!(2));
    /// assert_eq!(maxof(&a, &Array::new(&[3.0f32, 3.0], dim4!(2)), false).to_vec(), vec![3.0, 5.0]);
    /// ```
    maxof, Max
);
array_binary_fn!(
    /// `sqrt(lhs² + rhs²)` without undue overflow.
    ///
    /// ```
    /// use emberfire::{hypot, Array, dim4};
    /// let a = Array::new(&[3.0f32], dim4!(1));
    /// assert_eq!(hypot(&a, &Array::new(&[4.0f32], dim4!(1)), false).to_vec(), vec![5.0]);
    /// ```
    hypot, Hypot
);

macro_rules! bool_binary_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident) => {
        $(#[$doc])*
        ///
        /// (arrayfire-rust types the result as the promoted input type; it holds booleans, and
        /// emberfire says so.) With `batch`, dimensions of size 1 broadcast.
        pub fn $name<A, B>(lhs: &Array<A>, rhs: &Array<B>, batch: bool) -> Array<bool>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            build::binary(stringify!($name), BinOp::$op, lhs.node(), rhs.node(),
                <A::Output as HasAfEnum>::get_af_dtype(), batch)
        }
    };
}

bool_binary_fn!(
    /// True where the values differ.
    ///
    /// ```
    /// use emberfire::{neq, Array, dim4};
    /// let a = Array::new(&[1, 2], dim4!(2));
    /// assert_eq!(neq(&a, &Array::new(&[1, 3], dim4!(2)), false).to_vec(), vec![false, true]);
    /// ```
    neq, Neq
);
bool_binary_fn!(
    /// Logical and: true where both values are non-zero.
    ///
    /// ```
    /// use emberfire::{and, Array, dim4};
    /// let a = Array::new(&[true, true], dim4!(2));
    /// assert_eq!(and(&a, &Array::new(&[true, false], dim4!(2)), false).to_vec(), vec![true, false]);
    /// ```
    and, And
);
bool_binary_fn!(
    /// Logical or: true where either value is non-zero.
    ///
    /// ```
    /// use emberfire::{or, Array, dim4};
    /// let a = Array::new(&[false, false], dim4!(2));
    /// assert_eq!(or(&a, &Array::new(&[true, false], dim4!(2)), false).to_vec(), vec![true, false]);
    /// ```
    or, Or
);

/// Limits values to `[lo, hi]`: `minof(maxof(input, lo), hi)`. `lo` and `hi` are arrays or
/// scalars of one type.
///
/// ```
/// use emberfire::{clamp, Array, dim4};
/// let a = Array::new(&[-2.0f32, 0.5, 3.0], dim4!(3));
/// assert_eq!(clamp(&a, &0.0f32, &1.0f32, false).to_vec(), vec![0.0, 0.5, 1.0]);
/// ```
pub fn clamp<T, C>(
    input: &Array<T>,
    arg1: &C,
    arg2: &C,
    batch: bool,
) -> Array<<T as ImplicitPromote<C::OutType>>::Output>
where
    T: HasAfEnum + ImplicitPromote<C::OutType>,
    C: Convertable,
    C::OutType: ImplicitPromote<T>,
{
    let t = <<T as ImplicitPromote<C::OutType>>::Output as HasAfEnum>::get_af_dtype();
    let (lo, hi) = (arg1.convert(), arg2.convert());
    build::broadcast_dims("clamp", &[input.dims(), lo.dims(), hi.dims()], batch);
    let low: Array<<T as ImplicitPromote<C::OutType>>::Output> =
        build::binary("clamp", BinOp::Max, input.node(), lo.node(), t, batch);
    build::binary("clamp", BinOp::Min, low.node(), hi.node(), t, batch)
}

// ---- operators ----------------------------------------------------------------------------

macro_rules! array_op {
    ($trait:ident, $method:ident, $func:ident) => {
        impl<A, B> $trait<Array<B>> for Array<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            type Output = Array<A::Output>;
            fn $method(self, rhs: Array<B>) -> Self::Output {
                $func(&self, &rhs, false)
            }
        }
        impl<A, B> $trait<&Array<B>> for Array<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            type Output = Array<A::Output>;
            fn $method(self, rhs: &Array<B>) -> Self::Output {
                $func(&self, rhs, false)
            }
        }
        impl<A, B> $trait<Array<B>> for &Array<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            type Output = Array<A::Output>;
            fn $method(self, rhs: Array<B>) -> Self::Output {
                $func(self, &rhs, false)
            }
        }
        impl<A, B> $trait<&Array<B>> for &Array<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            type Output = Array<A::Output>;
            fn $method(self, rhs: &Array<B>) -> Self::Output {
                $func(self, rhs, false)
            }
        }
    };
}

array_op!(Add, add, add);
array_op!(Sub, sub, sub);
array_op!(Mul, mul, mul);
array_op!(Div, div, div);
array_op!(Rem, rem, rem);
array_op!(Shl, shl, shiftl);
array_op!(Shr, shr, shiftr);
array_op!(BitAnd, bitand, bitand);
array_op!(BitOr, bitor, bitor);
array_op!(BitXor, bitxor, bitxor);

macro_rules! scalar_op {
    ($s:ty => $($trait:ident, $method:ident, $func:ident);*) => { $(
        impl<T> $trait<$s> for Array<T>
        where
            T: HasAfEnum + ImplicitPromote<$s>,
            $s: ImplicitPromote<T>,
        {
            type Output = Array<<T as ImplicitPromote<$s>>::Output>;
            fn $method(self, rhs: $s) -> Self::Output {
                $func(&self, &rhs, false)
            }
        }
        impl<T> $trait<$s> for &Array<T>
        where
            T: HasAfEnum + ImplicitPromote<$s>,
            $s: ImplicitPromote<T>,
        {
            type Output = Array<<T as ImplicitPromote<$s>>::Output>;
            fn $method(self, rhs: $s) -> Self::Output {
                $func(self, &rhs, false)
            }
        }
        impl<T> $trait<Array<T>> for $s
        where
            T: HasAfEnum + ImplicitPromote<$s>,
            $s: ImplicitPromote<T>,
        {
            type Output = Array<<$s as ImplicitPromote<T>>::Output>;
            fn $method(self, rhs: Array<T>) -> Self::Output {
                $func(&self, &rhs, false)
            }
        }
        impl<T> $trait<&Array<T>> for $s
        where
            T: HasAfEnum + ImplicitPromote<$s>,
            $s: ImplicitPromote<T>,
        {
            type Output = Array<<$s as ImplicitPromote<T>>::Output>;
            fn $method(self, rhs: &Array<T>) -> Self::Output {
                $func(&self, rhs, false)
            }
        }
    )* };
}

macro_rules! scalar_arith {
    ($($s:ty),*) => { $( scalar_op!($s => Add, add, add; Sub, sub, sub; Mul, mul, mul;
        Div, div, div; Rem, rem, rem); )* };
}
scalar_arith!(f32, f64, c32, c64, f16, bf16, i16, i32, i64, u8, u16, u32, u64);

// arrayfire-rust accepts a bool on the right of + - * / (as 0 or 1), not on the left and not
// for %; bool gets exactly those operators.
macro_rules! scalar_bool_rhs {
    ($($trait:ident, $method:ident, $func:ident);*) => { $(
        impl<T> $trait<bool> for Array<T>
        where
            T: HasAfEnum + ImplicitPromote<bool>,
            bool: ImplicitPromote<T>,
        {
            type Output = Array<<T as ImplicitPromote<bool>>::Output>;
            fn $method(self, rhs: bool) -> Self::Output {
                $func(&self, &rhs, false)
            }
        }
        impl<T> $trait<bool> for &Array<T>
        where
            T: HasAfEnum + ImplicitPromote<bool>,
            bool: ImplicitPromote<T>,
        {
            type Output = Array<<T as ImplicitPromote<bool>>::Output>;
            fn $method(self, rhs: bool) -> Self::Output {
                $func(self, &rhs, false)
            }
        }
    )* };
}
scalar_bool_rhs!(Add, add, add; Sub, sub, sub; Mul, mul, mul; Div, div, div);

macro_rules! scalar_bits {
    ($($s:ty),*) => { $( scalar_op!($s => Shl, shl, shiftl; Shr, shr, shiftr;
        BitAnd, bitand, bitand_s; BitOr, bitor, bitor_s; BitXor, bitxor, bitxor_s); )* };
}
scalar_bits!(i16, i32, i64, u8, u16, u32, u64, bool);

// Scalar forms of the bitwise functions, whose public forms take two arrays.
macro_rules! scalar_bit_helper {
    ($name:ident, $op:ident) => {
        fn $name<T, U>(arg1: &T, arg2: &U, batch: bool) -> Array<Promoted<T, U>>
        where
            T: Convertable,
            U: Convertable,
            T::OutType: ImplicitPromote<U::OutType>,
            U::OutType: ImplicitPromote<T::OutType>,
        {
            let (l, r) = (arg1.convert(), arg2.convert());
            build::binary(
                stringify!($op),
                BinOp::$op,
                l.node(),
                r.node(),
                <Promoted<T, U> as HasAfEnum>::get_af_dtype(),
                batch,
            )
        }
    };
}
scalar_bit_helper!(bitand_s, BitAnd);
scalar_bit_helper!(bitor_s, BitOr);
scalar_bit_helper!(bitxor_s, BitXor);

impl<T: HasAfEnum> Neg for Array<T> {
    type Output = Array<T>;
    /// Negation (wrapping for integers).
    fn neg(self) -> Array<T> {
        build::unary("neg", UnOp::Neg, self.node())
    }
}

impl<T: HasAfEnum> Neg for &Array<T> {
    type Output = Array<T>;
    fn neg(self) -> Array<T> {
        build::unary("neg", UnOp::Neg, self.node())
    }
}

impl<T: HasAfEnum> Not for Array<T> {
    type Output = Array<bool>;
    /// Logical not (see [`not`]); for a bitwise complement use [`bitnot`].
    fn not(self) -> Array<bool> {
        not(&self)
    }
}

impl<T: HasAfEnum> Not for &Array<T> {
    type Output = Array<bool>;
    fn not(self) -> Array<bool> {
        not(self)
    }
}

macro_rules! assign_op {
    ($trait:ident, $method:ident, $func:ident) => {
        impl<A, B> $trait<Array<B>> for Array<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            /// Replaces `self` with the result converted back to `self`'s type.
            fn $method(&mut self, rhs: Array<B>) {
                *self = $func(&*self, &rhs, false).cast::<A>();
            }
        }
        impl<A, B> $trait<&Array<B>> for Array<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            fn $method(&mut self, rhs: &Array<B>) {
                *self = $func(&*self, rhs, false).cast::<A>();
            }
        }
    };
}

assign_op!(AddAssign, add_assign, add);
assign_op!(SubAssign, sub_assign, sub);
assign_op!(MulAssign, mul_assign, mul);
assign_op!(DivAssign, div_assign, div);
assign_op!(RemAssign, rem_assign, rem);
assign_op!(ShlAssign, shl_assign, shiftl);
assign_op!(ShrAssign, shr_assign, shiftr);
assign_op!(BitAndAssign, bitand_assign, bitand);
assign_op!(BitOrAssign, bitor_assign, bitor);
assign_op!(BitXorAssign, bitxor_assign, bitxor);

macro_rules! scalar_assign {
    ($($s:ty),*) => { $(
        impl<T> AddAssign<$s> for Array<T> where T: HasAfEnum + ImplicitPromote<$s>, $s: ImplicitPromote<T> {
            fn add_assign(&mut self, rhs: $s) { *self = add(&*self, &rhs, false).cast::<T>(); }
        }
        impl<T> SubAssign<$s> for Array<T> where T: HasAfEnum + ImplicitPromote<$s>, $s: ImplicitPromote<T> {
            fn sub_assign(&mut self, rhs: $s) { *self = sub(&*self, &rhs, false).cast::<T>(); }
        }
        impl<T> MulAssign<$s> for Array<T> where T: HasAfEnum + ImplicitPromote<$s>, $s: ImplicitPromote<T> {
            fn mul_assign(&mut self, rhs: $s) { *self = mul(&*self, &rhs, false).cast::<T>(); }
        }
        impl<T> DivAssign<$s> for Array<T> where T: HasAfEnum + ImplicitPromote<$s>, $s: ImplicitPromote<T> {
            fn div_assign(&mut self, rhs: $s) { *self = div(&*self, &rhs, false).cast::<T>(); }
        }
    )* };
}
scalar_assign!(f32, f64, c32, c64, f16, bf16, i16, i32, i64, u8, u16, u32, u64);

// Shifting in place by an unsigned scalar, with arrayfire-rust's bounds: only where the
// promoted type is the array's own (so `i64 >>= 1u64`, which would shift as u64, is refused at
// compile time as it is there).
macro_rules! scalar_shift_assign {
    ($($s:ty),*) => { $(
        impl<T> ShlAssign<$s> for Array<T> where T: HasAfEnum + ImplicitPromote<$s, Output = T>, $s: ImplicitPromote<T> {
            fn shl_assign(&mut self, rhs: $s) { *self = shiftl(&*self, &rhs, false); }
        }
        impl<T> ShrAssign<$s> for Array<T> where T: HasAfEnum + ImplicitPromote<$s, Output = T>, $s: ImplicitPromote<T> {
            fn shr_assign(&mut self, rhs: $s) { *self = shiftr(&*self, &rhs, false); }
        }
    )* };
}
scalar_shift_assign!(u8, u16, u32, u64);
