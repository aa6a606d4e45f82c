//! Where image kernels run: geometric warps and histograms, dispatched to the CPU kernels
//! (`cpu::image`) or the CUDA ones (`cuda::image`).
//!
//! Both take any real type but f16 and bool (the public functions convert those, and warp
//! complex images part by part), and compute in the type `warp_real_type` or
//! `histogram_real_type` names, the same on both backends.

use super::cpu::image as cpu;
use super::dense::Dense;
use super::signal::Interp;
use super::{cuda, BackendKind};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

/// The maps of a warp from output pixels to input points, row-major 3 x 3 (see `Mat` in
/// `kernels/image.cu`): one, or `batch[0] x batch[1]` of them, broadcast over the output's
/// images along dimensions 2 and 3 where a batch size is 1.
#[derive(Clone, Debug)]
pub(crate) struct WarpMaps {
    pub maps: Vec<[f64; 9]>,
    pub batch: [u64; 2],
}

impl WarpMaps {
    /// One map for every image.
    pub(crate) fn one(m: [f64; 9]) -> WarpMaps {
        WarpMaps { maps: vec![m], batch: [1, 1] }
    }
}

/// The type a warp of elements of type `t` computes in: f64 for f64 and the 32- and 64-bit
/// integers, else f32. (NEAREST and LOWER copy samples, exactly for every type.)
pub(crate) fn warp_real_type(t: DType) -> DType {
    match t {
        DType::F64 | DType::S32 | DType::U32 | DType::S64 | DType::U64 => DType::F64,
        _ => DType::F32,
    }
}

/// The type a histogram of elements of type `t` computes its bins in: f64 for f64 and the
/// 64-bit integers, else f32.
pub(crate) fn histogram_real_type(t: DType) -> DType {
    match t {
        DType::F64 | DType::S64 | DType::U64 => DType::F64,
        _ => DType::F32,
    }
}

/// The filters `window` runs: the kernel's `WINDOW_OP` codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowOp {
    /// The maximum over the positions the mask marks.
    Max = 0,
    /// The minimum over the positions the mask marks.
    Min = 1,
    /// The median of the whole window, by a sorting network.
    Median = 2,
    /// The 3 x 3 Sobel derivatives along dimensions 0 and 1.
    Sobel = 3,
}

/// A filter over a `size[0] x size[1]` window centred at `(size[0] / 2, size[1] / 2)`.
#[derive(Clone, Debug)]
pub(crate) struct WindowFilter {
    pub op: WindowOp,
    pub size: [u64; 2],
    /// The comparators of the median's sorting network, for `Median`.
    pub network: Vec<(usize, usize)>,
    /// What lies outside the image, as the element's bits (unless `reflect`).
    pub fill_bits: u64,
    /// The image reflected about its edge pixels, which are not repeated, outside it.
    pub reflect: bool,
}

/// Whether `window` runs on this backend for a window of `size`: on CUDA, as one tiled kernel.
/// (On the CPU the composed element-wise form is as fast, and is what runs.)
pub(crate) fn window_runs(backend: BackendKind, size: [u64; 2]) -> bool {
    matches!(backend, BackendKind::Cuda(_))
        && size.iter().all(|&w| (1..=cuda::image::WINDOW_MAX).contains(&w))
}

/// The filter over every image of `input` (not f16, bool or complex) into arrays of its shape
/// and type `out_type` (two for Sobel); `Max` and `Min` fold over the positions where `mask`
/// (of the window's size and the input's type) is positive, or every position without one.
/// Only where `window_runs`.
pub(crate) fn window(
    input: &Dense,
    mask: Option<&Dense>,
    filter: &WindowFilter,
    out_type: DType,
) -> Result<(Dense, Option<Dense>), Error> {
    match input.backend {
        BackendKind::Cuda(d) => cuda::image::window(d, input, mask, filter, out_type),
        BackendKind::Cpu => unreachable!("internal error: the window kernel on the CPU"),
    }
}

/// Runs `$body` with `$T` bound to the Rust type of a real `DType` (not f16 or bool) and `$R`
/// to the Rust type of the real type `$real` (f32 or f64).
macro_rules! with_pixel {
    ($dt:expr, $real:expr, $T:ident, $R:ident => $body:expr) => {{
        macro_rules! real {
            ($t:ty) => {{
                type $T = $t;
                match $real {
                    DType::F32 => {
                        type $R = f32;
                        $body
                    }
                    _ => {
                        type $R = f64;
                        $body
                    }
                }
            }};
        }
        match $dt {
            DType::F32 => real!(f32),
            DType::F64 => real!(f64),
            DType::U8 => real!(u8),
            DType::S16 => real!(i16),
            DType::U16 => real!(u16),
            DType::S32 => real!(i32),
            DType::U32 => real!(u32),
            DType::S64 => real!(i64),
            DType::U64 => real!(u64),
            other => unreachable!("internal error: image kernel for {}", other.name()),
        }
    }};
}

fn shape(d: Dim4) -> [usize; 4] {
    std::array::from_fn(|k| d[k] as usize)
}

/// Every image of `input` (broadcast along dimensions 2 and 3 of size 1) sampled
/// by method `m` at the points `maps` sends the output's pixels to, into an output of shape
/// `od`. NEAREST and LOWER read 0 outside the image unless `clamp_nearest`; the other methods
/// read 0 outside `[-1e-4, n)` along either dimension and repeat the edge for neighbours
/// past it.
pub(crate) fn warp(
    input: &Dense,
    maps: &WarpMaps,
    od: Dim4,
    m: Interp,
    clamp_nearest: bool,
) -> Result<Dense, Error> {
    match input.backend {
        BackendKind::Cpu => {
            let (id, o) = (shape(input.dims), shape(od));
            let real = warp_real_type(input.dtype);
            Ok(with_pixel!(input.dtype, real, T, R => Dense::from_host(
                cpu::warp::<T, R>(input.host(), id, maps, o, m, clamp_nearest)?,
                od,
            )))
        }
        BackendKind::Cuda(d) => cuda::image::warp(d, input, maps, od, m, clamp_nearest),
    }
}

/// Counts of the elements of each of `slices` equal runs of `input` in `nbins` bins:
/// bin `floor((v - minval) * scale)` clamped to the first and last, NaN not counted; computed
/// in `histogram_real_type`. The result is u32 of shape
/// `(nbins, slices)`.
pub(crate) fn histogram(
    input: &Dense,
    slices: u64,
    nbins: u32,
    minval: f64,
    scale: f64,
) -> Result<Dense, Error> {
    let od = Dim4::new(&[u64::from(nbins), slices, 1, 1]);
    match input.backend {
        BackendKind::Cpu => {
            let (s, b) = (slices as usize, nbins as usize);
            let real = histogram_real_type(input.dtype);
            let counts = with_pixel!(input.dtype, real, T, R => {
                cpu::histogram::<T, R>(input.host(), s, b, minval, scale)?
            });
            Ok(Dense::from_host(counts, od))
        }
        BackendKind::Cuda(d) => cuda::image::histogram(d, input, slices, nbins, minval, scale),
    }
}
