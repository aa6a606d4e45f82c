//! Where a CUDA library file is looked for when it is not on the loader's path.
//!
//! cudarc and `dlopen` find a library by its plain names (`libcublas.so`, `libcublas.so.13`,
//! ...), which finds what the system loader finds. Toolkits in `/usr/local/cuda*` and NVIDIA's
//! Python wheels (`nvidia/cu13/lib`, `nvidia/cublas/lib`, ...) are often not on its path. These
//! places (and an explicit file or folder from an environment variable) are listed here, best
//! first; [`super::loader`] opens what they hold.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

/// Where to look for one library.
pub(crate) struct Search<'a> {
    /// The file name stem: `"nvrtc"` for `libnvrtc.so.13`.
    pub stem: &'a str,
    /// An environment variable naming the library file or its folder, searched first.
    pub override_var: &'a str,
    /// Folders under a Python environment's `site-packages/nvidia/` that hold it.
    pub wheel_dirs: &'a [&'a str],
}

/// Library files to try, best first, for a library whose sonames carry the major versions
/// `majors` (best first: cuSOLVER and cuFFT are `.so.12` in CUDA 13 and `.so.11` in CUDA 12):
/// the override, the CUDA toolkit's usual places, Python environments (NVIDIA's wheels) and
/// the system's library folders. `env` reads a variable.
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
pub(crate) fn files_in(dir: &Path, stem: &str, majors: &[&str]) -> Vec<PathBuf> {
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

/// The files of library `stem` in `dir` whatever their major version: the newest major first,
/// each major's soname before its fully versioned names, the unversioned `lib{stem}.so` last
/// (cuFFT's order, which takes any release found beside NVRTC).
pub(crate) fn files_of_any_major(dir: &Path, stem: &str) -> Vec<PathBuf> {
    let prefix = format!("lib{stem}.so");
    let mut names: Vec<String> = read_dir_names(dir).filter(|n| n.starts_with(&prefix)).collect();
    // "libcufft.so.12" before "libcufft.so.12.0.0" before "libcufft.so.11"
    names.sort_by_key(|n| {
        let major: u32 = n
            .strip_prefix(&prefix)
            .and_then(|v| v.strip_prefix('.'))
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
    fn any_major_newest_soname_first() {
        let dir = std::env::temp_dir().join(format!("ef-cufft-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in ["libcufft.so.11", "libcufft.so.12.0.1", "libcufft.so.12", "libcufftw.so.12"] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        let got: Vec<String> = files_of_any_major(&dir, "cufft")
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into())
            .collect();
        assert_eq!(got, ["libcufft.so.12", "libcufft.so.12.0.1", "libcufft.so.11"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
