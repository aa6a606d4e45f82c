//! Matrix multiplication: `matmul` with transposes, batched products, `gemm` accumulating into
//! an output, and `dot`. Every result is checked against values worked out by hand.
//!
//! Run with `cargo run --example matmul`.

use emberfire::*;

fn main() {
    // ANCHOR: matmul
    // Column-major: a is the 2×3 matrix [1 3 5; 2 4 6], b the 3×2 matrix [1 0; 0 1; 1 1].
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    let b = Array::new(&[1.0f32, 0.0, 1.0, 0.0, 1.0, 1.0], dim4!(3, 2));
    let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE);
    assert_eq!(c.dims(), dim4!(2, 2));
    assert_eq!(c.to_vec(), vec![6.0, 8.0, 8.0, 10.0]); // [6 8; 8 10]

    // Transposes are read in place: aᵀ·a (3×3) and a·aᵀ (2×2).
    let ata = matmul(&a, &a, MatProp::TRANS, MatProp::NONE);
    assert_eq!(ata.to_vec(), vec![5.0, 11.0, 17.0, 11.0, 25.0, 39.0, 17.0, 39.0, 61.0]);
    let aat = matmul(&a, &a, MatProp::NONE, MatProp::TRANS);
    assert_eq!(aat.to_vec(), vec![35.0, 44.0, 44.0, 56.0]);
    // ANCHOR_END: matmul

    // ANCHOR: batched
    // Two 2×2 matrices along dimension 2, each multiplied by the same 2×1 vector (a batch
    // dimension of 1 is used for every batch).
    let stack = Array::new(&[1.0f64, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 3.0], dim4!(2, 2, 2));
    let v = Array::new(&[4.0f64, 5.0], dim4!(2, 1));
    let products = matmul(&stack, &v, MatProp::NONE, MatProp::NONE);
    assert_eq!(products.dims(), dim4!(2, 1, 2));
    assert_eq!(products.to_vec(), vec![4.0, 5.0, 8.0, 15.0]); // I·v, then diag(2, 3)·v
                                                              // ANCHOR_END: batched

    // ANCHOR: gemm
    // c = 2·a·b + 1·c, in c's own memory when nothing else shares it.
    let mut acc = Array::new(&[1.0f32, 1.0, 1.0, 1.0], dim4!(2, 2));
    gemm(&mut acc, MatProp::NONE, MatProp::NONE, vec![2.0], &a, &b, vec![1.0]);
    assert_eq!(acc.to_vec(), vec![13.0, 17.0, 17.0, 21.0]);
    // ANCHOR_END: gemm

    // ANCHOR: dot
    let x = Array::new(&[c32::new(1.0, 1.0), c32::new(0.0, 2.0)], dim4!(2));
    let y = Array::new(&[c32::new(3.0, 0.0), c32::new(1.0, -1.0)], dim4!(2));
    // xᴴy = (1-i)·3 + (-2i)·(1-i) = 3 - 3i - 2i - 2 = 1 - 5i
    let inner = dot(&x, &y, MatProp::CONJ, MatProp::NONE);
    assert_eq!(inner.to_vec(), vec![c32::new(1.0, -5.0)]);
    // ANCHOR_END: dot

    println!("matmul example: all results as expected");
}
