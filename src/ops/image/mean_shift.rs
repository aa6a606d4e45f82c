//! Mean-shift filtering: every pixel climbs to the mean of the pixels near it in space and in
//! colour, and takes the colour found there.
//!
//! Each pixel carries a state (its current mean position, its current colour, whether it is
//! still moving), and every iteration visits the window's offsets one by one: the pixels at
//! `position + offset` are read with one gather of all their channels (the positions differ
//! per pixel, so no shifted view can read them; in the first iteration, where every pixel is
//! still at its own place, a shifted view does), and the sums of the window (how many pixels
//! are in range, their positions, their colours) are folded in by one fused element-wise
//! pass, which tests the range once for all of them. A pixel
//! that has stopped keeps its state through a `select`, so every pixel follows exactly the
//! path it would follow alone. Whether any pixel still moves is checked with one reduction
//! every few iterations, as the other iterative algorithms do.
//!
//! Positions and colours are truncated to integers and the sums of a window are taken in
//! the accumulator type (f64 for f64 images, f32 otherwise) in ArrayFire's order, so that the
//! result is ArrayFire's bit for bit, including the roundings of `sum * (1 / count)`.

use std::sync::Arc;

use super::calc::Val;
use super::labels::CHECK_EVERY;
use crate::array::eval_multiple;
use crate::array::Array;
use crate::backend::schedule::eval_nodes;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, RealNumber};
use crate::error_handler::OrRaise;
use crate::jit::{Node, UnOp};
use crate::ops::index::index;
use crate::ops::indexer::lookup;
use crate::ops::movement::{flat, join_many, moddims, offset_read, reorder_v2, BorderType};
use crate::ops::reduce::any_true_all;
use crate::ops::seq::Seq;

/// Mean-shift filtering of an image, with ArrayFire's definition: a smoothing that flattens
/// regions of similar colour while keeping the edges between them.
///
/// Every pixel starts at its own position `p` with its own colour `c`, and repeats, at most
/// `iter` times:
/// - over the window of radius `max(trunc(1.5 * spatial_sigma), 1)` around `p` (within the
///   image), take the pixels `v` in range of `c`: `sum over channels (c - v)² <= chromatic_sigma²`;
/// - move `p` to the mean of their positions and `c` to the mean of their colours, each
///   truncated to integers (also for floating-point images, as on both of ArrayFire's
///   backends);
/// - stop when `p` did not move, or when the move (in pixels, summed over both axes) plus the
///   squared change of colour is at most 1.
///
/// A pixel whose window holds no pixel in range stops where it is. The output pixel is the
/// final colour `c`, converted to `T`.
///
/// With `iscolor`, the input holds colour images with 3 channels along dimension 2, and the
/// colour distance sums over them; dimension 3 is a batch. Without it, each plane along
/// dimensions 2 and 3 is filtered as a gray image of its own.
///
/// The sums are taken in f64 for f64 images and in f32 otherwise, in ArrayFire's order, and
/// the means are `sum * (1 / count)` as ArrayFire computes them, so results match its CPU
/// backend exactly. (ArrayFire's CUDA backend converts the mean colour of f64 images to f32
/// and to `int` before truncating; emberfire truncates in the accumulator type as its CPU
/// backend does, which differs only for values beyond `int`'s range or f32's precision.)
/// ArrayFire refuses images of a single column or pixel; emberfire filters them like any
/// other.
///
/// ```
/// use emberfire::{dim4, mean_shift, Array};
/// // two regions with noise: each pixel takes the mean of its own region, truncated
/// let img = Array::new(&[10.0f32, 12.0, 11.0, 13.0, 90.0, 92.0, 91.0, 93.0], dim4!(1, 8));
/// let out = mean_shift(&img, 2.0, 5.0, 10, false).to_vec();
/// assert_eq!(out, vec![11.0, 11.0, 11.0, 11.0, 91.0, 91.0, 91.0, 91.0]);
/// ```
///
/// Panics if `spatial_sigma` is negative or not finite, `chromatic_sigma` is negative or
/// NaN, `iter` is 0, or `iscolor` is set and dimension 2 of `input` is not 3.
pub fn mean_shift<T>(
    input: &Array<T>,
    spatial_sigma: f32,
    chromatic_sigma: f32,
    iter: u32,
    iscolor: bool,
) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    assert!(
        spatial_sigma >= 0.0 && spatial_sigma.is_finite(),
        "mean_shift: spatial_sigma must be finite and at least 0 (got {spatial_sigma})"
    );
    assert!(
        chromatic_sigma >= 0.0,
        "mean_shift: chromatic_sigma must be at least 0 (got {chromatic_sigma})"
    );
    assert!(iter > 0, "mean_shift: iter must be at least 1");
    let dims = input.dims();
    assert!(
        !iscolor || dims[2] == 3,
        "mean_shift: iscolor needs 3 channels along dimension 2, but input has dims {dims}"
    );
    assert!(
        dims.elements() < (1 << 31),
        "mean_shift: the input has {} elements; mean_shift handles fewer than 2^31",
        dims.elements()
    );
    if dims.elements() == 0 {
        return input.clone();
    }
    // ArrayFire's radius, in f32 as it computes it; a radius beyond the image reads nothing
    // more, so each axis stops at its last position
    let radius = ((spatial_sigma * 1.5) as i64).max(1);
    let reach = [radius.min(dims[0] as i64 - 1), radius.min(dims[1] as i64 - 1)];
    // the squared sigma is an f32 product in ArrayFire, converted to the accumulator type
    let cvar = (chromatic_sigma * chromatic_sigma) as f64;
    let shape = Shape::new(dims, iscolor);
    if T::get_af_dtype() == DType::F64 {
        filter::<T, f64>(input, &shape, reach, cvar, iter)
    } else {
        filter::<T, f32>(input, &shape, reach, cvar, iter)
    }
}

