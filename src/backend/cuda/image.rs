//! Image kernels on a CUDA device: the handwritten kernels of `kernels/image.cu` (warps,
//! resizes, window filters and histograms), compiled through the device's kernel cache once
//! per element type and shape, and launched on the emberfire stream without waiting.

use std::sync::{Arc, OnceLock};

use cudarc::driver::result as cu;

use super::codegen::c_type;
use super::dense::{alloc_dense as alloc, device_ptr as ptr};
use super::kernel::{Family, KernelArgs, KernelFn, KernelKey};
use super::runtime::{self, Device};
use super::tiled::{column_grid, tile_shape, tiled_grid, SOBEL_TILE, TILE_STAGING, WINDOW_TILE};
use crate::backend::dense::Dense;
use crate::backend::image::{
    histogram_real_type, warp_real_type, WarpMaps, WindowFilter, WindowOp,
};
use crate::backend::signal::Interp;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

const SOURCE: &str = include_str!("kernels/image.cu");

/// The range of an integer type, as C literals.
fn limits(t: DType) -> Option<(&'static str, &'static str)> {
    Some(match t {
        DType::U8 => ("0", "255"),
        DType::S16 => ("(-32767 - 1)", "32767"),
        DType::U16 => ("0", "65535"),
        DType::S32 => ("(-2147483647 - 1)", "2147483647"),
        DType::U32 => ("0", "4294967295u"),
        DType::S64 => ("(-9223372036854775807LL - 1)", "9223372036854775807LL"),
        DType::U64 => ("0", "18446744073709551615ull"),
        _ => return None,
    })
}

/// The entry points of `image.cu`, in the order their index is part of the key.
const ENTRIES: [&str; 7] = [
    "ef_warp",
    "ef_histogram",
    "ef_window",
    "ef_resize2",
    "ef_resize4",
    "ef_resize_half",
    "ef_resize_double",
];

/// The kernel `entry` for elements of type `t`, computing in `real` (see `backend::image`),
/// compiled on first use; `rows` is the warps' outputs a thread (their `WR`).
fn kernel(
    dev: &Device,
    entry: &'static str,
    t: DType,
    real: DType,
    wide: bool,
    rows: u64,
) -> Result<Arc<KernelFn>, Error> {
    let which = ENTRIES.iter().position(|&e| e == entry).expect("an entry of image.cu");
    let key =
        KernelKey::new(Family::Image, [which as u8, t as u8, real as u8, wide as u8, rows as u8]);
    // (the blocks a multiprocessor holds of `ef_resize4` follow from `real` and the process's
    // environment, so the key's fields fix them)
    let blocks = tuned_resize_blocks().unwrap_or(if real.size() <= 4 { 4 } else { 1 });
    dev.kernels().kernel(dev, key, entry, || {
        format!(
            "{}#define WR {rows}\n#define RESIZE4_BLOCKS {blocks}\n{TILE_STAGING}{SOURCE}",
            prelude(t, real, wide)
        )
    })
}

/// The blocks a multiprocessor must hold of `ef_resize4` (its launch bound), named by
/// `EMBERFIRE_RESIZE_BLOCKS` (for measuring others than the default: 4 where the computing
/// type is 32-bit, which fits its registers in 64 without spilling, else 1).
fn tuned_resize_blocks() -> Option<u64> {
    static BLOCKS: OnceLock<Option<u64>> = OnceLock::new();
    *BLOCKS.get_or_init(|| {
        let blocks = std::env::var("EMBERFIRE_RESIZE_BLOCKS").ok()?.trim().parse().ok()?;
        (1..=8).contains(&blocks).then_some(blocks)
    })
}

/// The outputs a thread of the warps computes, named by `EMBERFIRE_WARP_ROWS` (for measuring
/// others than the defaults of [`warp`]).
fn tuned_rows() -> Option<u64> {
    static ROWS: OnceLock<Option<u64>> = OnceLock::new();
    *ROWS.get_or_init(|| {
        let rows = std::env::var("EMBERFIRE_WARP_ROWS").ok()?.trim().parse().ok()?;
        [1, 2, 4, 8].contains(&rows).then_some(rows)
    })
}

