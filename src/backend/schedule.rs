//! When lazy arrays are computed: `eval`, `eval_multiple` and manual evaluation mode; and how
//! the lazy nodes asked for become programs that a backend runs.
//!
//! This is the top of the backend layer: the graph (`jit`) knows how to flatten trees but never
//! runs anything, so the node methods that evaluate (`Node::lazy`, which keeps trees small by
//! evaluating children, `Node::eval`, `Node::try_eval`) are defined here, where the backends are
//! in reach, not in `jit/node.rs`.
//!
//! In automatic mode `Node::lazy` keeps every tree small enough for one program. In manual mode
//! a tree grows as the user's loop makes it, so before anything is flattened, a tree that one
//! program cannot take is cut: some of its nodes are evaluated first, bottom-up, each by a
//! program within the budget, until what is left fits one program (see `split_oversized`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error_handler::OrRaise;
use crate::jit::node::{fits_one_program, State, MAX_LEAVES, MAX_OUTPUTS};
use crate::jit::node_map::{NodeMap, NodeSet};
use crate::jit::program::Builder;
use crate::jit::sparse::dense_only_message;
use crate::jit::{Data, Expr, Node, Program};
use crate::place::BackendKind;

static MANUAL_EVAL: AtomicBool = AtomicBool::new(false);

/// Turns manual evaluation on or off. With it on, emberfire never evaluates a tree on its own
/// (the height and input-count heuristics are off); trees are computed only when a value is
/// needed or [`Array::eval`](crate::Array::eval) is called. A tree too large for one pass is then computed in
/// several, bottom-up; trees of any depth can be evaluated or dropped.
///
/// ```
/// emberfire::set_manual_eval(true);
/// assert!(emberfire::is_manual_eval());
/// emberfire::set_manual_eval(false);
/// ```
pub fn set_manual_eval(flag: bool) {
    MANUAL_EVAL.store(flag, Ordering::Relaxed);
}

/// Whether manual evaluation is on.
///
/// ```
/// assert!(!emberfire::is_manual_eval());
/// ```
pub fn is_manual_eval() -> bool {
    MANUAL_EVAL.load(Ordering::Relaxed)
}

/// Whether manual evaluation is on: arrayfire-rust's name for [`is_manual_eval`].
///
/// ```
/// assert_eq!(emberfire::is_eval_manual(), emberfire::is_manual_eval());
/// ```
pub fn is_eval_manual() -> bool {
    is_manual_eval()
}

impl Node {
    /// A lazy node. Returns it unevaluated unless it exceeds the height or leaf budget, in which
    /// case its children are evaluated first so that the new node is a shallow tree.
    pub(crate) fn lazy(dtype: DType, dims: Dim4, backend: BackendKind, expr: Expr) -> Arc<Node> {
        Node::lazy_bounded(dtype, dims, backend, expr, !is_manual_eval())
    }

    /// A lazy node, whose children are evaluated first if it exceeds the budget and `bound`
    /// is set (automatic evaluation); unbounded, a tree is cut only when it is evaluated.
    pub(crate) fn lazy_bounded(
        dtype: DType,
        dims: Dim4,
        backend: BackendKind,
        expr: Expr,
        bound: bool,
    ) -> Arc<Node> {
        let (mut height, mut leaves) = Node::measure(&expr, bound);
        if bound && !fits_one_program(height, leaves) {
            // together, so that sub-trees the children share are computed once
            let children: Vec<Arc<Node>> = expr.children().cloned().collect();
            eval_nodes(&children).or_raise("evaluation failed");
            height = 1;
            leaves = children.len() as u32;
        }
        Node::lazy_measured(dtype, dims, backend, expr, height, leaves)
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
        if let Some(s) = self.sparse() {
            panic!("{}", dense_only_message("reading the elements", s.format));
        }
        eval_nodes(std::slice::from_ref(self))?;
        Ok(self.data().expect("internal error: node not ready after evaluation"))
    }
}

