//! Sparse matrix kernels on the CPU: compressing and expanding offsets, scattering into a
//! dense matrix (sequential: one pass over memory), and the CSR product, split between threads
//! by blocks of rows; and the sparse family (`backend::sparse::Sparse`) of the CPU backend,
//! which runs them on dense host data.

use std::mem::MaybeUninit;

use super::shared_ptr::SharedPtr;
use super::signal::Sample;
use super::sparse_diagonals::Diagonals;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::sparse::ProductMemo;
use crate::storage::{alloc_uninit, try_filled, with_float};

/// Rows per parallel task of the products: enough work per task to amortise the scheduling,
/// and enough tasks to balance rows of uneven length; a multiple of 64, so that a task's first
/// row starts a byte and a 16-bit word of the diagonal layout's stored bits.
const ROWS_PER_TASK: usize = 4096;

/// See `Sparse::compress`.
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

/// See `Sparse::expand`.
pub(crate) fn expand(offsets: &[i32], nnz: usize) -> Vec<i32> {
    let mut out = vec![0i32; nnz];
    for (k, w) in offsets.windows(2).enumerate() {
        out[w[0] as usize..w[1] as usize].fill(k as i32);
    }
    out
}

/// See `Sparse::scatter`.
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

/// See `Sparse::csr_matmul`; `rhs` is `[k, n]`, column-major. Every offset and
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
    let lanes = super::sparse_avx512::available();
    by_row_tasks(rhs, [k, n], m, |x, first, ys| {
        let fast = if lanes {
            // SAFETY: `lanes` says the CPU has AVX-512; the offsets and columns were checked
            // when the matrix was made (see above).
            unsafe { rows_in_lanes(values, offsets, indices, x, first, ys) }
        } else {
            0
        };
        for (i, yi) in ys.iter_mut().enumerate().skip(fast) {
            let (s, e) = (offsets[first + i] as usize, offsets[first + i + 1] as usize);
            let mut acc = T::zero();
            for (&v, &c) in values[s..e].iter().zip(&indices[s..e]) {
                // SAFETY: `c` is a column index of the matrix, checked to lie in `0..k` when
                // the matrix was made, and `x` is a column of `k` elements.
                acc += v * unsafe { *x.get_unchecked(c as usize) };
            }
            yi.write(acc);
        }
    })
}

/// The product of an `m`-row matrix with `rhs` (`[k, n]`, column-major), `m x n`: for each
/// column `x` of `rhs`, `rows(x, first, ys)` writes every row of `ys`, rows `first..` of the
/// product's column, in tasks of [`ROWS_PER_TASK`] rows (a multiple of 64) on rayon's pool.
pub(crate) fn by_row_tasks<T: Sample>(
    rhs: &[T],
    [k, n]: [usize; 2],
    m: usize,
    rows: impl Fn(&[T], usize, &mut [MaybeUninit<T>]) + Sync,
) -> Result<Vec<T>, Error> {
    let mut out: Vec<T> = alloc_uninit(m * n)?;
    let spare = &mut out.spare_capacity_mut()[..m * n];
    for (x, y) in rhs.chunks_exact(k).zip(spare.chunks_exact_mut(m)) {
        let ys = SharedPtr(y.as_mut_ptr());
        super::fork::for_each_task(m.div_ceil(ROWS_PER_TASK), |b| {
            let first = b * ROWS_PER_TASK;
            // SAFETY: each task writes its own rows `first..` of the column `y` (of `m` rows).
            let ys = unsafe {
                std::slice::from_raw_parts_mut(ys.get().add(first), ROWS_PER_TASK.min(m - first))
            };
            rows(x, first, ys)
        });
    }
    // SAFETY: `rows` wrote every row of every task, so all `m` rows of each of the `n`
    // columns are set.
    unsafe { out.set_len(m * n) };
    Ok(out)
}

