//! Where sparse matrices' kernels run: the four primitives that `ops::sparse` builds
//! conversions and products from, dispatched to the CPU kernels (`cpu::sparse`) or the CUDA
//! ones (`cuda::sparse`). Every argument is [`Dense`] data (contiguous vectors or matrices);
//! values are one of the four floating types, indices and offsets i32, and every index was
//! checked against the matrix's shape before it gets here.

use super::cpu::sparse as cpu;
use super::cpu::sparse_diagonals::Diagonals;
use super::{cuda, BackendKind};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::sparse::ProductMemo;

pub(crate) use super::dense::Dense;

/// Runs `$body` with `$S` bound to the Rust type of one of the four floating `DType`s.
macro_rules! with_value {
    ($dt:expr, $S:ident => $body:expr) => {{
        match $dt {
            DType::F32 => {
                type $S = f32;
                $body
            }
            DType::F64 => {
                type $S = f64;
                $body
            }
            DType::C32 => {
                type $S = crate::dtype::c32;
                $body
            }
            DType::C64 => {
                type $S = crate::dtype::c64;
                $body
            }
            other => unreachable!("internal error: sparse kernel for {}", other.name()),
        }
    }};
}

fn vector(n: u64) -> Dim4 {
    Dim4::new(&[n, 1, 1, 1])
}

/// Offsets of `sorted` (ascending i32 indices into `0..n`): `n + 1` i32s, offset `k` being the
/// number of indices below `k`.
pub(crate) fn compress(sorted: &Dense, n: u64) -> Result<Dense, Error> {
    match sorted.backend {
        BackendKind::Cpu => {
            Ok(Dense::from_host(cpu::compress(sorted.host::<i32>(), n as usize), vector(n + 1)))
        }
        BackendKind::Cuda(d) => cuda::sparse::compress(d, sorted, n),
    }
}

/// The index of each of `nnz` values from `offsets` (the inverse of [`compress`]).
pub(crate) fn expand(offsets: &Dense, nnz: u64) -> Result<Dense, Error> {
    match offsets.backend {
        BackendKind::Cpu => {
            Ok(Dense::from_host(cpu::expand(offsets.host::<i32>(), nnz as usize), vector(nnz)))
        }
        BackendKind::Cuda(d) => cuda::sparse::expand(d, offsets, nnz),
    }
}

/// The dense `m x n` matrix holding `values` at (`rows`, `cols`), zero elsewhere; values at
/// the same position add up.
pub(crate) fn scatter(
    values: &Dense,
    rows: &Dense,
    cols: &Dense,
    (m, n): (u64, u64),
) -> Result<Dense, Error> {
    match values.backend {
        BackendKind::Cpu => Ok(with_value!(values.dtype, S => Dense::from_host(
            cpu::scatter::<S>(values.host(), rows.host::<i32>(), cols.host::<i32>(), m as usize, n as usize),
            Dim4::new(&[m, n, 1, 1]),
        ))),
        BackendKind::Cuda(d) => cuda::sparse::scatter(d, values, rows, cols, (m, n)),
    }
}

/// `A · rhs` for the CSR matrix `A` of `m` rows (`values`, `offsets`, column `indices`) and a
/// dense `rhs` whose rows are `A`'s columns: dense, `m` by `rhs`'s columns. `memo` is the
/// matrix's own (`None` when the values are not the matrix's as stored, so that nothing is
/// kept for them).
pub(crate) fn csr_matmul(
    values: &Dense,
    offsets: &Dense,
    indices: &Dense,
    m: u64,
    rhs: &Dense,
    memo: Option<&ProductMemo>,
) -> Result<Dense, Error> {
    match values.backend {
        BackendKind::Cpu => Ok(with_value!(values.dtype, S => {
            let (k, n) = (rhs.dims[0] as usize, rhs.dims[1] as usize);
            let (v, o, c) = (values.host::<S>(), offsets.host::<i32>(), indices.host::<i32>());
            let laid = memo.and_then(|memo| {
                memo.kept(|| Diagonals::of_csr(v, o, c, (m as usize, k)))
            });
            let out = match laid {
                Some(d) => d.product::<S>(rhs.host(), n)?,
                None => cpu::csr_matmul::<S>(v, o, c, m as usize, rhs.host(), [k, n])?,
            };
            Dense::from_host(out, Dim4::new(&[m, rhs.dims[1], 1, 1]))
        })),
        BackendKind::Cuda(d) => cuda::sparse::csr_matmul(d, values, offsets, indices, m, rhs),
    }
}
