//! Races that the ordering prevents. Each test makes one side slow (a long emberfire
//! computation, or a user kernel that spins for milliseconds) and the other side quick to
//! start, on different streams, so that without the ordering the reader starts long before
//! the writer has finished and reads old values: the tests would fail on the first run. With
//! it, every one of many runs must be exact. Needs a CUDA device (skips without one).

use crate::common;

use emberfire::{cos, dim4, sin, Array};
use emberfire_cuda_interop::{
    self as interop, arg, cudarc::driver::PushKernelArg, LaunchConfig, RawKernel,
};

const KERNELS: &str = r#"
extern "C" __global__ void affine(const float* y, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * y[i] + 1.0f;
}
extern "C" __global__ void slow_fill(float* out, float value, unsigned n, long long cycles) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
    if (i < n) out[i] = value;
}
"#;

const N: usize = 1 << 22;
const RUNS: usize = 20;
/// Spin time of `slow_fill` per thread, in clock cycles (about a millisecond).
const SPIN: i64 = 2_000_000;
/// Elements checked against the host reference in each run.
const PROBES: [usize; 6] = [0, 1, 4097, N / 2, N - 2, N - 1];

/// Eight evaluations of a deep tree of transcendental functions (28 of them per element) over
/// 4M elements: about a millisecond of queued emberfire work, and the last kernel alone, which
/// writes the result, takes far longer than a launch.
fn long_computation(x: &Array<f32>, k: f32) -> Array<f32> {
    let mut y = x * k;
    for _ in 0..8 {
        let mut t = y.clone();
        for _ in 0..14 {
            t = sin(&cos(&t));
        }
        y = t * 0.5f32 + &y * 0.25f32;
        y.eval();
    }
    y
}

/// The same computation on the host, in f64, for element `i`.
fn long_reference(x: f32, k: f32) -> f64 {
    let mut y = x as f64 * k as f64;
    for _ in 0..8 {
        let mut t = y;
        for _ in 0..14 {
            t = t.cos().sin();
        }
        y = t * 0.5 + y * 0.25;
    }
    y
}

fn inputs() -> (Vec<f32>, Array<f32>) {
    let values = common::random_f32("races", N, 2.0);
    let x = Array::new(&values, dim4!(N));
    (values, x)
}

fn check_affine(run: usize, values: &[f32], k: f32, out: &[f32]) {
    for i in PROBES {
        let want = 2.0 * long_reference(values[i], k) + 1.0;
        let got = out[i] as f64;
        assert!((got - want).abs() < 1e-4, "run {run}, element {i}: {got}, expected {want}");
    }
}

/// emberfire computes on its stream; a user kernel on another stream reads the result after
/// `stream_wait_for_emberfire`, and emberfire's later work waits for it.
#[test]
fn the_event_helper_orders_a_user_kernel_after_emberfire() {
    let Some(_gpu) = common::cuda() else { return };
    let (values, x) = inputs();
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    let affine = RawKernel::new(KERNELS, "affine").compile(common::dev()).unwrap();
    let n = N as u32;
    for run in 0..RUNS {
        let k = 0.5 + run as f32 * 0.05;
        let y = long_computation(&x, k);
        let mut out = mine.alloc_zeros::<f32>(N).unwrap();
        let guard = interop::lock(&y).unwrap();
        let y_ptr = guard.ptr();
        interop::stream_wait_for_emberfire(&mine).unwrap();
        // SAFETY: affine(const float*, float*, unsigned) over N elements of locked memory.
        unsafe {
            mine.launch_builder(affine.function())
                .arg(&y_ptr)
                .arg(&mut out)
                .arg(&n)
                .launch(LaunchConfig::for_num_elems(n))
        }
        .unwrap();
        interop::emberfire_wait_for_stream(&mine).unwrap();
        drop(guard);
        drop(y);
        check_affine(run, &values, k, &mine.clone_dtoh(&out).unwrap());
    }
}