/// The columns a thread of the separable resizes computes where a map enlarges at least twice
/// along dimension 0, named by `EMBERFIRE_RESIZE_COLUMNS` (2: `ef_resize2`; else
/// `ef_resize4`, measured faster: see the performance chapter). Set, it also sends doubling by
/// exactly two to those kernels rather than `ef_resize_double`, to measure one against the
/// other.
fn tuned_columns() -> Option<u64> {
    static COLUMNS: OnceLock<Option<u64>> = OnceLock::new();
    *COLUMNS.get_or_init(|| std::env::var("EMBERFIRE_RESIZE_COLUMNS").ok()?.trim().parse().ok())
}

/// The typedefs and defines `image.cu` expects: the element, computing and index types, and
/// the element's range for integers.
fn prelude(t: DType, real: DType, wide: bool) -> String {
    let range = limits(t).map_or(String::new(), |(lo, hi)| {
        format!("#define ELEM_MIN {lo}\n#define ELEM_MAX {hi}\n")
    });
    let idx = if wide { "long long" } else { "int" };
    format!(
        "typedef {} elem_t;\ntypedef {} real_t;\ntypedef {idx} idx_t;\n{range}\
         #define ELEM_QUAD {}\n",
        c_type(t),
        c_type(real),
        (t.size() <= 4) as u8
    )
}

/// Whether index arithmetic over these shapes needs 64 bits (an array of 2^31 elements or
/// more, whose offsets an `int` cannot hold).
fn wide(shapes: &[Dim4]) -> bool {
    shapes.iter().any(|d| d.elements() >= 1 << 31)
}

fn dims(d: Dim4) -> [u64; 4] {
    std::array::from_fn(|k| d[k])
}

/// Whether every map is separable and affine (x' from x alone, y' from y alone).
fn separable(maps: &WarpMaps) -> bool {
    maps.maps
        .iter()
        .all(|m| m[1] == 0.0 && m[3] == 0.0 && m[6] == 0.0 && m[7] == 0.0 && m[8] == 1.0)
}

/// A resize by exactly two that `ef_resize_half` or `ef_resize_double` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ByTwo {
    Half,
    Double,
}

/// Whether this bilinear warp is a resize by exactly two that a dedicated kernel computes: one
/// map, ArrayFire's halving (2, 2) or doubling (1/2, 1/2) with no offset, images of sizes that
/// are exact multiples (the halved row a multiple of four elements, the doubled source row of
/// two), elements of at most four bytes, the images not broadcast, and both images' starts
/// aligned to four elements (views with an offset take the general kernels).
fn by_two(input: &Dense, maps: &WarpMaps, od: Dim4, out: &Dense) -> Option<ByTwo> {
    let [m] = maps.maps.as_slice() else { return None };
    let id = input.dims;
    let size = input.dtype.size() as u64;
    let plain = m[1] == 0.0 && m[2] == 0.0 && m[3] == 0.0 && m[5] == 0.0;
    let same_images = id[2] == od[2] && id[3] == od[3];
    let quad = 4 * size;
    let aligned = ptr(input).is_multiple_of(quad) && ptr(out).is_multiple_of(quad);
    // (rows within the grid's 65,535 blocks of 8 along dimension 1 at one row a thread)
    let fits = id[1].max(od[1]) <= 8 * 65_535;
    if !(plain && same_images && aligned && size <= 4 && fits) {
        return None;
    }
    if m[0] == 2.0
        && m[4] == 2.0
        && id[0] == 2 * od[0]
        && id[1] == 2 * od[1]
        && od[0].is_multiple_of(4)
    {
        Some(ByTwo::Half)
    } else if m[0] == 0.5
        && m[4] == 0.5
        && od[0] == 2 * id[0]
        && od[1] == 2 * id[1]
        && id[0].is_multiple_of(2)
        // (the doubling kernel reads a row's last column by an `int` offset)
        && id[0] <= i32::MAX as u64
        // (a column count asked for measures the general kernels)
        && tuned_columns().is_none()
    {
        Some(ByTwo::Double)
    } else {
        None
    }
}

