//! Run-time compilation with NVRTC, and the kernel cache in memory and on disk.
//!
//! Why: kernels are generated from expression graphs while a program runs, and compiling one
//! costs tens of milliseconds, so a compiled kernel is kept (per device) in memory for the
//! process and on disk for later processes.
//!
//! - **Own architecture, machine code.** Sources are compiled with
//!   `--gpu-architecture=sm_XY` for the device's compute capability and the cache keeps the
//!   CUBIN, which loads in well under a millisecond (PTX would be compiled again by the driver
//!   in every process). Only if this NVRTC does not know the device (a GPU newer than the
//!   compiler) is PTX for the newest architecture it knows used instead, for the driver to
//!   finish. No options that change numerics (`-use_fast_math`, flush-to-zero, ...) are used:
//!   results must match the CPU backend's IEEE arithmetic.
//! - **A lean front end for our own kernels.** emberfire's generated and hand-written kernels
//!   use only the device language (no textures, surfaces, device-side launches or host API
//!   types), so with NVRTC 12.4 or later they are compiled with `-minimal`, which leaves those
//!   declarations out: on an H100 with NVRTC 13.0 a fused element-wise kernel compiled in 11 to
//!   12 ms instead of 23 to 24. Should a future NVRTC refuse one of them in that mode, it is
//!   compiled again without it. Users' sources (`cuda::compile_kernel`) get the full front
//!   end.
//! - **One compile per source.** Threads that ask for the same source at once share one
//!   `OnceLock`: one compiles, the others wait for it and count as memory hits.
//! - **Disk cache.** In `EMBERFIRE_KERNEL_CACHE` (empty: no disk cache), else
//!   `$XDG_CACHE_HOME/emberfire/kernels`, else `$HOME/.cache/emberfire/kernels`. A file is named
//!   by the target and a 128-bit FNV-1a hash of (format, options, NVRTC version, target, entry,
//!   source), and holds a header (magic, format version, image kind, the full key, length,
//!   checksum) and the image. A file that is truncated, corrupt, from another format or for
//!   another key is ignored and rewritten; files are written to a temporary name and renamed,
//!   so a reader never sees half a file, and concurrent processes at worst compile twice.
//! - **Finding NVRTC.** cudarc looks for `libnvrtc.so`, `libnvrtc.so.13`, `libnvrtc.so.12`, ...
//!   on the loader's path. Toolkits in `/usr/local/cuda*` and NVRTC from Python wheels
//!   (`nvidia/cu13/lib`, `nvidia/cuda_nvrtc/lib`) are often not on it, so when cudarc finds
//!   nothing, those places (and `$EMBERFIRE_NVRTC`, a file or a folder) are searched and the
//!   library found is opened by its full path first; the loader then resolves cudarc's
//!   `libnvrtc.so.13` to the library already loaded under that name.

use std::collections::HashMap;
use std::ffi::{c_char, CString, OsString};
use std::fmt;
use std::fs;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use cudarc::driver::{result as cu, sys as cusys, CudaFunction, CudaModule};
use cudarc::nvrtc::{result as rtc, sys as rtcsys, Ptx};

use super::driver_error;
use super::libraries::{self, Search};
use super::runtime::Device;
use crate::error::Error;

/// Counts of kernel compilations and cache hits, across all devices, since the process began.
///
/// ```ignore
/// let before = emberfire::jit_stats();
/// // ... evaluate the same expression twice ...
/// assert_eq!(emberfire::jit_stats().compiles, before.compiles + 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Kernels compiled with NVRTC.
    pub compiles: u64,
    /// Kernels found already loaded in this process.
    pub memory_hits: u64,
    /// Kernels loaded from the disk cache instead of being compiled.
    pub disk_hits: u64,
}

/// Compile and hit counters; one global set and one per cache.
#[derive(Default)]
struct Counters {
    compiles: AtomicU64,
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            compiles: AtomicU64::new(0),
            memory_hits: AtomicU64::new(0),
            disk_hits: AtomicU64::new(0),
        }
    }

    fn snapshot(&self) -> JitStats {
        JitStats {
            compiles: self.compiles.load(Ordering::Relaxed),
            memory_hits: self.memory_hits.load(Ordering::Relaxed),
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
        }
    }
}

static GLOBAL: Counters = Counters::new();

/// Counts a kernel found in a cache in front of [`KernelCache`] (e.g. one keyed by the
/// expression's structure) as a memory hit.
pub(crate) fn count_memory_hit() {
    GLOBAL.memory_hits.fetch_add(1, Ordering::Relaxed);
}

