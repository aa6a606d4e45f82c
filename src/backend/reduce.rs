//! The reduction family. Both backends reduce fused with the producer: the CPU folds the
//! evaluator's chunks (`cpu::reduce`), CUDA generates one kernel from the producer's program
//! (`cuda::reduce`). The producer node is never evaluated on its own; on the CPU, lazy
//! operations under it that an array holds are stored by the same pass.

use std::sync::Arc;

use super::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Node;
use crate::storage::HostVec;

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reduction {
    Sum,
    Product,
    Min,
    Max,
    AllTrue,
    AnyTrue,
    Count,
    /// Sum with NaN replaced by the value.
    SumNan(f64),
    /// Product with NaN replaced by the value.
    ProductNan(f64),
}

/// Which extreme an index reduction looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IndexOp {
    Min,
    Max,
}

/// Reductions on one backend. Each takes the lazy (or ready) producer node and folds it
/// fused: the producer is never stored on its own.
pub(crate) trait Reduce {
    /// Reduces `node` along `dim` into a new buffer of this backend holding `out` elements
    /// in the node's shape with `dim` set to 1.
    fn reduce_dim(
        &self,
        node: &Arc<Node>,
        op: Reduction,
        dim: usize,
        out: DType,
    ) -> Result<Buffer, Error>;

    /// Reduces each of `roots` (lazy or ready nodes of one shape) along `dim`, root `k` by
    /// `ops[k]` (the reduction and its output type), in one pass over the trees, so that the
    /// sub-expressions they share are computed once per element; one new buffer per root, in
    /// order. The roots are siblings that `backend::siblings` grouped: together they fit one
    /// program.
    fn reduce_dim_siblings(
        &self,
        roots: &[Arc<Node>],
        ops: &[(Reduction, DType)],
        dim: usize,
    ) -> Result<Vec<Buffer>, Error>;

    /// Reduces every element of `node` to one value of type `out`, returned to the host.
    fn reduce_all(&self, node: &Arc<Node>, op: Reduction, out: DType) -> Result<HostVec, Error>;

    /// `imin`/`imax` along `dim`: the extreme values (of the node's type) and their u32
    /// positions along `dim`, as two new buffers of this backend.
    fn reduce_dim_index(
        &self,
        node: &Arc<Node>,
        op: IndexOp,
        dim: usize,
    ) -> Result<(Buffer, Buffer), Error>;

    /// `imin_all`/`imax_all`: the extreme value and its linear position, on the host.
    fn reduce_all_index(&self, node: &Arc<Node>, op: IndexOp) -> Result<(HostVec, u32), Error>;
}
