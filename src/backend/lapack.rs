//! The linear algebra family: the factorizations of the linear algebra functions as one
//! trait, [`Lapack`], implemented by `cpu::Cpu` (in `cpu/lapack.rs`: LU and QR of emberfire's
//! own, faer for the rest) and by `cuda::Cuda` (in `cuda/lapack.rs`: cuSOLVER and cuBLAS).
//! Callers pick the backend of their operands: `a.backend.ops().getrf(a)`.
//!
//! Each primitive takes dense, column-major data of f32, f64, c32 or c64 whose dimensions 2
//! and 3 are a batch of matrices, leaves its inputs untouched and returns new data on the same
//! backend, in LAPACK's conventions (1-based `ipiv`, packed LU and QR, `tau`, `info`). The
//! public functions in `ops::lapack` compose them with the graph's operations.
//!
//! On CUDA, when cuSOLVER (or cuBLAS, for triangular solves) cannot be loaded, the data goes
//! through the host to the CPU code and back, after one note on standard error: slower, never
//! a failure. That fallback lives in the CUDA implementation (`cuda/lapack.rs`), which
//! downloads the operands, calls `cpu::Cpu`'s method of this trait and uploads the results.

use super::dense::Dense;
use crate::dim4::Dim4;
use crate::error::Error;

/// Rows, columns and the number of matrices of dense data.
pub(crate) fn shape(d: &Dense) -> (usize, usize, usize) {
    let s = d.shape();
    (s[0], s[1], s[2] * s[3])
}

/// The dims of `rows`×`cols` matrices batched like `like`.
pub(crate) fn batched_dims(rows: usize, cols: usize, like: Dim4) -> Dim4 {
    Dim4::new(&[rows as u64, cols as u64, like[2], like[3]])
}

/// The parts of a batched singular value decomposition: `U` and `Vᴴ` (when asked for) and the
/// singular values in the real type.
pub(crate) struct Svd {
    pub u: Option<Dense>,
    pub s: Dense,
    pub vt: Option<Dense>,
}

/// Batched dense factorizations and solves on one backend. Every method returns new data on
/// `self`'s backend, batched like its operands (dimensions 2 and 3).
pub(crate) trait Lapack {
    /// LU factorization with partial pivoting of each matrix (`getrf`): the packed factors, the
    /// 1-based pivots (i32, `min(m, n)` per matrix) and `info` per matrix.
    fn getrf(&self, a: &Dense) -> Result<(Dense, Dense, Vec<i32>), Error>;

    /// Solves `A·X = B` for each square `A` from its `getrf` factors (`getrs`).
    fn getrs(&self, lu: &Dense, ipiv: &Dense, b: &Dense) -> Result<Dense, Error>;

    /// Cholesky factorization of each matrix (`potrf`, from the `upper` or lower triangle) and
    /// `info` per matrix. The CPU code zeroes the other triangle (and, on failure, all but the
    /// leading factor); cuSOLVER leaves them as they were, so callers mask them.
    fn potrf(&self, a: &Dense, upper: bool) -> Result<(Dense, Vec<i32>), Error>;

    /// QR factorization of each matrix (`geqrf`): the packed result and `tau` (`min(m, n)` per
    /// matrix).
    fn geqrf(&self, a: &Dense) -> Result<(Dense, Dense), Error>;

    /// The first `q` columns of each `Q` from `geqrf`'s result (`orgqr`/`ungqr`); requires
    /// `min(m, n) <= q <= m`.
    fn orgqr(&self, qr: &Dense, tau: &Dense, q: usize) -> Result<Dense, Error>;

    /// The singular value decomposition of each matrix (`gesvd`): `U` (`m`×`m`), `s`
    /// (`min(m, n)` values, non-increasing, real) and `Vᴴ` (`n`×`n`), the matrices only when
    /// `vectors`.
    fn gesvd(&self, a: &Dense, vectors: bool) -> Result<Svd, Error>;

    /// Solves `op(A)·X = B` for each triangular `A` (`n`×`n`, its `lower` or upper triangle
    /// read), `op` the conjugate transpose when `adjoint`, with a unit diagonal when `unit`
    /// (`trsm`).
    fn trsm(
        &self,
        a: &Dense,
        b: &Dense,
        lower: bool,
        adjoint: bool,
        unit: bool,
    ) -> Result<Dense, Error>;
}
