//! Launches replayed from CUDA graphs, and small launches held back to go out together.
//!
//! The driver takes 3.8 to 4.0 us of the host's time for a kernel launch on an H100 or H200,
//! whatever its form (`cuLaunchKernel`, the runtime's launch, packed parameters), while a graph
//! holding one launch is launched in 2.0 to 2.1 us, and in 2.4 to 2.5 us with the launch's
//! arguments replaced first (`benches/gpu/launch_floor.cu`). So a launch of a shape the device
//! has seen before (the same kernel, grid, block and dynamic shared memory) is made that way:
//! the shape's graph takes this launch's arguments and is launched on the stream. Its order is
//! a kernel launch's: a graph launch is queued on the stream as a kernel is, after everything
//! queued before it, and replacing the arguments leaves launches already queued as they were.
//!
//! What is replayed: emberfire's own launches ([`KernelFn::launch`]) of at most one block a
//! multiprocessor on the device's own stream, from a shape's [`REPLAY_AFTER`]-th launch on,
//! for at most [`MAX_GRAPHS`] shapes a device. A kernel that small runs in less time than its
//! launch takes the host, so the host is what a sequence of them waits for; a larger kernel
//! keeps the device busier than the host, and there a graph's launch costs the device more
//! than a kernel's (every launch replayed, the conjugate-gradient program took 5.82 and 5.90 ms
//! against 5.61 and 5.70 launched directly on an H100).
//!
//! Launches on a user's stream (inside a `with_stream` scope) stay direct, and so does a launch
//! while the user captures the device's stream into a graph of their own, so that the capture
//! records the kernels it would record without replay. A shape whose graph cannot be made is
//! launched directly from then on. `EMBERFIRE_LAUNCH_REPLAY=0` turns replay off.
//!
//! Held launches (`held.rs`). A replayed launch still costs the host 2.4 us, more than the
//! small kernel it launches runs; a graph of several launches costs less each. So the
//! element-wise evaluations' launches that would be replayed ([`KernelFn::launch_or_hold`])
//! are held back instead and sent together, as one graph where that sequence of launches was
//! sent before. Held launches must reach the stream before anything queued there after them,
//! so everything else that reaches the stream sends them first:
//! - every other launch ([`KernelFn::launch`], [`KernelFn::launch_on`]) and every replayed one;
//! - everything that takes the stream from the device ([`Device::stream_raw`],
//!   [`Device::own_stream_raw`], [`Device::cu_stream`], [`StreamId::as_raw`], which copies,
//!   events, stream waits and vendor libraries' calls go through), the device's and streams'
//!   synchronisations, and the memory manager's before it frees memory;
//! - a vendor call on a handle bound to the stream earlier (a cuFFT plan) sends them itself;
//! - handing the user an array's device address (`emberfire::cuda::array_memory`) does too.
//!
//! Once a device's own stream or context is handed to the user (`emberfire::cuda::own_stream`,
//! `current_stream`, `context`), who may queue work on it or capture it directly, nothing more
//! is held on that device. `EMBERFIRE_LAUNCH_BATCH=0` holds nothing back.
//!
//! [`Device::stream_raw`]: crate::backend::cuda::runtime::Device::stream_raw
//! [`Device::own_stream_raw`]: crate::backend::cuda::runtime::Device::own_stream_raw
//! [`Device::cu_stream`]: crate::backend::cuda::runtime::Device::cu_stream
//! [`StreamId::as_raw`]: crate::backend::cuda::memory::StreamId::as_raw

