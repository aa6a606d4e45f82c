//! The host radix engine: a stable sort of order-preserving integer words, each carrying a
//! payload (a source position, or nothing).
//!
//! Shape of the work, chosen for memory traffic (measurements in `docs/src/internals.md`):
//! 1. a sample of the input (every `n / 4096`-th element) estimates the smallest and largest
//!    word, so that bits every word shares are never sorted on;
//! 2. one read counts the top digit per chunk of the input: 8 to 14 of the bits that vary, as
//!    many as half of a core's L2 cache holds write-combining lines for, fewer for bare words
//!    (`first_digit_bits`).
//!    The same read finds the exact bounds; where they vary in more bits than the sample's
//!    (the sample missed an extreme), it counts again with them;
//! 3. one scatter moves every element to its digit's part of the output, converting it to its
//!    word on the way. Elements of a digit gather in a 64-byte line (two for bare words) first
//!    and go to memory whole aligned lines at a time with non-temporal stores: the output is
//!    written once, never read for ownership, and the scatter touches cached lines, not
//!    thousands of pages;
//! 4. every part is then sorted on its own (in parallel, each by one thread) while it sits in
//!    cache: least significant digit first, one read counting every digit at once, passes
//!    whose digit is the same for the whole part skipped, and digits of 8 to 11 bits (fewer
//!    buckets make repeated digits wait on each other's counters, more overflow the L1
//!    cache). A part too large for the cache is partitioned once more by its own top digit.
//!    Bare words (no payload) in a dense part, about as many possible values as words, are
//!    instead sorted by counting each value and writing it that many times (`counting_sort`):
//!    equal bare words cannot be told apart, so no pass needs to move them.
//!
//! Every step is stable (chunks and parts are visited in input order), so equal words keep
//! their input order and their payloads show it.

use rayon::prelude::*;

use super::shared_ptr::SharedPtr;
use super::stream;
use crate::error::Error;
use crate::error_handler::OrRaise;
use crate::storage::alloc_uninit;
use crate::sync::lock;

/// An unsigned word that the engine sorts.
pub(crate) trait Word: Copy + Send + Sync + Ord + Default + 'static {
    const ZERO: Self;
    const ONES: Self;
    /// `(self >> shift) & mask` as an index.
    fn digit(self, shift: u32, mask: usize) -> usize;
    /// How many low bits hold every difference between `a` and `b`.
    fn span_bits(a: Self, b: Self) -> u32;
    /// `self` with its low `bits` bits replaced by `low` (which fits in them).
    fn with_low(self, bits: u32, low: usize) -> Self;
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const ZERO: Self = 0;
            const ONES: Self = <$t>::MAX;
            #[inline(always)]
            fn digit(self, shift: u32, mask: usize) -> usize {
                (self >> shift) as usize & mask
            }
            #[inline(always)]
            fn span_bits(a: Self, b: Self) -> u32 {
                <$t>::BITS - (a ^ b).leading_zeros()
            }
            #[inline(always)]
            fn with_low(self, bits: u32, low: usize) -> Self {
                (self >> bits << bits) | low as $t
            }
        }
    )*};
}
word!(u32, u64);

/// About how many elements the first estimate of the words' bounds reads.
const BOUNDS_SAMPLE: usize = 4096;
/// Widest digit of a second partition of a part too large for the cache (a plain scatter:
/// 2048 buckets, whose destinations stay few enough for the TLB).
const TOP_BITS: u32 = 11;
/// Widest and narrowest digit of the first partition (see `first_digit_bits`).
const FIRST_BITS_MAX: u32 = 14;
const FIRST_BITS_MIN: u32 = 8;
/// Widest digit of the passes that sort a part in cache.
const PART_BITS: u32 = 11;
/// A part whose elements and scratch take at most this many bytes is sorted in cache.
const CACHE_BYTES: usize = 4 << 20;
/// Widest low-bit range that a part of bare words (no payload) is sorted on by counting.
const DENSE_BITS: u32 = 16;
/// Bare words are sorted by counting while their range of low-bit values is at most this many
/// times their number.
const DENSE_RATIO: usize = 4;
/// Parts of at most this many elements are insertion-sorted.
const TINY: usize = 32;
/// Inputs below this many elements are sorted on the calling thread.
const PARALLEL_MIN: usize = 1 << 16;

/// The second-level cache of one core, in bytes: from Linux's description of CPU 0's caches,
/// else 1 MiB. Read once.
fn l2_bytes() -> usize {
    static L2: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *L2.get_or_init(|| {
        let read = |i: usize, f: &str| {
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/index{i}/{f}"))
                .map(|s| s.trim().to_string())
        };
        (0..8)
            .find_map(|i| {
                let size = read(i, "size").ok()?;
                (read(i, "level").ok()? == "2").then_some(())?;
                let kib: usize = size.strip_suffix('K')?.parse().ok()?;
                Some(kib << 10)
            })
            .unwrap_or(1 << 20)
    })
}

/// Width of the first partition's digit for `n` elements whose words vary in `span` bits,
/// with `line_bytes` of write-combining buffer per digit (a line of words and its payloads);
/// `bare` when the words carry no payload.
///
/// Wider is better while the buffer stays in the L2 cache: each part is then smaller, and
/// values with an uneven spread of top bits (floating point: half of the uniform values in
/// [0, 1) share one exponent) still leave parts that the in-cache passes sort without leaving
/// L2. The buffer may take half of L2 (the other half holds the cursors and the stream of
/// input). Measured on a core with 2 MiB of L2, 2^24 uniform `f32` values: 11 bits took
/// 90-110 ms, 13 bits 70-90 ms, 14 bits 71-79 ms. A digit never leaves fewer than 64
/// elements a part on average.
///
/// Bare words are different: a part whose values are dense is sorted by counting
/// ([`counting_sort`]), whose cost is one step per element and per possible value, so the
/// digit needs only to leave parts of at most [`DENSE_BITS`] varying bits; narrower digits
/// scatter faster. The same input (with 32-bit counters and one-line slots, before the
/// byte counters and two-line slots of today) took 14 bits 56.0-58.3 ms, 13 bits 51.6-54.6,
/// 12 bits (this rule) 50.5-51.9 and 11 bits 51.6-55.7 (minimum and median of ten runs each,
/// alternated).
fn first_digit_bits(n: usize, span: u32, line_bytes: usize, bare: bool) -> u32 {
    let fit = (l2_bytes() / 2 / line_bytes).max(1).ilog2();
    let want = if bare { fit.min(span.saturating_sub(DENSE_BITS)) } else { fit };
    let by_size = n.max(1).ilog2().saturating_sub(6);
    want.min(by_size).clamp(FIRST_BITS_MIN, FIRST_BITS_MAX).min(span)
}

