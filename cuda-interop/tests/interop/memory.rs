//! Memory across the boundary: adopted pointers freed exactly once, borrowed ones never,
//! slices taken over with their pending work ordered, every refused pointer, locks that hold
//! under memory pressure and give the memory back to the pool, and adopted buffers lent locked
//! that go back to their owner with nothing left behind. Needs a CUDA device (skips without
//! one).

use crate::common;

// The book's example of ArrayFire's lock pattern, tested here as the book shows it (its `main`
// is run by `examples.rs`, which loads it for this binary).
use crate::examples::lend_buffers;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use emberfire::{constant, device_gc, device_mem_info, dim4, Array};
use emberfire_cuda_interop::{
    self as interop,
    cudarc::driver::{result as cu, CudaContext, DevicePtr, PushKernelArg},
    Error, LaunchConfig, RawKernel,
};

const MIB: usize = 1 << 20;

/// A raw `cuMemAlloc` block in emberfire's context, filled with `byte`.
fn raw_block(bytes: usize, byte: u8) -> u64 {
    interop::context(common::dev()).unwrap().bind_to_thread().unwrap();
    // SAFETY: the context is current; the block is filled before use.
    unsafe {
        let p = cu::malloc_sync(bytes).unwrap();
        cu::memset_d8_sync(p, byte, bytes).unwrap();
        p
    }
}

#[test]
fn an_adopted_pointer_is_freed_exactly_once() {
    let Some(_gpu) = common::cuda() else { return };
    device_gc();
    let bytes = 64 * MIB;
    let baseline = common::free_device_memory();
    let raw = raw_block(bytes, 7);
    assert!(baseline - common::free_device_memory() >= bytes);
    // SAFETY: a whole cuMemAlloc block of initialised bytes, given to emberfire.
    let a = unsafe { interop::array_from_device_ptr(raw as *mut u8, dim4!(bytes)) }.unwrap();
    let b = a.clone();
    let c = &a + 1u8;
    assert_eq!((emberfire::min_all(&c).0, emberfire::max_all(&c).0), (8, 8));
    drop((a, b, c));
    device_gc();
    let after = common::free_device_memory();
    assert!(after + 8 * MIB >= baseline, "the adopted block was not freed ({baseline} -> {after})");
    // Freed once, not twice: a new block (likely at the same address) survives more emberfire
    // work, and freeing it ourselves succeeds.
    let again = raw_block(bytes, 1);
    let d = (Array::new(&[1.0f32; 1024], dim4!(1024)) * 2.0f32).to_vec();
    assert_eq!(d[1023], 2.0);
    device_gc();
    // SAFETY: our own block, freed once here.
    unsafe { cu::free_sync(again) }.expect("the block was freed by someone else");
}

/// An owner that frees its block when dropped and records that it did, and how.
struct Owner {
    ptr: u64,
    drops: Arc<AtomicUsize>,
    freed: Arc<Mutex<Option<bool>>>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        let _ = interop::context(common::dev()).unwrap().bind_to_thread();
        // SAFETY: the block is ours; it fails if someone else freed it already.
        let ok = unsafe { cu::free_sync(self.ptr) }.is_ok();
        *self.freed.lock().unwrap() = Some(ok);
    }
}

/// A block, its owner, and the owner's records.
struct Owned {
    ptr: u64,
    owner: Arc<Owner>,
    drops: Arc<AtomicUsize>,
    freed: Arc<Mutex<Option<bool>>>,
}

fn owned_block(bytes: usize, byte: u8) -> Owned {
    let ptr = raw_block(bytes, byte);
    let drops = Arc::new(AtomicUsize::new(0));
    let freed = Arc::new(Mutex::new(None));
    let owner = Arc::new(Owner { ptr, drops: drops.clone(), freed: freed.clone() });
    Owned { ptr, owner, drops, freed }
}

