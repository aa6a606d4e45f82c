//! f32 and f64 matrix products with the AVX-512 kernels of the `emberfire-gemm-avx512` crate
//! (in this workspace), spread over the threads here.
//!
//! Why our own kernels: faer's and the `gemm` crate's AVX-512 kernels come with the `gemm`
//! crate's `x86-v4` feature, which made rustc 1.95 crash building this crate in release, so
//! faer runs its AVX2 kernels here, half the vector width: 2048^2 f32 ran at 0.78 to 0.91 of
//! OpenBLAS's speed on the 2-core AVX-512 build machine. The kernels are a crate of their own
//! because compiled inside this one they crashed rustc the same way (the crate's doc says
//! more).
//!
//! Threads: the longer side of `C`, in whole tiles, is split into one range per task, and each
//! task packs what its range needs and writes only its own part of `C`. Every element is
//! summed in the same order whatever the split, so results do not depend on the number of
//! threads.

use emberfire_gemm_avx512::NR;

use super::fork::for_each_task;
use super::shared_ptr::SharedPtr;

pub(crate) use emberfire_gemm_avx512::{available, Operand};

/// One type's single-threaded product: `m, n, k, alpha, A, B, beta, read_c, C, ldc`, as
/// [`gemm`] takes them.
type Serial<T> = unsafe fn(usize, usize, usize, T, Operand<T>, Operand<T>, T, bool, *mut T, usize);

/// A type with kernels: its micro-tile's rows and its single-threaded product.
pub(crate) trait Avx512Gemm: Copy + Send + Sync + 'static {
    const MR: usize;
    const SERIAL: Serial<Self>;
}

impl Avx512Gemm for f32 {
    const MR: usize = emberfire_gemm_avx512::f32::MR;
    const SERIAL: Serial<f32> = emberfire_gemm_avx512::f32::gemm;
}

impl Avx512Gemm for f64 {
    const MR: usize = emberfire_gemm_avx512::f64::MR;
    const SERIAL: Serial<f64> = emberfire_gemm_avx512::f64::gemm;
}

/// The fewest multiply-adds worth a task of their own (a few hundred microseconds).
const TASK_WORK: usize = 1 << 20;

/// `C = alpha A B + beta C` for `A` (`m x k`), `B` (`k x n`) and the column-major `C`
/// (`m x n`, `ldc` apart); `C` is read only when `read_c` is set. Runs as up to `tasks`
/// parallel tasks, fewer where a task would have less than `TASK_WORK` multiply-adds.
///
/// # Safety
/// The operands address `m x k` and `k x n` readable elements, `C` `m x n` writable ones that
/// overlap neither; the CPU has AVX-512 ([`available`]).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm<T: Avx512Gemm>(
    m: usize,
    n: usize,
    k: usize,
    alpha: T,
    a: Operand<T>,
    b: Operand<T>,
    beta: T,
    read_c: bool,
    c: *mut T,
    ldc: usize,
    tasks: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    // split the longer side into one range a task, in whole micro-tiles
    let mr = T::MR;
    let split_n = n.div_ceil(NR) >= m.div_ceil(mr);
    let (tiles, tile) = if split_n { (n.div_ceil(NR), NR) } else { (m.div_ceil(mr), mr) };
    let tasks = tasks.min(tiles).min(m * n * k / TASK_WORK).max(1);
    let out = SharedPtr(c);
    for_each_task(tasks, |t| {
        let (lo, hi) = (tiles * t / tasks * tile, tiles * (t + 1) / tasks * tile);
        let c = out.get();
        // SAFETY: the caller's promises; `lo` is a row (column) inside `A` and `C` (`B` and
        // `C`), and rows (columns) `lo..hi` of `C` belong to this task alone.
        unsafe {
            if split_n {
                let hi = hi.min(n);
                (T::SERIAL)(
                    m,
                    hi - lo,
                    k,
                    alpha,
                    a,
                    b.at(0, lo),
                    beta,
                    read_c,
                    c.add(lo * ldc),
                    ldc,
                )
            } else {
                let hi = hi.min(m);
                (T::SERIAL)(hi - lo, n, k, alpha, a.at(lo, 0), b, beta, read_c, c.add(lo), ldc)
            }
        }
    });
}
