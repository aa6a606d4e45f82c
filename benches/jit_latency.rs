//! Kernel compile and load latency on CUDA: the first evaluation of a never-seen tree (NVRTC
//! compile plus module load), and the same tree's first evaluation in a new process that finds
//! it in the disk cache. CUDA context creation and NVRTC loading are excluded by evaluating an
//! unrelated tree first. Prints `case=<name> impl=emberfire ms=<ms>` lines.
//!
//! Usage: `cargo bench --bench jit_latency` (on a machine with a CUDA device).

use std::time::Instant;

use emberfire::{
    cos, dim4, exp, get_active_backend, get_device, jit_stats, sqrt, sync, Array, Backend,
};

/// The tree whose kernel is measured; its shape of operations appears nowhere else.
fn probe(a: &Array<f32>) -> Array<f32> {
    sqrt(&(exp(&(a * 0.25f32)) + cos(a) * 3.0f32)) - a / 7.0f32
}

/// Milliseconds for the first evaluation of `probe`, after warming up the device.
fn first_eval_ms() -> f64 {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
    (&a + 1.0f32).eval(); // context, NVRTC and an unrelated kernel
    sync(get_device());
    let start = Instant::now();
    probe(&a).eval();
    sync(get_device());
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    if get_active_backend() != Backend::CUDA {
        eprintln!("jit_latency: needs the CUDA backend");
        return;
    }
    if std::env::var("EF_JIT_CHILD").is_ok() {
        let ms = first_eval_ms();
        let s = jit_stats();
        assert_eq!(s.compiles, 0, "the child must find every kernel on disk");
        println!("case=jit_disk_load impl=emberfire ms={ms:.4}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ef-jit-latency-{}", std::process::id()));
    let child_dir = dir.clone();
    // A fresh cache directory, so that the first compile is a real one. Set before the first
    // CUDA call of this process, which reads it.
    std::env::set_var("EMBERFIRE_KERNEL_CACHE", &dir);
    let ms = first_eval_ms();
    println!("case=jit_compile impl=emberfire ms={ms:.4}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env("EF_JIT_CHILD", "1")
        .env("EMBERFIRE_KERNEL_CACHE", &child_dir)
        .output()
        .expect("re-running the benchmark");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
