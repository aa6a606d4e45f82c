//! The code of the book's "Getting started" chapter: creating arrays, arithmetic, broadcasting,
//! comparisons and reading results back. Every result is checked, so running the example
//! verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: create
    // Six values as a 3x2 matrix. Storage is column-major: the first column is [1, 2, 3].
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(3, 2));
    assert_eq!(a.dims(), dim4!(3, 2));
    assert_eq!(a.elements(), 6);
    assert_eq!(a.numdims(), 2);

    // Generated arrays cost nothing until they are used.
    let twos = constant(2.0f32, dim4!(3, 2));
    let rows = range::<i32>(dim4!(3, 2), 0); // the row index of every element
    let eye = identity::<f32>(dim4!(2, 2));
    assert_eq!(rows.to_vec(), vec![0, 1, 2, 0, 1, 2]);
    assert_eq!(eye.to_vec(), vec![1.0, 0.0, 0.0, 1.0]);
    // ANCHOR_END: create

    // ANCHOR: arithmetic
    // Operators take arrays and scalars, by value or by reference.
    let b = &a * 2.0f32 + 1.0f32;
    assert_eq!(b.to_vec(), vec![3.0, 5.0, 7.0, 9.0, 11.0, 13.0]);

    // Functions take references and return new (lazy) arrays.
    let c = sqrt(&(&a * &a)) / &twos;
    assert_eq!(c.to_vec(), vec![0.5, 1.0, 1.5, 2.0, 2.5, 3.0]);

    let d = pow(&a, &2.0f32, false) - &a;
    assert_eq!(d.to_vec(), vec![0.0, 2.0, 6.0, 12.0, 20.0, 30.0]);
    // ANCHOR_END: arithmetic

    // ANCHOR: broadcast
    // Shapes must match, except that a single value combines with anything and, with
    // `batch = true`, a dimension of size 1 is repeated to match the other operand.
    let offsets = Array::new(&[10.0f32, 20.0], dim4!(1, 2)); // one value per column
    let shifted = add(&a, &offsets, true);
    assert_eq!(shifted.to_vec(), vec![11.0, 12.0, 13.0, 24.0, 25.0, 26.0]);
    // ANCHOR_END: broadcast

    // ANCHOR: compare
    // Comparisons give bool arrays; `select` picks from two arrays element by element.
    let big = gt(&a, &3.5f32, false);
    assert_eq!(big.to_vec(), vec![false, false, false, true, true, true]);
    let capped = select(&twos, &big, &a); // 2 where a > 3.5, a elsewhere
    assert_eq!(capped.to_vec(), vec![1.0, 2.0, 3.0, 2.0, 2.0, 2.0]);
    // ANCHOR_END: compare

    // ANCHOR: reduce
    // Reductions along a dimension keep the shape, with size 1 along that dimension.
    let col_sums = sum(&a, 0);
    assert_eq!(col_sums.dims(), dim4!(1, 2));
    assert_eq!(col_sums.to_vec(), vec![6.0, 15.0]);
    let row_max = max(&a, 1);
    assert_eq!(row_max.to_vec(), vec![4.0, 5.0, 6.0]);

    // The `_all` forms reduce every element and return (real part, imaginary part).
    assert_eq!(sum_all(&a), (21.0, 0.0));
    // `count` counts the elements that are not zero (for bool: true).
    assert_eq!(count_all(&big), (3, 0));
    // `imin` and `imax` also give where the extreme is (the first one, on ties).
    let (top, at) = imax(&a, 0);
    assert_eq!((top.to_vec(), at.to_vec()), (vec![3.0, 6.0], vec![2, 2]));
    assert_eq!(imin_all(&a), (1.0, 0.0, 0));
    // ANCHOR_END: reduce

    // ANCHOR: types
    // Mixed element types promote as in arrayfire-rust: u8 with f32 gives f32.
    let bytes = Array::new(&[1u8, 2, 3], dim4!(3));
    let halves = Array::new(&[0.5f32, 0.5, 0.5], dim4!(3));
    let mixed: Array<f32> = &bytes + &halves;
    assert_eq!(mixed.to_vec(), vec![1.5, 2.5, 3.5]);

    // Explicit casts: floats to integers truncate toward zero and saturate.
    let clipped = Array::new(&[-1.5f32, 2.7, 300.0], dim4!(3)).cast::<u8>();
    assert_eq!(clipped.to_vec(), vec![0, 2, 255]);
    // ANCHOR_END: types

    // ANCHOR: host
    // Reading back copies the elements, column-major, to the host.
    let values = b.to_vec();
    let rows = a.dims()[0] as usize;
    let element = |i: usize, j: usize| values[i + rows * j];
    assert_eq!(element(2, 1), 13.0); // row 2, column 1

    // Or into a slice of your own; its length must equal the element count.
    let mut out = vec![0.0f32; b.elements()];
    b.host(&mut out);
    assert_eq!(out, values);

    // Printing uses ArrayFire's layout.
    af_print!("b", b);
    // ANCHOR_END: host
}
