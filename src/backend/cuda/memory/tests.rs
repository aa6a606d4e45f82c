//! The pool driven with a fake allocator and fake stream ordering, on any machine.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::allocator::DeviceAllocator;
use super::device_mem::DeviceMem;
use super::pool::{size_class, MemoryManager};
use super::stream_order::{Fence, StreamId, StreamOrder};
use crate::error::Error;
use crate::sync::lock;

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
    /// Hand out freed addresses again, most recent first, as the driver does; off by default
    /// so that tests can tell blocks apart by address.
    reuse: bool,
    freed: Vec<(u64, usize)>,
}

impl FakeAllocator {
    fn new(capacity: usize) -> Arc<FakeAllocator> {
        Arc::new(FakeAllocator {
            capacity,
            state: Mutex::new(FakeState { next: 0x1000_0000, ..Default::default() }),
        })
    }
    fn reusing(capacity: usize) -> Arc<FakeAllocator> {
        let a = FakeAllocator::new(capacity);
        lock(&a.state).reuse = true;
        a
    }
    fn used(&self) -> usize {
        lock(&self.state).used
    }
    fn live(&self) -> usize {
        lock(&self.state).live.len()
    }
    fn calls(&self) -> (usize, usize) {
        let s = lock(&self.state);
        (s.allocs, s.frees)
    }
}

// SAFETY: the fake hands out an address again only after it was freed; nothing dereferences
// it.
unsafe impl DeviceAllocator for FakeAllocator {
    fn allocate(&self, bytes: usize) -> Result<u64, Error> {
        let mut s = lock(&self.state);
        if s.fail_other {
            return Err(Error::Driver("fake failure".into()));
        }
        if s.used + bytes > self.capacity {
            return Err(Error::OutOfMemory { bytes });
        }
        s.allocs += 1;
        let again = if s.reuse { s.freed.iter().rposition(|&(_, n)| n == bytes) } else { None };
        let p = match again {
            Some(i) => s.freed.remove(i).0,
            None => {
                let p = s.next;
                s.next += (bytes as u64 + 255) & !255;
                p
            }
        };
        s.used += bytes;
        s.live.insert(p, bytes);
        Ok(p)
    }
    unsafe fn free(&self, ptr: u64, bytes: usize) {
        let mut s = lock(&self.state);
        let size = s.live.remove(&ptr).expect("double free or foreign pointer");
        assert_eq!(size, bytes, "freed with the wrong size");
        s.used -= bytes;
        s.frees += 1;
        if s.reuse {
            s.freed.push((ptr, bytes));
        }
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
        std::mem::take(&mut *lock(&self.log))
    }
}

