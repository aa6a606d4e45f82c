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
            panic!(
                "{func}: operands live on different backends or devices ({:?} and {:?}); move \
                 one with a host copy first",
                b, n.backend
            );
        }
    }
    b
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
    let backend = common_backend(func, &[lhs, rhs]);
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
    let backend = common_backend(func, &[cond, a, b]);
    let dims = broadcast_dims(func, &[cond.dims, a.dims, b.dims], true);
    let t = T::get_af_dtype();
    let expr = Expr::Select(cast_node(cond, DType::B8), cast_node(a, t), cast_node(b, t));
    Array::from_node(Node::lazy(t, dims, backend, expr))
}
