//! Neural-network convolutions with arrayfire-rust's names, signatures and enums:
//! [`convolve2_nn`], the forward pass of a 2-D convolution layer, and
//! [`convolve2_gradient_nn`], its backward passes ([`ConvGradientType`]).
//!
//! Layouts, as in ArrayFire: a signal is `[w, h, c, n]` (images of `c` channels, column-major,
//! `w` along dimension 0), a filter bank `[fw, fh, c, f]`, an output `[ow, oh, f, n]`. In the
//! row-major terms of cuDNN and PyTorch these are NCHW tensors with `W = w` innermost and
//! KCRS filters; emberfire's `[w, h, c, n]` is PyTorch's `(n, c, h, w)` without a copy. The
//! convolution is a true convolution (the filter is flipped, as ArrayFire and cuDNN's
//! `CUDNN_CONVOLUTION` mode compute it).
//!
//! How it runs:
//! - **Lowered to matrix products**, on every backend: each image's windows are gathered into
//!   a matrix (`im2col`: one join of `fw * fh` strided views of the padded signal) and
//!   multiplied with the filter bank as a `[fw * fh * c, f]` matrix, one batched product (faer
//!   on the CPU, cuBLAS on CUDA). The rows are output pixels and the batches images, so the
//!   product lands in the output's layout directly; ArrayFire's lowering orders rows by image
//!   and transposes the result afterwards. The data gradient is the product with the filter
//!   matrix transposed, added back into a signal window by window (`col2im`); the filter
//!   gradient is a product with the gathered windows, summed over images; the bias gradient
//!   is a sum.
//! - **cuDNN on CUDA**, where it is installed (cuDNN 9, e.g. PyTorch's `nvidia-cudnn-cu12`
//!   wheel, found as emberfire finds the other CUDA libraries; `EMBERFIRE_CUDNN` names the
//!   library or its folder): the forward pass and the data and filter gradients call cuDNN's
//!   convolution routines directly on the arrays' memory, with the fastest algorithm measured
//!   once per shape, f32 computed in full precision (no TF32), work areas from emberfire's
//!   memory pool, on emberfire's stream. Where cuDNN is missing or refuses a shape, the
//!   lowered form runs instead. Setting `EMBERFIRE_CUDNN=off` turns cuDNN off.
//!
//! Element types: f32 and f64 (arrayfire-rust's `RealFloating`). ArrayFire's C library also
//! takes f16, but arrayfire-rust's signatures do not, and neither do emberfire's.

mod convolve;
mod geometry;
mod gradient;
mod patches;
mod vendor_path;

pub use convolve::convolve2_nn;
pub use gradient::convolve2_gradient_nn;

use crate::array::Array;
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::jit::Expr;

/// Which gradient [`convolve2_gradient_nn`] returns (arrayfire-rust's names and values).
///
/// ```
/// use emberfire::ConvGradientType;
/// assert_eq!(ConvGradientType::DEFAULT as u32, 0);
/// assert_eq!(ConvGradientType::BIAS as u32, 3);
/// ```
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvGradientType {
    /// With respect to the filter: `[fw, fh, c, f]`.
    FILTER = 1,
    /// With respect to the signal: `[w, h, c, n]`.
    DATA = 2,
    /// With respect to a per-filter bias: `[1, 1, f, 1]` (ArrayFire returns the data
    /// gradient here; see [`convolve2_gradient_nn`]).
    BIAS = 3,
    /// The data gradient, as in ArrayFire.
    DEFAULT = 0,
}

/// Zeros of shape `dims` on `backend`, lazily.
fn zeros<T: HasAfEnum>(dims: Dim4, backend: BackendKind) -> Array<T> {
    Array::lazy(dims, backend, Expr::Scalar(T::wrap(vec![T::default()])))
}
