//! Images grown by a border, once, so that every read of a window filter lies inside: a
//! filter over a `w0 x w1` window is then the fold of `w0 * w1` views of the grown image,
//! fused into one pass.
//!
//! The rules the filters need and `pad` does not have are built here: a constant that is not
//! zero (the identity of a maximum or a minimum), and the reflection that does not repeat the
//! edge element (`x[-1] = x[1]`, OpenCV's "reflect 101"), which ArrayFire's median filter
//! calls symmetric and its Sobel filter uses.

use super::calc::Val;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::ops::build::with_backend_of;
use crate::ops::index::index;
use crate::ops::indexer::lookup;
use crate::ops::movement::{pad, BorderType};
use crate::ops::seq::Seq;

/// What lies outside the image.
#[derive(Clone, Copy, Debug)]
pub(super) enum Fill {
    /// A constant (infinities become the type's extremes).
    Value(f64),
    /// The image reflected about its edge elements, repeatedly: with `n > 1`, coordinate `x`
    /// reads `m = x mod 2(n - 1)` when `m < n`, else `2(n - 1) - m`; with `n == 1`, the one
    /// element. Where ArrayFire defines this border (within `n - 1` of the edge) it agrees.
    Reflect101,
}

/// The source index of coordinate `x` (which may lie outside `0..n`) under `Fill::Reflect101`.
pub(super) fn reflect101(x: i64, n: i64) -> i64 {
    if n == 1 {
        return 0;
    }
    let p = 2 * (n - 1);
    let m = x.rem_euclid(p);
    if m < n {
        m
    } else {
        p - m
    }
}

/// `input` grown by `before[k]` elements before and `after[k]` after along each dimension
/// `k`, filled by `fill`, and evaluated (the filters read it many times).
pub(super) fn grown<T: HasAfEnum>(
    input: &Array<T>,
    before: [u64; 4],
    after: [u64; 4],
    fill: Fill,
) -> Array<T> {
    let dims = input.dims();
    let out = match fill {
        Fill::Value(v) => {
            let zero_padded = pad(input, Dim4::new(&before), Dim4::new(&after), BorderType::ZERO);
            if v == 0.0 {
                zero_padded
            } else {
                let p = Val::of(&zero_padded, T::get_af_dtype());
                let idx = DType::S32;
                let mut inside: Option<Val> = None;
                for k in 0..4 {
                    if before[k] == 0 && after[k] == 0 {
                        continue;
                    }
                    let c = p.index(p.dims(), k as u8, idx);
                    let lo = c.k(before[k] as f64);
                    let hi = c.k((before[k] + dims[k]) as f64);
                    let ok = c.ge(&lo).and(&c.lt(&hi));
                    inside = Some(match inside {
                        Some(i) => i.and(&ok),
                        None => ok,
                    });
                }
                match inside {
                    Some(i) => Val::select(&i, &p, &p.k(v)).array(),
                    None => zero_padded,
                }
            }
        }
        Fill::Reflect101 => {
            let mut x = input.clone();
            for k in 0..4 {
                if before[k] == 0 && after[k] == 0 {
                    continue;
                }
                let n = dims[k] as i64;
                let len = n + before[k] as i64 + after[k] as i64;
                let idx: Vec<i64> = (0..len).map(|c| reflect101(c - before[k] as i64, n)).collect();
                let idx =
                    with_backend_of(input, || Array::new(&idx, Dim4::new(&[len as u64, 1, 1, 1])));
                x = lookup(&x, &idx, k as i32);
            }
            x
        }
    };
    out.eval();
    out
}

/// The read of `grown` (from [`grown`]) at window offset `offset` (along dimensions 0 to 2)
/// for an output of shape `dims`: element `c` of the result is element `c + offset` of the
/// grown image. It lies inside, so the read is a view (no copy, and the cheapest leaf of an
/// expression: a 7 x 7 window's 49 reads nearly fit one kernel's parameters, where reads
/// through an index map count three times as much).
pub(super) fn window_read<T: HasAfEnum>(
    grown: &Array<T>,
    dims: Dim4,
    offset: [i64; 4],
) -> Array<T> {
    let seqs: Vec<Seq<f64>> = (0..3)
        .map(|k| {
            let first = offset[k] as f64;
            Seq::new(first, first + dims[k] as f64 - 1.0, 1.0)
        })
        .collect();
    index(grown, &seqs)
}
