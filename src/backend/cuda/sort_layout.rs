//! Sorting and sets on a CUDA device in terms of the device sort's segments
//! (`cuda::sort`), without copies through the host.
//!
//! The device sort sorts dense data in segments of consecutive elements. An array sorted along
//! `dim` is first made segment-major: when a dimension before `dim` is longer than 1, a view
//! with `dim` first is copied densely (one generated copy kernel); the result is permuted back
//! the same way. `sort_by_key` sorts the keys with each one's source position and gathers the
//! values by those positions. The set functions sort the flattened input and keep the first of
//! each run of equal values (an intersection: the second, in the sorted union of the two
//! inputs' distinct values); only they wait for the device, since the result's length decides
//! its shape.

use std::sync::Arc;

use super::copy::concatenate;
use super::memory::DeviceMem;
use super::sort::{compact, gather, sort_dense, Keep, Positions, MAX_ELEMENTS};
use crate::backend::dense::Dense;
use crate::backend::sort::SetOp;
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Node, Program};

/// Panics, naming `func` and the shape, when the device sort cannot take the elements of
/// `dims`.
fn check_size(func: &str, dims: Dim4) {
    assert!(
        dims.elements() <= MAX_ELEMENTS,
        "{func}: dims {dims} hold {} elements; on CUDA a sort takes at most 2^31 - 1",
        dims.elements()
    );
}

/// The axes that put `dim` first and keep the others in order, when a dimension before `dim`
/// is longer than 1 (otherwise the segments along `dim` are already consecutive).
fn front_axes(dims: Dim4, dim: usize) -> Option<[usize; 4]> {
    if (0..dim).all(|k| dims[k] == 1) {
        return None;
    }
    let mut axes = [dim, 0, 0, 0];
    for (slot, k) in axes[1..].iter_mut().zip((0..4).filter(|&k| k != dim)) {
        *slot = k;
    }
    Some(axes)
}

/// A dense copy of `d` (shape `dims`) with its dimensions reordered: dimension `k` of the
/// result is dimension `axes[k]` of `d`.
fn permuted(ordinal: usize, d: &Dense, axes: [usize; 4]) -> Result<Dense, Error> {
    let dims = Dim4::new(&axes.map(|a| d.dims[a]));
    let view = Data {
        buf: d.data.buf.clone(),
        offset: d.data.offset,
        strides: axes.map(|a| d.data.strides[a]),
    };
    let p = Program::copy_of(view, d.dtype, dims);
    let buf = BackendKind::Cuda(ordinal).ops().run(&p)?.pop().expect("one output");
    Ok(Dense::new(buf, dims, d.dtype, BackendKind::Cuda(ordinal)))
}

/// `node`'s data with `dim` first, dense.
fn segment_major(
    ordinal: usize,
    node: &Arc<Node>,
    axes: Option<[usize; 4]>,
) -> Result<Dense, Error> {
    let d = Dense::of(node)?;
    match axes {
        None => Ok(d),
        Some(axes) => permuted(ordinal, &d, axes),
    }
}

/// Undoes `segment_major`'s permutation of `d`.
fn restore(ordinal: usize, d: Dense, axes: Option<[usize; 4]>) -> Result<Buffer, Error> {
    let Some(axes) = axes else {
        return Ok(d
            .data
            .into_buffer()
            .unwrap_or_else(|_| unreachable!("internal error: a fresh sort result is shared")));
    };
    let mut inverse = [0usize; 4];
    for (k, &a) in axes.iter().enumerate() {
        inverse[a] = k;
    }
    let back = permuted(ordinal, &d, inverse)?;
    Ok(back
        .data
        .into_buffer()
        .unwrap_or_else(|_| unreachable!("internal error: a fresh copy is shared")))
}

/// Dense device data of shape `dims` in `mem`.
fn dense_of(ordinal: usize, mem: DeviceMem, dims: Dim4, dtype: DType) -> Dense {
    Dense::new(Buffer::Cuda(mem), dims, dtype, BackendKind::Cuda(ordinal))
}

/// See `BackendKind::sort`.
pub(crate) fn sort(
    func: &str,
    ordinal: usize,
    node: &Arc<Node>,
    dim: usize,
    descending: bool,
    with_index: bool,
) -> Result<(Buffer, Option<Buffer>), Error> {
    let dims = node.dims;
    check_size(func, dims);
    let axes = front_axes(dims, dim);
    let major = segment_major(ordinal, node, axes)?;
    let n = dims.elements() as usize;
    let positions = if with_index { Positions::Along } else { Positions::None };
    let seg = (dims[dim] as usize).max(1);
    let (keys, index) =
        sort_dense(ordinal, &major.data, node.dtype, n, seg, descending, positions)?;
    let keys = restore(ordinal, dense_of(ordinal, keys, major.dims, node.dtype), axes)?;
    let index = match index {
        Some(m) => Some(restore(ordinal, dense_of(ordinal, m, major.dims, DType::U32), axes)?),
        None => None,
    };
    Ok((keys, index))
}

