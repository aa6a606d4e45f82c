//! Sorting and sets on a CUDA device, without copies through the host.
//!
//! The device sort (`backend::cuda::sort`) sorts dense data in segments of consecutive
//! elements. An array sorted along `dim` is first made segment-major: when a dimension before
//! `dim` is longer than 1, a view with `dim` first (`reorder_v2`) is copied densely; the result
//! is permuted back the same way. `sort_by_key` sorts the keys with each one's source position
//! and gathers the values by those positions. The set functions sort the flattened input and
//! keep the first of each run of equal values (`set_intersect`: the second, in the sorted
//! union of the two inputs' distinct values); only they wait for the device, since the
//! result's length decides its shape.

use crate::array::Array;
use crate::backend::cuda::memory::DeviceMem;
use crate::backend::cuda::sort::{self as device, Keep, Positions, MAX_ELEMENTS};
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};
use crate::ops::movement::{flat, join, reorder_v2};

/// The device of an array the caller found on CUDA.
fn ordinal_of<T: HasAfEnum>(a: &Array<T>) -> usize {
    match a.node().backend {
        BackendKind::Cuda(o) => o,
        BackendKind::Cpu => unreachable!("internal error: CPU array on the device sort path"),
    }
}

/// Panics, naming `func` and the shape, when the device sort cannot take `n` elements.
fn check_size(func: &str, dims: Dim4) {
    assert!(
        dims.elements() <= MAX_ELEMENTS,
        "{func}: dims {dims} hold {} elements; on CUDA a sort takes at most 2^31 - 1",
        dims.elements()
    );
}

/// `a`'s ready data, dense from its offset on (a copy when it is a strided view).
fn dense<T: HasAfEnum>(func: &str, a: &Array<T>) -> (Array<T>, Data) {
    let d = a.node().try_eval().or_raise(func);
    if d.is_contiguous(a.dims()) {
        return (a.clone(), d);
    }
    let c = a.copy();
    let d = c.node().try_eval().or_raise(func);
    (c, d)
}

/// The axes that put `dim` first and keep the others in order, when a dimension before `dim`
/// is longer than 1 (otherwise the segments along `dim` are already consecutive).
fn front_axes(dims: Dim4, dim: usize) -> Option<[u64; 4]> {
    if (0..dim).all(|k| dims[k] == 1) {
        return None;
    }
    let mut axes = [dim as u64, 0, 0, 0];
    for (slot, k) in axes[1..].iter_mut().zip((0..4).filter(|&k| k != dim)) {
        *slot = k as u64;
    }
    Some(axes)
}

fn permuted<T: HasAfEnum>(a: &Array<T>, axes: [u64; 4]) -> Array<T> {
    reorder_v2(a, axes[0], axes[1], Some(vec![axes[2], axes[3]]))
}

/// `a` with `dim` first, as dense data.
fn segment_major<T: HasAfEnum>(
    func: &str,
    a: &Array<T>,
    axes: Option<[u64; 4]>,
) -> (Array<T>, Data) {
    match axes {
        None => dense(func, a),
        Some(axes) => dense(func, &permuted(a, axes)),
    }
}

/// Undoes `segment_major`'s permutation, as a dense array.
fn restore<T: HasAfEnum>(func: &str, a: Array<T>, axes: Option<[u64; 4]>) -> Array<T> {
    match axes {
        None => a,
        Some(axes) => {
            let mut inverse = [0u64; 4];
            for (k, &ax) in axes.iter().enumerate() {
                inverse[ax as usize] = k as u64;
            }
            dense(func, &permuted(&a, inverse)).0
        }
    }
}

/// A ready array over device memory.
fn device_array<T: HasAfEnum>(ordinal: usize, mem: DeviceMem, dims: Dim4) -> Array<T> {
    let data = Data::dense(Buffer::Cuda(mem), dims);
    Array::from_node(Node::ready(T::DTYPE, dims, BackendKind::Cuda(ordinal), data))
}

