//! emberfire's single-threaded f32 and f64 matrix-product kernels for processors with
//! AVX-512.
//!
//! emberfire multiplies f32 and f64 matrices on the CPU with these where the processor has
//! AVX-512, and splits a product over its threads itself. They are a crate of their own
//! because rustc 1.95's LLVM crashed (SIGSEGV in the greedy register allocator's
//! `RegAllocBase::postOptimization`) compiling them inside the emberfire crate, whose 32
//! codegen units mix them with much other code, while it compiles them alone here in every
//! partition tried (1 to 64 units). faer's and the `gemm` crate's own AVX-512 kernels, behind
//! the `gemm` crate's `x86-v4` feature, crashed the same way, so faer runs its AVX2 kernels in
//! emberfire: half the vector width, 0.78 to 0.91 of OpenBLAS's speed on 2048^2 f32 on a
//! 2-core AVX-512 Xeon.
//!
//! The scheme is the usual blocked one, the same for both types ([`mod@f32`] and
//! [`mod@f64`]). `B` is packed a block of `KC` rows by `NC` columns at a time into panels of
//! `NR` columns, `A` a block of `MC` rows by `KC` columns at a time into panels of `MR` rows
//! (two vectors), and the micro-kernel multiplies one panel of each into an `MR x NR` tile of
//! `C` held in 24 vector registers. Each panel is read from the cache level its block was
//! sized for. Tiles past the edges of `C` are computed whole (the packed panels are padded)
//! into a scratch tile, and only their valid part is written.
//!
//! ```
//! use emberfire_gemm_avx512::{available, f32, f64, Operand};
//! // [1 2; 3 4] (column-major) times itself, on processors with AVX-512
//! if available() {
//!     let a = [1.0f32, 3.0, 2.0, 4.0];
//!     let mut c = [0.0f32; 4];
//!     let op = Operand { ptr: a.as_ptr(), rs: 1, cs: 2 };
//!     // SAFETY: the operands address 2 x 2 elements of `a`, `C` 2 x 2 of `c`; AVX-512 is
//!     // there.
//!     unsafe { f32::gemm(2, 2, 2, 1.0, op, op, 0.0, false, c.as_mut_ptr(), 2) };
//!     assert_eq!(c, [7.0, 15.0, 10.0, 22.0]);
//!
//!     // the same in f64, into a C of 2 rows padded to 3 (ldc), plus 0.5 C
//!     let a = [1.0f64, 3.0, 2.0, 4.0];
//!     let mut c = [2.0f64, 2.0, -1.0, 2.0, 2.0, -1.0];
//!     let op = Operand { ptr: a.as_ptr(), rs: 1, cs: 2 };
//!     // SAFETY: as above, with `C`'s columns 3 apart in `c`.
//!     unsafe { f64::gemm(2, 2, 2, 1.0, op, op, 0.5, true, c.as_mut_ptr(), 3) };
//!     assert_eq!(c, [8.0, 16.0, -1.0, 11.0, 23.0, -1.0]);
//! }
//! ```

#![cfg(target_arch = "x86_64")]

/// Columns of a micro-tile, for both types: 24 accumulators, two vectors of `A` and one
/// broadcast of `B` take 27 of the 32 vector registers. Threads split columns in multiples of
/// it.
///
/// ```
/// assert!(emberfire_gemm_avx512::NR > 0);
/// ```
pub const NR: usize = 12;

/// One operand of a product: its first element and its (row, column) strides in elements.
///
/// ```
/// use emberfire_gemm_avx512::Operand;
/// // a 3 x 2 column-major matrix, and its transpose read in place
/// let m = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let a = Operand { ptr: m.as_ptr(), rs: 1, cs: 3 };
/// let at = Operand { ptr: m.as_ptr(), rs: 3, cs: 1 };
/// // SAFETY: row 1, column 1 is inside both.
/// let (x, y) = unsafe { (a.at(1, 1), at.at(1, 1)) };
/// // SAFETY: both point into `m`.
/// assert_eq!(unsafe { (*x.ptr, *y.ptr) }, (5.0, 5.0));
/// ```
pub struct Operand<T> {
    /// The element at row 0, column 0.
    pub ptr: *const T,
    /// Elements from one row to the next.
    pub rs: isize,
    /// Elements from one column to the next.
    pub cs: isize,
}

