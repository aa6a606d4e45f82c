//! The code of the book's "Sparse arrays" chapter: ArrayFire's conjugate-gradient benchmark
//! (`benchmarks/cg`) ported to emberfire. It builds a random sparse symmetric positive
//! definite matrix, keeps it both dense and sparse (CSR), solves `A x = b` with ten iterations
//! of conjugate gradients on each, checks that both recover the known solution, and times the
//! two. Run it with `cargo run --release --example sparse_cg [dimension]` (1024 by default).

use std::time::Instant;

use emberfire::*;

// ANCHOR: setup
/// A random `n x n` symmetric matrix with about one element in seven nonzero, made positive
/// definite by a large diagonal: ArrayFire's recipe.
fn random_spd(n: u64) -> Array<f32> {
    let t = randu::<f32>(dim4!(n, n));
    let a = floor(&(t * 1000.0f32));
    let keep = eq(&rem(&a, &7.0f32, false), &0.0f32, false);
    let a = &a * &keep / 1000.0f32;
    transpose(&a, false) + &a + identity::<f32>(dim4!(n, n)) * n as f32
}
// ANCHOR_END: setup

// ANCHOR: cg
/// Ten iterations of conjugate gradients from x = 0. `a` may be sparse or dense: `matmul`
/// takes either, and everything else is the same code.
fn conjugate_gradient(a: &Array<f32>, b: &Array<f32>) -> Array<f32> {
    let mut x = constant(0.0f32, b.dims());
    let mut r = b - &matmul(a, &x, MatProp::NONE, MatProp::NONE);
    let mut p = r.clone();
    for _ in 0..10 {
        let ap = matmul(a, &p, MatProp::NONE, MatProp::NONE);
        let alpha_num = dot(&r, &r, MatProp::NONE, MatProp::NONE);
        let alpha_den = dot(&p, &ap, MatProp::NONE, MatProp::NONE);
        let alpha = &alpha_num / &alpha_den;
        r -= tile(&alpha, ap.dims()) * &ap;
        x += tile(&alpha, ap.dims()) * &p;
        let beta_num = dot(&r, &r, MatProp::NONE, MatProp::NONE);
        let beta = &beta_num / &alpha_num;
        p = &r + tile(&beta, p.dims()) * &p;
    }
    x
}
// ANCHOR_END: cg

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1024);
    set_seed(42);
    // ANCHOR: main
    let a = random_spd(n);
    let sp_a = sparse_from_dense(&a, SparseFormat::CSR);
    let x0 = randu::<f32>(dim4!(n));
    let b = matmul(&a, &x0, MatProp::NONE, MatProp::NONE);

    let nnz = sparse_get_nnz(&sp_a);
    println!("sparsity of A: {:.2}%", 100.0 * nnz as f64 / (n * n) as f64);
    println!(
        "memory of A: {:.1} MB dense, {:.1} MB sparse",
        (n * n * 4) as f64 / 1e6,
        (nnz as u64 * 8 + (n + 1) * 4) as f64 / 1e6
    );

    for (name, matrix) in [("sparse", &sp_a), ("dense", &a)] {
        let x = conjugate_gradient(matrix, &b);
        let err = x0.clone() - x;
        let (sq, _) = sum_all(&(&err * &err));
        println!("{name}: |x0 - x|^2 = {sq:.3e}");
        assert!(sq < 1e-6, "{name} conjugate gradients missed the solution: {sq}");
    }
    // ANCHOR_END: main

    for (name, matrix) in [("sparse", &sp_a), ("dense", &a)] {
        conjugate_gradient(matrix, &b).eval(); // warm up
        sync(get_device());
        let start = Instant::now();
        let runs = 5;
        for _ in 0..runs {
            conjugate_gradient(matrix, &b).eval();
        }
        sync(get_device());
        let ms = start.elapsed().as_secs_f64() * 1e3 / runs as f64;
        println!("{name} conjugate gradients: {ms:.3} ms");
    }
}