use std::collections::hash_map::{self, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use cudarc::driver::sys;

use super::args::KernelArgs;
use super::graph::{Graph, Shape};
use super::held::{self, CompilingLaunch, Held, HeldLaunch, Launch};
use super::loaded::KernelFn;
use crate::backend::cuda::driver_error;
use crate::backend::cuda::runtime::{self, Device};
use crate::error::Error;

/// Direct launches of a shape before its graph is made: a shape launched once or twice (a
/// program's setup) costs no graph.
const REPLAY_AFTER: u32 = 2;
/// Graphs a device keeps; shapes past them are launched directly.
const MAX_GRAPHS: usize = 256;
/// Shapes a device counts launches of; shapes past them are launched directly.
const MAX_SHAPES: usize = 4096;

/// Launches made from one-launch graphs, and such graphs made, in the whole process.
static REPLAYED: AtomicU64 = AtomicU64::new(0);
static GRAPHS: AtomicU64 = AtomicU64::new(0);
/// Launches held back while their kernel compiled (`ahead.rs`), in the whole process.
static HELD_FOR_COMPILE: AtomicU64 = AtomicU64::new(0);

/// One bit for each device (by ordinal, below 64) that holds launches back now: what lets
/// [`send_all_held`] return at once in the common case.
static HOLDING: AtomicU64 = AtomicU64::new(0);
/// One bit for each device whose held launches include one whose kernel was still compiling
/// when it was held: what [`Replays::waiting_for_compiles`] reads without the lock. Set and
/// cleared under the device's lock, with [`HOLDING`].
static HOLDING_COMPILING: AtomicU64 = AtomicU64::new(0);

/// What was replayed and held since the process began, all devices.
pub(crate) struct Counts {
    /// Launches replayed from one-launch graphs.
    pub(crate) replayed: u64,
    /// One-launch graphs made.
    pub(crate) graphs: u64,
    /// Launches sent within a sequence's graph.
    pub(crate) batched: u64,
    /// Sequence graphs made.
    pub(crate) sequences: u64,
    /// Launches held back while their kernel compiled.
    pub(crate) held_for_compile: u64,
}

/// The counts of [`Counts`].
pub(crate) fn counts() -> Counts {
    let (batched, sequences) = held::counts();
    Counts {
        replayed: REPLAYED.load(Ordering::Relaxed),
        graphs: GRAPHS.load(Ordering::Relaxed),
        batched,
        sequences,
        held_for_compile: HELD_FOR_COMPILE.load(Ordering::Relaxed),
    }
}

/// Whether replay is on (`EMBERFIRE_LAUNCH_REPLAY` is not `0`), read once.
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("EMBERFIRE_LAUNCH_REPLAY").map_or(true, |v| v.trim() != "0"))
}

/// Whether a launch of `grid` on `device` is one to replay: replay is on and the grid has at
/// most one block a multiprocessor.
pub(crate) fn worth_it(device: &Device, grid: (u32, u32, u32)) -> bool {
    let blocks = grid.0 as u64 * grid.1 as u64 * grid.2 as u64;
    blocks <= device.sm_count() as u64 && enabled()
}

/// Sends the launches every device holds back to its stream. Called by everything that is
/// about to queue work on a device's stream or wait for it other than a launch (which sends a
/// device's own). A send that fails is reported by the device's next synchronisation.
pub(crate) fn send_all_held() {
    let mut mask = HOLDING.load(Ordering::Acquire);
    if mask == 0 {
        return;
    }
    // Leave the thread's current context as it was: the caller may be about to use another
    // device's.
    let mut current = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local.
    let known = unsafe { sys::cuCtxGetCurrent(&mut current) }.result().is_ok();
    while mask != 0 {
        let ordinal = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        if let Ok(dev) = runtime::device(ordinal) {
            dev.replays().send_or_keep_error(dev);
        }
    }
    if known {
        // SAFETY: the context that was current (or none), still alive: primary contexts are
        // never torn down.
        let _ = unsafe { sys::cuCtxSetCurrent(current) };
    }
}

enum Entry {
    /// Launched directly this many times so far.
    Seen(u32),
    /// Replayed from its graph.
    Ready(Graph),
    /// Its graph could not be made: always launched directly.
    Direct,
}

struct State {
    shapes: HashMap<Shape, Entry>,
    /// The device's own stream or context was handed to the user: nothing more is held back.
    /// (Read and set under the lock, so a launch is held either before the handing, which
    /// then sends it, or not at all.)
    shared: bool,
    /// Graphs made among `shapes`.
    graphs: usize,
    held: Held,
    /// The first failure of a send no caller could be told of.
    failed: Option<Error>,
}

