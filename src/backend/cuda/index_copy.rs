//! The CUDA side of `BackendKind::index_copy` (gather and scatter): one handwritten kernel
//! (`kernels/index_copy.cu`) per element size, compiled through the device's kernel cache.

use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelKey, KernelParam};
use super::memory::DeviceMem;
use super::runtime;
use crate::backend::index_copy::{Axis, Side};
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

const SOURCE: &str = include_str!("kernels/index_copy.cu");

/// Threads per block; each thread copies elements in a grid-stride loop.
const BLOCK: u32 = 256;
/// Resident blocks per multiprocessor the grid is sized for.
const BLOCKS_PER_SM: u32 = 16;

/// `Side` in index_copy.cu.
#[repr(C)]
#[derive(Clone, Copy)]
struct SideParams {
    offset: i64,
    stride: [i64; 4],
    start: [i64; 4],
    step: [i64; 4],
    len: [i64; 4],
    /// Device addresses of the index arrays, 0 along affine dimensions.
    idx: [u64; 4],
}

/// `Params` in index_copy.cu.
#[repr(C)]
#[derive(Clone, Copy)]
struct CopyParams {
    n: i64,
    block: [i64; 4],
    src: SideParams,
    dst: SideParams,
}

// SAFETY: 8-byte fields only (`SideParams` too): no padding.
unsafe impl KernelParam for CopyParams {}

fn side_params(side: &Side) -> SideParams {
    let mut p = SideParams {
        offset: side.offset as i64,
        stride: side.strides,
        start: [0; 4],
        step: [0; 4],
        len: std::array::from_fn(|k| side.dims[k] as i64),
        idx: [0; 4],
    };
    for k in 0..4 {
        match &side.axes[k] {
            Axis::Affine { start, step } => {
                p.start[k] = *start;
                p.step[k] = *step;
            }
            Axis::Indices(d) => match d.buffer() {
                Buffer::Cuda(m) => p.idx[k] = m.ptr() + (d.offset * 8) as u64,
                Buffer::Host(_) => unreachable!("internal error: host index array in a CUDA copy"),
            },
        }
    }
    p
}

/// Launches the copy of `block` on device `ordinal`'s stream. The caller has checked both
/// sides' bounds and the destination's layout; the index arrays and `src` are kept alive by
/// the caller until the launch returns, after which the stream orders any reuse.
pub(crate) fn index_copy(
    ordinal: usize,
    dtype: DType,
    block: Dim4,
    src_mem: &DeviceMem,
    src: &Side,
    dst_mem: &DeviceMem,
    dst: &Side,
) -> Result<(), Error> {
    let dev = runtime::device(ordinal)?;
    let size = dtype.size();
    let entry = format!("ef_index_copy_{size}");
    let key = KernelKey::new(Family::IndexCopy, [size as u8]);
    let func = dev.kernels().kernel(dev, key, &entry, || SOURCE.to_string())?;
    let n = block.elements();
    let params = CopyParams {
        n: n as i64,
        block: std::array::from_fn(|k| block[k] as i64),
        src: side_params(src),
        dst: side_params(dst),
    };
    let mut args = KernelArgs::with_capacity(3);
    args.u64(src_mem.ptr()).u64(dst_mem.ptr()).value(params);
    let grid = grid_stride_blocks(n, BLOCK, dev.sm_count(), BLOCKS_PER_SM);
    // SAFETY: the three arguments match the kernel's signature (two device pointers and the
    // `Params` struct, whose layout `CopyParams` reproduces field for field); every address
    // the kernel forms lies in `src_mem`, `dst_mem` or an index array (the bounds were checked
    // by `BackendKind::index_copy`, and index values are folded into their dimension), all of
    // which live until the launch is queued, after which the stream orders their reuse.
    unsafe { func.launch(dev, (grid, 1, 1), (BLOCK, 1, 1), 0, &mut args) }
}

impl crate::backend::index_copy::IndexCopy for super::Cuda {
    fn copy_checked(
        &self,
        dtype: DType,
        block: Dim4,
        src_buf: &Buffer,
        src: &Side,
        dst_buf: &mut Buffer,
        dst: &Side,
    ) -> Result<(), Error> {
        match (src_buf, dst_buf) {
            (Buffer::Cuda(s), Buffer::Cuda(d)) => {
                index_copy(self.ordinal, dtype, block, s, src, d, dst)
            }
            _ => panic!("internal error: index_copy between buffers of different backends"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The struct passed by value must have the C layout: 64-bit fields, no padding.
    #[test]
    fn parameter_layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<SideParams>(), 8 * (1 + 4 * 5));
        assert_eq!(
            std::mem::size_of::<CopyParams>(),
            8 * 5 + 2 * std::mem::size_of::<SideParams>()
        );
        let dump = std::env::var("EMBERFIRE_DUMP_KERNELS").ok();
        if let Some(dir) = dump {
            std::fs::write(format!("{dir}/index_copy.cu"), SOURCE).unwrap();
        }
    }
}
