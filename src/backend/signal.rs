//! Where signal processing runs: the dense-data primitives that `ops::signal` builds FFTs,
//! convolutions, filters and interpolation from, dispatched to the CPU kernels
//! (`cpu::signal`) or the CUDA ones (`cuda::signal`, cuFFT through `cuda::fft`).
//!
//! Every primitive takes and returns [`Dense`] data of one of the four floating types (f32,
//! f64, c32, c64): the public functions convert other types before and after with graph
//! casts, so kernels exist for these four only.

use super::cpu::signal::{self as cpu, Sample};
use super::{cuda, BackendKind};
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

pub(crate) fn dims_usize(d: Dim4) -> [usize; 4] {
    std::array::from_fn(|k| d[k] as usize)
}

fn dim4_of(d: [usize; 4]) -> Dim4 {
    Dim4::new(&d.map(|x| x as u64))
}

/// Runs `$body` with `$S` bound to the Rust type of one of the four floating `DType`s.
macro_rules! with_sample {
    ($dt:expr, $S:ident => $body:expr) => {{
        match $dt {
            DType::F32 => {
                type $S = f32;
                $body
            }
            DType::F64 => {
                type $S = f64;
                $body
            }
            DType::C32 => {
                type $S = crate::dtype::c32;
                $body
            }
            DType::C64 => {
                type $S = crate::dtype::c64;
                $body
            }
            other => unreachable!("internal error: signal kernel for {}", other.name()),
        }
    }};
}

fn host_dense<T: Sample>(v: Vec<T>, dims: [usize; 4]) -> Dense {
    Dense::from_host(v, dim4_of(dims))
}

/// A copy of `src` with shape `od` and type `to`: element `o` is `scale * src[o + offset]`
/// where that is inside `src`, else zero (pads, crops, converts and scales at once).
pub(crate) fn reshape_copy(
    src: &Dense,
    od: Dim4,
    to: DType,
    offset: [i64; 4],
    scale: f64,
) -> Result<Dense, Error> {
    match src.backend {
        BackendKind::Cpu => Ok(with_sample!(src.dtype, S => with_sample!(to, D => {
            let v: Vec<D> = cpu::reshape_copy(
                src.host::<S>(), src.shape(), dims_usize(od), offset, scale)?;
            host_dense(v, dims_usize(od))
        }))),
        BackendKind::Cuda(d) => cuda::signal::reshape_copy(d, src, od, to, offset, scale),
    }
}

/// A batched, unnormalised FFT over the first `rank` dimensions of `src`, padded with zeros
/// or truncated to `pdims` first (for C2R, `pdims` is the real output's shape) and scaled by
/// `scale`. C2C and R2C return the complex type of `src`'s precision, C2R the real one.
pub(crate) fn fft(
    src: &Dense,
    kind: FftKind,
    rank: usize,
    pdims: Dim4,
    scale: f64,
) -> Result<Dense, Error> {
    match src.backend {
        BackendKind::Cpu => Ok(with_sample!(src.dtype, S => {
            let (re, cx, od) =
                cpu::fft::<S>(src.host::<S>(), src.shape(), kind, rank, dims_usize(pdims), scale)?;
            if kind == FftKind::C2R { host_dense(re, od) } else { host_dense(cx, od) }
        })),
        BackendKind::Cuda(d) => cuda::fft::fft(d, src, kind, rank, pdims, scale),
    }
}

/// `a * b` element by element with size-1 dimensions broadcast, into shape `od` (same types).
pub(crate) fn mul_bcast(a: &Dense, b: &Dense, od: Dim4) -> Result<Dense, Error> {
    match a.backend {
        BackendKind::Cpu => Ok(with_sample!(a.dtype, S => {
            let v = cpu::mul_bcast::<S>(
                a.host(), a.shape(), b.host(), b.shape(), dims_usize(od))?;
            host_dense(v, dims_usize(od))
        })),
        BackendKind::Cuda(d) => cuda::signal::mul_bcast(d, a, b, od),
    }
}

/// Direct convolution over the first `rank` dimensions (see `cpu::convolve`); `signal` and
/// `filter` have the same type.
pub(crate) fn convolve(
    signal: &Dense,
    filter: &Dense,
    rank: usize,
    od: Dim4,
    start: [i64; 4],
) -> Result<Dense, Error> {
    match signal.backend {
        BackendKind::Cpu => Ok(with_sample!(signal.dtype, S => {
            let v = cpu::convolve::<S>(signal.host(), signal.shape(), filter.host(),
                filter.shape(), rank, dims_usize(od), start)?;
            host_dense(v, dims_usize(od))
        })),
        BackendKind::Cuda(d) => cuda::signal::convolve(d, signal, filter, rank, od, start),
    }
}

/// The IIR recursion over lines along dimension 0 of `c` with feedback coefficients `a`.
pub(crate) fn iir(c: &Dense, a: &Dense) -> Result<Dense, Error> {
    match c.backend {
        BackendKind::Cpu => Ok(with_sample!(c.dtype, S => {
            host_dense(cpu::iir::<S>(c.host(), c.shape(), a.host(), a.shape())?, c.shape())
        })),
        BackendKind::Cuda(d) => cuda::signal::iir(d, c, a),
    }
}

/// Interpolation along dimension 0 (`pos` has the real type of `input`'s precision).
pub(crate) fn approx1(input: &Dense, pos: &Dense, m: Interp, off: f64) -> Result<Dense, Error> {
    let od = Dim4::new(&[pos.dims[0], input.dims[1], input.dims[2], input.dims[3]]);
    match input.backend {
        BackendKind::Cpu => Ok(with_sample!(input.dtype, S => {
            let v = cpu::approx1::<S>(input.host(), input.shape(),
                pos.host::<<S as Sample>::Real>(), pos.shape(), m, off)?;
            host_dense(v, dims_usize(od))
        })),
        BackendKind::Cuda(d) => cuda::signal::approx(d, input, &[pos], od, m, off),
    }
}

/// Interpolation over dimensions 0 and 1 (`pos0` and `pos1` have one shape and the real type
/// of `input`'s precision).
pub(crate) fn approx2(
    input: &Dense,
    pos0: &Dense,
    pos1: &Dense,
    m: Interp,
    off: f64,
) -> Result<Dense, Error> {
    let od = Dim4::new(&[pos0.dims[0], pos0.dims[1], input.dims[2], input.dims[3]]);
    match input.backend {
        BackendKind::Cpu => Ok(with_sample!(input.dtype, S => {
            let v = cpu::approx2::<S>(input.host(), input.shape(),
                pos0.host::<<S as Sample>::Real>(), pos1.host::<<S as Sample>::Real>(),
                pos0.shape(), m, off)?;
            host_dense(v, dims_usize(od))
        })),
        BackendKind::Cuda(d) => cuda::signal::approx(d, input, &[pos0, pos1], od, m, off),
    }
}

/// Keeps at most `size` FFT plans from now on (the CPU's planners keep theirs whatever the
/// size: a plan there is cheap and small).
pub(crate) fn set_fft_plan_cache_size(size: usize) {
    cuda::fft::set_plan_cache_size(size);
}
