//! Host sorting: the order-preserving words of the sortable element types, and the segment
//! bookkeeping that sorts every run along one dimension of a column-major array with the
//! radix engine of `radix.rs`.
//!
//! The order it defines (documented on `sort`): integers in their natural order; floats with
//! `-inf < ... < -0.0 < 0.0 < ... < inf < NaN`, every NaN equal to every other NaN and last in
//! both directions. Equal keys keep their input order (the sort is stable), ascending and
//! descending alike.

use std::sync::Arc;

use rayon::prelude::*;

use super::radix::{self, Word};
use super::shared_ptr::SharedPtr;
use crate::backend::dense::Dense;
use crate::backend::signal::dims_usize;
use crate::backend::sort::{Segments, SetOp};
use crate::backend::Buffer;
use crate::error::Error;
use crate::jit::Node;
use crate::storage::{with_vec, Element, HostVec};

/// An element type that sorts: a bijection to words whose unsigned order is the element order.
pub(crate) trait SortKey: Element {
    /// The word type (u32 for types of 32 bits or fewer, u64 otherwise).
    type Word: Word + std::ops::Not<Output = Self::Word>;
    /// Whether the type has NaN (then `Word::ONES` is NaN's word and nothing else's).
    const HAS_NAN: bool = false;
    /// The order-preserving word.
    fn key(self) -> Self::Word;
    /// The element of a word made by `key`.
    fn from_key(w: Self::Word) -> Self;
    /// The representative that set operations use (floats: `-0.0` becomes `0.0`).
    fn set_canonical(self) -> Self {
        self
    }
}

macro_rules! unsigned_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            type Word = u32;
            #[inline(always)]
            fn key(self) -> u32 {
                self as u32
            }
            #[inline(always)]
            fn from_key(w: u32) -> Self {
                w as $t
            }
        }
    )*};
}
unsigned_key!(u8, u16, u32);

// bools sort by their stored byte, as ArrayFire sorts its `b8` bytes
impl SortKey for crate::storage::BoolByte {
    type Word = u32;
    fn key(self) -> u32 {
        self.0 as u32
    }
    fn from_key(w: u32) -> Self {
        crate::storage::BoolByte(w as u8)
    }
}

impl SortKey for u64 {
    type Word = u64;
    fn key(self) -> u64 {
        self
    }
    fn from_key(w: u64) -> Self {
        w
    }
}

// Signed integers: flipping the sign bit maps two's complement order onto unsigned order.
impl SortKey for i16 {
    type Word = u32;
    fn key(self) -> u32 {
        ((self as u16) ^ 0x8000) as u32
    }
    fn from_key(w: u32) -> Self {
        ((w as u16) ^ 0x8000) as i16
    }
}

impl SortKey for i32 {
    type Word = u32;
    fn key(self) -> u32 {
        (self as u32) ^ 0x8000_0000
    }
    fn from_key(w: u32) -> Self {
        (w ^ 0x8000_0000) as i32
    }
}

impl SortKey for i64 {
    type Word = u64;
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
    fn from_key(w: u64) -> Self {
        (w ^ (1 << 63)) as i64
    }
}

// Floats: positive values get the sign bit set, negative values have every bit flipped, so
// unsigned order is numeric order with -0.0 just below 0.0; every NaN maps to the top word.
// Written without branches (the sign becomes a mask, NaN a select) so that loops over them
// vectorise.
macro_rules! float_key {
    ($t:ty, $w:ty, $s:ty) => {
        impl SortKey for $t {
            type Word = $w;
            const HAS_NAN: bool = true;
            #[inline(always)]
            fn key(self) -> $w {
                const SIGN: $w = 1 << (<$w>::BITS - 1);
                let bits = self.to_bits();
                // all ones for a negative value, the sign bit alone for a positive one
                let flip = (((bits as $s) >> (<$w>::BITS - 1)) as $w) | SIGN;
                if self.is_nan() {
                    <$w>::MAX
                } else {
                    bits ^ flip
                }
            }
            #[inline(always)]
            fn from_key(w: $w) -> Self {
                const SIGN: $w = 1 << (<$w>::BITS - 1);
                // the sign bit alone for a word of a positive value, all ones otherwise
                let flip = ((((w as $s) >> (<$w>::BITS - 1)) as $w) ^ <$w>::MAX) | SIGN;
                if w == <$w>::MAX {
                    <$t>::NAN
                } else {
                    <$t>::from_bits(w ^ flip)
                }
            }
            fn set_canonical(self) -> Self {
                if self == 0.0 {
                    0.0
                } else {
                    self
                }
            }
        }
    };
}
float_key!(f32, u32, i32);
float_key!(f64, u64, i64);

