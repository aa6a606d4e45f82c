//! Data movement: reshaping, reordering, flipping, tiling, shifting, padding, joining and
//! transposing arrays.
//!
//! Most of these cost no copy:
//! - `moddims` and `flat` of contiguous data give a view of the same buffer; of a lazy tree
//!   that is element-wise throughout (every node of the tree's own shape, or a broadcast
//!   scalar; leaves contiguous), they rebuild the tree with the new shape, which stays lazy.
//!   Anything else (a strided view, a tree with ranges or broadcasting inside) is evaluated
//!   or copied first.
//! - `reorder_v2` and `flip` give views with permuted or negative strides, which both
//!   evaluators and host reads accept.
//! - `tile`, `shift` and `pad` give a lazy leaf that reads its input through a per-dimension
//!   index map (`jit/index_map.rs`), so `tile(&a, d) + &b` reads `a` in place inside one fused
//!   kernel. Tiling along dimensions of size 1 is a view with stride 0. A lazy input is
//!   evaluated first, at its own size.
//!
//! `transpose`, `join` and `join_many` materialise, as in ArrayFire: a tiled transpose kernel
//! on each backend, and copies of each input into its place.

use std::collections::HashMap;
use std::sync::Arc;

use crate::array::Array;
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::error_handler::OrRaise;
use crate::jit::index_map::{Axis, IndexMap};
use crate::jit::node::State;
use crate::jit::pending::{Pending, Resolve};
use crate::jit::sparse::dense_only_message;
use crate::jit::{Data, Expr, Node, UnOp};
use crate::ops::build;
use crate::storage::HostVec;

/// How `pad` fills the new elements, as in arrayfire-rust.
///
/// ```
/// use emberfire::{pad, Array, BorderType, Dim4, dim4};
/// let a = Array::new(&[1, 2, 3], dim4!(3));
/// let two = Dim4::new(&[2, 0, 0, 0]); // two elements before and after, along dimension 0
/// let p = |b| pad(&a, two, two, b).to_vec();
/// assert_eq!(p(BorderType::ZERO), vec![0, 0, 1, 2, 3, 0, 0]);
/// assert_eq!(p(BorderType::SYMMETRIC), vec![2, 1, 1, 2, 3, 3, 2]);
/// assert_eq!(p(BorderType::CLAMP_TO_EDGE), vec![1, 1, 1, 2, 3, 3, 3]);
/// assert_eq!(p(BorderType::PERIODIC), vec![2, 3, 1, 2, 3, 1, 2]);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BorderType {
    /// Zeros.
    ZERO = 0,
    /// The input mirrored at its edges, the edge element repeated.
    SYMMETRIC = 1,
    /// The edge element repeated.
    CLAMP_TO_EDGE = 2,
    /// The input repeated periodically.
    PERIODIC = 3,
}

/// Column-major strides of dense data of shape `dims`.
fn dense_strides(dims: Dim4) -> [i64; 4] {
    let s = dims.strides();
    std::array::from_fn(|k| s[k] as i64)
}

/// The node's data, evaluating it first if it is lazy.
fn ready(func: &str, node: &Arc<Node>) -> Data {
    node.try_eval().or_raise(func)
}

/// An array viewing `data` with shape `dims`, on the backend of `like`.
fn view<T: HasAfEnum>(like: &Arc<Node>, dims: Dim4, data: Data) -> Array<T> {
    Array::from_node(Node::ready(T::DTYPE, dims, like.backend, data))
}

/// `a * b` per dimension, panicking with `func`'s name if the shape does not fit in memory.
fn scaled(func: &str, input: Dim4, by: Dim4) -> Dim4 {
    let d: [u64; 4] = std::array::from_fn(|k| {
        input[k]
            .checked_mul(by[k])
            .unwrap_or_else(|| panic!("{func}: dims {input} times {by} overflow"))
    });
    let out = Dim4::new(&d);
    d.iter()
        .try_fold(1u64, |a, &x| a.checked_mul(x))
        .unwrap_or_else(|| panic!("{func}: the result of dims {out} has too many elements"));
    out
}

