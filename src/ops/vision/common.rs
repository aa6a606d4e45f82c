//! What the detectors share: argument checks, shifted reads, non-maximal suppression and
//! the gathering of the pixels that pass into [`Features`] columns.

use super::features::Features;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::ops::arith::{and, ge, gt, lt, maxof};
use crate::ops::data::range;
use crate::ops::index::index;
use crate::ops::indexer::lookup;
use crate::ops::locate::locate;
use crate::ops::movement::{flat, offset_read, transpose, BorderType};
use crate::ops::seq::Seq;

/// Panics unless `dims` describe one 2D image.
pub(super) fn check_image(func: &str, dims: Dim4) {
    assert!(
        dims[2] == 1 && dims[3] == 1,
        "{func}: `input` must be one 2D image, but its dims are {dims}"
    );
}

/// The image read at `(row + dy, column + dx)`, zero outside: one lazy view, no copy.
pub(super) fn shifted<T: HasAfEnum>(img: &Array<T>, dy: i64, dx: i64) -> Array<T> {
    offset_read(img, img.dims(), [dy, dx, 0, 0], BorderType::ZERO)
}

/// True where row and column both lie in `lo..dim - lo`.
pub(super) fn interior(dims: Dim4, lo: u64) -> Array<bool> {
    let rows = range::<i32>(dims, 0);
    let cols = range::<i32>(dims, 1);
    let lo_i = lo as i32;
    let in_rows = and(&ge(&rows, &lo_i, false), &lt(&rows, &(dims[0] as i32 - lo_i), false), false);
    let in_cols = and(&ge(&cols, &lo_i, false), &lt(&cols, &(dims[1] as i32 - lo_i), false), false);
    and(&in_rows, &in_cols, false)
}

/// True where `score` is larger than each of its eight neighbours (zero outside).
pub(super) fn local_max(score: &Array<f32>) -> Array<bool> {
    let mut most: Option<Array<f32>> = None;
    for dy in -1..=1 {
        for dx in -1..=1 {
            if dy == 0 && dx == 0 {
                continue;
            }
            let s = shifted(score, dy, dx);
            most = Some(match most {
                Some(m) => maxof(&m, &s, false),
                None => s,
            });
        }
    }
    gt(score, &most.expect("eight neighbours"), false)
}

/// The positions and scores of the pixels where `mask` is true, in column-major order (or
/// row-major with `row_major`), at most `limit` of them (the first ones in that order).
pub(super) fn gather(
    mask: &Array<bool>,
    score: &Array<f32>,
    row_major: bool,
    limit: usize,
) -> (Array<f32>, Array<f32>, Array<f32>) {
    let (m, s) = if row_major {
        (transpose(mask, false), transpose(score, false))
    } else {
        (mask.clone(), score.clone())
    };
    let mut idx = locate(&m);
    let n = idx.elements().min(limit);
    if n == 0 {
        let e = Array::<f32>::new_empty(Dim4::new(&[0, 1, 1, 1]));
        return (e.clone(), e.clone(), e);
    }
    if n < idx.elements() {
        idx = index(&idx, &[Seq::new(0.0, n as f64 - 1.0, 1.0)]);
    }
    let lead = m.dims()[0] as u32;
    let fast_coord = (&idx % lead).cast::<f32>();
    let slow_coord = (&idx / lead).cast::<f32>();
    let values = lookup(&flat(&s), &idx, 0);
    if row_major {
        (fast_coord, slow_coord, values)
    } else {
        (slow_coord, fast_coord, values)
    }
}

/// Features from the pixels where `mask` is true (see [`gather`]).
pub(super) fn features_of(
    mask: &Array<bool>,
    score: &Array<f32>,
    row_major: bool,
    limit: usize,
) -> Features {
    let (x, y, s) = gather(mask, score, row_major, limit);
    if x.elements() == 0 {
        return Features::empty();
    }
    Features::from_columns(x, y, s, None, None)
}