/// How the input's pixels are laid out for the filter: `channels` values per pixel, and the
/// pixels' states as `h x w` images, `planes` of them along dimension 2.
struct Shape {
    dims: Dim4,
    iscolor: bool,
    channels: u64,
    state: Dim4,
}

impl Shape {
    fn new(dims: Dim4, iscolor: bool) -> Shape {
        let (channels, planes) = if iscolor { (3, dims[3]) } else { (1, dims[2] * dims[3]) };
        Shape { dims, iscolor, channels, state: Dim4::new(&[dims[0], dims[1], planes, 1]) }
    }
}

/// The filter, with sums in the accumulator type `A` (f32 or f64).
fn filter<T: HasAfEnum, A: HasAfEnum>(
    input: &Array<T>,
    shape: &Shape,
    reach: [i64; 2],
    cvar: f64,
    iter: u32,
) -> Array<T> {
    let (a, i32t) = (A::get_af_dtype(), DType::S32);
    let sdims = shape.state;
    let (h, w) = (sdims[0] as f64, sdims[1] as f64);
    let n = sdims.elements();

    // The pixels in the accumulator type, one row per pixel and one column per channel (a
    // colour image's channels are moved behind its batch dimension first): one gather of
    // rows reads every channel of the pixels it names.
    let pixels: Array<A> =
        if shape.iscolor { reorder_v2(input, 0, 1, Some(vec![3, 2])).cast() } else { input.cast() };
    pixels.eval();
    let pixels = moddims(&pixels, Dim4::new(&[n, shape.channels, 1, 1]));
    let column = |m: &Array<A>, c: u64| -> Array<A> {
        let c = c as f64;
        moddims(&index(m, &[Seq::default(), Seq::new(c, c, 1.0)]), sdims)
    };

    let like = Val::of(&pixels, a);
    let plane_base = &like.index(sdims, 2, i32t) * (h * w);
    let mut row: Array<i32> = like.index(sdims, 0, i32t).array();
    let mut col: Array<i32> = like.index(sdims, 1, i32t).array();
    let mut colour: Vec<Array<A>> = (0..shape.channels).map(|c| column(&pixels, c)).collect();
    // None while every pixel still moves (the first iteration)
    let mut moving: Option<Array<bool>> = None;
    eval_multiple(vec![&row, &col]);

    for it in 1..=iter {
        let (p_row, p_col) = (Val::of(&row, i32t), Val::of(&col, i32t));
        let own = &(&p_row + &(&p_col * h)) + &plane_base;
        let centre: Vec<Val> = colour.iter().map(|c| Val::of(c, a)).collect();
        let mut count = p_row.k(0.0);
        let (mut sum_row, mut sum_col) = (count.clone(), count.clone());
        let mut sums: Vec<Val> = centre.iter().map(|c| c.k(0.0)).collect();

        // ArrayFire's order: columns of the window outside, rows inside (the colour sums
        // are rounded in this order)
        for dj in -reach[1]..=reach[1] {
            let t_col = &p_col + dj as f64;
            let col_ok = t_col.ge(&t_col.k(0.0)).and(&t_col.lt(&t_col.k(w)));
            for di in -reach[0]..=reach[0] {
                let t_row = &p_row + di as f64;
                let ok = col_ok.and(&t_row.ge(&t_row.k(0.0))).and(&t_row.lt(&t_row.k(h)));
                let read: Vec<Val> = if it == 1 {
                    // every pixel is still at its own position: the window is a shifted view
                    colour
                        .iter()
                        .map(|c| {
                            let o = [di, dj, 0, 0];
                            Val::of(&offset_read(c, sdims, o, BorderType::CLAMP_TO_EDGE), a)
                        })
                        .collect()
                } else {
                    let at = &(&t_row + &(&t_col * h)) + &plane_base;
                    let at: Array<i32> = Val::select(&ok, &at, &own).array();
                    let got = lookup(&pixels, &flat(&at), 0);
                    (0..shape.channels).map(|c| Val::of(&column(&got, c), a)).collect()
                };
                let mut dist: Option<Val> = None;
                for (c, v) in centre.iter().zip(&read) {
                    let d = c - v;
                    let d2 = &d * &d;
                    dist = Some(match dist {
                        Some(s) => s + d2,
                        None => d2,
                    });
                }
                let dist = dist.expect("at least one channel");
                let hit = ok.and(&dist.k(cvar).ge(&dist));
                let add = |acc: &Val, x: &Val| Val::select(&hit, &(acc + x), acc);
                count = add(&count, &p_row.k(1.0));
                sum_row = add(&sum_row, &t_row);
                sum_col = add(&sum_col, &t_col);
                for (s, v) in sums.iter_mut().zip(&read) {
                    *s = add(s, v);
                }
                // one pass per offset for all the sums, which share the test of range
                let nodes: Vec<Arc<Node>> = [&count, &sum_row, &sum_col]
                    .into_iter()
                    .chain(&sums)
                    .map(|v| v.0.clone())
                    .collect();
                eval_nodes(&nodes).or_raise("mean_shift");
            }
        }

        // the means, as ArrayFire takes them: each sum times 1 / count, truncated
        let n_in = count;
        let found = n_in.ge(&n_in.k(1.0));
        let n_in = n_in.cast(a);
        let inv = &n_in.k(1.0) / &n_in;
        let new_row = (&sum_row.cast(a) * &inv).cast(i32t);
        let new_col = (&sum_col.cast(a) * &inv).cast(i32t);
        let mean: Vec<Val> = sums.iter().map(|s| (s * &inv).unary(UnOp::Trunc)).collect();
        let mut shift = None;
        for (m, c) in mean.iter().zip(&centre) {
            let d = m - c;
            let d2 = &d * &d;
            shift = Some(match shift {
                Some(s) => s + d2,
                None => d2,
            });
        }
        let shift = shift.expect("at least one channel");
        // (the steps are small integers, exact in either type)
        let d_row = (&new_row - &p_row).cast(a).unary(UnOp::Abs);
        let d_col = (&new_col - &p_col).cast(a).unary(UnOp::Abs);
        let moved = &d_row + &d_col;
        let still = new_row.eq(&p_row).and(&new_col.eq(&p_col));
        let close = shift.k(1.0).ge(&(&moved + &shift));
        let stop = still.or(&close);
        let update = match &moving {
            Some(m) => found.and(&Val::of(m, DType::B8)),
            None => found,
        };
        row = Val::select(&update, &new_row, &p_row).array();
        col = Val::select(&update, &new_col, &p_col).array();
        colour =
            mean.iter().zip(&centre).map(|(m, c)| Val::select(&update, m, c).array()).collect();
        let still_moving: Array<bool> = update.and(&stop.unary(UnOp::Not)).array();
        eval_multiple(vec![&row, &col]);
        eval_multiple(colour.iter().collect());
        still_moving.eval();
        moving = Some(still_moving);
        if it % CHECK_EVERY as u32 == 0 && !any_true_all(moving.as_ref().expect("set above")).0 {
            break;
        }
    }

    let out: Vec<Array<T>> = colour.iter().map(|c| c.cast::<T>()).collect();
    if shape.iscolor {
        let d = shape.dims;
        let one = Dim4::new(&[d[0], d[1], 1, d[3]]);
        let planes: Vec<Array<T>> = out.iter().map(|c| moddims(c, one)).collect();
        join_many(2, planes.iter().collect())
    } else {
        moddims(&out[0], shape.dims)
    }
}
