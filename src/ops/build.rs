//! Building graph nodes for the public operations: type conversion to the type an operation
//! computes in, shape checking with broadcasting, and backend checks, in one place.

use std::sync::Arc;

use crate::array::Array;
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::jit::{BinOp, Expr, Node, UnOp};

/// `node` converted to `to` (the node itself when the type already matches).
pub(crate) fn cast_node(node: &Arc<Node>, to: DType) -> Arc<Node> {
    if node.dtype == to {
        node.clone()
    } else {
        Node::lazy(to, node.dims, node.backend, Expr::Cast(node.clone()))
    }
}

/// The shape of an element-wise result. Equal sizes combine; a size of 1 broadcasts when
/// `batch` is set; a single-element operand (a scalar) broadcasts always.
pub(crate) fn broadcast_dims(func: &str, shapes: &[Dim4], batch: bool) -> Dim4 {
    let real: Vec<Dim4> = shapes.iter().copied().filter(|d| d.elements() != 1).collect();
    if real.is_empty() {
        return shapes[0];
    }
    let mut out = real[0];
    for s in &real[1..] {
        for k in 0..4 {
            if s[k] == out[k] {
                continue;
            }
            if batch && (s[k] == 1 || out[k] == 1) {
                out[k] = if out[k] == 1 { s[k] } else { out[k] };
            } else {
                let list: Vec<String> = shapes.iter().map(|d| d.to_string()).collect();
                if batch {
                    panic!(
                        "{func}: shapes {} do not broadcast: dimension {k} differs and neither \
                         size is 1",
                        list.join(" and ")
                    );
                }
                panic!(
                    "{func}: shapes {} differ; pass batch = true to broadcast dimensions of \
                     size 1",
                    list.join(" and ")
                );
            }
        }
    }
    out
}

/// The common backend of the operands; arrays of different backends or devices never mix.
pub(crate) fn common_backend(func: &str, nodes: &[&Arc<Node>]) -> BackendKind {
    let b = nodes[0].backend;
    for n in &nodes[1..] {
        if n.backend != b {
            mixed(func, b, n.backend);
        }
    }
    b
}

/// The panic for operands of two backends or devices, saying how to move one.
fn mixed(func: &str, a: BackendKind, b: BackendKind) -> ! {
    let name = |k: BackendKind| match k {
        BackendKind::Cpu => "the CPU backend".to_string(),
        BackendKind::Cuda(d) => format!("CUDA device {d}"),
    };
    panic!(
        "{func}: operands live on {} and {}; emberfire never copies between them silently: \
         move one with `Array::to_backend` (between the CPU and CUDA) or `Array::to_device` \
         (between CUDA devices) first",
        name(a),
        name(b)
    )
}

/// The backend of an element-wise operation: that of its array operands, which must agree.
/// Scalar constants (values, not memory) take that backend (see [`on_backend`]), so that
/// `&a + 1.0` works for an array of any backend whichever one is active.
fn elementwise_backend(func: &str, nodes: &[&Arc<Node>]) -> BackendKind {
    // the usual case, without looking into any node
    if nodes.iter().all(|n| n.backend == nodes[0].backend) {
        return nodes[0].backend;
    }
    let mut arrays = nodes.iter().filter(|n| !is_constant(n));
    let Some(first) = arrays.next() else { return nodes[0].backend };
    for n in arrays {
        if n.backend != first.backend {
            mixed(func, first.backend, n.backend);
        }
    }
    first.backend
}

/// Whether `node` is a scalar constant, or a conversion of one (what a number becomes once it
/// is given a type): a value that can be made again on any backend.
fn is_constant(node: &Arc<Node>) -> bool {
    node.scalar_value().is_some() || node.cast_source().is_some_and(|x| x.scalar_value().is_some())
}

/// `node` on `backend`: the node itself, or a scalar constant made again there.
fn on_backend(node: &Arc<Node>, backend: BackendKind) -> Arc<Node> {
    if node.backend == backend {
        return node.clone();
    }
    let remake = |n: &Arc<Node>| {
        let v = n.scalar_value().expect("internal error: only constants change backend");
        Node::lazy(n.dtype, n.dims, backend, Expr::Scalar(v))
    };
    match node.cast_source() {
        Some(x) => Node::lazy(node.dtype, node.dims, backend, Expr::Cast(remake(&x))),
        None => remake(node),
    }
}

/// A float type wide enough for computing on `t`: f64 for 64-bit types, f32 otherwise.
fn float_for(t: DType) -> DType {
    match t {
        DType::F64 | DType::S64 | DType::U64 | DType::C64 => DType::F64,
        _ => DType::F32,
    }
}

/// Builds a unary operation returning `Array<O>`, choosing the type it computes in: the
/// input's type when the operation is defined on it with the right result, else the output
/// type, else a float type. Panics (naming `func`) for complex inputs the operation does not
/// accept.
pub(crate) fn unary<O: HasAfEnum>(func: &str, op: UnOp, input: &Arc<Node>) -> Array<O> {
    if let Some(p) = input.sparse() {
        panic!("{}", crate::jit::sparse::dense_only_message(func, p.format));
    }
    let (tin, tout) = (input.dtype, O::get_af_dtype());
    let compute = if op.supports(tin) && op.out_type(tin) == op.out_type(tout) {
        tin
    } else if tin.is_complex() {
        panic!("{func}: not defined for complex arrays (input is {})", tin.name())
    } else if op.supports(tout) {
        tout
    } else {
        float_for(tin)
    };
    if !op.supports(compute) {
        panic!("{func}: not defined for {} arrays", tin.name());
    }
    let x = cast_node(input, compute);
    let n = Node::lazy(op.out_type(compute), x.dims, x.backend, Expr::Unary(op, x));
    Array::from_node(cast_node(&n, tout))
}

