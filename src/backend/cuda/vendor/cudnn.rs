//! cuDNN 9, loaded at run time: finding the library and its sub-libraries, and the legacy
//! convolution entry points emberfire calls (`cuda::ml` uses them).
//!
//! Why bound here rather than through cudarc's `cudnn` module (the reason cuFFT and cuSOLVER
//! are bound here too, in `cufft.rs` and `cusolver.rs`): cudarc's bindings type cuDNN's
//! status and algorithm codes as Rust enums, and a value from
//! another cuDNN release (cuDNN 9 added statuses) would be undefined behaviour; they also
//! panic where the library is missing. Here every entry point returns a plain `c_int`, and a
//! missing library or symbol is an [`Error::BackendUnavailable`] after which the convolutions
//! run without cuDNN.
//!
//! Where cuDNN is looked for: `$EMBERFIRE_CUDNN` (a file or a folder; `off` turns cuDNN
//! off), the loader's path (`libcudnn.so.9`), the CUDA toolkit's folders, and the Python
//! environments' `site-packages/nvidia/cudnn/lib` (PyTorch's `nvidia-cudnn-cu12` wheel).
//! cuDNN 9's main library is a shim that opens its sub-libraries (`libcudnn_ops`,
//! `libcudnn_cnn`, `libcudnn_engines_*`, `libcudnn_graph`, ...) by name when first needed,
//! which the loader finds only on its path: every `libcudnn_*` file beside the library found
//! is opened first, with `RTLD_GLOBAL`, and kept open, so those later opens find them loaded.

use std::ffi::{c_int, c_void, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::libraries::{self, Search};
use crate::error::Error;

pub(crate) type Handle = *mut c_void;
pub(crate) type Desc = *mut c_void;

/// `cudnnDataType_t`.
pub(crate) const DATA_FLOAT: c_int = 0;
pub(crate) const DATA_DOUBLE: c_int = 1;
/// `CUDNN_TENSOR_NCHW`.
pub(crate) const NCHW: c_int = 0;
/// `CUDNN_CONVOLUTION`: the filter is flipped, as in ArrayFire.
pub(crate) const CONVOLUTION: c_int = 0;
/// `cudnnMathType_t`: `CUDNN_DEFAULT_MATH` (TF32 allowed for f32 on Ampere and later) and
/// `CUDNN_FMA_MATH` (no tensor cores: full f32 precision).
pub(crate) const DEFAULT_MATH: c_int = 0;
pub(crate) const FMA_MATH: c_int = 3;

/// `cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t`, which share one layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AlgoPerf {
    pub algo: c_int,
    pub status: c_int,
    pub time: f32,
    pub memory: usize,
    pub determinism: c_int,
    pub math_type: c_int,
    pub reserved: [c_int; 3],
}

type Status = c_int;
type CreateDesc = unsafe extern "C" fn(*mut Desc) -> Status;
type DestroyDesc = unsafe extern "C" fn(Desc) -> Status;
/// `cudnnFindConvolution*AlgorithmEx`: handle, three (descriptor, pointer) pairs with the
/// convolution descriptor between the second and the third, the count asked for, the count
/// returned, the results, and the work area.
type FindEx = unsafe extern "C" fn(
    Handle,
    Desc,
    *const c_void,
    Desc,
    *const c_void,
    Desc,
    Desc,
    *mut c_void,
    c_int,
    *mut c_int,
    *mut AlgoPerf,
    *mut c_void,
    usize,
) -> Status;
/// `cudnnConvolutionForward`, `BackwardData` and `BackwardFilter`: handle, alpha, two
/// (descriptor, pointer) inputs, the convolution, the algorithm, the work area, beta, and
/// the output's descriptor and pointer.
type Run = unsafe extern "C" fn(
    Handle,
    *const c_void,
    Desc,
    *const c_void,
    Desc,
    *const c_void,
    Desc,
    c_int,
    *mut c_void,
    usize,
    *const c_void,
    Desc,
    *mut c_void,
) -> Status;

