//! The bilateral filter: a Gaussian blur whose weights also fall with the difference in
//! value from the centre pixel, so that edges stay sharp.
//!
//! Each window offset is a clamped shifted read of the image; the weights and the two sums
//! (weights, and weighted values) are element-wise expressions of those reads, fused into
//! passes as large as a kernel's parameters allow.

use super::calc::Val;
use crate::array::Array;
use crate::dtype::{HasAfEnum, ImageFilterType};
use crate::jit::UnOp;
use crate::ops::movement::{offset_read, BorderType};

/// The bilateral filter of each image (channels and batches along dimensions 2 and 3 are
/// filtered independently), with ArrayFire's definition: `spatial_sigma` is clamped to
/// `[0, 11.5]`, the window reaches `max(trunc(1.5 * spatial_sigma), 1)` pixels each way,
/// the image is clamped at its edges, and each output pixel is
/// `sum(w * v) / sum(w)` over the window, `w = exp(-(di² + dj²) / (2 s²) - (c - v)² / (2 r²))`
/// for a pixel `v` at offset `(di, dj)` from the centre `c` (`s`, `r` the two sigmas).
/// `iscolor` is accepted and ignored, as in ArrayFire.
///
/// The result is f32 (f64 for f64 input), computed in that type. A sigma of 0 divides by
/// zero, as in ArrayFire.
///
/// ```
/// use emberfire::{bilateral, dim4, Array};
/// // a step edge: a large chromatic sigma blurs it, a small one keeps it
/// let img = Array::new(&[0.0f32, 0.0, 0.0, 10.0, 10.0, 10.0], dim4!(6));
/// let kept = bilateral(&img, 1.0, 0.1, false).to_vec();
/// assert!((kept[2] - 0.0).abs() < 1e-3 && (kept[3] - 10.0).abs() < 1e-3);
/// let blurred = bilateral(&img, 1.0, 100.0, false).to_vec();
/// assert!(blurred[2] > 1.0 && blurred[3] < 9.0);
/// ```
pub fn bilateral<T>(
    input: &Array<T>,
    spatial_sigma: f32,
    chromatic_sigma: f32,
    iscolor: bool,
) -> Array<T::AbsOutType>
where
    T: HasAfEnum + ImageFilterType,
    T::AbsOutType: HasAfEnum,
{
    let _ = iscolor;
    let dims = input.dims();
    let x: Array<T::AbsOutType> = input.cast();
    if dims.elements() == 0 {
        return x;
    }
    let t = T::AbsOutType::get_af_dtype();
    let space = spatial_sigma.clamp(0.0, 11.5);
    let color = chromatic_sigma.max(0.0);
    let radius = ((space * 1.5) as i64).max(1);
    let svar = (space * space) as f64;
    let cvar = (color * color) as f64;
    let centre = Val::of(&x, t);
    let mut norm: Option<Val> = None;
    let mut sum: Option<Val> = None;
    for wj in -radius..=radius {
        for wi in -radius..=radius {
            let v = Val::of(&offset_read(&x, dims, [wi, wj, 0, 0], BorderType::CLAMP_TO_EDGE), t);
            let gauss_space = (wi * wi + wj * wj) as f64 / (-2.0 * svar);
            let d = &centre - &v;
            let gauss_range = &(&d * &d) / (-2.0 * cvar);
            let w = (&gauss_range + gauss_space).unary(UnOp::Exp);
            let vw = &v * &w;
            norm = Some(match norm {
                Some(n) => n + w,
                None => w,
            });
            sum = Some(match sum {
                Some(s) => s + vw,
                None => vw,
            });
        }
    }
    match (sum, norm) {
        (Some(s), Some(n)) => (s / n).array(),
        _ => x,
    }
}
