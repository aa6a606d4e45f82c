//! NCCL, loaded at run time: finding the library, its entry points, communicators and the
//! collective calls on device memory.
//!
//! Why not cudarc's `nccl` module: its loader asks for `libnccl.so` and CUDA-versioned names
//! (`libnccl.so.12`, ...), but NCCL's soname is `libnccl.so.2` and NVIDIA's wheel
//! (`nvidia/nccl/lib`, the NCCL that PyTorch uses) ships only that file, so the loader would
//! miss it and panic; its result codes are Rust enums, and a code from a newer NCCL than the
//! bindings would be undefined behaviour. Here every entry point returns a plain `c_int`, a
//! missing library is an [`Error::BackendUnavailable`] that says where it was looked for, and
//! the library is searched for like the other CUDA libraries (see [`super::loader`]).
//!
//! Where NCCL is looked for, in order: `$EMBERFIRE_NCCL` (a file or a folder); the loader's
//! path (`libnccl.so.2`, `libnccl.so`); CUDA toolkits; `nvidia/nccl/lib` of Python
//! environments; the system's library folders.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use super::loader::{self, Dependencies, First, Library, OnPath, Opened, Places};
use super::search::Search;
use crate::backend::cuda::runtime;
use crate::dtype::DType;
use crate::error::Error;

/// `ncclUniqueId`: 128 opaque bytes that every rank of a communicator must be given.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct RawUniqueId {
    pub internal: [c_char; 128],
}

/// An opaque `ncclComm_t`.
type RawComm = *mut c_void;

type Coll7 = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    c_int,
    RawComm,
    *mut c_void,
) -> c_int;
type Rooted8 = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    c_int,
    c_int,
    c_int,
    RawComm,
    *mut c_void,
) -> c_int;
type Gather6 =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, RawComm, *mut c_void) -> c_int;
type Peer6 =
    unsafe extern "C" fn(*const c_void, usize, c_int, c_int, RawComm, *mut c_void) -> c_int;
type PeerMut6 =
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, RawComm, *mut c_void) -> c_int;

/// The entry points emberfire uses, from one loaded library.
struct Nccl {
    version: c_int,
    get_unique_id: unsafe extern "C" fn(*mut RawUniqueId) -> c_int,
    comm_init_all: unsafe extern "C" fn(*mut RawComm, c_int, *const c_int) -> c_int,
    comm_init_rank: unsafe extern "C" fn(*mut RawComm, c_int, RawUniqueId, c_int) -> c_int,
    comm_abort: unsafe extern "C" fn(RawComm) -> c_int,
    get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    get_last_error: unsafe extern "C" fn(RawComm) -> *const c_char,
    all_reduce: Coll7,
    reduce_scatter: Coll7,
    reduce: Rooted8,
    broadcast: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        RawComm,
        *mut c_void,
    ) -> c_int,
    all_gather: Gather6,
    send: Peer6,
    recv: PeerMut6,
    group_start: unsafe extern "C" fn() -> c_int,
    group_end: unsafe extern "C" fn() -> c_int,
}

/// NCCL as the loader finds it: an existing `$EMBERFIRE_NCCL` file, the loader's path
/// (`libnccl.so.2`, `libnccl.so`), then toolkits, wheels and the system's folders.
pub(crate) static NCCL: Library = Library {
    name: "NCCL",
    wanted: "NCCL (libnccl.so.2)",
    needed_for: Some("collectives"),
    install: "NCCL (for example the `nvidia-nccl-cu12` wheel)",
    prefix: "CUDA: ",
    missing_symbol_hint: " (too old?)",
    search: Search {
        stem: "nccl",
        override_var: "EMBERFIRE_NCCL",
        wheel_dirs: &["nccl/lib", "cu13/lib"],
    },
    majors: &["2"],
    on_path: OnPath::Names(&["libnccl.so.2", "libnccl.so"]),
    first: First::LoaderPath,
    places: Places::Toolkits,
    dependencies: Dependencies::None,
    global: false,
};

fn nccl() -> Result<&'static Nccl, Error> {
    static LIB: OnceLock<Result<Nccl, Error>> = OnceLock::new();
    LIB.get_or_init(|| load(&|k| std::env::var_os(k))).as_ref().map_err(Clone::clone)
}

