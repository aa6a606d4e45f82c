//! The ml family: the convolutions of `ops::ml` on a backend's fast path, as one trait, [`Ml`],
//! implemented by `cpu::Cpu` (in `cpu/ml.rs`: no fast path) and by `cuda::Cuda` (in
//! `cuda/ml.rs`: cuDNN). Callers pick the backend of their operands:
//! `a.backend.ops().run_convolution(...)`; `None` where no fast path applies, and the callers
//! then lower the convolution to matrix products (see `ops::ml`).

use super::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

/// Sizes and steps of a convolution of a `[w, h, c, n]` signal with a `[fw, fh, c, f]`
/// filter into a `[ow, oh, f, n]` output. Index 0 of each pair is along dimension 0 (the
/// signal's `w`), index 1 along dimension 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Geometry {
    /// Signal: width (dimension 0), height, channels, images.
    pub signal: [u64; 4],
    /// Filter: width, height, channels, filters.
    pub filter: [u64; 4],
    pub stride: [u64; 2],
    pub padding: [u64; 2],
    pub dilation: [u64; 2],
    /// Output width and height.
    pub out: [u64; 2],
}

impl Geometry {
    /// The output's dimensions, `[ow, oh, filters, images]`.
    pub(crate) fn out_dims(&self) -> Dim4 {
        Dim4::new(&[self.out[0], self.out[1], self.filter[3], self.signal[3]])
    }

    /// Output pixels of one image and one filter.
    pub(crate) fn out_pixels(&self) -> u64 {
        self.out[0] * self.out[1]
    }

    /// Taps of one filter over all channels: `fw * fh * c`.
    pub(crate) fn taps(&self) -> u64 {
        self.filter[0] * self.filter[1] * self.filter[2]
    }

    /// Whether some array of the convolution has no elements, so that no product runs.
    pub(crate) fn is_degenerate(&self) -> bool {
        self.signal.contains(&0) || self.filter.contains(&0)
    }
}

/// Which pass of a convolution runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Pass {
    /// The output, from the signal and the filter.
    Forward,
    /// The signal's gradient, from the output's gradient and the filter.
    Data,
    /// The filter's gradient, from the output's gradient and the signal.
    Filter,
}

/// Convolutions on one backend's fast path.
pub(crate) trait Ml {
    /// Whether a fast path may run for arrays of type `dtype` on this backend (asked before
    /// the operands are evaluated into dense memory for it): on CUDA for f32 and f64 where
    /// cuDNN loads and is not turned off; never on the CPU.
    fn may_run(&self, dtype: DType) -> Result<bool, Error>;

    /// Runs `pass` of the convolution `g` on `a` and `b` (signal and filter for `Forward`, the
    /// output's gradient and the filter for `Data`, the output's gradient and the signal for
    /// `Filter`) into new data of shape [`result_dims`], or `None` where the fast path
    /// declines (always on a backend without one). Only where [`Ml::may_run`].
    fn run_convolution(
        &self,
        pass: Pass,
        a: &Dense,
        b: &Dense,
        g: &Geometry,
    ) -> Result<Option<Dense>, Error>;
}

/// The dims of what `pass` returns.
pub(crate) fn result_dims(pass: Pass, g: &Geometry) -> Dim4 {
    match pass {
        Pass::Forward => g.out_dims(),
        Pass::Data => Dim4::new(&g.signal),
        Pass::Filter => Dim4::new(&g.filter),
    }
}
