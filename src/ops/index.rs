//! Indexing by sequences: `index` and the `row`/`rows`/`col`/`cols`/`slice`/`slices` helpers.
//!
//! Every function here returns a view: a new array sharing the input's memory, with its own
//! offset and strides (negative for a negative step), so nothing is copied and the JIT reads
//! the view in place when it feeds an expression or a reduction. A lazy input is evaluated
//! first. Views of views compose their offsets and strides.
//!
//! Two of ArrayFire's rules apply throughout:
//! - a single sequence on an array of more than one dimension indexes the array as if it were
//!   flattened to one column (column-major order);
//! - dimensions past the last sequence given are kept whole. (ArrayFire's C `af_index` keeps
//!   only their first position; its general indexing, `af_index_gen`, keeps them whole, and
//!   emberfire does that everywhere.)

use std::sync::Arc;

use super::seq::{Positions, SeqF};
use crate::array::Array;
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, IndexableType};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node, Program};
use crate::storage::HostVec;
use crate::Seq;

/// ArrayFire's rule: one index on an array that has more than one dimension (or none) indexes
/// the array flattened to one column.
pub(crate) fn flattens(indices: usize, dims: Dim4) -> bool {
    indices == 1 && dims.ndims() != 1
}

/// The evaluated data of `node` and the shape an index applies to: the node's own shape, or,
/// with `flat`, one column of all its elements (copying a view that is not contiguous, which
/// has no one-column layout).
pub(crate) fn indexed_layout(func: &str, node: &Arc<Node>, flat: bool) -> (Data, Dim4) {
    let data = node.try_eval().or_raise(func);
    if !flat {
        return (data, node.dims);
    }
    let n = node.dims.elements();
    let column = Dim4::new(&[n, 1, 1, 1]);
    let data = if data.is_contiguous(node.dims) {
        data
    } else {
        let copy = Program::copy_of(data, node.dtype, node.dims);
        let buf = node.backend.ops().run(&copy).or_raise(func);
        Data::dense(buf.into_iter().next().expect("one output"), node.dims)
    };
    let n = n as i64;
    (Data { strides: [1, n, n, n], ..data }, column)
}

/// Resolves up to four sequences against `dims`; dimensions without one are kept whole.
pub(crate) fn resolve_seqs(func: &str, seqs: &[SeqF], dims: Dim4) -> [Positions; 4] {
    std::array::from_fn(|k| match seqs.get(k) {
        Some(s) => s.resolve(func, k, dims),
        None => Positions::all(dims[k]),
    })
}

/// Panics unless 1 to 4 indices are given.
pub(crate) fn check_index_count(func: &str, n: usize, dims: Dim4) {
    assert!(
        (1..=4).contains(&n),
        "{func}: {n} indices given for an array of dims {dims}; give 1 to 4"
    );
}

/// A new empty array of shape `dims` (which has no elements) on `backend`.
pub(crate) fn empty_on<T: HasAfEnum>(func: &str, backend: BackendKind, dims: Dim4) -> Array<T> {
    debug_assert_eq!(dims.elements(), 0);
    let buf = backend.ops().upload(HostVec::zeros(T::DTYPE, 0)).or_raise(func);
    Array::from_node(Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims)))
}

/// The view of `data` (laid out for shape `dims`) at `positions`: the same buffer, the offset
/// of the first position, each stride multiplied by its step.
fn view<T: HasAfEnum>(
    func: &str,
    backend: BackendKind,
    data: Data,
    positions: &[Positions; 4],
) -> Array<T> {
    let out = Dim4::new(&std::array::from_fn(|k| positions[k].count));
    if out.elements() == 0 {
        return empty_on(func, backend, out);
    }
    let offset =
        data.offset as i64 + (0..4).map(|k| positions[k].start * data.strides[k]).sum::<i64>();
    let offset = usize::try_from(offset).expect("internal error: a view before its buffer");
    let strides = std::array::from_fn(|k| data.strides[k] * positions[k].step);
    Array::from_node(Node::ready(T::DTYPE, out, backend, Data { buf: data.buf, offset, strides }))
}

/// Indexes `input` by sequences (as f64), for `index`, `index_gen` and the row/column/slice
/// helpers, whose name `func` is used in panics.
pub(crate) fn view_by_seqs<T: HasAfEnum>(func: &str, input: &Array<T>, seqs: &[SeqF]) -> Array<T> {
    check_index_count(func, seqs.len(), input.dims());
    let flat = flattens(seqs.len(), input.dims());
    let (data, dims) = indexed_layout(func, input.node(), flat);
    let positions = resolve_seqs(func, seqs, dims);
    view(func, input.node().backend, data, &positions)
}