/// Changes the shape of an array without changing its elements or their (column-major)
/// order. The new shape must have as many elements as the old one.
///
/// Contiguous data is not copied: the result views the same memory. A lazy element-wise
/// expression stays lazy with the new shape. A strided view (from `reorder_v2` or `flip`) is
/// copied first.
///
/// ```
/// use emberfire::{moddims, Array, dim4};
/// let a = Array::new(&[1, 2, 1, 2, 1, 2, 1, 2], dim4!(8));
/// let b = moddims(&a, dim4!(2, 4));
/// assert_eq!(b.dims(), dim4!(2, 4));
/// assert_eq!(b.to_vec(), a.to_vec());
/// ```
///
/// Panics if `dims` has a different number of elements than `input`.
pub fn moddims<T: HasAfEnum>(input: &Array<T>, dims: Dim4) -> Array<T> {
    reshape("moddims", input, dims)
}

fn reshape<T: HasAfEnum>(func: &str, input: &Array<T>, dims: Dim4) -> Array<T> {
    let old = input.dims();
    assert!(
        dims.elements() == old.elements(),
        "{func}: cannot reshape dims {old} ({} elements) into dims {dims} ({} elements)",
        old.elements(),
        dims.elements()
    );
    if dims == old {
        return input.clone();
    }
    let node = input.node();
    match node.state() {
        State::Ready(d) if d.is_contiguous(old) => {
            view(node, dims, Data { strides: dense_strides(dims), ..d })
        }
        State::Ready(_) => {
            let c = input.copy();
            let d = ready(func, c.node());
            view(node, dims, Data { strides: dense_strides(dims), ..d })
        }
        State::Sparse(s) => panic!("{}", dense_only_message(func, s.format)),
        State::Pending(_) => unreachable!("internal error: `state` computes a pending node first"),
        State::Lazy { .. } => {
            if let Some(n) = reshape_tree(node, old, dims) {
                return Array::from_node(n);
            }
            let d = ready(func, node);
            view(node, dims, Data { strides: dense_strides(dims), ..d })
        }
    }
}

