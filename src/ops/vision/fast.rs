//! FAST corners (features from accelerated segment test).
//!
//! Each pixel's 16 circle pixels are compared with it in one fused pass that packs the
//! "much brighter" and "much darker" tests into two 16-bit masks; an arc of `arc_len`
//! consecutive set bits (around the circle, so the mask is doubled to 32 bits) is found
//! with `arc_len - 1` shifts and ands of the mask. No per-pixel loop and no kernel of
//! its own: the same code runs on every backend.

use super::common::{check_image, features_of, interior, local_max, shifted};
use super::features::Features;
use crate::array::Array;
use crate::dtype::{HasAfEnum, ImageFilterType};
use crate::ops::arith::{and, gt, lt, maxof, or};
use crate::ops::build::with_backend_of;
use crate::ops::data::selectr;

/// The circle of radius 3 as `(row, column)` offsets, clockwise from the top, in
/// ArrayFire's order.
pub(super) const CIRCLE: [(i64, i64); 16] = [
    (-3, 0),
    (-3, 1),
    (-2, 2),
    (-1, 3),
    (0, 3),
    (1, 3),
    (2, 2),
    (3, 1),
    (3, 0),
    (3, -1),
    (2, -2),
    (1, -3),
    (0, -3),
    (-1, -3),
    (-2, -2),
    (-3, -1),
];

/// FAST's corner test and score for every pixel of `img` (f32): the corner mask (ignoring
/// borders) and the score `max(sum over brighter pixels of (|c - p| - thr), same over
/// darker ones)`.
pub(super) fn fast_response(img: &Array<f32>, thr: f32, arc_len: u32) -> (Array<bool>, Array<f32>) {
    let mut bright_bits: Option<Array<u32>> = None;
    let mut dark_bits: Option<Array<u32>> = None;
    let mut s_bright: Option<Array<f32>> = None;
    let mut s_dark: Option<Array<f32>> = None;
    for (i, &(dy, dx)) in CIRCLE.iter().enumerate() {
        let c = shifted(img, dy, dx);
        let d = &c - img;
        let bright = gt(&d, &thr, false);
        let dark = lt(&d, &(-thr), false);
        let bit = 1u32 << i;
        let bb = bright.cast::<u32>() * bit;
        let db = dark.cast::<u32>() * bit;
        let sb = bright.cast::<f32>() * (&d - thr);
        let sd = dark.cast::<f32>() * (-&d - thr);
        bright_bits = Some(match bright_bits {
            Some(a) => a | bb,
            None => bb,
        });
        dark_bits = Some(match dark_bits {
            Some(a) => a | db,
            None => db,
        });
        s_bright = Some(match s_bright {
            Some(a) => a + sb,
            None => sb,
        });
        s_dark = Some(match s_dark {
            Some(a) => a + sd,
            None => sd,
        });
        if i == 7 {
            for a in [&bright_bits, &dark_bits] {
                a.as_ref().expect("set").eval();
            }
            for a in [&s_bright, &s_dark] {
                a.as_ref().expect("set").eval();
            }
        }
    }
    let arc = |bits: Array<u32>| {
        bits.eval();
        let doubled = &bits | (&bits << 16u32);
        let mut run = doubled.clone();
        for k in 1..arc_len {
            run &= &doubled >> k;
        }
        gt(&(run & 0xFFFFu32), &0u32, false)
    };
    let bright = arc(bright_bits.expect("16 pixels"));
    let dark = arc(dark_bits.expect("16 pixels"));
    let corner = or(&bright, &dark, false);
    let score = maxof(&s_bright.expect("16 pixels"), &s_dark.expect("16 pixels"), false);
    (corner, score)
}

/// FAST corners of a 2D image.
///
/// A pixel `p` is a corner when, on the circle of 16 pixels of radius 3 around it, there is
/// an arc of `arc_len` consecutive pixels each brighter than `p + thr` or each darker than
/// `p - thr`. Its score is the larger of the sums of `|c - p| - thr` over the brighter and
/// over the darker circle pixels `c`. Pixels closer than `edge` (at least 3, the circle's
/// radius) to the border are not tested. With `non_max`, a corner is kept only if its score
/// is larger than those of its eight neighbours (non-corners score 0) and it lies at least
/// `edge + 2` pixels from the border. At most `feat_ratio` times the number of pixels are
/// returned, the first ones in row-major order (the order of the features, as in
/// ArrayFire's CPU backend; the limit does not look at scores). Orientation is 0, size 1.
///
/// Any [`ImageFilterType`]; the tests are computed in f32.
///
/// ```
/// use emberfire::{dim4, fast, Array};
/// // a bright 8 x 8 square on a dark 20 x 20 image: its four corners are FAST corners
/// let mut px = vec![0.0f32; 400];
/// for c in 6..14 { for r in 6..14 { px[r + 20 * c] = 1.0; } }
/// let img = Array::new(&px, dim4!(20, 20));
/// let f = fast(&img, 0.5, 9, true, 0.05, 3);
/// assert_eq!(f.num_features(), 4);
/// let (x, y) = (f.xpos().to_vec(), f.ypos().to_vec());
/// assert_eq!((x[0], y[0]), (6.0, 6.0));
/// ```
///
/// Panics if `input` is not one 2D image, `thr` is not positive, `arc_len` is outside
/// `9..=16` or `feat_ratio` outside `(0, 1]`.
pub fn fast<T>(
    input: &Array<T>,
    thr: f32,
    arc_len: u32,
    non_max: bool,
    feat_ratio: f32,
    edge: u32,
) -> Features
where
    T: HasAfEnum + ImageFilterType,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(input, || {
        let dims = input.dims();
        check_image("fast", dims);
        assert!(thr > 0.0, "fast: `thr` must be positive (got {thr})");
        assert!((9..=16).contains(&arc_len), "fast: `arc_len` must be 9 to 16 (got {arc_len})");
        assert!(
            feat_ratio > 0.0 && feat_ratio <= 1.0,
            "fast: `feat_ratio` must be in (0, 1] (got {feat_ratio})"
        );
        let edge = u64::from(edge.max(3));
        if dims[0] <= 2 * edge || dims[1] <= 2 * edge {
            return Features::empty();
        }
        let limit = (feat_ratio as f64 * dims.elements() as f64) as usize;
        let img: Array<f32> = input.cast();
        img.eval();
        let (corner, score) = fast_response(&img, thr, arc_len);
        let corner = and(&corner, &interior(dims, edge), false);
        if !non_max {
            return features_of(&corner, &score, true, limit);
        }
        let kept = selectr(&score, &corner, 0.0);
        kept.eval();
        let peak = and(&and(&corner, &local_max(&kept), false), &interior(dims, edge + 2), false);
        features_of(&peak, &kept, true, limit)
    })
}
