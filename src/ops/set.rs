//! Set operations on the elements of arrays, with arrayfire-rust's names and signatures:
//! `set_unique`, `set_union` and `set_intersect`.
//!
//! Inputs of any shape are read as flat sets; results are sorted ascending, distinct, and
//! shaped `[n, 1, 1, 1]` (`[0, 1, 1, 1]` when empty). Every NaN is one value (it sorts last),
//! and `-0.0` is the same value as `0.0` (results hold `0.0`). The `is_sorted` / `is_unique`
//! flags are hints that ArrayFire uses to skip work; emberfire's results are right whatever
//! they say, so a wrong hint never gives a wrong set.
//!
//! Both backends sort and compact (`backend::sort`); on CUDA the work stays on the device and
//! the host waits only for the result's length.

use crate::array::Array;
use crate::backend::sort::SetOp;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealNumber};
use crate::error_handler::OrRaise;
use crate::ops::build::common_backend;
use crate::ops::sort::array_of;

/// The set `op` of `first` (and `second`) as a column on `first`'s backend.
fn set_of<T: HasAfEnum>(
    func: &str,
    op: SetOp,
    first: &Array<T>,
    second: Option<&Array<T>>,
) -> Array<T> {
    let backend = match second {
        Some(b) => common_backend(func, &[first.node(), b.node()]),
        None => first.node().backend,
    };
    let (buf, n) =
        backend.ops().set(func, op, first.node(), second.map(|b| b.node())).or_raise(func);
    array_of(backend, buf, Dim4::new(&[n as u64, 1, 1, 1]))
}

/// The distinct elements of `input`, sorted ascending.
///
/// ```
/// use emberfire::{dim4, set_unique, Array};
/// let a = Array::new(&[3i32, 1, 3, 2, 1], dim4!(5));
/// assert_eq!(set_unique(&a, false).to_vec(), vec![1, 2, 3]);
/// ```
pub fn set_unique<T>(input: &Array<T>, is_sorted: bool) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    let _ = is_sorted;
    set_of("set_unique", SetOp::Unique, input, None)
}

/// The distinct elements present in `first` or `second`, sorted ascending.
///
/// ```
/// use emberfire::{dim4, set_union, Array};
/// let a = Array::new(&[1.0f32, 3.0], dim4!(2));
/// let b = Array::new(&[2.0f32, 3.0, 5.0], dim4!(3));
/// assert_eq!(set_union(&a, &b, true).to_vec(), vec![1.0, 2.0, 3.0, 5.0]);
/// ```
pub fn set_union<T>(first: &Array<T>, second: &Array<T>, is_unique: bool) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    let _ = is_unique;
    set_of("set_union", SetOp::Union, first, Some(second))
}

/// The distinct elements present in both `first` and `second`, sorted ascending.
///
/// ```
/// use emberfire::{dim4, set_intersect, Array};
/// let a = Array::new(&[4u16, 1, 3, 3], dim4!(4));
/// let b = Array::new(&[3u16, 4, 7], dim4!(3));
/// assert_eq!(set_intersect(&a, &b, false).to_vec(), vec![3, 4]);
/// ```
pub fn set_intersect<T>(first: &Array<T>, second: &Array<T>, is_unique: bool) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    let _ = is_unique;
    set_of("set_intersect", SetOp::Intersect, first, Some(second))
}