/// The kernel compilation counters (global across devices).
pub(crate) fn jit_stats() -> JitStats {
    GLOBAL.snapshot()
}

/// Bump this number when the file layout or the compile options change, so old files are
/// not mistaken for current ones.
const FORMAT_VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"EFKERNEL";
const HEADER_LEN: usize = 48;

/// What NVRTC is asked to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Machine code for `sm_XY` (XY = 10 * major + minor).
    Cubin(u32),
    /// PTX for `compute_XY`, finished by the driver at load.
    Ptx(u32),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Cubin(a) => write!(f, "sm_{a}"),
            Target::Ptx(a) => write!(f, "compute_{a}"),
        }
    }
}

impl Target {
    fn kind(self) -> u32 {
        match self {
            Target::Cubin(_) => 0,
            Target::Ptx(_) => 1,
        }
    }
}

/// The target for a device of compute capability `cc`, given the architectures NVRTC supports
/// (empty: unknown, try the device's own).
pub(crate) fn choose_target(cc: (u32, u32), supported: &[u32]) -> Target {
    let want = cc.0 * 10 + cc.1;
    if supported.is_empty() || supported.contains(&want) {
        return Target::Cubin(want);
    }
    match supported.iter().copied().filter(|&a| a <= want).max() {
        Some(best) => Target::Ptx(best),
        // Older than anything this NVRTC knows: let it say so.
        None => Target::Cubin(want),
    }
}

/// Whose source a kernel is, which decides the NVRTC front end it gets (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// emberfire's own kernels: `-minimal` where NVRTC has it.
    Own,
    /// A user's source: the full front end.
    User,
}

impl Origin {
    /// Whether a kernel of this origin is compiled with `-minimal` by NVRTC `version`.
    fn minimal(self, version: (u32, u32)) -> bool {
        self == Origin::Own && version >= (12, 4)
    }
}

/// NVRTC as loaded in this process.
#[derive(Clone, Debug)]
pub(crate) struct NvrtcInfo {
    /// (major, minor), e.g. (13, 0).
    pub version: (u32, u32),
    /// Supported architectures as 10 * major + minor (75, 80, 90, ...).
    pub archs: Vec<u32>,
}

/// Loads NVRTC once per process (see the module documentation for where it is looked for).
pub(crate) fn nvrtc() -> Result<&'static NvrtcInfo, Error> {
    static INFO: OnceLock<Result<NvrtcInfo, Error>> = OnceLock::new();
    INFO.get_or_init(load_nvrtc).as_ref().map_err(Clone::clone)
}

/// The NVRTC version, loading it if needed.
pub(crate) fn nvrtc_version() -> Result<(u32, u32), Error> {
    nvrtc().map(|i| i.version)
}

/// Where NVRTC is looked for when it is not on the loader's path.
const NVRTC_SEARCH: Search = Search {
    stem: "nvrtc",
    override_var: "EMBERFIRE_NVRTC",
    wheel_dirs: &["cu13/lib", "cuda_nvrtc/lib", "cu12/lib"],
};

fn load_nvrtc() -> Result<NvrtcInfo, Error> {
    // NVRTC loads its builtins library by name when it compiles: open it from the same place.
    if let Err(searched) = libraries::load(&["nvrtc"], &NVRTC_SEARCH, &["libnvrtc-builtins.so"]) {
        return Err(Error::BackendUnavailable(format!(
            "CUDA: NVRTC (libnvrtc.so.13 or .12) was not found on the loader's path nor in \
             {searched}; install the CUDA toolkit's NVRTC or set EMBERFIRE_NVRTC to the library"
        )));
    }
    let queried = catch_unwind(|| -> Result<NvrtcInfo, rtc::NvrtcError> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: valid out-pointers; NVRTC is loaded.
        unsafe { rtcsys::nvrtcVersion(&mut major, &mut minor) }.result()?;
        let mut n = 0;
        // SAFETY: as above.
        unsafe { rtcsys::nvrtcGetNumSupportedArchs(&mut n) }.result()?;
        let mut archs = vec![0i32; n.max(0) as usize];
        // SAFETY: `archs` has room for the `n` values NVRTC writes.
        unsafe { rtcsys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }.result()?;
        Ok(NvrtcInfo {
            version: (major.max(0) as u32, minor.max(0) as u32),
            archs: archs.into_iter().map(|a| a.max(0) as u32).collect(),
        })
    });
    match queried {
        Ok(Ok(info)) => Ok(info),
        Ok(Err(e)) => {
            Err(Error::BackendUnavailable(format!("CUDA: NVRTC does not work: {:?}", e.0)))
        }
        Err(_) => Err(Error::BackendUnavailable(
            "CUDA: the NVRTC library found lacks entry points emberfire needs (too old?)".into(),
        )),
    }
}