/// Launches the dedicated kernel of a resize by exactly two (see [`by_two`]).
fn resize_by_two(
    dev: &Device,
    input: &Dense,
    out: &Dense,
    how: ByTwo,
    wide: bool,
) -> Result<(), Error> {
    // The grid covers the images each kernel walks (the output halving, the source doubling)
    // in blocks of 128 output or 64 source columns. Rows a thread measured alike from one to
    // eight for both (halving 0.031-0.032 ms, doubling 0.119-0.122 on an H100).
    let (entry, source, per_block, rows) = match how {
        ByTwo::Half => ("ef_resize_half", out.dims, 128, tuned_rows().unwrap_or(2)),
        ByTwo::Double => ("ef_resize_double", input.dims, 64, tuned_rows().unwrap_or(4)),
    };
    let k = kernel(dev, entry, input.dtype, warp_real_type(input.dtype), wide, rows)?;
    // grid.y: 8 rows of `rows` each a block (within its limit: `by_two` checked the rows)
    let images = source[2] * source[3];
    let gx = source[0].div_ceil(per_block);
    let gy = source[1].div_ceil(8 * rows);
    let gz = images.clamp(1, 65_535);
    let mut p = KernelArgs::new();
    p.u64(ptr(input)).u64(ptr(out)).i64(source[0] as i64).i64(source[1] as i64).i64(images as i64);
    // SAFETY: the parameters match the signature of `ef_resize_half` and `ef_resize_double`
    // (two pointers, three 64-bit integers); `input` and `out` are live device memory of this
    // device holding the whole images of their shapes (not broadcast), aligned to four elements
    // as `by_two` checked, held until after the launch (reuse is ordered on the same stream);
    // each thread reads and writes inside its images only.
    unsafe { k.launch(dev, (gx as u32, gy as u32, gz as u32), (32, 8, 1), 0, &mut p) }
}

/// See `Image::warp`.
pub(crate) fn warp(
    ordinal: usize,
    input: &Dense,
    maps: &WarpMaps,
    od: Dim4,
    m: Interp,
    clamp_nearest: bool,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, od, input.dtype)?;
    if od.elements() == 0 {
        return Ok(out);
    }
    // One map travels by value; several are uploaded (a few doubles per image).
    let (one, table) = match maps.maps.as_slice() {
        [one] => (*one, None),
        many => {
            let bytes: Vec<u8> = many.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
            ([0.0; 9], Some(dev.upload(&bytes)?))
        }
    };
    let wide = wide(&[input.dims, od]);
    // A separable bilinear map (resize, scale, translate) runs on `ef_resize2`, two columns a
    // thread, or on `ef_resize4`, four, where it enlarges at least twice along dimension 0
    // (its columns' samples then lie among four neighbours); its rows a thread: two where it
    // enlarges (a thread's two rows then share their source rows), eight where it shrinks.
    // Measured on an H100 (see the performance chapter).
    let pairs = m == Interp::Linear && separable(maps);
    if let Some(how) = pairs.then(|| by_two(input, maps, od, &out)).flatten() {
        resize_by_two(dev, input, &out, how, wide)?;
        return Ok(out);
    }
    let (entry, columns, rows) = if pairs {
        let enlarges = maps.maps.iter().all(|m| m[4].abs() < 1.0);
        let rows = tuned_rows().unwrap_or(if enlarges { 2 } else { 8 });
        let doubles = maps.maps.iter().all(|m| m[0] > 0.0 && m[0] <= 0.5);
        if doubles && tuned_columns() != Some(2) {
            ("ef_resize4", 128, rows)
        } else {
            ("ef_resize2", 64, rows)
        }
    } else {
        ("ef_warp", 32, tuned_rows().unwrap_or(4))
    };
    let k = kernel(dev, entry, input.dtype, warp_real_type(input.dtype), wide, rows)?;
    let mut p = KernelArgs::new();
    p.u64(ptr(input))
        .value(dims(input.dims))
        .u64(ptr(&out))
        .value(dims(od))
        .value(one)
        .u64(table.as_ref().map_or(0, |t| t.ptr()))
        .i64(maps.batch[0] as i64)
        .i64(maps.batch[1] as i64);
    if !pairs {
        p.i32(m.code() as i32).i32(clamp_nearest as i32);
    }
    let grid = column_grid(dev, od, columns, 8 * rows);
    // SAFETY: the parameters match the signature of `ef_warp` (or of `ef_resize2` and
    // `ef_resize4`, which have no method or clamping) in order and size (pointers and 64-bit
    // values, `Dims` as four 64-bit sizes, `Mat` as nine doubles); `input` and `out` are live
    // device memory of this device sized for their shapes, held until after the launch (reuse
    // is ordered on the same stream), as is the uploaded table of `batch[0] * batch[1]` maps;
    // the kernels read only samples clamped into the input; the kernel runs on emberfire's
    // stream.
    unsafe { k.launch(dev, grid, (32, 8, 1), 0, &mut p) }?;
    drop(table);
    Ok(out)
}

