//! The movement family on CUDA: the blocked transpose (`transpose.rs`) and the column
//! copies of `join` (`copy.rs`).

use super::{copy, transpose, Cuda};
use crate::backend::movement::Movement;
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

impl Movement for Cuda {
    fn transpose(
        &self,
        data: &Data,
        dims: Dim4,
        dtype: DType,
        conj: bool,
    ) -> Result<Buffer, Error> {
        debug_assert_eq!(data.strides[0], 1, "internal error: transpose of a strided column");
        Ok(Buffer::Cuda(transpose::transpose(self.ordinal, data, dims, dtype, conj)?))
    }

    fn concatenate(
        &self,
        parts: &[(Data, Dim4)],
        dim: usize,
        out: Dim4,
        dtype: DType,
    ) -> Result<Buffer, Error> {
        Ok(Buffer::Cuda(copy::concatenate(self.ordinal, parts, dim, out, dtype)?))
    }
}
