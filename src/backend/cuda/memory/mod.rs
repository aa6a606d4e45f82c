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
//!   `cuMemAlloc` and frees it exactly once, with the driver, never into the cache; if it is
//!   still locked when its handle drops, it goes back to the user instead (emberfire forgets
//!   it: no free, no count, no record). [`MemoryManager::borrow`] wraps memory someone else
//!   owns and only keeps its owner alive (until unlocked, if it was locked when its handle
//!   dropped).
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
//! event operations go through [`StreamOrder`](stream_order::StreamOrder), so the unit tests
//! (`tests.rs`) drive the whole pool with fakes on machines without a GPU. The CUDA
//! implementations are [`DriverAllocator`] and [`DriverStreamOrder`].
//!
//! The files: `allocator.rs` (the raw allocator trait), `pool.rs` (the manager, size classes
//! and the cache), `device_mem.rs` (the handle of one block: locking, adopted and borrowed
//! memory), `stream_order.rs` (stream ids, events and the user-stream scopes), `driver.rs`
//! (the CUDA implementations) and `tests.rs`.

mod allocator;
mod device_mem;
mod driver;
mod pool;
mod stream_order;
#[cfg(test)]
mod tests;

pub use allocator::DeviceAllocator;
pub(crate) use device_mem::DeviceMem;
pub(crate) use driver::{DriverAllocator, DriverStreamOrder};
pub(crate) use pool::MemoryManager;
pub(crate) use stream_order::StreamId;
