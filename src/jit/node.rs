//! A node of the lazy expression graph: either ready data or an operation on other nodes.
//!
//! Nodes are shared (`Arc`) between arrays and between trees. When a lazy node is evaluated its
//! state is replaced by the data, so every array and every tree that holds it sees the result
//! and its inputs can be freed.
//!
//! A graph may be as deep as a user's loop makes it (manual evaluation puts no bound on it), so
//! nothing here recurses over children: dropping a node frees the tree under it with an
//! explicit stack, and printing a node shows the node alone.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use super::index_map::IndexMap;
use super::memory::Memory;
use super::op::{BinOp, UnOp};
use super::pending::Pending;
use super::sparse::{dense_only_message, SparseParts};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::place::BackendKind;
use crate::random::stream::Draw;
use crate::storage::HostVec;
use crate::sync::{read, write};

/// Ready data: a buffer and the position of this array's elements inside it.
#[derive(Clone, Debug)]
pub(crate) struct Data {
    /// The backend's buffer (`Data::buffer` gives it back to the backend).
    pub buf: Arc<dyn Memory>,
    /// Offset of element (0,0,0,0), in elements.
    pub offset: usize,
    /// Distance in elements between neighbours along each dimension.
    pub strides: [i64; 4],
}

impl Data {
    /// A whole buffer holding an array of shape `dims` densely in column-major order.
    pub(crate) fn dense(buf: impl Memory, dims: Dim4) -> Data {
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
    /// The numbers of a random request (f32 or f64), element `e` of the node (column-major)
    /// being element `e` of the request: computed where a kernel reads them (see
    /// `ops/random.rs`). A leaf.
    Random(Draw),
}

impl Expr {
    /// The children of this expression, in order. No allocation: this runs for every operation
    /// a user writes, and for every node a program is built from.
    pub(crate) fn children(&self) -> impl DoubleEndedIterator<Item = &Arc<Node>> + '_ {
        let c: [Option<&Arc<Node>>; 3] = match self {
            Expr::Scalar(_)
            | Expr::Range(_)
            | Expr::Iota(_)
            | Expr::Mapped(..)
            | Expr::Random(_) => [None; 3],
            Expr::Unary(_, a) | Expr::Cast(a) => [Some(a), None, None],
            Expr::Binary(_, a, b) => [Some(a), Some(b), None],
            Expr::Select(c, a, b) => [Some(c), Some(a), Some(b)],
        };
        c.into_iter().flatten()
    }

    /// What the expression counts for as a leaf in a tree's leaf budget (`MAX_LEAVES`): one
    /// for a value made from nothing, more for a mapped read (its kernel parameters), nothing
    /// for an operation (its children count instead).
    pub(crate) fn leaf_weight(&self) -> u32 {
        match self {
            Expr::Scalar(_) | Expr::Range(_) | Expr::Iota(_) => 1,
            Expr::Mapped(..) => super::index_map::MAPPED_LEAF_WEIGHT,
            Expr::Random(_) => RANDOM_LEAF_WEIGHT,
            Expr::Unary(..) | Expr::Binary(..) | Expr::Cast(_) | Expr::Select(..) => 0,
        }
    }

