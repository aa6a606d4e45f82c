//! Sorting along a dimension, with arrayfire-rust's names and signatures: `sort`,
//! `sort_index` and `sort_by_key`.
//!
//! The order, for every function here and in the set functions:
//! - integers and `bool` in their natural order;
//! - floats as `-inf < ... < -0.0 < 0.0 < ... < inf < NaN`: every NaN compares equal to every
//!   other NaN and sorts **last in both directions** (like NumPy's ascending sort); `sort`
//!   returns NaNs as the canonical quiet NaN;
//! - the sort is stable: equal keys keep their input order, ascending and descending alike,
//!   so `sort_index` and `sort_by_key` are reproducible.
//!
//! Complex and f16 elements do not sort (arrayfire-rust's `RealNumber` bound rejects them at
//! compile time, as ArrayFire does).
//!
//! Both backends sort order-preserving integer words with a radix sort. The CPU partitions the
//! elements by their top varying bits and sorts each part in cache, in parallel
//! (`backend::cpu::radix`); a dense CPU array is read in place. On CUDA the data stays on the
//! device: a stable LSD radix sort with 8-bit digits (`backend/cuda/sort.rs`) on the device's
//! current stream, batched over the other dimensions (`backend::sort` dispatches). On CUDA a sort
//! takes at most 2^31 - 1 elements.

use crate::array::Array;
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealNumber};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};
use crate::storage::HostVec;

/// An array on `backend` holding `h`.
pub(crate) fn array_on<T: HasAfEnum>(
    func: &str,
    backend: BackendKind,
    h: HostVec,
    dims: Dim4,
) -> Array<T> {
    debug_assert_eq!(h.dtype(), T::DTYPE);
    let buf = backend.ops().upload(h).or_raise(func);
    Array::from_node(Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims)))
}

/// A ready array of `backend` over the dense buffer `buf` of shape `dims`.
pub(crate) fn array_of<T: HasAfEnum>(backend: BackendKind, buf: Buffer, dims: Dim4) -> Array<T> {
    Array::from_node(Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims)))
}

/// The elements of `a` on the host, column-major.
pub(crate) fn host_of<T: HasAfEnum>(func: &str, a: &Array<T>) -> HostVec {
    a.try_host_vec().or_raise(func)
}

pub(crate) fn dims_usize(d: Dim4) -> [usize; 4] {
    d.get().map(|x| x as usize)
}

fn check_dim(func: &str, dims: Dim4, dim: u32) -> usize {
    assert!(
        dim < 4,
        "{func}: `dim` is {dim}, but it must be 0, 1, 2 or 3; the input's dims are {dims}"
    );
    dim as usize
}

fn check_index_range(func: &str, dims: Dim4, dim: usize) {
    assert!(
        dims[dim] <= u32::MAX as u64,
        "{func}: dims {dims} have more than u32::MAX elements along dim {dim}, which u32 indices cannot name"
    );
}

/// Sorts `input` along `dim`, ascending or descending (stable; NaN last in both directions).
///
/// ```
/// use emberfire::{dim4, sort, Array};
/// let a = Array::new(&[3.0f32, f32::NAN, 1.0, 2.0, 9.0, -1.0], dim4!(3, 2));
/// assert_eq!(sort(&a, 0, true).to_vec()[..2], [1.0, 3.0]);
/// assert!(sort(&a, 0, true).to_vec()[2].is_nan());
/// assert_eq!(sort(&a, 0, false).to_vec()[3..], [9.0, 2.0, -1.0]);
/// assert_eq!(sort(&a, 1, true).to_vec()[..2], [2.0, 9.0]); // each row on its own
/// ```
pub fn sort<T>(input: &Array<T>, dim: u32, ascending: bool) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    let dims = input.dims();
    let d = check_dim("sort", dims, dim);
    let backend = input.node().backend;
    let (values, _) =
        backend.ops().sort("sort", input.node(), d, !ascending, false).or_raise("sort");
    array_of(backend, values, dims)
}

/// Sorts `input` along `dim` and returns the sorted values with each one's original position
/// along `dim` (u32). Stable: equal values keep increasing positions.
///
/// ```
/// use emberfire::{dim4, sort_index, Array};
/// let a = Array::new(&[5i32, 1, 5, 0], dim4!(4));
/// let (values, index) = sort_index(&a, 0, false);
/// assert_eq!(values.to_vec(), vec![5, 5, 1, 0]);
/// assert_eq!(index.to_vec(), vec![0, 2, 1, 3]);
/// ```
pub fn sort_index<T>(input: &Array<T>, dim: u32, ascending: bool) -> (Array<T>, Array<u32>)
where
    T: HasAfEnum + RealNumber,
{
    let dims = input.dims();
    let d = check_dim("sort_index", dims, dim);
    check_index_range("sort_index", dims, d);
    let backend = input.node().backend;
    let (values, index) =
        backend.ops().sort("sort_index", input.node(), d, !ascending, true).or_raise("sort_index");
    let index = index.expect("an index was asked for");
    (array_of(backend, values, dims), array_of(backend, index, dims))
}

/// Sorts `keys` along `dim` and moves `vals` (any element type, same dims) with them.
/// Stable: values of equal keys keep their order.
///
/// ```
/// use emberfire::{dim4, sort_by_key, Array};
/// let keys = Array::new(&[2u8, 1, 2, 0], dim4!(4));
/// let vals = Array::new(&[10.0f64, 20.0, 30.0, 40.0], dim4!(4));
/// let (k, v) = sort_by_key(&keys, &vals, 0, true);
/// assert_eq!(k.to_vec(), vec![0, 1, 2, 2]);
/// assert_eq!(v.to_vec(), vec![40.0, 20.0, 10.0, 30.0]);
/// ```
pub fn sort_by_key<K, V>(
    keys: &Array<K>,
    vals: &Array<V>,
    dim: u32,
    ascending: bool,
) -> (Array<K>, Array<V>)
where
    K: HasAfEnum + RealNumber,
    V: HasAfEnum,
{
    let dims = keys.dims();
    assert!(
        dims == vals.dims(),
        "sort_by_key: `keys` dims {dims} and `vals` dims {} differ; they must be equal",
        vals.dims()
    );
    let d = check_dim("sort_by_key", dims, dim);
    check_index_range("sort_by_key", dims, d);
    let backend = keys.node().backend;
    let (sorted_keys, sorted_vals) = backend
        .ops()
        .sort_by_key("sort_by_key", keys.node(), vals.node(), d, !ascending)
        .or_raise("sort_by_key");
    (array_of(backend, sorted_keys, dims), array_of(vals.node().backend, sorted_vals, dims))
}
