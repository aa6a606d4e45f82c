//! `matmul` with a sparse left operand: `op(A) · B` for sparse `A` and dense `B`, on the
//! backends' own CSR kernels. A transposed product uses the CSR form of `Aᵀ`, which is the CSC
//! form of `A` read the other way round (one conversion, a sort).

use super::convert::to_format;
use super::{parts_of, SparseFormat};
use crate::array::Array;
use crate::backend::dense::Dense;
use crate::dtype::HasAfEnum;
use crate::error::Result;
use crate::jit::UnOp;
use crate::ops::blas::MatProp;
use crate::ops::build;

/// `op(lhs) · rhs` for a sparse `lhs`: dense, `op(lhs)`'s rows by `rhs`'s columns.
///
/// Panics (naming `func`) if `rhs` is sparse or batched, `optrhs` is not NONE, `optlhs` is not
/// NONE, TRANS or CTRANS, or the inner dimensions differ, as ArrayFire does.
pub(crate) fn product<T: HasAfEnum>(
    func: &str,
    lhs: &Array<T>,
    rhs: &Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
) -> Result<Array<T>> {
    assert!(
        !rhs.is_sparse(),
        "{func}: `rhs` must be dense when `lhs` is sparse (a product of two sparse arrays is \
         not supported)"
    );
    assert!(
        optrhs == MatProp::NONE,
        "{func}: `optrhs` must be NONE when `lhs` is sparse (got {optrhs:?})"
    );
    let transposed = match optlhs {
        MatProp::NONE => false,
        MatProp::TRANS | MatProp::CTRANS => true,
        other => panic!("{func}: `optlhs` {other:?} is not supported for a sparse `lhs` (use NONE, TRANS or CTRANS)"),
    };
    let (ld, rd) = (lhs.dims(), rhs.dims());
    assert!(
        rd[2] == 1 && rd[3] == 1,
        "{func}: a product with a sparse `lhs` takes no batches, but `rhs` has dims {rd}"
    );
    let (m, k) = if transposed { (ld[1], ld[0]) } else { (ld[0], ld[1]) };
    assert!(
        rd[0] == k,
        "{func}: inner dimensions differ: op(lhs) is {m} x {k} (lhs dims {ld}, {optlhs:?}) and \
         rhs has dims {rd}"
    );
    // A CSC matrix's parts are only ever read here as the CSR form of its transpose, and a
    // CSR matrix's as itself, so what a product keeps with the parts (`memo`) is always of
    // the same matrix; a conjugated transpose reads other values and keeps nothing.
    let conjugate = optlhs == MatProp::CTRANS && T::DTYPE.is_complex();
    let p = parts_of(
        func,
        &to_format(func, lhs, if transposed { SparseFormat::CSC } else { SparseFormat::CSR }),
    );
    let values = Array::<T>::from_node(p.values.clone());
    let (values, offsets, indices) = if transposed {
        let v = if conjugate {
            build::unary::<T>("matmul", UnOp::Conjg, values.node())
        } else {
            values
        };
        (v, &p.cols, &p.rows)
    } else {
        (values, &p.rows, &p.cols)
    };
    let out = values.node().backend.ops().csr_matmul(
        &Dense::of(values.node())?,
        &Dense::of(offsets)?,
        &Dense::of(indices)?,
        m,
        &Dense::of(rhs.node())?,
        (!conjugate).then_some(&p.memo),
    )?;
    Ok(Array::from_node(out.into_node()))
}
