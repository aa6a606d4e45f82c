//! Where random numbers are computed: each backend fills a new buffer of its own for a
//! request, following the definition in `random/stream.rs`.

use super::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use crate::random::stream::Draw;

/// Random numbers on one backend.
pub(crate) trait Random {
    /// A new buffer of `n` elements of `dtype` holding the numbers of `draw`.
    fn random(&self, draw: &Draw, dtype: DType, n: usize) -> Result<Buffer, Error>;
}
