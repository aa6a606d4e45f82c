//! Device memory that crosses between your code and emberfire: arrays over memory you
//! allocated (adopted or borrowed), and arrays from cudarc slices.
//!
//! Who frees what, in one place:
//! - [`array_from_device_ptr`] *adopts*: emberfire frees the memory with `cuMemFree`, exactly
//!   once, when the last array using it is dropped, and you never free it; unless it is locked
//!   then, in which case it is yours again: emberfire forgets it, and you free it (ArrayFire's
//!   pattern of lending a buffer you keep owning).
//! - [`array_from_borrowed_ptr`] and [`array_from_shared_slice`] *borrow*: emberfire never
//!   frees the memory; it keeps the owner you give alive while arrays (or a lock) use the
//!   memory, then drops it after its own work on the memory has finished.
//! - [`array_from_slice`] takes a `CudaSlice` as the owner: the slice is dropped, and frees
//!   its memory the cudarc way, when emberfire is done with it.
//! - Memory emberfire allocated is emberfire's; [`emberfire::Array::lock`] (and
//!   [`lock`](crate::lock)) make it yours to use until unlocked, never yours to free.

use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr, DriverError};
use emberfire::{Array, Backend, Dim4, HasAfEnum};

use crate::device::{check_device, context, device_of_context};
use crate::error::{Error, Result};

/// One attribute of a device address (`cuPointerGetAttribute`).
fn attribute<V: Default>(
    ptr: u64,
    attr: sys::CUpointer_attribute,
) -> std::result::Result<V, DriverError> {
    let mut v = V::default();
    // SAFETY: `v` is a valid out-value of the size the attribute writes (the caller picks `V`
    // to match: u32 for the memory type, i32 for the ordinal, u64/usize for the range, usize
    // for a context handle).
    unsafe { sys::cuPointerGetAttribute(&mut v as *mut V as *mut c_void, attr, ptr) }.result()?;
    Ok(v)
}

