//! Host memory handed out as raw pointers, as arrayfire-rust's `alloc_host`/`free_host` and
//! `alloc_pinned`/`free_pinned` do, for code that fills buffers itself.
//!
//! Ownership: a pointer returned here belongs to the caller until it is passed back to the
//! matching free function, exactly once. emberfire never frees it on its own (a pointer that is
//! never freed leaks) and no array refers to it. Every allocation is recorded, so the free
//! functions check their argument: a pointer that did not come from the matching allocation
//! function, or that was freed already, is refused with a panic instead of corrupting the heap.
//!
//! Why `free_host` can be a safe function (as in arrayfire-rust) and the check is enough: a
//! check by address alone could not tell a stale pointer from a live block that the allocator
//! later placed at the same address, and a mistaken second free would then free someone else's
//! block. So host blocks never share an address: each is a mapping of its own (`mmap`), and a
//! freed block's pages go back to the system while its address range stays reserved and
//! unreadable, so no later allocation (ours or anyone's) can be placed there. A stale pointer
//! is therefore always "freed already". The cost is address space, not memory: 4 KiB of it per
//! block, of the 128 TiB a process has.
//!
//! `free_pinned` stays `unsafe`, as arrayfire-rust declares it: on the CUDA backend its memory
//! is page-locked memory from the driver, which reuses addresses, so there the check cannot
//! rule out the stale-pointer case and the caller's ownership has to.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use crate::backend::{native, BackendKind};
use crate::compat::ffi_types::void_ptr;
use crate::device::active_kind;
use crate::dtype::DType;
use crate::error_handler::OrRaise;

enum Block {
    /// From `alloc_host`, or `alloc_pinned` on the CPU backend (where nothing is page-locked):
    /// a mapping of `len` bytes of its own.
    Host { len: usize, pinned: bool },
    /// From `alloc_pinned` on the CUDA backend; dropping it frees the page-locked memory.
    Pinned(native::PinnedBuffer),
}

/// The live allocations, by address.
fn blocks() -> MutexGuard<'static, BTreeMap<usize, Block>> {
    static BLOCKS: Mutex<BTreeMap<usize, Block>> = Mutex::new(BTreeMap::new());
    crate::sync::lock(&BLOCKS)
}

/// A zeroed host block of at least one byte, page-aligned, in a mapping of its own (see the
/// module documentation for why).
fn host_block(func: &str, bytes: usize, pinned: bool) -> *mut u8 {
    let page = page_size();
    let len = bytes.max(1).checked_next_multiple_of(page).unwrap_or_else(|| {
        crate::error_handler::raise(
            &crate::error::Error::OutOfMemory { bytes },
            format!("{func}: out of memory allocating {bytes} bytes"),
        )
    });
    // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        crate::error_handler::raise(
            &crate::error::Error::OutOfMemory { bytes },
            format!("{func}: out of memory allocating {bytes} bytes"),
        );
    }
    blocks().insert(ptr as usize, Block::Host { len, pinned });
    ptr as *mut u8
}

/// The system's page size.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        page as usize
    } else {
        4096
    }
}

/// Gives the pages of the block at `ptr` (`len` bytes) back to the system and keeps its
/// address range reserved and inaccessible, so that no later allocation is placed there.
///
/// # Safety
///
/// `ptr..ptr + len` is a whole mapping made by `host_block` that is no longer recorded as live.
unsafe fn retire(ptr: *mut c_void, len: usize) {
    // SAFETY: the caller's contract: the range is our own mapping, which MAP_FIXED replaces
    // in place with an inaccessible one that reserves no memory.
    let replaced = unsafe {
        libc::mmap(
            ptr,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if replaced == libc::MAP_FAILED {
        // Out of mappings: make the range inaccessible at least (it keeps its pages).
        // SAFETY: as above; the range is ours.
        unsafe { libc::mprotect(ptr, len, libc::PROT_NONE) };
    }
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
        // SAFETY: a whole mapping of `host_block`, removed from the map so it is retired once.
        Some(Block::Host { len, .. }) => unsafe { retire(ptr, len) },
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
/// free_host(p as *mut f32);
/// ```
pub fn alloc_host<T>(elements: usize, _type: DType) -> *const T {
    let bytes = elements
        .checked_mul(get_size(_type))
        .unwrap_or_else(|| panic!("alloc_host: {elements} elements of {_type:?} overflow usize"));
    host_block("alloc_host", bytes, false) as *const T
}

/// Frees memory from [`alloc_host`]. A null pointer is ignored. Panics if `ptr` is not a block
/// from `alloc_host` or was freed already (memory from [`alloc_pinned`] goes to
/// [`free_pinned`]).
///
/// Safe, as in arrayfire-rust, because the check is complete: a block's address is never
/// given to another allocation, even after it is freed (see the module documentation), so a
/// stale or foreign pointer is always refused. Using the memory after freeing it is for the
/// `unsafe` code that reads through the pointer to avoid; it faults rather than reading
/// someone else's data.
///
/// ```
/// use emberfire::{alloc_host, free_host, DType};
/// let p = alloc_host::<u8>(16, DType::U8);
/// free_host(p as *mut u8);
/// free_host(std::ptr::null_mut::<u8>());
/// let stale = std::panic::catch_unwind(|| free_host(p as *mut u8));
/// assert!(stale.is_err(), "a second free is refused");
/// ```
pub fn free_host<T>(ptr: *mut T) {
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
            let buffer = native::pinned_host(d, bytes).or_raise("alloc_pinned");
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
/// `ptr` is null, or a pointer from [`alloc_pinned`] that the caller owns and has not freed,
/// and nothing uses the memory after this call, including an asynchronous copy still in
/// flight that the caller started on it (emberfire's own copies from and to host memory are
/// complete when their calls return). Unlike [`free_host`] this is `unsafe`, as in
/// arrayfire-rust: on the CUDA backend the memory comes from the driver, which hands a freed
/// address out again, so the check cannot tell a stale pointer from a new block there.
///
/// ```
/// use emberfire::{alloc_pinned, free_pinned};
/// // SAFETY: the block is freed once, unused.
/// unsafe { free_pinned(alloc_pinned(64)) };
/// ```
pub unsafe fn free_pinned(ptr: void_ptr) {
    free_block("free_pinned", "alloc_pinned", ptr, true)
}
