//! Whole programs: emberfire's side of `../shared/bench/apps.py`, small numerical programs in
//! the style of ArrayFire's example programs, each written the way a user porting those
//! programs to emberfire would write them (arrayfire-rust's API, nothing emberfire-specific).
//!
//! ```text
//! cargo bench --bench apps [-- --quick] [-- --cases pi_f32,heat2d_f32]   # warm
//! cargo bench --bench apps -- --cold CASE                               # one first run
//! ```
//!
//! Lines, as apps.py prints them:
//!
//! ```text
//! case=<name> impl=emberfire ms=<median>        (warm: median of 15 whole runs after 2)
//! case=<name> impl=emberfire cold_ms=<ms>       (cold: the first run of this process)
//! ```
//!
//! Timing starts once the inputs exist on the device and ends when the result is on the host;
//! random numbers drawn inside a case are part of it. A cold run is the first run of a fresh
//! process: point `EMBERFIRE_KERNEL_CACHE` at an empty folder for a cold start with nothing
//! compiled, or at the folder an earlier run filled for a start from the disk cache
//! (`benches/gpu/apps.sh` does both, beside the peers).
//!
//! On the CPU backend (`EMBERFIRE_BACKEND=cpu`, or no GPU) the sizes are smaller, as
//! `benches/numpy_apps.py` runs them with NumPy; each case's doc says both.

use std::time::Instant;

use emberfire::{
    and, col, constant, count_all, dim4, dot, eq, exp, get_active_backend, imin, join, lt, matmul,
    maxof, mean_all, or, product, randn, randu, range, rsqrt, select, shift, sparse_from_host, sub,
    sum, sum_all, sync, tile, transpose, Array, Backend, MatProp, SparseFormat,
};
use rand::{rngs::StdRng, Rng, SeedableRng};

#[path = "common/poisson.rs"]
mod poisson;
use poisson::poisson_csr;

/// Problem sizes: apps.py's on a GPU, smaller on the CPU so that a run takes seconds.
struct Sizes {
    /// pi_f32: points.
    pi_n: u64,
    /// mc_barrier_f32: paths.
    mc_paths: u64,
    /// kmeans_f32: points.
    km_points: u64,
    /// nbody_f32: bodies.
    bodies: u64,
    /// conway_u8: side of the square world, and generations.
    life_side: u64,
    life_gens: usize,
    /// heat2d_f32: side of the square grid, and steps.
    heat_side: u64,
    heat_steps: usize,
    /// cg_poisson_f32: side of the square grid (the matrix has side² rows).
    cg_side: u64,
}

impl Sizes {
    fn for_backend(gpu: bool) -> Sizes {
        if gpu {
            Sizes {
                pi_n: 1 << 26,
                mc_paths: 1 << 20,
                km_points: 1 << 20,
                bodies: 16384,
                life_side: 4096,
                life_gens: 100,
                heat_side: 4096,
                heat_steps: 200,
                cg_side: 1024,
            }
        } else {
            Sizes {
                pi_n: 1 << 24,
                mc_paths: 1 << 16,
                km_points: 1 << 18,
                bodies: 2048,
                life_side: 1024,
                life_gens: 20,
                heat_side: 1024,
                heat_steps: 20,
                cg_side: 512,
            }
        }
    }
}

/// What the command line asked for.
struct Options {
    quick: bool,
    cases: Option<Vec<String>>,
    cold: Option<String>,
}

impl Options {
    fn parse() -> Options {
        let mut opts = Options { quick: false, cases: None, cold: None };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => opts.quick = true,
                "--cases" => {
                    opts.cases = args.next().map(|l| l.split(',').map(String::from).collect())
                }
                "--cold" => opts.cold = args.next(),
                _ => {} // cargo passes `--bench`
            }
        }
        opts
    }

    fn wants(&self, case: &str) -> bool {
        match (&self.cold, &self.cases) {
            (Some(c), _) => c == case,
            (None, Some(list)) => list.iter().any(|c| c == case),
            (None, None) => true,
        }
    }
}

/// Times `f` as apps.py does and prints the line: the first run alone when cold, else the
/// median of whole runs after two warm-up runs. `f` returns a value from the host so that
/// nothing is left queued.
fn run<R>(opts: &Options, case: &str, mut f: impl FnMut() -> R) -> R {
    sync(-1);
    if opts.cold.is_some() {
        let t = Instant::now();
        let r = f();
        println!("case={case} impl=emberfire cold_ms={:.1}", t.elapsed().as_secs_f64() * 1e3);
        return r;
    }
    let reps = if opts.quick { 5 } else { 15 };
    let mut r = f();
    r = {
        drop(r);
        f()
    };
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        drop(r);
        let t = Instant::now();
        r = f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!("case={case} impl=emberfire ms={:.4}", times[reps / 2]);
    r
}

