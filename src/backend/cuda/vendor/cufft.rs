//! cuFFT, loaded at run time: finding the library, its entry points, and its status codes.
//!
//! Why not cudarc's `cufft` module: its bindings return cuFFT's status as a Rust enum, and a
//! status from another cuFFT release than the bindings' (a value the enum lacks) would be
//! undefined behaviour; they also panic when the library is missing. Here every entry point
//! returns a plain `c_int`, a missing library or symbol is an [`Error::BackendUnavailable`],
//! and the library is searched for where CUDA toolkits and NVIDIA's Python wheels put it (the
//! loader's path rarely includes those).
//!
//! Where cuFFT is looked for, in order: `$EMBERFIRE_CUFFT` (a file or a folder); cudarc's
//! candidate names on the loader's path (`libcufft.so`, `libcufft.so.12`, ...); the folders in
//! which NVRTC is looked for (toolkits, `nvidia/cu13/lib` of wheels), and `nvidia/cufft/lib`
//! beside NVRTC's wheel folder.

use std::ffi::{c_int, c_longlong, c_void, OsString};
use std::sync::OnceLock;

use super::loader::{self, Dependencies, First, Library, OnPath, Opened, Places};
use super::search::Search;
use crate::backend::cuda::kernel::nvrtc::NVRTC;
use crate::error::Error;

/// A cuFFT plan handle.
pub(crate) type Handle = c_int;

/// cuFFT's transform types.
pub(crate) const R2C: c_int = 0x2a;
pub(crate) const C2R: c_int = 0x2c;
pub(crate) const C2C: c_int = 0x29;
pub(crate) const D2Z: c_int = 0x6a;
pub(crate) const Z2D: c_int = 0x6c;
pub(crate) const Z2Z: c_int = 0x69;
/// Exponent signs of complex transforms.
pub(crate) const FORWARD: c_int = -1;
pub(crate) const INVERSE: c_int = 1;

type ExecC2C = unsafe extern "C" fn(Handle, *mut c_void, *mut c_void, c_int) -> c_int;
type ExecReal = unsafe extern "C" fn(Handle, *mut c_void, *mut c_void) -> c_int;

/// The entry points emberfire uses, from one loaded library.
pub(crate) struct Cufft {
    pub create: unsafe extern "C" fn(*mut Handle) -> c_int,
    pub destroy: unsafe extern "C" fn(Handle) -> c_int,
    pub set_auto_allocation: unsafe extern "C" fn(Handle, c_int) -> c_int,
    #[allow(clippy::type_complexity)]
    pub make_plan_many64: unsafe extern "C" fn(
        Handle,
        c_int,
        *mut c_longlong,
        *mut c_longlong,
        c_longlong,
        c_longlong,
        *mut c_longlong,
        c_longlong,
        c_longlong,
        c_int,
        c_longlong,
        *mut usize,
    ) -> c_int,
    pub set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> c_int,
    pub set_work_area: unsafe extern "C" fn(Handle, *mut c_void) -> c_int,
    pub exec_c2c: ExecC2C,
    pub exec_z2z: ExecC2C,
    pub exec_r2c: ExecReal,
    pub exec_d2z: ExecReal,
    pub exec_c2r: ExecReal,
    pub exec_z2d: ExecReal,
    /// The library's version, e.g. 12000 for cuFFT 12.0.
    pub version: i32,
}

/// cuFFT, loaded on first use and kept for the process, or why it cannot be used.
pub(crate) fn cufft() -> Result<&'static Cufft, Error> {
    static LIB: OnceLock<Result<Cufft, Error>> = OnceLock::new();
    LIB.get_or_init(|| load(&|k| std::env::var_os(k))).as_ref().map_err(Clone::clone)
}

