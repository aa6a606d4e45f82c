//! The host sorting engine: a stable, parallel LSD radix sort on order-preserving integer
//! words, and the segment bookkeeping that sorts every run along one dimension of a
//! column-major array.
//!
//! The order it defines (documented on `sort`): integers in their natural order; floats with
//! `-inf < ... < -0.0 < 0.0 < ... < inf < NaN`, every NaN equal to every other NaN and last in
//! both directions. Equal keys keep their input order (the sort is stable), ascending and
//! descending alike.

use rayon::prelude::*;

use crate::storage::{alloc_uninit, Element};

/// An unsigned word that a radix sort orders, one byte per pass.
pub(crate) trait RadixWord: Copy + Send + Sync + Ord + Default + 'static {
    /// How many 8-bit passes a full sort needs.
    const BYTES: u32;
    /// The largest word (where every NaN goes).
    const MAX: Self;
    /// Byte `pass` (0 = least significant).
    fn digit(self, pass: u32) -> usize;
    /// Bitwise not: turns ascending order into descending.
    fn not(self) -> Self;
}

impl RadixWord for u32 {
    const BYTES: u32 = 4;
    const MAX: Self = u32::MAX;
    #[inline(always)]
    fn digit(self, pass: u32) -> usize {
        ((self >> (8 * pass)) & 0xff) as usize
    }
    #[inline(always)]
    fn not(self) -> Self {
        !self
    }
}

impl RadixWord for u64 {
    const BYTES: u32 = 8;
    const MAX: Self = u64::MAX;
    #[inline(always)]
    fn digit(self, pass: u32) -> usize {
        ((self >> (8 * pass)) & 0xff) as usize
    }
    #[inline(always)]
    fn not(self) -> Self {
        !self
    }
}

