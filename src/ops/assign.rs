//! Assignment into part of an array: `assign_seq`, `assign_gen` and the `set_row`/`set_rows`/
//! `set_col`/`set_cols`/`set_slice`/`set_slices` helpers.
//!
//! An assignment writes into the array's own memory when nothing else can observe it, and
//! otherwise copies the array first (copy-on-write, as ArrayFire does): another array sharing
//! the memory (a clone, a view, a view's parent), a lazy expression that reads the array, or a
//! lock held by the user each force the copy, so no other array ever sees the write.
//!
//! With sequences, the value is written through a strided view of the destination by
//! `BackendKind::run_into`, in one pass that also computes it: a lazy expression or a scalar
//! is fused into the write, and never stored on its own. With an index array, the value is
//! evaluated and scattered by `BackendKind::index_copy`; where an index repeats, which of the
//! values lands there is unspecified (as in ArrayFire).
//!
//! The value must have the shape of the indexed region, or be a single element (written
//! everywhere in the region), or, when the region is a vector, be a vector of the same length
//! (ArrayFire's rule).

use std::sync::Arc;

use super::build::common_backend;
use super::index::{along, check_index_count, flattens, resolve_seqs};
use super::indexer::Indexer;
use super::seq::SeqF;
use crate::array::Array;
use crate::backend::buffer_locked;
use crate::backend::index_copy::{Axis, Side};
use crate::backend::write_into::Dest;
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, IndexableType};
use crate::error_handler::OrRaise;
use crate::jit::node::State;
use crate::jit::{Data, Node, Program};
use crate::Seq;

/// The buffer of `node` when it can be written in place: the array is evaluated, dense, not
/// locked by the user, and neither the node nor its buffer is shared with anything.
fn exclusive_buffer(node: &mut Arc<Node>) -> Option<&mut Buffer> {
    let n = Arc::get_mut(node)?;
    let dims = n.dims;
    match n.state_mut() {
        State::Ready(d) if d.offset == 0 && d.is_contiguous(dims) && !buffer_locked(d.buffer()) => {
            d.buffer_mut()
        }
        _ => None,
    }
}

/// The memory of `arr`, dense (column-major for `arr.dims()`, from element 0), for writing: the
/// array's own buffer when nothing else can observe a write to it, else a dense copy that
/// replaces the array's node first (copy-on-write). Evaluates a lazy array.
///
/// This is the way into an existing array for any operation that writes part of it.
pub(crate) fn writable_buffer<'a, T: HasAfEnum>(
    func: &str,
    arr: &'a mut Array<T>,
) -> &'a mut Buffer {
    let node = arr.node_mut();
    // evaluated, and no copy of the data handle kept here (it would count as a sharer)
    node.try_eval().or_raise(func);
    if exclusive_buffer(node).is_none() {
        let (dims, backend) = (node.dims, node.backend);
        let data = node.data().expect("internal error: evaluated node without data");
        let copy = Program::copy_of(data, T::DTYPE, dims);
        let buf = backend.ops().run(&copy).or_raise(func);
        let buf = buf.into_iter().next().expect("one output");
        *node = Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims));
    }
    exclusive_buffer(node).expect("internal error: a new copy is shared")
}

/// True for a shape with exactly one dimension longer than 1.
fn is_vector(d: Dim4) -> bool {
    d.get().iter().filter(|&&x| x != 1).count() == 1 && d.elements() > 1
}

/// How the value of an assignment is read for a region: as its own tree, or as its data
/// re-strided to the region's shape (a single element with strides 0, a vector of another
/// orientation along the region's long dimension).
enum Value {
    /// The value's own tree, to be fused into the write (shape `region`, or a single element).
    Tree,
    /// The value's data read through these strides over the region's shape.
    Restrided(Data),
}

/// `fuse_scalar`: whether a single-element value may stay a tree (run by `run_into`, which
/// broadcasts it) rather than be read as data.
fn value_layout<T: HasAfEnum>(
    func: &str,
    rhs: &Array<T>,
    region: Dim4,
    target: Dim4,
    fuse_scalar: bool,
) -> Value {
    let rd = rhs.dims();
    if rd == region || (fuse_scalar && rd.elements() == 1) {
        return Value::Tree;
    }
    if rd.elements() == 1 {
        let d = rhs.node().try_eval().or_raise(func);
        return Value::Restrided(Data { strides: [0; 4], ..d });
    }
    if is_vector(rd) && is_vector(region) && rd.elements() == region.elements() {
        let d = rhs.node().try_eval().or_raise(func);
        let from = (0..4).find(|&k| rd[k] != 1).expect("a vector has a long dimension");
        let to = (0..4).find(|&k| region[k] != 1).expect("a vector has a long dimension");
        let mut strides = [0; 4];
        strides[to] = d.strides[from];
        return Value::Restrided(Data { strides, ..d });
    }
    panic!(
        "{func}: the value has dims {rd} but the indexed region of the array (dims {target}) has \
         dims {region}; the value must have the region's dims, be a single element, or be a \
         vector as long as a vector region"
    )
}