/// See `BackendKind::sort_by_key`.
pub(crate) fn sort_by_key(
    func: &str,
    ordinal: usize,
    keys: &Arc<Node>,
    vals: &Arc<Node>,
    dim: usize,
    descending: bool,
) -> Result<(Buffer, Buffer), Error> {
    let dims = keys.dims;
    check_size(func, dims);
    assert!(
        vals.backend == keys.backend,
        "{func}: `keys` are on {:?} and `vals` on {:?}; both must be on one device",
        keys.backend,
        vals.backend
    );
    let axes = front_axes(dims, dim);
    let major = segment_major(ordinal, keys, axes)?;
    let n = dims.elements() as usize;
    let seg = (dims[dim] as usize).max(1);
    let (sorted, positions) =
        sort_dense(ordinal, &major.data, keys.dtype, n, seg, descending, Positions::Full)?;
    let positions = positions.expect("positions were asked for");
    let vmajor = segment_major(ordinal, vals, axes)?;
    let moved = gather(ordinal, &vmajor.data, vals.dtype, &positions, n)?;
    Ok((
        restore(ordinal, dense_of(ordinal, sorted, major.dims, keys.dtype), axes)?,
        restore(ordinal, dense_of(ordinal, moved, major.dims, vals.dtype), axes)?,
    ))
}

/// The `n` elements of dense data `d` (read flat), sorted ascending, as device memory.
fn sorted_flat(ordinal: usize, d: &Data, dtype: DType, n: usize) -> Result<DeviceMem, Error> {
    Ok(sort_dense(ordinal, d, dtype, n, n.max(1), false, Positions::None)?.0)
}

/// The distinct elements of `d`'s `n` elements, sorted ascending, and how many there are.
fn unique(ordinal: usize, d: &Data, dtype: DType, n: usize) -> Result<(DeviceMem, usize), Error> {
    let sorted = sorted_flat(ordinal, d, dtype, n)?;
    compact(ordinal, &sorted, dtype, n, Keep::First)
}

/// `a`'s `na` elements followed by `b`'s `nb`, dense, in new device memory.
fn concatenated(
    ordinal: usize,
    (a, na): (&Data, usize),
    (b, nb): (&Data, usize),
    dtype: DType,
) -> Result<DeviceMem, Error> {
    let column = |n: usize| Dim4::new(&[n as u64, 1, 1, 1]);
    let parts = [(a.clone(), column(na)), (b.clone(), column(nb))];
    concatenate(ordinal, &parts, 0, column(na + nb), dtype)
}

/// See `BackendKind::set`.
pub(crate) fn set(
    func: &str,
    ordinal: usize,
    op: SetOp,
    a: &Arc<Node>,
    b: Option<&Arc<Node>>,
) -> Result<(Buffer, usize), Error> {
    let dtype = a.dtype;
    let da = Dense::of(a)?;
    let na = da.dims.elements() as usize;
    let (mem, count) = match op {
        SetOp::Unique => {
            check_size(func, da.dims);
            unique(ordinal, &da.data, dtype, na)?
        }
        SetOp::Union | SetOp::Intersect => {
            let db = Dense::of(b.expect("a second set"))?;
            let nb = db.dims.elements() as usize;
            check_size(func, Dim4::new(&[(na + nb) as u64, 1, 1, 1]));
            if op == SetOp::Union {
                let all = concatenated(ordinal, (&da.data, na), (&db.data, nb), dtype)?;
                let all = Data::dense(Buffer::Cuda(all), Dim4::new(&[(na + nb) as u64, 1, 1, 1]));
                unique(ordinal, &all, dtype, na + nb)?
            } else {
                let (ua, ca) = unique(ordinal, &da.data, dtype, na)?;
                let (ub, cb) = unique(ordinal, &db.data, dtype, nb)?;
                let column = |n: usize| Dim4::new(&[n as u64, 1, 1, 1]);
                let (ua, ub) = (
                    Data::dense(Buffer::Cuda(ua), column(ca)),
                    Data::dense(Buffer::Cuda(ub), column(cb)),
                );
                let both = concatenated(ordinal, (&ua, ca), (&ub, cb), dtype)?;
                let sorted = sorted_flat(
                    ordinal,
                    &Data::dense(Buffer::Cuda(both), column(ca + cb)),
                    dtype,
                    ca + cb,
                )?;
                compact(ordinal, &sorted, dtype, ca + cb, Keep::Second)?
            }
        }
    };
    Ok((Buffer::Cuda(mem), count))
}

impl crate::backend::sort::Sort for super::Cuda {
    fn sort(
        &self,
        func: &str,
        node: &Arc<Node>,
        dim: usize,
        descending: bool,
        with_index: bool,
    ) -> Result<(Buffer, Option<Buffer>), Error> {
        sort(func, self.ordinal, node, dim, descending, with_index)
    }

    fn sort_by_key(
        &self,
        func: &str,
        keys: &Arc<Node>,
        vals: &Arc<Node>,
        dim: usize,
        descending: bool,
    ) -> Result<(Buffer, Buffer), Error> {
        sort_by_key(func, self.ordinal, keys, vals, dim, descending)
    }

    fn set(
        &self,
        func: &str,
        op: crate::backend::sort::SetOp,
        a: &Arc<Node>,
        b: Option<&Arc<Node>>,
    ) -> Result<(Buffer, usize), Error> {
        set(func, self.ordinal, op, a, b)
    }
}
