//! A snapshot of one or more expression trees as a flat, topologically ordered list of
//! instructions. Backends evaluate programs, never the live graph: the snapshot holds its own
//! references to every buffer it reads, so other threads may evaluate or drop nodes meanwhile.

use std::collections::HashMap;
use std::sync::Arc;

use super::index_map::IndexMap;
use super::node::{Data, Expr, Node, State};
use super::op::{BinOp, UnOp};
use crate::dim4::Dim4;
use crate::dtype::DType;
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
    pub(crate) fn build(roots: &[Arc<Node>]) -> Program {
        let dims = roots[0].dims;
        let mut p = Program { steps: Vec::new(), outputs: Vec::new(), dims };
        let mut seen: HashMap<*const Node, usize> = HashMap::new();
        for r in roots {
            let i = p.visit(r, &mut seen);
            p.outputs.push(i);
        }
        p
    }

    fn visit(&mut self, node: &Arc<Node>, seen: &mut HashMap<*const Node, usize>) -> usize {
        if let Some(&i) = seen.get(&Arc::as_ptr(node)) {
            return i;
        }
        let instr = match node.state() {
            State::Ready(d) => Instr::Input(d),
            State::Lazy { expr, .. } => match expr {
                Expr::Scalar(v) => Instr::Scalar(v),
                Expr::Range(d) => Instr::Range(d),
                Expr::Iota(b) => Instr::Iota(b),
                Expr::Mapped(d, m) => Instr::Mapped(d, m),
                Expr::Unary(op, a) => Instr::Unary(op, self.visit(&a, seen)),
                Expr::Binary(op, a, b) => {
                    let a = self.visit(&a, seen);
                    Instr::Binary(op, a, self.visit(&b, seen))
                }
                Expr::Cast(a) => Instr::Cast(self.visit(&a, seen)),
                Expr::Select(c, a, b) => {
                    let c = self.visit(&c, seen);
                    let a = self.visit(&a, seen);
                    Instr::Select(c, a, self.visit(&b, seen))
                }
            },
        };
        self.steps.push(Step { instr, dtype: node.dtype, dims: node.dims });
        let i = self.steps.len() - 1;
        seen.insert(Arc::as_ptr(node), i);
        i
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
    /// Indices of the steps this one reads.
    pub(crate) fn operands(&self) -> Vec<usize> {
        match *self {
            Instr::Input(_) | Instr::Scalar(_) | Instr::Range(_) | Instr::Iota(_) => vec![],
            Instr::Mapped(..) => vec![],
            Instr::Unary(_, a) | Instr::Cast(a) => vec![a],
            Instr::Binary(_, a, b) => vec![a, b],
            Instr::Select(c, a, b) => vec![c, a, b],
        }
    }
}
