//! SUSAN corners (smallest univalue segment assimilating nucleus): a sum over a disc of
//! shifted reads, one fused pass per few disc pixels.

use super::common::{check_image, features_of, interior, local_max, shifted};
use super::features::Features;
use crate::array::Array;
use crate::dtype::{HasAfEnum, ImageFilterType};
use crate::ops::arith::{and, exp, lt};
use crate::ops::build::with_backend_of;
use crate::ops::data::selectr;

/// The SUSAN response of every pixel of `img` (f32), computed `border` or more pixels
/// from the edge (0 nearer).
pub(super) fn susan_response(
    img: &Array<f32>,
    radius: u32,
    t: f32,
    g: f32,
    border: u64,
) -> Array<f32> {
    let r = i64::from(radius);
    let mut n: Option<Array<f32>> = None;
    let mut terms = 0;
    for dx in -r..=r {
        for dy in -r..=r {
            if dx * dx + dy * dy >= r * r {
                continue;
            }
            let d = (shifted(img, dy, dx) - img) / t;
            let d2 = &d * &d;
            let c = exp(&-(&d2 * &d2 * &d2));
            n = Some(match n {
                Some(a) => a + c,
                None => c,
            });
            terms += 1;
            if terms % 8 == 0 {
                n.as_ref().expect("set").eval();
            }
        }
    }
    let n = n.expect("a disc of radius 1 or more has pixels");
    let resp = selectr(&(-&n + g), &lt(&n, &g, false), 0.0);
    let out = selectr(&resp, &interior(img.dims(), border), 0.0);
    out.eval();
    out
}

/// SUSAN corners of a 2D image.
///
/// For each pixel (the nucleus `m0`), `n` sums `exp(-((m - m0) / diff_thr)^6)` over the
/// pixels `m` of the disc `i^2 + j^2 < radius^2` around it; the response is `geom_thr - n`
/// where `n < geom_thr`, else 0, computed `edge` or more pixels from the border. A corner
/// is a response larger than its eight neighbours, at least `edge + 1` from the border. At
/// most `feature_ratio` times the number of pixels are kept, the first in column-major
/// order (the features' order). Orientation is 0, size 1.
///
/// Any [`ImageFilterType`], computed in f32.
///
/// ```
/// use emberfire::{dim4, susan, Array};
/// // a bright square: SUSAN responds most at its four corners
/// let mut px = vec![0.0f32; 400];
/// for c in 6..14 { for r in 6..14 { px[r + 20 * c] = 1.0; } }
/// let img = Array::new(&px, dim4!(20, 20));
/// let f = susan(&img, 3, 0.5, 10.0, 0.05, 3);
/// assert_eq!(f.num_features(), 4);
/// ```
///
/// Panics if `input` is not one 2D image, `radius` is outside `1..=10` or larger than
/// `edge`, `diff_thr` or `geom_thr` is not positive, or `feature_ratio` lies outside
/// `(0, 1]`.
pub fn susan<T>(
    input: &Array<T>,
    radius: u32,
    diff_thr: f32,
    geom_thr: f32,
    feature_ratio: f32,
    edge: u32,
) -> Features
where
    T: HasAfEnum + ImageFilterType,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(input, || {
        let dims = input.dims();
        check_image("susan", dims);
        assert!((1..=10).contains(&radius), "susan: `radius` must be 1 to 10 (got {radius})");
        assert!(edge >= radius, "susan: `edge` ({edge}) must be at least `radius` ({radius})");
        assert!(diff_thr > 0.0, "susan: `diff_thr` must be positive (got {diff_thr})");
        assert!(geom_thr > 0.0, "susan: `geom_thr` must be positive (got {geom_thr})");
        assert!(
            feature_ratio > 0.0 && feature_ratio <= 1.0,
            "susan: `feature_ratio` must be in (0, 1] (got {feature_ratio})"
        );
        let edge = u64::from(edge);
        if dims[0] <= 2 * (edge + 1) || dims[1] <= 2 * (edge + 1) {
            return Features::empty();
        }
        let limit = (feature_ratio as f64 * dims.elements() as f64) as usize;
        let img: Array<f32> = input.cast();
        img.eval();
        let resp = susan_response(&img, radius, diff_thr, geom_thr, edge);
        let peak = and(&local_max(&resp), &interior(dims, edge + 1), false);
        features_of(&peak, &resp, false, limit)
    })
}
