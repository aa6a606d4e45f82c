//! The per-device memory manager: a caching, stream-ordered pool over a pluggable allocator.
//!
//! Why a pool: `cuMemAlloc`/`cuMemFree` cost tens to hundreds of microseconds and `cuMemFree`
//! waits for the device, so an array library that allocates per operation must recycle blocks.
//! What this pool promises (ArrayFire's contract, without its cliffs):
//!
//! - **Size classes, not exact sizes.** Requests round up to 256 bytes below 1 MiB and to one
//!   eighth of their power of two above it; a cached block of 1.0x to 1.25x the request is
//!   reused, so sizes that differ slightly (a growing vector, different tails) share blocks.
//! - **Stream-ordered reuse.** A block freed on a stream is reusable at once on that stream,
//!   because the stream runs the old user's work before the new user's. Reused on another
//!   stream, the new stream first waits (on the device, never the host) for an event recorded
//!   on each stream that used the block. Events are recorded when the block is freed, except on
//!   the device's own stream, which lives for the process: that one is recorded lazily, at
//!   reuse, so the common single-stream path records no event at all.
//! - **User locks.** A locked block ([`DeviceMem::lock`]) belongs to the user: it is never
//!   handed to another allocation, and dropping its `DeviceMem` keeps it allocated until
//!   [`MemoryManager::unlock_ptr`] (or [`DeviceMem::unlock`] before the drop).
//! - **Foreign memory.** [`MemoryManager::adopt`] takes ownership of a pointer from
//!   `cuMemAlloc` and frees it exactly once, with the driver, never into the cache;
//!   [`MemoryManager::borrow`] wraps memory someone else owns and only keeps its owner alive
//!   (until unlocked, if it was locked when its handle dropped).
//! - **User streams.** A thread can make a stream of the user's current for a scope
//!   ([`MemoryManager::enter_stream`]): allocations for that thread are then made for that
//!   stream. Entering makes the user's stream wait for the stream that was current; leaving
//!   makes the own stream (and the outer one) wait for the user's. Once no scope uses a user
//!   stream any more it is *retired*: the own stream has waited for all of its work, so every
//!   later record, wait or synchronisation that would name it names the own stream instead, and
//!   the user may destroy it. A block freed while the scope was open carries an event recorded
//!   on the user's stream, and any reuse on another stream waits for it; a block freed after the
//!   scope is ordered by the own stream. No user stream is ever touched after its last scope.
//! - **Out of memory is an error, not a crash.** A failed allocation returns every cached block
//!   to the allocator and retries (then once more at the exact size, in case rounding up was
//!   what did not fit) before it reports [`Error::OutOfMemory`].
//! - **Bounded cache.** Cached bytes beyond [`MemoryManager::set_cache_limit`] go back to the
//!   allocator, oldest first, so the cache does not starve libraries or other processes.
//!
//! The bookkeeping is independent of CUDA: the raw allocator is a [`DeviceAllocator`] and
//! event operations go through [`StreamOrder`], so the unit tests below drive the whole pool
//! with fakes on machines without a GPU. The CUDA implementations are [`DriverAllocator`] and
//! [`DriverStreamOrder`].

use std::any::Any;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard};

use cudarc::driver::{result as cu, sys, CudaContext, CudaStream, DriverError};

use crate::error::Error;

/// A raw allocator of device memory, the layer under emberfire's caching pool.
///
/// The default is the driver's `cuMemAlloc`/`cuMemFree`. Install another with
/// [`crate::cuda::set_allocator`] to take emberfire's memory from a pool of your own (an
/// arena shared with another library, a logging or limiting wrapper, ...). emberfire still
/// caches and reuses the blocks it gets from you; [`crate::device_gc`] hands them back.
///
/// # Safety
///
/// emberfire's kernels read and write the memory an allocator returns, so an implementation
/// must keep these promises: a successful [`allocate`](Self::allocate) returns the address of
/// at least `bytes` bytes of device memory on the device the allocator was installed for,
/// usable from every stream of that device's primary context, aligned to 256 bytes, that
/// nothing else reads, writes or frees until emberfire passes it to [`free`](Self::free).
///
/// ```
/// use emberfire::cuda::DeviceAllocator;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// /// Counts the blocks emberfire takes from the allocator it wraps.
/// struct Counting {
///     inner: Arc<dyn DeviceAllocator>,
///     live: AtomicUsize,
/// }
///
/// // SAFETY: every block comes from `inner`, which keeps the promises.
/// unsafe impl DeviceAllocator for Counting {
///     fn allocate(&self, bytes: usize) -> emberfire::Result<u64> {
///         let p = self.inner.allocate(bytes)?;
///         self.live.fetch_add(1, Ordering::Relaxed);
///         Ok(p)
///     }
///     unsafe fn free(&self, ptr: u64, bytes: usize) {
///         self.live.fetch_sub(1, Ordering::Relaxed);
///         // SAFETY: emberfire passes back exactly what `allocate` returned.
///         unsafe { self.inner.free(ptr, bytes) }
///     }
/// }
///
/// if let Ok(driver) = emberfire::cuda::driver_allocator(0) {
///     let counting = Arc::new(Counting { inner: driver.clone(), live: AtomicUsize::new(0) });
///     emberfire::cuda::set_allocator(0, counting.clone()).unwrap();
///     // ... arrays created on device 0 now take their memory through `counting` ...
///     emberfire::cuda::set_allocator(0, driver).unwrap();
/// }
/// ```
pub unsafe trait DeviceAllocator: Send + Sync {
    /// Allocates `bytes` (never 0) of device memory on the manager's device and returns its
    /// address, aligned to at least 256 bytes. It is called from any thread, with any context
    /// current (make the device's primary context current if the allocation needs it, as the
    /// driver's allocator does). Returns [`Error::OutOfMemory`] when the memory is not there:
    /// emberfire then frees its cache and asks again. Any other error is passed on as it is.
    fn allocate(&self, bytes: usize) -> Result<u64, Error>;

    /// Frees a block this allocator returned.
    ///
    /// # Safety
    ///
    /// `ptr` and `bytes` are exactly an earlier successful [`allocate`](Self::allocate)'s
    /// result and request, the block has not been freed since, and no work queued on the
    /// device uses it any more (emberfire synchronises the device before freeing).
    unsafe fn free(&self, ptr: u64, bytes: usize);
}

/// A CUDA stream as the pool sees it: the raw `CUstream` as an integer (0 is the legacy
/// default stream). Only compared and handed back to [`StreamOrder`]; never dereferenced here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StreamId(pub(crate) u64);

impl StreamId {
    /// The id of a cudarc stream.
    pub(crate) fn of(stream: &CudaStream) -> StreamId {
        StreamId::from_raw(stream.cu_stream())
    }

    /// The id of a raw stream handle.
    pub(crate) fn from_raw(stream: sys::CUstream) -> StreamId {
        StreamId(stream as usize as u64)
    }

    /// The raw stream handle.
    pub(crate) fn as_raw(self) -> sys::CUstream {
        self.0 as usize as sys::CUstream
    }
}

/// A recorded event (a raw `CUevent` as an integer for the driver implementation).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fence(pub(crate) u64);

/// The event operations that order a block's reuse after its earlier uses, abstracted so the
/// pool can be tested without a GPU.
pub(crate) trait StreamOrder: Send + Sync {
    /// Records, on `stream`, the work queued there so far.
    fn record(&self, stream: StreamId) -> Result<Fence, Error>;
    /// Makes `stream` wait (on the device) until `fence` has completed.
    fn wait(&self, stream: StreamId, fence: &Fence) -> Result<(), Error>;
    /// Gives a fence back once no later call needs it (waits already queued are unaffected).
    fn release(&self, fence: Fence);
    /// Blocks the host until `stream`'s queued work has completed.
    fn synchronize(&self, stream: StreamId) -> Result<(), Error>;
    /// Blocks the host until all work on the device has completed (before memory is freed).
    fn synchronize_all(&self) -> Result<(), Error>;
}

/// Rounds a request up to the size of the block that serves it; `None` if that overflows.
///
/// 256-byte granularity up to 1 MiB (small arrays waste at most 255 bytes), then 8 classes per
/// power of two (at most 12.5 % rounding for large arrays).
pub(crate) fn size_class(bytes: usize) -> Option<usize> {
    const SMALL: usize = 1 << 20;
    let step = if bytes <= SMALL {
        256
    } else {
        let top = usize::BITS - 1 - bytes.leading_zeros();
        1usize << (top - 3)
    };
    bytes.checked_add(step - 1).map(|b| b & !(step - 1))
}

