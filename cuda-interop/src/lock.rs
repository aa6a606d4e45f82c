//! Borrowing an array's device memory for your own CUDA code: a lock that is released on drop,
//! and a cudarc view of the memory tied to it.

use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaSlice, CudaStream, CudaView, DevicePtrMut};
use emberfire::cuda::ArrayMemory;
use emberfire::{Array, Backend, HasAfEnum};

use crate::error::{Error, Result};

/// An array's device memory, locked for your code until this guard drops. ArrayFire's
/// `device_ptr` and `unlock` in one value.
///
/// While the guard lives, emberfire neither reuses nor frees the memory, even if every array
/// using it is dropped, and the memory's address ([`ptr`](Self::ptr)) is valid for your
/// kernels; dropping the guard unlocks it (unless the array was already locked before, by
/// [`emberfire::Array::lock`], which the guard leaves as it found it). The memory is the
/// array's own, contiguous (a view is copied first); other arrays may share it (`Array::clone`
/// is shallow), so code that writes it changes them all.
///
/// Ordering: a kernel on emberfire's stream ([`get_stream`](crate::get_stream)) needs nothing.
/// On a stream of yours, use [`stream_wait_for_emberfire`](crate::stream_wait_for_emberfire)
/// first and [`emberfire_wait_for_stream`](crate::emberfire_wait_for_stream) after, or go
/// through [`view`](Self::view), whose cudarc events do it.
pub struct LockGuard<T: HasAfEnum> {
    array: Array<T>,
    memory: ArrayMemory,
    was_locked: bool,
    own: Arc<CudaStream>,
    view: OnceLock<Leaked<T>>,
}

/// A cudarc slice over memory it does not own: dropping it leaks the slice (cudarc then makes
/// its stream wait for the slice's recorded uses) instead of freeing the memory.
struct Leaked<T>(Option<CudaSlice<T>>);

impl<T> Drop for Leaked<T> {
    fn drop(&mut self) {
        if let Some(slice) = self.0.take() {
            let _ = slice.leak();
        }
    }
}

/// Evaluates `array`, locks its memory and returns a guard that unlocks it when dropped.
///
/// Errors: [`Error::NotOnCuda`] for an array on the CPU backend; an evaluation failure (out of
/// memory, a driver error).
///
/// ```
/// use emberfire::{dim4, Array};
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3)) * 2.0f32;
///     {
///         let guard = emberfire_cuda_interop::lock(&a).unwrap();
///         assert!(a.is_locked() && guard.ptr() != 0);
///         let stream = emberfire_cuda_interop::stream(0).unwrap();
///         assert_eq!(stream.clone_dtoh(&guard.view().unwrap()).unwrap(), vec![2.0, 4.0, 6.0]);
///     }
///     assert!(!a.is_locked());
/// }
/// ```
pub fn lock<T: HasAfEnum>(array: &Array<T>) -> Result<LockGuard<T>> {
    if array.get_backend() != Backend::CUDA {
        return Err(Error::NotOnCuda { function: "lock" });
    }
    let memory = emberfire::cuda::array_memory(array)?;
    let own = emberfire::cuda::own_stream(memory.device())?;
    let was_locked = array.is_locked();
    array.lock();
    Ok(LockGuard { array: array.clone(), memory, was_locked, own, view: OnceLock::new() })
}

impl<T: HasAfEnum> LockGuard<T> {
    /// The device address of the array's first element (0 for an empty array).
    pub fn ptr(&self) -> u64 {
        self.memory.ptr()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.array.elements()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The emberfire device id of the memory.
    pub fn device(&self) -> i32 {
        self.memory.device()
    }

    /// The locked array.
    pub fn array(&self) -> &Array<T> {
        &self.array
    }

    /// The memory as a cudarc view, for cudarc's copies and kernel launches on any stream.
    /// cudarc's event tracking orders them after the emberfire work that computed the array,
    /// and emberfire's later work on the memory after them (when the guard drops), with no
    /// host synchronisation.
    pub fn view(&self) -> Result<CudaView<'_, T>> {
        if self.view.get().is_none() {
            let slice = self.make_slice()?;
            // Another thread may have made one meanwhile: then ours is leaked by its drop.
            let _ = self.view.set(slice);
        }
        let slice = self.view.get().and_then(|l| l.0.as_ref()).expect("made above");
        Ok(slice.as_view())
    }

    /// A cudarc slice over the locked memory whose "last write" event is recorded after the
    /// emberfire work that wrote it; never freed (it is leaked when dropped).
    fn make_slice(&self) -> Result<Leaked<T>> {
        // The slice lives on emberfire's own stream, which emberfire keeps for the process:
        // first bring that stream after the array's producer (a no-op unless it was computed
        // on a user's stream).
        // SAFETY: emberfire's own stream is live and of the memory's primary context.
        unsafe { self.memory.wait_for_producer(self.own.cu_stream()) }?;
        // SAFETY: the locked memory holds `len` initialised elements of `T` and stays
        // allocated while the guard (which owns the slice) lives; `Leaked` never frees it.
        let mut slice =
            Leaked(Some(unsafe { self.own.upgrade_device_ptr::<T>(self.ptr(), self.len()) }));
        // Record the slice's write event on the own stream now: cudarc makes every later use
        // of the view, on any stream, wait for it.
        let (_, written) = slice.0.as_mut().expect("just made").device_ptr_mut(&self.own);
        drop(written);
        Ok(slice)
    }
}

impl<T: HasAfEnum> Drop for LockGuard<T> {
    fn drop(&mut self) {
        if let Some(slice) = self.view.take() {
            // Leaking makes the own stream wait for the view's recorded reads (on any stream);
            // then the memory's home stream waits for the own stream, so emberfire's later
            // uses and reuse of the memory come after them.
            drop(slice);
            // SAFETY: emberfire's own stream is live and of the memory's primary context.
            let _ = unsafe { self.memory.wait_for_user(self.own.cu_stream()) };
        }
        if !self.was_locked {
            self.array.unlock();
        }
    }
}

impl<T: HasAfEnum> std::fmt::Debug for LockGuard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("ptr", &format_args!("{:#x}", self.ptr()))
            .field("len", &self.len())
            .field("device", &self.device())
            .finish()
    }
}
