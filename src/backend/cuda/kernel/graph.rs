//! A chain of kernel launches as an instantiated CUDA graph, launched again with new
//! arguments: what replayed launches (`replay.rs`) and held-back sequences of them are sent as.

use std::ffi::c_void;

use cudarc::driver::{sys, DriverError};

use super::args::KernelArgs;
use super::loaded::KernelFn;

/// What a graph node launches: a kernel and its launch's shape (grid, block, dynamic shared
/// memory). Two launches of one shape can share a node, taking turns with their arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Shape {
    pub(super) func: usize,
    pub(super) grid: (u32, u32, u32),
    pub(super) block: (u32, u32, u32),
    pub(super) shared: u32,
}

impl Shape {
    /// The shape of a launch of `kernel`.
    pub(super) fn of(
        kernel: &KernelFn,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared: u32,
    ) -> Shape {
        Shape { func: kernel.cu_function() as usize, grid, block, shared }
    }

    /// The node parameters of a launch of this shape whose parameter values `params` point to.
    fn node_params(&self, params: &mut [*mut c_void]) -> sys::CUDA_KERNEL_NODE_PARAMS {
        sys::CUDA_KERNEL_NODE_PARAMS {
            func: self.func as sys::CUfunction,
            gridDimX: self.grid.0,
            gridDimY: self.grid.1,
            gridDimZ: self.grid.2,
            blockDimX: self.block.0,
            blockDimY: self.block.1,
            blockDimZ: self.block.2,
            sharedMemBytes: self.shared,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        }
    }
}

/// One launch of a graph: its node, shape and the arguments the instantiated graph holds now.
struct Node {
    node: sys::CUgraphNode,
    shape: Shape,
    args: KernelArgs,
}

/// Launches in a chain (each after the one before), instantiated and ready to launch.
pub(super) struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: Vec<Node>,
    /// Keep the kernels' modules loaded while the graph can launch them.
    _kernels: Vec<KernelFn>,
}

// SAFETY: the handles are the driver's, valid on any thread of the process; every use of a
// graph is under its owner's lock.
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
    /// A graph of `launches` (kernel, shape, arguments) in order, instantiated.
    ///
    /// # Safety
    ///
    /// Each launch is one [`KernelFn::launch`]'s contract allows, with the kernels' context
    /// current.
    pub(super) unsafe fn new<'a>(
        launches: impl IntoIterator<Item = (&'a KernelFn, Shape, &'a KernelArgs)>,
    ) -> Result<Graph, DriverError> {
        let mut graph = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local.
        unsafe { sys::cuGraphCreate(&mut graph, 0) }.result()?;
        let mut g =
            Graph { graph, exec: std::ptr::null_mut(), nodes: Vec::new(), _kernels: Vec::new() };
        for (kernel, shape, args) in launches {
            let mut args = args.clone();
            let mut params = args.pointers();
            let p = shape.node_params(&mut params);
            let before = g.nodes.last().map(|n| n.node);
            let (deps, count) = match &before {
                Some(n) => (n as *const sys::CUgraphNode, 1),
                None => (std::ptr::null(), 0),
            };
            let mut node = std::ptr::null_mut();
            // SAFETY: a live graph, dependencies among its nodes, `p` as the caller promises
            // (its values copied by the driver); on failure `g`'s drop destroys the graph.
            unsafe { sys::cuGraphAddKernelNode_v2(&mut node, g.graph, deps, count, &p) }
                .result()?;
            g.nodes.push(Node { node, shape, args });
            g._kernels.push(kernel.clone());
        }
        // SAFETY: a complete graph and an out-pointer.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut g.exec, g.graph, 0) }.result()?;
        Ok(g)
    }

    /// How many launches the graph holds.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Gives launch `i` the arguments `args` for the graph's next launches, where they differ
    /// from those it holds (a loop's launches often repeat them: the same inputs, and outputs
    /// in the memory the last iteration freed).
    ///
    /// # Safety
    ///
    /// `args` fit launch `i`'s kernel as [`KernelFn::launch`]'s contract asks, with the
    /// kernels' context current.
    pub(super) unsafe fn set_args(
        &mut self,
        i: usize,
        args: &KernelArgs,
    ) -> Result<(), DriverError> {
        let n = &mut self.nodes[i];
        if n.args == *args {
            return Ok(());
        }
        let mut fresh = args.clone();
        let mut params = fresh.pointers();
        let p = n.shape.node_params(&mut params);
        // SAFETY: a node of this graph and exec, its own kernel with new values (which the
        // driver copies); launches already queued keep the values they had.
        unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.exec, n.node, &p) }.result()?;
        n.args = fresh;
        Ok(())
    }

    /// Queues the graph's launches on `stream`, after everything queued there before.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the kernels' context, which is current.
    pub(super) unsafe fn launch(&self, stream: sys::CUstream) -> Result<(), DriverError> {
        // SAFETY: a live exec on the caller's stream.
        unsafe { sys::cuGraphLaunch(self.exec, stream) }.result()
    }
}
