//! Signal processing with arrayfire-rust's names and signatures: FFTs ([`fft()`] and family),
//! convolution ([`convolve1`] and family), FIR and IIR filters, and interpolation
//! ([`approx1`], [`approx2`], their uniform-grid forms and the `_v2` forms that write into an
//! output array).
//!
//! Shared rules:
//! - Inputs may be lazy expressions or strided data: they are evaluated into dense memory
//!   first (one fused pass for an expression).
//! - Kernels compute in f32, f64, c32 or c64. Other element types (integers, bool, f16) are
//!   converted on the way in and back on the way out by graph casts; integer results are
//!   rounded to nearest (ArrayFire truncates in the spatial domain and rounds in the
//!   frequency domain; emberfire rounds in both, so `ConvDomain::AUTO` never changes a
//!   result).
//! - Batched as ArrayFire batches: a transform or convolution of rank r works on the first r
//!   dimensions, independently for every index of the others.
//! - Empty inputs give empty outputs, as in ArrayFire; bad arguments (negative sizes,
//!   batch dimensions that do not match, the wrong interpolation method) panic with a message
//!   naming the function and the shapes.
//!
//! On the CPU, FFTs use rustfft and realfft with plans cached per length; on CUDA, cuFFT with
//! plans cached per shape (as many as [`set_fft_plan_cache_size`] says) and work areas from
//! emberfire's memory manager.

pub(crate) mod approx;
mod approx_output;
mod approx_uniform;
mod convolve;
mod fft;
mod fft_plan_cache;
mod filter;

pub use approx::{approx1, approx2};
pub use approx_output::{approx1_uniform_v2, approx1_v2, approx2_uniform_v2, approx2_v2};
pub use approx_uniform::{approx1_uniform, approx2_uniform};
pub use convolve::{
    convolve1, convolve2, convolve2_sep, convolve3, fft_convolve1, fft_convolve2, fft_convolve3,
};
pub use fft::{
    fft, fft2, fft2_c2r, fft2_inplace, fft2_r2c, fft3, fft3_c2r, fft3_inplace, fft3_r2c, fft_c2r,
    fft_inplace, fft_r2c, ifft, ifft2, ifft2_inplace, ifft3, ifft3_inplace, ifft_inplace,
};
pub use fft_plan_cache::set_fft_plan_cache_size;
pub use filter::{fir, iir};

use crate::dtype::DType;

/// The size of a convolution's output.
///
/// ```
/// use emberfire::{convolve1, dim4, Array, ConvDomain, ConvMode};
/// let s = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
/// let f = Array::new(&[1.0f32, 1.0], dim4!(2));
/// assert_eq!(convolve1(&s, &f, ConvMode::EXPAND, ConvDomain::AUTO).elements(), 4);
/// assert_eq!(convolve1(&s, &f, ConvMode::DEFAULT, ConvDomain::AUTO).elements(), 3);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvMode {
    /// The output has the signal's size: the full convolution cropped around the filter's
    /// centre (starting at `filter_len / 2`).
    DEFAULT = 0,
    /// The full convolution: `signal_len + filter_len - 1` along each convolved dimension.
    EXPAND = 1,
}

/// Where a convolution is computed.
///
/// ```
/// use emberfire::{convolve1, dim4, Array, ConvDomain, ConvMode};
/// let s = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
/// let f = Array::new(&[0.5f64, 0.5], dim4!(2));
/// let a = convolve1(&s, &f, ConvMode::EXPAND, ConvDomain::SPATIAL).to_vec();
/// let b = convolve1(&s, &f, ConvMode::EXPAND, ConvDomain::FREQUENCY).to_vec();
/// for (x, y) in a.iter().zip(&b) {
///     assert!((x - y).abs() < 1e-12);
/// }
/// ```
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvDomain {
    /// Chosen by the filter's size, with ArrayFire's rule: the frequency domain when the
    /// filter holds 10 or more batched filters, or is longer than 128 (1D), larger than 17
    /// along a side or non-square and larger than 5 (2D), larger than 5 along a side (3D);
    /// the spatial domain otherwise.
    AUTO = 0,
    /// Direct summation.
    SPATIAL = 1,
    /// Through FFTs of the zero-padded signal and filter.
    FREQUENCY = 2,
}

/// Interpolation methods of [`approx1`] and [`approx2`], with arrayfire-rust's names.
///
/// ```
/// use emberfire::{approx1, dim4, Array, InterpType};
/// let y = Array::new(&[0.0f32, 10.0, 20.0], dim4!(3));
/// let x = Array::new(&[0.25f32], dim4!(1));
/// assert_eq!(approx1(&y, &x, InterpType::LINEAR, 0.0).to_vec(), vec![2.5]);
/// assert_eq!(approx1(&y, &x, InterpType::NEAREST, 0.0).to_vec(), vec![0.0]);
/// ```
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InterpType {
    /// The nearest sample (halves round away from zero).
    NEAREST = 0,
    /// Linear between the two neighbours.
    LINEAR = 1,
    /// Bilinear ([`approx2`] only; the same as `LINEAR` there).
    BILINEAR = 2,
    /// Cubic convolution through four neighbours (edges repeat).
    CUBIC = 3,
    /// The sample at or below the position.
    LOWER = 4,
    /// Linear with the fraction smoothed by a cosine.
    LINEAR_COSINE = 5,
    /// Bilinear with cosine smoothing ([`approx2`] only).
    BILINEAR_COSINE = 6,
    /// Bicubic ([`approx2`] only; the same as `CUBIC` there).
    BICUBIC = 7,
    /// Cubic through four neighbours with Catmull-Rom splines.
    CUBIC_SPLINE = 8,
    /// Bicubic with Catmull-Rom splines ([`approx2`] only).
    BICUBIC_SPLINE = 9,
}

/// The type signal kernels compute in for elements of type `t`: the floating types
/// themselves, f32 for f16, bool and integers of up to 32 bits, f64 for 64-bit integers.
pub(crate) fn compute_type(t: DType) -> DType {
    match t {
        DType::F32 | DType::F64 | DType::C32 | DType::C64 => t,
        DType::S64 | DType::U64 => DType::F64,
        _ => DType::F32,
    }
}
