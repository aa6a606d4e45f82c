//! NVRTC: finding and loading it, choosing what to compile for, and compiling one source.
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
//! - **Finding NVRTC.** cudarc looks for `libnvrtc.so`, `libnvrtc.so.13`, `libnvrtc.so.12`, ...
//!   on the loader's path. Toolkits in `/usr/local/cuda*` and NVRTC from Python wheels
//!   (`nvidia/cu13/lib`, `nvidia/cuda_nvrtc/lib`) are often not on it, so when cudarc finds
//!   nothing, those places (and `$EMBERFIRE_NVRTC`, a file or a folder) are searched and the
//!   library found is opened by its full path first; the loader then resolves cudarc's
//!   `libnvrtc.so.13` to the library already loaded under that name.
//! - **Optimisation effort.** `EMBERFIRE_FAST_COMPILE=min|mid|max` compiles our own kernels
//!   with NVRTC's `--Ofast-compile` at that level (NVRTC 12.8 and later): less time spent
//!   optimising, for shorter first runs, against code that may run slower. Off by default.
//! - **Read ahead.** Once NVRTC is loaded, its library files and its builtins are read into the
//!   file cache on a thread of their own, so that the first compiles do not fault its code in
//!   from disk page by page (`vendor::read_ahead` says what it measured).
//!   `EMBERFIRE_READ_AHEAD=0` turns it off.
//! - **Compiles at once.** Compiles of different sources run side by side on threads of one
//!   process, as in separate processes: four variants of a generated reduction compiled in
//!   624 to 758 ms one after another and 441 to 480 ms on two threads (NVRTC 13.0 on a
//!   two-core machine; 453 in two processes). An earlier measurement that saw four threads'
//!   compiles finish one after another repeated one source: NVRTC 13.0 on the device machines
//!   keeps the code it makes in the driver's compile cache (`~/.nv/ComputeCache`), and those
//!   were its hits. An uncached compile of a generated kernel there takes 100 to 450 ms, a
//!   repeat a tenth of that.

use std::ffi::{c_char, CString};
use std::fmt;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use cudarc::nvrtc::{result as rtc, sys as rtcsys};

use crate::backend::cuda::vendor::loader::{self, Dependencies, First, Library, OnPath, Places};
use crate::backend::cuda::vendor::read_ahead;
use crate::backend::cuda::vendor::search::Search;
use crate::error::Error;

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
    pub(crate) fn kind(self) -> u32 {
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
    pub(crate) fn minimal(self, version: (u32, u32)) -> bool {
        self == Origin::Own && version >= (12, 4)
    }

    /// The options a kernel of this origin is compiled with by NVRTC `version`, with
    /// `fast` the optimisation effort asked for ([`FastCompile::from_env`]).
    pub(crate) fn flags(self, version: (u32, u32), fast: FastCompile) -> Flags {
        let fast = if self == Origin::Own && version >= (12, 8) { fast } else { FastCompile::Off };
        Flags { minimal: self.minimal(version), fast }
    }
}

/// NVRTC's `--Ofast-compile` level: how much optimising it trades for compile time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FastCompile {
    /// Full optimisation (no option).
    #[default]
    Off,
    Min,
    Mid,
    Max,
}

impl FastCompile {
    /// `EMBERFIRE_FAST_COMPILE` (`min`, `mid` or `max`; anything else is off), read once.
    pub(crate) fn from_env() -> FastCompile {
        static LEVEL: OnceLock<FastCompile> = OnceLock::new();
        *LEVEL.get_or_init(|| {
            FastCompile::parse(&std::env::var("EMBERFIRE_FAST_COMPILE").unwrap_or_default())
        })
    }

    fn parse(v: &str) -> FastCompile {
        match v.trim() {
            "min" => FastCompile::Min,
            "mid" => FastCompile::Mid,
            "max" => FastCompile::Max,
            _ => FastCompile::Off,
        }
    }

    fn option(self) -> Option<&'static str> {
        match self {
            FastCompile::Off => None,
            FastCompile::Min => Some("--Ofast-compile=min"),
            FastCompile::Mid => Some("--Ofast-compile=mid"),
            FastCompile::Max => Some("--Ofast-compile=max"),
        }
    }
}

/// The options of one compile besides its target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    /// `-minimal`: the lean front end.
    pub(crate) minimal: bool,
    /// `--Ofast-compile`.
    pub(crate) fast: FastCompile,
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

