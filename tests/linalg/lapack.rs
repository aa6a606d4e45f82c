//! Linear algebra (`lu`, `qr`, `cholesky`, `svd`, `solve`, `solve_lu`, `inverse`, `pinverse`,
//! `det`, `rank`, `norm`) on f32, f64, c32 and c64, on whichever backend EMBERFIRE_BACKEND
//! names.
//!
//! Every expected value is computed here, in c64 on the host, from the test's own inputs:
//! a naive LU with partial pivoting, modified Gram-Schmidt QR, a textbook Cholesky, one-sided
//! Jacobi singular values, Gauss-Jordan solves. Factorizations are also checked by
//! reconstruction (‖P·A − L·U‖/‖A‖, ‖Q·R − A‖/‖A‖ with QᴴQ = I, ‖L·Lᴴ − A‖/‖A‖,
//! ‖U·S·Vᴴ − A‖/‖A‖) and the pseudo-inverse by the four Moore-Penrose conditions.
//!
//! Tolerances: a backward-stable factorization reconstructs its input to a few units of
//! `n·u` (u the unit roundoff of the type); solutions are compared on well-conditioned
//! (diagonally dominant) matrices, where the forward error is of the same order.

use crate::common;

use common::{Elem, Rng64, SeedableRng, V};
use emberfire::*;
use proptest::test_runner::{Config, TestRng, TestRunner};
use rand::Rng;

/// The outcome of one check: `Err` says what differed.
type Check = std::result::Result<(), String>;

// ---------------------------------------------------------------------------------------
// Host matrices in c64 and the reference routines.
// ---------------------------------------------------------------------------------------

/// A column-major matrix of c64 values.
#[derive(Clone, Debug)]
struct M {
    r: usize,
    c: usize,
    v: Vec<c64>,
}

impl M {
    fn zeros(r: usize, c: usize) -> M {
        M { r, c, v: vec![c64::new(0.0, 0.0); r * c] }
    }
    fn eye(n: usize) -> M {
        let mut m = M::zeros(n, n);
        for i in 0..n {
            m.v[i * n + i] = c64::new(1.0, 0.0);
        }
        m
    }
    fn at(&self, i: usize, j: usize) -> c64 {
        self.v[j * self.r + i]
    }
    fn set(&mut self, i: usize, j: usize, x: c64) {
        self.v[j * self.r + i] = x;
    }
    fn mul(&self, b: &M) -> M {
        assert_eq!(self.c, b.r, "test bug: product shapes");
        let mut out = M::zeros(self.r, b.c);
        for j in 0..b.c {
            for l in 0..self.c {
                let f = b.at(l, j);
                for i in 0..self.r {
                    out.v[j * self.r + i] += self.at(i, l) * f;
                }
            }
        }
        out
    }
    fn adj(&self) -> M {
        let mut out = M::zeros(self.c, self.r);
        for j in 0..self.c {
            for i in 0..self.r {
                out.set(j, i, self.at(i, j).conj());
            }
        }
        out
    }
    fn sub(&self, b: &M) -> M {
        assert_eq!((self.r, self.c), (b.r, b.c), "test bug: difference shapes");
        M { r: self.r, c: self.c, v: self.v.iter().zip(&b.v).map(|(x, y)| x - y).collect() }
    }
    fn frob(&self) -> f64 {
        self.v.iter().map(|x| x.norm_sqr()).sum::<f64>().sqrt()
    }
    /// Rows `r0..r1` and columns `c0..c1`.
    fn block(&self, r0: usize, r1: usize, c0: usize, c1: usize) -> M {
        let mut out = M::zeros(r1 - r0, c1 - c0);
        for j in c0..c1 {
            for i in r0..r1 {
                out.set(i - r0, j - c0, self.at(i, j));
            }
        }
        out
    }
}

/// ‖x − y‖ / max(‖y‖, tiny).
fn rel(x: &M, y: &M) -> f64 {
    x.sub(y).frob() / y.frob().max(1e-300)
}

/// The values of an array as a host matrix.
fn host<T: Elem>(a: &Array<T>) -> M {
    let d = a.dims();
    M { r: d[0] as usize, c: d[1] as usize, v: a.to_vec().iter().map(|x| x.to_v().c()).collect() }
}

/// Matrix `b` (dims 2/3 flattened) of a batched array.
fn host_batch<T: Elem>(a: &Array<T>, b: usize) -> M {
    let d = a.dims();
    let (r, c) = (d[0] as usize, d[1] as usize);
    let all: Vec<c64> = a.to_vec().iter().map(|x| x.to_v().c()).collect();
    M { r, c, v: all[b * r * c..(b + 1) * r * c].to_vec() }
}

/// An array of type `T` from a host matrix (complex parts dropped for real types).
fn array<T: Elem>(m: &M) -> Array<T> {
    let v: Vec<T> = m.v.iter().map(|&x| T::from_v(V::C(x))).collect();
    Array::new(&v, dim4!(m.r as u64, m.c as u64))
}

/// The host matrix as `T` holds it (rounded to T's precision, imaginary parts dropped for
/// real types): the exact input the library sees.
fn as_stored<T: Elem>(m: &M) -> M {
    M { r: m.r, c: m.c, v: m.v.iter().map(|&x| T::from_v(V::C(x)).to_v().c()).collect() }
}

/// A random `r`×`c` matrix with entries in [-1, 1) (and imaginary parts for complex `T`),
/// as `T` stores it.
fn random<T: Elem>(rng: &mut Rng64, r: usize, c: usize) -> M {
    let complex = matches!(T::TY.dtype, DType::C32 | DType::C64);
    let v = (0..r * c)
        .map(|_| {
            let im = if complex { rng.gen_range(-1.0..1.0) } else { 0.0 };
            c64::new(rng.gen_range(-1.0..1.0), im)
        })
        .collect();
    as_stored::<T>(&M { r, c, v })
}

/// A random well-conditioned square matrix: random plus `n` on the diagonal.
fn dominant<T: Elem>(rng: &mut Rng64, n: usize) -> M {
    let mut m = random::<T>(rng, n, n);
    for i in 0..n {
        let x = m.at(i, i) + c64::new(n as f64 + 1.0, 0.0);
        m.set(i, i, x);
    }
    as_stored::<T>(&m)
}

/// A random Hermitian positive definite matrix `B·Bᴴ + n·I`, as `T` stores it.
fn spd<T: Elem>(rng: &mut Rng64, n: usize) -> M {
    let b = random::<T>(rng, n, n);
    let mut a = b.mul(&b.adj());
    for i in 0..n {
        a.set(i, i, c64::new(a.at(i, i).re + n as f64, 0.0));
    }
    // Exactly Hermitian after rounding to T.
    let mut a = as_stored::<T>(&a);
    for j in 0..n {
        for i in 0..j {
            let x = a.at(i, j).conj();
            a.set(j, i, x);
        }
        let d = a.at(j, j);
        a.set(j, j, c64::new(d.re, 0.0));
    }
    a
}

