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
use std::sync::OnceLock;

use super::loader::{self, Dependencies, First, Library, OnPath, Opened, Places};
use super::search::Search;
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
}

// SAFETY: the struct holds C function pointers into a library kept open for the process;
// cuDNN's entry points may be called from any thread (a handle is used by one thread at a
// time, which `cuda::ml` ensures with a lock).
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

/// cuDNN 9 as the loader finds it: an existing `$EMBERFIRE_CUDNN` file, the loader's path,
/// then the toolkits' and wheels' folders, each file found after its `libcudnn_*` siblings.
pub(crate) static CUDNN: Library = Library {
    name: "cuDNN",
    wanted: "cuDNN 9 (libcudnn.so.9)",
    needed_for: None,
    install: "cuDNN (e.g. pip install nvidia-cudnn-cu12)",
    prefix: "CUDA: ",
    missing_symbol_hint: "",
    search: Search { stem: "cudnn", override_var: "EMBERFIRE_CUDNN", wheel_dirs: &["cudnn/lib"] },
    majors: &["9"],
    on_path: OnPath::Names(&["libcudnn.so.9"]),
    first: First::LoaderPath,
    places: Places::Toolkits,
    dependencies: Dependencies::SubLibraries { prefix: "libcudnn_", version: ".so.9" },
    global: true,
};

fn load(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Cudnn, Error> {
    bind(loader::open(&CUDNN, env)?)
}

/// Looks up every entry point; a missing one makes the library unusable.
fn bind(lib: Opened) -> Result<Cudnn, Error> {
    let name = lib.path();
    let get_version: unsafe extern "C" fn() -> usize = lib.sym("cudnnGetVersion")?;
    // SAFETY: takes nothing and returns a number.
    let version = unsafe { get_version() };
    if version < 90000 {
        return Err(Error::BackendUnavailable(format!(
            "CUDA: the cuDNN library {name} is version {version}; emberfire uses cuDNN 9"
        )));
    }
    Ok(Cudnn {
        create: lib.sym("cudnnCreate")?,
        set_stream: lib.sym("cudnnSetStream")?,
        create_tensor: lib.sym("cudnnCreateTensorDescriptor")?,
        destroy_tensor: lib.sym("cudnnDestroyTensorDescriptor")?,
        set_tensor_4d: lib.sym("cudnnSetTensor4dDescriptor")?,
        create_filter: lib.sym("cudnnCreateFilterDescriptor")?,
        destroy_filter: lib.sym("cudnnDestroyFilterDescriptor")?,
        set_filter_4d: lib.sym("cudnnSetFilter4dDescriptor")?,
        create_conv: lib.sym("cudnnCreateConvolutionDescriptor")?,
        destroy_conv: lib.sym("cudnnDestroyConvolutionDescriptor")?,
        set_conv_2d: lib.sym("cudnnSetConvolution2dDescriptor")?,
        set_conv_math_type: lib.sym("cudnnSetConvolutionMathType")?,
        find_forward: lib.sym("cudnnFindConvolutionForwardAlgorithmEx")?,
        find_backward_data: lib.sym("cudnnFindConvolutionBackwardDataAlgorithmEx")?,
        find_backward_filter: lib.sym("cudnnFindConvolutionBackwardFilterAlgorithmEx")?,
        forward: lib.sym("cudnnConvolutionForward")?,
        backward_data: lib.sym("cudnnConvolutionBackwardData")?,
        backward_filter: lib.sym("cudnnConvolutionBackwardFilter")?,
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
        let c = loader::candidates(&CUDNN, &env);
        assert_eq!(c[0], file);
        assert_eq!(c[1], std::path::PathBuf::from("libcudnn.so.9"));
    }
}
