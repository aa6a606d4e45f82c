//! cuSOLVER and cuBLAS compute what the CPU code computes: every linear algebra function run on
//! both backends from the same host inputs, for f32, f64, c32 and c64, and compared within the
//! type's tolerance (tests/linalg/lapack.rs checks each backend against references; this checks
//! that the two agree, including the paths only CUDA takes: wide SVDs through the conjugate
//! transpose, full Q of tall matrices, masked Cholesky failures, batches). Needs a CUDA device
//! (run with `--include-ignored` on a GPU machine).

use crate::common;

use common::{Elem, Rng64, SeedableRng, V};
use emberfire::*;
use rand::Rng;

/// Values of an array as c64.
fn values<T: Elem>(a: &Array<T>) -> Vec<c64> {
    a.to_vec().iter().map(|x| x.to_v().c()).collect()
}

/// `f` on the CPU and on CUDA from the same inputs: the values of each result, CPU first.
fn both<T: Elem, R>(
    f: impl Fn() -> R,
    read: impl Fn(&R) -> Vec<Vec<c64>>,
) -> Vec<(Vec<c64>, Vec<c64>)> {
    set_backend(Backend::CPU);
    let cpu = read(&f());
    set_backend(Backend::CUDA);
    let gpu = read(&f());
    cpu.into_iter().zip(gpu).collect()
}

fn tol<T: Elem>() -> f64 {
    match T::TY.dtype {
        DType::F32 | DType::C32 => 2e-4,
        _ => 1e-11,
    }
}

/// Whether two result vectors agree relative to the larger of their norms.
fn agree(what: &str, cpu: &[c64], gpu: &[c64], tol: f64) {
    assert_eq!(cpu.len(), gpu.len(), "{what}: lengths differ");
    let scale = cpu.iter().chain(gpu).map(|x| x.norm()).fold(1e-300, f64::max);
    for (i, (c, g)) in cpu.iter().zip(gpu).enumerate() {
        assert!((c - g).norm() <= tol * scale, "{what}: element {i}: cpu {c} cuda {g}");
    }
}

/// Host values of a random `r`×`c` matrix (complex parts for complex `T`), plus `diag` on the
/// diagonal.
fn random<T: Elem>(rng: &mut Rng64, r: usize, c: usize, diag: f64) -> Vec<T> {
    let complex = matches!(T::TY.dtype, DType::C32 | DType::C64);
    (0..r * c)
        .map(|i| {
            let d = if i % r == i / r { diag } else { 0.0 };
            let im = if complex { rng.gen_range(-1.0..1.0) } else { 0.0 };
            T::from_v(V::C(c64::new(rng.gen_range(-1.0..1.0) + d, im)))
        })
        .collect()
}

/// `B·Bᴴ + n·I`, Hermitian positive definite, computed on the host in c64.
fn spd<T: Elem>(b: &[T], n: usize) -> Vec<T> {
    let v: Vec<c64> = b.iter().map(|x| x.to_v().c()).collect();
    let mut out = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let mut s: c64 = (0..n).map(|k| v[k * n + i] * v[k * n + j].conj()).sum();
            if i == j {
                s = c64::new(s.re + n as f64, 0.0);
            }
            out.push(T::from_v(V::C(s)));
        }
    }
    out
}

