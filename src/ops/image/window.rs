//! Filters over a rectangular window: minimum and maximum ([`minfilt`], [`maxfilt`]) and
//! median ([`medfilt`], [`medfilt1`]).
//!
//! The minimum and maximum are erosion and dilation with a box (as in ArrayFire), one fused
//! pass of shifted reads. The median runs a sorting network over the window's `k` shifted
//! reads of the grown image (Batcher's odd-even merge sort, pruned to the comparators the
//! middle value depends on: 24 comparators for 3 x 3, 113 for 5 x 5, 319 for 7 x 7), each a
//! minimum and a maximum that fuse like any element-wise expression: exact for every type,
//! and no sort kernel.
//!
//! Borders: `minfilt` and `maxfilt` accept `BorderType::ZERO` only, as ArrayFire does, and
//! (as ArrayFire's GPU backends do) ignore the positions of the window outside the image.
//! The median filters accept `ZERO` (zeros outside the image) and `SYMMETRIC`, which for
//! ArrayFire's median filters is the reflection that does not repeat the edge pixel
//! (`x[-1] = x[1]`); emberfire does the same.

use super::border::{grown, window_read, Fill};
use super::calc::Val;
use super::morph::{fold_window, Marks};
use super::tiled::{filter, tiled};
use crate::array::eval_multiple;
use crate::array::Array;
use crate::backend::image::{WindowFilter, WindowOp};
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, ImageFilterType};
use crate::ops::movement::BorderType;

fn window_size(func: &str, name: &str, w: u64) -> u64 {
    assert!(w > 0, "{func}: {name} must be at least 1 (got {w})");
    w
}

fn box_filter<T: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    wlen: u64,
    wwid: u64,
    etype: BorderType,
    dilation: bool,
) -> Array<T> {
    let (l, w) = (window_size(func, "wlen", wlen), window_size(func, "wwid", wwid));
    assert!(
        etype == BorderType::ZERO,
        "{func}: etype {etype:?} is not supported (ZERO only, as in ArrayFire)"
    );
    fold_window(input, Dim4::new(&[l, w, 1, 1]), Marks::Every, dilation)
}

/// The minimum over a `wlen x wwid` window centred on each pixel (at `(wlen / 2, wwid / 2)`
/// of the window); dimensions 2 and 3 are batches. Positions outside the image take no part.
///
/// ArrayFire asks for a square window; emberfire accepts any size. `etype` must be
/// `BorderType::ZERO`.
///
/// ```
/// use emberfire::{dim4, minfilt, Array, BorderType};
/// let img = Array::new(&[4i16, 2, 8, 6, 9], dim4!(5));
/// assert_eq!(minfilt(&img, 3, 1, BorderType::ZERO).to_vec(), vec![2, 2, 2, 6, 6]);
/// ```
///
/// Panics if a window size is 0 or `etype` is not `ZERO`.
pub fn minfilt<T>(input: &Array<T>, wlen: u64, wwid: u64, etype: BorderType) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    box_filter("minfilt", input, wlen, wwid, etype, false)
}

/// The maximum over a `wlen x wwid` window centred on each pixel; dimensions 2 and 3 are
/// batches. Positions outside the image take no part.
///
/// ArrayFire asks for a square window; emberfire accepts any size. `etype` must be
/// `BorderType::ZERO`.
///
/// ```
/// use emberfire::{dim4, maxfilt, Array, BorderType};
/// let img = Array::new(&[-4.0f32, -2.0, -8.0, -6.0], dim4!(1, 4));
/// assert_eq!(maxfilt(&img, 1, 3, BorderType::ZERO).to_vec(), vec![-2.0, -2.0, -2.0, -6.0]);
/// ```
///
/// Panics if a window size is 0 or `etype` is not `ZERO`.
pub fn maxfilt<T>(input: &Array<T>, wlen: u64, wwid: u64, etype: BorderType) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    box_filter("maxfilt", input, wlen, wwid, etype, true)
}

/// How many comparators of a median network are built before the wires are evaluated
/// together. A 5 x 5 network (113 comparators) is one stage; a 7 x 7 one (319) is three,
/// several times faster on the CPU than letting each tree be cut where it outgrows a kernel.
const STAGE: usize = 128;

