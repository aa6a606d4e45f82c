//! Low-level hooks into emberfire's CUDA backend, for code that mixes emberfire arrays with its
//! own CUDA kernels, memory and streams.
//!
//! Most users want the `emberfire-cuda-interop` crate, which wraps these hooks in a safe API
//! (cudarc streams, slices and views, checked pointers, a kernel helper). This module is what
//! that crate is built on: the handles emberfire uses on a device, a way to make emberfire's
//! work go to a stream of yours, event ordering between streams, memory that emberfire borrows,
//! the kernel cache, and the memory manager's allocator.
//!
//! Device ids are emberfire's (see [`crate::get_device_native_id`], which is the CUDA ordinal).
//! Every function returns [`Error::BackendUnavailable`] where CUDA cannot be used, and
//! [`Error::InvalidDevice`] for an id that is not a CUDA device.
//!
//! # Streams and ordering
//!
//! Each device has one stream of emberfire's own. Inside [`with_stream`], the calling thread's
//! work on that device goes to the stream given instead (its *current stream*, see
//! [`current_stream`]): kernels are launched there and new arrays are allocated for it. Every
//! buffer remembers the stream it was allocated for, its *home*: the stream where it is written.
//! The rule that keeps everything ordered, stated once:
//!
//! - Work on a stream other than a buffer's home waits (on the device, through an event) for the
//!   home stream before it touches the buffer. emberfire does this for its own kernels and
//!   transfers; for yours, [`ArrayMemory::wait_for_producer`] does it.
//! - When work on another stream writes a buffer, or must finish before the buffer is reused,
//!   the home stream waits for it: [`ArrayMemory::wait_for_user`].
//! - A freed buffer is reused on its home stream in stream order, and on another stream only
//!   after waiting for an event recorded on each stream that used it. A buffer freed while a
//!   user stream is current carries an event of that stream; one freed after the scope is
//!   ordered by emberfire's own stream, which waited for the user's stream when the scope ended.
//!   So emberfire never records on, waits on or synchronises a user stream after the last
//!   [`with_stream`] scope on it has returned, and the stream's owner may destroy it then.
//!
//! ```
//! // Without a CUDA device every hook says why it cannot help.
//! if emberfire::cuda::context(0).is_err() {
//!     assert!(emberfire::cuda::current_stream(0).is_err());
//! }
//! ```

use std::any::Any;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream};

use crate::array::Array;
use crate::backend::native::{self, Device, DeviceMem, KernelFn, StreamId};
use crate::backend::{devices, BackendKind, Buffer};
use crate::device::active_kind;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error::{Error, Result};
use crate::jit::{Data, Node};

pub use crate::backend::native::DeviceAllocator;

/// The CUDA device behind emberfire device `device`.
fn device_of(device: i32) -> Result<&'static Device> {
    let count = devices::cuda_device_count()?;
    if device < 0 || device as usize >= count {
        return Err(Error::InvalidDevice { requested: device, count: count as i32 });
    }
    native::device(crate::device::native_ordinal(device) as usize)
}

/// How many CUDA devices there are, or why CUDA cannot be used (no driver, no device).
///
/// ```
/// match emberfire::cuda::device_count() {
///     Ok(n) => assert!(n > 0),
///     Err(e) => assert!(matches!(e, emberfire::Error::BackendUnavailable(_))),
/// }
/// ```
pub fn device_count() -> Result<i32> {
    Ok(devices::cuda_device_count()? as i32)
}

/// The CUDA ordinal of emberfire's CUDA device `device` (the same number: see
/// [`crate::get_device_native_id`]), whatever the active backend.
///
/// ```
/// if emberfire::cuda::device_count().is_ok() {
///     assert_eq!(emberfire::cuda::native_id(0), Ok(0));
/// }
/// ```
pub fn native_id(device: i32) -> Result<i32> {
    Ok(device_of(device)?.ordinal() as i32)
}