/// The word that sorts `x` in the direction `DESCENDING`: descending inverts every word
/// except NaN's, so NaN stays last. The direction is a constant so that the inner loops test
/// nothing.
#[inline(always)]
fn directed<T: SortKey, const DESCENDING: bool>(x: T) -> T::Word {
    let k = x.key();
    if DESCENDING && !(T::HAS_NAN && k == T::Word::ONES) {
        !k
    } else {
        k
    }
}

/// Inverse of `directed` (the word map is an involution).
#[inline(always)]
fn undirected<T: SortKey, const DESCENDING: bool>(w: T::Word) -> T {
    if DESCENDING && !(T::HAS_NAN && w == T::Word::ONES) {
        T::from_key(!w)
    } else {
        T::from_key(w)
    }
}

/// Sorts the contiguous elements `src` into `out` (same length), and writes each sorted
/// element's position in `src` to `index` when one is given. `parallel` lets the engine use
/// the thread pool (callers sorting many segments at once run each on one thread). Fails with
/// [`Error::OutOfMemory`] when the words of narrow elements do not fit.
pub(crate) fn sort_run_into<T: SortKey>(
    src: &[T],
    out: &mut [T],
    index: Option<&mut [u32]>,
    descending: bool,
    parallel: bool,
) -> Result<(), Error> {
    if descending {
        sort_run_directed::<T, true>(src, out, index, parallel)
    } else {
        sort_run_directed::<T, false>(src, out, index, parallel)
    }
}

fn sort_run_directed<T: SortKey, const DESCENDING: bool>(
    src: &[T],
    out: &mut [T],
    index: Option<&mut [u32]>,
    parallel: bool,
) -> Result<(), Error> {
    let n = src.len();
    debug_assert_eq!(out.len(), n);
    let key = directed::<T, DESCENDING>;
    // words sorted in place of the output when an element is as wide as its word
    let same_size = std::mem::size_of::<T>() == std::mem::size_of::<T::Word>();
    // (the test is written out, not `same_size`, so that it stays a constant in the passes
    // that call `finish` for every element)
    let finish = |w: T::Word| {
        if std::mem::size_of::<T>() == std::mem::size_of::<T::Word>() {
            let x: T = undirected::<T, DESCENDING>(w);
            // SAFETY: `T` and its word have the same size here (checked above); the result
            // holds the bits of a valid `T`, read back as `T` by the caller.
            unsafe { std::mem::transmute_copy::<T, T::Word>(&x) }
        } else {
            w
        }
    };
    let mut own_words: Vec<T::Word> = Vec::new();
    let words: &mut [T::Word] = if same_size {
        // SAFETY: same size and (for the element types that sort) same alignment; every word
        // is written by the engine before it is read, and `finish` leaves element bits.
        unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut T::Word, n) }
    } else {
        own_words = radix::scratch_vec(n)?;
        &mut own_words
    };
    match index {
        Some(index) => radix::sort_words(src, key, |i| i as u32, finish, words, index, parallel),
        None => {
            let mut none = vec![(); n];
            radix::sort_words(src, key, |_| (), finish, words, &mut none, parallel)
        }
    }
    if !same_size {
        let conv = |(o, &w): (&mut T, &T::Word)| *o = undirected::<T, DESCENDING>(w);
        if parallel {
            out.par_iter_mut().zip(own_words.par_iter()).for_each(conv);
        } else {
            out.iter_mut().zip(own_words.iter()).for_each(conv);
        }
    }
    Ok(())
}

