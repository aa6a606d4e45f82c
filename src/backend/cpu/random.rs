//! Random numbers on the CPU, as defined in `random/stream.rs`.
//!
//! The output is cut into chunks of [`CHUNK_BLOCKS`] blocks (16 KiB), filled in parallel on
//! rayon's pool. A chunk computes the counters of its own blocks directly (that is what a
//! counter-based generator allows), runs the generator over them eight counters at a time with
//! AVX2 where the CPU has it (one block at a time elsewhere), and turns the words into elements
//! while they are still in cache.

use std::mem::{size_of, MaybeUninit};

use half::f16;
use rayon::prelude::*;

use super::vmath;
use crate::dtype::DType;
use crate::error::Error;
use crate::random::stream::{
    unit_f16_as_f32, unit_f32, unit_f64, Distribution, Draw, Generator, BLOCK_BYTES, F32_STEP,
    F64_STEP,
};
use crate::storage::{alloc_uninit, HostVec};

/// Blocks per chunk: 16 KiB of output, and as many bytes of words, stay in L1/L2.
const CHUNK_BLOCKS: usize = 1024;
/// Words per chunk.
const CHUNK_WORDS: usize = 4 * CHUNK_BLOCKS;

/// `n` elements of `dtype` holding the numbers of `draw`, or [`Error::OutOfMemory`].
pub(crate) fn generate(draw: &Draw, dtype: DType, n: usize) -> Result<HostVec, Error> {
    use Distribution::{Normal, Uniform};
    Ok(match (draw.dist, dtype) {
        (Uniform, DType::F32) => HostVec::F32(fill(draw, n, uniform_f32)?),
        (Uniform, DType::F64) => HostVec::F64(fill(draw, n, uniform_f64)?),
        (Uniform, DType::C32) => {
            HostVec::C32(fill(draw, n, |w, out| uniform_f32(w, complex_parts(out)))?)
        }
        (Uniform, DType::C64) => {
            HostVec::C64(fill(draw, n, |w, out| uniform_f64(w, complex_parts(out)))?)
        }
        (Uniform, DType::F16) => HostVec::F16(fill(draw, n, uniform_f16)?),
        (Uniform, DType::B8) => HostVec::B8(fill(draw, n, uniform_bool)?),
        (Uniform, DType::U8) => HostVec::U8(fill(draw, n, uniform_u8)?),
        (Uniform, DType::S16) => HostVec::S16(fill(draw, n, uniform_i16)?),
        (Uniform, DType::U16) => HostVec::U16(fill(draw, n, uniform_u16)?),
        (Uniform, DType::S32) => HostVec::S32(fill(draw, n, uniform_i32)?),
        (Uniform, DType::U32) => HostVec::U32(fill(draw, n, uniform_u32)?),
        (Uniform, DType::S64) => HostVec::S64(fill(draw, n, uniform_i64)?),
        (Uniform, DType::U64) => HostVec::U64(fill(draw, n, uniform_u64)?),
        (Normal, DType::F32) => HostVec::F32(fill(draw, n, normal_f32)?),
        (Normal, DType::F64) => HostVec::F64(fill(draw, n, normal_f64)?),
        (Normal, DType::C32) => {
            HostVec::C32(fill(draw, n, |w, out| normal_f32(w, complex_parts(out)))?)
        }
        (Normal, DType::C64) => {
            HostVec::C64(fill(draw, n, |w, out| normal_f64(w, complex_parts(out)))?)
        }
        (Uniform, DType::BF16) => {
            unreachable!("internal error: bf16 numbers are drawn as f32 (ops/random.rs)")
        }
        (Normal, t) => unreachable!("internal error: normal numbers of type {}", t.name()),
    })
}

