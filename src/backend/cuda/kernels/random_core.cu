// The generators of src/random/stream.rs on the device: Philox4x32-10 and Threefry2x32-16,
// the uniform values of words, and the Box-Muller transform. Shared by the random kernel
// (random.cu) and by the random leaves of fused kernels (random_leaf.cu), so that a request's
// numbers are the same whichever computes them.

typedef unsigned int u32;
typedef unsigned long long u64;

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

// 2^-24 and 2^-53, written exactly.
#define EF_STEP_F32 5.9604644775390625e-08f
#define EF_STEP_F64 1.1102230246251565404236316680908203125e-16
// 2 pi rounded to float and to double (the CPU multiplies by the same constants).
#define EF_TAU_F32 6.28318530717958647692f
#define EF_TAU_F64 6.28318530717958647692

__device__ __forceinline__ float ef_unit_f32(u32 w) { return (float)(w >> 8) * EF_STEP_F32; }

__device__ __forceinline__ double ef_unit_f64(u32 lo, u32 hi) {
    return (double)((((u64)hi << 32) | lo) >> 11) * EF_STEP_F64;
}

// Box-Muller: (r cos t, r sin t) from the uniform words of one pair. t lies in [0, 2 pi): the
// sine and cosine come from one short reduction (trig.cu) rather than sincosf, whose long
// reduction for large arguments, never taken here, kept its registers and instructions in every
// kernel that draws normals.
__device__ __forceinline__ float2 ef_box_muller_f32(u32 wa, u32 wb) {
    const float u = ef_unit_f32(wa) + EF_STEP_F32;  // (0, 1], exact
    const float t = ef_unit_f32(wb) * EF_TAU_F32;
    const float r = sqrtf(-2.0f * logf(u));
    float s, c;
    ef_sincosf_near(t, &s, &c);
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

// The four words of block `g`: one Philox call, or Threefry's two (counters 2g and 2g + 1).
template <int THREEFRY>
__device__ __forceinline__ uint4 ef_block_words(u64 g, u32 lane, const ef_keys& keys) {
    if (THREEFRY) {
        const uint2 lo = ef_threefry(2 * g, keys), hi = ef_threefry(2 * g + 1, keys);
        return make_uint4(lo.x, lo.y, hi.x, hi.y);
    }
    return ef_philox(g, lane, keys);
}
