//! The movement family: data movement that materialises (transposes, joins). Views,
//! tiles, shifts and pads need no backend code: they are strided or mapped leaves that every
//! evaluator reads.

use super::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

/// Materialising data movement on one backend.
pub(crate) trait Movement {
    /// The transpose of `data` (shape `dims`, dimension 0 contiguous) as a new dense buffer of
    /// shape `[dims[1], dims[0], dims[2], dims[3]]`, conjugated if `conj` (complex types only).
    fn transpose(&self, data: &Data, dims: Dim4, dtype: DType, conj: bool)
        -> Result<Buffer, Error>;

    /// The arrays `parts` (data and shape) placed one after another along dimension `dim`, in
    /// a new dense buffer of shape `out`.
    fn concatenate(
        &self,
        parts: &[(Data, Dim4)],
        dim: usize,
        out: Dim4,
        dtype: DType,
    ) -> Result<Buffer, Error>;
}
