//! Host memory handed out as raw pointers, as arrayfire-rust's `alloc_host`/`free_host` and
//! `alloc_pinned`/`free_pinned` do, for code that fills buffers itself.
//!
//! Ownership: a pointer returned here belongs to the caller until it is passed back to the
//! matching free function, exactly once. emberfire never frees it on its own (a pointer that is
//! never freed leaks) and no array refers to it. Every live allocation is recorded, so the free
//! functions check their argument: a pointer that did not come from the matching allocation
//! function, or that is not live, is refused with a panic instead of corrupting the heap.
//!
//! Both free functions are `unsafe`, because the check cannot make them safe (see
//! `free_host`'s documentation); it is a backstop that turns every misuse it can see into a
//! panic.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use crate::backend::{cuda, BackendKind};
use crate::device::active_kind;
use crate::dtype::DType;
use crate::error_handler::OrRaise;
use crate::ffi_types::void_ptr;

/// Alignment of host blocks: a cache line, enough for every element type and for SIMD loads.
const ALIGN: usize = 64;

enum Block {
    /// From `alloc_host`, or `alloc_pinned` on the CPU backend (where nothing is page-locked).
    Host { layout: Layout, pinned: bool },
    /// From `alloc_pinned` on the CUDA backend; dropping it frees the page-locked memory.
    Pinned(cuda::runtime::PinnedBuffer),
}

/// The live allocations, by address.
fn blocks() -> MutexGuard<'static, BTreeMap<usize, Block>> {
    static BLOCKS: Mutex<BTreeMap<usize, Block>> = Mutex::new(BTreeMap::new());
    // The map holds no invariant a panic could break half-way; keep using it after one.
    BLOCKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A zeroed host block of at least one byte (so that every allocation has its own address).
fn host_block(func: &str, bytes: usize, pinned: bool) -> *mut u8 {
    let layout = Layout::from_size_align(bytes.max(1), ALIGN)
        .unwrap_or_else(|_| panic!("{func}: {bytes} bytes do not fit in memory"));
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    blocks().insert(ptr as usize, Block::Host { layout, pinned });
    ptr
}

/// Removes the block at `ptr` if it is of the expected kind, and frees it.
fn free_block(func: &str, alloc_func: &str, ptr: *mut c_void, pinned: bool) {
    if ptr.is_null() {
        return;
    }
    let mut map = blocks();
    let matches = match map.get(&(ptr as usize)) {
        Some(Block::Host { pinned: p, .. }) => *p == pinned,
        Some(Block::Pinned(_)) => pinned,
        None => false,
    };
    if !matches {
        drop(map);
        panic!("{func}: {ptr:p} was not returned by {alloc_func}, or was freed already");
    }
    match map.remove(&(ptr as usize)) {
        // SAFETY: allocated in `host_block` with this layout, and removed from the map so it is
        // freed once.
        Some(Block::Host { layout, .. }) => unsafe { dealloc(ptr as *mut u8, layout) },
        Some(Block::Pinned(buffer)) => drop(buffer),
        None => unreachable!("checked above"),
    }
}

/// The size in bytes of one element of type `value`.
///
/// ```
/// use emberfire::{get_size, DType};
/// assert_eq!(get_size(DType::F64), 8);
/// assert_eq!(get_size(DType::C32), 8);
/// assert_eq!(get_size(DType::B8), 1);
/// ```
pub fn get_size(value: DType) -> usize {
    value.size()
}

/// Allocates zeroed host memory for `elements` elements of type `_type` and returns it as a
/// pointer to `T` (the size comes from `_type`, as in arrayfire-rust; `T` only types the
/// pointer). The block is aligned to 64 bytes and is at least one byte long, so even zero
/// elements give a distinct, non-null pointer.
///
/// The caller owns the memory: pass the pointer to [`free_host`] once when done. Panics if the
/// size overflows.
///
/// ```
/// use emberfire::{alloc_host, free_host, DType};
/// let p = alloc_host::<f32>(4, DType::F32);
/// // SAFETY: `p` points to 4 zeroed, aligned f32 values owned by this code.
/// let values = unsafe { std::slice::from_raw_parts_mut(p as *mut f32, 4) };
/// values[2] = 1.5;
/// assert_eq!(values, &[0.0, 0.0, 1.5, 0.0]);
/// // SAFETY: this code owns the block, frees it once and does not use `values` afterwards.
/// unsafe { free_host(p as *mut f32) };
/// ```
pub fn alloc_host<T>(elements: usize, _type: DType) -> *const T {
    let bytes = elements
        .checked_mul(get_size(_type))
        .unwrap_or_else(|| panic!("alloc_host: {elements} elements of {_type:?} overflow usize"));
    host_block("alloc_host", bytes, false) as *const T
}

