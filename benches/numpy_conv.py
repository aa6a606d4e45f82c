#!/usr/bin/env python3
"""The CPU line of `conv2_nn_f32` in benches/peers.rs in NumPy, for the CPU comparison
(`EMBERFIRE_BACKEND=cpu cargo bench --bench peers -- --cases conv2_nn_f32` beside this, on the
same machine in the same session):

    python3 benches/numpy_conv.py [--quick]

A batch of 4 images of 64 channels, 56 x 56, 3 x 3 filters to 64 channels, stride 1, padding 1,
f32, lowered the usual NumPy way: the windows as a strided view (`sliding_window_view`) and one
`tensordot` (BLAS) over channels and taps. Prints
case=conv2_nn_f32 impl=numpy ms=<median> tflops=<2 * multiply-adds / time>.
"""
import statistics, sys, time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

QUICK = "--quick" in sys.argv
rng = np.random.default_rng(7)
N, C, F, H, W, K = 4, 64, 64, 56, 56, 3
x = rng.random((N, C, H, W), dtype=np.float32)
w = rng.random((F, C, K, K), dtype=np.float32)


def conv(x, w):
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, (K, K), axis=(2, 3))  # (N, C, H, W, K, K)
    # flipped taps: a true convolution, as convolve2_nn computes
    y = np.tensordot(windows, w[:, :, ::-1, ::-1], axes=([1, 4, 5], [1, 2, 3]))  # (N, H, W, F)
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2))


for _ in range(1 if QUICK else 2):
    conv(x, w)
times = []
for _ in range(5 if QUICK else 15):
    t = time.perf_counter()
    conv(x, w)
    times.append((time.perf_counter() - t) * 1e3)
ms = statistics.median(times)
flops = 2 * N * C * F * K * K * H * W
print(f"case=conv2_nn_f32 impl=numpy ms={ms:.4f} tflops={flops / ms / 1e9:.4f}")
