//! A crate of its own that depends on emberfire and emberfire-cuda-interop the way the README
//! says, as any application would: no profile setting of emberfire's reaches it. CI builds and
//! runs it in several profiles (`.ci/downstream`); every value it computes is checked against
//! the same computation in f64 on the host.

use emberfire::*;
use emberfire_cuda_interop as interop;

/// `out[i] = x[i] * y[i] + bias`, for the interop check on a CUDA device.
const MULTIPLY_ADD: &str = r#"
extern "C" __global__ void multiply_add(const float* x, const float* y, float* out,
                                        float bias, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * y[i] + bias;
}
"#;

fn main() -> interop::Result<()> {
    println!("backend: {:?}", get_active_backend());
    let n = 1000usize;
    let host: Vec<f32> = (0..n).map(|i| (i as f32) * 0.01 - 3.0).collect();

    // A fused element-wise expression.
    let x = Array::new(&host, dim4!(n as u64));
    let y = sin(&x) * cos(&x) + &x * 0.5f32 - 1.0f32;
    for (i, (&got, &v)) in y.to_vec().iter().zip(&host).enumerate() {
        let v = v as f64;
        let want = v.sin() * v.cos() + v * 0.5 - 1.0;
        assert!((got as f64 - want).abs() < 1e-5, "element {i}: {got} against {want}");
    }

    // A reduction over a lazy input.
    let (total, _) = sum_all(&(&x * &x));
    let want: f64 = host.iter().map(|&v| (v as f64) * (v as f64)).sum();
    assert!((total as f64 - want).abs() < 1e-5 * want, "sum {total} against {want}");

    // A matrix product, column-major: a is 3 x 2, b is 2 x 4.
    let (a_host, b_host): (Vec<f64>, Vec<f64>) =
        ((0..6).map(|i| i as f64 + 1.0).collect(), (0..8).map(|i| 0.5 - i as f64).collect());
    let a = Array::new(&a_host, dim4!(3, 2));
    let b = Array::new(&b_host, dim4!(2, 4));
    let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE).to_vec();
    for col in 0..4 {
        for row in 0..3 {
            let want: f64 = (0..2).map(|k| a_host[row + 3 * k] * b_host[k + 2 * col]).sum();
            let got = c[row + 3 * col];
            assert!((got - want).abs() < 1e-12, "c[{row}, {col}] = {got}, not {want}");
        }
    }

    // Sorting.
    let sorted = sort(&y, 0, true).to_vec();
    assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "sort is not ascending");

    // A kernel of one's own beside emberfire's arrays, where there is a CUDA device.
    match interop::device_count() {
        Ok(count) if count > 0 && get_active_backend() == Backend::CUDA => {
            let kernel = interop::RawKernel::new(MULTIPLY_ADD, "multiply_add");
            let out = Array::<f32>::new_empty(dim4!(n as u64));
            let cfg = interop::LaunchConfig::for_num_elems(n as u32);
            // SAFETY: the arguments match the kernel's parameters, and `out` has n elements
            // that no other array shares.
            unsafe {
                kernel.launch(
                    cfg,
                    &[
                        interop::arg(&x),
                        interop::arg(&x),
                        interop::arg(&out),
                        interop::arg(0.25f32),
                        interop::arg(n as u32),
                    ],
                )?;
            }
            for (i, (&got, &v)) in out.to_vec().iter().zip(&host).enumerate() {
                let want = (v as f64) * (v as f64) + 0.25;
                assert!((got as f64 - want).abs() < 1e-4, "kernel element {i}");
            }
            println!("interop: a kernel of our own on emberfire's stream, checked");
        }
        Ok(_) => println!("interop: the CUDA backend is not active here"),
        Err(why) => println!("interop: no CUDA device here ({why})"),
    }
    println!("downstream: all checks passed");
    Ok(())
}