/// The same with emberfire computing on the user's stream: no helper at all.
#[test]
fn emberfire_on_the_users_stream_needs_no_ordering() {
    let Some(_gpu) = common::cuda() else { return };
    let (values, x) = inputs();
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    let affine = RawKernel::new(KERNELS, "affine").compile(common::dev()).unwrap();
    let n = N as u32;
    for run in 0..RUNS {
        let k = 0.55 + run as f32 * 0.05;
        let mut out = mine.alloc_zeros::<f32>(N).unwrap();
        interop::with_stream(&mine, || {
            let y = long_computation(&x, k);
            let guard = interop::lock(&y).unwrap();
            let y_ptr = guard.ptr();
            // SAFETY: as above; the kernel runs on the stream emberfire computed `y` on.
            unsafe {
                mine.launch_builder(affine.function())
                    .arg(&y_ptr)
                    .arg(&mut out)
                    .arg(&n)
                    .launch(LaunchConfig::for_num_elems(n))
            }
            .unwrap();
        })
        .unwrap();
        check_affine(run, &values, k, &mine.clone_dtoh(&out).unwrap());
    }
}

/// `RawKernel::launch_on` orders itself: the user's stream waits for the arrays' producers,
/// and emberfire waits for the kernel before reading its output.
#[test]
fn launch_on_a_users_stream_orders_itself() {
    let Some(_gpu) = common::cuda() else { return };
    let (values, x) = inputs();
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    let affine = RawKernel::new(KERNELS, "affine");
    for run in 0..RUNS {
        let k = 0.6 + run as f32 * 0.05;
        let y = long_computation(&x, k);
        let out = Array::<f32>::new_empty(dim4!(N));
        // SAFETY: affine(const float*, float*, unsigned); `out` is fresh and unshared.
        unsafe {
            affine.launch_on(
                &mine,
                LaunchConfig::for_num_elems(N as u32),
                &[arg(&y), arg(&out), arg(N as u32)],
            )
        }
        .unwrap();
        drop(y); // its memory may be reused at once: only after the kernel has read it
        let z = Array::<f32>::new_empty(dim4!(N)) + 3.0f32; // likely reuses it
        check_affine(run, &values, k, &out.to_vec());
        assert_eq!(z.to_vec()[N - 1], 3.0);
    }
}

/// The reverse direction: a slow user kernel writes an array's memory, and emberfire reads the
/// array after `emberfire_wait_for_stream`.
#[test]
fn the_event_helper_orders_emberfire_after_a_user_kernel() {
    let Some(_gpu) = common::cuda() else { return };
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    let slow_fill = RawKernel::new(KERNELS, "slow_fill").compile(common::dev()).unwrap();
    let n: u32 = 1 << 20;
    for run in 0..RUNS {
        let value = 1.0 + run as f32;
        let target = Array::<f32>::new_empty(dim4!(n)); // zeros
        {
            let guard = interop::lock(&target).unwrap();
            let ptr = guard.ptr();
            interop::stream_wait_for_emberfire(&mine).unwrap();
            // SAFETY: slow_fill(float*, float, unsigned, long long) over n elements of locked
            // memory that no other array shares.
            unsafe {
                mine.launch_builder(slow_fill.function())
                    .arg(&ptr)
                    .arg(&value)
                    .arg(&n)
                    .arg(&SPIN)
                    .launch(LaunchConfig::for_num_elems(n))
            }
            .unwrap();
            interop::emberfire_wait_for_stream(&mine).unwrap();
        }
        let doubled = (&target * 2.0f32).to_vec();
        assert!(
            doubled.iter().all(|&v| v == 2.0 * value),
            "run {run}: emberfire read before the user kernel wrote"
        );
    }
}

/// The reverse direction inside a scope: the slow user kernel and emberfire share the stream.
#[test]
fn a_slow_user_kernel_on_the_scope_stream_is_seen_by_emberfire() {
    let Some(_gpu) = common::cuda() else { return };
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    let slow_fill = RawKernel::new(KERNELS, "slow_fill");
    let n: u32 = 1 << 20;
    for run in 0..RUNS {
        let value = -1.0 - run as f32;
        let (inside, target) = interop::with_stream(&mine, || {
            let target = Array::<f32>::new_empty(dim4!(n));
            // SAFETY: as above; `launch` runs on the scope's stream.
            unsafe {
                slow_fill.launch(
                    LaunchConfig::for_num_elems(n),
                    &[arg(&target), arg(value), arg(n), arg(SPIN)],
                )
            }
            .unwrap();
            let wrong = target.to_vec().iter().filter(|&&v| v != value).count();
            (wrong, target)
        })
        .unwrap();
        assert_eq!(
            inside, 0,
            "run {run}: elements read inside the scope before the kernel wrote them"
        );
        // After the scope, on emberfire's own stream.
        assert!(target.to_vec().iter().all(|&v| v == value), "run {run}, read after the scope");
    }
}
