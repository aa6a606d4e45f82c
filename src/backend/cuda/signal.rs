//! Signal processing kernels on a CUDA device: the handwritten kernels of
//! `kernels/signal.cu`, compiled through the device's kernel cache once per element type, and
//! launched on the emberfire stream without waiting.

use std::sync::Arc;

use super::codegen::c_type;
use super::dense::{alloc_dense as alloc, device_ptr};
use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey};
use super::runtime::{self, Device};
use super::tiled::{tile_shape, tiled_grid, TileShape, CONVOLUTION_TILE, TILE_STAGING};
use crate::backend::signal::{approx1_dims, approx2_dims, Dense, FftKind, Interp};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

const SOURCE: &str = include_str!("kernels/signal.cu");
const BLOCK: u32 = 256;

/// The source of `signal.cu` for element types `src` and `dst`.
pub(crate) fn source(src: DType, dst: DType) -> String {
    let real = c_type(src.real_of());
    format!(
        "struct cf_; struct cd_;\ntypedef {} src_t;\ntypedef {} dst_t;\ntypedef {real} real_t;\n{SOURCE}",
        c_type(src),
        c_type(dst)
    )
}

/// The entry points of `signal.cu`, in the order their index is part of the key.
const ENTRIES: [&str; 6] =
    ["ef_reshape_copy", "ef_mul_bcast", "ef_convolve", "ef_iir", "ef_approx", "ef_convolve2_tiled"];

/// The largest filter `ef_convolve2_tiled` takes along either dimension (it is compiled for
/// each filter size, which it keeps in registers).
const TILED_FILTER: u64 = 9;

/// `ef_convolve2_tiled` for elements of type `t` and an `f0 x f1` filter, compiled on first
/// use; `wide` when indices within an image need 64 bits.
fn tiled_kernel(
    dev: &Device,
    t: DType,
    f: [u64; 2],
    wide: bool,
    shape: TileShape,
) -> Result<Arc<KernelFn>, Error> {
    let which = ENTRIES.iter().position(|&e| e == "ef_convolve2_tiled").expect("an entry");
    let key = KernelKey::new(
        Family::Signal,
        [which as u8, t as u8, f[0] as u8, f[1] as u8, wide as u8, 0]
            .into_iter()
            .chain(shape.key())
            .collect::<Vec<u8>>(),
    );
    dev.kernels().kernel(dev, key, "ef_convolve2_tiled", || {
        let idx = if wide { "long long" } else { "int" };
        format!(
            "typedef {idx} idx_t;\n#define CF0 {}\n#define CF1 {}\n{}{TILE_STAGING}{}",
            f[0],
            f[1],
            shape.defines(),
            source(t, t)
        )
    })
}

/// The kernel `entry` for these types, compiled on first use.
fn kernel(
    dev: &Device,
    entry: &'static str,
    src: DType,
    dst: DType,
) -> Result<Arc<KernelFn>, Error> {
    let which = ENTRIES.iter().position(|&e| e == entry).expect("an entry of signal.cu");
    let key = KernelKey::new(Family::Signal, [which as u8, src as u8, dst as u8]);
    dev.kernels().kernel(dev, key, entry, || source(src, dst))
}

/// The kernels' parameter builder, with the two kinds of value only `signal.cu` passes: a
/// shape (`Dims`, four 64-bit sizes) and an array's first element.
trait SignalArgs {
    fn dims(&mut self, d: Dim4) -> &mut Self;
    fn offsets(&mut self, o: [i64; 4]) -> &mut Self;
    fn ptr(&mut self, d: &Dense) -> &mut Self;
}

impl SignalArgs for KernelArgs {
    fn dims(&mut self, d: Dim4) -> &mut Self {
        self.value::<[u64; 4]>(std::array::from_fn(|k| d[k]))
    }
    fn offsets(&mut self, o: [i64; 4]) -> &mut Self {
        self.value(o)
    }
    fn ptr(&mut self, d: &Dense) -> &mut Self {
        self.u64(device_ptr(d))
    }
}

