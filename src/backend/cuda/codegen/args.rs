//! The values a generated kernel takes, in the order its source declares them: pointers and
//! strides of inputs, scalars, the extents and divisors of coordinates, the parameters of
//! mapped leaves. They live beside the source they must match (`step_params`,
//! `mapped::params`), so a change to one is a change to the other in the same folder.

use super::{index, mapped, Access, Plan};
use crate::backend::cuda::dense::{first_aligned, input_ptr};
use crate::backend::cuda::kernel::KernelArgs;
use crate::jit::{Instr, Program};

/// For each step, whether it is an input read linearly: laid out exactly like the program's
/// output (same shape, contiguous), so element `i` of the output reads its element `i`.
pub(crate) fn linear_inputs(p: &Program) -> Vec<bool> {
    p.steps
        .iter()
        .map(|s| match &s.instr {
            Instr::Input(d) => s.dims == p.dims && d.is_contiguous(s.dims),
            // element e of the leaf is element e of its request
            Instr::Random(_) => s.dims == p.dims,
            _ => false,
        })
        .collect()
}

/// Whether every linearly read input's first element, and every row of each mapped leaf that
/// reads whole rows (`mapped::reads_rows`), is aligned for loads of `w` elements.
pub(crate) fn aligned_for(p: &Program, linear: &[bool], w: usize) -> bool {
    p.steps.iter().zip(linear).all(|(s, &lin)| match &s.instr {
        Instr::Input(d) if lin => first_aligned(d, s.dtype.size(), w),
        Instr::Mapped(d, m) if mapped::reads_rows(s.dims, m) => {
            mapped::rows_aligned(d, s.dtype, s.dims, m, w)
        }
        _ => true,
    })
}

/// Appends what a kernel that needs coordinates takes to compute them: the extents `d0..d2`,
/// then in a narrow kernel the packed divisors (`codegen::index`).
pub(crate) fn push_coord_args(p: &Program, plan: &Plan, args: &mut KernelArgs) {
    if plan.coords {
        for k in 0..3 {
            args.u64(p.dims[k]);
        }
        if plan.narrow {
            for m in index::divisor_values(p.dims, plan.rank) {
                args.u64(m);
            }
        }
    }
}

/// Appends the values of the parameters `codegen::step_params` declares, in the same order.
pub(crate) fn push_step_args(p: &Program, plan: &Plan, args: &mut KernelArgs) {
    for (i, s) in p.steps.iter().enumerate() {
        match &s.instr {
            Instr::Input(d) => {
                args.u64(input_ptr(d, s.dtype.size()));
                if plan.access[i] == Some(Access::Strided) {
                    for k in 0..4 {
                        args.i64(if s.dims[k] == 1 { 0 } else { d.strides[k] });
                    }
                }
            }
            Instr::Scalar(h) => {
                args.bytes(h.as_bytes());
            }
            Instr::Iota(b) => {
                for &size in b {
                    args.u64(size);
                }
            }
            Instr::Mapped(d, m) => {
                for v in mapped::values(d, s.dtype, s.dims, m) {
                    args.u64(v);
                }
            }
            Instr::Random(r) => {
                args.value(r.keys).u64(r.base).u32(r.lane);
                if plan.access[i] == Some(Access::Strided) {
                    // the leaf's own dense strides, 0 where it is broadcast
                    let dense = s.dims.strides();
                    for k in 0..4 {
                        args.i64(if s.dims[k] == 1 { 0 } else { dense[k] as i64 });
                    }
                }
            }
            _ => {}
        }
    }
}