/// A vector of `n` plain-old-data values whose contents are written before they are read, or
/// [`Error::OutOfMemory`].
pub(super) fn scratch_vec<T: Copy>(n: usize) -> Result<Vec<T>, Error> {
    let mut v = alloc_uninit::<T>(n)?;
    // SAFETY: used only for plain-old-data values (words, payloads, elements, indices), and
    // every position is written before anything reads it.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// `scratch_vec` for the engine's own working memory deep inside a sort, where no `Result`
/// can travel: running out of memory there is reported as the plain form of `sort` reports it
/// (through the error handler, then a panic, which rayon carries to the sorting thread).
fn part_scratch<T: Copy>(n: usize) -> Vec<T> {
    scratch_vec(n).or_raise("sort")
}

/// Per-thread scratch memory, reused across the parts a thread sorts (fresh memory costs a
/// page fault per page on first touch, which would cost as much as sorting it).
pub(crate) struct Scratch<W, P> {
    /// The other buffer of the cache-resident passes.
    keys: Vec<W>,
    pay: Vec<P>,
    /// The destination of a second partition.
    part_keys: Vec<W>,
    part_pay: Vec<P>,
    counts: Vec<u32>,
    dense: DenseCounts,
}

/// The counters of [`counting_sort`], reused across parts.
#[derive(Default)]
struct DenseCounts {
    small: Vec<u8>,
    wide: Vec<u32>,
}

impl<W: Word, P: Copy> Scratch<W, P> {
    pub(crate) fn new() -> Self {
        Scratch {
            keys: Vec::new(),
            pay: Vec::new(),
            part_keys: Vec::new(),
            part_pay: Vec::new(),
            counts: Vec::new(),
            dense: DenseCounts::default(),
        }
    }
}

/// Stable insertion sort of words with their payloads.
fn insertion<W: Word, P: Copy>(k: &mut [W], p: &mut [P]) {
    for i in 1..k.len() {
        let (x, y) = (k[i], p[i]);
        let mut j = i;
        while j > 0 && k[j - 1] > x {
            k[j] = k[j - 1];
            p[j] = p[j - 1];
            j -= 1;
        }
        k[j] = x;
        p[j] = y;
    }
}

/// Passes and digit width of a cache-resident sort on `bits` low bits: one pass up to 12
/// bits, otherwise as few passes of at most `PART_BITS` as cover them, equally wide.
fn part_plan(bits: u32, m: usize) -> (u32, u32) {
    let widest = if m < 2048 { 8 } else { PART_BITS };
    if bits <= widest + 1 {
        return (1, bits);
    }
    let passes = bits.div_ceil(widest);
    (passes, bits.div_ceil(passes))
}

/// Where `m` words and their payloads are: two parallel arrays.
struct Run<W, P> {
    keys: *mut W,
    pay: *mut P,
}

impl<W, P> Clone for Run<W, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W, P> Copy for Run<W, P> {}

impl<W, P> Run<W, P> {
    fn of(keys: &mut [W], pay: &mut [P]) -> Self {
        Run { keys: keys.as_mut_ptr(), pay: pay.as_mut_ptr() }
    }

    /// Whether two runs are the same memory (told by the words: payloads of no size share
    /// one address).
    fn is(self, other: Self) -> bool {
        std::ptr::eq(self.keys, other.keys)
    }
}

/// One stable counting pass: moves `m` words and payloads from `src` to `dst` by the digit
/// at `shift`, storing `map(word)`; `offsets` holds where each digit's first element goes.
///
/// # Safety
/// `src` is readable and `dst` writable for `m` elements, the two do not overlap, and
/// `offsets` (one per digit, a power of two of them) partition `0..m` by the digit counts of
/// the words read.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // one pass's buffers and bounds, all raw
unsafe fn counting_pass<W: Word, P: Copy>(
    src: Run<W, P>,
    dst: Run<W, P>,
    m: usize,
    shift: u32,
    offsets: &mut [u32],
    map: &impl Fn(W) -> W,
) {
    let mask = offsets.len() - 1;
    let o = offsets.as_mut_ptr();
    for i in 0..m {
        // SAFETY: the caller's contract; `d <= mask` indexes `offsets`, and `j < m`.
        unsafe {
            let k = *src.keys.add(i);
            let d = k.digit(shift, mask);
            let j = *o.add(d) as usize;
            *dst.keys.add(j) = map(k);
            *dst.pay.add(j) = *src.pay.add(i);
            *o.add(d) = (j + 1) as u32;
        }
    }
}

/// Sorts the `m` words of `src` (with their payloads) by their low `bits` bits, leaving
/// `finish(word)` of the result in `dst`, which is either `src` itself or memory that does not
/// overlap it. The words of `src` may be overwritten.
///
/// # Safety
/// Both runs are valid for `m` elements, `m < 2^32`, and `dst` either equals or does not
/// overlap `src`.
#[inline(always)]
unsafe fn sort_in_cache<W: Word, P: Copy>(
    src: Run<W, P>,
    dst: Run<W, P>,
    m: usize,
    bits: u32,
    sc: &mut Scratch<W, P>,
    finish: &impl Fn(W) -> W,
) {
    if std::mem::size_of::<P>() == 0 && bits <= DENSE_BITS && (1usize << bits) <= DENSE_RATIO * m {
        // SAFETY: the caller's contract; payloads of no size have nothing to move.
        unsafe { counting_sort(src.keys, dst.keys, m, bits, &mut sc.dense, finish) };
        return;
    }
    let (passes, width) = part_plan(bits, m);
    let r = 1usize << width;
    let mask = r - 1;
    let total = r * passes as usize;
    if sc.counts.len() < total {
        sc.counts.resize(total, 0);
    }
    let counts = &mut sc.counts[..total];
    counts.fill(0);
    // one read counts the digits of every pass
    // SAFETY: `src` is valid for `m` words.
    let words = unsafe { std::slice::from_raw_parts(src.keys, m) };
    match passes {
        1 => {
            for &k in words {
                counts[k.digit(0, mask)] += 1;
            }
        }
        2 => {
            let (c0, c1) = counts.split_at_mut(r);
            for &k in words {
                // SAFETY: a digit is at most `mask`, and both halves hold `r = mask + 1`.
                unsafe {
                    *c0.get_unchecked_mut(k.digit(0, mask)) += 1;
                    *c1.get_unchecked_mut(k.digit(width, mask)) += 1;
                }
            }
        }
        _ => {
            for &k in words {
                for p in 0..passes as usize {
                    counts[p * r + k.digit(p as u32 * width, mask)] += 1;
                }
            }
        }
    }
    // the passes that move something: a digit shared by every word changes nothing
    let live: Vec<u32> = (0..passes)
        .filter(|&p| !counts[p as usize * r..(p as usize + 1) * r].contains(&(m as u32)))
        .collect();
    let in_place = dst.is(src);
    if live.is_empty() {
        // SAFETY: valid runs that are the same or do not overlap (the caller's contract).
        unsafe { finish_copy(src, dst, m, finish) };
        return;
    }
    if sc.keys.len() < m {
        sc.keys = part_scratch(m);
        sc.pay = part_scratch(m);
    }
    let scratch = Run::of(&mut sc.keys, &mut sc.pay);
    // Where each pass writes. In place there are two buffers and an odd count ends with a
    // copy back. Otherwise, with `left` passes after this one, an even `left` writes the
    // destination; an odd one writes the scratch if it is the first pass, else the source
    // (free by then): the last pass always lands in the destination.
    let mut current = src;
    for (step, &p) in live.iter().enumerate() {
        let left = live.len() - 1 - step;
        let next = if in_place {
            if current.is(src) {
                scratch
            } else {
                src
            }
        } else if left.is_multiple_of(2) {
            dst
        } else if step == 0 {
            scratch
        } else {
            src
        };
        let h = &mut counts[p as usize * r..(p as usize + 1) * r];
        let mut run = 0u32;
        for c in h.iter_mut() {
            let x = *c;
            *c = run;
            run += x;
        }
        // SAFETY: `current` and `next` are distinct buffers of `m` elements; the offsets come
        // from this pass's digit counts.
        unsafe {
            if left == 0 && next.is(dst) {
                counting_pass(current, next, m, p * width, h, finish)
            } else {
                counting_pass(current, next, m, p * width, h, &|w| w)
            }
        };
        current = next;
    }
    if !current.is(dst) {
        // SAFETY: `current` is the scratch here, distinct from `dst`.
        unsafe { finish_copy(current, dst, m, finish) };
    }
}

/// Sorts `m` bare words of `src` that agree on every bit above their low `bits` by counting
/// each low-bit value, then writing each value as many times as it was counted: one read and
/// one write of the words plus one step per possible value, against a read and two scatters
/// of the passes. Only for words without payloads, where equal words are indistinguishable,
/// and for dense parts (as many possible values as a few times the words: half of the
/// uniform floats in `[0, 1)` give parts of about one word per value).
///
/// # Safety
/// `src` is readable and `dst` writable for `m` words, the same memory or not overlapping;
/// `0 < m < 2^32` and `bits < W::BITS`.
#[inline(always)]
unsafe fn counting_sort<W: Word>(
    src: *const W,
    dst: *mut W,
    m: usize,
    bits: u32,
    sc: &mut DenseCounts,
    finish: &impl Fn(W) -> W,
) {
    let r = 1usize << bits;
    let mask = r - 1;
    // SAFETY: `src` is valid for `m` words.
    let words = unsafe { std::slice::from_raw_parts(src, m) };
    let prefix = words[0].with_low(bits, 0);
    // Counted first in bytes, a quarter of the cache lines of 32-bit counters (2^16 values:
    // 64 KiB, near the size of an L1 cache, against 256 KiB). Measured on 2^24 uniform `f32`:
    // 48.3 ms with 32-bit counters, 44.6 with bytes. A byte counter that wrapped shows in their
    // sum, which is then short of `m` by a multiple of 256; only then are the words counted
    // again in 32 bits.
    sc.small.clear();
    sc.small.resize(r, 0);
    let small = &mut sc.small[..];
    for &k in words {
        // SAFETY: a digit is at most `mask`, and `small` holds `r = mask + 1`.
        unsafe {
            let c = small.get_unchecked_mut(k.digit(0, mask));
            *c = c.wrapping_add(1);
        }
    }
    let sum: usize = small.iter().map(|&c| c as usize).sum();
    if sum == m {
        // SAFETY: the caller's contract; the counts are exact and sum to `m`.
        unsafe { write_counted(small, prefix, bits, dst, m) };
    } else {
        sc.wide.clear();
        sc.wide.resize(r, 0);
        let wide = &mut sc.wide[..];
        for &k in words {
            // SAFETY: as above.
            unsafe { *wide.get_unchecked_mut(k.digit(0, mask)) += 1 };
        }
        // SAFETY: as above.
        unsafe { write_counted(wide, prefix, bits, dst, m) };
    }
    // SAFETY: `dst` holds the `m` words just written.
    let out = unsafe { std::slice::from_raw_parts_mut(dst, m) };
    out.iter_mut().for_each(|w| *w = finish(*w));
}

/// Writes value `v` (as the word `prefix` with low bits `v`) `counts[v]` times, in order of
/// `v`, to `dst`.
///
/// The words are written bare (the caller finishes them in a loop of its own, which
/// vectorises), so that this loop does one broadcast store and two additions a value. Each
/// value goes out as a block of 8 copies where it was counted at most 8 times: the block's
/// surplus lies at positions of larger values, written later. Values are taken 16 at a time,
/// the checks made once for the 16.
///
/// # Safety
/// The counts sum to `m`, and `dst` is writable for `m` words.
#[inline(always)]
unsafe fn write_counted<W: Word, C: Copy + Into<u32> + 'static>(
    counts: &[C],
    prefix: W,
    bits: u32,
    dst: *mut W,
    m: usize,
) {
    use std::any::TypeId;
    #[cfg(target_arch = "x86_64")]
    if TypeId::of::<W>() == TypeId::of::<u32>()
        && TypeId::of::<C>() == TypeId::of::<u8>()
        && std::arch::is_x86_feature_detected!("avx2")
    {
        // SAFETY: `W` is `u32` and `C` is `u8` (checked above), so the casts change no type;
        // the CPU supports AVX2; the rest is the caller's contract.
        return unsafe {
            let bytes = std::slice::from_raw_parts(counts.as_ptr() as *const u8, counts.len());
            write_counted_u32_avx2(bytes, std::mem::transmute_copy(&prefix), dst as *mut u32, m)
        };
    }
    const GROUP: usize = 16;
    let mut pos = 0usize;
    // SAFETY: `pos + c <= m` as the counts sum to `m` (the caller's contract).
    let write_exact = |pos: usize, c: usize, w: W| unsafe { write_copies(dst, pos, c, w, m) };
    for (g, group) in counts.chunks(GROUP).enumerate() {
        let v0 = g * GROUP;
        let most = group.iter().fold(0u32, |a, &c| a.max(c.into()));
        if most <= 8 && pos + 8 * GROUP <= m && group.len() == GROUP {
            for (j, &c) in group.iter().enumerate() {
                // SAFETY: 16 values of at most 8 copies each from `pos`, and `pos + 128 <= m`.
                unsafe {
                    (dst.add(pos) as *mut [W; 8])
                        .write_unaligned([prefix.with_low(bits, v0 + j); 8])
                };
                pos += c.into() as usize;
            }
        } else {
            for (j, &c) in group.iter().enumerate() {
                write_exact(pos, c.into() as usize, prefix.with_low(bits, v0 + j));
                pos += c.into() as usize;
            }
        }
    }
}

