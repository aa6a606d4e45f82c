// Random numbers on CUDA, as defined in src/random/stream.rs: one thread per 16-byte block of
// the output, each computing its block's four words with one Philox4x32-10 call (or two
// Threefry2x32-16 calls), turning them into elements and storing them with one 16-byte store.
//
// The including code defines, before this text:
//   EF_ENTRY  the kernel's name
//   EF_KIND   what the words become (EF_UNIFORM_F32 ... below)
// and puts random_core.cu (the generators) before it.

#define EF_UNIFORM_F32 0  /* f32 and c32 */
#define EF_UNIFORM_F64 1  /* f64 and c64 */
#define EF_UNIFORM_F16 2
#define EF_UNIFORM_BITS 3 /* integer types: the bytes as they are */
#define EF_UNIFORM_BOOL 4
#define EF_NORMAL_F32 5   /* f32 and c32 */
#define EF_NORMAL_F64 6   /* f64 and c64 */

#define EF_STEP_F16 4.8828125e-04f

__device__ __forceinline__ u32 ef_lo(double d) { return (u32)__double_as_longlong(d); }
__device__ __forceinline__ u32 ef_hi(double d) { return (u32)((u64)__double_as_longlong(d) >> 32); }

__device__ __forceinline__ u32 ef_f16_bits(u32 h16) {
    const float v = (float)(h16 >> 5) * EF_STEP_F16;  // exact in f16
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    return h;
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
        const uint4 w =
            threefry ? ef_block_words<1>(g, lane, keys) : ef_block_words<0>(g, lane, keys);
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
