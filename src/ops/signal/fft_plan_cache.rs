//! How many FFT plans emberfire keeps, set with arrayfire-rust's `set_fft_plan_cache_size`.

use crate::backend::signal::set_fft_plan_cache_size as set_plan_cache_size;

/// Sets how many FFT plans are kept for reuse.
///
/// On CUDA, a cuFFT plan takes milliseconds to make, so emberfire keeps the plans of the most
/// recently used transform shapes (16 by default, across devices) and drops the least recently
/// used beyond the limit; setting a smaller size drops the excess at once, and 0 makes every
/// transform plan afresh. On the CPU, plans are cheap to make and small, and the planners keep
/// one for every length they have seen whatever this size is. Results never depend on it.
///
/// As arrayfire-rust advises, change it between phases of a program, not around every call.
///
/// ```
/// use emberfire::{dim4, fft, set_fft_plan_cache_size, Array};
/// set_fft_plan_cache_size(4);
/// let x = Array::new(&[1.0f32, 0.0, 0.0, 0.0], dim4!(4));
/// assert_eq!(fft(&x, 1.0, 4).dims(), dim4!(4));
/// ```
pub fn set_fft_plan_cache_size(cache_size: usize) {
    set_plan_cache_size(cache_size);
}