/// NVRTC library files to try, best first, from `$EMBERFIRE_NVRTC`, the CUDA toolkit's usual
/// places and Python environments (NVIDIA's wheels). `env` reads a variable.
pub(crate) fn nvrtc_candidates(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    libraries::candidates(&NVRTC_SEARCH, env)
}

/// A loaded kernel: the function and the module that keeps it alive.
#[derive(Clone)]
pub(crate) struct KernelFn {
    func: CudaFunction,
    module: Arc<CudaModule>,
    /// The context it was loaded into (launching it elsewhere is refused).
    ctx: usize,
    entry: Arc<str>,
}

impl fmt::Debug for KernelFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelFn").field("entry", &self.entry).finish_non_exhaustive()
    }
}

impl KernelFn {
    /// Loads a CUBIN or NUL-terminated PTX image into the device and finds `entry` in it.
    fn load(device: &Device, image: Vec<u8>, entry: &str) -> Result<KernelFn, Error> {
        let what = |doing: &str| format!("{doing} kernel `{entry}` on device {}", device.ordinal());
        let module = device
            .context()
            .load_module(Ptx::from_binary(image))
            .map_err(|e| driver_error(&what("loading"), e))?;
        let func = module.load_function(entry).map_err(|e| driver_error(&what("finding"), e))?;
        Ok(KernelFn { func, module, ctx: device.context().cu_ctx() as usize, entry: entry.into() })
    }

    /// The cudarc function (for cudarc's launch builder or attribute queries).
    pub(crate) fn function(&self) -> &CudaFunction {
        &self.func
    }

    /// The module the function lives in.
    pub(crate) fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The raw function handle, valid while this `KernelFn` (or a clone) lives.
    pub(crate) fn cu_function(&self) -> cusys::CUfunction {
        self.func.cu_function()
    }

    /// The kernel's entry point name.
    pub(crate) fn entry(&self) -> &str {
        &self.entry
    }

    /// Another entry point of the same compiled module: a source holding several kernels is
    /// compiled and loaded once, and each of them found here.
    pub(crate) fn sibling(&self, entry: &str) -> Result<KernelFn, Error> {
        let func = self
            .module
            .load_function(entry)
            .map_err(|e| driver_error(&format!("finding kernel `{entry}`"), e))?;
        Ok(KernelFn { func, module: self.module.clone(), ctx: self.ctx, entry: entry.into() })
    }

    /// Launches the kernel on this thread's current stream of `device` (emberfire's own, or a
    /// user's inside a `with_stream` scope). Asynchronous: returns once queued.
    ///
    /// # Safety
    ///
    /// - `params` has exactly one pointer per kernel parameter, in order, each pointing to a
    ///   value of the parameter's exact type and size (for a pointer parameter, to a `u64`
    ///   holding the device address); the pointed-to values need only live until this call
    ///   returns (the driver copies them).
    /// - Every device address passed is live memory of `device`, large enough for everything
    ///   the kernel reads and writes with this grid, and stays allocated until the kernel has
    ///   run (memory dropped afterwards is safe: reuse is ordered on the same stream).
    /// - No other stream writes memory the kernel reads or accesses memory it writes, unless
    ///   ordered with events.
    pub(crate) unsafe fn launch_raw(
        &self,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem: u32,
        device: &Device,
        params: &mut [*mut std::ffi::c_void],
    ) -> Result<(), Error> {
        // SAFETY: the caller keeps `launch_raw`'s contract, which is `launch_on`'s; the stream
        // is `device`'s current one, live in its primary context.
        unsafe { self.launch_on(grid, block, shared_mem, device, device.stream_raw(), params) }
    }