/// The leading rows of `ys` (rows `first..` of the product with `x`) that the AVX-512 kernels
/// compute, f32 and f64 only; returns how many. The rest are left to the scalar loop, which
/// gives the same bits.
///
/// # Safety
/// The CPU has AVX-512F, and the matrix and `x` are as `csr_matmul` requires.
#[cfg(target_arch = "x86_64")]
unsafe fn rows_in_lanes<T: Sample>(
    values: &[T],
    offsets: &[i32],
    indices: &[i32],
    x: &[T],
    first: usize,
    ys: &mut [MaybeUninit<T>],
) -> usize {
    use super::sparse_avx512::{rows_f32, rows_f64};
    use std::any::TypeId;
    // SAFETY: `T` is the type named in each branch, so the slices are reinterpreted as
    // themselves; the kernels' requirements are this function's.
    unsafe {
        if TypeId::of::<T>() == TypeId::of::<f32>() {
            let cast = |v: &[T]| std::slice::from_raw_parts(v.as_ptr() as *const f32, v.len());
            let ys =
                std::slice::from_raw_parts_mut(ys.as_mut_ptr() as *mut MaybeUninit<f32>, ys.len());
            rows_f32(cast(values), offsets, indices, cast(x), first, ys)
        } else if TypeId::of::<T>() == TypeId::of::<f64>() {
            let cast = |v: &[T]| std::slice::from_raw_parts(v.as_ptr() as *const f64, v.len());
            let ys =
                std::slice::from_raw_parts_mut(ys.as_mut_ptr() as *mut MaybeUninit<f64>, ys.len());
            rows_f64(cast(values), offsets, indices, cast(x), first, ys)
        } else {
            0
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn rows_in_lanes<T: Sample>(
    _: &[T],
    _: &[i32],
    _: &[i32],
    _: &[T],
    _: usize,
    _: &mut [MaybeUninit<T>],
) -> usize {
    0
}

/// Panics for a type no sparse kernel exists for (the public functions convert those).
fn not_float(t: DType) -> ! {
    unreachable!("internal error: sparse kernel for {}", t.name())
}

fn vector(n: u64) -> Dim4 {
    Dim4::new(&[n, 1, 1, 1])
}

/// The sparse family on host data: the functions above, and for a product whose matrix keeps
/// a memo, the laid-out form of `sparse_diagonals.rs` where it pays.
impl crate::backend::sparse::Sparse for super::Cpu {
    fn compress(&self, sorted: &Dense, n: u64) -> Result<Dense, Error> {
        Ok(Dense::from_host(compress(sorted.host::<i32>(), n as usize), vector(n + 1)))
    }

    fn expand(&self, offsets: &Dense, nnz: u64) -> Result<Dense, Error> {
        Ok(Dense::from_host(expand(offsets.host::<i32>(), nnz as usize), vector(nnz)))
    }

    fn scatter(
        &self,
        values: &Dense,
        rows: &Dense,
        cols: &Dense,
        (m, n): (u64, u64),
    ) -> Result<Dense, Error> {
        let (r, c) = (rows.host::<i32>(), cols.host::<i32>());
        Ok(with_float!(values.dtype, S => Dense::from_host(
            scatter::<S>(values.host(), r, c, m as usize, n as usize),
            Dim4::new(&[m, n, 1, 1]),
        ), other => not_float(other)))
    }

    fn csr_matmul(
        &self,
        values: &Dense,
        offsets: &Dense,
        indices: &Dense,
        m: u64,
        rhs: &Dense,
        memo: Option<&ProductMemo>,
    ) -> Result<Dense, Error> {
        Ok(with_float!(values.dtype, S => {
            let (k, n) = (rhs.dims[0] as usize, rhs.dims[1] as usize);
            let (v, o, c) = (values.host::<S>(), offsets.host::<i32>(), indices.host::<i32>());
            let laid = memo.and_then(|memo| {
                memo.kept(|| Diagonals::of_csr(v, o, c, (m as usize, k)))
            });
            let out = match laid {
                Some(d) => d.product::<S>(rhs.host(), n)?,
                None => csr_matmul::<S>(v, o, c, m as usize, rhs.host(), [k, n])?,
            };
            Dense::from_host(out, Dim4::new(&[m, rhs.dims[1], 1, 1]))
        }, other => not_float(other)))
    }
}