/// The n×n Hilbert matrix, 1/(i + j + 1).
fn hilbert(n: usize) -> M {
    let mut m = M::zeros(n, n);
    for j in 0..n {
        for i in 0..n {
            m.set(i, j, c64::new(1.0 / (i + j + 1) as f64, 0.0));
        }
    }
    m
}

/// Reference LU with partial pivoting (|re| + |im|, the first largest): `(perm, L, U)` with
/// `A[perm[i], :] = (L·U)[i, :]`.
fn ref_lu(a: &M) -> (Vec<usize>, M, M) {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut w = a.clone();
    let mut perm: Vec<usize> = (0..m).collect();
    let mag = |x: c64| x.re.abs() + x.im.abs();
    for j in 0..k {
        let p =
            (j..m).fold(j, |best, i| if mag(w.at(i, j)) > mag(w.at(best, j)) { i } else { best });
        if p != j {
            perm.swap(j, p);
            for c in 0..n {
                let (x, y) = (w.at(j, c), w.at(p, c));
                w.set(j, c, y);
                w.set(p, c, x);
            }
        }
        let piv = w.at(j, j);
        if piv.norm() == 0.0 {
            continue;
        }
        for i in j + 1..m {
            let f = w.at(i, j) / piv;
            w.set(i, j, f);
            for c in j + 1..n {
                let x = w.at(i, c) - f * w.at(j, c);
                w.set(i, c, x);
            }
        }
    }
    let mut l = M::zeros(m, k);
    let mut u = M::zeros(k, n);
    for i in 0..m {
        for j in 0..k {
            if i == j {
                l.set(i, j, c64::new(1.0, 0.0));
            } else if i > j {
                l.set(i, j, w.at(i, j));
            }
        }
    }
    for i in 0..k {
        for j in i..n {
            u.set(i, j, w.at(i, j));
        }
    }
    (perm, l, u)
}

/// The rows of `a` in the order `perm`.
fn permute_rows(a: &M, perm: &[usize]) -> M {
    let mut out = M::zeros(a.r, a.c);
    for (i, &p) in perm.iter().enumerate() {
        for j in 0..a.c {
            out.set(i, j, a.at(p, j));
        }
    }
    out
}

/// Reference determinant from the reference LU.
fn ref_det(a: &M) -> c64 {
    let (perm, _, u) = ref_lu(a);
    let mut d = c64::new(1.0, 0.0);
    for i in 0..a.r {
        d *= u.at(i, i);
    }
    // The sign of the permutation: count its cycles.
    let mut seen = vec![false; perm.len()];
    let mut sign = 1.0;
    for s in 0..perm.len() {
        let mut len = 0;
        let mut i = s;
        while !seen[i] {
            seen[i] = true;
            i = perm[i];
            len += 1;
        }
        if len > 0 && len % 2 == 0 {
            sign = -sign;
        }
    }
    d * sign
}

/// Reference solution of a square system by Gauss-Jordan elimination with partial pivoting.
fn ref_solve(a: &M, b: &M) -> M {
    let n = a.r;
    let mut w = a.clone();
    let mut x = b.clone();
    for j in 0..n {
        let p = (j..n)
            .fold(j, |best, i| if w.at(i, j).norm() > w.at(best, j).norm() { i } else { best });
        for c in 0..n {
            let (s, t) = (w.at(j, c), w.at(p, c));
            w.set(j, c, t);
            w.set(p, c, s);
        }
        for c in 0..x.c {
            let (s, t) = (x.at(j, c), x.at(p, c));
            x.set(j, c, t);
            x.set(p, c, s);
        }
        let piv = w.at(j, j);
        for i in 0..n {
            if i == j {
                continue;
            }
            let f = w.at(i, j) / piv;
            for c in 0..n {
                let v = w.at(i, c) - f * w.at(j, c);
                w.set(i, c, v);
            }
            for c in 0..x.c {
                let v = x.at(i, c) - f * x.at(j, c);
                x.set(i, c, v);
            }
        }
    }
    for i in 0..n {
        let piv = w.at(i, i);
        for c in 0..x.c {
            let v = x.at(i, c) / piv;
            x.set(i, c, v);
        }
    }
    x
}

/// Reference R of a full-column-rank matrix by modified Gram-Schmidt (positive diagonal).
fn ref_r(a: &M) -> M {
    let (m, n) = (a.r, a.c);
    let mut q = a.clone();
    let mut r = M::zeros(n, n);
    for j in 0..n {
        for i in 0..j {
            let dot: c64 = (0..m).map(|l| q.at(l, i).conj() * q.at(l, j)).sum();
            r.set(i, j, dot);
            for l in 0..m {
                let v = q.at(l, j) - dot * q.at(l, i);
                q.set(l, j, v);
            }
        }
        let norm = (0..m).map(|l| q.at(l, j).norm_sqr()).sum::<f64>().sqrt();
        r.set(j, j, c64::new(norm, 0.0));
        for l in 0..m {
            let v = q.at(l, j) / norm;
            q.set(l, j, v);
        }
    }
    r
}

/// Reference lower Cholesky factor.
fn ref_cholesky(a: &M) -> M {
    let n = a.r;
    let mut l = M::zeros(n, n);
    for j in 0..n {
        let s: f64 = (0..j).map(|k| l.at(j, k).norm_sqr()).sum();
        let d = (a.at(j, j).re - s).sqrt();
        l.set(j, j, c64::new(d, 0.0));
        for i in j + 1..n {
            let s: c64 = (0..j).map(|k| l.at(i, k) * l.at(j, k).conj()).sum();
            l.set(i, j, (a.at(i, j) - s) / d);
        }
    }
    l
}

/// Reference singular values by one-sided Jacobi rotations (largest first).
fn ref_singular_values(a: &M) -> Vec<f64> {
    let w0 = if a.r >= a.c { a.clone() } else { a.adj() };
    let mut w = w0;
    let n = w.c;
    for _sweep in 0..60 {
        let mut off = 0.0f64;
        for p in 0..n {
            for q in p + 1..n {
                let alpha: f64 = (0..w.r).map(|i| w.at(i, p).norm_sqr()).sum();
                let beta: f64 = (0..w.r).map(|i| w.at(i, q).norm_sqr()).sum();
                let gamma: c64 = (0..w.r).map(|i| w.at(i, p).conj() * w.at(i, q)).sum();
                if gamma.norm() <= 1e-300 {
                    continue;
                }
                off = off.max(gamma.norm() / (alpha * beta).sqrt().max(1e-300));
                // Rotate columns p and q so that they become orthogonal.
                let phase = gamma / gamma.norm();
                let zeta = (beta - alpha) / (2.0 * gamma.norm());
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let t = if zeta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for i in 0..w.r {
                    let (x, y) = (w.at(i, p), w.at(i, q));
                    w.set(i, p, x * c - y * phase.conj() * s);
                    w.set(i, q, x * phase * s + y * c);
                }
            }
        }
        if off < 1e-15 {
            break;
        }
    }
    let mut s: Vec<f64> =
        (0..n).map(|j| (0..w.r).map(|i| w.at(i, j).norm_sqr()).sum::<f64>().sqrt()).collect();
    s.sort_by(|x, y| y.partial_cmp(x).unwrap());
    s
}

