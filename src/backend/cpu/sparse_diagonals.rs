//! The CSR product of banded matrices on the CPU, read by diagonals.
//!
//! Matrices from grids (the 5-point Laplacian of the conjugate-gradient benchmark, finite
//! differences, banded systems) store their elements on a few diagonals. The CSR product
//! reads, per stored element, a value, a column index and a gathered element of `x`: eight
//! bytes and a dependent load. Laid out by diagonals (each diagonal's values in row order, and
//! one bit a row saying whether the matrix stores that element), the product reads four bytes
//! a stored f32 element and `x` contiguously, sixteen rows a vector instruction with AVX-512
//! (eight with AVX2, where a processor has no AVX-512), with no column indices and no gathers.
//! On the 5-point Laplacian of a 512 x 512 grid (2-core Xeon, AVX-512) that takes the product
//! from about 0.5 ms to the figures in the book's performance chapter; on an AVX2 processor
//! the AVX2 kernels took the conjugate-gradient benchmark from 133-149 ms to 53-61.
//!
//! The layout is made from the CSR parts at a matrix's second product (a matrix multiplied
//! once, or a transposed product's temporary CSR form, is not worth the pass), and only when
//! it is compact: at most [`MAX_DIAGONALS`] distinct diagonals, holding at most
//! [`MAX_FILL`] times as many slots as the matrix stores. It then costs at most that many
//! times the memory of the values, beside the CSR parts.
//!
//! The product gives the CSR kernels' bits exactly: a row's products are added in the order
//! of its stored elements (the layout is only made when every row's columns ascend, which is
//! the order of the diagonals), each rounded before the addition, starting from zero, and a
//! slot the matrix does not store is skipped (not added as zero times `x`, which would turn an
//! infinite or NaN element of `x` into NaN where the CSR product has none).

use std::mem::MaybeUninit;

use super::signal::Sample;
use super::sparse::by_row_tasks;
use crate::error::Error;
use crate::storage::{try_filled, HostVec};

/// The most distinct diagonals a matrix laid out by diagonals may have: every diagonal is a
/// stream the product reads beside the others.
pub(crate) const MAX_DIAGONALS: usize = 32;

/// The most slots (diagonals times rows) a matrix laid out by diagonals may have, as a
/// multiple of the elements it stores: at twice, the product still reads no more bytes of f32
/// values than the CSR product reads of values and column indices.
pub(crate) const MAX_FILL: usize = 2;

/// A matrix laid out by diagonals; see the module documentation.
pub(crate) struct Diagonals {
    /// Column minus row of each diagonal, ascending.
    offsets: Vec<i64>,
    /// Rows of the matrix.
    rows: usize,
    /// Columns of the matrix.
    cols: usize,
    /// The values: row `i`'s element on diagonal `d` at `d * rows + i`, zero where the matrix
    /// stores none.
    values: HostVec,
    /// Whether the matrix stores row `i`'s element on diagonal `d`: bit `i % 8` of byte
    /// `d * stride + i / 8`.
    stored: Vec<u8>,
    /// Bytes of `stored` per diagonal: enough for every row, and two more so that a 16-bit
    /// read at any row's byte stays inside.
    stride: usize,
}

impl std::fmt::Debug for Diagonals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Diagonals({} x {}, offsets {:?})", self.rows, self.cols, self.offsets)
    }
}

