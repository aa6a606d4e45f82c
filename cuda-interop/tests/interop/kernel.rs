//! `RawKernel`: compiled once and cached with emberfire's kernels, every element type as array
//! and scalar arguments, random shapes in four dimensions, empty arrays, strided inputs, and
//! the errors. Needs a CUDA device (skips without one).

use crate::common;

use emberfire::{c32, c64, dim4, f16, jit_stats, Array, Dim4, HasAfEnum};
use emberfire_cuda_interop::{
    self as interop, arg, cudarc::driver::CudaContext, Error, KernelArg, LaunchConfig, RawKernel,
};
use rand::Rng;

const REVERSE: &str = r#"
extern "C" __global__ void reverse(const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[n - 1 - i];
}
"#;

#[test]
fn a_kernel_compiles_once_and_later_ones_hit_the_cache() {
    let Some(_gpu) = common::cuda() else { return };
    let src = common::unique("cache", REVERSE);
    let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
    let cfg = LaunchConfig::for_num_elems(4);
    let before = jit_stats();
    let k1 = RawKernel::new(src.clone(), "reverse");
    let y1 = Array::<f32>::new_empty(dim4!(4));
    // SAFETY: reverse(const float*, float*, unsigned) over 4 elements; y1 is fresh.
    unsafe { k1.launch(cfg, &[arg(&x), arg(&y1), arg(4u32)]) }.unwrap();
    assert_eq!(y1.to_vec(), vec![4.0, 3.0, 2.0, 1.0]);
    let mid = jit_stats();
    assert_eq!(mid.compiles, before.compiles + 1, "the first launch compiles");
    // The same kernel again, and a second RawKernel with the same source: no compile.
    let y2 = Array::<f32>::new_empty(dim4!(4));
    // SAFETY: as above.
    unsafe { k1.launch(cfg, &[arg(&x), arg(&y2), arg(4u32)]) }.unwrap();
    let k2 = RawKernel::new(src, "reverse");
    let y3 = Array::<f32>::new_empty(dim4!(4));
    // SAFETY: as above.
    unsafe { k2.launch(cfg, &[arg(&y1), arg(&y3), arg(4u32)]) }.unwrap();
    assert_eq!(y3.to_vec(), vec![1.0, 2.0, 3.0, 4.0]);
    let after = jit_stats();
    assert_eq!(after.compiles, mid.compiles);
    assert!(after.memory_hits > mid.memory_hits, "the second RawKernel found it in memory");
}

/// `out[0] = v; out[i] = in[i]` for elements of `size` bytes: every element type passes
/// through as an array and as a scalar argument, bit for bit.
fn copy_and_put_source(size: usize) -> String {
    format!(
        "struct __align__({size}) elem {{ unsigned char b[{size}]; }};\n\
         extern \"C\" __global__ void copy_and_put(const elem* in, elem* out, elem v, unsigned n) {{\n\
             unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (i < n) out[i] = i == 0 ? v : in[i];\n\
         }}\n"
    )
}

fn round_trip<T>(values: Vec<T>, v: T)
where
    T: HasAfEnum + Copy + PartialEq + std::fmt::Debug,
    for<'a> KernelArg<'a>: From<T>,
{
    let n = values.len();
    let size = std::mem::size_of::<T>();
    let k = RawKernel::new(copy_and_put_source(size), "copy_and_put");
    let x = Array::new(&values, dim4!(n));
    let y = Array::<T>::new_empty(dim4!(n));
    // SAFETY: copy_and_put(const elem*, elem*, elem, unsigned) with elem of T's size and
    // alignment, over n elements; y is fresh.
    unsafe {
        k.launch(LaunchConfig::for_num_elems(n as u32), &[arg(&x), arg(&y), arg(v), arg(n as u32)])
    }
    .unwrap();
    let mut want = values.clone();
    want[0] = v;
    let got = y.to_vec();
    assert_eq!(got.len(), n);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        // Compare bits: NaNs and signed zeros must pass through unchanged too.
        // SAFETY: reading the bytes of plain values.
        let (gb, wb) = unsafe {
            (
                std::slice::from_raw_parts(g as *const T as *const u8, size),
                std::slice::from_raw_parts(w as *const T as *const u8, size),
            )
        };
        assert_eq!(gb, wb, "{:?}: element {i}: {g:?} vs {w:?}", T::get_af_dtype());
    }
}

#[test]
fn every_element_type_passes_as_array_and_scalar() {
    let Some(_gpu) = common::cuda() else { return };
    let mut r = common::rng("types");
    let n = 1000;
    round_trip((0..n).map(|_| r.gen_range(-1e3f32..1e3)).collect(), f32::NAN);
    round_trip((0..n).map(|_| r.gen_range(-1e3f64..1e3)).collect(), -0.0f64);
    round_trip((0..n).map(|_| c32::new(r.gen(), r.gen())).collect(), c32::new(1.5, -2.5));
    round_trip((0..n).map(|_| c64::new(r.gen(), r.gen())).collect(), c64::new(-3.25, 4.0));
    round_trip(
        (0..n).map(|_| f16::from_f32(r.gen_range(-10.0..10.0))).collect(),
        f16::from_f32(0.5),
    );
    round_trip((0..n).map(|_| r.gen::<bool>()).collect(), true);
    round_trip((0..n).map(|_| r.gen::<u8>()).collect(), 200u8);
    round_trip((0..n).map(|_| r.gen::<i16>()).collect(), -7i16);
    round_trip((0..n).map(|_| r.gen::<u16>()).collect(), 65_000u16);
    round_trip((0..n).map(|_| r.gen::<i32>()).collect(), i32::MIN);
    round_trip((0..n).map(|_| r.gen::<u32>()).collect(), u32::MAX);
    round_trip((0..n).map(|_| r.gen::<i64>()).collect(), i64::MIN + 1);
    round_trip((0..n).map(|_| r.gen::<u64>()).collect(), u64::MAX - 1);
    // One element: only the scalar.
    round_trip(vec![1.0f32], 2.0f32);
}

