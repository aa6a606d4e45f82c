//! Running a program on a CUDA device: choose the kernel's form, find or compile it, pack its
//! parameters and launch it on the device's emberfire stream.

use std::sync::Arc;

use super::codegen::{self, Access};
use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey};
use super::mapped;
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::backend::Buffer;
use crate::error::Error;
use crate::jit::{Instr, Program};

/// Threads per block of element-wise kernels.
const BLOCK: u32 = 256;
/// Resident blocks per multiprocessor the grid is sized for; more would only add scheduling.
const BLOCKS_PER_SM: u32 = 16;

/// The device pointer and element offset of an input step.
pub(crate) fn input_ptr(d: &crate::jit::Data, size: usize) -> u64 {
    match &*d.buf {
        Buffer::Cuda(m) => m.ptr() + (d.offset * size) as u64,
        Buffer::Host(_) => unreachable!("internal error: host buffer in a CUDA program"),
    }
}

/// Whether the first element of `d` (elements of `size` bytes) is aligned for loads of `w`
/// elements.
pub(crate) fn first_aligned(d: &crate::jit::Data, size: usize, w: usize) -> bool {
    input_ptr(d, size).is_multiple_of((w * size) as u64)
}

/// Evaluates `p` on device `ordinal`, returning one new buffer per output.
pub(crate) fn run(ordinal: usize, p: &Program) -> Result<Vec<DeviceMem>, Error> {
    let dev = runtime::device(ordinal)?;
    let n = p.dims.elements() as usize;
    let mut outs = Vec::with_capacity(p.outputs.len());
    for &o in &p.outputs {
        outs.push(dev.memory().alloc(n.saturating_mul(p.steps[o].dtype.size()).max(1))?);
    }
    if n == 0 {
        return Ok(outs);
    }
    let out_ptrs: Vec<u64> = outs.iter().map(|m| m.ptr()).collect();
    launch(dev, p, &out_ptrs, None)?;
    Ok(outs)
}

/// Evaluates `p` (one output) on device `ordinal` and writes element `(i, j, k, l)` of the
/// result to element `offset + i*s0 + j*s1 + k*s2 + l*s3` of `dst`. The caller has checked
/// that this view lies inside `dst` and is one-to-one, and holds `dst` exclusively (so no step
/// of `p` reads it).
pub(crate) fn run_into(
    ordinal: usize,
    p: &Program,
    dst: &DeviceMem,
    offset: usize,
    strides: [i64; 4],
) -> Result<(), Error> {
    let dev = runtime::device(ordinal)?;
    if p.dims.elements() == 0 {
        return Ok(());
    }
    let size = p.steps[p.outputs[0]].dtype.size();
    launch(dev, p, &[dst.ptr() + (offset * size) as u64], Some(strides))
}

/// Finds or compiles the kernel of `p` and launches it, writing output `o` at `outs[o]`:
/// densely, or through `out_strides` (one output only).
fn launch(
    dev: &Device,
    p: &Program,
    outs: &[u64],
    out_strides: Option<[i64; 4]>,
) -> Result<(), Error> {
    let n = p.dims.elements() as usize;
    let linear = linear_inputs(p);
    let mut plan = codegen::plan(p, &linear, |w| aligned_for(p, &linear, w));
    if out_strides.is_some() {
        plan.write_strided();
    }
    let func = kernel(dev, p, &plan)?;
    order_inputs(dev, p)?;

    let mut args = KernelArgs::with_capacity(8 + p.steps.len() * 5);
    args.u64(n as u64);
    push_coord_args(p, &plan, &mut args);
    push_step_args(p, &plan, &mut args);
    for &ptr in outs {
        args.u64(ptr);
    }
    for st in out_strides.iter().flatten() {
        args.i64(*st);
    }

    let iters = if plan.vector > 1 { (n / plan.vector).max(1) } else { n };
    let grid = grid_stride_blocks(iters as u64, BLOCK, dev.sm_count(), BLOCKS_PER_SM);
    // SAFETY: the parameters match the kernel's signature in order and size (see
    // `codegen::source`), every pointer refers to live device memory of the right length held
    // by `p` or by the caller of `launch` (which checked a strided output's view against its
    // buffer), and the launch is ordered on the thread's current stream (which the outputs
    // were allocated for) before any use of the outputs.
    unsafe { func.launch(dev, (grid, 1, 1), (BLOCK, 1, 1), 0, &mut args) }
}

/// The compiled kernel for `p` under `plan`: looked up by the program's structure, and its
/// source written and compiled only on the structure's first use.
fn kernel(dev: &Device, p: &Program, plan: &codegen::Plan) -> Result<Arc<KernelFn>, Error> {
    let key = KernelKey::new(Family::Elementwise, codegen::key(p, plan));
    dev.kernels().kernel(dev, key, codegen::ENTRY, || codegen::source(p, plan))
}

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
pub(crate) fn push_coord_args(p: &Program, plan: &codegen::Plan, args: &mut KernelArgs) {
    if plan.coords {
        for k in 0..3 {
            args.u64(p.dims[k]);
        }
        if plan.narrow {
            for m in codegen::index::divisor_values(p.dims, plan.rank) {
                args.u64(m);
            }
        }
    }
}

/// Appends the values of the parameters `codegen::step_params` declares, in the same order.
pub(crate) fn push_step_args(p: &Program, plan: &codegen::Plan, args: &mut KernelArgs) {
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

/// Orders the launch about to be queued on the current stream after the last use of each input
/// buffer on another stream (a user stream of a `with_stream` scope, maybe on another thread);
/// nothing to do in the common one-stream case.
pub(crate) fn order_inputs(dev: &Device, p: &Program) -> Result<(), Error> {
    let stream = dev.current_stream_id();
    for s in &p.steps {
        if let Instr::Input(d) | Instr::Mapped(d, _) = &s.instr {
            if let Buffer::Cuda(m) = &*d.buf {
                dev.memory().order_use(m, stream)?;
            }
        }
    }
    Ok(())
}