/// A vector of `n` elements, each chunk's elements written by `convert` from the chunk's words.
/// `convert` must write every element of the slice it is given.
fn fill<T: Copy + Send>(
    draw: &Draw,
    n: usize,
    convert: impl Fn(&[u32], &mut [MaybeUninit<T>]) + Sync,
) -> Result<Vec<T>, Error> {
    let per_block = BLOCK_BYTES / size_of::<T>();
    let per_chunk = CHUNK_BLOCKS * per_block;
    let mut out = alloc_uninit(n)?;
    out.spare_capacity_mut()[..n].par_chunks_mut(per_chunk).enumerate().for_each(|(c, dst)| {
        let mut words = [0u32; CHUNK_WORDS];
        let words = &mut words[..4 * dst.len().div_ceil(per_block)];
        fill_words(draw, (c * CHUNK_BLOCKS) as u64, words);
        convert(words, dst);
    });
    // SAFETY: the chunks cover the first `n` elements, and each chunk's `convert` wrote every
    // element of its chunk.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// The parts of complex elements as consecutive reals (real part first).
fn complex_parts<R, C>(out: &mut [MaybeUninit<C>]) -> &mut [MaybeUninit<R>] {
    assert_eq!(size_of::<C>(), 2 * size_of::<R>());
    // SAFETY: `C` is `num_complex::Complex<R>` (c32 or c64), which is `repr(C)` with fields
    // `re` and `im` of type `R`: a slice of `len` complex values is a slice of `2 * len`
    // values of `R` with the same alignment, and uninitialised stays uninitialised.
    unsafe {
        std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut MaybeUninit<R>, 2 * out.len())
    }
}

// -------------------------------------------------------------------------------------------
// Words
// -------------------------------------------------------------------------------------------

/// Fills `words` (a multiple of 4) with the words of blocks `first, first + 1, ...` of `draw`.
fn fill_words(draw: &Draw, first: u64, words: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked above).
        unsafe { fill_words_avx2(draw, first, words) };
        return;
    }
    fill_words_portable(draw, first, words)
}

/// [`fill_words`] without AVX2: one block at a time, with the scalar generators.
///
/// Why not lane-by-lane loops left to the compiler's vectoriser, as the AVX2 path's shape
/// would suggest: on x86-64's baseline (SSE2), rustc 1.95's LLVM got them wrong both ways it
/// was tried. Both generators unrolled over eight lanes in one function crashed its greedy
/// register allocator (a segmentation fault in `RegAllocBase::postOptimization`, which broke
/// every release build of a crate depending on emberfire) or spent minutes splitting live
/// ranges; Philox over four lanes compiled, but its SLP vectoriser produced a wrong third word
/// (correct at opt-level 0, with the SLP vectoriser off, with rustc 1.89's LLVM, and on
/// x86-64-v3). The AVX2 path spells its instructions out with intrinsics; this one asks the
/// compiler for nothing clever, and only CPUs without AVX2 (and other architectures) run it.
fn fill_words_portable(draw: &Draw, first: u64, words: &mut [u32]) {
    fill_blocks_one_by_one(draw, first, 0, words)
}

/// [`fill_words`] with the generators written with AVX2 instructions, eight counters at a
/// time (one 256-bit register per counter word).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_words_avx2(draw: &Draw, first: u64, words: &mut [u32]) {
    use super::random_avx2::{philox4x32_10_x8, threefry2x32_16_x8};
    // SAFETY: the caller guarantees AVX2.
    let philox = |c, rk: &_| unsafe { philox4x32_10_x8(c, rk) };
    // SAFETY: as above.
    let threefry = |c, inj: &_| unsafe { threefry2x32_16_x8(c, inj) };
    match draw.generator {
        Generator::Philox => philox_words::<8>(draw, first, words, philox),
        Generator::Threefry => threefry_words::<8>(draw, first, words, threefry),
    }
}

/// Fills `words` with Philox blocks `first, first + 1, ...` of `draw`: `L` counters (`L`
/// blocks) at a time through `philox` (which takes and returns words stored by lane), and the
/// rest one block at a time.
#[inline(always)]
fn philox_words<const L: usize>(
    draw: &Draw,
    first: u64,
    words: &mut [u32],
    philox: impl Fn([[u32; L]; 4], &[u32; 20]) -> [[u32; L]; 4],
) {
    let counter = |b: usize| draw.base.wrapping_add(first).wrapping_add(b as u64);
    let whole = words.len() / (4 * L) * (4 * L);
    let (head, tail) = words.split_at_mut(whole);
    for (k, out) in head.chunks_exact_mut(4 * L).enumerate() {
        let g: [u64; L] = std::array::from_fn(|l| counter(k * L + l));
        let c = [g.map(|g| g as u32), g.map(|g| (g >> 32) as u32), [draw.lane; L], [0; L]];
        let r = philox(c, &draw.keys);
        for (l, w) in out.chunks_exact_mut(4).enumerate() {
            w.copy_from_slice(&[r[0][l], r[1][l], r[2][l], r[3][l]]);
        }
    }
    fill_blocks_one_by_one(draw, first, whole / 4, tail);
}

