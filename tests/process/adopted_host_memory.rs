//! Memory adopted with `Array::new_from_device_ptr` on the CPU backend, where it is a
//! `Box<[T]>` handed over with `Box::into_raw`: emberfire frees it exactly once, when its last
//! array is dropped, unless it is locked then; in that case it goes back to its owner, and
//! emberfire forgets it (no free, no count, no record). That is ArrayFire's interop pattern:
//! lock an adopted buffer so that the library does not free what the application frees
//! itself.
//!
//! These tests are about host memory, so they run on the CPU backend whatever
//! `EMBERFIRE_BACKEND` names. The CUDA form of the pattern is tested in
//! `cuda-interop/tests/interop/memory.rs`. A counting allocator tells whether emberfire freed a
//! buffer; it is the `#[global_allocator]` of the whole `process` binary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::MutexGuard;

use emberfire::{device_mem_info, dim4, set_backend, Array, Backend};

/// The system allocator, counting the frees of one watched address.
struct Watching;

/// The watched address (0: none) and how many times it was freed since it was set.
static WATCHED: AtomicUsize = AtomicUsize::new(0);
static WATCHED_FREES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; the counting touches
// only atomics and allocates nothing.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ptr as usize == WATCHED.load(Ordering::SeqCst) {
            WATCHED_FREES.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

/// Counts the frees of `ptr` from now on.
fn watch(ptr: *mut f32) {
    WATCHED_FREES.store(0, Ordering::SeqCst);
    WATCHED.store(ptr as usize, Ordering::SeqCst);
}

/// Stops watching and returns how many times the watched address was freed.
fn frees() -> usize {
    WATCHED.store(0, Ordering::SeqCst);
    WATCHED_FREES.load(Ordering::SeqCst)
}

/// Makes the CPU backend active for this thread, one test at a time (the binary's `serial`
/// lock): the tests read process-wide counters and watch addresses that other tests would
/// disturb.
fn cpu() -> MutexGuard<'static, ()> {
    let guard = crate::serial();
    set_backend(Backend::CPU);
    guard
}

/// A buffer of the application's, handed over as `new_from_device_ptr` takes it on the CPU.
fn user_buffer(values: &[f32]) -> *mut f32 {
    Box::into_raw(values.to_vec().into_boxed_slice()) as *mut f32
}

/// Takes back a buffer that emberfire gave back.
///
/// # Safety
///
/// `ptr` comes from `user_buffer` with `n` elements, and emberfire gave it back (its last
/// array was dropped while it was locked); it is taken back once.
unsafe fn take_back(ptr: *mut f32, n: usize) -> Box<[f32]> {
    // SAFETY: the caller's contract: a live `Box<[f32]>` of `n` elements that nothing owns.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

#[test]
fn the_interop_pattern_leaves_nothing_behind() {
    let _cpu = cpu();
    let n = 64 * 64;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| 3.0 - i as f32 * 0.5).collect();
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| x + y).collect();
    let start = device_mem_info();
    for round in 0..10_000 {
        let (px, py) = (user_buffer(&xs), user_buffer(&ys));
        watch(px);
        // SAFETY: boxes of n initialised elements; locked below before any array can drop,
        // so they come back to us instead of being freed.
        let x = unsafe { Array::new_from_device_ptr(px, dim4!(64, 64)) };
        // SAFETY: as for `x`.
        let y = unsafe { Array::new_from_device_ptr(py, dim4!(64, 64)) };
        x.lock();
        y.lock();
        let o = &x + &y;
        let p = o.device_ptr() as *const f32;
        // SAFETY: `o`'s memory is locked and holds n elements.
        let seen = unsafe { std::slice::from_raw_parts(p, n) };
        assert!(seen == &want[..], "round {round}: x + y is wrong");
        o.unlock();
        drop((x, y, o));
        assert_eq!(frees(), 0, "round {round}: emberfire freed a buffer it gave back");
        assert_eq!(device_mem_info(), start, "round {round}: something was left behind");
        // SAFETY: both were given back just now.
        let (bx, by) = unsafe { (take_back(px, n), take_back(py, n)) };
        assert!(bx[..] == xs[..] && by[..] == ys[..], "round {round}: the buffers changed");
    }
}

#[test]
fn adopted_memory_dropped_unlocked_is_freed_once_by_emberfire() {
    let _cpu = cpu();
    let start = device_mem_info();
    let p = user_buffer(&[1.0, 2.0, 3.0, 4.0]);
    watch(p);
    // SAFETY: a box of 4 initialised elements, given to emberfire.
    let a = unsafe { Array::new_from_device_ptr(p, dim4!(4)) };
    assert_eq!(device_mem_info(), (start.0 + 16, start.1 + 1, start.2, start.3));
    let b = a.clone();
    drop(a);
    assert_eq!(WATCHED_FREES.load(Ordering::SeqCst), 0, "an array still uses it");
    drop(b);
    assert_eq!(frees(), 1);
    assert_eq!(device_mem_info(), start);

    // Locked, then unlocked before its last array is dropped: emberfire's again.
    let p = user_buffer(&[5.0; 8]);
    watch(p);
    // SAFETY: as above.
    let a = unsafe { Array::new_from_device_ptr(p, dim4!(8)) };
    assert_eq!(a.device_ptr() as *mut f32, p, "adopted memory is used in place");
    assert_eq!(device_mem_info().3, start.3 + 1);
    a.unlock();
    drop(a);
    assert_eq!(frees(), 1);
    assert_eq!(device_mem_info(), start);
}

#[test]
fn an_address_given_back_is_new_memory_when_it_comes_again() {
    let _cpu = cpu();
    let start = device_mem_info();
    let p = user_buffer(&[1.0, 2.0, 3.0]);
    // SAFETY: a box of 3 initialised elements; locked before it is dropped.
    let a = unsafe { Array::new_from_device_ptr(p, dim4!(3)) };
    a.lock();
    drop(a);
    assert_eq!(device_mem_info(), start, "given back: no longer counted, locked or not");
    // The same allocation, at the same address, handed over again: a buffer like any other,
    // not locked, which emberfire frees with its array. A record of the first hand-over left
    // at that address would make it look locked and keep it past its drop.
    // SAFETY: given back above.
    let again = Box::into_raw(unsafe { take_back(p, 3) }) as *mut f32;
    assert_eq!(again, p);
    watch(again);
    // SAFETY: a box of 3 initialised elements, given to emberfire for good.
    let b = unsafe { Array::new_from_device_ptr(again, dim4!(3)) };
    assert!(!b.is_locked(), "a lock of the earlier hand-over survived");
    assert_eq!(device_mem_info().3, start.3);
    let c = &b * 2.0f32;
    assert_eq!(c.to_vec(), vec![2.0, 4.0, 6.0]);
    drop((b, c));
    assert_eq!(frees(), 1);
    assert_eq!(device_mem_info(), start);
}

#[test]
fn memory_emberfire_allocated_stays_locked_after_its_array() {
    let _cpu = cpu();
    let start = device_mem_info();
    let a = Array::new(&[7.0f32; 16], dim4!(16));
    let p = a.device_ptr() as *mut f32;
    watch(p);
    drop(a);
    // Not adopted, so not given back: kept (and counted) for the pointer, never freed.
    assert_eq!(frees(), 0);
    assert_eq!(device_mem_info(), (start.0 + 64, start.1 + 1, start.2 + 64, start.3 + 1));
    // SAFETY: locked memory stays allocated and holds 16 values.
    assert_eq!(unsafe { std::slice::from_raw_parts(p, 16) }, &[7.0; 16]);
}
