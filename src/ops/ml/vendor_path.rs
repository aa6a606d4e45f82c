//! The vendor-library path of the convolutions: the way into the backends' fast paths (the
//! `Ml` family of `backend::ml`, cuDNN on CUDA): the operands evaluated into dense memory, the
//! result wrapped as an array, and `None` where no fast path runs (then the callers lower the
//! convolution to matrix products).

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::ml::{result_dims, Geometry, Pass};
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;

use super::ConvGradientType;

fn run<T: HasAfEnum>(
    func: &str,
    pass: Pass,
    a: &Array<T>,
    b: &Array<T>,
    g: &Geometry,
) -> Option<Array<T>> {
    if !a.node().backend.ops().may_run(T::DTYPE).or_raise(func) {
        return None;
    }
    let a = Dense::of(a.node()).or_raise(func);
    let b = Dense::of(b.node()).or_raise(func);
    let out = a.backend.ops().run_convolution(pass, &a, &b, g).or_raise(func)?;
    debug_assert_eq!(out.dims, result_dims(pass, g));
    Some(Array::from_node(out.into_node()))
}

/// The forward pass on a fast path, if one runs.
pub(super) fn forward<T: HasAfEnum>(
    func: &str,
    signal: &Array<T>,
    filter: &Array<T>,
    g: &Geometry,
) -> Option<Array<T>> {
    run(func, Pass::Forward, signal, filter, g)
}

/// The data (`DATA`, `DEFAULT`) or filter (`FILTER`) gradient on a fast path, if one runs.
pub(super) fn gradient<T: HasAfEnum>(
    func: &str,
    dy: &Array<T>,
    signal: &Array<T>,
    filter: &Array<T>,
    g: &Geometry,
    grad_type: ConvGradientType,
) -> Option<Array<T>> {
    match grad_type {
        ConvGradientType::FILTER => run(func, Pass::Filter, dy, signal, g),
        ConvGradientType::BIAS => None,
        ConvGradientType::DATA | ConvGradientType::DEFAULT => run(func, Pass::Data, dy, filter, g),
    }
}