/// Frees memory from [`alloc_host`]. A null pointer is ignored. Panics if `ptr` is not a live
/// block from `alloc_host` (memory from [`alloc_pinned`] goes to [`free_pinned`]).
///
/// # Safety
///
/// `ptr` is null, or a pointer from [`alloc_host`] that the caller owns and has not freed:
/// nothing else frees it, and nothing uses the memory after this call.
///
/// Why this is `unsafe` although arrayfire-rust's `free_host` is not, and although every call
/// is checked: the check finds whether a live block from `alloc_host` starts at `ptr`, but
/// cannot tell a stale pointer from the live one at the same address. Once a block is freed,
/// the allocator hands its address out again, often to the very next `alloc_host` of that
/// size; a second, mistaken free of the old pointer then passes the check and frees the new
/// owner's block, whose next use (through `unsafe` code that did nothing wrong) reads freed
/// memory. Only ownership of the pointer rules that out, and a raw pointer cannot carry
/// ownership, so the caller promises it, as for `Box::from_raw` or `std::alloc::dealloc`.
/// [`free_pinned`] is `unsafe` for the same reason. Code ported from arrayfire-rust wraps its
/// calls in `unsafe` (the compiler points at each one).
///
/// ```
/// use emberfire::{alloc_host, free_host, DType};
/// let p = alloc_host::<u8>(16, DType::U8);
/// // SAFETY: this code owns the block and frees it once; a null pointer is ignored.
/// unsafe {
///     free_host(p as *mut u8);
///     free_host(std::ptr::null_mut::<u8>());
/// }
/// ```
pub unsafe fn free_host<T>(ptr: *mut T) {
    free_block("free_host", "alloc_host", ptr as *mut c_void, false)
}

/// Allocates `bytes` bytes of zeroed host memory for staging copies. On the CUDA backend it is
/// page-locked (pinned) in the active device's context, so the driver copies it by DMA; on the
/// CPU backend, where nothing copies to a device, it is ordinary 64-byte aligned memory.
/// emberfire's own transfers stage through pinned buffers of their own, so arrays do not need
/// this memory to copy fast.
///
/// # Safety
///
/// The memory belongs to the caller until it is passed to [`free_pinned`], exactly once; using
/// the pointer after that, or beyond `bytes` bytes, is undefined behaviour. (The function is
/// `unsafe` because arrayfire-rust's is; the allocation itself has no precondition.)
///
/// ```
/// use emberfire::{alloc_pinned, free_pinned};
/// // SAFETY: 256 bytes used within their bounds, by this code alone, and freed once.
/// unsafe {
///     let p = alloc_pinned(256) as *mut u8;
///     *p.add(255) = 7;
///     assert_eq!(*p.add(255), 7);
///     free_pinned(p as *mut std::ffi::c_void);
/// }
/// ```
pub unsafe fn alloc_pinned(bytes: usize) -> void_ptr {
    match active_kind() {
        BackendKind::Cpu => host_block("alloc_pinned", bytes, true) as void_ptr,
        BackendKind::Cuda(d) => {
            let buffer =
                cuda::runtime::device(d).and_then(|dev| dev.pinned(bytes)).or_raise("alloc_pinned");
            let ptr = buffer.as_ptr();
            // SAFETY: the buffer holds at least `bytes` bytes (one when `bytes` is 0).
            unsafe { ptr.write_bytes(0, bytes) };
            blocks().insert(ptr as usize, Block::Pinned(buffer));
            ptr as void_ptr
        }
    }
}

/// Frees memory from [`alloc_pinned`]. A null pointer is ignored. Panics if `ptr` is not a live
/// block from `alloc_pinned`.
///
/// # Safety
///
/// As for [`free_host`]: `ptr` is null, or a pointer from [`alloc_pinned`] that the caller owns
/// and has not freed, and nothing uses the memory after this call, including an asynchronous
/// copy still in flight that the caller started on it (emberfire's own copies from and to
/// host memory are complete when their calls return).
///
/// ```
/// use emberfire::{alloc_pinned, free_pinned};
/// // SAFETY: the block is freed once, unused.
/// unsafe { free_pinned(alloc_pinned(64)) };
/// ```
pub unsafe fn free_pinned(ptr: void_ptr) {
    free_block("free_pinned", "alloc_pinned", ptr, true)
}