/// The CUDA context emberfire uses on `device`: the device's primary context, the one the CUDA
/// runtime API, PyTorch, CuPy and `cudarc::driver::CudaContext::new` use too, so pointers,
/// streams and events pass between them directly.
///
/// ```
/// if let Ok(ctx) = emberfire::cuda::context(0) {
///     let mine = cudarc::driver::CudaContext::new(0).unwrap();
///     assert_eq!(mine.cu_ctx(), ctx.cu_ctx());
/// }
/// ```
pub fn context(device: i32) -> Result<Arc<CudaContext>> {
    let dev = device_of(device)?;
    // (the user may synchronise the context rather than the stream: hold nothing back)
    dev.share_stream();
    Ok(dev.context().clone())
}

/// emberfire's own stream on `device`. emberfire keeps it for the life of the process, so the
/// handle stays valid however long the returned `Arc` is kept; never destroy its raw handle.
///
/// ```
/// if let Ok(s) = emberfire::cuda::own_stream(0) {
///     assert!(!s.cu_stream().is_null());
/// }
/// ```
pub fn own_stream(device: i32) -> Result<Arc<CudaStream>> {
    Ok(device_of(device)?.share_stream().clone())
}

/// The raw stream this thread's emberfire work on `device` goes to: the stream of the
/// innermost [`with_stream`] scope for that device, else emberfire's own.
///
/// ```
/// if let (Ok(s), Ok(own)) = (emberfire::cuda::current_stream(0), emberfire::cuda::own_stream(0)) {
///     assert_eq!(s, own.cu_stream());
/// }
/// ```
pub fn current_stream(device: i32) -> Result<sys::CUstream> {
    let dev = device_of(device)?;
    let raw = dev.stream_raw();
    if raw == dev.stream_id().handle() {
        dev.share_stream();
    }
    Ok(raw)
}

/// Runs `f` with `stream` as this thread's current stream on `device`: the arrays `f` evaluates
/// on that device are computed on `stream`, and their memory is allocated for it. On entry,
/// `stream` waits (on the device) for the work emberfire queued before; on return (also by a
/// panic), emberfire's own stream waits for everything queued on `stream` so far. The host
/// never blocks. Scopes nest; other threads are not affected.
///
/// # Safety
///
/// `stream` is a live stream of `device`'s primary context and stays alive until this
/// function returns. (After that, emberfire never uses it again: see the module
/// documentation.)
///
/// ```
/// if let Ok(ctx) = emberfire::cuda::context(0) {
///     let mine = ctx.new_stream().unwrap();
///     let got = unsafe {
///         emberfire::cuda::with_stream(0, mine.cu_stream(), || {
///             emberfire::cuda::current_stream(0).unwrap()
///         })
///     }
///     .unwrap();
///     assert_eq!(got, mine.cu_stream());
/// }
/// ```
pub unsafe fn with_stream<R>(
    device: i32,
    stream: sys::CUstream,
    f: impl FnOnce() -> R,
) -> Result<R> {
    let dev = device_of(device)?;
    native::check_stream(dev, stream)?;
    // SAFETY: the caller keeps the stream alive for the scope, which ends before we return.
    let scope = unsafe { dev.memory().enter_stream(StreamId::from_raw(stream)) }?;
    let r = f();
    scope.leave()?;
    Ok(r)
}

/// Makes `stream` wait, on the device, for all the work emberfire has queued on `device` so far
/// (on its own stream and on every stream a [`with_stream`] scope has made current). The host
/// does not wait.
///
/// # Safety
///
/// `stream` is a live stream of `device`'s primary context.
///
/// ```
/// if let Ok(ctx) = emberfire::cuda::context(0) {
///     let mine = ctx.new_stream().unwrap();
///     unsafe { emberfire::cuda::wait_for_emberfire(0, mine.cu_stream()) }.unwrap();
/// }
/// ```
pub unsafe fn wait_for_emberfire(device: i32, stream: sys::CUstream) -> Result<()> {
    let dev = device_of(device)?;
    native::check_stream(dev, stream)?;
    dev.memory().wait_for_all(StreamId::from_raw(stream))
}

