//! Copies between two devices of one backend, for `Array::try_to_device`: the backend chooses
//! how (on CUDA, directly between GPUs that can reach each other, else staged through the
//! host, in stream order without blocking the host; see the CUDA backend's `peer` module).

use super::{cuda, Buffer};
use crate::error::Error;

/// A new buffer on device `to` of `src`'s backend holding `bytes` bytes of `src` from
/// `src_offset` (bytes). Does not wait for the copy: the new buffer is ready for the next
/// operation on `to`, and `src`'s device does not reuse `src` before the copy has read it.
///
/// Only CUDA has more than one device; asking to copy host memory is an internal error.
pub(crate) fn copy_to_device(
    src: &Buffer,
    src_offset: usize,
    bytes: usize,
    to: usize,
) -> Result<Buffer, Error> {
    match src {
        Buffer::Cuda(m) => cuda::peer::copy_to_device(m, src_offset, bytes, to).map(Buffer::Cuda),
        Buffer::Host(_) => unreachable!("a CUDA array's memory is on the device"),
    }
}
