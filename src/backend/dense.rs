//! `Dense`: an evaluated array stored densely in column-major order, the form in which the
//! non-fused families (signal processing, linear algebra) hand arrays to the backends.

use std::sync::Arc;

use super::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Node, Program};
use crate::storage::{u8_to_bool_bytes, Element, HostVec};

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
            Data::dense(node.backend.ops().run(&p)?.pop().expect("one output"), node.dims)
        };
        Ok(Dense { data, dims: node.dims, dtype: node.dtype, backend: node.backend })
    }

    /// New dense data from a buffer of this backend.
    pub(crate) fn new(buf: Buffer, dims: Dim4, dtype: DType, backend: BackendKind) -> Dense {
        Dense { data: Data::dense(buf, dims), dims, dtype, backend }
    }

    /// New dense data on the CPU backend, from host elements.
    pub(crate) fn from_host<T: Element>(v: Vec<T>, dims: Dim4) -> Dense {
        Dense::new(Buffer::host(T::wrap(v)), dims, T::DTYPE, BackendKind::Cpu)
    }

    /// The elements as a host slice (CPU data only).
    pub(crate) fn host<T: Element>(&self) -> &[T] {
        match self.data.buffer() {
            Buffer::Host(h) => {
                let n = self.dims.elements() as usize;
                &h.as_slice::<T>()[self.data.offset..self.data.offset + n]
            }
            Buffer::Cuda(_) => unreachable!("internal error: device data on the CPU path"),
        }
    }

    /// `U8` data relabelled as `B8`, the bytes keeping their values: how a bool result that
    /// ArrayFire computes as a number and stores in its `b8` bytes (a convolution of a bool
    /// signal) is made. Device memory is untyped and only the tag changes; host memory changes
    /// its variant in place where the buffer is not shared.
    pub(crate) fn bytes_as_bool(mut self) -> Dense {
        assert_eq!(self.dtype, DType::U8, "internal error: bytes_as_bool of {:?}", self.dtype);
        self.dtype = DType::B8;
        if let Some(Buffer::Host(h)) = self.data.buffer_mut() {
            let v = std::mem::replace(h, HostVec::U8(Vec::new())).into_vec::<u8>();
            *h = HostVec::B8(u8_to_bool_bytes(v));
        } else if let Buffer::Host(h) = self.data.buffer() {
            let v = u8_to_bool_bytes(h.as_slice::<u8>().to_vec());
            self.data = Data { buf: Arc::new(Buffer::host(HostVec::B8(v))), ..self.data };
        }
        self
    }

    /// A ready graph node holding this data.
    pub(crate) fn into_node(self) -> Arc<Node> {
        Node::ready(self.dtype, self.dims, self.backend, self.data)
    }
}
