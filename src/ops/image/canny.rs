//! Canny edge detection ([`canny`]), in ArrayFire's stages: a 5 x 5 separable smoothing,
//! Sobel derivatives, the gradient magnitude, non-maximum suppression along the gradient,
//! two thresholds, and hysteresis.
//!
//! The smoothing, the magnitude and the suppression are fused element-wise passes of shifted
//! reads; the thresholds read back the extremes of the suppressed magnitude (as ArrayFire
//! does), and Otsu's threshold is one vectorised expression over the histogram; hysteresis
//! keeps the connected components of the candidate pixels that hold a strong one, found by
//! the iterated minimum of the `labels` module.

use super::calc::{float_type, Val};
use super::filter::sobel;
use super::histogram::histogram;
use super::labels::component_min;
use super::CannyThresholdType;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, EdgeComputable, HasAfEnum};
use crate::jit::UnOp;
use crate::ops::index::index;
use crate::ops::movement::{offset_read, BorderType};
use crate::ops::reduce::{imax, max_all, min_all, sum};
use crate::ops::scan::accum;
use crate::ops::seq::Seq;

/// ArrayFire's smoothing taps: their outer product (the signs cancel) is a 5 x 5 Gaussian of
/// weights summing to 1.
const SMOOTH: [f64; 5] = [-0.11021, -0.23691, -0.30576, -0.23691, -0.11021];

/// `x` convolved with [`SMOOTH`] along dimension `k`, zeros outside the image.
fn smooth_along(x: &Array<f64>, k: usize, t: DType) -> Val {
    let dims = x.dims();
    let mut acc: Option<Val> = None;
    for (i, &w) in SMOOTH.iter().enumerate() {
        let mut o = [0i64; 4];
        o[k] = i as i64 - 2;
        let term = Val::of(&offset_read(x, dims, o, BorderType::ZERO), t) * w;
        acc = Some(match acc {
            Some(a) => a + term,
            None => term,
        });
    }
    acc.expect("five taps")
}

/// Whether each pixel lies at least one pixel inside the image along dimensions 0 and 1.
fn interior(like: &Val, dims: Dim4) -> Val {
    let t = DType::S32;
    let i = like.index(dims, 0, t);
    let j = like.index(dims, 1, t);
    let inside = |c: &Val, n: u64| c.ge(&c.k(1.0)).and(&c.lt(&c.k(n as f64 - 1.0)));
    inside(&i, dims[0]).and(&inside(&j, dims[1]))
}

/// The values a quadrant of gradient directions interpolates between: the neighbours along
/// the dominant axis on either side (`a1`, `a2`), the diagonal ones (`b1`, `b2`), and the
/// weight of the diagonal.
type Quadrant = (Val, Val, Val, Val, Val);

/// Non-maximum suppression: the magnitude where it exceeds both values interpolated along
/// the gradient direction (between the neighbour along the dominant axis and the diagonal
/// one), 0 elsewhere and on the image's border. `dx` is the derivative along dimension 0.
fn suppress(mag: &Array<f64>, dx: &Val, dy: &Val, t: DType) -> Val {
    let dims = mag.dims();
    let at = |a: i64, b: i64| {
        Val::of(&offset_read(mag, dims, [a, b, 0, 0], BorderType::CLAMP_TO_EDGE), t)
    };
    // named as ArrayFire names them: "east" is one row down (dimension 0), "south" one column
    // right (dimension 1)
    let (ea, we, so, no) = (at(1, 0), at(-1, 0), at(0, 1), at(0, -1));
    let (se, nw, ne, sw) = (at(1, 1), at(-1, -1), at(1, -1), at(-1, 1));
    let curr = Val::of(mag, t);
    let zero = curr.k(0.0);
    let sel = |c: &Val, a: &Val, b: &Val| Val::select(c, a, b);
    let dx_pos = dx.ge(&zero);
    let dy_pos = dy.ge(&zero);
    let ndx = &zero - dx;
    let ndy = &zero - dy;
    // the four quadrants of the gradient, each split by which component dominates
    let g_pp = (dx - dy).ge(&zero);
    let g_pn = (dx + dy).ge(&zero);
    let g_np = (dx + dy).ge(&zero);
    let g_nn = (&ndx + dy).ge(&zero);
    let q_pp = (
        sel(&g_pp, &ea, &so),
        sel(&g_pp, &we, &no),
        se.clone(),
        nw.clone(),
        sel(&g_pp, &(dy / dx), &(dx / dy)),
    );
    let q_pn = (
        sel(&g_pn, &ea, &no),
        sel(&g_pn, &we, &so),
        ne.clone(),
        sw.clone(),
        sel(&g_pn, &(&ndy / dx), &(dx / &ndy)),
    );
    let q_np = (
        sel(&g_np, &so, &we),
        sel(&g_np, &no, &ea),
        sw,
        ne,
        sel(&g_np, &(&ndx / dy), &(dy / &ndx)),
    );
    let q_nn =
        (sel(&g_nn, &we, &no), sel(&g_nn, &ea, &so), nw, se, sel(&g_nn, &(dy / dx), &(dx / dy)));
    let pick = |f: &dyn Fn(&Quadrant) -> Val| {
        sel(&dx_pos, &sel(&dy_pos, &f(&q_pp), &f(&q_pn)), &sel(&dy_pos, &f(&q_np), &f(&q_nn)))
    };
    let a1 = pick(&|q| q.0.clone());
    let a2 = pick(&|q| q.1.clone());
    let b1 = pick(&|q| q.2.clone());
    let b2 = pick(&|q| q.3.clone());
    let alpha = pick(&|q| q.4.clone());
    let one_minus = &curr.k(1.0) - &alpha;
    let mag1 = &(&one_minus * &a1) + &(&alpha * &b1);
    let mag2 = &(&one_minus * &a2) + &(&alpha * &b2);
    let keep = mag1.lt(&curr).and(&mag2.lt(&curr)).and(&interior(&curr, dims));
    sel(&keep, &curr, &zero)
}