impl Diagonals {
    /// The layout of the CSR matrix (`values`, `offsets`, column `indices`) of shape
    /// `rows x cols`, or `None` when it is not compact (see the module documentation), a row's
    /// columns do not strictly ascend, or the memory for it cannot be had.
    pub(crate) fn of_csr<T: Sample>(
        values: &[T],
        offsets: &[i32],
        indices: &[i32],
        (rows, cols): (usize, usize),
    ) -> Option<Diagonals> {
        let nnz = values.len();
        if rows == 0 || nnz == 0 || offsets.len() != rows + 1 {
            return None;
        }
        let row_of = |i: usize| offsets[i] as usize..offsets[i + 1] as usize;
        // the distinct diagonals, each row's columns ascending
        let mut diagonals: Vec<i64> = Vec::new();
        for i in 0..rows {
            let row = &indices[row_of(i)];
            if row.windows(2).any(|w| w[0] >= w[1]) {
                return None;
            }
            for &c in row {
                let d = c as i64 - i as i64;
                if let Err(at) = diagonals.binary_search(&d) {
                    if diagonals.len() == MAX_DIAGONALS {
                        return None;
                    }
                    diagonals.insert(at, d);
                }
            }
        }
        let slots = diagonals.len().checked_mul(rows)?;
        if slots > MAX_FILL.saturating_mul(nnz) {
            return None;
        }
        let stride = rows.div_ceil(8) + 2;
        let mut laid: Vec<T> = try_filled(slots, T::zero()).ok()?;
        let mut stored: Vec<u8> = try_filled(diagonals.len() * stride, 0u8).ok()?;
        for i in 0..rows {
            // the row's columns ascend, as the diagonals do: walk both
            let mut d = 0;
            for k in row_of(i) {
                let want = indices[k] as i64 - i as i64;
                while diagonals[d] < want {
                    d += 1;
                }
                laid[d * rows + i] = values[k];
                stored[d * stride + i / 8] |= 1 << (i % 8);
            }
        }
        Some(Diagonals { offsets: diagonals, rows, cols, values: T::wrap(laid), stored, stride })
    }

    /// The number of diagonals.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.offsets.len()
    }

    /// `A · rhs` for `rhs` of shape `[cols, n]` (column-major): `rows x n`, column-major, the
    /// same bits as the CSR product. `T` is the matrix's element type.
    pub(crate) fn product<T: Sample>(&self, rhs: &[T], n: usize) -> Result<Vec<T>, Error> {
        let (m, k) = (self.rows, self.cols);
        assert!(rhs.len() == k * n, "internal error: diagonal product shapes");
        let lanes = Lanes::detect();
        by_row_tasks(rhs, [k, n], m, |x, first, ys| {
            // SAFETY: `lanes` is what the CPU has; `x` has the matrix's column count of
            // elements, `first` is a multiple of 64 and `ys` holds rows `first..` of the
            // product.
            if !unsafe { self.rows_in_lanes(lanes, x, first, ys) } {
                self.rows_scalar(x, first, ys);
            }
        })
    }

    /// Rows `first..first + ys.len()` of the product with the column `x`, one diagonal after
    /// another into each row's sum.
    fn rows_scalar<T: Sample>(&self, x: &[T], first: usize, ys: &mut [MaybeUninit<T>]) {
        let values = self.values.as_slice::<T>();
        for (r, y) in ys.iter_mut().enumerate() {
            let i = first + r;
            let mut acc = T::zero();
            for (d, &off) in self.offsets.iter().enumerate() {
                if self.stored[d * self.stride + i / 8] & (1 << (i % 8)) != 0 {
                    acc += values[d * self.rows + i] * x[(i as i64 + off) as usize];
                }
            }
            y.write(acc);
        }
    }

    /// As [`Diagonals::rows_scalar`] with the vector instructions `lanes` names, for f32 and
    /// f64; returns whether it did (`false` for other types, or with no vector instructions).
    ///
    /// # Safety
    /// The CPU has the instructions `lanes` names; `x` has `self.cols` elements; `first` is a
    /// multiple of 64 and `first + ys.len() <= self.rows`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn rows_in_lanes<T: Sample>(
        &self,
        lanes: Lanes,
        x: &[T],
        first: usize,
        ys: &mut [MaybeUninit<T>],
    ) -> bool {
        use std::any::TypeId;
        let t = TypeId::of::<T>();
        let (f32_, f64_) = (TypeId::of::<f32>(), TypeId::of::<f64>());
        if lanes == Lanes::None || (t != f32_ && t != f64_) {
            return false;
        }
        let rows = Rows {
            offsets: &self.offsets,
            values: self.values.as_slice::<T>().as_ptr() as *const u8,
            rows: self.rows,
            stored: &self.stored,
            stride: self.stride,
            x: x.as_ptr() as *const u8,
            first,
            len: ys.len(),
            out: ys.as_mut_ptr() as *mut u8,
        };
        // SAFETY: the caller's promises are the kernels'; `T` is the type each is for, and
        // `lanes` the instructions the CPU has.
        unsafe {
            match (lanes, t == f32_) {
                (Lanes::Avx512, true) => rows_f32(&rows),
                (Lanes::Avx512, false) => rows_f64(&rows),
                (_, true) => rows_f32_avx2(&rows),
                (_, false) => rows_f64_avx2(&rows),
            }
        }
        true
    }

    #[cfg(not(target_arch = "x86_64"))]
    unsafe fn rows_in_lanes<T: Sample>(
        &self,
        _: Lanes,
        _: &[T],
        _: usize,
        _: &mut [MaybeUninit<T>],
    ) -> bool {
        false
    }
}