/// Counters a block keeps in shared memory at most: 48 KiB, the default limit, less the 1 KiB
/// of the kernel's table of byte bins.
const SHARED_BINS: u32 = 12 * 1024 - 256;
/// Bins the lane-banked layout takes at most: 32 counters a bin (32 KiB) and the 8 KiB of its
/// packed table of byte bins (whose bins must fit a byte).
const BANKED_BINS: u32 = 256;

/// The histogram kernel's block size and blocks a multiprocessor, named by
/// `EMBERFIRE_HIST_SHAPE` as `threads,blocks` (for measuring others than the default: one
/// block of 1024 a multiprocessor was the fastest of five shapes on an H200, 17.0 us against
/// 20.6 for four of 512, for 2^24 bytes), and whether it may use the lane-banked layout
/// (`EMBERFIRE_HIST_BANKED=0` turns it off).
fn histogram_shape() -> (u32, u32, bool) {
    static SHAPE: OnceLock<(u32, u32, bool)> = OnceLock::new();
    *SHAPE.get_or_init(|| {
        let parsed = std::env::var("EMBERFIRE_HIST_SHAPE").ok().and_then(|v| {
            let (t, b) = v.trim().split_once(',')?;
            let (t, b) = (t.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?);
            (t.is_multiple_of(32) && (32..=1024).contains(&t) && b > 0).then_some((t, b))
        });
        let (threads, blocks) = parsed.unwrap_or((1024, 1));
        let banked = std::env::var("EMBERFIRE_HIST_BANKED").map_or(true, |v| v.trim() != "0");
        (threads, blocks, banked)
    })
}

/// Whether every value of u8 input is its own bin (256 bins over [0, 255]), computed as the
/// kernel computes bins (`hist_bin`: f32 arithmetic for bytes), so that the kernel may skip its
/// table.
fn byte_identity(t: DType, nbins: u32, minval: f64, scale: f64) -> bool {
    let (lo, s) = (minval as f32, scale as f32);
    t == DType::U8
        && nbins == 256
        && (0..256u32).all(|v| {
            let f = ((v as f32 - lo) * s).floor();
            let bin = if f < 0.0 {
                0
            } else if f >= nbins as f32 {
                nbins - 1
            } else {
                f as u32
            };
            bin == v
        })
}

