#!/usr/bin/env python3
"""Variants of the CUDA histogram kernel for a u8 image (4096 x 4096, 256 bins), timed with
CUDA events on the GPU machine through CuPy, to choose the shape of `ef_histogram`
(src/backend/cuda/kernels/image.cu). Prints one line per variant: GPU microseconds per call
(clear included where the variant needs one) and the share of the copy bandwidth measured in
the same run; every variant's counts are checked against NumPy's. Mode bits: 1 partials that
the last block sums (no clearing launch), 4 two vectors a step, 8 the bins laid out by lane
(bin b of lane l at b * 32 + l, so that a warp's additions never share a bank).

    python3 hist_lab.py
"""
import cupy as cp
import numpy as np

SRC = r"""
extern "C" __global__ void hist(const unsigned char *src, long long n, unsigned *out,
                                unsigned *partial, unsigned *ticket, int copies, int mode) {
  extern __shared__ unsigned counts[];
  const int nb = 256;
  const bool banked = mode & 8;  // bin b of lane l at b * 32 + l: every lane its own bank
  const int slots = banked ? 32 * nb : copies * nb;
  for (int b = threadIdx.x; b < slots; b += blockDim.x) counts[b] = 0;
  __syncthreads();
  unsigned *mine = banked ? counts + (threadIdx.x & 31) : counts + ((threadIdx.x >> 5) % copies) * nb;
  const int stride = banked ? 32 : 1;
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long threads = (long long)gridDim.x * blockDim.x;
  const long long vectors = n / 16;
  const uint4 *v = (const uint4 *)src;
  auto add4 = [&](unsigned w) {
    atomicAdd(&mine[(w & 255) * stride], 1u); atomicAdd(&mine[((w >> 8) & 255) * stride], 1u);
    atomicAdd(&mine[((w >> 16) & 255) * stride], 1u); atomicAdd(&mine[(w >> 24) * stride], 1u);
  };
  if (mode & 4) {  // two vectors a step
    long long i = tid;
    for (; i + threads < vectors; i += 2 * threads) {
      uint4 a = __ldg(v + i), b = __ldg(v + i + threads);
      add4(a.x); add4(a.y); add4(a.z); add4(a.w); add4(b.x); add4(b.y); add4(b.z); add4(b.w);
    }
    if (i < vectors) { uint4 a = __ldg(v + i); add4(a.x); add4(a.y); add4(a.z); add4(a.w); }
  } else {
    long long i = tid;
    uint4 next; if (i < vectors) next = __ldg(v + i);
    while (i < vectors) {
      uint4 a = next; long long j = i + threads;
      if (j < vectors) next = __ldg(v + j);
      add4(a.x); add4(a.y); add4(a.z); add4(a.w);
      i = j;
    }
  }
  __syncthreads();
  auto total = [&](int b) {  // a bin's count over the block's copies (lanes read rotated banks)
    unsigned c = 0;
    if (banked)
      for (int k = 0; k < 32; k++) c += counts[b * 32 + ((k + b) & 31)];
    else
      for (int k = 0; k < copies; k++) c += counts[k * nb + b];
    return c;
  };
  if (mode & 1) {  // partials, the last block sums them: no clearing launch
    for (int b = threadIdx.x; b < nb; b += blockDim.x) partial[blockIdx.x * nb + b] = total(b);
    __threadfence();
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last) {
      __threadfence();
      for (int b = threadIdx.x; b < nb; b += blockDim.x) {
        unsigned c = 0;
        for (int k = 0; k < gridDim.x; k++) c += __ldcg(partial + k * nb + b);
        out[b] = c;
      }
      if (threadIdx.x == 0) *ticket = 0;
    }
  } else {
    for (int b = threadIdx.x; b < nb; b += blockDim.x) {
      const unsigned c = total(b);
      if (c) atomicAdd(&out[b], c);
    }
  }
}
extern "C" __global__ void copy4(const uint4 *a, uint4 *b, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) b[i] = a[i];
}
"""
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
hist, copy4 = mod.get_function("hist"), mod.get_function("copy4")
sm = cp.cuda.Device().attributes["MultiProcessorCount"]
N = 4096 * 4096
img = cp.random.randint(0, 256, N, dtype=cp.uint8)
want = np.bincount(cp.asnumpy(img), minlength=256)
out = cp.zeros(256, cp.uint32)
partial = cp.zeros(sm * 64 * 256, cp.uint32)
ticket = cp.zeros(1, cp.uint32)


def timed(f, reps=200):
    for _ in range(5):
        f()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(reps):
        f()
    e.record(); e.synchronize()
    return cp.cuda.get_elapsed_time(s, e) * 1e3 / reps


big = cp.empty(256 << 20, cp.uint8); big2 = cp.empty_like(big)
copy_us = timed(lambda: copy4((sm * 8,), (512,), (big, big2, np.int64(big.size // 16))), 50)
copy_gbs = 2 * big.size / copy_us / 1e3
print(f"copy {copy_us:.1f} us  {copy_gbs:.0f} GB/s")
small = cp.empty(N, cp.uint8); small2 = cp.empty_like(small)
c16 = timed(lambda: copy4((sm * 8,), (512,), (small, small2, np.int64(N // 16))))
print(f"copy of the 16 MiB image {c16:.1f} us  {2 * N / c16 / 1e3:.0f} GB/s")
print(f"memset alone {timed(lambda: out.fill(0)):.2f} us")
for mode in (0, 1, 4, 5, 8, 9, 12, 13):
    for per_sm, threads in ((1, 1024), (2, 512), (2, 1024), (4, 512), (8, 256), (4, 256), (16, 128)):
        copies = min(threads // 32, 32)
        grid = sm * per_sm

        def call():
            if not mode & 1:
                out.fill(0)
            hist((grid,), (threads,), (img, np.int64(N), out, partial, ticket, np.int32(copies), np.int32(mode)),
                 shared_mem=(32 if mode & 8 else copies) * 256 * 4)
        us = timed(call)
        ok = (cp.asnumpy(out) == want).all()
        print(f"mode={mode} blocks/sm={per_sm:2} threads={threads:4} copies={copies:2}  {us:6.2f} us"
              f"  {N / us / 1e3:6.0f} GB/s  {100 * N / us / 1e3 / copy_gbs:4.1f}% of copy  {'ok' if ok else 'WRONG'}")
