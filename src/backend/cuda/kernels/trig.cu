// Sine and cosine in single precision within 2 ulp, as CUDA documents for sinf and cosf (1.5
// measured for both), in fewer instructions, for |x| < 105615: x less the nearest multiple of
// pi/2 in three parts (the multiple found by the 1.5 * 2^23 rounding trick, not the conversion
// pipe), then both minimax polynomials on [-pi/4, pi/4] (fitted for this library) and the
// quadrant's choice and sign, with no branch. Shared by the element-wise kernels (through
// elementwise_prelude.cu) and by the random generators' Box-Muller transform (random_core.cu);
// the guard lets a kernel that holds both include it twice.
#ifndef EF_TRIG_CU
#define EF_TRIG_CU

// x's remainder's sine and cosine polynomials and its quadrant (the low two bits of `q`
// matter: sin x = +-sn or +-cs as the quadrant says, see ef_trig_pick).
struct ef_trig_parts {
  float sn, cs;
  int q;
};

__device__ __forceinline__ ef_trig_parts ef_trig_reduce(float x) {
  const float t = fmaf(x, 0.636619772367581343f, 12582912.0f);
  const float j = t - 12582912.0f;
  float r = fmaf(j, -1.57079625129699707031f, x);
  r = fmaf(j, -7.54978941586159635335e-08f, r);
  r = fmaf(j, -5.39030295347423839270e-15f, r);
  const float s = r * r;
  const float ps = fmaf(fmaf(s, -1.9515282474458218e-4f, 8.33216030150652e-3f), s, -1.6666655242443085e-1f);
  const float pc = fmaf(fmaf(fmaf(s, 2.4383567506447434e-5f, -1.388668199069798e-3f), s, 4.166661947965622e-2f), s, -0.5f);
  // r + r s ps with one rounding of the small term. The small term is r times (s ps + 0): a
  // zero s makes it r times +0, which carries r's sign, so the sine of -0 (and of the
  // smallest subnormals, whose square is 0) is x itself without a select.
  const float sn = fmaf(r, fmaf(s, ps, 0.0f), r);
  return {sn, fmaf(s, pc, 1.0f), __float_as_int(t)};
}

// The sine (cosine = 0) or cosine (cosine = 1) of quadrant q's parts.
__device__ __forceinline__ float ef_trig_pick(const ef_trig_parts &p, int cosine) {
  const int q = p.q + cosine;
  const float v = (q & 1) ? p.cs : p.sn;
  return (q & 2) ? -v : v;
}

// `far` is set for larger, infinite or NaN arguments, whose results ef_trig (in the prelude)
// takes from sinf and cosf: the vector loops run a whole vector's elements on this path and
// repeat it with ef_trig when any was far (sinf's long reduction, kept out of the loop, is what
// kept those loops from the copy ceiling).
__device__ __forceinline__ float ef_trig_near(float x, int cosine, bool &far) {
  far |= !(fabsf(x) < 105615.0f);
  return ef_trig_pick(ef_trig_reduce(x), cosine);
}

// Both at once from one reduction, for arguments known to be below 105615 in magnitude (the
// Box-Muller angle, in [0, 2 pi)).
__device__ __forceinline__ void ef_sincosf_near(float x, float *s, float *c) {
  const ef_trig_parts p = ef_trig_reduce(x);
  *s = ef_trig_pick(p, 0);
  *c = ef_trig_pick(p, 1);
}

#endif
