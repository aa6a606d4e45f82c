//! Backends and devices: choosing where arrays live, and what the machine offers.

use std::cell::Cell;
use std::sync::OnceLock;

use crate::backend::{devices, BackendKind};
use crate::error::{Error, Result};
use crate::error_handler::OrRaise;

/// A compute backend, named and numbered as in arrayfire-rust (the numbers are ArrayFire's
/// backend bit flags, so `OPENCL` is 4).
///
/// ```
/// use emberfire::{get_active_backend, Backend};
/// let b = get_active_backend();
/// assert!(b == Backend::CPU || b == Backend::CUDA);
/// assert_eq!(Backend::OPENCL as u32, 4);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The best available: CUDA where a GPU and driver are present, else CPU.
    DEFAULT = 0,
    /// The multi-threaded CPU backend.
    CPU = 1,
    /// NVIDIA GPUs through CUDA.
    CUDA = 2,
    /// Not provided by emberfire; listed so code naming it compiles.
    OPENCL = 4,
}

/// The backend's name as arrayfire-rust prints it.
///
/// ```
/// use emberfire::Backend;
/// assert_eq!(Backend::CPU.to_string(), "CPU");
/// assert_eq!(Backend::CUDA.to_string(), "Cuda");
/// assert_eq!(format!("{}", Backend::OPENCL), "OpenCL");
/// ```
impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::DEFAULT => "Default",
            Backend::CPU => "CPU",
            Backend::CUDA => "Cuda",
            Backend::OPENCL => "OpenCL",
        })
    }
}

/// The backend chosen by `EMBERFIRE_BACKEND` (or the best available), decided once per process.
fn process_default() -> Result<BackendKind> {
    static DEFAULT: OnceLock<Result<BackendKind>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| match std::env::var("EMBERFIRE_BACKEND") {
            Err(_) => best_available(),
            Ok(v) => match v.to_ascii_lowercase().as_str() {
                "" | "default" => best_available(),
                "cpu" => Ok(BackendKind::Cpu),
                "cuda" => kind_of(Backend::CUDA),
                other => Err(Error::BackendUnavailable(format!(
                    "EMBERFIRE_BACKEND={other}: expected `cpu` or `cuda`"
                ))),
            },
        })
        .clone()
}

/// CUDA where a driver and a device are present, else the CPU. A bad `EMBERFIRE_DEVICE` on a
/// machine with CUDA is an error, not a silent move to the CPU.
fn best_available() -> Result<BackendKind> {
    match cuda_count() {
        Ok(n) => cuda_default(n),
        Err(_) => Ok(BackendKind::Cpu),
    }
}

/// The CUDA backend on its default device, given `n` devices.
fn cuda_default(n: usize) -> Result<BackendKind> {
    default_cuda_device(n).map(BackendKind::Cuda)
}

/// How many CUDA devices can evaluate arrays, or why CUDA cannot be used.
fn cuda_count() -> Result<usize> {
    devices::usable_cuda_devices()
}

pub(crate) fn kind_of(b: Backend) -> Result<BackendKind> {
    match b {
        Backend::DEFAULT => best_available(),
        Backend::CPU => Ok(BackendKind::Cpu),
        Backend::CUDA => cuda_count().and_then(cuda_default),
        Backend::OPENCL => {
            Err(Error::BackendUnavailable("OpenCL is not provided by emberfire".into()))
        }
    }
}

/// The device a thread starts on when it first uses CUDA: `EMBERFIRE_DEVICE` (an emberfire
/// device id, `0..count`), or device 0. Read once per process, so that a whole program (or a
/// test suite) runs on another GPU without changing its code.
fn default_cuda_device(count: usize) -> Result<usize> {
    static DEFAULT: OnceLock<Result<usize>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| match std::env::var("EMBERFIRE_DEVICE") {
            Err(_) => Ok(0),
            Ok(v) if v.trim().is_empty() => Ok(0),
            Ok(v) => match v.trim().parse::<usize>() {
                Ok(d) if d < count => Ok(d),
                Ok(d) => Err(Error::InvalidDevice { requested: d as i32, count: count as i32 }),
                Err(_) => Err(Error::BackendUnavailable(format!(
                    "EMBERFIRE_DEVICE={v}: expected a device id from 0 to {}",
                    count.saturating_sub(1)
                ))),
            },
        })
        .clone()
}

