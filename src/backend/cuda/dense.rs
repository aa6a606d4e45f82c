//! Dense data on a CUDA device as the handwritten kernels' launchers need it: the address of
//! its first element (or of any ready data), and new, uninitialised data of a shape.

use super::runtime::Device;
use crate::backend::dense::Dense;
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

/// The device address of `d`'s first element (its buffer's start plus its offset).
pub(crate) fn device_ptr(d: &Dense) -> u64 {
    match d.data.buffer() {
        Buffer::Cuda(m) => m.ptr() + (d.data.offset * d.dtype.size()) as u64,
        Buffer::Host(_) => unreachable!("internal error: host data on the CUDA path"),
    }
}

/// The device pointer and element offset of an input step.
pub(crate) fn input_ptr(d: &Data, size: usize) -> u64 {
    match d.buffer() {
        Buffer::Cuda(m) => m.ptr() + (d.offset * size) as u64,
        Buffer::Host(_) => unreachable!("internal error: host buffer in a CUDA program"),
    }
}

/// Whether the first element of `d` (elements of `size` bytes) is aligned for loads of `w`
/// elements.
pub(crate) fn first_aligned(d: &Data, size: usize, w: usize) -> bool {
    input_ptr(d, size).is_multiple_of((w * size) as u64)
}

/// New dense data of shape `dims` on `dev` (its strides are those of `dims`; at least one
/// byte is allocated, so that an empty array still has an address).
pub(crate) fn alloc_dense(dev: &Device, dims: Dim4, t: DType) -> Result<Dense, Error> {
    let mem = dev.memory().alloc((dims.elements() as usize * t.size()).max(1))?;
    Ok(Dense::new(Buffer::Cuda(mem), dims, t, BackendKind::Cuda(dev.ordinal())))
}
