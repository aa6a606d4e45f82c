//! The cache of large host allocations, below every backend: `storage`'s allocations take from it
//! and host buffers of the CPU backend give back to it.
//!
//! Why: a buffer of tens of megabytes comes from the system as pages that have never been
//! touched; the first write to each page faults, and the kernel zeroes the page before handing
//! it over. For a streaming kernel that costs more than the arithmetic: `2.5 * x + y` over 2^24
//! f32 on two cores takes about 22 ms into fresh memory (12 ms with huge pages) and 6 ms into
//! memory that was written before. So, like the CUDA memory manager, the CPU backend keeps the
//! large buffers of dropped arrays and hands them to the next evaluation of a similar size.
//!
//! The contract (also in the book's "Memory management" chapter):
//! - only buffers of at least [`MIN_BYTES`] (32 MiB less 64 bytes) are kept. Smaller ones are
//!   left to the allocator, which has free lists for them. Keeping those here too would hide their frees
//!   from it, so that every other large vector of the backend (an FFT's working copy, say)
//!   would come fresh from the system: with a 1 MiB threshold, `fft_c32` (8 MiB buffers) went
//!   from 5.5 to 9.5 ms;
//! - with glibc's allocator, the backend asks it once ([`keep_freed_blocks`]) to serve every
//!   request below [`MAP_BYTES`] (32 MiB) from its heap and to keep up to [`TRIM_BYTES`] of
//!   freed heap memory rather than hand it back. By default it adapts both limits to the blocks freed so
//!   far and gives the heap's free top back beyond twice the largest: a loop whose arrays are a
//!   few MiB (the conjugate gradients of the CPU benchmark, 1 MiB vectors) freed several at the
//!   top each step and faulted them in again the next, some 50 page faults a step; with the
//!   fixed limits the benchmark went from 113 to 92-97 ms (2-core Xeon);
//! - a request takes the smallest cached block that is at least as large and at most 1.25
//!   times as large, with the same alignment (so it is a valid buffer for a `Vec` of the new
//!   element type);
//! - the cache holds at most [`limit`] bytes (an eighth of the machine's memory, at most
//!   2 GiB); beyond that the oldest blocks go back to the system;
//! - `device_gc()` on the CPU returns every cached block to the system, and asks the allocator
//!   to give back the free memory of its heap;
//! - cached memory is not counted by `device_mem_info`, as on CUDA.

use std::alloc::Layout;
use std::mem::{align_of, size_of, ManuallyDrop};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, OnceLock};

use super::HostVec;

/// glibc's mapping threshold as the backend sets it: requests this large come from `mmap`,
/// fresh pages every time (32 MiB, the most glibc accepts on 64-bit systems).
const MAP_BYTES: usize = 32 << 20;

/// Buffers of at least this size are kept and reused here, smaller ones are left to the
/// allocator (see the module documentation). It is every request that glibc maps: its chunk
/// header and rounding add less than 64 bytes to a request. (The threshold was once
/// `MAP_BYTES` itself, kept from above: buffers of exactly 32 MiB, such as k-means' 2^18 x 32
/// f32 distances, were then mapped and zeroed afresh for every array, a fifth of that
/// program's time on the CPU.)
pub(crate) const MIN_BYTES: usize = MAP_BYTES - 64;

/// The most freed memory glibc's allocator keeps at the top of its heap (see
/// [`keep_freed_blocks`]).
const TRIM_BYTES: usize = 128 << 20;

/// Asks glibc's allocator, once, to serve requests below [`MAP_BYTES`] from its heap
/// (above that, this cache keeps the blocks) and to keep up to [`TRIM_BYTES`] of freed memory
/// at the heap's top: see the module documentation. Other allocators are left as they are.
fn keep_freed_blocks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets the allocator's parameters; both values are in range (the
        // mapping threshold may be at most 32 MiB on 64-bit systems).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MAP_BYTES as libc::c_int);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_BYTES as libc::c_int);
        }
    });
}

/// Asks glibc's allocator to give the free memory of its heap back to the system.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A cached allocation: the buffer of a dropped `Vec`, with the layout it was allocated with.
struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a block is plain memory owned by the cache alone; any thread may reuse or free it.
unsafe impl Send for Block {}