thread_local! {
    static ACTIVE: Cell<Option<BackendKind>> = const { Cell::new(None) };
}

/// The backend new arrays are created on in this thread. Panics with the reason if
/// `EMBERFIRE_BACKEND` names a backend that cannot be used.
pub(crate) fn active_kind() -> BackendKind {
    ACTIVE.with(|a| match a.get() {
        Some(k) => k,
        None => {
            let k = process_default()
                .unwrap_or_else(|e| crate::error_handler::raise(&e, format!("{e}")));
            a.set(Some(k));
            k
        }
    })
}

/// Runs `f` with `kind` as this thread's active backend and device, then restores the one
/// before (also when `f` panics): arrays `f` creates (constants, host data) live where the
/// arrays it is given live.
pub(crate) fn with_active<R>(kind: BackendKind, f: impl FnOnce() -> R) -> R {
    struct Restore(BackendKind);
    impl Drop for Restore {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(Some(self.0)));
        }
    }
    let _restore = Restore(active_kind());
    ACTIVE.with(|a| a.set(Some(kind)));
    f()
}

/// Makes `backend` the active backend of this thread; arrays created afterwards live there.
/// Panics if it is not available (see [`try_set_backend`]).
///
/// ```
/// use emberfire::{set_backend, get_active_backend, Backend};
/// set_backend(Backend::CPU);
/// assert_eq!(get_active_backend(), Backend::CPU);
/// ```
pub fn set_backend(backend: Backend) {
    try_set_backend(backend).unwrap_or_else(|e| {
        crate::error_handler::raise(&e, format!("set_backend({backend:?}): {e}"))
    })
}

/// Like [`set_backend`], returning an error instead of panicking.
///
/// ```
/// assert!(emberfire::try_set_backend(emberfire::Backend::OPENCL).is_err());
/// ```
pub fn try_set_backend(backend: Backend) -> Result<()> {
    let k = kind_of(backend)?;
    // switching back to a backend keeps its device choice when it is already active
    if std::mem::discriminant(&k) != std::mem::discriminant(&active_kind()) {
        ACTIVE.with(|a| a.set(Some(k)));
    }
    Ok(())
}

/// The active backend of this thread.
///
/// ```
/// assert_ne!(emberfire::get_active_backend(), emberfire::Backend::DEFAULT);
/// ```
pub fn get_active_backend() -> Backend {
    match active_kind() {
        BackendKind::Cpu => Backend::CPU,
        BackendKind::Cuda(_) => Backend::CUDA,
    }
}

/// The backends usable on this machine.
///
/// ```
/// assert!(emberfire::get_available_backends().contains(&emberfire::Backend::CPU));
/// ```
pub fn get_available_backends() -> Vec<Backend> {
    [Backend::CPU, Backend::CUDA].into_iter().filter(|b| kind_of(*b).is_ok()).collect()
}

/// How many backends are usable on this machine.
///
/// ```
/// assert!(emberfire::get_backend_count() >= 1);
/// ```
pub fn get_backend_count() -> u32 {
    get_available_backends().len() as u32
}

/// emberfire's version as (major, minor, patch).
///
/// ```
/// let (major, minor, _) = emberfire::get_version();
/// assert!(major >= 0 && minor >= 0);
/// ```
pub fn get_version() -> (i32, i32, i32) {
    let p = |s: &str| s.parse().unwrap_or(0);
    (
        p(env!("CARGO_PKG_VERSION_MAJOR")),
        p(env!("CARGO_PKG_VERSION_MINOR")),
        p(env!("CARGO_PKG_VERSION_PATCH")),
    )
}

