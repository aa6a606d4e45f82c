//! ArrayFire's memory step size: a setting kept so that code written for arrayfire-rust can set
//! it and read it back.
//!
//! ArrayFire rounds every device allocation up to a multiple of the step. emberfire's
//! allocators do not use it: the CUDA memory manager rounds requests to size classes (256 bytes
//! below 1 MiB, then eight classes per power of two) so that blocks of nearby sizes are reused,
//! and the CPU backend allocates exact sizes. A fixed step would waste memory for large arrays
//! and reuse less for small ones, so the value changes nothing; it is stored, one for the process.

use std::sync::atomic::{AtomicUsize, Ordering};

// ArrayFire's default step.
static STEP_BYTES: AtomicUsize = AtomicUsize::new(1024);

/// Stores `step_bytes` as the memory step size, for [`get_mem_step_size`] to return.
/// emberfire's allocators round by size classes of their own and do not read it: the CUDA
/// memory manager rounds to 256 bytes below 1 MiB and to one eighth of the power of two above,
/// and the CPU backend allocates exact sizes. Any value, 0 included, is accepted.
///
/// ```
/// use emberfire::{get_mem_step_size, set_mem_step_size};
/// let old = get_mem_step_size();
/// set_mem_step_size(2048);
/// assert_eq!(get_mem_step_size(), 2048);
/// set_mem_step_size(old);
/// ```
pub fn set_mem_step_size(step_bytes: usize) {
    STEP_BYTES.store(step_bytes, Ordering::Relaxed);
}

/// The memory step size last set with [`set_mem_step_size`]; 1024 (ArrayFire's default)
/// before any call. It has no effect on how emberfire allocates.
///
/// ```
/// assert!(emberfire::get_mem_step_size() > 0);
/// ```
pub fn get_mem_step_size() -> usize {
    STEP_BYTES.load(Ordering::Relaxed)
}