impl Block {
    fn free(self) {
        // SAFETY: `ptr` was allocated by the global allocator with exactly `layout` (the buffer
        // of a `Vec<T>` of capacity `layout.size() / size_of::<T>()`), and the cache owned it.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Blocks in the order they were cached (oldest first), and their total size.
#[derive(Default)]
struct Blocks {
    list: Vec<Block>,
    bytes: usize,
}

/// A cache of allocations that keeps at most `limit` bytes. The backend uses one, [`CACHE`];
/// tests make their own.
struct BlockCache {
    blocks: Mutex<Blocks>,
    limit: fn() -> usize,
}

/// The CPU backend's cache.
static CACHE: BlockCache =
    BlockCache { blocks: Mutex::new(Blocks { list: Vec::new(), bytes: 0 }), limit };

/// The most bytes the backend's cache keeps: an eighth of the machine's memory, at most 2 GiB
/// (1 GiB where the size of the memory is unknown).
fn limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| physical_memory().map_or(1 << 30, |m| (m / 8).min(2 << 30)))
}

#[cfg(unix)]
fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) =
        unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages > 0 && page > 0).then(|| (pages as usize).saturating_mul(page as usize))
}

#[cfg(not(unix))]
fn physical_memory() -> Option<usize> {
    None
}

/// An empty vector with room for at least `n` elements from a block of the backend's cache, or
/// `None` when no block fits (or the request is too small to be cached).
pub(crate) fn take<T: Copy>(n: usize) -> Option<Vec<T>> {
    keep_freed_blocks();
    CACHE.take(n)
}

/// Keeps the buffer of `h` in the backend's cache if it is large enough, else frees it.
pub(crate) fn give(h: HostVec) {
    with_vec!(h, v, T => CACHE.keep(v))
}

/// Returns every block of the backend's cache, and the allocator's free heap memory, to the
/// system (`device_gc` on the CPU).
pub(crate) fn clear() {
    CACHE.clear();
    trim_heap();
}

impl BlockCache {
    fn lock(&self) -> MutexGuard<'_, Blocks> {
        // The state is consistent between statements, so a panic elsewhere while the lock was
        // held cannot have broken it.
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take<T: Copy>(&self, n: usize) -> Option<Vec<T>> {
        let size = size_of::<T>();
        let want = n.checked_mul(size)?;
        if size == 0 || want < MIN_BYTES {
            return None;
        }
        let most = want.saturating_add(want / 4);
        let block = {
            let mut blocks = self.lock();
            let (i, _) = blocks
                .list
                .iter()
                .enumerate()
                .filter(|(_, b)| {
                    let bytes = b.layout.size();
                    b.layout.align() == align_of::<T>()
                        && (want..=most).contains(&bytes)
                        && bytes % size == 0
                })
                .min_by_key(|(_, b)| b.layout.size())?;
            let block = blocks.list.remove(i);
            blocks.bytes -= block.layout.size();
            block
        };
        let block = ManuallyDrop::new(block);
        // SAFETY: the block is the buffer of a dropped `Vec` allocated by the global allocator
        // with `block.layout`; its size is a multiple of `size_of::<T>()` and its alignment is
        // `T`'s, which is exactly the layout of a `Vec<T>` of this capacity. The cache gave up
        // the block above, so the vector is its only owner.
        Some(unsafe {
            Vec::from_raw_parts(block.ptr.as_ptr() as *mut T, 0, block.layout.size() / size)
        })
    }

