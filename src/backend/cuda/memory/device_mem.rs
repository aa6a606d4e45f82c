//! The handle of one block of device memory: where it came from, the user's lock, and what
//! dropping it does (back to the cache, freed, or its owner released; kept while locked).

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::allocator::DeviceAllocator;
use super::pool::{lock_state, recycle, MemoryManager, Pool};
use super::stream_order::{synchronize_streams, StreamId};
use crate::sync::lock;

/// Memory whose `DeviceMem` was dropped while locked; kept until `unlock_ptr`.
///
/// Only memory emberfire keeps allocated becomes an orphan: a pool block (held from its
/// allocator) or borrowed memory (whose owner the orphan keeps alive). So while an orphan is
/// recorded at an address, nothing else can be allocated there, and `unlock_ptr` of that
/// address cannot reach memory that has changed hands. Adopted memory is never an orphan: it
/// goes back to the user (see [`DeviceMem`]).
pub(super) struct Orphan {
    bytes: usize,
    home: StreamId,
    others: Vec<StreamId>,
    kind: OrphanKind,
}

pub(super) enum OrphanKind {
    Pool {
        size: usize,
        allocator: Arc<dyn DeviceAllocator>,
    },
    /// Borrowed memory keeps its owner while locked: an owner that frees the memory when
    /// dropped (a `CudaSlice`, say) must not free it under the user.
    Borrowed {
        owner: Arc<dyn Any + Send + Sync>,
        read_only: bool,
    },
}

/// Where a `DeviceMem`'s memory came from, which decides what its drop does.
pub(super) enum Origin {
    /// Zero bytes: no memory at all (the pointer is 0).
    Empty,
    /// A pool block of `size` bytes from `allocator`; returns to the cache.
    Pool { size: usize, allocator: Arc<dyn DeviceAllocator> },
    /// Foreign `cuMemAlloc` memory we own; freed with the driver.
    Adopted,
    /// Foreign memory we do not own; dropping releases `owner`. With `read_only`, its producer
    /// forbids writes, and emberfire never writes it in place.
    Borrowed { owner: Arc<dyn Any + Send + Sync>, read_only: bool },
    /// Already handed on by `drop`.
    Gone,
}

/// A block of device memory: a device address, its size and its device.
///
/// Dropping it unlocked returns pool memory to the cache, frees adopted memory and releases
/// borrowed memory's owner. Dropping it locked keeps pool and borrowed memory for the user
/// until [`MemoryManager::unlock_ptr`], and hands adopted memory back to the user: emberfire
/// waits for its own work on it, then forgets it (frees nothing, counts nothing, records
/// nothing). That is ArrayFire's interop pattern, where an application adopts a buffer it
/// keeps owning and locks the array so that the library does not free it; the application
/// frees the buffer later, and the driver may then give its address to anything else, so no
/// record of it may remain here. The caller must have queued every use of the memory (on the
/// streams it was marked used on) before dropping it.
pub(crate) struct DeviceMem {
    ptr: u64,
    bytes: usize,
    pub(super) home: StreamId,
    others: Mutex<Vec<StreamId>>,
    locked: AtomicBool,
    origin: Origin,
    pool: Arc<Pool>,
}

impl fmt::Debug for DeviceMem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.origin {
            Origin::Empty => "empty",
            Origin::Pool { .. } => "pool",
            Origin::Adopted => "adopted",
            Origin::Borrowed { .. } => "borrowed",
            Origin::Gone => "gone",
        };
        f.debug_struct("DeviceMem")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("bytes", &self.bytes)
            .field("device", &self.pool.ordinal)
            .field("kind", &kind)
            .field("locked", &self.is_locked())
            .finish()
    }
}

impl MemoryManager {
    /// Takes ownership of device memory allocated with `cuMemAlloc` (in this device's primary
    /// context). It is freed with `cuMemFree` when the returned `DeviceMem` drops unlocked,
    /// exactly once, and never enters the cache. If it is locked when it drops, it goes back to
    /// the user instead: emberfire waits for its work on it and forgets it, freeing nothing.
    ///
    /// # Safety
    ///
    /// `ptr..ptr + bytes` is device memory on this device that nothing else frees while the
    /// returned `DeviceMem` lives, nor after it drops unlocked; unless the `DeviceMem` is
    /// locked when it drops, `ptr` is the start of a live `cuMemAlloc` allocation (freed then).
    /// Work already queued on it is ordered before this thread's current stream (or has
    /// completed).
    pub(crate) unsafe fn adopt(&self, ptr: u64, bytes: usize) -> DeviceMem {
        self.wrap(ptr, bytes, self.current_stream(), Origin::Adopted)
    }