/// Makes emberfire's work on `device` queued from now on (on its own stream and on every
/// stream a [`with_stream`] scope has made current) wait, on the device, for the work queued on
/// `stream` so far. The host does not wait.
///
/// # Safety
///
/// `stream` is a live stream of `device`'s primary context.
///
/// ```
/// if let Ok(ctx) = emberfire::cuda::context(0) {
///     let mine = ctx.new_stream().unwrap();
///     unsafe { emberfire::cuda::emberfire_waits_for(0, mine.cu_stream()) }.unwrap();
/// }
/// ```
pub unsafe fn emberfire_waits_for(device: i32, stream: sys::CUstream) -> Result<()> {
    let dev = device_of(device)?;
    native::check_stream(dev, stream)?;
    dev.memory().all_wait_for(StreamId::from_raw(stream))
}

/// The device memory of an evaluated array, kept alive by this value: the address of its first
/// element, its size and its device. Holding it does not lock the memory (see
/// [`Array::lock`]); it keeps the buffer from being freed while you hold it.
pub struct ArrayMemory {
    data: Data,
    ordinal: usize,
    ptr: u64,
    bytes: usize,
}

impl fmt::Debug for ArrayMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayMemory")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("bytes", &self.bytes)
            .field("device", &self.ordinal)
            .finish()
    }
}

/// Evaluates `array` (a view is first copied into memory of its own, contiguous) and returns
/// its device memory. [`Error::BackendUnavailable`] if the array is not on CUDA; an evaluation
/// failure (out of memory, a driver error) is returned as it is.
///
/// ```
/// use emberfire::{Array, Backend, dim4};
/// let a = Array::new(&[1.0f32, 2.0], dim4!(2));
/// match emberfire::cuda::array_memory(&a) {
///     Ok(m) => assert_eq!(m.bytes(), 8),
///     Err(_) => assert_eq!(a.get_backend(), Backend::CPU),
/// }
/// ```
pub fn array_memory<T: HasAfEnum>(array: &Array<T>) -> Result<ArrayMemory> {
    if array.node().backend == BackendKind::Cpu {
        return Err(Error::BackendUnavailable(
            "the array lives on the CPU backend, not on a CUDA device".into(),
        ));
    }
    let data = array.try_own_data()?;
    let (ordinal, ptr, bytes) = match data.buffer() {
        Buffer::Cuda(m) => {
            // (launches held back, among them maybe the one writing this array, go to the
            // stream now: the user's work that follows may be ordered after the stream by
            // means other than ours)
            native::device(m.ordinal())?.send_held();
            let size = T::DTYPE.size();
            (m.ordinal(), m.ptr() + (data.offset * size) as u64, array.elements() * size)
        }
        Buffer::Host(_) => unreachable!("internal error: host memory in a CUDA array"),
    };
    Ok(ArrayMemory { data, ordinal, ptr, bytes })
}

impl ArrayMemory {
    fn mem(&self) -> &DeviceMem {
        match self.data.buffer() {
            Buffer::Cuda(m) => m,
            Buffer::Host(_) => unreachable!("internal error: host memory in a CUDA array"),
        }
    }

    /// The device address of the array's first element (0 for an empty array).
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The array's size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The emberfire device id of the memory.
    pub fn device(&self) -> i32 {
        self.ordinal as i32
    }

    /// Makes `stream` wait, on the device, for the work that wrote this memory (queued on the
    /// stream it was allocated for), so that work queued on `stream` afterwards reads the
    /// array's values. Nothing happens when that is `stream` itself.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the memory's device's primary context.
    pub unsafe fn wait_for_producer(&self, stream: sys::CUstream) -> Result<()> {
        let dev = native::device(self.ordinal)?;
        dev.memory().wait_for_producer(self.mem(), StreamId::from_raw(stream))
    }

