//! placeholder
use super::super::dense::Dense;
use crate::backend::ml::{Geometry, Pass};
use crate::error::Error;

pub(crate) fn enabled() -> bool {
    false
}

pub(crate) fn run(
    _ordinal: usize,
    _pass: Pass,
    _a: &Dense,
    _b: &Dense,
    _g: &Geometry,
) -> Result<Option<Dense>, Error> {
    Ok(None)
}