/// Sorts `input` along `dim` on its device, with each element's position along `dim` when
/// `with_index`.
pub(crate) fn sort<T: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    dim: usize,
    ascending: bool,
    with_index: bool,
) -> (Array<T>, Option<Array<u32>>) {
    let dims = input.dims();
    check_size(func, dims);
    let ordinal = ordinal_of(input);
    let axes = front_axes(dims, dim);
    let (major, data) = segment_major(func, input, axes);
    let n = dims.elements() as usize;
    let positions = if with_index { Positions::Along } else { Positions::None };
    let (keys, index) = device::sort_dense(
        ordinal,
        &data,
        T::DTYPE,
        n,
        (dims[dim] as usize).max(1),
        !ascending,
        positions,
    )
    .or_raise(func);
    let pdims = major.dims();
    let keys = restore(func, device_array::<T>(ordinal, keys, pdims), axes);
    let index = index.map(|m| restore(func, device_array::<u32>(ordinal, m, pdims), axes));
    (keys, index)
}

/// Sorts `keys` along `dim` on their device and moves `vals` (same dims) with them.
pub(crate) fn sort_by_key<K: HasAfEnum, V: HasAfEnum>(
    func: &str,
    keys: &Array<K>,
    vals: &Array<V>,
    dim: usize,
    ascending: bool,
) -> (Array<K>, Array<V>) {
    let dims = keys.dims();
    check_size(func, dims);
    let ordinal = ordinal_of(keys);
    assert!(
        vals.node().backend == keys.node().backend,
        "{func}: `keys` are on {:?} and `vals` on {:?}; both must be on one device",
        keys.node().backend,
        vals.node().backend
    );
    let axes = front_axes(dims, dim);
    let (major, data) = segment_major(func, keys, axes);
    let n = dims.elements() as usize;
    let (sorted, positions) = device::sort_dense(
        ordinal,
        &data,
        K::DTYPE,
        n,
        (dims[dim] as usize).max(1),
        !ascending,
        Positions::Full,
    )
    .or_raise(func);
    let positions = positions.expect("positions were asked for");
    let (_, vdata) = segment_major(func, vals, axes);
    let moved = device::gather(ordinal, &vdata, V::DTYPE, &positions, n).or_raise(func);
    let pdims = major.dims();
    (
        restore(func, device_array::<K>(ordinal, sorted, pdims), axes),
        restore(func, device_array::<V>(ordinal, moved, pdims), axes),
    )
}

/// The elements of `a` (any shape), sorted ascending, as device memory.
fn sorted_flat<T: HasAfEnum>(func: &str, a: &Array<T>) -> DeviceMem {
    let n = a.elements();
    let (_, data) = dense(func, &flat(a));
    device::sort_dense(ordinal_of(a), &data, T::DTYPE, n, n.max(1), false, Positions::None)
        .or_raise(func)
        .0
}

/// The kept elements of the sorted `n` elements at `sorted`, as a column.
fn compacted<T: HasAfEnum>(
    func: &str,
    ordinal: usize,
    sorted: &DeviceMem,
    n: usize,
    keep: Keep,
) -> Array<T> {
    let (mem, count) = device::compact(ordinal, sorted, T::DTYPE, n, keep).or_raise(func);
    device_array::<T>(ordinal, mem, Dim4::new(&[count as u64, 1, 1, 1]))
}

/// The distinct elements of `a`, sorted ascending, on its device.
pub(crate) fn unique<T: HasAfEnum>(func: &str, a: &Array<T>) -> Array<T> {
    check_size(func, a.dims());
    let sorted = sorted_flat(func, a);
    compacted(func, ordinal_of(a), &sorted, a.elements(), Keep::First)
}

/// The flattened elements of `a` followed by those of `b`.
fn concatenated<T: HasAfEnum>(a: &Array<T>, b: &Array<T>) -> Array<T> {
    match (a.elements(), b.elements()) {
        (0, _) => flat(b),
        (_, 0) => flat(a),
        _ => join(0, &flat(a), &flat(b)),
    }
}

/// The distinct elements of `a` and `b` together, on their device.
pub(crate) fn union<T: HasAfEnum>(func: &str, a: &Array<T>, b: &Array<T>) -> Array<T> {
    check_size(func, Dim4::new(&[(a.elements() + b.elements()) as u64, 1, 1, 1]));
    unique(func, &concatenated(a, b))
}

/// The distinct elements present in both `a` and `b`, on their device.
pub(crate) fn intersect<T: HasAfEnum>(func: &str, a: &Array<T>, b: &Array<T>) -> Array<T> {
    let both = concatenated(&unique(func, a), &unique(func, b));
    check_size(func, both.dims());
    let sorted = sorted_flat(func, &both);
    compacted(func, ordinal_of(a), &sorted, both.elements(), Keep::Second)
}
