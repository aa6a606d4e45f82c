//! The raw allocator under the caching pool, which users may replace.

use crate::error::Error;

/// A raw allocator of device memory, the layer under emberfire's caching pool.
///
/// The default is the driver's `cuMemAlloc`/`cuMemFree`. Install another with
/// [`crate::cuda::set_allocator`] to take emberfire's memory from a pool of your own (an
/// arena shared with another library, a logging or limiting wrapper, ...). emberfire still
/// caches and reuses the blocks it gets from you; [`crate::device_gc`] hands them back.
///
/// # Safety
///
/// emberfire's kernels read and write the memory an allocator returns, so an implementation
/// must keep these promises: a successful [`allocate`](Self::allocate) returns the address of
/// at least `bytes` bytes of device memory on the device the allocator was installed for,
/// usable from every stream of that device's primary context, aligned to 256 bytes, that
/// nothing else reads, writes or frees until emberfire passes it to [`free`](Self::free).
///
/// ```
/// use emberfire::cuda::DeviceAllocator;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// /// Counts the blocks emberfire takes from the allocator it wraps.
/// struct Counting {
///     inner: Arc<dyn DeviceAllocator>,
///     live: AtomicUsize,
/// }
///
/// // SAFETY: every block comes from `inner`, which keeps the promises.
/// unsafe impl DeviceAllocator for Counting {
///     fn allocate(&self, bytes: usize) -> emberfire::error::Result<u64> {
///         let p = self.inner.allocate(bytes)?;
///         self.live.fetch_add(1, Ordering::Relaxed);
///         Ok(p)
///     }
///     unsafe fn free(&self, ptr: u64, bytes: usize) {
///         self.live.fetch_sub(1, Ordering::Relaxed);
///         // SAFETY: emberfire passes back exactly what `allocate` returned.
///         unsafe { self.inner.free(ptr, bytes) }
///     }
/// }
///
/// if let Ok(driver) = emberfire::cuda::driver_allocator(0) {
///     let counting = Arc::new(Counting { inner: driver.clone(), live: AtomicUsize::new(0) });
///     emberfire::cuda::set_allocator(0, counting.clone()).unwrap();
///     // ... arrays created on device 0 now take their memory through `counting` ...
///     emberfire::cuda::set_allocator(0, driver).unwrap();
/// }
/// ```
pub unsafe trait DeviceAllocator: Send + Sync {
    /// Allocates `bytes` (never 0) of device memory on the manager's device and returns its
    /// address, aligned to at least 256 bytes. It is called from any thread, with any context
    /// current (make the device's primary context current if the allocation needs it, as the
    /// driver's allocator does). Returns [`Error::OutOfMemory`] when the memory is not there:
    /// emberfire then frees its cache and asks again. Any other error is passed on as it is.
    fn allocate(&self, bytes: usize) -> Result<u64, Error>;

    /// Frees a block this allocator returned.
    ///
    /// # Safety
    ///
    /// `ptr` and `bytes` are exactly an earlier successful [`allocate`](Self::allocate)'s
    /// result and request, the block has not been freed since, and no work queued on the
    /// device uses it any more (emberfire synchronises the device before freeing).
    unsafe fn free(&self, ptr: u64, bytes: usize);
}
