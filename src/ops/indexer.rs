//! General indexing: `Indexer` (a sequence or an index array per dimension), `index_gen`, and
//! `lookup`.
//!
//! Sequences alone make a view (see `index.rs`). An index array makes a gather: a new array
//! whose element `c` is read from the input at the positions the indices select, computed by a
//! kernel on the array's backend (`BackendKind::index_copy`).
//!
//! Index arrays may hold any integer type, f32 or f64; values are converted to 64-bit integers
//! as casts do (fractions truncate toward zero and saturate, NaN gives 0, a u64 past
//! `i64::MAX` wraps to a negative value). An index outside its dimension is
//! folded into it as ArrayFire's `lookup` does: -1 selects position 0, -2 position 1, and so
//! on, and an index `len + k` selects `len - 1 - k` (wrapping for larger values), so no index
//! value can read or write outside the array.

use std::marker::PhantomData;
use std::sync::Arc;

use super::build::{cast_node, common_backend};
use super::index::{check_index_count, empty_on, flattens, indexed_layout, view_by_seqs};
use super::seq::{Positions, SeqF};
use crate::array::Array;
use crate::backend::index_copy::{Axis, Side};
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, IndexableType};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node, Program};
use crate::Seq;

/// What selects positions along one dimension of an [`Indexer`].
#[derive(Clone, Debug)]
enum Slot {
    Seq(SeqF),
    Array(Arc<Node>),
}

/// A sequence or an index array for each dimension, for [`index_gen`] and
/// [`assign_gen`](crate::assign_gen) (arrayfire-rust's `Indexer`). Dimensions without one are
/// kept whole.
///
/// The lifetime ties the indexer to the sequences and arrays it was given, as in
/// arrayfire-rust; emberfire keeps its own handle to an index array, so the borrow is not
/// needed for safety, only for source compatibility.
///
/// ```
/// use emberfire::{Array, Indexer, Seq, dim4, index_gen};
/// let a = Array::new(&[0, 1, 2, 3, 4, 5], dim4!(3, 2));
/// let rows = Array::new(&[2u32, 0], dim4!(2));
/// let all = Seq::<i32>::default();
/// let mut idx = Indexer::default();
/// idx.set_index(&rows, 0, None);
/// idx.set_index(&all, 1, None);
/// assert_eq!(index_gen(&a, idx).to_vec(), vec![2, 0, 5, 3]);
/// ```
#[derive(Debug)]
pub struct Indexer<'object> {
    slots: [Option<Slot>; 4],
    count: usize,
    marker: PhantomData<&'object ()>,
}

impl Default for Indexer<'_> {
    /// An indexer with nothing set.
    ///
    /// ```
    /// assert!(emberfire::Indexer::default().is_empty());
    /// ```
    fn default() -> Self {
        Indexer { slots: Default::default(), count: 0, marker: PhantomData }
    }
}

/// Something that can select positions along a dimension of an [`Indexer`]: a [`Seq`] or an
/// [`Array`] of indices.
pub trait Indexable {
    /// Sets `self` as `idxr`'s index along dimension `dim`. `is_batch` is accepted for
    /// arrayfire-rust compatibility (it served ArrayFire's C++ `gfor`) and ignored.
    ///
    /// ```
    /// use emberfire::{Indexable, Indexer, Seq};
    /// let s = Seq::new(0, 1, 1);
    /// let mut idx = Indexer::default();
    /// s.set(&mut idx, 0, None);
    /// ```
    fn set(&self, idxr: &mut Indexer, dim: u32, is_batch: Option<bool>);
}

impl<T: HasAfEnum + IndexableType> Indexable for Array<T> {
    /// Indexes dimension `dim` by the values of this array (any shape; its elements in
    /// column-major order).
    fn set(&self, idxr: &mut Indexer, dim: u32, _is_batch: Option<bool>) {
        idxr.put(dim, Slot::Array(self.node().clone()));
    }
}

impl<T: Copy + IndexableType> Indexable for Seq<T>
where
    f64: From<T>,
{
    /// Indexes dimension `dim` by this sequence.
    fn set(&self, idxr: &mut Indexer, dim: u32, _is_batch: Option<bool>) {
        idxr.put(dim, Slot::Seq(SeqF::of(self)));
    }
}

