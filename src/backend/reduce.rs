//! Where reductions run. Both backends reduce fused with the producer: the CPU folds the
//! evaluator's chunks (`cpu::reduce`), CUDA generates one kernel from the producer's program
//! (`cuda::reduce`). The producer node is never evaluated on its own; on the CPU, lazy
//! operations under it that an array holds are stored by the same pass.

use std::sync::Arc;

use super::{cpu, cuda, download, BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Node, Program};
use crate::storage::HostVec;

use cuda::codegen::reduce::Fold;

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ReduceOp {
    Sum,
    Product,
    Min,
    Max,
    AllTrue,
    AnyTrue,
    Count,
    /// Sum with NaN replaced by the value.
    SumNan(f64),
    /// Product with NaN replaced by the value.
    ProductNan(f64),
}

/// Which extreme an index reduction looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IndexOp {
    Min,
    Max,
}

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
        match self {
            BackendKind::Cpu => Ok(Buffer::host(cpu_reduce(node, op, Some(dim), out)?)),
            BackendKind::Cuda(d) => {
                let (fold, nanval) = Fold::of(op);
                let (m, _) = cuda::reduce::reduce(d, node, fold, nanval, Some(dim), out)?;
                Ok(Buffer::Cuda(m))
            }
        }
    }

    /// Reduces every element of `node` to one value of type `out`, returned to the host.
    pub(crate) fn reduce_all(
        self,
        node: &Arc<Node>,
        op: ReduceOp,
        out: DType,
    ) -> Result<HostVec, Error> {
        match self {
            BackendKind::Cpu => cpu_reduce(node, op, None, out),
            BackendKind::Cuda(d) => {
                let (fold, nanval) = Fold::of(op);
                let (m, _) = cuda::reduce::reduce(d, node, fold, nanval, None, out)?;
                one(m, out)
            }
        }
    }

    /// `imin`/`imax` along `dim`: the extreme values (of the node's type) and their u32
    /// positions along `dim`, as two new buffers of this backend.
    pub(crate) fn reduce_dim_index(
        self,
        node: &Arc<Node>,
        op: IndexOp,
        dim: usize,
    ) -> Result<(Buffer, Buffer), Error> {
        match self {
            BackendKind::Cpu => {
                let (v, i) = cpu::reduce::reduce_index(&program(node)?, op, Some(dim))?;
                Ok((Buffer::host(v), Buffer::host(i)))
            }
            BackendKind::Cuda(d) => {
                let fold = Fold::of_index(op);
                let (v, i) = cuda::reduce::reduce(d, node, fold, 0.0, Some(dim), node.dtype)?;
                let i = i.expect("internal error: an index reduction writes positions");
                Ok((Buffer::Cuda(v), Buffer::Cuda(i)))
            }
        }
    }

    /// `imin_all`/`imax_all`: the extreme value and its linear position, on the host.
    pub(crate) fn reduce_all_index(
        self,
        node: &Arc<Node>,
        op: IndexOp,
    ) -> Result<(HostVec, u32), Error> {
        let (v, i) = match self {
            BackendKind::Cpu => cpu::reduce::reduce_index(&program(node)?, op, None)?,
            BackendKind::Cuda(d) => {
                let fold = Fold::of_index(op);
                let (v, i) = cuda::reduce::reduce(d, node, fold, 0.0, None, node.dtype)?;
                let i = i.expect("internal error: an index reduction writes positions");
                (one(v, node.dtype)?, one(i, DType::U32)?)
            }
        };
        Ok((v, i.as_slice::<u32>()[0]))
    }
}

/// A CPU reduction of `node`: the lazy operations under it that may be read again are
/// stored while it folds, and become ready (see `backend::schedule::reduction_program`).
fn cpu_reduce(
    node: &Arc<Node>,
    op: ReduceOp,
    dim: Option<usize>,
    out: DType,
) -> Result<HostVec, Error> {
    let (prog, held) = crate::backend::schedule::reduction_program(node)?;
    let (reduced, stored) = cpu::reduce::reduce(&prog, op, dim, out)?;
    for (n, h) in held.iter().zip(stored) {
        n.set_ready(Data::dense(Buffer::host(h), n.dims));
    }
    Ok(reduced)
}

/// The program that computes `node`: the producer the reduction folds.
fn program(node: &Arc<Node>) -> Result<Program, Error> {
    crate::backend::schedule::program_for(std::slice::from_ref(node))
}

/// The single element of a device buffer, on the host.
fn one(m: cuda::memory::DeviceMem, dtype: DType) -> Result<HostVec, Error> {
    let dims = Dim4::new(&[1, 1, 1, 1]);
    download(&Data::dense(Buffer::Cuda(m), dims), dims, dtype)
}