/// A device's replayed and held launches: the shapes seen, their graphs, and what is held.
pub(crate) struct Replays {
    state: Mutex<State>,
}

impl Default for Replays {
    fn default() -> Replays {
        let state = State {
            shapes: HashMap::new(),
            shared: false,
            graphs: 0,
            held: Held::default(),
            failed: None,
        };
        Replays { state: Mutex::new(state) }
    }
}

/// What [`Replays::launch`] did.
pub(super) enum Outcome {
    /// Queued (or held) from a graph.
    Done,
    /// Left to the caller to launch directly (everything held was sent first).
    Direct,
}

impl Replays {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Launches `kernel` on `stream` from its shape's graph when the shape has one (making it
    /// on the shape's [`REPLAY_AFTER`]-th launch), or holds it back when `hold` and the device
    /// holds launches; [`Outcome::Direct`] when the caller is to launch directly instead (a new
    /// shape, a stream being captured, no room for another graph).
    ///
    /// # Safety
    ///
    /// [`KernelFn::launch`]'s contract, for `args` on `stream`, `device`'s own stream, with
    /// its context current. A held launch takes `args` (leaving them empty), the others leave
    /// them as they were.
    pub(super) unsafe fn launch(
        &self,
        device: &Device,
        kernel: &KernelFn,
        shape: Shape,
        stream: sys::CUstream,
        args: &mut KernelArgs,
        hold: bool,
    ) -> Result<Outcome, Error> {
        let hold = hold && held::batch_len() > 1 && bit(device).is_some();
        let mut guard = self.lock();
        let st = &mut *guard;
        let hold = hold && !st.shared;
        let ready = matches!(st.shapes.get(&shape), Some(Entry::Ready(_)));
        if hold && ready {
            let launch = HeldLaunch { kernel: kernel.clone(), shape, args: std::mem::take(args) };
            // SAFETY: the caller's contract.
            unsafe { st.hold(device, Launch::Replayed(launch)) }?;
            return Ok(Outcome::Done);
        }
        // Whatever this launch becomes, it comes after what is held.
        // SAFETY: the caller's contract.
        unsafe { st.send(device, stream, &|| "a launch replay does not hold".into()) }?;
        let known = st.shapes.len();
        let entry = match st.shapes.entry(shape) {
            hash_map::Entry::Occupied(o) => o.into_mut(),
            hash_map::Entry::Vacant(v) if known < MAX_SHAPES => v.insert(Entry::Seen(0)),
            hash_map::Entry::Vacant(_) => return Ok(Outcome::Direct),
        };
        // A stream that was handed to the user may be being captured into the user's graph,
        // which then records the launches it would without replay.
        let shared = st.shared;
        let check_capture = || -> Result<bool, Error> { Ok(shared && capturing(stream)?) };
        match entry {
            Entry::Direct => Ok(Outcome::Direct),
            Entry::Seen(k) if *k < REPLAY_AFTER || st.graphs >= MAX_GRAPHS => {
                *k = k.saturating_add(1);
                Ok(Outcome::Direct)
            }
            Entry::Seen(_) => {
                if check_capture()? {
                    return Ok(Outcome::Direct);
                }
                // SAFETY: the caller's contract.
                match unsafe { Graph::new([(kernel, shape, &*args)]) } {
                    Ok(g) => {
                        st.graphs += 1;
                        GRAPHS.fetch_add(1, Ordering::Relaxed);
                        // SAFETY: as below, the graph made with these arguments.
                        unsafe { replay(kernel, &mut *entry.insert_ready(g), args, stream) }?;
                        Ok(Outcome::Done)
                    }
                    Err(_) => {
                        *entry = Entry::Direct;
                        Ok(Outcome::Direct)
                    }
                }
            }
            Entry::Ready(g) => {
                if check_capture()? {
                    return Ok(Outcome::Direct);
                }
                // SAFETY: the caller's contract; the shape's graph.
                unsafe { replay(kernel, g, args, stream) }?;
                Ok(Outcome::Done)
            }
        }
    }