fn load(env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Result<Nccl, Error> {
    bind(loader::open(&NCCL, env)?)
}

/// Looks up every entry point; a missing one makes the library unusable (too old).
fn bind(lib: Opened) -> Result<Nccl, Error> {
    let name = lib.path();
    let get_version: unsafe extern "C" fn(*mut c_int) -> c_int = lib.sym("ncclGetVersion")?;
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    if unsafe { get_version(&mut version) } != 0 {
        return Err(Error::BackendUnavailable(format!(
            "CUDA: NCCL {name} did not report its version"
        )));
    }
    Ok(Nccl {
        version,
        get_unique_id: lib.sym("ncclGetUniqueId")?,
        comm_init_all: lib.sym("ncclCommInitAll")?,
        comm_init_rank: lib.sym("ncclCommInitRank")?,
        comm_abort: lib.sym("ncclCommAbort")?,
        get_error_string: lib.sym("ncclGetErrorString")?,
        get_last_error: lib.sym("ncclGetLastError")?,
        all_reduce: lib.sym("ncclAllReduce")?,
        reduce_scatter: lib.sym("ncclReduceScatter")?,
        reduce: lib.sym("ncclReduce")?,
        broadcast: lib.sym("ncclBroadcast")?,
        all_gather: lib.sym("ncclAllGather")?,
        send: lib.sym("ncclSend")?,
        recv: lib.sym("ncclRecv")?,
        group_start: lib.sym("ncclGroupStart")?,
        group_end: lib.sym("ncclGroupEnd")?,
    })
}

/// NCCL's version as `major * 10000 + minor * 100 + patch` (for example 22703).
pub(crate) fn version() -> Result<i32, Error> {
    nccl().map(|n| n.version)
}

/// `Ok` for `ncclSuccess` (and `ncclInProgress`, which blocking communicators never return),
/// else an [`Error::Driver`] naming the call, NCCL's text for the code and, where a
/// communicator is at hand, its last error message.
fn check(nccl: &Nccl, call: &str, code: c_int, comm: RawComm) -> Result<(), Error> {
    if code == 0 || code == 7 {
        return Ok(());
    }
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: NCCL returns NUL-terminated static (or per-thread) strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    // SAFETY: any code may be passed; the string is NCCL's.
    let what = text(unsafe { (nccl.get_error_string)(code) });
    // SAFETY: a null or live communicator; NCCL's last-error string of the calling thread.
    let detail = text(unsafe { (nccl.get_last_error)(comm) });
    let detail = if detail.is_empty() { String::new() } else { format!(" ({detail})") };
    Err(Error::Driver(format!("{call}: NCCL error {code}: {what}{detail}")))
}

/// A new unique id for [`init_rank`] (rank 0's process makes it, every rank receives it).
pub(crate) fn unique_id() -> Result<RawUniqueId, Error> {
    let n = nccl()?;
    let mut id = RawUniqueId { internal: [0; 128] };
    // SAFETY: a valid out-pointer to a 128-byte id.
    check(n, "UniqueId::new", unsafe { (n.get_unique_id)(&mut id) }, std::ptr::null_mut())?;
    Ok(id)
}

/// One rank of an NCCL communicator, on one device.
#[derive(Debug)]
pub(crate) struct Comm {
    raw: usize,
    ordinal: usize,
}

// The handle is an opaque pointer that NCCL lets any thread use (not two at once: the
// communicator layer above serialises its calls).

impl Comm {
    fn raw(&self) -> RawComm {
        self.raw as RawComm
    }

    /// The device of this rank.
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        let Ok(n) = nccl() else { return };
        if let Ok(dev) = runtime::device(self.ordinal) {
            // Work queued on the communicator finishes before it goes.
            let _ = dev.sync();
        }
        // Abort rather than destroy: with nothing left in flight the two free the same
        // resources, but destroying finalizes first, which waits for the other ranks and can
        // hang when one thread drops the ranks of a group one after the other. A failure here
        // (process exit) leaves nothing to do.
        // SAFETY: the communicator is ours and released only here.
        let _ = unsafe { (n.comm_abort)(self.raw()) };
    }
}

/// One communicator spanning `ordinals` in this process: rank `i` on device `ordinals[i]`.
pub(crate) fn init_all(ordinals: &[usize]) -> Result<Vec<Comm>, Error> {
    let n = nccl()?;
    for &o in ordinals {
        runtime::device(o)?.bind()?;
    }
    let devs: Vec<c_int> = ordinals.iter().map(|&o| o as c_int).collect();
    let mut raws: Vec<RawComm> = vec![std::ptr::null_mut(); devs.len()];
    // SAFETY: `raws` has one slot per device; `devs` lists existing devices.
    let code = unsafe { (n.comm_init_all)(raws.as_mut_ptr(), devs.len() as c_int, devs.as_ptr()) };
    check(n, "Communicator::new", code, std::ptr::null_mut())?;
    Ok(raws
        .into_iter()
        .zip(ordinals)
        .map(|(raw, &ordinal)| Comm { raw: raw as usize, ordinal })
        .collect())
}

/// Rank `rank` of `world` ranks that share `id`, on device `ordinal`. Blocks until every rank
/// has joined.
pub(crate) fn init_rank(
    ordinal: usize,
    id: RawUniqueId,
    rank: usize,
    world: usize,
) -> Result<Comm, Error> {
    let n = nccl()?;
    // NCCL takes the device from the CUDA runtime's current device, which follows the context
    // current on this thread.
    runtime::device(ordinal)?.bind()?;
    let mut raw: RawComm = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the id is passed by value as NCCL's ABI has it.
    let code = unsafe { (n.comm_init_rank)(&mut raw, world as c_int, id, rank as c_int) };
    check(n, "Communicator::from_unique_id", code, std::ptr::null_mut())?;
    Ok(Comm { raw: raw as usize, ordinal })
}

