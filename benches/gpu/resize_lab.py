#!/usr/bin/env python3
"""Resizing by exactly two (ArrayFire's rule: output pixel x samples input x * n0 / o0) in
kernels shaped for that map alone, timed with CUDA events through CuPy beside a copy of 1 GiB
in the same run, to choose the shape of emberfire's dedicated halving and doubling kernels
before writing them (`resize_half_f32` and `resize_double_f32` of `benches/peers.rs`: a
4096 x 4096 f32 image to 2048 x 2048 and to 8192 x 8192).

Halving samples (2x, 2y) with weight 1 and its neighbours with weight 0 (they still count:
0 times an infinity is NaN), so each output reads a 2 x 2 block; doubling samples (x / 2, y / 2),
half-way between two samples at every odd position. Each variant computes what the library's
bilinear kernels compute, in the same order (checked here against a NumPy model of it).

    python3 benches/gpu/resize_lab.py
"""
import statistics
import cupy as cp
import numpy as np

SRC = r"""
// halving: each thread C outputs of a row (C/2 16-byte loads from each of the two source rows,
// one C-wide store), R rows
template <int C, int R>
__device__ __forceinline__ void half_body(const float *__restrict__ in, float *__restrict__ out,
                                          int o0, int o1) {
  const int xq = (blockIdx.x * blockDim.x + threadIdx.x) * C;
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R;
  if (xq >= o0) return;
  const int n0 = 2 * o0;
  float4 a[R][C / 2], b[R][C / 2];
#pragma unroll
  for (int r = 0; r < R; r++) {
    const int y = min(y0 + r, o1 - 1);
    const float4 *pa = (const float4 *)(in + (size_t)(2 * y) * n0 + 2 * xq);
    const float4 *pb = (const float4 *)(in + (size_t)(2 * y + 1) * n0 + 2 * xq);
#pragma unroll
    for (int k = 0; k < C / 2; k++) { a[r][k] = __ldg(pa + k); b[r][k] = __ldg(pb + k); }
  }
#pragma unroll
  for (int r = 0; r < R; r++) {
    if (y0 + r >= o1) break;
    float v[C];
#pragma unroll
    for (int k = 0; k < C / 2; k++) {
      const float4 p = a[r][k], q = b[r][k];
      // r0 = p0 (1 - 0) + p1 0, r1 likewise, v = r0 (1 - 0) + r1 0: as the bilinear kernels
      float r0 = __fmaf_rn(p.y, 0.0f, p.x * 1.0f), r1 = __fmaf_rn(q.y, 0.0f, q.x * 1.0f);
      v[2 * k] = __fmaf_rn(r1, 0.0f, r0 * 1.0f);
      r0 = __fmaf_rn(p.w, 0.0f, p.z * 1.0f); r1 = __fmaf_rn(q.w, 0.0f, q.z * 1.0f);
      v[2 * k + 1] = __fmaf_rn(r1, 0.0f, r0 * 1.0f);
    }
    float *o = out + (size_t)(y0 + r) * o0 + xq;
    if (C == 2) *(float2 *)o = make_float2(v[0], v[1]);
    else {
#pragma unroll
      for (int k = 0; k < C; k += 4) *(float4 *)(o + k) = make_float4(v[k], v[k + 1], v[k + 2], v[k + 3]);
    }
  }
}
extern "C" __global__ void __launch_bounds__(256) half_c2_r1(const float *i, float *o, int o0, int o1) { half_body<2, 1>(i, o, o0, o1); }
extern "C" __global__ void __launch_bounds__(256) half_c2_r2(const float *i, float *o, int o0, int o1) { half_body<2, 2>(i, o, o0, o1); }
extern "C" __global__ void __launch_bounds__(256) half_c2_r4(const float *i, float *o, int o0, int o1) { half_body<2, 4>(i, o, o0, o1); }
extern "C" __global__ void __launch_bounds__(256) half_c4_r1(const float *i, float *o, int o0, int o1) { half_body<4, 1>(i, o, o0, o1); }
extern "C" __global__ void __launch_bounds__(256) half_c4_r2(const float *i, float *o, int o0, int o1) { half_body<4, 2>(i, o, o0, o1); }
extern "C" __global__ void __launch_bounds__(256) half_c4_r4(const float *i, float *o, int o0, int o1) { half_body<4, 4>(i, o, o0, o1); }
extern "C" __global__ void __launch_bounds__(256) half_c8_r2(const float *i, float *o, int o0, int o1) { half_body<8, 2>(i, o, o0, o1); }

// doubling: each thread 8 outputs of R source-row pairs' two output rows: source columns
// j .. j + 4 (a 16-byte load and the next one's first, from the neighbouring lane or a load),
// output columns 2j .. 2j + 7 as two 16-byte stores a row
__device__ __forceinline__ float lerp_af(float p0, float p1, float t) {
  return __fmaf_rn(p1, t, p0 * (1.0f - t));
}
template <int R>
__device__ __forceinline__ void double_body(const float *__restrict__ in, float *__restrict__ out,
                                            int n0, int n1) {
  const int j = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  const int yb = (blockIdx.y * blockDim.y + threadIdx.y) * R;
  const int o0 = 2 * n0, o1 = 2 * n1;
  const bool live = j < n0;
  const int jj = live ? j : n0 - 4;
  float4 s[R + 1];
  float e[R + 1];
#pragma unroll
  for (int r = 0; r <= R; r++) {
    const int y = min(yb + r, n1 - 1);
    const float *row = in + (size_t)y * n0;
    s[r] = __ldg((const float4 *)(row + jj));
    e[r] = __ldg(row + min(jj + 4, n0 - 1));
  }
  if (!live) return;
#pragma unroll
  for (int r = 0; r < R; r++) {
    if (yb + r >= n1) break;
    // the row's samples x: columns j, j + 0.5, j + 1, ..., j + 3.5 (the last clamps at the edge)
    float h0[8], h1[8];
    const float c0[5] = {s[r].x, s[r].y, s[r].z, s[r].w, e[r]};
    const float c1[5] = {s[r + 1].x, s[r + 1].y, s[r + 1].z, s[r + 1].w, e[r + 1]};
#pragma unroll
    for (int k = 0; k < 4; k++) {
      h0[2 * k] = lerp_af(c0[k], c0[k + 1], 0.0f);
      h0[2 * k + 1] = lerp_af(c0[k], c0[k + 1], 0.5f);
      h1[2 * k] = lerp_af(c1[k], c1[k + 1], 0.0f);
      h1[2 * k + 1] = lerp_af(c1[k], c1[k + 1], 0.5f);
    }
    const int y = 2 * (yb + r);
    float *o = out + (size_t)y * o0 + 2 * j;
    float v[8], w[8];
#pragma unroll
    for (int k = 0; k < 8; k++) { v[k] = lerp_af(h0[k], h1[k], 0.0f); w[k] = lerp_af(h0[k], h1[k], 0.5f); }
    *(float4 *)o = make_float4(v[0], v[1], v[2], v[3]);
    *(float4 *)(o + 4) = make_float4(v[4], v[5], v[6], v[7]);
    *(float4 *)(o + o0) = make_float4(w[0], w[1], w[2], w[3]);
    *(float4 *)(o + o0 + 4) = make_float4(w[4], w[5], w[6], w[7]);
  }
}
extern "C" __global__ void __launch_bounds__(256) double_r1(const float *i, float *o, int n0, int n1) { double_body<1>(i, o, n0, n1); }
extern "C" __global__ void __launch_bounds__(256) double_r2(const float *i, float *o, int n0, int n1) { double_body<2>(i, o, n0, n1); }
extern "C" __global__ void __launch_bounds__(256) double_r4(const float *i, float *o, int n0, int n1) { double_body<4>(i, o, n0, n1); }
"""

