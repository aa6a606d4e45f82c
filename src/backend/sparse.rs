//! The sparse family: the four primitives that `ops::sparse` builds conversions and products
//! from, as one trait, [`Sparse`], implemented by `cpu::Cpu` (in `cpu/sparse.rs`, the laid-out
//! product of `cpu/sparse_diagonals.rs`) and by `cuda::Cuda` (in `cuda/sparse.rs`). Callers
//! pick the backend of their operands: `values.backend.ops().scatter(...)`.
//!
//! Every argument is [`Dense`] data (contiguous vectors or matrices); values are one of the
//! four floating types, indices and offsets i32, and every index was checked against the
//! matrix's shape before it gets here. Results are new data on the operands' backend.

use crate::error::Error;
use crate::jit::sparse::ProductMemo;

pub(crate) use super::dense::Dense;

/// Sparse matrix kernels on one backend.
pub(crate) trait Sparse {
    /// Offsets of `sorted` (ascending i32 indices into `0..n`): `n + 1` i32s, offset `k` being
    /// the number of indices below `k`.
    fn compress(&self, sorted: &Dense, n: u64) -> Result<Dense, Error>;

    /// The index (i32) of each of `nnz` values from `offsets`, a vector of `nnz` (the inverse
    /// of [`Sparse::compress`]).
    fn expand(&self, offsets: &Dense, nnz: u64) -> Result<Dense, Error>;

    /// The dense `m x n` matrix holding `values` at (`rows`, `cols`), zero elsewhere; values
    /// at the same position add up.
    fn scatter(
        &self,
        values: &Dense,
        rows: &Dense,
        cols: &Dense,
        shape: (u64, u64),
    ) -> Result<Dense, Error>;

    /// `A · rhs` for the CSR matrix `A` of `m` rows (`values`, `offsets`, column `indices`)
    /// and a dense `rhs` whose rows are `A`'s columns: dense, `m` by `rhs`'s columns. `memo`
    /// is the matrix's own (`None` when the values are not the matrix's as stored, so that
    /// nothing is kept for them); a backend may keep a layout of the matrix there (the CPU
    /// does) or ignore it (CUDA).
    fn csr_matmul(
        &self,
        values: &Dense,
        offsets: &Dense,
        indices: &Dense,
        m: u64,
        rhs: &Dense,
        memo: Option<&ProductMemo>,
    ) -> Result<Dense, Error>;
}
