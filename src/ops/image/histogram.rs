//! Histogram equalisation. (The histogram itself is [`histogram`](crate::histogram), with
//! the statistics functions.) [`hist_equal`] maps every pixel through the normalised
//! cumulative histogram with a gather (`lookup`), as ArrayFire does.

use super::calc::Val;
use crate::array::Array;
use crate::dtype::{DType, HasAfEnum, RealNumber};
use crate::ops::indexer::lookup;
use crate::ops::movement::{flat, moddims};
use crate::ops::reduce::{max_all, min_all};
use crate::ops::scan::accum;

/// Histogram equalisation: every pixel `x` becomes `cdf[x]`, where `cdf` is the cumulative
/// sum of `hist` (a histogram of the image with one bin per level, as
/// [`histogram`](crate::histogram) makes)
/// shifted to start at 0 and scaled to end at `hist.elements() - 1`. Pixel values index the
/// table after truncation to integers; values outside it are folded back as
/// [`lookup`](crate::lookup) does. The result has the input's type (integers truncated).
///
/// Accepts every real type but bool, as ArrayFire does.
///
/// ```
/// use emberfire::{dim4, hist_equal, histogram, Array};
/// let img = Array::new(&[0.0f32, 1.0, 1.0, 3.0], dim4!(2, 2));
/// let hist = histogram(&img, 4, 0.0, 4.0); // 1, 2, 0, 1
/// // cdf 1, 3, 3, 4 -> (cdf - 1) * 3 / 3
/// assert_eq!(hist_equal(&img, &hist).to_vec(), vec![0.0, 2.0, 2.0, 3.0]);
/// ```
///
/// Panics if `hist` is not a vector, or the input is bool.
pub fn hist_equal<T>(input: &Array<T>, hist: &Array<u32>) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    let t = T::get_af_dtype();
    assert!(t != DType::B8, "hist_equal: input of type bool is not supported");
    let hd = hist.dims();
    assert!(
        hd[1] == 1 && hd[2] == 1 && hd[3] == 1 && hd[0] > 0,
        "hist_equal: hist must be a non-empty vector; its dims are {hd}"
    );
    if input.elements() == 0 {
        return input.clone();
    }
    let cdf = accum(&hist.cast::<f32>(), 0);
    let (lo, _) = min_all(&cdf);
    let (hi, _) = max_all(&cdf);
    let factor = (hd[0] - 1) as f32 / (hi - lo);
    let c = Val::of(&cdf, DType::F32);
    let normalised: Array<f32> = (&(&c - lo as f64) * factor as f64).array();
    let mapped = lookup(&normalised, &flat(&input.cast::<f64>()), 0);
    moddims(&mapped.cast::<T>(), input.dims())
}