/// The tree under `root` (of shape `old`) rebuilt with shape `new`, when its value at each
/// linear index does not depend on the shape: every node has the shape `old` or a single
/// element, and every leaf is contiguous data or a scalar. `None` otherwise.
///
/// The walk keeps its own stack: in manual evaluation a tree may be deeper than a recursion
/// could go.
fn reshape_tree(root: &Arc<Node>, old: Dim4, new: Dim4) -> Option<Arc<Node>> {
    /// A node to enter, or an operation whose operands have been rebuilt.
    enum Frame {
        Enter(Arc<Node>),
        Exit(Arc<Node>, Expr),
    }
    // Keyed by address; `done` keeps the nodes alive so that no address is reused meanwhile.
    let mut memo: HashMap<*const Node, Arc<Node>> = HashMap::new();
    let mut done: Vec<Arc<Node>> = Vec::new();
    let mut stack = vec![Frame::Enter(root.clone())];
    while let Some(frame) = stack.pop() {
        let (node, rebuilt) = match frame {
            Frame::Enter(node) => {
                if memo.contains_key(&Arc::as_ptr(&node)) {
                    continue;
                }
                let (t, b) = (node.dtype, node.backend);
                let rebuilt = if node.dims.elements() == 1 && old.elements() != 1 {
                    node.clone() // a broadcast scalar
                } else if node.dims != old {
                    return None;
                } else {
                    match node.state() {
                        State::Ready(d) if d.is_contiguous(old) => {
                            Node::ready(t, new, b, Data { strides: dense_strides(new), ..d })
                        }
                        State::Ready(_) | State::Sparse(_) => return None,
                        State::Pending(_) => {
                            unreachable!("internal error: `state` computes a pending node first")
                        }
                        State::Lazy { expr: Expr::Scalar(v), .. } => {
                            Node::lazy(t, new, b, Expr::Scalar(v))
                        }
                        // element e of the leaf is element e of its request, whatever its shape
                        State::Lazy { expr: Expr::Random(r), .. } => {
                            Node::lazy(t, new, b, Expr::Random(r))
                        }
                        State::Lazy {
                            expr: Expr::Range(_) | Expr::Iota(_) | Expr::Mapped(..),
                            ..
                        } => return None,
                        State::Lazy { expr, .. } => {
                            let children: Vec<Arc<Node>> = expr.children().cloned().collect();
                            stack.push(Frame::Exit(node, expr));
                            // reversed, so that operands are rebuilt left to right
                            stack.extend(children.into_iter().rev().map(Frame::Enter));
                            continue;
                        }
                    }
                };
                (node, rebuilt)
            }
            Frame::Exit(node, expr) => {
                if memo.contains_key(&Arc::as_ptr(&node)) {
                    continue;
                }
                let sub = |c: &Arc<Node>| memo[&Arc::as_ptr(c)].clone();
                let expr = match expr {
                    Expr::Unary(op, a) => Expr::Unary(op, sub(&a)),
                    Expr::Cast(a) => Expr::Cast(sub(&a)),
                    Expr::Binary(op, a, c) => Expr::Binary(op, sub(&a), sub(&c)),
                    Expr::Select(c, a, e) => Expr::Select(sub(&c), sub(&a), sub(&e)),
                    Expr::Scalar(_)
                    | Expr::Range(_)
                    | Expr::Iota(_)
                    | Expr::Mapped(..)
                    | Expr::Random(_) => {
                        unreachable!("internal error: a leaf waited for operands")
                    }
                };
                let rebuilt = Node::lazy(node.dtype, new, node.backend, expr);
                (node, rebuilt)
            }
        };
        memo.insert(Arc::as_ptr(&node), rebuilt);
        done.push(node);
    }
    memo.get(&Arc::as_ptr(root)).cloned()
}

/// The array as a column of all its elements, in column-major order. Costs no copy when the
/// data is contiguous (see [`moddims`]).
///
/// ```
/// use emberfire::{flat, Array, dim4};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
/// assert_eq!(flat(&a).dims(), dim4!(6));
/// assert_eq!(flat(&a).to_vec(), vec![1, 2, 3, 4, 5, 6]);
/// ```
pub fn flat<T: HasAfEnum>(input: &Array<T>) -> Array<T> {
    reshape("flat", input, Dim4::new(&[input.elements() as u64, 1, 1, 1]))
}

/// Reverses the order of the elements along dimension `dim`. The result is a view with a
/// negative stride (a lazy input is evaluated first).
///
/// ```
/// use emberfire::{flip, Array, dim4};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(3, 2));
/// assert_eq!(flip(&a, 0).to_vec(), vec![3, 2, 1, 6, 5, 4]);
/// assert_eq!(flip(&a, 1).to_vec(), vec![4, 5, 6, 1, 2, 3]);
/// ```
///
/// Panics if `dim` is 4 or more.
pub fn flip<T: HasAfEnum>(input: &Array<T>, dim: u32) -> Array<T> {
    let dims = input.dims();
    assert!(dim < 4, "flip: dimension {dim} is not in 0..4 (input dims {dims})");
    let k = dim as usize;
    if dims[k] <= 1 {
        return input.clone();
    }
    let node = input.node();
    let mut d = ready("flip", node);
    let last = d.offset as i64 + (dims[k] - 1) as i64 * d.strides[k];
    d.offset = last as usize;
    d.strides[k] = -d.strides[k];
    view(node, dims, d)
}