/// `write_counted` for 32-bit words and byte counts with AVX2: the 8 copies of the next value
/// stay in a register, stepped by one per value, so that a value costs a store and two
/// additions. Measured on 2^24 uniform `f32` (2-core Xeon): the whole sort went from
/// 45.2 to 43.3 ms (medians of the minimum of 15 sorts over eight alternated runs).
///
/// # Safety
/// As for `write_counted`, and the CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn write_counted_u32_avx2(counts: &[u8], prefix: u32, dst: *mut u32, m: usize) {
    use std::arch::x86_64::*;
    const GROUP: usize = 16;
    let mut pos = 0usize;
    let mut next = _mm256_set1_epi32(prefix as i32);
    let one = _mm256_set1_epi32(1);
    let eight = _mm_set1_epi8(8);
    let whole = counts.len() / GROUP * GROUP;
    for (g, group) in counts[..whole].chunks_exact(GROUP).enumerate() {
        // SAFETY: a group is 16 bytes.
        let c = unsafe { _mm_loadu_si128(group.as_ptr() as *const __m128i) };
        // every count at most 8: unsigned max with 8 leaves all 16 lanes at 8
        let small = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(c, eight), eight)) == 0xffff;
        if small && pos + 8 * GROUP <= m {
            for &c in group {
                // SAFETY: 16 values of at most 8 copies each from `pos`, and `pos + 128 <= m`.
                unsafe { _mm256_storeu_si256(dst.add(pos) as *mut __m256i, next) };
                next = _mm256_add_epi32(next, one);
                pos += c as usize;
            }
        } else {
            for (j, &c) in group.iter().enumerate() {
                let w = prefix | (g * GROUP + j) as u32;
                // SAFETY: `pos + c <= m` as the counts sum to `m`.
                unsafe { write_copies(dst, pos, c as usize, w, m) };
                pos += c as usize;
            }
            next = _mm256_add_epi32(next, _mm256_set1_epi32(GROUP as i32));
        }
    }
    for (j, &c) in counts[whole..].iter().enumerate() {
        // SAFETY: as above.
        unsafe { write_copies(dst, pos, c as usize, prefix | (whole + j) as u32, m) };
        pos += c as usize;
    }
}