/// The largest cached block that may serve a request of `bytes`: 1.25 times its class.
fn reuse_limit(bytes: usize, class: usize) -> usize {
    class.max(bytes.saturating_add(bytes / 4))
}

/// A cached block and the streams whose work on it must be ordered before a reuse.
struct Block {
    ptr: u64,
    size: usize,
    allocator: Arc<dyn DeviceAllocator>,
    /// The device's own stream used the block and no event was recorded for it (done at reuse).
    own_unfenced: bool,
    /// Events recorded at free time on other streams that used the block.
    fences: Vec<(StreamId, Fence)>,
}

/// Memory whose `DeviceMem` was dropped while locked; kept until `unlock_ptr`.
struct Orphan {
    bytes: usize,
    home: StreamId,
    others: Vec<StreamId>,
    kind: OrphanKind,
}

enum OrphanKind {
    Pool {
        size: usize,
        allocator: Arc<dyn DeviceAllocator>,
    },
    Adopted,
    /// Borrowed memory keeps its owner while locked: an owner that frees the memory when
    /// dropped (a `CudaSlice`, say) must not free it under the user.
    Borrowed {
        owner: Arc<dyn Any + Send + Sync>,
    },
}

struct PoolState {
    allocator: Arc<dyn DeviceAllocator>,
    /// (block size, age tick) of every cached block: best fit is the first in a range.
    by_size: BTreeSet<(usize, u64)>,
    /// Cached blocks by age tick (oldest first, for eviction).
    blocks: BTreeMap<u64, Block>,
    tick: u64,
    cached_bytes: usize,
    cache_limit: usize,
    /// Locked memory whose handle dropped, by address (several for memory borrowed twice).
    orphans: HashMap<u64, Vec<Orphan>>,
}

/// The state shared by a manager and every `DeviceMem` it handed out.
struct Pool {
    ordinal: usize,
    own_stream: StreamId,
    order: Arc<dyn StreamOrder>,
    /// User streams that scopes have made current, with the number of scopes open on each;
    /// 0 means retired (see the module documentation). Held for reading while recording on or
    /// synchronising a user stream, so that a stream cannot retire (and be destroyed by its
    /// owner) in the middle of such a call.
    streams: RwLock<HashMap<StreamId, usize>>,
    /// Frees adopted memory: always the driver, whatever allocator is installed.
    driver: Arc<dyn DeviceAllocator>,
    state: Mutex<PoolState>,
    live_bytes: AtomicUsize,
    live_buffers: AtomicUsize,
    locked_bytes: AtomicUsize,
    locked_buffers: AtomicUsize,
    /// Bytes currently held from allocators (live pooled blocks and the cache).
    held_bytes: AtomicUsize,
    allocations: AtomicU64,
    frees: AtomicU64,
    reuses: AtomicU64,
}

/// Counters of a [`MemoryManager`], for tests, `print_mem_info` and tuning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MemStats {
    /// Bytes and buffers held by live `DeviceMem`s (locked and orphaned-locked included).
    pub live_bytes: usize,
    pub live_buffers: usize,
    /// Bytes and buffers locked by the user.
    pub locked_bytes: usize,
    pub locked_buffers: usize,
    /// Free blocks kept for reuse, in bytes and blocks.
    pub cached_bytes: usize,
    pub cached_buffers: usize,
    /// Bytes currently obtained from the allocator (live pooled blocks plus the cache).
    pub held_bytes: usize,
    /// Calls to the allocator's `allocate` and `free`, and allocations served from the cache.
    pub allocations: u64,
    pub frees: u64,
    pub reuses: u64,
}

/// The memory manager of one device. See the module documentation for its contract.
pub(crate) struct MemoryManager {
    pool: Arc<Pool>,
}

impl fmt::Debug for MemoryManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryManager")
            .field("ordinal", &self.pool.ordinal)
            .field("stats", &self.stats())
            .finish()
    }
}

/// Where a `DeviceMem`'s memory came from, which decides what its drop does.
enum Origin {
    /// Zero bytes: no memory at all (the pointer is 0).
    Empty,
    /// A pool block of `size` bytes from `allocator`; returns to the cache.
    Pool { size: usize, allocator: Arc<dyn DeviceAllocator> },
    /// Foreign `cuMemAlloc` memory we own; freed with the driver.
    Adopted,
    /// Foreign memory we do not own; dropping releases `owner`.
    Borrowed { owner: Arc<dyn Any + Send + Sync> },
    /// Already handed on by `drop`.
    Gone,
}

/// A block of device memory: a device address, its size and its device.
///
/// Dropping it returns pool memory to the cache, frees adopted memory and releases borrowed
/// memory's owner; unless it is locked, in which case the memory stays as it is for the user.
/// The caller must have queued every use of the memory (on the streams it was marked used on)
/// before dropping it.
pub(crate) struct DeviceMem {
    ptr: u64,
    bytes: usize,
    home: StreamId,
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

fn lock_state(pool: &Pool) -> MutexGuard<'_, PoolState> {
    // A panic while holding the lock cannot leave the maps inconsistent in a way that matters
    // more than losing the device, so keep going with the data as it is.
    pool.state.lock().unwrap_or_else(|e| e.into_inner())
}

impl MemoryManager {
    /// A manager for device `ordinal` whose own stream is `own_stream`, allocating with
    /// `allocator` (also used to free adopted memory) and ordering streams with `order`.
    pub(crate) fn new(
        ordinal: usize,
        own_stream: StreamId,
        allocator: Arc<dyn DeviceAllocator>,
        order: Arc<dyn StreamOrder>,
    ) -> MemoryManager {
        MemoryManager {
            pool: Arc::new(Pool {
                ordinal,
                own_stream,
                order,
                streams: RwLock::new(HashMap::new()),
                driver: allocator.clone(),
                state: Mutex::new(PoolState {
                    allocator,
                    by_size: BTreeSet::new(),
                    blocks: BTreeMap::new(),
                    tick: 0,
                    cached_bytes: 0,
                    cache_limit: usize::MAX,
                    orphans: HashMap::new(),
                }),
                live_bytes: AtomicUsize::new(0),
                live_buffers: AtomicUsize::new(0),
                locked_bytes: AtomicUsize::new(0),
                locked_buffers: AtomicUsize::new(0),
                held_bytes: AtomicUsize::new(0),
                allocations: AtomicU64::new(0),
                frees: AtomicU64::new(0),
                reuses: AtomicU64::new(0),
            }),
        }
    }

    /// The device this manager allocates on.
    pub(crate) fn ordinal(&self) -> usize {
        self.pool.ordinal
    }

    /// Allocates `bytes` for use on this thread's current stream (the own stream, or the user
    /// stream of the innermost scope; see [`enter_stream`](Self::enter_stream)). Contents are
    /// unspecified.
    pub(crate) fn alloc(&self, bytes: usize) -> Result<DeviceMem, Error> {
        self.alloc_on(bytes, self.current_stream())
    }

