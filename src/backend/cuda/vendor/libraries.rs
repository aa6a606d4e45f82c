//! Finding CUDA libraries (NVRTC, cuBLAS, ...) that are not on the loader's path.
//!
//! cudarc opens each library by its plain names (`libcublas.so`, `libcublas.so.13`, ...), which
//! finds what the system loader finds. Toolkits in `/usr/local/cuda*` and NVIDIA's Python
//! wheels (`nvidia/cu13/lib`, `nvidia/cublas/lib`, ...) are often not on its path. When the
//! plain names fail, these places (and an explicit file or folder from an environment
//! variable) are searched, and the file found is opened by its full path and kept open: the
//! loader then answers cudarc's `dlopen` of the same soname with the library already loaded.

use crate::sync::lock;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where to look for one library.
pub(crate) struct Search<'a> {
    /// The file name stem: `"nvrtc"` for `libnvrtc.so.13`.
    pub stem: &'a str,
    /// An environment variable naming the library file or its folder, searched first.
    pub override_var: &'a str,
    /// Folders under a Python environment's `site-packages/nvidia/` that hold it.
    pub wheel_dirs: &'a [&'a str],
}

/// Library files to try, best first: the override, the CUDA toolkit's usual places, Python
/// environments (NVIDIA's wheels) and the system's library folders. `env` reads a variable.
pub(crate) fn candidates(search: &Search, env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    candidates_of_majors(search, &["13", "12"], env)
}

/// Like [`candidates`], for a library whose sonames carry the major versions `majors` (best
/// first): cuSOLVER and cuFFT are `.so.12` in CUDA 13 and `.so.11` in CUDA 12.
pub(crate) fn candidates_of_majors(
    search: &Search,
    majors: &[&str],
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(p) = env(search.override_var).filter(|p| !p.is_empty()).map(PathBuf::from) {
        if p.is_dir() {
            dirs.push(p);
        } else {
            files.push(p);
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"] {
        if let Some(root) = env(var).filter(|p| !p.is_empty()).map(PathBuf::from) {
            toolkit_dirs(&root, &mut dirs);
        }
    }
    toolkit_dirs(Path::new("/usr/local/cuda"), &mut dirs);
    let mut versioned: Vec<PathBuf> = read_dir_names(Path::new("/usr/local"))
        .filter(|n| n.starts_with("cuda-"))
        .map(|n| Path::new("/usr/local").join(n))
        .collect();
    versioned.sort_by(|a, b| b.cmp(a)); // newest first (cuda-13.0 before cuda-12.8)
    for root in versioned {
        toolkit_dirs(&root, &mut dirs);
    }
    toolkit_dirs(Path::new("/opt/cuda"), &mut dirs);
    // Python environments: active ones, those whose bin/ is on PATH, and the system's.
    let mut roots: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(r) = env(var).filter(|p| !p.is_empty()) {
            roots.push(PathBuf::from(r));
        }
    }
    if let Some(path) = env("PATH") {
        for d in std::env::split_paths(&path) {
            if let Some(parent) = d.parent() {
                roots.push(parent.to_path_buf());
            }
        }
    }
    if let Some(home) = env("HOME").filter(|p| !p.is_empty()) {
        roots.push(PathBuf::from(home).join(".local"));
    }
    roots.extend(["/usr", "/usr/local"].map(PathBuf::from));
    for root in roots {
        let lib = root.join("lib");
        for py in read_dir_names(&lib).filter(|n| n.starts_with("python3")) {
            for pkgs in ["site-packages", "dist-packages"] {
                let nv = lib.join(&py).join(pkgs).join("nvidia");
                for sub in search.wheel_dirs {
                    dirs.push(nv.join(sub));
                }
            }
        }
    }
    dirs.extend(["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"].map(PathBuf::from));
    let mut seen = std::collections::HashSet::new();
    for d in dirs {
        if !seen.insert(d.clone()) {
            continue;
        }
        files.extend(files_in(&d, search.stem, majors));
    }
    files
}

fn toolkit_dirs(root: &Path, dirs: &mut Vec<PathBuf>) {
    for sub in ["lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"] {
        dirs.push(root.join(sub));
    }
}

/// The names of the entries of `dir` (none if it cannot be read).
pub(crate) fn read_dir_names(dir: &Path) -> impl Iterator<Item = String> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

/// The files of library `stem` in `dir`, in the order of `majors`, the plain soname before
/// fully versioned file names.
fn files_in(dir: &Path, stem: &str, majors: &[&str]) -> Vec<PathBuf> {
    let names: Vec<String> = read_dir_names(dir).collect();
    let mut out = Vec::new();
    for major in majors {
        let soname = format!("lib{stem}.so.{major}");
        if names.contains(&soname) {
            out.push(dir.join(&soname));
        }
        let mut full: Vec<&String> =
            names.iter().filter(|n| n.starts_with(&format!("{soname}."))).collect();
        full.sort();
        out.extend(full.into_iter().rev().map(|n| dir.join(n)));
    }
    out
}

/// Opens a library file by its full path and keeps it loaded for the process, first opening
/// the files beside it whose names start with one of `companions` (libraries it loads by name,
/// such as NVRTC's builtins or cuBLAS's cublasLt, which the loader would not find there).
/// Returns whether the library opened.
pub(crate) fn preload(path: &Path, companions: &[&str]) -> bool {
    static KEPT: Mutex<Vec<libloading::Library>> = Mutex::new(Vec::new());
    let Some(dir) = path.parent() else { return false };
    let mut kept = lock(&KEPT);
    let mut beside: Vec<String> = read_dir_names(dir)
        .filter(|n| companions.iter().any(|c| n.starts_with(c)) && n.contains(".so"))
        .collect();
    beside.sort();
    for name in beside {
        // SAFETY: loading a CUDA library runs its initialisers, as using it requires anyway.
        if let Ok(lib) = unsafe { libloading::Library::new(dir.join(name)) } {
            kept.push(lib);
        }
    }
    // SAFETY: as above.
    match unsafe { libloading::Library::new(path) } {
        Ok(lib) => {
            kept.push(lib);
            true
        }
        Err(_) => false,
    }
}

/// Makes library `names` loadable under cudarc's names: already on the loader's path, or found
/// by [`candidates`] and preloaded. On failure returns the places searched, for the message.
pub(crate) fn load(names: &[&str], search: &Search, companions: &[&str]) -> Result<(), String> {
    load_of_majors(names, search, &["13", "12"], companions)
}

/// Like [`load`], for a library whose sonames carry the major versions `majors` (NCCL is
/// `libnccl.so.2` whatever the toolkit).
pub(crate) fn load_of_majors(
    names: &[&str],
    search: &Search,
    majors: &[&str],
    companions: &[&str],
) -> Result<(), String> {
    if crate::backend::cuda::keep_loaded(names) {
        return Ok(());
    }
    let places = candidates_of_majors(search, majors, &|k| std::env::var_os(k));
    let found = places.iter().find(|p| preload(p, companions));
    if found.is_some() && crate::backend::cuda::keep_loaded(names) {
        return Ok(());
    }
    let shown: Vec<String> = places.iter().take(12).map(|p| p.display().to_string()).collect();
    Err(format!("[{}{}]", shown.join(", "), if places.len() > 12 { ", ..." } else { "" }))
}
