//! A custom CUDA kernel beside emberfire arrays: arrays made with emberfire, a kernel compiled
//! from CUDA C source at run time, launched first on emberfire's own stream (no
//! synchronisation at all), then on a stream of our own ordered with events, and the results
//! read back through emberfire. Every result is checked against the host.
//!
//! Run it with `cargo run -p emberfire-cuda-interop --example custom_kernel`. Without a CUDA
//! device it says so and exits successfully.

use emberfire::*;
use emberfire_cuda_interop as interop;
use interop::cudarc::driver::PushKernelArg;

// ANCHOR: source
/// `out[i] = x[i] * y[i] + bias`, one thread per element.
const MULTIPLY_ADD: &str = r#"
extern "C" __global__ void multiply_add(const float* x, const float* y, float* out,
                                        float bias, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * y[i] + bias;
}
"#;
// ANCHOR_END: source

pub fn main() -> interop::Result<()> {
    // ANCHOR: device
    if let Err(why) = interop::device_count() {
        println!("custom_kernel needs a CUDA device, and there is none here: {why}");
        return Ok(());
    }
    set_backend(Backend::CUDA);
    // ANCHOR_END: device

    // ANCHOR: arrays
    let n: u32 = 1 << 20;
    // Inputs computed by emberfire (lazily: nothing runs until the kernel needs them).
    let x = sin(&range::<f32>(dim4!(n as u64), 0)) * 2.0f32;
    let y = cos(&range::<f32>(dim4!(n as u64), 0)) + 1.0f32;
    let reference = |i: usize, bias: f32| {
        let t = i as f64;
        (t.sin() * 2.0) * (t.cos() + 1.0) + bias as f64
    };
    // ANCHOR_END: arrays

    // ANCHOR: own_stream
    // Compiled with NVRTC on first use and cached (in memory and on disk) like emberfire's
    // own kernels.
    let kernel = interop::RawKernel::new(MULTIPLY_ADD, "multiply_add");
    let out = Array::<f32>::new_empty(dim4!(n as u64)); // fresh memory for the kernel to write
    let cfg = interop::LaunchConfig::for_num_elems(n);
    // SAFETY: the arguments match the kernel's parameters, and `out` has n elements that no
    // other array shares.
    unsafe {
        kernel.launch(
            cfg,
            &[
                interop::arg(&x),
                interop::arg(&y),
                interop::arg(&out),
                interop::arg(0.5f32),
                interop::arg(n),
            ],
        )?;
    }
    // The kernel ran on emberfire's stream, after the work that computed `x` and `y` and
    // before this read: no synchronisation anywhere.
    let values = out.to_vec();
    for i in [0usize, 1, 2, 1000, (n - 1) as usize] {
        assert!((values[i] as f64 - reference(i, 0.5)).abs() < 1e-4, "element {i}");
    }
    let total = sum_all(&out).0;
    println!("on emberfire's stream: out[1] = {:.6}, sum = {total:.3}", values[1]);
    // ANCHOR_END: own_stream

    // ANCHOR: user_stream
    // The same kernel on a stream of our own, through raw device pointers, ordered with
    // events both ways: the host never waits.
    // The stream and the compiled kernel belong to the device the arrays live on.
    let device = emberfire::get_device();
    let mine = interop::context(device)?.new_stream()?;
    let out2 = Array::<f32>::new_empty(dim4!(n as u64));
    {
        let (gx, gy, gout) = (interop::lock(&x)?, interop::lock(&y)?, interop::lock(&out2)?);
        // Our stream waits for everything emberfire has queued (computing x, y, zeroing out2).
        interop::stream_wait_for_emberfire(&mine)?;
        let func = kernel.compile(device)?;
        let (px, py, pout, bias) = (gx.ptr(), gy.ptr(), gout.ptr(), 1.5f32);
        let mut launch = mine.launch_builder(func.function());
        launch.arg(&px).arg(&py).arg(&pout).arg(&bias).arg(&n);
        // SAFETY: the arguments match the kernel; the locked memory stays valid while the
        // guards live, and emberfire waits for our stream before it touches it again.
        unsafe { launch.launch(cfg) }?;
        // emberfire's next work waits for our stream: it will see the kernel's output.
        interop::emberfire_wait_for_stream(&mine)?;
    } // the guards unlock the three arrays here
    let values2 = out2.to_vec();
    for i in [0usize, 3, 4096, (n - 1) as usize] {
        assert!((values2[i] as f64 - reference(i, 1.5)).abs() < 1e-4, "element {i}");
    }
    println!("on our own stream:    out[1] = {:.6}", values2[1]);
    // ANCHOR_END: user_stream

    // ANCHOR: launch_on
    // RawKernel does the same ordering itself when given our stream.
    let out3 = Array::<f32>::new_empty(dim4!(n as u64));
    // SAFETY: as above.
    unsafe {
        kernel.launch_on(
            &mine,
            cfg,
            &[
                interop::arg(&x),
                interop::arg(&y),
                interop::arg(&out3),
                interop::arg(-1.0f32),
                interop::arg(n),
            ],
        )?;
    }
    let max_diff = max_all(&abs(&(&out3 - &out2))).0; // both differ by the bias: 2.5
    assert!((max_diff - 2.5).abs() < 1e-5, "{max_diff}");
    println!("launch_on our stream: out3 = out2 - 2.5 everywhere");
    // ANCHOR_END: launch_on
    Ok(())
}
