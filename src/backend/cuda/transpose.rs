//! The CUDA transpose: `kernels/transpose.cu`, one variant per element size (and per complex
//! type for the conjugate transpose).
//!
//! Tile shapes were measured on an H100 (8192 x 8192 f32, 2 x 256 MiB moved; the device copy
//! ran at 2850 GB/s in the same run): 64 x 64 tiles with 32 x 8 threads (16 elements per
//! thread) ran in 0.198 ms, 95% of the copy; 32 x 32 tiles in 0.203 to 0.210 ms; CuPy's and
//! PyTorch's transposes in 0.59 ms. Elements of 16 bytes use 32 x 32 tiles, which keeps the
//! tile within the 48 KiB of static shared memory.

use super::dense::input_ptr;
use super::kernel::{Family, KernelArgs, KernelKey};
use super::memory::DeviceMem;
use super::runtime;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

const SOURCE: &str = include_str!("kernels/transpose.cu");
/// Thread rows per block (blocks are 32 x ROWS threads).
const ROWS: u32 = 8;

/// The transpose of `d` (shape `dims`, stride 1 along dimension 0) in new device memory of
/// shape `[dims[1], dims[0], dims[2], dims[3]]`; conjugated if `conj` (complex types only).
pub(crate) fn transpose(
    ordinal: usize,
    d: &Data,
    dims: Dim4,
    dtype: DType,
    conj: bool,
) -> Result<DeviceMem, Error> {
    let dev = runtime::device(ordinal)?;
    let size = dtype.size();
    // The kernel knows elements only by size: an 8-byte f64 must not take the c32 path,
    // which would negate its upper half (the sign of the double).
    let conj = conj && dtype.is_complex();
    let n = dims.elements();
    let out = dev.memory().alloc((n as usize * size).max(1))?;
    if n == 0 {
        return Ok(out);
    }
    let (_, w) = element_type(size, conj);
    let key = KernelKey::new(Family::Transpose, [size as u8, conj as u8]);
    let k = dev.kernels().kernel(dev, key, "ef_transpose", || variant_source(size, conj))?;
    let tile = 32 * w;
    let (t0, t1) = (dims[0].div_ceil(tile), dims[1].div_ceil(tile));
    let tiles = t0 * t1 * dims[2] * dims[3];
    let grid = tiles.min(i32::MAX as u64) as u32;
    let mut args = KernelArgs::with_capacity(11);
    for v in [
        input_ptr(d, size),
        out.ptr(),
        dims[0],
        dims[1],
        dims[2],
        d.strides[1] as u64,
        d.strides[2] as u64,
        d.strides[3] as u64,
        t0,
        t1,
        tiles,
    ] {
        args.u64(v);
    }
    // SAFETY: the arguments follow `ef_transpose`'s parameters (two pointers, nine 64-bit
    // integers); the kernel reads the elements of `d`, which the caller keeps alive and which
    // lie in its buffer, and writes `n` elements of `out`; both live on `dev`.
    unsafe { k.launch(dev, (grid, 1, 1), (32, ROWS, 1), 0, &mut args)? };
    Ok(out)
}

/// The kernel's element type for elements of `size` bytes, and its tile width (in units of
/// 32 elements).
fn element_type(size: usize, conj: bool) -> (&'static str, u64) {
    match (size, conj) {
        (8, true) => ("ef_c32", 2),
        (16, true) => ("ef_c64", 1),
        (1, _) => ("unsigned char", 2),
        (2, _) => ("unsigned short", 2),
        (4, _) => ("unsigned int", 2),
        (8, _) => ("unsigned long long", 2),
        _ => ("ef_b16", 1),
    }
}

/// The source of the variant for elements of `size` bytes.
fn variant_source(size: usize, conj: bool) -> String {
    let (ty, w) = element_type(size, conj);
    format!(
        "#define EF_T {ty}\n#define EF_CONJ {}\n#define EF_W {w}\n#define EF_ROWS {ROWS}\n{SOURCE}",
        conj as u8
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const VARIANTS: [(usize, bool); 7] =
        [(1, false), (2, false), (4, false), (8, false), (16, false), (8, true), (16, true)];

    /// Every variant's tile fits in static shared memory; with `EMBERFIRE_DUMP_KERNELS=dir`,
    /// each variant's source is written there for the offline compile check.
    #[test]
    fn every_variant_fits_and_can_be_dumped() {
        for (size, conj) in VARIANTS {
            let (_, w) = element_type(size, conj);
            let tile = 32 * w as usize;
            assert!(tile * (tile + 1) * size <= 48 * 1024, "{size}-byte tile too large");
            if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
                let path = format!("{dir}/transpose_{size}_{}.cu", conj as u8);
                std::fs::write(path, variant_source(size, conj)).unwrap();
            }
        }
    }
}