/// Launches `k` over `n` threads' worth of grid-stride work.
fn launch(dev: &Device, k: &KernelFn, n: usize, args: &mut KernelArgs) -> Result<(), Error> {
    if n == 0 {
        return Ok(());
    }
    let grid = grid_stride_blocks(n as u64, BLOCK, dev.sm_count(), 16);
    // SAFETY: the parameters match the entry point's signature in `signal.cu` in order and
    // size (pointers and 64-bit values, `Dims` as four 64-bit sizes);
    // every pointer is live device memory of this device, held by the caller's `Dense`s
    // until after the launch (reuse is ordered on the same stream), and sized for the
    // shapes passed; the kernel runs on emberfire's stream.
    unsafe { k.launch(dev, (grid, 1, 1), (BLOCK, 1, 1), 0, args) }
}

/// See `Signal::reshape_copy`.
pub(crate) fn reshape_copy(
    ordinal: usize,
    src: &Dense,
    od: Dim4,
    to: DType,
    offset: [i64; 4],
    scale: f64,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, od, to)?;
    let n = od.elements() as usize;
    if n > 0 {
        let k = kernel(dev, "ef_reshape_copy", src.dtype, to)?;
        let mut p = KernelArgs::new();
        p.ptr(src).dims(src.dims).ptr(&out).dims(od).offsets(offset).f64(scale).i64(n as i64);
        launch(dev, &k, n, &mut p)?;
    }
    Ok(out)
}

/// See `Signal::mul_bcast`.
pub(crate) fn mul_bcast(ordinal: usize, a: &Dense, b: &Dense, od: Dim4) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, od, a.dtype)?;
    let n = od.elements() as usize;
    if n > 0 {
        let k = kernel(dev, "ef_mul_bcast", a.dtype, a.dtype)?;
        let mut p = KernelArgs::new();
        p.ptr(a).dims(a.dims).ptr(b).dims(b.dims).ptr(&out).dims(od).i64(n as i64);
        launch(dev, &k, n, &mut p)?;
    }
    Ok(out)
}

/// See `Signal::convolve`. Two-dimensional convolutions with filters of up to 9 x 9
/// run tiled (`ef_convolve2_tiled`: each signal element is read from global memory about once
/// per tile, the filter is held in registers, and f32 filters of at most 25 elements compute
/// two neighbouring columns a thread: see `tiled::CONVOLUTION_TILE`); the others run one
/// thread per output.
pub(crate) fn convolve(
    ordinal: usize,
    signal: &Dense,
    filter: &Dense,
    rank: usize,
    od: Dim4,
    start: [i64; 4],
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, od, signal.dtype)?;
    let n = od.elements() as usize;
    if n == 0 {
        return Ok(out);
    }
    let (f0, f1) = (filter.dims[0], filter.dims[1]);
    if rank == 2 && (1..=TILED_FILTER).contains(&f0) && (1..=TILED_FILTER).contains(&f1) {
        let wide = [signal.dims, od].iter().any(|d| d[0] * d[1] >= 1 << 31);
        let shape = tile_shape(CONVOLUTION_TILE, [f0, f1], signal.dtype.size());
        let k = tiled_kernel(dev, signal.dtype, [f0, f1], wide, shape)?;
        let mut p = KernelArgs::new();
        p.ptr(signal)
            .dims(signal.dims)
            .ptr(filter)
            .dims(filter.dims)
            .ptr(&out)
            .dims(od)
            .offsets(start);
        let grid = tiled_grid(dev, &k, od, shape);
        // SAFETY: the parameters match `ef_convolve2_tiled`'s signature in order and size
        // (pointers, `Dims` as four 64-bit sizes); the pointers are live device memory of this
        // device held by the caller's `Dense`s until after the launch (reuse is ordered on the
        // same stream) and sized for the shapes passed, the filter being `f0 x f1` per image as
        // the kernel was compiled for; its tile is static shared memory of at most 40 x 40 elements
        // of 16 bytes (`tile_shape` falls back to the smallest shape for large ones); the kernel runs on emberfire's stream.
        unsafe { k.launch(dev, grid, (32, 8, 1), 0, &mut p) }?;
        return Ok(out);
    }
    let k = kernel(dev, "ef_convolve", signal.dtype, signal.dtype)?;
    let mut p = KernelArgs::new();
    p.ptr(signal)
        .dims(signal.dims)
        .ptr(filter)
        .dims(filter.dims)
        .ptr(&out)
        .dims(od)
        .offsets(start)
        .i32(rank as i32)
        .i64(n as i64);
    launch(dev, &k, n, &mut p)?;
    Ok(out)
}

