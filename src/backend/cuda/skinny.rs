//! Matrix products with two small sizes, on CUDA, by generated kernels instead of cuBLAS.
//!
//! Two shapes are common in whole programs and are bound by memory, not arithmetic:
//!
//! - **tall**: `C (m x n) = A (m x k) op(B) (k x n)` with `m` large and `k, n <= 32` (k-means'
//!   distances of a million points to 32 centroids in 16 dimensions). Each thread computes a
//!   row of `C` from a row of `A`, with `op(B)` in shared memory: `A` and `C` are read and
//!   written once, coalesced.
//! - **long**: `C (m x n) = A^T B` with `A` stored `k x m`, `B` stored `k x n`, `k` large and
//!   `m, n <= 32` (k-means' sums of the points of each cluster, a one-hot matrix transposed
//!   times the points). Blocks take chunks of rows, stage tiles of `A` and `B` in shared
//!   memory, keep register blocks of the small result, and write partial products; the last
//!   block to finish adds the partials in block order, so the result is the same on every
//!   run.
//!
//! Why not cuBLAS for these: it computes them no faster (they read what they must, once), and
//! loading it costs a process about 200 ms the first time (NVIDIA H100, CUDA 13: 75 ms to
//! open cublasLt, 130 ms to create a handle even with lazy module loading), which was most
//! of a k-means program's first run from a warm kernel cache. These kernels compile once per
//! element type and pair of small sizes (the sizes are compile-time constants, so the small
//! loops unroll into registers) and are then read from the kernel cache on disk.
//!
//! Taken for f32 and f64 without conjugation or batches, when the large operand's rows are
//! contiguous (`A` not transposed for tall; `A` transposed and `B` not for long, both
//! contiguous along the long dimension); everything else goes to cuBLAS.

use super::dense::input_ptr;
use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelKey};
use super::runtime::{self, Device};
use crate::backend::blas::{GemmParams, MatArg};
use crate::backend::Buffer;
use crate::dtype::DType;
use crate::error::Error;

const SOURCE: &str = include_str!("kernels/skinny_gemm.cu");

/// The largest small size.
const SMALL: usize = 32;
/// The least large size for which these kernels are taken: below it a product is too small
/// for the launch to matter either way, and cuBLAS is as good.
const LARGE: usize = 8192;

/// Which kernel computes a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Tall,
    Long,
}

/// The kernel that computes `op(a) op(b)` under `p`, if one does.
pub(crate) fn shape(a: &MatArg, b: &MatArg, p: &GemmParams) -> Option<Shape> {
    let small = |x: usize| (1..=SMALL).contains(&x);
    let rows_contiguous = |x: &MatArg| x.data.strides[0] == 1;
    if !matches!(p.dtype, DType::F32 | DType::F64)
        || p.batch != [1, 1]
        || a.conj
        || b.conj
        || !(0..2).all(|k| a.data.strides[k] >= 0 && b.data.strides[k] >= 0)
    {
        return None;
    }
    if p.m >= LARGE && small(p.k) && small(p.n) && !a.trans && rows_contiguous(a) {
        return Some(Shape::Tall);
    }
    if p.k >= LARGE
        && small(p.m)
        && small(p.n)
        && a.trans
        && !b.trans
        && rows_contiguous(a)
        && rows_contiguous(b)
    {
        return Some(Shape::Long);
    }
    None
}

/// The kernel of `shape` for element type `t` and the pair of small sizes, compiled on first
/// use.
fn kernel(
    dev: &Device,
    shape: Shape,
    t: DType,
    small: [usize; 2],
) -> Result<std::sync::Arc<super::kernel::KernelFn>, Error> {
    let key = KernelKey::new(Family::Gemm, [shape as u8, t as u8, small[0] as u8, small[1] as u8]);
    let (entry, head) = match shape {
        Shape::Tall => {
            ("ef_gemm_tall", format!("#define K_ {}\n#define N_ {}\n", small[0], small[1]))
        }
        // f64 tiles of half the rows keep both tiles under 48 KiB of shared memory
        Shape::Long => (
            "ef_gemm_long",
            format!(
                "#define M_ {}\n#define N_ {}\n#define TI_ 4\n#define TJ_ 2\n#define ROWS_ {}\n",
                small[0],
                small[1],
                long_rows(t)
            ),
        ),
    };
    let ty = if t == DType::F32 { "float" } else { "double" };
    dev.kernels().kernel(dev, key, entry, || format!("#define T {ty}\n{head}{SOURCE}"))
}