#[test]
fn borrowed_memory_is_never_freed_and_its_owner_is_released_once() {
    let Some(_gpu) = common::cuda() else { return };
    device_gc();
    let bytes = 32 * MIB;
    let baseline = common::free_device_memory();
    let Owned { ptr, owner, drops, freed } = owned_block(bytes, 3);
    // SAFETY: `bytes` initialised bytes, alive while the owner lives.
    let a =
        unsafe { interop::array_from_borrowed_ptr(ptr as *const u8, dim4!(bytes), owner) }.unwrap();
    let b = &a * 2u8;
    assert_eq!(emberfire::max_all(&b).0, 6);
    let copy = a.clone();
    drop(a);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "an array still uses the memory");
    drop((b, copy));
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the owner is released when the last array goes");
    assert_eq!(*freed.lock().unwrap(), Some(true), "emberfire must not have freed borrowed memory");
    device_gc();
    assert!(common::free_device_memory() + 8 * MIB >= baseline);
}

#[test]
fn a_lock_keeps_a_borrowed_owner_until_it_is_released() {
    let Some(_gpu) = common::cuda() else { return };
    let Owned { ptr, owner, drops, freed } = owned_block(MIB, 9);
    // SAFETY: as above.
    let a =
        unsafe { interop::array_from_borrowed_ptr(ptr as *const u8, dim4!(MIB), owner) }.unwrap();
    let guard = interop::lock(&a).unwrap();
    drop(a);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "the lock keeps the memory");
    drop(guard);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(*freed.lock().unwrap(), Some(true));
    // The same through `Array::lock` and `unlock_device_ptr` after the array is gone.
    let Owned { ptr, owner, drops, freed } = owned_block(MIB, 9);
    // SAFETY: as above.
    let a =
        unsafe { interop::array_from_borrowed_ptr(ptr as *const u8, dim4!(MIB), owner) }.unwrap();
    let locked_before = device_mem_info().3;
    a.lock();
    drop(a);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    assert_eq!(device_mem_info().3, locked_before + 1);
    assert!(interop::unlock_device_ptr(common::dev(), ptr).unwrap());
    assert!(!interop::unlock_device_ptr(common::dev(), ptr).unwrap());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(*freed.lock().unwrap(), Some(true));
    assert_eq!(device_mem_info().3, locked_before);
}

const SLOW_FILL: &str = r#"
extern "C" __global__ void slow_fill(float* out, float value, unsigned n, long long cycles) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
    if (i < n) out[i] = value;
}
"#;

#[test]
fn a_slice_is_taken_over_after_its_pending_writes() {
    let Some(_gpu) = common::cuda() else { return };
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    let slow_fill = RawKernel::new(SLOW_FILL, "slow_fill").compile(common::dev()).unwrap();
    let n: u32 = 1 << 20;
    for run in 0..8 {
        let value = 0.25 + run as f32;
        let mut slice = mine.alloc_zeros::<f32>(n as usize).unwrap();
        // SAFETY: slow_fill(float*, float, unsigned, long long) over the slice's n elements.
        unsafe {
            mine.launch_builder(slow_fill.function())
                .arg(&mut slice)
                .arg(&value)
                .arg(&n)
                .arg(&1_000_000i64)
                .launch(LaunchConfig::for_num_elems(n))
        }
        .unwrap();
        // No synchronisation: emberfire's reads wait for the kernel by themselves.
        let a = interop::array_from_slice(slice, dim4!(1024, n / 1024)).unwrap();
        let v = (&a * 2.0f32).to_vec();
        assert!(
            v.iter().all(|&x| x == 2.0 * value),
            "run {run}: read before the slice's kernel wrote"
        );
    }
}

