//! The code of the book's "Linear algebra" chapter: solving systems (square, triangular, least
//! squares, batched), the LU, QR, Cholesky and singular value decompositions, inverses,
//! determinants, ranks and norms. Every result is checked, so running the example verifies
//! the chapter.

use emberfire::*;

/// Whether two slices agree to `tol`.
fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

fn main() {
    // ANCHOR: solve
    // 2x + y = 3, x + 3y = 5 (column-major: the first column is [2, 1])
    let a = Array::new(&[2.0f64, 1.0, 1.0, 3.0], dim4!(2, 2));
    let b = Array::new(&[3.0f64, 5.0], dim4!(2, 1));
    let x = solve(&a, &b, MatProp::NONE);
    assert!(close(&x.to_vec(), &[0.8, 1.4], 1e-12));

    // A triangular system reads only the triangle it names.
    let l = Array::new(&[2.0f64, 1.0, 99.0, 4.0], dim4!(2, 2)); // 99 is above the diagonal
    let y = solve(&l, &b, MatProp::LOWER);
    assert!(close(&y.to_vec(), &[1.5, 0.875], 1e-12));

    // More equations than unknowns: the least squares fit of a line through three points.
    let t = Array::new(&[1.0f64, 1.0, 1.0, 0.0, 1.0, 2.0], dim4!(3, 2)); // columns 1 and t
    let obs = Array::new(&[1.0f64, 2.0, 4.0], dim4!(3, 1));
    let line = solve(&t, &obs, MatProp::NONE);
    assert!(close(&line.to_vec(), &[5.0 / 6.0, 1.5], 1e-12));
    // ANCHOR_END: solve

    // ANCHOR: batched
    // Three 2x2 systems at once along dimension 2, each with its own right-hand side.
    let mats = [4.0f32, 1.0, 1.0, 3.0, 2.0, 0.0, 0.0, 2.0, 1.0, 2.0, 3.0, 4.0];
    let a3 = Array::new(&mats, dim4!(2, 2, 3));
    let b3 = Array::new(&[1.0f32, 2.0, 2.0, 4.0, 5.0, 6.0], dim4!(2, 1, 3));
    let x3 = solve(&a3, &b3, MatProp::NONE);
    assert_eq!(x3.dims(), dim4!(2, 1, 3));
    let got: Vec<f64> = x3.to_vec().iter().map(|&v| v as f64).collect();
    assert!(close(&got, &[1.0 / 11.0, 7.0 / 11.0, 1.0, 2.0, -1.0, 2.0], 1e-6));
    // ANCHOR_END: batched

    // ANCHOR: factorizations
    let m = Array::new(&[4.0f64, 2.0, 2.0, 2.0, 5.0, 1.0, 2.0, 1.0, 6.0], dim4!(3, 3));

    // LU with partial pivoting: m(pivot, :) = lower · upper.
    let (lower, upper, pivot) = lu(&m);
    let lu_product = matmul(&lower, &upper, MatProp::NONE, MatProp::NONE);
    assert_eq!(pivot.to_vec(), vec![0, 1, 2]);
    assert!(close(&lu_product.to_vec(), &m.to_vec(), 1e-12));

    // QR: q is orthogonal, r upper triangular.
    let (q, r, _tau) = qr(&m);
    let qtq = matmul(&q, &q, MatProp::TRANS, MatProp::NONE);
    assert!(close(&qtq.to_vec(), &identity::<f64>(dim4!(3, 3)).to_vec(), 1e-12));
    assert!(close(&matmul(&q, &r, MatProp::NONE, MatProp::NONE).to_vec(), &m.to_vec(), 1e-12));

    // Cholesky of a symmetric positive definite matrix: m = rᵀ · r; info 0 means success.
    let (chol, info) = cholesky(&m, true);
    assert_eq!(info, 0);
    let back = matmul(&chol, &chol, MatProp::TRANS, MatProp::NONE);
    assert!(close(&back.to_vec(), &m.to_vec(), 1e-12));
    // A matrix that is not positive definite reports the order of the failing minor.
    let indefinite = Array::new(&[1.0f64, 2.0, 2.0, 1.0], dim4!(2, 2));
    assert_eq!(cholesky(&indefinite, true).1, 2);
    // ANCHOR_END: factorizations

    // ANCHOR: svd
    // A rank-one 3x2 matrix: u · s · vᴴ with a single non-zero singular value.
    let rank_one = Array::new(&[1.0f64, 2.0, 2.0, 2.0, 4.0, 4.0], dim4!(3, 2));
    let (u, s, vt) = svd(&rank_one);
    assert_eq!((u.dims(), s.dims(), vt.dims()), (dim4!(3, 3), dim4!(2), dim4!(2, 2)));
    let sv = s.to_vec();
    assert!((sv[0] - 45f64.sqrt()).abs() < 1e-12 && sv[1].abs() < 1e-12); // ‖(1,2,2)‖·‖(1,2)‖
    assert_eq!(rank(&rank_one, 1e-10), 1);

    // The pseudo-inverse of a full-rank tall matrix is a left inverse.
    let tall = Array::new(&[1.0f64, 0.0, 1.0, 0.0, 1.0, 1.0], dim4!(3, 2));
    let p = pinverse(&tall, 1e-12, MatProp::NONE);
    let left = matmul(&p, &tall, MatProp::NONE, MatProp::NONE);
    assert!(close(&left.to_vec(), &[1.0, 0.0, 0.0, 1.0], 1e-12));
    // ANCHOR_END: svd

    // ANCHOR: measures
    let g = Array::new(&[4.0f64, 2.0, 7.0, 6.0], dim4!(2, 2)); // [4 7; 2 6]
    let inv = inverse(&g, MatProp::NONE);
    assert!(close(&inv.to_vec(), &[0.6, -0.2, -0.7, 0.4], 1e-12));
    let (re, im) = det(&g);
    assert!((re - 10.0).abs() < 1e-12 && im == 0.0);

    // Complex matrices work the same way; det returns (real, imaginary).
    let z = Array::new(
        &[c32::new(0.0, 1.0), c32::new(1.0, 0.0), c32::new(1.0, 0.0), c32::new(0.0, 1.0)],
        dim4!(2, 2),
    );
    let (zr, zi) = det(&z); // i·i - 1·1
    assert!((zr + 2.0).abs() < 1e-6 && zi.abs() < 1e-6);

    assert_eq!(norm(&g, NormType::MATRIX_1, 0.0, 0.0), 13.0); // largest column sum
    assert_eq!(norm(&g, NormType::MATRIX_INF, 0.0, 0.0), 11.0); // largest row sum
    assert!((norm(&g, NormType::VECTOR_2, 0.0, 0.0) - 105f64.sqrt()).abs() < 1e-12);
    assert!(is_lapack_available());
    // ANCHOR_END: measures

    println!("linear_algebra: all checks passed");
}
