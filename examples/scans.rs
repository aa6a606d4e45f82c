//! The code of the book's "Scans" section: running sums, generalised scans, scans restarted by
//! keys, and differences. Every result is checked, so running the example verifies the section.

use emberfire::*;

fn main() {
    // ANCHOR: scan
    // Running sums along a dimension keep the shape. Column-major: the columns are [1, 2, 3]
    // and [4, 5, 6].
    let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(3, 2));
    assert_eq!(accum(&a, 0).to_vec(), vec![1, 3, 6, 4, 9, 15]);
    assert_eq!(accum(&a, 1).to_vec(), vec![1, 2, 3, 5, 7, 9]);

    // `scan` takes the operation and whether each element includes itself. An exclusive scan
    // starts from the identity: 0 for ADD, 1 for MUL, the largest value for MIN.
    let x = Array::new(&[3.0f32, 1.0, 4.0, 1.0, 5.0], dim4!(5));
    assert_eq!(scan(&x, 0, BinaryOp::MAX, true).to_vec(), vec![3.0, 3.0, 4.0, 4.0, 5.0]);
    assert_eq!(scan(&x, 0, BinaryOp::MUL, false).to_vec(), vec![1.0, 3.0, 3.0, 12.0, 12.0]);
    assert_eq!(scan(&x, 0, BinaryOp::MIN, false).to_vec()[0], f32::INFINITY);

    // Small integer types scan in a wider type (u8 gives u32), so these sums do not wrap.
    let bytes = Array::new(&[200u8, 100, 50], dim4!(3));
    assert_eq!(accum(&bytes, 0).to_vec(), vec![200u32, 300, 350]);

    // `scan_by_key` starts again wherever the key changes.
    let key = Array::new(&[1i32, 1, 1, 2, 2, 1], dim4!(6));
    let val = Array::new(&[1.0f64, 1.0, 1.0, 1.0, 1.0, 1.0], dim4!(6));
    let runs = scan_by_key(&key, &val, 0, BinaryOp::ADD, true);
    assert_eq!(runs.to_vec(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 1.0]);

    // Differences are lazy element-wise expressions: one element shorter along `dim` (two for
    // diff2), fused into whatever reads them.
    let squares = Array::new(&[0.0f32, 1.0, 4.0, 9.0, 16.0], dim4!(5));
    assert_eq!(diff1(&squares, 0).to_vec(), vec![1.0, 3.0, 5.0, 7.0]);
    assert_eq!(diff2(&squares, 0).to_vec(), vec![2.0, 2.0, 2.0]);

    // A scan reads a lazy input as it computes it: `x * x` is never stored.
    let energy = accum(&(&x * &x), 0);
    assert_eq!(energy.to_vec(), vec![9.0, 10.0, 26.0, 27.0, 52.0]);
    // ANCHOR_END: scan
}