    /// Like [`launch_raw`](Self::launch_raw), on another stream of `device`'s primary context.
    ///
    /// # Safety
    ///
    /// As for `launch_raw`, and `stream` is a live stream of `device`'s primary context.
    pub(crate) unsafe fn launch_on(
        &self,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_mem: u32,
        device: &Device,
        stream: cusys::CUstream,
        params: &mut [*mut std::ffi::c_void],
    ) -> Result<(), Error> {
        if device.context().cu_ctx() as usize != self.ctx {
            return Err(Error::Driver(format!(
                "kernel `{}` was loaded on another device than {}",
                self.entry,
                device.ordinal()
            )));
        }
        device.bind()?;
        // SAFETY: the caller's contract above; the function is kept loaded by `self`.
        unsafe { cu::launch_kernel(self.cu_function(), grid, block, shared_mem, stream, params) }
            .map_err(|e| driver_error(&format!("launching kernel `{}`", self.entry), e))
    }
}

/// One cached source: its text (compared exactly on lookup) and its once-only load.
struct Slot {
    entry: Box<str>,
    source: Box<str>,
    loaded: OnceLock<Result<KernelFn, Error>>,
}

/// The kernels of one device, by source. See the module documentation.
pub(crate) struct KernelCache {
    cc: (u32, u32),
    dir: Option<PathBuf>,
    slots: Mutex<HashMap<u64, Vec<Arc<Slot>>>>,
    counters: Counters,
}

impl fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelCache")
            .field("compute_capability", &self.cc)
            .field("dir", &self.dir)
            .field("kernels", &self.len())
            .finish()
    }
}

impl KernelCache {
    /// A cache for a device of compute capability `cc`, with the disk cache directory taken
    /// from the environment.
    pub(crate) fn new(cc: (u32, u32)) -> KernelCache {
        KernelCache::with_dir(cc, cache_dir_from(&|k| std::env::var_os(k)))
    }

    /// A cache with an explicit disk directory (`None`: memory only).
    pub(crate) fn with_dir(cc: (u32, u32), dir: Option<PathBuf>) -> KernelCache {
        KernelCache { cc, dir, slots: Mutex::new(HashMap::new()), counters: Counters::new() }
    }

    /// The disk cache directory, if any.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// This cache's own counters (the global ones are [`jit_stats`]).
    pub(crate) fn stats(&self) -> JitStats {
        self.counters.snapshot()
    }

    /// How many kernels are loaded.
    pub(crate) fn len(&self) -> usize {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).values().map(Vec::len).sum()
    }

    /// The kernel `entry` (an `extern "C" __global__` function) of emberfire's own CUDA C
    /// `source`, compiled for and loaded on `device` (the device this cache belongs to): from
    /// memory, else from disk, else compiled. A compile error is an [`Error::Driver`] holding
    /// NVRTC's log.
    pub(crate) fn get(
        &self,
        device: &Device,
        source: &str,
        entry: &str,
    ) -> Result<KernelFn, Error> {
        self.get_as(device, source, entry, Origin::Own)
    }

    /// Like [`get`](Self::get), for a user's source (compiled with NVRTC's full front end).
    pub(crate) fn get_user(
        &self,
        device: &Device,
        source: &str,
        entry: &str,
    ) -> Result<KernelFn, Error> {
        self.get_as(device, source, entry, Origin::User)
    }

    fn get_as(
        &self,
        device: &Device,
        source: &str,
        entry: &str,
        origin: Origin,
    ) -> Result<KernelFn, Error> {
        let h = quick_hash(entry, source);
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let list = slots.entry(h).or_default();
            match list.iter().find(|s| &*s.entry == entry && &*s.source == source) {
                Some(s) => s.clone(),
                None => {
                    let s = Arc::new(Slot {
                        entry: entry.into(),
                        source: source.into(),
                        loaded: OnceLock::new(),
                    });
                    list.push(s.clone());
                    s
                }
            }
        };
        let mut loaded_here = false;
        let r = slot.loaded.get_or_init(|| {
            loaded_here = true;
            self.load(device, source, entry, origin)
        });
        match r {
            Ok(k) => {
                if !loaded_here {
                    self.count(|c| &c.memory_hits);
                }
                Ok(k.clone())
            }
            Err(e) => {
                // Forget the failure so a later call tries again (the cause may be transient,
                // e.g. out of memory while loading); callers that waited share this error.
                let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(list) = slots.get_mut(&h) {
                    list.retain(|s| !Arc::ptr_eq(s, &slot));
                }
                Err(e.clone())
            }
        }
    }

    fn count(&self, which: impl Fn(&Counters) -> &AtomicU64) {
        which(&self.counters).fetch_add(1, Ordering::Relaxed);
        which(&GLOBAL).fetch_add(1, Ordering::Relaxed);
    }

    fn load(
        &self,
        device: &Device,
        source: &str,
        entry: &str,
        origin: Origin,
    ) -> Result<KernelFn, Error> {
        if entry.is_empty() || entry.contains('\0') {
            return Err(Error::Driver(format!("invalid kernel entry point name {entry:?}")));
        }
        let info = nvrtc()?;
        let target = choose_target(self.cc, &info.archs);
        let minimal = origin.minimal(info.version);
        let key = disk_key(source, entry, target, info.version, minimal);
        let path = self.dir.as_ref().map(|d| d.join(file_name(target, key)));
        if let Some(p) = &path {
            if let Ok(bytes) = fs::read(p) {
                if let Some(image) = decode_entry(&bytes, key, target) {
                    if let Ok(k) = KernelFn::load(device, image.to_vec(), entry) {
                        self.count(|c| &c.disk_hits);
                        return Ok(k);
                    }
                }
            }
        }
        let started = Instant::now();
        let compile_with = |minimal: bool| {
            catch_unwind(AssertUnwindSafe(|| compile(source, entry, target, minimal)))
                .unwrap_or_else(|_| {
                    Err(Error::Driver(format!(
                        "NVRTC failed while compiling `{entry}` (an entry point is missing?)"
                    )))
                })
        };
        // The image is stored under the key of the first choice even when the fallback made
        // it: either is code for this source, and the next process then finds it at once.
        let image = match compile_with(minimal) {
            Err(_) if minimal => compile_with(false)?,
            done => done?,
        };
        self.count(|c| &c.compiles);
        let compiled = Instant::now();
        let k = KernelFn::load(device, image.clone(), entry)?;
        let loaded = Instant::now();
        if let Some(p) = &path {
            // Best effort: a read-only or full disk only costs a compile next time.
            let _ = write_atomically(p, &encode_entry(key, target, &image));
        }
        if trace_enabled() {
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            eprintln!(
                "emberfire jit: `{entry}` ({} bytes of source) compiled in {:.1} ms, loaded in \
                 {:.1} ms, stored in {:.1} ms",
                source.len(),
                ms(started, compiled),
                ms(compiled, loaded),
                ms(loaded, Instant::now())
            );
        }
        Ok(k)
    }
}

