//! Sparse matrix kernels on the CPU: compressing and expanding offsets, scattering into a
//! dense matrix (sequential: one pass over memory), and the CSR product, split between threads
//! by blocks of rows.

use rayon::prelude::*;

use super::signal::Sample;
use crate::error::Error;
use crate::storage::{alloc_uninit, try_filled};

/// Rows per parallel task of the product: enough work per task to amortise the scheduling,
/// and enough tasks to balance rows of uneven length.
const ROWS_PER_TASK: usize = 4096;

/// See `backend::sparse::compress`.
pub(crate) fn compress(sorted: &[i32], n: usize) -> Vec<i32> {
    let mut out = Vec::with_capacity(n + 1);
    let mut j = 0usize;
    for k in 0..=n {
        while j < sorted.len() && (sorted[j] as usize) < k {
            j += 1;
        }
        out.push(j as i32);
    }
    out
}

/// See `backend::sparse::expand`.
pub(crate) fn expand(offsets: &[i32], nnz: usize) -> Vec<i32> {
    let mut out = vec![0i32; nnz];
    for (k, w) in offsets.windows(2).enumerate() {
        out[w[0] as usize..w[1] as usize].fill(k as i32);
    }
    out
}

/// See `backend::sparse::scatter`.
pub(crate) fn scatter<T: Sample>(
    values: &[T],
    rows: &[i32],
    cols: &[i32],
    m: usize,
    n: usize,
) -> Vec<T> {
    let mut out = vec![T::zero(); m * n];
    for ((&v, &r), &c) in values.iter().zip(rows).zip(cols) {
        out[r as usize + c as usize * m] += v;
    }
    out
}

/// See `backend::sparse::csr_matmul`; `rhs` is `[k, n]`, column-major. Every offset and
/// column index was checked against the matrix's shape when it was made, and `rhs` has the
/// matrix's column count of rows (checked by the caller).
pub(crate) fn csr_matmul<T: Sample>(
    values: &[T],
    offsets: &[i32],
    indices: &[i32],
    m: usize,
    rhs: &[T],
    [k, n]: [usize; 2],
) -> Result<Vec<T>, Error> {
    if m == 0 || n == 0 || k == 0 {
        return try_filled(m * n, T::zero());
    }
    assert!(offsets.len() == m + 1 && rhs.len() == k * n, "internal error: CSR shapes");
    let mut out: Vec<T> = alloc_uninit(m * n)?;
    let spare = &mut out.spare_capacity_mut()[..m * n];
    for (x, y) in rhs.chunks_exact(k).zip(spare.chunks_exact_mut(m)) {
        y.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each(|(b, ys)| {
            let first = b * ROWS_PER_TASK;
            for (i, yi) in ys.iter_mut().enumerate() {
                let (s, e) = (offsets[first + i] as usize, offsets[first + i + 1] as usize);
                let mut acc = T::zero();
                for (&v, &c) in values[s..e].iter().zip(&indices[s..e]) {
                    // SAFETY: `c` is a column index of the matrix, checked to lie in `0..k`
                    // when the matrix was made, and `x` is a column of `k` elements.
                    acc += v * unsafe { *x.get_unchecked(c as usize) };
                }
                yi.write(acc);
            }
        });
    }
    // SAFETY: the loop wrote all `m` rows of each of the `n` columns, the whole `m * n`.
    unsafe { out.set_len(m * n) };
    Ok(out)
}