    /// Allocates `bytes` for use on `stream`: a cached block last used on another stream is
    /// handed out only after `stream` has been made to wait for that use.
    pub(crate) fn alloc_on(&self, bytes: usize, stream: StreamId) -> Result<DeviceMem, Error> {
        let pool = &self.pool;
        if bytes == 0 {
            return Ok(self.wrap(0, 0, stream, Origin::Empty));
        }
        let class = size_class(bytes).ok_or(Error::OutOfMemory { bytes })?;
        let limit = reuse_limit(bytes, class);
        let cached = lock_state(pool).take(bytes, limit, stream, pool.own_stream);
        if let Some(block) = cached {
            match order_before_reuse(pool, &block, stream) {
                Ok(()) => {
                    pool.reuses.fetch_add(1, Ordering::Relaxed);
                    // The waits are queued; the events can be recycled.
                    for (_, fence) in block.fences {
                        pool.order.release(fence);
                    }
                    let origin = Origin::Pool { size: block.size, allocator: block.allocator };
                    return Ok(self.wrap(block.ptr, bytes, stream, origin));
                }
                Err(e) => {
                    // The block's earlier uses cannot be ordered: let it go (after a full
                    // synchronisation) rather than risk handing out memory still in use.
                    release_blocks(pool, vec![block]);
                    return Err(e);
                }
            }
        }
        let allocator = lock_state(pool).allocator.clone();
        let (ptr, size) = match allocator.allocate(class) {
            Ok(p) => (p, class),
            Err(Error::OutOfMemory { .. }) => {
                self.gc();
                match allocator.allocate(class) {
                    Ok(p) => (p, class),
                    Err(Error::OutOfMemory { .. }) if class > bytes => {
                        match allocator.allocate(bytes) {
                            Ok(p) => (p, bytes),
                            Err(Error::OutOfMemory { .. }) => {
                                return Err(Error::OutOfMemory { bytes })
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Err(Error::OutOfMemory { .. }) => return Err(Error::OutOfMemory { bytes }),
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        pool.allocations.fetch_add(1, Ordering::Relaxed);
        pool.held_bytes.fetch_add(size, Ordering::Relaxed);
        Ok(self.wrap(ptr, bytes, stream, Origin::Pool { size, allocator }))
    }

    /// Takes ownership of device memory allocated with `cuMemAlloc` (in this device's primary
    /// context). It is freed with `cuMemFree` when the returned `DeviceMem` drops (unless
    /// locked then), exactly once, and never enters the cache.
    ///
    /// # Safety
    ///
    /// `ptr` is the start of a live `cuMemAlloc` allocation of at least `bytes` bytes on this
    /// device that nothing else will free, and work already queued on it is ordered before
    /// this thread's current stream (or has completed).
    pub(crate) unsafe fn adopt(&self, ptr: u64, bytes: usize) -> DeviceMem {
        self.wrap(ptr, bytes, self.current_stream(), Origin::Adopted)
    }

    /// Wraps device memory owned by someone else; `owner` is kept alive until the returned
    /// `DeviceMem` drops, and the memory is never freed by emberfire. Before `owner` is
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
    ) -> DeviceMem {
        self.wrap(ptr, bytes, self.current_stream(), Origin::Borrowed { owner })
    }

    fn wrap(&self, ptr: u64, bytes: usize, home: StreamId, origin: Origin) -> DeviceMem {
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
    /// cache, adopted memory is freed. Returns whether `ptr` was such memory.
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
            OrphanKind::Adopted => Origin::Adopted,
            OrphanKind::Borrowed { owner } => Origin::Borrowed { owner },
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

    /// ArrayFire's `device_mem_info`: (bytes, buffers) held by live memory and (bytes,
    /// buffers) of it locked by the user. Sizes are the requested sizes; cached memory is not
    /// included (see [`cached`](Self::cached)).
    pub(crate) fn info(&self) -> (usize, usize, usize, usize) {
        let p = &self.pool;
        (
            p.live_bytes.load(Ordering::Relaxed),
            p.live_buffers.load(Ordering::Relaxed),
            p.locked_bytes.load(Ordering::Relaxed),
            p.locked_buffers.load(Ordering::Relaxed),
        )
    }

    /// (bytes, blocks) kept in the cache for reuse.
    pub(crate) fn cached(&self) -> (usize, usize) {
        let s = lock_state(&self.pool);
        (s.cached_bytes, s.blocks.len())
    }

    /// All counters at once.
    pub(crate) fn stats(&self) -> MemStats {
        let (live_bytes, live_buffers, locked_bytes, locked_buffers) = self.info();
        let (cached_bytes, cached_buffers) = self.cached();
        let p = &self.pool;
        MemStats {
            live_bytes,
            live_buffers,
            locked_bytes,
            locked_buffers,
            cached_bytes,
            cached_buffers,
            held_bytes: p.held_bytes.load(Ordering::Relaxed),
            allocations: p.allocations.load(Ordering::Relaxed),
            frees: p.frees.load(Ordering::Relaxed),
            reuses: p.reuses.load(Ordering::Relaxed),
        }
    }

    /// Returns every cached block to its allocator (after waiting for the device, so no
    /// queued kernel still uses one). Returns the bytes released.
    pub(crate) fn gc(&self) -> usize {
        let blocks: Vec<Block> = {
            let mut s = lock_state(&self.pool);
            s.by_size.clear();
            s.cached_bytes = 0;
            std::mem::take(&mut s.blocks).into_values().collect()
        };
        let bytes = blocks.iter().map(|b| b.size).sum();
        release_blocks(&self.pool, blocks);
        bytes
    }

    /// Limits the bytes kept in the cache; beyond it, the oldest cached blocks are freed.
    /// Unlimited by default for a bare manager; devices set a share of their memory.
    pub(crate) fn set_cache_limit(&self, bytes: usize) {
        let evicted = {
            let mut s = lock_state(&self.pool);
            s.cache_limit = bytes;
            s.evict_over_limit()
        };
        release_blocks(&self.pool, evicted);
    }

    /// The current cache limit in bytes.
    pub(crate) fn cache_limit(&self) -> usize {
        lock_state(&self.pool).cache_limit
    }

    /// Makes `allocator` the source of new blocks. Cached blocks go back to the allocator that
    /// made them at once; blocks in use go back to theirs when freed.
    pub(crate) fn set_allocator(&self, allocator: Arc<dyn DeviceAllocator>) {
        self.gc();
        lock_state(&self.pool).allocator = allocator;
    }

    /// The driver's allocator (`cuMemAlloc`/`cuMemFree`), e.g. to wrap it in one of your own
    /// or to restore it after [`set_allocator`](Self::set_allocator).
    pub(crate) fn driver_allocator(&self) -> Arc<dyn DeviceAllocator> {
        self.pool.driver.clone()
    }
}

impl PoolState {
    /// Removes and returns the best cached block for a request: the smallest size in
    /// `[bytes, limit]`, preferring (among the first few candidates) one that `stream` can use
    /// without waiting for another stream.
    fn take(
        &mut self,
        bytes: usize,
        limit: usize,
        stream: StreamId,
        own: StreamId,
    ) -> Option<Block> {
        let mut chosen = None;
        for (i, &(size, tick)) in self.by_size.range((bytes, 0)..=(limit, u64::MAX)).enumerate() {
            if chosen.is_none() {
                chosen = Some((size, tick));
            }
            if !self.blocks[&tick].needs_wait(stream, own) {
                chosen = Some((size, tick));
                break;
            }
            if i >= 8 {
                break;
            }
        }
        let (size, tick) = chosen?;
        self.by_size.remove(&(size, tick));
        self.cached_bytes -= size;
        self.blocks.remove(&tick)
    }

    fn insert(&mut self, block: Block) {
        self.tick += 1;
        self.cached_bytes += block.size;
        self.by_size.insert((block.size, self.tick));
        self.blocks.insert(self.tick, block);
    }

    /// Removes the oldest blocks until the cache is within its limit.
    fn evict_over_limit(&mut self) -> Vec<Block> {
        let mut out = Vec::new();
        while self.cached_bytes > self.cache_limit {
            let Some((tick, block)) = self.blocks.pop_first() else { break };
            self.by_size.remove(&(block.size, tick));
            self.cached_bytes -= block.size;
            out.push(block);
        }
        out
    }
}

impl Block {
    /// Whether reusing the block on `stream` must first wait for another stream.
    fn needs_wait(&self, stream: StreamId, own: StreamId) -> bool {
        (self.own_unfenced && stream != own) || self.fences.iter().any(|(s, _)| *s != stream)
    }
}

/// Makes `stream` wait for every earlier use of `block` on other streams.
fn order_before_reuse(pool: &Pool, block: &Block, stream: StreamId) -> Result<(), Error> {
    if block.own_unfenced && stream != pool.own_stream {
        let fence = pool.order.record(pool.own_stream)?;
        let waited = pool.order.wait(stream, &fence);
        pool.order.release(fence);
        waited?;
    }
    for (s, fence) in &block.fences {
        if *s != stream {
            pool.order.wait(stream, fence)?;
        }
    }
    Ok(())
}

/// Frees blocks to their allocators after the device has finished with them.
fn release_blocks(pool: &Pool, blocks: Vec<Block>) {
    if blocks.is_empty() {
        return;
    }
    // If even synchronising fails the context is broken; freeing is then still the best we can
    // do (the driver refuses to free into a dead context without harm).
    let _ = pool.order.synchronize_all();
    for b in blocks {
        for (_, fence) in b.fences {
            pool.order.release(fence);
        }
        // SAFETY: the block came from this allocator with this size, is in no cache or handle
        // any more, and the device has finished all queued work.
        unsafe { b.allocator.free(b.ptr, b.size) };
        pool.held_bytes.fetch_sub(b.size, Ordering::Relaxed);
        pool.frees.fetch_add(1, Ordering::Relaxed);
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
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        if !others.contains(&stream) {
            others.push(stream);
        }
    }

    /// Locks the memory for the user: from now on emberfire neither reuses nor frees it, even
    /// when this handle drops, until it is unlocked.
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
        // Locked: the user keeps the memory until `unlock_ptr`.
        let kind = match origin {
            Origin::Pool { size, allocator } => OrphanKind::Pool { size, allocator },
            Origin::Adopted => OrphanKind::Adopted,
            Origin::Borrowed { owner } => OrphanKind::Borrowed { owner },
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
                // SAFETY: adopt's contract: a live cuMemAlloc block we own, freed only here;
                // its users have finished (synchronised above).
                unsafe { pool.driver.free(self.ptr, self.bytes) };
            }
            Origin::Borrowed { owner } => {
                synchronize_streams(pool, &self.streams_used());
                drop(owner);
            }
        }
    }
}

/// Puts a freed pool block into the cache, recording what its reuse must wait for.
fn recycle(
    pool: &Pool,
    ptr: u64,
    size: usize,
    allocator: Arc<dyn DeviceAllocator>,
    streams: &[StreamId],
) {
    let mut block = Block { ptr, size, allocator, own_unfenced: false, fences: Vec::new() };
    if streams.iter().all(|&s| s == pool.own_stream) {
        // The common case: one stream, nothing to record.
        block.own_unfenced = true;
        return cache_block(pool, block);
    }
    // Hold the stream table while recording, so that no user stream retires (and is
    // destroyed) under a record.
    let (registry, streams) = effective_streams(pool, streams);
    for s in streams {
        if s == pool.own_stream {
            block.own_unfenced = true;
        } else {
            match pool.order.record(s) {
                Ok(f) => block.fences.push((s, f)),
                Err(_) => {
                    drop(registry);
                    // Without an event the block's reuse cannot be ordered: free it instead
                    // (release_blocks synchronises the device first).
                    release_blocks(pool, vec![block]);
                    return;
                }
            }
        }
    }
    drop(registry);
    cache_block(pool, block);
}

/// Puts a block into the cache, evicting the oldest blocks beyond the cache limit.
fn cache_block(pool: &Pool, block: Block) {
    let evicted = {
        let mut s = lock_state(pool);
        s.insert(block);
        s.evict_over_limit()
    };
    release_blocks(pool, evicted);
}

/// Waits on the host until the work queued on `streams` (as they stand now: a retired user
/// stream is the own stream) has completed.
fn synchronize_streams(pool: &Pool, streams: &[StreamId]) {
    let (registry, streams) = effective_streams(pool, streams);
    for s in streams {
        let _ = pool.order.synchronize(s);
    }
    drop(registry);
}

/// `streams` with every retired user stream replaced by the own stream, without repeats, and
/// the stream table held for reading when a user stream remains (so that it cannot retire
/// while the caller records on it or synchronises it).
fn effective_streams<'p>(
    pool: &'p Pool,
    streams: &[StreamId],
) -> (Option<RwLockReadGuard<'p, HashMap<StreamId, usize>>>, Vec<StreamId>) {
    if streams.iter().all(|&s| s == pool.own_stream) {
        return (None, vec![pool.own_stream]);
    }
    let registry = read_streams(pool);
    let mut out: Vec<StreamId> = Vec::with_capacity(streams.len());
    for &s in streams {
        let e = effective(&registry, pool.own_stream, s);
        if !out.contains(&e) {
            out.push(e);
        }
    }
    (Some(registry), out)
}

/// The stream that stands for `s` now: the own stream for itself and for a retired user
/// stream (whose work the own stream has waited for), else `s`.
fn effective(registry: &HashMap<StreamId, usize>, own: StreamId, s: StreamId) -> StreamId {
    match registry.get(&s) {
        Some(0) => own,
        _ => s,
    }
}

fn read_streams(pool: &Pool) -> RwLockReadGuard<'_, HashMap<StreamId, usize>> {
    pool.streams.read().unwrap_or_else(|e| e.into_inner())
}

/// Makes `waiter` wait (on the device) for the work queued on `waited` so far.
fn join(pool: &Pool, waiter: StreamId, waited: StreamId) -> Result<(), Error> {
    if waiter == waited {
        return Ok(());
    }
    let fence = pool.order.record(waited)?;
    let waited_on = pool.order.wait(waiter, &fence);
    pool.order.release(fence);
    waited_on
}

thread_local! {
    /// This thread's open user-stream scopes, innermost last: (pool address, stream).
    static SCOPES: RefCell<Vec<(usize, StreamId)>> = const { RefCell::new(Vec::new()) };
}

/// A user stream made current on this thread by [`MemoryManager::enter_stream`]. Leaving it
/// ([`StreamScope::leave`], or dropping it) orders the own stream after it.
///
/// Not `Send`: it must end on the thread it began on. It must not be leaked (the user's stream
/// would stay current after its owner may have destroyed it), which is why the public API
/// only offers closures.
pub(crate) struct StreamScope {
    pool: Arc<Pool>,
    stream: StreamId,
    outer: StreamId,
    registered: bool,
    left: bool,
    _not_send: PhantomData<*const ()>,
}

impl MemoryManager {
    /// The stream this thread's work on the device goes to: the user stream of the innermost
    /// open scope, else the own stream.
    pub(crate) fn current_stream(&self) -> StreamId {
        let key = Arc::as_ptr(&self.pool) as usize;
        SCOPES
            .with(|scopes| scopes.borrow().iter().rev().find(|(k, _)| *k == key).map(|&(_, s)| s))
            .unwrap_or(self.pool.own_stream)
    }

    /// The device's own stream.
    pub(crate) fn own_stream(&self) -> StreamId {
        self.pool.own_stream
    }

    /// Makes `stream` this thread's current stream until the returned scope is left. The user's
    /// stream first waits (on the device) for the work queued so far on the stream that was
    /// current and on the own stream, so it sees every array computed before.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of this device's primary context, and stays alive until the
    /// scope has been left.
    pub(crate) unsafe fn enter_stream(&self, stream: StreamId) -> Result<StreamScope, Error> {
        let pool = &self.pool;
        let outer = self.current_stream();
        let registered = stream != pool.own_stream;
        if registered {
            let mut registry = pool.streams.write().unwrap_or_else(|e| e.into_inner());
            *registry.entry(stream).or_insert(0) += 1;
        }
        let mut scope = StreamScope {
            pool: pool.clone(),
            stream,
            outer,
            registered,
            left: true,
            _not_send: PhantomData,
        };
        let waited = join(pool, stream, outer).and_then(|()| {
            if outer != pool.own_stream {
                join(pool, stream, pool.own_stream)
            } else {
                Ok(())
            }
        });
        if let Err(e) = waited {
            // Undo the registration (the scope never became current).
            let _ = scope.retire_if_last();
            return Err(e);
        }
        let key = Arc::as_ptr(pool) as usize;
        SCOPES.with(|scopes| scopes.borrow_mut().push((key, stream)));
        scope.left = false;
        Ok(scope)
    }

    /// Makes `waiter` wait on the device for the work that produced `mem` (queued on its home
    /// stream), and records `waiter` as a user of `mem`, so that its reuse waits for `waiter`
    /// too. `waiter` must stay alive until `mem` drops, or be a stream that scopes retire.
    pub(crate) fn order_use(&self, mem: &DeviceMem, waiter: StreamId) -> Result<(), Error> {
        if mem.home == waiter {
            return Ok(());
        }
        self.wait_for_producer(mem, waiter)?;
        mem.mark_used_on(waiter);
        Ok(())
    }

    /// Makes `waiter` wait on the device for the work queued so far on `mem`'s home stream
    /// (where it was written), without recording `waiter` as a user.
    pub(crate) fn wait_for_producer(&self, mem: &DeviceMem, waiter: StreamId) -> Result<(), Error> {
        if mem.home == waiter {
            return Ok(());
        }
        let pool = &self.pool;
        let (registry, home) = effective_streams(pool, &[mem.home]);
        let r = join(pool, waiter, home[0]);
        drop(registry);
        r
    }

    /// Makes `mem`'s home stream wait on the device for the work queued on `waited` so far, so
    /// that everything emberfire does with `mem` later (reads, reuse) comes after it.
    pub(crate) fn producer_waits_for(
        &self,
        mem: &DeviceMem,
        waited: StreamId,
    ) -> Result<(), Error> {
        if mem.home == waited {
            return Ok(());
        }
        let pool = &self.pool;
        let (registry, home) = effective_streams(pool, &[mem.home]);
        let r = join(pool, home[0], waited);
        drop(registry);
        r
    }

    /// Makes `waiter` wait on the device for the work queued so far on the own stream and on
    /// every user stream a scope has made current.
    pub(crate) fn wait_for_all(&self, waiter: StreamId) -> Result<(), Error> {
        let pool = &self.pool;
        let registry = read_streams(pool);
        let mut r = join(pool, waiter, pool.own_stream);
        for (&s, &open) in registry.iter() {
            if open > 0 {
                r = r.and_then(|()| join(pool, waiter, s));
            }
        }
        drop(registry);
        r
    }

    /// Makes the own stream and every user stream a scope has made current wait on the device
    /// for the work queued so far on `waited`.
    pub(crate) fn all_wait_for(&self, waited: StreamId) -> Result<(), Error> {
        let pool = &self.pool;
        let registry = read_streams(pool);
        let mut r = join(pool, pool.own_stream, waited);
        for (&s, &open) in registry.iter() {
            if open > 0 {
                r = r.and_then(|()| join(pool, s, waited));
            }
        }
        drop(registry);
        r
    }

    /// The user streams that scopes have made current and not yet left, on any thread.
    pub(crate) fn open_streams(&self) -> Vec<StreamId> {
        read_streams(&self.pool).iter().filter(|(_, &n)| n > 0).map(|(&s, _)| s).collect()
    }

    /// Whether `stream` is a user stream that scopes used and no scope uses any more.
    pub(crate) fn is_retired(&self, stream: StreamId) -> bool {
        read_streams(&self.pool).get(&stream) == Some(&0)
    }
}

impl StreamScope {
    /// The user's stream.
    pub(crate) fn stream(&self) -> StreamId {
        self.stream
    }

    /// Ends the scope: this thread's current stream is the outer one again, and the own stream
    /// (and the outer stream) wait on the device for everything queued on the user's stream.
    /// The scope ends also when this returns an error.
    pub(crate) fn leave(mut self) -> Result<(), Error> {
        self.leave_once()
    }

    fn leave_once(&mut self) -> Result<(), Error> {
        if self.left {
            return Ok(());
        }
        self.left = true;
        let key = Arc::as_ptr(&self.pool) as usize;
        SCOPES.with(|scopes| {
            let mut scopes = scopes.borrow_mut();
            if let Some(i) = scopes.iter().rposition(|&e| e == (key, self.stream)) {
                scopes.remove(i);
            }
        });
        let pool = self.pool.clone();
        let outer = if self.outer != pool.own_stream {
            join(&pool, self.outer, self.stream)
        } else {
            Ok(())
        };
        // Joining the own stream happens under the table's write lock, together with the
        // retirement, so no other thread records on the stream once it counts as retired.
        let own = self.retire_if_last();
        outer.and(own)
    }

    /// Joins the own stream after the user's and counts this scope out of the table; the
    /// stream retires when it was the last scope on it.
    fn retire_if_last(&mut self) -> Result<(), Error> {
        let pool = &self.pool;
        let mut registry = pool.streams.write().unwrap_or_else(|e| e.into_inner());
        let joined = join(pool, pool.own_stream, self.stream);
        if self.registered {
            self.registered = false;
            if let Some(open) = registry.get_mut(&self.stream) {
                *open = open.saturating_sub(1);
            }
        }
        joined
    }
}

impl Drop for StreamScope {
    fn drop(&mut self) {
        // A scope ended by a panic still restores the thread's stream and orders the own
        // stream after the user's; an error here has nowhere to go.
        let _ = self.leave_once();
    }
}

/// Maps a driver error, telling out-of-memory apart.
pub(crate) fn alloc_error(e: DriverError, bytes: usize) -> Error {
    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory { bytes }
    } else {
        super::driver_error(&format!("allocating {bytes} bytes"), e)
    }
}

/// The default allocator: `cuMemAlloc`/`cuMemFree` in the device's primary context.
///
/// Why not the stream-ordered `cuMemAllocAsync`: the pool above already makes reuse stream
/// ordered at no driver cost, and a second pool underneath would hide memory from
/// `device_gc` (the driver's pool keeps freed memory until trimmed) and from `mem_info`. Plain
/// `cuMemAlloc` memory is also valid on every stream and for every interop use (IPC, peer
/// access, other libraries) without pool attributes. Its cost (slow, synchronising) is paid
/// only on cache misses.
pub(crate) struct DriverAllocator {
    ctx: Arc<CudaContext>,
}

impl DriverAllocator {
    pub(crate) fn new(ctx: Arc<CudaContext>) -> DriverAllocator {
        DriverAllocator { ctx }
    }
}

// SAFETY: `cuMemAlloc` memory of the primary context, which is 256-byte aligned, usable from
// every stream of the context and owned by the caller until `cuMemFree`.
unsafe impl DeviceAllocator for DriverAllocator {
    fn allocate(&self, bytes: usize) -> Result<u64, Error> {
        self.ctx.bind_to_thread().map_err(|e| super::driver_error("binding the context", e))?;
        // SAFETY: the context is current; the memory is returned uninitialised, which is what
        // an allocator promises.
        unsafe { cu::malloc_sync(bytes) }.map_err(|e| alloc_error(e, bytes))
    }

