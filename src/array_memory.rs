//! Raw memory access: `device_ptr`, `lock`/`unlock`, and adopting foreign memory with
//! `new_from_device_ptr`, with ArrayFire's contract.
//!
//! A locked buffer is the user's: emberfire never reuses or frees it, even after every array
//! using it is dropped, until it is unlocked. `device_ptr` evaluates the array, makes its memory
//! its own contiguous buffer if it was a view, locks it and returns the address of the first
//! element. `new_from_device_ptr` adopts memory the user allocated, and frees it exactly once.

use std::collections::HashMap;
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

/// Host buffers locked by the user, by address of their first element (the CPU backend has no
/// memory manager to keep the flag in), and the buffers whose last array was dropped while
/// locked: they are kept, not freed, so the user's pointer stays valid and the address cannot
/// be handed to another buffer (which would then look locked).
#[derive(Default)]
struct HostLocks {
    /// Address -> bytes of every locked buffer, orphaned or not.
    locked: HashMap<usize, usize>,
    orphans: HashMap<usize, HostVec>,
}

fn host_locks() -> &'static Mutex<HostLocks> {
    static L: std::sync::OnceLock<Mutex<HostLocks>> = std::sync::OnceLock::new();
    L.get_or_init(Default::default)
}

/// How many host buffers are locked: lets dropping a buffer skip the lock table when none is.
static HOST_LOCKED: AtomicUsize = AtomicUsize::new(0);

/// Bytes and buffers of host memory locked by the user.
pub(crate) fn host_locked() -> (usize, usize) {
    let locks = host_locks().lock().unwrap();
    (locks.locked.values().sum(), locks.locked.len())
}

/// Called as host buffer `h` is dropped: if it is locked, keeps its memory (returning `None`,
/// so the caller neither frees it nor stops counting it); otherwise gives it back.
pub(crate) fn release_host(h: HostVec) -> Option<HostVec> {
    if HOST_LOCKED.load(Ordering::Acquire) == 0 || h.len() == 0 {
        return Some(h);
    }
    let mut locks = host_locks().lock().unwrap();
    let addr = h.as_bytes().as_ptr() as usize;
    if locks.locked.contains_key(&addr) {
        locks.orphans.insert(addr, h);
        None
    } else {
        Some(h)
    }
}

fn buffer_addr(b: &Buffer) -> usize {
    match b {
        Buffer::Host(h) => h.as_bytes().as_ptr() as usize,
        Buffer::Cuda(m) => m.ptr() as usize,
    }
}

/// Whether the user holds a lock on `b` (and may be reading or writing it through a pointer).
pub(crate) fn buffer_locked(b: &Buffer) -> bool {
    match b {
        Buffer::Host(_) => host_locks().lock().unwrap().locked.contains_key(&buffer_addr(b)),
        Buffer::Cuda(m) => m.is_locked(),
    }
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
    /// reused by emberfire, until [`Array::unlock`] — even if the array is dropped.
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
    /// [`Array::unlock`].
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
                if host_locks().lock().unwrap().locked.insert(buffer_addr(&d.buf), bytes).is_none()
                {
                    HOST_LOCKED.fetch_add(1, Ordering::AcqRel);
                }
            }
            Buffer::Cuda(m) => m.lock(),
        }
    }

    /// Returns the array's memory to emberfire's management.
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
                let mut locks = host_locks().lock().unwrap();
                let addr = buffer_addr(&d.buf);
                if locks.locked.remove(&addr).is_some() {
                    HOST_LOCKED.fetch_sub(1, Ordering::AcqRel);
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
    /// `cudaMalloc`) on the active device, freed with `cuMemFree` exactly once when the last
    /// array using it is dropped; on the CPU, the pointer of a `Box<[T]>` of exactly that length
    /// (from `Box::into_raw`), freed as that box.
    ///
    /// # Safety
    ///
    /// `dev_ptr` must be as described, hold initialised elements, and not be freed or used by
    /// anything else afterwards; on CUDA, work that writes it must be complete or ordered
    /// before emberfire's stream.
    ///
    /// ```
    /// use emberfire::{Array, Backend, dim4, get_active_backend};
    /// if get_active_backend() == Backend::CPU {
    ///     let raw = Box::into_raw(vec![1.0f32, 2.0, 3.0].into_boxed_slice()) as *mut f32;
    ///     let a = unsafe { Array::new_from_device_ptr(raw, dim4!(3)) };
    ///     assert_eq!(a.to_vec(), vec![1.0, 2.0, 3.0]);
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
                Buffer::host(T::wrap(b.into_vec()))
            }
            BackendKind::Cuda(d) => {
                let dev = cuda::runtime::device(d).or_raise("Array::new_from_device_ptr");
                // SAFETY: the caller gives us a cuMemAlloc allocation of n elements on `d`.
                Buffer::Cuda(unsafe { dev.memory().adopt(dev_ptr as u64, n * T::DTYPE.size()) })
            }
        };
        let data = Data::dense(buf, dims);
        Array::from_node(Node::ready(T::DTYPE, dims, kind, data))
    }
}
