//! Morphology: dilation (the maximum) and erosion (the minimum) over the positions a mask
//! marks, in 2D ([`dilate`], [`erode`]) and 3D ([`dilate3`], [`erode3`]).
//!
//! On CUDA a 2D mask stays on the device: the tiled window kernel reads it (see `tiled.rs`).
//! Elsewhere the mask is small and read once on the host: its positive entries are the
//! offsets. The image is grown once by the mask's half-sizes,
//! filled with the identity of the fold (the type's lowest value for a maximum, its highest
//! for a minimum), and the result is the maximum or minimum of one shifted read per offset,
//! one fused pass.
//!
//! Outside the image: positions outside the image take no part, so a border pixel's result
//! is the extremum of the positions of its window that lie inside. ArrayFire's CUDA and
//! OpenCL backends do this; its CPU backend reads zeros outside the image for dilation,
//! which differs only for negative values near the border. A mask with no positive entry
//! gives the identity everywhere, as in ArrayFire.

use super::border::{grown, window_read, Fill};
use super::calc::Val;
use super::tiled::{extreme_bits, filter, tiled};
use crate::array::Array;
use crate::backend::image::{WindowFilter, WindowOp};
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, ImageFilterType};

/// The offsets (per dimension, from the window's start) of the mask's positive entries.
fn offsets<T: HasAfEnum>(mask: &Array<T>) -> Vec<[i64; 4]> {
    let md = mask.dims();
    let v = mask.cast::<f64>().to_vec();
    let mut out = Vec::new();
    for (lin, &m) in v.iter().enumerate() {
        if m > 0.0 {
            let l = lin as u64;
            let i = l % md[0];
            let j = (l / md[0]) % md[1];
            let k = l / (md[0] * md[1]);
            out.push([i as i64, j as i64, k as i64, 0]);
        }
    }
    out
}

/// Which positions of a window a fold takes.
pub(super) enum Marks<'a, T: HasAfEnum> {
    /// Every position (a box).
    Every,
    /// The positions where the mask is positive.
    Mask(&'a Array<T>),
}

impl<T: HasAfEnum> Marks<'_, T> {
    /// The positions as offsets from the window's start (reading a mask on the host).
    fn offsets(&self, window: Dim4) -> Vec<[i64; 4]> {
        match self {
            Marks::Mask(m) => offsets(m),
            Marks::Every => (0..window[2] as i64)
                .flat_map(|k| {
                    (0..window[1] as i64)
                        .flat_map(move |j| (0..window[0] as i64).map(move |i| [i, j, k, 0]))
                })
                .collect(),
        }
    }
}

/// The extremum over `window` (a shape of up to 3 dimensions) at the marked positions:
/// `max(x[c + o - half])` for dilation, `min` for erosion, positions outside ignored.
pub(super) fn fold_window<T: HasAfEnum>(
    input: &Array<T>,
    window: Dim4,
    marks: Marks<'_, T>,
    dilation: bool,
) -> Array<T> {
    let dims = input.dims();
    if dims.elements() == 0 {
        return input.clone();
    }
    if T::get_af_dtype() == DType::B8 {
        // bool folds as u8: the maximum is "or", the minimum "and"
        let u: Array<u8> = input.cast();
        let out = match marks {
            Marks::Every => fold_window(&u, window, Marks::Every, dilation),
            Marks::Mask(m) => fold_window(&u, window, Marks::Mask(&m.cast::<u8>()), dilation),
        };
        return out.cast();
    }
    let ct = T::get_af_dtype();
    if window[2] == 1 {
        // the tiled kernel reads the mask where it lies: no wait for the device
        let op = if dilation { WindowOp::Max } else { WindowOp::Min };
        let f = WindowFilter {
            fill_bits: extreme_bits(ct, dilation),
            ..filter(op, [window[0], window[1]])
        };
        let mask = match &marks {
            Marks::Every => None,
            Marks::Mask(m) => Some(*m),
        };
        if let Some((out, _)) = tiled::<T, T>("dilate/erode", input, mask, f) {
            return out;
        }
    }
    let offs = marks.offsets(window);
    let identity = if dilation { f64::NEG_INFINITY } else { f64::INFINITY };
    let Some((first, rest)) = offs.split_first() else {
        let v = Val::of(input, ct);
        let everywhere = v.index(dims, 0, DType::S32).ge(&v.k(0.0).cast(DType::S32));
        return Val::select(&everywhere, &v.k(identity), &v).array();
    };
    let before: [u64; 4] = std::array::from_fn(|k| if k < 3 { window[k] / 2 } else { 0 });
    let after: [u64; 4] =
        std::array::from_fn(|k| if k < 3 { window[k] - 1 - window[k] / 2 } else { 0 });
    let g = grown(input, before, after, Fill::Value(identity));
    let mut acc = Val::of(&window_read(&g, dims, *first), ct);
    for o in rest {
        let r = Val::of(&window_read(&g, dims, *o), ct);
        acc = if dilation { acc.max(&r) } else { acc.min(&r) };
    }
    acc.array()
}