    /// Wraps device memory owned by someone else; `owner` is kept alive until the returned
    /// `DeviceMem` drops, and the memory is never freed by emberfire (nor written in place, if
    /// `read_only`: the producer forbids writes). Before `owner` is
    /// released, the streams that used the memory are synchronised, so an owner that frees the
    /// memory when dropped cannot free it under a running kernel.
    ///
    /// # Safety
    ///
    /// `ptr..ptr + bytes` is device memory on this device that stays valid while `owner` is
    /// alive, and work already queued on it is ordered before this thread's current stream.
    pub(crate) unsafe fn borrow(
        &self,
        ptr: u64,
        bytes: usize,
        owner: Arc<dyn Any + Send + Sync>,
        read_only: bool,
    ) -> DeviceMem {
        self.wrap(ptr, bytes, self.current_stream(), Origin::Borrowed { owner, read_only })
    }

    pub(super) fn wrap(&self, ptr: u64, bytes: usize, home: StreamId, origin: Origin) -> DeviceMem {
        self.pool.live_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.pool.live_buffers.fetch_add(1, Ordering::Relaxed);
        DeviceMem {
            ptr,
            bytes,
            home,
            others: Mutex::new(Vec::new()),
            locked: AtomicBool::new(false),
            origin,
            pool: self.pool.clone(),
        }
    }

    /// Releases memory whose `DeviceMem` was dropped while locked: pool memory returns to the
    /// cache, borrowed memory's owner is released (every record at `ptr`: memory borrowed
    /// twice there has two). Returns whether `ptr` was such memory. Adopted memory dropped
    /// while locked went back to the user and is not found here.
    pub(crate) fn unlock_ptr(&self, ptr: u64) -> bool {
        let orphans = lock_state(&self.pool).orphans.remove(&ptr);
        let Some(orphans) = orphans else { return false };
        for o in orphans {
            self.release_orphan(ptr, o);
        }
        true
    }

    fn release_orphan(&self, ptr: u64, o: Orphan) {
        self.pool.locked_bytes.fetch_sub(o.bytes, Ordering::Relaxed);
        self.pool.locked_buffers.fetch_sub(1, Ordering::Relaxed);
        let origin = match o.kind {
            OrphanKind::Pool { size, allocator } => Origin::Pool { size, allocator },
            OrphanKind::Borrowed { owner, read_only } => Origin::Borrowed { owner, read_only },
        };
        // Rebuild the (unlocked) handle and let its drop do the rest; the live counters still
        // include this memory, so do not count it again.
        drop(DeviceMem {
            ptr,
            bytes: o.bytes,
            home: o.home,
            others: Mutex::new(o.others),
            locked: AtomicBool::new(false),
            origin,
            pool: self.pool.clone(),
        });
    }
}

impl DeviceMem {
    /// The device address (0 for an empty allocation).
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The size in bytes that was asked for (the block behind it may be larger).
    pub(crate) fn len(&self) -> usize {
        self.bytes
    }

    /// Whether this holds no bytes.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The CUDA ordinal of the device the memory is on.
    pub(crate) fn ordinal(&self) -> usize {
        self.pool.ordinal
    }

    /// The stream the memory was allocated for.
    pub(crate) fn home_stream(&self) -> StreamId {
        self.home
    }

    /// Records that work on `stream` uses this memory, so that a later reuse on another
    /// stream waits for it. Needed only for streams other than the one it was allocated for.
    /// `stream` must still exist when this `DeviceMem` drops (an event is recorded on it then).
    pub(crate) fn mark_used_on(&self, stream: StreamId) {
        if stream == self.home {
            return;
        }
        let mut others = lock(&self.others);
        if !others.contains(&stream) {
            others.push(stream);
        }
    }

