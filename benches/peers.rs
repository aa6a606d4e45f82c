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
//! Matrix products print `tflops=` (2·n³ flops per product) instead of `gbs=`. `fft_c32` is one
//! transform of 2^24 complex points on a GPU and of 2^20 on the CPU, as the peers time it.
//!
//! The image cases (`resize_half_f32` ... `sat_f32`) use a 4096 x 4096 image on a GPU and a
//! 2048 x 2048 one on the CPU, values in [0, 255), as the peer scripts do.
//!
//! `knn_f32` is `nearest_neighbour` with SSD and `k = 1`: 65,536 queries against 65,536
//! points of 64 dimensions on a GPU (4,096 of each on the CPU), printed in `tflops` of the
//! `2 nq np d` flops of the distance matrix, as the peers count it.
//!
//! `conv2_nn_f32` is a convolution layer (batch 32, 64 to 64 channels, 56 x 56, 3 x 3, stride 1,
//! padding 1) beside PyTorch's `conv2d` with TF32 off; on the CPU a batch of 4.
//!
//! `chain_bf16` and `matmul_bf16` are the `chain_f32` and `matmul_f32` workloads on bf16
//! (2 bytes an element, computed in f32 and rounded; products accumulate in f32); their peer
//! lines come from `benches/gpu/peers_bf16.py`.
//!
//! `copy` is the peers' bandwidth ceiling and has
//! no emberfire line.

use std::time::Instant;

use emberfire::{
    bf16, constant, convolve2, convolve2_nn, cos, dilate, dim4, erfc, eval_multiple, exp,
    gaussian_kernel, get_active_backend, get_device, histogram, log, matmul, medfilt, moddims,
    nearest_neighbour, resize, rgb2gray, sat, sin, sobel, sparse_from_host, sqrt, sum, sync,
    transpose, Array, Backend, BorderType, ConvDomain, ConvMode, InterpType, MatProp, MatchType,
    SparseFormat,
};
use rand::{rngs::StdRng, Rng, SeedableRng};

#[path = "common/poisson.rs"]
mod poisson;
use poisson::poisson_csr;

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
    /// Calls per timed sample. On a GPU the peers time each call with CUDA events, which see
    /// only the device's work; queueing `batch` calls and waiting once measures the same thing
    /// (the host prepares the next launch while the device runs the previous one).
    batch: usize,
}

