#!/usr/bin/env python3
"""How the tiled image filters stage their tiles, measured on the GPU machine through CuPy:
a 5 x 5 maximum (dilate5_f32's box, -inf outside the image) on a 4096 x 4096 f32 image with
the tile shape of `ef_window` (64 x 32 outputs a tile, blocks of 32 x 8 threads computing four
rows of two columns each, one wave of resident blocks walking the tiles; see
src/backend/cuda/kernels/tile.cu and image.cu), the tile staged three ways:

- `regs`: as the library does today: the next tile's elements loaded into registers while
  this tile is computed, stored to shared memory after a barrier;
- `async2`, `async3`: 16-byte asynchronous copies (cp.async, sm_80 and later) of the tile's
  16-byte aligned superset straight into two or three shared buffers, the next tiles' copies
  in flight while this one is computed, no registers and one instruction a 16 bytes;
- `async2x6`, `async3x6`: the same with six blocks a multiprocessor (the asynchronous way
  holds no tile in registers);
- each of the first three also `+nocompute` (the centre copied out, no window): what the
  staging alone costs.

Prints GPU milliseconds per call (CUDA events, median of 30), the share of a copy of the same
bytes measured in the same run, and checks every variant against PyTorch's max_pool2d.

    python3 benches/gpu/tile_lab.py
"""
import statistics
import cupy as cp
import torch

SRC = r"""
#define TXW 64
#define TYH 32
#define R 2
#define SWR 68          // staged row, register way: the tile grown by the window
#define SWA 72          // staged row, asynchronous way: the 16-byte aligned superset
#define SH (TYH + 2 * R)
#define NEG_INF __int_as_float(0xff800000)
__device__ __forceinline__ float fetch_or_fill(const float *in, int n0, int n1, int x, int y) {
  return (x >= 0 && x < n0 && y >= 0 && y < n1) ? __ldg(in + (long long)y * n0 + x) : NEG_INF;
}
__device__ __forceinline__ void tile_of(int t, int across, int &x0, int &y0) {
  const int ty = t / across; y0 = ty * TYH; x0 = (t - ty * across) * TXW;
}
// the four outputs of each of a thread's two columns from a staged tile of row length SW whose
// element (0, 0) is image element (x0 - R - OFF, y0 - R)
template <int SW, int OFF, int COMPUTE>
__device__ __forceinline__ void compute(const float *tile, float *out, int n0, int n1, int x0, int y0) {
#pragma unroll
  for (int g = 0; g < 2; g++) {
    const int cx = threadIdx.x + 32 * g;
    const float *col = tile + 4 * threadIdx.y * SW + cx + OFF;
    float acc[4];
    if (COMPUTE) {
#pragma unroll
      for (int r = 0; r < 4; r++) acc[r] = NEG_INF;
#pragma unroll
      for (int j = 0; j < 4 + 2 * R; j++) {
#pragma unroll
        for (int a = 0; a < 2 * R + 1; a++) {
          const float v = col[j * SW + a];
#pragma unroll
          for (int r = 0; r < 4; r++)
            if (j - r >= 0 && j - r <= 2 * R) acc[r] = fmaxf(acc[r], v);
        }
      }
    } else {
#pragma unroll
      for (int r = 0; r < 4; r++) acc[r] = col[(r + R) * SW + R];
    }
    const int x = x0 + cx, yb = y0 + 4 * threadIdx.y;
#pragma unroll
    for (int r = 0; r < 4; r++)
      if (x < n0 && yb + r < n1) out[(long long)(yb + r) * n0 + x] = acc[r];
  }
}

template <int COMPUTE>
__device__ void regs(const float *in, float *out, int n0, int n1) {
  __shared__ float tile[SWR * SH];
  constexpr int N = SWR * SH, PER = (N + 255) / 256;
  const int tid = threadIdx.x + 32 * threadIdx.y;
  const int across = (n0 + TXW - 1) / TXW, tiles = across * ((n1 + TYH - 1) / TYH);
  float held[PER];
  auto fetch = [&](int t) {
    int x0, y0; tile_of(t, across, x0, y0);
    const int sx0 = x0 - R, sy0 = y0 - R;
    const bool inside = sx0 >= 0 && sy0 >= 0 && sx0 + SWR <= n0 && sy0 + SH <= n1;
#pragma unroll
    for (int m = 0; m < PER; m++) {
      const int k = tid + 256 * m;
      if (k < N) {
        const int i = k % SWR, j = k / SWR;
        held[m] = inside ? __ldg(in + (long long)(sy0 + j) * n0 + sx0 + i) : fetch_or_fill(in, n0, n1, sx0 + i, sy0 + j);
      }
    }
  };
  int t = blockIdx.x;
  if (t < tiles) fetch(t);
  for (; t < tiles; t += gridDim.x) {
    __syncthreads();
#pragma unroll
    for (int m = 0; m < PER; m++) { const int k = tid + 256 * m; if (k < N) tile[k] = held[m]; }
    __syncthreads();
    if (t + (int)gridDim.x < tiles) fetch(t + gridDim.x);
    int x0, y0; tile_of(t, across, x0, y0);
    compute<SWR, 0, COMPUTE>(tile, out, n0, n1, x0, y0);
  }
}

__device__ __forceinline__ void copy16(float *dst, const float *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(src));
}
template <int STAGES, int COMPUTE>
__device__ void staged(const float *in, float *out, int n0, int n1) {
  extern __shared__ float buf[];  // STAGES x SWA x SH
  constexpr int CHUNKS = SWA / 4 * SH;
  const int tid = threadIdx.x + 32 * threadIdx.y;
  const int across = (n0 + TXW - 1) / TXW, tiles = across * ((n1 + TYH - 1) / TYH);
  // starts the copy of tile t into stage s (a tile along the edge: element by element, now)
  auto issue = [&](int t, int s) {
    if (t < tiles) {
      int x0, y0; tile_of(t, across, x0, y0);
      const int sx0 = x0 - R - 2, sy0 = y0 - R;
      float *dst = buf + s * SWA * SH;
      if (sx0 >= 0 && sy0 >= 0 && sx0 + SWA <= n0 && sy0 + SH <= n1) {
        for (int c = tid; c < CHUNKS; c += 256) {
          const int j = c / (SWA / 4), i = 4 * (c - j * (SWA / 4));
          copy16(dst + j * SWA + i, in + (long long)(sy0 + j) * n0 + sx0 + i);
        }
      } else {
        for (int k = tid; k < SWA * SH; k += 256)
          dst[k] = fetch_or_fill(in, n0, n1, sx0 + k % SWA, sy0 + k / SWA);
      }
    }
    asm volatile("cp.async.commit_group;");
  };
  int t = blockIdx.x;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) issue(t + s * gridDim.x, s);
  for (int k = 0; t < tiles; t += gridDim.x, k++) {
    issue(t + (STAGES - 1) * gridDim.x, (k + STAGES - 1) % STAGES);
    asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 1));
    __syncthreads();
    int x0, y0; tile_of(t, across, x0, y0);
    compute<SWA, 2, COMPUTE>(buf + (k % STAGES) * SWA * SH, out, n0, n1, x0, y0);
    __syncthreads();  // this stage's readers are done before it is refilled
  }
  asm volatile("cp.async.wait_group 0;");
}

extern "C" __global__ void __launch_bounds__(256, 4) regs_c(const float *i, float *o, int a, int b) { regs<1>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 4) regs_n(const float *i, float *o, int a, int b) { regs<0>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 4) async2_c(const float *i, float *o, int a, int b) { staged<2, 1>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 4) async2_n(const float *i, float *o, int a, int b) { staged<2, 0>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 4) async3_c(const float *i, float *o, int a, int b) { staged<3, 1>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 4) async3_n(const float *i, float *o, int a, int b) { staged<3, 0>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 6) async2x6_c(const float *i, float *o, int a, int b) { staged<2, 1>(i, o, a, b); }
extern "C" __global__ void __launch_bounds__(256, 6) async3x6_c(const float *i, float *o, int a, int b) { staged<3, 1>(i, o, a, b); }
extern "C" __global__ void copy4(const float4 *i, float4 *o, long long n) {
  for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) o[k] = i[k];
}
"""
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
H = W = 4096
g = torch.Generator(device="cuda"); g.manual_seed(3)
ti = torch.rand(H, W, device="cuda", generator=g) * 255
want = torch.nn.functional.max_pool2d(ti[None, None], 5, stride=1, padding=2)[0, 0]
img = cp.asarray(ti); out = cp.empty_like(img)
sms = cp.cuda.Device().attributes["MultiProcessorCount"]


