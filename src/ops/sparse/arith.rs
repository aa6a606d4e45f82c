//! Arithmetic with sparse operands, by ArrayFire's rules:
//!
//! | operation | result |
//! |---|---|
//! | sparse ± sparse (same shape) | sparse (CSR), the union of the two patterns |
//! | sparse ± dense, dense ± sparse | dense |
//! | sparse × dense, dense × sparse, sparse ÷ dense | sparse, the sparse operand's pattern |
//! | sparse × sparse, sparse ÷ sparse, dense ÷ sparse | refused (panics) |
//!
//! A dense operand has the sparse one's shape, or is a single value (a scalar) that applies to
//! every element. Operations other than `+ - * /` refuse sparse operands.

use std::sync::Arc;

use super::convert::{coordinates, to_dense, Coordinates};
use super::{assemble, SparseFormat};
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::jit::sparse::SparseParts;
use crate::jit::{BinOp, Node};
use crate::ops::build;
use crate::ops::by_key::sum_by_key;
use crate::ops::data::constant;
use crate::ops::indexer::lookup;
use crate::ops::locate::locate;
use crate::ops::movement::{flat, join};
use crate::ops::scan::{accum, diff1};
use crate::ops::sort::sort_by_key;
use crate::storage::with_float;

/// `lhs op rhs` where at least one operand is sparse, computed in `compute` (one of the four
/// floating types): a sparse or dense node, by the rules of the module table.
pub(crate) fn binary(
    func: &str,
    op: BinOp,
    lhs: &Arc<Node>,
    rhs: &Arc<Node>,
    compute: DType,
) -> Arc<Node> {
    let symbol = match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        _ => panic!(
            "{func}: not defined for sparse arrays (sparse arrays take part in +, -, *, / and \
             matmul; convert with sparse_to_dense first)"
        ),
    };
    with_float!(compute, T => {
        let (l, r) = (cast_operand::<T>(lhs), cast_operand::<T>(rhs));
        match (l.node().sparse(), r.node().sparse(), op) {
            (Some(_), Some(_), BinOp::Add | BinOp::Sub) => {
                same_shape(func, &l, &r);
                // the offsets, run starts and empty parts it makes follow the operands
                build::with_backend_of(&l, || union(func, op, &l, &r)).node().clone()
            }
            (Some(_), Some(_), _) => panic!(
                "{func}: `{symbol}` of two sparse arrays is not supported (as in ArrayFire); \
                 convert one with sparse_to_dense"
            ),
            (Some(_), None, BinOp::Add | BinOp::Sub) => {
                dense_binary(func, op, &to_dense(func, &l), &r)
            }
            (None, Some(_), BinOp::Add | BinOp::Sub) => {
                dense_binary(func, op, &l, &to_dense(func, &r))
            }
            (Some(p), None, _) => on_pattern(func, op, &l, &p, &r, false),
            (None, Some(p), BinOp::Mul) => on_pattern(func, op, &r, &p, &l, true),
            (None, Some(_), _) => panic!(
                "{func}: dividing by a sparse array is not supported (its missing elements \
                 are zeros); convert it with sparse_to_dense"
            ),
            (None, None, _) => unreachable!("internal error: no sparse operand"),
        }
    }, other => panic!(
        "{}: sparse arithmetic computes in f32, f64, c32 or c64, not {}",
        func,
        other.name()
    ))
}

/// The operand as `Array<T>`: a sparse one with its values cast, a dense one cast lazily.
fn cast_operand<T: HasAfEnum>(node: &Arc<Node>) -> Array<T> {
    match node.sparse() {
        Some(p) if node.dtype != T::DTYPE => {
            let values = Array::<T>::from_node(build::cast_node(&p.values, T::DTYPE));
            let d = node.dims;
            assemble(
                "cast",
                (d[0], d[1]),
                p.format,
                &values,
                &Array::from_node(p.rows.clone()),
                &Array::from_node(p.cols.clone()),
            )
        }
        _ => Array::from_node(build::cast_node(node, T::DTYPE)),
    }
}