/// The version as text.
///
/// ```
/// assert!(!emberfire::get_revision().is_empty());
/// ```
pub fn get_revision() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Number of devices of the active backend (1 on the CPU).
///
/// ```
/// assert!(emberfire::device_count() >= 1);
/// ```
pub fn device_count() -> i32 {
    match active_kind() {
        BackendKind::Cpu => 1,
        BackendKind::Cuda(_) => cuda_count().unwrap_or(0) as i32,
    }
}

/// The active device of this thread.
///
/// ```
/// assert_eq!(emberfire::get_device(), 0);
/// ```
pub fn get_device() -> i32 {
    match active_kind() {
        BackendKind::Cpu => 0,
        BackendKind::Cuda(d) => d as i32,
    }
}

/// Makes `device` the active device of this thread. Panics if it does not exist (see
/// [`try_set_device`]).
///
/// ```
/// emberfire::set_device(0);
/// ```
pub fn set_device(device: i32) {
    try_set_device(device).or_raise("set_device")
}

/// Like [`set_device`], returning an error for a device that does not exist.
///
/// ```
/// assert!(emberfire::try_set_device(99).is_err());
/// ```
pub fn try_set_device(device: i32) -> Result<()> {
    let count = device_count();
    if device < 0 || device >= count {
        return Err(Error::InvalidDevice { requested: device, count });
    }
    if let BackendKind::Cuda(_) = active_kind() {
        BackendKind::Cuda(device as usize).ops().open_device()?;
        ACTIVE.with(|a| a.set(Some(BackendKind::Cuda(device as usize))));
    }
    Ok(())
}

/// (device name, platform, toolkit version, compute capability) of the active device.
///
/// ```
/// let (name, platform, _, _) = emberfire::device_info();
/// assert!(!name.is_empty() && !platform.is_empty());
/// ```
pub fn device_info() -> (String, String, String, String) {
    active_kind().ops().device_description()
}

/// A description of the backend and its devices, as [`info`] prints it.
///
/// ```
/// assert!(emberfire::info_string(false).contains("emberfire"));
/// ```
pub fn info_string(verbose: bool) -> String {
    let (name, platform, toolkit, compute) = device_info();
    let mut s = format!(
        "emberfire v{} ({platform}, {}-bit {})\n[0] {name}, {toolkit}",
        get_revision(),
        usize::BITS,
        std::env::consts::OS
    );
    if verbose {
        s.push_str(&format!(", {compute}"));
    }
    s.push('\n');
    s
}

/// Prints [`info_string`]`(false)` to standard output.
///
/// ```
/// emberfire::info();
/// ```
pub fn info() {
    print!("{}", info_string(false));
}

/// Initializes the active backend and its device now rather than at the first call that needs
/// them; device 0 stays the active device unless [`set_device`] follows. emberfire initializes
/// on first use, so calling this is never required; it makes start-up cost (a CUDA context,
/// the driver) fall at a chosen point, and reports a backend that cannot be used (see
/// [`set_backend`]) through the error handler, as every plain call does.
///
/// ```
/// emberfire::init();
/// assert!(emberfire::device_count() >= 1);
/// ```
pub fn init() {
    if let BackendKind::Cuda(_) = active_kind() {
        let d = get_device();
        BackendKind::Cuda(d as usize).ops().open_device().or_raise("init");
    }
}

/// Waits until all work queued on `device` has finished; `-1` means the active device, as in
/// ArrayFire. CPU work is synchronous, so on the CPU this returns at once.
///
/// ```
/// emberfire::sync(emberfire::get_device());
/// emberfire::sync(-1);
/// ```
pub fn sync(device: i32) {
    let count = device_count();
    let device = if device == -1 { get_device() } else { device };
    if device < 0 || device >= count {
        let e = Error::InvalidDevice { requested: device, count };
        crate::error_handler::raise(&e, format!("sync: {e}"));
    }
    if let BackendKind::Cuda(_) = active_kind() {
        BackendKind::Cuda(device as usize).ops().sync_device().or_raise("sync");
    }
}