/// Checks that `ptr..ptr + bytes` is device memory of device `device`, usable from its
/// primary context (and, when `whole` is set, that `ptr` starts its allocation).
pub(crate) fn check_pointer(
    function: &'static str,
    ptr: u64,
    bytes: usize,
    device: i32,
    whole: bool,
) -> Result<()> {
    use sys::CUpointer_attribute as A;
    if ptr == 0 {
        return Err(Error::NullPointer { function });
    }
    let ctx = context(device)?;
    ctx.bind_to_thread().map_err(|e| Error::driver("making the context current", e))?;
    // Unknown addresses (plain host memory) make the driver refuse every attribute.
    let kind: u32 = attribute(ptr, A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        .map_err(|_| Error::NotDeviceMemory { function, ptr })?;
    let device_kinds = [
        sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32,
        sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED as u32,
    ];
    if !device_kinds.contains(&kind) {
        return Err(Error::NotDeviceMemory { function, ptr });
    }
    if let Ok(found) = attribute::<i32>(ptr, A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
        if found != device {
            return Err(Error::WrongDevice { function, expected: device, found });
        }
    }
    // Memory of the stream-ordered allocator or of virtual memory management has no context
    // (0); anything else must be the primary context's.
    if let Ok(owner) = attribute::<usize>(ptr, A::CU_POINTER_ATTRIBUTE_CONTEXT) {
        if owner != 0 && owner != ctx.cu_ctx() as usize {
            return Err(Error::WrongContext { function, what: "pointer" });
        }
    }
    let start: u64 = attribute(ptr, A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
        .map_err(|e| Error::driver("querying the allocation of a pointer", e))?;
    let size: usize = attribute(ptr, A::CU_POINTER_ATTRIBUTE_RANGE_SIZE)
        .map_err(|e| Error::driver("querying the allocation of a pointer", e))?;
    if whole && start != ptr {
        return Err(Error::NotAllocationStart { function, ptr, start });
    }
    let available = (start + size as u64).saturating_sub(ptr) as usize;
    if bytes > available {
        return Err(Error::SizeMismatch { function, needed: bytes, available });
    }
    Ok(())
}

/// The bytes of an array of `dims` elements of `T`, or a size error.
fn array_bytes<T: HasAfEnum>(
    function: &'static str,
    dims: Dim4,
    available: usize,
) -> Result<usize> {
    usize::try_from(dims.elements())
        .ok()
        .and_then(|n| n.checked_mul(T::get_af_dtype().size()))
        .ok_or(Error::SizeMismatch { function, needed: usize::MAX, available })
}

/// The active CUDA device, or an error naming `function` when the active backend is the CPU.
fn active_cuda_device(function: &'static str) -> Result<i32> {
    if emberfire::get_active_backend() != Backend::CUDA {
        return Err(Error::NotOnCuda { function });
    }
    let id = emberfire::get_device();
    check_device(id)?;
    Ok(id)
}

/// An array of shape `dims` that adopts `ptr`, memory you allocated with `cuMemAlloc` (or
/// `cudaMalloc`, or cudarc's `CudaSlice::leak`) on the active CUDA device: the array uses it in
/// place, and emberfire frees it with `cuMemFree` exactly once, when the last array using it is
/// dropped. ArrayFire's `af::array(dims, ptr, afDevice)`.
///
/// If the memory is locked ([`emberfire::Array::lock`]) when the last array using it is
/// dropped, it goes back to you instead: emberfire waits for its own work on it and forgets
/// it, freeing nothing, counting nothing and keeping no record of it (so
/// [`unlock_device_ptr`] does not find it). That is how you lend emberfire a buffer you keep
/// owning and free yourself; see the book's "CUDA interop" chapter, "Lending your buffers".
///
/// Checked, as errors: a null pointer, an address that is not device memory, memory of another
/// device or context, an address inside an allocation (only whole allocations can be freed),
/// and an allocation smaller than the array.
///
/// # Safety
///
/// The memory holds `dims.elements()` initialised elements of `T`. Nothing else frees it while
/// an array uses it, nor after the last array using it was dropped unlocked (emberfire frees
/// it then); nothing else uses it while arrays do, except through a lock. Work that wrote it
/// is complete, or ordered before this thread's stream ([`get_stream`](crate::get_stream)).
///
/// ```
/// use emberfire::dim4;
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let stream = emberfire_cuda_interop::stream(0).unwrap();
///     let mine = stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
///     stream.synchronize().unwrap();
///     let ptr = mine.leak() as *mut f32; // we own it now, and give it to emberfire
///     let a = unsafe { emberfire_cuda_interop::array_from_device_ptr(ptr, dim4!(3)) }.unwrap();
///     assert_eq!(a.to_vec(), vec![1.0, 2.0, 3.0]);
/// }
/// ```
pub unsafe fn array_from_device_ptr<T: HasAfEnum>(ptr: *mut T, dims: Dim4) -> Result<Array<T>> {
    const F: &str = "array_from_device_ptr";
    let device = active_cuda_device(F)?;
    let bytes = array_bytes::<T>(F, dims, 0)?;
    check_pointer(F, ptr as u64, bytes, device, true)?;
    // SAFETY: checked above where the driver can tell; the rest is the caller's contract.
    Ok(unsafe { Array::new_from_device_ptr(ptr, dims) })
}

/// An array of shape `dims` over memory someone else owns, on the active CUDA device, as
/// CuPy's `UnownedMemory` with an owner: emberfire never frees the memory, and keeps `owner`
/// alive while any array (or a lock) uses it; then it waits for its own work on the memory and
/// drops `owner`. Give as owner whatever keeps the memory allocated.
///
/// Checked, as errors: a null pointer, an address that is not device memory, memory of another
/// device or context, and memory smaller than the array.
///
/// # Safety
///
/// The memory holds `dims.elements()` initialised elements of `T`, stays allocated while
/// `owner` lives, and is not written by anything else while arrays use it; work that wrote it
/// is complete, or ordered before this thread's stream ([`get_stream`](crate::get_stream)).
///
/// ```
/// use emberfire::dim4;
/// use std::sync::Arc;
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let stream = emberfire_cuda_interop::stream(0).unwrap();
///     let mine = Arc::new(stream.clone_htod(&[4i32, 5, 6]).unwrap());
///     stream.synchronize().unwrap();
///     let ptr = mine.device_ptr(&stream).0 as *const i32;
///     let a = unsafe {
///         emberfire_cuda_interop::array_from_borrowed_ptr(ptr, dim4!(3), mine.clone())
///     }
///     .unwrap();
///     assert_eq!(a.to_vec(), vec![4, 5, 6]);
/// }
/// # use cudarc::driver::DevicePtr;
/// ```
pub unsafe fn array_from_borrowed_ptr<T: HasAfEnum>(
    ptr: *const T,
    dims: Dim4,
    owner: Arc<dyn Any + Send + Sync>,
) -> Result<Array<T>> {
    const F: &str = "array_from_borrowed_ptr";
    let device = active_cuda_device(F)?;
    let bytes = array_bytes::<T>(F, dims, 0)?;
    check_pointer(F, ptr as u64, bytes, device, false)?;
    // SAFETY: checked above where the driver can tell; the rest is the caller's contract.
    Ok(unsafe { emberfire::cuda::borrow_device_memory(ptr as u64, dims, owner) }?)
}

/// An array of shape `dims` that takes ownership of a cudarc slice, without a copy. The slice is
/// dropped (freeing its memory as cudarc does) once no array uses it and emberfire's work on it
/// has finished. Work already queued on the slice (on its stream, or tracked by cudarc's events)
/// comes before emberfire's, with no host synchronisation. `dims` may cover fewer elements than
/// the slice has: the array is its first elements.
///
/// Errors: a slice of another context than the primary one, of another device than the
/// active one, or shorter than `dims`; an active backend that is not CUDA.
///
/// ```
/// use emberfire::dim4;
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let stream = emberfire_cuda_interop::stream(0).unwrap();
///     let slice = stream.clone_htod(&[1.5f64, 2.5, 3.5, 4.5]).unwrap();
///     let a = emberfire_cuda_interop::array_from_slice(slice, dim4!(2, 2)).unwrap();
///     assert_eq!(emberfire::sum_all(&a).0, 12.0);
/// }
/// ```
pub fn array_from_slice<T: HasAfEnum>(slice: CudaSlice<T>, dims: Dim4) -> Result<Array<T>> {
    let ptr = prepare_slice("array_from_slice", &slice, dims)?;
    // SAFETY: the slice's memory holds `slice.len() >= dims.elements()` elements of `T` (checked)
    // initialised as cudarc's safe API guarantees, on the active device's primary context; the
    // slice is moved into the owner, so nothing else can write or free it; its pending work is
    // ordered before the current stream (prepare_slice).
    Ok(unsafe { emberfire::cuda::borrow_device_memory(ptr, dims, Arc::new(slice)) }?)
}

/// An array of shape `dims` over a cudarc slice that stays shared: emberfire keeps a clone of
/// the `Arc` while arrays use the memory, and never frees it. (Through an `Arc`, safe cudarc code
/// can only read the slice, so the array's values cannot change under it.)
///
/// Errors as for [`array_from_slice`].
///
/// ```
/// use emberfire::dim4;
/// use std::sync::Arc;
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let stream = emberfire_cuda_interop::stream(0).unwrap();
///     let shared = Arc::new(stream.clone_htod(&[1u32, 2, 3]).unwrap());
///     let a = emberfire_cuda_interop::array_from_shared_slice(shared.clone(), dim4!(3)).unwrap();
///     assert_eq!((a * 2u32).to_vec(), vec![2, 4, 6]);
///     assert_eq!(stream.clone_dtoh(&*shared).unwrap(), vec![1, 2, 3]); // untouched
/// }
/// ```
pub fn array_from_shared_slice<T: HasAfEnum>(
    slice: Arc<CudaSlice<T>>,
    dims: Dim4,
) -> Result<Array<T>> {
    let ptr = prepare_slice("array_from_shared_slice", &slice, dims)?;
    // SAFETY: as in `array_from_slice`; the slice is shared only through `Arc`s, through which
    // safe code cannot write it, and the owner keeps it allocated.
    Ok(unsafe { emberfire::cuda::borrow_device_memory(ptr, dims, slice) }?)
}

/// Checks a slice against `dims` and the active device, orders its pending work before this
/// thread's current stream, and returns its address.
fn prepare_slice<T: HasAfEnum>(
    function: &'static str,
    slice: &CudaSlice<T>,
    dims: Dim4,
) -> Result<u64> {
    let device = active_cuda_device(function)?;
    let found = device_of_context(function, "slice", slice.context())?;
    if found != device {
        return Err(Error::WrongDevice { function, expected: device, found });
    }
    let available = slice.num_bytes();
    let needed = array_bytes::<T>(function, dims, available)?;
    if needed > available {
        return Err(Error::SizeMismatch { function, needed, available });
    }
    let current = current_stream_handle(device)?;
    // Wait for the slice's last write as cudarc tracks it (on any stream), and for everything
    // queued on its own stream (its allocation, for stream-ordered memory, included).
    let (ptr, read) = slice.device_ptr(&current);
    drop(read);
    current.join(slice.stream()).map_err(|e| Error::driver("ordering the slice's stream", e))?;
    Ok(ptr)
}

/// This thread's current stream of `device` as a cudarc stream: emberfire's own, or a borrowed
/// handle of the scope's stream (valid while the scope, which encloses the caller, lasts).
pub(crate) fn current_stream_handle(device: i32) -> Result<Arc<CudaStream>> {
    let own = emberfire::cuda::own_stream(device)?;
    let raw = emberfire::cuda::current_stream(device)?;
    if raw == own.cu_stream() {
        return Ok(own);
    }
    // SAFETY: a stream of the primary context that an open `with_stream` scope on this thread
    // keeps alive; the handle is used only within the caller, inside that scope.
    Ok(unsafe { own.context().wrap_borrowed_stream(raw) })
}

/// Releases device memory whose arrays were all dropped while it was locked: memory emberfire
/// allocated returns to its cache, borrowed memory's owner is dropped. Returns whether `ptr`
/// was such memory on device `device`. Adopted memory ([`array_from_device_ptr`]) locked when
/// its last array was dropped is not found here: it went back to you then. (ArrayFire's
/// `af::unlock` after the array is gone; while an array uses the memory, call
/// [`emberfire::Array::unlock`].)
///
/// ```
/// if emberfire_cuda_interop::device_count().is_ok() {
///     assert_eq!(emberfire_cuda_interop::unlock_device_ptr(0, 0x1000), Ok(false));
/// }
/// ```
pub fn unlock_device_ptr(device: i32, ptr: u64) -> Result<bool> {
    check_device(device)?;
    Ok(emberfire::cuda::unlock_device_ptr(device, ptr)?)
}
