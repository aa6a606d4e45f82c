#!/usr/bin/env python3
"""Variants of the fused `chain_bf16` kernel (sin(x) * cos(y) + x * y - 0.5 on 2^26 bf16
elements), timed with CUDA events through CuPy on the GPU machine, to choose how the JIT rounds
bf16 results and computes single-precision sines and cosines (the prelude,
src/backend/cuda/kernels/elementwise_prelude.cu, which this script includes).

Each variant is named rounding_trig: rounding `int_` (the integer round to nearest even after
each operation), `hw_` (the scalar conversion instruction after each), `hw2_` (the packing
conversion, two values at a time), `once_` (only on store, as torch.compile does) or `rb`
(the prelude's); trig `sinf` (CUDA's), `poly` (a polynomial pair with the accurate functions
inline for far arguments), `poly2` (the same, far ones out of line), `vote` (the whole
vector's elements branch-free, repeated accurately when any argument was far), `fast`
(`__sinf`, outside bf16's contract near the zeros of sine), `lib_vote` (the prelude's
functions as the JIT emits them), `lib_vote_shared` (the same without the opaque
inputs), `lib_vote_sel` (the sine's former select on a zero argument), `lib_vote_sinf_far`
(the far pass by sinf and cosf alone) and `lib_vote_pack` (rounding by the packing conversion and a mask, the prelude's `rb` before
the scalar conversion). Then the prelude's ef_sinf/ef_cosf against sinf/cosf in ulps over four ranges, and
special values.

    python3 benches/gpu/chain_lab.py
"""
import os, statistics, sys
import cupy as cp
N = 1 << 26
here = os.path.dirname(os.path.abspath(__file__))
KER = os.path.join(here, "..", "..", "src", "backend", "cuda", "kernels")
PRE = open(os.path.join(KER, "trig.cu")).read() + open(os.path.join(KER, "elementwise_prelude.cu")).read()
EXTRA = r"""
__device__ __forceinline__ float rb_int(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __uint_as_float(((u >> 16) | 0x40u) << 16);
  return __uint_as_float(((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16);
}
__device__ __forceinline__ float rbh(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return b2f(h); }
__device__ __forceinline__ float rbp(float f) { unsigned int p; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(f), "f"(0.0f)); return __uint_as_float(p & 0xffff0000u); }
__device__ __forceinline__ void rbh2(float &a, float &b) {
  unsigned int p; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(a), "f"(b));
  a = __uint_as_float(p & 0xffff0000u); b = __uint_as_float(p << 16); }
__device__ __forceinline__ float lab_trig(float x, int cosine) {
  if (!(fabsf(x) < 105615.0f)) return cosine ? cosf(x) : sinf(x);
  float t = fmaf(x, 0.636619772367581343f, 12582912.0f);
  float j = t - 12582912.0f;
  int q = __float_as_int(t) + cosine;
  float r = fmaf(j, -1.57079625129699707031f, x);
  r = fmaf(j, -7.54978941586159635335e-08f, r);
  r = fmaf(j, -5.39030295347423839270e-15f, r);
  float s = r * r;
  float ps = fmaf(fmaf(s, -0.00019515282474458218f, 0.00833216030150652f), s, -0.16666655242443085f);
  float pc = fmaf(fmaf(fmaf(s, 2.4383567506447434e-05f, -0.001388668199069798f), s, 0.04166661947965622f), s, -0.5f);
  float sn = r * fmaf(s, ps, 1.0f);
  float cs = fmaf(s, pc, 1.0f);
  float v = (q & 1) ? cs : sn;
  return (q & 2) ? -v : v;
}
// the prelude's near path before the sine's zero-keeping form: a select on x == 0
__device__ __forceinline__ float lab_trig_sel(float x, int cosine, bool &far) {
  const float t = fmaf(x, 0.636619772367581343f, 12582912.0f);
  const float j = t - 12582912.0f;
  const int q = __float_as_int(t) + cosine;
  float r = fmaf(j, -1.57079625129699707031f, x);
  r = fmaf(j, -7.54978941586159635335e-08f, r);
  r = fmaf(j, -5.39030295347423839270e-15f, r);
  const float s = r * r;
  const float ps = fmaf(fmaf(s, -1.9515282474458218e-4f, 8.33216030150652e-3f), s, -1.6666655242443085e-1f);
  const float pc = fmaf(fmaf(fmaf(s, 2.4383567506447434e-5f, -1.388668199069798e-3f), s, 4.166661947965622e-2f), s, -0.5f);
  const float sn = x == 0.0f ? x : fmaf(r * s, ps, r);
  const float v = (q & 1) ? fmaf(s, pc, 1.0f) : sn;
  far |= !(fabsf(x) < 105615.0f);
  return (q & 2) ? -v : v;
}
__device__ __noinline__ float lab_trig_far(float x, int cosine) { return cosine ? cosf(x) : sinf(x); }
__device__ __forceinline__ float lab_trig2(float x, int cosine) {
  float t = fmaf(x, 0.636619772367581343f, 12582912.0f);
  float j = t - 12582912.0f;
  int q = __float_as_int(t) + cosine;
  float r = fmaf(j, -1.57079625129699707031f, x);
  r = fmaf(j, -7.54978941586159635335e-08f, r);
  r = fmaf(j, -5.39030295347423839270e-15f, r);
  float s = r * r;
  float ps = fmaf(fmaf(s, -0.00019515282474458218f, 0.00833216030150652f), s, -0.16666655242443085f);
  float pc = fmaf(fmaf(fmaf(s, 2.4383567506447434e-05f, -0.001388668199069798f), s, 0.04166661947965622f), s, -0.5f);
  float sn = r * fmaf(s, ps, 1.0f);
  float cs = fmaf(s, pc, 1.0f);
  float v = (q & 1) ? cs : sn;
  v = (q & 2) ? -v : v;
  if (__builtin_expect(!(fabsf(x) < 105615.0f), 0)) v = lab_trig_far(x, cosine);
  return v;
}
__device__ __forceinline__ float lab_trig3(float x, int cosine, bool &far) {
  float t = fmaf(x, 0.636619772367581343f, 12582912.0f);
  float j = t - 12582912.0f;
  int q = __float_as_int(t) + cosine;
  float r = fmaf(j, -1.57079625129699707031f, x);
  r = fmaf(j, -7.54978941586159635335e-08f, r);
  r = fmaf(j, -5.39030295347423839270e-15f, r);
  float s = r * r;
  float ps = fmaf(fmaf(s, -0.00019515282474458218f, 0.00833216030150652f), s, -0.16666655242443085f);
  float pc = fmaf(fmaf(fmaf(s, 2.4383567506447434e-05f, -0.001388668199069798f), s, 0.04166661947965622f), s, -0.5f);
  float sn = r * fmaf(s, ps, 1.0f);
  float cs = fmaf(s, pc, 1.0f);
  float v = (q & 1) ? cs : sn;
  far |= !(fabsf(x) < 105615.0f);
  return (q & 2) ? -v : v;
}
__device__ __forceinline__ float lab_sin2(float x) { return lab_trig2(x, 0); }
__device__ __forceinline__ float lab_cos2(float x) { return lab_trig2(x, 1); }
__device__ __noinline__ float lab_sinf_far(float x) { return sinf(x); }
__device__ __noinline__ float lab_cosf_far(float x) { return cosf(x); }
__device__ __forceinline__ float lab_sin(float x) { return lab_trig(x, 0); }
__device__ __forceinline__ float lab_cos(float x) { return lab_trig(x, 1); }
"""
def kernel(name, rnd, sin, cos, pairs=False, f32=False, vote=False, lib=False):
    T = "float" if f32 else "unsigned short"
    ld = (lambda r: r) if f32 else (lambda r: f"b2f({r})")
    st = (lambda v: v) if f32 else (lambda v: f"f2b({v})")
    R = (lambda e: f"{rnd}({e})") if rnd and not pairs else (lambda e: e)
    w = 4 if f32 else 8
    b = [f'extern "C" __global__ void {name}(const long long n, const {T}* __restrict__ in0, const {T}* __restrict__ in1, const float s5, {T}* __restrict__ out0) {{',
         f"  const long long nv = n / {w};",
         "  for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {",
         f"    const long long i0 = v * {w};",
         f"    {T} r0[{w}]; vload(r0, in0 + i0);", f"    {T} r1[{w}]; vload(r1, in1 + i0);", f"    {T} w0[{w}];"]
    if vote:
        body = lambda sn, cs: [f"#pragma unroll\n    for (int j = 0; j < {w}; j++) {{",
              f"      const float v0 = {ld('r0[j]')}; const float v1 = {ld('r1[j]')};",
              f"      const float v2 = {R(sn('v0'))}; const float v3 = {R(cs('v1'))};",
              f"      const float v4 = {R('v2 * v3')}; const float v5 = {R('v0 * v1')};",
              f"      const float v6 = {R('v4 + v5')}; const float v7 = {R('v6 - s5')};",
              f"      w0[j] = {st('v7')};", "    }"]
        if lib:  # the prelude's functions, as the JIT emits them
            if lib == "sel":
                b += ["    bool far = false;"] + body(lambda a: f"lab_trig_sel({a}, 0, far)", lambda a: f"lab_trig_sel({a}, 1, far)")
            else:
                b += ["    bool far = false;"] + body(lambda a: f"ef_sinf_near({a}, far)", lambda a: f"ef_cosf_near({a}, far)")
            # the second pass from inputs made opaque, as the JIT emits it (without, the
            # compiler keeps the first pass's values live across the branch: 128 registers)
            far = ["    if (far) {", "      ef_opaque(r0); ef_opaque(r1);"]
            if lib == "shared":
                far = ["    if (far) {"]
            if lib == "sinf_far":
                b += far + body(lambda a: f"sinf({a})", lambda a: f"cosf({a})") + ["    }"]
            else:
                b += far + body(lambda a: f"ef_sinf({a})", lambda a: f"ef_cosf({a})") + ["    }"]
        else:
            b += ["    bool far = false;"] + body(lambda a: f"lab_trig3({a}, 0, far)", lambda a: f"lab_trig3({a}, 1, far)")
            b += ["    if (far) {"] + body(lambda a: f"sinf({a})", lambda a: f"cosf({a})") + ["    }"]
    elif not pairs:
        b += [f"#pragma unroll\n    for (int j = 0; j < {w}; j++) {{",
              f"      const float v0 = {ld('r0[j]')}; const float v1 = {ld('r1[j]')};",
              f"      const float v2 = {R(sin+'(v0)')}; const float v3 = {R(cos+'(v1)')};",
              f"      const float v4 = {R('v2 * v3')}; const float v5 = {R('v0 * v1')};",
              f"      const float v6 = {R('v4 + v5')}; const float v7 = {R('v6 - s5')};",
              f"      w0[j] = {st('v7')};", "    }"]
    else:
        b += [f"#pragma unroll\n    for (int j = 0; j < {w}; j += 2) {{",
              "      float a0 = b2f(r0[j]), b0 = b2f(r0[j+1]), a1 = b2f(r1[j]), b1 = b2f(r1[j+1]);",
              f"      float a2 = {sin}(a0), b2 = {sin}(b0); rbh2(a2, b2);",
              f"      float a3 = {cos}(a1), b3 = {cos}(b1); rbh2(a3, b3);",
              "      float a4 = a2 * a3, b4 = b2 * b3; rbh2(a4, b4);",
              "      float a5 = a0 * a1, b5 = b0 * b1; rbh2(a5, b5);",
              "      float a6 = a4 + a5, b6 = b4 + b5; rbh2(a6, b6);",
              "      float a7 = a6 - s5, b7 = b6 - s5;",
              "      unsigned int p; asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(p) : \"f\"(b7), \"f\"(a7));",
              "      w0[j] = (unsigned short)(p & 0xffffu); w0[j+1] = (unsigned short)(p >> 16);", "    }"]
    b += ["    vstore(out0 + i0, w0);", "  }", "}"]
    return "\n".join(b)
