//! A snapshot of one or more expression trees as a flat, topologically ordered list of
//! instructions. Backends evaluate programs, never the live graph: the snapshot holds its own
//! references to every buffer it reads, so other threads may evaluate or drop nodes meanwhile.

use std::sync::Arc;

use super::index_map::{IndexMap, MAPPED_LEAF_WEIGHT};
use super::node::{Data, Expr, Node, State, RANDOM_LEAF_WEIGHT};
use super::node_map::NodeMap;
use super::op::{BinOp, UnOp};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::random::stream::Draw;
use crate::storage::HostVec;

/// One step of a program; operands are indices of earlier instructions.
#[derive(Clone, Debug)]
pub(crate) enum Instr {
    Input(Data),
    Scalar(HostVec),
    Range(u8),
    Iota([u64; 4]),
    Unary(UnOp, usize),
    Binary(BinOp, usize, usize),
    Cast(usize),
    Select(usize, usize, usize),
    /// Ready data read through an index map (see `index_map.rs`).
    Mapped(Data, IndexMap),
    /// A random request's numbers (`Expr::Random`): element `e` of the step's own shape, in
    /// column-major order, is element `e` of the request.
    Random(Draw),
}

/// An instruction with the type and shape of its result.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub instr: Instr,
    pub dtype: DType,
    /// The node's own shape: 1 along a dimension it is broadcast over.
    pub dims: Dim4,
}

/// Trees flattened for evaluation; every output has the shape `dims`.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub steps: Vec<Step>,
    /// Index of the step that computes each output.
    pub outputs: Vec<usize>,
    pub dims: Dim4,
}

impl Program {
    /// Flattens the trees under `roots`, which must share one shape. Nodes reached more than
    /// once (the same `Arc`) become one step.
    ///
    /// The trees are taken as they are: a caller that may hold a tree too large for one kernel
    /// (manual evaluation) goes through `evaluation::program_for`, which cuts it first.
    pub(crate) fn build(roots: &[Arc<Node>]) -> Program {
        let mut b = Builder::new(roots[0].dims);
        for r in roots {
            b.push_root(r);
        }
        b.finish()
    }

    /// The program that copies `data` (shape `dims`) into a new dense buffer.
    pub(crate) fn copy_of(data: Data, dtype: DType, dims: Dim4) -> Program {
        Program {
            steps: vec![Step { instr: Instr::Input(data), dtype, dims }],
            outputs: vec![0],
            dims,
        }
    }

    /// For each step, the index of the last step that reads it (outputs are read at the end).
    pub(crate) fn last_uses(&self) -> Vec<usize> {
        let n = self.steps.len();
        let mut last: Vec<usize> = (0..n).collect();
        for (i, s) in self.steps.iter().enumerate() {
            for a in s.instr.operands() {
                last[a] = i;
            }
        }
        for &o in &self.outputs {
            last[o] = usize::MAX;
        }
        last
    }
}

impl Instr {
    /// What this step counts for in a program's leaf budget (`MAX_LEAVES`), as `Node::lazy`
    /// counts the leaf it comes from.
    pub(crate) fn leaf_weight(&self) -> u32 {
        match self {
            Instr::Input(_) | Instr::Scalar(_) | Instr::Range(_) | Instr::Iota(_) => 1,
            Instr::Mapped(..) => MAPPED_LEAF_WEIGHT,
            Instr::Random(_) => RANDOM_LEAF_WEIGHT,
            Instr::Unary(..) | Instr::Binary(..) | Instr::Cast(_) | Instr::Select(..) => 0,
        }
    }