    unsafe fn free(&self, ptr: u64, _bytes: usize) {
        // A failure here means the context is gone (process exit, sticky error): nothing to
        // recover, and panicking in a destructor would abort.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the caller passes a block `allocate` returned (a `cuMemAlloc` of this
        // context), not freed since and no longer used by queued work.
        let _ = unsafe { cu::free_sync(ptr) };
    }
}

/// Stream ordering with CUDA events, recycled through a free list (creating an event costs
/// more than recording one).
pub(crate) struct DriverStreamOrder {
    ctx: Arc<CudaContext>,
    spare: Mutex<Vec<u64>>,
}

impl DriverStreamOrder {
    pub(crate) fn new(ctx: Arc<CudaContext>) -> DriverStreamOrder {
        DriverStreamOrder { ctx, spare: Mutex::new(Vec::new()) }
    }

    fn bind(&self) -> Result<(), Error> {
        self.ctx.bind_to_thread().map_err(|e| super::driver_error("binding the context", e))
    }
}

impl StreamOrder for DriverStreamOrder {
    fn record(&self, stream: StreamId) -> Result<Fence, Error> {
        self.bind()?;
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let event = match spare {
            Some(e) => e as usize as sys::CUevent,
            None => cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| super::driver_error("creating an event", e))?,
        };
        // SAFETY: a live event of this context, and a stream the caller vouches for.
        match unsafe { cu::event::record(event, stream.as_raw()) } {
            Ok(()) => Ok(Fence(event as usize as u64)),
            Err(e) => {
                // SAFETY: the event is ours and unused.
                let _ = unsafe { cu::event::destroy(event) };
                Err(super::driver_error("recording an event", e))
            }
        }
    }

