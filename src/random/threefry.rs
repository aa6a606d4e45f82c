//! Threefry2x32, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel
//! random numbers: as easy as 1, 2, 3" (SC11): the Threefish block cipher of the Skein hash,
//! reduced to two 32-bit words and without its tweak, as published with Random123.
//!
//! Each round adds, rotates and xors the two words; every four rounds a word pair of the key
//! schedule is injected. ArrayFire's `THREEFRY_2X32_16` runs 16 rounds. The key schedule is
//! computed once per request by [`injections`], so the per-counter work is only the rounds.

/// Rounds of the variant ArrayFire names `THREEFRY_2X32_16`.
pub(crate) const ROUNDS: usize = 16;
/// Skein's key-schedule parity constant for 32-bit words.
const PARITY: u32 = 0x1BD1_1BDA;
/// Rotation of the second word in round `r % 8`.
const ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// The key words injected before the first round and after every fourth round, for up to 32
/// rounds: pair `s` (words `2s`, `2s + 1`) is `(ks[s % 3], ks[(s + 1) % 3] + s)` where `ks` is
/// the key extended by the parity word.
pub(crate) fn injections(key: [u32; 2]) -> [u32; 20] {
    let ks = [key[0], key[1], PARITY ^ key[0] ^ key[1]];
    let mut inj = [0u32; 20];
    for s in 0..10 {
        inj[2 * s] = ks[s % 3];
        inj[2 * s + 1] = ks[(s + 1) % 3].wrapping_add(s as u32);
    }
    inj
}

/// Threefry2x32 with `R` rounds of counter `ctr`, under the key schedule `inj` (see
/// [`injections`]; `R` at most 32).
#[inline(always)]
pub(crate) fn threefry2x32<const R: usize>(ctr: [u32; 2], inj: &[u32; 20]) -> [u32; 2] {
    let mut x0 = ctr[0].wrapping_add(inj[0]);
    let mut x1 = ctr[1].wrapping_add(inj[1]);
    for r in 0..R {
        x0 = x0.wrapping_add(x1);
        x1 = x1.rotate_left(ROTATIONS[r % 8]) ^ x0;
        if r % 4 == 3 {
            let s = (r + 1) / 4;
            x0 = x0.wrapping_add(inj[2 * s]);
            x1 = x1.wrapping_add(inj[2 * s + 1]);
        }
    }
    [x0, x1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The threefry2x32 lines of Random123's `tests/kat_vectors` (counter, key, expected
    /// output), from the Random123 distribution of D. E. Shaw Research. Random123 publishes
    /// 13, 20 and 32 rounds; the 16-round variant shares every step and differs only in where
    /// the loop stops, so these vectors pin the rotations, the key schedule and the injection
    /// points it uses.
    const PI_CTR: [u32; 2] = [0x243f_6a88, 0x85a3_08d3];
    const PI_KEY: [u32; 2] = [0x1319_8a2e, 0x0370_7344];

    fn kat<const R: usize>(cases: [([u32; 2], [u32; 2], [u32; 2]); 3]) {
        for (ctr, key, want) in cases {
            assert_eq!(threefry2x32::<R>(ctr, &injections(key)), want, "{R} rounds, ctr {ctr:x?}");
        }
    }

    #[test]
    fn known_answers() {
        let (z, f) = ([0u32; 2], [0xffff_ffffu32; 2]);
        kat::<13>([
            (z, z, [0x9d1c_5ec6, 0x8bd5_0731]),
            (f, f, [0xfd36_d048, 0x2d17_272c]),
            (PI_CTR, PI_KEY, [0xba3e_4725, 0xf27d_669e]),
        ]);
        kat::<20>([
            (z, z, [0x6b20_0159, 0x99ba_4efe]),
            (f, f, [0x1cb9_96fc, 0xbb00_2be7]),
            (PI_CTR, PI_KEY, [0xc492_3a9c, 0x483d_f7a0]),
        ]);
        kat::<32>([
            (z, z, [0xcee3_d47e, 0xa23d_fd5c]),
            (f, f, [0x6e2f_e0d0, 0xb1b7_6f82]),
            (PI_CTR, PI_KEY, [0xe282_7716, 0xc3c0_5cdf]),
        ]);
    }
}
