//! Sparse matrix kernels on a CUDA device: the handwritten kernels of `kernels/sparse.cu`,
//! compiled through the device's kernel cache once per value type, and launched on the
//! emberfire stream without waiting.

use std::sync::Arc;

use super::codegen::c_type;
use super::dense::{alloc_dense as alloc, device_ptr as ptr};
use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey};
use super::runtime::{self, Device};
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::sparse::ProductMemo;

const SOURCE: &str = include_str!("kernels/sparse.cu");
const BLOCK: u32 = 256;
/// Rows per block of `ef_csr_mm` (its `ROWS`).
const ROWS_PER_BLOCK: u64 = 256;

/// The entry points of `sparse.cu`, in the order their index is part of the key.
const ENTRIES: [&str; 5] = ["ef_compress", "ef_expand", "ef_zero", "ef_scatter", "ef_csr_mm"];

/// The kernel `entry` for values of type `t` (any floating type for the index-only kernels).
fn kernel(dev: &Device, entry: &'static str, t: DType) -> Result<Arc<KernelFn>, Error> {
    let which = ENTRIES.iter().position(|&e| e == entry).expect("an entry of sparse.cu");
    let key = KernelKey::new(Family::Sparse, [which as u8, t as u8]);
    dev.kernels().kernel(dev, key, entry, || {
        format!("struct cf_; struct cd_;\ntypedef {} val_t;\n{SOURCE}", c_type(t))
    })
}

fn vector(n: u64) -> Dim4 {
    Dim4::new(&[n, 1, 1, 1])
}

/// Launches `k` on `grid` blocks of `block` threads.
fn launch(
    dev: &Device,
    k: &KernelFn,
    grid: (u32, u32, u32),
    block: u32,
    args: &mut KernelArgs,
) -> Result<(), Error> {
    // SAFETY: the parameters match the entry point's signature in `sparse.cu` in order and size
    // (pointers and 64-bit values); every pointer is live device memory of this device, held
    // by the caller's `Dense`s until after the launch (reuse is ordered on the same stream),
    // sized for the lengths passed, and every index the kernels follow was checked against
    // those lengths when the sparse array was made; the kernel runs on emberfire's stream.
    unsafe { k.launch(dev, grid, (block, 1, 1), 0, args) }
}

/// A grid-stride launch over `n` threads' worth of work.
fn launch_over(dev: &Device, k: &KernelFn, n: u64, args: &mut KernelArgs) -> Result<(), Error> {
    if n == 0 {
        return Ok(());
    }
    let grid = grid_stride_blocks(n, BLOCK, dev.sm_count(), 16);
    launch(dev, k, (grid, 1, 1), BLOCK, args)
}

/// See `Sparse::compress`.
pub(crate) fn compress(ordinal: usize, sorted: &Dense, n: u64) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, vector(n + 1), DType::S32)?;
    let nnz = sorted.dims.elements();
    let k = kernel(dev, "ef_compress", DType::F32)?;
    let mut p = KernelArgs::new();
    p.u64(ptr(sorted)).i64(nnz as i64).i64(n as i64).u64(ptr(&out));
    launch_over(dev, &k, nnz + 1, &mut p)?;
    Ok(out)
}

/// See `Sparse::expand`.
pub(crate) fn expand(ordinal: usize, offsets: &Dense, nnz: u64) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, vector(nnz), DType::S32)?;
    let n = offsets.dims.elements() - 1;
    if nnz > 0 {
        let k = kernel(dev, "ef_expand", DType::F32)?;
        let mut p = KernelArgs::new();
        p.u64(ptr(offsets)).i64(n as i64).u64(ptr(&out));
        launch_over(dev, &k, n, &mut p)?;
    }
    Ok(out)
}

/// See `Sparse::scatter`.
pub(crate) fn scatter(
    ordinal: usize,
    values: &Dense,
    rows: &Dense,
    cols: &Dense,
    (m, n): (u64, u64),
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let t = values.dtype;
    let out = alloc(dev, Dim4::new(&[m, n, 1, 1]), t)?;
    let zero = kernel(dev, "ef_zero", t)?;
    let mut p = KernelArgs::new();
    p.u64(ptr(&out)).i64((m * n) as i64);
    launch_over(dev, &zero, m * n, &mut p)?;
    let nnz = values.dims.elements();
    let k = kernel(dev, "ef_scatter", t)?;
    let mut p = KernelArgs::new();
    p.u64(ptr(values)).u64(ptr(rows)).u64(ptr(cols)).i64(nnz as i64).i64(m as i64);
    p.u64(ptr(&out));
    launch_over(dev, &k, nnz, &mut p)?;
    Ok(out)
}

/// See `Sparse::csr_matmul`.
pub(crate) fn csr_matmul(
    ordinal: usize,
    values: &Dense,
    offsets: &Dense,
    indices: &Dense,
    m: u64,
    rhs: &Dense,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let t = values.dtype;
    let (k, n) = (rhs.dims[0], rhs.dims[1]);
    let out = alloc(dev, Dim4::new(&[m, n, 1, 1]), t)?;
    if m == 0 || n == 0 {
        return Ok(out);
    }
    let f = kernel(dev, "ef_csr_mm", t)?;
    let mut p = KernelArgs::new();
    p.u64(ptr(values)).u64(ptr(offsets)).u64(ptr(indices)).i64(m as i64).i64(n as i64);
    p.u64(ptr(rhs)).i64(k as i64).u64(ptr(&out));
    let grid = (m.div_ceil(ROWS_PER_BLOCK) as u32, n.min(65_535) as u32, 1);
    launch(dev, &f, grid, ROWS_PER_BLOCK as u32, &mut p)?;
    Ok(out)
}

/// The sparse family on a CUDA device: the kernels above (a product keeps nothing in the
/// matrix's memo here).
impl crate::backend::sparse::Sparse for super::Cuda {
    fn compress(&self, sorted: &Dense, n: u64) -> Result<Dense, Error> {
        compress(self.ordinal, sorted, n)
    }

    fn expand(&self, offsets: &Dense, nnz: u64) -> Result<Dense, Error> {
        expand(self.ordinal, offsets, nnz)
    }

    fn scatter(
        &self,
        values: &Dense,
        rows: &Dense,
        cols: &Dense,
        shape: (u64, u64),
    ) -> Result<Dense, Error> {
        scatter(self.ordinal, values, rows, cols, shape)
    }

    fn csr_matmul(
        &self,
        values: &Dense,
        offsets: &Dense,
        indices: &Dense,
        m: u64,
        rhs: &Dense,
        _memo: Option<&ProductMemo>,
    ) -> Result<Dense, Error> {
        csr_matmul(self.ordinal, values, offsets, indices, m, rhs)
    }
}