/// The part of `input` that `seqs` select, one sequence per dimension from the first: a view
/// sharing `input`'s memory (no copy). One sequence on an array of more than one dimension
/// indexes it as one column of all its elements; dimensions past the last sequence are kept
/// whole. See [`Seq`] for negative positions and steps.
///
/// Panics, naming the sequence and the shape, if a sequence reaches outside its dimension or
/// steps away from its end, or if more than four sequences are given.
///
/// ```
/// use emberfire::{Array, Seq, dim4, index};
/// // 0 3 6
/// // 1 4 7
/// // 2 5 8
/// let a = Array::new(&[0, 1, 2, 3, 4, 5, 6, 7, 8], dim4!(3, 3));
/// let sub = index(&a, &[Seq::new(1, 2, 1), Seq::new(2, 0, -2)]);
/// assert_eq!(sub.dims(), dim4!(2, 2));
/// assert_eq!(sub.to_vec(), vec![7, 8, 1, 2]);
/// // one sequence indexes the flattened array
/// assert_eq!(index(&a, &[Seq::new(-1, -3, -1)]).to_vec(), vec![8, 7, 6]);
/// ```
pub fn index<IO, T>(input: &Array<IO>, seqs: &[Seq<T>]) -> Array<IO>
where
    f64: From<T>,
    IO: HasAfEnum,
    T: Copy + IndexableType,
{
    let seqs: Vec<SeqF> = seqs.iter().map(SeqF::of).collect();
    view_by_seqs("index", input, &seqs)
}

/// Sequences selecting `at` along dimension `dim` and everything along the others.
pub(crate) fn along(dim: usize, at: SeqF) -> [SeqF; 4] {
    let mut s = [SeqF::SPAN; 4];
    s[dim] = at;
    s
}

/// Row `row_num` (negative counts from the last row) of `input`: a view of shape
/// `1 × d1 × d2 × d3`.
///
/// ```
/// use emberfire::{Array, dim4, row};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3)); // rows [1 3 5] and [2 4 6]
/// assert_eq!(row(&a, 1).to_vec(), vec![2, 4, 6]);
/// assert_eq!(row(&a, -2).to_vec(), vec![1, 3, 5]);
/// ```
pub fn row<T: HasAfEnum>(input: &Array<T>, row_num: i64) -> Array<T> {
    view_by_seqs("row", input, &along(0, SeqF::single(row_num)))
}

/// Rows `first` to `last` (inclusive) of `input`, as a view. Negative values count from the
/// last row; when `first > last` and `last` is negative, the rows are taken backwards (as
/// arrayfire-rust does).
///
/// ```
/// use emberfire::{Array, dim4, rows};
/// let a = Array::new(&[0, 1, 2, 3], dim4!(4));
/// assert_eq!(rows(&a, 1, 2).to_vec(), vec![1, 2]);
/// assert_eq!(rows(&a, -1, -3).to_vec(), vec![3, 2, 1]);
/// ```
pub fn rows<T: HasAfEnum>(input: &Array<T>, first: i64, last: i64) -> Array<T> {
    view_by_seqs("rows", input, &along(0, SeqF::between(first, last)))
}

/// Column `col_num` (negative counts from the last column) of `input`, as a view.
///
/// ```
/// use emberfire::{Array, dim4, col};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
/// assert_eq!(col(&a, 2).to_vec(), vec![5, 6]);
/// assert_eq!(col(&a, -3).to_vec(), vec![1, 2]);
/// ```
pub fn col<T: HasAfEnum>(input: &Array<T>, col_num: i64) -> Array<T> {
    view_by_seqs("col", input, &along(1, SeqF::single(col_num)))
}

/// Columns `first` to `last` (inclusive) of `input`, as a view; negative values count from
/// the last column, as in [`rows`].
///
/// ```
/// use emberfire::{Array, dim4, cols};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
/// assert_eq!(cols(&a, 1, 2).to_vec(), vec![3, 4, 5, 6]);
/// assert_eq!(cols(&a, -1, -2).to_vec(), vec![5, 6, 3, 4]);
/// ```
pub fn cols<T: HasAfEnum>(input: &Array<T>, first: i64, last: i64) -> Array<T> {
    view_by_seqs("cols", input, &along(1, SeqF::between(first, last)))
}

/// Slice `slice_num` (position along the third dimension; negative counts from the last) of
/// `input`, as a view.
///
/// ```
/// use emberfire::{Array, dim4, slice};
/// let a = Array::new(&[1, 2, 3, 4], dim4!(1, 2, 2));
/// assert_eq!(slice(&a, 1).to_vec(), vec![3, 4]);
/// ```
pub fn slice<T: HasAfEnum>(input: &Array<T>, slice_num: i64) -> Array<T> {
    view_by_seqs("slice", input, &along(2, SeqF::single(slice_num)))
}

/// Slices `first` to `last` (inclusive) along the third dimension, as a view; negative values
/// count from the last slice, as in [`rows`].
///
/// ```
/// use emberfire::{Array, dim4, slices};
/// let a = Array::new(&[1, 2, 3], dim4!(1, 1, 3));
/// assert_eq!(slices(&a, 0, 1).to_vec(), vec![1, 2]);
/// assert_eq!(slices(&a, -1, -3).to_vec(), vec![3, 2, 1]);
/// ```
pub fn slices<T: HasAfEnum>(input: &Array<T>, first: i64, last: i64) -> Array<T> {
    view_by_seqs("slices", input, &along(2, SeqF::between(first, last)))
}