/// Median time of one call of `f` in milliseconds. `f` builds the expression and evaluates it;
/// the device is waited for after each batch, so asynchronous backends are timed to completion.
fn time_ms(t: &Timing, mut f: impl FnMut()) -> f64 {
    let device = get_device();
    for _ in 0..t.warmup {
        f();
    }
    sync(device);
    let mut times: Vec<f64> = (0..t.reps)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..t.batch {
                f();
            }
            sync(device);
            start.elapsed().as_secs_f64() * 1e3 / t.batch as f64
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

/// A matrix-product line: `tflops` counts `flops` multiply-adds times two, as the peers do.
fn emit_flops(case: &str, ms: f64, flops: f64) {
    println!("case={case} impl=emberfire ms={ms:.4} tflops={:.4}", flops / ms / 1e9);
}

/// A `side`×`side` matrix of uniform random values in [0, 1), as the peers' inputs.
fn random_square<T: emberfire::HasAfEnum>(
    side: usize,
    rng: &mut StdRng,
    f: fn(f64) -> T,
) -> Array<T> {
    let values: Vec<T> = (0..side * side).map(|_| f(rng.gen::<f64>())).collect();
    let a = Array::new(&values, dim4!(side, side));
    a.eval();
    a
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
        (1usize << 26, Timing { warmup: 3, reps: if opts.quick { 10 } else { 40 }, batch: 10 })
    } else {
        (1usize << 24, Timing { warmup: 1, reps: if opts.quick { 5 } else { 15 }, batch: 1 })
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
        });
        emit("chain_f32", ms, 12 * n);
    }

    if opts.wants("chain_bf16") {
        // the same expression and inputs, rounded to bf16; the scalar is bf16 too, so that the
        // whole chain stays bf16 (an f32 scalar would promote it to f32)
        let (xb, yb) = (x.cast::<bf16>(), y.cast::<bf16>());
        eval_multiple(vec![&xb, &yb]);
        let half = bf16::from_f32(0.5);
        let ms = time_ms(&timing, || {
            let r = sin(&xb) * cos(&yb) + &xb * &yb - half;
            r.eval();
        });
        emit("chain_bf16", ms, 6 * n);
    }

    if opts.wants("axpy_f32") {
        let ms = time_ms(&timing, || {
            let r = 2.5f32 * &x + &y;
            r.eval();
        });
        emit("axpy_f32", ms, 12 * n);
    }

    // Reductions return a one-element array, as the peers' `x.sum()` returns a device scalar
    // (a host read would add a transfer and a wait that the peers do not time).
    if opts.wants("sum_f32") {
        let ms = time_ms(&timing, || {
            sum(&x, 0).eval();
        });
        emit("sum_f32", ms, 4 * n);
    }

    if opts.wants("dot_f32") {
        // fused: `x * y` is folded as it is computed and never stored
        let ms = time_ms(&timing, || {
            sum(&(&x * &y), 0).eval();
        });
        emit("dot_f32", ms, 8 * n);
    }

    // An M x M matrix reduced along its contiguous dimension (0; the peers' row-major axis 1)
    // and along its strided one (1; their axis 0).
    let side = if on_gpu { 8192 } else { 2048 };
    if opts.wants("sum_contig_f32") || opts.wants("sum_strided_f32") {
        let values: Vec<f32> = (0..side * side).map(|_| rng.gen::<f32>()).collect();
        let m = Array::new(&values, dim4!(side as u64, side as u64));
        drop(values);
        if opts.wants("sum_contig_f32") {
            let ms = time_ms(&timing, || {
                sum(&m, 0).eval();
            });
            emit("sum_contig_f32", ms, 4 * side * side);
        }
        if on_gpu && opts.wants("sum_strided_f32") {
            let ms = time_ms(&timing, || {
                sum(&m, 1).eval();
            });
            emit("sum_strided_f32", ms, 4 * side * side);
        }
    }

    if opts.wants("sort_f32") {
        // ascending sort of the uniform input into a new array (np.sort / cp.sort)
        let ms = time_ms(&timing, || {
            emberfire::sort(&x, 0, true).eval();
        });
        emit("sort_f32", ms, 8 * n);
    }

    if on_gpu && opts.wants("blackscholes_f32") {
        // three inputs, two outputs, one kernel (the peers' sizes and value ranges)
        let b = 1usize << 25;
        let s = random_f32(b, &mut rng) * 90.0f32 + 10.0f32;
        let k = random_f32(b, &mut rng) * 90.0f32 + 10.0f32;
        let t = random_f32(b, &mut rng) * 2.0f32 + 0.1f32;
        eval_multiple(vec![&s, &k, &t]);
        let ms = time_ms(&timing, || {
            let (call, put) = black_scholes(&s, &k, &t, 0.02, 0.30);
            eval_multiple(vec![&call, &put]);
        });
        emit("blackscholes_f32", ms, 20 * b);
    }

    // As the GPU peers do: 3 warm-up products, then 10 timed one at a time. (Queueing more
    // runs the GPU long enough to lower its clocks: 130 queued f64 products time 8 % slower
    // than 13, for PyTorch and emberfire alike.)
    let matmul_timing =
        if on_gpu { Timing { warmup: 3, reps: 10, batch: 1 } } else { Timing { ..timing } };

    if opts.wants("matmul_f32") {
        // 8192 on a GPU (peers.py), 2048 on the CPU (peers_cpu.py)
        let side = if on_gpu { 8192 } else { 2048 };
        let a = random_square(side, &mut rng, |v| v as f32);
        let b = random_square(side, &mut rng, |v| v as f32);
        let ms = time_ms(&matmul_timing, || matmul(&a, &b, MatProp::NONE, MatProp::NONE).eval());
        emit_flops("matmul_f32", ms, 2.0 * (side as f64).powi(3));
    }

    if opts.wants("matmul_bf16") {
        // 8192 on a GPU (peers_bf16.py: torch.matmul on bf16), 2048 on the CPU
        let side = if on_gpu { 8192 } else { 2048 };
        let a = random_square(side, &mut rng, bf16::from_f64);
        let b = random_square(side, &mut rng, bf16::from_f64);
        let ms = time_ms(&matmul_timing, || matmul(&a, &b, MatProp::NONE, MatProp::NONE).eval());
        emit_flops("matmul_bf16", ms, 2.0 * (side as f64).powi(3));
    }

    if on_gpu && opts.wants("matmul_f64") {
        let side = 4096;
        let a = random_square(side, &mut rng, |v| v);
        let b = random_square(side, &mut rng, |v| v);
        let ms = time_ms(&matmul_timing, || matmul(&a, &b, MatProp::NONE, MatProp::NONE).eval());
        emit_flops("matmul_f64", ms, 2.0 * (side as f64).powi(3));
    }

    if on_gpu && opts.wants("randu_f32") {
        // 2^26 uniform f32 from the default (Philox) engine, as the peers' `torch.rand(N)`;
        // only the output is written (peers_cpu.py has no such case, so the CPU skips it)
        let ms = time_ms(&timing, || {
            emberfire::randu::<f32>(dim4!(n)).eval();
        });
        emit("randu_f32", ms, 4 * n);
    }

    if opts.wants("fft_c32") {
        // one transform of complex f32 points, out of place: read once, written once
        let points = if on_gpu { 1usize << 24 } else { 1 << 20 };
        let values: Vec<emberfire::c32> = (0..points)
            .map(|_| emberfire::c32::new(rng.gen::<f32>() - 0.5, rng.gen::<f32>() - 0.5))
            .collect();
        let z = Array::new(&values, dim4!(points));
        z.eval();
        let ms = time_ms(&timing, || {
            emberfire::fft(&z, 1.0, 0).eval();
        });
        emit("fft_c32", ms, 16 * points);
    }

    if opts.wants("transpose_f32") {
        // a materialised transpose, as the peers' `ascontiguousarray(a.T)` / `t().contiguous()`:
        // the peers' matrix sides (8192 on a GPU, 2048 on the CPU); read once, written once
        let m = if on_gpu { 8192 } else { 2048 };
        let a = moddims(&random_f32(m * m, &mut rng), dim4!(m, m));
        a.eval();
        let ms = time_ms(&timing, || {
            transpose(&a, false).eval();
        });
        emit("transpose_f32", ms, 8 * m * m);
    }

    if opts.wants("spmv_csr_f32") {
        // y = A x for the 5-point Laplacian of a 2048 x 2048 grid in CSR (1024 x 1024 on the
        // CPU, as the NumPy peer); bytes: values and column indices, row offsets, x and y once
        let side = if on_gpu { 2048 } else { 1024 };
        let rows = side * side;
        let (v, off, col) = poisson_csr(side);
        let nnz = v.len();
        let a = sparse_from_host(
            rows as u64,
            rows as u64,
            nnz as u64,
            &v,
            &off,
            &col,
            SparseFormat::CSR,
        );
        let x = random_f32(rows, &mut rng);
        x.eval();
        let ms = time_ms(&timing, || matmul(&a, &x, MatProp::NONE, MatProp::NONE).eval());
        emit("spmv_csr_f32", ms, nnz * 8 + (rows + 1) * 4 + rows * 8);
    }
    if opts.wants("conv2_nn_f32") {
        // A convolution layer: 64 -> 64 channels of 56 x 56, 3 x 3 filters, stride 1, padding
        // 1. PyTorch's NCHW input (32, 64, 56, 56) is emberfire's [56, 56, 64, 32] with no
        // copy, and its (64, 64, 3, 3) weight our [3, 3, 64, 64] filter bank. A batch of 32
        // on a GPU, as the peer; 4 on the CPU (no NumPy peer; flops count the batch run).
        let batch = if on_gpu { 32 } else { 4 };
        let x =
            moddims(&random_f32(56 * 56 * 64 * batch, &mut rng), dim4!(56, 56, 64, batch as u64));
        let w = moddims(&random_f32(3 * 3 * 64 * 64, &mut rng), dim4!(3, 3, 64, 64));
        x.eval();
        w.eval();
        let ms = time_ms(&timing, || {
            convolve2_nn(&x, &w, dim4!(1, 1), dim4!(1, 1), dim4!(1, 1)).eval();
        });
        emit_flops("conv2_nn_f32", ms, 2.0 * (batch * 64 * 64 * 9 * 56 * 56) as f64);
    }
    image_cases(&opts, &timing, on_gpu, &mut rng);
    if opts.wants("knn_f32") {
        // the nearest of 65,536 points for each of 65,536 queries, 64 dimensions, SSD
        // (4,096 of each on the CPU, which has no peer for it); the peers time 10 calls
        let (nq, d) = (if on_gpu { 65_536 } else { 4_096 }, 64);
        let queries = moddims(&random_f32(nq * d, &mut rng), dim4!(d, nq));
        let points = moddims(&random_f32(nq * d, &mut rng), dim4!(d, nq));
        queries.eval();
        points.eval();
        let knn_timing = Timing { warmup: timing.warmup.min(3), reps: 10, batch: 1 };
        let ms = time_ms(&knn_timing, || {
            let (idx, dist) = nearest_neighbour(&queries, &points, 0, 1, MatchType::SSD);
            eval_multiple(vec![&dist]);
            eval_multiple(vec![&idx]);
        });
        emit_flops("knn_f32", ms, 2.0 * (nq * nq * d) as f64);
    }
    if on_gpu && opts.wants("small_add_f32") {
        // latency of one small evaluated operation, in the peers' unit (ms per op); last, as in
        // the peers' script: right after the long matrix products it measured twice as slow
        let a = random_f32(1000, &mut rng);
        let c = random_f32(1000, &mut rng);
        let reps = 10_000;
        for _ in 0..100 {
            (&a + &c).eval();
        }
        sync(device);
        let start = Instant::now();
        for _ in 0..reps {
            (&a + &c).eval();
        }
        sync(device);
        let ms = start.elapsed().as_secs_f64() * 1e3 / reps as f64;
        println!("case=small_add_f32 impl=emberfire ms={ms:.6}");
    }
}

