//! Your own CUDA C kernels, compiled at run time and launched on emberfire arrays, in the spirit
//! of CuPy's `RawKernel`.

use std::ffi::c_void;

use cudarc::driver::{CudaStream, LaunchConfig};
use emberfire::cuda::{ArrayMemory, Kernel};
use emberfire::{c32, c64, f16, Array, Backend, HasAfEnum};

use crate::device::device_of_stream;
use crate::error::{Error, Result};

/// A kernel given as CUDA C source: compiled with NVRTC on first use on each device, for that
/// device's architecture, through emberfire's kernel cache (in memory for the process, on disk
/// across processes: a second `RawKernel` with the same source compiles nothing), and launched
/// with arrays and scalars as arguments.
///
/// ```
/// use emberfire::{dim4, Array};
/// use emberfire_cuda_interop::{arg, LaunchConfig, RawKernel};
/// const SRC: &str = r#"
/// extern "C" __global__ void axpy(float a, const float* x, float* y, unsigned n) {
///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) y[i] = a * x[i] + y[i];
/// }"#;
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
///     let y = Array::new(&[10.0f32, 20.0, 30.0], dim4!(3)); // written by the kernel
///     let axpy = RawKernel::new(SRC, "axpy");
///     let cfg = LaunchConfig::for_num_elems(3);
///     // SAFETY: the arguments match the signature; `y` holds 3 elements, shared with no other array.
///     unsafe { axpy.launch(cfg, &[arg(2.0f32), arg(&x), arg(&y), arg(3u32)]) }.unwrap();
///     assert_eq!(y.to_vec(), vec![12.0, 24.0, 36.0]);
/// }
/// ```
pub struct RawKernel {
    source: String,
    entry: String,
}

impl std::fmt::Debug for RawKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawKernel").field("entry", &self.entry).finish_non_exhaustive()
    }
}

/// One argument of a kernel launch: an array (passed as the device address of its first
/// element) or a scalar value (passed by value, with the type's size). Made with [`arg`].
pub struct KernelArg<'a>(ArgKind<'a>);

enum ArgKind<'a> {
    Array(&'a dyn DeviceArray),
    /// The value's bytes (at most 16: a c64); the driver takes as many as the parameter has.
    Value([u8; 16]),
}

/// An array of any element type, as a kernel argument needs it.
trait DeviceArray: Sync {
    fn backend(&self) -> Backend;
    fn device(&self) -> i32;
    fn memory(&self) -> emberfire::error::Result<ArrayMemory>;
}

impl<T: HasAfEnum> DeviceArray for Array<T> {
    fn backend(&self) -> Backend {
        self.get_backend()
    }
    fn device(&self) -> i32 {
        self.get_device_id()
    }
    fn memory(&self) -> emberfire::error::Result<ArrayMemory> {
        emberfire::cuda::array_memory(self)
    }
}

/// A kernel argument: `arg(&array)` passes the array's device memory (evaluated, contiguous),
/// `arg(value)` a scalar of the kernel parameter's type (`f32`, `u32`, `f16`, `c32`, ...).
///
/// ```
/// use emberfire::{dim4, Array};
/// let x = Array::new(&[1u8], dim4!(1));
/// let _args = [emberfire_cuda_interop::arg(&x), emberfire_cuda_interop::arg(7i32)];
/// ```
pub fn arg<'a>(value: impl Into<KernelArg<'a>>) -> KernelArg<'a> {
    value.into()
}

impl<'a, T: HasAfEnum> From<&'a Array<T>> for KernelArg<'a> {
    fn from(a: &'a Array<T>) -> KernelArg<'a> {
        KernelArg(ArgKind::Array(a))
    }
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl From<$t> for KernelArg<'_> {
            fn from(v: $t) -> Self {
                let size = std::mem::size_of::<$t>();
                let mut bytes = [0u8; 16];
                // SAFETY: `$t` is a plain value of at most 16 bytes, copied as bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(&v as *const $t as *const u8, bytes.as_mut_ptr(), size)
                };
                KernelArg(ArgKind::Value(bytes))
            }
        }
    )*};
}
scalar_args!(f32, f64, i8, u8, i16, u16, i32, u32, i64, u64, f16, c32, c64);

impl From<bool> for KernelArg<'_> {
    fn from(v: bool) -> Self {
        KernelArg::from(v as u8)
    }
}

impl RawKernel {
    /// A kernel named `entry` (an `extern "C" __global__` function) in CUDA C `source`.
    /// Nothing is compiled until the first launch on a device (or [`compile`](Self::compile)).
    ///
    /// ```
    /// let k = emberfire_cuda_interop::RawKernel::new("extern \"C\" __global__ void f() {}", "f");
    /// assert_eq!(k.entry(), "f");
    /// ```
    pub fn new(source: impl Into<String>, entry: impl Into<String>) -> RawKernel {
        RawKernel { source: source.into(), entry: entry.into() }
    }

    /// The kernel's entry point.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// Compiles (or finds in the cache) and loads the kernel on device `device` now, so that
    /// compile errors show before any launch; the error holds NVRTC's log.
    ///
    /// ```
    /// use emberfire_cuda_interop::RawKernel;
    /// if emberfire_cuda_interop::device_count().is_ok() {
    ///     let bad = RawKernel::new("extern \"C\" __global__ void f() { oops }", "f");
    ///     assert!(bad.compile(0).unwrap_err().to_string().contains("oops"));
    /// }
    /// ```
    pub fn compile(&self, device: i32) -> Result<Kernel> {
        // emberfire's kernel cache keeps the loaded kernel per device and counts every
        // lookup in `jit_stats`; a lookup costs a hash of the source, small beside a launch.
        Ok(emberfire::cuda::compile_kernel(device, &self.source, &self.entry)?)
    }