/// Otsu's threshold of each image of `sup` (one per slice along dimensions 2 and 3), over a
/// histogram of `bins` bins on `[0, max]`: the bin index that maximises the between-class
/// variance, as ArrayFire returns it (an index, not a value). An image with no split point
/// (all of its pixels in one bin) gets an infinite threshold.
fn otsu(sup: &Array<f64>, bins: u32, max: f64) -> Val {
    let dims = sup.dims();
    let hist = histogram(sup, bins, 0.0, max);
    let t = DType::F64;
    let h = Val::of(&hist, t);
    let hd = hist.dims();
    let freq: Array<f64> = (h / (dims[0] * dims[1]) as f64).array();
    let f = Val::of(&freq, t);
    let weighted: Array<f64> = (&f * &f.index(hd, 0, t)).array();
    let cum = accum(&freq, 0);
    let cum_w = accum(&weighted, 0);
    let total_w = Val::of(&sum(&weighted, 0), t);
    // the split after bin b, for b in 0..bins - 1
    let first = |a: &Array<f64>| {
        let s = Seq::new(0.0, bins as f64 - 2.0, 1.0);
        Val::of(&index(a, &[s, Seq::default(), Seq::default(), Seq::default()]), t)
    };
    let (q_low, w_low) = (first(&cum), first(&cum_w));
    let q_high = &q_low.k(1.0) - &q_low;
    let mu_low = &w_low / &q_low;
    let mu_high = &(&total_w - &w_low) / &q_high;
    let diff = &mu_low - &mu_high;
    let sigma = &(&diff * &diff) * &(&q_low * &q_high);
    // an empty class divides 0 by 0: such a split never wins
    let sigma: Array<f64> = Val::select(&sigma.unary(UnOp::IsNan), &sigma.k(-1.0), &sigma).array();
    let (best, at) = imax(&sigma, 0);
    let best = Val::of(&best, t);
    Val::select(&best.lt(&best.k(0.0)), &best.k(f64::INFINITY), &Val::of(&at, t))
}

