//! Opening a vendor library: one description per library, one function that opens it (or
//! says what is missing, where it was looked for and which variable to set), one list of the
//! libraries kept open for the process, and one symbol lookup.
//!
//! Why one loader: every CUDA library is found the same way (its override variable, the
//! loader's path, toolkits, NVIDIA's wheels), and some need other libraries opened first
//! because they open those by name, which the system loader finds only on its path. What
//! differs between libraries is data (names, versions, folders, the order of the places and
//! the dependencies), so each library is a [`Library`] value and the code is written once.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::search::{self, Search};
use crate::error::Error;
use crate::sync::lock;

/// The libraries opened for the sake of others (dependencies, companions, the driver) and
/// kept open for the process: closing one would unload what a later `dlopen` by name relies
/// on finding already loaded.
static KEPT: Mutex<Vec<libloading::Library>> = Mutex::new(Vec::new());

/// Keeps `lib` open for the process.
fn keep(lib: libloading::Library) {
    lock(&KEPT).push(lib);
}

/// How a vendor library is found and opened, and how it is named in messages.
pub(crate) struct Library {
    /// Its name where a symbol is missing: "cuDNN" in "the cuDNN library ... lacks `x`".
    pub name: &'static str,
    /// What was not found, with its sonames: "cuDNN 9 (libcudnn.so.9)".
    pub wanted: &'static str,
    /// What it is needed for, named in the message when it is missing (`None`: said nowhere).
    pub needed_for: Option<&'static str>,
    /// What to install, in the message when it is missing: "cuFFT".
    pub install: &'static str,
    /// What every message about it starts with ("CUDA: ", or nothing for cuSOLVER, whose
    /// callers name the backend).
    pub prefix: &'static str,
    /// Said after a missing symbol's name (" (too old?)" where an older release lacks it).
    pub missing_symbol_hint: &'static str,
    /// The file name stem, the override variable and the wheels' folders.
    pub search: Search<'static>,
    /// The sonames' major versions, best first (`["12", "11"]` for cuSOLVER).
    pub majors: &'static [&'static str],
    /// The names tried on the loader's path.
    pub on_path: OnPath,
    /// What is tried first: the override or the loader's path.
    pub first: First,
    /// The folders searched beside the override.
    pub places: Places,
    /// What is opened before a library file found by its full path.
    pub dependencies: Dependencies,
    /// Whether the library and its dependencies are opened with `RTLD_NOW | RTLD_GLOBAL`
    /// (cuDNN's sub-libraries resolve each other's symbols) rather than `libloading`'s default.
    pub global: bool,
}

/// The names tried on the loader's path, which `dlopen` resolves itself.
pub(crate) enum OnPath {
    /// These names, in this order.
    Names(&'static [&'static str]),
    /// cudarc's candidate names for the stem (`libcufft.so`, `libcufft.so.12`, ...).
    Cudarc,
}

/// What is tried first: where the override variable and the loader's path rank among the
/// places (each library keeps the order it has always had).
pub(crate) enum First {
    /// An existing override file, then the loader's path, then the places (which begin with
    /// the override folder): cuDNN and NCCL.
    LoaderPath,
    /// The override (a file or a folder's files), then the loader's path, then the places:
    /// cuFFT.
    Override,
    /// The override, and every file found under its path (an override naming a toolkit's root
    /// brings that toolkit's folders forward), then the loader's path, then the other places:
    /// cuSOLVER.
    UnderOverride,
}