// ---------------------------------------------------------------------------------------
// Tolerances.
// ---------------------------------------------------------------------------------------

/// The unit roundoff of `T`.
fn unit<T: Elem>() -> f64 {
    match T::TY.dtype {
        DType::F32 | DType::C32 => 2f64.powi(-24),
        _ => 2f64.powi(-53),
    }
}

/// A backward-error bound for a factorization of an `m`×`n` matrix.
fn bound<T: Elem>(m: usize, n: usize) -> f64 {
    40.0 * (m.max(n) as f64 + 1.0) * unit::<T>()
}

// ---------------------------------------------------------------------------------------
// Checks shared by the typed tests.
// ---------------------------------------------------------------------------------------

/// LU of `a`: the shapes, P·A = L·U, L unit lower, U upper, and agreement with the reference
/// LU (pivots and factors) when `compare`.
fn check_lu<T: Elem + FloatingPoint>(a: &M, compare: bool) -> Check {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let (l, u, p) = lu(&array::<T>(a));
    if (l.dims(), u.dims(), p.dims())
        != (dim4!(m as u64, k as u64), dim4!(k as u64, n as u64), dim4!(m as u64))
    {
        return Err(format!("lu {m}×{n}: shapes {} {} {}", l.dims(), u.dims(), p.dims()));
    }
    let (l, u) = (host(&l), host(&u));
    let perm: Vec<usize> = p.to_vec().iter().map(|&x| x as usize).collect();
    let mut sorted = perm.clone();
    sorted.sort();
    if sorted != (0..m).collect::<Vec<_>>() {
        return Err(format!("lu {m}×{n}: pivot {perm:?} is not a permutation"));
    }
    for i in 0..m {
        for j in 0..k {
            let x = l.at(i, j);
            let ok = if i == j {
                x == c64::new(1.0, 0.0)
            } else if i < j {
                x.norm() == 0.0
            } else {
                true
            };
            if !ok {
                return Err(format!("lu {m}×{n}: lower[{i}][{j}] = {x}"));
            }
        }
    }
    for i in 0..k {
        for j in 0..i.min(n) {
            if u.at(i, j).norm() != 0.0 {
                return Err(format!("lu {m}×{n}: upper[{i}][{j}] = {}", u.at(i, j)));
            }
        }
    }
    let err = rel(&l.mul(&u), &permute_rows(a, &perm));
    if err > bound::<T>(m, n) {
        return Err(format!("lu {m}×{n} ({}): ‖P·A − L·U‖/‖A‖ = {err:e}", T::TY.name));
    }
    if compare {
        let (rp, rl, ru) = ref_lu(a);
        if rp != perm {
            return Err(format!("lu {m}×{n}: pivot {perm:?}, reference {rp:?}"));
        }
        let (el, eu) = (rel(&l, &rl), rel(&u, &ru));
        if el > 100.0 * bound::<T>(m, n) || eu > 100.0 * bound::<T>(m, n) {
            return Err(format!("lu {m}×{n}: L off by {el:e}, U off by {eu:e}"));
        }
    }
    Ok(())
}

/// QR of `a`: shapes, QᴴQ = I, R upper, Q·R = A, and |R| against Gram-Schmidt's when `a` has
/// full column rank and `compare`.
fn check_qr<T: Elem + FloatingPoint>(a: &M, compare: bool) -> Check {
    let (m, n) = (a.r, a.c);
    let (q, r, tau) = qr(&array::<T>(a));
    if (q.dims(), r.dims(), tau.elements())
        != (dim4!(m as u64, m as u64), dim4!(m as u64, n as u64), m.min(n))
    {
        return Err(format!("qr {m}×{n}: shapes {} {} {}", q.dims(), r.dims(), tau.dims()));
    }
    let (q, r) = (host(&q), host(&r));
    let tol = bound::<T>(m, n);
    let orth = rel(&q.adj().mul(&q), &M::eye(m)) / (m as f64).sqrt();
    if orth > tol {
        return Err(format!("qr {m}×{n} ({}): ‖QᴴQ − I‖ = {orth:e}", T::TY.name));
    }
    for j in 0..n {
        for i in j + 1..m {
            if r.at(i, j).norm() != 0.0 {
                return Err(format!("qr {m}×{n}: r[{i}][{j}] = {}", r.at(i, j)));
            }
        }
    }
    let err = rel(&q.mul(&r), a);
    if err > tol {
        return Err(format!("qr {m}×{n} ({}): ‖Q·R − A‖/‖A‖ = {err:e}", T::TY.name));
    }
    if compare && m >= n {
        let want = ref_r(a);
        let got = r.block(0, n, 0, n);
        let mags =
            |x: &M| M { r: x.r, c: x.c, v: x.v.iter().map(|z| c64::new(z.norm(), 0.0)).collect() };
        let e = rel(&mags(&got), &mags(&want));
        if e > 100.0 * tol {
            return Err(format!("qr {m}×{n}: |R| differs from Gram-Schmidt's by {e:e}"));
        }
    }
    Ok(())
}

/// SVD of `a`: shapes, singular values against the reference, unitary U and V, U·S·Vᴴ = A.
fn check_svd<T: Elem + FloatingPoint>(a: &M) -> Check
where
    T::BaseType: Elem,
{
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let (u, s, vt) = svd(&array::<T>(a));
    if (u.dims(), s.elements(), vt.dims())
        != (dim4!(m as u64, m as u64), k, dim4!(n as u64, n as u64))
    {
        return Err(format!("svd {m}×{n}: shapes {} {} {}", u.dims(), s.dims(), vt.dims()));
    }
    let (u, vt) = (host(&u), host(&vt));
    let s: Vec<f64> = s.to_vec().iter().map(|x| x.to_v().f()).collect();
    let want = ref_singular_values(a);
    let tol = bound::<T>(m, n);
    let scale = want.first().copied().unwrap_or(1.0).max(1e-300);
    for (i, (x, y)) in s.iter().zip(&want).enumerate() {
        if (x - y).abs() > tol * scale {
            return Err(format!("svd {m}×{n} ({}): s[{i}] = {x}, reference {y}", T::TY.name));
        }
    }
    if s.windows(2).any(|w| w[0] < w[1]) || s.iter().any(|&x| x < 0.0) {
        return Err(format!("svd {m}×{n}: singular values not non-negative and decreasing: {s:?}"));
    }
    for (name, x, d) in [("U", &u, m), ("Vᴴ", &vt, n)] {
        let e = rel(&x.adj().mul(x), &M::eye(d)) / (d as f64).sqrt();
        if e > tol {
            return Err(format!("svd {m}×{n}: {name} is not unitary ({e:e})"));
        }
    }
    let mut sm = M::zeros(m, n);
    for (i, &x) in s.iter().enumerate() {
        sm.set(i, i, c64::new(x, 0.0));
    }
    let err = rel(&u.mul(&sm).mul(&vt), a);
    if err > tol {
        return Err(format!("svd {m}×{n} ({}): ‖U·S·Vᴴ − A‖/‖A‖ = {err:e}", T::TY.name));
    }
    Ok(())
}

