//! The CUDA radix sort (`kernels/sort.cu`): a stable LSD sort with 8-bit digits, keys alone or
//! with a u32 payload (each key's source position), in segments of consecutive elements; and
//! the compaction of sorted elements that the set functions use.
//!
//! A variant of the kernels is compiled per element size and kind (unsigned, signed, float)
//! and per payload (with or without), once per device. Every launch goes to the device's
//! current stream, temporaries come from the memory manager (returned once the kernels are
//! queued, reused in stream order), and nothing waits for the device except the compaction,
//! whose result size the host must know.
//!
//! Passes: one per byte of the element (f32: 4, f64: 8, u8 and bool: 1), and, for batched
//! sorts, one per byte of the largest segment number. One kernel counts the digits of every
//! key pass in a single read of the elements; then each pass reads its keys once and writes
//! them once (tiles find where their keys go by decoupled look-back, see `kernels/sort.cu`):
//! 2^26 f32 keys move 256 MB + 4 x 512 MB.

use std::sync::Arc;

use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey, KernelParam};
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::backend::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

const SOURCE: &str = include_str!("kernels/sort.cu");

/// Threads per block of every kernel but the scan (`EF_BLOCK`).
const BLOCK: u32 = 256;
/// Threads of the scan's one block (used by the compaction).
const SCAN_BLOCK: u32 = 1024;
/// Digit values per pass (`EF_RADIX`).
const RADIX: usize = 256;
/// Elements per block of the compaction kernels (`EF_UNIQUE_TILE`).
const UNIQUE_TILE: usize = 256 * 16;
/// Blocks per multiprocessor of the histogram kernel (each walks a grid-strided share).
const HISTOGRAM_BLOCKS_PER_SM: u32 = 4;
/// The most elements one sort handles: positions are u32, and `n` of them plus counts must
/// stay below 2^31.
pub(crate) const MAX_ELEMENTS: u64 = (1 << 31) - 1;

// SortArgs::flags, as in sort.cu.
const FIRST: i32 = 1;
const LAST: i32 = 2;
const DESC: i32 = 4;
const SEG_PASS: i32 = 8;
const WRITE_VALS: i32 = 16;
const ALONG: i32 = 32;

/// The one parameter of the sort kernels; the layout matches `struct SortArgs`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct SortArgs {
    input: u64,
    keys_in: u64,
    vals_in: u64,
    keys_out: u64,
    vals_out: u64,
    out: u64,
    idx_out: u64,
    counts: u64,
    starts: u64,
    status: u64,
    next_tile: u64,
    n: i64,
    tiles: i64,
    seg_len: u32,
    shift: i32,
    flags: i32,
    pass: i32,
    passes: i32,
    pad: i32,
}

// SAFETY: 8-byte fields, then six 4-byte ones (the last one padding spelled out): no padding.
unsafe impl KernelParam for SortArgs {}

/// What a sort returns besides the sorted elements: each element's source position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Positions {
    None,
    /// The position in the whole (dense) input.
    Full,
    /// The position within the element's segment.
    Along,
}

/// The compiled kernels of one variant.
struct SortKernels {
    clear: KernelFn,
    histogram: KernelFn,
    starts: KernelFn,
    onesweep: KernelFn,
    scan: KernelFn,
    gather: KernelFn,
    unique_count: KernelFn,
    unique_write: KernelFn,
}

/// Element kind as `EF_KIND`, or `None` for types that do not sort.
fn kind(dtype: DType) -> Option<u32> {
    match dtype {
        DType::B8 | DType::U8 | DType::U16 | DType::U32 | DType::U64 => Some(0),
        DType::S16 | DType::S32 | DType::S64 => Some(1),
        DType::F32 | DType::F64 => Some(2),
        _ => None,
    }
}

/// The unsigned C type of `size` bytes.
fn bits_type(size: usize) -> &'static str {
    match size {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        _ => "unsigned long long",
    }
}

/// Keys per thread in a tile (`EF_ITEMS`): 24 four-byte words alone (a 24 KiB tile in shared
/// memory: fewer tiles to look back over, and longer runs of each digit per tile write fuller
/// sectors; 16, 20 and 24 measured 2.03, 1.73 and 1.66 ms for 2^26 f32 keys on an H100), 16
/// with payloads (their shared copy must fit too), 8 eight-byte words.
fn items(size: usize, vals: bool) -> usize {
    match (size, vals) {
        (8, _) => 8,
        (_, true) => 16,
        _ => 24,
    }
}

