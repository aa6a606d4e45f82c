//! `max_ragged`: the largest value of a leading part of every run along a dimension, where
//! each run has its own length.
//!
//! It is composed of existing operations, so it runs on every backend without a kernel of its
//! own: the positions along `dim` are compared with the lengths (broadcast along `dim`), the
//! elements past a run's length are replaced by a value that can never win, and an index
//! reduction (`imax`) finds the largest value and its position. Because the kept elements are
//! a prefix of each run, a replaced element can only tie with a kept one after it, and `imax`
//! keeps the first of equal values, so the replacement never shows in the position either.

use crate::array::Array;
use crate::dtype::{DType, HasAfEnum};
use crate::jit::Expr;
use crate::ops::arith::lt;
use crate::ops::data::selectr;
use crate::ops::reduce::imax;

/// The value that stands in for elements past a run's length: NaN for floating types (which
/// `imax` skips), the smallest value for integers (`-inf` saturates to it), false for bool.
fn never_wins(t: DType) -> f64 {
    if t.is_floating() {
        f64::NAN
    } else if t == DType::B8 {
        0.0
    } else {
        f64::NEG_INFINITY
    }
}

/// The largest of the first `ragged_len` elements of every run along `dim`, and its position
/// in the run (u32), as ArrayFire's `max_ragged`.
///
/// `ragged_len` holds one length per run: it has `input`'s dims with `dim` set to 1, and so
/// do both results. A length larger than the run uses the whole run. The comparison follows
/// [`imax`](crate::imax): NaN is skipped, complex values compare by magnitude, and of equal
/// values the first position wins. A length of 0 (or a run of only NaN) gives what `imax`
/// gives for an empty run: NaN for floating types, the smallest value for integers and false
/// for bool, at position 0.
///
/// Panics if `dim` is not 0 to 3, if `ragged_len` has other dims, or if the arrays live on
/// different backends.
///
/// ```
/// use emberfire::{dim4, max_ragged, Array};
/// let vals = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(3, 2));
/// let lens = Array::new(&[9u32, 2], dim4!(1, 2));
/// let (out, idx) = max_ragged(&vals, &lens, 0);
/// assert_eq!(out.to_vec(), vec![3.0, 5.0]); // all of the first column, 2 of the second
/// assert_eq!(idx.to_vec(), vec![2, 1]);
/// ```
pub fn max_ragged<T>(
    input: &Array<T>,
    ragged_len: &Array<u32>,
    dim: i32,
) -> (Array<T::InType>, Array<u32>)
where
    T: HasAfEnum,
    T::InType: HasAfEnum,
{
    const FUNC: &str = "max_ragged";
    let dims = input.dims();
    assert!(
        (0..4).contains(&dim),
        "{FUNC}: `dim` is {dim}, but it must be 0, 1, 2 or 3; the input's dims are {dims}"
    );
    let mut want = dims;
    want[dim as usize] = 1;
    assert!(
        ragged_len.dims() == want,
        "{FUNC}: `ragged_len` must have the input's dims with dim {dim} set to 1 ({want}), but \
         its dims are {}",
        ragged_len.dims()
    );
    // Built on the input's backend, so a `ragged_len` from another one is reported by `lt`.
    let pos: Array<u32> = Array::lazy(dims, input.node().backend, Expr::Range(dim as u8));
    let kept = lt(&pos, ragged_len, true);
    let masked = selectr(input, &kept, never_wins(T::DTYPE));
    imax(&masked, dim)
}