#[test]
fn slices_convert_with_their_shape_checked() {
    let Some(_gpu) = common::cuda() else { return };
    let s = interop::stream(common::dev()).unwrap();
    let values: Vec<i64> = (0..24).map(|i| i * i - 7).collect();
    // All of it, in four dimensions.
    let a = interop::array_from_slice(s.clone_htod(&values).unwrap(), dim4!(2, 3, 2, 2)).unwrap();
    assert_eq!(a.to_vec(), values);
    // The first elements only.
    let b = interop::array_from_slice(s.clone_htod(&values).unwrap(), dim4!(5)).unwrap();
    assert_eq!(b.to_vec(), values[..5].to_vec());
    // Too short.
    let e = interop::array_from_slice(s.clone_htod(&values).unwrap(), dim4!(25)).unwrap_err();
    assert_eq!(
        e,
        Error::SizeMismatch { function: "array_from_slice", needed: 200, available: 192 }
    );
    // Shared: the slice is never freed by emberfire and its Arc is let go.
    let shared = Arc::new(s.clone_htod(&values).unwrap());
    let c = interop::array_from_shared_slice(shared.clone(), dim4!(24)).unwrap();
    assert_eq!(Arc::strong_count(&shared), 2);
    assert_eq!(emberfire::sum_all(&c).0, values.iter().sum::<i64>());
    drop(c);
    assert_eq!(Arc::strong_count(&shared), 1);
    assert_eq!(s.clone_dtoh(&*shared).unwrap(), values);
    // Empty arrays over a slice.
    let empty = interop::array_from_slice(s.clone_htod(&values).unwrap(), dim4!(0)).unwrap();
    assert!(empty.is_empty());
    // A slice of another context.
    let other = CudaContext::new_non_primary(common::dev() as usize, 0).unwrap();
    let theirs = other.new_stream().unwrap().clone_htod(&values).unwrap();
    let e = interop::array_from_slice(theirs, dim4!(24)).unwrap_err();
    assert_eq!(e, Error::WrongContext { function: "array_from_slice", what: "slice" });
}

