//! The CSR product's rows with AVX-512: sixteen rows of f32 (eight of f64) at a time, one row
//! a lane.
//!
//! The scalar loop spends about 3.7 cycles a stored element on the 5-point Laplacian of the
//! conjugate-gradient benchmark (2-core Xeon, AVX-512): each element is a load of the value, a
//! load of the column, a dependent load of `x`, and the row's sum is a chain of dependent
//! additions. Here lane `r` of a vector sums row `r` of a block: at step `j` every lane
//! gathers the `j`-th stored element of its row (value and column, masked off past the row's
//! end) and the element of `x` in that column, and adds the product to its sum. The rows of a
//! block take as many steps as the longest of them, so a block whose longest row is far longer
//! than its mean (where the lanes would mostly idle) is left to the scalar loop.
//!
//! Each row's products are added in the order of its stored elements, each product rounded
//! before the addition (no fused multiply-add), exactly as the scalar loop does, so both give
//! the same bits.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Whether the running CPU has AVX-512 (foundation), which these kernels need.
#[cfg(target_arch = "x86_64")]
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn available() -> bool {
    false
}

/// Whether a block of rows with these lengths (their sum and the longest) is worth the lanes:
/// the steps taken (the longest, for every lane) are at most four times the elements there
/// are, plus a few.
fn worth_it(sum: i32, longest: i32, lanes: i32) -> bool {
    longest * lanes <= 4 * sum + 4 * lanes
}

/// Rows `first..first + ys.len()` of the product of the CSR matrix (`values`, `offsets`,
/// `indices`) with the column `x`, written to `ys`. Returns how many leading rows it wrote
/// (whole blocks of 16 it took); the caller computes the rest.
///
/// # Safety
/// The CPU has AVX-512F; `offsets` holds `first + ys.len() + 1` non-decreasing offsets into
/// `values` and `indices`, and every column index lies in `0..x.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn rows_f32(
    values: &[f32],
    offsets: &[i32],
    indices: &[i32],
    x: &[f32],
    first: usize,
    ys: &mut [MaybeUninit<f32>],
) -> usize {
    // SAFETY: the caller's promises (AVX-512F, offsets and columns in range) make every
    // load, gather and store below stay inside the slices.
    unsafe {
        let mut done = 0;
        while done + 16 <= ys.len() {
            let at = offsets.as_ptr().add(first + done);
            let start = _mm512_loadu_si512(at as *const _);
            let len = _mm512_sub_epi32(_mm512_loadu_si512(at.add(1) as *const _), start);
            let longest = _mm512_reduce_max_epi32(len);
            if !worth_it(_mm512_reduce_add_epi32(len), longest, 16) {
                break;
            }
            let mut sum = _mm512_setzero_ps();
            let mut pos = start;
            for j in 0..longest {
                let live = _mm512_cmpgt_epi32_mask(len, _mm512_set1_epi32(j));
                let zero = _mm512_setzero_si512();
                let col = _mm512_mask_i32gather_epi32::<4>(zero, live, pos, indices.as_ptr());
                let v =
                    _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), live, pos, values.as_ptr());
                let xv = _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), live, col, x.as_ptr());
                sum = _mm512_mask_add_ps(sum, live, sum, _mm512_mul_ps(v, xv));
                pos = _mm512_add_epi32(pos, _mm512_set1_epi32(1));
            }
            _mm512_storeu_ps(ys.as_mut_ptr().add(done) as *mut f32, sum);
            done += 16;
        }
        done
    }
}

/// As [`rows_f32`], eight rows of f64 at a time.
///
/// # Safety
/// As [`rows_f32`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn rows_f64(
    values: &[f64],
    offsets: &[i32],
    indices: &[i32],
    x: &[f64],
    first: usize,
    ys: &mut [MaybeUninit<f64>],
) -> usize {
    // SAFETY: the caller's promises (AVX-512F, offsets and columns in range) make every
    // load, gather and store below stay inside the slices.
    unsafe {
        let mut done = 0;
        while done + 8 <= ys.len() {
            let at = offsets.as_ptr().add(first + done);
            let start = _mm256_loadu_si256(at as *const _);
            let len = _mm256_sub_epi32(_mm256_loadu_si256(at.add(1) as *const _), start);
            let wide = _mm512_castsi256_si512(len);
            let eight = 0x00ff;
            let longest = _mm512_mask_reduce_max_epi32(eight, wide);
            if !worth_it(_mm512_mask_reduce_add_epi32(eight, wide), longest, 8) {
                break;
            }
            let mut sum = _mm512_setzero_pd();
            let mut pos = start;
            for j in 0..longest {
                let live = _mm512_cmpgt_epi32_mask(wide, _mm512_set1_epi32(j)) as u8;
                let cols = _mm512_castsi256_si512(_mm256_setzero_si256());
                let col = _mm512_castsi512_si256(_mm512_mask_i32gather_epi32::<4>(
                    cols,
                    live as u16,
                    _mm512_castsi256_si512(pos),
                    indices.as_ptr(),
                ));
                let v =
                    _mm512_mask_i32gather_pd::<8>(_mm512_setzero_pd(), live, pos, values.as_ptr());
                let xv = _mm512_mask_i32gather_pd::<8>(_mm512_setzero_pd(), live, col, x.as_ptr());
                sum = _mm512_mask_add_pd(sum, live, sum, _mm512_mul_pd(v, xv));
                pos = _mm256_add_epi32(pos, _mm256_set1_epi32(1));
            }
            _mm512_storeu_pd(ys.as_mut_ptr().add(done) as *mut f64, sum);
            done += 8;
        }
        done
    }
}
