//! The CPU transpose: blocks of 64 x 64 elements, in parallel over blocks of output columns.
//! Each block passes through a small buffer that stays in the L1 cache, so the matrix itself
//! is only read and written along its columns, whole cache lines at a time.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;
use crate::storage::{alloc_uninit, with_vec, Element, HostVec};

/// Side of a cache block, in elements.
const BLOCK: usize = 64;
/// Elements of output per parallel task, at least.
const TASK: usize = 1 << 15;

/// The transpose of `d` (shape `dims`, stride 1 along dimension 0), dense, of shape
/// `[dims[1], dims[0], dims[2], dims[3]]`; conjugated if `conj` (complex types only). Fails
/// with [`Error::OutOfMemory`] when the result does not fit.
pub(crate) fn transpose(d: &Data, dims: Dim4, dtype: DType, conj: bool) -> Result<HostVec, Error> {
    let Buffer::Host(h) = d.buffer() else {
        unreachable!("internal error: device buffer on the CPU backend")
    };
    debug_assert_eq!(h.dtype(), dtype);
    Ok(match h {
        HostVec::C32(v) if conj => HostVec::C32(blocked(v, d, dims, |z| z.conj())?),
        HostVec::C64(v) if conj => HostVec::C64(blocked(v, d, dims, |z| z.conj())?),
        _ => with_vec!(h, v, T => T::wrap(blocked(v, d, dims, |x| x)?)),
    })
}

fn blocked<T: Copy + Send + Sync>(
    v: &[T],
    d: &Data,
    dims: Dim4,
    f: impl Fn(T) -> T + Sync,
) -> Result<Vec<T>, Error> {
    let [d0, d1, d2, d3] = dims.get().map(|x| x as usize);
    let n = d0 * d1 * d2 * d3;
    let mut out: Vec<T> = alloc_uninit(n)?;
    if n == 0 {
        return Ok(out);
    }
    let (s1, s2, s3) = (d.strides[1] as isize, d.strides[2] as isize, d.strides[3] as isize);
    // Output columns (each d1 long) per task: whole blocks, and enough work to amortise a task.
    let cols = TASK.div_ceil(d1).div_ceil(BLOCK).max(1) * BLOCK;
    out.spare_capacity_mut()[..n].par_chunks_mut(d0 * d1).enumerate().for_each(|(b, batch)| {
        let base = d.offset as isize + (b % d2) as isize * s2 + (b / d2) as isize * s3;
        batch.par_chunks_mut(cols * d1).enumerate().for_each(|(t, chunk)| {
            // One block is staged in a small buffer: input columns are read whole (contiguous)
            // into it, output columns written whole from it. Reading or writing the matrix
            // itself with a power-of-two stride would map every line of a block to the same
            // cache sets and evict them before they are used again.
            let mut tile: Vec<MaybeUninit<T>> = Vec::with_capacity(BLOCK * BLOCK);
            // SAFETY: MaybeUninit needs no initialisation; every element read below was
            // written first for the current block.
            unsafe { tile.set_len(BLOCK * BLOCK) };
            let i_start = t * cols;
            let i_end = (i_start + cols).min(d0);
            for i0 in (i_start..i_end).step_by(BLOCK) {
                let ni = (i_end - i0).min(BLOCK);
                for j0 in (0..d1).step_by(BLOCK) {
                    let nj = (d1 - j0).min(BLOCK);
                    for jj in 0..nj {
                        let at = (base + i0 as isize + (j0 + jj) as isize * s1) as usize;
                        for (ii, &x) in v[at..at + ni].iter().enumerate() {
                            tile[ii * BLOCK + jj].write(x);
                        }
                    }
                    for ii in 0..ni {
                        let row = &mut chunk[(i0 + ii - i_start) * d1 + j0..][..nj];
                        for (o, x) in row.iter_mut().zip(&tile[ii * BLOCK..ii * BLOCK + nj]) {
                            // SAFETY: written by the loop above for this block
                            o.write(f(unsafe { x.assume_init() }));
                        }
                    }
                }
            }
        });
    });
    // SAFETY: the loops above wrote every element of every batch, block by block.
    unsafe { out.set_len(n) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn blocks_cover_ragged_edges_and_batches() {
        for &(d0, d1, d2, d3) in &[(1, 1, 1, 1), (3, 130, 2, 1), (200, 7, 1, 3), (65, 65, 2, 2)] {
            let dims = Dim4::new(&[d0, d1, d2, d3]);
            let pad = 3; // columns longer than d0, and an offset
            let len = 5 + (d0 + pad) * d1 * d2 * d3;
            let v: Vec<u32> = (0..len as u32).collect();
            let s1 = (d0 + pad) as i64;
            let data = Data {
                buf: Arc::new(Buffer::host(HostVec::U32(v.clone()))),
                offset: 5,
                strides: [1, s1, s1 * d1 as i64, s1 * (d1 * d2) as i64],
            };
            let t = transpose(&data, dims, DType::U32, false).unwrap().into_vec::<u32>();
            for l in 0..d3 {
                for k in 0..d2 {
                    for j in 0..d1 {
                        for i in 0..d0 {
                            let src = 5 + i + j * s1 as u64 + (k + l * d2) * s1 as u64 * d1;
                            let dst = j + i * d1 + (k + l * d2) * d0 * d1;
                            assert_eq!(
                                t[dst as usize], v[src as usize],
                                "{dims} at {i},{j},{k},{l}"
                            );
                        }
                    }
                }
            }
        }
    }
}
