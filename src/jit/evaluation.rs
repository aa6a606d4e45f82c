//! When lazy arrays are computed: `eval`, `eval_multiple` and manual evaluation mode.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{Data, Node, Program};
use crate::array::Array;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;

static MANUAL_EVAL: AtomicBool = AtomicBool::new(false);

/// Turns manual evaluation on or off. With it on, emberfire never evaluates a tree on its own
/// (the height and input-count heuristics are off); trees are computed only when a value is
/// needed or [`Array::eval`] is called.
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

/// Evaluates several arrays together: trees of the same shape on the same backend are computed
/// in one pass (one kernel on CUDA), with sub-expressions they share computed once.
///
/// ```
/// use emberfire::{Array, dim4, eval_multiple};
/// let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
/// let t = &x * 2.0f32;
/// let (a, b) = (&t + 1.0f32, &t - 1.0f32);
/// eval_multiple(vec![&a, &b]);
/// assert_eq!(a.to_vec(), vec![3.0, 5.0, 7.0]);
/// assert_eq!(b.to_vec(), vec![1.0, 3.0, 5.0]);
/// ```
pub fn eval_multiple<T: HasAfEnum>(arrays: Vec<&Array<T>>) {
    let nodes: Vec<Arc<Node>> = arrays.iter().map(|a| a.node().clone()).collect();
    eval_nodes(&nodes).or_raise("eval_multiple");
}

/// Evaluates the lazy nodes among `nodes`, grouping those that can share one pass.
pub(crate) fn eval_nodes(nodes: &[Arc<Node>]) -> crate::error::Result<()> {
    let mut groups: Vec<Vec<Arc<Node>>> = Vec::new();
    for n in nodes {
        if n.data().is_some() || groups.iter().flatten().any(|m| Arc::ptr_eq(m, n)) {
            continue;
        }
        match groups.iter_mut().find(|g| g[0].dims == n.dims && g[0].backend == n.backend) {
            Some(g) => g.push(n.clone()),
            None => groups.push(vec![n.clone()]),
        }
    }
    for g in groups {
        let program = Program::build(&g);
        let bufs = g[0].backend.run(&program)?;
        for (node, buf) in g.iter().zip(bufs) {
            node.set_ready(Data::dense(buf, node.dims));
        }
    }
    Ok(())
}