/// Evaluates the lazy nodes among `nodes`, grouping those that can share one pass. Pending
/// nodes (reductions, see `jit::pending`) are computed first, each with the pending siblings
/// that share its pass, so pending reductions evaluated together become one pass.
pub(crate) fn eval_nodes(nodes: &[Arc<Node>]) -> crate::error::Result<()> {
    for n in nodes {
        n.settle()?;
    }
    split_oversized(nodes)?;
    eval_fitting(nodes)
}

/// The program that computes the trees under `roots` (one shape), for an operation that fuses
/// them into its own pass (a reduction, a scan, an assignment). A tree too large for one
/// program is cut first, as for `eval_nodes`.
pub(crate) fn program_for(roots: &[Arc<Node>]) -> crate::error::Result<Program> {
    split_oversized(roots)?;
    Ok(Program::build(roots))
}

/// The program a CPU reduction folds: the tree under `root` (cut first if too large, as for
/// [`program_for`]), with `root` as output 0 and, after it, the operations inside that may be
/// read again after the reduction ([`Builder::push_held`]), whose nodes are returned in output
/// order for the caller to set ready with what the reduction stored.
pub(crate) fn reduction_program(
    root: &Arc<Node>,
) -> crate::error::Result<(Program, Vec<Arc<Node>>)> {
    split_oversized(std::slice::from_ref(root))?;
    let mut builder = Builder::new(root.dims);
    builder.push_root(root);
    let held = builder.push_held(MAX_OUTPUTS - 1);
    Ok((builder.finish(), held))
}

/// Like [`reduction_program`] for several roots of one shape (sibling reductions, see
/// `backend::siblings`): the roots are outputs `0..roots.len()`, in order, then the operations
/// inside that may be read again after the pass. The roots must fit one program together.
pub(crate) fn sibling_program(
    roots: &[Arc<Node>],
) -> crate::error::Result<(Program, Vec<Arc<Node>>)> {
    split_oversized(roots)?;
    let mut builder = Builder::new(roots[0].dims);
    for r in roots {
        builder.push_root(r);
    }
    let held = builder.push_held(MAX_OUTPUTS.saturating_sub(roots.len()));
    Ok((builder.finish(), held))
}

/// How many of `roots` (trees of one shape), taken in order, fit one program together, with
/// the first always among them: the others are kept while the leaf and output budgets allow.
/// Returns whether each is kept. Trees too large for one program are cut first, as for
/// [`program_for`].
pub(crate) fn fitting_siblings(roots: &[Arc<Node>]) -> crate::error::Result<Vec<bool>> {
    split_oversized(roots)?;
    let mut builder = Builder::new(roots[0].dims);
    let mut keep = Vec::with_capacity(roots.len());
    for (k, r) in roots.iter().enumerate() {
        let before = builder.mark();
        builder.push_root(r);
        let over = builder.leaf_weight() > MAX_LEAVES || builder.outputs() > MAX_OUTPUTS;
        if over && k > 0 {
            builder.truncate(before);
        }
        keep.push(!over || k == 0);
    }
    Ok(keep)
}

