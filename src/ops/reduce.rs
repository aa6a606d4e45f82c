//! Reductions along a dimension and over whole arrays, with arrayfire-rust's names and
//! signatures.
//!
//! A reduction fuses its element-wise producer: `sum(&(&a * &b), 0)` reads `a` and `b` once
//! and never writes `a * b` to memory. The CPU backend folds the evaluator's cache-sized chunks;
//! the CUDA backend generates one kernel that computes the producer and reduces it.
//!
//! A reduction along a dimension is pending until its result is read, so that reductions
//! evaluated together whose inputs share part of their trees run in one pass
//! (`backend::siblings`): the three sums of `sum(&(&w * &dx), 1)`, `sum(&(&w * &dy), 1)` and
//! `sum(&(&w * &dz), 1)` compute `w` once per element. Reading one of them (or `eval_multiple`
//! of them, or reading anything built from them) computes all three.
//!
//! Semantics shared by every function here:
//! - `dim` is 0 to 3, or -1 for the first dimension larger than 1 (0 if there is none), as in
//!   ArrayFire. The result has the input's shape with `dim` set to 1.
//! - Sums and products of floating types accumulate in f64 (c64 for complex), f16 and bf16
//!   included, and are rounded once to the output type, on both backends. Integer sums and products wrap
//!   in the output type (`T::AggregateOutType`, `T::ProductOutType`), exactly as if computed in
//!   it.
//! - `min` and `max` ignore NaN, like C's `fmin`/`fmax`; only an all-NaN run gives NaN.
//!   Complex values compare by magnitude.
//! - `imin` and `imax` (and their `_all` forms) return the extreme value and its position
//!   along `dim` (the linear position, in column-major order, for the `_all` forms) as u32.
//!   As in ArrayFire, NaN is skipped, complex values compare by magnitude, and of equal values
//!   the first position wins. A run that is all NaN gives NaN at position 0.
//! - Empty runs give the identity of the operation: 0 for sums and `count`, 1 for products,
//!   `true` for `all_true`, `false` for `any_true`; `min`, `max`, `imin` and `imax` give NaN
//!   for floating types and, for integer types, the type's largest value (min) or smallest
//!   value (max), at position 0. A reduced dimension of length 0 thus yields an output of
//!   length 1 along it.
//! - Results are reproducible: the work is split by shape only, never by thread count, and
//!   partial results are combined in a fixed order. On CUDA the split also depends on the
//!   device's number of multiprocessors, so the same model of GPU gives the same bits; the
//!   CPU and a GPU may differ in the last bits of a floating sum.
//! - The `_all` forms return `(real, imaginary)`; the imaginary part is zero for real types.
//!   64-bit integer results are exact (arrayfire-rust passes them through an f64).

use half::{bf16, f16};

use crate::array::Array;
use crate::backend::reduce::{IndexOp, Reduction};
use crate::backend::siblings::pending_reduction;
use crate::dim4::Dim4;
use crate::dtype::{Fromf64, HasAfEnum};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};
use crate::storage::{with_dtype, Element, Lit};

/// Converts to f16 by rounding to nearest, so `min_all` and `max_all` work on f16 arrays.
impl Fromf64 for f16 {
    fn fromf64(value: f64) -> Self {
        f16::from_f64(value)
    }
}

/// Converts to bf16 by rounding to nearest even, so `min_all` and `max_all` work on bf16
/// arrays.
impl Fromf64 for bf16 {
    fn fromf64(value: f64) -> Self {
        crate::storage::bf16_round::from_f64(value)
    }
}

/// The dimension `dim` names for an array of shape `dims`.
fn resolve_dim(func: &str, dims: Dim4, dim: i32) -> usize {
    match dim {
        0..=3 => dim as usize,
        -1 => (0..4).find(|&k| dims[k] > 1).unwrap_or(0),
        _ => panic!(
            "{func}: `dim` is {dim}, but it must be 0, 1, 2 or 3 (or -1 for the first dimension \
             larger than 1); the input's dims are {dims}"
        ),
    }
}

