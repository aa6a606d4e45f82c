//! The movement family on the CPU: the blocked transpose (`transpose.rs`) and the column
//! copies of `join` (`copy.rs`).

use super::{copy, transpose, Cpu};
use crate::backend::movement::Movement;
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

impl Movement for Cpu {
    fn transpose(
        &self,
        data: &Data,
        dims: Dim4,
        dtype: DType,
        conj: bool,
    ) -> Result<Buffer, Error> {
        debug_assert_eq!(data.strides[0], 1, "internal error: transpose of a strided column");
        Ok(Buffer::host(transpose::transpose(data, dims, dtype, conj)?))
    }

    fn concatenate(
        &self,
        parts: &[(Data, Dim4)],
        dim: usize,
        out: Dim4,
        dtype: DType,
    ) -> Result<Buffer, Error> {
        Ok(Buffer::host(copy::concatenate(parts, dim, out, dtype)?))
    }
}