/// The vector instructions the diagonal product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lanes {
    /// None: the scalar loop.
    None,
    /// AVX2: eight rows of f32 (four of f64) a vector.
    Avx2,
    /// AVX-512: sixteen rows of f32 (eight of f64) a vector.
    Avx512,
}

impl Lanes {
    /// The widest the running CPU has.
    fn detect() -> Lanes {
        #[cfg(target_arch = "x86_64")]
        {
            if super::sparse_avx512::available() {
                return Lanes::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Lanes::Avx2;
            }
        }
        Lanes::None
    }
}

/// One task's rows for the AVX-512 kernels, with the element type erased.
#[cfg(target_arch = "x86_64")]
struct Rows<'a> {
    offsets: &'a [i64],
    values: *const u8,
    rows: usize,
    stored: &'a [u8],
    stride: usize,
    x: *const u8,
    first: usize,
    len: usize,
    out: *mut u8,
}

/// Sixteen rows of f32 a vector: for each diagonal, the stored bits of the sixteen rows are
/// the mask of a load of the values, a load of `x` shifted by the diagonal's offset, and the
/// addition of their products into the rows' sums.
///
/// # Safety
/// The CPU has AVX-512F; `r` describes rows of a `Diagonals` of f32 and a column `x` of its
/// column count, `r.first` is a multiple of 64 and `r.out` has room for `r.len` f32.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn rows_f32(r: &Rows) {
    use std::arch::x86_64::*;
    let (values, x, out) = (r.values as *const f32, r.x as *const f32, r.out as *mut f32);
    // SAFETY: a lane is loaded only where its row stores an element on the diagonal, so its
    // value slot and its column of `x` exist (the pointers to masked-off lanes are never
    // read); the bits are read inside `stored` (`stride` has two bytes to spare); the store
    // writes the task's own rows only.
    unsafe {
        let mut done = 0;
        while done < r.len {
            let row = r.first + done;
            let live: u16 = if r.len - done >= 16 { u16::MAX } else { (1 << (r.len - done)) - 1 };
            let mut sum = _mm512_setzero_ps();
            for (d, &off) in r.offsets.iter().enumerate() {
                let at = r.stored.as_ptr().add(d * r.stride + row / 8);
                let k = (at as *const u16).read_unaligned() & live;
                let v = _mm512_maskz_loadu_ps(k, values.add(d * r.rows + row));
                let xv = _mm512_maskz_loadu_ps(k, x.wrapping_offset(row as isize + off as isize));
                sum = _mm512_mask_add_ps(sum, k, sum, _mm512_mul_ps(v, xv));
            }
            _mm512_mask_storeu_ps(out.add(done), live, sum);
            done += 16;
        }
    }
}

