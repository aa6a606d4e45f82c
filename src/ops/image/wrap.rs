//! Patches: [`unwrap`] lays every `wx x wy` window of an image out as a column (or a row),
//! and [`wrap`] adds such columns back into an image.
//!
//! Window element `(i, j)` of every patch lies on a strided grid of the zero-padded image, so
//! `unwrap` is `wx * wy` strided views (no arithmetic) joined into one array, and `wrap` adds
//! each row of its input into that grid of the output in turn: overlapping windows add up,
//! as in ArrayFire.

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::ops::assign::assign_seq;
use crate::ops::build::with_backend_of;
use crate::ops::data::constant;
use crate::ops::index::{index, row};
use crate::ops::movement::{join_many, moddims, pad, transpose, BorderType};
use crate::ops::seq::Seq;

/// The number of windows along a dimension of `n` elements padded by `p` on each side.
fn windows(n: i64, w: i64, s: i64, p: i64) -> i64 {
    (n + 2 * p - w) / s + 1
}

/// The grid of window element `e` of `count` windows `stride` apart.
fn grid(e: i64, count: i64, stride: i64) -> Seq<f64> {
    Seq::new(e as f64, (e + stride * (count - 1)) as f64, stride as f64)
}

/// Every `wx x wy` window of each image (`wx` along dimension 0), `sx` and `sy` apart, of
/// the image padded with `px` and `py` zeros on each side: window element `(i, j)` of the
/// window at grid position `(a, b)` is pixel `(a sx + i - px, b sy + j - py)`. With
/// `is_column` each window is a column of `wx * wy` elements (element `i + wx j`) and the
/// windows go along dimension 1, `a` fastest; otherwise the transpose. Dimensions 2 and 3 are
/// batches. Any element type.
///
/// ```
/// use emberfire::{dim4, unwrap, Array};
/// let img = Array::new(&(10..35).collect::<Vec<i32>>(), dim4!(5, 5));
/// let cols = unwrap(&img, 3, 3, 1, 1, 0, 0, true);
/// assert_eq!(cols.dims(), dim4!(9, 9));
/// // the first window: rows 0-2 of columns 0-2
/// assert_eq!(cols.to_vec()[..9].to_vec(), vec![10, 11, 12, 15, 16, 17, 20, 21, 22]);
/// ```
///
/// Panics, as ArrayFire refuses them, unless `0 < wx <= rows + 2 px`, `0 < wy <= cols + 2 py`,
/// `sx, sy > 0`, `0 <= px < wx` and `0 <= py < wy`.
#[allow(clippy::too_many_arguments)]
pub fn unwrap<T: HasAfEnum>(
    input: &Array<T>,
    wx: i64,
    wy: i64,
    sx: i64,
    sy: i64,
    px: i64,
    py: i64,
    is_column: bool,
) -> Array<T> {
    let d = input.dims();
    let (n0, n1) = (d[0] as i64, d[1] as i64);
    assert!(
        wx > 0 && wx <= n0 + 2 * px,
        "unwrap: wx {wx} must be in 1..={} (dims {d})",
        n0 + 2 * px
    );
    assert!(
        wy > 0 && wy <= n1 + 2 * py,
        "unwrap: wy {wy} must be in 1..={} (dims {d})",
        n1 + 2 * py
    );
    assert!(sx > 0, "unwrap: sx must be positive (got {sx})");
    assert!(sy > 0, "unwrap: sy must be positive (got {sy})");
    assert!((0..wx).contains(&px), "unwrap: px must be in 0..wx (got {px}, wx {wx})");
    assert!((0..wy).contains(&py), "unwrap: py must be in 0..wy (got {py}, wy {wy})");
    let (nx, ny) = (windows(n0, wx, sx, px), windows(n1, wy, sy, py));
    let padding = Dim4::new(&[px as u64, py as u64, 0, 0]);
    let padded = pad(input, padding, padding, BorderType::ZERO);
    padded.eval();
    let flat = Dim4::new(&[1, (nx * ny) as u64, d[2], d[3]]);
    let parts: Vec<Array<T>> = (0..wy)
        .flat_map(|j| (0..wx).map(move |i| (i, j)))
        .map(|(i, j)| moddims(&index(&padded, &[grid(i, nx, sx), grid(j, ny, sy)]), flat))
        .collect();
    let cols = join_many(0, parts.iter().collect());
    if is_column {
        cols
    } else {
        transpose(&cols, false)
    }
}

