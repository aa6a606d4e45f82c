//! Histograms and histogram equalisation. [`histogram`] counts on the array's device (a
//! kernel of the image family: each block counts into its own bins, then adds them to the
//! result); [`hist_equal`] maps every pixel through the normalised cumulative histogram with
//! a gather (`lookup`), as ArrayFire does.

use super::calc::Val;
use crate::array::Array;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, RealNumber};
use crate::error_handler::OrRaise;
use crate::ops::build::cast_node;
use crate::ops::indexer::lookup;
use crate::ops::movement::{flat, moddims};
use crate::ops::reduce::{max_all, min_all};
use crate::ops::scan::accum;

/// Counts the values in `nbins` equal bins over `[minval, maxval]`, one histogram per 2-D
/// slice: the result has dims `(nbins, 1, dims[2], dims[3])`. Value `v` counts in bin
/// `floor((v - minval) * nbins / (maxval - minval))`, computed in f32 (f64 for f64 and 64-bit
/// integer input) on both backends; values below `minval` count in the first bin, values at or
/// above `maxval` in the last; NaN is not counted.
///
/// ```
/// use emberfire::{dim4, histogram, Array};
/// let a = Array::new(&[0.0f32, 0.1, 0.6, 0.9, 1.0], dim4!(5));
/// assert_eq!(histogram(&a, 2, 0.0, 1.0).to_vec(), vec![2, 3]);
/// let img = Array::new(&[7u8, 7, 0, 255], dim4!(2, 2));
/// let h = histogram(&img, 256, 0.0, 255.0).to_vec(); // one bin per level
/// assert_eq!((h[0], h[7], h[255]), (1, 2, 1));
/// ```
///
/// Panics if `nbins` is 0 or the range is empty or not finite.
pub fn histogram<T>(input: &Array<T>, nbins: u32, minval: f64, maxval: f64) -> Array<u32>
where
    T: HasAfEnum + RealNumber,
{
    const FUNC: &str = "histogram";
    let dims = input.dims();
    if nbins == 0 || !minval.is_finite() || !maxval.is_finite() || minval >= maxval {
        panic!(
            "{FUNC}: nbins is {nbins} and the range is [{minval}, {maxval}]; nbins must be \
             positive and minval below maxval, both finite (input dims {dims})"
        );
    }
    // bool and f16 are counted as u8 and f32 (the kernels have no bins for them)
    let node = match T::get_af_dtype() {
        DType::B8 => cast_node(input.node(), DType::U8),
        DType::F16 | DType::BF16 => cast_node(input.node(), DType::F32),
        _ => input.node().clone(),
    };
    let slices = dims[2] * dims[3];
    let scale = f64::from(nbins) / (maxval - minval);
    let run = || -> crate::error::Result<Dense> {
        let d = Dense::of(&node)?;
        d.backend.ops().histogram(&d, slices, nbins, minval, scale)
    };
    let counts = run().or_raise(FUNC);
    let out = Array::<u32>::from_node(counts.into_node());
    crate::ops::movement::moddims(&out, Dim4::new(&[u64::from(nbins), 1, dims[2], dims[3]]))
}

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