/// Canny edge detection of each image (dimensions 2 and 3 are batches), with ArrayFire's
/// stages and rules:
/// 1. the image is smoothed by a 5 x 5 Gaussian (separable, zeros outside the image);
/// 2. [`sobel`] derivatives `dx` (dimension 0) and `dy` (dimension 1) of the smoothed image
///    give the magnitude `|dx| + |dy|` when `is_fast`, `sqrt(dx² + dy²)` otherwise;
/// 3. non-maximum suppression keeps a pixel's magnitude where it is larger than both values
///    interpolated linearly along the gradient direction on either side; the pixels of the
///    image's border are suppressed;
/// 4. thresholds: with `CannyThresholdType::MANUAL` the suppressed magnitude is normalised
///    to `[0, 1]` by its minimum and maximum (over the whole batch), pixels at or above
///    `high` are strong, and those at or above `low` (and below `high`) are weak; with
///    `OTSU`, `high` is ignored and the high threshold is Otsu's threshold of each image's
///    suppressed magnitude (a histogram of `trunc(max)` bins on `[0, max]`, the threshold
///    being the best bin's index, as ArrayFire computes it), the low one `low` times that;
/// 5. hysteresis: the edges are the strong pixels and the weak pixels joined to a strong
///    one through weak pixels (8-connected).
///
/// Where ArrayFire leaves a case undefined, emberfire's rules are: `OTSU` on a magnitude
/// whose maximum is below 2 (fewer than two histogram bins) finds no edge; an image whose
/// candidates all fall in one histogram bin has no strong pixel; a constant magnitude under
/// `MANUAL` (maximum equal to minimum) finds no edge; a pixel of the border is never an edge
/// (ArrayFire's CPU backend may trace into it). The computation is in f64 for f64 images and
/// in f32 otherwise (ArrayFire uses f32 throughout); Otsu's statistics are in f64.
///
/// Accepts f64, f32, i32, u32, i16, u16 and u8. The result is bool, true on edges.
///
/// ```
/// use emberfire::{canny, dim4, Array, CannyThresholdType};
/// // a bright square in the middle of a 12 x 12 image
/// let mut px = vec![0.0f32; 144];
/// for j in 4..8 {
///     for i in 4..8 {
///         px[i + 12 * j] = 255.0;
///     }
/// }
/// let img = Array::new(&px, dim4!(12, 12));
/// let edges = canny(&img, CannyThresholdType::MANUAL, 0.2, 0.4, 3, false).to_vec();
/// assert!(edges.iter().any(|&e| e)); // the square's outline
/// assert!(!edges[0] && !edges[5 + 12 * 5]); // not the corner, not the square's inside
/// ```
///
/// Panics if an image is smaller than 5 x 5 (ArrayFire's limit: the smoothing is 5 x 5), or
/// `sobel_window` is not 3.
pub fn canny<T>(
    input: &Array<T>,
    threshold_type: CannyThresholdType,
    low: f32,
    high: f32,
    sobel_window: u32,
    is_fast: bool,
) -> Array<bool>
where
    T: HasAfEnum + EdgeComputable,
{
    let dims = input.dims();
    assert!(
        dims[0] >= 5 && dims[1] >= 5,
        "canny: input images must be at least 5 x 5 (ArrayFire's limit); its dims are {dims}"
    );
    assert!(sobel_window == 3, "canny: sobel_window must be 3 (got {sobel_window})");
    let t = float_type(T::get_af_dtype());
    // f64 storage between passes keeps one code path; values are rounded to `t` in each pass
    let x: Array<f64> = Val::of(input, t).array();
    let down: Array<f64> = smooth_along(&x, 0, t).array();
    down.eval();
    let smooth: Array<f64> = smooth_along(&down, 1, t).cast(t).array();
    let (dx, dy) = if t == DType::F64 {
        sobel(&smooth, 3)
    } else {
        let s32: Array<f32> = smooth.cast();
        let (a, b) = sobel(&s32, 3);
        (a.cast(), b.cast())
    };
    dx.eval();
    dy.eval();
    let (gx, gy) = (Val::of(&dx, t), Val::of(&dy, t));
    let mag = if is_fast {
        gx.unary(UnOp::Abs) + gy.unary(UnOp::Abs)
    } else {
        (&(&gx * &gx) + &(&gy * &gy)).unary(UnOp::Sqrt)
    };
    let mag: Array<f64> = mag.cast(t).array();
    mag.eval();
    let sup: Array<f64> = suppress(&mag, &gx, &gy, t).cast(t).array();
    sup.eval();
    let s = Val::of(&sup, t);
    let (max, _) = max_all(&sup);
    let (strong, weak) = match threshold_type {
        CannyThresholdType::MANUAL => {
            let (min, _) = min_all(&sup);
            let norm = &(&s - min) / (max - min);
            let (lo, hi) = (norm.k(low as f64), norm.k(high as f64));
            (norm.ge(&hi), norm.ge(&lo).and(&norm.lt(&hi)))
        }
        CannyThresholdType::OTSU => {
            let bins = max as u32;
            if bins < 2 {
                return Val::of(&sup, DType::B8).and(&s.k(0.0).cast(DType::B8)).array();
            }
            let hi = otsu(&sup, bins, max);
            let lo = &hi * low as f64;
            (s.ge(&hi), s.ge(&lo).and(&s.lt(&hi)))
        }
    };
    let inside = interior(&s, dims);
    let strong: Array<bool> = strong.and(&inside).array();
    let candidates: Array<bool> = strong_or(&strong, &weak.and(&inside));
    let comps = component_min("canny", &candidates, Some(&strong), true);
    let c = Val::of(&comps, DType::S32);
    let n = dims.elements() as f64;
    Val::of(&candidates, DType::B8).and(&c.lt(&c.k(n))).array()
}

fn strong_or(strong: &Array<bool>, weak: &Val) -> Array<bool> {
    Val::of(strong, DType::B8).or(weak).array()
}