#[test]
fn random_shapes_in_four_dimensions() {
    let Some(_gpu) = common::cuda() else { return };
    let k = RawKernel::new(REVERSE, "reverse");
    let mut r = common::rng("shapes");
    for case in 0..24 {
        // Sizes 1..=9 along each dimension, with size-1 dimensions often.
        let d: [u64; 4] =
            std::array::from_fn(|_| if r.gen_bool(0.3) { 1 } else { r.gen_range(1..10) });
        let dims = Dim4::new(&d);
        let n = dims.elements() as usize;
        let values = common::random_f32(&format!("shape{case}"), n, 50.0);
        let x = Array::new(&values, dims) + 0.0f32; // lazy: evaluated for the kernel
        let y = Array::<f32>::new_empty(dims);
        // SAFETY: reverse over n elements; y is fresh.
        unsafe {
            k.launch(LaunchConfig::for_num_elems(n as u32), &[arg(&x), arg(&y), arg(n as u32)])
        }
        .unwrap();
        let want: Vec<f64> = values.iter().rev().map(|&v| v as f64).collect();
        common::assert_close(&format!("dims {dims}"), &y.to_vec(), &want, 0.0);
        assert_eq!(y.dims(), dims);
    }
}

#[test]
fn empty_and_strided_arrays() {
    let Some(_gpu) = common::cuda() else { return };
    let k = RawKernel::new(REVERSE, "reverse");
    // Empty: the kernel runs with n = 0 and touches nothing.
    let e = Array::<f32>::new_empty(dim4!(0));
    let f = Array::<f32>::new_empty(dim4!(0));
    // SAFETY: reverse with n = 0 reads and writes nothing.
    unsafe { k.launch(LaunchConfig::for_num_elems(1), &[arg(&e), arg(&f), arg(0u32)]) }.unwrap();
    assert!(f.to_vec().is_empty());
    // A strided layout (every third value, from offset 2) arrives contiguous.
    let values: Vec<f32> = (0..64).map(|i| i as f32 * 1.5 - 7.0).collect();
    let x = Array::new_strided(&values, 2, dim4!(4, 5), dim4!(3, 12, 60, 60));
    let y = Array::<f32>::new_empty(dim4!(4, 5));
    // SAFETY: reverse over 20 elements; y is fresh.
    unsafe { k.launch(LaunchConfig::for_num_elems(20), &[arg(&x), arg(&y), arg(20u32)]) }.unwrap();
    let mut picked = Vec::new();
    for j in 0..5 {
        for i in 0..4 {
            picked.push(values[2 + 3 * i + 12 * j] as f64);
        }
    }
    picked.reverse();
    common::assert_close("strided", &y.to_vec(), &picked, 0.0);
}

#[test]
fn kernel_errors_are_reported() {
    let Some(_gpu) = common::cuda() else { return };
    // A compile error carries NVRTC's log, every time (failures are not cached as kernels).
    let bad = RawKernel::new(
        common::unique("bad", "extern \"C\" __global__ void f() { undefined_name; }"),
        "f",
    );
    for _ in 0..2 {
        let e = bad.compile(common::dev()).unwrap_err();
        assert!(e.to_string().contains("undefined_name"), "{e}");
    }
    // A missing entry point.
    let wrong = RawKernel::new(REVERSE, "no_such_kernel");
    assert!(wrong.compile(common::dev()).is_err());
    // A stream of another context.
    let other = CudaContext::new_non_primary(common::dev() as usize, 0).unwrap();
    let theirs = other.new_stream().unwrap();
    let x = Array::new(&[1.0f32], dim4!(1));
    let k = RawKernel::new(REVERSE, "reverse");
    // SAFETY: refused before launching.
    let e = unsafe {
        k.launch_on(&theirs, LaunchConfig::for_num_elems(1), &[arg(&x), arg(&x), arg(1u32)])
    }
    .unwrap_err();
    assert_eq!(e, Error::WrongContext { function: "RawKernel::launch_on", what: "stream" });
    // Arrays of two devices, where there are two.
    if interop::device_count().unwrap() >= 2 {
        let other = if common::dev() == 0 { 1 } else { 0 };
        emberfire::set_device(other);
        let elsewhere = Array::new(&[1.0f32], dim4!(1));
        emberfire::set_device(common::dev());
        // SAFETY: refused before launching.
        let e = unsafe {
            k.launch(LaunchConfig::for_num_elems(1), &[arg(&x), arg(&elsewhere), arg(1u32)])
        }
        .unwrap_err();
        let (expected, found) = (common::dev(), other);
        assert_eq!(e, Error::WrongDevice { function: "RawKernel::launch", expected, found });
    }
}
