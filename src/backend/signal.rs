//! The signal family: the dense-data primitives that `ops::signal` builds FFTs, convolutions,
//! filters and interpolation from, as one trait, [`Signal`], implemented by `cpu::Cpu` (in
//! `cpu/signal.rs`, with the FFTs of `cpu/fft.rs`) and by `cuda::Cuda` (in `cuda/signal.rs`,
//! cuFFT through `cuda/fft.rs`). Callers pick the backend of their operands:
//! `src.backend.ops().fft(...)`.
//!
//! Every primitive takes and returns [`Dense`] data of one of the four floating types (f32,
//! f64, c32, c64): the public functions convert other types before and after with graph
//! casts, so kernels exist for these four only. Results are new data on the operands' backend.

use super::cuda;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;

pub(crate) use super::dense::Dense;

/// Which transform `fft` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FftKind {
    /// Complex to complex; `inverse` selects the + sign of the exponent.
    C2C { inverse: bool },
    /// Real to complex (forward): dimension 0 of the result is `n / 2 + 1`.
    R2C,
    /// Complex to real (inverse): dimension 0 of the input is `n / 2 + 1`.
    C2R,
}

/// Interpolation methods, as `InterpType` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Interp {
    Nearest,
    Lower,
    Linear,
    LinearCosine,
    Cubic,
    CubicSpline,
}

impl Interp {
    /// The method's code in the CUDA kernels.
    pub(crate) fn code(self) -> u32 {
        self as u32
    }
}

impl Dense {
    /// The shape as `usize`s.
    pub(crate) fn shape(&self) -> [usize; 4] {
        dims_usize(self.dims)
    }
}

/// The dimensions of `d` as `usize`s.
pub(crate) fn dims_usize(d: Dim4) -> [usize; 4] {
    std::array::from_fn(|k| d[k] as usize)
}

/// The `Dim4` of a shape given as `usize`s.
pub(crate) fn dim4_of(d: [usize; 4]) -> Dim4 {
    Dim4::new(&d.map(|x| x as u64))
}

/// Signal processing on one backend. Every method returns new dense data on `self`, of the
/// four floating types.
pub(crate) trait Signal {
    /// A copy of `src` with shape `od` and type `to`: element `o` is `scale * src[o + offset]`
    /// where that is inside `src`, else zero (pads, crops, converts and scales at once).
    fn reshape_copy(
        &self,
        src: &Dense,
        od: Dim4,
        to: DType,
        offset: [i64; 4],
        scale: f64,
    ) -> Result<Dense, Error>;

    /// A batched, unnormalised FFT over the first `rank` dimensions of `src`, padded with
    /// zeros or truncated to `pdims` first (for C2R, `pdims` is the real output's shape) and
    /// scaled by `scale`. C2C and R2C return the complex type of `src`'s precision, C2R the
    /// real one; R2C's dimension 0 is `pdims[0] / 2 + 1`.
    fn fft(
        &self,
        src: &Dense,
        kind: FftKind,
        rank: usize,
        pdims: Dim4,
        scale: f64,
    ) -> Result<Dense, Error>;

    /// `a * b` element by element with size-1 dimensions broadcast, into shape `od` (same
    /// types).
    fn mul_bcast(&self, a: &Dense, b: &Dense, od: Dim4) -> Result<Dense, Error>;

    /// Direct convolution over the first `rank` dimensions into shape `od`, batched over the
    /// others: `out[o] = sum_f signal[o + start - f] * filter[f]`, samples outside the signal
    /// being zero (see `cpu::signal::convolve`); `signal` and `filter` have the same type.
    fn convolve(
        &self,
        signal: &Dense,
        filter: &Dense,
        rank: usize,
        od: Dim4,
        start: [i64; 4],
    ) -> Result<Dense, Error>;

    /// The IIR recursion over lines along dimension 0 of `c` with feedback coefficients `a`;
    /// the result has `c`'s shape.
    fn iir(&self, c: &Dense, a: &Dense) -> Result<Dense, Error>;

    /// Interpolation along dimension 0 by method `m`, `off` the value outside the input
    /// (`pos` has the real type of `input`'s precision); the result has shape
    /// `(pos[0], input[1], input[2], input[3])`.
    fn approx1(&self, input: &Dense, pos: &Dense, m: Interp, off: f64) -> Result<Dense, Error>;

    /// Interpolation over dimensions 0 and 1 by method `m`, `off` the value outside the input
    /// (`pos0` and `pos1` have one shape and the real type of `input`'s precision); the result
    /// has shape `(pos0[0], pos0[1], input[2], input[3])`.
    fn approx2(
        &self,
        input: &Dense,
        pos0: &Dense,
        pos1: &Dense,
        m: Interp,
        off: f64,
    ) -> Result<Dense, Error>;
}

/// The shape of `approx1`'s result.
pub(crate) fn approx1_dims(input: &Dense, pos: &Dense) -> Dim4 {
    Dim4::new(&[pos.dims[0], input.dims[1], input.dims[2], input.dims[3]])
}

/// The shape of `approx2`'s result.
pub(crate) fn approx2_dims(input: &Dense, pos0: &Dense) -> Dim4 {
    Dim4::new(&[pos0.dims[0], pos0.dims[1], input.dims[2], input.dims[3]])
}

/// Keeps at most `size` FFT plans from now on (the CPU's planners keep theirs whatever the
/// size: a plan there is cheap and small). Not a method of [`Signal`]: the one cache of cuFFT
/// plans is the process's, shared by every device, and there is no backend to pick.
pub(crate) fn set_fft_plan_cache_size(size: usize) {
    cuda::fft::set_plan_cache_size(size);
}