fn same_shape<T: HasAfEnum>(func: &str, l: &Array<T>, r: &Array<T>) {
    assert!(
        l.dims() == r.dims(),
        "{func}: sparse operands of dims {} and {} differ; they must be equal",
        l.dims(),
        r.dims()
    );
}

fn dense_binary<T: HasAfEnum>(func: &str, op: BinOp, l: &Array<T>, r: &Array<T>) -> Arc<Node> {
    build::binary::<T>(func, op, l.node(), r.node(), T::DTYPE, false).node().clone()
}

/// `sparse op dense` (or `dense op sparse` when `reversed`) on the sparse operand's pattern:
/// each stored value meets the dense element at its position (or the single dense value).
fn on_pattern<T: HasAfEnum>(
    func: &str,
    op: BinOp,
    sparse: &Array<T>,
    p: &SparseParts,
    dense: &Array<T>,
    reversed: bool,
) -> Arc<Node> {
    let other = if dense.elements() == 1 {
        dense.clone()
    } else {
        same_shape(func, sparse, dense);
        let c: Coordinates<T> = coordinates(func, p);
        if c.values.elements() == 0 {
            c.values.clone()
        } else {
            let rows = sparse.dims()[0] as i64;
            let at = c.rows.cast::<i64>() + c.cols.cast::<i64>() * rows;
            lookup(&flat(dense), &at, 0)
        }
    };
    let values = Array::<T>::from_node(p.values.clone());
    let new_values = if reversed {
        dense_binary(func, op, &other, &values)
    } else {
        dense_binary(func, op, &values, &other)
    };
    let d = sparse.dims();
    assemble(
        func,
        (d[0], d[1]),
        p.format,
        &Array::<T>::from_node(new_values),
        &Array::from_node(p.rows.clone()),
        &Array::from_node(p.cols.clone()),
    )
    .node()
    .clone()
}

/// `l ± r` for two sparse arrays of one shape: CSR holding every position either stores.
fn union<T: HasAfEnum>(func: &str, op: BinOp, l: &Array<T>, r: &Array<T>) -> Array<T> {
    let d = l.dims();
    let (rows, cols) = (d[0], d[1]);
    let (a, b): (Coordinates<T>, Coordinates<T>) = (
        coordinates(func, &super::parts_of(func, l)),
        coordinates(func, &super::parts_of(func, r)),
    );
    let key = |c: &Coordinates<T>| c.rows.cast::<i64>() * cols as i64 + c.cols.cast::<i64>();
    let b_values = if op == BinOp::Sub { -&b.values } else { b.values.clone() };
    let (keys, values) = match (a.values.elements(), b.values.elements()) {
        (0, 0) => {
            let none = Dim4::new(&[0, 1, 1, 1]);
            let offsets =
                Array::<i32>::new(&vec![0; rows as usize + 1], Dim4::new(&[rows + 1, 1, 1, 1]));
            return assemble(
                func,
                (rows, cols),
                SparseFormat::CSR,
                &Array::<T>::new_empty(none),
                &offsets,
                &Array::<i32>::new_empty(none),
            );
        }
        (0, _) => (key(&b), b_values),
        (_, 0) => (key(&a), a.values.clone()),
        _ => (join(0, &key(&a), &key(&b)), join(0, &a.values, &b_values)),
    };
    let (sorted_keys, sorted_values) = sort_by_key(&keys, &values, 0, true);
    // by-key reductions take i32 keys: number the runs of equal positions and sum per run
    let n = sorted_keys.elements() as u64;
    let starts = if n > 1 {
        let changes = diff1(&sorted_keys, 0).cast::<bool>();
        join(0, &constant(true, Dim4::new(&[1, 1, 1, 1])), &changes)
    } else {
        constant(true, Dim4::new(&[n, 1, 1, 1]))
    };
    let run = accum(&starts.cast::<i32>(), 0) - 1i32;
    let (_, sums) = sum_by_key(&run, &sorted_values, 0);
    let at = lookup(&sorted_keys, &locate(&starts), 0);
    let row = (&at / cols as i64).cast::<i32>();
    let col = (&at % cols as i64).cast::<i32>();
    let offsets = super::convert::compress(func, &row, rows);
    assemble(func, (rows, cols), SparseFormat::CSR, &sums.cast::<T>(), &offsets, &col)
}