impl<T> Clone for Operand<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Operand<T> {}

// SAFETY: the operand is only read, and its caller keeps it alive for every thread reading it.
unsafe impl<T> Send for Operand<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Operand<T> {}

impl<T> Operand<T> {
    /// The operand that starts at row `i`, column `j` of this one.
    ///
    /// # Safety
    /// Row `i` and column `j` are inside the operand.
    pub unsafe fn at(self, i: usize, j: usize) -> Operand<T> {
        // SAFETY: the caller's promise.
        let ptr = unsafe { self.ptr.offset(i as isize * self.rs + j as isize * self.cs) };
        Operand { ptr, ..self }
    }
}

/// A 64-byte aligned line of packed scratch.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// 64-byte aligned scratch of at least `len` zeroed elements of `T` (f32 or f64).
fn scratch<T>(len: usize) -> Vec<Line> {
    vec![Line([0; 64]); (len * std::mem::size_of::<T>()).div_ceil(64)]
}

/// Whether the running CPU has AVX-512 (foundation), which the kernels need.
///
/// ```
/// if emberfire_gemm_avx512::available() {
///     // the kernels may run
/// }
/// ```
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// The kernels of one element type, from its AVX-512 vector operations and block sizes.
macro_rules! products {
    ($t:ident, $lanes:expr, $kc:expr, $mc:expr, $load:ident, $loadu:ident, $store:ident,
     $storeu:ident, $zero:ident, $set1:ident, $fmadd:ident, $mul:ident) => {
        use super::{scratch, Operand, NR};
        use std::arch::x86_64::*;

        /// Lanes of one vector.
        const LANES: usize = $lanes;
        #[doc = concat!("Rows of a micro-tile: two vectors of ", stringify!($lanes), " lanes. ")]
        /// A caller splitting a product over threads splits rows in multiples of it, so that
        /// every thread's tiles are whole ones.
        ///
        /// ```
        #[doc = concat!("assert_eq!(emberfire_gemm_avx512::", stringify!($t), "::MR % 8, 0);")]
        /// ```
        pub const MR: usize = 2 * LANES;
        /// The depth of one packed block: a micro-panel of `B` (`KC x NR`, 18 or 24 KiB)
        /// stays in the first-level cache while the panels of `A` stream past it.
        const KC: usize = $kc;
        /// Rows of one packed block of `A` (`MC x KC`, 720 or 960 KiB): it stays in the
        /// second-level cache while every micro-panel of `B` passes.
        const MC: usize = $mc;
        /// Columns of one packed block of `B` (`KC x NC`, 4.5 or 6 MiB), kept in the
        /// third-level cache.
        const NC: usize = 3072;

        /// `C = alpha A B + beta C` for `A` (`m x k`), `B` (`k x n`) and the column-major `C`
        /// (`m x n`, `ldc` apart), on the calling thread; `C` is read only when `read_c` is set (else
        /// it may hold anything, NaN included). Each element's products are summed in the order of
        /// the depth, in blocks of `KC`, so a part of `C` computed alone (a range of whole tiles of
        /// rows or columns, as threads split it) gets the same bits as in the whole product.
        ///
        /// The crate's documentation has examples.
        ///
        /// # Safety
        /// The operands address `m x k` and `k x n` readable elements, `C` `m x n` writable ones that
        /// overlap neither; the CPU has AVX-512 ([`available`](crate::available)).
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx512f")]
        pub unsafe fn gemm(
            m: usize,
            n: usize,
            k: usize,
            alpha: $t,
            a: Operand<$t>,
            b: Operand<$t>,
            beta: $t,
            read_c: bool,
            c: *mut $t,
            ldc: usize,
        ) {
            // SAFETY: the caller's promises (see above); the packed blocks are sized for the
            // largest block, and each tile written lies inside `C`'s `m x n`.
            unsafe {
                if k == 0 {
                    for j in 0..n {
                        for i in 0..m {
                            let x = c.add(i + j * ldc);
                            *x = if read_c { beta * *x } else { 0.0 };
                        }
                    }
                    return;
                }
                let mut a_pack = scratch::<$t>(MC.min(m.div_ceil(MR) * MR) * KC.min(k));
                let mut b_pack = scratch::<$t>(NC.min(n.div_ceil(NR) * NR) * KC.min(k));
                let (ap, bp) = (a_pack.as_mut_ptr() as *mut $t, b_pack.as_mut_ptr() as *mut $t);
                let mut tile = scratch::<$t>(MR * NR);
                for jc in (0..n).step_by(NC) {
                    let nc = NC.min(n - jc);
                    for pc in (0..k).step_by(KC) {
                        let kc = KC.min(k - pc);
                        pack_b(kc, nc, b.at(pc, jc), bp);
                        let beta = if pc > 0 {
                            Some(1.0)
                        } else if read_c {
                            Some(beta)
                        } else {
                            None
                        };
                        for ic in (0..m).step_by(MC) {
                            let mc = MC.min(m - ic);
                            pack_a(mc, kc, a.at(ic, pc), ap);
                            for jr in (0..nc).step_by(NR) {
                                let nr = NR.min(nc - jr);
                                let bpanel = bp.add(jr * kc);
                                for ir in (0..mc).step_by(MR) {
                                    let mr = MR.min(mc - ir);
                                    let apanel = ap.add(ir * kc);
                                    let cij = c.add(ic + ir + (jc + jr) * ldc);
                                    if mr == MR && nr == NR {
                                        kernel(kc, apanel, bpanel, cij, ldc, alpha, beta);
                                    } else {
                                        let t = tile.as_mut_ptr() as *mut $t;
                                        kernel(kc, apanel, bpanel, t, MR, 1.0, None);
                                        for j in 0..nr {
                                            for i in 0..mr {
                                                let x = cij.add(i + j * ldc);
                                                let v = alpha * *t.add(i + j * MR);
                                                // rounded as the kernel's full tiles are
                                                *x = match beta {
                                                    Some(beta) => (*x).mul_add(beta, v),
                                                    None => v,
                                                };
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        /// Packs the `mc x kc` block of `A` into panels of `MR` rows: panel `r` holds, for
        /// each of the `kc` columns in turn, its `MR` rows (zero past `mc`).
        #[target_feature(enable = "avx512f")]
        unsafe fn pack_a(mc: usize, kc: usize, a: Operand<$t>, dst: *mut $t) {
            // SAFETY: the caller's block lies inside `A`; `dst` holds `mc` rounded up to `MR`
            // rows by `kc`, 64-byte aligned.
            unsafe {
                for (r, i0) in (0..mc).step_by(MR).enumerate() {
                    let rows = MR.min(mc - i0);
                    let panel = dst.add(r * MR * kc);
                    let src = a.at(i0, 0);
                    if a.rs == 1 && rows == MR {
                        for p in 0..kc {
                            let s = src.ptr.offset(p as isize * a.cs);
                            let d = panel.add(p * MR);
                            $store(d, $loadu(s));
                            $store(d.add(LANES), $loadu(s.add(LANES)));
                        }
                    } else {
                        for p in 0..kc {
                            for i in 0..MR {
                                *panel.add(p * MR + i) = if i < rows {
                                    *src.ptr.offset(i as isize * a.rs + p as isize * a.cs)
                                } else {
                                    0.0
                                };
                            }
                        }
                    }
                }
            }
        }

        /// Packs the `kc x nc` block of `B` into panels of `NR` columns: panel `q` holds, for
        /// each of the `kc` rows in turn, its `NR` columns (past `nc`, copies of the last one,
        /// whose products land in the scratch tile and are dropped).
        #[target_feature(enable = "avx512f")]
        unsafe fn pack_b(kc: usize, nc: usize, b: Operand<$t>, dst: *mut $t) {
            // SAFETY: the caller's block lies inside `B`; `dst` holds `nc` rounded up to `NR`
            // columns by `kc`.
            unsafe {
                for (q, j0) in (0..nc).step_by(NR).enumerate() {
                    let cols = NR.min(nc - j0);
                    let panel = dst.add(q * NR * kc);
                    // each of the panel's columns (past `nc`, the last one again)
                    let src: [*const $t; NR] =
                        std::array::from_fn(|j| b.at(0, j0 + j.min(cols - 1)).ptr);
                    for p in 0..kc {
                        let row = p as isize * b.rs;
                        for (j, s) in src.iter().enumerate() {
                            *panel.add(p * NR + j) = *s.offset(row);
                        }
                    }
                }
            }
        }

        /// One `MR x NR` tile of `C`: `alpha * (a panel) (b panel)`, plus `beta * C` where `beta` is
        /// given (else `C` is not read).
        #[inline(never)]
        #[target_feature(enable = "avx512f")]
        unsafe fn kernel(
            kc: usize,
            a: *const $t,
            b: *const $t,
            c: *mut $t,
            ldc: usize,
            alpha: $t,
            beta: Option<$t>,
        ) {
            // SAFETY: the panels hold `kc` steps of `MR` and `NR` values, the A panel 64-byte
            // aligned; the tile of `C` (`MR` rows, `NR` columns `ldc` apart) is the caller's.
            unsafe {
                for j in 0..NR {
                    _mm_prefetch::<_MM_HINT_T0>(c.add(j * ldc) as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(c.add(j * ldc + MR - 1) as *const i8);
                }
                let mut acc = [[$zero(); 2]; NR];
                let (mut a, mut b) = (a, b);
                // one step of the depth: two vectors of A times each of the NR values of B
                macro_rules! step {
                    ($s:expr) => {{
                        let a0 = $load(a.add($s * MR));
                        let a1 = $load(a.add($s * MR + LANES));
                        for j in 0..NR {
                            let bj = $set1(*b.add($s * NR + j));
                            acc[j][0] = $fmadd(a0, bj, acc[j][0]);
                            acc[j][1] = $fmadd(a1, bj, acc[j][1]);
                        }
                    }};
                }
                for _ in 0..kc / 4 {
                    _mm_prefetch::<_MM_HINT_T0>(a.add(8 * MR) as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(a.add(8 * MR + LANES) as *const i8);
                    step!(0);
                    step!(1);
                    _mm_prefetch::<_MM_HINT_T0>(a.add(10 * MR) as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(a.add(10 * MR + LANES) as *const i8);
                    step!(2);
                    step!(3);
                    a = a.add(4 * MR);
                    b = b.add(4 * NR);
                }
                for _ in 0..kc % 4 {
                    step!(0);
                    a = a.add(MR);
                    b = b.add(NR);
                }
                let alpha = $set1(alpha);
                for (j, column) in acc.iter().enumerate() {
                    let cj = c.add(j * ldc);
                    for (h, &sum) in column.iter().enumerate() {
                        let v = $mul(sum, alpha);
                        let v = match beta {
                            Some(beta) => $fmadd($loadu(cj.add(LANES * h)), $set1(beta), v),
                            None => v,
                        };
                        $storeu(cj.add(LANES * h), v);
                    }
                }
            }
        }
    };
}

/// The f32 kernels.
pub mod f32 {
    products!(
        f32,
        16,
        384,
        480,
        _mm512_load_ps,
        _mm512_loadu_ps,
        _mm512_store_ps,
        _mm512_storeu_ps,
        _mm512_setzero_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_mul_ps
    );
}

/// The f64 kernels.
pub mod f64 {
    products!(
        f64,
        8,
        256,
        480,
        _mm512_load_pd,
        _mm512_loadu_pd,
        _mm512_store_pd,
        _mm512_storeu_pd,
        _mm512_setzero_pd,
        _mm512_set1_pd,
        _mm512_fmadd_pd,
        _mm512_mul_pd
    );
}
