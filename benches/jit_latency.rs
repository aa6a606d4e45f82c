//! Kernel compile and load latency on CUDA: the first evaluation of a never-seen tree (NVRTC
//! compile plus module load), and the same tree's first evaluation in a new process that finds
//! it in the disk cache. CUDA context creation and NVRTC loading are excluded by evaluating an
//! unrelated tree first. Then the host's cost of one small operation, in parts: building the
//! lazy node alone (`host_node`), evaluating it with the launches queued back to back
//! (`host_eval`, what `small_add_f32` in `peers.rs` measures), and evaluating it with a
//! synchronisation after each (`host_eval_sync`, the round trip). Prints
//! `case=<name> impl=emberfire ms=<ms>` lines.
//!
//! Usage: `cargo bench --bench jit_latency` (on a machine with a CUDA device).

use std::time::Instant;

use emberfire::{
    cos, dim4, exp, get_active_backend, get_device, jit_stats, sqrt, sync, Array, Backend,
};

/// The trees whose kernels are measured, in order; their shapes of operations appear nowhere
/// else. The first is the reported case; the others show how much one compile varies.
fn probes(a: &Array<f32>) -> [Array<f32>; 3] {
    [
        sqrt(&(exp(&(a * 0.25f32)) + cos(a) * 3.0f32)) - a / 7.0f32,
        exp(&(cos(a) * a)) / (a + 5.0f32),
        sqrt(&(a * a + 2.0f32)) * cos(&(a - 1.5f32)),
    ]
}

/// Milliseconds for the first evaluation of each probe, after warming up the device.
fn first_eval_ms() -> Vec<f64> {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
    (&a + 1.0f32).eval(); // context, NVRTC and an unrelated kernel
    sync(get_device());
    let mut times = Vec::new();
    for p in probes(&a) {
        let start = Instant::now();
        p.eval();
        sync(get_device());
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times
}

/// The case names of the probes' lines.
const CASES: [&str; 3] = ["", "_2", "_3"];

fn main() {
    if get_active_backend() != Backend::CUDA {
        eprintln!("jit_latency: compiles need the CUDA backend; host costs only");
        host_costs();
        return;
    }
    if std::env::var("EF_JIT_CHILD").is_ok() {
        let times = first_eval_ms();
        let s = jit_stats();
        assert_eq!(s.compiles, 0, "the child must find every kernel on disk");
        for (ms, case) in times.iter().zip(CASES) {
            println!("case=jit_disk_load{case} impl=emberfire ms={ms:.4}");
        }
        return;
    }
    let dir = std::env::temp_dir().join(format!("ef-jit-latency-{}", std::process::id()));
    let child_dir = dir.clone();
    // A fresh cache directory, so that the first compile is a real one. Set before the first
    // CUDA call of this process, which reads it.
    std::env::set_var("EMBERFIRE_KERNEL_CACHE", &dir);
    for (ms, case) in first_eval_ms().iter().zip(CASES) {
        println!("case=jit_compile{case} impl=emberfire ms={ms:.4}");
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env("EF_JIT_CHILD", "1")
        .env("EMBERFIRE_KERNEL_CACHE", &child_dir)
        .output()
        .expect("re-running the benchmark");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    host_costs();
}

/// Milliseconds per call of `f` over `reps` calls after 100 to warm up, with one
/// synchronisation at the end.
fn ms_per_call(reps: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..100 {
        f();
    }
    sync(get_device());
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    sync(get_device());
    start.elapsed().as_secs_f64() * 1e3 / reps as f64
}

/// The host's cost of a 1000-element addition, in parts (see the module documentation).
fn host_costs() {
    let values: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin()).collect();
    let a = Array::new(&values, dim4!(1000));
    let c = Array::new(&values, dim4!(1000));
    let reps = 20_000;
    let node = ms_per_call(reps, || drop(std::hint::black_box(&a + &c)));
    let eval = ms_per_call(reps, || (&a + &c).eval());
    let round_trip = ms_per_call(reps / 4, || {
        (&a + &c).eval();
        sync(get_device());
    });
    let check = (&a + &c).to_vec();
    assert!(check.iter().zip(&values).all(|(s, v)| (s - 2.0 * v).abs() <= 1e-6 * v.abs()));
    for (case, ms) in [("host_node", node), ("host_eval", eval), ("host_eval_sync", round_trip)] {
        println!("case={case}_f32 impl=emberfire ms={ms:.6}");
    }
}
