//! `locate`: ArrayFire's `where` (a Rust keyword, hence arrayfire-rust's name).

use rayon::prelude::*;

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::ops::sort::{array_on, host_of};
use crate::storage::{HostVec, Lit};

/// Whether a value counts as true: non-zero (NaN is non-zero; complex: either part).
pub(crate) fn lit_is_nonzero(l: Lit) -> bool {
    match l {
        Lit::Bool(b) => b,
        Lit::Int(i) => i != 0,
        Lit::Uint(u) => u != 0,
        Lit::Real(r) => r != 0.0,
        Lit::Cplx(c) => c.re != 0.0 || c.im != 0.0,
    }
}

/// The linear (column-major) indices of the non-zero elements of `input`, ascending, as a
/// column of u32 (`[0, 1, 1, 1]` when there are none). NaN counts as non-zero.
///
/// ```
/// use emberfire::{dim4, locate, Array};
/// let a = Array::new(&[0.0f32, 2.0, 0.0, f32::NAN, -1.0, 0.0], dim4!(3, 2));
/// assert_eq!(locate(&a).to_vec(), vec![1, 3, 4]);
/// ```
pub fn locate<T: HasAfEnum>(input: &Array<T>) -> Array<u32> {
    let n = input.elements();
    assert!(
        n <= u32::MAX as usize + 1,
        "locate: dims {} have more elements than u32 indices can name",
        input.dims()
    );
    let h = host_of("locate", input);
    let values = h.view::<T>();
    let found: Vec<u32> = values
        .par_iter()
        .enumerate()
        .filter(|(_, x)| lit_is_nonzero(x.to_lit()))
        .map(|(i, _)| i as u32)
        .collect();
    let dims = Dim4::new(&[found.len() as u64, 1, 1, 1]);
    array_on("locate", input.node().backend, HostVec::U32(found), dims)
}
