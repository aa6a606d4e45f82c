//! The nearest train point of every query by the sum of squared differences, k = 1, in f32, on
//! a CUDA device: one kernel (`kernels/nearest.cu`) that keeps each query's running minimum
//! while it computes the products, so the query x train matrix of distances that a GEMM-based
//! search writes and reads again (16 GiB for 65,536 x 65,536) never exists. This is the vision
//! family (`backend::vision::Vision`) of the CUDA backend.

use super::dense::{alloc_dense, device_ptr};
use super::kernel::{Family, KernelArgs, KernelKey};
use super::runtime;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

const SOURCE: &str = include_str!("kernels/nearest.cu");

/// Queries a block of `ef_nearest_ssd` owns.
const BLOCK_QUERIES: u64 = 128;

/// Whether `nearest_ssd` takes these operands: f32 columns of `k` features (`k` a multiple of
/// 4, so that the kernel reads them 16 bytes at a time, from 16-byte aligned starts), each
/// count below 2^31.
pub(crate) fn takes(query: &Dense, train: &Dense) -> bool {
    let k = query.dims[0];
    let aligned = |d: &Dense| device_ptr(d).is_multiple_of(16);
    query.dtype == DType::F32
        && train.dtype == DType::F32
        && train.dims[0] == k
        && k > 0
        && k.is_multiple_of(4)
        && k < 1 << 20
        && query.dims.elements() / k < 1 << 31
        && train.dims.elements() / k < 1 << 31
        && aligned(query)
        && aligned(train)
}

/// For each column of `query` (k x nq, every dimension past the first folded into nq), the
/// index (u32) and the sum of squared differences (f32) of its nearest column of `train`
/// (k x nt), ties going to the lower index; both of shape (1, nq). `train` must hold at least
/// one column and `takes(query, train)` must hold.
pub(crate) fn nearest_ssd(
    ordinal: usize,
    query: &Dense,
    train: &Dense,
) -> Result<(Dense, Dense), Error> {
    let dev = runtime::device(ordinal)?;
    let k = query.dims[0];
    let (nq, nt) = (query.dims.elements() / k, train.dims.elements() / k);
    debug_assert!(takes(query, train) && nt > 0);
    let od = Dim4::new(&[1, nq, 1, 1]);
    let idx = alloc_dense(dev, od, DType::U32)?;
    let dist = alloc_dense(dev, od, DType::F32)?;
    if nq == 0 {
        return Ok((idx, dist));
    }
    let key = KernelKey::new(Family::Vision, [0u8]);
    let kernel = dev.kernels().kernel(dev, key, "ef_nearest_ssd", || SOURCE.to_string())?;
    let mut p = KernelArgs::new();
    p.u64(device_ptr(query))
        .u64(device_ptr(train))
        .i32(k as i32)
        .i32(nq as i32)
        .i32(nt as i32)
        .u64(device_ptr(&idx))
        .u64(device_ptr(&dist));
    let grid = nq.div_ceil(BLOCK_QUERIES) as u32;
    // SAFETY: the parameters match `ef_nearest_ssd`'s signature in order and size (three
    // pointers, three ints, two pointers); `query` holds k * nq and `train` k * nt f32 values
    // from 16-byte aligned starts with k a multiple of 4 (`takes`), and `idx` and `dist` nq
    // elements each, all live device memory of this device held until after the launch; the
    // kernel's shared memory is static (under 48 KiB); it runs on emberfire's stream.
    unsafe { kernel.launch(dev, (grid, 1, 1), (256, 1, 1), 0, &mut p) }?;
    Ok((idx, dist))
}

/// The vision family on a CUDA device: the fused search above, where it takes the operands.
impl crate::backend::vision::Vision for super::Cuda {
    fn fuses_nearest_ssd(&self) -> Result<bool, Error> {
        Ok(true)
    }

    fn nearest_ssd(&self, query: &Dense, train: &Dense) -> Result<Option<(Dense, Dense)>, Error> {
        if train.dims[1] > 0 && takes(query, train) {
            nearest_ssd(self.ordinal, query, train).map(Some)
        } else {
            Ok(None)
        }
    }
}