def timed(f, args, grid, block, shared=0):
    for _ in range(3): f(grid, block, args, shared_mem=shared)
    times = []
    for _ in range(30):
        s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); f(grid, block, args, shared_mem=shared); e.record(); e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    return statistics.median(times)


n4 = H * W // 4
copy = timed(mod.get_function("copy4"), (img, out, cp.int64(n4)), (sms * 8,), (256,))
print(f"copy of the same bytes: {copy:.4f} ms ({8 * H * W / copy / 1e6:.0f} GB/s)")
for name, stages, blocks in (("regs", 0, 4), ("async2", 2, 4), ("async3", 3, 4), ("async2x6", 2, 6), ("async3x6", 3, 6)):
    for suffix, label in (("c", name), ("n", name + "+nocompute")) if blocks == 4 else (("c", name),):
        f = mod.get_function(f"{name}_{suffix}")
        shared = stages * 72 * 36 * 4
        if shared > 48 * 1024:
            f.max_dynamic_shared_size_bytes = shared
        out.fill(0)
        ms = timed(f, (img, out, cp.int32(W), cp.int32(H)), (sms * blocks,), (32, 8), shared)
        ok = ""
        if suffix == "c":
            ok = "equal to max_pool2d" if bool(cp.all(out == cp.asarray(want))) else "DIFFERS from max_pool2d"
        else:
            ok = "centre copied" if bool(cp.all(out == img)) else "centre DIFFERS"
        print(f"{label:20s} {ms:.4f} ms  {100 * copy / ms:5.1f}% of copy  {ok}")
