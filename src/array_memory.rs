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

use std::ffi::c_void;

use crate::array::Array;
use crate::backend::cpu::host_table;
use crate::backend::{buffer_addr, buffer_locked, native, BackendKind, Buffer};
use crate::device::active_kind;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};

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
        (buffer_addr(d.buffer()) + d.offset * T::DTYPE.size()) as *mut c_void
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
        match d.buffer() {
            // Empty memory has no address to keep.
            Buffer::Host(h) if h.len() == 0 => {}
            Buffer::Host(h) => {
                host_table::lock(h.as_bytes().as_ptr() as usize, h.as_bytes().len());
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
        match d.buffer() {
            Buffer::Host(h) => host_table::unlock(h.as_bytes().as_ptr() as usize),
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
        self.node().data().is_some_and(|d| buffer_locked(d.buffer()))
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
        self.node().data().map_or(0, |d| match d.buffer() {
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
                    host_table::adopt(h.as_bytes().as_ptr() as usize);
                }
                Buffer::host(h)
            }
            BackendKind::Cuda(d) => {
                // SAFETY: the caller gives us n elements of device memory on `d`: a whole
                // cuMemAlloc allocation, or memory kept locked until its last array drops
                // (which `adopt` hands back without freeing).
                unsafe { native::adopt_device_memory(d, dev_ptr as u64, n * T::DTYPE.size()) }
                    .or_raise("Array::new_from_device_ptr")
            }
        };
        let data = Data::dense(buf, dims);
        Array::from_node(Node::ready(T::DTYPE, dims, kind, data))
    }
}