/// Writes `rhs` into the part of `lhs` that `seqs` select (rules of `index`), for
/// `assign_seq`, `assign_gen` and the `set_` helpers, whose name `func` is used in panics.
pub(crate) fn assign_by_seqs<T: HasAfEnum>(
    func: &str,
    lhs: &mut Array<T>,
    seqs: &[SeqF],
    rhs: &Array<T>,
) {
    let target = lhs.dims();
    check_index_count(func, seqs.len(), target);
    let backend = common_backend(func, &[lhs.node(), rhs.node()]);
    let layout = if flattens(seqs.len(), target) {
        Dim4::new(&[target.elements(), 1, 1, 1])
    } else {
        target
    };
    let positions = resolve_seqs(func, seqs, layout);
    let region = Dim4::new(&std::array::from_fn(|k| positions[k].count));
    if rhs.elements() == 0 {
        return; // as ArrayFire: assigning nothing changes nothing
    }
    let program = match value_layout(func, rhs, region, target, true) {
        Value::Tree => {
            crate::backend::schedule::program_for(std::slice::from_ref(rhs.node())).or_raise(func)
        }
        Value::Restrided(d) => Program::copy_of(d, T::DTYPE, region),
    };
    // A single-element value broadcasts: its program runs over the whole region.
    let program = Program { dims: region, ..program };
    let dense = layout.strides();
    let offset = (0..4).map(|k| positions[k].start * dense[k] as i64).sum::<i64>();
    let strides = std::array::from_fn(|k| positions[k].step * dense[k] as i64);
    let buf = writable_buffer(func, lhs);
    let dst = Dest { buf, offset: offset as usize, strides };
    backend.ops().run_into(&program, dst).or_raise(func);
}

/// Writes `rhs` into the part of `lhs` that `seqs` select (with the rules of
/// [`index`](crate::index)), in place when no other array shares `lhs`'s memory and into a
/// copy otherwise, so no other array sees the change. A lazy `rhs` is computed as it is
/// written. `rhs` must have the region's dims, be a single element (written everywhere in the
/// region), or be a vector as long as a vector region; an empty `rhs` changes nothing.
///
/// ```
/// use emberfire::{Array, Seq, assign_seq, constant, dim4};
/// let mut a = constant(2.0f32, dim4!(5, 3));
/// let before = a.clone();
/// let b = constant(1.0f32, dim4!(3, 3));
/// assign_seq(&mut a, &[Seq::new(1.0, 3.0, 1.0), Seq::default()], &b);
/// assert_eq!(a.to_vec()[..5], [2.0, 1.0, 1.0, 1.0, 2.0]);
/// assert_eq!(before.to_vec(), vec![2.0; 15]); // the clone still has the old values
/// ```
pub fn assign_seq<T, I>(lhs: &mut Array<I>, seqs: &[Seq<T>], rhs: &Array<I>)
where
    f64: From<T>,
    I: HasAfEnum,
    T: Copy + IndexableType,
{
    let seqs: Vec<SeqF> = seqs.iter().map(SeqF::of).collect();
    assign_by_seqs("assign_seq", lhs, &seqs, rhs);
}

/// Writes `rhs` into the part of `lhs` that `indices` select (the rules of
/// [`index_gen`](crate::index_gen)), copying `lhs` first if anything else shares its memory.
/// With sequences only this is [`assign_seq`]; with an index array the values are scattered
/// to the positions the indices select (folded into their dimension as
/// [`lookup`](crate::lookup) does), and where an index repeats, which value lands is
/// unspecified. The
/// value must fit the region as for [`assign_seq`].
///
/// ```
/// use emberfire::{Array, Indexer, Seq, assign_gen, constant, dim4};
/// let mut a = constant(0i32, dim4!(4, 2));
/// let rows = Array::new(&[3u16, 1], dim4!(2));
/// let first_col = Seq::new(0, 0, 1);
/// let mut idx = Indexer::default();
/// idx.set_index(&rows, 0, None);
/// idx.set_index(&first_col, 1, None);
/// assign_gen(&mut a, &idx, &Array::new(&[7, 9], dim4!(2)));
/// assert_eq!(a.to_vec(), vec![0, 9, 0, 7, 0, 0, 0, 0]);
/// ```
pub fn assign_gen<T: HasAfEnum>(lhs: &mut Array<T>, indices: &Indexer, rhs: &Array<T>) {
    let func = "assign_gen";
    let target = lhs.dims();
    indices.check_set(func, target);
    if let Some(seqs) = indices.seqs_only() {
        return assign_by_seqs(func, lhs, &seqs, rhs);
    }
    let backend = common_backend(func, &[lhs.node(), rhs.node()]);
    let layout =
        if indices.flattens(target) { Dim4::new(&[target.elements(), 1, 1, 1]) } else { target };
    let (axes, region) = indices.resolve(func, backend, layout);
    if rhs.elements() == 0 {
        return;
    }
    let value = match value_layout(func, rhs, region, target, false) {
        Value::Tree => rhs.node().try_eval().or_raise(func),
        Value::Restrided(d) => d,
    };
    let src = Side {
        dims: region,
        offset: value.offset,
        strides: value.strides,
        axes: std::array::from_fn(|_| Axis::IDENTITY),
    };
    let dense = layout.strides();
    let dst =
        Side { dims: layout, offset: 0, strides: std::array::from_fn(|k| dense[k] as i64), axes };
    let buf = writable_buffer(func, lhs);
    backend.ops().index_copy(T::DTYPE, region, value.buffer(), &src, buf, &dst).or_raise(func);
}

