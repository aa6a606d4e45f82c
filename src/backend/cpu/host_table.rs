//! The CPU backend's records of host buffers that are not simply its own: buffers the user
//! locked (`Array::lock`, `device_ptr`), buffers adopted from the user
//! (`Array::new_from_device_ptr`) and buffers borrowed from another library (a DLPack import),
//! with the counters of host memory that `device_mem_info` reports. The CUDA memory manager
//! keeps the same facts in its blocks; host memory has no manager, so they are kept here, by
//! address, and a host buffer's drop asks [`release_host`] what becomes of it.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::backend::Buffer;
use crate::storage::HostVec;
use crate::sync;

/// Host buffers locked by the user and host buffers adopted from the user, by address of their
/// first element (the CPU backend has no memory manager to keep flags in), and the buffers
/// whose last array was dropped while locked: they are kept, not freed, so the user's pointer
/// stays valid and the address cannot be handed to another buffer (which would then look
/// locked).
///
/// Records are by address, so every address here must be memory emberfire holds (a live
/// buffer or an orphan): a record leaves the table before its memory is freed or goes back to
/// the user, never after, so an address the allocator hands out again has no record.
/// Buffers of no elements have no address of their own and are never recorded.
#[derive(Default)]
struct HostLocks {
    /// Address -> bytes of every locked buffer, orphaned or not.
    locked: HashMap<usize, usize>,
    orphans: HashMap<usize, HostVec>,
    /// Live buffers adopted with `new_from_device_ptr`: at their drop, a locked one goes back
    /// to the user instead of becoming an orphan.
    adopted: HashSet<usize>,
    /// Live buffers over memory borrowed from another library (a DLPack import), by address:
    /// never freed by emberfire; at their drop the vector is forgotten and its owner dropped
    /// (which hands the memory back to its producer). A list, because the same memory can be
    /// borrowed twice.
    borrowed: HashMap<usize, Vec<BorrowedHost>>,
    /// Owners of borrowed buffers whose last array was dropped while locked: kept with the
    /// orphan, for the user's pointer.
    kept_owners: Vec<Box<dyn Any + Send>>,
}

/// What keeps a borrowed host buffer alive, and whether its producer allows writes.
struct BorrowedHost {
    owner: Box<dyn Any + Send>,
    read_only: bool,
}

fn lock_table() -> std::sync::MutexGuard<'static, HostLocks> {
    static L: std::sync::OnceLock<Mutex<HostLocks>> = std::sync::OnceLock::new();
    sync::lock(L.get_or_init(Default::default))
}

/// How many records `locked` and `adopted` hold together: lets dropping a buffer skip the table
/// when both are empty. Changed only under the table's lock; read without it on a drop, which
/// sees every change made before the buffer's last reference went (`Arc`'s drop orders them).
static HOST_TRACKED: AtomicUsize = AtomicUsize::new(0);

/// Bytes and buffers of host memory locked by the user.
pub(crate) fn host_locked() -> (usize, usize) {
    let locks = lock_table();
    (locks.locked.values().sum(), locks.locked.len())
}

/// What becomes of a host buffer as its last reference drops (see [`release_host`]).
pub(crate) enum HostRelease {
    /// Not locked: the caller stops counting it and frees (or caches) it.
    Free(HostVec),
    /// Locked: kept for the user's pointer, and still counted, until the process ends.
    Kept,
    /// Adopted and locked: the user's again. It was not freed; the caller stops counting it.
    GivenBack,
}

/// Called as host buffer `h` is dropped: decides whether its memory is freed, kept for the
/// user's lock, or handed back to the user (adopted memory still locked).
pub(crate) fn release_host(h: HostVec) -> HostRelease {
    if HOST_TRACKED.load(Ordering::Acquire) == 0 || h.len() == 0 {
        return HostRelease::Free(h);
    }
    let mut table = lock_table();
    let addr = h.as_bytes().as_ptr() as usize;
    if let Some(b) = take_borrowed(&mut table, addr) {
        if table.locked.contains_key(&addr) {
            table.orphans.insert(addr, h);
            table.kept_owners.push(b.owner);
            return HostRelease::Kept;
        }
        // Not ours to free: forget the vector, then release the owner outside the table's lock
        // (its drop runs the producer's code, which may call back into emberfire).
        std::mem::forget(h);
        drop(table);
        drop(b.owner);
        return HostRelease::GivenBack;
    }
    let adopted = table.adopted.remove(&addr);
    if adopted {
        HOST_TRACKED.fetch_sub(1, Ordering::AcqRel);
    }
    if !table.locked.contains_key(&addr) {
        return HostRelease::Free(h);
    }
    if adopted {
        // The user's allocation again (a `Box<[T]>` they rebuild to free it): forget the
        // vector without freeing it, and the record with it, before the user can free the
        // memory and the allocator hand the address to another buffer.
        table.locked.remove(&addr);
        HOST_TRACKED.fetch_sub(1, Ordering::AcqRel);
        std::mem::forget(h);
        return HostRelease::GivenBack;
    }
    table.orphans.insert(addr, h);
    HostRelease::Kept
}