/// The median of `input` over a `wlen x wwid` window (both odd) centred on each element.
fn median<T: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    wlen: u64,
    wwid: u64,
    etype: BorderType,
) -> Array<T> {
    for (name, w) in [("wlen", wlen), ("wwid", wwid)] {
        assert!(
            w % 2 == 1,
            "{func}: {name} must be odd (got {w}); ArrayFire refuses even median windows"
        );
    }
    let fill = match etype {
        BorderType::ZERO => Fill::Value(0.0),
        BorderType::SYMMETRIC => Fill::Reflect101,
        other => panic!("{func}: etype {other:?} is not supported (ZERO or SYMMETRIC)"),
    };
    let dims = input.dims();
    if dims.elements() == 0 || wlen * wwid == 1 {
        return input.clone();
    }
    if T::get_af_dtype() == DType::B8 {
        let u: Array<u8> = input.cast();
        return median(func, &u, wlen, wwid, etype).cast();
    }
    let network = median_network((wlen * wwid) as usize);
    let f = WindowFilter {
        network: network.clone(),
        reflect: matches!(fill, Fill::Reflect101),
        ..filter(WindowOp::Median, [wlen, wwid])
    };
    // (larger windows than 9 x 9 would hold their values in local memory, not registers)
    if wlen * wwid <= 81 {
        if let Some((out, _)) = tiled::<T, T>(func, input, None, f) {
            return out;
        }
    }
    let half = [wlen / 2, wwid / 2, 0, 0];
    let g = grown(input, half, half, fill);
    let t = T::get_af_dtype();
    let mut wires: Vec<Val> = (0..wwid as i64)
        .flat_map(|j| (0..wlen as i64).map(move |i| [i, j, 0, 0]))
        .map(|o| Val::of(&window_read(&g, dims, o), t))
        .collect();
    let mid = wires.len() / 2;
    for (c, (i, j)) in network.into_iter().enumerate() {
        let (lo, hi) = (wires[i].min(&wires[j]), wires[i].max(&wires[j]));
        wires[i] = lo;
        wires[j] = hi;
        if (c + 1) % STAGE == 0 {
            // all the wires at once, sharing their common parts: far cheaper than letting
            // each tree be cut where it outgrows a kernel
            let arrays: Vec<Array<T>> = wires.iter().map(|w| w.array()).collect();
            eval_multiple(arrays.iter().collect());
        }
    }
    wires[mid].array()
}

/// The comparators `(i, j)`, `i < j`, of Batcher's odd-even merge sort of `n` values (for the
/// next power of two, those that touch only the first `n` wires: the others would compare
/// with values larger than all), keeping only those the middle wire's value depends on.
fn median_network(n: usize) -> Vec<(usize, usize)> {
    let size = n.next_power_of_two();
    let mut all = Vec::new();
    let mut p = 1;
    while p < size {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < size {
                for i in 0..k.min(size - j - k) {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < n {
                        all.push((i + j, i + j + k));
                    }
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    let mut needed = vec![false; n];
    needed[n / 2] = true;
    let mut kept: Vec<(usize, usize)> = all
        .into_iter()
        .rev()
        .filter(|&(i, j)| {
            let keep = needed[i] || needed[j];
            if keep {
                needed[i] = true;
                needed[j] = true;
            }
            keep
        })
        .collect();
    kept.reverse();
    kept
}

/// The median over a `wlen x wwid` window (both odd) centred on each pixel; dimensions 2
/// and 3 are batches. A column (an image of one column) is filtered as [`medfilt1`] does
/// with a window of `wlen`, as in ArrayFire.
///
/// `etype` is `BorderType::ZERO` (zeros outside the image) or `BorderType::SYMMETRIC` (the
/// image reflected about its edge pixels, which are not repeated: ArrayFire's rule).
/// ArrayFire asks for a square window; emberfire accepts any odd sizes.
///
/// ```
/// use emberfire::{dim4, medfilt, Array, BorderType};
/// let img = Array::new(&[1u8, 9, 2, 8, 3, 7, 4, 6, 5], dim4!(3, 3));
/// let m = medfilt(&img, 3, 3, BorderType::SYMMETRIC);
/// assert_eq!(m.to_vec()[4], 5); // the centre: the median of all nine
/// let z = medfilt(&img, 3, 3, BorderType::ZERO);
/// assert_eq!(z.to_vec()[0], 0); // a corner sees five zeros
/// ```
///
/// Panics if a window size is even, or `etype` is `CLAMP_TO_EDGE` or `PERIODIC`.
pub fn medfilt<T>(input: &Array<T>, wlen: u64, wwid: u64, etype: BorderType) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    let d = input.dims();
    if d[1] == 1 && d[2] == 1 && d[3] == 1 {
        return median("medfilt", input, wlen, 1, etype);
    }
    median("medfilt", input, wlen, wwid, etype)
}

/// The median over a window of `wlen` (odd) elements along dimension 0, centred on each
/// element; the other dimensions are batches. Borders as for [`medfilt`].
///
/// ```
/// use emberfire::{dim4, medfilt1, Array, BorderType};
/// let s = Array::new(&[3.0f64, 100.0, 4.0, 5.0, -50.0, 6.0], dim4!(6));
/// let m = medfilt1(&s, 3, BorderType::SYMMETRIC).to_vec();
/// assert_eq!(m, vec![100.0, 4.0, 5.0, 4.0, 5.0, -50.0]); // x[-1] reads x[1], x[6] reads x[4]
/// ```
///
/// Panics if `wlen` is even, or `etype` is `CLAMP_TO_EDGE` or `PERIODIC`.
pub fn medfilt1<T>(input: &Array<T>, wlen: u64, etype: BorderType) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    median("medfilt1", input, wlen, 1, etype)
}