/// A reduction NCCL applies element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    Avg = 4,
}

/// NCCL's element type for `dtype` and how many NCCL elements one emberfire element is, for
/// operations that only move data (any type goes, as bytes if need be).
pub(crate) fn moving_type(dtype: DType) -> (c_int, usize) {
    match reducing_type(dtype) {
        Some(t) => (t, 1),
        None => match dtype {
            DType::C32 => (7, 2),
            DType::C64 => (8, 2),
            other => (1, other.size()),
        },
    }
}

/// NCCL's element type for reducing `dtype`, where NCCL has one.
pub(crate) fn reducing_type(dtype: DType) -> Option<c_int> {
    Some(match dtype {
        DType::U8 => 1,
        DType::S32 => 2,
        DType::U32 => 3,
        DType::S64 => 4,
        DType::U64 => 5,
        DType::F16 => 6,
        DType::F32 => 7,
        DType::F64 => 8,
        _ => return None,
    })
}

/// One NCCL call of one rank, on device memory (raw device addresses) and the rank's device's
/// current stream.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Call {
    AllReduce(Op),
    ReduceScatter(Op),
    Reduce(Op, usize),
    Broadcast(usize),
    AllGather,
    Send(usize),
    Recv(usize),
}

/// Queues `call` for `comm` on its device's current stream: `count` elements of NCCL type
/// `nccl_type` (for all-gather and reduce-scatter, the count of one rank's part).
///
/// # Safety
///
/// `send` and `recv` are live device memory of `comm`'s device, large enough for the call
/// (`recv` for all ranks' parts in an all-gather, `send` for all ranks' parts in a
/// reduce-scatter), and stay alive and unrewritten until the call has finished on the stream.
pub(crate) unsafe fn launch(
    comm: &Comm,
    call: Call,
    send: u64,
    recv: u64,
    count: usize,
    nccl_type: c_int,
    name: &str,
) -> Result<(), Error> {
    let n = nccl()?;
    let dev = runtime::device(comm.ordinal)?;
    dev.bind()?;
    let stream = dev.stream_raw() as *mut c_void;
    let (s, r) = (send as usize as *const c_void, recv as usize as *mut c_void);
    let c = comm.raw();
    // SAFETY: the caller's contract covers the buffers; the communicator and stream are live.
    let code = unsafe {
        match call {
            Call::AllReduce(op) => (n.all_reduce)(s, r, count, nccl_type, op as c_int, c, stream),
            Call::ReduceScatter(op) => {
                (n.reduce_scatter)(s, r, count, nccl_type, op as c_int, c, stream)
            }
            Call::Reduce(op, root) => {
                (n.reduce)(s, r, count, nccl_type, op as c_int, root as c_int, c, stream)
            }
            Call::Broadcast(root) => {
                (n.broadcast)(s, r, count, nccl_type, root as c_int, c, stream)
            }
            Call::AllGather => (n.all_gather)(s, r, count, nccl_type, c, stream),
            Call::Send(peer) => (n.send)(s, count, nccl_type, peer as c_int, c, stream),
            Call::Recv(peer) => (n.recv)(r, count, nccl_type, peer as c_int, c, stream),
        }
    };
    check(n, name, code, c)
}

/// Runs `f` between `ncclGroupStart` and `ncclGroupEnd`: the calls it queues (on several
/// devices of this thread, or sends beside receives) are issued together, which NCCL needs
/// when one thread drives several ranks.
pub(crate) fn group<R>(name: &str, f: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
    let n = nccl()?;
    // SAFETY: no arguments; groups nest.
    check(n, name, unsafe { (n.group_start)() }, std::ptr::null_mut())?;
    let r = f();
    // The group is closed whatever `f` returned, so that NCCL's state stays consistent.
    // SAFETY: closes the group opened above.
    let end = check(n, name, unsafe { (n.group_end)() }, std::ptr::null_mut());
    let r = r?;
    end.map(|()| r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_moves_and_the_numeric_ones_reduce() {
        for t in DType::ALL {
            let (code, per) = moving_type(t);
            assert!(per >= 1 && (0..=8).contains(&code), "{t:?}");
            let bytes_per_nccl = match code {
                0 | 1 => 1,
                6 => 2,
                2 | 3 | 7 => 4,
                _ => 8,
            };
            assert_eq!(per * bytes_per_nccl, t.size(), "{t:?} moves as whole bytes");
        }
        assert_eq!(reducing_type(DType::F32), Some(7));
        assert_eq!(reducing_type(DType::S16), None);
        assert_eq!(reducing_type(DType::C32), None);
    }

    #[test]
    fn a_missing_library_is_an_error_naming_the_places_searched() {
        let env = |k: &str| match k {
            "EMBERFIRE_NCCL" => Some("/nonexistent/libnccl.so.2".into()),
            _ => None,
        };
        if load(&env).is_ok() {
            return; // this machine has NCCL on the loader's path
        }
        let e = load(&env).err().unwrap().to_string();
        assert!(e.contains("NCCL") && e.contains("EMBERFIRE_NCCL"), "{e}");
    }
}
