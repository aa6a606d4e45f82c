//! Launches replayed from CUDA graphs.
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

use std::collections::hash_map::{self, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{sys, DriverError};

use super::loaded::KernelFn;
use crate::backend::cuda::driver_error;
use crate::backend::cuda::runtime::Device;
use crate::error::Error;

/// Direct launches of a shape before its graph is made: a shape launched once or twice (a
/// program's setup) costs no graph.
const REPLAY_AFTER: u32 = 2;
/// Graphs a device keeps; shapes past them are launched directly.
const MAX_GRAPHS: usize = 256;
/// Shapes a device counts launches of; shapes past them are launched directly.
const MAX_SHAPES: usize = 4096;

/// Launches made from graphs, and graphs made, in the whole process.
static REPLAYED: AtomicU64 = AtomicU64::new(0);
static GRAPHS: AtomicU64 = AtomicU64::new(0);

/// (launches replayed from graphs, graphs made) since the process began, all devices.
pub(crate) fn counts() -> (u64, u64) {
    (REPLAYED.load(Ordering::Relaxed), GRAPHS.load(Ordering::Relaxed))
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

/// What a graph replays: a kernel and its launch's shape.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    func: usize,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared: u32,
}

enum Entry {
    /// Launched directly this many times so far.
    Seen(u32),
    /// Replayed from its graph.
    Ready(Graph),
    /// Its graph could not be made: always launched directly.
    Direct,
}

/// A graph of one kernel launch, ready to launch.
struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    /// Keeps the kernel's module loaded while the graph can launch it.
    _kernel: KernelFn,
}

// SAFETY: the handles are the driver's, valid on any thread of the process; every use of one is
// under the `Replays` lock.
unsafe impl Send for Graph {}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: made by `Graph::new` and used by nothing else; launches already queued keep
        // what they need (the driver defers the release until they have run).
        unsafe {
            let _ = sys::cuGraphExecDestroy(self.exec);
            let _ = sys::cuGraphDestroy(self.graph);
        }
    }
}

impl Graph {
    /// A graph holding the launch `p` describes (its arguments too), instantiated.
    ///
    /// # Safety
    ///
    /// `p` describes a launch that [`KernelFn::launch`]'s contract allows, the device's context
    /// current.
    unsafe fn new(
        kernel: &KernelFn,
        p: &sys::CUDA_KERNEL_NODE_PARAMS,
    ) -> Result<Graph, DriverError> {
        let mut graph = std::ptr::null_mut();
        // SAFETY: out-pointers to locals; `p` as the caller promises.
        unsafe {
            sys::cuGraphCreate(&mut graph, 0).result()?;
            let mut node = std::ptr::null_mut();
            let mut exec = std::ptr::null_mut();
            let made = sys::cuGraphAddKernelNode_v2(&mut node, graph, std::ptr::null(), 0, p)
                .result()
                .and_then(|()| sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0).result());
            if let Err(e) = made {
                let _ = sys::cuGraphDestroy(graph);
                return Err(e);
            }
            Ok(Graph { graph, exec, node, _kernel: kernel.clone() })
        }
    }
}

/// A device's replayed launches: the shapes seen and their graphs.
#[derive(Default)]
pub(crate) struct Replays {
    shapes: Mutex<HashMap<Shape, Entry>>,
    graphs: AtomicUsize,
}

impl Replays {
    /// Launches `kernel` on `stream` from its shape's graph when the shape has one (making it
    /// on the shape's [`REPLAY_AFTER`]-th launch); `Ok(false)` when the caller is to launch
    /// directly instead (a new shape, a stream being captured, no room for another graph).
    ///
    /// # Safety
    ///
    /// [`KernelFn::launch`]'s contract, for `params` (one pointer a parameter) on `stream`, the
    /// device's own stream, with the device's context current.
    pub(crate) unsafe fn launch(
        &self,
        kernel: &KernelFn,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
        stream: sys::CUstream,
        params: &mut [*mut std::ffi::c_void],
    ) -> Result<bool, Error> {
        let func = kernel.cu_function();
        let shape = Shape { func: func as usize, grid, block, shared };
        let mut shapes = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        let known = shapes.len();
        let entry = match shapes.entry(shape) {
            hash_map::Entry::Occupied(o) => o.into_mut(),
            hash_map::Entry::Vacant(v) if known < MAX_SHAPES => v.insert(Entry::Seen(0)),
            hash_map::Entry::Vacant(_) => return Ok(false),
        };
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func,
            gridDimX: grid.0,
            gridDimY: grid.1,
            gridDimZ: grid.2,
            blockDimX: block.0,
            blockDimY: block.1,
            blockDimZ: block.2,
            sharedMemBytes: shared,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let fresh = match entry {
            Entry::Direct => return Ok(false),
            Entry::Seen(k)
                if *k < REPLAY_AFTER || self.graphs.load(Ordering::Relaxed) >= MAX_GRAPHS =>
            {
                *k = k.saturating_add(1);
                return Ok(false);
            }
            Entry::Seen(_) => {
                if capturing(stream)? {
                    return Ok(false);
                }
                // SAFETY: the caller's contract.
                match unsafe { Graph::new(kernel, &p) } {
                    Ok(g) => {
                        *entry = Entry::Ready(g);
                        self.graphs.fetch_add(1, Ordering::Relaxed);
                        GRAPHS.fetch_add(1, Ordering::Relaxed);
                        true
                    }
                    Err(_) => {
                        *entry = Entry::Direct;
                        return Ok(false);
                    }
                }
            }
            Entry::Ready(_) => {
                if capturing(stream)? {
                    return Ok(false);
                }
                false
            }
        };
        let Entry::Ready(g) = entry else { unreachable!("a shape with a graph") };
        let what = || format!("replaying kernel `{}`", kernel.entry());
        // SAFETY: the node is the graph's one kernel node, `p` its kernel with new arguments
        // (the driver copies them); the exec is launched on the caller's live stream.
        unsafe {
            if !fresh {
                sys::cuGraphExecKernelNodeSetParams_v2(g.exec, g.node, &p)
                    .result()
                    .map_err(|e| driver_error(&what(), e))?;
            }
            sys::cuGraphLaunch(g.exec, stream).result().map_err(|e| driver_error(&what(), e))?;
        }
        REPLAYED.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }
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
