//! Where matrix products run: the `gemm` crate on the CPU (`cpu::blas`), cuBLAS on CUDA
//! (`cuda::blas`). Both receive ready operands as they are stored (buffer, offset, strides) and
//! write a dense, column-major result.

use super::Buffer;
use crate::dim4::Dim4;
use crate::dtype::{c64, DType, HasAfEnum};
use crate::error::Error;
use crate::jit::Data;
use crate::storage::HostVec;

/// One operand of a product, as stored: element `(i, j, b2, b3)` of the stored matrix is at
/// `data.offset + i*s0 + j*s1 + b2*s2 + b3*s3`. The product uses `op(stored)`, where `op`
/// transposes when `trans` is set and conjugates when `conj` is set.
#[derive(Clone, Debug)]
pub(crate) struct MatArg {
    pub data: Data,
    /// The stored shape (before `op`); a batch dimension of 1 broadcasts.
    pub dims: Dim4,
    pub trans: bool,
    pub conj: bool,
}

impl MatArg {
    /// The element offset of batch `(b2, b3)` of the result in this operand (a batch dimension
    /// of size 1 is shared by every batch).
    pub(crate) fn batch_offset(&self, b2: usize, b3: usize) -> isize {
        let s = &self.data.strides;
        let i2 = if self.dims[2] == 1 { 0 } else { b2 as isize };
        let i3 = if self.dims[3] == 1 { 0 } else { b3 as isize };
        self.data.offset as isize + i2 * s[2] as isize + i3 * s[3] as isize
    }
}

/// The sizes and scalars of `C = alpha * op(A) op(B) + beta * C`, batched over dimensions 2
/// and 3 of the result.
#[derive(Clone, Debug)]
pub(crate) struct GemmParams {
    pub dtype: DType,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The result's dimensions 2 and 3.
    pub batch: [usize; 2],
    /// One element of `dtype` each.
    pub alpha: HostVec,
    pub beta: HostVec,
}

impl GemmParams {
    /// The parameters of a product of shape `dims` (rows, columns, batches) with inner size
    /// `k`.
    pub(crate) fn new<T: HasAfEnum>(dims: Dim4, k: usize, alpha: T, beta: T) -> GemmParams {
        GemmParams {
            dtype: T::DTYPE,
            m: dims[0] as usize,
            n: dims[1] as usize,
            k,
            batch: [dims[2] as usize, dims[3] as usize],
            alpha: T::wrap(vec![alpha]),
            beta: T::wrap(vec![beta]),
        }
    }

    /// Elements of the whole (batched) result; `usize::MAX` when the count overflows, a size
    /// whose allocation then fails as out of memory instead of wrapping to a small one.
    pub(crate) fn out_len(&self) -> usize {
        self.m.saturating_mul(self.n).saturating_mul(self.batch[0]).saturating_mul(self.batch[1])
    }

    /// Whether beta is zero, in which case `C` is not read (as in BLAS: NaN in `C` does not
    /// propagate).
    pub(crate) fn beta_is_zero(&self) -> bool {
        let z = self.beta.cast(DType::C64).as_slice::<c64>()[0];
        z.re == 0.0 && z.im == 0.0
    }
}

/// Matrix products on one backend.
pub(crate) trait Blas {
    /// Whether this backend can run products now (on CUDA: cuBLAS is loaded and the device's
    /// handle exists), so that callers can fail before changing anything.
    fn blas_available(&self) -> Result<(), Error>;

    /// Computes the product into `c` (a dense buffer of this backend holding `C`, owned by the
    /// caller and shared with nobody) or, when `c` is `None`, into a new buffer with `beta`
    /// taken as zero. Requires `m`, `n`, `k` and the batch sizes to be non-zero.
    fn gemm(
        &self,
        a: &MatArg,
        b: &MatArg,
        c: Option<Buffer>,
        p: &GemmParams,
    ) -> Result<Buffer, Error>;
}

/// Allows (or forbids) TF32 tensor-core arithmetic in f32 products on CUDA; the CPU has none.
pub(crate) fn set_tf32(allowed: bool) {
    super::cuda::blas::set_tf32(allowed);
}

/// Whether TF32 is allowed (see [`set_tf32`]).
pub(crate) fn tf32() -> bool {
    super::cuda::blas::tf32()
}
