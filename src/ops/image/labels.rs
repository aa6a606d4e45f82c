//! Connected components by iterated minimum: the engine behind [`regions`](super::regions),
//! Canny's hysteresis and the region growing of [`confidence_cc`](super::confidence_cc).
//!
//! Every pixel starts with a key that names it (its linear index `p`, plus the element count
//! `n` where the caller marks it as not preferred), and each step is
//! - one fused element-wise pass: a pixel of the mask takes the smallest key among itself and
//!   its neighbours in the mask (four or eight shifted reads of the keys and of the mask);
//! - one gather (pointer jumping): a key `v` names the pixel `v mod n` where it started, whose
//!   own key is never larger, so each pixel takes the key of the pixel its key names. This
//!   halves long chains, and a component converges in a number of steps that grows with the
//!   logarithm of its length on the shapes met in practice, not with its diameter.
//!
//! Keys only decrease, so a step that changes nothing is a fixed point, and there every pixel
//! of a component holds the component's smallest key. Convergence is checked every
//! [`CHECK_EVERY`] steps, not every step, by one reduction (`any_true_all` of the keys against
//! those of the previous check): the host waits on the device once per check, and at most
//! `CHECK_EVERY - 1` steps are spent after the fixed point is reached.

use super::calc::Val;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::ops::indexer::lookup;
use crate::ops::movement::{flat, moddims, offset_read, BorderType};
use crate::ops::reduce::any_true_all;

/// How many steps run between two convergence checks.
pub(super) const CHECK_EVERY: usize = 4;

/// The neighbours of a pixel in 4- or 8-connectivity, as offsets along dimensions 0 and 1.
fn neighbours(eight: bool) -> Vec<[i64; 4]> {
    let mut offs = vec![[-1, 0, 0, 0], [1, 0, 0, 0], [0, -1, 0, 0], [0, 1, 0, 0]];
    if eight {
        offs.extend([[-1, -1, 0, 0], [1, -1, 0, 0], [-1, 1, 0, 0], [1, 1, 0, 0]]);
    }
    offs
}

/// The linear (column-major) index of every element of an array of shape `dims`, as i32.
pub(super) fn linear_index(like: &Val, dims: Dim4) -> Val {
    let t = DType::S32;
    let mut lin = like.index(dims, 3, t);
    for k in (0..3).rev() {
        lin = &(&lin * dims[k] as f64) + &like.index(dims, k as u8, t);
    }
    lin
}

/// For every pixel of `mask`, the smallest key of its connected component (4- or
/// 8-connected within each image: dimensions 2 and 3 are batches); elsewhere the pixel's
/// own key. A pixel's key is its linear index `p`, plus `n` (the element count) unless
/// `preferred` marks it: the result is below `n` exactly where the component holds a
/// preferred pixel (every pixel is preferred when `preferred` is `None`).
pub(super) fn component_min(
    func: &str,
    mask: &Array<bool>,
    preferred: Option<&Array<bool>>,
    eight: bool,
) -> Array<i32> {
    let dims = mask.dims();
    let n = dims.elements();
    assert!(
        n < (1 << 30),
        "{func}: the input has {n} elements; connected components handle fewer than 2^30"
    );
    let m = Val::of(mask, DType::B8);
    let lin = linear_index(&m, dims);
    let key = match preferred {
        Some(p) => Val::select(&Val::of(p, DType::B8), &lin, &(&lin + n as f64)),
        None => lin,
    };
    let mask = mask.clone();
    mask.eval();
    let mut labels: Array<i32> = key.array();
    labels.eval();
    let offs = neighbours(eight);
    let mut last_check = labels.clone();
    let mut steps = 0;
    loop {
        labels = step(&labels, &mask, &offs, n);
        steps += 1;
        if steps % CHECK_EVERY == 0 {
            let changed: Array<bool> =
                Val::of(&labels, DType::S32).neq(&Val::of(&last_check, DType::S32)).array();
            if !any_true_all(&changed).0 {
                return labels;
            }
            last_check = labels.clone();
        }
    }
}

/// One step: the minimum over the neighbourhood within the mask, then one pointer jump.
fn step(labels: &Array<i32>, mask: &Array<bool>, offs: &[[i64; 4]], n: u64) -> Array<i32> {
    let dims = labels.dims();
    let t = DType::S32;
    let own = Val::of(labels, t);
    let mut best = own.clone();
    for &o in offs {
        // clamped reads land on the pixel itself or on another of its neighbours
        let key = Val::of(&offset_read(labels, dims, o, BorderType::CLAMP_TO_EDGE), t);
        let inside = Val::of(&offset_read(mask, dims, o, BorderType::CLAMP_TO_EDGE), DType::B8);
        best = best.min(&Val::select(&inside, &key, &own));
    }
    let m = Val::of(mask, DType::B8);
    let stepped: Array<i32> = Val::select(&m, &best, &own).array();
    stepped.eval();
    let target: Array<i32> = Val::of(&stepped, t).rem(&own.k(n as f64)).array();
    let jumped = lookup(&flat(&stepped), &flat(&target), 0);
    moddims(&jumped, dims)
}
