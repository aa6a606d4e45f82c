//! Where reductions run. The CPU reduces fused with the producer (`cpu::reduce`); the CUDA
//! backend, until its own reduction kernels exist, evaluates the producer on the device,
//! downloads it and reduces on the host with the same code. A device implementation slots in
//! at the `BackendKind::Cuda` arms below without changing any caller.

use std::sync::Arc;

use super::{cpu, download, BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::program::Step;
use crate::jit::{Data, Instr, Node, Program};
use crate::storage::HostVec;

pub(crate) use cpu::reduce::ReduceOp;

impl BackendKind {
    /// Reduces `node` along `dim` into a new buffer of this backend holding `out` elements
    /// in the node's shape with `dim` set to 1.
    pub(crate) fn reduce_dim(
        self,
        node: &Arc<Node>,
        op: ReduceOp,
        dim: usize,
        out: DType,
    ) -> Result<Buffer, Error> {
        let h = host_reduce(self, node, op, Some(dim), out)?;
        self.upload(h)
    }

    /// Reduces every element of `node` to one value of type `out`, returned to the host.
    pub(crate) fn reduce_all(
        self,
        node: &Arc<Node>,
        op: ReduceOp,
        out: DType,
    ) -> Result<HostVec, Error> {
        host_reduce(self, node, op, None, out)
    }
}

/// The reduction computed on the host: fused with the producer for CPU arrays; for CUDA
/// arrays (correct but slow, until the CUDA reduction kernels land) after evaluating the
/// producer on the device and downloading it.
fn host_reduce(
    kind: BackendKind,
    node: &Arc<Node>,
    op: ReduceOp,
    dim: Option<usize>,
    out: DType,
) -> Result<HostVec, Error> {
    let program = match kind {
        BackendKind::Cpu => Program::build(std::slice::from_ref(node)),
        BackendKind::Cuda(_) => {
            let data = node.try_eval()?;
            let h = download(&data, node.dims, node.dtype)?;
            host_input(h, node.dims)
        }
    };
    Ok(cpu::reduce::reduce(&program, op, dim, out))
}

/// A program that reads a contiguous host vector of shape `dims`.
fn host_input(h: HostVec, dims: Dim4) -> Program {
    let dtype = h.dtype();
    let data = Data::dense(Buffer::host(h), dims);
    Program { steps: vec![Step { instr: Instr::Input(data), dtype, dims }], outputs: vec![0], dims }
}