    /// Indices of the steps this one reads, in operand order (at most three, without a list
    /// on the heap: the program walks that run on every evaluation ask once or twice a step).
    pub(crate) fn operands(&self) -> std::iter::Take<std::array::IntoIter<usize, 3>> {
        let (at, len) = match *self {
            Instr::Input(_) | Instr::Scalar(_) | Instr::Range(_) | Instr::Iota(_) => ([0; 3], 0),
            Instr::Mapped(..) | Instr::Random(_) => ([0; 3], 0),
            Instr::Unary(_, a) | Instr::Cast(a) => ([a, 0, 0], 1),
            Instr::Binary(_, a, b) => ([a, b, 0], 2),
            Instr::Select(c, a, b) => ([c, a, b], 3),
        };
        at.into_iter().take(len)
    }
}

/// A walk still to be done by `Builder::push_root`: a node to enter, or a lazy node whose
/// operands have all been flattened, with the expression it had when it was entered.
enum Frame {
    Enter(Arc<Node>),
    Exit(Arc<Node>, Expr),
}

/// A program being flattened one root at a time, so that a caller can stop adding roots once
/// the program reaches a budget, and take back the root that went over it.
pub(crate) struct Builder {
    program: Program,
    /// The step of each node flattened so far.
    seen: NodeMap<usize>,
    /// The node of each step, kept alive while the builder lives so that no address in
    /// `seen` can be reused by a new node (another thread may evaluate a node and free its
    /// children).
    keep: Vec<Arc<Node>>,
    /// The nodes of steps `truncate` forgot, kept alive for the same reason.
    retired: Vec<Arc<Node>>,
    leaf_weight: u32,
}

/// Steps a new builder has room for before it grows.
const SMALL_PROGRAM: usize = 8;

/// A point `Builder::truncate` can return to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    steps: usize,
    outputs: usize,
}

impl Builder {
    /// An empty program whose outputs have shape `dims`.
    pub(crate) fn new(dims: Dim4) -> Builder {
        // Room for the small programs most evaluations flatten, so that their walk grows no
        // list and rehashes no map (this runs on every `eval`).
        Builder {
            program: Program {
                steps: Vec::with_capacity(SMALL_PROGRAM),
                outputs: Vec::with_capacity(2),
                dims,
            },
            seen: NodeMap::with_capacity_and_hasher(SMALL_PROGRAM, Default::default()),
            keep: Vec::with_capacity(SMALL_PROGRAM),
            retired: Vec::new(),
            leaf_weight: 0,
        }
    }

    /// The leaf budget the program uses: each distinct leaf once, by its weight.
    pub(crate) fn leaf_weight(&self) -> u32 {
        self.leaf_weight
    }

    /// The number of outputs so far.
    pub(crate) fn outputs(&self) -> usize {
        self.program.outputs.len()
    }

    /// The current point, for `truncate`.
    pub(crate) fn mark(&self) -> Mark {
        Mark { steps: self.program.steps.len(), outputs: self.program.outputs.len() }
    }

    /// Forgets every step and output added since `m` was taken.
    pub(crate) fn truncate(&mut self, m: Mark) {
        let forgotten = self.keep.split_off(m.steps);
        for n in &forgotten {
            self.seen.remove(&Arc::as_ptr(n));
        }
        self.retired.extend(forgotten);
        self.program.steps.truncate(m.steps);
        self.program.outputs.truncate(m.outputs);
        self.leaf_weight = self.program.steps.iter().map(|s| s.instr.leaf_weight()).sum();
    }