/// The full source of the variant for `dtype`, with or without payloads.
pub(crate) fn source(dtype: DType, vals: bool) -> String {
    let size = dtype.size();
    let kind = kind(dtype).expect("internal error: a type that does not sort");
    let word = if size == 8 { "unsigned long long" } else { "unsigned int" };
    format!(
        "#define EF_ELEM_BYTES {size}\n#define EF_KIND {kind}\ntypedef {} ef_bits;\n\
         typedef {word} ef_word;\n#define EF_ITEMS {}\n#define EF_VALS {}\n{SOURCE}",
        bits_type(size),
        items(size, vals),
        vals as u8
    )
}

fn kernels(dev: &Device, dtype: DType, vals: bool) -> Result<Arc<SortKernels>, Error> {
    let id = [dtype.size() as u8, kind(dtype).unwrap_or(0) as u8, vals as u8];
    dev.kernels().get_or_build(KernelKey::new(Family::Sort, id), || {
        let first = dev.kernels().compile(
            dev,
            &source(dtype, vals),
            "ef_sort_onesweep",
            super::kernel::Origin::Own,
        )?;
        let other = |entry: &str| first.sibling(entry);
        Ok(SortKernels {
            clear: other("ef_sort_clear")?,
            histogram: other("ef_sort_histogram")?,
            starts: other("ef_sort_starts")?,
            scan: other("ef_sort_scan")?,
            gather: other("ef_sort_gather")?,
            unique_count: other("ef_unique_count")?,
            unique_write: other("ef_unique_write")?,
            onesweep: first,
        })
    })
}

/// The device address of element 0 of dense data `d` of `size`-byte elements.
fn data_ptr(d: &Data, size: usize) -> u64 {
    match d.buffer() {
        Buffer::Cuda(m) => m.ptr() + (d.offset * size) as u64,
        Buffer::Host(_) => unreachable!("internal error: host data in a CUDA sort"),
    }
}

/// Orders this stream's work after the writer of `d`'s memory (a no-op on one stream).
fn order_input(dev: &Device, d: &Data) -> Result<(), Error> {
    if let Buffer::Cuda(m) = d.buffer() {
        dev.memory().order_use(m, dev.current_stream_id())?;
    }
    Ok(())
}

/// Launches `k` with the parameter values `args`.
///
/// # Safety
/// `args` match the kernel's signature; every address they hold is live device memory of
/// `dev`, large enough for what the kernel touches with this grid, kept alive until the
/// kernel has run (memory released earlier is reused only in stream order).
unsafe fn launch(
    dev: &Device,
    k: &KernelFn,
    grid: u32,
    block: u32,
    args: &mut KernelArgs,
) -> Result<(), Error> {
    // SAFETY: the caller's contract.
    unsafe { k.launch(dev, (grid.max(1), 1, 1), (block, 1, 1), 0, args) }
}

/// Bits that tell apart the numbers `0..count`.
fn bits_for(count: u64) -> u32 {
    64 - count.saturating_sub(1).leading_zeros()
}

