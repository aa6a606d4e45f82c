//! cuSOLVER (the dense solvers, `cusolverDn`), loaded at run time: finding the library and
//! the libraries it needs, its entry points, and its status codes.
//!
//! Why not cudarc's `cusolver` module: its bindings return cuSOLVER's status as a Rust enum
//! (a status from another release than the bindings' would be undefined behaviour) and panic
//! when the library or a symbol is missing. Here every entry point returns a plain `c_int`, a
//! missing library or symbol is an [`Error::BackendUnavailable`] (the linear algebra then runs
//! on the CPU), and the routines of the four element types share one table of signatures:
//! they differ only in their pointers' element type, passed here as `void *`.
//!
//! Where cuSOLVER is looked for: `$EMBERFIRE_CUSOLVER` (a file or a folder), the loader's
//! path, CUDA toolkits, and NVIDIA's Python wheels (`nvidia/cu13/lib`, `nvidia/cusolver/lib`,
//! `nvidia/cu12/lib`). CUDA 13 ships `libcusolver.so.12`, CUDA 12 `libcusolver.so.11`. The
//! library needs cuBLAS (loaded first, as for matrix products), cuSPARSE and nvJitLink, which
//! are opened first from the same folder or from the wheels' sibling folders.

use std::ffi::{c_char, c_int, c_void, OsString};
use std::sync::OnceLock;

use super::loader::{self, Dependencies, First, Library, OnPath, Opened, Places};
use super::search::Search;
use crate::dtype::DType;
use crate::error::Error;

/// A cuSOLVER dense handle.
pub(crate) type Handle = *mut c_void;

/// cuBLAS's operation and fill-mode values, as cuSOLVER takes them.
pub(crate) const OP_N: c_int = 0;
pub(crate) const FILL_LOWER: c_int = 0;
pub(crate) const FILL_UPPER: c_int = 1;

type Status = c_int;
type Ptr = *mut c_void;
type CPtr = *const c_void;

/// The routines of one element type (`S`, `D`, `C` or `Z`). Sizes and workspace lengths are
/// in elements of that type.
#[allow(clippy::type_complexity)]
pub(crate) struct Routines {
    pub getrf_buffer_size:
        unsafe extern "C" fn(Handle, c_int, c_int, Ptr, c_int, *mut c_int) -> Status,
    pub getrf: unsafe extern "C" fn(
        Handle,
        c_int,
        c_int,
        Ptr,
        c_int,
        Ptr,
        *mut c_int,
        *mut c_int,
    ) -> Status,
    pub getrs: unsafe extern "C" fn(
        Handle,
        c_int,
        c_int,
        c_int,
        CPtr,
        c_int,
        *const c_int,
        Ptr,
        c_int,
        *mut c_int,
    ) -> Status,
    pub potrf_buffer_size:
        unsafe extern "C" fn(Handle, c_int, c_int, Ptr, c_int, *mut c_int) -> Status,
    pub potrf:
        unsafe extern "C" fn(Handle, c_int, c_int, Ptr, c_int, Ptr, c_int, *mut c_int) -> Status,
    pub geqrf_buffer_size:
        unsafe extern "C" fn(Handle, c_int, c_int, Ptr, c_int, *mut c_int) -> Status,
    pub geqrf: unsafe extern "C" fn(
        Handle,
        c_int,
        c_int,
        Ptr,
        c_int,
        Ptr,
        Ptr,
        c_int,
        *mut c_int,
    ) -> Status,
    pub orgqr_buffer_size:
        unsafe extern "C" fn(Handle, c_int, c_int, c_int, CPtr, c_int, CPtr, *mut c_int) -> Status,
    pub orgqr: unsafe extern "C" fn(
        Handle,
        c_int,
        c_int,
        c_int,
        Ptr,
        c_int,
        CPtr,
        Ptr,
        c_int,
        *mut c_int,
    ) -> Status,
    pub gesvd_buffer_size: unsafe extern "C" fn(Handle, c_int, c_int, *mut c_int) -> Status,
    pub gesvd: unsafe extern "C" fn(
        Handle,
        c_char,
        c_char,
        c_int,
        c_int,
        Ptr,
        c_int,
        Ptr,
        Ptr,
        c_int,
        Ptr,
        c_int,
        Ptr,
        c_int,
        Ptr,
        *mut c_int,
    ) -> Status,
}

