//! What the graph knows of memory: that ready data lives in some backend's buffer, of some
//! length. The graph never looks inside; the backends, which own the one buffer type
//! (`backend::Buffer`), get it back through `Data::buffer`. This keeps the graph below the
//! backends: it holds their buffers without naming them.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A backend's buffer, as the graph holds it.
pub(crate) trait Memory: Any + fmt::Debug + Send + Sync {
    /// The buffer's length in bytes.
    fn byte_len(&self) -> usize;
    /// The buffer as `Any`, for its backend to see its own type.
    fn as_any(&self) -> &dyn Any;
    /// The buffer as `Any`, mutably (for a copy-on-write that finds it unshared).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The shared buffer as `Any`, for taking it out of its last reference.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}