/// Sorts the `n` dense elements of `input` (element type `dtype`) in segments of `seg_len`
/// consecutive elements (`seg_len` divides `n`), stable, ascending or descending (NaN last
/// either way, as the canonical NaN). Returns the sorted elements (dense, `n` of them) and,
/// as asked, each one's source position (u32).
pub(crate) fn sort_dense(
    ordinal: usize,
    input: &Data,
    dtype: DType,
    n: usize,
    seg_len: usize,
    descending: bool,
    positions: Positions,
) -> Result<(DeviceMem, Option<DeviceMem>), Error> {
    assert!(
        n as u64 <= MAX_ELEMENTS && seg_len > 0 && n.is_multiple_of(seg_len),
        "internal error: CUDA sort of {n} elements in segments of {seg_len}"
    );
    let dev = runtime::device(ordinal)?;
    let size = dtype.size();
    let out = dev.memory().alloc((n * size).max(1))?;
    let idx_out = match positions {
        Positions::None => None,
        _ => Some(dev.memory().alloc((n * 4).max(1))?),
    };
    if n == 0 {
        return Ok((out, idx_out));
    }
    order_input(dev, input)?;
    let segments = (n / seg_len) as u64;
    let key_passes = size as u32; // one per byte
    let seg_passes = if segments > 1 { bits_for(segments).div_ceil(8) } else { 0 };
    let passes = key_passes + seg_passes;
    let vals = positions != Positions::None || segments > 1;
    let k = kernels(dev, dtype, vals)?;

    let tile = BLOCK as usize * items(size, vals);
    let tiles = n.div_ceil(tile);
    // digit counts of the key passes, digit starts of every pass, one status word per tile
    // and digit, one tile counter per pass
    let counts = dev.memory().alloc(size * RADIX * 4)?;
    let starts = dev.memory().alloc(passes as usize * RADIX * 4)?;
    let status = dev.memory().alloc(tiles * RADIX * 8)?;
    let next_tile = dev.memory().alloc(passes as usize * 4)?;

    // Intermediate words and payloads alternate between two buffers; the last pass writes the
    // outputs. A buffer is allocated only if some pass writes it.
    let word = if size == 8 { 8 } else { 4 };
    let mut temps: Vec<DeviceMem> = Vec::new();
    let mut alloc = |bytes: usize| -> Result<u64, Error> {
        let m = dev.memory().alloc(bytes.max(1))?;
        let p = m.ptr();
        temps.push(m);
        Ok(p)
    };
    let key_bufs = [
        if passes >= 2 { alloc(n * word)? } else { 0 },
        if passes >= 3 { alloc(n * word)? } else { 0 },
    ];
    let val_bufs = [
        if vals && passes >= 2 { alloc(n * 4)? } else { 0 },
        if vals && passes >= 3 { alloc(n * 4)? } else { 0 },
    ];

    let mut a = SortArgs {
        input: data_ptr(input, size),
        out: out.ptr(),
        idx_out: idx_out.as_ref().map_or(0, |m| m.ptr()),
        counts: counts.ptr(),
        starts: starts.ptr(),
        status: status.ptr(),
        next_tile: next_tile.ptr(),
        n: n as i64,
        tiles: tiles as i64,
        seg_len: seg_len as u32,
        passes: passes as i32,
        flags: if descending { DESC } else { 0 },
        ..SortArgs::default()
    };
    let sms = dev.sm_count();
    let histogram_blocks = (tiles as u64).min((sms * HISTOGRAM_BLOCKS_PER_SM) as u64) as u32;
    {
        let mut args_ptr = KernelArgs::with_capacity(1);
        args_ptr.value(a);
        // SAFETY: the three kernels take one `SortArgs` by value (this struct's layout): the
        // clear (one block) writes `counts` (size x RADIX) and `next_tile` (passes); the
        // histogram reads the `n` input elements, adds to `counts` and zeroes `status`
        // (tiles x RADIX); the starts kernel (one block per pass) reads `counts` and writes
        // `starts`.
        unsafe {
            launch(dev, &k.clear, 1, BLOCK, &mut args_ptr)?;
            launch(dev, &k.histogram, histogram_blocks, BLOCK, &mut args_ptr)?;
            launch(dev, &k.starts, passes, BLOCK, &mut args_ptr)?;
        }
    }
    for pass in 0..passes {
        let mut flags = if descending { DESC } else { 0 };
        if pass == 0 {
            flags |= FIRST;
        } else {
            a.keys_in = key_bufs[(pass as usize - 1) % 2];
            a.vals_in = val_bufs[(pass as usize - 1) % 2];
        }
        if pass + 1 == passes {
            flags |= LAST;
            match positions {
                Positions::None => {}
                Positions::Full => flags |= WRITE_VALS,
                Positions::Along => flags |= WRITE_VALS | ALONG,
            }
        } else {
            a.keys_out = key_bufs[pass as usize % 2];
            a.vals_out = val_bufs[pass as usize % 2];
        }
        if pass >= key_passes {
            flags |= SEG_PASS;
            a.shift = 8 * (pass - key_passes) as i32;
        } else {
            a.shift = 8 * pass as i32;
        }
        a.flags = flags;
        a.pass = pass as i32;
        let mut args_ptr = KernelArgs::with_capacity(1);
        args_ptr.value(a);
        // SAFETY: `ef_sort_onesweep` takes one `SortArgs` by value; its pointers are the input
        // (live: the caller holds it), the outputs and temporaries allocated above for `n`
        // elements, and the status words of `tiles` tiles; one block per tile (each takes
        // the next tile from the pass's counter, which the clear zeroed).
        unsafe { launch(dev, &k.onesweep, tiles as u32, BLOCK, &mut args_ptr)? };
    }
    // the temporaries go back to the pool; their next user is ordered after these kernels
    drop(temps);
    drop((counts, starts, status, next_tile));
    Ok((out, idx_out))
}

