//! Confidence connected components ([`confidence_cc`]): region growing from seeds, where a
//! pixel joins when its value lies in a confidence interval of the region's statistics.
//!
//! The statistics are reductions (the seeds' neighbourhoods through a summed-area table,
//! then the segmented pixels); each growing is the connected components (8-connected) of the
//! pixels inside the interval that hold a seed, from the iterated minimum of the `labels`
//! module. The seeds are read to the host, as a small table.

use super::calc::Val;
use super::labels::component_min;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{ConfidenceCCInput, DType};
use crate::ops::assign::assign_gen;
use crate::ops::build::with_backend_of;
use crate::ops::data::constant;
use crate::ops::indexer::{lookup, Indexer};
use crate::ops::movement::{flat, moddims, pad, BorderType};
use crate::ops::reduce::{count_all, max_all, min_all, sum_all};
use crate::ops::scan::accum;

/// Below this variance the statistics stop changing the segmentation (ArrayFire's bound).
const EPSILON: f64 = 1.0e-6;

/// The sample variance of `n` values of sum `s1` and sum of squares `s2` (0 for one value).
fn variance(s2: f64, s1: f64, n: f64) -> f64 {
    if n > 1.0 {
        (s2 - s1 * s1 / n) / (n - 1.0)
    } else {
        0.0
    }
}

/// Linear indices into an array of shape `dims`, as a vector on the device.
fn indices(v: &[i32]) -> Array<i32> {
    Array::new(v, Dim4::new(&[v.len() as u64, 1, 1, 1]))
}

/// The sum of `x` over each seed's window (clipped to the image), through the summed-area
/// table grown by a row and a column of zeros in front.
fn window_sum(x: &Array<f64>, windows: &[[u64; 4]]) -> f64 {
    let dims = x.dims();
    let table = accum(&accum(x, 0), 1);
    let table = pad(&table, Dim4::new(&[1, 1, 0, 0]), Dim4::new(&[0, 0, 0, 0]), BorderType::ZERO);
    let h = dims[0] + 1;
    let at = |y: u64, c: u64| (y + h * c) as i32;
    let mut plus = Vec::new();
    let mut minus = Vec::new();
    for &[y0, y1, c0, c1] in windows {
        plus.extend([at(y1 + 1, c1 + 1), at(y0, c0)]);
        minus.extend([at(y0, c1 + 1), at(y1 + 1, c0)]);
    }
    let flat_table = flat(&table);
    let add = sum_all(&lookup(&flat_table, &indices(&plus), 0)).0;
    let sub = sum_all(&lookup(&flat_table, &indices(&minus), 0)).0;
    add - sub
}

