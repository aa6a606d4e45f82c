//! `Seq`: ArrayFire's sequence, a range of positions along one dimension, and how a sequence
//! is resolved against the length of the dimension it indexes.

use std::fmt;

use num_traits::{One, Zero};

use crate::dim4::Dim4;

/// Positions `begin, begin + step, ...` up to `end` (inclusive) along one dimension, for
/// [`index`](crate::index), [`assign_seq`](crate::assign_seq) and [`Indexer`](crate::Indexer).
///
/// The rules are ArrayFire's:
///
/// - `Seq::default()` (begin 1, end 1, step 0; also `seq!()`) spans the whole dimension.
/// - A negative `begin` or `end` counts from the end: `-1` is the last position, `-2` the one
///   before it. `Seq::new(-1.0, 0.0, -1.0)` walks a dimension backwards.
/// - `step` may be negative; then `begin` must not be less than `end`. With a positive step,
///   `begin` must not be greater than `end`. Both ends must lie inside the dimension after
///   counting from the end. Anything else panics, naming the function and the shape.
/// - Fractional values are truncated toward zero (positions are whole numbers); a step of
///   magnitude below 1 (other than the span's 0) is refused.
///
/// Indexing with sequences makes a view that shares the array's memory; nothing is copied.
///
/// ```
/// use emberfire::{Array, Seq, dim4, index};
/// let a = Array::new(&[0, 1, 2, 3, 4, 5], dim4!(6));
/// assert_eq!(index(&a, &[Seq::new(1, 4, 2)]).to_vec(), vec![1, 3]);
/// assert_eq!(index(&a, &[Seq::new(-1, 0, -2)]).to_vec(), vec![5, 3, 1]);
/// assert_eq!(index(&a, &[Seq::<i32>::default()]).to_vec(), vec![0, 1, 2, 3, 4, 5]);
/// ```
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Seq<T> {
    begin: T,
    end: T,
    step: T,
}

impl<T: One + Zero> Default for Seq<T> {
    /// The span: every position of the dimension (begin 1, end 1, step 0, as ArrayFire's
    /// `af_span`).
    ///
    /// ```
    /// use emberfire::Seq;
    /// let s = Seq::<f64>::default();
    /// assert_eq!((s.begin(), s.end(), s.step()), (1.0, 1.0, 0.0));
    /// ```
    fn default() -> Self {
        Seq { begin: T::one(), end: T::one(), step: T::zero() }
    }
}

impl<T: fmt::Display> fmt::Display for Seq<T> {
    /// `[begin: b, end: e, step: s]`.
    ///
    /// ```
    /// assert_eq!(emberfire::Seq::new(0, 4, 2).to_string(), "[begin: 0, end: 4, step: 2]");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[begin: {}, end: {}, step: {}]", self.begin, self.end, self.step)
    }
}

impl<T: Copy> Seq<T> {
    /// The positions from `begin` to `end` (inclusive) by `step`.
    ///
    /// ```
    /// let s = emberfire::Seq::new(0u32, 9, 3); // 0, 3, 6, 9
    /// assert_eq!(s.end(), 9);
    /// ```
    pub fn new(begin: T, end: T, step: T) -> Self {
        Seq { begin, end, step }
    }

    /// The first position.
    ///
    /// ```
    /// assert_eq!(emberfire::Seq::new(2, 5, 1).begin(), 2);
    /// ```
    pub fn begin(&self) -> T {
        self.begin
    }

    /// The last position (inclusive).
    ///
    /// ```
    /// assert_eq!(emberfire::Seq::new(2, 5, 1).end(), 5);
    /// ```
    pub fn end(&self) -> T {
        self.end
    }

    /// The distance between positions.
    ///
    /// ```
    /// assert_eq!(emberfire::Seq::new(5, 2, -1).step(), -1);
    /// ```
    pub fn step(&self) -> T {
        self.step
    }
}

/// A sequence's values in f64, as ArrayFire's C API holds them (`af_seq`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SeqF {
    pub begin: f64,
    pub end: f64,
    pub step: f64,
}

/// A sequence resolved against one dimension: `count` positions `start + i * step`, all inside
/// the dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Positions {
    pub start: i64,
    pub count: u64,
    pub step: i64,
}

impl Positions {
    /// Every position of a dimension of length `len`.
    pub(crate) fn all(len: u64) -> Positions {
        Positions { start: 0, count: len, step: 1 }
    }
}

impl SeqF {
    /// The span (`Seq::default()`).
    pub(crate) const SPAN: SeqF = SeqF { begin: 1.0, end: 1.0, step: 0.0 };

    pub(crate) fn of<T: Copy>(s: &Seq<T>) -> SeqF
    where
        f64: From<T>,
    {
        SeqF { begin: s.begin.into(), end: s.end.into(), step: s.step.into() }
    }

    /// Positions `begin..=end` (both may count from the end), stepping by 1 or -1 as
    /// arrayfire-rust's `rows`/`cols`/`slices` choose: backwards when `first > last` and `last`
    /// counts from the end.
    pub(crate) fn between(first: i64, last: i64) -> SeqF {
        let step = if first > last && last < 0 { -1.0 } else { 1.0 };
        SeqF { begin: first as f64, end: last as f64, step }
    }

    /// The single position `at` (which may count from the end).
    pub(crate) fn single(at: i64) -> SeqF {
        SeqF { begin: at as f64, end: at as f64, step: 1.0 }
    }

    pub(crate) fn is_span(&self) -> bool {
        self.step == 0.0 && self.begin == 1.0 && self.end == 1.0
    }

    /// Resolves the sequence against dimension `dim` of `dims`; panics (naming `func`, the
    /// sequence and the shape) when it does not fit.
    pub(crate) fn resolve(&self, func: &str, dim: usize, dims: Dim4) -> Positions {
        let len = dims[dim];
        if self.is_span() {
            return Positions::all(len);
        }
        let fail = |why: &str| -> ! {
            panic!(
                "{func}: sequence {}:{}:{} along dimension {dim} of an array of dims {dims} \
                 (length {len}): {why}",
                self.begin, self.end, self.step
            )
        };
        // ArrayFire's canonical form: a negative end point counts from the end (sign bit, so
        // -0.0 is the position past the last, which the range check then refuses).
        let canonical = |v: f64| if v.is_sign_negative() { len as f64 + v } else { v };
        let (b, e) = (canonical(self.begin), canonical(self.end));
        let step = self.step.trunc();
        if !(b.is_finite() && e.is_finite() && step.is_finite()) {
            fail("begin, end and step must be finite");
        }
        if step == 0.0 {
            fail(
                "step is 0 (only the span, Seq::default(), has step 0); use a step of 1 for one \
                 position",
            );
        }
        if !(0.0..len as f64).contains(&b) || !(0.0..len as f64).contains(&e) {
            fail(
                "begin and end must lie inside the dimension (negative values count from its end)",
            );
        }
        if (step > 0.0 && b > e) || (step < 0.0 && b < e) {
            fail(
                "the step goes away from end (a positive step needs begin <= end, a negative one \
                 begin >= end)",
            );
        }
        let count = ((e - b) / step).floor() as u64 + 1;
        Positions { start: b.trunc() as i64, count, step: step as i64 }
    }
}
