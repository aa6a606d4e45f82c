// The device functions every fused element-wise and reduction kernel starts with: complex
// arithmetic and functions for cf (c32) and cd (c64), f16 and bf16 conversions, NaN and infinity tests,
// and vector loads and stores of 1 to 16 elements. Included by backend/cuda/codegen.
struct cf { float re, im; };
struct cd { double re, im; };
__device__ __forceinline__ float h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ unsigned short d2h(double f) { unsigned short h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(f)); return h; }
__device__ __forceinline__ float rh(float f) { return h2f(f2h(f)); }
// bf16 is stored as its 16 bits and computed in float. The conversions are written out in
// integer operations rather than taken from cuda_bf16.h: they need no header on NVRTC's include
// path and no sm_80 instruction, and they are the very functions of the CPU's casts
// (storage/bf16_round.rs), so both backends round every value to the same bits.
// b2f: exact (bf16 is the top half of a float).
__device__ __forceinline__ float b2f(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }
// f2b: to nearest even; a NaN stays a quiet NaN with its sign. From sm_80 the rounding is the
// packing conversion (one instruction of the arithmetic pipe, where the scalar `cvt.rn.bf16.f32`
// takes the slow conversion pipe and the integer form six instructions), with the same bits for
// every non-NaN value: subnormals, ties and overflow to infinity included.
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned int ef_pack_bf16(float f) {
  unsigned int p; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(f), "f"(0.0f)); return p;
}
#endif
__device__ __forceinline__ unsigned short f2b(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
#if __CUDA_ARCH__ >= 800
  return (unsigned short)(ef_pack_bf16(f) >> 16);
#else
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}
// d2b: to nearest even from the exact double, through a float rounded to odd (truncated, last
// bit set when anything was dropped), which a second rounding cannot turn into a false tie.
__device__ __forceinline__ unsigned short d2b(double d) {
  float near = __double2float_rn(d);
  if ((double)near == d || d != d) return f2b(near);
  unsigned int u = __float_as_uint(near);
  if (fabs((double)near) > fabs(d)) u -= 1u;
  return f2b(__uint_as_float(u | 1u));
}
// ul2b, l2b: 64-bit integers (not exact in double) rounded to odd into 24 bits, then to bf16.
__device__ __forceinline__ unsigned short ul2b(unsigned long long m) {
  int width = 64 - __clzll((long long)m);
  if (width <= 24) return f2b((float)m);
  int shift = width - 24;
  unsigned long long kept = (m >> shift) | ((m & ((1ull << shift) - 1ull)) != 0ull);
  return f2b((float)kept * __uint_as_float((unsigned int)(127 + shift) << 23));
}
__device__ __forceinline__ unsigned short l2b(long long i) {
  unsigned long long m = i < 0 ? 0ull - (unsigned long long)i : (unsigned long long)i;
  unsigned short b = ul2b(m);
  return i < 0 ? (unsigned short)(b ^ 0x8000u) : b;
}
// rb: a float computed for a bf16 result, rounded to the nearest bf16 and back. An
// intermediate NaN may come out as the canonical one: its sign and payload are not kept through
// arithmetic on either backend anyway. From sm_80 by the scalar conversion: in a loop that
// rounds after every operation it shares the work with the arithmetic pipe, which the packing
// conversion and its mask would both take (benches/gpu/chain_lab.py, whose lib_vote is now
// this form and lib_vote_pack the former: 0.174 against 0.181 ms on an H200); the same bits.
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ float rb(float f) {
  unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return b2f(h);
}
#else
__device__ __forceinline__ float rb(float f) { return b2f(f2b(f)); }
#endif
// Single-precision sine and cosine within 2 ulp: trig.cu's branch-free path (which precedes
// this prelude), sinf and cosf for arguments past its range.
__device__ __forceinline__ float ef_trig(float x, int cosine) {
  bool far = false;
  const float v = ef_trig_near(x, cosine, far);
  return far ? (cosine ? cosf(x) : sinf(x)) : v;
}
__device__ __forceinline__ float ef_sinf(float x) { return ef_trig(x, 0); }
__device__ __forceinline__ float ef_cosf(float x) { return ef_trig(x, 1); }
__device__ __forceinline__ float ef_sinf_near(float x, bool &far) { return ef_trig_near(x, 0, far); }
__device__ __forceinline__ float ef_cosf_near(float x, bool &far) { return ef_trig_near(x, 1, far); }
__device__ __forceinline__ bool ef_isnan(float x) { return x != x; }
__device__ __forceinline__ bool ef_isnan(double x) { return x != x; }
__device__ __forceinline__ bool ef_isinf(float x) { return fabsf(x) == __int_as_float(0x7f800000); }
__device__ __forceinline__ bool ef_isinf(double x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000LL); }
#define CPLX_OPS(C, R, SQRT, EXP, LOG, SIN, COS, SINH, COSH, HYPOT, ATAN2) \
__device__ __forceinline__ C mk(R a, R b, C*) { C z; z.re = a; z.im = b; return z; } \
__device__ __forceinline__ C cadd(C a, C b) { return mk(a.re + b.re, a.im + b.im, (C*)0); } \
__device__ __forceinline__ C csub(C a, C b) { return mk(a.re - b.re, a.im - b.im, (C*)0); } \
__device__ __forceinline__ C cmul(C a, C b) { return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re, (C*)0); } \
__device__ __forceinline__ C cdiv(C a, C b) { R n = b.re * b.re + b.im * b.im; return mk((a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n, (C*)0); } \
__device__ __forceinline__ R cnorm2(C a) { return a.re * a.re + a.im * a.im; } \
__device__ __forceinline__ R cabs_(C a) { return HYPOT(a.re, a.im); } \
__device__ __forceinline__ C cexp_(C a) { R e = EXP(a.re); return mk(e * COS(a.im), e * SIN(a.im), (C*)0); } \
__device__ __forceinline__ C clog_(C a) { return mk(LOG(HYPOT(a.re, a.im)), ATAN2(a.im, a.re), (C*)0); } \
__device__ __forceinline__ C csqrt_(C a) { \
  if (a.re == 0 && a.im == 0) return mk(0, a.im, (C*)0); \
  R r = HYPOT(a.re, a.im); \
  if (a.re >= 0) { R t = SQRT((r + a.re) / 2); return mk(t, a.im / (2 * t), (C*)0); } \
  R t = SQRT((r - a.re) / 2); return mk((a.im < 0 ? -a.im : a.im) / (2 * t), a.im < 0 ? -t : t, (C*)0); } \
__device__ __forceinline__ C csin_(C a) { return mk(SIN(a.re) * COSH(a.im), COS(a.re) * SINH(a.im), (C*)0); } \
__device__ __forceinline__ C ccos_(C a) { return mk(COS(a.re) * COSH(a.im), -SIN(a.re) * SINH(a.im), (C*)0); } \
__device__ __forceinline__ C ctan_(C a) { \
  /* far from the real axis cosh 2b dominates (and overflows): tan = 2 sin 2a e^(-2|b|) + i sign b */ \
  R b = a.im, ab = b < 0 ? -b : b; \
  if (ab > 20) return mk(2 * SIN(2 * a.re) * EXP(-2 * ab), b < 0 ? (R)-1 : (R)1, (C*)0); \
  /* a sum of squares, which does not cancel near the poles as cos 2a + cosh 2b does */ \
  R c = COS(a.re), sh = SINH(b), d = 2 * (c * c + sh * sh); \
  return mk(SIN(2 * a.re) / d, SINH(2 * b) / d, (C*)0); } \
__device__ __forceinline__ C csinh_(C a) { return mk(SINH(a.re) * COS(a.im), COSH(a.re) * SIN(a.im), (C*)0); } \
__device__ __forceinline__ C ccosh_(C a) { return mk(COSH(a.re) * COS(a.im), SINH(a.re) * SIN(a.im), (C*)0); } \
__device__ __forceinline__ C ctanh_(C a) { C t = ctan_(mk(-a.im, a.re, (C*)0)); return mk(t.im, -t.re, (C*)0); } /* -i tan(iz) */ \
__device__ __forceinline__ C cmuli(C a) { return mk(-a.im, a.re, (C*)0); } \
__device__ __forceinline__ C cneg(C a) { return mk(-a.re, -a.im, (C*)0); } \
__device__ __forceinline__ C cone(C*) { return mk(1, 0, (C*)0); } \
__device__ __forceinline__ C casin_(C z) { C o = cone((C*)0); return cneg(cmuli(clog_(cadd(cmuli(z), csqrt_(csub(o, cmul(z, z))))))); } \
__device__ __forceinline__ C cacos_(C z) { C o = cone((C*)0); return cneg(cmuli(clog_(cadd(z, cmuli(csqrt_(csub(o, cmul(z, z)))))))); } \
__device__ __forceinline__ C catan_(C z) { C o = cone((C*)0); C iz = cmuli(z); C d = csub(clog_(csub(o, iz)), clog_(cadd(o, iz))); C h = mk(0, (R)0.5, (C*)0); return cmul(h, d); } \
__device__ __forceinline__ C casinh_(C z) { C o = cone((C*)0); return clog_(cadd(z, csqrt_(cadd(cmul(z, z), o)))); } \
__device__ __forceinline__ C cacosh_(C z) { C o = cone((C*)0); C h = mk((R)0.5, 0, (C*)0); C s = cadd(csqrt_(cmul(cadd(z, o), h)), csqrt_(cmul(csub(z, o), h))); C l = clog_(s); return mk(2 * l.re, 2 * l.im, (C*)0); } \
__device__ __forceinline__ C catanh_(C z) { C o = cone((C*)0); C d = csub(clog_(cadd(o, z)), clog_(csub(o, z))); return mk(d.re / 2, d.im / 2, (C*)0); } \
__device__ __forceinline__ C cpow_(C a, C b) { if (a.re == 0 && a.im == 0) { if (b.re == 0 && b.im == 0) return cone((C*)0); return mk(0, 0, (C*)0); } return cexp_(cmul(b, clog_(a))); }
CPLX_OPS(cf, float, sqrtf, expf, logf, sinf, cosf, sinhf, coshf, hypotf, atan2f)
CPLX_OPS(cd, double, sqrt, exp, log, sin, cos, sinh, cosh, hypot, atan2)
__device__ __forceinline__ cd c2d(cf a) { return mk((double)a.re, (double)a.im, (cd*)0); }
__device__ __forceinline__ cf d2c(cd a) { return mk((float)a.re, (float)a.im, (cf*)0); }
template <int B> struct Bytes;
template <> struct Bytes<1> { typedef unsigned char T; };
template <> struct Bytes<2> { typedef unsigned short T; };
template <> struct Bytes<4> { typedef unsigned int T; };
template <> struct Bytes<8> { typedef unsigned long long T; };
struct alignas(16) u128_ { unsigned long long a, b; };
template <> struct Bytes<16> { typedef u128_ T; };
template <typename T, int N> __device__ __forceinline__ void vload(T (&dst)[N], const T* src) {
  typedef typename Bytes<sizeof(T) * N>::T V;
  union { V v; T e[N]; } u; u.v = *reinterpret_cast<const V*>(src);
#pragma unroll
  for (int k = 0; k < N; k++) dst[k] = u.e[k];
}
template <typename T, int N> __device__ __forceinline__ void vstore(T* dst, const T (&src)[N]) {
  typedef typename Bytes<sizeof(T) * N>::T V;
  union { V v; T e[N]; } u;
#pragma unroll
  for (int k = 0; k < N; k++) u.e[k] = src[k];
  *reinterpret_cast<V*>(dst) = u.v;
}

// Makes the vector `a` opaque to the compiler (an empty asm that may have changed its bits), so
// that a vector loop's rare second pass over the same elements (see ef_trig_near) computes
// anew: shared with the first pass, the first pass's values would stay live across the branch
// and take three times the registers.
__device__ __forceinline__ void ef_opaque_bits(unsigned char &x) { unsigned short h = x; asm volatile("" : "+h"(h)); x = (unsigned char)h; }
__device__ __forceinline__ void ef_opaque_bits(unsigned short &x) { asm volatile("" : "+h"(x)); }
__device__ __forceinline__ void ef_opaque_bits(unsigned int &x) { asm volatile("" : "+r"(x)); }
__device__ __forceinline__ void ef_opaque_bits(unsigned long long &x) { asm volatile("" : "+l"(x)); }
__device__ __forceinline__ void ef_opaque_bits(u128_ &x) { asm volatile("" : "+l"(x.a), "+l"(x.b)); }
template <typename T, int N> __device__ __forceinline__ void ef_opaque(T (&a)[N]) {
  typedef typename Bytes<sizeof(T) * N>::T V;
  union { V v; T e[N]; } u;
#pragma unroll
  for (int k = 0; k < N; k++) u.e[k] = a[k];
  ef_opaque_bits(u.v);
#pragma unroll
  for (int k = 0; k < N; k++) a[k] = u.e[k];
}

// The value `v` of the next lane of the warp (NEXT = 1) or of the previous one (NEXT = 0), for
// any element type: shuffled as 32-bit words. Every lane of the warp must call it.
template <int NEXT, typename T> __device__ __forceinline__ T ef_shfl_adjacent(const T v) {
  union { T v; unsigned int w[(sizeof(T) + 3) / 4]; } u; u.v = v;
#pragma unroll
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); k++)
    u.w[k] = NEXT ? __shfl_down_sync(0xffffffffu, u.w[k], 1) : __shfl_up_sync(0xffffffffu, u.w[k], 1);
  return u.v;
}

// x / d for x < 2^31, with d given as a packed divisor from the host (`codegen::index::divisor`):
// a multiplier in the low 58 bits and a shift above them.
__device__ __forceinline__ unsigned ef_udiv(const unsigned x, const unsigned long long packed) {
  return (unsigned)(((unsigned long long)x * (packed & 0x3FFFFFFFFFFFFFFULL)) >> (unsigned)(packed >> 58));
}
