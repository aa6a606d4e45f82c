//! A user-supplied allocator under emberfire's pool (`emberfire::cuda::set_allocator`): new
//! blocks come from it, every block goes back to the allocator that made it, and an allocator
//! that runs dry makes evaluation fail with `OutOfMemory` without harming anything else. Needs
//! a CUDA device (skips without one).

use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use emberfire::cuda::{driver_allocator, set_allocator, DeviceAllocator};
use emberfire::{device_gc, dim4, Array};

/// Wraps the driver's allocator, recording every live block, and can be told to refuse.
struct Recording {
    inner: Arc<dyn DeviceAllocator>,
    live: Mutex<HashMap<u64, usize>>,
    allocations: Mutex<usize>,
    refuse: AtomicBool,
}

// SAFETY: every block comes from the driver's allocator, which keeps the promises; refusing
// returns no memory at all.
unsafe impl DeviceAllocator for Recording {
    fn allocate(&self, bytes: usize) -> emberfire::error::Result<u64> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err(emberfire::Error::OutOfMemory { bytes });
        }
        let p = self.inner.allocate(bytes)?;
        assert_eq!(p % 256, 0, "blocks are 256-byte aligned");
        self.live.lock().unwrap().insert(p, bytes);
        *self.allocations.lock().unwrap() += 1;
        Ok(p)
    }

    unsafe fn free(&self, ptr: u64, bytes: usize) {
        let size = self.live.lock().unwrap().remove(&ptr);
        assert_eq!(size, Some(bytes), "a block freed that this allocator did not hand out");
        // SAFETY: exactly what `allocate` returned, freed once (checked above).
        unsafe { self.inner.free(ptr, bytes) }
    }
}

#[test]
fn arrays_take_their_memory_from_an_installed_allocator() {
    let Some(_gpu) = common::cuda() else { return };
    device_gc();
    let driver = driver_allocator(common::dev()).unwrap();
    let mine = Arc::new(Recording {
        inner: driver.clone(),
        live: Mutex::new(HashMap::new()),
        allocations: Mutex::new(0),
        refuse: AtomicBool::new(false),
    });
    set_allocator(common::dev(), mine.clone()).unwrap();
    let values = common::random_f32("allocator", 300_000, 10.0);
    let a = Array::new(&values, dim4!(300_000));
    let b = (&a * 3.0f32 + 1.0f32).to_vec();
    let want: Vec<f64> = values.iter().map(|&v| v as f64 * 3.0 + 1.0).collect();
    common::assert_close("through the allocator", &b, &want, 1e-6);
    assert!(*mine.allocations.lock().unwrap() >= 2, "the input and the result");
    let held = emberfire::cuda::array_memory(&a).unwrap().ptr();
    assert!(mine.live.lock().unwrap().contains_key(&held), "a's memory came from the allocator");

    // An allocator with nothing left: evaluation fails with OutOfMemory (after the pool
    // returned its cache and asked again), and what exists is untouched.
    mine.refuse.store(true, Ordering::SeqCst);
    let e = emberfire::constant(1.0f64, dim4!(64 << 20)).try_eval().unwrap_err();
    assert!(matches!(e, emberfire::Error::OutOfMemory { .. }), "{e}");
    assert_eq!(a.to_vec(), values);
    mine.refuse.store(false, Ordering::SeqCst);

    // Back to the driver: the cache goes back to `mine` at once, blocks in use when freed.
    set_allocator(common::dev(), driver).unwrap();
    let c = (&a - 1.0f32).to_vec();
    common::assert_close(
        "after restoring",
        &c,
        &values.iter().map(|&v| v as f64 - 1.0).collect::<Vec<_>>(),
        1e-6,
    );
    assert!(mine.live.lock().unwrap().contains_key(&held), "a is still alive");
    drop(a);
    device_gc();
    assert!(mine.live.lock().unwrap().is_empty(), "every block went back to its allocator");
}