fn reduce_dim<T: HasAfEnum, O: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    dim: i32,
    op: Reduction,
) -> Array<O> {
    let node = input.node();
    let d = resolve_dim(func, node.dims, dim);
    let mut dims = node.dims;
    dims[d] = 1;
    if node.sparse().is_some() {
        // (fails at once, saying why, rather than when the result is read)
        let buf = node.backend.ops().reduce_dim(node, op, d, O::DTYPE).or_raise(func);
        let data = Data::dense(buf, dims);
        return Array::from_node(Node::ready(O::DTYPE, dims, node.backend, data));
    }
    // pending until read, so that reductions sharing part of their input share one pass
    Array::from_node(pending_reduction(node, op, d, O::DTYPE, dims))
}

fn reduce_all<T: HasAfEnum, O: HasAfEnum>(func: &str, input: &Array<T>, op: Reduction) -> O {
    let node = input.node();
    let h = node.backend.ops().reduce_all(node, op, O::DTYPE).or_raise(func);
    h.view::<O>()[0]
}

/// Splits a value into real and imaginary parts of type `B`.
fn parts<O: Element, B: HasAfEnum>(v: O) -> (B, B) {
    match v.to_lit() {
        Lit::Cplx(c) => (B::from_lit(Lit::Real(c.re)), B::from_lit(Lit::Real(c.im))),
        l => (B::from_lit(l), B::from_lit(Lit::Uint(0))),
    }
}