/// Builds a binary operation computed in type `compute`, returning `Array<O>`.
pub(crate) fn binary<O: HasAfEnum>(
    func: &str,
    op: BinOp,
    lhs: &Arc<Node>,
    rhs: &Arc<Node>,
    compute: DType,
    batch: bool,
) -> Array<O> {
    let backend = elementwise_backend(func, &[lhs, rhs]);
    let (lhs, rhs) = (&on_backend(lhs, backend), &on_backend(rhs, backend));
    if lhs.sparse().is_some() || rhs.sparse().is_some() {
        let n = crate::ops::sparse::arith::binary(func, op, lhs, rhs, compute);
        if n.dtype != O::get_af_dtype() {
            panic!(
                "{func}: the result of sparse arithmetic is {}, not {}",
                n.dtype.name(),
                O::get_af_dtype().name()
            );
        }
        return Array::from_node(n);
    }
    let dims = broadcast_dims(func, &[lhs.dims, rhs.dims], batch);
    if !op.supports(compute) {
        panic!(
            "{func}: not defined for {} arrays (operands are {} and {})",
            compute.name(),
            lhs.dtype.name(),
            rhs.dtype.name()
        );
    }
    let (a, b) = (cast_node(lhs, compute), cast_node(rhs, compute));
    let n = Node::lazy(op.out_type(compute), dims, backend, Expr::Binary(op, a, b));
    Array::from_node(cast_node(&n, O::get_af_dtype()))
}

/// Builds `cond ? a : b` with broadcasting of size-1 dimensions and scalars.
pub(crate) fn select_nodes<T: HasAfEnum>(
    func: &str,
    cond: &Arc<Node>,
    a: &Arc<Node>,
    b: &Arc<Node>,
) -> Array<T> {
    let backend = elementwise_backend(func, &[cond, a, b]);
    let (cond, a, b) =
        (&on_backend(cond, backend), &on_backend(a, backend), &on_backend(b, backend));
    let dims = broadcast_dims(func, &[cond.dims, a.dims, b.dims], true);
    let t = T::get_af_dtype();
    let expr = Expr::Select(cast_node(cond, DType::B8), cast_node(a, t), cast_node(b, t));
    Array::from_node(Node::lazy(t, dims, backend, expr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dim4;
    use crate::jit::Expr;

    /// A lazy range on CUDA device 3: never evaluated, only combined with.
    fn on_cuda() -> Array<f32> {
        Array::from_node(Node::lazy(DType::F32, dim4!(4), BackendKind::Cuda(3), Expr::Range(0)))
    }

    #[test]
    fn arrays_of_two_backends_do_not_mix_and_the_message_says_how_to_move_one() {
        let cpu: Array<f32> =
            Array::from_node(Node::lazy(DType::F32, dim4!(4), BackendKind::Cpu, Expr::Range(0)));
        let err = std::panic::catch_unwind(|| crate::add(&cpu, &on_cuda(), false)).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.starts_with("add: operands live on the CPU backend and CUDA device 3"),
            "{msg}"
        );
        assert!(msg.contains("Array::to_backend") && msg.contains("Array::to_device"), "{msg}");
    }

    #[test]
    fn scalar_constants_take_the_backend_of_the_array_they_combine_with() {
        let cpu = Array::new(&[1.0f32, 5.0, 3.0], dim4!(3));
        // a constant made while another backend was active (here: a CUDA device)
        let two = Array::<f32>::from_node(Node::lazy(
            DType::F32,
            dim4!(1),
            BackendKind::Cuda(3),
            Expr::Scalar(crate::storage::HostVec::F32(vec![2.0])),
        ));
        for sum in [crate::add(&cpu, &two, false), crate::add(&two, &cpu, false)] {
            assert_eq!(sum.node().backend, BackendKind::Cpu);
            assert_eq!(sum.to_vec(), vec![3.0, 7.0, 5.0]);
        }
        // a converted constant (an f64 made f32) moves too
        let half = Array::<f64>::from_node(Node::lazy(
            DType::F64,
            dim4!(1),
            BackendKind::Cuda(3),
            Expr::Scalar(crate::storage::HostVec::F64(vec![0.5])),
        ))
        .cast::<f32>();
        let prod = crate::mul(&half, &cpu, false);
        assert_eq!(prod.node().backend, BackendKind::Cpu);
        assert_eq!(prod.to_vec(), vec![0.5, 2.5, 1.5]);
        let cond = Array::new(&[true, false, true], dim4!(3));
        let picked = crate::select(&cpu, &cond, &two);
        assert_eq!(picked.node().backend, BackendKind::Cpu);
        assert_eq!(picked.to_vec(), vec![1.0, 2.0, 3.0]);
        // two arrays of another backend still do not mix
        let err = std::panic::catch_unwind(|| crate::mul(&cpu, &on_cuda(), true));
        assert!(err.is_err());
    }
}
