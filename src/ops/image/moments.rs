//! Raw image moments by reductions: each is the sum over the image of the pixel values
//! weighted by a power of the row index, the column index or both, computed in f64 (one
//! fused reduction each) and returned as f32, ArrayFire's result type.

use super::calc::Val;
use super::MomentType;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, MomentsComputable};
use crate::ops::movement::join_many;
use crate::ops::reduce::sum;

/// The moments `moment` asks for, in ArrayFire's order, as (weight by row, weight by column).
fn selected(moment: MomentType) -> Vec<(bool, bool)> {
    let bits = moment as u32;
    [(1, (false, false)), (2, (true, false)), (4, (false, true)), (8, (true, true))]
        .into_iter()
        .filter(|(flag, _)| bits & flag != 0)
        .map(|(_, w)| w)
        .collect()
}

/// The image moments of each image: for `M00` the sum of its values, for `M01` the sum
/// weighted by the row index (dimension 0), for `M10` by the column index (dimension 1), for
/// `M11` by their product; `FIRST_ORDER` gives all four. The result has dims
/// `count x 1 x d2 x d3`: the moments asked for, in that order, for every image of the
/// batch.
///
/// Accepts f64, f32, i32, u32, i16, u16 and u8.
///
/// ```
/// use emberfire::{dim4, moments, Array, MomentType};
/// // two rows, two columns: values 1 2 / 3 4 (column-major)
/// let img = Array::new(&[1.0f32, 3.0, 2.0, 4.0], dim4!(2, 2));
/// let m = moments(&img, MomentType::FIRST_ORDER);
/// assert_eq!(m.dims(), dim4!(4));
/// assert_eq!(m.to_vec(), vec![10.0, 7.0, 6.0, 4.0]);
/// ```
pub fn moments<T>(input: &Array<T>, moment: MomentType) -> Array<f32>
where
    T: HasAfEnum + MomentsComputable,
{
    let dims = input.dims();
    let x = Val::of(input, DType::F64);
    let parts: Vec<Array<f64>> = selected(moment)
        .into_iter()
        .map(|(by_row, by_col)| {
            let mut v = x.clone();
            if by_row {
                v = &v * &x.index(dims, 0, DType::F64);
            }
            if by_col {
                v = &v * &x.index(dims, 1, DType::F64);
            }
            let a: Array<f64> = v.array();
            sum(&sum(&a, 0), 1)
        })
        .collect();
    let all = join_many(0, parts.iter().collect());
    debug_assert_eq!(all.dims(), Dim4::new(&[parts.len() as u64, 1, dims[2], dims[3]]));
    all.cast()
}

/// One moment of one image, as f64: [`moments`] of an image with no batch, its first value
/// (for `FIRST_ORDER`, `M00`; use [`moments`] for all four).
///
/// ```
/// use emberfire::{dim4, moments_all, Array, MomentType};
/// let img = Array::new(&[1u8, 3, 2, 4], dim4!(2, 2));
/// assert_eq!(moments_all(&img, MomentType::M00), 10.0);
/// assert_eq!(moments_all(&img, MomentType::M11), 4.0);
/// ```
///
/// Panics if the input is a batch (dimension 2 or 3 larger than 1).
pub fn moments_all<T>(input: &Array<T>, moment: MomentType) -> f64
where
    T: HasAfEnum + MomentsComputable,
{
    let d = input.dims();
    assert!(
        d[2] == 1 && d[3] == 1,
        "moments_all: input must be one image (dims 2 and 3 of size 1); its dims are {d}"
    );
    moments(input, moment).to_vec()[0] as f64
}
