//! What numbers a request produces: the definition shared by the CPU code
//! (`backend/cpu/random.rs`) and the CUDA kernel (`backend/cuda/kernels/random.cu`).
//!
//! **Blocks.** A request for `n` elements of a type of `s` bytes covers `ceil(n * s / 16)`
//! blocks of 16 bytes, and reserves that many consecutive values `g` of the engine's 64-bit
//! counter, starting at [`Draw::base`]. Block `g` is four 32-bit words:
//! - Philox4x32-10: the output for counter `(g mod 2^32, g / 2^32, lane, 0)` and key
//!   `(seed mod 2^32, seed / 2^32)`, where `lane` is 0 for `PHILOX_4X32_10` and 11213 for
//!   `MERSENNE_GP11213` (see [`RandomEngineType`](crate::RandomEngineType));
//! - Threefry2x32-16: the two outputs for counter `2g` followed by the two for `2g + 1`
//!   (each counter split into low and high words), same key.
//!
//! The words of consecutive blocks form the request's word stream `W[0], W[1], ...`, and its
//! little-endian bytes the byte stream. Element `i` is made from bytes `i*s .. (i+1)*s`.
//!
//! **Uniform** (`randu`, `random_uniform`):
//! - `f32`: `(W[i] >> 8) * 2^-24`, the top 24 bits: 2^24 equally spaced values in [0, 1),
//!   0 included, 1 never;
//! - `f64`: `(X >> 11) * 2^-53` where `X = W[2i] + 2^32 W[2i+1]`: the top 53 bits, [0, 1) as
//!   for f32;
//! - `f16`: `(H >> 5) * 2^-11` where `H` is the i-th 16-bit little-endian unit: 2^11 values in
//!   [0, 1), each exact in f16 (computed in f32 and converted without rounding);
//! - `c32`, `c64`: real and imaginary parts are consecutive independent values of f32 or f64;
//! - integer types: the element's bytes as they are, so every bit pattern is equally likely
//!   (signed types span their whole range, as raw bits);
//! - `bool`: the lowest bit of the element's byte.
//!
//! **Normal** (`randn`, `random_normal`, for f32, f64, c32, c64): the Box-Muller transform of
//! pairs. Pair `p` of real values uses the bytes of elements `2p` and `2p + 1` (for complex
//! types, element `p`, real part first): with `a` and `b` the two uniform values those bytes
//! give as above, `u = a + 2^-24` (`2^-53` for f64) lies in (0, 1], and
//! `r = sqrt(-2 ln u)`, `t = b * 2pi` (one rounding, with 2pi rounded to the type); the pair
//! is `(r cos t, r sin t)`. An odd count uses
//! only the cosine of the last pair. Values are bounded: |z| <= 5.77 for f32 and 8.58 for f64
//! (u >= 2^-24 or 2^-53). The backends evaluate `ln`, `sin` and `cos` with their own math
//! (CUDA's f32 normals with functions written for exactly these arguments: the radius in
//! `kernels/random_core.cu`, the sine and cosine in `kernels/trig.cu`, each within an ulp or
//! two), so normals agree between CPU and CUDA to a few units in the last place, not bit for
//! bit; uniform values and integers agree exactly.

use super::{philox, threefry};

/// The bijection that turns counters into words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Generator {
    Philox,
    Threefry,
}

/// The distribution of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Distribution {
    Uniform,
    Normal,
}

/// One request: everything a backend needs to compute its numbers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Draw {
    pub generator: Generator,
    /// Philox's round keys, or Threefry's key injections.
    pub keys: [u32; 20],
    /// Philox's third counter word (separates the Mersenne-type stream).
    pub lane: u32,
    /// The counter value of the request's first block.
    pub base: u64,
    pub dist: Distribution,
}

/// The Philox counter word that separates the stream of `MERSENNE_GP11213` engines from that of
/// `PHILOX_4X32_10` engines with the same seed (ArrayFire's Mersenne exponent, 11213).
pub(crate) const MERSENNE_LANE: u32 = 11213;

