// Random numbers on CUDA, as defined in src/random/stream.rs: one thread per 16-byte block of
// the output, each computing its block's four words with one Philox4x32-10 call (or two
// Threefry2x32-16 calls), turning them into elements and storing them with one 16-byte store.
//
// The including code defines, before this text:
//   EF_ENTRY  the kernel's name
//   EF_KIND   what the words become (EF_UNIFORM_F32 ... below)

typedef unsigned int u32;
typedef unsigned long long u64;

#define EF_UNIFORM_F32 0  /* f32 and c32 */
#define EF_UNIFORM_F64 1  /* f64 and c64 */
#define EF_UNIFORM_F16 2
#define EF_UNIFORM_BITS 3 /* integer types: the bytes as they are */
#define EF_UNIFORM_BOOL 4
#define EF_NORMAL_F32 5   /* f32 and c32 */
#define EF_NORMAL_F64 6   /* f64 and c64 */

// Philox's round keys or Threefry's key injections, computed on the host once per request
// (passed by value: the kernel reads them from the constant bank).
struct ef_keys {
    u32 k[20];
};

__device__ __forceinline__ uint4 ef_philox(u64 g, u32 lane, const ef_keys& rk) {
    u32 c0 = (u32)g, c1 = (u32)(g >> 32), c2 = lane, c3 = 0u;
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        const u32 hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        const u32 hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        c0 = hi1 ^ c1 ^ rk.k[2 * r];
        c1 = lo1;
        c2 = hi0 ^ c3 ^ rk.k[2 * r + 1];
        c3 = lo0;
    }
    return make_uint4(c0, c1, c2, c3);
}

__device__ __forceinline__ uint2 ef_threefry(u64 ctr, const ef_keys& inj) {
    const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    u32 x0 = (u32)ctr + inj.k[0], x1 = (u32)(ctr >> 32) + inj.k[1];
#pragma unroll
    for (int r = 0; r < 16; ++r) {
        x0 += x1;
        x1 = __funnelshift_l(x1, x1, rot[r % 8]) ^ x0;
        if (r % 4 == 3) {
            const int s = (r + 1) / 4;
            x0 += inj.k[2 * s];
            x1 += inj.k[2 * s + 1];
        }
    }
    return make_uint2(x0, x1);
}

// 2^-24, 2^-53 and 2^-11, written exactly.
#define EF_STEP_F32 5.9604644775390625e-08f
#define EF_STEP_F64 1.1102230246251565404236316680908203125e-16
#define EF_STEP_F16 4.8828125e-04f
// 2 pi rounded to float and to double (the CPU multiplies by the same constants).
#define EF_TAU_F32 6.28318530717958647692f
#define EF_TAU_F64 6.28318530717958647692

__device__ __forceinline__ float ef_unit_f32(u32 w) { return (float)(w >> 8) * EF_STEP_F32; }

__device__ __forceinline__ double ef_unit_f64(u32 lo, u32 hi) {
    return (double)((((u64)hi << 32) | lo) >> 11) * EF_STEP_F64;
}

__device__ __forceinline__ u32 ef_f16_bits(u32 h16) {
    const float v = (float)(h16 >> 5) * EF_STEP_F16;  // exact in f16
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
}

__device__ __forceinline__ u32 ef_lo(double d) { return (u32)__double_as_longlong(d); }
__device__ __forceinline__ u32 ef_hi(double d) { return (u32)((u64)__double_as_longlong(d) >> 32); }

// Box-Muller: (r cos t, r sin t) from the uniform words of one pair.
__device__ __forceinline__ float2 ef_box_muller_f32(u32 wa, u32 wb) {
    const float u = ef_unit_f32(wa) + EF_STEP_F32;  // (0, 1], exact
    const float t = ef_unit_f32(wb) * EF_TAU_F32;
    const float r = sqrtf(-2.0f * logf(u));
    float s, c;
    sincosf(t, &s, &c);
    return make_float2(r * c, r * s);
}