/// Fills `words` with Threefry blocks `first, first + 1, ...` of `draw`: `L` counters (`L / 2`
/// blocks, a block being two counters) at a time through `threefry` (which takes and returns
/// words stored by lane), and the rest one block at a time.
#[inline(always)]
fn threefry_words<const L: usize>(
    draw: &Draw,
    first: u64,
    words: &mut [u32],
    threefry: impl Fn([[u32; L]; 2], &[u32; 20]) -> [[u32; L]; 2],
) {
    let counter = |b: usize| draw.base.wrapping_add(first).wrapping_add(b as u64);
    let whole = words.len() / (2 * L) * (2 * L);
    let (head, tail) = words.split_at_mut(whole);
    for (k, out) in head.chunks_exact_mut(2 * L).enumerate() {
        // lane j computes counter 2g + j % 2 of block k L / 2 + j / 2
        let t: [u64; L] = std::array::from_fn(|j| {
            counter(k * L / 2 + j / 2).wrapping_mul(2).wrapping_add((j % 2) as u64)
        });
        let r = threefry([t.map(|t| t as u32), t.map(|t| (t >> 32) as u32)], &draw.keys);
        for (j, w) in out.chunks_exact_mut(2).enumerate() {
            w.copy_from_slice(&[r[0][j], r[1][j]]);
        }
    }
    fill_blocks_one_by_one(draw, first, whole / 4, tail);
}

/// Fills `words` with the blocks `first + skip, first + skip + 1, ...` of `draw`, one at a
/// time: the few blocks after the last whole group of lanes, or every block without AVX2.
fn fill_blocks_one_by_one(draw: &Draw, first: u64, skip: usize, words: &mut [u32]) {
    for (k, w) in words.chunks_exact_mut(4).enumerate() {
        w.copy_from_slice(&draw.block(first.wrapping_add((skip + k) as u64)));
    }
}

// -------------------------------------------------------------------------------------------
// Uniform
// -------------------------------------------------------------------------------------------

// The converters below are given at least as many words as their elements use, so zipping
// the elements with the words writes every element (and lets the loops vectorise).

fn uniform_f32(words: &[u32], out: &mut [MaybeUninit<f32>]) {
    debug_assert!(out.len() <= words.len());
    for (d, &w) in out.iter_mut().zip(words) {
        d.write(unit_f32(w));
    }
}

fn uniform_f64(words: &[u32], out: &mut [MaybeUninit<f64>]) {
    debug_assert!(out.len() <= words.len() / 2);
    for (d, w) in out.iter_mut().zip(words.chunks_exact(2)) {
        d.write(unit_f64(w[0], w[1]));
    }
}

fn uniform_f16(words: &[u32], out: &mut [MaybeUninit<f16>]) {
    debug_assert!(out.len() <= 2 * words.len());
    for (pair, &w) in out.chunks_mut(2).zip(words) {
        for (d, h) in pair.iter_mut().zip([w as u16, (w >> 16) as u16]) {
            // exact: the value has 11 significant bits
            d.write(f16::from_f32(unit_f16_as_f32(h)));
        }
    }
}

/// The little-endian bytes of `words`, in a chunk-sized buffer.
fn le_bytes(words: &[u32], buf: &mut [u8; 4 * CHUNK_WORDS]) -> usize {
    for (b, w) in buf.chunks_exact_mut(4).zip(words) {
        b.copy_from_slice(&w.to_le_bytes());
    }
    4 * words.len()
}

fn uniform_bool(words: &[u32], out: &mut [MaybeUninit<crate::storage::BoolByte>]) {
    let mut buf = [0u8; 4 * CHUNK_WORDS];
    le_bytes(words, &mut buf);
    for (d, &b) in out.iter_mut().zip(buf.iter()) {
        d.write(crate::storage::BoolByte(b & 1));
    }
}

/// Integers are the bytes of the stream as they are.
macro_rules! uniform_int {
    ($name:ident, $t:ty) => {
        fn $name(words: &[u32], out: &mut [MaybeUninit<$t>]) {
            const S: usize = size_of::<$t>();
            let mut buf = [0u8; 4 * CHUNK_WORDS];
            let len = le_bytes(words, &mut buf);
            for (d, b) in out.iter_mut().zip(buf[..len].chunks_exact(S)) {
                d.write(<$t>::from_le_bytes(b.try_into().expect("S bytes")));
            }
        }
    };
}
uniform_int!(uniform_u8, u8);
uniform_int!(uniform_i16, i16);
uniform_int!(uniform_u16, u16);
uniform_int!(uniform_i32, i32);
uniform_int!(uniform_u32, u32);
uniform_int!(uniform_i64, i64);
uniform_int!(uniform_u64, u64);

