//! The CPU side of `BackendKind::run_into`: the fused chunked evaluator (`eval_steps`), with
//! each chunk's values stored through a strided view of an existing vector instead of into a
//! new one.

use rayon::prelude::*;

use super::eval::{eval_steps, for_runs, CHUNK};
use super::kernels::Src;
use crate::backend::write_into::Dest;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Program;
use crate::storage::{with_dtype, with_vec, HostVec};

/// Base address of a destination vector that several threads write, each its own elements.
#[derive(Clone, Copy)]
pub(crate) struct DstPtr(pub(crate) *mut u8);
// SAFETY: users write only elements that no other thread writes (a one-to-one view split by
// chunks here; see `index_copy` for its split), while the `&mut HostVec` the pointer came
// from is held.
unsafe impl Send for DstPtr {}
// SAFETY: as above; shared references only hand out the pointer, and the writes through it
// are to disjoint elements.
unsafe impl Sync for DstPtr {}

impl DstPtr {
    /// The address, through a method so that closures capture the whole (`Sync`) wrapper.
    pub(crate) fn get(self) -> *mut u8 {
        self.0
    }
}

/// Evaluates `p` (one output) and writes element `(i, j, k, l)` of the result to
/// `dst[offset + i*s0 + j*s1 + k*s2 + l*s3]`. The caller has checked that the view lies inside
/// `dst`, holds the output's element type and is one-to-one.
pub(crate) fn run_into(p: &Program, dst: &mut HostVec, offset: usize, strides: [i64; 4]) {
    let n = p.dims.elements() as usize;
    let out = p.outputs[0];
    let dtype = p.steps[out].dtype;
    assert_eq!(dst.dtype(), dtype, "internal error: run_into into another element type");
    let base = with_vec!(dst, v, T => DstPtr(v.as_mut_ptr().cast::<u8>()));
    let last = p.last_uses();
    let work = |c: usize| {
        let start = c * CHUNK;
        let len = CHUNK.min(n - start);
        let vals = eval_steps(p, &last, start, len);
        let v = vals[out].as_ref().expect("internal error: output missing");
        with_dtype!(dtype, T => {
            let ptr = base.get() as *mut T;
            let src = v.src::<T>(len);
            for_runs(p.dims, start, len, |done, run, c| {
                let first = offset as i64
                    + (0..4).map(|k| c[k] as i64 * strides[k]).sum::<i64>();
                for j in 0..run {
                    let x = match &src {
                        Src::Slice(s) => s[done + j],
                        Src::Splat(x) => *x,
                    };
                    // SAFETY: the address lies inside `dst` and no other element of the view
                    // maps to it (both checked by the caller); `dst` is borrowed mutably for
                    // the whole call, so nothing else reads or writes it.
                    unsafe { *ptr.offset((first + j as i64 * strides[0]) as isize) = x };
                }
            });
        });
    };
    let nchunks = n.div_ceil(CHUNK);
    if nchunks <= 1 {
        (0..nchunks).for_each(work);
    } else {
        (0..nchunks).into_par_iter().for_each(work);
    }
}

impl crate::backend::write_into::WriteInto for super::Cpu {
    fn write_checked(&self, p: &Program, dst: Dest<'_>) -> Result<(), Error> {
        match dst.buf {
            crate::backend::Buffer::Host(h) => {
                run_into(p, h, dst.offset, dst.strides);
                Ok(())
            }
            _ => panic!("internal error: run_into on a buffer of another backend"),
        }
    }

    fn alloc_for_overwrite(
        &self,
        dtype: DType,
        elements: usize,
    ) -> Result<crate::backend::Buffer, Error> {
        Ok(crate::backend::Buffer::host(HostVec::try_zeros(dtype, elements)?))
    }
}