    fn wait(&self, stream: StreamId, fence: &Fence) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: a live event recorded by `record`, and a stream the caller vouches for.
        unsafe {
            cu::stream::wait_event(
                stream.as_raw(),
                fence.0 as usize as sys::CUevent,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|e| super::driver_error("making a stream wait for an event", e))
    }

    fn release(&self, fence: Fence) {
        self.spare.lock().unwrap_or_else(|e| e.into_inner()).push(fence.0);
    }

    fn synchronize(&self, stream: StreamId) -> Result<(), Error> {
        self.bind()?;
        // SAFETY: a stream the caller vouches for.
        unsafe { cu::stream::synchronize(stream.as_raw()) }
            .map_err(|e| super::driver_error("synchronising a stream", e))
    }

    fn synchronize_all(&self) -> Result<(), Error> {
        self.ctx.synchronize().map_err(|e| super::driver_error("synchronising the device", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocator over a fake address space with a capacity, recording every call.
    struct FakeAllocator {
        capacity: usize,
        state: Mutex<FakeState>,
    }

    #[derive(Default)]
    struct FakeState {
        next: u64,
        live: HashMap<u64, usize>,
        used: usize,
        allocs: usize,
        frees: usize,
        fail_other: bool,
    }

    impl FakeAllocator {
        fn new(capacity: usize) -> Arc<FakeAllocator> {
            Arc::new(FakeAllocator {
                capacity,
                state: Mutex::new(FakeState { next: 0x1000_0000, ..Default::default() }),
            })
        }
        fn used(&self) -> usize {
            self.state.lock().unwrap().used
        }
        fn live(&self) -> usize {
            self.state.lock().unwrap().live.len()
        }
        fn calls(&self) -> (usize, usize) {
            let s = self.state.lock().unwrap();
            (s.allocs, s.frees)
        }
    }

    // SAFETY: the fake never hands out an address twice; nothing dereferences it.
    unsafe impl DeviceAllocator for FakeAllocator {
        fn allocate(&self, bytes: usize) -> Result<u64, Error> {
            let mut s = self.state.lock().unwrap();
            if s.fail_other {
                return Err(Error::Driver("fake failure".into()));
            }
            if s.used + bytes > self.capacity {
                return Err(Error::OutOfMemory { bytes });
            }
            s.allocs += 1;
            let p = s.next;
            s.next += (bytes as u64 + 255) & !255;
            s.used += bytes;
            s.live.insert(p, bytes);
            Ok(p)
        }
        unsafe fn free(&self, ptr: u64, bytes: usize) {
            let mut s = self.state.lock().unwrap();
            let size = s.live.remove(&ptr).expect("double free or foreign pointer");
            assert_eq!(size, bytes, "freed with the wrong size");
            s.used -= bytes;
            s.frees += 1;
        }
    }

    /// Stream ordering that logs what it was asked to do.
    #[derive(Default)]
    struct FakeOrder {
        next: AtomicU64,
        log: Mutex<Vec<String>>,
        outstanding: Mutex<BTreeSet<u64>>,
    }

    impl FakeOrder {
        fn log(&self) -> Vec<String> {
            std::mem::take(&mut *self.log.lock().unwrap())
        }
    }

    impl StreamOrder for FakeOrder {
        fn record(&self, stream: StreamId) -> Result<Fence, Error> {
            let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            self.outstanding.lock().unwrap().insert(id);
            self.log.lock().unwrap().push(format!("record s{} e{id}", stream.0));
            Ok(Fence(id))
        }
        fn wait(&self, stream: StreamId, fence: &Fence) -> Result<(), Error> {
            assert!(
                self.outstanding.lock().unwrap().contains(&fence.0),
                "wait on a released fence"
            );
            self.log.lock().unwrap().push(format!("wait s{} e{}", stream.0, fence.0));
            Ok(())
        }
        fn release(&self, fence: Fence) {
            assert!(self.outstanding.lock().unwrap().remove(&fence.0), "fence released twice");
        }
        fn synchronize(&self, stream: StreamId) -> Result<(), Error> {
            self.log.lock().unwrap().push(format!("sync s{}", stream.0));
            Ok(())
        }
        fn synchronize_all(&self) -> Result<(), Error> {
            self.log.lock().unwrap().push("sync all".into());
            Ok(())
        }
    }

    const OWN: StreamId = StreamId(7);
    const USER: StreamId = StreamId(9);

    fn manager(capacity: usize) -> (MemoryManager, Arc<FakeAllocator>, Arc<FakeOrder>) {
        let a = FakeAllocator::new(capacity);
        let o = Arc::new(FakeOrder::default());
        (MemoryManager::new(0, OWN, a.clone(), o.clone()), a, o)
    }

    #[test]
    fn size_classes_round_up_within_bounds() {
        assert_eq!(size_class(1), Some(256));
        assert_eq!(size_class(256), Some(256));
        assert_eq!(size_class(257), Some(512));
        assert_eq!(size_class(1 << 20), Some(1 << 20));
        assert_eq!(size_class((1 << 20) + 1), Some((1 << 20) + (1 << 17)));
        assert_eq!(size_class(usize::MAX), None);
        for bytes in (1..40_000_000usize).step_by(9_973) {
            let c = size_class(bytes).unwrap();
            assert!(c >= bytes && c % 256 == 0, "{bytes} -> {c}");
            assert!(c - bytes < 256 || (c - bytes) * 8 <= bytes, "{bytes} -> {c} rounds too much");
            // Classes are stable: a class is its own class.
            assert_eq!(size_class(c), Some(c));
        }
    }

    #[test]
    fn freed_blocks_are_reused_without_new_allocations() {
        let (m, a, o) = manager(1 << 30);
        let x = m.alloc(1000).unwrap();
        let p = x.ptr();
        assert_eq!(m.info(), (1000, 1, 0, 0));
        drop(x);
        assert_eq!(m.info(), (0, 0, 0, 0));
        assert_eq!(m.cached(), (1024, 1));
        let y = m.alloc(1000).unwrap();
        assert_eq!(y.ptr(), p);
        assert_eq!(a.calls(), (1, 0));
        assert!(o.log().is_empty(), "same-stream reuse needs no events");
    }

    #[test]
    fn reuse_accepts_up_to_a_quarter_larger_blocks() {
        let (m, a, _) = manager(1 << 30);
        let big = m.alloc(10 << 20).unwrap();
        let p = big.ptr();
        drop(big);
        // 8.5 MiB: 10 MiB is within 1.25x of it, so the block is reused.
        let x = m.alloc(17 << 19).unwrap();
        assert_eq!(x.ptr(), p);
        drop(x);
        // 4 MiB: 10 MiB is far too big, so a new block is made.
        let y = m.alloc(4 << 20).unwrap();
        assert_ne!(y.ptr(), p);
        assert_eq!(a.calls().0, 2);
    }

    #[test]
    fn many_cycles_return_to_the_start() {
        let (m, a, _) = manager(1 << 30);
        let start = m.info();
        for i in 0..100_000usize {
            let x = m.alloc(256 + (i % 7) * 100).unwrap();
            let y = m.alloc(4096).unwrap();
            drop(x);
            drop(y);
        }
        assert_eq!(m.info(), start);
        assert!(a.calls().0 <= 8, "the cache should serve the loop: {:?}", a.calls());
    }

    #[test]
    fn locked_blocks_are_never_reused_and_survive_drop() {
        let (m, a, _) = manager(1 << 30);
        let x = m.alloc(4096).unwrap();
        let p = x.ptr();
        x.lock();
        assert!(x.is_locked());
        assert_eq!(m.info(), (4096, 1, 4096, 1));
        drop(x);
        // Still allocated, still counted, still locked.
        assert_eq!(m.info(), (4096, 1, 4096, 1));
        assert_eq!(a.live(), 1);
        let others: Vec<DeviceMem> = (0..50).map(|_| m.alloc(4096).unwrap()).collect();
        assert!(others.iter().all(|o| o.ptr() != p));
        drop(others);
        m.gc();
        assert_eq!(a.live(), 1, "gc must not free a locked block");
        assert!(m.unlock_ptr(p));
        assert!(!m.unlock_ptr(p));
        assert_eq!(m.info(), (0, 0, 0, 0));
        let again = m.alloc(4096).unwrap();
        assert_eq!(again.ptr(), p, "an unlocked block returns to the cache");
    }

    #[test]
    fn unlock_before_drop_returns_the_block_normally() {
        let (m, _, _) = manager(1 << 30);
        let x = m.alloc(512).unwrap();
        x.lock();
        x.unlock();
        x.unlock();
        assert_eq!(m.info(), (512, 1, 0, 0));
        drop(x);
        assert_eq!(m.info(), (0, 0, 0, 0));
        assert_eq!(m.cached().1, 1);
    }

    #[test]
    fn out_of_memory_collects_the_cache_and_retries() {
        let (m, a, o) = manager(10 << 20);
        let x = m.alloc(6 << 20).unwrap();
        drop(x);
        assert_eq!(m.cached().0, 6 << 20);
        // 6 MiB cached + 8 MiB do not fit in 10 MiB: the cache is collected, then it fits.
        let y = m.alloc(8 << 20).unwrap();
        assert_eq!(m.cached(), (0, 0));
        assert_eq!(a.used(), 8 << 20);
        assert!(o.log().contains(&"sync all".to_string()), "gc waits for the device");
        drop(y);
    }

    #[test]
    fn out_of_memory_is_an_error_and_the_next_allocation_works() {
        let (m, _, _) = manager(10 << 20);
        let keep = m.alloc(1 << 20).unwrap();
        assert_eq!(m.alloc(1 << 40).unwrap_err(), Error::OutOfMemory { bytes: 1 << 40 });
        assert_eq!(m.alloc(usize::MAX).unwrap_err(), Error::OutOfMemory { bytes: usize::MAX });
        let next = m.alloc(1 << 20).unwrap();
        assert_ne!(next.ptr(), keep.ptr());
        assert_eq!(m.info(), (2 << 20, 2, 0, 0));
    }

    #[test]
    fn rounding_is_dropped_when_only_the_exact_size_fits() {
        let (m, _, _) = manager(9 << 20);
        let bytes = (8 << 20) + 1; // its class is 9 MiB, which fits here
        assert!(m.alloc(bytes).is_ok());
        let (m, a, _) = manager((8 << 20) + 4096);
        let x = m.alloc(bytes).unwrap(); // class (9 MiB) does not fit, the exact size does
        assert_eq!(a.used(), bytes);
        drop(x);
        // The exact-size block is cached and serves the same request again.
        let _y = m.alloc(bytes).unwrap();
        assert_eq!(a.calls().0, 1);
    }

    #[test]
    fn other_errors_are_passed_on() {
        let (m, a, _) = manager(1 << 20);
        a.state.lock().unwrap().fail_other = true;
        assert_eq!(m.alloc(100).unwrap_err(), Error::Driver("fake failure".into()));
    }

    #[test]
    fn zero_bytes_allocate_nothing() {
        let (m, a, _) = manager(1 << 20);
        let z = m.alloc(0).unwrap();
        assert_eq!((z.ptr(), z.len(), z.is_empty()), (0, 0, true));
        assert_eq!(m.info(), (0, 1, 0, 0));
        drop(z);
        assert_eq!(m.info(), (0, 0, 0, 0));
        assert_eq!(a.calls(), (0, 0));
    }

    #[test]
    fn reuse_on_another_stream_waits_for_the_own_stream() {
        let (m, _, o) = manager(1 << 30);
        let x = m.alloc(2048).unwrap();
        let p = x.ptr();
        drop(x);
        assert!(o.log().is_empty(), "freeing on the own stream records nothing");
        let y = m.alloc_on(2048, USER).unwrap();
        assert_eq!(y.ptr(), p);
        assert_eq!(o.log(), vec!["record s7 e1", "wait s9 e1"]);
        // Freed from the user stream: an event is recorded there at once (the stream may be
        // gone by the time of the next reuse), and the own stream waits for it.
        drop(y);
        assert_eq!(o.log(), vec!["record s9 e2"]);
        let z = m.alloc(2048).unwrap();
        assert_eq!(z.ptr(), p);
        assert_eq!(o.log(), vec!["wait s7 e2"]);
        drop(z);
        // Reuse on the stream that recorded the fence needs no wait.
        let w = m.alloc_on(2048, USER).unwrap();
        assert_eq!(o.log(), vec!["record s7 e3", "wait s9 e3"]);
        drop(w);
        let fences_left = o.outstanding.lock().unwrap().len();
        assert_eq!(fences_left, 1, "only the cached block's fence is outstanding");
        m.gc();
        assert!(o.outstanding.lock().unwrap().is_empty(), "gc releases fences");
    }

    #[test]
    fn memory_used_on_several_streams_waits_for_each() {
        let (m, _, o) = manager(1 << 30);
        let x = m.alloc(2048).unwrap();
        x.mark_used_on(USER);
        x.mark_used_on(USER);
        x.mark_used_on(OWN);
        x.mark_used_on(StreamId(11));
        drop(x);
        assert_eq!(o.log(), vec!["record s9 e1", "record s11 e2"]);
        let _y = m.alloc_on(2048, USER).unwrap();
        assert_eq!(o.log(), vec!["record s7 e3", "wait s9 e3", "wait s9 e2"]);
    }

    #[test]
    fn a_block_for_the_requesting_stream_is_preferred() {
        let (m, _, o) = manager(1 << 30);
        let a1 = m.alloc(4096).unwrap();
        let b1 = m.alloc_on(4096, USER).unwrap();
        let (pa, pb) = (a1.ptr(), b1.ptr());
        drop(a1);
        drop(b1);
        o.log();
        let x = m.alloc_on(4096, USER).unwrap();
        assert_eq!(x.ptr(), pb);
        let y = m.alloc(4096).unwrap();
        assert_eq!(y.ptr(), pa);
        assert!(o.log().is_empty());
    }

    #[test]
    fn the_cache_limit_evicts_oldest_first() {
        let (m, a, _) = manager(1 << 30);
        m.set_cache_limit(3 << 20);
        let blocks: Vec<DeviceMem> = (0..5).map(|_| m.alloc(1 << 20).unwrap()).collect();
        let ptrs: Vec<u64> = blocks.iter().map(|b| b.ptr()).collect();
        drop(blocks);
        assert_eq!(m.cached(), (3 << 20, 3));
        assert_eq!(a.live(), 3);
        // The newest three remain.
        let s = a.state.lock().unwrap();
        assert!(ptrs[2..].iter().all(|p| s.live.contains_key(p)));
        drop(s);
        m.set_cache_limit(0);
        assert_eq!(m.cached(), (0, 0));
        assert_eq!(a.live(), 0);
    }

    #[test]
    fn adopted_memory_is_freed_once_by_the_driver_and_never_cached() {
        let (m, a, _) = manager(1 << 30);
        let raw = a.allocate(5000).unwrap();
        // SAFETY: `raw` is a live fake block that nothing else frees; no work is queued.
        let x = unsafe { m.adopt(raw, 5000) };
        assert!(x.is_foreign());
        assert_eq!(m.info(), (5000, 1, 0, 0));
        drop(x);
        assert_eq!(a.calls(), (1, 1));
        assert_eq!(m.cached(), (0, 0));
        assert_eq!(m.info(), (0, 0, 0, 0));
        // Locked adopted memory survives its handle until unlocked.
        let raw = a.allocate(5000).unwrap();
        // SAFETY: `raw` is a live fake block that nothing else frees; no work is queued.
        let y = unsafe { m.adopt(raw, 5000) };
        y.lock();
        drop(y);
        assert_eq!(a.live(), 1);
        assert!(m.unlock_ptr(raw));
        assert_eq!(a.live(), 0);
    }

    #[test]
    fn borrowed_memory_keeps_its_owner_and_is_never_freed() {
        let (m, a, o) = manager(1 << 30);
        let owner = Arc::new(vec![1u8; 4]);
        // SAFETY: a fake address that nothing dereferences, "valid" while `owner` lives.
        let x = unsafe { m.borrow(0xdead_0000, 64, owner.clone()) };
        assert_eq!(Arc::strong_count(&owner), 2);
        drop(x);
        assert_eq!(Arc::strong_count(&owner), 1);
        assert_eq!(a.calls(), (0, 0));
        assert_eq!(m.info(), (0, 0, 0, 0));
        assert_eq!(o.log(), vec!["sync s7"], "users finish before the owner is released");
    }

    #[test]
    fn locked_borrowed_memory_keeps_its_owner_until_unlocked() {
        let (m, a, o) = manager(1 << 30);
        let owner = Arc::new(vec![1u8; 4]);
        // SAFETY: a fake address that nothing dereferences, "valid" while `owner` lives.
        let x = unsafe { m.borrow(0xdead_0000, 64, owner.clone()) };
        // Borrowed twice at the same address: both handles are kept and released together.
        // SAFETY: a fake address that nothing dereferences, "valid" while `owner` lives.
        let y = unsafe { m.borrow(0xdead_0000, 64, owner.clone()) };
        x.lock();
        y.lock();
        drop(x);
        drop(y);
        // The owner may free the memory when dropped, so the user's lock keeps it.
        assert_eq!(Arc::strong_count(&owner), 3);
        assert_eq!(m.info(), (128, 2, 128, 2));
        assert!(o.log().is_empty());
        assert!(m.unlock_ptr(0xdead_0000));
        assert_eq!(Arc::strong_count(&owner), 1);
        assert_eq!(m.info(), (0, 0, 0, 0));
        assert_eq!(a.calls(), (0, 0), "borrowed memory is never freed by the manager");
    }

    #[test]
    fn a_new_allocator_serves_new_blocks_and_old_blocks_return_to_theirs() {
        let (m, a, _) = manager(1 << 30);
        let x = m.alloc(1 << 20).unwrap();
        let cached = m.alloc(2 << 20).unwrap();
        drop(cached);
        let b = FakeAllocator::new(1 << 30);
        m.set_allocator(b.clone());
        assert_eq!(a.calls(), (2, 1), "the cache went back to the old allocator");
        let y = m.alloc(1 << 20).unwrap();
        assert_eq!(b.calls(), (1, 0));
        drop(x);
        drop(y);
        m.gc();
        assert_eq!(a.calls(), (2, 2));
        assert_eq!(b.calls(), (1, 1));
        assert_eq!(m.stats().held_bytes, 0);
    }

    #[test]
    fn stats_count_driver_calls_and_reuses() {
        let (m, _, _) = manager(1 << 30);
        drop(m.alloc(300).unwrap());
        drop(m.alloc(300).unwrap());
        let s = m.stats();
        assert_eq!((s.allocations, s.reuses, s.frees), (1, 1, 0));
        assert_eq!((s.cached_bytes, s.cached_buffers, s.held_bytes), (512, 1, 512));
    }

    #[test]
    fn concurrent_allocation_keeps_the_books_balanced() {
        let (m, a, _) = manager(1 << 30);
        let m = Arc::new(m);
        std::thread::scope(|s| {
            for t in 0..8usize {
                let m = m.clone();
                s.spawn(move || {
                    for i in 0..5_000usize {
                        let x = m.alloc(256 * (1 + (i + t) % 13)).unwrap();
                        if i % 97 == 0 {
                            x.lock();
                            x.unlock();
                        }
                    }
                });
            }
        });
        assert_eq!(m.info(), (0, 0, 0, 0));
        m.gc();
        assert_eq!(a.live(), 0);
    }

    const USER2: StreamId = StreamId(11);

    #[test]
    fn a_scope_allocates_for_the_user_stream_and_joins_both_ways() {
        let (m, _, o) = manager(1 << 30);
        assert_eq!(m.current_stream(), OWN);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let scope = unsafe { m.enter_stream(USER) }.unwrap();
        assert_eq!(o.log(), vec!["record s7 e1", "wait s9 e1"], "the user stream waits for ours");
        assert_eq!(m.current_stream(), USER);
        let x = m.alloc(1000).unwrap();
        assert_eq!(x.home_stream(), USER);
        let p = x.ptr();
        scope.leave().unwrap();
        assert_eq!(o.log(), vec!["record s9 e2", "wait s7 e2"], "ours waits for the user's");
        assert_eq!(m.current_stream(), OWN);
        assert!(m.is_retired(USER));
        // Written on a retired stream: the own stream stands for it, and nothing is recorded
        // on the user's stream (its owner may have destroyed it).
        drop(x);
        assert!(o.log().is_empty());
        let y = m.alloc(1000).unwrap();
        assert_eq!(y.ptr(), p);
        assert!(o.log().is_empty(), "the own stream already waited for the user's at the end");
    }

    #[test]
    fn memory_freed_in_a_scope_is_reused_on_the_own_stream_after_an_event() {
        let (m, _, o) = manager(1 << 30);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let scope = unsafe { m.enter_stream(USER) }.unwrap();
        o.log();
        let x = m.alloc(4096).unwrap();
        let p = x.ptr();
        drop(x);
        assert_eq!(o.log(), vec!["record s9 e2"], "freed on a live user stream: an event");
        // Another thread works on the own stream meanwhile and gets the block: its stream
        // waits for the user stream's event first.
        let (q, home) = std::thread::scope(|t| {
            t.spawn(|| {
                let y = m.alloc(4096).unwrap();
                (y.ptr(), y.home_stream())
            })
            .join()
            .unwrap()
        });
        assert_eq!((q, home), (p, OWN));
        assert_eq!(o.log(), vec!["wait s7 e2"]);
        // This thread's scope is still open: the block, freed on the own stream, is reused on
        // the user's stream after an event recorded on ours.
        let z = m.alloc(4096).unwrap();
        assert_eq!(z.ptr(), p);
        assert_eq!(o.log(), vec!["record s7 e3", "wait s9 e3"]);
        drop(z);
        scope.leave().unwrap();
        assert!(o.outstanding.lock().unwrap().len() <= 1, "fences are released after use");
    }

    #[test]
    fn nested_scopes_restore_the_outer_stream_also_after_a_panic() {
        let (m, _, o) = manager(1 << 30);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let outer = unsafe { m.enter_stream(USER) }.unwrap();
        o.log();
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let inner = unsafe { m.enter_stream(USER2) }.unwrap();
        assert_eq!(o.log(), vec!["record s9 e2", "wait s11 e2", "record s7 e3", "wait s11 e3"]);
        assert_eq!(m.current_stream(), USER2);
        inner.leave().unwrap();
        assert_eq!(o.log(), vec!["record s11 e4", "wait s9 e4", "record s11 e5", "wait s7 e5"]);
        assert_eq!(m.current_stream(), USER);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: a stream id of the fake stream order, which never reaches a driver.
            let _scope = unsafe { m.enter_stream(USER2) }.unwrap();
            assert_eq!(m.current_stream(), USER2);
            panic!("inside a scope");
        }));
        assert!(panicked.is_err());
        assert_eq!(m.current_stream(), USER, "unwinding left the inner scope");
        assert!(m.is_retired(USER2));
        assert!(!m.is_retired(USER));
        outer.leave().unwrap();
        assert_eq!(m.current_stream(), OWN);
        assert!(m.open_streams().is_empty());
    }

