//! Philox4x32-10 and Threefry2x32-16 on eight counters at once with AVX2, for CPUs that have
//! it. Spelled out with intrinsics rather than left to the vectoriser: AVX2 has no 32-bit
//! high multiply, so the 32x32 -> 64-bit products are `vpmuludq` on the even and odd lanes,
//! and the vectoriser's own attempts at lane loops were slow or, on the baseline target, wrong
//! (see `fill_words_portable` in `random.rs`). Both functions compute exactly what the scalar
//! forms in `random::philox` and `random::threefry` compute (the unit tests compare them).

use std::arch::x86_64::*;

use crate::random::philox::{M0, M1, ROUNDS};

/// Eight lanes of `u32` as one register.
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load(a: &[u32; 8]) -> __m256i {
    // SAFETY: `a` is 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(a.as_ptr() as *const __m256i) }
}

/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store(v: __m256i) -> [u32; 8] {
    let mut a = [0u32; 8];
    // SAFETY: `a` is 32 writable bytes; the store is unaligned.
    unsafe { _mm256_storeu_si256(a.as_mut_ptr() as *mut __m256i, v) };
    a
}

/// The high and low words of the eight products `a[l] * m` (`m` in the low half of each
/// 64-bit lane).
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn mulhilo(a: __m256i, m: __m256i) -> (__m256i, __m256i) {
    // products of the even lanes and of the odd lanes, 64 bits each
    let even = _mm256_mul_epu32(a, m);
    let odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), m);
    let lo = _mm256_blend_epi32::<0b1010_1010>(even, _mm256_slli_epi64::<32>(odd));
    let hi = _mm256_blend_epi32::<0b1010_1010>(_mm256_srli_epi64::<32>(even), odd);
    (hi, lo)
}

/// Philox4x32-10 of eight counters stored by word (`c[w][lane]`), under round keys `rk`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn philox4x32_10_x8(c: [[u32; 8]; 4], rk: &[u32; 2 * ROUNDS]) -> [[u32; 8]; 4] {
    let (m0, m1) = (_mm256_set1_epi64x(M0 as i64), _mm256_set1_epi64x(M1 as i64));
    // SAFETY: this function runs only where AVX2 is supported (its own contract), which is
    // all `load` asks.
    let [mut c0, mut c1, mut c2, mut c3] =
        unsafe { [load(&c[0]), load(&c[1]), load(&c[2]), load(&c[3])] };
    for r in 0..ROUNDS {
        // SAFETY: AVX2 is supported, as above.
        let (hi0, lo0) = unsafe { mulhilo(c0, m0) };
        // SAFETY: AVX2 is supported, as above.
        let (hi1, lo1) = unsafe { mulhilo(c2, m1) };
        let k0 = _mm256_set1_epi32(rk[2 * r] as i32);
        let k1 = _mm256_set1_epi32(rk[2 * r + 1] as i32);
        c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), k0);
        c1 = lo1;
        c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), k1);
        c3 = lo0;
    }
    // SAFETY: AVX2 is supported, as above.
    unsafe { [store(c0), store(c1), store(c2), store(c3)] }
}

/// Threefry2x32-16 of eight counters stored by word (`c[w][lane]`), under the key injections
/// `inj` (see `random::threefry::injections`).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn threefry2x32_16_x8(c: [[u32; 8]; 2], inj: &[u32; 20]) -> [[u32; 8]; 2] {
    // SAFETY: this function runs only where AVX2 is supported.
    let [mut x0, mut x1] = unsafe { [load(&c[0]), load(&c[1])] };
    x0 = _mm256_add_epi32(x0, _mm256_set1_epi32(inj[0] as i32));
    x1 = _mm256_add_epi32(x1, _mm256_set1_epi32(inj[1] as i32));
    // one round: x0 += x1; x1 = rotl(x1, R) ^ x0, with the rotation a constant
    macro_rules! mix {
        ($($r:literal),*) => {$(
            x0 = _mm256_add_epi32(x0, x1);
            x1 = _mm256_or_si256(
                _mm256_slli_epi32::<$r>(x1),
                _mm256_srli_epi32::<{ 32 - $r }>(x1),
            );
            x1 = _mm256_xor_si256(x1, x0);
        )*};
    }
    for s in 1..=4 {
        if s % 2 == 1 {
            mix!(13, 15, 26, 6);
        } else {
            mix!(17, 29, 16, 24);
        }
        x0 = _mm256_add_epi32(x0, _mm256_set1_epi32(inj[2 * s] as i32));
        x1 = _mm256_add_epi32(x1, _mm256_set1_epi32(inj[2 * s + 1] as i32));
    }
    // SAFETY: this function runs only where AVX2 is supported.
    unsafe { [store(x0), store(x1)] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{philox, threefry};

    /// Each lane of the eight computes what the scalar generators compute for its counter.
    #[test]
    fn match_the_scalar_forms() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return; // nothing to compare on this CPU
        }
        let lane: [u32; 8] = std::array::from_fn(|l| l as u32);
        let c = [lane.map(|l| l.wrapping_mul(0x9e37_79b9)), lane.map(|l| !l), [11213; 8], lane];
        let rk = philox::round_keys([0xdead_beef, 0x1234_5678]);
        // SAFETY: AVX2 is supported (checked above).
        let got = unsafe { philox4x32_10_x8(c, &rk) };
        for l in 0..8 {
            let want = philox::philox4x32_10([c[0][l], c[1][l], c[2][l], c[3][l]], &rk);
            assert_eq!([got[0][l], got[1][l], got[2][l], got[3][l]], want, "Philox lane {l}");
        }
        let inj = threefry::injections([0xffff_fffe, 3]);
        let c = [c[0], c[1]];
        // SAFETY: as above.
        let got = unsafe { threefry2x32_16_x8(c, &inj) };
        for l in 0..8 {
            let want = threefry::threefry2x32::<{ threefry::ROUNDS }>([c[0][l], c[1][l]], &inj);
            assert_eq!([got[0][l], got[1][l]], want, "Threefry lane {l}");
        }
    }
}