/// Segments an image by confidence connected components: the region grows from the seeds
/// (pixel `(seedx[i], seedy[i])`: `seedx` indexes dimension 0 and `seedy` dimension 1, as in
/// ArrayFire) over 8-connected pixels whose value lies in `[mean - multiplier * stddev,
/// mean + multiplier * stddev]`, widened if needed to hold every seed's value. The statistics
/// are first those of the `(2 * radius + 1)²` neighbourhoods of the seeds (taken together),
/// then, for up to `iterations` more rounds, those of the segmented region; a round stops the
/// process early when the variance falls below 1e-6. Pixels are compared after the image is
/// mapped linearly to `[1, 2]` (a constant image maps to 2), as ArrayFire does. The result is
/// `segmented_val` on the region and 0 elsewhere, converted to the input's type as
/// [`cast`](crate::Array::cast) converts.
///
/// Rules where ArrayFire leaves a case undefined: seeds outside the image are ignored (with
/// none inside, the result is all 0); a neighbourhood that crosses the image's border counts
/// only its pixels inside; the statistics are computed in f64 (ArrayFire uses f32).
///
/// Accepts f32, u32, u16 and u8; one image (dimensions 2 and 3 of size 1).
///
/// ```
/// use emberfire::{confidence_cc, dim4, Array};
/// // a bright 3 x 3 block in a dark 7 x 7 image, slightly noisy
/// let mut px = vec![10u8; 49];
/// for j in 2..5 {
///     for i in 2..5 {
///         px[i + 7 * j] = 200 + (i + j) as u8;
///     }
/// }
/// let img = Array::new(&px, dim4!(7, 7));
/// let (sx, sy) = (Array::new(&[3u32], dim4!(1)), Array::new(&[3u32], dim4!(1)));
/// let seg = confidence_cc(&img, &sx, &sy, 1, 2, 3, 255.0).to_vec();
/// assert_eq!(seg.iter().filter(|&&v| v == 255).count(), 9);
/// assert_eq!(seg[0], 0);
/// ```
///
/// Panics if the input is not one 2D image, or `seedx` and `seedy` are not vectors of the
/// same length.
pub fn confidence_cc<InOutType>(
    input: &Array<InOutType>,
    seedx: &Array<u32>,
    seedy: &Array<u32>,
    radius: u32,
    multiplier: u32,
    iterations: u32,
    segmented_val: f64,
) -> Array<InOutType>
where
    InOutType: ConfidenceCCInput,
{
    // seed indices and masks are made here: on the image's backend
    with_backend_of(input, || {
        let func = "confidence_cc";
        let dims = input.dims();
        assert!(
            dims[2] == 1 && dims[3] == 1,
            "{func}: input must be one 2D image (dims 2 and 3 of size 1); its dims are {dims}"
        );
        let (xd, yd) = (seedx.dims(), seedy.dims());
        let is_vector = |d: Dim4| d.get().iter().filter(|&&n| n != 1).count() <= 1;
        assert!(
        is_vector(xd) && is_vector(yd) && xd.elements() == yd.elements(),
        "{func}: seedx and seedy must be vectors of the same length; their dims are {xd} and {yd}"
    );
        let ot = InOutType::get_af_dtype();
        let t = DType::F64;
        if dims.elements() == 0 {
            return input.clone();
        }
        let seeds: Vec<(u64, u64)> = seedx
            .to_vec()
            .into_iter()
            .zip(seedy.to_vec())
            .map(|(x, y)| (x as u64, y as u64))
            .filter(|&(x, y)| x < dims[0] && y < dims[1])
            .collect();
        if seeds.is_empty() {
            let like = Val::of(input, ot);
            return (&like.index(dims, 0, ot) * 0.0).array();
        }
        // the image mapped to [1, 2]
        let raw: Array<f64> = input.cast();
        let (lo, _) = min_all(&raw);
        let (hi, _) = max_all(&raw);
        let range = hi - lo;
        let x = Val::of(&raw, t);
        let scaled: Array<f64> = if range.abs() < EPSILON {
            (&(&x * 0.0) + 2.0).array()
        } else {
            (&(&(&x - lo) / range) + 1.0).array()
        };
        scaled.eval();
        let v = Val::of(&scaled, t);

        // the seeds' neighbourhoods
        let r = radius as u64;
        let windows: Vec<[u64; 4]> = seeds
            .iter()
            .map(|&(sx, sy)| {
                [
                    sx.saturating_sub(r),
                    (sx + r).min(dims[0] - 1),
                    sy.saturating_sub(r),
                    (sy + r).min(dims[1] - 1),
                ]
            })
            .collect();
        let count: u64 = windows.iter().map(|w| (w[1] - w[0] + 1) * (w[3] - w[2] + 1)).sum();
        let squares: Array<f64> = (&v * &v).array();
        let s1 = window_sum(&scaled, &windows);
        let s2 = window_sum(&squares, &windows);
        let n = count as f64;
        let mean = s1 / n;
        let var = variance(s2, s1, n);
        let lin: Vec<i32> = seeds.iter().map(|&(sx, sy)| (sx + dims[0] * sy) as i32).collect();
        let seed_values = lookup(&flat(&scaled), &indices(&lin), 0);
        let (seed_max, _) = max_all(&seed_values);
        let (seed_min, _) = min_all(&seed_values);
        let mut seed_mask = constant(0u8, Dim4::new(&[dims.elements(), 1, 1, 1]));
        let mut at = Indexer::default();
        let lin_arr = indices(&lin);
        at.set_index(&lin_arr, 0, None);
        assign_gen(&mut seed_mask, &at, &constant(1u8, Dim4::new(&[lin.len() as u64, 1, 1, 1])));
        let seed_mask: Array<bool> = moddims(&seed_mask, dims).cast();
        seed_mask.eval();

        let mult = multiplier as f64;
        let grow = |mean: f64, var: f64| -> Array<bool> {
            let sd = var.sqrt();
            let lower = (mean - mult * sd).min(seed_min);
            let upper = (mean + mult * sd).max(seed_max);
            let inside = v.ge(&v.k(lower)).and(&v.k(upper).ge(&v));
            let valid: Array<bool> = inside.or(&Val::of(&seed_mask, DType::B8)).array();
            let comps = component_min(func, &valid, Some(&seed_mask), true);
            let c = Val::of(&comps, DType::S32);
            Val::of(&valid, DType::B8).and(&c.lt(&c.k(dims.elements() as f64))).array()
        };

        let mut segmented = grow(mean, var);
        if var.abs() >= EPSILON {
            for _ in 0..iterations {
                let (count, _) = count_all(&segmented);
                if count == 0 {
                    break;
                }
                let m = Val::of(&segmented, DType::B8);
                let kept: Array<f64> = Val::select(&m, &v, &v.k(0.0)).array();
                let kept_sq: Array<f64> = Val::select(&m, &(&v * &v), &v.k(0.0)).array();
                let (s1, _) = sum_all(&kept);
                let (s2, _) = sum_all(&kept_sq);
                let n = count as f64;
                let var = variance(s2, s1, n);
                segmented = grow(s1 / n, var);
                if var.abs() < EPSILON {
                    break;
                }
            }
        }
        let on = Val::of(&segmented, DType::B8);
        let value = Val::of(&scaled, t).k(segmented_val);
        Val::select(&on, &value, &value.k(0.0)).cast(ot).array()
    })
}
