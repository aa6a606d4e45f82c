//! Rounding to bf16, to nearest with ties to even, from the exact value of an f64 or a 64-bit
//! integer.
//!
//! The `half` crate's `bf16::from_f64` drops the low 32 bits of the f64 before rounding, so a
//! value just above a tie of bf16 rounds as the tie would (to even, sometimes down) instead of
//! up. Going through f32 with round-to-nearest has the same double-rounding fault. Rounding to
//! f32 *to odd* first does not: with 16 bits more than bf16 keeps, the odd last bit records that
//! something was dropped and can never land on a bf16 tie, so the second rounding (f32 to bf16,
//! to nearest even) gives the correctly rounded result. The CUDA kernels compute the same
//! functions (`d2b`, `l2b` and `ul2b` in `elementwise_prelude.cu`), so the backends agree bit
//! for bit.

use half::bf16;

/// f32 to bf16, to nearest even; a NaN stays a (quiet) NaN, infinities stay infinite, and a
/// value past bf16's largest finite value by half an ulp or more becomes infinite.
#[inline(always)]
pub(crate) fn from_f32(f: f32) -> bf16 {
    let u = f.to_bits();
    if u & 0x7fff_ffff > 0x7f80_0000 {
        // keep the sign and the top of the payload, set the quiet bit
        return bf16::from_bits(((u >> 16) | 0x0040) as u16);
    }
    // adding 0x7fff plus the kept part's last bit carries into it exactly when the dropped
    // half is above a tie, or at a tie with an odd kept part
    bf16::from_bits(((u + 0x7fff + ((u >> 16) & 1)) >> 16) as u16)
}

/// f64 to f32 rounding to odd: truncated toward zero, with the last bit set when anything was
/// dropped. Overflow gives the largest finite f32 (odd), which then rounds to infinity in bf16.
#[inline(always)]
fn f64_to_f32_odd(x: f64) -> f32 {
    let near = x as f32;
    if near as f64 == x || x.is_nan() {
        return near;
    }
    let mut bits = near.to_bits();
    if (near as f64).abs() > x.abs() {
        // rounded away from zero: one step back toward it (`near` is not zero here)
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

/// f64 to bf16, to nearest even from the exact value.
#[inline(always)]
pub(crate) fn from_f64(x: f64) -> bf16 {
    from_f32(f64_to_f32_odd(x))
}

/// An unsigned integer's magnitude as an f32 rounded to odd (the integer analogue of
/// [`f64_to_f32_odd`]; `as f64` would round an integer above 2^53 to nearest first).
#[inline(always)]
fn u64_to_f32_odd(m: u64) -> f32 {
    let width = 64 - m.leading_zeros();
    if width <= 24 {
        return m as f32;
    }
    let shift = width - 24;
    let dropped = m & ((1u64 << shift) - 1);
    let kept = (m >> shift) | (dropped != 0) as u64;
    // `kept` has 24 bits: exact in f32, and so is the scaling by a power of two
    kept as f32 * f32::from_bits((127 + shift) << 23)
}

/// u64 to bf16, to nearest even.
#[inline(always)]
pub(crate) fn from_u64(u: u64) -> bf16 {
    from_f32(u64_to_f32_odd(u))
}

/// i64 to bf16, to nearest even.
#[inline(always)]
pub(crate) fn from_i64(i: i64) -> bf16 {
    let m = from_f32(u64_to_f32_odd(i.unsigned_abs()));
    if i < 0 {
        -m
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The correctly rounded bf16 of `x`, by comparing with the two neighbours in f64.
    fn reference(x: f64) -> u16 {
        // the bf16 values around x: its f32's truncation and that one's neighbours
        let t = (x as f32).to_bits() >> 16;
        let (mut best, mut err) = (0u16, f64::INFINITY);
        for c in [t.wrapping_sub(1), t, t + 1] {
            let v = bf16::from_bits(c as u16).to_f64();
            let e = (v - x).abs();
            let even = c & 1 == 0;
            if e < err || (e == err && even) {
                err = e;
                best = c as u16;
            }
        }
        best
    }

    #[test]
    fn f64_ties_and_just_above_ties() {
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1); a hair above it rounds up,
        // which dropping the f64's low bits would miss
        let tie = 1.0 + 2f64.powi(-8);
        assert_eq!(from_f64(tie).to_bits(), 0x3f80);
        assert_eq!(from_f64(tie + 2f64.powi(-40)).to_bits(), 0x3f81);
        assert_eq!(from_f64(tie - 2f64.powi(-40)).to_bits(), 0x3f80);
        // the tie above an odd value goes up to even
        let odd_tie = 1.0 + 3.0 * 2f64.powi(-8);
        assert_eq!(from_f64(odd_tie).to_bits(), 0x3f82);
        for x in [tie + 2f64.powi(-40), odd_tie - 2f64.powi(-45), 3.1e-39, -7.25e30, 1e-45] {
            assert_eq!(from_f64(x).to_bits(), reference(x), "{x:e}");
        }
    }

    #[test]
    fn specials_keep_their_meaning() {
        assert!(from_f64(f64::NAN).is_nan());
        assert_eq!(from_f64(f64::INFINITY), bf16::INFINITY);
        assert_eq!(from_f64(f64::NEG_INFINITY), bf16::NEG_INFINITY);
        assert_eq!(from_f64(1e300), bf16::INFINITY);
        assert_eq!(from_f64(-1e300), bf16::NEG_INFINITY);
        assert_eq!(from_f64(-0.0).to_bits(), 0x8000);
        // far below the smallest subnormal (2^-133): zero, keeping the sign
        assert_eq!(from_f64(-1e-60).to_bits(), 0x8000);
        assert_eq!(from_f32(f32::MAX), bf16::INFINITY);
    }

    #[test]
    fn integers_round_from_their_exact_value() {
        assert_eq!(from_i64(257).to_f64(), 256.0); // tie, to even
        assert_eq!(from_i64(259).to_f64(), 260.0); // tie, to even (up)
        assert_eq!(from_i64(-259).to_f64(), -260.0);
        // 2^62 + 2^54 is a tie between 2^62 and 2^62 + 2^55; plus one it must round up,
        // which an f64 of it (rounded to nearest first) loses
        let tie = (1u64 << 62) + (1u64 << 54);
        assert_eq!(from_u64(tie).to_f64(), 2f64.powi(62));
        assert_eq!(from_u64(tie + 1).to_f64(), 2f64.powi(62) + 2f64.powi(55));
        assert_eq!(from_i64(i64::MIN).to_f64(), -(2f64.powi(63)));
        assert_eq!(from_u64(u64::MAX).to_f64(), 2f64.powi(64));
        assert_eq!(from_u64(0).to_bits(), 0);
    }
}