    /// Launches the kernel on emberfire's stream of the arguments' device (the current stream
    /// of this thread: emberfire's own, or a [`with_stream`](crate::with_stream) scope's), so
    /// it runs after the emberfire work that computed its array arguments and before the work
    /// that reads them afterwards, with no synchronisation. Asynchronous. Without array
    /// arguments, it runs on the active device.
    ///
    /// Errors: arrays on the CPU backend or on several devices; compile and launch failures.
    ///
    /// # Safety
    ///
    /// The arguments match the kernel's parameters in number, order and type (an array for a
    /// pointer parameter of its element type); the kernel reads and writes only within the
    /// arrays for this launch configuration; an array it writes shares its memory with no
    /// array whose values must not change (make it fresh, e.g. with `Array::new` or
    /// `Array::new_empty`, and do not clone it before the launch).
    pub unsafe fn launch(&self, cfg: LaunchConfig, args: &[KernelArg<'_>]) -> Result<()> {
        let device = self.device_of("RawKernel::launch", args, None)?;
        let stream = emberfire::cuda::current_stream(device)?;
        // SAFETY: the current stream is emberfire's (alive for the process) or an open scope's
        // (alive while this thread is inside it); the rest is the caller's contract.
        unsafe { self.launch_raw(device, stream, cfg, args) }
    }

    /// Launches the kernel on `stream`, a stream of yours: first `stream` waits (on the device)
    /// for the emberfire work that computed each array argument, and after the launch each
    /// array's stream waits for `stream`, so emberfire's later reads (and reuse of the memory)
    /// come after the kernel. The host never blocks.
    ///
    /// Errors: as for [`launch`](Self::launch), and a stream of another device or context
    /// than the arrays'.
    ///
    /// # Safety
    ///
    /// As for [`launch`](Self::launch).
    pub unsafe fn launch_on(
        &self,
        stream: &CudaStream,
        cfg: LaunchConfig,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        let device = self.device_of("RawKernel::launch_on", args, Some(stream))?;
        // SAFETY: `stream` is borrowed (alive) and of the device's primary context (checked);
        // the rest is the caller's contract.
        unsafe { self.launch_raw(device, stream.cu_stream(), cfg, args) }
    }

    /// The device the launch works on: the arrays', which must agree with each other and with
    /// the stream's; else the stream's, else the active one.
    fn device_of(
        &self,
        function: &'static str,
        args: &[KernelArg<'_>],
        stream: Option<&CudaStream>,
    ) -> Result<i32> {
        let mut device = None;
        for a in args {
            if let ArgKind::Array(arr) = &a.0 {
                if arr.backend() != Backend::CUDA {
                    return Err(Error::NotOnCuda { function });
                }
                match device {
                    None => device = Some(arr.device()),
                    Some(d) if d != arr.device() => {
                        return Err(Error::WrongDevice {
                            function,
                            expected: d,
                            found: arr.device(),
                        })
                    }
                    Some(_) => {}
                }
            }
        }
        if let Some(s) = stream {
            let found = device_of_stream(function, s)?;
            match device {
                Some(d) if d != found => {
                    return Err(Error::WrongDevice { function, expected: d, found })
                }
                _ => device = Some(found),
            }
        }
        match device {
            Some(d) => Ok(d),
            None if emberfire::get_active_backend() == Backend::CUDA => Ok(emberfire::get_device()),
            None => Err(Error::NotOnCuda { function }),
        }
    }

    /// # Safety
    ///
    /// `stream` is a live stream of `device`'s primary context; the arguments are as
    /// [`launch`](Self::launch) requires.
    unsafe fn launch_raw(
        &self,
        device: i32,
        stream: cudarc::driver::sys::CUstream,
        cfg: LaunchConfig,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        let kernel = self.compile(device)?;
        // Evaluate every array first (their memory is held until the launch is queued).
        let mut memories: Vec<ArrayMemory> = Vec::new();
        let mut slots: Vec<[u64; 2]> = Vec::with_capacity(args.len());
        for a in args {
            match &a.0 {
                ArgKind::Array(arr) => {
                    let m = arr.memory()?;
                    slots.push([m.ptr(), 0]);
                    memories.push(m);
                }
                ArgKind::Value(bytes) => {
                    let mut slot = [0u64; 2];
                    // SAFETY: 16 bytes into a 16-byte slot.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            slot.as_mut_ptr() as *mut u8,
                            16,
                        )
                    };
                    slots.push(slot);
                }
            }
        }
        for m in &memories {
            // SAFETY: the caller's stream contract.
            unsafe { m.wait_for_producer(stream) }?;
        }
        let mut params: Vec<*mut c_void> =
            slots.iter_mut().map(|s| s.as_mut_ptr() as *mut c_void).collect();
        // SAFETY: each parameter points to a slot holding its value (a device address for an
        // array: live memory held by `memories` until the launch is queued, and reused only
        // in the order set below); the caller vouches for types and bounds.
        unsafe {
            kernel.launch_on(stream, cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes, &mut params)
        }?;
        for m in &memories {
            // SAFETY: as above.
            unsafe { m.wait_for_user(stream) }?;
        }
        Ok(())
    }
}