variants = [
    ("cur_int_sinf", dict(rnd="rb_int", sin="sinf", cos="cosf")),
    ("hw_sinf", dict(rnd="rbh", sin="sinf", cos="cosf")),
    ("hw2_sinf", dict(rnd="rbh", sin="sinf", cos="cosf", pairs=True)),
    ("once_sinf", dict(rnd=None, sin="sinf", cos="cosf")),
    ("int_poly", dict(rnd="rb_int", sin="lab_sin", cos="lab_cos")),
    ("hw_poly", dict(rnd="rbh", sin="lab_sin", cos="lab_cos")),
    ("hw2_poly", dict(rnd="rbh", sin="lab_sin", cos="lab_cos", pairs=True)),
    ("once_poly", dict(rnd=None, sin="lab_sin", cos="lab_cos")),
    ("once_fast", dict(rnd=None, sin="__sinf", cos="__cosf")),
    ("once_poly2", dict(rnd=None, sin="lab_sin2", cos="lab_cos2")),
    ("hw2_poly2", dict(rnd="rbh", sin="lab_sin2", cos="lab_cos2", pairs=True)),
    ("hw_poly2", dict(rnd="rbh", sin="lab_sin2", cos="lab_cos2")),
    ("once_vote", dict(rnd=None, sin="", cos="", vote=True)),
    ("lib_vote", dict(rnd="rb", sin="", cos="", vote=True, lib=True)),
    ("lib_vote_shared", dict(rnd="rb", sin="", cos="", vote=True, lib="shared")),
    ("lib_vote_sel", dict(rnd="rb", sin="", cos="", vote=True, lib="sel")),
    ("lib_vote_sinf_far", dict(rnd="rb", sin="", cos="", vote=True, lib="sinf_far")),
    ("lib_vote_pack", dict(rnd="rbp", sin="", cos="", vote=True, lib=True)),
    ("hw_vote", dict(rnd="rbh", sin="", cos="", vote=True)),
    ("int_vote", dict(rnd="rb_int", sin="", cos="", vote=True)),
    ("f32_vote", dict(rnd=None, sin="", cos="", vote=True, f32=True)),
    ("f32_sinf", dict(rnd=None, sin="sinf", cos="cosf", f32=True)),
    ("f32_poly", dict(rnd=None, sin="lab_sin", cos="lab_cos", f32=True)),
]
src = PRE + EXTRA + "\n".join(kernel(n, **kw) for n, kw in variants)
mod = cp.RawModule(code=src, options=("-std=c++17",))
def time_ms(fn, reps=40):
    for _ in range(3): fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); fn(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    return statistics.median(ts)
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
g = cp.random.default_rng(1)
xf = g.random(N, dtype=cp.float32); yf = g.random(N, dtype=cp.float32)
def tobf(a):  # to nearest even
    u = a.view(cp.uint32); return ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(cp.uint16)
xb, yb = tobf(xf), tobf(yf)
ref = cp.sin(xb.astype(cp.uint32).__lshift__(16).view(cp.float32).astype(cp.float64)) * cp.cos((yb.astype(cp.uint32) << 16).view(cp.float32).astype(cp.float64))
xd = (xb.astype(cp.uint32) << 16).view(cp.float32).astype(cp.float64); yd = (yb.astype(cp.uint32) << 16).view(cp.float32).astype(cp.float64)
ref = cp.sin(xd) * cp.cos(yd) + xd * yd - 0.5
c = cp.empty(N, dtype=cp.float32); c2 = cp.empty_like(xf)
cms = time_ms(lambda: cp.copyto(c2, xf))
print(f"copy_f32 ms={cms:.4f} gbs={2*4*N/cms/1e6:.1f}")
for name, kw in variants:
    f32 = kw.get("f32", False)
    a, b = (xf, yf) if f32 else (xb, yb)
    out = cp.empty(N, dtype=cp.float32 if f32 else cp.uint16)
    k = mod.get_function(name)
    w = 4 if f32 else 8
    grid = min((N // w + 255) // 256, sms * 16)
    run = lambda: k((grid,), (256,), (cp.int64(N), a, b, cp.float32(0.5), out))
    ms = time_ms(run)
    got = out.astype(cp.float64) if f32 else (out.astype(cp.uint32) << 16).view(cp.float32).astype(cp.float64)
    err = float(cp.max(cp.abs(got - ref)))
    nb = (12 if f32 else 6) * N
    print(f"{name} ms={ms:.4f} gbs={nb/ms/1e6:.1f} of_copy={nb/ms/1e6/(2*4*N/cms/1e6)*100:.0f}% maxerr={err:.3g}", flush=True)
# agreement of the polynomial pair with sinf/cosf in f32 over a wide range
xw = (g.random(N, dtype=cp.float32) - 0.5) * 2e4
o1 = cp.empty(N, dtype=cp.float32); o2 = cp.empty(N, dtype=cp.float32)
acc = cp.RawKernel(PRE + EXTRA + r'''
extern "C" __global__ void acc(const long long n, const float* x, float* s, float* c, float* s0, float* c0) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { s[i] = ef_sinf(x[i]); c[i] = ef_cosf(x[i]); s0[i] = sinf(x[i]); c0[i] = cosf(x[i]); }
}''', "acc", options=("-std=c++17",))
o3 = cp.empty(N, dtype=cp.float32); o4 = cp.empty(N, dtype=cp.float32)
for lo in [0.785, 10.0, 1e4, 1.2e5]:
    xw = ((g.random(N, dtype=cp.float32) - 0.5) * 2 * lo).astype(cp.float32)
    acc(((N + 255) // 256,), (256,), (cp.int64(N), xw, o1, o2, o3, o4))
    xd = xw.astype(cp.float64)
    for nm, o, fr in [("ef_sinf", o1, cp.sin), ("ef_cosf", o2, cp.cos), ("sinf", o3, cp.sin), ("cosf", o4, cp.cos)]:
        import numpy as np
        m = 1 << 22
        r = np.asarray(fr(xd[:m]).get()); sp = np.spacing(np.abs(r).astype(np.float32)).astype(np.float64)
        u = np.abs(o[:m].get().astype(np.float64) - r) / sp
        print(f"range {lo:g} {nm}: max ulps {u.max():.2f} mean {u.mean():.3f}")
sp = cp.array([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-30, -1e-30, 1e-45, 3.14159265, 1.5707964], dtype=cp.float32)
n2 = sp.size
acc((1,), (256,), (cp.int64(n2), sp, o1, o2, o3, o4))
print("specials ef_sinf", o1[:n2].get().tolist()); print("specials sinf", o3[:n2].get().tolist())
print("specials ef_cosf", o2[:n2].get().tolist()); print("specials cosf", o4[:n2].get().tolist())
