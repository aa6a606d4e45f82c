//! emberfire's side of the peer comparison: the same workloads as `../shared/bench/peers.py`
//! (CuPy and PyTorch, on a GPU) and `../shared/bench/peers_cpu.py` (NumPy, on the CPU), printed
//! in the same line format so that `compare.py` can put them side by side:
//!
//! ```text
//! case=<name> impl=emberfire ms=<median> gbs=<GB/s>
//! ```
//!
//! `gbs` counts the fewest bytes a case must move: each input read once, each output written
//! once. Sizes follow the peer scripts: 2^24 elements on the CPU, 2^26 on CUDA.
//!
//! Usage: `cargo bench --bench peers [-- --quick] [-- --cases chain_f32,axpy_f32]`. Arguments
//! other than `--quick` and `--cases` are ignored (cargo passes `--bench`).
//!
//! The cases that need operations emberfire does not have yet are not listed here: `sum_f32`
//! and `dot_f32` are added with reductions, the matrix cases with matmul and transposes,
//! `sort_f32` and `fft_c32` with those functions. `copy` is the peers' bandwidth ceiling and has
//! no emberfire line.

use std::time::Instant;

use emberfire::{cos, dim4, get_active_backend, get_device, sin, sync, Array, Backend};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// What the command line asked for.
struct Options {
    quick: bool,
    cases: Option<Vec<String>>,
}

impl Options {
    fn parse() -> Options {
        let mut opts = Options { quick: false, cases: None };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            if arg == "--quick" {
                opts.quick = true;
            } else if arg == "--cases" {
                opts.cases = args.next().map(|list| split_cases(&list));
            } else if let Some(list) = arg.strip_prefix("--cases=") {
                opts.cases = Some(split_cases(list));
            }
        }
        opts
    }

    fn wants(&self, case: &str) -> bool {
        match &self.cases {
            None => true,
            Some(list) => list.iter().any(|c| c == case),
        }
    }
}

fn split_cases(list: &str) -> Vec<String> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// Repetitions, matching the peer script of the backend: NumPy times 1 warm-up call and the
/// median of 15 (5 with `--quick`); the GPU peers time 3 warm-up calls and the median of 40
/// (10 with `--quick`).
struct Timing {
    warmup: usize,
    reps: usize,
}

/// Median wall time of `f` in milliseconds. `f` builds the expression, evaluates it and waits
/// for the device, so that asynchronous backends are timed to completion.
fn time_ms(t: &Timing, mut f: impl FnMut()) -> f64 {
    for _ in 0..t.warmup {
        f();
    }
    let mut times: Vec<f64> = (0..t.reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    if times.len() % 2 == 1 {
        times[mid]
    } else {
        (times[mid - 1] + times[mid]) / 2.0
    }
}

fn emit(case: &str, ms: f64, bytes: usize) {
    println!("case={case} impl=emberfire ms={ms:.4} gbs={:.2}", bytes as f64 / ms / 1e6);
}

/// `n` uniform random values in [0, 1), as the peers' inputs.
fn random_f32(n: usize, rng: &mut StdRng) -> Array<f32> {
    let values: Vec<f32> = (0..n).map(|_| rng.gen::<f32>()).collect();
    Array::new(&values, dim4!(n))
}

fn main() {
    let opts = Options::parse();
    let on_gpu = get_active_backend() == Backend::CUDA;
    let (n, timing) = if on_gpu {
        (1usize << 26, Timing { warmup: 3, reps: if opts.quick { 10 } else { 40 } })
    } else {
        (1usize << 24, Timing { warmup: 1, reps: if opts.quick { 5 } else { 15 } })
    };
    eprintln!("backend {:?}, device {}, N = {n}", get_active_backend(), get_device());

    let mut rng = StdRng::seed_from_u64(1);
    let x = random_f32(n, &mut rng);
    let y = random_f32(n, &mut rng);
    x.eval();
    y.eval();
    let device = get_device();

    if opts.wants("chain_f32") {
        let ms = time_ms(&timing, || {
            let r = sin(&x) * cos(&y) + &x * &y - 0.5f32;
            r.eval();
            sync(device);
        });
        emit("chain_f32", ms, 12 * n);
    }

    if opts.wants("axpy_f32") {
        let ms = time_ms(&timing, || {
            let r = 2.5f32 * &x + &y;
            r.eval();
            sync(device);
        });
        emit("axpy_f32", ms, 12 * n);
    }
}