/// Writes `new_row` into row `row_num` of `inout` (negative counts from the last row); see
/// [`assign_seq`].
///
/// ```
/// use emberfire::{Array, constant, dim4, set_row};
/// let mut a = constant(0u8, dim4!(2, 3));
/// set_row(&mut a, &Array::new(&[1u8, 2, 3], dim4!(1, 3)), -1);
/// assert_eq!(a.to_vec(), vec![0, 1, 0, 2, 0, 3]);
/// ```
pub fn set_row<T: HasAfEnum>(inout: &mut Array<T>, new_row: &Array<T>, row_num: i64) {
    assign_by_seqs("set_row", inout, &along(0, SeqF::single(row_num)), new_row);
}

/// Writes `new_rows` into rows `first` to `last` of `inout`; the rows are chosen as in
/// [`rows`](crate::rows).
///
/// ```
/// use emberfire::{Array, constant, dim4, set_rows};
/// let mut a = constant(0i16, dim4!(4));
/// set_rows(&mut a, &Array::new(&[5i16, 6], dim4!(2)), 1, 2);
/// assert_eq!(a.to_vec(), vec![0, 5, 6, 0]);
/// ```
pub fn set_rows<T: HasAfEnum>(inout: &mut Array<T>, new_rows: &Array<T>, first: i64, last: i64) {
    assign_by_seqs("set_rows", inout, &along(0, SeqF::between(first, last)), new_rows);
}

/// Writes `new_col` into column `col_num` of `inout` (negative counts from the last column).
///
/// ```
/// use emberfire::{Array, constant, dim4, set_col};
/// let mut a = constant(0.0f64, dim4!(2, 2));
/// set_col(&mut a, &constant(1.5f64, dim4!(1)), 0); // a single value fills the column
/// assert_eq!(a.to_vec(), vec![1.5, 1.5, 0.0, 0.0]);
/// ```
pub fn set_col<T: HasAfEnum>(inout: &mut Array<T>, new_col: &Array<T>, col_num: i64) {
    assign_by_seqs("set_col", inout, &along(1, SeqF::single(col_num)), new_col);
}

/// Writes `new_cols` into columns `first` to `last` of `inout`; the columns are chosen as in
/// [`cols`](crate::cols).
///
/// ```
/// use emberfire::{Array, constant, dim4, set_cols};
/// let mut a = constant(0i32, dim4!(1, 3));
/// set_cols(&mut a, &Array::new(&[4, 5], dim4!(1, 2)), -1, -2); // last, then middle
/// assert_eq!(a.to_vec(), vec![0, 5, 4]);
/// ```
pub fn set_cols<T: HasAfEnum>(inout: &mut Array<T>, new_cols: &Array<T>, first: i64, last: i64) {
    assign_by_seqs("set_cols", inout, &along(1, SeqF::between(first, last)), new_cols);
}

/// Writes `new_slice` into slice `slice_num` (along the third dimension) of `inout`.
///
/// ```
/// use emberfire::{Array, constant, dim4, set_slice};
/// let mut a = constant(0u32, dim4!(1, 1, 2));
/// set_slice(&mut a, &constant(9u32, dim4!(1)), 1);
/// assert_eq!(a.to_vec(), vec![0, 9]);
/// ```
pub fn set_slice<T: HasAfEnum>(inout: &mut Array<T>, new_slice: &Array<T>, slice_num: i64) {
    assign_by_seqs("set_slice", inout, &along(2, SeqF::single(slice_num)), new_slice);
}

/// Writes `new_slices` into slices `first` to `last` (along the third dimension) of `inout`,
/// chosen as in [`slices`](crate::slices).
///
/// ```
/// use emberfire::{Array, constant, dim4, set_slices};
/// let mut a = constant(0u64, dim4!(1, 1, 3));
/// set_slices(&mut a, &Array::new(&[1u64, 2], dim4!(1, 1, 2)), 1, 2);
/// assert_eq!(a.to_vec(), vec![0, 1, 2]);
/// ```
pub fn set_slices<T: HasAfEnum>(
    inout: &mut Array<T>,
    new_slices: &Array<T>,
    first: i64,
    last: i64,
) {
    assign_by_seqs("set_slices", inout, &along(2, SeqF::between(first, last)), new_slices);
}