/// Sorts every segment along `dim`; returns the sorted elements and, if `with_index`, each
/// sorted element's original position along `dim` (u32, as ArrayFire returns it); or
/// [`Error::OutOfMemory`].
///
/// One segment (or a few) uses the whole thread pool; many segments are sorted one per task.
/// Segments along dimension 0 are read and written in place; others are gathered into a
/// contiguous run first and written back through their stride.
pub(crate) fn sort_along<T: SortKey>(
    data: &[T],
    dims: [usize; 4],
    dim: usize,
    descending: bool,
    with_index: bool,
) -> Result<(Vec<T>, Vec<u32>), Error> {
    let n: usize = dims.iter().product();
    if n == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let seg = Segments::along(dims, dim);
    let mut values: Vec<T> = radix::scratch_vec(n)?;
    let mut index: Vec<u32> = if with_index { radix::scratch_vec(n)? } else { Vec::new() };
    let few = seg.count < rayon::current_num_threads();
    if seg.stride == 1 || seg.len == 1 {
        // each segment is a contiguous run
        let len = seg.len;
        let runs = data.par_chunks(len).zip(values.par_chunks_mut(len));
        if with_index {
            let job = |((src, out), idx): ((&[T], &mut [T]), &mut [u32])| {
                sort_run_into(src, out, Some(idx), descending, few)
            };
            if few {
                data.chunks(len)
                    .zip(values.chunks_mut(len))
                    .zip(index.chunks_mut(len))
                    .try_for_each(job)?;
            } else {
                runs.zip(index.par_chunks_mut(len)).try_for_each(job)?;
            }
        } else if few {
            data.chunks(len)
                .zip(values.chunks_mut(len))
                .try_for_each(|(src, out)| sort_run_into(src, out, None, descending, true))?;
        } else {
            runs.try_for_each(|(src, out)| sort_run_into(src, out, None, descending, false))?;
        }
        return Ok((values, index));
    }
    let vp = SharedPtr(values.as_mut_ptr());
    let ip = SharedPtr(index.as_mut_ptr());
    let job = |s: usize| -> Result<(), Error> {
        let mut src: Vec<T> = radix::scratch_vec(seg.len)?;
        for (j, x) in src.iter_mut().enumerate() {
            *x = data[seg.at(s, j)];
        }
        let mut out: Vec<T> = radix::scratch_vec(seg.len)?;
        let mut idx: Vec<u32> = if with_index { radix::scratch_vec(seg.len)? } else { Vec::new() };
        let idx_out = if with_index { Some(&mut idx[..]) } else { None };
        sort_run_into(&src, &mut out, idx_out, descending, few)?;
        for j in 0..seg.len {
            let p = seg.at(s, j);
            // SAFETY: segments are disjoint, so each position is written by one task; `p < n`.
            unsafe {
                *vp.get().add(p) = out[j];
                if with_index {
                    *ip.get().add(p) = idx[j];
                }
            }
        }
        Ok(())
    };
    if few {
        (0..seg.count).try_for_each(job)?;
    } else {
        (0..seg.count).into_par_iter().try_for_each(job)?;
    }
    Ok((values, index))
}

/// Sorts a whole contiguous slice (one segment), or fails with [`Error::OutOfMemory`].
pub(crate) fn sort_slice<T: SortKey>(data: &[T], descending: bool) -> Result<Vec<T>, Error> {
    let mut out: Vec<T> = radix::scratch_vec(data.len())?;
    sort_run_into(data, &mut out, None, descending, true)?;
    Ok(out)
}

