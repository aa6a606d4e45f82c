//! The code of the book's "ndarray interop" chapter (needs the `ndarray` feature:
//! `cargo run --example ndarray_interop --features ndarray`). Every result is checked.

use emberfire::*;
use ndarray::{array, s, Array2, Ix2};

fn main() {
    // ANCHOR: to_emberfire
    // An ndarray matrix (row-major) becomes an emberfire array with the same logical
    // elements: [i, j] in ndarray is (i, j) in emberfire.
    let m: Array2<f32> = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let a = Array::from_ndarray(&m);
    assert_eq!(a.dims(), dim4!(2, 3));
    // emberfire stores it column-major, so the host copy lists column by column.
    assert_eq!(a.to_vec(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);

    // Views of any layout convert too: here every other column, transposed.
    let v = m.slice(s![.., ..;2]).reversed_axes();
    let b = Array::from_ndarray(&v);
    assert_eq!(b.dims(), dim4!(2, 2));
    assert_eq!(b.to_vec(), vec![1.0, 3.0, 4.0, 6.0]);
    // ANCHOR_END: to_emberfire

    // ANCHOR: to_ndarray
    // Compute in emberfire, then hand the result back to ndarray code.
    let scaled = &a * 10.0f32 + 1.0f32;
    let back = scaled.to_ndarray(); // ArrayD<f32>, standard (row-major) layout
    assert_eq!(back.shape(), &[2, 3]);
    assert!(back.is_standard_layout());
    let back = back.into_dimensionality::<Ix2>().unwrap();
    assert_eq!(back, array![[11.0, 21.0, 31.0], [41.0, 51.0, 61.0]]);
    // ANCHOR_END: to_ndarray

    // ANCHOR: shapes
    // Trailing dimensions of size 1 are not kept: emberfire shapes always have four sizes,
    // and [3 1 1 1] gives a one-axis ndarray of length 3.
    let col = Array::new(&[1u8, 2, 3], dim4!(3));
    assert_eq!(col.to_ndarray().shape(), &[3]);
    let row = Array::new(&[1u8, 2, 3], dim4!(1, 3));
    assert_eq!(row.to_ndarray().shape(), &[1, 3]);
    // Empty arrays keep their shape.
    assert_eq!(Array::<u8>::new_empty(dim4!(0, 4)).to_ndarray().shape(), &[0, 4]);
    // ANCHOR_END: shapes
}