    /// Flattens the tree under `root` into the program, as its next output. Steps come in the
    /// order of a depth-first walk that takes operands left to right, each after its operands.
    ///
    /// The walk keeps its own stack: a tree built by a long loop in manual evaluation may be
    /// far deeper than a thread's stack allows a recursion to go.
    pub(crate) fn push_root(&mut self, root: &Arc<Node>) {
        let mut stack = Vec::with_capacity(SMALL_PROGRAM);
        stack.push(Frame::Enter(root.clone()));
        while let Some(frame) = stack.pop() {
            match frame {
                Frame::Enter(node) => {
                    if self.seen.contains_key(&Arc::as_ptr(&node)) {
                        continue;
                    }
                    // a snapshot: another thread may evaluate the node meanwhile, and the
                    // program then still computes it from the expression seen here
                    let instr = match node.state() {
                        State::Ready(d) => Instr::Input(d),
                        State::Sparse(s) => {
                            panic!("{}", super::sparse::dense_only_message("evaluating", s.format))
                        }
                        State::Pending(_) => {
                            unreachable!("internal error: `state` computes a pending node first")
                        }
                        State::Lazy { expr, .. } => match expr {
                            Expr::Scalar(v) => Instr::Scalar(v),
                            Expr::Range(d) => Instr::Range(d),
                            Expr::Iota(b) => Instr::Iota(b),
                            Expr::Mapped(d, m) => Instr::Mapped(d, m),
                            Expr::Random(r) => Instr::Random(r),
                            expr => {
                                let at = stack.len();
                                // reversed, so that the first operand is flattened first
                                stack.extend(expr.children().rev().cloned().map(Frame::Enter));
                                stack.insert(at, Frame::Exit(node, expr));
                                continue;
                            }
                        },
                    };
                    self.push_step(node, instr);
                }
                Frame::Exit(node, expr) => {
                    if self.seen.contains_key(&Arc::as_ptr(&node)) {
                        continue;
                    }
                    let at = |c: &Arc<Node>| self.seen[&Arc::as_ptr(c)];
                    let instr = match &expr {
                        Expr::Unary(op, a) => Instr::Unary(*op, at(a)),
                        Expr::Binary(op, a, b) => Instr::Binary(*op, at(a), at(b)),
                        Expr::Cast(a) => Instr::Cast(at(a)),
                        Expr::Select(c, a, b) => Instr::Select(at(c), at(a), at(b)),
                        Expr::Scalar(_)
                        | Expr::Range(_)
                        | Expr::Iota(_)
                        | Expr::Mapped(..)
                        | Expr::Random(_) => {
                            unreachable!("internal error: a leaf waited for operands")
                        }
                    };
                    self.push_step(node, instr);
                }
            }
        }
        let out = self.seen[&Arc::as_ptr(root)];
        self.program.outputs.push(out);
    }

    /// Adds as outputs the operations inside the program's trees that an earlier program
    /// already computed without storing, as many as `room` allows, and returns their nodes in
    /// output order. A node computed a second time is evidently read by several trees: a loop
    /// such as conjugate gradients, where `r` is updated lazily, reduced by `dot`, then read
    /// by the next `p`, which is evaluated, would otherwise carry `r`'s updates from iteration
    /// to iteration, compute all of them again each time, and compile a larger kernel per
    /// iteration until the height budget cut the tree. Stored now, it is computed twice, never
    /// more. A node computed once (the temporaries of a stencil, its neighbour sums) is not
    /// stored: most are read by one tree only.
    ///
    /// Only operations of the program's own shape qualify (a broadcast operand has no output
    /// of its shape); leaves are data already, or cost less to compute than to store. And only
    /// those that may be read again after this program: held outside it (by an array, or a
    /// tree this program does not compute), or read by an operation of the program that is
    /// itself not stored and may be read again. In conjugate gradients, `r = r - alpha * ap`
    /// is stored when the next `p` reads it; `alpha * ap`, read by `r` alone, is computed a
    /// second time there too, but nothing can read it once `r` is stored, so it is not.
    pub(crate) fn push_recomputed(&mut self, room: usize) -> Vec<Arc<Node>> {
        self.push_read_again(room, true)
    }

    /// Like [`Builder::push_recomputed`], for a program that a reduction folds on the CPU: an
    /// operation that may be read again after it is stored the first time it is computed,
    /// not the second. The reduction writes it while it folds (one more write of the values
    /// it computes anyway), where computing it again later would read its operands again. In
    /// conjugate gradients, `dot(&r, &r)` of the lazy `r = r - alpha * ap` stores `r`, and
    /// the next `p` reads it instead of `r`'s operands. A lazy array that the user holds but
    /// never reads again is written for nothing, as a reduction's input always is in
    /// ArrayFire.
    pub(crate) fn push_held(&mut self, room: usize) -> Vec<Arc<Node>> {
        self.push_read_again(room, false)
    }

