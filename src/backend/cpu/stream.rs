//! Non-temporal ("streaming") stores: writes that go to memory without first reading the
//! destination's cache lines and without displacing the cache.
//!
//! Why: an ordinary store to a line that is not in the cache first reads the line from memory
//! (read for ownership). A kernel that writes a large output it will not read again soon thus
//! moves its output twice; streaming stores move it once, which for `2.5 * x + y` over 2^24
//! f32 cuts a quarter of the memory traffic. For outputs that fit in the cache they are a loss
//! (the next reader finds nothing cached), so callers use them for large outputs only.
//!
//! Streaming stores are weakly ordered: a thread that wrote with them calls [`fence`] before
//! another thread may read the memory.

use std::mem::MaybeUninit;

/// Writes one full, 64-byte-aligned line from `src` to `dst`, bypassing the cache where the
/// platform can.
///
/// # Safety
/// `src` and `dst` are 64-byte aligned and valid for 64 bytes.
#[inline(always)]
pub(crate) unsafe fn line<W>(src: *const W, dst: *mut W) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64; both pointers are aligned and valid (the contract).
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
        let (s, d) = (src as *const __m128i, dst as *mut __m128i);
        _mm_stream_si128(d, _mm_load_si128(s));
        _mm_stream_si128(d.add(1), _mm_load_si128(s.add(1)));
        _mm_stream_si128(d.add(2), _mm_load_si128(s.add(2)));
        _mm_stream_si128(d.add(3), _mm_load_si128(s.add(3)));
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    unsafe {
        std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, 64)
    };
}

/// Orders this thread's streaming stores before anything it does next (such as letting
/// another thread read the output).
#[inline(always)]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Copies `src` into `dst` (of the same length) with streaming stores for the part of `dst`
/// that covers whole 16-byte units, ordinary stores for the unaligned ends; then [`fence`].
pub(crate) fn copy<T: Copy>(src: &[T], dst: &mut [MaybeUninit<T>]) {
    assert_eq!(src.len(), dst.len(), "internal error: streaming copy of unequal lengths");
    let bytes = std::mem::size_of_val(src);
    let (s, d) = (src.as_ptr() as *const u8, dst.as_mut_ptr() as *mut u8);
    // the aligned middle, in bytes from the start
    let head = (d as usize).next_multiple_of(16) - d as usize;
    let body = bytes.saturating_sub(head) & !15;
    // SAFETY: `src` and `dst` are valid for `bytes` bytes and do not overlap (one is borrowed
    // mutably); every element type here is plain data, so copying its bytes copies the value.
    unsafe {
        if head >= bytes || body == 0 {
            std::ptr::copy_nonoverlapping(s, d, bytes);
            return;
        }
        std::ptr::copy_nonoverlapping(s, d, head);
        stream_body(s.add(head), d.add(head), body);
        std::ptr::copy_nonoverlapping(s.add(head + body), d.add(head + body), bytes - head - body);
    }
    fence();
}

/// Streams `len` bytes (a multiple of 16) to the 16-byte-aligned `dst`.
///
/// # Safety
/// `src` is valid for reading and `dst` for writing `len` bytes; `dst` is 16-byte aligned.
#[inline(always)]
unsafe fn stream_body(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86_64; every 16-byte store lands inside `dst`'s range, aligned.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        for k in (0..len).step_by(16) {
            _mm_stream_si128(
                dst.add(k) as *mut __m128i,
                _mm_loadu_si128(src.add(k) as *const __m128i),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_length_and_alignment() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for start in 0..20 {
            for len in [0, 1, 15, 16, 17, 31, 32, 33, 64, 100, 255, 280] {
                let mut dst = vec![MaybeUninit::<u8>::uninit(); 300];
                let s = &src[..len];
                copy(s, &mut dst[start..start + len]);
                // SAFETY: the copy wrote every element of the range.
                let got: Vec<u8> =
                    dst[start..start + len].iter().map(|b| unsafe { b.assume_init() }).collect();
                assert_eq!(got, s, "start {start}, len {len}");
            }
        }
        let wide: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5 - 3.0).collect();
        let mut out = vec![MaybeUninit::<f64>::uninit(); 1001];
        copy(&wide, &mut out[1..]);
        // SAFETY: written above.
        assert!(out[1..].iter().zip(&wide).all(|(o, w)| unsafe { o.assume_init() } == *w));
    }
}