    #[test]
    fn a_stream_retires_after_its_last_scope() {
        let (m, _, _) = manager(1 << 30);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let a = unsafe { m.enter_stream(USER) }.unwrap();
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let b = unsafe { m.enter_stream(USER) }.unwrap();
        assert_eq!(m.open_streams(), vec![USER]);
        a.leave().unwrap(); // out of order: still valid
        assert!(!m.is_retired(USER));
        assert_eq!(m.current_stream(), USER);
        b.leave().unwrap();
        assert!(m.is_retired(USER));
        // Used again later: active again.
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let c = unsafe { m.enter_stream(USER) }.unwrap();
        assert!(!m.is_retired(USER));
        drop(c);
        assert!(m.is_retired(USER));
    }

    #[test]
    fn scopes_on_the_own_stream_change_nothing() {
        let (m, _, o) = manager(1 << 30);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let s = unsafe { m.enter_stream(OWN) }.unwrap();
        assert_eq!(m.current_stream(), OWN);
        s.leave().unwrap();
        assert!(o.log().is_empty());
        assert!(m.open_streams().is_empty() && !m.is_retired(OWN));
    }

    #[test]
    fn scopes_are_per_thread() {
        let (m, _, _) = manager(1 << 30);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let s = unsafe { m.enter_stream(USER) }.unwrap();
        let other = std::thread::scope(|t| t.spawn(|| m.current_stream()).join().unwrap());
        assert_eq!(other, OWN);
        s.leave().unwrap();
    }

