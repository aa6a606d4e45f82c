//! Copies of whole arrays into place in new device memory (`join`): one device-to-device
//! memcpy per input when both the input and its place are contiguous, otherwise one launch
//! of `kernels/copy.cu` per input. Each element is read once and written once.

use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelKey};
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

const SOURCE: &str = include_str!("kernels/copy.cu");
/// Threads per block.
const BLOCK: u32 = 256;
/// Columns shorter than this are copied by the flat kernel.
const LONG_COLUMN: u64 = 128;

/// `parts` (data and shape) one after another along dimension `dim`, in new device memory of
/// shape `out`.
pub(crate) fn concatenate(
    ordinal: usize,
    parts: &[(Data, Dim4)],
    dim: usize,
    out: Dim4,
    dtype: DType,
) -> Result<DeviceMem, Error> {
    let dev = runtime::device(ordinal)?;
    let size = dtype.size();
    let mem = dev.memory().alloc((out.elements() as usize * size).max(1))?;
    let os = out.strides();
    // The place of a part is contiguous when no dimension after `dim` is longer than 1.
    let place_contiguous = (dim + 1..4).all(|k| out[k] == 1);
    let mut at = 0u64;
    for (data, dims) in parts {
        let start = at * os[dim];
        at += dims[dim];
        let n = dims.elements();
        if n == 0 {
            continue;
        }
        let Buffer::Cuda(src) = data.buffer() else {
            unreachable!("internal error: host buffer in a CUDA join")
        };
        if place_contiguous && data.is_contiguous(*dims) {
            let bytes = n as usize * size;
            dev.copy(src, data.offset * size, &mem, start as usize * size, bytes)?;
            continue;
        }
        copy_block(dev, data, *dims, size, mem.ptr() + start * size as u64, [os[1], os[2], os[3]])?;
    }
    Ok(mem)
}

/// Queues the copy of `data` (shape `dims`, elements of `size` bytes) to `dst`, where element
/// (i, j, k, l) goes to `dst[i + j*t[0] + k*t[1] + l*t[2]]`.
fn copy_block(
    dev: &Device,
    data: &Data,
    dims: Dim4,
    size: usize,
    dst: u64,
    t: [u64; 3],
) -> Result<(), Error> {
    let ty = match size {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        _ => "ef_b16",
    };
    let long = dims[0] >= LONG_COLUMN;
    let entry = if long { "ef_copy_columns" } else { "ef_copy_elements" };
    let key = KernelKey::new(Family::Copy, [size as u8, long as u8]);
    let k = dev.kernels().kernel(dev, key, entry, || format!("#define EF_T {ty}\n{SOURCE}"))?;
    let src = super::dense::input_ptr(data, size);
    let s = data.strides.map(|x| x as u64);
    let columns = dims[1] * dims[2] * dims[3];
    let (grid, count) = if long {
        let x = dims[0].div_ceil(BLOCK as u64).min(1 << 16) as u32;
        ((x, columns.min(65_535) as u32, 1), columns)
    } else {
        let n = dims.elements();
        ((grid_stride_blocks(n, BLOCK, dev.sm_count(), 16), 1, 1), n)
    };
    let mut args = KernelArgs::with_capacity(13);
    for v in [src, dst, dims[0], dims[1], dims[2], count, s[0], s[1], s[2], s[3], t[0], t[1], t[2]]
    {
        args.u64(v);
    }
    // SAFETY: the arguments follow the kernels' parameters (two pointers, eleven 64-bit
    // integers); the kernel reads the elements of `data`, kept alive by the caller, and
    // writes the part's place inside the destination allocation, both on `dev`.
    unsafe { k.launch(dev, grid, (BLOCK, 1, 1), 0, &mut args) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With `EMBERFIRE_DUMP_KERNELS=dir`, writes the source of every element size for the
    /// offline compile check; without it, checks that each has both entry points.
    #[test]
    fn every_variant_has_both_entries() {
        for ty in
            ["unsigned char", "unsigned short", "unsigned int", "unsigned long long", "ef_b16"]
        {
            let src = format!("#define EF_T {ty}\n{SOURCE}");
            assert!(src.contains("ef_copy_columns") && src.contains("ef_copy_elements"));
            if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
                std::fs::write(format!("{dir}/copy_{}.cu", ty.replace(' ', "_")), src).unwrap();
            }
        }
    }
}