/// Evaluates the lazy nodes among `nodes`, each of which fits one program: those of one shape
/// and backend share programs, as many at a time as the leaf and output budgets allow.
fn eval_fitting(nodes: &[Arc<Node>]) -> crate::error::Result<()> {
    if let [n] = nodes {
        // `eval` of one array, the common case: nothing to group
        if n.is_lazy() {
            let mut builder = Builder::new(n.dims);
            builder.push_root(n);
            let held = builder.push_recomputed(MAX_OUTPUTS - 1);
            if held.is_empty() {
                // (the common case, on every `eval`: no list to allocate)
                run_program(builder.finish(), &[n])?;
            } else {
                let outputs: Vec<&Arc<Node>> = std::iter::once(n).chain(&held).collect();
                run_program(builder.finish(), &outputs)?;
            }
        }
        return Ok(());
    }
    let mut groups: Vec<Vec<Arc<Node>>> = Vec::new();
    // (the addresses stay valid: `nodes` holds every node for the whole call)
    let mut listed = NodeSet::default();
    for n in nodes {
        if !n.is_lazy() || !listed.insert(Arc::as_ptr(n)) {
            continue;
        }
        match groups.iter_mut().find(|g| g[0].dims == n.dims && g[0].backend == n.backend) {
            Some(g) => g.push(n.clone()),
            None => groups.push(vec![n.clone()]),
        }
    }
    for g in groups {
        // Each tree fits alone; together they may not (`eval_multiple` of many large trees),
        // so they are packed into as few programs as the budgets allow. A shared sub-tree is
        // computed once per program that reads it.
        let mut builder = Builder::new(g[0].dims);
        let mut members: Vec<&Arc<Node>> = Vec::new();
        for n in &g {
            let before = builder.mark();
            builder.push_root(n);
            let over = builder.leaf_weight() > MAX_LEAVES || builder.outputs() > MAX_OUTPUTS;
            if over && !members.is_empty() {
                builder.truncate(before);
                run_program(builder.finish(), &members)?;
                members.clear();
                builder = Builder::new(g[0].dims);
                builder.push_root(n);
            }
            members.push(n);
        }
        let held = builder.push_recomputed(MAX_OUTPUTS.saturating_sub(builder.outputs()));
        members.extend(&held);
        run_program(builder.finish(), &members)?;
    }
    Ok(())
}

/// Runs `program` on the backend of its outputs' nodes and stores each output in its node.
fn run_program(program: Program, outputs: &[&Arc<Node>]) -> crate::error::Result<()> {
    let bufs = outputs[0].backend.ops().run(&program)?;
    for (node, buf) in outputs.iter().zip(bufs) {
        node.set_ready(Data::dense(buf, node.dims));
    }
    Ok(())
}

/// Evaluates, bottom-up, enough nodes of the trees under `roots` that each root's remaining
/// tree fits one program. Trees that fit (every tree built in automatic mode) cost one look at
/// each root's recorded size.
///
/// The trees are walked once, operands before the node that reads them, computing each lazy
/// node's height and leaf count as they will be once the nodes chosen so far are evaluated.
/// Where a node goes over the budget, its operands that are not leaves are chosen: evaluated
/// first, they leave the node one level above its leaves, which is what `Node::lazy` does in
/// automatic mode. Each chosen node's own tree fits, since the walk reached it without going
/// over. A chain of `n` additions is thus computed in `n / MAX_HEIGHT` programs of one shape,
/// which share one compiled kernel on CUDA.
///
/// Chosen nodes are evaluated in waves: a node's wave comes after the waves of the nodes it
/// waits for, and the nodes of one wave are independent, so they share programs. The waves
/// run in order, and a wave's nodes are let go once it has run, so a long chain holds only the
/// last few evaluated buffers at any time.
fn split_oversized(roots: &[Arc<Node>]) -> crate::error::Result<()> {
    let recorded_fit = |r: &Arc<Node>| {
        let (h, l) = r.height_leaves();
        fits_one_program(h, l)
    };
    if roots.iter().all(recorded_fit) {
        // the recorded sizes bound the actual ones: evaluating a descendant only shrinks a tree
        return Ok(());
    }
    for wave in plan_waves(roots) {
        eval_fitting(&wave)?;
    }
    Ok(())
}

/// A lazy node's size as it will be once the nodes chosen for earlier evaluation are ready.
#[derive(Clone, Copy)]
struct Fit {
    height: u32,
    leaves: u32,
    /// The last wave this node's tree waits for (0: none).
    wave: u32,
}

/// What a ready node counts for: a leaf, waiting for nothing.
const READY: Fit = Fit { height: 0, leaves: 1, wave: 0 };

/// A step of the walk of `plan_waves`: a node to enter, or a lazy node whose operands have all
/// been sized, with those operands and what the node weighs as a leaf.
enum Frame {
    Enter(Arc<Node>),
    Exit(Arc<Node>, Vec<Arc<Node>>, u32),
}