/// See `Image::histogram`.
pub(crate) fn histogram(
    ordinal: usize,
    input: &Dense,
    slices: u64,
    nbins: u32,
    minval: f64,
    scale: f64,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let od = Dim4::new(&[u64::from(nbins), slices, 1, 1]);
    let out = alloc(dev, od, DType::U32)?;
    let bytes = od.elements() as usize * 4;
    // SAFETY: `out` is live device memory of `bytes` bytes; the memset is queued on the
    // emberfire stream before the kernel that adds to it.
    unsafe { cu::memset_d8_async(ptr(&out), 0, bytes, dev.stream_raw()) }
        .map_err(|e| super::driver_error("clearing a histogram", e))?;
    let per_slice = input.dims.elements().checked_div(slices).unwrap_or(0);
    if per_slice == 0 {
        return Ok(out);
    }
    let (block, per_sm, may_bank) = histogram_shape();
    // Up to 256 bins, 32 counters a bin, one for each lane (no two lanes of a warp on one
    // bank); past that one sub-histogram per warp where they fit (fewer counters contended by
    // each warp), at least one where the bins fit at all; none (global counters) past that.
    let banked = may_bank && nbins <= BANKED_BINS;
    let copies = if banked { 0 } else { (SHARED_BINS / nbins).min(block / 32) };
    let smem = if banked {
        (32 * nbins + if input.dtype.size() == 1 { 64 * 32 } else { 0 }) * 4
    } else {
        copies * nbins * 4
    };
    // Enough blocks to fill the device, each then counting many elements into its own shared
    // counters before the few global additions.
    let per_slice_blocks = (dev.sm_count() as u64 * u64::from(per_sm)).div_ceil(slices.min(65_535));
    let gx = per_slice.div_ceil(u64::from(block) * 32).clamp(1, per_slice_blocks.max(1)) as u32;
    let k = kernel(dev, "ef_histogram", input.dtype, histogram_real_type(input.dtype), true, 4)?;
    let mut p = KernelArgs::new();
    p.u64(ptr(input))
        .i64(per_slice as i64)
        .i64(slices as i64)
        .u64(ptr(&out))
        .i32(nbins as i32)
        .f64(minval)
        .f64(scale)
        .i32(copies as i32)
        .i32(banked as i32)
        .i32(byte_identity(input.dtype, nbins, minval, scale) as i32);
    // SAFETY: the parameters match `ef_histogram`'s signature in order and size; `input` holds
    // `slices * per_slice` elements and `out` `slices * nbins` counters, both live device
    // memory of this device held until after the launch; the shared size is what the kernel
    // uses: `copies * nbins` counters (at most `SHARED_BINS`), or banked `32 * nbins` (at most
    // 8192) and, for bytes, the 2048 words of the packed table, 40 KiB at most, within the
    // default 48 KiB; the kernel runs on emberfire's stream.
    unsafe { k.launch(dev, (gx, slices.min(65_535) as u32, 1), (block, 1, 1), smem, &mut p) }?;
    Ok(out)
}

/// The largest window `ef_window` takes along either dimension (its tile, grown by the window,
/// stays well within a block's shared memory for every type).
pub(crate) const WINDOW_MAX: u64 = 17;