/// The f32 or f64 elements of `draw` at the given indices of its request, one block each: the
/// CPU's evaluation of a random leaf (`Instr::Random`). Random arrays of the CPU backend are
/// generated whole by [`generate`], so this serves only programs that still hold a leaf, and
/// favours plainness over speed. Its normals use the standard library's `ln`, `sin` and `cos`,
/// so they may differ from [`generate`]'s in the last place.
pub(crate) fn at_indices(draw: &Draw, dtype: DType, idx: &[u64]) -> HostVec {
    match dtype {
        DType::F32 => HostVec::F32(idx.iter().map(|&e| element_f32(draw, e)).collect()),
        DType::F64 => HostVec::F64(idx.iter().map(|&e| element_f64(draw, e)).collect()),
        t => unreachable!("internal error: a random leaf of type {}", t.name()),
    }
}

/// Element `e` of an f32 request: word `e` of the stream (uniform), or the cosine or sine of
/// the pair of words it belongs to (normal).
fn element_f32(draw: &Draw, e: u64) -> f32 {
    let w = draw.block(e / 4);
    let pair = (e % 4 / 2 * 2) as usize;
    let (a, b) = (w[pair], w[pair + 1]);
    let first = e.is_multiple_of(2);
    match draw.dist {
        Distribution::Uniform => unit_f32(if first { a } else { b }),
        Distribution::Normal => {
            let r = (-2.0 * (unit_f32(a) + F32_STEP).ln()).sqrt();
            let t = unit_f32(b) * std::f32::consts::TAU;
            r * if first { t.cos() } else { t.sin() }
        }
    }
}

/// Element `e` of an f64 request: the words `2e` and `2e + 1` of the stream (uniform), or
/// the cosine or sine of its block's pair (normal).
fn element_f64(draw: &Draw, e: u64) -> f64 {
    let w = draw.block(e / 2);
    let first = e.is_multiple_of(2);
    match draw.dist {
        Distribution::Uniform => {
            if first {
                unit_f64(w[0], w[1])
            } else {
                unit_f64(w[2], w[3])
            }
        }
        Distribution::Normal => {
            let (c, s) = box_muller_f64(&w);
            if first {
                c
            } else {
                s
            }
        }
    }
}

// -------------------------------------------------------------------------------------------
// Normal (Box-Muller)
// -------------------------------------------------------------------------------------------

/// Pairs of f32 normals: pair `p` from words `2p` and `2p + 1`.
fn normal_f32(words: &[u32], out: &mut [MaybeUninit<f32>]) {
    const PAIRS: usize = CHUNK_WORDS / 2;
    let pairs = out.len().div_ceil(2);
    let (mut u, mut t) = ([0f32; PAIRS], [0f32; PAIRS]);
    for p in 0..pairs {
        u[p] = unit_f32(words[2 * p]) + F32_STEP; // in (0, 1], exact
        t[p] = unit_f32(words[2 * p + 1]) * std::f32::consts::TAU;
    }
    let (mut ln_u, mut sin_t, mut cos_t) = ([0f32; PAIRS], [0f32; PAIRS], [0f32; PAIRS]);
    vmath::log_f32(&u[..pairs], &mut ln_u[..pairs]);
    vmath::sin_f32(&t[..pairs], &mut sin_t[..pairs]);
    vmath::cos_f32(&t[..pairs], &mut cos_t[..pairs]);
    for (i, d) in out.iter_mut().enumerate() {
        let p = i / 2;
        let r = (-2.0 * ln_u[p]).sqrt();
        d.write(r * if i % 2 == 0 { cos_t[p] } else { sin_t[p] });
    }
}

/// Pairs of f64 normals: pair `p` from words `4p .. 4p + 4`.
fn normal_f64(words: &[u32], out: &mut [MaybeUninit<f64>]) {
    for (p, pair) in out.chunks_mut(2).enumerate() {
        let (c, s) = box_muller_f64(&words[4 * p..4 * p + 4]);
        pair[0].write(c);
        if let Some(d) = pair.get_mut(1) {
            d.write(s);
        }
    }
}

/// The f64 normal pair `(r cos t, r sin t)` of one block's four words.
fn box_muller_f64(w: &[u32]) -> (f64, f64) {
    let u = unit_f64(w[0], w[1]) + F64_STEP; // in (0, 1], exact
    let t = unit_f64(w[2], w[3]) * std::f64::consts::TAU;
    let r = (-2.0 * u.ln()).sqrt();
    let (s, c) = t.sin_cos();
    (r * c, r * s)
}

