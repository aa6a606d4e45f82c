//! The code of the book's "Element types" chapter on bf16: values and their rounding, fused
//! arithmetic computed in f32, reductions and products that accumulate in f32, and a DLPack
//! exchange. Every result is checked, so running the example verifies the chapter.

use emberfire::dlpack;
use emberfire::*;

fn main() {
    // ANCHOR: values
    // bf16 keeps f32's exponent and 8 significant bits: every integer up to 256 is exact,
    // 257 is halfway between 256 and 258 and rounds to the even one.
    let n = Array::new(&[255.0f64, 256.0, 257.0, 259.0, 1e38, 1e39], dim4!(6));
    let b = n.cast::<bf16>();
    assert_eq!(b.get_type(), DType::BF16);
    let back = b.cast::<f64>().to_vec();
    assert_eq!(&back[..4], &[255.0, 256.0, 256.0, 260.0]);
    assert!((back[4] - 1e38).abs() / 1e38 < 1.0 / 256.0); // f32's range, bf16's precision
    assert!(back[5].is_infinite()); // beyond f32's range too
                                    // ANCHOR_END: values

    // ANCHOR: compute
    // Element-wise work is computed in f32 and each operation's result is rounded once to
    // bf16, on the CPU and in the CUDA kernels alike (the same bits where the f32 results agree).
    let x = Array::new(&[bf16::from_f32(1.5), bf16::from_f32(-2.0), bf16::from_f32(0.1)], dim4!(3));
    let y = &x * &x + bf16::from_f32(1.0); // one fused kernel
    assert_eq!(y.get_type(), DType::BF16);
    let got: Vec<f32> = y.to_vec().iter().map(|v| v.to_f32()).collect();
    assert_eq!(got[0], 3.25);
    assert_eq!(got[1], 5.0);
    assert!((got[2] - 1.01).abs() < 1.0 / 128.0); // within bf16's half ulp at 1
                                                  // with f32 (or f16) the result is f32, as PyTorch promotes them
    let z = &x * 0.5f32;
    assert_eq!(z.get_type(), DType::F32);
    // ANCHOR_END: compute

    // ANCHOR: accumulate
    // Sums, scans and products accumulate in at least f32: 4096 ones add up to 4096, where
    // a bf16 accumulator would stall at 256.
    let ones = constant(bf16::ONE, dim4!(4096));
    assert_eq!(sum_all(&ones).0, 4096.0);
    assert_eq!(accum(&ones, 0).to_vec()[4095], 4096.0f32); // a bf16 sum is f32
    let m = constant(bf16::ONE, dim4!(64, 4096));
    let k = constant(bf16::ONE, dim4!(4096, 8));
    let p = matmul(&m, &k, MatProp::NONE, MatProp::NONE); // GemmEx on CUDA, f32 accumulation
    assert_eq!(p.get_type(), DType::BF16);
    assert!(p.to_vec().iter().all(|v| v.to_f32() == 4096.0));
    let mu = mean(&x, 0); // the mean of bf16 values is bf16
    assert!((mu.to_vec()[0].to_f32() - (1.5 - 2.0 + 0.1) / 3.0).abs() < 1e-3);
    // ANCHOR_END: accumulate

    // ANCHOR: exchange
    // DLPack carries bf16 as kDLBfloat of 16 bits, which PyTorch and JAX read as their bfloat16.
    let t = dlpack::dl_data_type(DType::BF16);
    assert_eq!((t.code, t.bits, t.lanes), (4, 16, 1));
    let tensor = dlpack::to_dlpack(&x).unwrap();
    // SAFETY: a live tensor from `to_dlpack`; `from_dlpack` takes it over.
    let again: Array<bf16> = unsafe { dlpack::from_dlpack(tensor, None) }.unwrap();
    assert_eq!(again.to_vec(), x.to_vec());
    // ANCHOR_END: exchange
}