/// The four Moore-Penrose conditions for `x = pinv(a)`.
fn check_moore_penrose(a: &M, x: &M, tol: f64) -> Check {
    let (ax, xa) = (a.mul(x), x.mul(a));
    let conds = [
        ("A·X·A = A", rel(&ax.mul(a), a)),
        ("X·A·X = X", rel(&xa.mul(x), x)),
        ("(A·X)ᴴ = A·X", rel(&ax.adj(), &ax)),
        ("(X·A)ᴴ = X·A", rel(&xa.adj(), &xa)),
    ];
    for (what, e) in conds {
        if e > tol {
            return Err(format!("pinverse {}×{}: {what} off by {e:e}", a.r, a.c));
        }
    }
    Ok(())
}

/// Deterministic random (rows, cols, seed) cases with proptest's shrinking, for shapes up to
/// `max`×`max`.
fn run_shapes(cases: u32, max: usize, f: impl Fn(usize, usize, u64) -> Check) {
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (1..=max, 1..=max, proptest::num::u64::ANY);
    if let Err(e) = runner.run(&strategy, |(m, n, seed)| {
        f(m, n, seed).map_err(proptest::test_runner::TestCaseError::fail)
    }) {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------------------
// Typed tests, instantiated for f32, f64, c32 and c64.
// ---------------------------------------------------------------------------------------

fn lu_random_shapes<T: Elem + FloatingPoint>() {
    run_shapes(24, 40, |m, n, seed| {
        let mut rng = Rng64::seed_from_u64(seed);
        let a = random::<T>(&mut rng, m, n);
        check_lu::<T>(&a, matches!(T::TY.dtype, DType::F64 | DType::C64))
    });
    // Larger than one block of the CPU's blocked LU, tall and wide.
    let mut rng = Rng64::seed_from_u64(7);
    for (m, n) in [(70, 70), (90, 37), (37, 90)] {
        check_lu::<T>(&random::<T>(&mut rng, m, n), false).unwrap();
    }
}

fn lu_inplace_pivots<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(11);
    for (m, n) in [(5, 5), (7, 4), (4, 7)] {
        let a = random::<T>(&mut rng, m, n);
        let k = m.min(n);
        let mut packed = array::<T>(&a);
        let piv = lu_inplace(&mut packed, true).to_vec();
        let mut converted = array::<T>(&a);
        let perm = lu_inplace(&mut converted, false).to_vec();
        assert_eq!(piv.len(), k);
        assert_eq!(perm.len(), m);
        // LAPACK's swaps, applied in order, give the converted permutation.
        let mut p: Vec<i32> = (0..m as i32).collect();
        for (j, &s) in piv.iter().enumerate() {
            assert!(s as usize > j && s as usize <= m, "pivot {s} at {j} of {m} rows");
            p.swap(j, s as usize - 1);
        }
        assert_eq!(p, perm);
        // The packed factors are lu()'s.
        let (l, u, _) = lu(&array::<T>(&a));
        let (packed, l, u) = (host(&packed), host(&l), host(&u));
        for j in 0..n {
            for i in 0..m {
                let want = if i > j && j < k {
                    l.at(i, j)
                } else if i <= j && i < k {
                    u.at(i, j)
                } else {
                    c64::new(0.0, 0.0)
                };
                assert_eq!(packed.at(i, j), want, "{m}×{n} packed[{i}][{j}]");
            }
        }
    }
}

fn qr_random_shapes<T: Elem + FloatingPoint>() {
    run_shapes(24, 40, |m, n, seed| {
        let mut rng = Rng64::seed_from_u64(seed);
        check_qr::<T>(&random::<T>(&mut rng, m, n), true)
    });
    let mut rng = Rng64::seed_from_u64(5);
    for (m, n) in [(80, 70), (45, 90)] {
        check_qr::<T>(&random::<T>(&mut rng, m, n), true).unwrap();
    }
}

fn qr_inplace_matches_qr<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(3);
    let a = random::<T>(&mut rng, 6, 4);
    let (_, r, tau) = qr(&array::<T>(&a));
    let mut packed = array::<T>(&a);
    let tau2 = qr_inplace(&mut packed);
    assert_eq!(tau.to_vec(), tau2.to_vec());
    let (packed, r) = (host(&packed), host(&r));
    for j in 0..4 {
        for i in 0..=j {
            assert_eq!(packed.at(i, j), r.at(i, j));
        }
    }
    // tau follows LAPACK: each reflector H = I - tau·v·vᴴ is unitary, so |1 - tau|... holds
    // Re(tau) in [0, 2] and |tau - 1| <= 1.
    for t in host(&tau2).v {
        assert!((t - c64::new(1.0, 0.0)).norm() <= 1.0 + 1e-6, "tau {t}");
    }
}

fn cholesky_random<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(21);
    for n in [1, 2, 5, 17, 40, 75] {
        let a = spd::<T>(&mut rng, n);
        let want = ref_cholesky(&a);
        for upper in [false, true] {
            let (f, info) = cholesky(&array::<T>(&a), upper);
            assert_eq!(info, 0, "n = {n}");
            let f = host(&f);
            let l = if upper { f.adj() } else { f.clone() };
            for j in 0..n {
                for i in 0..j {
                    assert_eq!(l.at(i, j).norm(), 0.0, "n = {n} upper = {upper}: not triangular");
                }
            }
            let tol = bound::<T>(n, n);
            let err = rel(&l.mul(&l.adj()), &a);
            assert!(err < tol, "n = {n} upper = {upper}: ‖L·Lᴴ − A‖/‖A‖ = {err:e}");
            let e = rel(&l, &want);
            assert!(e < 10.0 * tol, "n = {n} upper = {upper}: factor off by {e:e}");
        }
        // Only the named triangle is read: garbage in the other changes nothing.
        let mut b = a.clone();
        for j in 0..n {
            for i in j + 1..n {
                b.set(i, j, c64::new(1e6, 0.0));
            }
        }
        let (f1, _) = cholesky(&array::<T>(&a), true);
        let (f2, _) = cholesky(&array::<T>(&b), true);
        assert_eq!(f1.to_vec(), f2.to_vec(), "n = {n}: the lower triangle was read");
        let mut inplace = array::<T>(&a);
        assert_eq!(cholesky_inplace(&mut inplace, true), 0);
        assert_eq!(inplace.to_vec(), f1.to_vec());
    }
}