fn morph2<T: HasAfEnum>(func: &str, input: &Array<T>, mask: &Array<T>, dilation: bool) -> Array<T> {
    let md = mask.dims();
    assert!(
        md[2] == 1 && md[3] == 1 && md.elements() > 0,
        "{func}: mask must be a non-empty 2D array; its dims are {md}"
    );
    fold_window(input, md, Marks::Mask(mask), dilation)
}

fn morph3<T: HasAfEnum>(func: &str, input: &Array<T>, mask: &Array<T>, dilation: bool) -> Array<T> {
    let md = mask.dims();
    assert!(
        md[3] == 1 && md.elements() > 0,
        "{func}: mask must be a non-empty 3D array; its dims are {md}"
    );
    fold_window(input, md, Marks::Mask(mask), dilation)
}

/// Dilation: each pixel becomes the maximum of the pixels at the mask's positive positions,
/// the mask centred on it (at `(rows / 2, cols / 2)` of the mask). Dimensions 2 and 3 are
/// batches. Positions outside the image take no part (see the module documentation).
///
/// Accepts f64, f32, i32, u32, i16, u16, u8 and bool (the maximum is "or").
///
/// ```
/// use emberfire::{constant, dilate, dim4, Array};
/// let img = Array::new(&[0u8, 0, 0, 0, 9, 0, 0, 0, 0], dim4!(3, 3));
/// let cross = Array::new(&[0u8, 1, 0, 1, 1, 1, 0, 1, 0], dim4!(3, 3));
/// assert_eq!(dilate(&img, &cross).to_vec(), vec![0, 9, 0, 9, 9, 9, 0, 9, 0]);
/// let box3 = constant(1u8, dim4!(3, 3));
/// assert_eq!(dilate(&img, &box3).to_vec(), vec![9; 9]);
/// ```
///
/// Panics if the mask is empty or not 2D.
pub fn dilate<T>(input: &Array<T>, mask: &Array<T>) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    morph2("dilate", input, mask, true)
}

/// Erosion: each pixel becomes the minimum of the pixels at the mask's positive positions,
/// the mask centred on it. Dimensions 2 and 3 are batches. Positions outside the image take
/// no part.
///
/// Accepts the types of [`dilate`] (for bool the minimum is "and").
///
/// ```
/// use emberfire::{constant, dim4, erode, Array};
/// let img = Array::new(&[5.0f32, 1.0, 7.0, 3.0], dim4!(4));
/// let three = constant(1.0f32, dim4!(3));
/// assert_eq!(erode(&img, &three).to_vec(), vec![1.0, 1.0, 1.0, 3.0]);
/// ```
///
/// Panics if the mask is empty or not 2D.
pub fn erode<T>(input: &Array<T>, mask: &Array<T>) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    morph2("erode", input, mask, false)
}

/// 3D dilation: the maximum over the mask's positive positions in a volume (dimensions 0, 1
/// and 2), the mask centred on each voxel; dimension 3 is a batch. Positions outside the
/// volume take no part.
///
/// ```
/// use emberfire::{constant, dilate3, dim4, Array};
/// let mut v = vec![0i32; 27];
/// v[13] = 4; // the centre of a 3x3x3 volume
/// let vol = Array::new(&v, dim4!(3, 3, 3));
/// let out = dilate3(&vol, &constant(1i32, dim4!(3, 3, 3)));
/// assert_eq!(out.to_vec(), vec![4; 27]);
/// ```
///
/// Panics if the mask is empty or has a fourth dimension.
pub fn dilate3<T>(input: &Array<T>, mask: &Array<T>) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    morph3("dilate3", input, mask, true)
}

/// 3D erosion: the minimum over the mask's positive positions in a volume, the mask centred
/// on each voxel; dimension 3 is a batch. Positions outside the volume take no part.
///
/// ```
/// use emberfire::{constant, dim4, erode3, Array};
/// let vol = Array::new(&[3.0f64, 1.0, 2.0, 5.0, 4.0, 6.0, 9.0, 8.0], dim4!(2, 2, 2));
/// let out = erode3(&vol, &constant(1.0f64, dim4!(3, 3, 3)));
/// assert_eq!(out.to_vec(), vec![1.0; 8]);
/// ```
///
/// Panics if the mask is empty or has a fourth dimension.
pub fn erode3<T>(input: &Array<T>, mask: &Array<T>) -> Array<T>
where
    T: HasAfEnum + ImageFilterType,
{
    morph3("erode3", input, mask, false)
}