/// See `Image::window`.
pub(crate) fn window(
    ordinal: usize,
    input: &Dense,
    mask: Option<&Dense>,
    filter: &WindowFilter,
    out_type: DType,
) -> Result<(Dense, Option<Dense>), Error> {
    let dev = runtime::device(ordinal)?;
    let dims = input.dims;
    let out = alloc(dev, dims, out_type)?;
    let second = match filter.op {
        WindowOp::Sobel => Some(alloc(dev, dims, out_type)?),
        _ => None,
    };
    if dims.elements() == 0 {
        return Ok((out, second));
    }
    let t = input.dtype;
    let [w0, w1] = filter.size;
    let (op, reflect) = (filter.op as u8, filter.reflect);
    let wide = wide(&[dims]);
    let masked = mask.is_some();
    // (Sobel reads two outputs' worth of registers a tile: it keeps 32 x 32 tiles)
    let preferred = if filter.op == WindowOp::Sobel { SOBEL_TILE } else { WINDOW_TILE };
    let shape = tile_shape(preferred, [w0, w1], t.size());
    let key = KernelKey::new(
        Family::Image,
        [
            2,
            t as u8,
            out_type as u8,
            op,
            w0 as u8,
            w1 as u8,
            reflect as u8,
            wide as u8,
            masked as u8,
        ]
        .into_iter()
        .chain(shape.key())
        .collect::<Vec<u8>>(),
    );
    let k = dev.kernels().kernel(dev, key, "ef_window", || {
        let network: String =
            filter.network.iter().map(|(i, j)| format!(" CX({i}, {j})")).collect();
        format!(
            "{}typedef {} out_t;\n#define WINDOW_OP {op}\n#define W0 {w0}\n#define W1 {w1}\n\
             #define BORDER {}\n#define MASKED {}\n#define MEDIAN_NETWORK{network}\n\
             #define MEDIAN_MID {}\n{}{TILE_STAGING}{SOURCE}",
            prelude(t, warp_real_type(t), wide),
            c_type(out_type),
            reflect as u8,
            masked as u8,
            w0 * w1 / 2,
            shape.defines(),
        )
    })?;
    let mut p = KernelArgs::new();
    p.u64(ptr(input))
        .value(self::dims(dims))
        .u64(ptr(&out))
        .u64(second.as_ref().map_or(0, ptr))
        .u64(filter.fill_bits)
        .u64(mask.map_or(0, ptr));
    let grid = tiled_grid(dev, &k, dims, shape);
    // SAFETY: the parameters match `ef_window`'s signature in order and size (pointers, `Dims`
    // as four 64-bit sizes, the fill's bits as 64); `input`, `out`, the second output (null
    // unless the kernel writes it: Sobel) and the mask (null, or `size[0] x size[1]` elements
    // of the input's type) are live device memory of this device, sized for `dims`, held until
    // after the launch (reuse is ordered on the same stream); the window is at most `WINDOW_MAX` a side, so its tile fits the
    // kernel's static shared memory; the kernel runs on emberfire's stream.
    unsafe { k.launch(dev, grid, (32, 8, 1), 0, &mut p) }?;
    Ok((out, second))
}

/// The image family on a CUDA device: the kernels above.
impl crate::backend::image::Image for super::Cuda {
    fn window_runs(&self, size: [u64; 2]) -> Result<bool, Error> {
        Ok(size.iter().all(|&w| (1..=WINDOW_MAX).contains(&w)))
    }

    fn window(
        &self,
        input: &Dense,
        mask: Option<&Dense>,
        filter: &WindowFilter,
        out_type: DType,
    ) -> Result<(Dense, Option<Dense>), Error> {
        window(self.ordinal, input, mask, filter, out_type)
    }

    fn warp(
        &self,
        input: &Dense,
        maps: &WarpMaps,
        od: Dim4,
        m: Interp,
        clamp_nearest: bool,
    ) -> Result<Dense, Error> {
        warp(self.ordinal, input, maps, od, m, clamp_nearest)
    }

    fn histogram(
        &self,
        input: &Dense,
        slices: u64,
        nbins: u32,
        minval: f64,
        scale: f64,
    ) -> Result<Dense, Error> {
        histogram(self.ordinal, input, slices, nbins, minval, scale)
    }
}

#[cfg(test)]
mod tests {
    use super::byte_identity;
    use crate::dtype::DType;

    #[test]
    fn byte_identity_holds_only_where_each_byte_is_its_own_bin() {
        // 256 bins over [0, 255] (ArrayFire's usual call) and over [0, 256)
        assert!(byte_identity(DType::U8, 256, 0.0, 256.0 / 255.0));
        assert!(byte_identity(DType::U8, 256, 0.0, 1.0));
        // shifted, fewer bins, a wider range, another type
        assert!(!byte_identity(DType::U8, 256, 1.0, 256.0 / 255.0));
        assert!(!byte_identity(DType::U8, 128, 0.0, 128.0 / 255.0));
        assert!(!byte_identity(DType::U8, 256, 0.0, 256.0 / 300.0));
        assert!(!byte_identity(DType::F32, 256, 0.0, 256.0 / 255.0));
    }
}