/// The folders searched besides the loader's path.
pub(crate) enum Places {
    /// The override folder, toolkits, Python environments' wheel folders and the system's
    /// library folders ([`search::candidates_of_majors`]).
    Toolkits,
    /// The folders where library `of` is found (with the files of any major version, newest
    /// first), and `wheel` beside `of`'s wheel folder `of_wheel`: cuFFT, found where NVRTC is.
    BesideOf { of: &'static Library, of_wheel: &'static str, wheel: &'static str },
}

/// Libraries opened, and kept open, before a library file found by its full path.
pub(crate) enum Dependencies {
    /// None.
    None,
    /// Every file beside it whose name starts with `prefix` and holds `version` (one file per
    /// library), opened in passes until no more open: they need each other (cuDNN's
    /// `libcudnn_*`).
    SubLibraries { prefix: &'static str, version: &'static str },
    /// For each (file name prefix, wheel folder), the first copy that opens, newest first,
    /// from its folder or else from the wheel folder beside its wheel (cuSOLVER's cuBLAS,
    /// cuSPARSE, nvJitLink).
    Named(&'static [(&'static str, &'static str)]),
    /// Every file beside it whose name starts with one of these and that is a shared library
    /// (NVRTC's builtins, cuBLAS's cublasLt), opened even where it does not open itself.
    Companions(&'static [&'static str]),
}

/// A library opened by [`open`], for binding its symbols.
pub(crate) struct Opened {
    /// The library, kept open for the process.
    lib: &'static libloading::Library,
    /// The file or name it was opened by, for messages.
    path: String,
    /// Its description, for messages.
    of: &'static Library,
}

impl Opened {
    /// The file or name the library was opened by.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// Entry point `name` as a `T`, or the [`Error::BackendUnavailable`] saying the library
    /// lacks it. `T` must be the entry point's C signature, as each binding's table declares
    /// it after the library's API reference.
    pub(crate) fn sym<T: Copy>(&self, name: &str) -> Result<T, Error> {
        // SAFETY: the bindings name each entry point with its C signature `T` (the library's
        // API reference); the pointer stays valid because the library is never closed.
        unsafe { self.lib.get::<T>(name.as_bytes()) }.map(|s| *s).map_err(|_| {
            let of = self.of;
            Error::BackendUnavailable(format!(
                "{}the {} library {} lacks `{name}`{}",
                of.prefix, of.name, self.path, of.missing_symbol_hint
            ))
        })
    }
}

/// Opens `lib` from the first of its candidates that opens (after its dependencies), and
/// keeps it open for the process; else the [`Error::BackendUnavailable`] naming what is
/// missing, the files tried and the variable to set. `env` reads a variable.
pub(crate) fn open(
    lib: &'static Library,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Opened, Error> {
    let mut tried: Vec<String> = Vec::new();
    for candidate in candidates(lib, env) {
        if candidate.is_absolute() {
            open_dependencies(lib, &candidate);
        }
        match open_file(&candidate, lib.global) {
            Some(opened) => {
                // The entry points bound from it live as long as the process.
                let kept: &'static libloading::Library = Box::leak(Box::new(opened));
                let path = candidate.to_string_lossy().into_owned();
                return Ok(Opened { lib: kept, path, of: lib });
            }
            None => tried.push(candidate.to_string_lossy().into_owned()),
        }
    }
    let shown: Vec<&str> = tried.iter().take(8).map(String::as_str).collect();
    Err(missing(
        lib,
        &format!(
            "the CUDA toolkit's or Python wheels' folders (tried {}{})",
            shown.join(", "),
            if tried.len() > 8 { ", ..." } else { "" }
        ),
    ))
}

/// Makes `lib`, which cudarc opens itself by its plain names, loadable under those names:
/// already on the loader's path, or found in its places and opened by its full path (with its
/// companions) and kept, so that cudarc's `dlopen` finds it loaded. Else the
/// [`Error::BackendUnavailable`] naming what is missing and the places searched.
pub(crate) fn make_loadable(lib: &'static Library) -> Result<(), Error> {
    let names = [lib.search.stem];
    if keep_loaded(&names) {
        return Ok(());
    }
    let places = search::candidates_of_majors(&lib.search, lib.majors, &|k| std::env::var_os(k));
    let found = places.iter().find(|p| {
        open_dependencies(lib, p);
        open_file(p, lib.global).map(keep).is_some()
    });
    if found.is_some() && keep_loaded(&names) {
        return Ok(());
    }
    let shown: Vec<String> = places.iter().take(12).map(|p| p.display().to_string()).collect();
    Err(missing(
        lib,
        &format!("[{}{}]", shown.join(", "), if places.len() > 12 { ", ..." } else { "" }),
    ))
}

/// Opens the first library among cudarc's candidate file names for `names` (e.g. `["cuda",
/// "nvcuda"]`: `libcuda.so`, ..., `libcuda.so.1`) and keeps it open for the process. Returns
/// whether one opened.
///
/// Why not cudarc's `is_culib_present`: it closes the library again, so cudarc's first real
/// call loads (and initialises) it a second time. Opening it here, in cudarc's own order, and
/// keeping the handle makes cudarc's later `dlopen` of the same name a reference-count bump.
pub(crate) fn keep_loaded(names: &[&str]) -> bool {
    for name in names {
        for candidate in cudarc::get_lib_name_candidates(name) {
            // SAFETY: loading a CUDA library runs its initialisers, which using it requires.
            if let Ok(lib) = unsafe { libloading::Library::new(&candidate) } {
                keep(lib);
                return true;
            }
        }
    }
    false
}

/// The message for `lib` not found in `places`.
fn missing(lib: &Library, places: &str) -> Error {
    let needed = lib.needed_for.map(|n| format!(", needed for {n},")).unwrap_or_default();
    Error::BackendUnavailable(format!(
        "{}{}{needed} was not found on the loader's path nor in {places}; install {} or set {} \
         to the library",
        lib.prefix, lib.wanted, lib.install, lib.search.override_var
    ))
}

/// Library files and names to try for `lib`, best first. `env` reads a variable.
pub(crate) fn candidates(lib: &Library, env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let over = env(lib.search.override_var).filter(|p| !p.is_empty()).map(PathBuf::from);
    let on_path: Vec<PathBuf> = match lib.on_path {
        OnPath::Names(names) => names.iter().map(PathBuf::from).collect(),
        OnPath::Cudarc => cudarc::get_lib_name_candidates(lib.search.stem)
            .into_iter()
            .map(PathBuf::from)
            .collect(),
    };
    let mut out: Vec<PathBuf> = Vec::new();
    match lib.first {
        First::LoaderPath => {
            out.extend(over.filter(|p| p.is_file()));
            out.extend(on_path);
            out.extend(places(lib, env));
        }
        First::Override => {
            if let Some(p) = over {
                if p.is_dir() {
                    out.extend(files_of(lib, &p));
                } else {
                    out.push(p);
                }
            }
            out.extend(on_path);
            out.extend(places(lib, env));
        }
        First::UnderOverride => {
            if let Some(p) = over.filter(|p| !p.is_dir()) {
                out.push(p);
            }
            // Under the variable as set (an empty one is under everything).
            let raw = env(lib.search.override_var).map(PathBuf::from);
            let (under, rest): (Vec<PathBuf>, Vec<PathBuf>) = places(lib, env)
                .into_iter()
                .partition(|f| raw.as_ref().is_some_and(|o| f.starts_with(o)));
            out.extend(under);
            out.extend(on_path);
            out.extend(rest);
        }
    }
    out
}

/// The files of `lib`'s places, best first.
fn places(lib: &Library, env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    match lib.places {
        Places::Toolkits => search::candidates_of_majors(&lib.search, lib.majors, env),
        Places::BesideOf { of, of_wheel, wheel } => {
            let mut dirs: Vec<PathBuf> = Vec::new();
            for file in search::candidates_of_majors(&of.search, of.majors, env) {
                let Some(dir) = file.parent() else { continue };
                dirs.push(dir.to_path_buf());
                if dir.ends_with(of_wheel) {
                    if let Some(nvidia) = dir.parent().and_then(Path::parent) {
                        dirs.push(nvidia.join(wheel));
                    }
                }
            }
            let mut seen = std::collections::HashSet::new();
            dirs.into_iter()
                .filter(|d| seen.insert(d.clone()))
                .flat_map(|d| files_of(lib, &d))
                .collect()
        }
    }
}

/// The files of `lib` in folder `dir`, in the order its places list them.
fn files_of(lib: &Library, dir: &Path) -> Vec<PathBuf> {
    match lib.places {
        Places::Toolkits => search::files_in(dir, lib.search.stem, lib.majors),
        Places::BesideOf { .. } => search::files_of_any_major(dir, lib.search.stem),
    }
}

/// Opens `path` as `lib` opens its files: with `RTLD_NOW | RTLD_GLOBAL` where `global`, else
/// with `libloading`'s default.
fn open_file(path: &Path, global: bool) -> Option<libloading::Library> {
    if global {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: loading a CUDA library runs its initialisers, as using it requires.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.ok().map(Into::into)
    } else {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }.ok()
    }
}