    /// Locks the memory for the user: from now on emberfire neither reuses nor frees it, even
    /// when this handle drops, until it is unlocked. Adopted memory that is still locked when
    /// this handle drops is the user's again (see [`DeviceMem`]).
    pub(crate) fn lock(&self) {
        if !self.locked.swap(true, Ordering::AcqRel) {
            self.pool.locked_bytes.fetch_add(self.bytes, Ordering::Relaxed);
            self.pool.locked_buffers.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Gives a locked memory back to emberfire's management.
    pub(crate) fn unlock(&self) {
        if self.locked.swap(false, Ordering::AcqRel) {
            self.pool.locked_bytes.fetch_sub(self.bytes, Ordering::Relaxed);
            self.pool.locked_buffers.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Whether the memory is locked by the user.
    pub(crate) fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Acquire)
    }

    /// Whether this is borrowed memory whose producer forbids writes (see
    /// `MemoryManager::borrow`).
    pub(crate) fn is_read_only(&self) -> bool {
        matches!(self.origin, Origin::Borrowed { read_only: true, .. })
    }

    /// Whether this memory is adopted (freed with the driver) or borrowed (never freed).
    pub(crate) fn is_foreign(&self) -> bool {
        matches!(self.origin, Origin::Adopted | Origin::Borrowed { .. })
    }

    fn streams_used(&mut self) -> Vec<StreamId> {
        let mut v = vec![self.home];
        let others = self.others.get_mut().unwrap_or_else(|e| e.into_inner());
        v.extend(others.iter().copied());
        v
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        let pool = self.pool.clone();
        let origin = std::mem::replace(&mut self.origin, Origin::Gone);
        if !self.is_locked() {
            return self.release(&pool, origin);
        }
        // Locked: the user keeps pool and borrowed memory until `unlock_ptr`, and adopted
        // memory for good.
        let kind = match origin {
            Origin::Pool { size, allocator } => OrphanKind::Pool { size, allocator },
            Origin::Borrowed { owner, read_only } => OrphanKind::Borrowed { owner, read_only },
            Origin::Adopted => return self.give_back(&pool),
            other => {
                // Empty memory has no address to keep.
                self.unlock();
                return self.release(&pool, other);
            }
        };
        let others = std::mem::take(self.others.get_mut().unwrap_or_else(|e| e.into_inner()));
        let orphan = Orphan { bytes: self.bytes, home: self.home, others, kind };
        lock_state(&pool).orphans.entry(self.ptr).or_default().push(orphan);
    }
}

impl DeviceMem {
    /// Hands locked adopted memory back to the user. emberfire's queued work on it finishes
    /// first, because the user may free it as soon as this returns, with a free that need not
    /// be ordered after emberfire's streams (cudarc frees a slice on the slice's own stream).
    /// Then the memory leaves the counters and no record of it is kept.
    fn give_back(&mut self, pool: &Arc<Pool>) {
        synchronize_streams(pool, &self.streams_used());
        self.unlock();
        pool.live_bytes.fetch_sub(self.bytes, Ordering::Relaxed);
        pool.live_buffers.fetch_sub(1, Ordering::Relaxed);
    }

    /// Gives unlocked memory back: to the cache, the driver or its owner.
    fn release(&mut self, pool: &Arc<Pool>, origin: Origin) {
        pool.live_bytes.fetch_sub(self.bytes, Ordering::Relaxed);
        pool.live_buffers.fetch_sub(1, Ordering::Relaxed);
        match origin {
            Origin::Empty | Origin::Gone => {}
            Origin::Pool { size, allocator } => {
                let streams = self.streams_used();
                recycle(pool, self.ptr, size, allocator, &streams);
            }
            Origin::Adopted => {
                synchronize_streams(pool, &self.streams_used());
                // SAFETY: adopt's contract: a live cuMemAlloc block we own, freed only here
                // (dropped unlocked, so it did not go back to the user); its users have
                // finished (synchronised above).
                unsafe { pool.driver.free(self.ptr, self.bytes) };
            }
            Origin::Borrowed { owner, .. } => {
                synchronize_streams(pool, &self.streams_used());
                drop(owner);
            }
        }
    }
}
