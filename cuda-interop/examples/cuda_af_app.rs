//! Adding emberfire to an existing CUDA application, in ArrayFire's seven steps, with events
//! where ArrayFire needs a full device synchronisation:
//!
//! 1. finish (order) the application's pending CUDA work,
//! 2. wrap its existing device memory as arrays,
//! 3. compute with emberfire,
//! 4. make emberfire finish (order) its work,
//! 5. take pointers to the results,
//! 6. continue the CUDA application with them,
//! 7. free what emberfire does not manage.
//!
//! Every value is checked against the host. Run it with
//! `cargo run -p emberfire-cuda-interop --example cuda_af_app`; without a CUDA device it says so
//! and exits successfully.

use std::sync::Arc;

use emberfire::*;
use emberfire_cuda_interop as interop;
use interop::cudarc::driver::{result as cu, PushKernelArg};

/// The application's own kernels: one that makes its data, one that consumes results.
const APP_KERNELS: &str = r#"
extern "C" __global__ void make_signal(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 0.001f * (float)i;
}
extern "C" __global__ void scale_into(const float* y, float* out, float factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = factor * y[i];
}
"#;

pub fn main() -> interop::Result<()> {
    if let Err(why) = interop::device_count() {
        println!("cuda_af_app needs a CUDA device, and there is none here: {why}");
        return Ok(());
    }
    set_backend(Backend::CUDA);
    set_device(0);

    // ANCHOR: application
    // The existing application: its own stream, its own memory, its own kernels.
    let n: u32 = 1 << 16;
    let app = interop::context(0)?.new_stream()?;
    let make_signal = interop::RawKernel::new(APP_KERNELS, "make_signal").compile(0)?;
    let scale_into = interop::RawKernel::new(APP_KERNELS, "scale_into").compile(0)?;
    let cfg = interop::LaunchConfig::for_num_elems(n);
    let mut signal = app.alloc_zeros::<f32>(n as usize)?;
    // SAFETY: `make_signal(float*, unsigned)` writes n floats into `signal`.
    unsafe { app.launch_builder(make_signal.function()).arg(&mut signal).arg(&n).launch(cfg) }?;
    // A second buffer allocated the classic way (cuMemAlloc), filled with weights.
    let weights: Vec<f32> = (0..n).map(|i| 1.0 + (i % 7) as f32).collect();
    // SAFETY: the context is current (alloc_zeros bound it); n floats are copied into the new
    // allocation on the application's stream, and the host vector outlives the copy (the
    // stream is ordered before emberfire below, and `weights` lives to the end of main).
    let raw_weights = unsafe {
        let p = cu::malloc_sync(n as usize * 4)?;
        cu::memcpy_htod_async(p, &weights, app.cu_stream())?;
        p
    };
    // ANCHOR_END: application

    // ANCHOR: step1
    // 1. The application's pending work (the kernel and the copy above) comes before
    //    emberfire's: an event, not a device synchronisation.
    interop::emberfire_wait_for_stream(&app)?;
    // ANCHOR_END: step1

    // ANCHOR: step2
    // 2. Wrap the existing memory: `signal` stays the application's (shared, never freed by
    //    emberfire); `raw_weights` is adopted (emberfire frees it, exactly once).
    let signal = Arc::new(signal);
    let x = interop::array_from_shared_slice(signal.clone(), dim4!(n))?;
    // SAFETY: a whole cuMemAlloc allocation of n initialised floats, ordered before emberfire
    // (step 1), that nothing else frees or uses from now on.
    let w = unsafe { interop::array_from_device_ptr(raw_weights as *mut f32, dim4!(n)) }?;
    // ANCHOR_END: step2

    // ANCHOR: step3
    // 3. Compute with emberfire.
    let y = (sin(&x) * &w + &x) / 2.0f32;
    // ANCHOR_END: step3

    // ANCHOR: step4
    // 4. emberfire finishes: evaluate, then order the application's stream after emberfire's
    //    work with an event (ArrayFire needs `af::sync()`, a host wait, here).
    y.eval();
    interop::stream_wait_for_emberfire(&app)?;
    // ANCHOR_END: step4

    // ANCHOR: step5
    // 5. Pointers to the results: locked until the guard drops.
    let y_mem = interop::lock(&y)?;
    let y_ptr = y_mem.ptr();
    // ANCHOR_END: step5

    // ANCHOR: step6
    // 6. The application continues with emberfire's result on its own stream.
    let mut scaled = app.alloc_zeros::<f32>(n as usize)?;
    let factor = 4.0f32;
    // SAFETY: `scale_into(const float*, float*, float, unsigned)` reads n floats at `y_ptr`
    // (locked) and writes n into `scaled`.
    unsafe {
        app.launch_builder(scale_into.function())
            .arg(&y_ptr)
            .arg(&mut scaled)
            .arg(&factor)
            .arg(&n)
            .launch(cfg)
    }?;
    let back = app.clone_dtoh(&scaled)?; // waits for the application's stream only
    for i in [0usize, 1, 6, 7, 1000, (n - 1) as usize] {
        let xi = 0.001 * i as f64;
        let expect = factor as f64 * (xi.sin() * (1.0 + (i % 7) as f64) + xi) / 2.0;
        assert!((back[i] as f64 - expect).abs() < 1e-4 * expect.abs().max(1.0), "element {i}");
    }
    println!("scaled[1000] = {:.6}", back[1000]);
    // ANCHOR_END: step6

    // ANCHOR: step7
    // 7. Free. emberfire's later work waits for the application's reads of `y`, then the lock
    //    is released; dropping the arrays frees the adopted weights (emberfire's), and the
    //    application frees its own buffers when their last owners drop.
    interop::emberfire_wait_for_stream(&app)?;
    drop(y_mem);
    drop((x, w, y));
    drop(scaled);
    assert_eq!(Arc::strong_count(&signal), 1, "emberfire let go of the shared signal");
    drop(signal);
    // ANCHOR_END: step7
    Ok(())
}