fn cholesky_not_positive_definite<T: Elem + FloatingPoint>() {
    // Leading minors 1 > 0, then 1·1 - 2·2 < 0: info 2; the leading 1×1 factor is kept.
    let a = M {
        r: 3,
        c: 3,
        v: [1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 3.0].map(|x| c64::new(x, 0.0)).to_vec(),
    };
    for upper in [false, true] {
        let (f, info) = cholesky(&array::<T>(&a), upper);
        assert_eq!(info, 2, "upper = {upper}");
        let f = host(&f);
        assert!(f.v.iter().all(|x| x.re.is_finite() && x.im.is_finite()), "{f:?}");
        assert_eq!(f.at(0, 0), c64::new(1.0, 0.0));
        assert!(f.v.iter().skip(1).all(|x| x.norm() == 0.0), "{f:?}");
    }
    // Negative first pivot: info 1, all zeros.
    let neg = M { r: 2, c: 2, v: [-4.0, 0.0, 0.0, 1.0].map(|x| c64::new(x, 0.0)).to_vec() };
    let mut x = array::<T>(&neg);
    assert_eq!(cholesky_inplace(&mut x, false), 1);
    assert!(host(&x).v.iter().all(|v| v.norm() == 0.0));
}

fn svd_random_shapes<T: Elem + FloatingPoint>()
where
    T::BaseType: Elem,
{
    run_shapes(16, 24, |m, n, seed| {
        let mut rng = Rng64::seed_from_u64(seed);
        check_svd::<T>(&random::<T>(&mut rng, m, n))
    });
    let mut a = array::<T>(&random::<T>(&mut Rng64::seed_from_u64(2), 5, 3));
    let before = a.to_vec();
    let (u1, s1, vt1) = svd(&a);
    let (u2, s2, vt2) = svd_inplace(&mut a);
    assert_eq!(a.to_vec(), before, "svd_inplace leaves its input as it was");
    assert_eq!((u1.to_vec(), s1.to_vec(), vt1.to_vec()), (u2.to_vec(), s2.to_vec(), vt2.to_vec()));
}

fn solve_square<T: Elem + FloatingPoint>() {
    run_shapes(16, 30, |n, k, seed| {
        let mut rng = Rng64::seed_from_u64(seed);
        let a = dominant::<T>(&mut rng, n);
        let b = random::<T>(&mut rng, n, k);
        let want = ref_solve(&a, &b);
        let x = host(&solve(&array::<T>(&a), &array::<T>(&b), MatProp::NONE));
        let e = rel(&x, &want);
        if e > bound::<T>(n, n) {
            return Err(format!("solve {n}×{n} with {k} columns ({}): off by {e:e}", T::TY.name));
        }
        // The same through lu_inplace and solve_lu.
        let mut packed = array::<T>(&a);
        let piv = lu_inplace(&mut packed, true);
        let y = host(&solve_lu(&packed, &piv, &array::<T>(&b), MatProp::NONE));
        let e = rel(&y, &want);
        if e > bound::<T>(n, n) {
            return Err(format!("solve_lu {n}×{n} with {k} columns: off by {e:e}"));
        }
        Ok(())
    });
}

fn solve_triangular<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(31);
    for n in [1, 4, 33] {
        let full = dominant::<T>(&mut rng, n);
        let b = random::<T>(&mut rng, n, 3);
        for (prop, lower) in [(MatProp::LOWER, true), (MatProp::UPPER, false)] {
            let mut tri = full.clone();
            for j in 0..n {
                for i in 0..n {
                    if (lower && i < j) || (!lower && i > j) {
                        tri.set(i, j, c64::new(0.0, 0.0));
                    }
                }
            }
            let want = ref_solve(&tri, &b);
            // The other triangle holds garbage: only the named one is read.
            let x = host(&solve(&array::<T>(&full), &array::<T>(&b), prop));
            let e = rel(&x, &want);
            assert!(e < bound::<T>(n, n), "{prop:?} n = {n}: off by {e:e}");
        }
    }
}

fn solve_least_squares<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(41);
    for (m, n) in [(9, 4), (40, 7), (4, 9), (7, 40), (5, 1), (1, 5)] {
        let a = random::<T>(&mut rng, m, n);
        let b = random::<T>(&mut rng, m, 2);
        let ah = a.adj();
        // Normal equations for tall, least norm for wide.
        let want = if m > n {
            ref_solve(&ah.mul(&a), &ah.mul(&b))
        } else {
            ah.mul(&ref_solve(&a.mul(&ah), &b))
        };
        let x = host(&solve(&array::<T>(&a), &array::<T>(&b), MatProp::NONE));
        assert_eq!((x.r, x.c), (n, 2));
        let e = rel(&x, &want);
        // Random rectangular matrices are well conditioned for these shapes; κ² enters the
        // normal equations' reference, hence the slack.
        assert!(e < 1e3 * bound::<T>(m, n), "{m}×{n}: off by {e:e}");
    }
}

fn solve_batched<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(51);
    let (n, k, b2, b3) = (6usize, 2usize, 2usize, 3usize);
    for (m, prop) in [(n, MatProp::NONE), (n, MatProp::UPPER), (n + 3, MatProp::NONE)] {
        let mats: Vec<M> = (0..b2 * b3)
            .map(|_| if m == n { dominant::<T>(&mut rng, n) } else { random::<T>(&mut rng, m, n) })
            .collect();
        let rhs: Vec<M> = (0..b2 * b3).map(|_| random::<T>(&mut rng, m, k)).collect();
        let flat = |ms: &[M]| -> Vec<T> {
            ms.iter().flat_map(|x| x.v.iter().map(|&z| T::from_v(V::C(z)))).collect()
        };
        let a = Array::new(&flat(&mats), dim4!(m as u64, n as u64, b2 as u64, b3 as u64));
        let b = Array::new(&flat(&rhs), dim4!(m as u64, k as u64, b2 as u64, b3 as u64));
        let x = solve(&a, &b, prop);
        assert_eq!(x.dims(), dim4!(n as u64, k as u64, b2 as u64, b3 as u64));
        for i in 0..b2 * b3 {
            let want = match prop {
                MatProp::UPPER => {
                    let mut t = mats[i].clone();
                    for c in 0..n {
                        for r in c + 1..n {
                            t.set(r, c, c64::new(0.0, 0.0));
                        }
                    }
                    ref_solve(&t, &rhs[i])
                }
                _ if m > n => {
                    let ah = mats[i].adj();
                    ref_solve(&ah.mul(&mats[i]), &ah.mul(&rhs[i]))
                }
                _ => ref_solve(&mats[i], &rhs[i]),
            };
            let e = rel(&host_batch(&x, i), &want);
            assert!(e < 1e3 * bound::<T>(m, n), "{prop:?} {m}×{n} batch {i}: off by {e:e}");
        }
    }
}

