//! A raw pointer that tasks on rayon's threads share to write disjoint positions of one buffer.

/// A raw pointer that may cross to other threads. Every use writes positions that no other
/// task touches while the buffer outlives the parallel work (each use says why).
#[derive(Clone, Copy)]
pub(super) struct SharedPtr<T>(pub(super) *mut T);

// SAFETY: see the type's comment; the pointer itself is only copied between threads.
unsafe impl<T> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer (a method, so that closures capture the whole `SharedPtr`, which is `Send`,
    /// rather than its field, which is not).
    #[inline(always)]
    pub(super) fn get(self) -> *mut T {
        self.0
    }
}
