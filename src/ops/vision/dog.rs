//! The difference of two Gaussian blurs.

use crate::array::Array;
use crate::dtype::{HasAfEnum, ImageFilterType};
use crate::ops::build::with_backend_of;
use crate::ops::image::calc::Val;
use crate::ops::image::gaussian_kernel;
use crate::ops::signal::{convolve2, ConvDomain, ConvMode};

/// The difference of Gaussians: `input` blurred with a `(2 radius1 + 1)`-square Gaussian
/// minus `input` blurred with a `(2 radius2 + 1)`-square one, each from
/// [`gaussian_kernel`](crate::gaussian_kernel) with its default deviation (a quarter of the
/// size) and zero outside the image, as ArrayFire computes it. The result has the input's
/// shape (dimensions 2 and 3 are batches) and is f32 (f64 for f64 input).
///
/// ```
/// use emberfire::{dim4, dog, Array};
/// let img = Array::new(&[1.0f32; 49], dim4!(7, 7));
/// let d = dog(&img, 1, 2).to_vec();
/// // inside, both blurs of a constant image are the constant: the difference vanishes
/// assert!(d[24].abs() < 1e-6);
/// ```
///
/// Panics if a radius is less than 1 or `radius1` is not smaller than `radius2`.
pub fn dog<T>(input: &Array<T>, radius1: i32, radius2: i32) -> Array<T::AbsOutType>
where
    T: HasAfEnum + ImageFilterType,
    T::AbsOutType: HasAfEnum,
{
    // the Gaussian kernels combine with `input`: made on its backend
    with_backend_of(input, || {
        assert!(radius1 >= 1, "dog: `radius1` must be at least 1 (got {radius1})");
        assert!(
            radius2 > radius1,
            "dog: `radius2` ({radius2}) must be larger than `radius1` ({radius1})"
        );
        let x: Array<T::AbsOutType> = input.cast();
        if x.elements() == 0 {
            return x;
        }
        let t = T::AbsOutType::get_af_dtype();
        let blur = |r: i32| {
            let k = gaussian_kernel(2 * r + 1, 2 * r + 1, 0.0, 0.0);
            Val::of(&convolve2(&x, &k, ConvMode::DEFAULT, ConvDomain::SPATIAL), t)
        };
        (blur(radius1) - blur(radius2)).array()
    })
}
