//! Nodes whose value an operation other than an element-wise one computes, not yet run: a
//! reduction along a dimension, or a concatenation of such results.
//!
//! Why they wait: reductions that read the same lazy sub-expression (n-body's three sums over
//! one pair expression, a sum beside a maximum of the same input) can share one pass over it,
//! which computes the shared part once per element. A reduction run at the call would compute
//! it once per reduction. So a reduction's node stays pending until something reads it; then
//! the backend layer (`backend::siblings`) runs it together with the pending reductions of the
//! same thread that share part of its input, in one kernel with several outputs on CUDA and one
//! fold on the CPU.
//!
//! The graph layer knows only the shape of this: what a pending node reads (kept for dropping
//! and for finding siblings) and an object of the layer above that computes it ([`Resolve`]).
//! Element-wise operations on a pending node keep it as a leaf, as they keep ready data.

use std::any::Any;
use std::sync::Arc;

use super::Node;
use crate::error::Error;

/// The computation of a pending node, supplied by the layer that created it.
pub(crate) trait Resolve: Send + Sync {
    /// Computes `node` from `inputs` and sets it ready (and may set other pending nodes
    /// ready in the same pass).
    fn resolve(&self, node: &Node, inputs: &[Arc<Node>]) -> Result<(), Error>;

    /// The object itself, for the layer that made it to recognise its own kind.
    fn as_any(&self) -> &dyn Any;
}

/// What a pending node reads and how it is computed.
pub(crate) struct Pending {
    /// The nodes the computation reads (a reduction's input, a concatenation's parts).
    pub inputs: Vec<Arc<Node>>,
    pub work: Box<dyn Resolve>,
}

impl std::fmt::Debug for Pending {
    /// The inputs alone (each printed without its children, see `Node`'s `Debug`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending").field("inputs", &self.inputs).finish_non_exhaustive()
    }
}