/// Bytes per block.
pub(crate) const BLOCK_BYTES: usize = 16;

impl Draw {
    /// A request of `dist` numbers from engine type `generator` with `seed`, starting at counter
    /// `base`.
    pub(crate) fn new(
        generator: Generator,
        lane: u32,
        seed: u64,
        base: u64,
        dist: Distribution,
    ) -> Draw {
        let key = [seed as u32, (seed >> 32) as u32];
        let keys = match generator {
            Generator::Philox => philox::round_keys(key),
            Generator::Threefry => threefry::injections(key),
        };
        Draw { generator, keys, lane, base, dist }
    }

    /// The four words of block `base + b`.
    #[inline]
    pub(crate) fn block(&self, b: u64) -> [u32; 4] {
        let g = self.base.wrapping_add(b);
        match self.generator {
            Generator::Philox => {
                philox::philox4x32_10([g as u32, (g >> 32) as u32, self.lane, 0], &self.keys)
            }
            Generator::Threefry => {
                let (c0, c1) = (g.wrapping_mul(2), g.wrapping_mul(2).wrapping_add(1));
                let a = threefry::threefry2x32::<{ threefry::ROUNDS }>(
                    [c0 as u32, (c0 >> 32) as u32],
                    &self.keys,
                );
                let b = threefry::threefry2x32::<{ threefry::ROUNDS }>(
                    [c1 as u32, (c1 >> 32) as u32],
                    &self.keys,
                );
                [a[0], a[1], b[0], b[1]]
            }
        }
    }
}

/// Blocks covering `n` elements of `size` bytes.
pub(crate) fn blocks_for(n: usize, size: usize) -> u64 {
    (n as u64 * size as u64).div_ceil(BLOCK_BYTES as u64)
}

/// 2^-24 and 2^-53, the spacing of uniform f32 and f64 values.
pub(crate) const F32_STEP: f32 = 1.0 / (1u32 << 24) as f32;
pub(crate) const F64_STEP: f64 = 1.0 / (1u64 << 53) as f64;

/// Uniform f32 in [0, 1) from one word.
#[inline(always)]
pub(crate) fn unit_f32(w: u32) -> f32 {
    (w >> 8) as f32 * F32_STEP
}

/// Uniform f64 in [0, 1) from two words, low word first.
#[inline(always)]
pub(crate) fn unit_f64(lo: u32, hi: u32) -> f64 {
    (((hi as u64) << 32 | lo as u64) >> 11) as f64 * F64_STEP
}

/// Uniform f32 in [0, 1) with 11 bits, exact in f16, from a 16-bit unit.
#[inline(always)]
pub(crate) fn unit_f16_as_f32(h: u16) -> f32 {
    (h >> 5) as f32 * (1.0 / 2048.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_ends() {
        assert_eq!(unit_f32(0), 0.0);
        assert_eq!(unit_f32(u32::MAX), 1.0 - F32_STEP);
        assert_eq!(unit_f64(0, 0), 0.0);
        assert_eq!(unit_f64(u32::MAX, u32::MAX), 1.0 - F64_STEP);
        assert_eq!(unit_f16_as_f32(u16::MAX), 2047.0 / 2048.0);
        let h = half::f16::from_f32(unit_f16_as_f32(u16::MAX));
        assert_eq!(h.to_f32(), 2047.0 / 2048.0, "exact in f16");
    }

    #[test]
    fn threefry_blocks_use_two_counters() {
        let d = Draw::new(Generator::Threefry, 0, 7, 5, Distribution::Uniform);
        let w = d.block(1);
        let a = threefry::threefry2x32::<16>([12, 0], &d.keys);
        let b = threefry::threefry2x32::<16>([13, 0], &d.keys);
        assert_eq!(w, [a[0], a[1], b[0], b[1]]);
    }
}