/// As [`rows_f32`], eight rows of f64 a vector.
///
/// # Safety
/// As [`rows_f32`], for a `Diagonals` of f64.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn rows_f64(r: &Rows) {
    use std::arch::x86_64::*;
    let (values, x, out) = (r.values as *const f64, r.x as *const f64, r.out as *mut f64);
    // SAFETY: as in `rows_f32`.
    unsafe {
        let mut done = 0;
        while done < r.len {
            let row = r.first + done;
            let live: u8 = if r.len - done >= 8 { u8::MAX } else { (1 << (r.len - done)) - 1 };
            let mut sum = _mm512_setzero_pd();
            for (d, &off) in r.offsets.iter().enumerate() {
                let k = *r.stored.get_unchecked(d * r.stride + row / 8) & live;
                let v = _mm512_maskz_loadu_pd(k, values.add(d * r.rows + row));
                let xv = _mm512_maskz_loadu_pd(k, x.wrapping_offset(row as isize + off as isize));
                sum = _mm512_mask_add_pd(sum, k, sum, _mm512_mul_pd(v, xv));
            }
            _mm512_mask_storeu_pd(out.add(done), live, sum);
            done += 8;
        }
    }
}

/// As [`rows_f32`] with AVX2, eight rows a vector: the stored bits of the eight rows (one
/// byte, the rows starting at a multiple of eight) become a lane mask that selects the loads
/// and the lanes whose sums take the product. Without AVX-512 (the AMD processors of the
/// build machines, say) the scalar loop spent about 120 instructions a row of the 5-point
/// Laplacian, checking each slot's index three times.
///
/// # Safety
/// The CPU has AVX2; otherwise as [`rows_f32`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_f32_avx2(r: &Rows) {
    use std::arch::x86_64::*;
    let (values, x, out) = (r.values as *const f32, r.x as *const f32, r.out as *mut f32);
    // SAFETY: as in `rows_f32`: masked-off lanes are neither read nor written (AVX's masked
    // loads and stores do not touch them), and the bits are read inside `stored`.
    unsafe {
        let mut done = 0;
        while done < r.len {
            let row = r.first + done;
            let live: u8 = if r.len - done >= 8 { u8::MAX } else { (1u8 << (r.len - done)) - 1 };
            let mut sum = _mm256_setzero_ps();
            for (d, &off) in r.offsets.iter().enumerate() {
                let k = lanes_f32(*r.stored.get_unchecked(d * r.stride + row / 8) & live);
                let v = _mm256_maskload_ps(values.add(d * r.rows + row), k);
                let xv = _mm256_maskload_ps(x.wrapping_offset(row as isize + off as isize), k);
                let added = _mm256_add_ps(sum, _mm256_mul_ps(v, xv));
                sum = _mm256_blendv_ps(sum, added, _mm256_castsi256_ps(k));
            }
            _mm256_maskstore_ps(out.add(done), lanes_f32(live), sum);
            done += 8;
        }
    }
}

/// As [`rows_f64`] with AVX2, four rows a vector (half a byte of stored bits).
///
/// # Safety
/// The CPU has AVX2; otherwise as [`rows_f64`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_f64_avx2(r: &Rows) {
    use std::arch::x86_64::*;
    let (values, x, out) = (r.values as *const f64, r.x as *const f64, r.out as *mut f64);
    // SAFETY: as in `rows_f32_avx2`.
    unsafe {
        let mut done = 0;
        while done < r.len {
            let row = r.first + done;
            let live: u8 = if r.len - done >= 4 { 0xf } else { (1u8 << (r.len - done)) - 1 };
            let mut sum = _mm256_setzero_pd();
            for (d, &off) in r.offsets.iter().enumerate() {
                let byte = *r.stored.get_unchecked(d * r.stride + row / 8);
                let k = lanes_f64((byte >> (row % 8)) & live);
                let v = _mm256_maskload_pd(values.add(d * r.rows + row), k);
                let xv = _mm256_maskload_pd(x.wrapping_offset(row as isize + off as isize), k);
                let added = _mm256_add_pd(sum, _mm256_mul_pd(v, xv));
                sum = _mm256_blendv_pd(sum, added, _mm256_castsi256_pd(k));
            }
            _mm256_maskstore_pd(out.add(done), lanes_f64(live), sum);
            done += 4;
        }
    }
}

/// The lane mask of eight f32 lanes whose bits are set in `bits` (lane `j`, bit `j`).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn lanes_f32(bits: u8) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(bits as i32), bit), bit)
}

