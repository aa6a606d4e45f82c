//! The ml family (`backend::ml::Ml`) of the CPU backend: it has no fast path for
//! convolutions, and the callers lower them to matrix products.

use crate::backend::dense::Dense;
use crate::backend::ml::{Geometry, Pass};
use crate::dtype::DType;
use crate::error::Error;

/// The ml family on the CPU: no fast path (`false`, `Ok(None)`).
impl crate::backend::ml::Ml for super::Cpu {
    fn may_run(&self, _dtype: DType) -> Result<bool, Error> {
        Ok(false)
    }

    fn run_convolution(
        &self,
        _pass: Pass,
        _a: &Dense,
        _b: &Dense,
        _g: &Geometry,
    ) -> Result<Option<Dense>, Error> {
        Ok(None)
    }
}