/// See `Signal::iir`.
pub(crate) fn iir(ordinal: usize, c: &Dense, a: &Dense) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, c.dims, c.dtype)?;
    let lines = (c.dims[1] * c.dims[2] * c.dims[3]) as usize;
    if c.dims.elements() > 0 {
        let k = kernel(dev, "ef_iir", c.dtype, c.dtype)?;
        let mut p = KernelArgs::new();
        p.ptr(c).dims(c.dims).ptr(a).dims(a.dims).ptr(&out).i64(lines as i64);
        launch(dev, &k, lines, &mut p)?;
    }
    Ok(out)
}

/// approx1 (one position array) or approx2 (two, of one shape); see `Signal::approx1` and `Signal::approx2`.
pub(crate) fn approx(
    ordinal: usize,
    input: &Dense,
    pos: &[&Dense],
    od: Dim4,
    m: Interp,
    off_grid: f64,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let out = alloc(dev, od, input.dtype)?;
    let n = od.elements() as usize;
    if n > 0 {
        let k = kernel(dev, "ef_approx", input.dtype, input.dtype)?;
        let mut p = KernelArgs::new();
        p.ptr(input)
            .dims(input.dims)
            .ptr(pos[0])
            .ptr(pos[pos.len() - 1])
            .dims(pos[0].dims)
            .i32(pos.len() as i32)
            .ptr(&out)
            .dims(od)
            .i32(m.code() as i32)
            .f64(off_grid)
            .i64(n as i64);
        launch(dev, &k, n, &mut p)?;
    }
    Ok(out)
}

/// The signal family on a CUDA device: the kernels above, and cuFFT (`cuda/fft.rs`) for FFTs.
impl crate::backend::signal::Signal for super::Cuda {
    fn reshape_copy(
        &self,
        src: &Dense,
        od: Dim4,
        to: DType,
        offset: [i64; 4],
        scale: f64,
    ) -> Result<Dense, Error> {
        reshape_copy(self.ordinal, src, od, to, offset, scale)
    }

    fn fft(
        &self,
        src: &Dense,
        kind: FftKind,
        rank: usize,
        pdims: Dim4,
        scale: f64,
    ) -> Result<Dense, Error> {
        super::fft::fft(self.ordinal, src, kind, rank, pdims, scale)
    }

    fn mul_bcast(&self, a: &Dense, b: &Dense, od: Dim4) -> Result<Dense, Error> {
        mul_bcast(self.ordinal, a, b, od)
    }

    fn convolve(
        &self,
        signal: &Dense,
        filter: &Dense,
        rank: usize,
        od: Dim4,
        start: [i64; 4],
    ) -> Result<Dense, Error> {
        convolve(self.ordinal, signal, filter, rank, od, start)
    }

    fn iir(&self, c: &Dense, a: &Dense) -> Result<Dense, Error> {
        iir(self.ordinal, c, a)
    }

    fn approx1(&self, input: &Dense, pos: &Dense, m: Interp, off: f64) -> Result<Dense, Error> {
        approx(self.ordinal, input, &[pos], approx1_dims(input, pos), m, off)
    }

    fn approx2(
        &self,
        input: &Dense,
        pos0: &Dense,
        pos1: &Dense,
        m: Interp,
        off: f64,
    ) -> Result<Dense, Error> {
        approx(self.ordinal, input, &[pos0, pos1], approx2_dims(input, pos0), m, off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_every_type() {
        let s = source(DType::F32, DType::C32);
        assert!(s.contains("typedef float src_t;") && s.contains("typedef cf_ dst_t;"));
        assert!(source(DType::C64, DType::F64).contains("typedef double real_t;"));
    }
}