/// Reorders every segment along `dim` of `data` by `index` (positions along `dim`, as
/// `sort_along` returns them): `out[s, j] = data[s, index[s, j]]`. Fails with
/// [`Error::OutOfMemory`].
pub(crate) fn gather_along<V: Copy + Send + Sync>(
    data: &[V],
    dims: [usize; 4],
    dim: usize,
    index: &[u32],
) -> Result<Vec<V>, Error> {
    let seg = Segments::along(dims, dim);
    if seg.count == 1 {
        let mut out = crate::storage::alloc_uninit(index.len())?;
        out.par_extend(index.par_iter().map(|&i| data[i as usize]));
        return Ok(out);
    }
    let mut out: Vec<V> = radix::scratch_vec(data.len())?;
    let op = SharedPtr(out.as_mut_ptr());
    (0..seg.count).into_par_iter().for_each(|s| {
        for j in 0..seg.len {
            let p = seg.at(s, j);
            // SAFETY: segments are disjoint, so each position is written by one task; `p` is
            // inside `out`, which has as many elements as `data`.
            unsafe { *op.get().add(p) = data[seg.at(s, index[p] as usize)] };
        }
    });
    Ok(out)
}

/// The sorted, distinct elements of `data` (every NaN is one value, `-0.0` is `0.0`), or
/// [`Error::OutOfMemory`].
pub(crate) fn unique<T: SortKey>(data: &[T]) -> Result<Vec<T>, Error> {
    let n = data.len();
    let mut words: Vec<T::Word> = radix::scratch_vec(n)?;
    let mut none = vec![(); n];
    radix::sort_words(
        data,
        |x: T| x.set_canonical().key(),
        |_| (),
        |w| w,
        &mut words,
        &mut none,
        true,
    );
    words.dedup();
    crate::storage::try_mapped(&words, |&w| T::from_key(w))
}

/// The elements present in both `a` and `b`, sorted and distinct, or [`Error::OutOfMemory`].
pub(crate) fn intersect<T: SortKey>(a: &[T], b: &[T]) -> Result<Vec<T>, Error> {
    let (ua, ub) = (unique(a)?, unique(b)?);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < ua.len() && j < ub.len() {
        let (ka, kb) = (ua[i].key(), ub[j].key());
        match ka.cmp(&kb) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(ua[i]);
                i += 1;
                j += 1;
            }
        }
    }
    Ok(out)
}

/// Runs `$body` with `$v` bound to the typed vector of a sortable `HostVec` (by value or by
/// reference, as `$hv` is given); panics naming `$func` for types that do not sort.
macro_rules! with_sortable {
    ($func:expr, $hv:expr, $v:ident => $body:expr) => {{
        use $crate::storage::HostVec as H;
        match $hv {
            H::F32($v) => $body,
            H::F64($v) => $body,
            H::B8($v) => $body,
            H::S32($v) => $body,
            H::U32($v) => $body,
            H::U8($v) => $body,
            H::S64($v) => $body,
            H::U64($v) => $body,
            H::S16($v) => $body,
            H::U16($v) => $body,
            other => panic!(
                "{}: {} elements have no order (complex and f16 do not sort)",
                $func,
                other.dtype().name()
            ),
        }
    }};
}

/// The host vector holding `d`'s elements and their range in it (CPU data, dense).
fn host_elements(d: &Dense) -> (&HostVec, std::ops::Range<usize>) {
    match d.data.buffer() {
        Buffer::Host(h) => (h, d.data.offset..d.data.offset + d.dims.elements() as usize),
        Buffer::Cuda(_) => unreachable!("internal error: device data on the CPU sort path"),
    }
}

/// See `BackendKind::sort`. A dense array is read in place.
pub(crate) fn sort_node(
    func: &str,
    node: &Arc<Node>,
    dim: usize,
    descending: bool,
    with_index: bool,
) -> Result<(Buffer, Option<Buffer>), Error> {
    let d = Dense::of(node)?;
    let (h, range) = host_elements(&d);
    let du = dims_usize(d.dims);
    let single_segment = du[dim] == du.iter().product::<usize>();
    let (values, index) = with_sortable!(func, h, v => {
        let v = &v[range];
        if single_segment && !with_index {
            (Element::wrap(sort_slice(v, descending)?), None)
        } else {
            let (s, i) = sort_along(v, du, dim, descending, with_index)?;
            (Element::wrap(s), with_index.then_some(i))
        }
    });
    Ok((Buffer::host(values), index.map(|i| Buffer::host(HostVec::U32(i)))))
}