/// Writes `c` copies of `w` at `pos` of `dst`: as a block of 8 where `c <= 8` and the block
/// ends at most at `m` (its surplus lies where later values go).
///
/// # Safety
/// `dst` is writable for `m` words and `pos + c <= m`.
#[inline(always)]
unsafe fn write_copies<W: Copy>(dst: *mut W, pos: usize, c: usize, w: W, m: usize) {
    // SAFETY: the contract; a block of 8 is written only where `pos + 8 <= m`.
    unsafe {
        if c <= 8 && pos + 8 <= m {
            (dst.add(pos) as *mut [W; 8]).write_unaligned([w; 8]);
        } else {
            for j in 0..c {
                *dst.add(pos + j) = w;
            }
        }
    }
}

/// Writes `finish(word)` of `m` words (and their payloads) from `src` to `dst`.
///
/// # Safety
/// Valid runs of `m` elements that are the same or do not overlap.
unsafe fn finish_copy<W: Word, P: Copy>(
    src: Run<W, P>,
    dst: Run<W, P>,
    m: usize,
    finish: &impl Fn(W) -> W,
) {
    for i in 0..m {
        // SAFETY: the caller's contract.
        unsafe {
            *dst.keys.add(i) = finish(*src.keys.add(i));
            if !std::ptr::eq(src.pay, dst.pay) {
                *dst.pay.add(i) = *src.pay.add(i);
            }
        }
    }
}

