//! [`convolve2_nn`]: the forward pass of a 2-D convolution layer.

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, RealFloating};
use crate::ops::blas::{matmul, GemmType, MatProp};
use crate::ops::build::common_backend;
use crate::ops::movement::moddims;

use super::patches::{columns, filter_matrix};
use super::vendor_path;
use crate::backend::ml::Geometry;

/// Convolves a batch of multi-channel signals with a bank of filters, as a convolution layer
/// of a neural network does (ArrayFire's `convolve2NN`).
///
/// - `signal` is `[w, h, c, n]`: `n` images of `c` channels, `w` along dimension 0.
/// - `filter` is `[fw, fh, c, f]`: `f` filters over the same `c` channels.
/// - The result is `[ow, oh, f, n]`, with `ow = 1 + (w + 2 px - ((fw - 1) dx + 1)) / sx`
///   (integer division) and likewise `oh`.
/// - `strides`, `padding` and `dilation` give `(sx, sy)`, `(px, py)` and `(dx, dy)` in
///   their first two values (dimensions 0 and 1); the others are not read. The signal is
///   padded with zeros.
///
/// Output pixel `(a, b)` of filter `k` and image `m` is
/// `sum over i, j, ch of signal[a sx - px + i dx, b sy - py + j dy, ch, m] *
/// filter[fw - 1 - i, fh - 1 - j, ch, k]`: a true convolution (the filter is flipped), as in
/// ArrayFire. A cross-correlation, as PyTorch's `conv2d` computes, is this function applied
/// to the filter flipped along dimensions 0 and 1.
///
/// ```
/// use emberfire::{convolve2_nn, dim4, Array};
/// // one 3 x 3 image of one channel, two 2 x 2 filters
/// let img = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], dim4!(3, 3, 1, 1));
/// let ones = [1.0f32; 4];
/// let corner = [0.0f32, 0.0, 0.0, 1.0]; // flipped, it picks the window's first pixel
/// let filters = Array::new(&[ones, corner].concat(), dim4!(2, 2, 1, 2));
/// let out = convolve2_nn(&img, &filters, dim4!(1, 1), dim4!(0, 0), dim4!(1, 1));
/// assert_eq!(out.dims(), dim4!(2, 2, 2, 1));
/// assert_eq!(out.to_vec(), vec![12.0, 16.0, 24.0, 28.0, 1.0, 2.0, 4.0, 5.0]);
/// ```
///
/// On CUDA the convolution runs on cuDNN where it is installed (see the module
/// documentation); elsewhere it is lowered to one batched matrix product.
///
/// Panics when the channels differ, a stride or a dilation is 0, the padded signal is
/// smaller than the dilated filter, or the arrays live on different backends.
pub fn convolve2_nn<T>(
    signal: &Array<T>,
    filter: &Array<T>,
    strides: Dim4,
    padding: Dim4,
    dilation: Dim4,
) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    const FUNC: &str = "convolve2_nn";
    let g = Geometry::new(FUNC, signal.dims(), filter.dims(), strides, padding, dilation);
    let backend = common_backend(FUNC, &[signal.node(), filter.node()]);
    if g.is_degenerate() {
        return super::zeros(g.out_dims(), backend);
    }
    if let Some(out) = vendor_path::forward(FUNC, signal, filter, &g) {
        return out;
    }
    match T::DTYPE {
        DType::F32 => lowered::<f32>(&signal.cast(), &filter.cast(), &g).cast(),
        _ => lowered::<f64>(&signal.cast(), &filter.cast(), &g).cast(),
    }
}

/// The convolution as a product of each image's columns with the filter matrix.
fn lowered<T: GemmType>(signal: &Array<T>, filter: &Array<T>, g: &Geometry) -> Array<T> {
    let cols = columns(signal, g);
    let out = matmul(&cols, &filter_matrix(filter, g), MatProp::NONE, MatProp::NONE);
    moddims(&out, g.out_dims())
}
