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
    /// host vector: strided data is first gathered into a dense buffer of this backend.
    fn download(&self, d: &Data, dims: Dim4, dtype: DType) -> Result<HostVec, Error> {
        if d.is_contiguous(dims) {
            return self.download_dense(d, dims.elements() as usize, dtype);
        }
        let buf = self.run(&Program::copy_of(d.clone(), dtype, dims))?.pop();
        let dense = Data::dense(buf.expect("one output"), dims);
        self.download_dense(&dense, dims.elements() as usize, dtype)
    }

    /// The `n` elements of `dtype` that dense data of this backend holds from its offset, on
    /// the host (the backend's part of [`Evaluate::download`]).
    fn download_dense(&self, d: &Data, n: usize, dtype: DType) -> Result<HostVec, Error>;
}