/// The nodes under `roots` to evaluate before them, by wave (see `split_oversized`). The walk
/// keeps its own stack, since the trees may be far deeper than a recursion could go.
fn plan_waves(roots: &[Arc<Node>]) -> Vec<Vec<Arc<Node>>> {
    // Keyed by address; the map holds each node, so no address is reused while it lives.
    let mut fit: NodeMap<(Arc<Node>, Fit)> = NodeMap::default();
    let mut waves: Vec<Vec<Arc<Node>>> = Vec::new();
    let mut stack: Vec<Frame> = roots.iter().rev().map(|r| Frame::Enter(r.clone())).collect();
    while let Some(frame) = stack.pop() {
        match frame {
            Frame::Enter(node) => {
                if fit.contains_key(&Arc::as_ptr(&node)) {
                    continue;
                }
                let State::Lazy { expr, .. } = node.state() else {
                    continue; // ready: counts as `READY`
                };
                let weight = expr.leaf_weight();
                let children: Vec<Arc<Node>> = expr.children().cloned().collect();
                stack.extend(
                    std::iter::once(Frame::Exit(node, children.clone(), weight))
                        .chain(children.into_iter().rev().map(Frame::Enter)),
                );
            }
            Frame::Exit(node, children, weight) => {
                if fit.contains_key(&Arc::as_ptr(&node)) {
                    continue;
                }
                // an operand absent from the map was ready when entered, and stays ready
                let of = |fit: &NodeMap<(Arc<Node>, Fit)>, c: &Arc<Node>| {
                    fit.get(&Arc::as_ptr(c)).map_or(READY, |e| e.1)
                };
                let mut f = Fit { height: 0, leaves: weight, wave: 0 };
                for c in &children {
                    let cf = of(&fit, c);
                    f.height = f.height.max(cf.height.saturating_add(1));
                    f.leaves = f.leaves.saturating_add(cf.leaves);
                    f.wave = f.wave.max(cf.wave);
                }
                if !fits_one_program(f.height, f.leaves) {
                    f = Fit { height: 1, leaves: weight, wave: 0 };
                    for c in &children {
                        let entry = fit.get_mut(&Arc::as_ptr(c));
                        let cf = match entry {
                            Some((n, cf)) if cf.height > 0 => {
                                // evaluated in the wave after everything its tree waits for
                                let wave = cf.wave + 1;
                                if waves.len() < wave as usize {
                                    waves.resize_with(wave as usize, Vec::new);
                                }
                                waves[wave as usize - 1].push(n.clone());
                                *cf = Fit { wave, ..READY };
                                *cf
                            }
                            Some((_, cf)) => *cf, // a leaf, or chosen already
                            None => READY,
                        };
                        f.leaves = f.leaves.saturating_add(cf.leaves);
                        f.wave = f.wave.max(cf.wave);
                    }
                }
                fit.insert(Arc::as_ptr(&node), (node, f));
            }
        }
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Buffer;
    use crate::jit::node::MAX_HEIGHT;
    use crate::jit::program::Builder;
    use crate::jit::{BinOp, Expr};
    use crate::storage::Element;

    const LEN: usize = 5;

    fn dims() -> Dim4 {
        Dim4::new(&[LEN as u64, 1, 1, 1])
    }

    fn input(x: f32) -> Arc<Node> {
        let data = Data::dense(Buffer::host(f32::wrap(vec![x; LEN])), dims());
        Node::ready(DType::F32, dims(), BackendKind::Cpu, data)
    }

    /// `a + b` as manual evaluation builds it, whatever the process-wide setting (other tests
    /// of the crate run meanwhile, so this one does not change it).
    fn add(a: &Arc<Node>, b: &Arc<Node>) -> Arc<Node> {
        let expr = Expr::Binary(BinOp::Add, a.clone(), b.clone());
        Node::lazy_bounded(DType::F32, dims(), BackendKind::Cpu, expr, false)
    }

    fn value(n: &Arc<Node>) -> Vec<f32> {
        let d = n.eval();
        let Buffer::Host(h) = d.buffer() else { unreachable!() };
        h.as_slice::<f32>()[d.offset..d.offset + LEN].to_vec()
    }

    fn chain(b: &Arc<Node>, c: &Arc<Node>, levels: usize) -> Arc<Node> {
        (0..levels).fold(b.clone(), |b, _| add(&b, c))
    }

    /// `a + b` as automatic evaluation builds it.
    fn add_bounded(a: &Arc<Node>, b: &Arc<Node>) -> Arc<Node> {
        let expr = Expr::Binary(BinOp::Add, a.clone(), b.clone());
        Node::lazy_bounded(DType::F32, dims(), BackendKind::Cpu, expr, true)
    }

    #[test]
    fn a_shared_sub_tree_counts_its_leaves_once() {
        // x reads 24 distinct inputs; (x + 1) + x reads 25, though its paths reach 49 leaves
        let leaves: Vec<Arc<Node>> = (0..24).map(|i| input(i as f32)).collect();
        let x = leaves[1..].iter().fold(leaves[0].clone(), |acc, l| add_bounded(&acc, l));
        let r = add_bounded(&add_bounded(&x, &input(1.0)), &x);
        assert!(r.data().is_none() && x.data().is_none(), "nothing is evaluated early");
        // past the budget, the children are evaluated together and the shared x once
        let more: Vec<Arc<Node>> = (0..24).map(|i| input(100.0 + i as f32)).collect();
        let y = more[1..].iter().fold(more[0].clone(), |acc, l| add_bounded(&acc, l));
        let (a, b) = (add_bounded(&x, &y), add_bounded(&y, &x));
        let z = add_bounded(&add_bounded(&a, &input(0.5)), &b);
        assert!(a.data().is_some() && z.data().is_none(), "the children were evaluated");
        let ys: f32 = (0..24).map(|i| 100.0 + i as f32).sum();
        assert_eq!(value(&z), vec![2.0 * (276.0 + ys) + 0.5; LEN]);
        // (evaluated last: `x`, held here, would be stored alongside `r` and read as one leaf)
        assert_eq!(value(&r), vec![2.0 * 276.0 + 1.0; LEN]);
    }

    #[test]
    fn an_operation_computed_a_second_time_is_stored() {
        let (a, b) = (input(1.5), input(0.25));
        let shared = add(&a, &a);
        let once = add(&shared, &b);
        let p = add(&once, &b);
        assert_eq!(value(&p), vec![3.5; LEN]);
        assert!(shared.is_lazy() && once.is_lazy(), "computed once: not stored");
        // `shared` is computed again for `q`, and stored by the same program this time
        let q = add(&shared, &a);
        assert_eq!(value(&q), vec![4.5; LEN]);
        assert!(!shared.is_lazy());
        assert_eq!(value(&shared), vec![3.0; LEN]);

        // an operand of another shape (broadcast) is not stored, nor any past `room`
        let one_dims = Dim4::new(&[1, 1, 1, 1]);
        let one = Node::ready(
            DType::F32,
            one_dims,
            BackendKind::Cpu,
            Data::dense(Buffer::host(f32::wrap(vec![2.0])), one_dims),
        );
        let expr = Expr::Binary(BinOp::Mul, one.clone(), one.clone());
        let small = Node::lazy_bounded(DType::F32, one_dims, BackendKind::Cpu, expr, false);
        let expr = Expr::Binary(BinOp::Add, a.clone(), small.clone());
        let wide = Node::lazy_bounded(DType::F32, dims(), BackendKind::Cpu, expr, false);
        let (h1, h2) = (add(&wide, &b), add(&wide, &a));
        let first = add(&h1, &h2);
        assert_eq!(value(&first), vec![(1.5 + 4.0 + 0.25) + (1.5 + 4.0 + 1.5); LEN]);
        let second = add(&h2, &h1);
        let mut builder = Builder::new(dims());
        builder.push_root(&second);
        let stored = builder.push_recomputed(2);
        assert_eq!(stored.len(), 2, "room for two of `wide`, `h1` and `h2`");
        assert!(stored.iter().all(|n| !Arc::ptr_eq(n, &small)));
        assert_eq!(builder.finish().outputs.len(), 3);
        assert_eq!(value(&second), vec![(1.5 + 4.0 + 1.5) + (1.5 + 4.0 + 0.25); LEN]);
        assert!(small.is_lazy(), "a broadcast operand is not stored");
        assert!(!h1.is_lazy() && !h2.is_lazy() && !wide.is_lazy());
    }

    #[test]
    fn an_operation_read_only_by_a_stored_update_is_not_stored_with_it() {
        let (a, b, c) = (input(0.5), input(1.0), input(2.0));
        // the inner sum is held by `r`'s tree alone
        let r = add(&input(0.0), &add(&a, &b));
        // computed once without being stored (as `dot` reads `r` in conjugate gradients)
        assert_eq!(value(&add(&r, &r)), vec![3.0; LEN]);
        assert!(r.is_lazy());
        let p = add(&r, &c);
        let mut probe = Builder::new(dims());
        probe.push_root(&p);
        let stored = probe.push_recomputed(31);
        assert_eq!(stored.len(), 1, "`r` only");
        assert!(Arc::ptr_eq(&stored[0], &r));
        drop(probe);
        // a sum held by an array too is stored beside `r`
        let inner = add(&a, &c);
        let r = add(&input(1.0), &inner);
        assert_eq!(value(&add(&r, &r)), vec![7.0; LEN]);
        let mut probe = Builder::new(dims());
        probe.push_root(&add(&r, &c));
        let stored = probe.push_recomputed(31);
        assert_eq!(stored.len(), 2, "`inner` and `r`");
        assert!(Arc::ptr_eq(&stored[0], &inner) && Arc::ptr_eq(&stored[1], &r));
    }

    #[test]
    fn a_cpu_reduction_stores_the_held_operations_it_computes() {
        use crate::backend::reduce::Reduction;
        let (a, b, c) = (input(0.5), input(1.0), input(2.0));
        // `r` is held (as conjugate gradients holds `r` while `dot(&r, &r)` reduces it); the
        // inner sum is read by `r` alone
        let r = add(&a, &add(&b, &c));
        let root = add(&r, &r);
        let (prog, held) = reduction_program(&root).unwrap();
        assert_eq!(held.len(), 1, "`r` only");
        assert!(Arc::ptr_eq(&held[0], &r));
        assert_eq!(prog.outputs.len(), 2);
        drop((prog, held));
        let total = BackendKind::Cpu.ops().reduce_all(&root, Reduction::Sum, DType::F32).unwrap();
        assert_eq!(total.as_slice::<f32>(), &[7.0 * LEN as f32]);
        assert!(!r.is_lazy(), "`r` is stored by the reduction");
        assert_eq!(value(&r), vec![3.5; LEN]);
        // the reduced tree itself is never stored, nor is a tree with nothing held inside
        assert!(root.is_lazy());
        let alone = add(&add(&a, &b), &c);
        let (prog, held) = reduction_program(&alone).unwrap();
        assert!(held.is_empty() && prog.outputs.len() == 1);
    }

    #[test]
    fn a_loop_that_updates_an_array_lazily_computes_each_update_at_most_twice() {
        // as conjugate gradients: `r` is updated lazily, then read by the tree of `p`, which
        // is evaluated; the next `p` stores the update it computes again, so `r`'s tree never
        // grows: each `p` is the same two-level program
        let (step, one) = (input(0.5), input(1.0));
        let mut r = input(0.0);
        for k in 1..=200 {
            let before = r.clone();
            r = add(&r, &step);
            let p = add(&r, &one);
            let mut probe = Builder::new(dims());
            probe.push_root(&p);
            let stored = probe.push_recomputed(31).len();
            assert_eq!(stored, usize::from(k > 1), "iteration {k}: the previous update");
            drop(probe);
            assert_eq!(value(&p), vec![k as f32 * 0.5 + 1.0; LEN]);
            assert!(k == 1 || !before.is_lazy(), "iteration {k}: the previous update is stored");
            assert!(r.is_lazy(), "iteration {k}: this update is computed once so far");
        }
    }

    #[test]
    fn a_chain_is_cut_every_max_height_levels() {
        let (b, c) = (input(1.0), input(0.5));
        let top = chain(&b, &c, 100);
        let waves = plan_waves(std::slice::from_ref(&top));
        // the nodes of levels 32, 64 and 96 are cut, each waiting for the one before
        assert_eq!(waves.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 1, 1]);
        assert_eq!(waves[0][0].height_leaves().0, MAX_HEIGHT);
        let cuts: Vec<std::sync::Weak<Node>> =
            waves.iter().map(|w| Arc::downgrade(&w[0])).collect();
        drop(waves);
        assert_eq!(value(&top), vec![51.0; LEN]);
        // nothing kept the cuts (and their buffers) once the root was computed from them
        assert!(cuts.iter().all(|w| w.upgrade().is_none()), "a cut outlived its evaluation");
    }

    #[test]
    fn a_wide_tree_is_cut_by_its_leaves_in_one_wave() {
        let leaves: Vec<Arc<Node>> = (0..64).map(|i| input(i as f32)).collect();
        let mut level = leaves.clone();
        while level.len() > 1 {
            level = level.chunks(2).map(|p| add(&p[0], &p[1])).collect();
        }
        let waves = plan_waves(&level);
        // the root's two halves read 32 inputs each: both are cut, neither waits for the other
        assert_eq!(waves.iter().map(Vec::len).collect::<Vec<_>>(), vec![2]);
        assert_eq!(value(&level[0]), vec![(0..64).sum::<i32>() as f32; LEN]);
    }

    #[test]
    fn a_tree_that_fits_is_not_walked() {
        let (b, c) = (input(1.0), input(0.5));
        let top = chain(&b, &c, MAX_HEIGHT as usize);
        split_oversized(std::slice::from_ref(&top)).unwrap();
        assert!(top.data().is_none(), "a tree that fits was evaluated by the split");
        assert_eq!(value(&top), vec![17.0; LEN]);
    }

    #[test]
    fn a_truncated_builder_forgets_the_last_root() {
        let (x, y, z) = (input(1.0), input(2.0), input(3.0));
        let (a, b) = (add(&x, &y), add(&add(&x, &z), &y));
        let mut builder = Builder::new(dims());
        builder.push_root(&a);
        let (mark, weight) = (builder.mark(), builder.leaf_weight());
        builder.push_root(&b);
        assert_eq!((builder.outputs(), builder.leaf_weight()), (2, 3));
        builder.truncate(mark);
        assert_eq!((builder.outputs(), builder.leaf_weight()), (1, weight));
        // b's steps are flattened anew, sharing x and y again
        builder.push_root(&b);
        let p = builder.finish();
        assert_eq!((p.steps.len(), p.outputs.len()), (6, 2));
    }

    #[test]
    fn a_million_levels_drop_without_recursion() {
        let (b, c) = (input(1.0), input(0.5));
        let top = chain(&b, &c, 1_000_000);
        drop(top);
        // the inputs lost only the references the chain held
        assert_eq!((Arc::strong_count(&b), Arc::strong_count(&c)), (1, 1));
    }

    #[test]
    fn dropping_a_chain_keeps_the_nodes_others_hold() {
        let (b, c) = (input(1.0), input(0.5));
        let mid = chain(&b, &c, 50_000);
        let top = chain(&mid, &c, 50_000);
        drop(top);
        assert_eq!(Arc::strong_count(&mid), 1);
        assert_eq!(Program::build(std::slice::from_ref(&mid)).steps.len(), 50_002);
        assert_eq!(value(&mid), vec![25_001.0; LEN]);
    }
}
