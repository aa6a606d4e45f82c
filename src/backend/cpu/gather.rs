//! Reading a mapped leaf (`tile`, `shift`, `pad`) for one chunk of the output: the index map
//! is applied once per run along dimension 0 for the outer dimensions, and element by element
//! (incrementally for the periodic rule) along dimension 0.

use super::eval::{for_runs, Val};
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::jit::index_map::{Axis, IndexMap};
use crate::jit::Data;
use crate::storage::{with_vec, Element};

/// The values of a mapped leaf of shape `dims` (1 along dimensions it is broadcast over) for
/// output elements `start..start + len` of a program of shape `out`.
pub(crate) fn load_mapped<'a>(
    d: &'a Data,
    m: &IndexMap,
    dims: Dim4,
    out: Dim4,
    start: usize,
    len: usize,
) -> Val<'a> {
    let Buffer::Host(h) = d.buffer() else {
        unreachable!("internal error: device buffer in a CPU program")
    };
    with_vec!(h, v, T => {
        if dims.elements() == 1 {
            let x = outer(d, m, dims, [0; 4])
                .and_then(|at| Some(at + m.axes[0].source(0, m.src[0])? as i64 * d.strides[0]))
                .map_or_else(T::default, |at| v[at as usize]);
            return Val::Splat(T::wrap(vec![x]));
        }
        if let Some(v) = in_place(d, h, m, dims, out, start, len) {
            return v;
        }
        let mut o: Vec<T> = Vec::with_capacity(len);
        for_runs(out, start, len, |_, run, c| match outer(d, m, dims, c.map(|x| x as u64)) {
            Some(base) => gather_run(v, &mut o, run, c[0] as u64, dims[0], m, base, d.strides[0]),
            None => o.extend(std::iter::repeat_n(T::default(), run)),
        });
        Val::Owned(T::wrap(o))
    })
}

/// A chunk that lies inside one run along dimension 0 and reads a contiguous piece of the
/// source (a shift along another dimension, or along dimension 0 where the piece does not
/// wrap) is read in place; a run outside the source (zero padding) is one zero. `None` where
/// the chunk must be gathered.
fn in_place<'a>(
    d: &Data,
    h: &'a crate::storage::HostVec,
    m: &IndexMap,
    dims: Dim4,
    out: Dim4,
    start: usize,
    len: usize,
) -> Option<Val<'a>> {
    if dims[0] == 1 {
        return None;
    }
    let c = super::eval::inside_one_run(out, start, len)?;
    let Some(base) = outer(d, m, dims, c.map(|x| x as u64)) else {
        return Some(Val::Splat(crate::storage::HostVec::zeros(h.dtype(), 1)));
    };
    if d.strides[0] != 1 {
        return None;
    }
    let n = m.src[0];
    let first = match m.axes[0] {
        Axis::Same => c[0] as u64,
        Axis::Wrap(k) => (c[0] as u64 + k) % n,
        _ => return None,
    };
    (first + len as u64 <= n).then(|| Val::View(h, (base + first as i64) as usize))
}

/// The position of the source element for step coordinates `c` along dimensions 1 to 3
/// (dimension 0 excluded), or `None` when those make the element zero.
fn outer(d: &Data, m: &IndexMap, dims: Dim4, c: [u64; 4]) -> Option<i64> {
    let mut at = d.offset as i64;
    for k in 1..4 {
        let ck = if dims[k] == 1 { 0 } else { c[k] };
        at += m.axes[k].source(ck, m.src[k])? as i64 * d.strides[k];
    }
    Some(at)
}

/// Appends the `run` elements along dimension 0 that start at coordinate `c0`, given the
/// position `base` of the run's outer coordinates.
#[allow(clippy::too_many_arguments)]
fn gather_run<T: Element + Default>(
    v: &[T],
    o: &mut Vec<T>,
    run: usize,
    c0: u64,
    dim0: u64,
    m: &IndexMap,
    base: i64,
    stride0: i64,
) {
    let n = m.src[0];
    let at = |x: u64| v[(base + x as i64 * stride0) as usize];
    if dim0 == 1 {
        let x = m.axes[0].source(0, n).map_or_else(T::default, at);
        o.extend(std::iter::repeat_n(x, run));
        return;
    }
    match m.axes[0] {
        Axis::Same if stride0 == 1 => {
            let s = (base + c0 as i64) as usize;
            o.extend_from_slice(&v[s..s + run]);
        }
        Axis::Same => o.extend((c0..c0 + run as u64).map(at)),
        Axis::Wrap(k) if stride0 == 1 => {
            // a contiguous source row: the run is at most a few whole pieces of it, copied as
            // slices (a shift's run is two: up to the row's end, then from its start)
            let row = &v[base as usize..(base + n as i64) as usize];
            let mut x = ((c0 + k) % n) as usize;
            let mut left = run;
            while left > 0 {
                let take = left.min(row.len() - x);
                o.extend_from_slice(&row[x..x + take]);
                left -= take;
                x = 0;
            }
        }
        Axis::Wrap(k) => {
            let mut x = (c0 + k) % n;
            for _ in 0..run {
                o.push(at(x));
                x += 1;
                if x == n {
                    x = 0;
                }
            }
        }
        axis => {
            o.extend((c0..c0 + run as u64).map(|ci| axis.source(ci, n).map_or_else(T::default, at)))
        }
    }
}
