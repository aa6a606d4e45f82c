//! The lazy expression graph shared by every backend: nodes, operations, the flattened
//! programs that backends evaluate, and when and in how many programs trees are evaluated.

pub(crate) mod index_map;
pub(crate) mod memory;
pub(crate) mod node;
pub(crate) mod node_map;
pub(crate) mod op;
pub(crate) mod pending;
pub(crate) mod program;
pub(crate) mod sparse;

pub(crate) use node::{Data, Expr, Node};
pub(crate) use op::{BinOp, UnOp};
pub(crate) use program::{Instr, Program};