/// The entry points emberfire uses, from one loaded library.
pub(crate) struct Cusolver {
    pub create: unsafe extern "C" fn(*mut Handle) -> Status,
    pub set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> Status,
    /// Routines for f32, f64, c32 and c64, in that order.
    typed: [Routines; 4],
}

impl Cusolver {
    /// The routines of element type `dtype` (f32, f64, c32 or c64).
    pub(crate) fn routines(&self, dtype: DType) -> &Routines {
        match dtype {
            DType::F32 => &self.typed[0],
            DType::F64 => &self.typed[1],
            DType::C32 => &self.typed[2],
            DType::C64 => &self.typed[3],
            other => unreachable!("internal error: cuSOLVER routine for {}", other.name()),
        }
    }
}

// SAFETY: the table holds function pointers into a library kept open for the process, which
// any thread may use.
unsafe impl Send for Cusolver {}
// SAFETY: as above; nothing in it is mutated after loading.
unsafe impl Sync for Cusolver {}

/// cuSOLVER, loaded on first use and kept for the process, or why it cannot be used.
pub(crate) fn cusolver() -> Result<&'static Cusolver, Error> {
    static LIB: OnceLock<Result<Cusolver, Error>> = OnceLock::new();
    LIB.get_or_init(|| load(&|k| std::env::var_os(k))).as_ref().map_err(Clone::clone)
}

/// The text of a cuSOLVER status, for errors.
pub(crate) fn status_name(code: c_int) -> &'static str {
    match code {
        1 => "CUSOLVER_STATUS_NOT_INITIALIZED",
        2 => "CUSOLVER_STATUS_ALLOC_FAILED",
        3 => "CUSOLVER_STATUS_INVALID_VALUE",
        4 => "CUSOLVER_STATUS_ARCH_MISMATCH",
        5 => "CUSOLVER_STATUS_MAPPING_ERROR",
        6 => "CUSOLVER_STATUS_EXECUTION_FAILED",
        7 => "CUSOLVER_STATUS_INTERNAL_ERROR",
        8 => "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
        9 => "CUSOLVER_STATUS_NOT_SUPPORTED",
        10 => "CUSOLVER_STATUS_ZERO_PIVOT",
        11 => "CUSOLVER_STATUS_INVALID_LICENSE",
        _ => "an unknown cuSOLVER status",
    }
}

/// `Ok` for `CUSOLVER_STATUS_SUCCESS`, else an [`Error::Driver`] naming what was done.
pub(crate) fn check(doing: &str, code: c_int) -> Result<(), Error> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::Driver(format!("cuSOLVER: {doing}: {} ({code})", status_name(code))))
    }
}

/// cuSOLVER as the loader finds it: `$EMBERFIRE_CUSOLVER` and what lies under it, cudarc's
/// names on the loader's path, then toolkits and wheels; CUDA 13's soname (`.so.12`) before
/// CUDA 12's (`.so.11`). The libraries cuSOLVER loads by name are opened first, in an order in
/// which each finds what it needs, from the folder cuSOLVER was found in or a wheel's sibling
/// folder.
pub(crate) static CUSOLVER: Library = Library {
    name: "cuSOLVER",
    wanted: "cuSOLVER (libcusolver.so.12 or .11)",
    needed_for: None,
    install: "cuSOLVER",
    prefix: "",
    missing_symbol_hint: " (too old?)",
    search: Search {
        stem: "cusolver",
        override_var: "EMBERFIRE_CUSOLVER",
        wheel_dirs: &["cu13/lib", "cusolver/lib", "cu12/lib"],
    },
    majors: &["12", "11"],
    on_path: OnPath::Cudarc,
    first: First::UnderOverride,
    places: Places::Toolkits,
    dependencies: Dependencies::Named(&[
        ("libnvJitLink.so", "nvjitlink/lib"),
        ("libcublasLt.so", "cublas/lib"),
        ("libcublas.so", "cublas/lib"),
        ("libcusparse.so", "cusparse/lib"),
    ]),
    global: false,
};