fn parity<T: Elem + FloatingPoint>()
where
    T::BaseType: Elem,
{
    let mut rng = Rng64::seed_from_u64(17);
    let t = tol::<T>();
    let arr = |v: &[T], r: usize, c: usize| Array::new(v, dim4!(r as u64, c as u64));

    // Square systems, LU and the determinant (well conditioned, distinct pivots).
    let n = 40;
    let a = random::<T>(&mut rng, n, n, n as f64);
    let b = random::<T>(&mut rng, n, 3, 0.0);
    for (c, g) in
        both::<T, _>(|| solve(&arr(&a, n, n), &arr(&b, n, 3), MatProp::NONE), |x| vec![values(x)])
    {
        agree("solve", &c, &g, t);
    }
    for (c, g) in both::<T, _>(
        || lu(&arr(&a, n, n)),
        |(l, u, p)| {
            vec![
                values(l),
                values(u),
                p.to_vec().iter().map(|&x| c64::new(x as f64, 0.0)).collect(),
            ]
        },
    ) {
        agree("lu", &c, &g, t);
    }
    for (c, g) in both::<T, _>(|| det(&arr(&a, n, n)), |&(re, im)| vec![vec![c64::new(re, im)]]) {
        agree("det", &c, &g, t);
    }
    for (c, g) in both::<T, _>(|| inverse(&arr(&a, n, n), MatProp::NONE), |x| vec![values(x)]) {
        agree("inverse", &c, &g, t);
    }
    for prop in [MatProp::LOWER, MatProp::UPPER] {
        for (c, g) in
            both::<T, _>(|| solve(&arr(&a, n, n), &arr(&b, n, 3), prop), |x| vec![values(x)])
        {
            agree("triangular solve", &c, &g, t);
        }
    }

    // Least squares, tall and wide, and a batch of square systems.
    for (m, k) in [(30, 8), (8, 30)] {
        let a = random::<T>(&mut rng, m, k, 0.0);
        let b = random::<T>(&mut rng, m, 2, 0.0);
        for (c, g) in both::<T, _>(
            || solve(&arr(&a, m, k), &arr(&b, m, 2), MatProp::NONE),
            |x| vec![values(x)],
        ) {
            agree("least squares", &c, &g, t * 10.0);
        }
    }
    let batch: Vec<T> = (0..6).flat_map(|_| random::<T>(&mut rng, 5, 5, 5.0)).collect();
    let rhs: Vec<T> = random::<T>(&mut rng, 5, 12, 0.0);
    for (c, g) in both::<T, _>(
        || {
            solve(
                &Array::new(&batch, dim4!(5, 5, 2, 3)),
                &Array::new(&rhs, dim4!(5, 2, 2, 3)),
                MatProp::NONE,
            )
        },
        |x| vec![values(x)],
    ) {
        agree("batched solve", &c, &g, t);
    }

    // QR: |R| (the rows' signs may differ between implementations) and Q·R.
    for (m, k) in [(12, 5), (5, 12), (9, 9)] {
        let a = random::<T>(&mut rng, m, k, 0.0);
        for (c, g) in both::<T, _>(
            || qr(&arr(&a, m, k)),
            |(q, r, _)| {
                let back = matmul(q, r, MatProp::NONE, MatProp::NONE);
                vec![values(r).iter().map(|x| c64::new(x.norm(), 0.0)).collect(), values(&back)]
            },
        ) {
            agree("qr", &c, &g, t);
        }
    }

    // Cholesky, also of a matrix that is not positive definite (masked to its leading factor).
    let spd_host = spd::<T>(&random::<T>(&mut rng, n, n, 0.0), n);
    for upper in [false, true] {
        for (c, g) in both::<T, _>(
            || cholesky(&arr(&spd_host, n, n), upper),
            |(f, info)| vec![values(f), vec![c64::new(*info as f64, 0.0)]],
        ) {
            agree("cholesky", &c, &g, t);
        }
    }
    let mut bad = spd_host.clone();
    bad[3 * n + 3] = T::from_v(V::F(-1.0));
    for (c, g) in both::<T, _>(
        || cholesky(&arr(&bad, n, n), false),
        |(f, info)| vec![values(f), vec![c64::new(*info as f64, 0.0)]],
    ) {
        agree("cholesky of an indefinite matrix", &c, &g, t);
    }

    // Singular values (unique), tall and wide; pinverse batched; rank; norms.
    for (m, k) in [(20, 7), (7, 20)] {
        let a = random::<T>(&mut rng, m, k, 0.0);
        for (c, g) in both::<T, _>(
            || svd(&arr(&a, m, k)),
            |(u, s, vt)| {
                let mut sm = vec![T::default(); m * k];
                let sv = s.to_vec();
                for (i, x) in sv.iter().enumerate() {
                    sm[i * m + i] = T::from_v(V::F(x.to_v().f()));
                }
                let us = matmul(
                    u,
                    &Array::new(&sm, dim4!(m as u64, k as u64)),
                    MatProp::NONE,
                    MatProp::NONE,
                );
                vec![
                    sv.iter().map(|x| x.to_v().c()).collect(),
                    values(&matmul(&us, vt, MatProp::NONE, MatProp::NONE)),
                ]
            },
        ) {
            agree("svd", &c, &g, t);
        }
        for (c, g) in
            both::<T, _>(|| rank(&arr(&a, m, k), 1e-3), |&r| vec![vec![c64::new(r as f64, 0.0)]])
        {
            agree("rank", &c, &g, 0.0);
        }
        for ty in [NormType::VECTOR_2, NormType::MATRIX_1, NormType::MATRIX_INF, NormType::MATRIX_2]
        {
            for (c, g) in both::<T, _>(
                || norm(&arr(&a, m, k), ty, 0.0, 0.0),
                |&x| vec![vec![c64::new(x, 0.0)]],
            ) {
                agree("norm", &c, &g, t);
            }
        }
    }
    let many: Vec<T> = (0..4).flat_map(|_| random::<T>(&mut rng, 6, 4, 0.0)).collect();
    for (c, g) in both::<T, _>(
        || pinverse(&Array::new(&many, dim4!(6, 4, 4)), 1e-6, MatProp::NONE),
        |x| vec![values(x)],
    ) {
        agree("pinverse", &c, &g, t * 10.0);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn cusolver_matches_the_cpu_f32() {
    parity::<f32>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn cusolver_matches_the_cpu_f64() {
    parity::<f64>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn cusolver_matches_the_cpu_c32() {
    parity::<c32>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn cusolver_matches_the_cpu_c64() {
    parity::<c64>();
}
