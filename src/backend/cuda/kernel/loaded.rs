//! A kernel of a device, loaded or still compiling, and its launch.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{result as cu, sys as cusys, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use super::ahead::Compiling;
use super::args::KernelArgs;
use super::graph::Shape;
use super::replay::Outcome;
use crate::backend::cuda::driver_error;
use crate::backend::cuda::runtime::{self, Device};
use crate::error::Error;

/// A kernel of one device: loaded, or compiling in the background (`ahead.rs`) and loaded on
/// its first use that needs the function. Clones share the module.
#[derive(Clone)]
pub(crate) struct KernelFn {
    code: Arc<Code>,
    /// The context it is for (launching it elsewhere is refused).
    ctx: usize,
    entry: Arc<str>,
    /// How many blocks of 256 threads a multiprocessor keeps resident, once asked.
    resident: Arc<OnceLock<u32>>,
}

/// A kernel's module and function, or what they are waiting for.
struct Code {
    loaded: OnceLock<Result<Loaded, Error>>,
    /// The background compile whose image `loaded` is made from; `None` for a kernel loaded
    /// when it was made.
    compiling: Option<Arc<Compiling>>,
    /// The device to load it on.
    ordinal: usize,
}

struct Loaded {
    func: CudaFunction,
    module: Arc<CudaModule>,
}

impl fmt::Debug for KernelFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelFn").field("entry", &self.entry).finish_non_exhaustive()
    }
}

/// Loads a CUBIN or NUL-terminated PTX image into `device` and finds `entry` in it.
fn load(device: &Device, image: Vec<u8>, entry: &str) -> Result<Loaded, Error> {
    let what = |doing: &str| format!("{doing} kernel `{entry}` on device {}", device.ordinal());
    let module = device
        .context()
        .load_module(Ptx::from_binary(image))
        .map_err(|e| driver_error(&what("loading"), e))?;
    let func = module.load_function(entry).map_err(|e| driver_error(&what("finding"), e))?;
    Ok(Loaded { func, module })
}

impl KernelFn {
    /// Loads a CUBIN or NUL-terminated PTX image into the device and finds `entry` in it.
    pub(crate) fn load(device: &Device, image: Vec<u8>, entry: &str) -> Result<KernelFn, Error> {
        let loaded = load(device, image, entry)?;
        Ok(KernelFn::of(device, entry, OnceLock::from(Ok(loaded)), None))
    }

    /// The kernel `entry` of the image `compiling` makes, loaded into `device` when first
    /// needed.
    pub(crate) fn compiling(device: &Device, compiling: Arc<Compiling>, entry: &str) -> KernelFn {
        KernelFn::of(device, entry, OnceLock::new(), Some(compiling))
    }

    fn of(
        device: &Device,
        entry: &str,
        loaded: OnceLock<Result<Loaded, Error>>,
        compiling: Option<Arc<Compiling>>,
    ) -> KernelFn {
        KernelFn {
            code: Arc::new(Code { loaded, compiling, ordinal: device.ordinal() }),
            ctx: device.context().cu_ctx() as usize,
            entry: entry.into(),
            resident: Arc::default(),
        }
    }

    /// Whether the kernel's compile is still to be waited for: its launch on the own stream
    /// can be held back instead (`replay.rs`).
    pub(super) fn compiling_still(&self) -> bool {
        self.code.loaded.get().is_none()
    }

    /// The loaded kernel: waits for its compile and loads it first if it is compiling.
    fn loaded(&self) -> Result<&Loaded, Error> {
        let code = &*self.code;
        let made = code.loaded.get_or_init(|| {
            let Some(job) = &code.compiling else {
                unreachable!("a kernel is loaded when made unless it is compiling")
            };
            let started = std::time::Instant::now();
            let image = job.wait()?;
            let compiled = std::time::Instant::now();
            let loaded = load(runtime::device(code.ordinal)?, image, &self.entry);
            super::nvrtc::trace_event(|| {
                format!(
                    "`{}` waited for {:.1} ms for its compile, loaded in {:.1} ms",
                    self.entry,
                    (compiled - started).as_secs_f64() * 1e3,
                    compiled.elapsed().as_secs_f64() * 1e3
                )
            });
            loaded
        });
        made.as_ref().map_err(Clone::clone)
    }