/// ArrayFire's benchmarks/pi: the share of uniform points in the unit square that fall inside
/// the quarter circle, times 4. GPU 2^26 points, CPU 2^24.
fn pi(n: u64) -> f64 {
    let x = randu::<f32>(dim4!(n));
    let y = randu::<f32>(dim4!(n));
    let inside = lt(&(&x * &x + &y * &y), &1.0f32, false);
    4.0 * count_all(&inside).0 as f64 / n as f64
}

/// ArrayFire's financial/monte_carlo_options with a barrier: a European call on paths of
/// geometric Brownian motion that die when they end above the barrier. GPU 2^20 paths, CPU
/// 2^16; 180 steps.
fn mc_barrier(paths: u64) -> f64 {
    let (steps, s0, k, t, vol, r, barrier) =
        (180u64, 100.0f32, 100.0f32, 0.5f32, 0.3f32, 0.01f32, 115.0f32);
    let dt = t / (steps - 1) as f32;
    let z = randn::<f32>(dim4!(paths, steps - 1));
    let growth = exp(&(z * (vol * dt.sqrt()) + (r - vol * vol * 0.5) * dt));
    let s = product(&growth, 1) * s0;
    let s = &s * &lt(&s, &barrier, false).cast::<f32>();
    let payoff = maxof(&(&s - k), &constant(0.0f32, s.dims()), false);
    mean_all(&payoff).0 * (-(r * t) as f64).exp()
}

/// Lloyd's k-means: each point to its nearest centroid (squared distance), each centroid to
/// the mean of its points (kept when it has none). `x` is points by dimensions (16), `c`
/// clusters (32) by dimensions; 10 iterations. GPU 2^20 points, CPU 2^18.
fn kmeans(x: &Array<f32>, c0: &Array<f32>, iters: usize) -> Vec<f32> {
    let k = c0.dims()[0];
    let xx = sum(&(x * x), 1); // points x 1
    let mut c = c0.copy();
    for _ in 0..iters {
        let cc = transpose(&sum(&(&c * &c), 1), false); // 1 x clusters
        let xc = matmul(x, &c, MatProp::NONE, MatProp::TRANS); // points x clusters
        let d = emberfire::add(&sub(&xx, &(xc * 2.0f32), true), &cc, true);
        let (_, nearest) = imin(&d, 1); // points x 1
        let onehot = eq(&nearest, &range::<u32>(dim4!(1, k), 1), true).cast::<f32>();
        let sums = matmul(&onehot, x, MatProp::TRANS, MatProp::NONE); // clusters x dims
        let counts = transpose(&sum(&onehot, 0), false); // clusters x 1
        let means = emberfire::div(&sums, &counts, true);
        let has = tile(&lt(&0.0f32, &counts, false), dim4!(1, x.dims()[1]));
        c = select(&means, &has, &c);
    }
    c.to_vec()
}

/// One step of all-pairs gravity: a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2),
/// with `pos` bodies by 3 and `m` bodies by 1. GPU 16384 bodies, CPU 2048.
fn nbody(pos: &Array<f32>, m: &Array<f32>) -> Vec<f32> {
    let eps2 = 1e-6f32;
    let (x, y, z) = (col(pos, 0), col(pos, 1), col(pos, 2));
    // (i, j) holds the coordinate of body j minus that of body i
    let dx = sub(&transpose(&x, false), &x, true);
    let dy = sub(&transpose(&y, false), &y, true);
    let dz = sub(&transpose(&z, false), &z, true);
    let inv = rsqrt(&(&dx * &dx + &dy * &dy + &dz * &dz + eps2));
    let w = emberfire::mul(&(&inv * &inv * &inv), &transpose(m, false), true);
    let a = join(1, &join(1, &sum(&(&w * &dx), 1), &sum(&(&w * &dy), 1)), &sum(&(&w * &dz), 1));
    a.to_vec()
}

/// Conway's life on a torus, as ArrayFire's examples/graphics/conway: count the eight
/// neighbours with shifts, then the rule; the number of live cells after all generations.
/// GPU 4096 x 4096 and 100 generations, CPU 1024 x 1024 and 20.
fn conway(world: &Array<u8>, generations: usize) -> f64 {
    let mut w = world.copy();
    for _ in 0..generations {
        let mut n = constant(0u8, w.dims());
        for dy in -1..=1 {
            for dx in -1..=1 {
                if dy != 0 || dx != 0 {
                    n += shift(&w, &[dy, dx, 0, 0]);
                }
            }
        }
        let born = eq(&n, &3u8, false);
        let stays = and(&eq(&w, &1u8, false), &eq(&n, &2u8, false), false);
        w = or(&born, &stays, false).cast::<u8>();
        w.eval();
    }
    sum_all(&w).0 as f64
}

/// Explicit 2-D heat diffusion on a torus: u += 0.2 (north + south + east + west - 4 u); the
/// sum of u after all steps. GPU 4096 x 4096 and 200 steps, CPU 1024 x 1024 and 20.
fn heat2d(u0: &Array<f32>, steps: usize) -> f64 {
    let mut u = u0.copy();
    for _ in 0..steps {
        let around = shift(&u, &[1, 0, 0, 0])
            + shift(&u, &[-1, 0, 0, 0])
            + shift(&u, &[0, 1, 0, 0])
            + shift(&u, &[0, -1, 0, 0]);
        u = &u + (around - &u * 4.0f32) * 0.2f32;
        u.eval();
    }
    sum_all(&u).0 as f64
}

