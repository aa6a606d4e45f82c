//! Sibling reductions: pending reductions (see `jit::pending`) that read a common part of
//! their inputs run together, in one pass over them.
//!
//! A reduction along a dimension leaves its result pending, registered here for its thread.
//! When one is needed, the pending reductions of that thread that can share its pass join it:
//! the same backend, the same reduced dimension, inputs of the same shape, and trees that meet
//! (a lazy sub-expression, or a ready input, read by both). n-body's
//! `sum(&(&w * &dx), 1)`, `sum(&(&w * &dy), 1)` and `sum(&(&w * &dz), 1)` meet in `w`, so the
//! first of them to be read computes all three in one kernel, and `w` once per element where
//! three separate reductions computed it three times. A `sum` and a `max` of one array read it
//! once.
//!
//! Siblings are chosen so that the pass can run at once: none is read by the tree of another
//! member (it would have to be computed first), and none reads a pending node outside the
//! group (that node might itself wait for a member). The group keeps within one program's leaf
//! and output budgets, and at most [`MAX_SIBLINGS`] reductions, which bounds the accumulators
//! a generated kernel keeps in registers.
//!
//! The registry is per thread: the reductions a thread leaves pending are the ones its next
//! read can take along. A pending array sent to another thread is computed there on its own,
//! or with that thread's siblings; two threads that compute one node at the same time store
//! the same value.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use crate::backend::reduce::Reduction;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::node_map::NodeSet;
use crate::jit::pending::{Pending, Resolve};
use crate::jit::{Data, Node};

/// The most reductions one pass computes.
pub(crate) const MAX_SIBLINGS: usize = 8;

/// Registered pending reductions kept before dead entries are swept.
const SWEEP_AT: usize = 64;

thread_local! {
    /// This thread's pending reductions, oldest first.
    static PENDING: RefCell<Vec<Weak<Node>>> = const { RefCell::new(Vec::new()) };
}

/// A reduction along `dim` waiting to run.
struct PendingReduction {
    op: Reduction,
    dim: usize,
}

/// A pending node of type `out` and shape `dims` (the input's, with `dim` set to 1) that
/// reduces `input` along `dim` by `op` once it is needed, with its siblings.
pub(crate) fn pending_reduction(
    input: &Arc<Node>,
    op: Reduction,
    dim: usize,
    out: DType,
    dims: Dim4,
) -> Arc<Node> {
    let pending =
        Pending { inputs: vec![input.clone()], work: Box::new(PendingReduction { op, dim }) };
    let node = Node::pending(out, dims, input.backend, pending);
    PENDING.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() >= SWEEP_AT {
            r.retain(|w| w.upgrade().is_some_and(|n| n.is_pending()));
        }
        r.push(Arc::downgrade(&node));
    });
    node
}