/// The text of a cuFFT status, for errors.
pub(crate) fn status_name(code: c_int) -> &'static str {
    match code {
        1 => "CUFFT_INVALID_PLAN",
        2 => "CUFFT_ALLOC_FAILED",
        3 => "CUFFT_INVALID_TYPE",
        4 => "CUFFT_INVALID_VALUE",
        5 => "CUFFT_INTERNAL_ERROR",
        6 => "CUFFT_EXEC_FAILED",
        7 => "CUFFT_SETUP_FAILED",
        8 => "CUFFT_INVALID_SIZE",
        9 => "CUFFT_UNALIGNED_DATA",
        10 => "CUFFT_INCOMPLETE_PARAMETER_LIST",
        11 => "CUFFT_INVALID_DEVICE",
        12 => "CUFFT_PARSE_ERROR",
        13 => "CUFFT_NO_WORKSPACE",
        14 => "CUFFT_NOT_IMPLEMENTED",
        15 => "CUFFT_LICENSE_ERROR",
        16 => "CUFFT_NOT_SUPPORTED",
        17 => "CUFFT_MISSING_DEPENDENCY",
        18 => "CUFFT_NVRTC_FAILURE",
        19 => "CUFFT_NVJITLINK_FAILURE",
        20 => "CUFFT_NVSHMEM_FAILURE",
        _ => "an unknown cuFFT status",
    }
}

/// `Ok` for `CUFFT_SUCCESS`, else an [`Error::Driver`] naming what was done and the status.
pub(crate) fn check(doing: &str, code: c_int) -> Result<(), Error> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::Driver(format!("cuFFT: {doing}: {} ({code})", status_name(code))))
    }
}

/// cuFFT as the loader finds it: `$EMBERFIRE_CUFFT`, cudarc's names on the loader's path,
/// then the folders NVRTC is found in and `nvidia/cufft/lib` beside NVRTC's wheel folder.
pub(crate) static CUFFT: Library = Library {
    name: "cuFFT",
    wanted: "cuFFT (libcufft.so.12 or .11)",
    needed_for: None,
    install: "cuFFT",
    prefix: "CUDA: ",
    missing_symbol_hint: " (too old?)",
    search: Search { stem: "cufft", override_var: "EMBERFIRE_CUFFT", wheel_dirs: &[] },
    majors: &[],
    on_path: OnPath::Cudarc,
    first: First::Override,
    places: Places::BesideOf { of: &NVRTC, of_wheel: "cuda_nvrtc/lib", wheel: "cufft/lib" },
    dependencies: Dependencies::None,
    global: false,
};

fn load(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Cufft, Error> {
    bind(loader::open(&CUFFT, env)?)
}

/// Looks up every entry point; a missing one makes the library unusable (too old).
fn bind(lib: Opened) -> Result<Cufft, Error> {
    let get_version: unsafe extern "C" fn(*mut c_int) -> c_int = lib.sym("cufftGetVersion")?;
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    check("reading the version", unsafe { get_version(&mut version) })?;
    Ok(Cufft {
        create: lib.sym("cufftCreate")?,
        destroy: lib.sym("cufftDestroy")?,
        set_auto_allocation: lib.sym("cufftSetAutoAllocation")?,
        make_plan_many64: lib.sym("cufftMakePlanMany64")?,
        set_stream: lib.sym("cufftSetStream")?,
        set_work_area: lib.sym("cufftSetWorkArea")?,
        exec_c2c: lib.sym("cufftExecC2C")?,
        exec_z2z: lib.sym("cufftExecZ2Z")?,
        exec_r2c: lib.sym("cufftExecR2C")?,
        exec_d2z: lib.sym("cufftExecD2Z")?,
        exec_c2r: lib.sym("cufftExecC2R")?,
        exec_z2d: lib.sym("cufftExecZ2D")?,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_an_error_that_says_what_to_do() {
        // Nothing named like cuFFT exists under an empty environment's search places here;
        // on a machine with cuFFT this loads it instead.
        match load(&|k| {
            (k == "EMBERFIRE_CUFFT").then(|| OsString::from("/nonexistent/libcufft.so.12"))
        }) {
            Ok(lib) => assert!(lib.version > 0),
            Err(Error::BackendUnavailable(why)) => {
                assert!(why.contains("cuFFT") && why.contains("EMBERFIRE_CUFFT"), "{why}")
            }
            Err(e) => panic!("unexpected error kind: {e:?}"),
        }
    }

    #[test]
    fn statuses_have_names() {
        assert_eq!(status_name(8), "CUFFT_INVALID_SIZE");
        assert!(check("planning", 2).unwrap_err().to_string().contains("CUFFT_ALLOC_FAILED"));
        assert!(check("planning", 0).is_ok());
    }
}
