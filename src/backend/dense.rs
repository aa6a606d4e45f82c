//! `Dense`: an evaluated array stored densely in column-major order, the form in which the
//! non-fused families (signal processing, linear algebra) hand arrays to the backends.

use std::sync::Arc;

use super::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Node, Program};

/// An evaluated array stored densely in column-major order.
#[derive(Clone, Debug)]
pub(crate) struct Dense {
    pub data: Data,
    pub dims: Dim4,
    pub dtype: DType,
    pub backend: BackendKind,
}

impl Dense {
    /// Evaluates `node` (a lazy tree or a strided view) into dense data on its backend.
    pub(crate) fn of(node: &Arc<Node>) -> Result<Dense, Error> {
        let data = node.try_eval()?;
        let data = if data.is_contiguous(node.dims) {
            data
        } else {
            let p = Program::copy_of(data, node.dtype, node.dims);
            Data::dense(node.backend.run(&p)?.pop().expect("one output"), node.dims)
        };
        Ok(Dense { data, dims: node.dims, dtype: node.dtype, backend: node.backend })
    }

    /// New dense data from a buffer of this backend.
    pub(crate) fn new(buf: Buffer, dims: Dim4, dtype: DType, backend: BackendKind) -> Dense {
        Dense { data: Data::dense(buf, dims), dims, dtype, backend }
    }

    /// A ready graph node holding this data.
    pub(crate) fn into_node(self) -> Arc<Node> {
        Node::ready(self.dtype, self.dims, self.backend, self.data)
    }
}
