//! The evaluation family: running a flattened program, and moving elements between the host
//! and a backend's memory. Every other family builds on it.

use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Program};
use crate::storage::HostVec;

use super::Buffer;

/// Evaluation on one backend.
pub(crate) trait Evaluate {
    /// Evaluates a program; one buffer per output, contiguous, in order.
    fn run(&self, p: &Program) -> Result<Vec<Buffer>, Error>;

    /// Moves host elements into a new buffer of this backend.
    fn upload(&self, h: HostVec) -> Result<Buffer, Error>;

    /// Copies the elements of ready data of this backend with shape `dims` to a contiguous
    /// host vector.
    fn download(&self, d: &Data, dims: Dim4, dtype: DType) -> Result<HostVec, Error>;
}
