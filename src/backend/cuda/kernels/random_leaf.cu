// Random leaves of fused kernels: the elements of a request (src/random/stream.rs) computed
// where a kernel reads them, from their linear index `e` within the request, instead of being
// stored by the random kernel and loaded back. Follows random_core.cu.
//
// A block of 16 bytes holds four f32 elements or two f64 ones. A lane reading `W` consecutive
// elements from a multiple of `W` (the wide reads of element-wise and reduction kernels) makes
// each block it covers once; an element read alone makes its whole block (Box-Muller's other
// pair, or the other half, is left to the compiler to drop).
//
// Template parameters: THREEFRY (the generator), NORMAL (the distribution; uniform otherwise).

// The four f32 elements of block `g`.
template <int THREEFRY, int NORMAL>
__device__ __forceinline__ float4 ef_rand_f32x4(u64 g, u32 lane, const ef_keys& keys) {
    const uint4 w = ef_block_words<THREEFRY>(g, lane, keys);
    if (NORMAL) {
        const float2 p = ef_box_muller_f32(w.x, w.y), q = ef_box_muller_f32(w.z, w.w);
        return make_float4(p.x, p.y, q.x, q.y);
    }
    return make_float4(ef_unit_f32(w.x), ef_unit_f32(w.y), ef_unit_f32(w.z), ef_unit_f32(w.w));
}

// The pair of f32 elements that element `e` belongs to (elements e & ~1 and e | 1) of a request
// starting at block `base`: two of its block's four words.
template <int THREEFRY, int NORMAL>
__device__ __forceinline__ float2 ef_rand_f32x2(u64 e, u64 base, u32 lane, const ef_keys& keys) {
    const uint4 w = ef_block_words<THREEFRY>(base + (e >> 2), lane, keys);
    const u32 a = (e & 2) ? w.z : w.x, b = (e & 2) ? w.w : w.y;
    if (NORMAL) {
        return ef_box_muller_f32(a, b);
    }
    return make_float2(ef_unit_f32(a), ef_unit_f32(b));
}

// Element `e` of an f32 request starting at block `base`.
template <int THREEFRY, int NORMAL>
__device__ __forceinline__ float ef_rand_f32(u64 e, u64 base, u32 lane, const ef_keys& keys) {
    const float2 p = ef_rand_f32x2<THREEFRY, NORMAL>(e, base, lane, keys);
    return (e & 1) ? p.y : p.x;
}

// Elements e0 .. e0 + W - 1 of an f32 request, e0 a multiple of W.
template <int THREEFRY, int NORMAL, int W>
__device__ __forceinline__ void ef_rand_fill_f32(float (&r)[W], u64 e0, u64 base, u32 lane,
                                                 const ef_keys& keys) {
    if constexpr (W >= 4) {
#pragma unroll
        for (int b = 0; b < W / 4; ++b) {
            const float4 v = ef_rand_f32x4<THREEFRY, NORMAL>(base + (e0 >> 2) + b, lane, keys);
            r[4 * b] = v.x;
            r[4 * b + 1] = v.y;
            r[4 * b + 2] = v.z;
            r[4 * b + 3] = v.w;
        }
    } else if constexpr (W == 2) {
        const float2 p = ef_rand_f32x2<THREEFRY, NORMAL>(e0, base, lane, keys);
        r[0] = p.x;
        r[1] = p.y;
    } else {
        r[0] = ef_rand_f32<THREEFRY, NORMAL>(e0, base, lane, keys);
    }
}

// The two f64 elements of block `g`.
template <int THREEFRY, int NORMAL>
__device__ __forceinline__ double2 ef_rand_f64x2(u64 g, u32 lane, const ef_keys& keys) {
    const uint4 w = ef_block_words<THREEFRY>(g, lane, keys);
    if (NORMAL) {
        return ef_box_muller_f64(w.x, w.y, w.z, w.w);
    }
    return make_double2(ef_unit_f64(w.x, w.y), ef_unit_f64(w.z, w.w));
}

// Element `e` of an f64 request starting at block `base`.
template <int THREEFRY, int NORMAL>
__device__ __forceinline__ double ef_rand_f64(u64 e, u64 base, u32 lane, const ef_keys& keys) {
    const double2 v = ef_rand_f64x2<THREEFRY, NORMAL>(base + (e >> 1), lane, keys);
    return (e & 1) ? v.y : v.x;
}

// Elements e0 .. e0 + W - 1 of an f64 request, e0 a multiple of W.
template <int THREEFRY, int NORMAL, int W>
__device__ __forceinline__ void ef_rand_fill_f64(double (&r)[W], u64 e0, u64 base, u32 lane,
                                                 const ef_keys& keys) {
    if constexpr (W >= 2) {
#pragma unroll
        for (int b = 0; b < W / 2; ++b) {
            const double2 v = ef_rand_f64x2<THREEFRY, NORMAL>(base + (e0 >> 1) + b, lane, keys);
            r[2 * b] = v.x;
            r[2 * b + 1] = v.y;
        }
    } else {
        r[0] = ef_rand_f64<THREEFRY, NORMAL>(e0, base, lane, keys);
    }
}