/// Exchanges the axes of an array: dimension `k` of the result is dimension `axes[k]` of the
/// input, where `axes` is `[new_axis0, new_axis1, 2, 3]` with `next_axes` (at most two)
/// replacing its last entries. The result is a view with permuted strides (a lazy input is
/// evaluated first).
///
/// ```
/// use emberfire::{reorder_v2, Array, dim4};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(3, 2));
/// let b = reorder_v2(&a, 1, 0, None);
/// assert_eq!(b.dims(), dim4!(2, 3));
/// assert_eq!(b.to_vec(), vec![1, 4, 2, 5, 3, 6]);
/// let c = reorder_v2(&a, 2, 0, Some(vec![1]));
/// assert_eq!(c.dims(), dim4!(1, 3, 2));
/// ```
///
/// Panics if the axes are not a permutation of `0..4`.
pub fn reorder_v2<T: HasAfEnum>(
    input: &Array<T>,
    new_axis0: u64,
    new_axis1: u64,
    next_axes: Option<Vec<u64>>,
) -> Array<T> {
    let mut axes = [new_axis0, new_axis1, 2, 3];
    if let Some(rest) = next_axes {
        assert!(
            rest.len() <= 2,
            "reorder_v2: at most 2 axes after the first two, got {rest:?} (input dims {})",
            input.dims()
        );
        axes[2..2 + rest.len()].copy_from_slice(&rest);
    }
    permute("reorder_v2", input, axes)
}

/// The axes order as a shape, as in arrayfire-rust's older `reorder`: equivalent to
/// `reorder_v2(input, dims[0], dims[1], Some(vec![dims[2], dims[3]]))`.
///
/// ```
/// # #![allow(deprecated)]
/// use emberfire::{reorder, Array, dim4};
/// let a = Array::new(&[1, 2, 3, 4], dim4!(2, 2));
/// assert_eq!(reorder(&a, dim4!(1, 0, 2, 3)).to_vec(), vec![1, 3, 2, 4]);
/// ```
#[deprecated(since = "0.1.0", note = "use reorder_v2, as arrayfire-rust does since 3.6.3")]
pub fn reorder<T: HasAfEnum>(input: &Array<T>, dims: Dim4) -> Array<T> {
    permute("reorder", input, *dims.get())
}

fn permute<T: HasAfEnum>(func: &str, input: &Array<T>, axes: [u64; 4]) -> Array<T> {
    let dims = input.dims();
    let mut seen = [false; 4];
    for &a in &axes {
        assert!(
            a < 4 && !std::mem::replace(&mut seen[a as usize], true),
            "{func}: axes {axes:?} are not a permutation of 0, 1, 2, 3 (input dims {dims})"
        );
    }
    if axes == [0, 1, 2, 3] {
        return input.clone();
    }
    let node = input.node();
    let d = ready(func, node);
    let out = Dim4::new(&axes.map(|a| dims[a as usize]));
    let strides = axes.map(|a| d.strides[a as usize]);
    view(node, out, Data { strides, ..d })
}

/// Repeats an array `dims[k]` times along each dimension `k`.
///
/// Costs no copy: along dimensions of size 1 the result is a view with stride 0, and otherwise
/// a lazy leaf that reads the input periodically, so `tile(&a, d) * &b` is one fused pass that
/// never stores the tiled array.
///
/// ```
/// use emberfire::{tile, Array, dim4};
/// let a = Array::new(&[1, 2, 3], dim4!(3));
/// assert_eq!(tile(&a, dim4!(2)).to_vec(), vec![1, 2, 3, 1, 2, 3]);
/// assert_eq!(tile(&a, dim4!(1, 2)).dims(), dim4!(3, 2));
/// ```
pub fn tile<T: HasAfEnum>(input: &Array<T>, dims: Dim4) -> Array<T> {
    Array::from_node(periodic("tile", input.node(), [0; 4], *dims.get()))
}