/// Whether the device computes in f64.
///
/// ```
/// assert!(emberfire::is_double_available(0));
/// ```
pub fn is_double_available(_device: i32) -> bool {
    true
}

/// Whether the device computes in f16 (on the CPU, f16 is computed in f32 and rounded).
///
/// ```
/// assert!(emberfire::is_half_available(0));
/// ```
pub fn is_half_available(_device: i32) -> bool {
    true
}

/// Memory held by arrays on the active device: (allocated bytes, allocated buffers, locked
/// bytes, locked buffers). Memory cached for reuse is not counted, on either backend.
///
/// ```
/// use emberfire::{Array, dim4, device_mem_info};
/// let before = device_mem_info();
/// let a = Array::new(&[1.0f32; 256], dim4!(256));
/// assert!(device_mem_info().0 >= before.0);
/// drop(a);
/// ```
pub fn device_mem_info() -> (usize, usize, usize, usize) {
    active_kind().ops().device_memory_info()
}

/// Prints [`device_mem_info`] for `device` with a title.
///
/// ```
/// emberfire::print_mem_info("after setup".to_string(), 0);
/// ```
pub fn print_mem_info(msg: String, device: i32) {
    let (bytes, buffers, lbytes, lbuffers) = device_mem_info();
    println!(
        "{msg}\nMemory on device {device}: {bytes} bytes in {buffers} buffers allocated, \
         {lbytes} bytes in {lbuffers} buffers locked"
    );
}

/// Returns cached memory of the active device to the system: on CUDA the memory manager's
/// cache, on the CPU the large host buffers and the FFT working space kept for reuse (see the
/// "Memory management" chapter). Memory held by arrays is not touched.
///
/// ```
/// emberfire::device_gc();
/// ```
pub fn device_gc() {
    active_kind().ops().device_gc()
}

/// The CUDA ordinal (native id) of emberfire device `id` of the active backend; on the CPU it
/// is 0.
///
/// emberfire numbers CUDA devices exactly as the CUDA driver does for this process, so this is
/// the identity: ordinal `k` is the `k`-th device the driver lists after applying
/// `CUDA_VISIBLE_DEVICES` (and `CUDA_DEVICE_ORDER`). emberfire does not reorder devices (as
/// ArrayFire does, best first) so that a device number means the same GPU to emberfire, the CUDA
/// runtime, cudarc, PyTorch and CuPy in the same process; a program that wants another order
/// sets `CUDA_VISIBLE_DEVICES`.
///
/// ```
/// assert_eq!(emberfire::get_device_native_id(0), 0);
/// ```
pub fn get_device_native_id(id: i32) -> i32 {
    match active_kind() {
        BackendKind::Cpu => 0,
        BackendKind::Cuda(_) => native_ordinal(id),
    }
}

/// Makes the device with CUDA ordinal `native_id` the active device of this thread (see
/// [`get_device_native_id`] for how ordinals and emberfire's ids relate). Panics if there is no
/// such device.
///
/// ```
/// emberfire::set_device_native_id(emberfire::get_device_native_id(0));
/// ```
pub fn set_device_native_id(native_id: i32) {
    set_device(match active_kind() {
        BackendKind::Cpu => 0,
        BackendKind::Cuda(_) => device_of_ordinal(native_id),
    })
}

/// The CUDA ordinal of emberfire's CUDA device `id`: the same number (see
/// [`get_device_native_id`]). Kept as the one place that says so.
pub(crate) fn native_ordinal(id: i32) -> i32 {
    id
}

/// emberfire's id of the CUDA device with ordinal `native_id`: the same number.
fn device_of_ordinal(native_id: i32) -> i32 {
    native_id
}