impl StreamOrder for FakeOrder {
    fn record(&self, stream: StreamId) -> Result<Fence, Error> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        lock(&self.outstanding).insert(id);
        lock(&self.log).push(format!("record s{} e{id}", stream.0));
        Ok(Fence(id))
    }
    fn wait(&self, stream: StreamId, fence: &Fence) -> Result<(), Error> {
        assert!(lock(&self.outstanding).contains(&fence.0), "wait on a released fence");
        lock(&self.log).push(format!("wait s{} e{}", stream.0, fence.0));
        Ok(())
    }
    fn release(&self, fence: Fence) {
        assert!(lock(&self.outstanding).remove(&fence.0), "fence released twice");
    }
    fn synchronize(&self, stream: StreamId) -> Result<(), Error> {
        lock(&self.log).push(format!("sync s{}", stream.0));
        Ok(())
    }
    fn synchronize_all(&self) -> Result<(), Error> {
        lock(&self.log).push("sync all".into());
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
        assert!(c >= bytes && c.is_multiple_of(256), "{bytes} -> {c}");
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
fn unused_memory_never_comes_from_the_cache_and_returns_to_it() {
    let (m, a, o) = manager(1 << 30);
    let x = m.alloc(1000).unwrap();
    let p = x.ptr();
    drop(x);
    assert_eq!(m.cached(), (1024, 1));
    // a block that no stream has used: a new one, though a cached block would fit
    let fresh = m.alloc_unused(1000, OWN).unwrap();
    assert_ne!(fresh.ptr(), p);
    assert_eq!((fresh.len(), m.cached()), (1000, (1024, 1)));
    assert_eq!(m.info(), (1000, 1, 0, 0));
    assert_eq!(a.calls(), (2, 0));
    assert!(m.alloc_unused(0, OWN).unwrap().is_empty());
    // once dropped it is cached like any other block
    drop(fresh);
    assert_eq!(m.cached(), (2048, 2));
    assert!(o.log().is_empty(), "nothing to order");
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
    lock(&a.state).fail_other = true;
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
    let fences_left = lock(&o.outstanding).len();
    assert_eq!(fences_left, 1, "only the cached block's fence is outstanding");
    m.gc();
    assert!(lock(&o.outstanding).is_empty(), "gc releases fences");
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
    let s = lock(&a.state);
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
    // Locked and unlocked again before the drop: still emberfire's, freed once.
    let raw = a.allocate(5000).unwrap();
    // SAFETY: `raw` is a live fake block that nothing else frees; no work is queued.
    let y = unsafe { m.adopt(raw, 5000) };
    y.lock();
    y.unlock();
    drop(y);
    assert_eq!(a.calls(), (2, 2));
    assert_eq!(m.info(), (0, 0, 0, 0));
}

#[test]
fn locked_adopted_memory_goes_back_to_the_user() {
    // ArrayFire's interop pattern: the application adopts a buffer it keeps owning, locks the
    // array so that the library does not free it, drops the arrays, and frees the buffer
    // itself. The fake, like the driver, then hands the same address out again.
    let (m, a, o) = {
        let a = FakeAllocator::reusing(1 << 30);
        let o = Arc::new(FakeOrder::default());
        (MemoryManager::new(0, OWN, a.clone(), o.clone()), a, o)
    };
    let bytes = 16 << 10;
    let mut addresses = BTreeSet::new();
    for round in 0..1_000 {
        let raw = a.allocate(bytes).unwrap(); // the application's buffer
        addresses.insert(raw);
        // SAFETY: a live block of the fake, freed below by its owner and by nothing else.
        let x = unsafe { m.adopt(raw, bytes) };
        x.lock();
        assert_eq!(m.info(), (bytes, 1, bytes, 1));
        drop(x);
        assert_eq!(m.info(), (0, 0, 0, 0), "round {round}: forgotten, not counted");
        assert_eq!(o.log(), vec!["sync s7"], "emberfire's work on it finishes first");
        assert!(!m.unlock_ptr(raw), "round {round}: no record of it is kept");
        // SAFETY: the application's own block; the fake panics if it was freed already.
        unsafe { a.free(raw, bytes) };
    }
    assert_eq!(addresses.len(), 1, "the fake handed the freed address out again");
    assert_eq!(a.calls(), (1_000, 1_000), "emberfire freed none of them");
    assert_eq!(m.cached(), (0, 0));
}

#[test]
fn an_address_given_back_and_reused_is_not_mistaken_for_the_old_memory() {
    let a = FakeAllocator::reusing(1 << 30);
    let m = MemoryManager::new(0, OWN, a.clone(), Arc::new(FakeOrder::default()));
    // Adopted, locked and dropped: the memory is the application's again, which frees it.
    let raw = a.allocate(4096).unwrap();
    // SAFETY: a live block of the fake, freed below by its owner only.
    let x = unsafe { m.adopt(raw, 4096) };
    x.lock();
    drop(x);
    // SAFETY: the application's own block.
    unsafe { a.free(raw, 4096) };
    // The allocator hands the address to the pool, whose block is then locked and dropped.
    let y = m.alloc(4096).unwrap();
    assert_eq!(y.ptr(), raw);
    y.lock();
    drop(y);
    assert_eq!(m.info(), (4096, 1, 4096, 1));
    // Unlocking the address releases that block and nothing else: no stale record of the
    // adopted memory frees the pool's block under it.
    assert!(m.unlock_ptr(raw));
    assert!(!m.unlock_ptr(raw));
    assert_eq!(m.info(), (0, 0, 0, 0));
    assert_eq!(m.cached(), (4096, 1));
    assert_eq!(a.calls(), (2, 1));
    m.gc();
    assert_eq!((a.calls(), a.live()), ((2, 2), 0));
}

#[test]
fn borrowed_memory_keeps_its_owner_and_is_never_freed() {
    let (m, a, o) = manager(1 << 30);
    let owner = Arc::new(vec![1u8; 4]);
    // SAFETY: a fake address that nothing dereferences, "valid" while `owner` lives.
    let x = unsafe { m.borrow(0xdead_0000, 64, owner.clone(), false) };
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
    let x = unsafe { m.borrow(0xdead_0000, 64, owner.clone(), false) };
    // Borrowed twice at the same address: both handles are kept and released together.
    // SAFETY: a fake address that nothing dereferences, "valid" while `owner` lives.
    let y = unsafe { m.borrow(0xdead_0000, 64, owner.clone(), false) };
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
    assert!(lock(&o.outstanding).len() <= 1, "fences are released after use");
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
