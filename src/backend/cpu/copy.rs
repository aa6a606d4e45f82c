//! Copies of whole arrays into place in a new buffer (`join`): in parallel over the columns of
//! each input, each column a memcpy when the input's dimension 0 is contiguous.

use rayon::prelude::*;

use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;
use crate::storage::{alloc_uninit, with_dtype, Element, HostVec};

/// Columns per parallel task, at least this many elements.
const TASK: usize = 1 << 15;

/// Base pointer of the output; tasks write disjoint column ranges of it.
struct Out<T>(*mut T);
// SAFETY: only used to write disjoint ranges from different threads.
unsafe impl<T> Send for Out<T> {}
// SAFETY: as above; tasks share the pointer, never an element.
unsafe impl<T> Sync for Out<T> {}

/// `parts` (data and shape) one after another along dimension `dim`, in a new dense vector of
/// shape `out`, or [`Error::OutOfMemory`].
pub(crate) fn concatenate(
    parts: &[(Data, Dim4)],
    dim: usize,
    out: Dim4,
    dtype: DType,
) -> Result<HostVec, Error> {
    with_dtype!(dtype, T => Ok(T::wrap(place::<T>(parts, dim, out)?)))
}

fn place<T: Element>(parts: &[(Data, Dim4)], dim: usize, out: Dim4) -> Result<Vec<T>, Error> {
    let n = out.elements() as usize;
    let mut v: Vec<T> = alloc_uninit(n)?;
    let dst = Out(v.as_mut_ptr());
    let os = out.strides().get().map(|x| x as usize);
    let mut at = 0usize; // where the current part starts along `dim`
    for (data, dims) in parts {
        let Buffer::Host(h) = data.buffer() else {
            unreachable!("internal error: device buffer on the CPU backend")
        };
        let src = h.as_slice::<T>();
        let [d0, d1, d2, _] = dims.get().map(|x| x as usize);
        let start = at * os[dim];
        let columns = dims.elements() as usize / d0.max(1);
        let s = data.strides;
        (0..columns).into_par_iter().with_min_len(TASK.div_ceil(d0.max(1))).for_each(|c| {
            let (j, k, l) = (c % d1, (c / d1) % d2, c / (d1 * d2));
            let from = data.offset as i64 + j as i64 * s[1] + k as i64 * s[2] + l as i64 * s[3];
            let to = start + j * os[1] + k * os[2] + l * os[3];
            let dst = &dst;
            // SAFETY: column `c` of this part lands at `to..to + d0` in the output, which lies
            // inside the allocation of `n` elements and which no other column or part writes.
            unsafe {
                let w = dst.0.add(to);
                if s[0] == 1 {
                    std::ptr::copy_nonoverlapping(src.as_ptr().add(from as usize), w, d0);
                } else {
                    for i in 0..d0 {
                        w.add(i).write(src[(from + i as i64 * s[0]) as usize]);
                    }
                }
            }
        });
        at += dims[dim] as usize;
    }
    // SAFETY: the parts tile the output along `dim`, so every element was written above.
    unsafe { v.set_len(n) };
    Ok(v)
}