macro_rules! dim_reduce {
    ($(#[$doc:meta])* $name:ident, $out:ty, $op:expr) => {
        $(#[$doc])*
        pub fn $name<T>(input: &Array<T>, dim: i32) -> Array<$out>
        where
            T: HasAfEnum,
            $out: HasAfEnum,
        {
            reduce_dim::<T, $out>(stringify!($name), input, dim, $op)
        }
    };
}

dim_reduce!(
    /// Sums the elements along `dim`; integer sums wrap in `T::AggregateOutType`.
    ///
    /// ```
    /// use emberfire::{dim4, sum, Array};
    /// let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    /// assert_eq!(sum(&a, 0).to_vec(), vec![3.0, 7.0, 11.0]);
    /// assert_eq!(sum(&a, 1).to_vec(), vec![9.0, 12.0]);
    /// // fused: `a * a` is never stored
    /// assert_eq!(sum(&(&a * &a), 0).to_vec(), vec![5.0, 25.0, 61.0]);
    /// ```
    sum, T::AggregateOutType, Reduction::Sum
);

dim_reduce!(
    /// Multiplies the elements along `dim`; integer products wrap in `T::ProductOutType`.
    ///
    /// ```
    /// use emberfire::{dim4, product, Array};
    /// let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(2, 3));
    /// assert_eq!(product(&a, 0).to_vec(), vec![2, 12, 30]);
    /// assert_eq!(product(&a, 1).to_vec(), vec![15, 48]);
    /// ```
    product, T::ProductOutType, Reduction::Product
);

dim_reduce!(
    /// The smallest element along `dim`, ignoring NaN (NaN only if all are NaN); complex
    /// values compare by magnitude.
    ///
    /// ```
    /// use emberfire::{dim4, min, Array};
    /// let a = Array::new(&[3.0f64, f64::NAN, 1.0, 2.0], dim4!(2, 2));
    /// assert_eq!(min(&a, 0).to_vec(), vec![3.0, 1.0]);
    /// ```
    min, T::InType, Reduction::Min
);

dim_reduce!(
    /// The largest element along `dim`, ignoring NaN (NaN only if all are NaN); complex
    /// values compare by magnitude.
    ///
    /// ```
    /// use emberfire::{dim4, max, Array};
    /// let a = Array::new(&[3u8, 7, 1, 2], dim4!(2, 2));
    /// assert_eq!(max(&a, 1).to_vec(), vec![3, 7]);
    /// ```
    max, T::InType, Reduction::Max
);

dim_reduce!(
    /// True where every element along `dim` is non-zero (NaN counts as non-zero).
    ///
    /// ```
    /// use emberfire::{all_true, dim4, Array};
    /// let a = Array::new(&[1i32, 2, 0, 3], dim4!(2, 2));
    /// assert_eq!(all_true(&a, 0).to_vec(), vec![true, false]);
    /// ```
    all_true, bool, Reduction::AllTrue
);

dim_reduce!(
    /// True where any element along `dim` is non-zero (NaN counts as non-zero).
    ///
    /// ```
    /// use emberfire::{any_true, dim4, Array};
    /// let a = Array::new(&[0.0f32, 0.0, 0.0, 0.5], dim4!(2, 2));
    /// assert_eq!(any_true(&a, 0).to_vec(), vec![false, true]);
    /// ```
    any_true, bool, Reduction::AnyTrue
);

dim_reduce!(
    /// The number of non-zero elements along `dim`.
    ///
    /// ```
    /// use emberfire::{count, dim4, gt, Array};
    /// let a = Array::new(&[0.1f32, 0.7, 0.9, 0.2], dim4!(2, 2));
    /// let big = gt(&a, &0.5f32, false);
    /// assert_eq!(count(&big, 0).to_vec(), vec![1, 1]);
    /// ```
    count, u32, Reduction::Count
);

/// Sums the elements along `dim` with every NaN replaced by `nanval`.
///
/// ```
/// use emberfire::{dim4, sum_nan, Array};
/// let a = Array::new(&[1.0f32, f32::NAN, 3.0, 4.0], dim4!(2, 2));
/// assert_eq!(sum_nan(&a, 0, 10.0).to_vec(), vec![11.0, 7.0]);
/// ```
pub fn sum_nan<T>(input: &Array<T>, dim: i32, nanval: f64) -> Array<T::AggregateOutType>
where
    T: HasAfEnum,
    T::AggregateOutType: HasAfEnum,
{
    reduce_dim("sum_nan", input, dim, Reduction::SumNan(nanval))
}

/// Multiplies the elements along `dim` with every NaN replaced by `nanval`.
///
/// ```
/// use emberfire::{dim4, product_nan, Array};
/// let a = Array::new(&[2.0f64, f64::NAN, 3.0, 4.0], dim4!(2, 2));
/// assert_eq!(product_nan(&a, 0, 5.0).to_vec(), vec![10.0, 12.0]);
/// ```
pub fn product_nan<T>(input: &Array<T>, dim: i32, nanval: f64) -> Array<T::ProductOutType>
where
    T: HasAfEnum,
    T::ProductOutType: HasAfEnum,
{
    reduce_dim("product_nan", input, dim, Reduction::ProductNan(nanval))
}

macro_rules! all_reduce {
    ($(#[$doc:meta])* $name:ident, $assoc:ident, $op:expr) => {
        $(#[$doc])*
        #[allow(clippy::type_complexity)]
        pub fn $name<T>(
            input: &Array<T>,
        ) -> (
            <<T as HasAfEnum>::$assoc as HasAfEnum>::BaseType,
            <<T as HasAfEnum>::$assoc as HasAfEnum>::BaseType,
        )
        where
            T: HasAfEnum,
            <T as HasAfEnum>::$assoc: HasAfEnum,
            <<T as HasAfEnum>::$assoc as HasAfEnum>::BaseType: HasAfEnum + Fromf64,
        {
            parts(reduce_all::<T, T::$assoc>(stringify!($name), input, $op))
        }
    };
}

all_reduce!(
    /// The sum of all elements as `(real, imaginary)`; the imaginary part is zero for real
    /// types. Reproducible: the same input gives the same bits on every run.
    ///
    /// ```
    /// use emberfire::{dim4, sum_all, Array};
    /// let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    /// let y = Array::new(&[4.0f32, 5.0, 6.0], dim4!(3));
    /// assert_eq!(sum_all(&x), (6.0, 0.0));
    /// assert_eq!(sum_all(&(&x * &y)), (32.0, 0.0)); // a fused dot product
    /// ```
    sum_all, AggregateOutType, Reduction::Sum
);

all_reduce!(
    /// The product of all elements as `(real, imaginary)`.
    ///
    /// ```
    /// use emberfire::{c32, dim4, product_all, Array};
    /// let a = Array::new(&[c32::new(0.0, 1.0), c32::new(0.0, 1.0)], dim4!(2));
    /// assert_eq!(product_all(&a), (-1.0, 0.0));
    /// ```
    product_all, ProductOutType, Reduction::Product
);

all_reduce!(
    /// The smallest element as `(real, imaginary)`, ignoring NaN.
    ///
    /// ```
    /// use emberfire::{dim4, min_all, Array};
    /// assert_eq!(min_all(&Array::new(&[4i16, -2, 9], dim4!(3))), (-2, 0));
    /// ```
    min_all, InType, Reduction::Min
);

all_reduce!(
    /// The largest element as `(real, imaginary)`, ignoring NaN.
    ///
    /// ```
    /// use emberfire::{dim4, max_all, Array};
    /// assert_eq!(max_all(&Array::new(&[4.0f32, f32::NAN, 9.0], dim4!(3))), (9.0, 0.0));
    /// ```
    max_all, InType, Reduction::Max
);

/// The sum of all elements with every NaN replaced by `val`, as `(real, imaginary)`.
///
/// ```
/// use emberfire::{dim4, sum_nan_all, Array};
/// let a = Array::new(&[1.0f64, f64::NAN, 3.0], dim4!(3));
/// assert_eq!(sum_nan_all(&a, 0.5), (4.5, 0.0));
/// ```
#[allow(clippy::type_complexity)]
pub fn sum_nan_all<T>(
    input: &Array<T>,
    val: f64,
) -> (
    <<T as HasAfEnum>::AggregateOutType as HasAfEnum>::BaseType,
    <<T as HasAfEnum>::AggregateOutType as HasAfEnum>::BaseType,
)
where
    T: HasAfEnum,
    <T as HasAfEnum>::AggregateOutType: HasAfEnum,
    <<T as HasAfEnum>::AggregateOutType as HasAfEnum>::BaseType: HasAfEnum + Fromf64,
{
    parts(reduce_all::<T, T::AggregateOutType>("sum_nan_all", input, Reduction::SumNan(val)))
}

/// The product of all elements with every NaN replaced by `val`, as `(real, imaginary)`.
///
/// ```
/// use emberfire::{dim4, product_nan_all, Array};
/// let a = Array::new(&[2.0f32, f32::NAN, 3.0], dim4!(3));
/// assert_eq!(product_nan_all(&a, 1.0), (6.0, 0.0));
/// ```
#[allow(clippy::type_complexity)]
pub fn product_nan_all<T>(
    input: &Array<T>,
    val: f64,
) -> (
    <<T as HasAfEnum>::ProductOutType as HasAfEnum>::BaseType,
    <<T as HasAfEnum>::ProductOutType as HasAfEnum>::BaseType,
)
where
    T: HasAfEnum,
    <T as HasAfEnum>::ProductOutType: HasAfEnum,
    <<T as HasAfEnum>::ProductOutType as HasAfEnum>::BaseType: HasAfEnum + Fromf64,
{
    parts(reduce_all::<T, T::ProductOutType>("product_nan_all", input, Reduction::ProductNan(val)))
}

/// Whether every element is non-zero, as `(result, false)`.
///
/// ```
/// use emberfire::{all_true_all, dim4, Array};
/// assert_eq!(all_true_all(&Array::new(&[1u8, 2, 0], dim4!(3))), (false, false));
/// ```
pub fn all_true_all<T: HasAfEnum>(input: &Array<T>) -> (bool, bool) {
    (reduce_all::<T, bool>("all_true_all", input, Reduction::AllTrue), false)
}

/// Whether any element is non-zero, as `(result, false)`.
///
/// ```
/// use emberfire::{any_true_all, dim4, Array};
/// assert_eq!(any_true_all(&Array::new(&[0u8, 2, 0], dim4!(3))), (true, false));
/// ```
pub fn any_true_all<T: HasAfEnum>(input: &Array<T>) -> (bool, bool) {
    (reduce_all::<T, bool>("any_true_all", input, Reduction::AnyTrue), false)
}

/// The number of non-zero elements, as `(count, 0)`.
///
/// ```
/// use emberfire::{count_all, dim4, Array};
/// assert_eq!(count_all(&Array::new(&[0.0f32, 2.0, -1.0], dim4!(3))), (2, 0));
/// ```
pub fn count_all<T: HasAfEnum>(input: &Array<T>) -> (u64, u64) {
    (reduce_all::<T, u64>("count_all", input, Reduction::Count), 0)
}

fn index_dim<T: HasAfEnum, O: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    dim: i32,
    op: IndexOp,
) -> (Array<O>, Array<u32>) {
    let node = input.node();
    let d = resolve_dim(func, node.dims, dim);
    let mut dims = node.dims;
    dims[d] = 1;
    let (v, i) = node.backend.ops().reduce_dim_index(node, op, d).or_raise(func);
    let ready = |buf, dtype| Node::ready(dtype, dims, node.backend, Data::dense(buf, dims));
    (Array::from_node(ready(v, O::DTYPE)), Array::from_node(ready(i, u32::DTYPE)))
}

fn index_all<T: HasAfEnum, B: HasAfEnum + Fromf64>(
    func: &str,
    input: &Array<T>,
    op: IndexOp,
) -> (B, B, u32) {
    let node = input.node();
    let (v, i) = node.backend.ops().reduce_all_index(node, op).or_raise(func);
    let (re, im) = with_dtype!(v.dtype(), V => parts::<V, B>(v.as_slice::<V>()[0]));
    (re, im, i)
}

/// The smallest element along `dim` and its position along `dim` (u32), as ArrayFire's
/// `imin`: NaN is skipped (a run that is all NaN gives NaN at position 0), complex values
/// compare by magnitude, and of equal values the first position wins. An empty run gives the
/// identity of `min` at position 0.
///
/// ```
/// use emberfire::{dim4, imin, Array};
/// let a = Array::new(&[3.0f32, 1.0, 1.0, f32::NAN, 5.0, 2.0], dim4!(3, 2));
/// let (v, i) = imin(&a, 0);
/// assert_eq!(v.to_vec(), vec![1.0, 2.0]);
/// assert_eq!(i.to_vec(), vec![1, 2]); // the first of the two 1.0, and NaN skipped
/// ```
pub fn imin<T>(input: &Array<T>, dim: i32) -> (Array<T::InType>, Array<u32>)
where
    T: HasAfEnum,
    T::InType: HasAfEnum,
{
    index_dim("imin", input, dim, IndexOp::Min)
}

/// The largest element along `dim` and its position along `dim` (u32), with the rules of
/// [`imin`].
///
/// ```
/// use emberfire::{dim4, imax, Array};
/// let a = Array::new(&[4i32, 9, 9, 2], dim4!(2, 2));
/// let (v, i) = imax(&a, 1);
/// assert_eq!(v.to_vec(), vec![9, 9]);
/// assert_eq!(i.to_vec(), vec![1, 0]);
/// ```
pub fn imax<T>(input: &Array<T>, dim: i32) -> (Array<T::InType>, Array<u32>)
where
    T: HasAfEnum,
    T::InType: HasAfEnum,
{
    index_dim("imax", input, dim, IndexOp::Max)
}

macro_rules! all_index_reduce {
    ($(#[$doc:meta])* $name:ident, $op:expr) => {
        $(#[$doc])*
        #[allow(clippy::type_complexity)]
        pub fn $name<T>(
            input: &Array<T>,
        ) -> (
            <<T as HasAfEnum>::InType as HasAfEnum>::BaseType,
            <<T as HasAfEnum>::InType as HasAfEnum>::BaseType,
            u32,
        )
        where
            T: HasAfEnum,
            <T as HasAfEnum>::InType: HasAfEnum,
            <<T as HasAfEnum>::InType as HasAfEnum>::BaseType: HasAfEnum + Fromf64,
        {
            index_all(stringify!($name), input, $op)
        }
    };
}

all_index_reduce!(
    /// The smallest element of the whole array as `(real, imaginary, linear position)`, with
    /// the rules of [`imin`]; the position counts in column-major order.
    ///
    /// ```
    /// use emberfire::{dim4, imin_all, Array};
    /// let a = Array::new(&[5i16, -2, 7, -2], dim4!(2, 2));
    /// assert_eq!(imin_all(&a), (-2, 0, 1));
    /// ```
    imin_all,
    IndexOp::Min
);

all_index_reduce!(
    /// The largest element of the whole array as `(real, imaginary, linear position)`, with
    /// the rules of [`imin`].
    ///
    /// ```
    /// use emberfire::{c32, dim4, imax_all, Array};
    /// let a = Array::new(&[c32::new(1.0, 1.0), c32::new(0.0, -3.0)], dim4!(2));
    /// assert_eq!(imax_all(&a), (0.0, -3.0, 1)); // by magnitude
    /// ```
    imax_all,
    IndexOp::Max
);
