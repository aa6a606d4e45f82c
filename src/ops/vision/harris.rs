//! Harris corners: the structure tensor of the image gradient, averaged over a window, and
//! its response `det - k tr^2`, kept at strict local maxima.

use super::common::{check_image, gather, interior, local_max};
use super::features::Features;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealFloating};
use crate::ops::arith::{and, ge};
use crate::ops::build::with_backend_of;
use crate::ops::data::selectr;
use crate::ops::image::gradient;
use crate::ops::index::index;
use crate::ops::indexer::lookup;
use crate::ops::seq::Seq;
use crate::ops::signal::{convolve2_sep, ConvMode};
use crate::ops::sort::sort_index;

/// The window weights: a normalised Gaussian of `len` taps and deviation `sigma`, or a box
/// when `sigma < 0.5`.
pub(super) fn window(len: u32, sigma: f32) -> Array<f32> {
    let n = len as usize;
    let w: Vec<f64> = if sigma < 0.5 {
        vec![1.0 / n as f64; n]
    } else {
        let c = (n as f64 - 1.0) / 2.0;
        let raw: Vec<f64> = (0..n)
            .map(|i| {
                let d = i as f64 - c;
                (-d * d / (2.0 * sigma as f64 * sigma as f64)).exp()
            })
            .collect();
        let total: f64 = raw.iter().sum();
        raw.iter().map(|v| v / total).collect()
    };
    let w: Vec<f32> = w.iter().map(|&v| v as f32).collect();
    Array::new(&w, Dim4::new(&[n as u64, 1, 1, 1]))
}

/// The Harris response of every pixel of `img`, with a window of `len` taps: 0 within
/// `len / 2 + 1` of the border.
pub(super) fn harris_response(img: &Array<f32>, len: u32, sigma: f32, k_thr: f32) -> Array<f32> {
    let (iy, ix) = gradient(img);
    let w = window(len, sigma);
    let smooth = |a: Array<f32>| {
        let s = convolve2_sep(&w, &w, &a, ConvMode::DEFAULT);
        s.eval();
        s
    };
    let ixx = smooth(&ix * &ix);
    let ixy = smooth(&ix * &iy);
    let iyy = smooth(&iy * &iy);
    let tr = &ixx + &iyy;
    let det = &ixx * &iyy - &ixy * &ixy;
    let resp = det - (&tr * &tr) * k_thr;
    let inside = interior(img.dims(), u64::from(len / 2 + 1));
    let out = selectr(&resp, &inside, 0.0);
    out.eval();
    out
}

/// Harris corners of a 2D image.
///
/// The gradient `(Iy, Ix)` of the image (see [`gradient`](crate::gradient)) gives at each
/// pixel the products `Ix^2`, `Ix Iy`, `Iy^2`, averaged over a window (zero outside the
/// image): a square box of `block_size` pixels when `sigma < 0.5`, otherwise a Gaussian of
/// deviation `sigma` and `block_size` taps, or `floor(6 sigma)` taps made odd when
/// `block_size` is 0. The response is `det - k_thr * tr^2` of that 2 x 2 matrix, computed
/// `len / 2 + 1` pixels or more from the border. A corner is a response larger than its
/// eight neighbours, at least `len / 2 + 2` from the border, and at least `min_response`
/// (at least 0 when `max_corners > 0`). At most a fifth of the pixels are kept, in
/// column-major order; with `max_corners > 0` only the `max_corners` strongest remain, by
/// decreasing response. Orientation is 0, size 1 (as in ArrayFire).
///
/// f32 and f64 (computed in f32).
///
/// ```
/// use emberfire::{dim4, harris, Array};
/// // a bright square on a dark 32 x 32 image: its four corners are the strongest responses
/// let mut px = vec![0.0f32; 1024];
/// for c in 10..22 { for r in 10..22 { px[r + 32 * c] = 1.0; } }
/// let img = Array::new(&px, dim4!(32, 32));
/// let f = harris(&img, 4, 0.0, 1.0, 0, 0.04);
/// assert_eq!(f.num_features(), 4);
/// for (x, y) in f.xpos().to_vec().into_iter().zip(f.ypos().to_vec()) {
///     let near = |v: f32| (v - 9.5).abs() <= 1.5 || (v - 21.5).abs() <= 1.5;
///     assert!(near(x) && near(y), "({x}, {y})");
/// }
/// ```
///
/// Panics if `input` is not one 2D image or too small for the window, if `max_corners` is
/// 0 and `min_response` not positive, if `k_thr < 0.01`, if `block_size` is 1 or 2, or
/// larger than 32, or if it is 0 and `sigma` lies outside `[0.5, 5]`.
pub fn harris<T>(
    input: &Array<T>,
    max_corners: u32,
    min_response: f32,
    sigma: f32,
    block_size: u32,
    k_thr: f32,
) -> Features
where
    T: HasAfEnum + RealFloating,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(input, || {
        let dims = input.dims();
        check_image("harris", dims);
        assert!(
            max_corners > 0 || min_response > 0.0,
            "harris: `min_response` must be positive when `max_corners` is 0 (got {min_response})"
        );
        assert!(k_thr >= 0.01, "harris: `k_thr` must be at least 0.01 (got {k_thr})");
        assert!(
            block_size > 2 || (block_size == 0 && (0.5..=5.0).contains(&sigma)),
            "harris: `block_size` must be 3 to 32, or 0 with `sigma` in [0.5, 5] (got block_size \
         {block_size}, sigma {sigma})"
        );
        assert!(block_size <= 32, "harris: `block_size` must be at most 32 (got {block_size})");
        let len = if block_size == 0 {
            let l = (6.0 * sigma).floor() as u32;
            if l.is_multiple_of(2) {
                l - 1
            } else {
                l
            }
        } else {
            block_size
        };
        let edge = u64::from(len / 2);
        assert!(
            dims[0] > 2 * edge && dims[1] > 2 * edge,
            "harris: `input` of dims {dims} is too small for a window of {len} pixels"
        );
        let border = u64::from(len / 2 + 2);
        if dims[0] <= 2 * border || dims[1] <= 2 * border {
            return Features::empty();
        }
        let img: Array<f32> = input.cast();
        let resp = harris_response(&img, len, sigma, k_thr);
        let min_r = if max_corners > 0 { 0.0 } else { min_response };
        let peak = and(
            &and(&local_max(&resp), &ge(&resp, &min_r, false), false),
            &interior(dims, border),
            false,
        );
        let limit = (dims.elements() as f64 * 0.2) as usize;
        let (x, y, s) = gather(&peak, &resp, false, limit);
        let n = x.elements();
        if n == 0 {
            return Features::empty();
        }
        if max_corners > 0 && n > max_corners as usize {
            let (sorted, idx) = sort_index(&s, 0, false);
            let first = [Seq::new(0.0, f64::from(max_corners) - 1.0, 1.0)];
            let idx = index(&idx, &first);
            let s = index(&sorted, &first);
            return Features::from_columns(lookup(&x, &idx, 0), lookup(&y, &idx, 0), s, None, None);
        }
        Features::from_columns(x, y, s, None, None)
    })
}