/// Shifts the elements circularly: element `i` of the result along dimension `k` is element
/// `i - offsets[k]` (modulo the size) of the input. Costs no copy: the result is a lazy leaf
/// that reads the input with the shift applied.
///
/// ```
/// use emberfire::{shift, Array, dim4};
/// let a = Array::new(&[1, 2, 3, 4, 5], dim4!(5));
/// assert_eq!(shift(&a, &[1, 0, 0, 0]).to_vec(), vec![5, 1, 2, 3, 4]);
/// assert_eq!(shift(&a, &[-1, 0, 0, 0]).to_vec(), vec![2, 3, 4, 5, 1]);
/// ```
pub fn shift<T: HasAfEnum>(input: &Array<T>, offsets: &[i32; 4]) -> Array<T> {
    let dims = input.dims();
    let by: [u64; 4] = std::array::from_fn(|k| {
        let n = dims[k] as i64;
        if n == 0 {
            0
        } else {
            (-(offsets[k] as i64)).rem_euclid(n) as u64
        }
    });
    Array::from_node(periodic("shift", input.node(), by, [1; 4]))
}

/// `node` read periodically: element `c` of the result reads element `(c + by) mod n` of the
/// node (per dimension, `n` its size), and the result is `reps` times the node's size.
fn periodic(func: &str, node: &Arc<Node>, by: [u64; 4], reps: [u64; 4]) -> Arc<Node> {
    let dims = node.dims;
    let out = scaled(func, dims, Dim4::new(&reps));
    if out.elements() == 0 {
        return zeros_node(node.dtype, out, node.backend);
    }
    if reps == [1; 4] && by == [0; 4] {
        return node.clone();
    }
    // The data to read and how the node already reads it: a mapped node whose periodic
    // dimensions span whole periods composes (a shift of a tile is one map); anything else
    // lazy is evaluated first.
    let moved = |k: usize| reps[k] != 1 || by[k] != 0;
    let (data, src, base) = match node.state() {
        State::Ready(d) => (d, dims, [Axis::Same; 4]),
        State::Lazy { expr: Expr::Mapped(d, m), .. }
            if (0..4).all(|k| {
                !moved(k)
                    || match m.axes[k] {
                        Axis::Same => true,
                        Axis::Wrap(_) => dims[k].is_multiple_of(m.src[k]),
                        _ => false,
                    }
            }) =>
        {
            (d, m.src, m.axes)
        }
        State::Sparse(s) => panic!("{}", dense_only_message(func, s.format)),
        State::Pending(_) => unreachable!("internal error: `state` computes a pending node first"),
        State::Lazy { .. } => (ready(func, node), dims, [Axis::Same; 4]),
    };
    let axes: [Axis; 4] = std::array::from_fn(|k| {
        if !moved(k) {
            return base[k];
        }
        let n = src[k];
        match base[k] {
            Axis::Wrap(o) => Axis::Wrap((o + by[k]) % n),
            _ => Axis::Wrap(by[k] % n),
        }
    });
    mapped(node.dtype, out, node.backend, data, IndexMap { src, axes })
}

/// A node reading `data` through `map` with result shape `out`, in canonical form: along
/// source dimensions of size 1 every rule but `Zero` reads index 0, which becomes stride 0;
/// a periodic rule that changes nothing becomes `Same`; and a map that is the identity
/// everywhere is plain ready data (a view).
fn mapped(
    dtype: DType,
    out: Dim4,
    backend: BackendKind,
    mut data: Data,
    map: IndexMap,
) -> Arc<Node> {
    let mut axes = map.axes;
    for k in 0..4 {
        let n = map.src[k];
        match axes[k] {
            Axis::Zero(_) => {}
            _ if n == 1 => {
                axes[k] = Axis::Same;
                data.strides[k] = 0;
            }
            Axis::Wrap(0) if out[k] == n => axes[k] = Axis::Same,
            _ => {}
        }
    }
    let map = IndexMap { src: map.src, axes };
    if map.is_identity() {
        return Node::ready(dtype, out, backend, data);
    }
    Node::lazy(dtype, out, backend, Expr::Mapped(data, map))
}