    /// Waits until the kernel is loaded (a compile's error is its error).
    pub(crate) fn ready(&self) -> Result<(), Error> {
        self.loaded().map(|_| ())
    }

    /// The loaded kernel, for what holds it already loaded (a launch that was made ready, a
    /// kernel of a user's source, which is never compiled ahead).
    fn known(&self) -> &Loaded {
        self.loaded().unwrap_or_else(|e| {
            panic!("internal error: kernel `{}` is used but did not load: {e}", self.entry)
        })
    }

    /// The cudarc function (for cudarc's launch builder or attribute queries). Waits for the
    /// kernel's compile; call [`ready`](Self::ready) first where a compile may have failed.
    pub(crate) fn function(&self) -> &CudaFunction {
        &self.known().func
    }

    /// The raw function handle, valid while this `KernelFn` (or a clone) lives. As
    /// [`function`](Self::function).
    pub(crate) fn cu_function(&self) -> cusys::CUfunction {
        self.known().func.cu_function()
    }

    /// The kernel's entry point name.
    pub(crate) fn entry(&self) -> &str {
        &self.entry
    }

    /// Another entry point of the same compiled module: a source holding several kernels is
    /// compiled and loaded once, and each of them found here.
    pub(crate) fn sibling(&self, entry: &str) -> Result<KernelFn, Error> {
        let module = self.loaded()?.module.clone();
        let func = module
            .load_function(entry)
            .map_err(|e| driver_error(&format!("finding kernel `{entry}`"), e))?;
        Ok(KernelFn {
            code: Arc::new(Code {
                loaded: OnceLock::from(Ok(Loaded { func, module })),
                compiling: None,
                ordinal: self.code.ordinal,
            }),
            ctx: self.ctx,
            entry: entry.into(),
            resident: Arc::default(),
        })
    }

    /// How many blocks of 256 threads (with no dynamic shared memory) one multiprocessor runs
    /// at once, by the kernel's registers and static shared memory: what a grid of one wave
    /// is sized by. Asked of the driver once per kernel (after its compile); 1 if it cannot say.
    pub(crate) fn resident_blocks(&self) -> u32 {
        *self.resident.get_or_init(|| {
            self.loaded().ok().map_or(1, |l| {
                l.func
                    .occupancy_max_active_blocks_per_multiprocessor(256, 0, None)
                    .map_or(1, |n| n.max(1))
            })
        })
    }

