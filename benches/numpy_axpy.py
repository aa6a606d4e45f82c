#!/usr/bin/env python3
"""NumPy's figure for the axpy_f32 case (2.5 * x + y over 2^24 random f32 values), which
../shared/bench/peers_cpu.py does not measure. Same inputs, timing and line format as that
script (one warm-up call, median of 15 calls, 5 with --quick), so compare.py reads its line
beside the others:

    python3 benches/numpy_axpy.py [--quick]
"""
import sys, time, statistics
import numpy as np

QUICK = "--quick" in sys.argv
rng = np.random.default_rng(1)


def time_ms(fn):
    reps = 5 if QUICK else 15
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)


N = 1 << 24
x = rng.random(N, dtype=np.float32)
y = rng.random(N, dtype=np.float32)
ms = time_ms(lambda: np.float32(2.5) * x + y)
print(f"case=axpy_f32 impl=numpy ms={ms:.4f} gbs={12 * N / ms / 1e6:.2f}", flush=True)
