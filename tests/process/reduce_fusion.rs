//! A reduction is fused with its element-wise producer: `sum(&(&x * &y), 0)` reads `x` and `y`
//! and never materialises `x * y`. Observed from outside on whichever backend runs the tests:
//! the producer stays lazy (had it been evaluated, its node would hold a buffer of the
//! producer's size, visible in `device_mem_info`), and on CUDA a fused reduction looks up
//! exactly one kernel (`jit_stats`), where evaluating the producer first would need two.
//!
//! It takes the `process` binary's one lock (`serial`), so that no other test allocates while
//! it measures.

use emberfire::*;

#[test]
fn reductions_never_materialise_their_producer() {
    let _serial = crate::serial();
    let n = 1usize << 22;
    let xs: Vec<f32> = (0..n).map(|i| ((i % 1000) as f32) * 0.001 - 0.25).collect();
    let ys: Vec<f32> = (0..n).map(|i| ((i % 77) as f32) * 0.01 + 0.5).collect();
    let x = Array::new(&xs, dim4!(n as u64));
    let y = Array::new(&ys, dim4!(n as u64));
    let m = Array::new(&xs, dim4!(2048, (n / 2048) as u64));
    x.eval();
    y.eval();
    m.eval();
    sync(get_device());
    let producer_bytes = n * 4;
    let on_cuda = get_active_backend() == Backend::CUDA;

    // the f64 reference of the dot product
    let want: f64 = xs.iter().zip(&ys).map(|(&a, &b)| (a * b) as f64).sum();

    let p = &x * &y;
    let before_mem = device_mem_info().0;
    let before_jit = jit_stats();
    let s = sum(&p, 0);
    let got = s.to_vec()[0] as f64;
    let after_jit = jit_stats();
    let grown = device_mem_info().0.saturating_sub(before_mem);
    assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "sum(x * y, 0) = {got}, want {want}");
    assert!(
        grown < producer_bytes / 4,
        "sum(x * y, 0): {grown} more bytes live after the reduction (the producer is {producer_bytes})"
    );
    if on_cuda {
        let lookups = |j: JitStats| j.compiles + j.memory_hits + j.disk_hits;
        assert_eq!(
            lookups(after_jit) - lookups(before_jit),
            1,
            "sum(x * y, 0) should be one fused kernel: {before_jit:?} -> {after_jit:?}"
        );
    }

    // the other forms: along a strided dimension, over everything, with positions
    let q = &m * 2.0f32 - 1.0f32;
    let before_mem = device_mem_info().0;
    let cols = sum(&q, 1);
    let (mx, at) = imax(&q, 0);
    let total = sum_all(&p).0 as f64;
    let (lo, _, lo_at) = imin_all(&q);
    let grown = device_mem_info().0.saturating_sub(before_mem);
    assert!(
        grown < producer_bytes / 4,
        "{grown} more bytes live after reducing lazy producers of {producer_bytes} bytes"
    );
    assert!((total - want).abs() <= 1e-6 * want.abs().max(1.0), "sum_all: {total} vs {want}");
    let cols_want: Vec<f64> = (0..2048)
        .map(|i| (0..n / 2048).map(|j| (xs[i + 2048 * j] * 2.0 - 1.0) as f64).sum())
        .collect();
    for (i, (&g, &w)) in cols.to_vec().iter().zip(&cols_want).enumerate() {
        assert!((g as f64 - w).abs() <= 1e-5 * (n / 2048) as f64, "sum along 1, row {i}");
    }
    let (mx, at) = (mx.to_vec(), at.to_vec());
    for (j, (&v, &k)) in mx.iter().zip(&at).enumerate() {
        let col = &xs[2048 * j..2048 * (j + 1)];
        let best = col.iter().cloned().fold(f32::MIN, f32::max);
        let first = col.iter().position(|&c| c == best).unwrap();
        assert_eq!((v, k as usize), (best * 2.0 - 1.0, first), "imax along 0, column {j}");
    }
    let min_x = xs.iter().cloned().fold(f32::MAX, f32::min);
    assert_eq!(lo, min_x * 2.0 - 1.0);
    assert_eq!(lo_at as usize, xs.iter().position(|&c| c == min_x).unwrap());
}

/// Sibling reductions (two sums and a maximum over one lazy pair expression, along dimension
/// 1 as n-body's are) evaluated together run in one pass: on CUDA one kernel, looked up once
/// (three reductions alone would look up three), and on either backend the shared expression
/// is never stored.
#[test]
fn sibling_reductions_share_one_pass() {
    let _serial = crate::serial();
    let (rows, cols) = (1024usize, 1024usize);
    let n = rows * cols;
    let xs: Vec<f32> = (0..n).map(|i| ((i % 997) as f32) * 0.002 - 1.0).collect();
    let ys: Vec<f32> = (0..n).map(|i| ((i % 101) as f32) * 0.01 + 0.25).collect();
    let x = Array::new(&xs, dim4!(rows as u64, cols as u64));
    let y = Array::new(&ys, dim4!(rows as u64, cols as u64));
    x.eval();
    y.eval();
    sync(get_device());
    let on_cuda = get_active_backend() == Backend::CUDA;
    let before_mem = device_mem_info().0;
    let before_jit = jit_stats();
    let w = &x * &y + 1.0f32;
    let (a, b, c) = (sum(&(&w * &x), 1), sum(&(&w * &y), 1), max(&w, 1));
    drop(w);
    eval_multiple(vec![&a, &b, &c]);
    let after_jit = jit_stats();
    let grown = device_mem_info().0.saturating_sub(before_mem);
    assert!(
        grown < n,
        "{grown} more bytes live after the reductions (the shared expression is {})",
        n * 4
    );
    if on_cuda {
        let lookups = |j: JitStats| j.compiles + j.memory_hits + j.disk_hits;
        assert_eq!(
            lookups(after_jit) - lookups(before_jit),
            1,
            "three sibling reductions should be one kernel: {before_jit:?} -> {after_jit:?}"
        );
    }
    let (a, b, c) = (a.to_vec(), b.to_vec(), c.to_vec());
    for i in 0..rows {
        let ws: Vec<(f32, f32, f32)> = (0..cols)
            .map(|j| {
                let (xv, yv) = (xs[i + rows * j], ys[i + rows * j]);
                (xv * yv + 1.0, xv, yv)
            })
            .collect();
        let sa: f64 = ws.iter().map(|&(w, x, _)| (w * x) as f64).sum();
        let sb: f64 = ws.iter().map(|&(w, _, y)| (w * y) as f64).sum();
        let scale: f64 = ws.iter().map(|&(w, x, y)| ((w * x).abs() + (w * y).abs()) as f64).sum();
        let mc = ws.iter().map(|&(w, _, _)| w).fold(f32::MIN, f32::max);
        assert!((a[i] as f64 - sa).abs() <= 1e-6 * scale, "sum(w * x) row {i}: {} vs {sa}", a[i]);
        assert!((b[i] as f64 - sb).abs() <= 1e-6 * scale, "sum(w * y) row {i}: {} vs {sb}", b[i]);
        // (a GPU may contract `x * y + 1` into one rounding)
        assert!((c[i] - mc).abs() <= 1e-6 * mc.abs(), "max(w) row {i}: {} vs {mc}", c[i]);
    }
}