/// Whether `EMBERFIRE_JIT_TRACE` is set: each compile then prints where its time went.
pub(crate) fn trace_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("EMBERFIRE_JIT_TRACE").is_some_and(|v| v != "0"))
}

/// Compiles `source` for `target` and returns the CUBIN, or the PTX with its final NUL.
fn compile(source: &str, entry: &str, target: Target, minimal: bool) -> Result<Vec<u8>, Error> {
    let fail = |what: &str, e: rtc::NvrtcError| {
        Error::Driver(format!("NVRTC {what} for `{entry}` ({target}) failed: {:?}", e.0))
    };
    let src = CString::new(source).map_err(|_| {
        Error::Driver(format!("the source of kernel `{entry}` contains a NUL byte"))
    })?;
    let name = CString::new(format!("{entry}.cu")).expect("entry has no NUL (checked)");
    let prog = rtc::create_program(&src, Some(&name)).map_err(|e| fail("create program", e))?;
    struct Program(rtcsys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created above and destroyed only here.
            let _ = unsafe { rtc::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    let options = compile_options(target, minimal);
    // SAFETY: a live program.
    let compiled = unsafe { rtc::compile_program(prog.0, &options) };
    if let Err(e) = compiled {
        // SAFETY: a live program.
        let log = unsafe { rtc::get_program_log(prog.0) }.map(c_text).unwrap_or_default();
        return Err(Error::Driver(format!(
            "NVRTC could not compile kernel `{entry}` for {target}: {:?}\n{}",
            e.0,
            log.trim_end()
        )));
    }
    match target {
        Target::Cubin(_) => {
            let mut size = 0usize;
            // SAFETY: a live, compiled program; `size` is a valid out-pointer.
            unsafe { rtcsys::nvrtcGetCUBINSize(prog.0, &mut size) }
                .result()
                .map_err(|e| fail("get CUBIN size", e))?;
            let mut cubin = vec![0u8; size];
            // SAFETY: `cubin` has the `size` bytes NVRTC writes.
            unsafe { rtcsys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) }
                .result()
                .map_err(|e| fail("get CUBIN", e))?;
            Ok(cubin)
        }
        Target::Ptx(_) => {
            // SAFETY: a live, compiled program.
            let ptx = unsafe { rtc::get_ptx(prog.0) }.map_err(|e| fail("get PTX", e))?;
            let mut bytes: Vec<u8> = ptx.into_iter().map(|c| c as u8).collect();
            if bytes.last() != Some(&0) {
                bytes.push(0);
            }
            Ok(bytes)
        }
    }
}

/// The NVRTC options for `target`, with or without the minimal front end. Part of the disk
/// key.
fn compile_options(target: Target, minimal: bool) -> Vec<String> {
    let mut options = vec![format!("--gpu-architecture={target}")];
    if minimal {
        options.push("-minimal".into());
    }
    options
}

fn c_text(v: Vec<c_char>) -> String {
    let bytes: Vec<u8> = v.into_iter().take_while(|&c| c != 0).map(|c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The disk cache directory from the environment (see the module documentation).
pub(crate) fn cache_dir_from(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(dir) = env("EMBERFIRE_KERNEL_CACHE") {
        return if dir.is_empty() { None } else { Some(PathBuf::from(dir)) };
    }
    if let Some(xdg) = env("XDG_CACHE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some(xdg.join("emberfire").join("kernels"));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("emberfire").join("kernels"))
}

/// FNV-1a, 128 bits: stable across builds and platforms (std's hashers are not).
pub(crate) fn fnv1a_128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for part in parts {
        // Length-prefix every part so ("ab", "c") and ("a", "bc") differ.
        for &b in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            h ^= b as u128;
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// FNV-1a, 64 bits: the checksum of a cached image.
pub(crate) fn fnv1a_64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// A fast hash for the in-memory table (8 bytes at a time; equality is checked on the text, so
/// collisions cost only a comparison).
fn quick_hash(entry: &str, source: &str) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ entry.len() as u64;
    for s in [entry.as_bytes(), source.as_bytes()] {
        let mut words = s.chunks_exact(8);
        for w in &mut words {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            h = (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        }
        for &b in words.remainder() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    h ^ (h >> 32)
}

/// The key of a compiled kernel on disk.
pub(crate) fn disk_key(
    source: &str,
    entry: &str,
    target: Target,
    nvrtc: (u32, u32),
    minimal: bool,
) -> u128 {
    let options = compile_options(target, minimal).join(" ");
    fnv1a_128(&[
        &FORMAT_VERSION.to_le_bytes(),
        options.as_bytes(),
        &nvrtc.0.to_le_bytes(),
        &nvrtc.1.to_le_bytes(),
        target.to_string().as_bytes(),
        entry.as_bytes(),
        source.as_bytes(),
    ])
}

/// The file name of a kernel in the cache directory.
pub(crate) fn file_name(target: Target, key: u128) -> String {
    format!("{target}-{key:032x}.bin")
}

/// A cache file: header + image.
pub(crate) fn encode_entry(key: u128, target: Target, image: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + image.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&target.kind().to_le_bytes());
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&(image.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a_64(image).to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(image);
    out
}

/// The image in a cache file, if the file is whole, of this format and for this key.
pub(crate) fn decode_entry(file: &[u8], key: u128, target: Target) -> Option<&[u8]> {
    if file.len() < HEADER_LEN || &file[..8] != MAGIC {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(file[i..i + 8].try_into().expect("8 bytes"));
    let stored_key = u128::from_le_bytes(file[16..32].try_into().expect("16 bytes"));
    if u32_at(8) != FORMAT_VERSION || u32_at(12) != target.kind() || stored_key != key {
        return None;
    }
    let image = &file[HEADER_LEN..];
    if u64_at(32) != image.len() as u64 || u64_at(40) != fnv1a_64(image) || image.is_empty() {
        return None;
    }
    Some(image)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// readers see the old file or the new one, never a part. The file is not flushed to stable
/// storage: a flush cost more than the compile it saves on some file systems, and a file torn
/// by a crash fails `decode_entry`'s length and checksum test and is compiled again.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::libraries::read_dir_names;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "emberfire-nvrtc-test-{tag}-{}-{}",
            std::process::id(),
            quick_hash(tag, "")
        ));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn fnv_matches_published_vectors() {
        // FNV-1a reference values (no length prefix) for "" and "a".
        let raw = |s: &[u8]| {
            let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
            for &b in s {
                h ^= b as u128;
                h = h.wrapping_mul(0x0000000001000000000000000000013B);
            }
            h
        };
        assert_eq!(raw(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(raw(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
        assert_eq!(fnv1a_64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn keys_are_stable_and_separate_their_parts() {
        // A fixed value: if this changes, every user's disk cache is invalidated; bump
        // FORMAT_VERSION deliberately instead.
        let k = disk_key("src", "k", Target::Cubin(90), (13, 0), true);
        assert_eq!(k, disk_key("src", "k", Target::Cubin(90), (13, 0), true));
        assert_eq!(format!("{k:032x}").len(), 32);
        assert_ne!(fnv1a_128(&[b"ab", b"c"]), fnv1a_128(&[b"a", b"bc"]));
        assert_ne!(k, disk_key("src", "k", Target::Cubin(80), (13, 0), true));
        assert_ne!(k, disk_key("src", "k", Target::Ptx(90), (13, 0), true));
        assert_ne!(k, disk_key("src", "k", Target::Cubin(90), (12, 8), true));
        assert_ne!(k, disk_key("src", "k2", Target::Cubin(90), (13, 0), true));
        assert_ne!(k, disk_key("src ", "k", Target::Cubin(90), (13, 0), true));
        assert_ne!(k, disk_key("src", "k", Target::Cubin(90), (13, 0), false));
        assert_eq!(fnv1a_128(&[b"emberfire"]), {
            let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
            for &b in 9u64.to_le_bytes().iter().chain(b"emberfire".iter()) {
                h ^= b as u128;
                h = h.wrapping_mul(0x0000000001000000000000000000013B);
            }
            h
        });
    }

    #[test]
    fn entries_round_trip_and_reject_damage() {
        let key = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let image: Vec<u8> = (0..5000u32).map(|i| (i * 31) as u8).collect();
        let file = encode_entry(key, Target::Cubin(90), &image);
        assert_eq!(decode_entry(&file, key, Target::Cubin(90)), Some(&image[..]));
        // Another key (a foreign file under this name), another kind.
        assert_eq!(decode_entry(&file, key ^ 1, Target::Cubin(90)), None);
        assert_eq!(decode_entry(&file, key, Target::Ptx(90)), None);
        // Truncated anywhere, a flipped bit anywhere, junk, nothing.
        for cut in [0, 7, HEADER_LEN - 1, HEADER_LEN, file.len() - 1] {
            assert_eq!(decode_entry(&file[..cut], key, Target::Cubin(90)), None, "cut {cut}");
        }
        for i in (0..file.len()).step_by(97) {
            let mut bad = file.clone();
            bad[i] ^= 0x10;
            assert_eq!(decode_entry(&bad, key, Target::Cubin(90)), None, "flip at {i}");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode_entry(&longer, key, Target::Cubin(90)), None);
        assert_eq!(decode_entry(b"not a kernel", key, Target::Cubin(90)), None);
        // Another format version.
        let mut old = file.clone();
        old[8] = old[8].wrapping_add(1);
        assert_eq!(decode_entry(&old, key, Target::Cubin(90)), None);
    }

    #[test]
    fn files_are_written_atomically_and_replace_old_ones() {
        let dir = temp_dir("atomic");
        let path = dir.join("nested").join(file_name(Target::Cubin(90), 42));
        write_atomically(&path, b"first").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"first");
        write_atomically(&path, b"second, longer").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second, longer");
        let leftovers: Vec<_> = read_dir_names(path.parent().unwrap()).collect();
        assert_eq!(leftovers, vec![file_name(Target::Cubin(90), 42)], "no temporary files left");
        assert!(file_name(Target::Cubin(90), 42).starts_with("sm_90-0000"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_writers_leave_one_whole_file() {
        let dir = temp_dir("race");
        let path = dir.join("k.bin");
        let key = 7u128;
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let path = path.clone();
                s.spawn(move || {
                    let image = vec![t; 100_000];
                    for _ in 0..20 {
                        write_atomically(&path, &encode_entry(key, Target::Cubin(90), &image))
                            .unwrap();
                        let read = fs::read(&path).unwrap();
                        assert!(decode_entry(&read, key, Target::Cubin(90)).is_some());
                    }
                });
            }
        });
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_cache_directory_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        static ALL: [(&str, &str); 3] =
            [("EMBERFIRE_KERNEL_CACHE", "/x/kc"), ("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/u")];
        let all = &ALL;
        assert_eq!(cache_dir_from(&env(all)), Some(PathBuf::from("/x/kc")));
        assert_eq!(cache_dir_from(&env(&all[1..])), Some(PathBuf::from("/xdg/emberfire/kernels")));
        assert_eq!(
            cache_dir_from(&env(&all[2..])),
            Some(PathBuf::from("/home/u/.cache/emberfire/kernels"))
        );
        assert_eq!(
            cache_dir_from(&env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/emberfire/kernels")),
            "a relative XDG_CACHE_HOME is ignored, as the XDG spec says"
        );
        assert_eq!(cache_dir_from(&env(&[("EMBERFIRE_KERNEL_CACHE", ""), ("HOME", "/h")])), None);
        assert_eq!(cache_dir_from(&env(&[])), None);
    }

    #[test]
    fn only_our_own_kernels_get_the_minimal_front_end_and_only_where_nvrtc_has_it() {
        assert!(Origin::Own.minimal((13, 0)) && Origin::Own.minimal((12, 4)));
        assert!(!Origin::Own.minimal((12, 3)) && !Origin::Own.minimal((11, 8)));
        assert!(!Origin::User.minimal((13, 0)));
    }

    #[test]
    fn targets_prefer_the_devices_own_architecture() {
        let archs = [75, 80, 86, 89, 90, 100, 120];
        assert_eq!(choose_target((9, 0), &archs), Target::Cubin(90));
        assert_eq!(choose_target((8, 6), &archs), Target::Cubin(86));
        assert_eq!(choose_target((12, 1), &archs), Target::Ptx(120));
        assert_eq!(choose_target((9, 0), &[]), Target::Cubin(90));
        assert_eq!(choose_target((7, 0), &archs), Target::Cubin(70));
        assert_eq!(Target::Ptx(90).to_string(), "compute_90");
        assert_eq!(compile_options(Target::Cubin(90), false), vec!["--gpu-architecture=sm_90"]);
        assert_eq!(
            compile_options(Target::Cubin(90), true),
            vec!["--gpu-architecture=sm_90", "-minimal"]
        );
    }

    #[test]
    fn nvrtc_is_searched_in_toolkits_and_wheels() {
        let root = temp_dir("search");
        let wheel = root.join("venv/lib/python3.12/site-packages/nvidia/cu13/lib");
        let toolkit = root.join("cuda/lib64");
        for d in [&wheel, &toolkit, &root.join("venv/bin")] {
            fs::create_dir_all(d).unwrap();
        }
        for f in [
            wheel.join("libnvrtc.so.13"),
            wheel.join("libnvrtc-builtins.so.13.0"),
            toolkit.join("libnvrtc.so.12"),
            toolkit.join("libnvrtc.so.12.8.93"),
            toolkit.join("libnvrtc.so"),
        ] {
            fs::write(f, b"").unwrap();
        }
        let path = std::env::join_paths([root.join("venv/bin")]).unwrap();
        let vars = [
            ("CUDA_HOME".to_string(), root.join("cuda").into_os_string()),
            ("PATH".to_string(), path),
        ];
        let env = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let found = nvrtc_candidates(&env);
        let pos = |p: &Path| found.iter().position(|f| f == p);
        let (tk12, tk_full, wh13) = (
            pos(&toolkit.join("libnvrtc.so.12")).expect("toolkit soname"),
            pos(&toolkit.join("libnvrtc.so.12.8.93")).expect("toolkit full name"),
            pos(&wheel.join("libnvrtc.so.13")).expect("wheel"),
        );
        assert!(tk12 < tk_full && tk_full < wh13, "CUDA_HOME first: {found:?}");
        assert!(!found.iter().any(|f| f.to_string_lossy().contains("builtins")));
        // An explicit file comes first.
        let explicit = toolkit.join("libnvrtc.so.12.8.93").into_os_string();
        let env2 = |k: &str| (k == "EMBERFIRE_NVRTC").then(|| explicit.clone());
        assert_eq!(nvrtc_candidates(&env2)[0], toolkit.join("libnvrtc.so.12.8.93"));
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn quick_hash_tells_entries_and_sources_apart() {
        assert_ne!(quick_hash("a", "bc"), quick_hash("ab", "c"));
        assert_ne!(quick_hash("k", "x + y"), quick_hash("k", "x - y"));
        assert_eq!(quick_hash("k", "0123456789abcdef"), quick_hash("k", "0123456789abcdef"));
    }

    #[test]
    fn stats_are_monotonic() {
        let a = jit_stats();
        let b = jit_stats();
        assert!(b.compiles >= a.compiles && b.memory_hits >= a.memory_hits);
    }
}