/// The inverse layout of [`unwrap`]: adds every patch of `input` (a column of `wx * wy`
/// elements with `is_column`, else a row) into an `ox x oy` image at its window's place, the
/// windows `sx` and `sy` apart on the image padded by `px` and `py`; where windows overlap,
/// their elements add up, and what falls on the padding is dropped. Dimensions 2 and 3 are
/// batches. Any element type (bool adds as "or").
///
/// ```
/// use emberfire::{dim4, unwrap, wrap, Array};
/// let img = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
/// // 2 x 2 windows one apart overlap: the middle column is counted twice
/// let cols = unwrap(&img, 2, 2, 1, 1, 0, 0, true);
/// let back = wrap(&cols, 2, 3, 2, 2, 1, 1, 0, 0, true);
/// assert_eq!(back.to_vec(), vec![1.0, 2.0, 6.0, 8.0, 5.0, 6.0]);
/// ```
///
/// Panics unless the window and stride sizes are positive, `0 <= px < wx`, `0 <= py < wy`,
/// the padded image holds a window, and `input` has `wx * wy` elements per patch and one
/// patch per window.
#[allow(clippy::too_many_arguments)]
pub fn wrap<T: HasAfEnum>(
    input: &Array<T>,
    ox: i64,
    oy: i64,
    wx: i64,
    wy: i64,
    sx: i64,
    sy: i64,
    px: i64,
    py: i64,
    is_column: bool,
) -> Array<T> {
    let d = input.dims();
    assert!(wx > 0 && wy > 0, "wrap: wx and wy must be positive (got {wx} and {wy})");
    assert!(sx > 0 && sy > 0, "wrap: sx and sy must be positive (got {sx} and {sy})");
    assert!((0..wx).contains(&px), "wrap: px must be in 0..wx (got {px}, wx {wx})");
    assert!((0..wy).contains(&py), "wrap: py must be in 0..wy (got {py}, wy {wy})");
    assert!(
        ox >= 0 && oy >= 0 && ox + 2 * px >= wx && oy + 2 * py >= wy,
        "wrap: an output of {ox} x {oy} padded by {px} and {py} holds no {wx} x {wy} window"
    );
    let (nx, ny) = (windows(ox, wx, sx, px), windows(oy, wy, sy, py));
    let (patch, count) = if is_column { (d[0], d[1]) } else { (d[1], d[0]) };
    assert!(
        patch as i64 == wx * wy && count as i64 == nx * ny,
        "wrap: input dims {d} do not hold {nx} x {ny} windows of {wx} x {wy} elements \
         (is_column {is_column})"
    );
    if ox == 0 || oy == 0 || d[2] * d[3] == 0 {
        return with_backend_of(input, || {
            Array::new_empty(Dim4::new(&[ox as u64, oy as u64, d[2], d[3]]))
        });
    }
    if T::get_af_dtype() == DType::B8 {
        let u: Array<u8> = input.cast();
        return wrap(&u, ox, oy, wx, wy, sx, sy, px, py, is_column).cast();
    }
    let cols = if is_column { input.clone() } else { transpose(input, false) };
    let grown = Dim4::new(&[(ox + 2 * px) as u64, (oy + 2 * py) as u64, d[2], d[3]]);
    let mut acc: Array<T> = with_backend_of(input, || constant(0.0f64, grown)).cast();
    acc.eval();
    let plane = Dim4::new(&[nx as u64, ny as u64, d[2], d[3]]);
    for j in 0..wy {
        for i in 0..wx {
            let seqs = [grid(i, nx, sx), grid(j, ny, sy)];
            let patch = moddims(&row(&cols, i + wx * j), plane);
            let sum = &index(&acc, &seqs) + &patch;
            // evaluated first, so that `acc` is not shared and takes the values in place
            sum.eval();
            assign_seq(&mut acc, &seqs, &sum);
        }
    }
    let crop = [
        Seq::new(px as f64, (px + ox - 1) as f64, 1.0),
        Seq::new(py as f64, (py + oy - 1) as f64, 1.0),
    ];
    index(&acc, &crop).copy()
}
