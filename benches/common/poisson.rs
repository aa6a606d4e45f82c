//! The matrix of the sparse benchmarks, shared by `peers.rs` and `apps.rs`.

/// The 5-point Laplacian of a `side x side` grid in CSR (rows ordered x fastest, each row's
/// columns ascending), as host parts: the matrix apps.py builds with `kron`.
pub fn poisson_csr(side: usize) -> (Vec<f32>, Vec<i32>, Vec<i32>) {
    let (mut v, mut off, mut col) = (vec![], vec![0i32], vec![]);
    for y in 0..side {
        for x in 0..side {
            let row = y * side + x;
            let neighbours = [
                (y > 0, row.wrapping_sub(side), -1.0),
                (x > 0, row.wrapping_sub(1), -1.0),
                (true, row, 4.0),
                (x + 1 < side, row + 1, -1.0),
                (y + 1 < side, row + side, -1.0),
            ];
            for (inside, c, w) in neighbours {
                if inside {
                    v.push(w);
                    col.push(c as i32);
                }
            }
            off.push(v.len() as i32);
        }
    }
    (v, off, col)
}