/// A lazy array of zeros (for results with no elements, or nothing to read).
fn zeros_node(dtype: DType, dims: Dim4, backend: BackendKind) -> Arc<Node> {
    Node::lazy(dtype, dims, backend, Expr::Scalar(HostVec::zeros(dtype, 1)))
}

/// Adds `begin[k]` elements before and `end[k]` elements after the input along each dimension
/// `k`, filled as `fill_type` says. Costs no copy: the result is a lazy leaf that reads the
/// input through the border rule (a lazy input is evaluated first). Padding an empty array
/// gives zeros whatever the border type.
///
/// ```
/// use emberfire::{pad, Array, BorderType, Dim4, dim4};
/// let a = Array::new(&[1, 2, 3, 4], dim4!(2, 2));
/// // `Dim4::new`, not `dim4!`, which fills the dimensions it is not given with 1
/// let p = pad(&a, Dim4::new(&[1, 0, 0, 0]), Dim4::new(&[0, 1, 0, 0]), BorderType::ZERO);
/// assert_eq!(p.dims(), dim4!(3, 3));
/// assert_eq!(p.to_vec(), vec![0, 1, 2, 0, 3, 4, 0, 0, 0]);
/// ```
pub fn pad<T: HasAfEnum>(
    input: &Array<T>,
    begin: Dim4,
    end: Dim4,
    fill_type: BorderType,
) -> Array<T> {
    let dims = input.dims();
    let grown: [u64; 4] = std::array::from_fn(|k| {
        dims[k]
            .checked_add(begin[k])
            .and_then(|x| x.checked_add(end[k]))
            .unwrap_or_else(|| panic!("pad: dims {dims} padded by {begin} and {end} overflow"))
    });
    let out = Dim4::new(&grown);
    let none = Dim4::new(&[0; 4]);
    if begin == none && end == none {
        return input.clone();
    }
    let node = input.node();
    if out.elements() == 0 || dims.elements() == 0 {
        return Array::from_node(zeros_node(T::DTYPE, out, node.backend));
    }
    let data = ready("pad", node);
    let axes: [Axis; 4] = std::array::from_fn(|k| {
        if begin[k] == 0 && end[k] == 0 {
            return Axis::Same;
        }
        let (b, n) = (begin[k] as i64, dims[k] as i64);
        match fill_type {
            BorderType::ZERO => Axis::Zero(-b),
            BorderType::SYMMETRIC => Axis::Mirror(-b),
            BorderType::CLAMP_TO_EDGE => Axis::Clamp(-b),
            BorderType::PERIODIC => Axis::Wrap((-b).rem_euclid(n) as u64),
        }
    });
    Array::from_node(mapped(T::DTYPE, out, node.backend, data, IndexMap { src: dims, axes }))
}

/// A lazy array of shape `out` whose element `c` reads element `c + offsets` of `input`, by
/// `border`'s rule where that lies outside the input (along dimensions where the offset is 0
/// and `out` has the input's extent, the coordinate is used as is). Costs no copy, like
/// `pad`: the image filters build their shifted reads with it, so a sum or a maximum of
/// shifted reads is one fused pass over the input.
pub(crate) fn offset_read<T: HasAfEnum>(
    input: &Array<T>,
    out: Dim4,
    offsets: [i64; 4],
    border: BorderType,
) -> Array<T> {
    let dims = input.dims();
    let node = input.node();
    if out.elements() == 0 || dims.elements() == 0 {
        return Array::from_node(zeros_node(T::DTYPE, out, node.backend));
    }
    let data = ready("offset_read", node);
    let axes: [Axis; 4] = std::array::from_fn(|k| {
        let (b, n) = (offsets[k], dims[k] as i64);
        if b == 0 && out[k] == dims[k] {
            return Axis::Same;
        }
        match border {
            BorderType::ZERO => Axis::Zero(b),
            BorderType::SYMMETRIC => Axis::Mirror(b),
            BorderType::CLAMP_TO_EDGE => Axis::Clamp(b),
            BorderType::PERIODIC => Axis::Wrap(b.rem_euclid(n) as u64),
        }
    });
    Array::from_node(mapped(T::DTYPE, out, node.backend, data, IndexMap { src: dims, axes }))
}

