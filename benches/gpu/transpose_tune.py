#!/usr/bin/env python3
"""Checks and times variants of emberfire's CUDA transpose kernel (src/backend/cuda/kernels/
transpose.cu) beside the peers' transposes and the copy ceiling, on the GPU machine. The kernel is
compiled with NVRTC through CuPy, as emberfire compiles it.

    python3 benches/gpu/transpose_tune.py

Prints one line per variant: median ms over 40 calls after warm-up, GB/s counting 2 x 256 MiB,
and the fraction of the device-to-device copy bandwidth measured in the same run.
"""
import os, statistics, sys
import numpy as np
import cupy as cp
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = open(os.path.join(HERE, "../../src/backend/cuda/kernels/transpose.cu")).read()
M = 8192
NBYTES = 2 * 4 * M * M

def time_ms(fn, reps=40):
    for _ in range(3): fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return statistics.median(ts)

_kernels = {}
def kernel(ty, conj, w, rows):
    key = (ty, conj, w, rows)
    if key not in _kernels:
        code = f"#define EF_T {ty}\n#define EF_CONJ {int(conj)}\n#define EF_W {w}\n#define EF_ROWS {rows}\n" + SRC
        _kernels[key] = cp.RawKernel(code, "ef_transpose", options=("-std=c++17",))
    return _kernels[key]

def run(k, w, rows, src, out, d0, d1, d2, d3, s1, s2, s3, grid_cap=None):
    tile = 32 * w
    t0, t1 = -(-d0 // tile), -(-d1 // tile)
    n = t0 * t1 * d2 * d3
    g = n if grid_cap is None else min(n, grid_cap)
    i64 = np.int64
    k((max(g, 1),), (32, rows), (src, out, i64(d0), i64(d1), i64(d2), i64(s1), i64(s2), i64(s3), i64(t0), i64(t1), i64(n)))

def check():
    rng = np.random.default_rng(3)
    # batched, non-square, padded columns, partial tiles, offset start
    d0, d1, d2, d3, s1 = 1000, 777, 3, 2, 1003
    s2 = s1 * d1 + 5; s3 = s2 * d2 + 7
    host = rng.random(s3 * d3 + 11).astype(np.float32)
    ref = np.empty((d3, d2, d0, d1), np.float32)  # out[l,k,i,j] row-major == column-major [d1,d0,d2,d3]
    for l in range(d3):
        for k in range(d2):
            base = 11 + k * s2 + l * s3
            blk = host[base: base + s1 * d1].reshape(d1, s1)[:, :d0]  # blk[j, i] = in(i, j)
            ref[l, k] = blk.T
    src = cp.asarray(host)
    for (w, rows) in [(1, 8), (2, 8), (1, 4), (2, 16)]:
        out = cp.full(d0 * d1 * d2 * d3, -1, cp.float32)
        run(kernel("unsigned int", False, w, rows), w, rows, src[11:], out, d0, d1, d2, d3, s1, s2, s3, grid_cap=97)
        ok = np.array_equal(cp.asnumpy(out).reshape(d3, d2, d0, d1), ref)
        print(f"check f32 W={w} ROWS={rows}: {'ok' if ok else 'WRONG'}")
    # complex conjugate, c32 and c64
    for ty, dt in [("ef_c32", np.complex64), ("ef_c64", np.complex128)]:
        a = (rng.random((300, 200)) + 1j * rng.random((300, 200))).astype(dt)  # row-major [d1=300][d0=200]
        out = cp.zeros(a.size, dt)
        run(kernel(ty, True, 1, 8), 1, 8, cp.asarray(a), out, 200, 300, 1, 1, 200, 0, 0)
        ok = np.array_equal(cp.asnumpy(out).reshape(200, 300), np.conj(a.T))
        print(f"check {ty} conj: {'ok' if ok else 'WRONG'}")

def main():
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    check()
    g = torch.Generator(device="cuda").manual_seed(1)
    tm = torch.rand(M, M, device="cuda", generator=g); cm = cp.asarray(tm)
    tb = torch.empty_like(tm)
    rows = []
    copy = time_ms(lambda: tb.copy_(tm))
    rows.append(("copy (torch copy_)", copy))
    rows.append(("cupy ascontiguousarray(cm.T)", time_ms(lambda: cp.ascontiguousarray(cm.T))))
    rows.append(("torch t().contiguous()", time_ms(lambda: tm.t().contiguous())))
    out = cp.empty_like(cm)
    ref = cp.ascontiguousarray(cm.T)
    for (w, rows_) in [(1, 8), (1, 4), (1, 16), (2, 8), (2, 16), (2, 32)]:
        k = kernel("unsigned int", False, w, rows_)
        out.fill(-1)
        run(k, w, rows_, cm, out, M, M, 1, 1, M, 0, 0)
        ok = bool(cp.array_equal(out, ref))
        ms = time_ms(lambda: run(k, w, rows_, cm, out, M, M, 1, 1, M, 0, 0))
        rows.append((f"emberfire W={w} ROWS={rows_}{'' if ok else ' WRONG'}", ms))
        for cap in (132 * 8, 132 * 16):
            ms = time_ms(lambda: run(k, w, rows_, cm, out, M, M, 1, 1, M, 0, 0, grid_cap=cap))
            rows.append((f"emberfire W={w} ROWS={rows_} grid={cap}", ms))
    for name, ms in rows:
        print(f"{name:44s} {ms:8.4f} ms {NBYTES / ms / 1e6:8.1f} GB/s {copy / ms * 100:6.1f}% of copy")

main()
