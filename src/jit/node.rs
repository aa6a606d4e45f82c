//! A node of the lazy expression graph: either ready data or an operation on other nodes.
//!
//! Nodes are shared (`Arc`) between arrays and between trees. When a lazy node is evaluated its
//! state is replaced by the data, so every array and every tree that holds it sees the result
//! and its inputs can be freed.

use std::sync::{Arc, RwLock};

use super::index_map::IndexMap;
use super::op::{BinOp, UnOp};
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error_handler::OrRaise;
use crate::storage::HostVec;

/// Ready data: a buffer and the position of this array's elements inside it.
#[derive(Clone, Debug)]
pub(crate) struct Data {
    pub buf: Arc<Buffer>,
    /// Offset of element (0,0,0,0), in elements.
    pub offset: usize,
    /// Distance in elements between neighbours along each dimension.
    pub strides: [i64; 4],
}

impl Data {
    /// A whole buffer holding an array of shape `dims` densely in column-major order.
    pub(crate) fn dense(buf: Buffer, dims: Dim4) -> Data {
        let c = dims.strides();
        Data { buf: Arc::new(buf), offset: 0, strides: std::array::from_fn(|k| c[k] as i64) }
    }

    /// True when the elements are stored densely in column-major order for `dims`.
    pub(crate) fn is_contiguous(&self, dims: Dim4) -> bool {
        let c = dims.strides();
        (0..4).all(|d| dims[d] <= 1 || self.strides[d] == c[d] as i64)
    }
}

/// What a lazy node computes.
#[derive(Clone, Debug)]
pub(crate) enum Expr {
    /// One value, broadcast to the node's shape (held as a one-element vector).
    Scalar(HostVec),
    /// The index along a dimension.
    Range(u8),
    /// The linear index within a block of the given shape, repeated over the node's shape.
    Iota([u64; 4]),
    Unary(UnOp, Arc<Node>),
    Binary(BinOp, Arc<Node>, Arc<Node>),
    Cast(Arc<Node>),
    /// `cond ? a : b`, children in that order.
    Select(Arc<Node>, Arc<Node>, Arc<Node>),
    /// Ready data read through an index map (`tile`, `shift`, `pad`): a leaf.
    Mapped(Data, IndexMap),
}

impl Expr {
    /// The children of this expression, in order.
    pub(crate) fn children(&self) -> Vec<&Arc<Node>> {
        match self {
            Expr::Scalar(_) | Expr::Range(_) | Expr::Iota(_) | Expr::Mapped(..) => vec![],
            Expr::Unary(_, a) | Expr::Cast(a) => vec![a],
            Expr::Binary(_, a, b) => vec![a, b],
            Expr::Select(c, a, b) => vec![c, a, b],
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum State {
    Ready(Data),
    Lazy { expr: Expr, height: u32, leaves: u32 },
}

/// A vertex of the expression graph.
#[derive(Debug)]
pub(crate) struct Node {
    pub dtype: DType,
    pub dims: Dim4,
    pub backend: BackendKind,
    state: RwLock<State>,
}

/// A tree taller than this is evaluated as soon as it is built, so loops such as `b = &b + &c`
/// neither grow the graph without bound nor compile a kernel per iteration beyond this count.
pub(crate) const MAX_HEIGHT: u32 = 32;
/// A tree reading more leaves than this is evaluated as soon as it is built; it keeps the
/// parameter list of a generated kernel within the launch limit even if every input is strided.
pub(crate) const MAX_LEAVES: u32 = 48;

impl Node {
    /// A node holding ready data.
    pub(crate) fn ready(dtype: DType, dims: Dim4, backend: BackendKind, data: Data) -> Arc<Node> {
        Arc::new(Node { dtype, dims, backend, state: RwLock::new(State::Ready(data)) })
    }

    /// A lazy node. Returns it unevaluated unless it exceeds the height or leaf budget, in which
    /// case its children are evaluated first so that the new node is a shallow tree.
    pub(crate) fn lazy(dtype: DType, dims: Dim4, backend: BackendKind, expr: Expr) -> Arc<Node> {
        let (mut height, mut leaves) = (0u32, 0u32);
        for c in expr.children() {
            let (h, l) = c.height_leaves();
            height = height.max(h + 1);
            leaves += l;
        }
        if matches!(expr, Expr::Scalar(_) | Expr::Range(_) | Expr::Iota(_)) {
            leaves = 1;
        }
        if let Expr::Mapped(..) = expr {
            leaves = super::index_map::MAPPED_LEAF_WEIGHT;
        }
        let too_big = height > MAX_HEIGHT || leaves > MAX_LEAVES;
        if too_big && !super::evaluation::is_manual_eval() {
            for c in expr.children() {
                c.eval();
            }
            height = 1;
            leaves = expr.children().len() as u32;
        }
        Arc::new(Node {
            dtype,
            dims,
            backend,
            state: RwLock::new(State::Lazy { expr, height, leaves }),
        })
    }

    /// Height of the tree (0 for data) and the number of leaves it reads.
    pub(crate) fn height_leaves(&self) -> (u32, u32) {
        match &*self.state.read().unwrap() {
            State::Ready(_) => (0, 1),
            State::Lazy { height, leaves, .. } => (*height, *leaves),
        }
    }

    /// A snapshot of the state (cheap: clones `Arc`s).
    pub(crate) fn state(&self) -> State {
        self.state.read().unwrap().clone()
    }

    /// The data if the node is ready.
    pub(crate) fn data(&self) -> Option<Data> {
        match &*self.state.read().unwrap() {
            State::Ready(d) => Some(d.clone()),
            State::Lazy { .. } => None,
        }
    }

    /// Replaces the state with evaluated data, dropping the expression and its children.
    pub(crate) fn set_ready(&self, data: Data) {
        *self.state.write().unwrap() = State::Ready(data);
    }

    /// The state, for a caller that holds the only reference to the node (`Arc::get_mut`):
    /// how assignment reaches a buffer that nothing else can observe, to write it in place.
    pub(crate) fn state_mut(&mut self) -> &mut State {
        self.state.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// Evaluates the node if it is lazy and returns its data; panics if the backend fails.
    pub(crate) fn eval(self: &Arc<Self>) -> Data {
        self.try_eval().or_raise("evaluation failed")
    }

    /// Evaluates the node if it is lazy and returns its data.
    pub(crate) fn try_eval(self: &Arc<Self>) -> Result<Data, crate::error::Error> {
        if let Some(d) = self.data() {
            return Ok(d);
        }
        super::evaluation::eval_nodes(std::slice::from_ref(self))?;
        Ok(self.data().expect("internal error: node not ready after evaluation"))
    }
}