/// 100 iterations of unpreconditioned conjugate gradients on `a` (no early stop), b = ones,
/// x0 = 0, as ArrayFire's benchmarks/cg writes them (`dot`, `tile`, scalars kept on the
/// device); the residual norm |b - A x|. GPU 1024 x 1024 grid, CPU 512 x 512.
fn cg_poisson(a: &Array<f32>, iters: usize) -> f64 {
    let n = a.dims()[0];
    let b = constant(1.0f32, dim4!(n));
    let mut x = constant(0.0f32, dim4!(n));
    let mut r = b.clone();
    let mut p = r.clone();
    let mut rr = dot(&r, &r, MatProp::NONE, MatProp::NONE);
    for _ in 0..iters {
        let ap = matmul(a, &p, MatProp::NONE, MatProp::NONE);
        let alpha = &rr / dot(&p, &ap, MatProp::NONE, MatProp::NONE);
        x = &x + tile(&alpha, dim4!(n)) * &p;
        r = &r - tile(&alpha, dim4!(n)) * &ap;
        let rr_next = dot(&r, &r, MatProp::NONE, MatProp::NONE);
        p = &r + tile(&(&rr_next / &rr), dim4!(n)) * &p;
        rr = rr_next;
    }
    let res = &b - matmul(a, &x, MatProp::NONE, MatProp::NONE);
    sum_all(&(&res * &res)).0.sqrt() as f64
}

fn main() {
    let opts = Options::parse();
    let gpu = get_active_backend() == Backend::CUDA;
    let sz = Sizes::for_backend(gpu);
    let mut rng = StdRng::seed_from_u64(7);
    let mut uniform = |n: u64| -> Vec<f32> { (0..n).map(|_| rng.gen::<f32>()).collect() };

    if opts.wants("pi_f32") {
        let v = run(&opts, "pi_f32", || pi(sz.pi_n));
        assert!((v - std::f64::consts::PI).abs() < 1e-2, "pi_f32 gave {v}");
    }
    if opts.wants("mc_barrier_f32") {
        let v = run(&opts, "mc_barrier_f32", || mc_barrier(sz.mc_paths));
        assert!(v > 0.0 && v < 20.0, "mc_barrier_f32 gave {v}");
    }
    if opts.wants("kmeans_f32") {
        let (p, d, k) = (sz.km_points, 16u64, 32u64);
        let x = Array::new(&uniform(p * d), dim4!(p, d));
        let c0 = emberfire::rows(&x, 0, k as i64 - 1);
        c0.eval();
        let c = run(&opts, "kmeans_f32", || kmeans(&x, &c0, 10));
        assert!(c.iter().all(|v| (0.0..=1.0).contains(v)), "kmeans_f32 left the unit cube");
    }
    if opts.wants("nbody_f32") {
        let b = sz.bodies;
        let pos = Array::new(&uniform(b * 3), dim4!(b, 3));
        let m = Array::new(&uniform(b), dim4!(b));
        let a = run(&opts, "nbody_f32", || nbody(&pos, &m));
        assert!(a.iter().all(|v| v.is_finite()), "nbody_f32 gave a non-finite acceleration");
    }
    if opts.wants("conway_u8") {
        let side = sz.life_side;
        let cells: Vec<u8> = uniform(side * side).iter().map(|&v| (v < 0.3) as u8).collect();
        let world = Array::new(&cells, dim4!(side, side));
        let live = run(&opts, "conway_u8", || conway(&world, sz.life_gens));
        assert!(live > 0.0 && live < (side * side) as f64, "conway_u8 left {live} cells");
    }
    if opts.wants("heat2d_f32") {
        let side = sz.heat_side;
        let u0 = Array::new(&uniform(side * side), dim4!(side, side));
        let total = run(&opts, "heat2d_f32", || heat2d(&u0, sz.heat_steps));
        let start = sum_all(&u0).0 as f64;
        // diffusion on a torus keeps the total
        assert!(
            (total - start).abs() < 1e-3 * start,
            "heat2d_f32 moved the total {start} to {total}"
        );
    }
    if opts.wants("cg_poisson_f32") {
        let side = sz.cg_side;
        let n = side * side;
        let (v, off, col) = poisson_csr(side as usize);
        let a = sparse_from_host(n, n, v.len() as u64, &v, &off, &col, SparseFormat::CSR);
        let res = run(&opts, "cg_poisson_f32", || cg_poisson(&a, 100));
        // unpreconditioned CG's residual is not monotone: 100 steps on this matrix leave it
        // about 9 times |b| (SciPy's and CuPy's runs agree), far from a blow-up
        assert!(
            res.is_finite() && res < 100.0 * side as f64,
            "cg_poisson_f32 left a residual of {res}"
        );
    }
}