    /// Holds back a launch of `kernel`, whose compile has not finished (`ahead.rs`) or which
    /// comes after launches that wait for theirs, for `device`'s own stream, after what is
    /// held already; `false` where nothing may be held
    /// (the stream or context was handed to the user, a device past 64), and the caller is to
    /// wait for the compile and launch. A held launch takes `args`, leaving them empty.
    ///
    /// # Safety
    ///
    /// [`KernelFn::launch`]'s contract, for `args` on `device`'s own stream, its context
    /// current.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn hold_compiling(
        &self,
        device: &Device,
        kernel: &KernelFn,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
        args: &mut KernelArgs,
    ) -> Result<bool, Error> {
        if bit(device).is_none() {
            return Ok(false);
        }
        let mut st = self.lock();
        if st.shared {
            return Ok(false);
        }
        let launch = CompilingLaunch {
            kernel: kernel.clone(),
            grid,
            block,
            shared,
            args: std::mem::take(args),
        };
        HELD_FOR_COMPILE.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract.
        unsafe { st.hold(device, Launch::Compiling(launch)) }?;
        Ok(true)
    }

    /// Whether what `device` holds includes a launch whose kernel was still compiling when it
    /// was held. A launch on the own stream then joins the held ones
    /// ([`hold_compiling`](Self::hold_compiling)) even if its own kernel is loaded: sending
    /// them first would wait for every compile under way, one program's new kernels then
    /// compiling in turns instead of together.
    ///
    /// Read without the lock, on every launch to the own stream: a launch that sees the bit a
    /// moment late either is held behind launches already sent (and goes out with the next
    /// send) or sends them itself, both in order.
    pub(crate) fn waiting_for_compiles(&self, device: &Device) -> bool {
        bit(device).is_some_and(|b| HOLDING_COMPILING.load(Ordering::Acquire) & b != 0)
    }

    /// Sends what `device` holds to its own stream. (With `EMBERFIRE_JIT_TRACE`, a send that
    /// waits for compiles says where it was asked for.)
    #[track_caller]
    pub(crate) fn send(&self, device: &Device) -> Result<(), Error> {
        // (the bit is set whenever something is held, and cleared only once what was held is
        // queued, both under the lock: a thread that sees it clear here, its own held launches
        // included, needs nothing sent)
        if bit(device).is_some_and(|b| HOLDING.load(Ordering::Acquire) & b == 0) {
            return Ok(());
        }
        let mut st = self.lock();
        if st.held.is_empty() {
            return Ok(());
        }
        let at = std::panic::Location::caller();
        device.bind()?;
        // SAFETY: held launches were checked by `launch` and are sent, in order, to the own
        // stream they were held for, with the device's context current.
        unsafe {
            st.send(device, device.stream_id().handle(), &|| format!("{}:{}", at.file(), at.line()))
        }
    }

    /// [`send`](Self::send), keeping a failure for the next synchronisation to report.
    #[track_caller]
    pub(crate) fn send_or_keep_error(&self, device: &Device) {
        if let Err(e) = self.send(device) {
            self.lock().failed.get_or_insert(e);
        }
    }

    /// A send's failure that no caller was told of yet, once.
    pub(crate) fn take_failure(&self) -> Option<Error> {
        self.lock().failed.take()
    }

    /// Marks the device's own stream or context as handed to the user: what is held is sent,
    /// and nothing is held from now on.
    pub(crate) fn share(&self, device: &Device) {
        self.lock().shared = true;
        self.send_or_keep_error(device);
    }
}

impl State {
    /// Holds `launch` back for `device`'s own stream, and sends what is held once that is as
    /// many launches as go out at once.
    ///
    /// # Safety
    ///
    /// [`KernelFn::launch`]'s contract for the launch on `device`'s own stream, its context
    /// current.
    unsafe fn hold(&mut self, device: &Device, launch: Launch) -> Result<(), Error> {
        let compiling = matches!(launch, Launch::Compiling(_));
        let full = self.held.push(launch);
        if let Some(bit) = bit(device) {
            HOLDING.fetch_or(bit, Ordering::Release);
            if compiling {
                HOLDING_COMPILING.fetch_or(bit, Ordering::Release);
            }
        }
        if full {
            let why = || "the limit of launches held".into();
            // SAFETY: the caller's contract.
            unsafe { self.send(device, device.stream_id().handle(), &why) }?;
        }
        Ok(())
    }

