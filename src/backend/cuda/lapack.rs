//! Dense factorizations on CUDA with cuSOLVER.

use crate::backend::lapack::Svd;
use crate::backend::signal::Dense;
use crate::error::Error;

pub(crate) fn available(_ordinal: usize) -> Result<(), Error> {
    Err(Error::BackendUnavailable("cuSOLVER is not wired yet".into()))
}
pub(crate) fn getrf(_: usize, _: &Dense) -> Result<(Dense, Dense, Vec<i32>), Error> { unreachable!() }
pub(crate) fn getrs(_: usize, _: &Dense, _: &Dense, _: &Dense) -> Result<Dense, Error> { unreachable!() }
pub(crate) fn potrf(_: usize, _: &Dense, _: bool) -> Result<(Dense, Vec<i32>), Error> { unreachable!() }
pub(crate) fn geqrf(_: usize, _: &Dense) -> Result<(Dense, Dense), Error> { unreachable!() }
pub(crate) fn orgqr(_: usize, _: &Dense, _: &Dense, _: usize) -> Result<Dense, Error> { unreachable!() }
pub(crate) fn gesvd(_: usize, _: &Dense, _: bool) -> Result<Svd, Error> { unreachable!() }
pub(crate) fn trsm(_: usize, _: &Dense, _: &Dense, _: bool, _: bool, _: bool) -> Result<Dense, Error> { unreachable!() }
