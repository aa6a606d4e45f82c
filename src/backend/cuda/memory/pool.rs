//! The manager of one device and its pool: size classes, the cache of freed blocks, and the
//! counters.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use super::allocator::DeviceAllocator;
use super::device_mem::{DeviceMem, Origin, Orphan};
use super::stream_order::{effective_streams, Fence, StreamId, StreamOrder};
use crate::error::Error;
use crate::sync::lock;

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

pub(super) struct PoolState {
    allocator: Arc<dyn DeviceAllocator>,
    /// (block size, age tick) of every cached block: best fit is the first in a range.
    by_size: BTreeSet<(usize, u64)>,
    /// Cached blocks by age tick (oldest first, for eviction).
    blocks: BTreeMap<u64, Block>,
    tick: u64,
    cached_bytes: usize,
    cache_limit: usize,
    /// Locked memory whose handle dropped, by address (several for memory borrowed twice).
    /// Every address here is memory emberfire still keeps allocated (see `Orphan`), so an
    /// address cannot be reused by the driver while it has a record.
    pub(super) orphans: HashMap<u64, Vec<Orphan>>,
}

/// The state shared by a manager and every `DeviceMem` it handed out.
pub(super) struct Pool {
    pub(super) ordinal: usize,
    pub(super) own_stream: StreamId,
    pub(super) order: Arc<dyn StreamOrder>,
    /// User streams that scopes have made current, with the number of scopes open on each;
    /// 0 means retired (see the module documentation). Held for reading while recording on or
    /// synchronising a user stream, so that a stream cannot retire (and be destroyed by its
    /// owner) in the middle of such a call.
    pub(super) streams: RwLock<HashMap<StreamId, usize>>,
    /// Frees adopted memory: always the driver, whatever allocator is installed.
    pub(super) driver: Arc<dyn DeviceAllocator>,
    state: Mutex<PoolState>,
    pub(super) live_bytes: AtomicUsize,
    pub(super) live_buffers: AtomicUsize,
    pub(super) locked_bytes: AtomicUsize,
    pub(super) locked_buffers: AtomicUsize,
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
    pub(super) pool: Arc<Pool>,
}

impl fmt::Debug for MemoryManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryManager")
            .field("ordinal", &self.pool.ordinal)
            .field("stats", &self.stats())
            .finish()
    }
}

pub(super) fn lock_state(pool: &Pool) -> MutexGuard<'_, PoolState> {
    // A panic while holding the lock cannot leave the maps inconsistent in a way that matters
    // more than losing the device, so keep going with the data as it is.
    lock(&pool.state)
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
        self.alloc_new(bytes, class, stream)
    }

    /// Allocates `bytes` for use on `stream` from the allocator, never from the cache: memory
    /// no stream has used, which work may be queued on without waiting for anything queued
    /// before it (the reduction's tickets are zeroed this way while launches are held back).
    pub(crate) fn alloc_unused(&self, bytes: usize, stream: StreamId) -> Result<DeviceMem, Error> {
        if bytes == 0 {
            return Ok(self.wrap(0, 0, stream, Origin::Empty));
        }
        let class = size_class(bytes).ok_or(Error::OutOfMemory { bytes })?;
        self.alloc_new(bytes, class, stream)
    }

    /// A new block of size `class` (or exactly `bytes` where the class does not fit) from the
    /// allocator, the cache freed first if the memory is not there.
    fn alloc_new(&self, bytes: usize, class: usize, stream: StreamId) -> Result<DeviceMem, Error> {
        let pool = &self.pool;
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

/// Puts a freed pool block into the cache, recording what its reuse must wait for.
pub(super) fn recycle(
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