    /// Sends the held launches to `stream`; `why` names what asked for it (traced where a
    /// held launch waits for a compile).
    ///
    /// # Safety
    ///
    /// `stream` is `device`'s own, its context current.
    unsafe fn send(
        &mut self,
        device: &Device,
        stream: sys::CUstream,
        why: &dyn Fn() -> String,
    ) -> Result<(), Error> {
        if self.held.is_empty() {
            return Ok(());
        }
        let shapes = &mut self.shapes;
        let one = |l: &HeldLaunch| -> Result<(), Error> {
            let Some(Entry::Ready(g)) = shapes.get_mut(&l.shape) else {
                unreachable!("a launch is held only where its shape has a graph")
            };
            // SAFETY: the launch was checked when held; the shape's graph.
            unsafe { replay(&l.kernel, g, &l.args, stream) }
        };
        let mut direct = Vec::new();
        // SAFETY: the caller's contract; the launches were held for this stream.
        let sent = unsafe { self.held.send(stream, one, &mut direct, why) };
        // A launch sent directly once its compile finished counts as a direct launch of its
        // shape, as it would have been without compiling ahead.
        for shape in direct {
            self.seen_directly(device, shape);
        }
        // Only now, with every held launch queued (or failed and its error kept): a thread that
        // sees the bit clear without the lock queues its work after them.
        if let Some(bit) = bit(device) {
            HOLDING_COMPILING.fetch_and(!bit, Ordering::Release);
            HOLDING.fetch_and(!bit, Ordering::Release);
        }
        sent
    }

    /// Counts a launch of `shape` made directly on the own stream, where it is one to replay.
    fn seen_directly(&mut self, device: &Device, shape: Shape) {
        if !worth_it(device, shape.grid) {
            return;
        }
        let known = self.shapes.len();
        match self.shapes.entry(shape) {
            hash_map::Entry::Occupied(o) => {
                if let Entry::Seen(k) = o.into_mut() {
                    *k = k.saturating_add(1);
                }
            }
            hash_map::Entry::Vacant(v) if known < MAX_SHAPES => {
                v.insert(Entry::Seen(1));
            }
            hash_map::Entry::Vacant(_) => {}
        }
    }
}

impl Entry {
    /// Makes this entry the shape's graph `g` and returns it.
    fn insert_ready(&mut self, g: Graph) -> &mut Graph {
        *self = Entry::Ready(g);
        match self {
            Entry::Ready(g) => g,
            _ => unreachable!("just made ready"),
        }
    }
}

/// Replays `kernel`'s launch from its shape's one-launch graph `g` with `args` on `stream`.
///
/// # Safety
///
/// [`KernelFn::launch`]'s contract for `args` on `stream`, the kernel's context current.
unsafe fn replay(
    kernel: &KernelFn,
    g: &mut Graph,
    args: &KernelArgs,
    stream: sys::CUstream,
) -> Result<(), Error> {
    let what = || format!("replaying kernel `{}`", kernel.entry());
    // SAFETY: the caller's contract; a graph of one launch of this kernel.
    unsafe {
        g.set_args(0, args).map_err(|e| driver_error(&what(), e))?;
        g.launch(stream).map_err(|e| driver_error(&what(), e))?;
    }
    REPLAYED.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// `device`'s bit in [`HOLDING`]; devices past 64 hold nothing back.
fn bit(device: &Device) -> Option<u64> {
    (device.ordinal() < 64).then(|| 1u64 << device.ordinal())
}

/// Whether `stream` is being captured into a graph.
fn capturing(stream: sys::CUstream) -> Result<bool, Error> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a live stream and an out-pointer to a local.
    unsafe { sys::cuStreamIsCapturing(stream, &mut status) }
        .result()
        .map_err(|e| driver_error("asking whether the stream is captured", e))?;
    Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}