    /// Launches the kernel on this thread's current stream of `device` (emberfire's own, or a
    /// user's inside a `with_stream` scope) with the parameter values in `args`; on the own
    /// stream, a small launch of a shape launched before is replayed from a graph (see
    /// `replay.rs`), and a launch of a kernel still compiling is held back until something
    /// sends it (`ahead.rs`). Launches held back are sent first. Asynchronous: returns once
    /// queued or held.
    ///
    /// # Safety
    ///
    /// - `args` holds exactly one value per kernel parameter, in order, each of the
    ///   parameter's exact type and size (a pointer parameter: a `u64` device address).
    /// - Every device address passed is live memory of `device`, large enough for everything
    ///   the kernel reads and writes with this grid, and stays allocated until the kernel has
    ///   run (memory dropped afterwards is safe: reuse is ordered on the same stream).
    /// - No other stream writes memory the kernel reads or accesses memory it writes, unless
    ///   ordered with events.
    pub(crate) unsafe fn launch(
        &self,
        device: &Device,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem: u32,
        args: &mut KernelArgs,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_as(device, grid, block, shared_mem, args, false) }
    }

    /// [`launch`](Self::launch), except that a small launch on the own stream may be held
    /// back and sent later with others as one graph (`replay.rs` says when, and what sends
    /// it). For the element-wise evaluations, whose kernels read and write only the memory
    /// their arguments name. A held launch keeps `args` (they are left empty): build them
    /// anew for another launch.
    ///
    /// # Safety
    ///
    /// [`launch`](Self::launch)'s contract.
    pub(crate) unsafe fn launch_or_hold(
        &self,
        device: &Device,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem: u32,
        args: &mut KernelArgs,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_as(device, grid, block, shared_mem, args, true) }
    }

    /// # Safety
    ///
    /// [`launch`](Self::launch)'s contract.
    unsafe fn launch_as(
        &self,
        device: &Device,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem: u32,
        args: &mut KernelArgs,
        hold: bool,
    ) -> Result<(), Error> {
        self.bind(device)?;
        let stream = device.current_stream_id();
        // (the raw handle as it is: this launch orders itself after what is held, below)
        let raw = stream.handle();
        // (a launch behind launches that wait for their compiles waits with them: see
        // `Replays::waiting_for_compiles`)
        if stream == device.stream_id()
            && (self.compiling_still() || device.replays().waiting_for_compiles(device))
        {
            // (a launch made through `launch` keeps its arguments: its caller may use them
            // again)
            let mut kept = if hold { None } else { Some(args.clone()) };
            let held = kept.as_mut().unwrap_or(args);
            // SAFETY: the caller's contract, on the device's own stream with its context
            // current.
            if unsafe {
                device.replays().hold_compiling(device, self, grid, block, shared_mem, held)
            }? {
                return Ok(());
            }
        }
        let func = self.loaded()?.func.cu_function();
        if stream == device.stream_id() && super::replay::worth_it(device, grid) {
            let shape = Shape::of(self, grid, block, shared_mem);
            // SAFETY: the caller's contract, on the device's own stream with its context
            // current.
            let outcome = unsafe { device.replays().launch(device, self, shape, raw, args, hold) }?;
            if let Outcome::Done = outcome {
                return Ok(());
            }
        } else {
            device.replays().send(device)?;
        }
        let mut params = args.pointers();
        // SAFETY: the caller's contract; `params` point into `args`, which outlives the call;
        // the context is current and the function kept loaded by `self`.
        unsafe { cu::launch_kernel(func, grid, block, shared_mem, raw, &mut params) }
            .map_err(|e| driver_error(&format!("launching kernel `{}`", self.entry), e))
    }

    /// Makes `device`'s context current, refusing a device the kernel was not loaded on.
    fn bind(&self, device: &Device) -> Result<(), Error> {
        if device.context().cu_ctx() as usize != self.ctx {
            return Err(Error::Driver(format!(
                "kernel `{}` was loaded on another device than {}",
                self.entry,
                device.ordinal()
            )));
        }
        device.bind()
    }

    /// Launches the kernel on `stream` with raw parameter pointers (the form users' kernels
    /// are launched in). Asynchronous: returns once queued.
    ///
    /// # Safety
    ///
    /// - `stream` is a live stream of `device`'s primary context.
    /// - `params` has exactly one pointer per kernel parameter, in order, each pointing to a
    ///   value of the parameter's exact type and size (for a pointer parameter, to a `u64`
    ///   holding the device address); the pointed-to values need only live until this call
    ///   returns (the driver copies them).
    /// - The memory rules of [`launch`](Self::launch).
    pub(crate) unsafe fn launch_on(
        &self,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem: u32,
        device: &Device,
        stream: cusys::CUstream,
        params: &mut [*mut std::ffi::c_void],
    ) -> Result<(), Error> {
        self.bind(device)?;
        self.ready()?;
        device.replays().send(device)?;
        // SAFETY: the caller's contract above; the function is kept loaded by `self`.
        unsafe { cu::launch_kernel(self.cu_function(), grid, block, shared_mem, stream, params) }
            .map_err(|e| driver_error(&format!("launching kernel `{}`", self.entry), e))
    }
}
