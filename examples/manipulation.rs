//! The code of the book's "Array and matrix manipulation" chapter: reshaping, flattening,
//! flipping, joining, reordering, shifting, tiling, padding and transposing, and what each one
//! costs. Every result is checked, so running the example verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: moddims
    let a = Array::new(&[1.0f32, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0], dim4!(8));
    let b = moddims(&a, dim4!(2, 4));
    assert_eq!(b.dims(), dim4!(2, 4));
    // the elements and their column-major order are unchanged: every column is [1, 2]
    assert_eq!(b.to_vec(), a.to_vec());
    let back = moddims(&b, dim4!(a.elements()));
    assert_eq!(back.dims(), dim4!(8));
    // ANCHOR_END: moddims

    // ANCHOR: flat
    let m = Array::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9], dim4!(3, 3));
    let f = flat(&m);
    assert_eq!(f.dims(), dim4!(9));
    assert_eq!(f.to_vec(), vec![1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // ANCHOR_END: flat

    // ANCHOR: flip
    let a = Array::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], dim4!(5, 2));
    // within each column
    assert_eq!(flip(&a, 0).to_vec(), vec![5, 4, 3, 2, 1, 10, 9, 8, 7, 6]);
    // across the columns
    assert_eq!(flip(&a, 1).to_vec(), vec![6, 7, 8, 9, 10, 1, 2, 3, 4, 5]);
    // ANCHOR_END: flip

    // ANCHOR: join
    let a = Array::new(&[1, 2, 3, 4, 5], dim4!(5));
    let long = join(0, &a, &a);
    assert_eq!(long.dims(), dim4!(10));
    assert_eq!(long.to_vec(), vec![1, 2, 3, 4, 5, 1, 2, 3, 4, 5]);
    let wide = join(1, &a, &a);
    assert_eq!(wide.dims(), dim4!(5, 2));
    // more than two arrays, as a function or with arrayfire-rust's macro
    let three = join_many(1, vec![&a, &a, &a]);
    assert_eq!(three.dims(), dim4!(5, 3));
    assert_eq!(join_many![1; &a, &a, &a].to_vec(), three.to_vec());
    // ANCHOR_END: join

    // ANCHOR: reorder
    // a 2 x 2 x 3 array: three copies of [[1, 3], [2, 4]]
    let a = Array::new(&[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4], dim4!(2, 2, 3));
    // exchanging the first two axes transposes every matrix
    let t = reorder_v2(&a, 1, 0, None);
    assert_eq!(t.dims(), dim4!(2, 2, 3));
    assert_eq!(t.to_vec(), vec![1, 3, 2, 4, 1, 3, 2, 4, 1, 3, 2, 4]);
    // axis 2 first: element (i, j, k) of r is element (j, k, i) of a
    let r = reorder_v2(&a, 2, 0, Some(vec![1]));
    assert_eq!(r.dims(), dim4!(3, 2, 2));
    assert_eq!(r.to_vec(), vec![1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
    // ANCHOR_END: reorder

    // ANCHOR: shift
    let a = Array::new(&[0, 3, 3, 0, 4, 4, 0, 5, 5, 0, 1, 1, 0, 2, 2], dim4!(3, 5));
    // two places along the rows: [3 4 5 1 2] becomes [1 2 3 4 5]
    let s = shift(&a, &[0, 2, 0, 0]);
    assert_eq!(s.to_vec(), vec![0, 1, 1, 0, 2, 2, 0, 3, 3, 0, 4, 4, 0, 5, 5]);
    // one place back along the columns: the zero row moves to the bottom
    let s = shift(&s, &[-1, 0, 0, 0]);
    assert_eq!(s.to_vec(), vec![1, 1, 0, 2, 2, 0, 3, 3, 0, 4, 4, 0, 5, 5, 0]);
    // ANCHOR_END: shift

    // ANCHOR: tile
    let a = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
    assert_eq!(tile(&a, dim4!(2)).to_vec(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let t = tile(&a, dim4!(2, 2));
    assert_eq!(t.dims(), dim4!(6, 2));
    let t = tile(&a, dim4!(1, 2, 3));
    assert_eq!(t.dims(), dim4!(3, 2, 3));
    assert_eq!(t.to_vec(), [1.0, 2.0, 3.0].repeat(6));
    // ANCHOR_END: tile

    // ANCHOR: pad
    let a = Array::new(&[1, 2, 3], dim4!(3));
    // two elements before and one after, along dimension 0 only: `Dim4::new` with zeros,
    // since `dim4!` fills the dimensions it is not given with 1
    let (before, after) = (Dim4::new(&[2, 0, 0, 0]), Dim4::new(&[1, 0, 0, 0]));
    assert_eq!(pad(&a, before, after, BorderType::ZERO).to_vec(), vec![0, 0, 1, 2, 3, 0]);
    assert_eq!(pad(&a, before, after, BorderType::CLAMP_TO_EDGE).to_vec(), vec![1, 1, 1, 2, 3, 3]);
    assert_eq!(pad(&a, before, after, BorderType::SYMMETRIC).to_vec(), vec![2, 1, 1, 2, 3, 3]);
    assert_eq!(pad(&a, before, after, BorderType::PERIODIC).to_vec(), vec![2, 3, 1, 2, 3, 1]);
    // ANCHOR_END: pad

    // ANCHOR: transpose
    let a = Array::new(&[1.0f32, 2.0, 2.0, 3.0, 1.0, 2.0, 3.0, 3.0, 1.0], dim4!(3, 3));
    let t = transpose(&a, false);
    assert_eq!(t.to_vec(), vec![1.0, 3.0, 3.0, 2.0, 1.0, 3.0, 2.0, 2.0, 1.0]);
    // the conjugate transpose of complex matrices
    let z = Array::new(&[c32::new(1.0, 1.0), c32::new(2.0, -3.0)], dim4!(1, 2));
    let h = transpose(&z, true);
    assert_eq!(h.dims(), dim4!(2, 1));
    assert_eq!(h.to_vec(), vec![c32::new(1.0, -1.0), c32::new(2.0, 3.0)]);
    // in place, as arrayfire-rust's transpose_inplace
    let mut m = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
    transpose_inplace(&mut m, false);
    assert_eq!(m.dims(), dim4!(3, 2));
    assert_eq!(m.to_vec(), vec![1, 3, 5, 2, 4, 6]);
    // ANCHOR_END: transpose

    // ANCHOR: grid
    let a = iota::<u32>(Dim4::new(&[3, 1, 1, 1]), Dim4::new(&[1, 3, 1, 1]));
    let b = transpose(&a, false);
    let coords = join(1, &flat(&a), &flat(&b));
    assert_eq!(coords.dims(), dim4!(9, 2));
    assert_eq!(coords.to_vec(), vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
    // ANCHOR_END: grid

    // ANCHOR: cost
    let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    x.eval();
    let (_, buffers_before, _, _) = device_mem_info();
    // views: the same memory, read with other shapes or strides
    let reshaped = moddims(&x, dim4!(3, 2));
    let reversed = flip(&x, 1);
    let swapped = reorder_v2(&x, 1, 0, None);
    // tile, shift and pad: read by the consumer's kernel; nothing is stored for them
    let weights = Array::new(&[0.5f32; 24], dim4!(4, 6));
    let y = tile(&x, dim4!(2, 2)) * &weights + shift(&tile(&x, dim4!(2, 2)), &[1, 0, 0, 0]);
    y.eval();
    let (_, buffers_after, _, _) = device_mem_info();
    assert_eq!(buffers_after, buffers_before + 2, "`weights` and `y`, nothing else");
    assert_eq!(reshaped.to_vec(), x.to_vec());
    assert_eq!(reversed.to_vec(), vec![5.0, 6.0, 3.0, 4.0, 1.0, 2.0]);
    assert_eq!(swapped.to_vec(), vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    assert_eq!(y.to_vec()[..4], [0.5 + 2.0, 1.0 + 1.0, 0.5 + 2.0, 1.0 + 1.0]);
    // ANCHOR_END: cost

    println!("manipulation: all results checked");
}
