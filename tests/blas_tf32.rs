//! `set_cublas_mode`: TF32 tensor cores only when the user opts in, and full precision again
//! after `DEFAULT`. A test binary of its own (a process of its own) because the mode is global:
//! while it is `TENSOR_OP`, every f32 product in the process may round its inputs to TF32.

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