    /// Gives each child to `f`, by value, consuming the expression.
    fn into_children(self, mut f: impl FnMut(Arc<Node>)) {
        match self {
            Expr::Scalar(_)
            | Expr::Range(_)
            | Expr::Iota(_)
            | Expr::Mapped(..)
            | Expr::Random(_) => {}
            Expr::Unary(_, a) | Expr::Cast(a) => f(a),
            Expr::Binary(_, a, b) => {
                f(a);
                f(b);
            }
            Expr::Select(c, a, b) => {
                f(c);
                f(a);
                f(b);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum State {
    Ready(Data),
    Lazy {
        expr: Expr,
        height: u32,
        leaves: u32,
    },
    /// A sparse matrix (see `jit::sparse`): ready, but with no dense data to read.
    Sparse(Arc<SparseParts>),
    /// A reduction or concatenation not yet run (see `jit::pending`): a leaf to the
    /// element-wise operations that read it, computed when its value is needed.
    Pending(Arc<Pending>),
}

/// A vertex of the expression graph.
pub(crate) struct Node {
    pub dtype: DType,
    pub dims: Dim4,
    pub backend: BackendKind,
    state: RwLock<State>,
    /// Set once a program has computed the node as part of a tree without storing it (see
    /// `Builder::push_recomputed`): a second program that needs it stores it.
    computed: AtomicBool,
    /// For a bool node: set when every byte it holds is known to be 0 or 1 (a comparison, a
    /// logical operation, a cast to bool, host data checked on upload). Unset means "not
    /// known", since arithmetic on bools keeps counts in the bytes (see `storage`). DLPack
    /// export reads it to decide whether a bool array needs normalising first.
    clean_bools: AtomicBool,
}

/// A tree taller than this is evaluated as soon as it is built, so loops such as `b = &b + &c`
/// neither grow the graph without bound nor compile a kernel per iteration beyond this count.
pub(crate) const MAX_HEIGHT: u32 = 32;
/// A tree reading more leaves than this is evaluated as soon as it is built; it keeps the
/// parameter list of a generated kernel within the launch limit even if every input is strided.
pub(crate) const MAX_LEAVES: u32 = 48;
/// The most outputs one program computes: with `MAX_LEAVES` strided inputs and this many output
/// pointers, a generated kernel's parameters still fit in CUDA's 4 KiB.
pub(crate) const MAX_OUTPUTS: usize = 32;

/// What a random leaf counts for in the leaf budget: its kernel parameters (the generator's 80
/// bytes of keys, its counter and stream, strides when broadcast) weigh about as much as a
/// mapped leaf's.
pub(crate) const RANDOM_LEAF_WEIGHT: u32 = 3;

/// Whether a bool node computing `expr` holds only the bytes 0 and 1: comparisons, logical
/// operations and casts to bool give 0 or 1; bitwise operations, `min`, `max`, negation and
/// `select` keep their operands' bytes; everything else (arithmetic on bools, ranges, mapped
/// reads of unknown data) is not known to.
fn gives_clean_bools(expr: &Expr) -> bool {
    let clean = |n: &Arc<Node>| n.dtype == DType::B8 && n.has_clean_bools();
    match expr {
        Expr::Scalar(HostVec::B8(v)) => v.iter().all(|b| b.0 <= 1),
        Expr::Cast(x) => x.dtype != DType::B8 || clean(x),
        Expr::Unary(op, x) => match op {
            UnOp::Not | UnOp::BitNot | UnOp::IsZero | UnOp::IsInf | UnOp::IsNan => true,
            UnOp::Neg => clean(x),
            _ => false,
        },
        Expr::Binary(op, a, b) => match op {
            BinOp::Lt
            | BinOp::Gt
            | BinOp::Le
            | BinOp::Ge
            | BinOp::Eq
            | BinOp::Neq
            | BinOp::And
            | BinOp::Or => true,
            BinOp::Min | BinOp::Max | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                clean(a) && clean(b)
            }
            _ => false,
        },
        Expr::Select(_, a, b) => clean(a) && clean(b),
        _ => false,
    }
}

/// Whether a tree of this height and leaf count fits one program (one kernel on CUDA).
pub(crate) fn fits_one_program(height: u32, leaves: u32) -> bool {
    height <= MAX_HEIGHT && leaves <= MAX_LEAVES
}

impl Node {
    /// A node holding ready data.
    pub(crate) fn ready(dtype: DType, dims: Dim4, backend: BackendKind, data: Data) -> Arc<Node> {
        Arc::new(Node {
            dtype,
            dims,
            backend,
            state: RwLock::new(State::Ready(data)),
            computed: AtomicBool::new(false),
            clean_bools: AtomicBool::new(false),
        })
    }

    /// The height and leaf count of a lazy node of `expr`: one more than its tallest operand,
    /// and the leaves its operands read, counted per path. Where that count is over the budget
    /// and `exact` is set, the leaves are counted again, each distinct one once (what a program
    /// reads). Whether the node then fits one program is for the caller (`Node::lazy`, in
    /// `backend/schedule.rs`, evaluates the operands of one that does not).
    pub(crate) fn measure(expr: &Expr, exact: bool) -> (u32, u32) {
        let (mut height, mut leaves) = (0u32, expr.leaf_weight());
        for c in expr.children() {
            let (h, l) = c.operand_height_leaves();
            height = height.max(h.saturating_add(1));
            // a leaf reached along several paths counts once per path, so in manual mode a
            // tree that reuses its sub-trees doubles its count at each level
            leaves = leaves.saturating_add(l);
        }
        if exact && height <= MAX_HEIGHT && leaves > MAX_LEAVES {
            // The sum over paths may count a shared sub-tree's leaves several times (Conway's
            // rule reads the neighbour count twice); what a program reads is each leaf once.
            leaves = distinct_leaf_weight(expr);
        }
        (height, leaves)
    }

    /// A lazy node of `expr` whose tree has the given height and leaf count
    /// ([`Node::measure`], or less once its operands were evaluated).
    pub(crate) fn lazy_measured(
        dtype: DType,
        dims: Dim4,
        backend: BackendKind,
        expr: Expr,
        height: u32,
        leaves: u32,
    ) -> Arc<Node> {
        let clean = dtype == DType::B8 && gives_clean_bools(&expr);
        Arc::new(Node {
            dtype,
            dims,
            backend,
            state: RwLock::new(State::Lazy { expr, height, leaves }),
            computed: AtomicBool::new(false),
            clean_bools: AtomicBool::new(clean),
        })
    }

    /// A node holding a sparse matrix of shape `dims` (see `jit::sparse`).
    pub(crate) fn sparse_matrix(
        dtype: DType,
        dims: Dim4,
        backend: BackendKind,
        parts: SparseParts,
    ) -> Arc<Node> {
        Arc::new(Node {
            dtype,
            dims,
            backend,
            state: RwLock::new(State::Sparse(Arc::new(parts))),
            computed: AtomicBool::new(false),
            clean_bools: AtomicBool::new(false),
        })
    }

    /// A pending node of shape `dims` (see `jit::pending`), computed by `pending.work` when
    /// its value is needed.
    pub(crate) fn pending(
        dtype: DType,
        dims: Dim4,
        backend: BackendKind,
        pending: Pending,
    ) -> Arc<Node> {
        Arc::new(Node {
            dtype,
            dims,
            backend,
            state: RwLock::new(State::Pending(Arc::new(pending))),
            computed: AtomicBool::new(false),
            clean_bools: AtomicBool::new(false),
        })
    }

    /// What a pending node reads and how it is computed; `None` for any other node.
    pub(crate) fn pending_parts(&self) -> Option<Arc<Pending>> {
        match &*read(&self.state) {
            State::Pending(p) => Some(p.clone()),
            _ => None,
        }
    }

    /// The operands of a lazy expression node, without computing anything; `None` for a node
    /// that is ready, sparse or pending.
    pub(crate) fn lazy_children(&self) -> Option<Vec<Arc<Node>>> {
        match &*read(&self.state) {
            State::Lazy { expr, .. } => Some(expr.children().cloned().collect()),
            _ => None,
        }
    }

    /// Whether the node is pending (see `jit::pending`).
    pub(crate) fn is_pending(&self) -> bool {
        matches!(&*read(&self.state), State::Pending(_))
    }

    /// Computes a pending node (with the siblings its computation takes along); nothing for
    /// any other node. No lock is held meanwhile: the computation reads other nodes, and
    /// another thread may compute the same node at the same time (both store the same value).
    pub(crate) fn settle(&self) -> Result<(), crate::error::Error> {
        match self.pending_parts() {
            Some(p) => p.work.resolve(self, &p.inputs),
            None => Ok(()),
        }
    }

    /// The value of a scalar constant node (a lazy `Expr::Scalar`), `None` for anything else.
    pub(crate) fn scalar_value(&self) -> Option<HostVec> {
        match &*read(&self.state) {
            State::Lazy { expr: Expr::Scalar(v), .. } => Some(v.clone()),
            _ => None,
        }
    }

    /// The input of a lazy conversion node (`Expr::Cast`), `None` for anything else.
    pub(crate) fn cast_source(&self) -> Option<Arc<Node>> {
        match &*read(&self.state) {
            State::Lazy { expr: Expr::Cast(x), .. } => Some(x.clone()),
            _ => None,
        }
    }

    /// Whether this bool node is known to hold only the bytes 0 and 1 (see `clean_bools`).
    pub(crate) fn has_clean_bools(&self) -> bool {
        self.clean_bools.load(Ordering::Relaxed)
    }

    /// Records that this bool node holds only the bytes 0 and 1 (the caller checked).
    pub(crate) fn mark_clean_bools(&self) {
        self.clean_bools.store(true, Ordering::Relaxed);
    }

    /// The parts of a sparse matrix; `None` for a dense array.
    pub(crate) fn sparse(&self) -> Option<Arc<SparseParts>> {
        match &*read(&self.state) {
            State::Sparse(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// Whether the node is still to be computed: a lazy expression, or pending.
    pub(crate) fn is_lazy(&self) -> bool {
        matches!(&*read(&self.state), State::Lazy { .. } | State::Pending(_))
    }

    /// [`Node::height_leaves`] of a node about to become an operand of a lazy expression;
    /// panics for a sparse node, which nothing lazy may read (one lock, as for a dense node).
    fn operand_height_leaves(&self) -> (u32, u32) {
        match &*read(&self.state) {
            State::Ready(_) | State::Pending(_) => (0, 1),
            State::Lazy { height, leaves, .. } => (*height, *leaves),
            State::Sparse(s) => {
                panic!("{}", dense_only_message("an element-wise operation", s.format))
            }
        }
    }

    /// Height of the tree (0 for data) and the number of leaves it reads.
    pub(crate) fn height_leaves(&self) -> (u32, u32) {
        match &*read(&self.state) {
            State::Ready(_) | State::Sparse(_) | State::Pending(_) => (0, 1),
            State::Lazy { height, leaves, .. } => (*height, *leaves),
        }
    }

    /// Records that a program computed this node inside a tree.
    pub(crate) fn mark_computed(&self) {
        self.computed.store(true, Ordering::Relaxed);
    }

    /// Whether a program has computed this node inside a tree before.
    pub(crate) fn was_computed(&self) -> bool {
        self.computed.load(Ordering::Relaxed)
    }

    /// A snapshot of the state (cheap: clones `Arc`s). A pending node is computed first, so
    /// the snapshot is never `Pending`; panics if that computation fails.
    pub(crate) fn state(&self) -> State {
        let snapshot = read(&self.state).clone();
        if let State::Pending(_) = snapshot {
            use crate::error_handler::OrRaise;
            self.settle().or_raise("evaluation failed");
            return read(&self.state).clone();
        }
        snapshot
    }

    /// The data if the node is ready.
    pub(crate) fn data(&self) -> Option<Data> {
        match &*read(&self.state) {
            State::Ready(d) => Some(d.clone()),
            State::Lazy { .. } | State::Sparse(_) | State::Pending(_) => None,
        }
    }

    /// Replaces the state with evaluated data, dropping the expression and its children.
    pub(crate) fn set_ready(&self, data: Data) {
        *write(&self.state) = State::Ready(data);
    }

    /// The state, for a caller that holds the only reference to the node (`Arc::get_mut`):
    /// how assignment reaches a buffer that nothing else can observe, to write it in place.
    pub(crate) fn state_mut(&mut self) -> &mut State {
        self.state.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

/// The leaf budget the tree under `expr` uses in one program: each distinct leaf once, by its
/// weight (as `program::Builder` counts it). The walk keeps its own stack.
fn distinct_leaf_weight(expr: &Expr) -> u32 {
    let mut seen = super::node_map::NodeSet::default();
    let mut stack: Vec<Arc<Node>> = expr.children().cloned().collect();
    let mut total = expr.leaf_weight();
    while let Some(n) = stack.pop() {
        if !seen.insert(Arc::as_ptr(&n)) {
            continue;
        }
        match &*read(&n.state) {
            State::Ready(_) | State::Sparse(_) | State::Pending(_) => {
                total = total.saturating_add(1)
            }
            State::Lazy { expr, .. } => {
                total = total.saturating_add(expr.leaf_weight());
                stack.extend(expr.children().cloned());
            }
        }
    }
    total
}

/// A placeholder state with no children, left in a node whose children were taken away.
fn childless() -> State {
    State::Lazy { expr: Expr::Range(0), height: 0, leaves: 0 }
}

impl Node {
    /// Takes the children out of a lazy node's expression, keeping those it held the last
    /// reference to (which are about to be freed) in `orphans`. Shared children only lose this
    /// node's reference, so a tree that other arrays hold is left intact.
    fn release_children(&mut self, orphans: &mut Vec<Node>) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        // `into_inner`, not `try_unwrap`: when two threads drop the last two handles of one
        // child at once, exactly one of them gets it
        let mut adopt = |c: Arc<Node>| {
            if let Some(n) = Arc::into_inner(c) {
                orphans.push(n);
            }
        };
        match std::mem::replace(state, childless()) {
            State::Lazy { expr, .. } => expr.into_children(adopt),
            State::Pending(p) => {
                if let Some(p) = Arc::into_inner(p) {
                    p.inputs.into_iter().for_each(&mut adopt);
                }
            }
            State::Ready(_) | State::Sparse(_) => {}
        }
    }
}

impl Drop for Node {
    /// Frees the tree under the node with an explicit stack: the default drop would recurse
    /// once per level, and a chain built by a long loop in manual mode is deeper than any
    /// thread's stack.
    fn drop(&mut self) {
        let mut orphans = Vec::new();
        self.release_children(&mut orphans);
        while let Some(mut n) = orphans.pop() {
            n.release_children(&mut orphans);
            // `n` is dropped here with a childless state, so its own `drop` returns at once
        }
    }
}

impl fmt::Debug for Node {
    /// The node alone, without its children: printing a deep tree would exhaust the stack.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state.try_read().as_deref() {
            Ok(State::Ready(_)) => "ready",
            Ok(State::Lazy { .. }) => "lazy",
            Ok(State::Sparse(_)) => "sparse",
            Ok(State::Pending(_)) => "pending",
            Err(_) => "locked",
        };
        f.debug_struct("Node")
            .field("dtype", &self.dtype)
            .field("dims", &self.dims)
            .field("backend", &self.backend)
            .field("state", &state)
            .finish()
    }
}
