//! The one rule for emberfire's locks: a lock poisoned by a thread that panicked while holding
//! it is taken over, not propagated.
//!
//! Every table behind these locks (kernel caches, memory pools, lock records) is changed by
//! single inserts, removals or field updates that leave it consistent at every point where a
//! panic could happen, so the data a panicking thread leaves behind is valid; propagating the
//! poison would instead turn one failed operation into a failure of every later one.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `m`, taking the lock over if it is poisoned.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `l` for reading, taking the lock over if it is poisoned.
pub(crate) fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `l` for writing, taking the lock over if it is poisoned.
pub(crate) fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_over_with_its_data() {
        let m = Mutex::new(vec![1, 2]);
        let l = RwLock::new(3);
        let _ = std::thread::scope(|s| {
            s.spawn(|| {
                let mut v = m.lock().unwrap();
                v.push(3);
                let _w = l.write().unwrap();
                panic!("poison both");
            })
            .join()
        });
        assert!(m.is_poisoned() && l.is_poisoned());
        assert_eq!(*lock(&m), vec![1, 2, 3]);
        assert_eq!(*read(&l), 3);
        *write(&l) = 4;
        assert_eq!(*read(&l), 4);
    }
}