/// Concatenates two arrays along dimension `dim`; their other dimensions must agree. Empty
/// arrays are skipped, as in ArrayFire.
///
/// ```
/// use emberfire::{join, Array, dim4};
/// let a = Array::new(&[1, 2], dim4!(2));
/// let b = Array::new(&[3, 4, 5], dim4!(3));
/// assert_eq!(join(0, &a, &b).to_vec(), vec![1, 2, 3, 4, 5]);
/// assert_eq!(join(1, &a, &a).dims(), dim4!(2, 2));
/// ```
///
/// Panics if `dim` is not in `0..4` or the shapes differ outside `dim`.
pub fn join<T: HasAfEnum>(dim: i32, first: &Array<T>, second: &Array<T>) -> Array<T> {
    concatenate("join", dim, &[first, second])
}

/// Concatenates several arrays along dimension `dim`; their other dimensions must agree.
/// Empty arrays are skipped. The result is a new array: each input is copied into its place
/// (a parallel copy per column on the CPU, one copy kernel per input on CUDA).
///
/// ```
/// use emberfire::{join_many, Array, dim4};
/// let a = Array::new(&[1, 2], dim4!(1, 2));
/// let b = Array::new(&[3, 4], dim4!(1, 2));
/// let c = join_many(0, vec![&a, &b, &a]);
/// assert_eq!(c.dims(), dim4!(3, 2));
/// assert_eq!(c.to_vec(), vec![1, 3, 1, 2, 4, 2]);
/// ```
///
/// Panics if `inputs` is empty, `dim` is not in `0..4` or the shapes differ outside `dim`.
pub fn join_many<T: HasAfEnum>(dim: i32, inputs: Vec<&Array<T>>) -> Array<T> {
    concatenate("join_many", dim, &inputs)
}

fn concatenate<T: HasAfEnum>(func: &str, dim: i32, inputs: &[&Array<T>]) -> Array<T> {
    assert!(!inputs.is_empty(), "{func}: no arrays to join");
    let shapes = || inputs.iter().map(|a| a.dims().to_string()).collect::<Vec<_>>().join(", ");
    assert!((0..4).contains(&dim), "{func}: dimension {dim} is not in 0..4 (shapes {})", shapes());
    let k = dim as usize;
    let nodes: Vec<&Arc<Node>> = inputs.iter().map(|a| a.node()).collect();
    let backend = build::common_backend(func, &nodes);
    let parts: Vec<&Array<T>> = inputs.iter().copied().filter(|a| a.elements() > 0).collect();
    let Some(first) = parts.first() else {
        // nothing to copy: the shape is the first input's, with the extents along `dim` added
        let mut out = inputs[0].dims();
        out[k] = inputs.iter().map(|a| a.dims()[k]).sum();
        return Array::from_node(zeros_node(T::DTYPE, out, backend));
    };
    let mut out = first.dims();
    for a in &parts[1..] {
        let d = a.dims();
        assert!(
            (0..4).all(|j| j == k || d[j] == out[j]),
            "{func}: shapes {} differ outside dimension {dim}",
            shapes()
        );
        out[k] += d[k];
    }
    if parts.len() == 1 {
        return (*first).clone();
    }
    let nodes: Vec<Arc<Node>> = parts.iter().map(|a| a.node().clone()).collect();
    if nodes.iter().any(|n| n.is_pending()) {
        // a join of pending reductions waits with them, so that reductions joined one by one
        // (`join(1, &join(1, &sum(&a, 1), &sum(&b, 1)), &sum(&c, 1))`) still share a pass
        let pending = Pending { inputs: nodes, work: Box::new(PendingJoin { dim: k }) };
        return Array::from_node(Node::pending(T::DTYPE, out, backend, pending));
    }
    let sources: Vec<(Data, Dim4)> =
        parts.iter().map(|a| (ready(func, a.node()), a.dims())).collect();
    let buf = backend.ops().concatenate(&sources, k, out, T::DTYPE).or_raise(func);
    Array::from_node(Node::ready(T::DTYPE, out, backend, Data::dense(buf, out)))
}

