//! The CPU side of `BackendKind::index_copy` (gather and scatter), parallel on rayon.
//!
//! Each side's address of block element `c` is `offset + t0[c0] + t1[c1] + t2[c2] + t3[c3]`,
//! where `tk` is a table of the side's element offsets along dimension `k` (index arrays are
//! read and folded once, when the table is built). Work is split so that no two threads can
//! write one element: by chunks of the block when every destination axis is affine (distinct
//! block elements then land on distinct elements), else by the slices of an affine destination
//! axis, else not at all.

use rayon::prelude::*;

use super::eval::{for_runs, CHUNK};
use super::write_into::DstPtr;
use crate::backend::index_copy::{fold_index, Axis, Side};
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::storage::{with_vec, HostVec};

/// Per dimension, the element offset (relative to the side's offset) of each block coordinate.
fn offset_tables(block: Dim4, side: &Side) -> [Vec<i64>; 4] {
    std::array::from_fn(|k| {
        let n = block[k] as usize;
        let stride = side.strides[k];
        match &side.axes[k] {
            Axis::Affine { start, step } => {
                (0..n as i64).map(|c| (start + c * step) * stride).collect()
            }
            Axis::Indices(d) => {
                let Buffer::Host(HostVec::S64(v)) = d.buffer() else {
                    unreachable!("internal error: CPU index array that is not i64 host data")
                };
                let len = side.dims[k] as i64;
                v[d.offset..d.offset + n].iter().map(|&i| fold_index(i, len) * stride).collect()
            }
        }
    })
}

/// Copies `block` from `src_h` (addressed by `src`) to `dst_h` (addressed by `dst`). The
/// caller has checked both sides' bounds and the destination's layout.
pub(crate) fn index_copy(
    block: Dim4,
    src_h: &HostVec,
    src: &Side,
    dst_h: &mut HostVec,
    dst: &Side,
) {
    let (ts, td) = (offset_tables(block, src), offset_tables(block, dst));
    let (so, dof) = (src.offset as i64, dst.offset as i64);
    let base = with_vec!(dst_h, v, T => DstPtr(v.as_mut_ptr().cast::<u8>()));
    with_vec!(src_h, sv, T => {
        // Copies the block elements whose coordinates `c` have `lo[k] <= c[k] < hi[k]`.
        let copy_box = |lo: [usize; 4], hi: [usize; 4]| {
            let out = base.get() as *mut T;
            for c3 in lo[3]..hi[3] {
                for c2 in lo[2]..hi[2] {
                    for c1 in lo[1]..hi[1] {
                        let s = so + ts[1][c1] + ts[2][c2] + ts[3][c3];
                        let d = dof + td[1][c1] + td[2][c2] + td[3][c3];
                        for c0 in lo[0]..hi[0] {
                            let x = sv[(s + ts[0][c0]) as usize];
                            // SAFETY: the address lies in the destination (checked by the
                            // caller) and this thread is the only one writing it.
                            unsafe { *out.offset((d + td[0][c0]) as isize) = x };
                        }
                    }
                }
            }
        };
        let n = block.elements() as usize;
        let b: [usize; 4] = std::array::from_fn(|k| block[k] as usize);
        let all_affine = dst.axes.iter().all(|a| matches!(a, Axis::Affine { .. }));
        if all_affine && n > CHUNK {
            (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|chunk| {
                let start = chunk * CHUNK;
                for_runs(block, start, CHUNK.min(n - start), |_, run, c| {
                    copy_box(c, [c[0] + run, c[1] + 1, c[2] + 1, c[3] + 1]);
                });
            });
        } else if let Some(p) = (0..4)
            .rev()
            .find(|&k| b[k] > 1 && matches!(dst.axes[k], Axis::Affine { .. }))
            .filter(|_| n > CHUNK)
        {
            // distinct coordinates along an affine axis (step != 0) are distinct positions
            (0..b[p]).into_par_iter().for_each(|cp| {
                let (mut lo, mut hi) = ([0; 4], b);
                lo[p] = cp;
                hi[p] = cp + 1;
                copy_box(lo, hi);
            });
        } else {
            copy_box([0; 4], b);
        }
    });
}

impl crate::backend::index_copy::IndexCopy for super::Cpu {
    fn copy_checked(
        &self,
        _dtype: DType,
        block: Dim4,
        src_buf: &Buffer,
        src: &Side,
        dst_buf: &mut Buffer,
        dst: &Side,
    ) -> Result<(), Error> {
        match (src_buf, dst_buf) {
            (Buffer::Host(s), Buffer::Host(d)) => {
                index_copy(block, s, src, d, dst);
                Ok(())
            }
            _ => panic!("internal error: index_copy between buffers of different backends"),
        }
    }
}