/// The lane mask of four f64 lanes whose bits are set in `bits` (lane `j`, bit `j`).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn lanes_f64(bits: u8) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let bit = _mm256_setr_epi64x(1, 2, 4, 8);
    _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(bits as i64), bit), bit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{c32, c64};
    use crate::storage::Element;

    /// A CSR matrix as host parts.
    struct Csr<T> {
        values: Vec<T>,
        offsets: Vec<i32>,
        cols: Vec<i32>,
        shape: (usize, usize),
    }

    /// The CSR matrix of `rows x cols` holding `f(i, j)` where it is `Some`.
    fn csr<T: Copy>((rows, cols): (usize, usize), f: impl Fn(usize, usize) -> Option<T>) -> Csr<T> {
        let (mut values, mut offsets, mut cs) = (vec![], vec![0], vec![]);
        for i in 0..rows {
            for j in 0..cols {
                if let Some(v) = f(i, j) {
                    values.push(v);
                    cs.push(j as i32);
                }
            }
            offsets.push(values.len() as i32);
        }
        Csr { values, offsets, cols: cs, shape: (rows, cols) }
    }

    /// The 5-point Laplacian of a `side x side` grid.
    fn laplacian(side: usize) -> Csr<f32> {
        let n = side * side;
        csr((n, n), |i, j| {
            let (xi, yi, xj, yj) = (i % side, i / side, j % side, j / side);
            match (xi.abs_diff(xj), yi.abs_diff(yj)) {
                (0, 0) => Some(4.0),
                (1, 0) | (0, 1) => Some(-1.0),
                _ => None,
            }
        })
    }

    fn laid<T: Sample>(a: &Csr<T>) -> Option<Diagonals> {
        Diagonals::of_csr(&a.values, &a.offsets, &a.cols, a.shape)
    }

    /// The CSR product's bits, from the CSR kernel.
    fn by_rows<T: Sample>(a: &Csr<T>, x: &[T], n: usize) -> Vec<T> {
        let (m, k) = a.shape;
        super::super::sparse::csr_matmul(&a.values, &a.offsets, &a.cols, m, x, [k, n]).unwrap()
    }

    /// The product computed in f64 from the matrix's definition, element by element.
    fn reference(a: &Csr<f32>, x: &[f32]) -> Vec<f64> {
        (0..a.shape.0)
            .map(|i| {
                let r = a.offsets[i] as usize..a.offsets[i + 1] as usize;
                r.map(|e| a.values[e] as f64 * x[a.cols[e] as usize] as f64).sum()
            })
            .collect()
    }

    /// The bytes of each element (so that NaNs compare, and -0 differs from 0).
    fn bits<T: Element>(v: &[T]) -> Vec<Vec<u8>> {
        let bytes = T::wrap(v.to_vec());
        bytes.as_bytes().chunks(std::mem::size_of::<T>()).map(<[u8]>::to_vec).collect()
    }

    fn sample(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as u32).wrapping_mul(2654435761) ^ seed) as f32 / u32::MAX as f32 - 0.5)
            .collect()
    }

    #[test]
    fn the_laplacian_has_five_diagonals_and_its_product_is_the_csr_products_bits() {
        // 37² rows: tasks and vectors end inside a block of 16 and of 8 rows
        for side in [1, 3, 37, 70] {
            let a = laplacian(side);
            let d = laid(&a).expect("the Laplacian is banded");
            assert_eq!(d.count(), if side == 1 { 1 } else { 5 });
            let n = side * side;
            let x = sample(n, 7);
            let got = d.product(&x, 1).unwrap();
            assert_eq!(bits(&got), bits(&by_rows(&a, &x, 1)), "side {side}");
            for (g, r) in got.iter().zip(reference(&a, &x)) {
                assert!((*g as f64 - r).abs() <= 1e-5 * (1.0 + r.abs()), "{g} against {r}");
            }
        }
    }

    #[test]
    fn elements_the_matrix_does_not_store_skip_infinite_and_nan_elements_of_x() {
        // the ±1 diagonals of the Laplacian have gaps at the grid's edges: an infinity there
        // reaches only the rows that store an element in its column
        let side = 20;
        let a = laplacian(side);
        let d = laid(&a).unwrap();
        let mut x = sample(side * side, 3);
        x[side - 1] = f32::INFINITY; // right edge of the first grid row
        x[5 * side] = f32::NAN; // left edge of the sixth
        let got = d.product(&x, 1).unwrap();
        let want = by_rows(&a, &x, 1);
        assert_eq!(bits(&got), bits(&want));
        // row `side` (left edge of the second grid row) does not store column `side - 1`
        assert!(got[side].is_finite());
        assert!(got[side - 1].is_infinite() || got[side - 1].is_nan());
    }

    #[test]
    fn stored_zeros_multiply_and_every_value_type_gives_the_csr_bits() {
        // a stored zero times an infinity is NaN in both products
        let a = csr((45, 45), |i, j| {
            (j as i64 - i as i64).abs().le(&2).then(|| {
                if (i + j) % 7 == 0 {
                    0.0f64
                } else {
                    (i * 3 + j) as f64 / 9.0
                }
            })
        });
        let mut x: Vec<f64> = sample(45, 1).iter().map(|&v| v as f64).collect();
        x[14] = f64::INFINITY;
        let d = laid(&a).unwrap();
        assert_eq!(d.count(), 5);
        assert_eq!(bits(&d.product(&x, 1).unwrap()), bits(&by_rows(&a, &x, 1)));

        let c = csr((33, 33), |i, j| {
            (j as i64 - i as i64).abs().le(&1).then(|| c32::new(i as f32 - 1.5, j as f32 * 0.25))
        });
        let xc: Vec<c32> = (0..33).map(|i| c32::new(i as f32 * 0.5, 1.0 - i as f32)).collect();
        let dc = laid(&c).unwrap();
        assert_eq!(bits(&dc.product(&xc, 1).unwrap()), bits(&by_rows(&c, &xc, 1)));

        let z =
            csr((17, 17), |i, j| (i == j || j == i + 3).then(|| c64::new(i as f64, -(j as f64))));
        let xz: Vec<c64> = (0..17).map(|i| c64::new(1.0 / (i as f64 + 1.0), i as f64)).collect();
        assert_eq!(bits(&laid(&z).unwrap().product(&xz, 1).unwrap()), bits(&by_rows(&z, &xz, 1)));
    }

    #[test]
    fn rectangular_matrices_and_several_columns() {
        // wide and tall, with diagonals whose columns leave the matrix on either side
        for (m, k) in [(50, 130), (130, 120), (4100, 4200)] {
            let a = csr((m, k), |i, j| {
                let d = j as i64 - i as i64;
                [-40, -1, 0, 2, 77].contains(&d).then(|| ((i + 2 * j) % 11) as f32 - 5.0)
            });
            let d = laid(&a).unwrap();
            let x = sample(k * 3, 5);
            let got = d.product(&x, 3).unwrap();
            assert_eq!(got.len(), m * 3);
            assert_eq!(bits(&got), bits(&by_rows(&a, &x, 3)), "{m} x {k}");
        }
    }

    #[test]
    fn matrices_that_are_not_compact_or_whose_rows_do_not_ascend_are_left_to_csr() {
        // too many diagonals
        let wide = csr((40, 40), |i, j| (j as i64 - i as i64).abs().lt(&20).then_some(1.0f32));
        assert!(laid(&wide).is_none());
        // few diagonals, but mostly empty: more than twice as many slots as elements
        let sparse = csr((100, 100), |i, j| {
            ((i == j) || (i % 10 == 0 && j == (i + 50) % 100)).then_some(2.0f32)
        });
        assert!(laid(&sparse).is_none());
        // a row whose columns are not in order
        let mut a = laplacian(4);
        a.cols.swap(0, 1);
        assert!(laid(&a).is_none());
        // nothing stored
        let empty = csr((5, 5), |_, _| None::<f32>);
        assert!(laid(&empty).is_none());
    }
}
