//! Matrix products and process-wide state: the cuBLAS math mode (TF32 tensor cores only when
//! the user opts in, full precision again after `DEFAULT`) and the memory counters (products
//! leave no buffer behind, their workspace included). Both are global: while the mode is
//! `TENSOR_OP` every f32 product in the process may round its inputs to TF32, and any
//! concurrent allocation moves the counters. So these tests live in the `process` binary, apart
//! from the other products, and take its one lock (`serial`), so that no other test of the
//! process runs beside them.

use emberfire::*;

/// A 256×256 matrix whose elements are ±(1 + 2^-20): exact in f32, 1 in TF32 (10 mantissa
/// bits), and the identity.
fn inputs() -> (Vec<f32>, Array<f32>, Array<f32>) {
    let n = 256;
    let x = 1.0f32 + 2f32.powi(-20);
    let a: Vec<f32> = (0..n * n).map(|i| if i % 3 == 0 { x } else { -x }).collect();
    let eye: Vec<f32> = (0..n * n).map(|i| if i % (n + 1) == 0 { 1.0 } else { 0.0 }).collect();
    let (arr, eye) = (Array::new(&a, dim4!(n, n)), Array::new(&eye, dim4!(n, n)));
    (a, arr, eye)
}

#[test]
fn tensor_op_mode_is_opt_in_and_reversible() {
    let _serial = crate::serial();
    let (a, arr, eye) = inputs();
    assert_eq!(get_cublas_mode(), CublasMathMode::DEFAULT);
    assert_eq!(matmul(&arr, &eye, MatProp::NONE, MatProp::NONE).to_vec(), a, "default mode");

    set_cublas_mode(CublasMathMode::TENSOR_OP);
    assert_eq!(get_cublas_mode(), CublasMathMode::TENSOR_OP);
    let got = matmul(&arr, &eye, MatProp::NONE, MatProp::NONE).to_vec();
    // Each element is exact, or rounded to TF32 (±1) where cuBLAS used tensor cores; the CPU
    // backend always computes in full precision.
    for (g, w) in got.iter().zip(&a) {
        assert!(g == w || *g == w.signum(), "TENSOR_OP: {g} is neither {w} nor its TF32 value");
    }
    if get_active_backend() == Backend::CPU {
        assert_eq!(got, a, "the CPU backend ignores the cuBLAS mode");
    }

    set_cublas_mode(CublasMathMode::DEFAULT);
    assert_eq!(get_cublas_mode(), CublasMathMode::DEFAULT);
    assert_eq!(matmul(&arr, &eye, MatProp::NONE, MatProp::NONE).to_vec(), a, "default again");
}

#[test]
fn products_leave_no_memory_behind() {
    let _serial = crate::serial();
    let a = Array::new(&vec![0.5f64; 300 * 200 * 2], dim4!(300, 200, 2));
    let b = Array::new(&vec![0.25f64; 200 * 100], dim4!(200, 100));
    let x = Array::new(&vec![1.0f64; 500], dim4!(1, 500));
    let work = || {
        let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE);
        let ct = matmul(&b, &a, MatProp::TRANS, MatProp::TRANS);
        let mut g = Array::new(&vec![1.0f64; 300 * 100 * 2], dim4!(300, 100, 2));
        gemm(&mut g, MatProp::NONE, MatProp::NONE, vec![2.0], &a, &b, vec![1.0]);
        let d = dot(&x, &x, MatProp::NONE, MatProp::NONE);
        (c.to_vec()[0], ct.to_vec()[0], g.to_vec()[0], d.to_vec()[0])
    };
    // the first products load the libraries and fill the caches
    let first = work();
    sync(get_device());
    let before = device_mem_info();
    for _ in 0..3 {
        assert_eq!(work(), first);
    }
    sync(get_device());
    let after = device_mem_info();
    assert_eq!(first, (25.0, 25.0, 51.0, 500.0));
    assert_eq!(
        (after.0, after.1),
        (before.0, before.1),
        "bytes and buffers allocated before and after products whose results were dropped"
    );
}