/// `dst[i] = src[index[i]]` for `n` elements of `dtype`: `src` dense, `index` u32.
pub(crate) fn gather(
    ordinal: usize,
    src: &Data,
    dtype: DType,
    index: &DeviceMem,
    n: usize,
) -> Result<DeviceMem, Error> {
    let dev = runtime::device(ordinal)?;
    let size = dtype.size();
    let out = dev.memory().alloc((n * size).max(1))?;
    if n == 0 {
        return Ok(out);
    }
    order_input(dev, src)?;
    // any compiled variant carries the gather; u32 keys without payload is the smallest
    let k = kernels(dev, DType::U32, false)?;
    let mut params = KernelArgs::with_capacity(5);
    params.u64(data_ptr(src, size)).u64(out.ptr()).u64(index.ptr()).i64(n as i64).i32(size as i32);
    let grid = grid_stride_blocks(n as u64, BLOCK, dev.sm_count(), 16);
    // SAFETY: `ef_sort_gather(src, dst, idx, n, size)`; `index` holds `n` positions inside
    // `src` (a permutation made by `sort_dense` over `src`'s `n` elements), `out` has room for
    // `n` elements.
    unsafe { launch(dev, &k.gather, grid, BLOCK, &mut params)? };
    Ok(out)
}

/// What `compact` keeps of sorted elements.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Keep {
    /// The first of each run of equal values: the distinct values.
    First = 0,
    /// The second of each run: in the sorted union of two sets of distinct values, the values
    /// in both.
    Second = 1,
}

/// The kept elements of `n` sorted elements of `dtype` at `sorted` (values compared with -0.0
/// equal to 0.0 and NaN to NaN, and written that way: 0.0, the canonical NaN), dense, and how
/// many there are. Waits for the device: the count decides the result's size.
pub(crate) fn compact(
    ordinal: usize,
    sorted: &DeviceMem,
    dtype: DType,
    n: usize,
    keep: Keep,
) -> Result<(DeviceMem, usize), Error> {
    let dev = runtime::device(ordinal)?;
    let size = dtype.size();
    if n == 0 {
        return Ok((dev.memory().alloc(1)?, 0));
    }
    let k = kernels(dev, dtype, false)?;
    let blocks = n.div_ceil(UNIQUE_TILE);
    let counts = dev.memory().alloc((blocks + 1) * 4)?;
    let (input, counts_ptr, len, mode) = (sorted.ptr(), counts.ptr(), n as i64, keep as i32);
    let mut count_params = KernelArgs::with_capacity(4);
    count_params.u64(input).u64(counts_ptr).i64(len).i32(mode);
    let mut scan_params = KernelArgs::with_capacity(2);
    scan_params.u64(counts_ptr).i64((blocks + 1) as i64);
    // SAFETY: `ef_unique_count(in, counts, n, mode)` reads `n` elements of `sorted` and writes
    // `blocks + 1` counts; the scan rewrites those counts in place.
    unsafe {
        launch(dev, &k.unique_count, blocks as u32, BLOCK, &mut count_params)?;
        launch(dev, &k.scan, 1, SCAN_BLOCK, &mut scan_params)?;
    }
    let mut total = [0u8; 4];
    dev.download(&counts, blocks * 4, &mut total)?;
    let total = u32::from_ne_bytes(total) as usize;
    let out = dev.memory().alloc((total * size).max(1))?;
    if total > 0 {
        let mut write_params = KernelArgs::with_capacity(5);
        write_params.u64(input).u64(counts_ptr).u64(out.ptr()).i64(len).i32(mode);
        // SAFETY: `ef_unique_write(in, offsets, out, n, mode)` reads `n` elements and the
        // `blocks` scanned offsets, and writes the `total` kept elements into `out`.
        unsafe { launch(dev, &k.unique_write, blocks as u32, BLOCK, &mut write_params)? };
    }
    drop(counts);
    Ok((out, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parameter struct has the C layout of `struct SortArgs`.
    #[test]
    fn args_match_the_kernel_struct() {
        assert_eq!(std::mem::size_of::<SortArgs>(), 11 * 8 + 2 * 8 + 6 * 4);
        assert_eq!(std::mem::align_of::<SortArgs>(), 8);
    }

    /// Every variant's source defines what the kernels use; with `EMBERFIRE_DUMP_KERNELS=dir`
    /// each is written there for the offline NVRTC check.
    #[test]
    fn every_variant_has_its_header() {
        let sortable = [
            DType::F32,
            DType::F64,
            DType::B8,
            DType::U8,
            DType::S16,
            DType::U16,
            DType::S32,
            DType::U32,
            DType::S64,
            DType::U64,
        ];
        for t in sortable {
            for vals in [false, true] {
                let src = source(t, vals);
                for name in
                    ["EF_ELEM_BYTES", "EF_KIND", "ef_bits;", "ef_word;", "EF_ITEMS", "EF_VALS"]
                {
                    assert!(src.contains(name), "{}: no {name}", t.name());
                }
                if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
                    let path = format!("{dir}/sort_{}_{}.cu", t.name(), vals as u8);
                    std::fs::write(path, &src).unwrap();
                }
            }
        }
        assert_eq!(bits_for(1), 0);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(256), 8);
        assert_eq!(bits_for(257), 9);
    }
}
