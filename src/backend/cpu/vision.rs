//! The vision family (`backend::vision::Vision`) of the CPU backend: it has no fused search,
//! and the callers' array path runs instead.

use crate::backend::dense::Dense;
use crate::error::Error;

/// The vision family on the CPU: no fused path (`false`, `Ok(None)`).
impl crate::backend::vision::Vision for super::Cpu {
    fn fuses_nearest_ssd(&self) -> Result<bool, Error> {
        Ok(false)
    }

    fn nearest_ssd(&self, _query: &Dense, _train: &Dense) -> Result<Option<(Dense, Dense)>, Error> {
        Ok(None)
    }
}