/// Sorts words `k` (payloads `p`) in place by their low `bits` bits (every word agrees on the
/// bits above) and replaces each word `w` by `finish(w)`; compiled for AVX2 where the CPU has
/// it (the counting sort's checks and the finishing loops vectorise wider).
fn sort_part<W: Word, P: Copy>(
    k: &mut [W],
    p: &mut [P],
    bits: u32,
    sc: &mut Scratch<W, P>,
    finish: &impl Fn(W) -> W,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked above).
        return unsafe { sort_part_avx2(k, p, bits, sc, finish) };
    }
    sort_part_inner(k, p, bits, sc, finish)
}
/// `sort_part_inner` compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sort_part_avx2<W: Word, P: Copy>(
    k: &mut [W],
    p: &mut [P],
    bits: u32,
    sc: &mut Scratch<W, P>,
    finish: &impl Fn(W) -> W,
) {
    sort_part_inner(k, p, bits, sc, finish)
}

/// The body of `sort_part`, inlined into each of its instantiations.
#[inline(always)]
fn sort_part_inner<W: Word, P: Copy>(
    k: &mut [W],
    p: &mut [P],
    bits: u32,
    sc: &mut Scratch<W, P>,
    finish: &impl Fn(W) -> W,
) {
    let m = k.len();
    let finish_all = |k: &mut [W]| k.iter_mut().for_each(|w| *w = finish(*w));
    if m < 2 || bits == 0 {
        return finish_all(k);
    }
    if m <= TINY {
        insertion(k, p);
        return finish_all(k);
    }
    let bytes = 2 * m * (std::mem::size_of::<W>() + std::mem::size_of::<P>());
    if bytes <= CACHE_BYTES {
        let run = Run::of(k, p);
        // SAFETY: in place on `m` (< 2^32, a part of a checked input) elements.
        unsafe { sort_in_cache(run, run, m, bits, sc, finish) };
        return;
    }
    // Too large for the cache: partition once more by the top digit of what varies here.
    let (lo, hi) = k.iter().fold((W::ONES, W::ZERO), |(a, b), &x| (a.min(x), b.max(x)));
    let span = W::span_bits(lo, hi);
    if span == 0 {
        return finish_all(k);
    }
    let b = span.min(TOP_BITS);
    let shift = span - b;
    let r = 1usize << b;
    let mask = r - 1;
    let mut offsets = vec![0u32; r];
    for &x in k.iter() {
        offsets[x.digit(shift, mask)] += 1;
    }
    let mut starts = Vec::with_capacity(r + 1);
    let mut run = 0u32;
    for c in offsets.iter_mut() {
        starts.push(run as usize);
        let x = *c;
        *c = run;
        run += x;
    }
    starts.push(m);
    let (mut tk, mut tp) = (std::mem::take(&mut sc.part_keys), std::mem::take(&mut sc.part_pay));
    if tk.len() < m {
        (tk, tp) = (part_scratch(m), part_scratch(m));
    }
    // SAFETY: `k`/`p` and `tk`/`tp` are distinct buffers of at least `m` elements.
    unsafe {
        counting_pass(Run::of(k, p), Run::of(&mut tk, &mut tp), m, shift, &mut offsets, &|w| w)
    };
    let mut inner = Scratch::new();
    for d in 0..r {
        let (s, e) = (starts[d], starts[d + 1]);
        let sub = 2 * (e - s) * (std::mem::size_of::<W>() + std::mem::size_of::<P>());
        let (parted, part) =
            (Run::of(&mut tk[s..e], &mut tp[s..e]), Run::of(&mut k[s..e], &mut p[s..e]));
        if sub <= CACHE_BYTES {
            // SAFETY: equal ranges of distinct buffers; sorted from the partition straight
            // back into `k`/`p`.
            unsafe { sort_in_cache(parted, part, e - s, shift, sc, finish) };
        } else {
            k[s..e].copy_from_slice(&tk[s..e]);
            p[s..e].copy_from_slice(&tp[s..e]);
            sort_part(&mut k[s..e], &mut p[s..e], shift, &mut inner, finish);
        }
    }
    (sc.part_keys, sc.part_pay) = (tk, tp);
}

/// Words per 64-byte line.
const fn per_line<W>() -> usize {
    64 / std::mem::size_of::<W>()
}

/// Cache lines in a digit's slot of the write-combining buffer: two for bare words, one where
/// payloads travel too (see `partition_chunk`). A constant of each instantiation, so that
/// slot positions stay masks.
const fn slot_lines<P>() -> usize {
    if std::mem::size_of::<P>() == 0 {
        2
    } else {
        1
    }
}

/// A 64-byte-aligned line of the write-combining buffer (a digit's slot is one or more).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// Writes out the full write-combining slot `kb`/`pb` (`slot_lines::<P>()` lines) that ends
/// at output position `i`: whole, with streaming stores, or only its tail from `st` (this
/// chunk's first position of the digit) where the slot starts before it.
///
/// # Safety
/// `kb`/`pb` hold a slot of `l = slot_lines::<P>() * per_line::<W>()` elements; positions
/// `max(i + 1 - l, st)..=i` of `kd`/`pd` are this chunk's.
#[inline(always)]
unsafe fn flush_line<W: Word, P: Copy>(
    kb: *const W,
    pb: *const P,
    kd: *mut W,
    pd: *mut P,
    i: usize,
    st: usize,
    phase: usize,
) {
    let pl = per_line::<W>();
    let lines = slot_lines::<P>();
    let l = lines * pl;
    // SAFETY: the caller's contract.
    unsafe {
        if i + 1 >= st + l {
            for q in 0..lines {
                stream::line(kb.add(q * pl), kd.add(i + 1 - l + q * pl));
            }
            std::ptr::copy_nonoverlapping(pb, pd.add(i + 1 - l), l);
        } else {
            for e in st..=i {
                let s = (e + phase) % l;
                *kd.add(e) = *kb.add(s);
                *pd.add(e) = *pb.add(s);
            }
        }
    }
}