__device__ __forceinline__ double2 ef_box_muller_f64(u32 a0, u32 a1, u32 b0, u32 b1) {
    const double u = ef_unit_f64(a0, a1) + EF_STEP_F64;  // (0, 1], exact
    const double t = ef_unit_f64(b0, b1) * EF_TAU_F64;
    const double r = sqrt(-2.0 * log(u));
    double s, c;
    sincos(t, &s, &c);
    return make_double2(r * c, r * s);
}

// The 16 output bytes of a block, from its four words.
__device__ __forceinline__ uint4 ef_convert(uint4 w) {
#if EF_KIND == EF_UNIFORM_F32
    return make_uint4(__float_as_uint(ef_unit_f32(w.x)), __float_as_uint(ef_unit_f32(w.y)),
                      __float_as_uint(ef_unit_f32(w.z)), __float_as_uint(ef_unit_f32(w.w)));
#elif EF_KIND == EF_UNIFORM_F64
    const double a = ef_unit_f64(w.x, w.y), b = ef_unit_f64(w.z, w.w);
    return make_uint4(ef_lo(a), ef_hi(a), ef_lo(b), ef_hi(b));
#elif EF_KIND == EF_UNIFORM_F16
    return make_uint4(ef_f16_bits(w.x & 0xffffu) | (ef_f16_bits(w.x >> 16) << 16),
                      ef_f16_bits(w.y & 0xffffu) | (ef_f16_bits(w.y >> 16) << 16),
                      ef_f16_bits(w.z & 0xffffu) | (ef_f16_bits(w.z >> 16) << 16),
                      ef_f16_bits(w.w & 0xffffu) | (ef_f16_bits(w.w >> 16) << 16));
#elif EF_KIND == EF_UNIFORM_BITS
    return w;
#elif EF_KIND == EF_UNIFORM_BOOL
    return make_uint4(w.x & 0x01010101u, w.y & 0x01010101u, w.z & 0x01010101u,
                      w.w & 0x01010101u);
#elif EF_KIND == EF_NORMAL_F32
    const float2 p = ef_box_muller_f32(w.x, w.y), q = ef_box_muller_f32(w.z, w.w);
    return make_uint4(__float_as_uint(p.x), __float_as_uint(p.y), __float_as_uint(q.x),
                      __float_as_uint(q.y));
#elif EF_KIND == EF_NORMAL_F64
    const double2 p = ef_box_muller_f64(w.x, w.y, w.z, w.w);
    return make_uint4(ef_lo(p.x), ef_hi(p.x), ef_lo(p.y), ef_hi(p.y));
#else
#error "EF_KIND is not defined"
#endif
}

// Fills `nbytes` bytes at `out` (16-byte aligned) with the blocks base, base + 1, ... of the
// generator: Philox with third counter word `lane`, or Threefry when `threefry` is set.
extern "C" __global__ void EF_ENTRY(unsigned char* __restrict__ out, u64 nbytes, u64 base,
                                    ef_keys keys, u32 lane, u32 threefry) {
    const u64 nblocks = (nbytes + 15) / 16;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x; b < nblocks; b += stride) {
        const u64 g = base + b;
        uint4 w;
        if (threefry) {
            const uint2 lo = ef_threefry(2 * g, keys), hi = ef_threefry(2 * g + 1, keys);
            w = make_uint4(lo.x, lo.y, hi.x, hi.y);
        } else {
            w = ef_philox(g, lane, keys);
        }
        const uint4 v = ef_convert(w);
        if (16 * b + 16 <= nbytes) {
            *reinterpret_cast<uint4*>(out + 16 * b) = v;
        } else {
            // the last, partial block: its first `nbytes - 16 b` bytes, a whole number of
            // elements
            const u32 rem = (u32)(nbytes - 16 * b);
            for (u32 i = 0; i < rem; ++i) {
                const u32 word = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
                out[16 * b + i] = (unsigned char)(word >> (8 * (i & 3)));
            }
        }
    }
}