fn inverse_and_det<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(61);
    for n in [1, 2, 3, 8, 35] {
        let a = dominant::<T>(&mut rng, n);
        let inv = host(&inverse(&array::<T>(&a), MatProp::NONE));
        let e = rel(&a.mul(&inv), &M::eye(n));
        assert!(e < bound::<T>(n, n), "n = {n}: ‖A·inv(A) − I‖ = {e:e}");
        let e = rel(&inv, &ref_solve(&a, &M::eye(n)));
        assert!(e < bound::<T>(n, n), "n = {n}: inverse off by {e:e}");
        // det of a random (not dominant) matrix against the reference LU's.
        let r = random::<T>(&mut rng, n, n);
        let (re, im) = det(&array::<T>(&r));
        let want = ref_det(&r);
        let scale = r.v.iter().map(|x| x.norm()).fold(0.0, f64::max).powi(n as i32).max(1e-300);
        let err = (c64::new(re, im) - want).norm() / want.norm().max(bound::<T>(n, n) * scale);
        assert!(err < bound::<T>(n, n) * 10.0, "n = {n}: det ({re}, {im}), reference {want}");
        if matches!(T::TY.dtype, DType::F32 | DType::F64) {
            assert_eq!(im, 0.0);
        }
    }
}

fn pinverse_conditions<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(71);
    let tol_rel = if unit::<T>() > 1e-10 { 1e-6 } else { 1e-12 };
    for (m, n) in [(1, 1), (5, 3), (3, 5), (8, 8), (20, 6)] {
        let a = random::<T>(&mut rng, m, n);
        let x = pinverse(&array::<T>(&a), tol_rel, MatProp::NONE);
        assert_eq!(x.dims(), dim4!(n as u64, m as u64));
        let x = host(&x);
        check_moore_penrose(&a, &x, 1e3 * bound::<T>(m, n)).unwrap();
        // Full rank: the pseudo-inverse is (AᴴA)⁻¹Aᴴ (tall) or Aᴴ(AAᴴ)⁻¹ (wide).
        let ah = a.adj();
        let want = if m >= n {
            ref_solve(&ah.mul(&a), &ah)
        } else {
            ah.mul(&ref_solve(&a.mul(&ah), &M::eye(m)))
        };
        let e = rel(&x, &want);
        assert!(e < 1e3 * bound::<T>(m, n), "{m}×{n}: pinverse off by {e:e}");
    }
    // Rank deficient: a 6×5 matrix of rank 2.
    let a = as_stored::<T>(&random::<T>(&mut rng, 6, 2).mul(&random::<T>(&mut rng, 2, 5)));
    let x = host(&pinverse(&array::<T>(&a), tol_rel * 100.0, MatProp::NONE));
    check_moore_penrose(&a, &x, 1e4 * bound::<T>(6, 5)).unwrap();
    // Batched over dimensions 2 and 3, each matrix with its own threshold.
    let mats: Vec<M> = (0..6)
        .map(|i| {
            let mut m = random::<T>(&mut rng, 4, 3);
            for v in &mut m.v {
                *v *= 10f64.powi(i - 3);
            }
            as_stored::<T>(&m)
        })
        .collect();
    let flat: Vec<T> = mats.iter().flat_map(|x| x.v.iter().map(|&z| T::from_v(V::C(z)))).collect();
    let xb = pinverse(&Array::new(&flat, dim4!(4, 3, 2, 3)), tol_rel, MatProp::NONE);
    assert_eq!(xb.dims(), dim4!(3, 4, 2, 3));
    for (i, a) in mats.iter().enumerate() {
        check_moore_penrose(a, &host_batch(&xb, i), 1e3 * bound::<T>(4, 3)).unwrap();
    }
}

fn rank_of_products<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(81);
    for (m, n, r) in [(6, 5, 2), (5, 8, 3), (7, 7, 7), (4, 4, 0), (9, 3, 1)] {
        let a = if r == 0 {
            M::zeros(m, n)
        } else {
            random::<T>(&mut rng, m, r).mul(&random::<T>(&mut rng, r, n))
        };
        let tol = 1e3 * bound::<T>(m, n);
        assert_eq!(rank(&array::<T>(&as_stored::<T>(&a)), tol), r as u32, "{m}×{n} of rank {r}");
    }
}

fn norms<T: Elem + FloatingPoint>() {
    let mut rng = Rng64::seed_from_u64(91);
    for (m, n) in [(1, 1), (7, 1), (1, 6), (5, 4), (30, 20)] {
        let a = random::<T>(&mut rng, m, n);
        let x = array::<T>(&a);
        let abs: Vec<f64> = a.v.iter().map(|z| z.norm()).collect();
        let col = |j: usize| &abs[j * m..(j + 1) * m];
        let max = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0, f64::max);
        let want = [
            (NormType::VECTOR_1, 0.0, 0.0, abs.iter().sum::<f64>()),
            (NormType::VECTOR_INF, 0.0, 0.0, max(&mut abs.iter().copied())),
            (NormType::VECTOR_2, 0.0, 0.0, abs.iter().map(|x| x * x).sum::<f64>().sqrt()),
            (NormType::VECTOR_P, 3.0, 0.0, abs.iter().map(|x| x.powi(3)).sum::<f64>().cbrt()),
            (NormType::MATRIX_1, 0.0, 0.0, max(&mut (0..n).map(|j| col(j).iter().sum::<f64>()))),
            (
                NormType::MATRIX_INF,
                0.0,
                0.0,
                max(&mut (0..m).map(|i| (0..n).map(|j| abs[j * m + i]).sum::<f64>())),
            ),
            (NormType::MATRIX_2, 0.0, 0.0, ref_singular_values(&a)[0]),
            (
                NormType::MATRIX_L_PQ,
                3.0,
                1.5,
                (0..n)
                    .map(|j| col(j).iter().map(|x| x.powi(3)).sum::<f64>().cbrt().powf(1.5))
                    .sum::<f64>()
                    .powf(1.0 / 1.5),
            ),
            (NormType::MATRIX_L_PQ, 2.0, 2.0, abs.iter().map(|x| x * x).sum::<f64>().sqrt()),
        ];
        for (ty, p, q, w) in want {
            let got = norm(&x, ty, p, q);
            // The values are T's exactly; the sums run in f64.
            assert!(
                (got - w).abs()
                    <= 1e-12 * w.max(1.0)
                        + if ty == NormType::MATRIX_2 { bound::<T>(m, n) * w } else { 0.0 },
                "{m}×{n} {ty:?} p={p} q={q}: {got}, reference {w}"
            );
        }
    }
    // Huge f32 values: squares would overflow f32, the norm does not.
    if T::TY.dtype == DType::F32 {
        let big = M { r: 2, c: 1, v: vec![c64::new(3e30, 0.0), c64::new(4e30, 0.0)] };
        let got = norm(&array::<T>(&big), NormType::VECTOR_2, 0.0, 0.0);
        assert!((got / 5e30 - 1.0).abs() < 1e-6, "{got}");
    }
}

