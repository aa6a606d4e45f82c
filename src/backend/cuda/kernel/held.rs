//! Launches held back, then sent to the device together as one graph.
//!
//! A graph launches a chain of kernels for much less of the host's time each than launching
//! them one by one (ten small kernels: 1.3 us each against 2.4 replayed alone and 3.8-4.0 by
//! `cuLaunchKernel`, `benches/gpu/launch_floor.cu`). So the small launches of element-wise
//! evaluations on the device's own stream are held here instead of queued (see `replay.rs`
//! for which, and for everything that sends them first), up to [`batch_len`] of them. A
//! sequence of held launches (their shapes in order) sent again and again, such as the
//! operations of a loop's iteration, gets a graph of its own from its third time on and is
//! then sent as one graph launch with the arguments that changed; any other sequence goes out
//! launch by launch through the one-launch graphs of `replay.rs`.

use std::collections::hash_map::{self, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use cudarc::driver::sys;

use super::args::KernelArgs;
use super::graph::{Graph, Shape};
use super::loaded::KernelFn;
use super::nvrtc::trace_event;
use crate::backend::cuda::driver_error;
use crate::error::Error;

/// Times a sequence is sent launch by launch before it gets its graph.
const SEQUENCE_AFTER: u32 = 2;
/// Sequence graphs a device keeps; others go out launch by launch.
const MAX_SEQUENCES: usize = 64;
/// Sequences a device counts; others go out launch by launch.
const MAX_SEQUENCES_SEEN: usize = 1024;
/// Held launches sent at once when nothing else sends them first.
const DEFAULT_BATCH: usize = 16;

/// Launches sent as part of a sequence's graph, and sequence graphs made, in the process.
static BATCHED: AtomicU64 = AtomicU64::new(0);
static SEQUENCE_GRAPHS: AtomicU64 = AtomicU64::new(0);

/// (launches sent within a sequence's graph, sequence graphs made) since the process began.
pub(crate) fn counts() -> (u64, u64) {
    (BATCHED.load(Ordering::Relaxed), SEQUENCE_GRAPHS.load(Ordering::Relaxed))
}

/// How many launches are held at most before they are sent (`EMBERFIRE_LAUNCH_BATCH`, read
/// once; 0 or 1 holds none back).
pub(crate) fn batch_len() -> usize {
    static LEN: OnceLock<usize> = OnceLock::new();
    *LEN.get_or_init(|| {
        std::env::var("EMBERFIRE_LAUNCH_BATCH")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(DEFAULT_BATCH, |n| n.min(1024))
    })
}

/// Held launches at most while any of them waits for its kernel's compile (`ahead.rs`): a
/// program's first run holds every launch from its first new kernel on, so that the compiles
/// of the kernels after it run at the same time. The limit is high so that a loop's later new
/// kernels are met before anything waits: with 256, cg_poisson's hundred iterations sent their
/// held launches twice before the end, and the kernels met after each send compiled in waves
/// of their own; with 4096 all thirteen are met within 28 ms and compile together (an H100,
/// 2026-12-07). A held launch keeps its arguments, a few hundred bytes.
/// `EMBERFIRE_HELD_COMPILING` (read once, 16 to 65536) names another limit for measuring.
fn max_held_compiling() -> usize {
    static LEN: OnceLock<usize> = OnceLock::new();
    *LEN.get_or_init(|| {
        std::env::var("EMBERFIRE_HELD_COMPILING")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .map_or(DEFAULT_HELD_COMPILING, |n| n.clamp(16, 65_536))
    })
}

const DEFAULT_HELD_COMPILING: usize = 4096;

/// A launch held back: its kernel, shape and arguments.
pub(super) struct HeldLaunch {
    pub(super) kernel: KernelFn,
    pub(super) shape: Shape,
    pub(super) args: KernelArgs,
}

/// A launch of a kernel that was still compiling when it was held: sent directly, once the
/// kernel is loaded, rather than from a graph.
pub(super) struct CompilingLaunch {
    pub(super) kernel: KernelFn,
    pub(super) grid: (u32, u32, u32),
    pub(super) block: (u32, u32, u32),
    pub(super) shared: u32,
    pub(super) args: KernelArgs,
}

/// Either kind of held launch.
pub(super) enum Launch {
    Replayed(HeldLaunch),
    Compiling(CompilingLaunch),
}

enum Sequence {
    /// Sent launch by launch this many times so far.
    Seen(u32),
    /// Sent as its graph.
    Ready(Graph),
    /// Its graph could not be made: always sent launch by launch.
    Direct,
}

/// A device's held launches and the sequences of them seen.
#[derive(Default)]
pub(super) struct Held {
    launches: Vec<Launch>,
    /// Of `launches`, those of kernels still compiling when held.
    compiling: usize,
    sequences: HashMap<Vec<Shape>, Sequence>,
    graphs: usize,
}

impl Held {
    /// Whether nothing is held.
    pub(super) fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// Holds a launch; returns whether as many are held as are sent at once: a batch, or
    /// [`max_held_compiling`] while any held launch waits for a compile.
    pub(super) fn push(&mut self, launch: Launch) -> bool {
        self.compiling += matches!(launch, Launch::Compiling(_)) as usize;
        self.launches.push(launch);
        let limit = if self.compiling > 0 { max_held_compiling() } else { batch_len() };
        self.launches.len() >= limit
    }

    /// Sends every held launch to `stream` in the order held: as the sequence's graph where it
    /// has one, else each through `one` (which replays a launch from its shape's graph), and
    /// those held while their kernel compiled directly, their shapes added to `direct`. A
    /// send that waits for compiles is traced with `why`, what asked for it.
    ///
    /// # Safety
    ///
    /// `stream` is the live stream the launches were held for, their context current; every
    /// launch was one [`KernelFn::launch`]'s contract allows, and what it uses is still
    /// allocated (memory freed since is reused only in the stream's order).
    pub(super) unsafe fn send(
        &mut self,
        stream: sys::CUstream,
        mut one: impl FnMut(&HeldLaunch) -> Result<(), Error>,
        direct: &mut Vec<Shape>,
        why: &dyn Fn() -> String,
    ) -> Result<(), Error> {
        let launches = std::mem::take(&mut self.launches);
        let compiling = std::mem::take(&mut self.compiling);
        if compiling > 0 {
            trace_event(|| {
                format!(
                    "sending {} held launches, {compiling} of them held for their compiles, for {}",
                    launches.len(),
                    why()
                )
            });
            // A first run's launches: each in turn, once its kernel is loaded.
            return launches.into_iter().try_for_each(|l| match l {
                Launch::Replayed(l) => one(&l),
                Launch::Compiling(mut l) => {
                    // SAFETY: the caller's contract.
                    direct.push(unsafe { l.send(stream) }?);
                    Ok(())
                }
            });
        }
        // (none is compiling: every launch is a replayed one)
        let replayed = || {
            launches.iter().map(|l| match l {
                Launch::Replayed(l) => l,
                Launch::Compiling(_) => unreachable!("counted in `compiling`"),
            })
        };
        if launches.len() > 1 {
            let key: Vec<Shape> = replayed().map(|l| l.shape).collect();
            let known = self.sequences.len();
            let entry = match self.sequences.entry(key) {
                hash_map::Entry::Occupied(o) => Some(o.into_mut()),
                hash_map::Entry::Vacant(v) if known < MAX_SEQUENCES_SEEN => {
                    Some(v.insert(Sequence::Seen(0)))
                }
                hash_map::Entry::Vacant(_) => None,
            };
            if let Some(entry) = entry {
                if let Sequence::Seen(k) = entry {
                    if *k >= SEQUENCE_AFTER && self.graphs < MAX_SEQUENCES {
                        let parts = replayed().map(|l| (&l.kernel, l.shape, &l.args));
                        // SAFETY: the caller's contract.
                        *entry = match unsafe { Graph::new(parts) } {
                            Ok(g) => {
                                self.graphs += 1;
                                SEQUENCE_GRAPHS.fetch_add(1, Ordering::Relaxed);
                                Sequence::Ready(g)
                            }
                            Err(_) => Sequence::Direct,
                        };
                    } else {
                        *k = k.saturating_add(1);
                    }
                }
                if let Sequence::Ready(g) = entry {
                    let len = g.len();
                    let what = || format!("sending {len} launches as a graph");
                    // SAFETY: the caller's contract; the graph holds these shapes in order.
                    unsafe {
                        for (i, l) in replayed().enumerate() {
                            g.set_args(i, &l.args).map_err(|e| driver_error(&what(), e))?;
                        }
                        g.launch(stream).map_err(|e| driver_error(&what(), e))?;
                    }
                    BATCHED.fetch_add(launches.len() as u64, Ordering::Relaxed);
                    return Ok(());
                }
            }
        }
        replayed().try_for_each(&mut one)
    }
}

impl CompilingLaunch {
    /// Waits for the kernel's compile, loads it and launches it on `stream`; returns the
    /// launch's shape.
    ///
    /// # Safety
    ///
    /// [`Held::send`]'s contract.
    unsafe fn send(&mut self, stream: sys::CUstream) -> Result<Shape, Error> {
        self.kernel.ready()?;
        let mut params = self.args.pointers();
        // SAFETY: the caller's contract; `params` point into `self.args`, which outlives the
        // call; the kernel is loaded and kept loaded by `self.kernel`.
        unsafe {
            cudarc::driver::result::launch_kernel(
                self.kernel.cu_function(),
                self.grid,
                self.block,
                self.shared,
                stream,
                &mut params,
            )
        }
        .map_err(|e| driver_error(&format!("launching kernel `{}`", self.kernel.entry()), e))?;
        Ok(Shape::of(&self.kernel, self.grid, self.block, self.shared))
    }
}