mod = cp.RawModule(code=SRC, options=("-std=c++17",), name_expressions=None)


def time_ms(fn, reps=40):
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    return statistics.median(times)


def copy_gbs():
    a = cp.random.rand(1 << 28, dtype=cp.float32)
    b = cp.empty_like(a)
    ms = time_ms(lambda: cp.copyto(b, a))
    del a, b
    return 8 * (1 << 28) / ms / 1e6


side = 4096
rng = np.random.default_rng(1)
host = (rng.random((side, side), dtype=np.float32) * 255).astype(np.float32)
img = cp.asarray(host)  # row-major: dimension 0 of the library is the last axis here
P = side * side

ceiling = copy_gbs()
print(f"copy {ceiling:.0f} GB/s")

# halving
o = side // 2
half = cp.empty((o, o), dtype=cp.float32)
want_half = host[0::2, 0::2]
for name, c, r in [("half_c2_r1", 2, 1), ("half_c2_r2", 2, 2), ("half_c2_r4", 2, 4),
                   ("half_c4_r1", 4, 1), ("half_c4_r2", 4, 2), ("half_c4_r4", 4, 4),
                   ("half_c8_r2", 8, 2)]:
    k = mod.get_function(name)
    for by in (8, 4, 2):
        bx = 256 // by
        grid = ((o // c + bx - 1) // bx, (o // r + by - 1) // by)
        f = lambda: k(grid, (bx, by), (img, half, np.int32(o), np.int32(o)))
        half.fill(-1)
        f()
        ok = bool(cp.array_equal(half, cp.asarray(want_half)))
        ms = time_ms(f)
        gbs = 5 * P / ms / 1e6
        print(f"case=resize_half {name} block=({bx},{by}) ms={ms:.4f} gbs={gbs:.0f} "
              f"of_copy={gbs / ceiling:.0%} exact={ok}")

# doubling
dbl = cp.empty((2 * side, 2 * side), dtype=cp.float32)
x = host.astype(np.float64)
xs = np.arange(2 * side) * 0.5
g = np.floor(xs).astype(int)
t = xs - g
g1 = np.minimum(g + 1, side - 1)
rows = x[:, g] * (1 - t) + x[:, g1] * t
want_dbl = (rows[g, :] * (1 - t)[:, None] + rows[g1, :] * t[:, None]).astype(np.float32)
for name, r in [("double_r1", 1), ("double_r2", 2), ("double_r4", 4)]:
    k = mod.get_function(name)
    for by in (8, 4, 2):
        bx = 256 // by
        grid = ((side // 4 + bx - 1) // bx, (side // r + by - 1) // by)
        f = lambda: k(grid, (bx, by), (img, dbl, np.int32(side), np.int32(side)))
        dbl.fill(-1)
        f()
        err = float(cp.max(cp.abs(dbl - cp.asarray(want_dbl))))
        ms = time_ms(f)
        gbs = 20 * P / ms / 1e6
        print(f"case=resize_double {name} block=({bx},{by}) ms={ms:.4f} gbs={gbs:.0f} "
              f"of_copy={gbs / ceiling:.0%} max_err={err:.2e}")
print(f"copy {copy_gbs():.0f} GB/s")