#[test]
fn bad_pointers_are_errors() {
    let Some(_gpu) = common::cuda() else { return };
    // Null.
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_device_ptr(std::ptr::null_mut::<f32>(), dim4!(4)) }
        .unwrap_err();
    assert_eq!(e, Error::NullPointer { function: "array_from_device_ptr" });
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe {
        interop::array_from_borrowed_ptr(std::ptr::null::<f32>(), dim4!(4), Arc::new(()))
    }
    .unwrap_err();
    assert_eq!(e, Error::NullPointer { function: "array_from_borrowed_ptr" });
    // Host memory, pageable and pinned.
    let mut host = vec![1.0f32; 16];
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_device_ptr(host.as_mut_ptr(), dim4!(16)) }.unwrap_err();
    assert_eq!(
        e,
        Error::NotDeviceMemory { function: "array_from_device_ptr", ptr: host.as_ptr() as u64 }
    );
    let ctx = interop::context(common::dev()).unwrap();
    // SAFETY: pinned memory only used as an address here.
    let pinned = unsafe { ctx.alloc_pinned::<f32>(16) }.unwrap();
    let p = pinned.as_ptr().unwrap();
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_borrowed_ptr(p, dim4!(16), Arc::new(())) }.unwrap_err();
    assert_eq!(e, Error::NotDeviceMemory { function: "array_from_borrowed_ptr", ptr: p as u64 });
    // Inside an allocation: borrowing is fine, adopting is not (only whole blocks are freed).
    let raw = raw_block(MIB, 0);
    let inner = raw + 4096;
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_device_ptr(inner as *mut u8, dim4!(16)) }.unwrap_err();
    assert_eq!(
        e,
        Error::NotAllocationStart { function: "array_from_device_ptr", ptr: inner, start: raw }
    );
    // SAFETY: the rest of our zeroed block from `inner`, borrowed while `raw` stays allocated.
    let ok = unsafe {
        interop::array_from_borrowed_ptr(inner as *const u8, dim4!(MIB - 4096), Arc::new(()))
    }
    .unwrap();
    assert_eq!(emberfire::max_all(&ok).0, 0);
    drop(ok);
    // Larger than the allocation, from its start and from inside.
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_device_ptr(raw as *mut f32, dim4!(MIB)) }.unwrap_err();
    let Error::SizeMismatch { function, needed, available } = e else { panic!("{e:?}") };
    assert_eq!((function, needed), ("array_from_device_ptr", 4 * MIB));
    assert!((MIB..4 * MIB).contains(&available), "{available}");
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e =
        unsafe { interop::array_from_borrowed_ptr(inner as *const u8, dim4!(MIB), Arc::new(())) }
            .unwrap_err();
    assert!(matches!(e, Error::SizeMismatch { needed, .. } if needed == MIB), "{e:?}");
    // A size that overflows.
    let huge = dim4!(1u64 << 21, 1u64 << 21, 1u64 << 21);
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_device_ptr(raw as *mut f32, huge) }.unwrap_err();
    assert!(matches!(e, Error::SizeMismatch { needed: usize::MAX, .. }), "{e:?}");
    assert!(e.to_string().contains("overflows"));
    // SAFETY: our own block, freed once.
    unsafe { cu::free_sync(raw) }.unwrap();
    // Memory of another context on the same device.
    let other = CudaContext::new_non_primary(common::dev() as usize, 0).unwrap();
    other.bind_to_thread().unwrap();
    // SAFETY: the other context is current; the block is freed below in it.
    let foreign = unsafe { cu::malloc_sync(4096) }.unwrap();
    // SAFETY: refused (the test checks the error) before the memory is used or adopted.
    let e = unsafe { interop::array_from_device_ptr(foreign as *mut u8, dim4!(16)) }.unwrap_err();
    assert_eq!(e, Error::WrongContext { function: "array_from_device_ptr", what: "pointer" });
    other.bind_to_thread().unwrap();
    // SAFETY: allocated above in this context.
    unsafe { cu::free_sync(foreign) }.unwrap();
    // Memory of another device, where there is one.
    if interop::device_count().unwrap() >= 2 {
        let (here, there) = (common::dev(), if common::dev() == 0 { 1 } else { 0 });
        let second = interop::context(there).unwrap();
        let slice = interop::stream(there).unwrap().clone_htod(&[1.0f32; 8]).unwrap();
        let e = interop::array_from_slice(slice, dim4!(8)).unwrap_err();
        let wrong = |function| Error::WrongDevice { function, expected: here, found: there };
        assert_eq!(e, wrong("array_from_slice"));
        let s1 = interop::stream(there).unwrap();
        let kept = s1.clone_htod(&[1.0f32; 8]).unwrap();
        let p = kept.device_ptr(&s1).0;
        // SAFETY: refused (the test checks the error) before the memory is used or adopted.
        let e =
            unsafe { interop::array_from_borrowed_ptr(p as *const f32, dim4!(8), Arc::new(())) }
                .unwrap_err();
        assert_eq!(e, wrong("array_from_borrowed_ptr"));
        drop(second);
    }
}

#[test]
fn a_locked_buffer_holds_under_memory_pressure_and_returns_to_the_pool() {
    let Some(_gpu) = common::cuda() else { return };
    device_gc();
    let n = 16 * MIB / 4;
    let values = common::random_f32("pressure", n, 100.0);
    let a = Array::new(&values, dim4!(n));
    let start = device_mem_info();
    let guard = interop::lock(&a).unwrap();
    let ptr = guard.ptr();
    assert_eq!(device_mem_info().2, start.2 + 16 * MIB);
    // Fill the device with emberfire arrays: 1 GiB ones, then 64 MiB ones, until allocation
    // fails (which collects the cache and retries first).
    let mut held: Vec<Array<f32>> = Vec::new();
    for elems in [1usize << 28, 1 << 24] {
        loop {
            let z = constant(-1.0f32, dim4!(elems));
            match z.try_eval() {
                Ok(()) => held.push(z),
                Err(emberfire::Error::OutOfMemory { .. }) => break,
                Err(e) => panic!("unexpected error under pressure: {e}"),
            }
        }
    }
    let total = interop::context(common::dev()).unwrap().total_mem().unwrap();
    let filled: usize = held.iter().map(|z| z.elements() * 4).sum();
    assert!(filled > total / 2, "filled only {filled} of {total} bytes");
    for z in &held {
        let m = emberfire::cuda::array_memory(z).unwrap();
        let overlaps = m.ptr() < ptr + 16 * MIB as u64 && ptr < m.ptr() + m.bytes() as u64;
        assert!(!overlaps, "a locked block was handed to another array");
    }
    drop(held);
    device_gc();
    // The locked contents are intact.
    let s = interop::stream(common::dev()).unwrap();
    assert_eq!(s.clone_dtoh(&guard.view().unwrap()).unwrap(), values);
    // Unlocked, and once the array is gone, the block is back in the pool: the next array of
    // that size gets it.
    drop(guard);
    assert_eq!(device_mem_info().2, start.2);
    drop(a);
    let b = Array::new(&values, dim4!(n));
    assert_eq!(emberfire::cuda::array_memory(&b).unwrap().ptr(), ptr);
    assert_eq!(device_mem_info(), start);
}

