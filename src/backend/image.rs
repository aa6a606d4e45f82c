//! The image family: geometric warps, histograms and the tiled window filters, as one trait,
//! [`Image`], implemented by `cpu::Cpu` (in `cpu/image.rs`) and by `cuda::Cuda` (in
//! `cuda/image.rs`). Callers pick the backend of their operands:
//! `input.backend.ops().warp(...)`.
//!
//! Warps and histograms take any real type but f16 and bool (the public functions convert
//! those, and warp complex images part by part), and compute in the type `warp_real_type` or
//! `histogram_real_type` names, the same on both backends. The window filters run on CUDA
//! only; elsewhere the callers compose them from element-wise operations.

use super::dense::Dense;
use super::signal::Interp;
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

/// Image kernels on one backend. Every method returns new dense data on `self`.
pub(crate) trait Image {
    /// Whether [`Image::window`] runs on this backend for a window of `size`: on CUDA, as one
    /// tiled kernel for windows of up to `cuda::image::WINDOW_MAX` along each dimension;
    /// never on the CPU (there the composed element-wise form is as fast, and is what runs).
    fn window_runs(&self, size: [u64; 2]) -> Result<bool, Error>;

    /// The filter over every image of `input` (not f16, bool or complex) into arrays of its
    /// shape and type `out_type` (two for Sobel, else the second is `None`); `Max` and `Min`
    /// fold over the positions where `mask` (of the window's size and the input's type) is
    /// positive, or every position without one. Only where [`Image::window_runs`] (the CPU
    /// panics: an internal error).
    fn window(
        &self,
        input: &Dense,
        mask: Option<&Dense>,
        filter: &WindowFilter,
        out_type: DType,
    ) -> Result<(Dense, Option<Dense>), Error>;

    /// Every image of `input` (broadcast along dimensions 2 and 3 of size 1) sampled by method
    /// `m` at the points `maps` sends the output's pixels to, into an output of shape `od` and
    /// `input`'s type. NEAREST and LOWER read 0 outside the image unless `clamp_nearest`; the
    /// other methods read 0 outside `[-1e-4, n)` along either dimension and repeat the edge
    /// for neighbours past it.
    fn warp(
        &self,
        input: &Dense,
        maps: &WarpMaps,
        od: Dim4,
        m: Interp,
        clamp_nearest: bool,
    ) -> Result<Dense, Error>;

    /// Counts of the elements of each of `slices` equal runs of `input` in `nbins` bins:
    /// bin `floor((v - minval) * scale)` clamped to the first and last, NaN not counted;
    /// computed in `histogram_real_type`. The result is u32 of shape `(nbins, slices)`.
    fn histogram(
        &self,
        input: &Dense,
        slices: u64,
        nbins: u32,
        minval: f64,
        scale: f64,
    ) -> Result<Dense, Error>;
}
