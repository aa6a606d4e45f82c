//! Raw memory access: `device_ptr`, `lock`/`unlock`, and adopting foreign memory with
//! `new_from_device_ptr`, with ArrayFire's contract.
//!
//! A locked buffer is the user's: emberfire never reuses or frees it, even after every array
//! using it is dropped, until it is unlocked. `device_ptr` evaluates the array, makes its memory
//! its own contiguous buffer if it was a view, locks it and returns the address of the first
//! element. `new_from_device_ptr` adopts memory the user allocated, and frees it exactly once;
//! unless it is locked when its last array is dropped: then it goes back to the user, and
//! emberfire forgets it (ArrayFire's interop pattern, where the application locks an adopted
//! buffer so that the library does not free what the application frees itself).

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::array::Array;
use crate::backend::{cuda, BackendKind, Buffer};
use crate::device::active_kind;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};
use crate::storage::HostVec;
use crate::sync::lock;

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

fn host_locks() -> &'static Mutex<HostLocks> {
    static L: std::sync::OnceLock<Mutex<HostLocks>> = std::sync::OnceLock::new();
    L.get_or_init(Default::default)
}

/// How many records `locked` and `adopted` hold together: lets dropping a buffer skip the table
/// when both are empty. Changed only under the table's lock; read without it on a drop, which
/// sees every change made before the buffer's last reference went (`Arc`'s drop orders them).
static HOST_TRACKED: AtomicUsize = AtomicUsize::new(0);

/// Bytes and buffers of host memory locked by the user.
pub(crate) fn host_locked() -> (usize, usize) {
    let locks = lock(host_locks());
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
    let mut table = lock(host_locks());
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
    let mut table = lock(host_locks());
    table.borrowed.entry(ptr as usize).or_default().push(BorrowedHost { owner, read_only });
    HOST_TRACKED.fetch_add(1, Ordering::AcqRel);
    drop(table);
    Buffer::host(h)
}

/// Whether `b` is memory borrowed read-only from another library (a DLPack import whose
/// producer forbids writes): emberfire then treats it as locked, never writing it in place.
fn borrowed_read_only(b: &Buffer) -> bool {
    match b {
        Buffer::Host(h) => {
            if HOST_TRACKED.load(Ordering::Acquire) == 0 || h.len() == 0 {
                return false;
            }
            let table = lock(host_locks());
            table.borrowed.get(&buffer_addr(b)).is_some_and(|l| l.iter().any(|r| r.read_only))
        }
        Buffer::Cuda(m) => crate::interop::dlpack::owner_is_read_only(m.borrowed_owner()),
    }
}

fn buffer_addr(b: &Buffer) -> usize {
    match b {
        Buffer::Host(h) => h.as_bytes().as_ptr() as usize,
        Buffer::Cuda(m) => m.ptr() as usize,
    }
}

/// Whether the user holds a lock on `b` (and may be reading or writing it through a pointer),
/// or `b` is memory another library lent read-only: either way emberfire must not write it in
/// place.
pub(crate) fn buffer_locked(b: &Buffer) -> bool {
    let locked = match b {
        Buffer::Host(_) => lock(host_locks()).locked.contains_key(&buffer_addr(b)),
        Buffer::Cuda(m) => m.is_locked(),
    };
    locked || borrowed_read_only(b)
}

impl<T: HasAfEnum> Array<T> {
    /// The evaluated data, made contiguous and owned by this array if it was a view.
    fn own_data(&self) -> Data {
        self.try_own_data().or_raise("evaluation failed")
    }

    /// Like `own_data`, returning an evaluation failure (out of memory, a driver error).
    pub(crate) fn try_own_data(&self) -> crate::error::Result<Data> {
        let d = self.node().try_eval()?;
        if d.offset == 0 && d.is_contiguous(self.dims()) {
            return Ok(d);
        }
        let c = self.copy();
        let d = c.node().try_eval()?;
        self.node().set_ready(d.clone());
        Ok(d)
    }