/// An element type that sorts: a bijection to words whose unsigned order is the element order.
pub(crate) trait SortKey: Element {
    /// The word type (u32 for types of 32 bits or fewer, u64 otherwise).
    type Word: RadixWord;
    /// Whether the type has NaN (then `Word::MAX` is NaN's word and nothing else's).
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

impl SortKey for bool {
    type Word = u32;
    fn key(self) -> u32 {
        self as u32
    }
    fn from_key(w: u32) -> Self {
        w != 0
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
macro_rules! float_key {
    ($t:ty, $w:ty) => {
        impl SortKey for $t {
            type Word = $w;
            const HAS_NAN: bool = true;
            #[inline(always)]
            fn key(self) -> $w {
                const SIGN: $w = 1 << (<$w>::BITS - 1);
                let bits = self.to_bits();
                if self.is_nan() {
                    <$w>::MAX
                } else if bits & SIGN != 0 {
                    !bits
                } else {
                    bits | SIGN
                }
            }
            #[inline(always)]
            fn from_key(w: $w) -> Self {
                const SIGN: $w = 1 << (<$w>::BITS - 1);
                if w == <$w>::MAX {
                    <$t>::NAN
                } else if w & SIGN != 0 {
                    <$t>::from_bits(w & !SIGN)
                } else {
                    <$t>::from_bits(!w)
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
float_key!(f32, u32);
float_key!(f64, u64);

/// The word that sorts `x` in the requested direction: descending inverts every word except
/// NaN's, so NaN stays last.
#[inline(always)]
pub(crate) fn directed_key<T: SortKey>(x: T, descending: bool) -> T::Word {
    let k = x.key();
    if descending && !(T::HAS_NAN && k == T::Word::MAX) {
        k.not()
    } else {
        k
    }
}

/// Inverse of `directed_key` (the word map is an involution).
#[inline(always)]
fn undirect<T: SortKey>(w: T::Word, descending: bool) -> T {
    if descending && !(T::HAS_NAN && w == T::Word::MAX) {
        T::from_key(w.not())
    } else {
        T::from_key(w)
    }
}

/// A raw pointer that parallel scatter passes share; each writes disjoint positions.
#[derive(Clone, Copy)]
struct SharedPtr<T>(*mut T);
unsafe impl<T> Send for SharedPtr<T> {}
unsafe impl<T> Sync for SharedPtr<T> {}
impl<T> SharedPtr<T> {
    #[inline(always)]
    fn at(self, i: usize) -> *mut T {
        // SAFETY (of callers): `i` is inside the allocation the pointer came from.
        unsafe { self.0.add(i) }
    }
}

/// A vector of `n` elements whose contents are written before they are read.
fn scratch<T: Copy>(n: usize) -> Vec<T> {
    let mut v = alloc_uninit::<T>(n);
    // SAFETY: only used for plain-old-data words and indices (or `()`); every position is
    // written by a scatter pass before anything reads it.
    unsafe { v.set_len(n) };
    v
}

/// Sorts `keys` (and moves `payload` along with them, `payload` may be `Vec<()>`), stable,
/// least significant byte first. `parallel` splits every pass into chunks over the thread pool;
/// passes whose byte is the same for every key are skipped.
pub(crate) fn radix_sort<W: RadixWord, P: Copy + Send + Sync>(
    mut keys: Vec<W>,
    mut payload: Vec<P>,
    parallel: bool,
) -> (Vec<W>, Vec<P>) {
    let n = keys.len();
    debug_assert_eq!(n, payload.len());
    if n < 2 {
        return (keys, payload);
    }
    let chunks =
        if parallel { (n / (1 << 15)).clamp(1, 4 * rayon::current_num_threads()) } else { 1 };
    let chunk = n.div_ceil(chunks);
    let mut keys2: Vec<W> = scratch(n);
    let mut payload2: Vec<P> = scratch(n);
    // One chunk: its histogram of every byte does not depend on the order, so one read
    // counts them all and each pass is a single scatter.
    let mut whole = vec![[0usize; 256]; if chunks == 1 { W::BYTES as usize } else { 0 }];
    if chunks == 1 {
        for &k in &keys {
            for (pass, h) in whole.iter_mut().enumerate() {
                h[k.digit(pass as u32)] += 1;
            }
        }
    }
    for pass in 0..W::BYTES {
        let histogram = |c: usize| {
            let mut h = [0usize; 256];
            for &k in &keys[c * chunk..n.min((c + 1) * chunk)] {
                h[k.digit(pass)] += 1;
            }
            h
        };
        let hists: Vec<[usize; 256]> = if chunks > 1 {
            (0..chunks).into_par_iter().map(histogram).collect()
        } else {
            vec![whole[pass as usize]]
        };
        let mut total = [0usize; 256];
        for h in &hists {
            for d in 0..256 {
                total[d] += h[d];
            }
        }
        if total.contains(&n) {
            continue; // every key has the same byte here: the order does not change
        }
        // where chunk c writes its first key of digit d: all smaller digits, then the same
        // digit of earlier chunks (this is what keeps the sort stable)
        let mut offsets = vec![[0usize; 256]; chunks];
        let mut run = 0;
        for d in 0..256 {
            for c in 0..chunks {
                offsets[c][d] = run;
                run += hists[c][d];
            }
        }
        let kdst = SharedPtr(keys2.as_mut_ptr());
        let pdst = SharedPtr(payload2.as_mut_ptr());
        let (ksrc, psrc) = (&keys, &payload);
        let scatter = |(c, mut off): (usize, [usize; 256])| {
            let range = c * chunk..n.min((c + 1) * chunk);
            for (&k, &p) in ksrc[range.clone()].iter().zip(&psrc[range]) {
                let d = k.digit(pass);
                let o = off[d];
                off[d] += 1;
                // SAFETY: the offsets of all chunks and digits partition 0..n, so every
                // position is written exactly once, by one chunk.
                unsafe {
                    *kdst.at(o) = k;
                    *pdst.at(o) = p;
                }
            }
        };
        if chunks > 1 {
            offsets.into_par_iter().enumerate().for_each(scatter);
        } else {
            offsets.into_iter().enumerate().for_each(scatter);
        }
        std::mem::swap(&mut keys, &mut keys2);
        std::mem::swap(&mut payload, &mut payload2);
    }
    (keys, payload)
}

/// Segments below this length are sorted with the standard library's stable merge sort.
const SMALL_SEGMENT: usize = 2048;

/// Sorts one segment of words, returning the sorted words and, if asked, the original
/// positions in sorted order.
fn sort_segment<W: RadixWord>(
    keys: Vec<W>,
    with_index: bool,
    parallel: bool,
) -> (Vec<W>, Vec<u32>) {
    let n = keys.len();
    if n < SMALL_SEGMENT {
        if with_index {
            let mut pairs: Vec<(W, u32)> = keys.into_iter().zip(0u32..).collect();
            pairs.sort_by_key(|p| p.0);
            pairs.into_iter().unzip()
        } else {
            let mut k = keys;
            k.sort_unstable(); // equal words are identical elements: stability is moot
            (k, Vec::new())
        }
    } else if with_index {
        let index: Vec<u32> = if parallel {
            (0..n as u32).into_par_iter().collect()
        } else {
            (0..n as u32).collect()
        };
        radix_sort(keys, index, parallel)
    } else {
        let units = vec![(); n];
        (radix_sort(keys, units, parallel).0, Vec::new())
    }
}

/// The layout of the segments along `dim` of a column-major shape: `count` segments of `len`
/// elements `stride` apart; segment `s` starts at `(s / stride) * len * stride + s % stride`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segments {
    pub(crate) len: usize,
    pub(crate) stride: usize,
    pub(crate) count: usize,
}

impl Segments {
    pub(crate) fn along(dims: [usize; 4], dim: usize) -> Segments {
        let len = dims[dim];
        let stride: usize = dims[..dim].iter().product();
        let outer: usize = dims[dim + 1..].iter().product();
        Segments { len, stride, count: stride * outer }
    }

    /// Position of element `j` of segment `s`.
    #[inline(always)]
    pub(crate) fn at(&self, s: usize, j: usize) -> usize {
        (s / self.stride) * self.len * self.stride + s % self.stride + j * self.stride
    }
}

/// Sorts every segment along `dim`; returns the sorted elements and, if `with_index`, each
/// sorted element's original position along `dim` (u32, as ArrayFire returns it).
pub(crate) fn sort_along<T: SortKey>(
    data: &[T],
    dims: [usize; 4],
    dim: usize,
    descending: bool,
    with_index: bool,
) -> (Vec<T>, Vec<u32>) {
    let n: usize = dims.iter().product();
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let seg = Segments::along(dims, dim);
    if seg.count == 1 {
        let keys: Vec<T::Word> = data.par_iter().map(|&x| directed_key(x, descending)).collect();
        let (words, index) = sort_segment(keys, with_index, true);
        let values = words.into_par_iter().map(|w| undirect::<T>(w, descending)).collect();
        return (values, index);
    }
    let sorted: Vec<(Vec<T::Word>, Vec<u32>)> = (0..seg.count)
        .into_par_iter()
        .map(|s| {
            let keys = (0..seg.len).map(|j| directed_key(data[seg.at(s, j)], descending)).collect();
            sort_segment(keys, with_index, false)
        })
        .collect();
    let mut values: Vec<T> = vec![T::from_key(T::Word::default()); n];
    let mut index = if with_index { vec![0u32; n] } else { Vec::new() };
    for (s, (words, idx)) in sorted.into_iter().enumerate() {
        for (j, w) in words.into_iter().enumerate() {
            values[seg.at(s, j)] = undirect::<T>(w, descending);
        }
        for (j, i) in idx.into_iter().enumerate() {
            index[seg.at(s, j)] = i;
        }
    }
    (values, index)
}

/// Reinterprets a vector of `A` as a vector of `B` in place, when the two have the same size
/// and alignment (an element type and its sort word); `None` otherwise.
fn reinterpret<A: Copy, B: Copy>(v: Vec<A>) -> Result<Vec<B>, Vec<A>> {
    use std::mem::{align_of, size_of, ManuallyDrop};
    if size_of::<A>() != size_of::<B>() || align_of::<A>() != align_of::<B>() {
        return Err(v);
    }
    let mut v = ManuallyDrop::new(v);
    // SAFETY: same size and alignment, both plain-old-data (every bit pattern of the word
    // types is valid, and words are only turned back into `T` through `from_key`, whose
    // results are valid `T`s), so the allocation is valid for `B` with the same layout.
    Ok(unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut B, v.len(), v.capacity()) })
}

/// Sorts a whole vector (one segment), reusing its memory for the words when the element and
/// word sizes match: the plain `sort` of a vector allocates only the radix scratch.
pub(crate) fn sort_vector<T: SortKey>(data: Vec<T>, descending: bool) -> Vec<T> {
    match reinterpret::<T, T::Word>(data) {
        Ok(mut words) => {
            words.par_iter_mut().for_each(|w| {
                // SAFETY of the read: `w` still holds the bits of a `T` here
                let x: T = unsafe { std::mem::transmute_copy(w) };
                *w = directed_key(x, descending);
            });
            let (mut words, _) = sort_segment(words, false, true);
            words.par_iter_mut().for_each(|w| {
                let x: T = undirect(*w, descending);
                // SAFETY: same size (checked by `reinterpret`); stores the bits of a `T`
                *w = unsafe { std::mem::transmute_copy(&x) };
            });
            reinterpret::<T::Word, T>(words).unwrap_or_else(|_| unreachable!("sizes match"))
        }
        Err(data) => sort_along(&data, [data.len(), 1, 1, 1], 0, descending, false).0,
    }
}

/// Reorders every segment along `dim` of `data` by `index` (positions along `dim`, as
/// `sort_along` returns them): `out[s, j] = data[s, index[s, j]]`.
pub(crate) fn gather_along<V: Copy + Send + Sync>(
    data: &[V],
    dims: [usize; 4],
    dim: usize,
    index: &[u32],
) -> Vec<V> {
    let seg = Segments::along(dims, dim);
    if seg.count == 1 {
        return index.par_iter().map(|&i| data[i as usize]).collect();
    }
    let mut out = data.to_vec();
    for s in 0..seg.count {
        for j in 0..seg.len {
            let p = seg.at(s, j);
            out[p] = data[seg.at(s, index[p] as usize)];
        }
    }
    out
}

/// The sorted, distinct elements of `data` (every NaN is one value, `-0.0` is `0.0`).
pub(crate) fn unique<T: SortKey>(data: &[T]) -> Vec<T> {
    let keys: Vec<T::Word> = data.par_iter().map(|&x| x.set_canonical().key()).collect();
    let (mut words, _) = sort_segment(keys, false, true);
    words.dedup();
    words.into_iter().map(T::from_key).collect()
}

/// The elements present in both `a` and `b`, sorted and distinct.
pub(crate) fn intersect<T: SortKey>(a: &[T], b: &[T]) -> Vec<T> {
    let (ua, ub) = (unique(a), unique(b));
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_matches_std_sort_parallel_and_serial() {
        let mut x: u64 = 12345;
        let keys: Vec<u32> = (0..200_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 40) as u32
            })
            .collect();
        let mut expect = keys.clone();
        expect.sort();
        for parallel in [false, true] {
            let idx: Vec<u32> = (0..keys.len() as u32).collect();
            let (k, p) = radix_sort(keys.clone(), idx, parallel);
            assert_eq!(k, expect);
            // stable: equal keys keep increasing original positions
            for w in 0..k.len() - 1 {
                assert!(k[w] < k[w + 1] || p[w] < p[w + 1]);
                assert_eq!(keys[p[w] as usize], k[w]);
            }
        }
    }

    #[test]
    fn float_words_order_and_round_trip() {
        let v = [f32::NEG_INFINITY, -1.5, -0.0, 0.0, 1e-45, 2.0, f32::INFINITY, f32::NAN];
        for w in v.windows(2) {
            assert!(w[0].key() < w[1].key());
        }
        for &x in &v[..7] {
            assert_eq!(f32::from_key(x.key()).to_bits(), x.to_bits());
            assert_eq!(undirect::<f32>(directed_key(x, true), true).to_bits(), x.to_bits());
        }
        assert_eq!((-f32::NAN).key(), u32::MAX);
        assert_eq!(directed_key(f32::NAN, true), u32::MAX);
        for &x in &[i16::MIN, -1, 0, 1, i16::MAX] {
            assert_eq!(i16::from_key(x.key()), x);
        }
    }
}
