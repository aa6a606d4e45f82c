//! Dense factorizations on the CPU, in LAPACK's conventions, for one column-major matrix at a
//! time, and the linear algebra family (`backend::lapack::Lapack`) of the CPU backend, which
//! runs the batches.
//!
//! Why these choices:
//! - **LU and QR are written here**, blocked, with faer doing the level-3 work (triangular
//!   solves and products, on rayon). faer's own LU divides by a zero pivot (a singular matrix
//!   then fills with NaN, where LAPACK leaves the column and reports it), and faer's QR skips
//!   columns it judges dependent, which changes the packed layout. emberfire promises
//!   LAPACK's results (`getrf`'s `ipiv`, `geqrf`'s packed reflectors and `tau`) on both
//!   backends, so that cuSOLVER and the CPU agree up to rounding.
//! - **Cholesky, the SVD and triangular solves are faer's**: their results are those of
//!   LAPACK's `potrf` (lower), `gesvd` and `trsm`.
//!
//! Matrices are slices in column-major order with a leading dimension equal to the number of
//! rows.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve as tri;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};

use rayon::prelude::*;

use crate::backend::dense::Dense;
use crate::backend::lapack::{batched_dims, shape, Svd};
use crate::backend::Buffer;
use crate::dtype::{c32, c64, DType};
use crate::error::Error;
use crate::storage::{alloc_uninit, try_copied, try_filled, with_float, Element};

/// The element types of the factorizations: f32, f64, c32, c64.
pub(crate) trait Field:
    Element
    + faer::traits::ComplexField
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::ops::MulAssign
    + std::ops::DivAssign
    + PartialEq
{
    /// The real type of the same precision (named apart from faer's `Real`).
    type Scalar: Element;
    /// `(real, imaginary)` in f64.
    fn parts(self) -> (f64, f64);
    /// A value from its parts (the imaginary part is dropped for real types).
    fn of_parts(re: f64, im: f64) -> Self;
    /// The complex conjugate (the value itself for real types).
    fn conjugate(self) -> Self;
    /// A real value of this precision.
    fn real_of(x: f64) -> Self::Scalar;
    /// `|re| + |im|`, the magnitude LAPACK pivots by.
    fn mag1(self) -> f64 {
        let (re, im) = self.parts();
        re.abs() + im.abs()
    }
    /// Zero.
    fn zero() -> Self {
        Self::of_parts(0.0, 0.0)
    }
    /// One.
    fn one() -> Self {
        Self::of_parts(1.0, 0.0)
    }
}

macro_rules! real_field {
    ($t:ty) => {
        impl Field for $t {
            type Scalar = $t;
            fn parts(self) -> (f64, f64) {
                (self as f64, 0.0)
            }
            fn of_parts(re: f64, _im: f64) -> Self {
                re as $t
            }
            fn conjugate(self) -> Self {
                self
            }
            fn real_of(x: f64) -> $t {
                x as $t
            }
        }
    };
}
real_field!(f32);
real_field!(f64);

