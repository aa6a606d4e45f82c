//! CUDA kernels: how every kernel emberfire runs is found, compiled, cached and launched.
//!
//! The path of a launch: the family (element-wise, reduction, sort, ...) makes a
//! [`KernelKey`] from what its variants differ in, and asks the device's [`KernelCache`]. On
//! the key's first use the family writes its CUDA C source (generated, or a `.cu` file of
//! `backend/cuda/kernels/` with a few `#define`s in front), which is read from the disk cache
//! or compiled with NVRTC, loaded into the device as a [`KernelFn`], and kept under the key.
//! The launch packs its parameter values into [`KernelArgs`] and queues the kernel on the
//! thread's current stream.
//!
//! - `cache.rs`: keys and the one in-memory cache per device, with its counters;
//! - `nvrtc.rs`: loading NVRTC, the compile target and options, compiling one source;
//! - `ahead.rs`: compiles on threads of their own, so that a launch does not wait for one;
//! - `disk.rs`: the disk cache's directory, file names, keys and file format;
//! - `loaded.rs`: a kernel, loaded or compiling, and its launch;
//! - `replay.rs`: launches of a shape made before, replayed from a one-node graph, and
//!   which launches are held back, and what sends them;
//! - `held.rs`: held launches, sent together as one graph;
//! - `graph.rs`: a chain of launches as a graph, launched again with new arguments;
//! - `args.rs`: packing parameter values;
//! - `grid.rs`: the grid of a grid-stride kernel;
//! - `stats.rs`: the counts `emberfire::jit_stats()` reports.
//!
//! A new hand-written kernel family is a `.cu` file, a [`Family`] variant, and a few lines
//! that make its key and source (see `backend/cuda/copy.rs` for the smallest).

mod ahead;
mod args;
mod cache;
pub(crate) mod disk;
mod graph;
mod grid;
mod held;
mod loaded;
pub(crate) mod nvrtc;
pub(crate) mod replay;
mod stats;

pub(crate) use args::{KernelArgs, KernelParam};
pub(crate) use cache::{Family, KernelCache, KernelKey};
pub(crate) use grid::grid_stride_blocks;
pub(crate) use loaded::KernelFn;
pub(crate) use nvrtc::Origin;
pub(crate) use stats::jit_stats;
pub use stats::JitStats;