/// `partition_chunk`, compiled for AVX2 where the CPU has it (the conversion to words
/// vectorises).
///
/// # Safety
/// As for `partition_chunk`.
#[allow(clippy::too_many_arguments)]
unsafe fn partition_chunk_best<T: Copy, W: Word, P: Copy>(
    src: &[T],
    first: usize,
    key: &impl Fn(T) -> W,
    payload: &impl Fn(usize) -> P,
    kd: *mut W,
    pd: *mut P,
    offsets: &mut [usize],
    shift: u32,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked above); the rest is the caller's contract.
        return unsafe { partition_chunk_avx2(src, first, key, payload, kd, pd, offsets, shift) };
    }
    // SAFETY: the caller's contract.
    unsafe { partition_chunk(src, first, key, payload, kd, pd, offsets, shift) }
}

/// # Safety
/// As for `partition_chunk`, and the CPU supports AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn partition_chunk_avx2<T: Copy, W: Word, P: Copy>(
    src: &[T],
    first: usize,
    key: &impl Fn(T) -> W,
    payload: &impl Fn(usize) -> P,
    kd: *mut W,
    pd: *mut P,
    offsets: &mut [usize],
    shift: u32,
) {
    // SAFETY: the caller's contract.
    unsafe { partition_chunk(src, first, key, payload, kd, pd, offsets, shift) }
}

/// The partitioning scatter of one chunk (source positions `first..`), through a
/// write-combining buffer: a digit's words gather in a slot of `slot_lines::<P>()` cache
/// lines that goes out whole once it fills. `offsets[d]` is where the chunk's first word of
/// digit `d` goes; on return, past its last.
///
/// Why slots of two lines for bare words: whether an element fills its slot is a branch that
/// no predictor learns (it is taken once a slot, at random), so a slot of 32 words instead of
/// 16 halves its misses. Measured on 2^24 uniform `f32` (2-core Xeon, medians of the
/// minimum of 15 sorts over eight alternated runs): one line 50.2 ms, two 48.6, four 48.7.
/// Payloads keep one line: their slots are already twice as large, and the first digit's
/// width is tuned to the buffer's share of L2.
///
/// # Safety
/// `kd`/`pd` are valid for every position the offsets reach, and no other task writes the
/// positions this chunk's offsets cover.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn partition_chunk<T: Copy, W: Word, P: Copy>(
    src: &[T],
    first: usize,
    key: &impl Fn(T) -> W,
    payload: &impl Fn(usize) -> P,
    kd: *mut W,
    pd: *mut P,
    offsets: &mut [usize],
    shift: u32,
) {
    let r = offsets.len();
    let mask = r - 1;
    let l = slot_lines::<P>() * per_line::<W>();
    let mut lines = vec![Line([0; 64]); r * slot_lines::<P>()];
    let kb = lines.as_mut_ptr() as *mut W;
    let mut pbuf: Vec<P> = part_scratch(r * l);
    let pb = pbuf.as_mut_ptr();
    let start: Vec<usize> = offsets.to_vec();
    // the line phase of output position 0: position `e` sits in slot `(e + phase) % l`
    let phase = (kd as usize / std::mem::size_of::<W>()) % l;
    // per digit, the next position plus the phase (32 bits: the cursors stay in L1 with the
    // hot lines); its low bits are the slot in the line
    let mut cursors: Vec<u32> = offsets.iter().map(|&o| (o + phase) as u32).collect();
    let c = cursors.as_mut_ptr();
    // words and digits are made a block at a time (a loop that vectorises), then scattered
    let mut words = [W::ZERO; 64];
    let mut digits = [0u16; 64];
    for (b, block) in src.chunks(64).enumerate() {
        for ((w, dg), &x) in words.iter_mut().zip(digits.iter_mut()).zip(block) {
            *w = key(x);
            *dg = w.digit(shift, mask) as u16;
        }
        let base = first + b * 64;
        for jb in 0..block.len() {
            // SAFETY: `jb < 64` indexes the block's words and digits; `d < r` indexes the
            // cursors and the buffers; output positions are inside the chunk's ranges (the
            // contract); the buffers are `r * l` elements.
            unsafe {
                let k = *words.get_unchecked(jb);
                let d = *digits.get_unchecked(jb) as usize;
                let cur = *c.add(d) as usize;
                let slot = cur % l;
                *kb.add(d * l + slot) = k;
                *pb.add(d * l + slot) = payload(base + jb);
                *c.add(d) = (cur + 1) as u32;
                if slot == l - 1 {
                    flush_line(
                        kb.add(d * l),
                        pb.add(d * l),
                        kd,
                        pd,
                        cur - phase,
                        *start.get_unchecked(d),
                        phase,
                    );
                }
            }
        }
    }
    for (o, &cur) in offsets.iter_mut().zip(&cursors) {
        *o = cur as usize - phase;
    }
    // the partly filled lines
    for d in 0..r {
        let i = offsets[d];
        let slot = (i + phase) % l;
        // the first position of the line holding `i`, clamped to the chunk's range
        let from = (i + phase - slot).saturating_sub(phase).max(start[d]);
        for e in from..i {
            let s = (e + phase) % l;
            // SAFETY: positions `from..i` are this chunk's, held in the buffer's line `d`.
            unsafe {
                *kd.add(e) = *kb.add(d * l + s);
                *pd.add(e) = *pb.add(d * l + s);
            }
        }
    }
    stream::fence();
}

/// How many elements of `c` have each value of the digit of their word at `shift`, and the
/// smallest and largest word.
fn digit_counts<T: Copy, W: Word>(
    c: &[T],
    key: &impl Fn(T) -> W,
    shift: u32,
    mask: usize,
) -> (Vec<usize>, W, W) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked above).
        return unsafe { digit_counts_avx2(c, key, shift, mask) };
    }
    digit_counts_portable(c, key, shift, mask)
}

/// Counts in blocks: the words and digits of a block are computed first (a loop that
/// vectorises, as do the bounds), then the digits counted.
#[inline(always)]
fn digit_counts_portable<T: Copy, W: Word>(
    c: &[T],
    key: &impl Fn(T) -> W,
    shift: u32,
    mask: usize,
) -> (Vec<usize>, W, W) {
    // 32-bit counters (a chunk is less than 2^32 elements): half the cache lines of a
    // histogram of `usize`
    let mut counts = vec![0u32; mask + 1];
    let (mut lo, mut hi) = (W::ONES, W::ZERO);
    let mut words = [W::ZERO; 64];
    let mut digits = [0u16; 64];
    for block in c.chunks(64) {
        for ((w, d), &x) in words.iter_mut().zip(digits.iter_mut()).zip(block) {
            *w = key(x);
            *d = w.digit(shift, mask) as u16;
        }
        for &w in &words[..block.len()] {
            lo = lo.min(w);
            hi = hi.max(w);
        }
        for &d in &digits[..block.len()] {
            // SAFETY: a digit is at most `mask`, and `counts` has `mask + 1` entries.
            unsafe { *counts.get_unchecked_mut(d as usize) += 1 };
        }
    }
    (counts.into_iter().map(|c| c as usize).collect(), lo, hi)
}

