//! The scan family. The CPU scans fused with the producer of its input (`cpu::scan`): the
//! values (converted to the output type) and the keys are outputs of one program evaluated
//! chunk by chunk. CUDA evaluates a lazy input first and runs handwritten kernels on the
//! evaluated data (`cuda::scan`), reading views in place.

use std::sync::Arc;

use super::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Node;

/// The operation of a generalised scan ([`scan`](crate::scan),
/// [`scan_by_key`](crate::scan_by_key)), as in arrayfire-rust.
///
/// ```
/// use emberfire::{dim4, scan, Array, BinaryOp};
/// let a = Array::new(&[3i32, 1, 4, 1, 5], dim4!(5));
/// assert_eq!(scan(&a, 0, BinaryOp::MAX, true).to_vec(), vec![3, 3, 4, 4, 5]);
/// assert_eq!(BinaryOp::from(1u32), BinaryOp::MUL);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum BinaryOp {
    /// Addition: running sums.
    ADD = 0,
    /// Multiplication: running products.
    MUL = 1,
    /// Minimum: running minima (NaN ignored).
    MIN = 2,
    /// Maximum: running maxima (NaN ignored).
    MAX = 3,
}

impl From<u32> for BinaryOp {
    /// ArrayFire's numbering: 0 `ADD`, 1 `MUL`, 2 `MIN`, 3 `MAX`. Panics on other values
    /// (arrayfire-rust reinterprets them, which is undefined behaviour).
    fn from(t: u32) -> Self {
        match t {
            0 => BinaryOp::ADD,
            1 => BinaryOp::MUL,
            2 => BinaryOp::MIN,
            3 => BinaryOp::MAX,
            _ => panic!("BinaryOp::from: {t} is not 0 (ADD), 1 (MUL), 2 (MIN) or 3 (MAX)"),
        }
    }
}

/// What a scan computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScanSpec {
    pub op: BinaryOp,
    /// The dimension scanned along, 0 to 3.
    pub dim: usize,
    pub inclusive: bool,
}

/// Scans on one backend.
pub(crate) trait Scan {
    /// Scans `values` along `spec.dim` into a new dense buffer of `out` elements of this
    /// backend, restarting wherever `keys` (same shape, an integer type) changes.
    fn scan(
        &self,
        values: &Arc<Node>,
        keys: Option<&Arc<Node>>,
        spec: ScanSpec,
        out: DType,
    ) -> Result<Buffer, Error>;

    /// The summed-area table of each image of `values` (dimensions 2 and 3 are batches):
    /// running sums along dimensions 0 and 1, in `out` elements of this backend, with the
    /// rules of [`scan`](crate::scan)'s `ADD`. By default two scans, the second over the
    /// first's result.
    fn summed_area(&self, values: &Arc<Node>, out: DType) -> Result<Buffer, Error> {
        summed_area_by_scans(self, values, out)
    }
}

/// A summed-area table as two inclusive sums, along dimension 0, then along dimension 1 of
/// that result.
pub(crate) fn summed_area_by_scans<S: Scan + ?Sized>(
    backend: &S,
    values: &Arc<Node>,
    out: DType,
) -> Result<Buffer, Error> {
    let along = |dim| ScanSpec { op: BinaryOp::ADD, dim, inclusive: true };
    let rows = backend.scan(values, None, along(0), out)?;
    let dims = values.dims;
    let rows = Node::ready(out, dims, values.backend, crate::jit::Data::dense(rows, dims));
    backend.scan(&rows, None, along(1), out)
}
