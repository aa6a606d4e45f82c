//! Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel
//! random numbers: as easy as 1, 2, 3" (SC11), as published with their Random123 library.
//!
//! Philox is a keyed bijection of 128-bit counters: ten rounds, each multiplying two of the
//! four words by fixed odd constants and mixing the high and low halves of the products with
//! the other words and a round key. The key (the seed) is bumped by two Weyl constants between
//! rounds; [`round_keys`] computes the ten round keys once per request, so the per-counter
//! work is only the rounds. The CUDA kernel (`backend/cuda/kernels/random.cu`) follows the same
//! definition.

/// The multipliers of Philox4x32.
pub(crate) const M0: u32 = 0xD251_1F53;
pub(crate) const M1: u32 = 0xCD9E_8D57;
/// The Weyl increments of the key: the golden ratio and sqrt(3) - 1, as 32-bit fractions.
pub(crate) const W0: u32 = 0x9E37_79B9;
pub(crate) const W1: u32 = 0xBB67_AE85;
/// Rounds of the variant ArrayFire names `PHILOX_4X32_10`.
pub(crate) const ROUNDS: usize = 10;

/// The key of each round, as `[k0 of round 0, k1 of round 0, k0 of round 1, ...]`.
pub(crate) fn round_keys(key: [u32; 2]) -> [u32; 2 * ROUNDS] {
    let mut rk = [0u32; 2 * ROUNDS];
    for r in 0..ROUNDS {
        rk[2 * r] = key[0].wrapping_add(W0.wrapping_mul(r as u32));
        rk[2 * r + 1] = key[1].wrapping_add(W1.wrapping_mul(r as u32));
    }
    rk
}

/// The high and low words of the 64-bit product `a * b`.
#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = a as u64 * b as u64;
    ((p >> 32) as u32, p as u32)
}

/// One round on counter `c` with round key `(k0, k1)`.
#[inline(always)]
fn round(c: [u32; 4], k0: u32, k1: u32) -> [u32; 4] {
    let (hi0, lo0) = mulhilo(M0, c[0]);
    let (hi1, lo1) = mulhilo(M1, c[2]);
    [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
}

/// Philox4x32-10 of counter `ctr` under the round keys `rk` (see [`round_keys`]).
#[inline(always)]
pub(crate) fn philox4x32_10(ctr: [u32; 4], rk: &[u32; 2 * ROUNDS]) -> [u32; 4] {
    let mut c = ctr;
    for r in 0..ROUNDS {
        c = round(c, rk[2 * r], rk[2 * r + 1]);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three philox4x32 10 lines of Random123's `tests/kat_vectors` (counter, key,
    /// expected output), from the Random123 distribution of D. E. Shaw Research.
    const KAT: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        ([0, 0, 0, 0], [0, 0], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
        ([0xffff_ffff; 4], [0xffff_ffff; 2], [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    #[test]
    fn known_answers() {
        for (ctr, key, want) in KAT {
            assert_eq!(philox4x32_10(ctr, &round_keys(key)), want, "ctr {ctr:x?} key {key:x?}");
        }
    }
}