/// See `BackendKind::sort_by_key`.
pub(crate) fn sort_by_key_node(
    func: &str,
    keys: &Arc<Node>,
    vals: &Arc<Node>,
    dim: usize,
    descending: bool,
) -> Result<(Buffer, Buffer), Error> {
    let (dk, dv) = (Dense::of(keys)?, Dense::of(vals)?);
    let (hk, rk) = host_elements(&dk);
    let (hv, rv) = host_elements(&dv);
    let du = dims_usize(dk.dims);
    let (sorted_keys, index) = with_sortable!(func, hk, v => {
        let (s, i) = sort_along(&v[rk], du, dim, descending, true)?;
        (Element::wrap(s), i)
    });
    let sorted_vals =
        with_vec!(hv, v, E => Element::wrap(gather_along::<E>(&v[rv.clone()], du, dim, &index)?));
    Ok((Buffer::host(sorted_keys), Buffer::host(sorted_vals)))
}

/// See `BackendKind::set`.
pub(crate) fn set_node(
    func: &str,
    op: SetOp,
    a: &Arc<Node>,
    b: Option<&Arc<Node>>,
) -> Result<(Buffer, usize), Error> {
    let da = Dense::of(a)?;
    let db = b.map(Dense::of).transpose()?;
    let (ha, ra) = host_elements(&da);
    let other = db.as_ref().map(host_elements);
    let out = with_sortable!(func, ha, v => {
        let v = &v[ra];
        let w = || {
            let (hb, rb) = other.clone().expect("a second set");
            &hb.as_slice()[rb]
        };
        Element::wrap(match op {
            SetOp::Unique => unique(v)?,
            SetOp::Union => {
                let mut all = v.to_vec();
                all.extend_from_slice(w());
                unique(&all)?
            }
            SetOp::Intersect => intersect(v, w())?,
        })
    });
    let n = out.len();
    Ok((Buffer::host(out), n))
}

impl crate::backend::sort::Sort for super::Cpu {
    fn sort(
        &self,
        func: &str,
        node: &Arc<Node>,
        dim: usize,
        descending: bool,
        with_index: bool,
    ) -> Result<(Buffer, Option<Buffer>), Error> {
        sort_node(func, node, dim, descending, with_index)
    }

    fn sort_by_key(
        &self,
        func: &str,
        keys: &Arc<Node>,
        vals: &Arc<Node>,
        dim: usize,
        descending: bool,
    ) -> Result<(Buffer, Buffer), Error> {
        sort_by_key_node(func, keys, vals, dim, descending)
    }

    fn set(
        &self,
        func: &str,
        op: crate::backend::sort::SetOp,
        a: &Arc<Node>,
        b: Option<&Arc<Node>>,
    ) -> Result<(Buffer, usize), Error> {
        set_node(func, op, a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_words_order_and_round_trip() {
        let v = [f32::NEG_INFINITY, -1.5, -0.0, 0.0, 1e-45, 2.0, f32::INFINITY, f32::NAN];
        for w in v.windows(2) {
            assert!(w[0].key() < w[1].key());
        }
        for &x in &v[..7] {
            assert_eq!(f32::from_key(x.key()).to_bits(), x.to_bits());
            assert_eq!(undirected::<f32, true>(directed::<f32, true>(x)).to_bits(), x.to_bits());
        }
        assert_eq!((-f32::NAN).key(), u32::MAX);
        assert_eq!(directed::<f32, true>(f32::NAN), u32::MAX);
        for &x in &[i16::MIN, -1, 0, 1, i16::MAX] {
            assert_eq!(i16::from_key(x.key()), x);
        }
    }
}