    /// The choice of [`Builder::push_recomputed`] (`recomputed_only`) and
    /// [`Builder::push_held`].
    fn push_read_again(&mut self, room: usize, recomputed_only: bool) -> Vec<Arc<Node>> {
        let dims = self.program.dims;
        let steps = &self.program.steps;
        let outputs = &self.program.outputs;
        let candidate = |(i, s): (usize, &Step)| is_operation(&s.instr) && !outputs.contains(&i);
        if room == 0 || !steps.iter().enumerate().any(candidate) {
            // (the common `eval` of one operation on data: nothing to choose, no lists made)
            return Vec::new();
        }
        // references to each step from the program's operations (the builder holds one more)
        let mut inside = vec![0usize; steps.len()];
        for step in steps {
            for k in step.instr.operands() {
                inside[k] += 1;
            }
        }
        // Walked from the last step to the first, so that every reader of a step is decided
        // before it: `read_later[i]` is set once a reader of step `i` may itself be read again.
        let mut read_later = vec![false; steps.len()];
        let mut chosen = Vec::new();
        for i in (0..steps.len()).rev() {
            let n = &self.keep[i];
            let stored = self.program.outputs.contains(&i);
            let held_outside = Arc::strong_count(n) > inside[i] + 1;
            let again = !stored && n.is_lazy() && (held_outside || read_later[i]);
            let store = again
                && chosen.len() < room
                && is_operation(&steps[i].instr)
                && n.dims == dims
                && (!recomputed_only || n.was_computed());
            if store {
                chosen.push(i);
            } else if again {
                for k in steps[i].instr.operands() {
                    read_later[k] = true;
                }
            }
        }
        chosen.reverse();
        self.program.outputs.extend(&chosen);
        chosen.into_iter().map(|i| self.keep[i].clone()).collect()
    }

    fn push_step(&mut self, node: Arc<Node>, instr: Instr) {
        self.leaf_weight = self.leaf_weight.saturating_add(instr.leaf_weight());
        self.program.steps.push(Step { instr, dtype: node.dtype, dims: node.dims });
        self.seen.insert(Arc::as_ptr(&node), self.program.steps.len() - 1);
        self.keep.push(node);
    }

    /// The program built so far. Its operations are recorded as computed (see
    /// [`Builder::push_recomputed`]): the caller runs it.
    pub(crate) fn finish(self) -> Program {
        for (i, n) in self.keep.iter().enumerate() {
            if is_operation(&self.program.steps[i].instr) {
                n.mark_computed();
            }
        }
        self.program
    }
}

/// Whether a step computes an operation on other steps (not a leaf).
fn is_operation(instr: &Instr) -> bool {
    matches!(instr, Instr::Unary(..) | Instr::Binary(..) | Instr::Cast(_) | Instr::Select(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_come_in_order_with_their_count() {
        let cases = [
            (Instr::Range(0), vec![]),
            (Instr::Iota([1, 1, 1, 1]), vec![]),
            (Instr::Unary(UnOp::Neg, 4), vec![4]),
            (Instr::Cast(7), vec![7]),
            (Instr::Binary(BinOp::Add, 2, 0), vec![2, 0]),
            (Instr::Select(5, 1, 3), vec![5, 1, 3]),
        ];
        for (instr, want) in cases {
            let ops = instr.operands();
            assert_eq!(ops.len(), want.len(), "{instr:?}");
            assert_eq!(ops.collect::<Vec<_>>(), want, "{instr:?}");
        }
        // a half-read iterator says how many are left
        let mut ops = Instr::Select(9, 8, 7).operands();
        assert_eq!(ops.next(), Some(9));
        assert_eq!(ops.size_hint(), (2, Some(2)));
        assert_eq!(ops.by_ref().count(), 2);
        assert_eq!(ops.next(), None);
    }
}