impl Resolve for PendingReduction {
    fn resolve(&self, node: &Node, inputs: &[Arc<Node>]) -> Result<(), Error> {
        let input = &inputs[0];
        let siblings = siblings_of(node, input, self.dim);
        if siblings.is_empty() {
            let buf = node.backend.ops().reduce_dim(input, self.op, self.dim, node.dtype)?;
            node.set_ready(Data::dense(buf, node.dims));
            return Ok(());
        }
        let mut roots = vec![input.clone()];
        roots.extend(siblings.iter().map(|s| s.1.clone()));
        let keep = crate::backend::schedule::fitting_siblings(&roots)?;
        let mut outs: Vec<&Node> = vec![node];
        let mut ops = vec![(self.op, node.dtype)];
        let mut kept_roots = vec![input.clone()];
        for (s, &k) in siblings.iter().zip(&keep[1..]) {
            if k {
                outs.push(&s.0);
                ops.push((s.2, s.0.dtype));
                kept_roots.push(s.1.clone());
            }
        }
        if kept_roots.len() == 1 {
            let buf = node.backend.ops().reduce_dim(input, self.op, self.dim, node.dtype)?;
            node.set_ready(Data::dense(buf, node.dims));
            return Ok(());
        }
        let bufs = node.backend.ops().reduce_dim_siblings(&kept_roots, &ops, self.dim)?;
        for (out, buf) in outs.into_iter().zip(bufs) {
            out.set_ready(Data::dense(buf, out.dims));
        }
        Ok(())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The pending reductions of this thread that can share the pass of `node` (which reduces
/// `input` along `dim`): each with its input and its reduction, oldest first.
fn siblings_of(
    node: &Node,
    input: &Arc<Node>,
    dim: usize,
) -> Vec<(Arc<Node>, Arc<Node>, Reduction)> {
    let candidates: Vec<Arc<Node>> = PENDING.with(|r| {
        let mut r = r.borrow_mut();
        r.retain(|w| w.upgrade().is_some_and(|n| n.is_pending()));
        r.iter()
            .filter_map(Weak::upgrade)
            .filter(|n| !std::ptr::eq(Arc::as_ptr(n), node) && n.backend == node.backend)
            .collect()
    });
    if candidates.is_empty() {
        return Vec::new();
    }
    let (mine, _keep) = tree_of(input);
    let mut members = NodeSet::default();
    members.insert(node as *const Node);
    let mut chosen = Vec::new();
    for c in candidates {
        if chosen.len() + 1 >= MAX_SIBLINGS {
            break;
        }
        let Some(parts) = c.pending_parts() else { continue };
        let Some(r) = parts.work.as_any().downcast_ref::<PendingReduction>() else { continue };
        let ci = &parts.inputs[0];
        if r.dim != dim || ci.dims != input.dims || mine.contains(&Arc::as_ptr(&c)) {
            continue;
        }
        if meets(ci, &mine, &members) {
            members.insert(Arc::as_ptr(&c));
            chosen.push((c.clone(), ci.clone(), r.op));
        }
    }
    chosen
}

/// Every node of the tree under `root`, down to its leaves (ready data and pending nodes are
/// leaves here), with the nodes kept alive so that no address in the set is reused.
fn tree_of(root: &Arc<Node>) -> (NodeSet, Vec<Arc<Node>>) {
    let mut set = NodeSet::default();
    let mut keep = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if !set.insert(Arc::as_ptr(&n)) {
            continue;
        }
        if let Some(children) = n.lazy_children() {
            stack.extend(children);
        }
        keep.push(n);
    }
    (set, keep)
}

/// Whether the tree under `root` reads a node of `mine`, and reads no pending node outside it
/// (among them the group's `members`).
fn meets(root: &Arc<Node>, mine: &NodeSet, members: &NodeSet) -> bool {
    let mut seen = NodeSet::default();
    let mut keep = Vec::new();
    let mut stack = vec![root.clone()];
    let mut shared = false;
    while let Some(n) = stack.pop() {
        let at = Arc::as_ptr(&n);
        if !seen.insert(at) {
            continue;
        }
        if mine.contains(&at) {
            // everything under a node of `mine` is in `mine` too
            shared = true;
        } else if members.contains(&at) || n.is_pending() {
            return false;
        } else if let Some(children) = n.lazy_children() {
            stack.extend(children);
        }
        keep.push(n);
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Buffer;
    use crate::jit::{BinOp, Expr};
    use crate::place::BackendKind;
    use crate::storage::{Element, HostVec};

    fn input(vals: &[f32], dims: Dim4) -> Arc<Node> {
        let data = Data::dense(Buffer::host(f32::wrap(vals.to_vec())), dims);
        Node::ready(DType::F32, dims, BackendKind::Cpu, data)
    }

    fn mul(a: &Arc<Node>, b: &Arc<Node>) -> Arc<Node> {
        let expr = Expr::Binary(BinOp::Mul, a.clone(), b.clone());
        Node::lazy(DType::F32, a.dims, BackendKind::Cpu, expr)
    }

    fn values(n: &Arc<Node>) -> Vec<f32> {
        let d = n.eval();
        let h: HostVec = crate::backend::download(&d, n.dims, n.dtype).unwrap();
        h.as_slice::<f32>().to_vec()
    }

    /// Three sums over one shared product, and one of an unrelated input: reading the first
    /// computes the three siblings in its pass and leaves the unrelated one pending.
    #[test]
    fn reading_one_reduction_computes_its_siblings() {
        let dims = Dim4::new(&[3, 2, 1, 1]);
        let out = Dim4::new(&[3, 1, 1, 1]);
        let (a, b) = (input(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dims), input(&[2.0; 6], dims));
        let w = mul(&a, &b);
        let sums: Vec<Arc<Node>> = [&a, &b, &w]
            .iter()
            .map(|c| pending_reduction(&mul(&w, c), Reduction::Sum, 1, DType::F32, out))
            .collect();
        let lone = pending_reduction(&input(&[1.0; 6], dims), Reduction::Max, 1, DType::F32, out);
        let maximum = pending_reduction(&w, Reduction::Max, 1, DType::F32, out);
        assert!(sums.iter().all(|s| s.is_pending()));
        assert_eq!(values(&sums[0]), vec![2.0 + 32.0, 8.0 + 50.0, 18.0 + 72.0]);
        assert!(sums.iter().chain([&maximum]).all(|s| !s.is_pending()), "siblings computed");
        assert!(lone.is_pending(), "an unrelated reduction waits");
        assert_eq!(values(&sums[1]), vec![4.0 + 16.0, 8.0 + 20.0, 12.0 + 24.0]);
        assert_eq!(values(&sums[2]), vec![4.0 + 64.0, 16.0 + 100.0, 36.0 + 144.0]);
        assert_eq!(values(&maximum), vec![8.0, 10.0, 12.0]);
        assert_eq!(values(&lone), vec![1.0; 3]);
    }

    /// A reduction whose input reads another pending reduction is not its sibling: it is
    /// computed after it, from its value.
    #[test]
    fn a_reduction_reading_another_waits_for_it() {
        let dims = Dim4::new(&[2, 2, 1, 1]);
        let out = Dim4::new(&[1, 2, 1, 1]);
        let a = input(&[1.0, 2.0, 3.0, 4.0], dims);
        let s = pending_reduction(&a, Reduction::Sum, 0, DType::F32, out);
        let expr = Expr::Binary(BinOp::Mul, a.clone(), s.clone());
        let scaled = Node::lazy(DType::F32, dims, BackendKind::Cpu, expr);
        let t = pending_reduction(&scaled, Reduction::Sum, 0, DType::F32, out);
        assert_eq!(values(&t), vec![9.0, 49.0]);
        assert_eq!(values(&s), vec![3.0, 7.0]);
    }
}