fn load(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Cusolver, Error> {
    bind(loader::open(&CUSOLVER, env)?)
}

/// Looks up every entry point; a missing one makes the library unusable (too old). Element
/// pointers are `void *` in the signatures.
fn bind(lib: Opened) -> Result<Cusolver, Error> {
    let typed = |p: char, orgqr: &str| -> Result<Routines, Error> {
        let f = |what: &str| format!("cusolverDn{p}{what}");
        Ok(Routines {
            getrf_buffer_size: lib.sym(&f("getrf_bufferSize"))?,
            getrf: lib.sym(&f("getrf"))?,
            getrs: lib.sym(&f("getrs"))?,
            potrf_buffer_size: lib.sym(&f("potrf_bufferSize"))?,
            potrf: lib.sym(&f("potrf"))?,
            geqrf_buffer_size: lib.sym(&f("geqrf_bufferSize"))?,
            geqrf: lib.sym(&f("geqrf"))?,
            orgqr_buffer_size: lib.sym(&f(&format!("{orgqr}_bufferSize")))?,
            orgqr: lib.sym(&f(orgqr))?,
            gesvd_buffer_size: lib.sym(&f("gesvd_bufferSize"))?,
            gesvd: lib.sym(&f("gesvd"))?,
        })
    };
    let typed =
        [typed('S', "orgqr")?, typed('D', "orgqr")?, typed('C', "ungqr")?, typed('Z', "ungqr")?];
    Ok(Cusolver {
        create: lib.sym("cusolverDnCreate")?,
        set_stream: lib.sym("cusolverDnSetStream")?,
        typed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_an_error_that_says_what_to_do() {
        // On a machine without cuSOLVER every candidate fails; on one with it, it loads.
        match load(&|k| {
            (k == "EMBERFIRE_CUSOLVER").then(|| OsString::from("/nonexistent/libcusolver.so.12"))
        }) {
            Ok(lib) => {
                let _ = lib.routines(DType::C64);
            }
            Err(Error::BackendUnavailable(why)) => {
                assert!(why.contains("cuSOLVER") && why.contains("EMBERFIRE_CUSOLVER"), "{why}")
            }
            Err(e) => panic!("unexpected error kind: {e:?}"),
        }
    }

    #[test]
    fn statuses_have_names() {
        assert_eq!(status_name(6), "CUSOLVER_STATUS_EXECUTION_FAILED");
        assert!(check("factoring", 3).unwrap_err().to_string().contains("INVALID_VALUE"));
        assert!(check("factoring", 0).is_ok());
    }

    #[test]
    fn cuda_12_and_13_sonames_are_both_searched() {
        let dir = std::env::temp_dir().join(format!("ef-cusolver-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in ["libcusolver.so.11", "libcusolver.so.12", "libcusolverMg.so.12"] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        let d = dir.clone();
        let env = move |k: &str| (k == "EMBERFIRE_CUSOLVER").then(|| d.clone().into_os_string());
        let got: Vec<String> = loader::candidates(&CUSOLVER, &env)
            .iter()
            .filter(|p| p.starts_with(&dir))
            .map(|p| p.file_name().unwrap().to_string_lossy().into())
            .collect();
        assert_eq!(got, ["libcusolver.so.12", "libcusolver.so.11"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
