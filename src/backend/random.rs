//! Where random numbers are computed: each backend fills a new buffer of its own for a
//! request, following the definition in `random/stream.rs`.

use super::{cpu, cuda, BackendKind, Buffer};
use crate::dtype::DType;
use crate::error::Error;
use crate::random::stream::Draw;

impl BackendKind {
    /// A new buffer of `n` elements of `dtype` holding the numbers of `draw`.
    pub(crate) fn random(self, draw: &Draw, dtype: DType, n: usize) -> Result<Buffer, Error> {
        match self {
            BackendKind::Cpu => Ok(Buffer::host(cpu::random::generate(draw, dtype, n)?)),
            BackendKind::Cuda(d) => Ok(Buffer::Cuda(cuda::random::generate(d, draw, dtype, n)?)),
        }
    }
}