/// A concatenation along `dim` of parts some of which are pending (see `jit::pending`).
struct PendingJoin {
    dim: usize,
}

impl Resolve for PendingJoin {
    fn resolve(&self, node: &Node, inputs: &[Arc<Node>]) -> Result<(), crate::error::Error> {
        // together: pending parts that are siblings share one pass
        crate::backend::schedule::eval_nodes(inputs)?;
        let sources: Vec<(Data, Dim4)> = inputs
            .iter()
            .map(|n| (n.data().expect("internal error: a joined part not ready"), n.dims))
            .collect();
        let buf = node.backend.ops().concatenate(&sources, self.dim, node.dims, node.dtype)?;
        node.set_ready(Data::dense(buf, node.dims));
        Ok(())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The transpose of each matrix (dimensions 0 and 1 exchanged; dimensions 2 and 3 are
/// batches), conjugated if `conjugate` and the elements are complex.
///
/// The result is a new array, computed by a tiled kernel (shared-memory tiles on CUDA,
/// cache blocks on the CPU). A vector's transpose changes no element's position and is a
/// view.
///
/// ```
/// use emberfire::{transpose, Array, c32, dim4};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
/// let t = transpose(&a, false);
/// assert_eq!(t.dims(), dim4!(3, 2));
/// assert_eq!(t.to_vec(), vec![1, 3, 5, 2, 4, 6]);
/// let z = Array::new(&[c32::new(1.0, 2.0)], dim4!(1));
/// assert_eq!(transpose(&z, true).to_vec(), vec![c32::new(1.0, -2.0)]);
/// ```
pub fn transpose<T: HasAfEnum>(arr: &Array<T>, conjugate: bool) -> Array<T> {
    let d = arr.dims();
    let out = Dim4::new(&[d[1], d[0], d[2], d[3]]);
    let conj = conjugate && T::DTYPE.is_complex();
    let conjugated = |a: Array<T>| -> Array<T> {
        if conj {
            build::unary("transpose", UnOp::Conjg, a.node())
        } else {
            a
        }
    };
    if d[0] <= 1 || d[1] <= 1 {
        return conjugated(reshape("transpose", arr, out));
    }
    let node = arr.node();
    let data = ready("transpose", node);
    if data.strides[0] == 1 {
        let buf = node.backend.ops().transpose(&data, d, T::DTYPE, conj).or_raise("transpose");
        return Array::from_node(Node::ready(T::DTYPE, out, node.backend, Data::dense(buf, out)));
    }
    // Dimension 0 is itself strided (a view from reorder_v2 or flip): the transposed view is
    // read by an element-wise copy, which is coalesced whenever dimension 1 is contiguous.
    let swapped = Data {
        strides: [data.strides[1], data.strides[0], data.strides[2], data.strides[3]],
        ..data
    };
    let r = conjugated(view(node, out, swapped));
    let copy = if conj { r } else { r.copy() };
    copy.eval();
    copy
}

/// Replaces `arr` with its transpose (see [`transpose`]). Unlike ArrayFire, any shape is
/// accepted, not only square matrices.
///
/// ```
/// use emberfire::{transpose_inplace, Array, dim4};
/// let mut a = Array::new(&[1, 2, 3, 4], dim4!(2, 2));
/// transpose_inplace(&mut a, false);
/// assert_eq!(a.to_vec(), vec![1, 3, 2, 4]);
/// ```
pub fn transpose_inplace<T: HasAfEnum>(arr: &mut Array<T>, conjugate: bool) {
    *arr = transpose(arr, conjugate);
}