impl crate::backend::random::Random for super::Cpu {
    fn random(&self, draw: &Draw, dtype: DType, n: usize) -> Result<crate::backend::Buffer, Error> {
        Ok(crate::backend::Buffer::host(generate(draw, dtype, n)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(generator: Generator, base: u64) -> Draw {
        Draw::new(generator, 0, 0x0123_4567_89ab_cdef, base, Distribution::Uniform)
    }

    /// Every form of the loops (the one this CPU runs, the portable one, and AVX2 where the
    /// CPU has it) writes the blocks that `Draw::block` computes one at a time, for every
    /// length up to a few groups of lanes (whole groups, a tail, and nothing at all).
    #[test]
    fn vector_loops_match_one_block_at_a_time() {
        type Fill = fn(&Draw, u64, &mut [u32]);
        let mut forms: Vec<(&str, Fill)> =
            vec![("dispatched", fill_words), ("portable", fill_words_portable)];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked above).
            forms.push(("avx2", |d, first, w| unsafe { fill_words_avx2(d, first, w) }));
        }
        for generator in [Generator::Philox, Generator::Threefry] {
            // a base near the 32-bit boundary exercises the carry into the high counter word
            let d = draw(generator, (1 << 32) - 5);
            for blocks in 0..=21 {
                for (name, fill) in &forms {
                    let mut words = vec![0u32; 4 * blocks];
                    fill(&d, 3, &mut words);
                    for b in 0..blocks {
                        assert_eq!(
                            words[4 * b..4 * b + 4],
                            d.block(3 + b as u64),
                            "{name} {generator:?}: block {b} of {blocks}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn chunks_continue_the_stream() {
        let d = draw(Generator::Philox, 0);
        let n = 3 * CHUNK_WORDS + 5;
        let v = match generate(&d, DType::U32, n).unwrap() {
            HostVec::U32(v) => v,
            _ => unreachable!(),
        };
        for i in [0, 1, CHUNK_WORDS - 1, CHUNK_WORDS, 2 * CHUNK_WORDS + 7, n - 1] {
            assert_eq!(v[i], d.block((i / 4) as u64)[i % 4], "element {i}");
        }
    }

    /// A random leaf's numbers, one index at a time, are those of a whole request: uniform
    /// ones exactly, normal ones within a few units in the last place (the standard library's
    /// `ln`, `sin` and `cos` against `vmath`'s).
    #[test]
    fn leaf_numbers_at_any_index_match_the_whole_request() {
        let n = 4 * CHUNK_WORDS + 3;
        let idx: Vec<u64> = (0..n as u64).filter(|e| e % 7 < 3 || *e + 9 > n as u64).collect();
        for generator in [Generator::Philox, Generator::Threefry] {
            for dist in [Distribution::Uniform, Distribution::Normal] {
                let d = Draw::new(generator, 0, 0x5eed, (1 << 32) - 3, dist);
                let tol = |x: f64| {
                    if dist == Distribution::Uniform {
                        0.0
                    } else {
                        4e-7 * (1.0 + x.abs())
                    }
                };
                let (HostVec::F32(all), HostVec::F32(some)) =
                    (generate(&d, DType::F32, n).unwrap(), at_indices(&d, DType::F32, &idx))
                else {
                    unreachable!()
                };
                for (k, &e) in idx.iter().enumerate() {
                    let (a, b) = (all[e as usize] as f64, some[k] as f64);
                    assert!((a - b).abs() <= tol(a), "f32 {generator:?} {dist:?} {e}: {a} {b}");
                }
                let (HostVec::F64(all), HostVec::F64(some)) =
                    (generate(&d, DType::F64, n).unwrap(), at_indices(&d, DType::F64, &idx))
                else {
                    unreachable!()
                };
                for (k, &e) in idx.iter().enumerate() {
                    let (a, b) = (all[e as usize], some[k]);
                    assert!(
                        (a - b).abs() <= tol(a) * 1e-8,
                        "f64 {generator:?} {dist:?} {e}: {a} {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn complex_parts_interleave() {
        let d = draw(Generator::Philox, 9);
        let (re, cx) =
            match (generate(&d, DType::F32, 6).unwrap(), generate(&d, DType::C32, 3).unwrap()) {
                (HostVec::F32(a), HostVec::C32(b)) => (a, b),
                _ => unreachable!(),
            };
        for k in 0..3 {
            assert_eq!((cx[k].re, cx[k].im), (re[2 * k], re[2 * k + 1]));
        }
    }
}