/// The entry points emberfire uses, from one loaded library.
pub(crate) struct Cudnn {
    pub create: unsafe extern "C" fn(*mut Handle) -> Status,
    pub set_stream: unsafe extern "C" fn(Handle, *mut c_void) -> Status,
    pub create_tensor: CreateDesc,
    pub destroy_tensor: DestroyDesc,
    pub set_tensor_4d:
        unsafe extern "C" fn(Desc, c_int, c_int, c_int, c_int, c_int, c_int) -> Status,
    pub create_filter: CreateDesc,
    pub destroy_filter: DestroyDesc,
    pub set_filter_4d:
        unsafe extern "C" fn(Desc, c_int, c_int, c_int, c_int, c_int, c_int) -> Status,
    pub create_conv: CreateDesc,
    pub destroy_conv: DestroyDesc,
    #[allow(clippy::type_complexity)]
    pub set_conv_2d: unsafe extern "C" fn(
        Desc,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
    ) -> Status,
    pub set_conv_math_type: unsafe extern "C" fn(Desc, c_int) -> Status,
    pub find_forward: FindEx,
    pub find_backward_data: FindEx,
    pub find_backward_filter: FindEx,
    pub forward: Run,
    pub backward_data: Run,
    pub backward_filter: Run,
    /// Keeps the entry points valid for the process.
    _lib: libloading::Library,
}

// SAFETY: the struct holds C function pointers and a library handle; cuDNN's entry points
// may be called from any thread (a handle is used by one thread at a time, which `cuda::ml`
// ensures with a lock).
unsafe impl Send for Cudnn {}
// SAFETY: as above; nothing in the struct is mutated after loading.
unsafe impl Sync for Cudnn {}

/// cuDNN, loaded on first use and kept for the process, or why it cannot be used.
pub(crate) fn cudnn() -> Result<&'static Cudnn, Error> {
    static LIB: OnceLock<Result<Cudnn, Error>> = OnceLock::new();
    LIB.get_or_init(|| load(&|k| std::env::var_os(k))).as_ref().map_err(Clone::clone)
}

/// Whether `EMBERFIRE_CUDNN` turns cuDNN off (`off`, `0`, `false` or `no`).
pub(crate) fn turned_off() -> bool {
    static OFF: OnceLock<bool> = OnceLock::new();
    *OFF.get_or_init(|| {
        std::env::var("EMBERFIRE_CUDNN")
            .map(|v| matches!(v.to_ascii_lowercase().as_str(), "off" | "0" | "false" | "no"))
            .unwrap_or(false)
    })
}

const SEARCH: Search =
    Search { stem: "cudnn", override_var: "EMBERFIRE_CUDNN", wheel_dirs: &["cudnn/lib"] };

/// Library files and names to try, best first.
fn candidates(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(p) = env(SEARCH.override_var).filter(|p| !p.is_empty()).map(PathBuf::from) {
        if p.is_file() {
            out.push(p);
        }
    }
    // the loader's path first, then the toolkits' and wheels' folders
    out.push(PathBuf::from("libcudnn.so.9"));
    out.extend(libraries::candidates_of_majors(&SEARCH, &["9"], env));
    out
}

/// Opens `path` with `RTLD_NOW | RTLD_GLOBAL`.
fn open_global(path: &Path) -> Option<libloading::Library> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading a CUDA library runs its initialisers, as using it requires.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.ok().map(Into::into)
}

/// Opens every `libcudnn_*` library beside `path` and keeps them open for the process. They
/// need each other: each pass opens those whose dependencies an earlier pass opened.
fn preload_sub_libraries(path: &Path) {
    static KEPT: std::sync::Mutex<Vec<libloading::Library>> = std::sync::Mutex::new(Vec::new());
    let Some(dir) = path.parent() else { return };
    let mut left: Vec<String> = libraries::read_dir_names(dir)
        .filter(|n| n.starts_with("libcudnn_") && n.contains(".so.9"))
        .collect();
    left.sort();
    // one file per library: the soname, or else the first fully versioned name
    left.dedup_by(|b, a| b.split(".so").next() == a.split(".so").next());
    let mut kept = crate::sync::lock(&KEPT);
    loop {
        let before = left.len();
        left.retain(|name| match open_global(&dir.join(name)) {
            Some(lib) => {
                kept.push(lib);
                false
            }
            None => true,
        });
        if left.is_empty() || left.len() == before {
            break;
        }
    }
}