macro_rules! complex_field {
    ($t:ty, $r:ty) => {
        impl Field for $t {
            type Scalar = $r;
            fn parts(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn of_parts(re: f64, im: f64) -> Self {
                <$t>::new(re as $r, im as $r)
            }
            fn conjugate(self) -> Self {
                self.conj()
            }
            fn real_of(x: f64) -> $r {
                x as $r
            }
        }
    };
}
complex_field!(c32, f32);
complex_field!(c64, f64);

/// Columns per block of the blocked LU and QR.
const BLOCK: usize = 32;

/// faer's parallelism for an operation of about `work` multiply-adds: threads only where
/// they pay.
fn par_for(work: usize) -> Par {
    if work >= 64 * 64 * 64 {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

fn view<T: Field>(a: &[T], m: usize, n: usize) -> MatRef<'_, T> {
    MatRef::from_column_major_slice(a, m, n)
}

fn view_mut<T: Field>(a: &mut [T], m: usize, n: usize) -> MatMut<'_, T> {
    MatMut::from_column_major_slice_mut(a, m, n)
}

/// Swaps rows `i` and `j` of the columns `cols` of an `m`-row matrix.
fn swap_rows<T: Field>(a: &mut [T], m: usize, i: usize, j: usize, cols: std::ops::Range<usize>) {
    if i != j {
        for c in cols {
            a.swap(c * m + i, c * m + j);
        }
    }
}

/// LU factorization with partial pivoting of an `m`×`n` matrix, in place (LAPACK's `getrf`):
/// `P·A = L·U` with `L` unit lower triangular (below the diagonal) and `U` upper (on and above
/// it). Returns `ipiv` (1-based: row `i` was swapped with row `ipiv[i] - 1`, in order) and
/// `info`: 0, or `j + 1` for the first exactly zero pivot `U[j][j]`, whose column is then left
/// unscaled, as LAPACK does (the factorization is still exact; `U` is singular).
pub(crate) fn getrf<T: Field>(a: &mut [T], m: usize, n: usize) -> (Vec<i32>, i32) {
    let k = m.min(n);
    let mut ipiv = vec![0i32; k];
    let mut info = 0i32;
    let mut j0 = 0;
    while j0 < k {
        let j1 = (j0 + BLOCK).min(k);
        // The panel: columns j0..j1, rows j0..m, unblocked.
        for j in j0..j1 {
            let col = &a[j * m..(j + 1) * m];
            let mut p = j;
            let mut best = col[j].mag1();
            for (i, v) in col.iter().enumerate().skip(j + 1) {
                let x = v.mag1();
                // `>`: the first of equal magnitudes wins, as in LAPACK's i?amax; NaN never
                // wins, so a NaN column keeps its diagonal.
                if x > best {
                    best = x;
                    p = i;
                }
            }
            ipiv[j] = (p + 1) as i32;
            if a[j * m + p] != T::zero() {
                swap_rows(a, m, j, p, j0..j1);
                let pivot = a[j * m + j];
                for v in &mut a[j * m + j + 1..(j + 1) * m] {
                    *v /= pivot;
                }
            } else if info == 0 {
                info = (j + 1) as i32;
            }
            // Rank-1 update of the rest of the panel.
            let (left, right) = a.split_at_mut((j + 1) * m);
            let l = &left[j * m + j + 1..(j + 1) * m];
            for c in j + 1..j1 {
                let colc = &mut right[(c - j - 1) * m..(c - j) * m];
                let f = colc[j];
                if f != T::zero() {
                    for (x, &lv) in colc[j + 1..].iter_mut().zip(l) {
                        *x -= lv * f;
                    }
                }
            }
        }
        // The panel's row swaps, applied to the columns on either side of it.
        for (j, &pivot) in ipiv.iter().enumerate().take(j1).skip(j0) {
            let p = pivot as usize - 1;
            swap_rows(a, m, j, p, 0..j0);
            swap_rows(a, m, j, p, j1..n);
        }
        if j1 < n {
            let nb = j1 - j0;
            let mut whole = view_mut(a, m, n);
            let block = whole.rb_mut().submatrix_mut(j0, j0, m - j0, n - j0);
            let (l11, mut a12, a21, a22) = block.split_at_mut(nb, nb);
            let par = par_for((m - j0) * (n - j1) * nb);
            tri::solve_unit_lower_triangular_in_place(l11.rb(), a12.rb_mut(), par);
            if j1 < m {
                matmul(a22, Accum::Add, a21.rb(), a12.rb(), -T::one(), par);
            }
        }
        j0 = j1;
    }
    (ipiv, info)
}

/// Solves `A·X = B` in place of `b` (`n`×`nrhs`) from `getrf`'s result for a square `A`
/// (LAPACK's `getrs` without transposition). A zero pivot gives infinities or NaN, as the
/// division by zero does.
pub(crate) fn getrs<T: Field>(lu: &[T], ipiv: &[i32], b: &mut [T], n: usize, nrhs: usize) {
    for (j, &p) in ipiv.iter().enumerate() {
        swap_rows(b, n, j, p as usize - 1, 0..nrhs);
    }
    let f = view(lu, n, n);
    let par = par_for(n * n * nrhs);
    let mut x = view_mut(b, n, nrhs);
    tri::solve_unit_lower_triangular_in_place(f, x.rb_mut(), par);
    tri::solve_upper_triangular_in_place(f, x.rb_mut(), par);
}

/// Solves `op(A)·X = B` in place of `b` for a triangular `n`×`n` `A`: its lower or upper
/// triangle is read (the other is ignored), `op` is the identity or the conjugate transpose,
/// and `unit` takes the diagonal as ones (BLAS's `trsm` from the left).
pub(crate) fn trsm<T: Field>(
    a: &[T],
    b: &mut [T],
    n: usize,
    nrhs: usize,
    lower: bool,
    adjoint: bool,
    unit: bool,
) {
    let a = view(a, n, n);
    let par = par_for(n * n * nrhs);
    let x = view_mut(b, n, nrhs);
    // The conjugate transpose of a lower matrix is upper, and the other way round.
    match (lower != adjoint, unit, adjoint) {
        (true, false, false) => tri::solve_lower_triangular_in_place(a, x, par),
        (true, true, false) => tri::solve_unit_lower_triangular_in_place(a, x, par),
        (false, false, false) => tri::solve_upper_triangular_in_place(a, x, par),
        (false, true, false) => tri::solve_unit_upper_triangular_in_place(a, x, par),
        (true, false, true) => tri::solve_lower_triangular_in_place(a.adjoint(), x, par),
        (true, true, true) => tri::solve_unit_lower_triangular_in_place(a.adjoint(), x, par),
        (false, false, true) => tri::solve_upper_triangular_in_place(a.adjoint(), x, par),
        (false, true, true) => tri::solve_unit_upper_triangular_in_place(a.adjoint(), x, par),
    }
}

/// Cholesky factorization of a Hermitian positive definite `n`×`n` matrix, in place: only the
/// `upper` (`A = Uᴴ·U`) or lower (`A = L·Lᴴ`) triangle is read, the factor is written there and
/// the other triangle is zeroed. Returns `info`: 0, or `j + 1` when the leading minor of order
/// `j + 1` is not positive definite; the result then holds the factor of the leading `j`×`j`
/// block (which is positive definite) and zeros elsewhere, never partial values.
pub(crate) fn potrf<T: Field>(a: &mut [T], n: usize, upper: bool) -> i32 {
    // faer factors the lower triangle: an upper input is read through its conjugate transpose.
    let mut lower = vec![T::zero(); n * n];
    for j in 0..n {
        for i in j..n {
            lower[j * n + i] = if upper { a[i * n + j].conjugate() } else { a[j * n + i] };
        }
    }
    let (info, done) = match cholesky_lower(&mut lower.clone(), n) {
        Ok(factor) => (0, factor),
        Err(j) => {
            // The leading j×j block is positive definite: factor it alone.
            let mut lead = vec![T::zero(); j * j];
            for c in 0..j {
                lead[c * j..(c + 1) * j].copy_from_slice(&lower[c * n..c * n + j]);
            }
            let lead = cholesky_lower(&mut lead, j).unwrap_or_else(|_| vec![T::zero(); j * j]);
            let mut factor = vec![T::zero(); n * n];
            for c in 0..j {
                factor[c * n..c * n + j].copy_from_slice(&lead[c * j..(c + 1) * j]);
            }
            ((j + 1) as i32, factor)
        }
    };
    for j in 0..n {
        for i in 0..n {
            let (r, c) = if upper { (j, i) } else { (i, j) };
            a[c * n + r] = if i < j {
                T::zero()
            } else if upper {
                done[j * n + i].conjugate()
            } else {
                done[j * n + i]
            };
        }
    }
    info
}

/// The lower Cholesky factor of the lower triangle of `a` (zeros above), or the index of the
/// first non-positive pivot.
fn cholesky_lower<T: Field>(a: &mut [T], n: usize) -> Result<Vec<T>, usize> {
    use faer::linalg::cholesky::llt::factor as llt;
    let par = par_for(n * n * n / 3);
    let req = llt::cholesky_in_place_scratch::<T>(n, par, Default::default());
    let mut mem = MemBuffer::new(req);
    let stack = MemStack::new(&mut mem);
    match llt::cholesky_in_place(
        view_mut(a, n, n),
        Default::default(),
        par,
        stack,
        Default::default(),
    ) {
        Ok(_) => {
            for j in 0..n {
                for v in &mut a[j * n..j * n + j] {
                    *v = T::zero();
                }
            }
            Ok(a.to_vec())
        }
        Err(llt::LltError::NonPositivePivot { index }) => Err(index),
    }
}

/// The Euclidean norm of `x`, scaled so that it neither overflows nor underflows.
fn norm2<T: Field>(x: &[T]) -> f64 {
    let big = x.iter().map(|v| {
        let (re, im) = v.parts();
        re.abs().max(im.abs())
    });
    let scale = big.fold(0.0f64, f64::max);
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    let sum: f64 = x
        .iter()
        .map(|v| {
            let (re, im) = v.parts();
            (re / scale).powi(2) + (im / scale).powi(2)
        })
        .sum();
    scale * sum.sqrt()
}

/// An elementary reflector `H = I - tau·v·vᴴ` (v[0] = 1) with `Hᴴ·(alpha; x) = (beta; 0)` and
/// `beta` real (LAPACK's `larfg`): overwrites `alpha` with `beta` and `x` with `v[1..]`, and
/// returns `tau` (0 when `x` is zero and `alpha` real: `H = I`).
fn reflector<T: Field>(alpha: &mut T, x: &mut [T]) -> T {
    let xnorm = norm2(x);
    let (ar, ai) = alpha.parts();
    if xnorm == 0.0 && ai == 0.0 {
        return T::zero();
    }
    let mag = ar.hypot(ai).hypot(xnorm);
    let beta = if ar >= 0.0 { -mag } else { mag };
    let tau = T::of_parts((beta - ar) / beta, -ai / beta);
    let scale = T::one() / (*alpha - T::of_parts(beta, 0.0));
    for v in x.iter_mut() {
        *v *= scale;
    }
    *alpha = T::of_parts(beta, 0.0);
    tau
}

/// The explicit reflector vectors `V` (rows `j0..m`, `nb` columns: ones on the diagonal, zeros
/// above) of block `j0..j0 + nb` of a packed QR, column-major with `m - j0` rows.
fn block_vectors<T: Field>(qr: &[T], m: usize, j0: usize, nb: usize) -> Vec<T> {
    let rows = m - j0;
    let mut v = vec![T::zero(); rows * nb];
    for c in 0..nb {
        let col = &mut v[c * rows..(c + 1) * rows];
        col[c] = T::one();
        let src = &qr[(j0 + c) * m + j0 + c + 1..(j0 + c + 1) * m];
        col[c + 1..].copy_from_slice(src);
    }
    v
}

/// The upper triangular `T` (`nb`×`nb`) with `H(0)·…·H(nb-1) = I - V·T·Vᴴ` (LAPACK's `larft`,
/// forward and column-wise).
fn block_factor<T: Field>(v: &[T], rows: usize, tau: &[T]) -> Vec<T> {
    let nb = tau.len();
    let mut t = vec![T::zero(); nb * nb];
    for i in 0..nb {
        t[i * nb + i] = tau[i];
        if i == 0 {
            continue;
        }
        // z = -tau_i · V[:, :i]ᴴ · v_i, then T[:i, i] = T[:i, :i] · z
        let vi = &v[i * rows..(i + 1) * rows];
        let z: Vec<T> = (0..i)
            .map(|r| {
                let vr = &v[r * rows..(r + 1) * rows];
                let dot = vr[i..]
                    .iter()
                    .zip(&vi[i..])
                    .fold(T::zero(), |acc, (&a, &b)| acc + a.conjugate() * b);
                -(tau[i] * dot)
            })
            .collect();
        for r in 0..i {
            let mut s = T::zero();
            for (c, &zc) in z.iter().enumerate().skip(r) {
                s += t[c * nb + r] * zc;
            }
            t[i * nb + r] = s;
        }
    }
    t
}

/// Applies `I - V·op(T)·Vᴴ` from the left to `c` (`rows`×`ncols`, a view), where `op` is the
/// conjugate transpose when `adjoint` (that is, applies `Qᴴ` of the block instead of `Q`).
fn apply_block<T: Field>(v: &[T], t: &[T], rows: usize, mut c: MatMut<'_, T>, adjoint: bool) {
    let nb = t.len().isqrt();
    let ncols = c.ncols();
    if ncols == 0 || nb == 0 {
        return;
    }
    let par = par_for(rows * ncols * nb);
    let v = view(v, rows, nb);
    let t = view(t, nb, nb);
    let mut w = vec![T::zero(); nb * ncols];
    let mut w = view_mut(&mut w, nb, ncols);
    matmul(w.rb_mut(), Accum::Replace, v.adjoint(), c.rb(), T::one(), par);
    let mut tw = vec![T::zero(); nb * ncols];
    let mut tw = view_mut(&mut tw, nb, ncols);
    if adjoint {
        matmul(tw.rb_mut(), Accum::Replace, t.adjoint(), w.rb(), T::one(), par);
    } else {
        matmul(tw.rb_mut(), Accum::Replace, t, w.rb(), T::one(), par);
    }
    matmul(c.rb_mut(), Accum::Add, v, tw.rb(), -T::one(), par);
}

/// QR factorization of an `m`×`n` matrix in place (LAPACK's `geqrf`): `R` on and above the
/// diagonal, the reflectors' vectors below it; returns `tau` (`min(m, n)` values), so that
/// `Q = H(0)·…·H(k-1)` with `H(i) = I - tau[i]·v_i·v_iᴴ`. `R`'s diagonal is real.
pub(crate) fn geqrf<T: Field>(a: &mut [T], m: usize, n: usize) -> Vec<T> {
    let k = m.min(n);
    let mut tau = vec![T::zero(); k];
    let mut j0 = 0;
    while j0 < k {
        let j1 = (j0 + BLOCK).min(k);
        for j in j0..j1 {
            let (head, tail) = a[j * m + j..(j + 1) * m].split_at_mut(1);
            let t = reflector(&mut head[0], tail);
            tau[j] = t;
            if t == T::zero() {
                continue;
            }
            // Hᴴ = I - conj(tau)·v·vᴴ on the panel's later columns.
            let (left, right) = a.split_at_mut((j + 1) * m);
            let v = &left[j * m + j..(j + 1) * m];
            let ct = t.conjugate();
            for c in j + 1..j1 {
                let col = &mut right[(c - j - 1) * m + j..(c - j) * m];
                let mut w = col[0];
                for (x, &vi) in col[1..].iter().zip(&v[1..]) {
                    w += vi.conjugate() * *x;
                }
                let f = ct * w;
                col[0] -= f;
                for (x, &vi) in col[1..].iter_mut().zip(&v[1..]) {
                    *x -= vi * f;
                }
            }
        }
        if j1 < n {
            let nb = j1 - j0;
            let v = block_vectors(a, m, j0, nb);
            let t = block_factor(&v, m - j0, &tau[j0..j1]);
            let mut whole = view_mut(a, m, n);
            let trailing = whole.rb_mut().submatrix_mut(j0, j1, m - j0, n - j1);
            apply_block(&v, &t, m - j0, trailing, true);
        }
        j0 = j1;
    }
    tau
}

/// The first `q` columns of `Q = H(0)·…·H(k-1)` from `geqrf`'s result (`qr`: `m`×`n`, `tau`:
/// `k = tau.len()` values), as an `m`×`q` matrix (LAPACK's `orgqr`/`ungqr`, with the reflectors
/// read from a matrix of `n` columns). Requires `k <= q <= m`. Fails with
/// [`Error::OutOfMemory`]: `Q` can be far larger than `qr` (`m`×`m` from an `m`×1 input).
pub(crate) fn orgqr<T: Field>(qr: &[T], m: usize, tau: &[T], q: usize) -> Result<Vec<T>, Error> {
    let k = tau.len();
    debug_assert!(k <= q && q <= m);
    let mut out = try_filled(m.saturating_mul(q), T::zero())?;
    for i in 0..q {
        out[i * m + i] = T::one();
    }
    // Q·E = H(0)·(H(1)·(…·E)): blocks from the last. Columns before a block's first row are
    // untouched by it (they are zero in the rows it changes).
    let starts: Vec<usize> = (0..k).step_by(BLOCK).collect();
    for &j0 in starts.iter().rev() {
        let j1 = (j0 + BLOCK).min(k);
        let v = block_vectors(qr, m, j0, j1 - j0);
        let t = block_factor(&v, m - j0, &tau[j0..j1]);
        let mut whole = view_mut(&mut out, m, q);
        let target = whole.rb_mut().submatrix_mut(j0, j0, m - j0, q - j0);
        apply_block(&v, &t, m - j0, target, false);
    }
    Ok(out)
}

/// The singular value decomposition `A = U·diag(s)·Vᴴ` of an `m`×`n` matrix: `U` (`m`×`m`),
/// `s` (`min(m, n)` values, non-increasing) and `Vᴴ` (`n`×`n`), or only `s` when `vectors` is
/// false (the matrices are then empty). `Ok(None)` if the iteration did not converge;
/// [`Error::OutOfMemory`] when `U`, `Vᴴ` (which can be far larger than `a`: `m`×`m` from an
/// `m`×1 input) or the working memory do not fit.
#[allow(clippy::type_complexity)]
pub(crate) fn gesvd<T: Field>(
    a: &[T],
    m: usize,
    n: usize,
    vectors: bool,
) -> Result<Option<(Vec<T>, Vec<T::Scalar>, Vec<T>)>, Error> {
    use faer::linalg::svd::{self, ComputeSvdVectors};
    let k = m.min(n);
    let (mut u, mut v, mut vt) = if vectors {
        let square = |d: usize| try_filled(d.saturating_mul(d), T::zero());
        (square(m)?, square(n)?, square(n)?)
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    let which = if vectors { ComputeSvdVectors::Full } else { ComputeSvdVectors::No };
    let par = par_for(m * n * k);
    let req = svd::svd_scratch::<T>(m, n, which, which, par, Default::default());
    let mut mem =
        MemBuffer::try_new(req).map_err(|_| Error::OutOfMemory { bytes: req.size_bytes() })?;
    let stack = MemStack::new(&mut mem);
    let mut s = vec![T::zero(); k];
    let s_view = faer::ColMut::from_slice_mut(&mut s).as_diagonal_mut();
    let (u_view, v_view) = if vectors {
        (Some(view_mut(&mut u, m, m)), Some(view_mut(&mut v, n, n)))
    } else {
        (None, None)
    };
    if svd::svd(view(a, m, n), s_view, u_view, v_view, par, stack, Default::default()).is_err() {
        return Ok(None);
    }
    let s: Vec<T::Scalar> = s.iter().map(|x| T::real_of(x.parts().0)).collect();
    // Vᴴ from V.
    if vectors {
        for j in 0..n {
            for i in 0..n {
                vt[i * n + j] = v[j * n + i].conjugate();
            }
        }
    }
    Ok(Some((u, s, vt)))
}

/// Panics for a type no factorization exists for (the public functions convert those).
fn not_float(t: DType) -> ! {
    unreachable!("internal error: factorization of {} data", t.name())
}

/// A copy of CPU data's elements, or [`Error::OutOfMemory`].
fn host_vec<T: Element>(d: &Dense) -> Result<Vec<T>, Error> {
    match d.data.buffer() {
        Buffer::Host(h) => {
            let n = d.dims.elements() as usize;
            try_copied(&h.as_slice::<T>()[d.data.offset..d.data.offset + n])
        }
        Buffer::Cuda(_) => unreachable!("internal error: device data on the CPU path"),
    }
}

/// The matrices of a batch one after another, or [`Error::OutOfMemory`]; a batch of one is
/// returned as it is, without a copy.
fn concat<T: Copy>(mut parts: Vec<Vec<T>>) -> Result<Vec<T>, Error> {
    if parts.len() == 1 {
        return Ok(parts.pop().expect("one part"));
    }
    let mut all = alloc_uninit(parts.iter().map(Vec::len).sum())?;
    for p in &parts {
        all.extend_from_slice(p);
    }
    Ok(all)
}

/// Runs `f` on each `size`-element matrix of `v`, in parallel over the matrices.
fn each<T: Send, R: Send>(
    v: &mut [T],
    size: usize,
    f: impl Fn(&mut [T]) -> R + Sync + Send,
) -> Vec<R> {
    if size == 0 {
        return Vec::new();
    }
    v.par_chunks_mut(size).map(f).collect()
}

/// The linear algebra family on host data: the functions above, run on each matrix of a
/// batch in parallel.
impl crate::backend::lapack::Lapack for super::Cpu {
    fn getrf(&self, a: &Dense) -> Result<(Dense, Dense, Vec<i32>), Error> {
        let (m, n, _) = shape(a);
        let k = m.min(n);
        with_float!(a.dtype, T => {
            let mut v = host_vec::<T>(a)?;
            let results = each(&mut v, m * n, |x| getrf(x, m, n));
            let mut ipiv = Vec::with_capacity(k * results.len());
            let mut info = Vec::with_capacity(results.len());
            for (p, i) in results {
                ipiv.extend(p);
                info.push(i);
            }
            let ipiv = Dense::from_host(ipiv, batched_dims(k, 1, a.dims));
            Ok((Dense::from_host(v, a.dims), ipiv, info))
        }, other => not_float(other))
    }

    fn getrs(&self, lu: &Dense, ipiv: &Dense, b: &Dense) -> Result<Dense, Error> {
        let (n, _, _) = shape(lu);
        let (_, nrhs, _) = shape(b);
        with_float!(lu.dtype, T => {
            let f = host_vec::<T>(lu)?;
            let p = host_vec::<i32>(ipiv)?;
            let mut x = host_vec::<T>(b)?;
            if n * nrhs > 0 {
                x.par_chunks_mut(n * nrhs).enumerate().for_each(|(i, xb)| {
                    getrs(&f[i * n * n..(i + 1) * n * n], &p[i * n..(i + 1) * n], xb, n, nrhs)
                });
            }
            Ok(Dense::from_host(x, b.dims))
        }, other => not_float(other))
    }

    fn potrf(&self, a: &Dense, upper: bool) -> Result<(Dense, Vec<i32>), Error> {
        let (n, _, _) = shape(a);
        with_float!(a.dtype, T => {
            let mut v = host_vec::<T>(a)?;
            let info = each(&mut v, n * n, |x| potrf(x, n, upper));
            Ok((Dense::from_host(v, a.dims), info))
        }, other => not_float(other))
    }

    fn geqrf(&self, a: &Dense) -> Result<(Dense, Dense), Error> {
        let (m, n, _) = shape(a);
        let k = m.min(n);
        with_float!(a.dtype, T => {
            let mut v = host_vec::<T>(a)?;
            let taus = each(&mut v, m * n, |x| geqrf(x, m, n));
            let tau: Vec<T> = taus.into_iter().flatten().collect();
            Ok((Dense::from_host(v, a.dims), Dense::from_host(tau, batched_dims(k, 1, a.dims))))
        }, other => not_float(other))
    }

    fn orgqr(&self, qr: &Dense, tau: &Dense, q: usize) -> Result<Dense, Error> {
        let (m, n, count) = shape(qr);
        let k = m.min(n);
        with_float!(qr.dtype, T => {
            let f = host_vec::<T>(qr)?;
            let t = host_vec::<T>(tau)?;
            let parts: Vec<Vec<T>> = (0..count)
                .into_par_iter()
                .map(|i| orgqr(&f[i * m * n..(i + 1) * m * n], m, &t[i * k..(i + 1) * k], q))
                .collect::<Result<_, Error>>()?;
            Ok(Dense::from_host(concat(parts)?, batched_dims(m, q, qr.dims)))
        }, other => not_float(other))
    }

    fn gesvd(&self, a: &Dense, vectors: bool) -> Result<Svd, Error> {
        let (m, n, count) = shape(a);
        let k = m.min(n);
        with_float!(a.dtype, T => {
            let v = host_vec::<T>(a)?;
            let parts: Vec<_> = (0..count)
                .into_par_iter()
                .map(|i| gesvd(&v[i * m * n..(i + 1) * m * n], m, n, vectors))
                .collect::<Result<_, Error>>()?;
            let mut u = Vec::new();
            let mut s: Vec<<T as Field>::Scalar> = Vec::with_capacity(k * count);
            let mut vt = Vec::new();
            for part in parts {
                let (pu, ps, pvt) = part.ok_or_else(|| {
                    Error::Driver(format!(
                        "the singular value decomposition of a {m}×{n} matrix did not converge"
                    ))
                })?;
                u.push(pu);
                s.extend(ps);
                vt.push(pvt);
            }
            let s = Dense::from_host(s, batched_dims(k, 1, a.dims));
            Ok(if vectors {
                Svd {
                    u: Some(Dense::from_host(concat(u)?, batched_dims(m, m, a.dims))),
                    s,
                    vt: Some(Dense::from_host(concat(vt)?, batched_dims(n, n, a.dims))),
                }
            } else {
                Svd { u: None, s, vt: None }
            })
        }, other => not_float(other))
    }

    fn trsm(
        &self,
        a: &Dense,
        b: &Dense,
        lower: bool,
        adjoint: bool,
        unit: bool,
    ) -> Result<Dense, Error> {
        let (n, _, _) = shape(a);
        let (_, nrhs, _) = shape(b);
        with_float!(a.dtype, T => {
            let f = host_vec::<T>(a)?;
            let mut x = host_vec::<T>(b)?;
            if n * nrhs > 0 {
                x.par_chunks_mut(n * nrhs).enumerate().for_each(|(i, xb)| {
                    trsm(&f[i * n * n..(i + 1) * n * n], xb, n, nrhs, lower, adjoint, unit)
                });
            }
            Ok(Dense::from_host(x, b.dims))
        }, other => not_float(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matmul_ref(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for j in 0..n {
            for l in 0..k {
                for i in 0..m {
                    c[j * m + i] += a[l * m + i] * b[j * k + l];
                }
            }
        }
        c
    }

    #[test]
    fn lu_of_a_singular_matrix_is_finite_and_reports_the_zero_pivot() {
        // Columns 0 and 1 equal: the second pivot is exactly zero.
        let mut a = vec![1.0f64, 2.0, 1.0, 2.0];
        let (ipiv, info) = getrf(&mut a, 2, 2);
        assert_eq!(ipiv, vec![2, 2]);
        assert_eq!(info, 2);
        assert!(a.iter().all(|x| x.is_finite()), "{a:?}");
    }

    #[test]
    fn blocked_lu_matches_the_unblocked_definition() {
        // 70 columns: three blocks, the last partial.
        let (m, n) = (75, 70);
        let a: Vec<f64> = (0..m * n).map(|i| ((i * 7919) % 101) as f64 - 50.0).collect();
        let mut f = a.clone();
        let (ipiv, info) = getrf(&mut f, m, n);
        assert_eq!(info, 0);
        let l: Vec<f64> = (0..m * n)
            .map(|i| {
                let (r, c) = (i % m, i / m);
                if r == c {
                    1.0
                } else if r > c {
                    f[i]
                } else {
                    0.0
                }
            })
            .collect();
        let u: Vec<f64> =
            (0..n * n).map(|i| if i % n <= i / n { f[(i / n) * m + i % n] } else { 0.0 }).collect();
        let mut pa = a.clone();
        for (j, &p) in ipiv.iter().enumerate() {
            swap_rows(&mut pa, m, j, p as usize - 1, 0..n);
        }
        let lu = matmul_ref(&l, &u, m, n, n);
        let err = lu.iter().zip(&pa).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        assert!(err < 1e-9, "max |PA - LU| = {err}");
    }

    #[test]
    fn reflectors_zero_the_tail_and_keep_the_norm() {
        let mut alpha = c64::new(3.0, 4.0);
        let mut x = vec![c64::new(0.0, 12.0)];
        let tau = reflector(&mut alpha, &mut x);
        assert!((alpha.re.abs() - 13.0).abs() < 1e-12 && alpha.im == 0.0);
        // Hᴴ·(3+4i, 12i) = (beta, 0) with H = I - tau·v·vᴴ, v = (1, x)
        let v = [c64::new(1.0, 0.0), x[0]];
        let y = [c64::new(3.0, 4.0), c64::new(0.0, 12.0)];
        let w = v[0].conj() * y[0] + v[1].conj() * y[1];
        let hy: Vec<c64> = (0..2).map(|i| y[i] - tau.conj() * v[i] * w).collect();
        assert!((hy[0] - alpha).norm() < 1e-12 && hy[1].norm() < 1e-12, "{hy:?}");
    }

    #[test]
    fn cholesky_failure_keeps_the_leading_factor() {
        // [[4, 2, 0], [2, 1, 0], [0, 0, 1]]: the second leading minor is zero.
        let mut a = vec![4.0f64, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let info = potrf(&mut a, 3, false);
        assert_eq!(info, 2);
        assert_eq!(a, vec![2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }
}