/// Opens (and keeps) the libraries `lib` needs before its file `path`.
fn open_dependencies(lib: &Library, path: &Path) {
    let Some(dir) = path.parent() else { return };
    match lib.dependencies {
        Dependencies::None => {}
        Dependencies::SubLibraries { prefix, version } => {
            let mut left: Vec<String> = search::read_dir_names(dir)
                .filter(|n| n.starts_with(prefix) && n.contains(version))
                .collect();
            left.sort();
            // one file per library: the soname, or else the first fully versioned name
            left.dedup_by(|b, a| b.split(".so").next() == a.split(".so").next());
            loop {
                let before = left.len();
                left.retain(|name| match open_file(&dir.join(name), lib.global) {
                    Some(opened) => {
                        keep(opened);
                        false
                    }
                    None => true,
                });
                if left.is_empty() || left.len() == before {
                    break;
                }
            }
        }
        Dependencies::Named(named) => {
            let nvidia = dir.parent().and_then(Path::parent);
            for &(prefix, wheel) in named {
                let mut places = vec![dir.to_path_buf()];
                if let Some(n) = nvidia {
                    places.push(n.join(wheel));
                }
                // The first copy that opens, from the nearest place: one copy of each library.
                'found: for place in places {
                    let mut names: Vec<String> =
                        search::read_dir_names(&place).filter(|n| n.starts_with(prefix)).collect();
                    // The newest major first.
                    names.sort_by(|a, b| b.cmp(a));
                    for name in names {
                        if let Some(opened) = open_file(&place.join(&name), lib.global) {
                            keep(opened);
                            break 'found;
                        }
                    }
                }
            }
        }
        Dependencies::Companions(companions) => {
            let mut beside: Vec<String> = search::read_dir_names(dir)
                .filter(|n| companions.iter().any(|c| n.starts_with(c)) && n.contains(".so"))
                .collect();
            beside.sort();
            for name in beside {
                if let Some(opened) = open_file(&dir.join(name), lib.global) {
                    keep(opened);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::kernel::nvrtc::NVRTC;
    use crate::backend::cuda::vendor::{
        cudnn::CUDNN, cufft::CUFFT, cusolver::CUSOLVER, nccl::NCCL,
    };

    #[test]
    fn each_library_says_what_is_missing_as_it_always_has() {
        let text = |lib: &Library, places: &str| missing(lib, places).to_string();
        let folders = "the CUDA toolkit's or Python wheels' folders (tried a, b)";
        let cases = [
            (
                text(&CUDNN, folders),
                "CUDA: cuDNN 9 (libcudnn.so.9) was not found on the loader's path nor in the CUDA \
                 toolkit's or Python wheels' folders (tried a, b); install cuDNN (e.g. pip install \
                 nvidia-cudnn-cu12) or set EMBERFIRE_CUDNN to the library",
            ),
            (
                text(&CUFFT, folders),
                "CUDA: cuFFT (libcufft.so.12 or .11) was not found on the loader's path nor in the \
                 CUDA toolkit's or Python wheels' folders (tried a, b); install cuFFT or set \
                 EMBERFIRE_CUFFT to the library",
            ),
            (
                text(&CUSOLVER, folders),
                "cuSOLVER (libcusolver.so.12 or .11) was not found on the loader's path nor in the \
                 CUDA toolkit's or Python wheels' folders (tried a, b); install cuSOLVER or set \
                 EMBERFIRE_CUSOLVER to the library",
            ),
            (
                text(&NCCL, folders),
                "CUDA: NCCL (libnccl.so.2), needed for collectives, was not found on the loader's \
                 path nor in the CUDA toolkit's or Python wheels' folders (tried a, b); install \
                 NCCL (for example the `nvidia-nccl-cu12` wheel) or set EMBERFIRE_NCCL to the \
                 library",
            ),
            (
                text(&NVRTC, "[a, b]"),
                "CUDA: NVRTC (libnvrtc.so.13 or .12) was not found on the loader's path nor in \
                 [a, b]; install the CUDA toolkit's NVRTC or set EMBERFIRE_NVRTC to the library",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, format!("{}", Error::BackendUnavailable(want.into())));
        }
    }

    #[test]
    fn a_missing_file_is_tried_and_named() {
        let env = |k: &str| (k == "EMBERFIRE_CUSOLVER").then(|| "/nonexistent/libx.so".into());
        let c = candidates(&CUSOLVER, &env);
        assert_eq!(c[0], PathBuf::from("/nonexistent/libx.so"));
        let env = |k: &str| (k == "EMBERFIRE_NCCL").then(|| "/nonexistent/libx.so".into());
        let c = candidates(&NCCL, &env);
        assert_eq!(c[0], PathBuf::from("libnccl.so.2"));
        assert!(c.contains(&PathBuf::from("/nonexistent/libx.so")));
    }
}