fn load(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Cudnn, Error> {
    let mut tried: Vec<String> = Vec::new();
    for candidate in candidates(env) {
        if candidate.is_absolute() {
            preload_sub_libraries(&candidate);
        }
        match open_global(&candidate) {
            Some(lib) => return bind(lib, &candidate.to_string_lossy()),
            None => tried.push(candidate.to_string_lossy().into_owned()),
        }
    }
    let shown: Vec<&str> = tried.iter().take(8).map(String::as_str).collect();
    Err(Error::BackendUnavailable(format!(
        "CUDA: cuDNN 9 (libcudnn.so.9) was not found on the loader's path nor in the CUDA \
         toolkit's or Python wheels' folders (tried {}{}); install cuDNN (e.g. pip install \
         nvidia-cudnn-cu12) or set EMBERFIRE_CUDNN to the library",
        shown.join(", "),
        if tried.len() > 8 { ", ..." } else { "" }
    )))
}

/// Looks up every entry point; a missing one makes the library unusable.
fn bind(lib: libloading::Library, name: &str) -> Result<Cudnn, Error> {
    fn sym<T: Copy>(lib: &libloading::Library, name: &str, sym: &str) -> Result<T, Error> {
        // SAFETY: the symbol is cuDNN's entry point of this name, whose C signature `T`
        // matches (see the cuDNN API reference); it stays valid while `lib` is loaded.
        unsafe { lib.get::<T>(sym.as_bytes()) }.map(|s| *s).map_err(|_| {
            Error::BackendUnavailable(format!("CUDA: the cuDNN library {name} lacks `{sym}`"))
        })
    }
    let get_version: unsafe extern "C" fn() -> usize = sym(&lib, name, "cudnnGetVersion")?;
    // SAFETY: takes nothing and returns a number.
    let version = unsafe { get_version() };
    if version < 90000 {
        return Err(Error::BackendUnavailable(format!(
            "CUDA: the cuDNN library {name} is version {version}; emberfire uses cuDNN 9"
        )));
    }
    Ok(Cudnn {
        create: sym(&lib, name, "cudnnCreate")?,
        set_stream: sym(&lib, name, "cudnnSetStream")?,
        create_tensor: sym(&lib, name, "cudnnCreateTensorDescriptor")?,
        destroy_tensor: sym(&lib, name, "cudnnDestroyTensorDescriptor")?,
        set_tensor_4d: sym(&lib, name, "cudnnSetTensor4dDescriptor")?,
        create_filter: sym(&lib, name, "cudnnCreateFilterDescriptor")?,
        destroy_filter: sym(&lib, name, "cudnnDestroyFilterDescriptor")?,
        set_filter_4d: sym(&lib, name, "cudnnSetFilter4dDescriptor")?,
        create_conv: sym(&lib, name, "cudnnCreateConvolutionDescriptor")?,
        destroy_conv: sym(&lib, name, "cudnnDestroyConvolutionDescriptor")?,
        set_conv_2d: sym(&lib, name, "cudnnSetConvolution2dDescriptor")?,
        set_conv_math_type: sym(&lib, name, "cudnnSetConvolutionMathType")?,
        find_forward: sym(&lib, name, "cudnnFindConvolutionForwardAlgorithmEx")?,
        find_backward_data: sym(&lib, name, "cudnnFindConvolutionBackwardDataAlgorithmEx")?,
        find_backward_filter: sym(&lib, name, "cudnnFindConvolutionBackwardFilterAlgorithmEx")?,
        forward: sym(&lib, name, "cudnnConvolutionForward")?,
        backward_data: sym(&lib, name, "cudnnConvolutionBackwardData")?,
        backward_filter: sym(&lib, name, "cudnnConvolutionBackwardFilter")?,
        _lib: lib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_perf_record_has_cudnns_layout() {
        // algo, status, time, (padding), memory, determinism, mathType, reserved[3], (padding)
        assert_eq!(std::mem::size_of::<AlgoPerf>(), 48);
        assert_eq!(std::mem::offset_of!(AlgoPerf, memory), 16);
        assert_eq!(std::mem::offset_of!(AlgoPerf, math_type), 28);
    }

    #[test]
    fn the_override_file_comes_first_then_the_loaders_path() {
        let dir = std::env::temp_dir().join("emberfire-cudnn-candidates");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("libcudnn.so.9");
        std::fs::write(&file, b"").unwrap();
        let env = |k: &str| (k == "EMBERFIRE_CUDNN").then(|| file.clone().into_os_string());
        let c = candidates(&env);
        assert_eq!(c[0], file);
        assert_eq!(c[1], PathBuf::from("libcudnn.so.9"));
    }
}
