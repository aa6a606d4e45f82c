//! Data movement that materialises (transposes, joins), dispatched to the backends. Views,
//! tiles, shifts and pads need no backend code: they are strided or mapped leaves that every
//! evaluator reads.

use super::{cpu, cuda, BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

impl BackendKind {
    /// The transpose of `data` (shape `dims`, dimension 0 contiguous) as a new dense buffer of
    /// shape `[dims[1], dims[0], dims[2], dims[3]]`, conjugated if `conj` (complex types only).
    pub(crate) fn transpose(
        self,
        data: &Data,
        dims: Dim4,
        dtype: DType,
        conj: bool,
    ) -> Result<Buffer, Error> {
        debug_assert_eq!(data.strides[0], 1, "internal error: transpose of a strided column");
        match self {
            BackendKind::Cpu => {
                Ok(Buffer::host(cpu::transpose::transpose(data, dims, dtype, conj)?))
            }
            BackendKind::Cuda(d) => {
                Ok(Buffer::Cuda(cuda::transpose::transpose(d, data, dims, dtype, conj)?))
            }
        }
    }

    /// The arrays `parts` (data and shape) placed one after another along dimension `dim`, in
    /// a new dense buffer of shape `out`.
    pub(crate) fn concatenate(
        self,
        parts: &[(Data, Dim4)],
        dim: usize,
        out: Dim4,
        dtype: DType,
    ) -> Result<Buffer, Error> {
        match self {
            BackendKind::Cpu => Ok(Buffer::host(cpu::copy::concatenate(parts, dim, out, dtype)?)),
            BackendKind::Cuda(d) => {
                Ok(Buffer::Cuda(cuda::copy::concatenate(d, parts, dim, out, dtype)?))
            }
        }
    }
}