/// The image-processing cases, each written as an arrayfire-rust user writes it.
fn image_cases(opts: &Options, timing: &Timing, on_gpu: bool, rng: &mut StdRng) {
    const IMAGE_CASES: [&str; 9] = [
        "resize_half_f32",
        "resize_double_f32",
        "gauss5_f32",
        "medfilt3_f32",
        "dilate5_f32",
        "sobel_f32",
        "histogram_u8",
        "rgb2gray_f32",
        "sat_f32",
    ];
    if !IMAGE_CASES.iter().any(|c| opts.wants(c)) {
        return;
    }
    let side = if on_gpu { 4096usize } else { 2048 };
    let p = side * side;
    let (half, double) = (side as i64 / 2, 2 * side as i64);
    let values: Vec<f32> = (0..p).map(|_| rng.gen::<f32>() * 255.0).collect();
    let img = Array::new(&values, dim4!(side, side));
    img.eval();
    let time = |case: &str, bytes: usize, f: &mut dyn FnMut()| {
        if opts.wants(case) {
            emit(case, time_ms(timing, f), bytes);
        }
    };
    time("resize_half_f32", 5 * p, &mut || {
        resize(&img, half, half, InterpType::BILINEAR).eval();
    });
    time("resize_double_f32", 20 * p, &mut || {
        resize(&img, double, double, InterpType::BILINEAR).eval();
    });
    let gauss = gaussian_kernel(5, 5, 1.0, 1.0);
    time("gauss5_f32", 8 * p, &mut || {
        convolve2(&img, &gauss, ConvMode::DEFAULT, ConvDomain::SPATIAL).eval();
    });
    time("medfilt3_f32", 8 * p, &mut || {
        medfilt(&img, 3, 3, BorderType::ZERO).eval();
    });
    let square = constant(1.0f32, dim4!(5, 5));
    time("dilate5_f32", 8 * p, &mut || {
        dilate(&img, &square).eval();
    });
    time("sobel_f32", 12 * p, &mut || {
        let (dx, dy) = sobel(&img, 3);
        eval_multiple(vec![&dx, &dy]);
    });
    if opts.wants("histogram_u8") {
        let levels: Array<u8> = img.cast();
        levels.eval();
        time("histogram_u8", p, &mut || {
            histogram(&levels, 256, 0.0, 255.0).eval();
        });
    }
    if opts.wants("rgb2gray_f32") {
        let planes: Vec<f32> = (0..3 * p).map(|_| rng.gen::<f32>()).collect();
        let rgb = Array::new(&planes, dim4!(side, side, 3));
        rgb.eval();
        time("rgb2gray_f32", 16 * p, &mut || {
            rgb2gray(&rgb, 0.2126, 0.7152, 0.0722).eval();
        });
    }
    time("sat_f32", 8 * p, &mut || {
        sat(&img).eval();
    });
}

/// The cumulative normal distribution through `erfc`, as the peers write it.
fn cnd(d: &Array<f32>) -> Array<f32> {
    0.5f32 * erfc(&(d * (-std::f32::consts::FRAC_1_SQRT_2)))
}

/// Black-Scholes call and put prices for spot `s`, strike `k`, years `t`, rate `r`, volatility
/// `v`.
fn black_scholes(
    s: &Array<f32>,
    k: &Array<f32>,
    t: &Array<f32>,
    r: f32,
    v: f32,
) -> (Array<f32>, Array<f32>) {
    let sqrt_t = sqrt(t);
    let d1 = (log(&(s / k)) + (r + 0.5 * v * v) * t) / &(v * &sqrt_t);
    let d2 = &d1 - &(v * &sqrt_t);
    let discount = k * &exp(&(-r * t));
    let call = s * &cnd(&d1) - &discount * &cnd(&d2);
    let put = &discount * &cnd(&(-&d2)) - s * &cnd(&(-&d1));
    (call, put)
}
