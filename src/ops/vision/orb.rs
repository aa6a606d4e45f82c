//! ORB features (oriented FAST and rotated BRIEF).
//!
//! Every step is a whole-array operation: FAST and Harris responses per pyramid level,
//! then, for the kept features only, gathers ([`lookup`]) of the pixels of each feature's
//! disc (its orientation, by intensity centroid) and of each feature's 512 rotated test
//! points (its descriptor), compared and packed into words by a weighted sum.
//!
//! The test pattern is emberfire's own: 256 pairs of points drawn once from an isotropic
//! Gaussian of deviation `31 / 5` (the distribution the BRIEF paper found best), clipped to
//! the 27 x 27 square around the feature and generated from a fixed seed, so descriptors
//! are reproducible but differ from those of ArrayFire or OpenCV, which use a learned table.

use super::common::check_image;
use super::fast::fast;
use super::features::Features;
use super::harris::harris_response;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealFloating};
use crate::ops::arith::{atan2, cos, lt, round, sin};
use crate::ops::build::with_backend_of;
use crate::ops::data::constant;
use crate::ops::image::{gaussian_kernel, resize};
use crate::ops::index::index;
use crate::ops::indexer::lookup;
use crate::ops::movement::{flat, join_many, moddims};
use crate::ops::reduce::sum;
use crate::ops::seq::Seq;
use crate::ops::signal::{convolve2, ConvDomain, ConvMode, InterpType};
use crate::ops::sort::sort_index;

/// The side of the patch a descriptor samples at scale 1.
const PATCH: f32 = 31.0;
/// The radius of the disc whose intensity centroid gives the orientation.
const CENTROID_RADIUS: i64 = 15;
/// The distance from the border a feature needs so that its rotated patch fits.
const MARGIN: u32 = 22;