fn views_and_lazy_inputs<T: Elem + FloatingPoint>() {
    // A sub-matrix view (offset and column stride) and a lazy expression as inputs.
    let mut rng = Rng64::seed_from_u64(101);
    let big = random::<T>(&mut rng, 9, 8);
    let whole = array::<T>(&big);
    let view = index(&whole, &[Seq::new(2.0, 7.0, 1.0), Seq::new(1.0, 6.0, 1.0)]);
    let sub = big.block(2, 8, 1, 7);
    check_lu_on::<T>(&view, &sub);
    let (_, r, _) = qr(&view);
    let (_, r2, _) = qr(&array::<T>(&sub));
    assert_eq!(r.to_vec(), r2.to_vec());
    // A strided right-hand side: every other row of a column.
    let a = dominant::<T>(&mut rng, 4);
    let rhs = random::<T>(&mut rng, 8, 1);
    let b = index(&array::<T>(&rhs), &[Seq::new(0.0, 7.0, 2.0), Seq::default()]);
    let b_host = M { r: 4, c: 1, v: (0..4).map(|i| rhs.v[2 * i]).collect() };
    let x = host(&solve(&array::<T>(&a), &b, MatProp::NONE));
    assert!(rel(&x, &ref_solve(&a, &b_host)) < bound::<T>(4, 4));
    // A lazy input: a + a, then the determinant scales by 2ⁿ.
    let x = array::<T>(&a);
    let lazy = &x + &x;
    let (re, im) = det(&lazy);
    let want = ref_det(&a) * 16.0;
    assert!((c64::new(re, im) - want).norm() <= 1e3 * bound::<T>(4, 4) * want.norm());
}

fn check_lu_on<T: Elem + FloatingPoint>(x: &Array<T>, a: &M) {
    let (l, u, p) = lu(x);
    let perm: Vec<usize> = p.to_vec().iter().map(|&v| v as usize).collect();
    let err = rel(&host(&l).mul(&host(&u)), &permute_rows(a, &perm));
    assert!(err < bound::<T>(a.r, a.c), "lu of a view: {err:e}");
}

fn empty_and_one_by_one<T: Elem + FloatingPoint>()
where
    T::BaseType: Elem,
{
    let e = |r: u64, c: u64| Array::<T>::new(&[], dim4!(r, c));
    let (l, u, p) = lu(&e(3, 0));
    assert_eq!((l.dims(), u.dims(), p.to_vec()), (dim4!(3, 0), dim4!(0, 0), vec![0, 1, 2]));
    let (q, r, tau) = qr(&e(0, 4));
    assert_eq!((q.elements(), r.dims(), tau.elements()), (0, dim4!(0, 4), 0));
    let (u, s, vt) = svd(&e(2, 0));
    assert_eq!((u.dims(), s.elements(), vt.elements()), (dim4!(2, 2), 0, 0));
    assert_eq!(det(&e(0, 0)), (1.0, 0.0));
    assert_eq!(rank(&e(0, 3), 1e-6), 0);
    assert_eq!(norm(&e(4, 0), NormType::MATRIX_2, 0.0, 0.0), 0.0);
    assert_eq!(inverse(&e(0, 0), MatProp::NONE).elements(), 0);
    assert_eq!(pinverse(&e(3, 0), 1e-6, MatProp::NONE).dims(), dim4!(0, 3));
    let eye3: Array<T> = identity(dim4!(3, 3));
    assert_eq!(solve(&eye3, &e(3, 0), MatProp::NONE).dims(), dim4!(3, 0));
    let (f, info) = cholesky(&e(0, 0), true);
    assert_eq!((f.elements(), info), (0, 0));
    // A system with no equations: the least-norm solution is zero.
    assert!(solve(&e(0, 2), &e(0, 3), MatProp::NONE)
        .to_vec()
        .iter()
        .all(|x| x.to_v().c().norm() == 0.0));

    // 1×1 matrices: everything is scalar arithmetic.
    let v = as_stored::<T>(&M { r: 1, c: 1, v: vec![c64::new(-2.5, 1.5)] });
    let x = array::<T>(&v);
    let z = v.v[0];
    let (l, u, p) = lu(&x);
    assert_eq!((host(&l).v[0], host(&u).v[0], p.to_vec()), (c64::new(1.0, 0.0), z, vec![0]));
    assert_eq!(det(&x), (z.re, z.im));
    let inv = host(&inverse(&x, MatProp::NONE)).v[0];
    assert!((inv - c64::new(1.0, 0.0) / z).norm() < 4.0 * unit::<T>());
    let (_, s, _) = svd(&x);
    assert!((s.to_vec()[0].to_v().f() - z.norm()).abs() < 4.0 * unit::<T>() * z.norm());
    assert_eq!(rank(&x, 0.0), 1);
    let (r, info) = cholesky(&array::<T>(&M { r: 1, c: 1, v: vec![c64::new(9.0, 0.0)] }), false);
    assert_eq!((host(&r).v[0], info), (c64::new(3.0, 0.0), 0));
}

