//! Connected-component labelling ([`regions`]): the components come from the iterated
//! minimum of [`labels`](super::labels), and are numbered by a running sum over their first
//! pixels.

use super::calc::Val;
use super::labels::{component_min, linear_index};
use super::Connectivity;
use crate::array::Array;
use crate::dtype::{DType, HasAfEnum, RealNumber};
use crate::ops::build::with_backend_of;
use crate::ops::indexer::lookup;
use crate::ops::movement::{flat, moddims};
use crate::ops::scan::accum;

/// The output types ArrayFire's `regions` accepts.
const LABEL_TYPES: [DType; 6] =
    [DType::F32, DType::F64, DType::S32, DType::U32, DType::S16, DType::U16];

/// Labels the connected components of a binary image: every pixel of a component (a
/// maximal set of `true` pixels joined through neighbours of `conn`, four or eight) gets the
/// component's number, and the background 0. Components are numbered `1..=n` in the order
/// of their first pixel in column-major order (down dimension 0, then along dimension 1),
/// which is the numbering of ArrayFire's backends.
///
/// The input is one image (dimensions 2 and 3 of size 1); a vector is an image of one row
/// or column (ArrayFire asks for two dimensions). `OutType` is f32, f64, i32, u32, i16 or
/// u16, as in ArrayFire; the number of components must fit in it.
///
/// The components are found by an iterated element-wise minimum with pointer jumping, which
/// stops when a check, made every few steps, sees no change (see the `labels` module); the
/// result does not depend on the backend.
///
/// ```
/// use emberfire::{dim4, regions, Array, Connectivity};
/// // 1 0 1
/// // 0 1 0     (column-major: the columns are [1,0,0], [0,1,1], [1,0,1])
/// // 0 1 1
/// let img = Array::new(&[true, false, false, false, true, true, true, false, true], dim4!(3, 3));
/// let four: Array<f32> = regions(&img, Connectivity::FOUR);
/// assert_eq!(four.to_vec(), vec![1.0, 0.0, 0.0, 0.0, 2.0, 2.0, 3.0, 0.0, 2.0]);
/// let eight: Array<u16> = regions(&img, Connectivity::EIGHT);
/// assert_eq!(eight.to_vec(), vec![1, 0, 0, 0, 1, 1, 1, 0, 1]);
/// ```
///
/// Panics if `OutType` is not one of the six types, or the input has a batch.
pub fn regions<OutType>(input: &Array<bool>, conn: Connectivity) -> Array<OutType>
where
    OutType: HasAfEnum + RealNumber,
{
    let ot = OutType::get_af_dtype();
    assert!(
        LABEL_TYPES.contains(&ot),
        "regions: OutType {} is not supported (f32, f64, i32, u32, i16 or u16, as in ArrayFire)",
        ot.name()
    );
    let dims = input.dims();
    assert!(
        dims[2] == 1 && dims[3] == 1,
        "regions: input must be one 2D image (dims 2 and 3 of size 1); its dims are {dims}"
    );
    if dims.elements() == 0 {
        return with_backend_of(input, || Array::new_empty(dims));
    }
    let labels = component_min("regions", input, None, conn == Connectivity::EIGHT);
    let m = Val::of(input, DType::B8);
    let l = Val::of(&labels, DType::S32);
    // each component's smallest index is its first pixel: the roots, numbered in order
    let root: Array<i32> = m.and(&l.eq(&linear_index(&m, dims))).cast(DType::S32).array();
    let number = accum(&flat(&root), 0);
    let numbered = moddims(&lookup(&number, &flat(&labels), 0), dims);
    let out = Val::of(&numbered, ot);
    Val::select(&m, &out, &out.k(0.0)).array()
}