/// Rows of a long product's tile.
fn long_rows(t: DType) -> usize {
    if t == DType::F32 {
        128
    } else {
        64
    }
}

/// Computes `C = alpha * op(A) op(B) + beta * C` into `c` (dense, owned) or a new buffer, for
/// a product [`shape`] took.
pub(crate) fn gemm(
    ordinal: usize,
    shape: Shape,
    a: &MatArg,
    b: &MatArg,
    c: Option<Buffer>,
    p: &GemmParams,
) -> Result<Buffer, Error> {
    let dev = runtime::device(ordinal)?;
    dev.bind()?;
    let size = p.dtype.size();
    let read_c = c.is_some() && !p.beta_is_zero();
    let out = match c {
        Some(buf) => buf,
        None => Buffer::Cuda(dev.memory().alloc(p.out_len().saturating_mul(size).max(1))?),
    };
    let Buffer::Cuda(out_mem) = &out else { unreachable!("internal error: host output") };
    let (alpha, beta) = (p.alpha.as_bytes().to_vec(), p.beta.as_bytes().to_vec());
    match shape {
        Shape::Tall => {
            let k = kernel(dev, Shape::Tall, p.dtype, [p.k, p.n])?;
            // op(B)'s element (l, j): B stored k x n, or n x k when transposed
            let [s0, s1] = [b.data.strides[0], b.data.strides[1]];
            let (bs0, bs1) = if b.trans { (s1, s0) } else { (s0, s1) };
            let mut args = KernelArgs::new();
            args.u64(input_ptr(&a.data, size))
                .i64(a.data.strides[1])
                .u64(input_ptr(&b.data, size))
                .i64(bs0)
                .i64(bs1)
                .u64(out_mem.ptr())
                .i64(p.m as i64)
                .bytes(&alpha)
                .bytes(&beta)
                .i32(read_c as i32);
            let grid = grid(dev, p.m);
            // SAFETY: the parameters match `ef_gemm_tall`'s signature in order and size; `a`
            // holds the m x k elements its strides reach (rows contiguous), `b` the k x n of
            // op(B), the output m x n, all live device memory of this device held until the
            // launch is queued on emberfire's stream.
            unsafe { k.launch(dev, (grid, 1, 1), (256, 1, 1), 0, &mut args) }?;
        }
        Shape::Long => {
            let long = kernel(dev, Shape::Long, p.dtype, [p.m, p.n])?;
            let rows = long_rows(p.dtype);
            // about four blocks a multiprocessor, each a whole number of tiles
            let blocks = (dev.sm_count() as usize * 4).clamp(1, p.k.div_ceil(rows));
            let chunk = p.k.div_ceil(blocks).div_ceil(rows) * rows;
            let blocks = p.k.div_ceil(chunk);
            let parts = dev.memory().alloc(blocks * p.m * p.n * size)?;
            let ticket = super::reduce::tickets(dev, 1)?;
            let mut args = KernelArgs::new();
            args.u64(input_ptr(&a.data, size))
                .i64(a.data.strides[1])
                .u64(input_ptr(&b.data, size))
                .i64(b.data.strides[1])
                .u64(parts.ptr())
                .i64(p.k as i64)
                .i64(chunk as i64)
                .u64(ticket)
                .u64(out_mem.ptr())
                .bytes(&alpha)
                .bytes(&beta)
                .i32(read_c as i32);
            // SAFETY: the parameters match `ef_gemm_long`'s signature; `a` holds the k x m
            // and `b` the k x n elements their strides reach (rows contiguous); `parts` holds
            // `blocks` partial products of m x n, the output m x n, and the ticket is this
            // stream's zeroed counter, which the kernel leaves at zero; all live device
            // memory of this device, and the pool orders the partials' next use after the
            // launch.
            unsafe { long.launch(dev, (blocks as u32, 1, 1), (256, 1, 1), 0, &mut args) }?;
            drop(parts);
        }
    }
    Ok(out)
}

/// Blocks of 256 threads for `rows` rows: one row a thread, at most 16 blocks a
/// multiprocessor (the kernel strides over the rest).
fn grid(dev: &Device, rows: usize) -> u32 {
    grid_stride_blocks(rows as u64, 256, dev.sm_count(), 16)
}