/// Removes one borrowed record at `addr`, if any.
fn take_borrowed(table: &mut HostLocks, addr: usize) -> Option<BorrowedHost> {
    let list = table.borrowed.get_mut(&addr)?;
    let b = list.pop();
    if list.is_empty() {
        table.borrowed.remove(&addr);
    }
    if b.is_some() {
        HOST_TRACKED.fetch_sub(1, Ordering::AcqRel);
    }
    b
}

/// A host buffer over `n` elements of `T` at `ptr` that another library owns: emberfire never
/// frees, grows or caches it; when the buffer drops, `owner` is dropped (on the thread that
/// drops the last array), unless the buffer is locked then. With `read_only`, emberfire never
/// writes it in place (see [`buffer_locked`]).
///
/// # Safety
///
/// `n > 0`; `ptr` is non-null, aligned for `T` and holds `n` initialised elements of `T`
/// (bools 0 or 1), valid while `owner` lives and not freed by anything else meanwhile.
pub(crate) unsafe fn borrow_host<T: crate::storage::Element>(
    ptr: *mut T,
    n: usize,
    owner: Box<dyn Any + Send>,
    read_only: bool,
) -> Buffer {
    debug_assert!(n > 0 && !ptr.is_null());
    // SAFETY: the caller vouches for `n` initialised, aligned elements. The vector is not from
    // Rust's allocator, which is why it must never reach it: `release_host` forgets it (never
    // drops it), and no code grows or shrinks a buffer's vector (buffers hold their final
    // length; outputs are new vectors).
    let v = unsafe { Vec::from_raw_parts(ptr, n, n) };
    let h = T::wrap(v);
    // Recorded before any array uses it, so the drop of the last one finds it.
    let mut table = lock_table();
    table.borrowed.entry(ptr as usize).or_default().push(BorrowedHost { owner, read_only });
    HOST_TRACKED.fetch_add(1, Ordering::AcqRel);
    drop(table);
    Buffer::host(h)
}

/// Records a user lock on the host buffer at `addr` of `bytes` bytes (`Array::lock`).
pub(crate) fn lock(addr: usize, bytes: usize) {
    let mut table = lock_table();
    if table.locked.insert(addr, bytes).is_none() {
        HOST_TRACKED.fetch_add(1, Ordering::AcqRel);
    }
}

/// Removes the user's lock on the host buffer at `addr`, if any (`Array::unlock`).
pub(crate) fn unlock(addr: usize) {
    let mut table = lock_table();
    if table.locked.remove(&addr).is_some() {
        HOST_TRACKED.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Records that the host buffer at `addr` was adopted from the user
/// (`Array::new_from_device_ptr`), so that its drop while locked gives it back.
pub(crate) fn adopt(addr: usize) {
    let mut table = lock_table();
    if table.adopted.insert(addr) {
        HOST_TRACKED.fetch_add(1, Ordering::AcqRel);
    }
}

/// Whether the user holds a lock on the host buffer at `addr`.
pub(crate) fn is_locked(addr: usize) -> bool {
    lock_table().locked.contains_key(&addr)
}

/// Whether the host buffer at `addr` (of `len` elements) is memory borrowed read-only from
/// another library (a DLPack import whose producer forbids writes).
pub(crate) fn is_read_only(addr: usize, len: usize) -> bool {
    if HOST_TRACKED.load(Ordering::Acquire) == 0 || len == 0 {
        return false;
    }
    lock_table().borrowed.get(&addr).is_some_and(|l| l.iter().any(|r| r.read_only))
}

/// Bytes and buffers of host memory that host buffers hold, as `device_mem_info` reports them.
pub(crate) fn counted() -> (usize, usize) {
    (HOST_BYTES.load(Ordering::Relaxed), HOST_BUFFERS.load(Ordering::Relaxed))
}

/// Bytes of host memory held by buffers, and their count: every `Buffer::Host` adds itself when
/// made (`Buffer::host`) and removes itself when freed or given back.
pub(crate) static HOST_BYTES: AtomicUsize = AtomicUsize::new(0);
/// See [`HOST_BYTES`].
pub(crate) static HOST_BUFFERS: AtomicUsize = AtomicUsize::new(0);
