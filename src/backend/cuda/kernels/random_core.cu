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

// Box-Muller's radius sqrt(-2 ln u) for u in [2^-24, 1], the only arguments the f32 draws
// give. logf and sqrtf spend about as many instructions on what such an argument never is
// (subnormal, zero, infinite, NaN, negative; sqrtf's out-of-range branch) as on the value, and
// in a kernel that draws normals and reduces them (a Monte Carlo estimate) the radius was a
// fifth of the work. Here: u = 2^i m with m in [2/3, 4/3), ln u = i ln 2 + f + f^2 g(f) for
// f = m - 1 (exact), g a degree-8 polynomial fitted for this library on [-1/3, 1/3] (0.28 ulp
// of ln(1 + f) before rounding); then the square root by CUDA's own correctly rounded sequence
// for arguments in range (a reciprocal square root and one correction), with the one argument
// out of its range, 0 (u = 1), kept at 0 by bounding the reciprocal. benches/gpu/normal_lab.py
// measures both ways over all 2^24 arguments.
__device__ __forceinline__ float ef_bm_radius(float u) {
    const int bits = __float_as_int(u);
    const int e = (bits - 0x3f2aaaab) & (int)0xff800000;  // i * 2^23
    const float f = __int_as_float(bits - e) - 1.0f;
    float g = -1.3310289382934570e-1f;
    g = fmaf(g, f, 1.4005227386951447e-1f);
    g = fmaf(g, f, -1.2078519165515900e-1f);
    g = fmaf(g, f, 1.4001017808914185e-1f);
    g = fmaf(g, f, -1.6689473390579224e-1f);
    g = fmaf(g, f, 2.0010760426521301e-1f);
    g = fmaf(g, f, -2.4999508261680603e-1f);
    g = fmaf(g, f, 3.3333209156990051e-1f);
    g = fmaf(g, f, -0.5f);
    const float ln_m = fmaf(f, f * g, f);
    // i ln 2 as (i 2^23) (ln 2 2^-23): e is exact as a float (a multiple of 2^23 below 2^28)
    const float y = -2.0f * fmaf((float)e, 0.693147182f * 1.1920928955078125e-7f, ln_m);
    // 1 / sqrt(y), flushing subnormals (y never is one: rsqrtf's scaling for them is four
    // instructions), its magnitude bounded so that y = 0 gives 0: u = 1 makes y -0 (as on the
    // CPU, whose sqrt then gives -0 too), whose reciprocal square root is -infinity
    float h;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(h) : "f"(y));
    h = fminf(fabsf(h), 1e30f);
    const float s = y * h;
    return fmaf(fmaf(-s, s, y), 0.5f * h, s);
}

// Box-Muller: (r cos t, r sin t) from the uniform words of one pair. t lies in [0, 2 pi): the
// sine and cosine come from one short reduction (trig.cu) rather than sincosf, whose long
// reduction for large arguments, never taken here, kept its registers and instructions in every
// kernel that draws normals.
__device__ __forceinline__ float2 ef_box_muller_f32(u32 wa, u32 wb) {
    const float u = ef_unit_f32(wa) + EF_STEP_F32;  // (0, 1], exact
    const float t = ef_unit_f32(wb) * EF_TAU_F32;
    const float r = ef_bm_radius(u);
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