impl<'object> Indexer<'object> {
    /// An indexer with nothing set (the same as `Indexer::default()`).
    ///
    /// ```
    /// assert_eq!(emberfire::Indexer::new().len(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a [`Seq`] or an index [`Array`] for dimension `dim` (0 to 3). `is_batch` is
    /// ignored (see [`Indexable::set`]). Panics if `dim` is greater than 3.
    ///
    /// ```
    /// use emberfire::{Array, Indexer, Seq, dim4};
    /// let idx_values = Array::new(&[1u8, 0], dim4!(2));
    /// let s = Seq::new(0.0, 2.0, 2.0);
    /// let mut idx = Indexer::default();
    /// idx.set_index(&idx_values, 0, None);
    /// idx.set_index(&s, 1, Some(false));
    /// assert_eq!(idx.len(), 2);
    /// ```
    pub fn set_index<'s, T>(&'s mut self, idx: &'object T, dim: u32, is_batch: Option<bool>)
    where
        T: Indexable + 'object,
    {
        idx.set(self, dim, is_batch);
        self.count += 1;
    }

    /// How many times [`set_index`](Self::set_index) was called.
    ///
    /// ```
    /// assert_eq!(emberfire::Indexer::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when nothing was set.
    ///
    /// ```
    /// assert!(emberfire::Indexer::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn put(&mut self, dim: u32, slot: Slot) {
        assert!(dim <= 3, "Indexer::set_index: dimension {dim} does not exist (0 to 3)");
        self.slots[dim as usize] = Some(slot);
    }

    /// The sequences, one per dimension up to the last one set (unset ones span), when every
    /// index set is a sequence.
    pub(crate) fn seqs_only(&self) -> Option<Vec<SeqF>> {
        let last = self.slots.iter().rposition(Option::is_some)?;
        self.slots[..=last]
            .iter()
            .map(|s| match s {
                None => Some(SeqF::SPAN),
                Some(Slot::Seq(q)) => Some(*q),
                Some(Slot::Array(_)) => None,
            })
            .collect()
    }

    /// Panics unless something was set.
    pub(crate) fn check_set(&self, func: &str, dims: Dim4) {
        let n = self.slots.iter().filter(|s| s.is_some()).count();
        check_index_count(func, n, dims);
    }

    /// Whether ArrayFire's one-index rule flattens an array of shape `dims`: only dimension 0
    /// is indexed.
    pub(crate) fn flattens(&self, dims: Dim4) -> bool {
        self.slots[1..].iter().all(Option::is_none) && flattens(1, dims)
    }

    /// How each dimension of an array laid out as `dims` (after the one-index rule) is
    /// selected, and the shape of the selection. Index arrays are converted to dense i64 data
    /// on `backend`.
    pub(crate) fn resolve(
        &self,
        func: &str,
        backend: BackendKind,
        dims: Dim4,
    ) -> ([Axis; 4], Dim4) {
        let mut count = [0u64; 4];
        let axes = std::array::from_fn(|k| {
            let (axis, n) = match &self.slots[k] {
                None => affine(Positions::all(dims[k])),
                Some(Slot::Seq(s)) => affine(s.resolve(func, k, dims)),
                Some(Slot::Array(node)) => {
                    assert!(
                        node.backend == backend,
                        "{func}: the index array for dimension {k} lives on {:?} but the \
                         indexed array on {backend:?}; move one with a host copy first",
                        node.backend
                    );
                    index_data(func, node)
                }
            };
            count[k] = n;
            axis
        });
        let block = Dim4::new(&count);
        for k in 0..4 {
            if matches!(axes[k], Axis::Indices(_)) && dims[k] == 0 && block.elements() > 0 {
                panic!(
                    "{func}: {} indices along dimension {k}, which has length 0 (array dims \
                     {dims})",
                    block[k]
                );
            }
        }
        (axes, block)
    }
}

fn affine(p: Positions) -> (Axis, u64) {
    (Axis::Affine { start: p.start, step: p.step }, p.count)
}

/// The values of an index array as dense i64 data on its backend, and how many there are.
fn index_data(func: &str, node: &Arc<Node>) -> (Axis, u64) {
    if node.dtype.is_complex() || node.dtype == DType::B8 {
        panic!("{func}: an index array must hold integers or reals, not {}", node.dtype.name());
    }
    let as_i64 = cast_node(node, DType::S64);
    let data = as_i64.try_eval().or_raise(func);
    let data = if data.is_contiguous(node.dims) {
        data
    } else {
        let copy = Program::copy_of(data, DType::S64, node.dims);
        let buf = node.backend.ops().run(&copy).or_raise(func);
        Data::dense(buf.into_iter().next().expect("one output"), node.dims)
    };
    (Axis::Indices(data), node.dims.elements())
}