macro_rules! typed_tests {
    ($($name:ident),*) => {
        mod f32_tests { $(#[test] fn $name() { super::$name::<f32>(); })* }
        mod f64_tests { $(#[test] fn $name() { super::$name::<f64>(); })* }
        mod c32_tests { $(#[test] fn $name() { super::$name::<emberfire::c32>(); })* }
        mod c64_tests { $(#[test] fn $name() { super::$name::<emberfire::c64>(); })* }
    };
}

typed_tests!(
    lu_random_shapes,
    lu_inplace_pivots,
    qr_random_shapes,
    qr_inplace_matches_qr,
    cholesky_random,
    cholesky_not_positive_definite,
    svd_random_shapes,
    solve_square,
    solve_triangular,
    solve_least_squares,
    solve_batched,
    inverse_and_det,
    pinverse_conditions,
    rank_of_products,
    norms,
    views_and_lazy_inputs,
    empty_and_one_by_one
);

// ---------------------------------------------------------------------------------------
// Known matrices.
// ---------------------------------------------------------------------------------------

#[test]
fn singular_matrices_factor_and_have_zero_determinant() {
    // Two equal rows, a zero column, and the zero matrix.
    let cases = [
        vec![1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0], // rows 0 and 1 equal
        vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0], // column 0 zero
        vec![0.0; 9],
    ];
    for v in cases {
        let a = M { r: 3, c: 3, v: v.iter().map(|&x| c64::new(x, 0.0)).collect() };
        check_lu::<f64>(&a, true).unwrap();
        assert_eq!(det(&array::<f64>(&a)), (0.0, 0.0));
        let (_, u, _) = lu(&array::<f64>(&a));
        assert!(u.to_vec().iter().all(|x| x.is_finite()));
        check_qr::<f64>(&a, false).unwrap();
        assert!(rank(&array::<f64>(&a), 1e-10) < 3);
    }
    // Solving with an exactly singular matrix gives non-finite values, not garbage.
    let a = Array::new(&[1.0f64, 2.0, 2.0, 4.0], dim4!(2, 2));
    let x = solve(&a, &Array::new(&[1.0f64, 1.0], dim4!(2, 1)), MatProp::NONE).to_vec();
    assert!(x.iter().any(|v| !v.is_finite()), "{x:?}");
}

#[test]
fn hilbert_matrices_are_handled_to_their_condition() {
    for n in [4, 6, 8] {
        let h = hilbert(n);
        let x = array::<f64>(&h);
        // κ(H8) ≈ 1.5e10: the inverse is accurate to about κ·u relative to 1.
        let inv = host(&inverse(&x, MatProp::NONE));
        let e = rel(&h.mul(&inv), &M::eye(n));
        assert!(e < 1e-4, "n = {n}: ‖H·inv(H) − I‖ = {e:e}");
        let (re, _) = det(&x);
        let want = ref_det(&h).re;
        // The determinant's relative error is up to about n·κ·u (κ(H8) ≈ 1.5e10).
        assert!(((re - want) / want).abs() < 1e-4, "n = {n}: det {re}, reference {want}");
        // Positive definite: Cholesky succeeds and reconstructs to u.
        let (l, info) = cholesky(&x, false);
        assert_eq!(info, 0);
        let l = host(&l);
        assert!(rel(&l.mul(&l.adj()), &h) < 1e-14);
        check_qr::<f64>(&h, false).unwrap();
        check_svd::<f64>(&h).unwrap();
        // Full numerical rank in f64 up to n = 8 with a tolerance below its smallest
        // singular value (≈ 1.1e-10 for n = 8), rank n - 1 or less above it.
        assert_eq!(rank(&x, 1e-12), n as u32);
        assert!(rank(&x, 1e-9) < n as u32 || n < 8);
    }
}

#[test]
fn complex_known_results() {
    // [i 1; 1 i]: det = i·i − 1 = −2.
    let i = c64::new(0.0, 1.0);
    let one = c64::new(1.0, 0.0);
    let a = Array::new(&[i, one, one, i], dim4!(2, 2));
    let (re, im) = det(&a);
    assert!((re + 2.0).abs() < 1e-15 && im.abs() < 1e-15);
    // A Hermitian positive definite matrix [2 i; −i 2] = L·Lᴴ.
    let h = Array::new(&[c64::new(2.0, 0.0), -i, i, c64::new(2.0, 0.0)], dim4!(2, 2));
    let (l, info) = cholesky(&h, false);
    assert_eq!(info, 0);
    let l = host(&l);
    assert!((l.at(0, 0) - c64::new(2f64.sqrt(), 0.0)).norm() < 1e-15);
    assert!((l.at(1, 0) - (-i / 2f64.sqrt())).norm() < 1e-15);
    assert!((l.at(1, 1) - c64::new(1.5f64.sqrt(), 0.0)).norm() < 1e-15);
    // Singular values of a unitary matrix are all 1.
    let u = Array::new(&[i, c64::new(0.0, 0.0), c64::new(0.0, 0.0), -one], dim4!(2, 2));
    let (_, s, _) = svd(&u);
    assert!(s.to_vec().iter().all(|&x| (x - 1.0).abs() < 1e-14));
    assert!((norm(&u, NormType::MATRIX_2, 0.0, 0.0) - 1.0).abs() < 1e-14);
}

#[test]
fn is_lapack_available_on_every_backend() {
    assert!(is_lapack_available());
}

// ---------------------------------------------------------------------------------------
// Bad input.
// ---------------------------------------------------------------------------------------

fn rect() -> Array<f32> {
    Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3))
}

#[test]
#[should_panic(expected = "inverse: `input` must be a square matrix, but its dims are [2 3 1 1]")]
fn inverse_of_a_non_square_matrix_panics() {
    inverse(&rect(), MatProp::NONE);
}

#[test]
#[should_panic(expected = "det: `input` must be a square matrix, but its dims are [2 3 1 1]")]
fn det_of_a_non_square_matrix_panics() {
    det(&rect());
}

#[test]
#[should_panic(expected = "cholesky: `input` must be a square matrix, but its dims are [2 3 1 1]")]
fn cholesky_of_a_non_square_matrix_panics() {
    cholesky(&rect(), true);
}

#[test]
#[should_panic(
    expected = "solve: `a` (dims [2 3 1 1]) and `b` (dims [3 1 1 1]) must have the same number of rows"
)]
fn solve_with_mismatched_rows_panics() {
    solve(&rect(), &Array::new(&[1.0f32, 2.0, 3.0], dim4!(3, 1)), MatProp::NONE);
}

#[test]
#[should_panic(
    expected = "solve: `a` (dims [2 2 2 1]) and `b` (dims [2 1 1 1]) must have the same number of rows and the same batch dimensions"
)]
fn solve_with_mismatched_batches_panics() {
    let a = Array::new(&[1.0f64; 8], dim4!(2, 2, 2));
    solve(&a, &Array::new(&[1.0f64, 2.0], dim4!(2, 1)), MatProp::NONE);
}

#[test]
#[should_panic(expected = "solve: MatProp::LOWER needs a square `a`, but its dims are [2 3 1 1]")]
fn triangular_solve_of_a_non_square_matrix_panics() {
    solve(&rect(), &Array::new(&[1.0f32, 2.0], dim4!(2, 1)), MatProp::LOWER);
}

#[test]
#[should_panic(expected = "solve: `options` is MatProp::TRANS; solve takes NONE, LOWER or UPPER")]
fn solve_with_an_unsupported_property_panics() {
    let a = Array::new(&[1.0f32, 0.0, 0.0, 1.0], dim4!(2, 2));
    solve(&a, &Array::new(&[1.0f32, 2.0], dim4!(2, 1)), MatProp::TRANS);
}

#[test]
#[should_panic(
    expected = "lu: `input` has dims [2 2 3 1], a batch of matrices; lu works on one matrix"
)]
fn lu_of_a_batch_panics() {
    lu(&Array::new(&[1.0f32; 12], dim4!(2, 2, 3)));
}

#[test]
#[should_panic(expected = "solve_lu: `piv` (dims [2 1 1 1]) must hold 2 LAPACK pivots in 1..=2")]
fn solve_lu_with_zero_based_pivots_panics() {
    let mut a = Array::new(&[4.0f64, 1.0, 2.0, 3.0], dim4!(2, 2));
    let piv = lu_inplace(&mut a, false); // 0-based: not what solve_lu takes
    let piv = if piv.to_vec()[0] == 0 { Array::new(&[0i32, 1], dim4!(2)) } else { piv };
    solve_lu(&a, &piv, &Array::new(&[1.0f64, 1.0], dim4!(2, 1)), MatProp::NONE);
}

#[test]
#[should_panic(expected = "pinverse: `tolerance` is -1; it must be zero or positive")]
fn pinverse_with_a_negative_tolerance_panics() {
    pinverse(&rect(), -1.0, MatProp::NONE);
}

#[test]
#[should_panic(expected = "norm: `p` is 0, but NormType::VECTOR_P needs a positive p")]
fn vector_p_norm_with_p_zero_panics() {
    norm(&rect(), NormType::VECTOR_P, 0.0, 1.0);
}
