//! Set operations on the elements of arrays, with arrayfire-rust's names and signatures:
//! `set_unique`, `set_union` and `set_intersect`.
//!
//! Inputs of any shape are read as flat sets; results are sorted ascending, distinct, and
//! shaped `[n, 1, 1, 1]` (`[0, 1, 1, 1]` when empty). Every NaN is one value (it sorts last),
//! and `-0.0` is the same value as `0.0` (results hold `0.0`). The `is_sorted` / `is_unique`
//! flags are hints that ArrayFire uses to skip work; emberfire's results are right whatever
//! they say, so a wrong hint never gives a wrong set.
//!
//! On CUDA the inputs are sorted and compacted on the device (`ops::sort_device`); the host
//! waits only for the result's length.

use crate::array::Array;
use crate::backend::cpu::sort::{intersect, unique};
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealNumber};
use crate::error_handler::OrRaise;
use crate::ops::sort::{array_on, host_of, with_sortable};
use crate::ops::sort_device;
use crate::storage::{Element, HostVec};

fn flat_result<T: HasAfEnum>(func: &str, like: &Array<T>, h: HostVec) -> Array<T> {
    let dims = Dim4::new(&[h.len() as u64, 1, 1, 1]);
    array_on(func, like.node().backend, h, dims)
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
    let _ = is_sorted; // a hint only: sorting sorted data is cheap and always right
    if let BackendKind::Cuda(_) = input.node().backend {
        return sort_device::unique("set_unique", input);
    }
    let h = host_of("set_unique", input);
    let out =
        with_sortable!("set_unique", &h, v => Element::wrap(unique(v).or_raise("set_unique")));
    flat_result("set_unique", input, out)
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
    if let BackendKind::Cuda(_) = first.node().backend {
        return sort_device::union("set_union", first, second);
    }
    let a = host_of("set_union", first);
    let b = host_of("set_union", second);
    let out = with_sortable!("set_union", &a, v => {
        let mut all = v.clone();
        all.extend_from_slice(b.as_slice());
        Element::wrap(unique(&all).or_raise("set_union"))
    });
    flat_result("set_union", first, out)
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
    if let BackendKind::Cuda(_) = first.node().backend {
        return sort_device::intersect("set_intersect", first, second);
    }
    let a = host_of("set_intersect", first);
    let b = host_of("set_intersect", second);
    let out = with_sortable!("set_intersect", &a, v => {
        Element::wrap(intersect(v, b.as_slice()).or_raise("set_intersect"))
    });
    flat_result("set_intersect", first, out)
}
