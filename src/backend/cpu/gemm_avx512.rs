//! f32 matrix products with the AVX-512 kernels of the `emberfire-sgemm-avx512` crate (in this
//! workspace), spread over the threads here.
//!
//! Why our own kernels: faer's and the `gemm` crate's AVX-512 kernels come with the `gemm`
//! crate's `x86-v4` feature, which made rustc 1.95 crash building this crate in release, so
//! faer runs its AVX2 kernels here, half the vector width: 2048^2 f32 took 0.78 to 0.91 of
//! OpenBLAS's time on the 2-core AVX-512 build machine. The kernels are a crate of their own
//! because compiled inside this one they crashed rustc the same way (the crate's doc says
//! more).
//!
//! Threads: the longer side of `C`, in whole tiles, is split into one range per task, and each
//! task packs what its range needs and writes only its own part of `C`. Every element is
//! summed in the same order whatever the split, so results do not depend on the number of
//! threads.

use emberfire_sgemm_avx512::{gemm, MR, NR};

use super::fork::for_each_task;
use super::shared_ptr::SharedPtr;

pub(crate) use emberfire_sgemm_avx512::{available, Operand};

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
pub(crate) unsafe fn sgemm(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: Operand,
    b: Operand,
    beta: f32,
    read_c: bool,
    c: *mut f32,
    ldc: usize,
    tasks: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    // split the longer side into one range a task, in whole micro-tiles
    let split_n = n.div_ceil(NR) >= m.div_ceil(MR);
    let (tiles, tile) = if split_n { (n.div_ceil(NR), NR) } else { (m.div_ceil(MR), MR) };
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
                gemm(m, hi - lo, k, alpha, a, b.at(0, lo), beta, read_c, c.add(lo * ldc), ldc)
            } else {
                let hi = hi.min(m);
                gemm(hi - lo, n, k, alpha, a.at(lo, 0), b, beta, read_c, c.add(lo), ldc)
            }
        }
    });
}
