//! Running a program on a CUDA device: choose the kernel's form, find or compile it, pack its
//! parameters and launch it on the device's emberfire stream.

use std::sync::Arc;

use super::codegen::{
    self,
    args::{aligned_for, linear_inputs, push_coord_args, push_step_args},
};
use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey};
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::backend::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Instr, Program};
use crate::storage::HostVec;

/// Threads per block of element-wise kernels.
const BLOCK: u32 = 256;
/// Resident blocks per multiprocessor the grid is sized for; more would only add scheduling.
const BLOCKS_PER_SM: u32 = 16;

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
    // were allocated for) before any use of the outputs: held back, it is sent before
    // anything else reaches the stream.
    unsafe { func.launch_or_hold(dev, (grid, 1, 1), (BLOCK, 1, 1), 0, &mut args) }
}

/// The compiled kernel for `p` under `plan`: looked up by the program's structure, and its
/// source written and compiled only on the structure's first use.
fn kernel(dev: &Device, p: &Program, plan: &codegen::Plan) -> Result<Arc<KernelFn>, Error> {
    let key = KernelKey::new(Family::Elementwise, codegen::key(p, plan));
    dev.kernels().kernel(dev, key, codegen::ENTRY, || codegen::source(p, plan))
}

/// Orders the launch about to be queued on the current stream after the last use of each input
/// buffer on another stream (a user stream of a `with_stream` scope, maybe on another thread);
/// nothing to do in the common one-stream case.
pub(crate) fn order_inputs(dev: &Device, p: &Program) -> Result<(), Error> {
    let stream = dev.current_stream_id();
    for s in &p.steps {
        if let Instr::Input(d) | Instr::Mapped(d, _) = &s.instr {
            if let Buffer::Cuda(m) = d.buffer() {
                dev.memory().order_use(m, stream)?;
            }
        }
    }
    Ok(())
}

impl crate::backend::evaluate::Evaluate for super::Cuda {
    fn run(&self, p: &Program) -> Result<Vec<Buffer>, Error> {
        Ok(run(self.ordinal, p)?.into_iter().map(Buffer::Cuda).collect())
    }

    fn upload(&self, h: HostVec) -> Result<Buffer, Error> {
        let dev = runtime::device(self.ordinal)?;
        let bytes = h.as_bytes();
        let mem = dev.memory().alloc(bytes.len().max(1))?;
        dev.write(&mem, 0, bytes)?;
        Ok(Buffer::Cuda(mem))
    }

    fn download_dense(&self, d: &Data, n: usize, dtype: DType) -> Result<HostVec, Error> {
        let Buffer::Cuda(m) = d.buffer() else {
            unreachable!("internal error: host data read as device data")
        };
        let dev = runtime::device(m.ordinal())?;
        let size = dtype.size();
        // the host copy of a device array can be what does not fit
        let mut bytes = crate::storage::try_filled(n * size, 0u8)?;
        dev.download(m, d.offset * size, &mut bytes)?;
        HostVec::try_from_bytes(dtype, &bytes)
    }
}

impl crate::backend::write_into::WriteInto for super::Cuda {
    fn write_checked(
        &self,
        p: &Program,
        dst: crate::backend::write_into::Dest<'_>,
    ) -> Result<(), Error> {
        match dst.buf {
            Buffer::Cuda(m) => run_into(self.ordinal, p, m, dst.offset, dst.strides),
            _ => panic!("internal error: run_into on a buffer of another backend"),
        }
    }

    fn alloc_for_overwrite(&self, dtype: DType, elements: usize) -> Result<Buffer, Error> {
        let dev = runtime::device(self.ordinal)?;
        // a size past usize::MAX is a request no memory serves, never a wrapped one
        let bytes = elements.saturating_mul(dtype.size()).max(1);
        Ok(Buffer::Cuda(dev.memory().alloc(bytes)?))
    }
}