#[test]
fn a_guard_leaves_an_earlier_lock_in_place() {
    let Some(_gpu) = common::cuda() else { return };
    let a = Array::new(&[1u16, 2, 3], dim4!(3));
    a.lock();
    drop(interop::lock(&a).unwrap());
    assert!(a.is_locked(), "the user's own lock stays");
    a.unlock();
    let g = interop::lock(&a).unwrap();
    assert!(a.is_locked());
    drop(g);
    assert!(!a.is_locked());
    // Empty arrays lock too.
    let e = Array::<f32>::new_empty(dim4!(0, 3));
    let g = interop::lock(&e).unwrap();
    assert!(g.is_empty());
    assert_eq!(g.array().elements(), 0);
}

/// ArrayFire's interop pattern, as the book's `lend_buffers` example runs it: cudarc slices
/// adopted with `new_from_device_ptr`, locked, used, dropped, and freed by their owner. Each
/// round must leave nothing behind: no bytes or buffers counted by `device_mem_info`, no record
/// that `unlock_device_ptr` could find (the driver hands the same addresses out again, and a
/// stale record would free them under their next owner), and no double free (which memcheck
/// reports when this runs under it).
#[test]
#[ignore = "needs a CUDA device"]
fn lent_buffers_leave_nothing_behind_in_ten_thousand_rounds() {
    let Some(_gpu) = common::cuda() else { return };
    let stream = interop::stream(common::dev()).unwrap();
    let n = 64 * 64;
    let xs = common::random_f32("lent x", n, 100.0);
    let ys = common::random_f32("lent y", n, 100.0);
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| x + y).collect();
    let start = device_mem_info();
    let mut addresses = std::collections::HashSet::new();
    for round in 0..10_000 {
        let lent = lend_buffers::lend_buffers(&stream, &xs, &ys).unwrap();
        assert!(lent.sum == want, "round {round}: x + y is wrong");
        assert_eq!(device_mem_info(), start, "round {round}: the lent buffers left memory behind");
        for p in lent.buffers {
            assert!(
                !interop::unlock_device_ptr(common::dev(), p).unwrap(),
                "round {round}: a record of {p:#x}"
            );
            addresses.insert(p);
        }
    }
    // For the log: the record checks bite where addresses come back, which cudarc's
    // stream-ordered pool makes them do.
    eprintln!("{} distinct buffer addresses in 10000 rounds", addresses.len());
    // Memory emberfire allocated still stays locked after its array is gone, until unlocked.
    let a = Array::new(&xs, dim4!(n as u64));
    let p = emberfire::cuda::array_memory(&a).unwrap().ptr();
    a.lock();
    drop(a);
    assert_eq!(device_mem_info().3, start.3 + 1);
    assert!(interop::unlock_device_ptr(common::dev(), p).unwrap());
    assert_eq!(device_mem_info(), start);
}