    #[test]
    fn use_on_another_stream_waits_for_the_producer_and_delays_reuse() {
        let (m, _, o) = manager(1 << 30);
        let x = m.alloc_on(2048, USER).unwrap();
        m.order_use(&x, USER).unwrap();
        assert!(o.log().is_empty(), "same stream: nothing to order");
        m.order_use(&x, OWN).unwrap();
        assert_eq!(o.log(), vec!["record s9 e1", "wait s7 e1"]);
        drop(x);
        // Both streams used it: an event on the user stream, the own one fenced lazily.
        assert_eq!(o.log(), vec!["record s9 e2"]);
        let y = m.alloc_on(2048, USER2).unwrap();
        assert_eq!(o.log(), vec!["record s7 e3", "wait s11 e3", "wait s11 e2"]);
        // A producer made to wait for a stream that wrote into it afterwards.
        m.producer_waits_for(&y, USER).unwrap();
        assert_eq!(o.log(), vec!["record s9 e4", "wait s11 e4"]);
        m.wait_for_producer(&y, OWN).unwrap();
        assert_eq!(o.log(), vec!["record s11 e5", "wait s7 e5"]);
    }

    #[test]
    fn device_wide_waits_cover_every_open_stream() {
        let (m, _, o) = manager(1 << 30);
        // SAFETY: a stream id of the fake stream order, which never reaches a driver.
        let s = unsafe { m.enter_stream(USER) }.unwrap();
        o.log();
        let other = StreamId(42);
        m.wait_for_all(other).unwrap();
        assert_eq!(o.log(), vec!["record s7 e2", "wait s42 e2", "record s9 e3", "wait s42 e3"]);
        m.all_wait_for(other).unwrap();
        assert_eq!(o.log(), vec!["record s42 e4", "wait s7 e4", "record s42 e5", "wait s9 e5"]);
        s.leave().unwrap();
        o.log();
        m.wait_for_all(other).unwrap();
        assert_eq!(o.log(), vec!["record s7 e7", "wait s42 e7"], "retired streams are left out");
    }

    #[test]
    fn device_mem_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<DeviceMem>();
        check::<MemoryManager>();
    }
}