    /// Evaluates the array, locks its memory and returns the address of its first element
    /// (device memory on CUDA, host memory on the CPU). The memory stays valid, and is never
    /// reused by emberfire, until [`Array::unlock`] — even if the array is dropped. (Memory
    /// adopted with [`Array::new_from_device_ptr`] whose last array is dropped while locked is
    /// yours again: see there.)
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    /// let p = a.device_ptr();
    /// assert!(!p.is_null() && a.is_locked());
    /// a.unlock();
    /// assert!(!a.is_locked());
    /// ```
    pub fn device_ptr(&self) -> *mut c_void {
        let d = self.own_data();
        self.lock();
        (buffer_addr(&d.buf) + d.offset * T::DTYPE.size()) as *mut c_void
    }

    /// Locks the array's memory: emberfire will neither reuse nor free it until
    /// [`Array::unlock`], even after every array using it is dropped. What happens then
    /// depends on where the memory came from:
    ///
    /// - Memory emberfire allocated stays allocated, and counted as locked by
    ///   [`device_mem_info`](crate::device_mem_info), for your pointer: on CUDA until
    ///   `emberfire::cuda::unlock_device_ptr`, on the CPU for the rest of the process.
    /// - Memory adopted with [`Array::new_from_device_ptr`] goes back to you: emberfire waits
    ///   for its own work on it and forgets it, freeing nothing. This is how an application
    ///   keeps a buffer it lends to emberfire (ArrayFire's "lock to avoid free").
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1u8, 2], dim4!(2));
    /// a.lock();
    /// assert!(a.is_locked());
    /// a.unlock();
    /// ```
    pub fn lock(&self) {
        let d = self.own_data();
        match &*d.buf {
            // Empty memory has no address to keep.
            Buffer::Host(h) if h.len() == 0 => {}
            Buffer::Host(h) => {
                let bytes = h.as_bytes().len();
                let mut table = lock(host_locks());
                if table.locked.insert(buffer_addr(&d.buf), bytes).is_none() {
                    HOST_TRACKED.fetch_add(1, Ordering::AcqRel);
                }
            }
            Buffer::Cuda(m) => m.lock(),
        }
    }

    /// Returns the array's memory to emberfire's management: it is reused or freed once no
    /// array uses it. Memory adopted with [`Array::new_from_device_ptr`] is emberfire's again,
    /// to free with its last array.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1u8, 2], dim4!(2));
    /// a.lock();
    /// a.unlock();
    /// assert!(!a.is_locked());
    /// ```
    pub fn unlock(&self) {
        let d = self.node().eval();
        match &*d.buf {
            Buffer::Host(_) => {
                let mut table = lock(host_locks());
                if table.locked.remove(&buffer_addr(&d.buf)).is_some() {
                    HOST_TRACKED.fetch_sub(1, Ordering::AcqRel);
                }
            }
            Buffer::Cuda(m) => m.unlock(),
        }
    }

    /// Whether the array's memory is locked by the user.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(!Array::new(&[1u8], dim4!(1)).is_locked());
    /// ```
    pub fn is_locked(&self) -> bool {
        self.node().data().is_some_and(|d| buffer_locked(&d.buf))
    }

    /// The size in bytes of the buffer that holds the array's elements. For a view of another
    /// array (an index, a slice) it is the whole buffer of the array viewed, as in
    /// arrayfire-rust. A lazy array has no buffer yet and reports 0; this does not evaluate it.
    /// On CUDA an array with no elements still holds a one-byte allocation and reports 1.
    ///
    /// ```
    /// use emberfire::{Array, dim4, row};
    /// let a = Array::new(&[1.0f64; 6], dim4!(2, 3));
    /// assert_eq!(a.get_allocated_bytes(), 48);
    /// assert_eq!(row(&a, 1).get_allocated_bytes(), 48); // a view of `a`
    /// let lazy = &a + 1.0f64;
    /// assert_eq!(lazy.get_allocated_bytes(), 0);
    /// lazy.eval();
    /// assert_eq!(lazy.get_allocated_bytes(), 48);
    /// ```
    pub fn get_allocated_bytes(&self) -> usize {
        self.node().data().map_or(0, |d| match &*d.buf {
            Buffer::Host(h) => h.len() * h.dtype().size(),
            Buffer::Cuda(m) => m.len(),
        })
    }

    /// An array of shape `dims` that takes ownership of `dev_ptr`, memory of the active
    /// backend holding `dims.elements()` elements: on CUDA, device memory from `cuMemAlloc` (or
    /// `cudaMalloc`) on the active device, freed with `cuMemFree`; on the CPU, the pointer of a
    /// `Box<[T]>` of exactly that length (from `Box::into_raw`), freed as that box. emberfire
    /// frees it exactly once, when the last array using it is dropped.
    ///
    /// Unless the memory is locked ([`Array::lock`], [`Array::device_ptr`]) when that last
    /// array is dropped: then it goes back to you. emberfire waits for its own work on it and
    /// forgets it: it frees nothing, [`device_mem_info`](crate::device_mem_info) no longer
    /// counts it, and `emberfire::cuda::unlock_device_ptr` does not know it. That is
    /// ArrayFire's interop pattern: adopt a buffer your code keeps owning, lock the array so
    /// that emberfire does not free it, and free the buffer yourself once the arrays are gone
    /// (on the CPU, rebuild the box with `Box::from_raw`). Unlocking before the last array is
    /// dropped makes the memory emberfire's again. Since memory lent this way is never freed by
    /// emberfire, on CUDA it may be any device memory of the active device (a cudarc slice's,
    /// say), not only a whole `cuMemAlloc` allocation.
    ///
    /// # Safety
    ///
    /// `dev_ptr` must hold `dims.elements()` initialised elements: on the CPU, a `Box<[T]>` as
    /// described; on CUDA, device memory of the active device, which must be the start of a
    /// `cuMemAlloc` allocation unless it stays locked until its last array is dropped. Nothing
    /// else may free it while an array uses it, nor after the last array using it was dropped
    /// unlocked (emberfire frees it then), and nothing else may use it while arrays do except
    /// through a lock. On CUDA, work that writes it must be complete or ordered before
    /// emberfire's stream.
    ///
    /// ```
    /// use emberfire::{Array, Backend, dim4, get_active_backend};
    /// if get_active_backend() == Backend::CPU {
    ///     // Adopted: emberfire frees it with the last array.
    ///     let raw = Box::into_raw(vec![1.0f32, 2.0, 3.0].into_boxed_slice()) as *mut f32;
    ///     // SAFETY: a box of 3 initialised elements, given to emberfire.
    ///     let a = unsafe { Array::new_from_device_ptr(raw, dim4!(3)) };
    ///     assert_eq!(a.to_vec(), vec![1.0, 2.0, 3.0]);
    ///
    ///     // Adopted, and locked when the last array is dropped: yours again, to free.
    ///     let raw = Box::into_raw(vec![4.0f32; 3].into_boxed_slice()) as *mut f32;
    ///     // SAFETY: as above; the lock keeps emberfire from freeing it.
    ///     let b = unsafe { Array::new_from_device_ptr(raw, dim4!(3)) };
    ///     b.lock();
    ///     drop(b);
    ///     // SAFETY: the box emberfire gave back, rebuilt once.
    ///     let mine = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(raw, 3)) };
    ///     assert_eq!(&mine[..], &[4.0, 4.0, 4.0]);
    /// }
    /// ```
    pub unsafe fn new_from_device_ptr(dev_ptr: *mut T, dims: Dim4) -> Array<T> {
        let n = dims.elements() as usize;
        let kind = active_kind();
        let buf = match kind {
            BackendKind::Cpu => {
                // SAFETY: the caller gives us a `Box<[T]>` of `n` elements.
                let b: Box<[T]> =
                    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(dev_ptr, n)) };
                let h = T::wrap(b.into_vec());
                if n > 0 {
                    // Recorded before any array uses it, so that the drop of the last one
                    // finds it (an empty box has no allocation to give back).
                    let mut table = lock(host_locks());
                    if table.adopted.insert(h.as_bytes().as_ptr() as usize) {
                        HOST_TRACKED.fetch_add(1, Ordering::AcqRel);
                    }
                }
                Buffer::host(h)
            }
            BackendKind::Cuda(d) => {
                let dev = cuda::runtime::device(d).or_raise("Array::new_from_device_ptr");
                // SAFETY: the caller gives us n elements of device memory on `d`: a whole
                // cuMemAlloc allocation, or memory kept locked until its last array drops
                // (which `adopt` hands back without freeing).
                Buffer::Cuda(unsafe { dev.memory().adopt(dev_ptr as u64, n * T::DTYPE.size()) })
            }
        };
        let data = Data::dense(buf, dims);
        Array::from_node(Node::ready(T::DTYPE, dims, kind, data))
    }
}
