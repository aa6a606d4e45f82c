//! [`convolve2_gradient_nn`]: the backward passes of [`convolve2_nn`](super::convolve2_nn).

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, RealFloating};
use crate::ops::blas::{matmul, GemmType, MatProp};
use crate::ops::build::common_backend;
use crate::ops::movement::moddims;
use crate::ops::reduce::sum;

use super::patches::{add_columns, columns, filter_from_matrix, filter_matrix};
use super::vendor_path;
use super::ConvGradientType;
use crate::backend::ml::Geometry;

/// The gradient of a loss with respect to an input of [`convolve2_nn`](super::convolve2_nn),
/// given the loss's gradient with respect to its output (ArrayFire's
/// `convolve2GradientNN`).
///
/// `incoming_grad` and `convolved_output` are `[ow, oh, f, n]`, the shape of the forward
/// output; `original_signal` (`[w, h, c, n]`), `original_filter` (`[fw, fh, c, f]`),
/// `strides`, `padding` and `dilation` are the forward pass's. `grad_type` picks the
/// gradient:
///
/// - `FILTER`: with respect to the filter, `[fw, fh, c, f]`;
/// - `DATA` and `DEFAULT`: with respect to the signal, `[w, h, c, n]`;
/// - `BIAS`: with respect to a bias added to each filter's output, `[1, 1, f, 1]`: the sum of
///   `incoming_grad` over pixels and images. (ArrayFire returns the data gradient for
///   `BIAS`; emberfire returns the bias's own gradient, the value the name promises.)
///
/// `convolved_output` is checked for its shape only; no gradient needs its values.
///
/// ```
/// use emberfire::{convolve2_gradient_nn, convolve2_nn, dim4, Array, ConvGradientType};
/// let x = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2, 1, 1));
/// let w = Array::new(&[1.0f64, -1.0, 0.5, 2.0], dim4!(2, 2, 1, 1));
/// let (s, p, d) = (dim4!(1, 1), dim4!(0, 0), dim4!(1, 1));
/// let y = convolve2_nn(&x, &w, s, p, d); // one pixel: sum of x * flipped w
/// let dy = Array::new(&[1.0f64], dim4!(1, 1, 1, 1));
/// let grad = |t| convolve2_gradient_nn(&dy, &x, &w, &y, s, p, d, t).to_vec();
/// // d y / d w[i, j] = x[1 - i, 1 - j], and d y / d x[i, j] = w[1 - i, 1 - j]
/// assert_eq!(grad(ConvGradientType::FILTER), vec![4.0, 3.0, 2.0, 1.0]);
/// assert_eq!(grad(ConvGradientType::DATA), vec![2.0, 0.5, -1.0, 1.0]);
/// assert_eq!(grad(ConvGradientType::BIAS), vec![1.0]);
/// ```
///
/// Panics when the shapes do not fit one convolution (naming the argument), when a stride
/// or a dilation is 0, or when the arrays live on different backends.
#[allow(clippy::too_many_arguments)]
pub fn convolve2_gradient_nn<T>(
    incoming_grad: &Array<T>,
    original_signal: &Array<T>,
    original_filter: &Array<T>,
    convolved_output: &Array<T>,
    strides: Dim4,
    padding: Dim4,
    dilation: Dim4,
    grad_type: ConvGradientType,
) -> Array<T>
where
    T: HasAfEnum + RealFloating,
{
    const FUNC: &str = "convolve2_gradient_nn";
    let (x, w, dy) = (original_signal, original_filter, incoming_grad);
    let g = Geometry::new(FUNC, x.dims(), w.dims(), strides, padding, dilation);
    let out = g.out_dims();
    assert!(
        convolved_output.dims() == out,
        "{FUNC}: `convolved_output` has dims {} but the convolution of `original_signal` (dims \
         {}) with `original_filter` (dims {}) has dims {out}",
        convolved_output.dims(),
        x.dims(),
        w.dims()
    );
    assert!(
        dy.dims() == out,
        "{FUNC}: `incoming_grad` has dims {} but the convolution's output has dims {out}",
        dy.dims()
    );
    let backend = common_backend(FUNC, &[dy.node(), x.node(), w.node(), convolved_output.node()]);
    let shape = match grad_type {
        ConvGradientType::FILTER => w.dims(),
        ConvGradientType::BIAS => Dim4::new(&[1, 1, g.filter[3], 1]),
        ConvGradientType::DATA | ConvGradientType::DEFAULT => x.dims(),
    };
    if g.is_degenerate() {
        return super::zeros(shape, backend);
    }
    if grad_type == ConvGradientType::BIAS {
        let per_filter = sum(&sum(&sum(dy, 0), 1), 3);
        return per_filter.cast();
    }
    if let Some(grad) = vendor_path::gradient(FUNC, dy, x, w, &g, grad_type) {
        return grad;
    }
    let filter_grad = grad_type == ConvGradientType::FILTER;
    match T::DTYPE {
        DType::F32 => lowered::<f32>(&dy.cast(), &x.cast(), &w.cast(), &g, filter_grad).cast(),
        _ => lowered::<f64>(&dy.cast(), &x.cast(), &w.cast(), &g, filter_grad).cast(),
    }
}

/// The filter gradient (`filter_grad`) or the data gradient through the lowering to matrix
/// products: per image, the output gradient `[ow * oh, f]` times the columns (filter) or
/// the filter matrix transposed, whose columns are added back into a signal (data).
fn lowered<T: GemmType>(
    dy: &Array<T>,
    x: &Array<T>,
    w: &Array<T>,
    g: &Geometry,
    filter_grad: bool,
) -> Array<T> {
    let dy = moddims(dy, Dim4::new(&[g.out_pixels(), g.filter[3], 1, g.signal[3]]));
    if filter_grad {
        let per_image = matmul(&columns(x, g), &dy, MatProp::TRANS, MatProp::NONE);
        let m: Array<T> = if g.signal[3] == 1 { per_image } else { sum(&per_image, 3).cast() };
        filter_from_matrix(&m, g)
    } else {
        let cols = matmul(&dy, &filter_matrix(w, g), MatProp::NONE, MatProp::TRANS);
        add_columns(&cols, g)
    }
}
