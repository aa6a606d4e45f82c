//! Where sorting and sets run. `ops::sort` and `ops::set` check their arguments and call these
//! dispatchers with graph nodes; each backend returns new dense buffers.
//!
//! - The CPU sorts host data with its radix engine (`cpu::sort`, `cpu::radix`): a dense array
//!   is read in place, segments along any dimension are sorted where they lie.
//! - CUDA sorts on the device (`cuda::sort`) in segments of consecutive elements, so an array
//!   sorted along a dimension after one longer than 1 is first copied with that dimension first,
//!   and the result copied back (`cuda::sort_layout`). The set functions sort and compact on
//!   the device; only they wait for it, since the result's length decides its shape.

use std::sync::Arc;

use super::Buffer;
use crate::error::Error;
use crate::jit::Node;

/// Which set a [`BackendKind::set`] call computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SetOp {
    /// The distinct elements of one input.
    Unique,
    /// The distinct elements of both inputs together.
    Union,
    /// The distinct elements present in both inputs.
    Intersect,
}

/// The layout of the segments along `dim` of a column-major shape: `count` segments of `len`
/// elements `stride` apart; segment `s` starts at `(s / stride) * len * stride + s % stride`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segments {
    pub(crate) len: usize,
    pub(crate) stride: usize,
    pub(crate) count: usize,
}

impl Segments {
    /// The segments along `dim` of an array of shape `dims`.
    pub(crate) fn along(dims: [usize; 4], dim: usize) -> Segments {
        let len = dims[dim];
        let stride: usize = dims[..dim].iter().product();
        let outer: usize = dims[dim + 1..].iter().product();
        Segments { len, stride, count: stride * outer }
    }

    /// Position of element `j` of segment `s`.
    #[inline(always)]
    pub(crate) fn at(&self, s: usize, j: usize) -> usize {
        (s / self.stride) * self.len * self.stride + s % self.stride + j * self.stride
    }
}

/// Sorts and sets on one backend. `func` names the public function in panics.
pub(crate) trait Sort {
    /// `node` sorted along `dim` (stable, NaN last in both directions) as a new dense buffer of
    /// its shape, and with `with_index` each element's position along `dim` (u32).
    fn sort(
        &self,
        func: &str,
        node: &Arc<Node>,
        dim: usize,
        descending: bool,
        with_index: bool,
    ) -> Result<(Buffer, Option<Buffer>), Error>;

    /// `keys` sorted along `dim`, and `vals` (same shape, any type) moved with them.
    fn sort_by_key(
        &self,
        func: &str,
        keys: &Arc<Node>,
        vals: &Arc<Node>,
        dim: usize,
        descending: bool,
    ) -> Result<(Buffer, Buffer), Error>;

    /// The set `op` of the elements of `a` (and `b`, for a union or intersection), read flat:
    /// sorted ascending and distinct, as a new buffer, with its length.
    fn set(
        &self,
        func: &str,
        op: SetOp,
        a: &Arc<Node>,
        b: Option<&Arc<Node>>,
    ) -> Result<(Buffer, usize), Error>;
}