/// NVRTC, which cudarc binds, as the loader makes it loadable when it is not on the loader's
/// path. It loads its builtins library by name when it compiles: that is opened from the same
/// place first.
pub(crate) static NVRTC: Library = Library {
    name: "NVRTC",
    wanted: "NVRTC (libnvrtc.so.13 or .12)",
    needed_for: None,
    install: "the CUDA toolkit's NVRTC",
    prefix: "CUDA: ",
    missing_symbol_hint: " (too old?)",
    search: Search {
        stem: "nvrtc",
        override_var: "EMBERFIRE_NVRTC",
        wheel_dirs: &["cu13/lib", "cuda_nvrtc/lib", "cu12/lib"],
    },
    majors: &["13", "12"],
    on_path: OnPath::Cudarc,
    first: First::LoaderPath,
    places: Places::Toolkits,
    dependencies: Dependencies::Companions(&["libnvrtc-builtins.so"]),
    global: false,
};

fn load_nvrtc() -> Result<NvrtcInfo, Error> {
    loader::make_loadable(&NVRTC)?;
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
        Ok(Ok(info)) => {
            // NVRTC's code (and its builtins, which it loads at its first compile) runs first
            // in the process's first compiles: have it read while the context is created.
            read_ahead::read_library_ahead(&NVRTC);
            Ok(info)
        }
        Ok(Err(e)) => {
            Err(Error::BackendUnavailable(format!("CUDA: NVRTC does not work: {:?}", e.0)))
        }
        Err(_) => Err(Error::BackendUnavailable(
            "CUDA: the NVRTC library found lacks entry points emberfire needs (too old?)".into(),
        )),
    }
}

/// Whether `EMBERFIRE_JIT_TRACE` is set: each compile, each kernel read from the disk cache,
/// each device allocation from the driver, each matrix product and each wait for the device
/// then prints where its time went, stamped by [`trace_clock`], so that the gaps between lines
/// show what else a first run spends.
pub(crate) fn trace_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let on = std::env::var_os("EMBERFIRE_JIT_TRACE").is_some_and(|v| v != "0");
        if on {
            trace_clock();
        }
        on
    })
}

/// With tracing on, prints `what()` stamped by [`trace_clock`].
pub(crate) fn trace_event(what: impl FnOnce() -> String) {
    if trace_enabled() {
        eprintln!("emberfire jit [{:.1} ms]: {}", trace_clock(), what());
    }
}

/// Milliseconds since tracing was first asked about in this process.
pub(crate) fn trace_clock() -> f64 {
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1e3
}

/// Compiles `source` for `target` and returns the CUBIN, or the PTX with its final NUL.
pub(crate) fn compile(
    source: &str,
    entry: &str,
    target: Target,
    flags: Flags,
) -> Result<Vec<u8>, Error> {
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
    let options = compile_options(target, flags);
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

/// The NVRTC options for `target` with `flags`. Part of the disk key.
pub(crate) fn compile_options(target: Target, flags: Flags) -> Vec<String> {
    let mut options = vec![format!("--gpu-architecture={target}")];
    if flags.minimal {
        options.push("-minimal".into());
    }
    options.extend(flags.fast.option().map(String::from));
    options
}

fn c_text(v: Vec<c_char>) -> String {
    let bytes: Vec<u8> = v.into_iter().take_while(|&c| c != 0).map(|c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::vendor::search;
    use std::ffi::OsString;
    use std::fs;
    use std::path::{Path, PathBuf};

    /// NVRTC library files to try, best first, from `$EMBERFIRE_NVRTC`, the CUDA toolkit's
    /// usual places and Python environments (NVIDIA's wheels), as the loader searches them.
    fn nvrtc_candidates(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        search::candidates_of_majors(&NVRTC.search, NVRTC.majors, env)
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("emberfire-nvrtc-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
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
        let plain = Flags::default();
        assert_eq!(compile_options(Target::Cubin(90), plain), vec!["--gpu-architecture=sm_90"]);
        assert_eq!(
            compile_options(Target::Cubin(90), Flags { minimal: true, ..plain }),
            vec!["--gpu-architecture=sm_90", "-minimal"]
        );
        assert_eq!(
            compile_options(Target::Cubin(90), Flags { minimal: true, fast: FastCompile::Min }),
            vec!["--gpu-architecture=sm_90", "-minimal", "--Ofast-compile=min"]
        );
    }

    #[test]
    fn only_our_own_kernels_compile_fast_and_only_where_nvrtc_has_it() {
        assert_eq!(FastCompile::parse("min"), FastCompile::Min);
        assert_eq!(FastCompile::parse(" max "), FastCompile::Max);
        assert_eq!(FastCompile::parse("mid"), FastCompile::Mid);
        for off in ["", "0", "off", "MIN", "fast"] {
            assert_eq!(FastCompile::parse(off), FastCompile::Off, "{off:?}");
        }
        let own = Origin::Own.flags((12, 8), FastCompile::Mid);
        assert_eq!(own, Flags { minimal: true, fast: FastCompile::Mid });
        assert_eq!(Origin::Own.flags((12, 6), FastCompile::Mid).fast, FastCompile::Off);
        assert_eq!(Origin::User.flags((13, 0), FastCompile::Mid), Flags::default());
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
}
