//! Computer-vision kernels behind the backend-neutral layer. Most of the vision family is
//! built from array operations that run on every backend; what is here is the one search
//! that array operations cannot do without a matrix of every distance: the nearest train
//! descriptor of each query by SSD, fused on CUDA. Elsewhere (`None`) the array path runs.

use super::dense::Dense;
use super::BackendKind;
use crate::backend::cuda;
use crate::error::Error;

/// Whether `nearest_ssd` may take operands on `backend` (it still checks their shapes).
pub(crate) fn fuses_nearest_ssd(backend: BackendKind) -> bool {
    matches!(backend, BackendKind::Cuda(_))
}

/// The index (u32) and sum of squared differences of the nearest column of `train` to each
/// column of `query` (f32, descriptors along dimension 0), both of shape `(1, nq)`, where a
/// fused kernel takes these operands; `None` where the caller's general path must run.
pub(crate) fn nearest_ssd(query: &Dense, train: &Dense) -> Option<Result<(Dense, Dense), Error>> {
    match query.backend {
        BackendKind::Cuda(d) if train.dims[1] > 0 && cuda::nearest::takes(query, train) => {
            Some(cuda::nearest::nearest_ssd(d, query, train))
        }
        _ => None,
    }
}
