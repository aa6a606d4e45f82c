#!/usr/bin/env python3
"""The whole programs of benches/apps.rs in NumPy, at the sizes apps.rs uses on the CPU backend,
for the CPU comparison (`EMBERFIRE_BACKEND=cpu cargo bench --bench apps` beside this, on the
same machine in the same session):

    python3 benches/numpy_apps.py [--quick] [--cases a,b]

Lines: case=<name> impl=numpy ms=<median of 15 whole runs after 2 (5 with --quick)>.
Each case computes what apps.rs's case of the same name computes, the natural NumPy way
(cg_poisson_f32 with SciPy's CSR matrix: `pip install numpy scipy`).
"""
import math, statistics, sys, time

import numpy as np

QUICK = "--quick" in sys.argv
ONLY = set(sys.argv[sys.argv.index("--cases") + 1].split(",")) if "--cases" in sys.argv else None
rng = np.random.default_rng(7)


def run(case, fn):
    if ONLY is not None and case not in ONLY:
        return
    reps = 5 if QUICK else 15
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    print(f"case={case} impl=numpy ms={statistics.median(times):.4f}", flush=True)


def pi(n=1 << 24):
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    return 4.0 * np.count_nonzero(x * x + y * y < 1) / n


def mc_barrier(paths=1 << 16, steps=180, s0=100.0, k=100.0, t=0.5, vol=0.3, r=0.01, b=115.0):
    dt = t / (steps - 1)
    z = rng.standard_normal((paths, steps - 1), dtype=np.float32)
    s = np.float32(s0) * np.exp(np.float32((r - vol * vol * 0.5) * dt) + np.float32(vol * math.sqrt(dt)) * z).prod(axis=1)
    s = s * (s < b)
    return float(np.maximum(s - np.float32(k), 0).mean()) * math.exp(-r * t)


P, D, K = 1 << 18, 16, 32
X = rng.random((P, D), dtype=np.float32)
C0 = X[:K].copy()


def kmeans(iters=10):
    c = C0
    xx = (X * X).sum(1, keepdims=True)
    for _ in range(iters):
        d = xx - 2 * X @ c.T + (c * c).sum(1)[None, :]
        a = d.argmin(1)
        s = np.zeros((K, D), np.float32)
        np.add.at(s, a, X)
        n = np.bincount(a, minlength=K).astype(np.float32)[:, None]
        c = np.where(n > 0, s / np.maximum(n, 1), c)
    return c


B = 2048
POS = rng.random((B, 3), dtype=np.float32)
M = rng.random(B, dtype=np.float32)


def nbody(eps2=np.float32(1e-6)):
    d = POS[None, :, :] - POS[:, None, :]
    inv = 1 / np.sqrt((d * d).sum(-1) + eps2) ** 3
    return ((M[None, :] * inv)[:, :, None] * d).sum(1)


WORLD = (rng.random((1024, 1024), dtype=np.float32) < 0.3).astype(np.uint8)


def conway(gens=20):
    w = WORLD
    for _ in range(gens):
        n = sum(np.roll(w, (dy, dx), (0, 1)) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
        w = ((n == 3) | ((w == 1) & (n == 2))).astype(np.uint8)
    return int(w.sum())


U0 = rng.random((1024, 1024), dtype=np.float32)


def heat2d(steps=20):
    u = U0
    for _ in range(steps):
        u = u + np.float32(0.2) * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u)
    return float(u.sum())


def cg_poisson(side=512, iters=100):
    import scipy.sparse as sp
    global CG_A
    if "CG_A" not in globals():
        I = sp.identity(side, dtype=np.float32, format="csr")
        T = sp.diags([-1, 4, -1], [-1, 0, 1], shape=(side, side), dtype=np.float32, format="csr")
        E = sp.diags([-1, -1], [-1, 1], shape=(side, side), dtype=np.float32, format="csr")
        CG_A = (sp.kron(I, T) + sp.kron(E, I)).tocsr()
    A = CG_A
    n = A.shape[0]
    b = np.ones(n, np.float32); x = np.zeros(n, np.float32); r = b.copy(); p = r.copy(); rr = r @ r
    for _ in range(iters):
        Ap = A @ p; alpha = rr / (p @ Ap); x += alpha * p; r -= alpha * Ap
        rr2 = r @ r; p = r + (rr2 / rr) * p; rr = rr2
    return float(np.linalg.norm(b - A @ x))


run("pi_f32", pi)
run("mc_barrier_f32", mc_barrier)
run("kmeans_f32", kmeans)
run("nbody_f32", nbody)
run("conway_u8", conway)
run("heat2d_f32", heat2d)
run("cg_poisson_f32", cg_poisson)