/// The 256 test pairs `(x1, y1, x2, y2)`.
fn pattern() -> Vec<[f32; 4]> {
    let mut state: u64 = 0x0BB5_EED5;
    let mut uniform = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut gauss = || {
        // Box-Muller
        let (u, v) = (uniform().max(1e-12), uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let sigma = f64::from(PATCH) / 5.0;
    (0..256)
        .map(|_| {
            let mut p = [0.0f32; 4];
            for c in p.iter_mut() {
                *c = (gauss() * sigma).round().clamp(-13.0, 13.0) as f32;
            }
            p
        })
        .collect()
}

/// A column of f32 values.
fn column(v: &[f32]) -> Array<f32> {
    Array::new(v, Dim4::new(&[v.len() as u64, 1, 1, 1]))
}

/// The pixels of `img` at rows `y` and columns `x` (each `n x k`, integral f32, inside).
fn pixels(img: &Array<f32>, y: &Array<f32>, x: &Array<f32>) -> Array<f32> {
    let rows = img.dims()[0] as f32;
    let lin = (y + &(x * rows)).cast::<u32>();
    let d = lin.dims();
    moddims(&lookup(&flat(img), &flat(&lin), 0), d)
}

/// One level's features: x, y, score and orientation columns, and the descriptors
/// (`8 x n`).
type Level = (Array<f32>, Array<f32>, Array<f32>, Array<f32>, Array<u32>);

/// The features of one pyramid level and their descriptors (`8 x n`), positions in
/// level-0 pixels.
fn level_features(
    img: &Array<f32>,
    smooth: &Array<f32>,
    fast_thr: f32,
    quota: usize,
    scale: f32,
) -> Option<Level> {
    let dims = img.dims();
    if quota == 0 || dims[0] <= 2 * u64::from(MARGIN) + 4 || dims[1] <= 2 * u64::from(MARGIN) + 4 {
        return None;
    }
    let f = fast(img, fast_thr, 9, true, 1.0, MARGIN);
    let n = f.num_features() as usize;
    if n == 0 {
        return None;
    }
    let (x, y) = (f.xpos(), f.ypos());
    // Harris responses at the corners, strongest first
    let resp = harris_response(img, 7, 0.0, 0.04);
    let score = pixels(&resp, &y, &x);
    let (score, order) = sort_index(&score, 0, false);
    let keep = quota.min(n);
    let first = [Seq::new(0.0, keep as f64 - 1.0, 1.0)];
    let order = index(&order, &first);
    let score = index(&score, &first);
    let x = moddims(&lookup(&x, &order, 0), Dim4::new(&[1, keep as u64, 1, 1]));
    let y = moddims(&lookup(&y, &order, 0), Dim4::new(&[1, keep as u64, 1, 1]));

    // orientation: the intensity centroid of the disc
    let r = CENTROID_RADIUS;
    let (mut dys, mut dxs) = (Vec::new(), Vec::new());
    for dx in -r..=r {
        for dy in -r..=r {
            if dx * dx + dy * dy <= r * r {
                dys.push(dy as f32);
                dxs.push(dx as f32);
            }
        }
    }
    let (dy, dx) = (column(&dys), column(&dxs));
    let yy = crate::ops::arith::add(&y, &dy, true);
    let xx = crate::ops::arith::add(&x, &dx, true);
    let disc = pixels(img, &yy, &xx);
    let m01 = sum(&crate::ops::arith::mul(&disc, &dy, true), 0);
    let m10 = sum(&crate::ops::arith::mul(&disc, &dx, true), 0);
    let angle = atan2(&m01, &m10, false);
    let (c, s) = (cos(&angle), sin(&angle));

    // descriptor: 256 comparisons of rotated point pairs in the smoothed image
    let pat = pattern();
    let point = |i: usize, j: usize| {
        let (px, py) = (
            column(&pat.iter().map(|p| p[i]).collect::<Vec<_>>()),
            column(&pat.iter().map(|p| p[j]).collect::<Vec<_>>()),
        );
        let rx = crate::ops::arith::sub(
            &crate::ops::arith::mul(&px, &c, true),
            &crate::ops::arith::mul(&py, &s, true),
            true,
        );
        let ry = crate::ops::arith::add(
            &crate::ops::arith::mul(&px, &s, true),
            &crate::ops::arith::mul(&py, &c, true),
            true,
        );
        let xs = crate::ops::arith::add(&x, &round(&rx), true);
        let ys = crate::ops::arith::add(&y, &round(&ry), true);
        pixels(smooth, &ys, &xs)
    };
    let bits = lt(&point(0, 1), &point(2, 3), false).cast::<u32>();
    let bits = moddims(&bits, Dim4::new(&[32, 8, keep as u64, 1]));
    let weights: Vec<u32> = (0..32).map(|j| 1u32 << j).collect();
    let weights = Array::new(&weights, Dim4::new(&[32, 1, 1, 1]));
    let words = sum(&crate::ops::arith::mul(&bits, &weights, true), 0);
    let desc = moddims(&words, Dim4::new(&[8, keep as u64, 1, 1]));

    let col = |a: &Array<f32>| moddims(a, Dim4::new(&[keep as u64, 1, 1, 1]));
    Some((col(&round(&(&x * scale))), col(&round(&(&y * scale))), col(&score), col(&angle), desc))
}

/// ORB features of a 2D image and their binary descriptors.
///
/// The image is downsampled `levels` times, by `scl_fctr` each time (bilinear). On each
/// level, FAST corners (arc of 9, threshold `fast_thr`, non-maximal suppression) at least
/// 22 pixels from the border are ranked by their Harris response (7 x 7 box window,
/// `k = 0.04`); a level keeps its share of `max_feat` (shares shrink by `scl_fctr^2` per
/// level, as in ArrayFire). A feature's orientation is the angle of its intensity centroid
/// over a disc of radius 15, and its descriptor compares 256 pairs of points of a 31 x 31
/// patch, rotated by the orientation, in the level smoothed by a Gaussian of deviation 2
/// when `blur_img` is set. Positions are in pixels of the input, sizes are `31` times the
/// level's scale, scores are Harris responses; levels follow each other, each by
/// decreasing score.
///
/// Descriptors are eight 32-bit words per feature, `8 x n` (one column per feature), for
/// [`hamming_matcher`](crate::hamming_matcher) with `dist_dim` 0. arrayfire-rust types them
/// as the image's element type although ArrayFire fills them with u32 words; emberfire
/// returns the `Array<u32>` they are. The pattern of point pairs is emberfire's own (see
/// the module notes), so descriptors are comparable with each other, not with ArrayFire's.
///
/// ```
/// use emberfire::{dim4, orb, Array};
/// // a few bright squares of different sizes on a dark background
/// let (h, w) = (96usize, 96usize);
/// let mut px = vec![0.0f32; h * w];
/// for &(r0, c0, s) in &[(30usize, 30usize, 12usize), (50, 60, 8), (60, 28, 10)] {
///     for c in c0..c0 + s { for r in r0..r0 + s { px[r + h * c] = 1.0; } }
/// }
/// let img = Array::new(&px, dim4!(96, 96));
/// let (feat, desc) = orb(&img, 0.2, 100, 1.5, 2, true);
/// let n = feat.num_features() as u64;
/// assert!(n > 0);
/// assert_eq!(desc.dims(), dim4!(8, n));
/// ```
///
/// Panics if `input` is not one 2D image, `fast_thr` is not positive, `max_feat` or
/// `levels` is 0, or `scl_fctr` is not above 1.
pub fn orb<T>(
    input: &Array<T>,
    fast_thr: f32,
    max_feat: u32,
    scl_fctr: f32,
    levels: u32,
    blur_img: bool,
) -> (Features, Array<u32>)
where
    T: HasAfEnum + RealFloating,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(input, || {
        const FUNC: &str = "orb";
        let dims = input.dims();
        check_image(FUNC, dims);
        assert!(fast_thr > 0.0, "{FUNC}: `fast_thr` must be positive (got {fast_thr})");
        assert!(max_feat > 0, "{FUNC}: `max_feat` must be positive");
        assert!(levels > 0, "{FUNC}: `levels` must be positive");
        assert!(scl_fctr > 1.0, "{FUNC}: `scl_fctr` must be above 1 (got {scl_fctr})");
        let img: Array<f32> = input.cast();
        img.eval();
        // each level's share of max_feat, in proportion to its area
        let ratio = 1.0 / f64::from(scl_fctr).powi(2);
        let total: f64 = (0..levels).map(|l| ratio.powi(l as i32)).sum();
        let blur = gaussian_kernel(9, 9, 2.0, 2.0);
        let mut parts = Vec::new();
        let mut remaining = max_feat as usize;
        for l in 0..levels {
            let scale = scl_fctr.powi(l as i32);
            let share = (f64::from(max_feat) * ratio.powi(l as i32) / total).ceil() as usize;
            let quota = share.min(remaining);
            let level = if l == 0 {
                img.clone()
            } else {
                let (r, c) = (
                    (dims[0] as f32 / scale).round() as i64,
                    (dims[1] as f32 / scale).round() as i64,
                );
                if r < 1 || c < 1 {
                    break;
                }
                let lv = resize(&img, r, c, InterpType::BILINEAR);
                lv.eval();
                lv
            };
            let smooth = if blur_img {
                let s = convolve2(&level, &blur, ConvMode::DEFAULT, ConvDomain::SPATIAL);
                s.eval();
                s
            } else {
                level.clone()
            };
            if let Some(p) = level_features(&level, &smooth, fast_thr, quota, scale) {
                remaining -= p.0.elements();
                parts.push((p, scale));
            }
        }
        if parts.is_empty() {
            return (Features::empty(), Array::new_empty(Dim4::new(&[8, 0, 1, 1])));
        }
        let join = |f: &dyn Fn(&Level) -> Array<f32>| {
            let cols: Vec<Array<f32>> = parts.iter().map(|(p, _)| f(p)).collect();
            join_many(0, cols.iter().collect())
        };
        let x = join(&|p| p.0.clone());
        let y = join(&|p| p.1.clone());
        let score = join(&|p| p.2.clone());
        let orientation = join(&|p| p.3.clone());
        let sizes: Vec<Array<f32>> = parts
            .iter()
            .map(|(p, scale)| constant(PATCH * scale, Dim4::new(&[p.0.elements() as u64, 1, 1, 1])))
            .collect();
        let size = join_many(0, sizes.iter().collect());
        let descs: Vec<Array<u32>> = parts.iter().map(|(p, _)| p.4.clone()).collect();
        let desc = join_many(1, descs.iter().collect());
        (Features::from_columns(x, y, score, Some(orientation), Some(size)), desc)
    })
}
