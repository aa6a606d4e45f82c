#!/usr/bin/env python3
"""Peer lines for emberfire's bf16 cases of benches/peers.rs: PyTorch eager, torch.compile and
JAX (jit) on bf16, in the line format of ../shared/bench/peers.py, so that its comparison puts
them beside emberfire's lines. Runs on the GPU machine.

    python3 peers_bf16.py [--quick] [--cases chain_bf16,matmul_bf16]

Each result is one line:  case=<name> impl=<name> ms=<median> gbs=<GB/s> tflops=<TFLOP/s>
- chain_bf16: sin(x) * cos(y) + x * y - 0.5 on 2^26 bf16 elements; `gbs` counts two inputs
  read and one output written, 2 bytes each.
- matmul_bf16: an 8192 x 8192 product of bf16 matrices (`torch.matmul`, which accumulates in
  f32 on tensor cores); `tflops` counts 2 n^3 flops.
Timing as in peers.py: CUDA events around each call after 3 warm-up calls, the median of 40
(10 with --quick; 10 for products). JAX is timed on the host around block_until_ready, as
peers.py times it. The same lines go to $OUT/peers_bf16.txt.
"""
import os, sys, statistics

import torch

QUICK = "--quick" in sys.argv
ONLY = None
if "--cases" in sys.argv:
    ONLY = set(sys.argv[sys.argv.index("--cases") + 1].split(","))
OUT = os.environ.get("OUT", "/tmp")
lines = []


def emit(case, impl, ms, nbytes=None, flops=None):
    s = f"case={case} impl={impl} ms={ms:.4f}"
    if nbytes is not None:
        s += f" gbs={nbytes / ms / 1e6:.1f}"
    if flops is not None:
        s += f" tflops={flops / ms / 1e9:.2f}"
    print(s, flush=True)
    lines.append(s)


def time_ms(fn, reps=None):
    reps = reps or (10 if QUICK else 40)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def want(case):
    return ONLY is None or case in ONLY


N = 1 << 26  # elements of the streaming case, as in peers.py
M = 8192     # side of the square matrices
g = torch.Generator(device="cuda").manual_seed(1)


def chain(x, y):
    return torch.sin(x) * torch.cos(y) + x * y - 0.5


if want("chain_bf16"):
    # uniform in [0, 1) drawn in f32 and rounded, as emberfire's bench rounds its f32 inputs
    tx = torch.rand(N, device="cuda", generator=g).to(torch.bfloat16)
    ty = torch.rand(N, device="cuda", generator=g).to(torch.bfloat16)
    emit("chain_bf16", "torch", time_ms(lambda: chain(tx, ty)), 6 * N)
    compiled = torch.compile(chain)
    emit("chain_bf16", "torch.compile", time_ms(lambda: compiled(tx, ty)), 6 * N)
    del tx, ty

if want("matmul_bf16"):
    ta = torch.rand(M, M, device="cuda", generator=g).to(torch.bfloat16)
    tb = torch.rand(M, M, device="cuda", generator=g).to(torch.bfloat16)
    emit("matmul_bf16", "torch", time_ms(lambda: torch.matmul(ta, tb), 10), flops=2 * M ** 3)
    del ta, tb

# JAX (XLA's fusion and its cuBLAS/cuBLASLt products, jit-compiled), where it is installed
try:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX would take 75% of the device
    import jax
    import jax.numpy as jnp
    HAVE_JAX = any(d.platform == "gpu" for d in jax.devices())
except Exception:
    HAVE_JAX = False


def time_jax(fn, *args, reps=None):
    import time
    reps = reps or (10 if QUICK else 40)
    for _ in range(3):
        jax.block_until_ready(fn(*args))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


if HAVE_JAX:
    k1, k2 = jax.random.split(jax.random.PRNGKey(1), 2)
    if want("chain_bf16"):
        jx = jax.random.uniform(k1, (N,), jnp.float32).astype(jnp.bfloat16)
        jy = jax.random.uniform(k2, (N,), jnp.float32).astype(jnp.bfloat16)
        f = jax.jit(lambda x, y: jnp.sin(x) * jnp.cos(y) + x * y - jnp.bfloat16(0.5))
        emit("chain_bf16", "jax.jit", time_jax(f, jx, jy), 6 * N)
        del jx, jy
    if want("matmul_bf16"):
        ja = jax.random.uniform(k1, (M, M), jnp.float32).astype(jnp.bfloat16)
        jb = jax.random.uniform(k2, (M, M), jnp.float32).astype(jnp.bfloat16)
        f = jax.jit(lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32).astype(jnp.bfloat16))
        emit("matmul_bf16", "jax.jit", time_jax(f, ja, jb, reps=10), flops=2 * M ** 3)
        del ja, jb

with open(os.path.join(OUT, "peers_bf16.txt"), "w") as out:
    out.write("\n".join(lines) + "\n")
