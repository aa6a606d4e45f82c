//! Where sparse matrices' kernels run: the four primitives that `ops::sparse` builds
//! conversions and products from, dispatched to the CPU kernels (`cpu::sparse`) or the CUDA
//! ones (`cuda::sparse`). Every argument is [`Dense`] data (contiguous vectors or matrices);
//! values are one of the four floating types, indices and offsets i32, and every index was
//! checked against the matrix's shape before it gets here.

use super::cpu::sparse as cpu;
use super::{cuda, BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

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

/// The elements of CPU data as a slice (values or i32 indices).
fn host<T: crate::storage::Element>(d: &Dense) -> &[T] {
    match &*d.data.buf {
        Buffer::Host(h) => {
            let n = d.dims.elements() as usize;
            &h.as_slice::<T>()[d.data.offset..d.data.offset + n]
        }
        Buffer::Cuda(_) => unreachable!("internal error: device data on the CPU path"),
    }
}

fn host_dense<T: crate::storage::Element>(v: Vec<T>, dims: Dim4) -> Dense {
    Dense::new(Buffer::host(T::wrap(v)), dims, T::DTYPE, BackendKind::Cpu)
}

fn vector(n: u64) -> Dim4 {
    Dim4::new(&[n, 1, 1, 1])
}

/// Offsets of `sorted` (ascending i32 indices into `0..n`): `n + 1` i32s, offset `k` being the
/// number of indices below `k`.
pub(crate) fn compress(sorted: &Dense, n: u64) -> Result<Dense, Error> {
    match sorted.backend {
        BackendKind::Cpu => {
            Ok(host_dense(cpu::compress(host::<i32>(sorted), n as usize), vector(n + 1)))
        }
        BackendKind::Cuda(d) => cuda::sparse::compress(d, sorted, n),
    }
}

/// The index of each of `nnz` values from `offsets` (the inverse of [`compress`]).
pub(crate) fn expand(offsets: &Dense, nnz: u64) -> Result<Dense, Error> {
    match offsets.backend {
        BackendKind::Cpu => {
            Ok(host_dense(cpu::expand(host::<i32>(offsets), nnz as usize), vector(nnz)))
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
        BackendKind::Cpu => Ok(with_value!(values.dtype, S => host_dense(
            cpu::scatter::<S>(host(values), host::<i32>(rows), host::<i32>(cols), m as usize, n as usize),
            Dim4::new(&[m, n, 1, 1]),
        ))),
        BackendKind::Cuda(d) => cuda::sparse::scatter(d, values, rows, cols, (m, n)),
    }
}

/// `A · rhs` for the CSR matrix `A` of `m` rows (`values`, `offsets`, column `indices`) and a
/// dense `rhs` whose rows are `A`'s columns: dense, `m` by `rhs`'s columns.
pub(crate) fn csr_matmul(
    values: &Dense,
    offsets: &Dense,
    indices: &Dense,
    m: u64,
    rhs: &Dense,
) -> Result<Dense, Error> {
    match values.backend {
        BackendKind::Cpu => Ok(with_value!(values.dtype, S => host_dense(
            cpu::csr_matmul::<S>(
                host(values), host::<i32>(offsets), host::<i32>(indices), m as usize, host(rhs),
                [rhs.dims[0] as usize, rhs.dims[1] as usize],
            )?,
            Dim4::new(&[m, rhs.dims[1], 1, 1]),
        ))),
        BackendKind::Cuda(d) => cuda::sparse::csr_matmul(d, values, offsets, indices, m, rhs),
    }
}