    /// Makes everything emberfire does with this memory later (reading it, freeing it for
    /// reuse) wait, on the device, for the work queued on `stream` so far: call it after
    /// queuing work on `stream` that reads or writes the memory.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the memory's device's primary context.
    pub unsafe fn wait_for_user(&self, stream: sys::CUstream) -> Result<()> {
        let dev = native::device(self.ordinal)?;
        dev.memory().producer_waits_for(self.mem(), StreamId::from_raw(stream))
    }
}

/// An array of shape `dims` over device memory that someone else owns, on the active CUDA
/// device. emberfire never frees it: it keeps `owner` alive until the last array using the
/// memory is dropped (and, if the memory was locked then, until it is unlocked), after waiting
/// for its own work on the memory, and then drops `owner`. Give as owner whatever keeps the
/// memory allocated (a `cudarc::driver::CudaSlice`, a handle that frees it in `Drop`, ...).
///
/// # Safety
///
/// `ptr` is the address of `dims.elements()` initialised elements of `T` in device memory of
/// the active device, usable from its primary context, valid while `owner` lives, and not
/// written by anything else while arrays use it. Work that wrote it is complete, or ordered
/// before this thread's current stream ([`current_stream`]).
///
/// ```
/// use emberfire::{dim4, Array};
/// if emberfire::get_active_backend() == emberfire::Backend::CUDA {
///     let source = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
///     let memory = std::sync::Arc::new(emberfire::cuda::array_memory(&source).unwrap());
///     // An array over the same memory, keeping `source`'s buffer alive as its owner.
///     let view: Array<f32> =
///         unsafe { emberfire::cuda::borrow_device_memory(memory.ptr(), dim4!(3), memory) }
///             .unwrap();
///     assert_eq!(view.to_vec(), vec![1.0, 2.0, 3.0]);
/// }
/// ```
pub unsafe fn borrow_device_memory<T: HasAfEnum>(
    ptr: u64,
    dims: Dim4,
    owner: Arc<dyn Any + Send + Sync>,
) -> Result<Array<T>> {
    let BackendKind::Cuda(ordinal) = active_kind() else {
        return Err(Error::BackendUnavailable("the active backend is not CUDA".into()));
    };
    let dev = native::device(ordinal)?;
    let bytes = (dims.elements() as usize).checked_mul(T::DTYPE.size()).unwrap_or_else(|| {
        panic!("borrow_device_memory: {dims} elements of {:?} do not fit in memory", T::DTYPE)
    });
    // SAFETY: the caller's contract above.
    let mem = unsafe { dev.memory().borrow(ptr, bytes, owner, false) };
    let data = Data::dense(Buffer::Cuda(mem), dims);
    Ok(Array::from_node(Node::ready(T::DTYPE, dims, BackendKind::Cuda(ordinal), data)))
}

/// Releases device memory whose arrays were all dropped while it was locked (with
/// [`Array::lock`] or [`Array::device_ptr`]): pool memory returns to emberfire's cache,
/// borrowed memory's owner is dropped. Returns whether `ptr` was such memory. Memory adopted
/// with [`Array::new_from_device_ptr`] is never found here: locked when its last array was
/// dropped, it went back to the user, and emberfire kept no record of it. (While an array
/// still uses the memory, unlock it with [`Array::unlock`].)
///
/// ```
/// if emberfire::cuda::context(0).is_ok() {
///     assert!(!emberfire::cuda::unlock_device_ptr(0, 0x1234).unwrap());
/// }
/// ```
pub fn unlock_device_ptr(device: i32, ptr: u64) -> Result<bool> {
    Ok(device_of(device)?.memory().unlock_ptr(ptr))
}