    /// Keeps the buffer of `v` if it is large enough, else frees it; then frees the oldest
    /// blocks while the cache holds more than its limit.
    fn keep<T: Copy>(&self, v: Vec<T>) {
        let limit = (self.limit)();
        let layout = match Layout::array::<T>(v.capacity()) {
            Ok(l) if l.size() >= MIN_BYTES && l.size() <= limit => l,
            _ => return,
        };
        let mut v = ManuallyDrop::new(v);
        // A vector with a nonzero capacity owns a real allocation: the pointer is not null.
        let Some(ptr) = NonNull::new(v.as_mut_ptr() as *mut u8) else { return };
        let evicted = {
            let mut blocks = self.lock();
            blocks.list.push(Block { ptr, layout });
            blocks.bytes += layout.size();
            let mut evicted = Vec::new();
            while blocks.bytes > limit {
                let old = blocks.list.remove(0);
                blocks.bytes -= old.layout.size();
                evicted.push(old);
            }
            evicted
        };
        // giving memory back to the system can take a while: not under the lock
        evicted.into_iter().for_each(Block::free);
    }

    fn clear(&self) {
        let list = {
            let mut blocks = self.lock();
            blocks.bytes = 0;
            std::mem::take(&mut blocks.list)
        };
        list.into_iter().for_each(Block::free);
    }

    /// (bytes, blocks) held.
    #[cfg(test)]
    fn cached(&self) -> (usize, usize) {
        let blocks = self.lock();
        (blocks.bytes, blocks.list.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = MIN_BYTES / 2; // f32 elements: 64 MiB (`vec![0.0; N]` touches no page)

    fn room_for_two() -> usize {
        2 * N * 4 + 100
    }

    fn cache() -> BlockCache {
        BlockCache { blocks: Mutex::new(Blocks::default()), limit: room_for_two }
    }

    #[test]
    fn a_dropped_buffer_is_reused_for_a_similar_request() {
        let c = cache();
        let v = vec![0.0f32; N];
        let ptr = v.as_ptr() as usize;
        c.keep(v);
        assert_eq!(c.cached(), (N * 4, 1));
        // a slightly smaller request of another type with the same alignment takes it
        let w: Vec<u32> = c.take(N - N / 8).expect("cached block fits");
        assert_eq!(w.as_ptr() as usize, ptr);
        assert_eq!(w.capacity(), N);
        assert_eq!(c.cached(), (0, 0));
    }

    #[test]
    fn blocks_outside_the_size_window_or_of_another_alignment_are_not_taken() {
        let c = cache();
        c.keep(vec![0.0f32; N]);
        assert!(c.take::<f32>(N + 1).is_none(), "too small");
        assert!(c.take::<f32>(N * 3 / 4).is_none(), "more than 1.25 times the request");
        assert!(c.take::<f64>(N / 2).is_none(), "other alignment");
        assert!(c.take::<u8>(100).is_none(), "small requests are not served");
        assert!(
            c.take::<u8>(MIN_BYTES - 1).is_none(),
            "requests below the threshold are not served"
        );
        assert_eq!(c.cached(), (N * 4, 1));
        assert!(c.take::<i32>(N).is_some());
    }

    #[test]
    fn the_smallest_fitting_block_is_chosen() {
        let c = cache();
        let small = vec![0.0f32; N];
        let small_ptr = small.as_ptr() as usize;
        c.keep(vec![0.0f32; N + N / 8]);
        c.keep(small);
        let v: Vec<f32> = c.take(N - 10).unwrap();
        assert_eq!(v.as_ptr() as usize, small_ptr);
        c.clear();
        assert_eq!(c.cached(), (0, 0));
    }

    #[test]
    fn small_buffers_are_not_kept_and_the_oldest_block_goes_first() {
        let c = cache();
        c.keep(vec![0u8; MIN_BYTES - 1]);
        assert_eq!(c.cached(), (0, 0));
        let first = vec![0.0f32; N];
        let first_ptr = first.as_ptr() as usize;
        c.keep(first);
        c.keep(vec![0.0f32; N]);
        assert_eq!(c.cached(), (2 * N * 4, 2));
        // no room for a third: the first goes back to the system
        c.keep(vec![0.0f32; N]);
        assert_eq!(c.cached(), (2 * N * 4, 2));
        let taken: Vec<Vec<f32>> = (0..2).map(|_| c.take(N).unwrap()).collect();
        assert!(taken.iter().all(|v| v.as_ptr() as usize != first_ptr));
        // a block larger than the whole limit is not kept
        c.keep(vec![0.0f32; 3 * N]);
        assert_eq!(c.cached(), (0, 0));
    }
}
