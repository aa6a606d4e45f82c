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
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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
    /// Keeps the entry points valid for the process.
    _lib: libloading::Library,
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

fn load(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Cufft, Error> {
    let mut tried: Vec<String> = Vec::new();
    for candidate in candidates(env) {
        // SAFETY: loading cuFFT runs its initialisers, which using it requires.
        let lib = match unsafe { libloading::Library::new(&candidate) } {
            Ok(lib) => lib,
            Err(_) => {
                tried.push(candidate.to_string_lossy().into_owned());
                continue;
            }
        };
        return bind(lib, &candidate.to_string_lossy());
    }
    let shown: Vec<&str> = tried.iter().take(8).map(String::as_str).collect();
    Err(Error::BackendUnavailable(format!(
        "CUDA: cuFFT (libcufft.so.12 or .11) was not found on the loader's path nor in the CUDA \
         toolkit's or Python wheels' folders (tried {}{}); install cuFFT or set \
         EMBERFIRE_CUFFT to the library",
        shown.join(", "),
        if tried.len() > 8 { ", ..." } else { "" }
    )))
}

/// Looks up every entry point; a missing one makes the library unusable (too old).
fn bind(lib: libloading::Library, name: &str) -> Result<Cufft, Error> {
    fn sym<T: Copy>(lib: &libloading::Library, name: &str, sym: &str) -> Result<T, Error> {
        // SAFETY: the symbol is cuFFT's entry point of this name, whose C signature `T`
        // matches (see the cuFFT API reference); it stays valid while `lib` is loaded.
        unsafe { lib.get::<T>(sym.as_bytes()) }.map(|s| *s).map_err(|_| {
            Error::BackendUnavailable(format!(
                "CUDA: the cuFFT library {name} lacks `{sym}` (too old?)"
            ))
        })
    }
    let get_version: unsafe extern "C" fn(*mut c_int) -> c_int =
        sym(&lib, name, "cufftGetVersion")?;
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    check("reading the version", unsafe { get_version(&mut version) })?;
    Ok(Cufft {
        create: sym(&lib, name, "cufftCreate")?,
        destroy: sym(&lib, name, "cufftDestroy")?,
        set_auto_allocation: sym(&lib, name, "cufftSetAutoAllocation")?,
        make_plan_many64: sym(&lib, name, "cufftMakePlanMany64")?,
        set_stream: sym(&lib, name, "cufftSetStream")?,
        set_work_area: sym(&lib, name, "cufftSetWorkArea")?,
        exec_c2c: sym(&lib, name, "cufftExecC2C")?,
        exec_z2z: sym(&lib, name, "cufftExecZ2Z")?,
        exec_r2c: sym(&lib, name, "cufftExecR2C")?,
        exec_d2z: sym(&lib, name, "cufftExecD2Z")?,
        exec_c2r: sym(&lib, name, "cufftExecC2R")?,
        exec_z2d: sym(&lib, name, "cufftExecZ2D")?,
        version,
        _lib: lib,
    })
}

/// Library files and names to try, best first.
pub(crate) fn candidates(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(p) = env("EMBERFIRE_CUFFT").filter(|p| !p.is_empty()).map(PathBuf::from) {
        if p.is_dir() {
            dirs.push(p);
        } else {
            out.push(p);
        }
    }
    for d in &dirs {
        out.extend(files_in(d));
    }
    out.extend(cudarc::get_lib_name_candidates("cufft").into_iter().map(PathBuf::from));
    let mut more: Vec<PathBuf> = Vec::new();
    for nvrtc in crate::backend::cuda::kernel::nvrtc::nvrtc_candidates(env) {
        let Some(dir) = nvrtc.parent() else { continue };
        more.push(dir.to_path_buf());
        if dir.ends_with("cuda_nvrtc/lib") {
            if let Some(nvidia) = dir.parent().and_then(Path::parent) {
                more.push(nvidia.join("cufft").join("lib"));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for d in more {
        if seen.insert(d.clone()) {
            out.extend(files_in(&d));
        }
    }
    out
}

/// The cuFFT libraries in `dir`: versioned sonames, newest major first, then the rest.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("libcufft.so"))
        .collect();
    // "libcufft.so.12" before "libcufft.so.12.0.0" before "libcufft.so.11"
    names.sort_by_key(|n| {
        let major: u32 = n
            .strip_prefix("libcufft.so.")
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        (std::cmp::Reverse(major), n.len())
    });
    names.into_iter().map(|n| dir.join(n)).collect()
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

    #[test]
    fn newest_soname_first() {
        let dir = std::env::temp_dir().join(format!("ef-cufft-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in ["libcufft.so.11", "libcufft.so.12.0.1", "libcufft.so.12", "libcufftw.so.12"] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        let got: Vec<String> = files_in(&dir)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into())
            .collect();
        assert_eq!(got, ["libcufft.so.12", "libcufft.so.12.0.1", "libcufft.so.11"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