/// Reads the `block` that `axes` select from `input` (laid out as `data`, shape `dims`) into a
/// new dense array.
fn gather<T: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    data: Data,
    dims: Dim4,
    axes: [Axis; 4],
    block: Dim4,
) -> Array<T> {
    let backend = input.node().backend;
    if block.elements() == 0 {
        return empty_on(func, backend, block);
    }
    let src = Side { dims, offset: data.offset, strides: data.strides, axes };
    let mut out =
        backend.ops().alloc_for_overwrite(T::DTYPE, block.elements() as usize).or_raise(func);
    backend
        .ops()
        .index_copy(T::DTYPE, block, data.buffer(), &src, &mut out, &Side::dense(block))
        .or_raise(func);
    Array::from_node(Node::ready(T::DTYPE, block, backend, Data::dense(out, block)))
}

/// The part of `input` that `indices` select: along each dimension, the positions of its
/// [`Seq`] or the values of its index array; dimensions without an index are kept whole, and
/// an index on dimension 0 only, of an array of more than one dimension, indexes the array
/// flattened to one column. With sequences only, the result is a view (as
/// [`index`](crate::index)); with an index array, a new array gathered by a kernel. Index values
/// outside their dimension are folded into it (see [`lookup`]).
///
/// Panics if nothing is set, if a sequence does not fit its dimension, or if an index array
/// lives on another backend.
///
/// ```
/// use emberfire::{Array, Indexer, Seq, dim4, index_gen};
/// let a = Array::new(&[10.0f32, 11.0, 12.0, 13.0, 14.0, 15.0], dim4!(2, 3));
/// let which = Array::new(&[2.0f32, 0.0], dim4!(2)); // reals index too
/// let first_row = Seq::new(0, 0, 1);
/// let mut idx = Indexer::default();
/// idx.set_index(&first_row, 0, None);
/// idx.set_index(&which, 1, None);
/// assert_eq!(index_gen(&a, idx).to_vec(), vec![14.0, 10.0]);
/// ```
pub fn index_gen<T: HasAfEnum>(input: &Array<T>, indices: Indexer) -> Array<T> {
    let func = "index_gen";
    indices.check_set(func, input.dims());
    if let Some(seqs) = indices.seqs_only() {
        return view_by_seqs(func, input, &seqs);
    }
    let (data, dims) = indexed_layout(func, input.node(), indices.flattens(input.dims()));
    let (axes, block) = indices.resolve(func, input.node().backend, dims);
    gather(func, input, data, dims, axes, block)
}

/// The elements of `input` at positions `indices` along dimension `seq_dim`, all of the other
/// dimensions whole: the result has `input`'s shape with dimension `seq_dim` as long as
/// `indices`. `indices` is a vector (or a single value) of any integer type, f32 or f64.
///
/// An index outside the dimension is folded into it, as ArrayFire does: -1 reads position 0,
/// -2 position 1, ...; `len` reads `len - 1`, `len + 1` reads `len - 2`, ... Nothing outside
/// the array is ever read.
///
/// Panics if `seq_dim` is not 0 to 3, `indices` is not a vector, or the dimension is empty.
///
/// ```
/// use emberfire::{Array, dim4, lookup};
/// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
/// let idx = Array::new(&[2i32, 2, 0], dim4!(3));
/// assert_eq!(lookup(&a, &idx, 1).to_vec(), vec![5, 6, 5, 6, 1, 2]);
/// let folded = Array::new(&[-1i64, 3], dim4!(2));
/// assert_eq!(lookup(&a, &folded, 1).to_vec(), vec![1, 2, 5, 6]);
/// ```
pub fn lookup<T, I>(input: &Array<T>, indices: &Array<I>, seq_dim: i32) -> Array<T>
where
    T: HasAfEnum,
    I: HasAfEnum + IndexableType,
{
    let func = "lookup";
    let dims = input.dims();
    assert!(
        (0..4).contains(&seq_dim),
        "lookup: seq_dim {seq_dim} is not a dimension (0 to 3); input dims {dims}"
    );
    let k = seq_dim as usize;
    let idims = indices.dims();
    assert!(
        idims.get().iter().filter(|&&d| d != 1).count() <= 1,
        "lookup: `indices` must be a vector, but has dims {idims} (input dims {dims})"
    );
    common_backend(func, &[input.node(), indices.node()]);
    let mut idx = Indexer::default();
    idx.put(seq_dim as u32, Slot::Array(indices.node().clone()));
    let (data, dims) = indexed_layout(func, input.node(), false);
    let (axes, block) = idx.resolve(func, input.node().backend, dims);
    debug_assert_eq!(block[k], idims.elements());
    gather(func, input, data, dims, axes, block)
}