/// `digit_counts_portable` compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn digit_counts_avx2<T: Copy, W: Word>(
    c: &[T],
    key: &impl Fn(T) -> W,
    shift: u32,
    mask: usize,
) -> (Vec<usize>, W, W) {
    digit_counts_portable(c, key, shift, mask)
}

/// Sorts the elements of `src` by their words `key(x)` (stable), writing the sorted words to
/// `words` and the payload of each element's source position, `payload(i)`, to `pay`; then
/// applies `finish` to every word in place (while each part is still in cache; it turns a word
/// back into the bits of an element). `parallel` lets the work use the thread pool.
pub(crate) fn sort_words<T, W, P>(
    src: &[T],
    key: impl Fn(T) -> W + Sync,
    payload: impl Fn(usize) -> P + Sync,
    finish: impl Fn(W) -> W + Sync,
    words: &mut [W],
    pay: &mut [P],
    parallel: bool,
) where
    T: Copy + Send + Sync,
    W: Word,
    P: Copy + Send + Sync,
{
    let n = src.len();
    assert!(words.len() == n && pay.len() == n, "internal error: radix output lengths");
    // positions (plus a line's phase) and payload positions are 32-bit
    assert!(n <= u32::MAX as usize - 64, "internal error: radix input of {n} elements");
    if n == 0 {
        return;
    }
    let threads = if parallel && n >= PARALLEL_MIN { rayon::current_num_threads() } else { 1 };
    let chunks = if threads > 1 { (4 * threads).min(n / 4096).max(1) } else { 1 };
    let chunk = n.div_ceil(chunks);
    let bare = std::mem::size_of::<P>() == 0;
    let line_bytes = slot_lines::<P>() * (64 + per_line::<W>() * std::mem::size_of::<P>());
    // The span of the words from a sample, checked by the read that counts the digits, which
    // finds the exact bounds on the way: an equal span gives the same digits; a wider one (the
    // sample missed an extreme) means counting again with it.
    let step = (n / BOUNDS_SAMPLE).max(1);
    let (mut lo, mut hi) = src
        .iter()
        .step_by(step)
        .fold((W::ONES, W::ZERO), |(a, b), &x| (a.min(key(x)), b.max(key(x))));
    let (shift, b, counts) = loop {
        let span = W::span_bits(lo, hi);
        let b = first_digit_bits(n, span, line_bytes, bare);
        let shift = span - b;
        let mask = (1usize << b) - 1;
        let count = |c: &[T]| digit_counts(c, &key, shift, mask);
        let counted: Vec<(Vec<usize>, W, W)> =
            if chunks > 1 { src.par_chunks(chunk).map(count).collect() } else { vec![count(src)] };
        let (exact_lo, exact_hi) =
            counted.iter().fold((W::ONES, W::ZERO), |(a, b), c| (a.min(c.1), b.max(c.2)));
        if W::span_bits(exact_lo, exact_hi) == span {
            break (shift, b, counted.into_iter().map(|c| c.0).collect::<Vec<_>>());
        }
        (lo, hi) = (exact_lo, exact_hi);
    };
    let r = 1usize << b;
    // chunk c writes its first word of digit d after all smaller digits and after the same
    // digit of earlier chunks: this is what keeps the partition stable
    let mut offsets = vec![vec![0usize; r]; chunks];
    let mut starts = vec![0usize; r + 1];
    let mut run = 0;
    for d in 0..r {
        starts[d] = run;
        for c in 0..chunks {
            offsets[c][d] = run;
            run += counts[c][d];
        }
    }
    starts[r] = n;
    let (kd, pd) = (SharedPtr(words.as_mut_ptr()), SharedPtr(pay.as_mut_ptr()));
    let partition = |(c, mut off): (usize, Vec<usize>)| {
        let part = &src[c * chunk..n.min((c + 1) * chunk)];
        // SAFETY: the offsets of all chunks partition 0..n, so each chunk writes its own
        // positions of `words` and `pay` (both n long).
        unsafe {
            partition_chunk_best(
                part,
                c * chunk,
                &key,
                &payload,
                kd.get(),
                pd.get(),
                &mut off,
                shift,
            )
        };
    };
    if chunks > 1 {
        offsets.into_par_iter().enumerate().for_each(partition);
    } else {
        offsets.into_iter().enumerate().for_each(partition);
    }
    let sort_bucket = |sc: &mut Scratch<W, P>, d: usize| {
        let (s, e) = (starts[d], starts[d + 1]);
        // SAFETY: buckets are disjoint ranges of `words` and `pay`, one task each.
        let (k, p) = unsafe {
            (
                std::slice::from_raw_parts_mut(kd.get().add(s), e - s),
                std::slice::from_raw_parts_mut(pd.get().add(s), e - s),
            )
        };
        sort_part(k, p, shift, sc, &finish);
    };
    if threads > 1 {
        // one scratch per pool thread (rayon may start many more tasks than threads)
        let pool: Vec<std::sync::Mutex<Scratch<W, P>>> =
            (0..threads).map(|_| std::sync::Mutex::new(Scratch::new())).collect();
        (0..r).into_par_iter().for_each(|d| {
            let slot = rayon::current_thread_index().unwrap_or(0) % threads;
            let mut sc = lock(&pool[slot]);
            sort_bucket(&mut sc, d)
        });
    } else {
        let mut sc = Scratch::new();
        (0..r).for_each(|d| sort_bucket(&mut sc, d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 16
        }
    }

    /// Sorts `keys` with their positions as payload and checks words and positions against
    /// the standard library's stable sort.
    fn check_against_stable_sort(keys: &[u32], parallel: bool, case: &str) {
        let n = keys.len();
        let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
        want.sort_by_key(|p| p.0);
        let mut words = vec![0u32; n];
        let mut pos = vec![0u32; n];
        sort_words(keys, |x| x, |i| i as u32, |w| w, &mut words, &mut pos, parallel);
        let got: Vec<(u32, u32)> = words.into_iter().zip(pos).collect();
        assert_eq!(got, want, "{case}");
    }

    /// The engine against the standard library's stable sort, with positions as payload:
    /// sizes around every threshold, narrow and wide spans, many duplicates, both word sizes.
    #[test]
    fn matches_a_stable_sort() {
        let mut next = lcg(3);
        for &n in &[0usize, 1, 2, 31, 33, 100, 2047, 5000, 70_000, 300_000] {
            for spread in [1u64, 3, 1000, 1 << 20, u64::MAX] {
                for parallel in [false, true] {
                    let keys: Vec<u32> = (0..n).map(|_| (next() % spread.max(1)) as u32).collect();
                    check_against_stable_sort(
                        &keys,
                        parallel,
                        &format!("n {n} spread {spread} parallel {parallel}"),
                    );

                    // 64-bit words need three or more passes per part; `finish` must be
                    // applied exactly once, after the last
                    let wide: Vec<u64> = keys
                        .iter()
                        .map(|&k| (k as u64) << 29 | (k as u64 & 7) | (next() << 40))
                        .collect();
                    let mut want: Vec<u64> = wide.iter().map(|w| w.rotate_left(7)).collect();
                    want.sort_by_key(|w| w.rotate_right(7));
                    let mut words = vec![0u64; n];
                    let mut none = vec![(); n];
                    let finish = |w: u64| w.rotate_left(7);
                    sort_words(&wide, |x| x, |_| (), finish, &mut words, &mut none, parallel);
                    assert_eq!(words, want, "u64 n {n} spread {spread}");
                }
            }
        }
    }

    /// Counting sort of bare words, in place and into other memory: values counted once, more
    /// than 8 times (the block writes' limit), more than 255 times (byte counters wrap and
    /// the words are counted again), not at all, and parts shorter than a block.
    #[test]
    fn counting_sort_matches_a_sort() {
        let mut next = lcg(5);
        let finish = |w: u32| w.rotate_left(3);
        for &m in &[1usize, 5, 8, 9, 40, 1000, 20_000] {
            for bits in [1u32, 3, 6, 10, 14] {
                // every word shares the bits above `bits`
                let keys: Vec<u32> =
                    (0..m).map(|_| 0x2a00_0000 | (next() as u32 & ((1 << bits) - 1))).collect();
                let mut want = keys.clone();
                want.sort_unstable();
                want.iter_mut().for_each(|w| *w = finish(*w));
                let mut counts = DenseCounts::default();
                let mut out = vec![0u32; m];
                // SAFETY: distinct buffers of `m` words; `bits < 32`.
                unsafe {
                    counting_sort(keys.as_ptr(), out.as_mut_ptr(), m, bits, &mut counts, &finish)
                };
                assert_eq!(out, want, "m {m} bits {bits} into other memory");
                let mut inplace = keys.clone();
                let p = inplace.as_mut_ptr();
                // SAFETY: the same buffer of `m` words.
                unsafe { counting_sort(p, p, m, bits, &mut counts, &finish) };
                assert_eq!(inplace, want, "m {m} bits {bits} in place");
            }
        }
    }

    /// Whole sorts of bare words whose parts are dense enough to be sorted by counting, the
    /// last with values repeated thousands of times in a part.
    #[test]
    fn bare_words_in_dense_parts_sort() {
        let mut next = lcg(7);
        for &(n, spread) in
            &[(300_000usize, 1u64 << 16), (70_000, 1 << 14), (1 << 20, 1 << 16), (1 << 20, 1 << 9)]
        {
            for parallel in [false, true] {
                let keys: Vec<u32> =
                    (0..n).map(|_| 0x4000_0000 + (next() % spread) as u32).collect();
                let finish = |w: u32| w ^ 0x8000_0001;
                let mut want = keys.clone();
                want.sort_unstable();
                want.iter_mut().for_each(|w| *w = finish(*w));
                let mut words = vec![0u32; n];
                let mut none = vec![(); n];
                sort_words(&keys, |x| x, |_| (), finish, &mut words, &mut none, parallel);
                assert_eq!(words, want, "n {n} spread {spread} parallel {parallel}");
            }
        }
    }

    /// A part larger than the cache is partitioned again: here 7 of 8 keys share the top
    /// digit (bits 21 to 31), a part of about 460 000 keys.
    #[test]
    fn large_parts_are_partitioned_again() {
        let mut next = lcg(9);
        let n = 1 << 19;
        let keys: Vec<u32> =
            (0..n)
                .map(|i| {
                    if i % 8 == 0 {
                        next() as u32
                    } else {
                        0x4000_0000 | (next() as u32 & 0xf_ffff)
                    }
                })
                .collect();
        check_against_stable_sort(&keys, true, "a part of about 460 000 keys");
    }

    /// The span of the words is first estimated from a sample; extremes the sample skips (a
    /// smallest and a largest word at positions it does not read) are found by the counting
    /// read, which then counts again with the true span.
    #[test]
    fn extremes_missed_by_the_bounds_sample_still_sort() {
        let mut next = lcg(11);
        for n in [100_000usize, 300_000] {
            // the sample reads positions 0, step, 2 * step, ...
            let step = (n / BOUNDS_SAMPLE).max(1);
            assert!(step > 2, "n {n} is sampled too densely for this test");
            for parallel in [false, true] {
                let mut keys: Vec<u32> = (0..n).map(|_| 0x1000 + (next() as u32 & 0xfff)).collect();
                keys[1] = u32::MAX - 5;
                keys[n - 2] = 3;
                check_against_stable_sort(&keys, parallel, &format!("n {n} parallel {parallel}"));
            }
        }
    }
}
