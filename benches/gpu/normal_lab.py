#!/usr/bin/env python3
"""The Box-Muller radius sqrt(-2 ln u) of the device's normal draws, two ways, on the GPU
machine through CuPy: `lib` (sqrtf of -2 logf, CUDA's, as random_core.cu computed it before)
and `own` (random_core.cu's ef_bm_radius: a logarithm and a square root that skip the special
cases a Box-Muller argument never meets). Prints, over every one of the 2^24 arguments
u = k 2^-24 (k = 1 .. 2^24) the draws can give, each way's largest error in f32 ulps against
NumPy's f64 reference and how many results the two ways differ in; then the Monte Carlo kernel
of `mc_barrier_f32` (2^20 paths of 179 normal steps, the product of exp(a z + b) a path,
Philox4x32-10 words, four paths a thread) with each radius, timed with CUDA events.

    python3 benches/gpu/normal_lab.py
"""
import os, statistics
import cupy as cp
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
KER = os.path.join(here, "..", "..", "src", "backend", "cuda", "kernels")
CORE = open(os.path.join(KER, "trig.cu")).read() + open(os.path.join(KER, "random_core.cu")).read()
SRC = CORE + r"""
__device__ __forceinline__ float lib_radius(float u) { return sqrtf(-2.0f * logf(u)); }
template <int OWN> __device__ __forceinline__ float radius(float u) {
  return OWN ? ef_bm_radius(u) : lib_radius(u);
}
extern "C" __global__ void radii(float *own, float *lib, unsigned n) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x + 1;
  if (k > n) return;
  const float u = (float)k * EF_STEP_F32;
  own[k - 1] = ef_bm_radius(u);
  lib[k - 1] = lib_radius(u);
}
__constant__ ef_keys KEYS;
template <int OWN>
__device__ __forceinline__ void mc(float *out, long long paths, int steps, float a, float b) {
  const long long p0 = 4 * ((long long)blockIdx.x * blockDim.x + threadIdx.x);
  if (p0 >= paths) return;
  double acc[4] = {1.0, 1.0, 1.0, 1.0};
  for (int s = 0; s < steps; ++s) {
    const uint4 w = ef_philox((unsigned long long)((p0 + s * paths) >> 2), 7u, KEYS);
    const float ra = radius<OWN>(ef_unit_f32(w.x) + EF_STEP_F32), rb = radius<OWN>(ef_unit_f32(w.z) + EF_STEP_F32);
    float sa, ca, sb, cb;
    ef_sincosf_near(ef_unit_f32(w.y) * EF_TAU_F32, &sa, &ca);
    ef_sincosf_near(ef_unit_f32(w.w) * EF_TAU_F32, &sb, &cb);
    const float z[4] = {ra * ca, ra * sa, rb * cb, rb * sb};
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[e] *= (double)expf(fmaf(z[e], a, b));
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) out[p0 + e] = (float)acc[e];
}
extern "C" __global__ void mc_lib(float *o, long long n, int s, float a, float b) { mc<0>(o, n, s, a, b); }
extern "C" __global__ void mc_own(float *o, long long n, int s, float a, float b) { mc<1>(o, n, s, a, b); }
"""
mod = cp.RawModule(code=SRC, options=("-std=c++17",), name_expressions=None)

# accuracy over every argument
n = 1 << 24
own = cp.empty(n, cp.float32); lib = cp.empty(n, cp.float32)
mod.get_function("radii")(((n + 255) // 256,), (256,), (own, lib, np.uint32(n)))
u = np.arange(1, n + 1, dtype=np.float64) * 2.0 ** -24
ref = np.sqrt(-2.0 * np.log(u))
ulp = np.spacing(ref.astype(np.float32)).astype(np.float64)
ulp[ref == 0] = np.spacing(np.float32(0))
for name, got in (("own", own.get()), ("lib", lib.get())):
    err = np.abs(got.astype(np.float64) - ref) / ulp
    print(f"radius {name}: max {err.max():.3f} ulp, mean {err.mean():.4f}, at u = 1: {got[-1]!r}")
print(f"radius: own and lib differ in {int((own != lib).sum().get())} of {n}")

# the Monte Carlo kernel
keys = np.arange(20, dtype=np.uint32) * np.uint32(0x9E3779B9)
cp.ndarray((20,), cp.uint32, mod.get_global("KEYS"))[:] = cp.asarray(keys)
paths, steps = 1 << 20, 179
dt = 0.5 / 179; a, b = np.float32(0.3 * dt ** 0.5), np.float32((0.01 - 0.045) * dt)
outs = {}
for name in ("mc_lib", "mc_own"):
    f = mod.get_function(name); o = cp.empty(paths, cp.float32)
    args = ((paths // 4 + 255) // 256,), (256,), (o, np.int64(paths), np.int32(steps), a, b)
    for _ in range(3): f(*args)
    times = []
    for _ in range(20):
        s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); f(*args); e.record(); e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e))
    outs[name] = o.get()
    print(f"{name}: {statistics.median(times):.4f} ms (min {min(times):.4f}), mean path {outs[name].mean():.6f}")
d = np.abs(outs["mc_own"].astype(np.float64) - outs["mc_lib"]) / np.abs(outs["mc_lib"])
print(f"mc: largest relative difference of a path's product {d.max():.3e}")