/// Makes `allocator` the source of the device memory emberfire's pool takes on `device` from
/// now on. Cached blocks return to the allocator that made them at once (after waiting for the
/// device); blocks in use return to theirs when freed. See [`DeviceAllocator`] for an example.
///
/// ```
/// if let Ok(driver) = emberfire::cuda::driver_allocator(0) {
///     emberfire::cuda::set_allocator(0, driver).unwrap();
/// }
/// ```
pub fn set_allocator(device: i32, allocator: Arc<dyn DeviceAllocator>) -> Result<()> {
    device_of(device)?.memory().set_allocator(allocator);
    Ok(())
}

/// The driver's allocator of `device` (`cuMemAlloc`/`cuMemFree` in its primary context): the
/// default, to wrap in an allocator of your own or to restore after [`set_allocator`].
///
/// ```
/// if let Ok(driver) = emberfire::cuda::driver_allocator(0) {
///     let p = driver.allocate(1024).unwrap();
///     assert_eq!(p % 256, 0);
///     unsafe { driver.free(p, 1024) };
/// }
/// ```
pub fn driver_allocator(device: i32) -> Result<Arc<dyn DeviceAllocator>> {
    Ok(device_of(device)?.memory().driver_allocator())
}

/// A kernel compiled by [`compile_kernel`] and loaded on one device.
#[derive(Clone)]
pub struct Kernel {
    func: Arc<KernelFn>,
    ordinal: usize,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("entry", &self.func.entry())
            .field("device", &self.ordinal)
            .finish()
    }
}

/// Compiles `entry`, an `extern "C" __global__` function of CUDA C `source`, for `device`
/// with NVRTC, through emberfire's kernel cache: the first call for a source compiles it (or
/// loads it from the disk cache), later calls with the same source and entry find it in
/// memory, and [`crate::jit_stats`] counts both. A compile error is an [`Error::Driver`]
/// holding NVRTC's log.
///
/// ```
/// let src = r#"extern "C" __global__ void twice(float* x, unsigned n) {
///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) x[i] *= 2.0f;
/// }"#;
/// if emberfire::cuda::context(0).is_ok() {
///     let k = emberfire::cuda::compile_kernel(0, src, "twice").unwrap();
///     assert_eq!(k.entry(), "twice");
/// }
/// ```
pub fn compile_kernel(device: i32, source: &str, entry: &str) -> Result<Kernel> {
    let dev = device_of(device)?;
    let func = native::compile_user_kernel(dev, source, entry)?;
    Ok(Kernel { func, ordinal: dev.ordinal() })
}

impl Kernel {
    /// The kernel's entry point.
    pub fn entry(&self) -> &str {
        self.func.entry()
    }

    /// The emberfire device id the kernel is loaded on.
    pub fn device(&self) -> i32 {
        self.ordinal as i32
    }

    /// The cudarc function, e.g. for cudarc's launch builder or attribute queries.
    pub fn function(&self) -> &CudaFunction {
        self.func.function()
    }

    /// Launches the kernel on `stream` (asynchronous: returns once queued).
    ///
    /// # Safety
    ///
    /// - `stream` is a live stream of the kernel's device's primary context.
    /// - `params` holds one pointer per kernel parameter, in order, each to a value of that
    ///   parameter's exact type and size (a device pointer parameter: to a `u64` holding the
    ///   address); the values need only live until this call returns.
    /// - Every address passed is device memory of this device, large enough for everything the
    ///   kernel reads and writes with this grid, that stays allocated and is not used by other
    ///   streams until the kernel has run, unless ordered with events (see [`ArrayMemory`]).
    pub unsafe fn launch_on(
        &self,
        stream: sys::CUstream,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let dev = native::device(self.ordinal)?;
        // SAFETY: the caller's contract above.
        unsafe { self.func.launch_on(grid, block, shared_mem_bytes, dev, stream, params) }
    }
}
