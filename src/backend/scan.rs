//! Where scans run. The CPU scans fused with the producer of its input (`cpu::scan`): the
//! values (converted to the output type) and the keys are outputs of one program evaluated
//! chunk by chunk. CUDA evaluates a lazy input first and runs handwritten kernels on the
//! evaluated data (`cuda::scan`), reading views in place.

use std::sync::Arc;

use super::{cpu, cuda, BackendKind, Buffer};
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Expr, Node, Program};
use crate::ops::scan::BinaryOp;

/// What a scan computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScanSpec {
    pub op: BinaryOp,
    /// The dimension scanned along, 0 to 3.
    pub dim: usize,
    pub inclusive: bool,
}

impl BackendKind {
    /// Scans `values` along `spec.dim` into a new dense buffer of `out` elements of this
    /// backend, restarting wherever `keys` (same shape, an integer type) changes.
    pub(crate) fn scan(
        self,
        values: &Arc<Node>,
        keys: Option<&Arc<Node>>,
        spec: ScanSpec,
        out: DType,
    ) -> Result<Buffer, Error> {
        match self {
            BackendKind::Cpu => {
                // the conversions become steps of the fused program
                let cast = |n: &Arc<Node>, t: DType| {
                    if n.dtype == t {
                        n.clone()
                    } else {
                        Node::lazy(t, n.dims, n.backend, Expr::Cast(n.clone()))
                    }
                };
                let mut roots = vec![cast(values, out)];
                roots.extend(keys.map(|k| cast(k, DType::S64)));
                let program = Program::build(&roots);
                Ok(Buffer::host(cpu::scan::scan(&program, spec)?))
            }
            BackendKind::Cuda(ordinal) => {
                let data = values.try_eval()?;
                let key_data = match keys {
                    Some(k) => Some((k.try_eval()?, k.dtype)),
                    None => None,
                };
                let input = cuda::scan::Input { data: &data, dtype: values.dtype };
                let keys = key_data.as_ref().map(|(d, t)| cuda::scan::Input { data: d, dtype: *t });
                let mem = cuda::scan::scan(ordinal, values.dims, input, keys, spec, out)?;
                Ok(Buffer::Cuda(mem))
            }
        }
    }
}
