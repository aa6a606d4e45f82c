// Image kernels: geometric warps (resize, rotation, affine and projective transforms) with
// every interpolation method, and histograms.
//
// The including code puts `typedef ... elem_t;` (the element type), `typedef ... real_t;`
// (float or double: the type computed in) and `typedef ... idx_t;` (int, or long long for
// arrays of 2^31 elements or more) in front of this file, and for integer elements `ELEM_MIN`
// and `ELEM_MAX`, their range.

struct Dims { long long d[4]; };
// An output-to-input map, row-major: x' = m[0] x + m[1] y + m[2], y' = m[3] x + m[4] y + m[5],
// divided by w = m[6] x + m[7] y + m[8] (0, 0, 1 for an affine map).
struct Mat { double m[9]; };

// Interpolation methods (the order of the host's `Interp`).
#define M_NEAREST 0
#define M_LOWER 1
#define M_LINEAR 2
#define M_LINEAR_COSINE 3
#define M_CUBIC 4
#define M_CUBIC_SPLINE 5

// Sample (x, y) of an n0 x n1 image, neighbours past an edge repeating the edge.
__device__ __forceinline__ real_t px(const elem_t *img, idx_t n0, idx_t n1, idx_t x, idx_t y) {
  x = x < 0 ? 0 : (x >= n0 ? n0 - 1 : x);
  y = y < 0 ? 0 : (y >= n1 ? n1 - 1 : y);
  return (real_t)img[x + y * n0];
}

// `v` as an element: integers truncated toward zero and saturated at their range, NaN as 0 (the
// host's conversions).
__device__ __forceinline__ elem_t to_elem(real_t v) {
#ifdef ELEM_MAX
  if (v != v) return (elem_t)0;
  if (v <= (real_t)ELEM_MIN) return (elem_t)ELEM_MIN;
  if (v >= (real_t)ELEM_MAX) return (elem_t)ELEM_MAX;
#endif
  return (elem_t)v;
}

__device__ __forceinline__ real_t cubic(real_t v0, real_t v1, real_t v2, real_t v3, real_t t,
                                        bool spline) {
  real_t a0, a1, a2, a3;
  if (spline) {
    a0 = (real_t)-0.5 * v0 + (real_t)1.5 * v1 + (real_t)-1.5 * v2 + (real_t)0.5 * v3;
    a1 = v0 + (real_t)-2.5 * v1 + (real_t)2.0 * v2 + (real_t)-0.5 * v3;
    a2 = (real_t)0.5 * (v2 - v0);
  } else {
    a0 = v3 - v2 - v0 + v1;
    a1 = v0 - v1 - a0;
    a2 = v2 - v0;
  }
  a3 = v1;
  return ((a0 * t + a1) * t + a2) * t + a3;
}

// The sample of an n0 x n1 image at the point (xi, yi), by the rules of ef_warp.
__device__ __forceinline__ elem_t sample(const elem_t *img, idx_t n0, idx_t n1, real_t xi,
                                         real_t yi, int method, int clamp_nearest) {
  if (method == M_NEAREST || method == M_LOWER) {
    real_t rx = method == M_LOWER ? floor(xi) : round(xi);
    real_t ry = method == M_LOWER ? floor(yi) : round(yi);
    if (clamp_nearest) {
      rx = rx < (real_t)0 ? (real_t)0 : (rx > (real_t)(n0 - 1) ? (real_t)(n0 - 1) : rx);
      ry = ry < (real_t)0 ? (real_t)0 : (ry > (real_t)(n1 - 1) ? (real_t)(n1 - 1) : ry);
    }
    // a copy of the sample, not a conversion: exact for every type
    bool inside = rx >= (real_t)0 && rx < (real_t)n0 && ry >= (real_t)0 && ry < (real_t)n1;
    return inside ? img[(idx_t)rx + (idx_t)ry * n0] : (elem_t)0;
  }
  if (!(xi >= (real_t)-1e-4 && xi < (real_t)n0 && yi >= (real_t)-1e-4 && yi < (real_t)n1))
    return (elem_t)0;
  xi = xi < (real_t)0 ? (real_t)0 : xi;
  yi = yi < (real_t)0 ? (real_t)0 : yi;
  real_t gx = floor(xi), gy = floor(yi);
  real_t tx = xi - gx, ty = yi - gy;
  idx_t ix = (idx_t)gx, iy = (idx_t)gy;
  real_t v;
  if (method == M_LINEAR || method == M_LINEAR_COSINE) {
    if (method == M_LINEAR_COSINE) {
      tx = ((real_t)1 - cos(tx * (real_t)3.141592653589793)) / (real_t)2;
      ty = ((real_t)1 - cos(ty * (real_t)3.141592653589793)) / (real_t)2;
    }
    real_t r0 = px(img, n0, n1, ix, iy) * ((real_t)1 - tx) + px(img, n0, n1, ix + 1, iy) * tx;
    real_t r1 =
        px(img, n0, n1, ix, iy + 1) * ((real_t)1 - tx) + px(img, n0, n1, ix + 1, iy + 1) * tx;
    v = r0 * ((real_t)1 - ty) + r1 * ty;
  } else {
    bool spline = method == M_CUBIC_SPLINE;
    real_t r[4];
    for (int j = 0; j < 4; j++) {
      idx_t yy = iy - 1 + j;
      r[j] = cubic(px(img, n0, n1, ix - 1, yy), px(img, n0, n1, ix, yy),
                   px(img, n0, n1, ix + 1, yy), px(img, n0, n1, ix + 2, yy), tx, spline);
    }
    v = cubic(r[0], r[1], r[2], r[3], ty, spline);
  }
  return to_elem(v);
}

// Output image b of a warp: the input image it samples (broadcast along dimensions 2 and 3 of
// size 1) and, in `m`, its map (`one`, or its entry of the t2 x t3 `mats`, broadcast alike).
__device__ __forceinline__ const elem_t *warp_image(const elem_t *in, const Dims &id,
                                                   const Dims &od, long long b, const Mat &one,
                                                   const double *mats, long long t2,
                                                   long long t3, const double *&m) {
  const long long z = b % od.d[2], w = b / od.d[2];
  const long long iz = id.d[2] > 1 ? z : 0, iw = id.d[3] > 1 ? w : 0;
  m = mats ? mats + 9 * ((t2 > 1 ? z : 0) + t2 * (t3 > 1 ? w : 0)) : one.m;
  return in + (iz + iw * id.d[2]) * id.d[0] * id.d[1];
}

// out[x, y, z, w] = image (z, w) of `in` (broadcast along its dimensions 2 and 3 of size 1)
// at the point the map sends (x, y) to. The map is `one` when `mats` is null, else
// mats[9 * (z' + t2 * w')] with z', w' broadcast the same way over t2 x t3 maps.
//
// NEAREST and LOWER take the sample at the rounded (floored) point, or 0 where that lies
// outside, unless `clamp_nearest` (resize: clamped to the last sample). The other methods
// give 0 unless -1e-4 <= x' < n0 and -1e-4 <= y' < n1, and repeat the edge for neighbours
// past it. Launched on (32, 8) blocks, each computing 32 x WT tiles of outputs (WT / 8 rows
// per thread, so that each thread has that many samples' reads in flight); grid.x covers
// dimension 0, grid.y and grid.z stride over tiles of dimension 1 and over the images.
// (Separable bilinear maps run on ef_resize2.)
#ifndef WR
#define WR 4
#endif
#define WT (8 * WR)
// Indices are `idx_t`: int where every array has fewer than 2^31 elements.
extern "C" __global__ void __launch_bounds__(256)
    ef_warp(const elem_t *__restrict__ in, Dims id, elem_t *__restrict__ out, Dims od, Mat one,
            const double *__restrict__ mats, long long t2, long long t3, int method,
            int clamp_nearest) {
  const idx_t x = (idx_t)blockIdx.x * 32 + (idx_t)threadIdx.x;
  const idx_t n0 = (idx_t)id.d[0], n1 = (idx_t)id.d[1];
  const idx_t o0 = (idx_t)od.d[0], o1 = (idx_t)od.d[1];
  if (x >= o0) return;
  const long long images = od.d[2] * od.d[3];
  for (long long b = blockIdx.z; b < images; b += gridDim.z) {
    const double *m;
    const elem_t *img = warp_image(in, id, od, b, one, mats, t2, t3, m);
    const real_t m0 = (real_t)m[0], m1 = (real_t)m[1], m2 = (real_t)m[2];
    const real_t m3 = (real_t)m[3], m4 = (real_t)m[4], m5 = (real_t)m[5];
    const real_t m6 = (real_t)m[6], m7 = (real_t)m[7], m8 = (real_t)m[8];
    const bool projective = m[6] != 0.0 || m[7] != 0.0 || m[8] != 1.0;
    elem_t *o = out + b * od.d[0] * od.d[1];
    const real_t fx = (real_t)x;
    // x' and y' along column x: linear in y
    const real_t bx = m0 * fx + m2, by = m3 * fx + m5, bq = m6 * fx + m8;
    for (idx_t y0 = (idx_t)blockIdx.y * WT; y0 < o1; y0 += (idx_t)gridDim.y * WT) {
      elem_t v[WT / 8];
#pragma unroll
      for (int r = 0; r < WT / 8; r++) {
        const idx_t y = y0 + (idx_t)threadIdx.y + 8 * r;
        const real_t fy = (real_t)y;
        real_t xi = m1 * fy + bx, yi = m4 * fy + by;
        if (projective) {
          const real_t q = m7 * fy + bq;
          xi /= q;
          yi /= q;
        }
        v[r] = y < o1 ? sample(img, n0, n1, xi, yi, method, clamp_nearest) : (elem_t)0;
      }
#pragma unroll
      for (int r = 0; r < WT / 8; r++) {
        const idx_t y = y0 + (idx_t)threadIdx.y + 8 * r;
        if (y < o1) o[x + y * o0] = v[r];
      }
    }
  }
}

// The separable bilinear maps of ef_warp (resize, scale, translate: x' = m0 x + m2,
// y' = m4 y + m5), each thread computing two neighbouring columns: a row's part of the map is
// worked out once for both, the samples the two share are read once (two a row where
// doubling, three where enlarging less), each from its row's pointer at a constant offset
// where the samples are neighbours, the four samples of a row as one load where they are
// neighbours and aligned (halving), and the two outputs are stored as one where aligned. The
// same arithmetic as ef_warp, so the same results. Launched on (32, 8) blocks; grid.x covers
// dimension 0 in 64 columns a block, grid.y and grid.z stride over tiles of WT rows and over
// the images.
// Two neighbouring elements stored as one word of twice their size, at an address aligned to
// it. (In PTX: the compiler splits a store of a two-element struct or vector built here into
// two, whichever way it is written.)
template <int S> struct PairStore;
template <> struct PairStore<1> {
  static __device__ __forceinline__ void put(size_t at, unsigned char a, unsigned char b) {
    const unsigned short w = (unsigned short)(a | (b << 8));
    asm volatile("st.global.b16 [%0], %1;" ::"l"(at), "h"(w) : "memory");
  }
};
template <> struct PairStore<2> {
  static __device__ __forceinline__ void put(size_t at, unsigned short a, unsigned short b) {
    asm volatile("st.global.b32 [%0], %1;" ::"l"(at), "r"(a | ((unsigned)b << 16)) : "memory");
  }
};
template <> struct PairStore<4> {
  static __device__ __forceinline__ void put(size_t at, unsigned a, unsigned b) {
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(at), "r"(a), "r"(b) : "memory");
  }
};
template <> struct PairStore<8> {
  static __device__ __forceinline__ void put(size_t at, unsigned long long a,
                                             unsigned long long b) {
    asm volatile("st.global.v2.b64 [%0], {%1, %2};" ::"l"(at), "l"(a), "l"(b) : "memory");
  }
};
template <int S> struct BitsOf;
template <> struct BitsOf<1> { typedef unsigned char type; };
template <> struct BitsOf<2> { typedef unsigned short type; };
template <> struct BitsOf<4> { typedef unsigned type; };
template <> struct BitsOf<8> { typedef unsigned long long type; };
__device__ __forceinline__ void store_pair(elem_t *at, elem_t a, elem_t b) {
  typedef typename BitsOf<sizeof(elem_t)>::type B;
  B x, y;
  memcpy(&x, &a, sizeof(elem_t));
  memcpy(&y, &b, sizeof(elem_t));
  PairStore<sizeof(elem_t)>::put(__cvta_generic_to_global(at), x, y);
}
#if ELEM_QUAD
struct __align__(4 * sizeof(elem_t)) elem4 { elem_t a, b, c, d; };
// Four neighbouring elements read as one word of four times their size, at an address aligned
// to it.
__device__ __forceinline__ elem4 load_quad(const elem_t *at) {
  typedef ReadOnly<sizeof(elem4)> R;
  const typename R::bits u = R::get(at);
  elem4 q;
  memcpy(&q, &u, sizeof(elem4));
  return q;
}
#endif
extern "C" __global__ void __launch_bounds__(256)
    ef_resize2(const elem_t *__restrict__ in, Dims id, elem_t *__restrict__ out, Dims od,
               Mat one, const double *__restrict__ mats, long long t2, long long t3) {
  const idx_t xp = (idx_t)blockIdx.x * 64 + 2 * (idx_t)threadIdx.x;
  const idx_t n0 = (idx_t)id.d[0], n1 = (idx_t)id.d[1];
  const idx_t o0 = (idx_t)od.d[0], o1 = (idx_t)od.d[1];
  if (xp >= o0) return;
  const bool second = xp + 1 < o0;
  const long long images = od.d[2] * od.d[3];
  for (long long b = blockIdx.z; b < images; b += gridDim.z) {
    const double *m;
    const elem_t *img = warp_image(in, id, od, b, one, mats, t2, t3, m);
    const real_t m0 = (real_t)m[0], m2 = (real_t)m[2];
    const real_t m3 = (real_t)m[3], m4 = (real_t)m[4], m5 = (real_t)m[5];
    elem_t *o = out + b * od.d[0] * od.d[1];
    // (an even row length from an aligned start keeps every output pair aligned)
    const bool pairs = (o0 & 1) == 0 && ((unsigned long long)o & (2 * sizeof(elem_t) - 1)) == 0;
    // each column's two source columns and weight, as ef_warp works them out
    bool xin[2];
    real_t tx[2];
    idx_t xa[2], xb[2];
#pragma unroll
    for (int c = 0; c < 2; c++) {
      const real_t fx = (real_t)(xp + c);
      const real_t bx = m0 * fx + m2;
      xin[c] = bx >= (real_t)-1e-4 && bx < (real_t)n0;
      const real_t xc = bx < (real_t)0 ? (real_t)0 : bx;
      const real_t gx = floor(xc);
      tx[c] = xc - gx;
      const idx_t ix = (idx_t)gx;
      // (as ef_warp, written so that no sum overflows: this kernel may read a column whose
      // point lies outside, then drop its value)
      xa[c] = ix >= n0 ? n0 - 1 : (ix < 0 ? 0 : ix);
      xb[c] = ix >= n0 - 1 ? n0 - 1 : (ix < 0 ? 0 : ix + 1);
    }
    const real_t by = m3 * (real_t)xp + m5;
    const bool share = xa[1] == xb[0];
    // The samples' places within a row, from the thread's first: a row's four are then one
    // pointer and small offsets, each address one multiply-add from the row's.
    const elem_t *col = img + xa[0];
    const int ob0 = (int)(xb[0] - xa[0]), oa1 = (int)(xa[1] - xa[0]), ob1 = (int)(xb[1] - xa[0]);
    // The samples' places as constants where each column's two are neighbours (every thread
    // but those at an edge): `near` is 1 + where the second column's first sample lies (both
    // columns between the same two samples, which is how doubling maps them; the second
    // starting at the first's second; after it), or 0.
    const int near = ob0 == 1 && ob1 == oa1 + 1 && oa1 <= 2 ? oa1 + 1 : 0;
#if ELEM_QUAD
    const bool quad = ob0 == 1 && oa1 == 2 && ob1 == 3 && (n0 & 3) == 0 &&
                      ((unsigned long long)col & (4 * sizeof(elem_t) - 1)) == 0;
#endif
    elem_t *ocol = o + xp;
    for (idx_t y0 = (idx_t)blockIdx.y * WT; y0 < o1; y0 += (idx_t)gridDim.y * WT) {
      elem_t v0[WT / 8], v1[WT / 8];
      // A thread's rows are neighbours, and where two fall between the same two source rows
      // (enlarging) the second uses the first's samples: `p` and `q` hold those of source
      // rows `held` and `held + 1`.
      elem_t p[4], q[4];
      idx_t held = -1;
#pragma unroll
      for (int r = 0; r < WT / 8; r++) {
        const idx_t y = y0 + (idx_t)(WT / 8) * (idx_t)threadIdx.y + r;
        const real_t yi = m4 * (real_t)y + by;
        v0[r] = (elem_t)0;
        v1[r] = (elem_t)0;
        if (y < o1 && (xin[0] || xin[1]) && yi >= (real_t)-1e-4 && yi < (real_t)n1) {
          const real_t yc = yi < (real_t)0 ? (real_t)0 : yi;
          const real_t gy = floor(yc), ty = yc - gy;
          const idx_t iy = (idx_t)gy;
          // the thread's first sample in rows ya (p) and yb (q)
          const elem_t *pa = offset_by(col, (int)((iy >= n1 ? n1 - 1 : iy) * n0));
          const elem_t *pb = offset_by(col, (int)((iy + 1 >= n1 ? n1 - 1 : iy + 1) * n0));
          // samples (xa, xb) of each column in rows ya (p) and yb (q)
          if (r > 0 && iy == held) {
          } else
#if ELEM_QUAD
          if (quad) {
            const elem4 a = load_quad(pa), c = load_quad(pb);
            p[0] = a.a, p[1] = a.b, p[2] = a.c, p[3] = a.d;
            q[0] = c.a, q[1] = c.b, q[2] = c.c, q[3] = c.d;
          } else
#endif
          if (near == 1) {
            p[0] = p[2] = read_only(pa, 0), p[1] = p[3] = read_only(pa, 1);
            q[0] = q[2] = read_only(pb, 0), q[1] = q[3] = read_only(pb, 1);
          } else if (near == 2) {
            p[0] = read_only(pa, 0), p[1] = p[2] = read_only(pa, 1), p[3] = read_only(pa, 2);
            q[0] = read_only(pb, 0), q[1] = q[2] = read_only(pb, 1), q[3] = read_only(pb, 2);
          } else if (near == 3) {
#pragma unroll
            for (int k = 0; k < 4; k++) p[k] = read_only(pa, k), q[k] = read_only(pb, k);
          } else {
            p[0] = read_only(pa, 0);
            p[1] = read_only(pa, ob0);
            q[0] = read_only(pb, 0);
            q[1] = read_only(pb, ob0);
            if (share) {
              p[2] = p[1];
              q[2] = q[1];
            } else {
              p[2] = read_only(pa, oa1);
              q[2] = read_only(pb, oa1);
            }
            p[3] = read_only(pa, ob1);
            q[3] = read_only(pb, ob1);
          }
          held = iy;
          elem_t v[2];
#pragma unroll
          for (int c = 0; c < 2; c++) {
            const real_t t = tx[c];
            real_t r0 = (real_t)p[2 * c] * ((real_t)1 - t) + (real_t)p[2 * c + 1] * t;
            real_t r1 = (real_t)q[2 * c] * ((real_t)1 - t) + (real_t)q[2 * c + 1] * t;
            v[c] = xin[c] ? to_elem(r0 * ((real_t)1 - ty) + r1 * ty) : (elem_t)0;
          }
          v0[r] = v[0];
          v1[r] = v[1];
        }
      }
      // (the pair store and the single ones in separate loops: written as branches of one,
      // the compiler merges them into the single stores)
      if (second && pairs) {
#pragma unroll
        for (int r = 0; r < WT / 8; r++) {
          const idx_t y = y0 + (idx_t)(WT / 8) * (idx_t)threadIdx.y + r;
          if (y >= o1) continue;
          store_pair(ocol + y * o0, v0[r], v1[r]);
        }
      } else {
#pragma unroll
        for (int r = 0; r < WT / 8; r++) {
          const idx_t y = y0 + (idx_t)(WT / 8) * (idx_t)threadIdx.y + r;
          if (y >= o1) continue;
          ocol[y * o0] = v0[r];
          if (second) ocol[y * o0 + 1] = v1[r];
        }
      }
    }
  }
}

// ef_resize2 for maps that enlarge at least twice along dimension 0 (0 < m0 <= 1/2): four
// neighbouring columns a thread, whose eight samples a row lie among four neighbours (the
// columns step by at most half a sample), read once for all four, and stored as two pairs.
// Four columns cost a row's map, four loads per source row and two stores. The same
// arithmetic as ef_warp. Launched on (32, 8) blocks, grid.x covering dimension 0 in 128
// columns a block. RESIZE4_BLOCKS is the blocks a multiprocessor must hold: its registers
// (about 78 for f32 at two rows a thread) would leave three resident, and four fit in 64
// without spilling (f64, whose values take two registers each, would spill: 1 there).
#ifndef RESIZE4_BLOCKS
#define RESIZE4_BLOCKS 1
#endif
extern "C" __global__ void __launch_bounds__(256, RESIZE4_BLOCKS)
    ef_resize4(const elem_t *__restrict__ in, Dims id, elem_t *__restrict__ out, Dims od,
               Mat one, const double *__restrict__ mats, long long t2, long long t3) {
  const idx_t xq = (idx_t)blockIdx.x * 128 + 4 * (idx_t)threadIdx.x;
  const idx_t n0 = (idx_t)id.d[0], n1 = (idx_t)id.d[1];
  const idx_t o0 = (idx_t)od.d[0], o1 = (idx_t)od.d[1];
  if (xq >= o0) return;
  const long long images = od.d[2] * od.d[3];
  for (long long b = blockIdx.z; b < images; b += gridDim.z) {
    const double *m;
    const elem_t *img = warp_image(in, id, od, b, one, mats, t2, t3, m);
    const real_t m0 = (real_t)m[0], m2 = (real_t)m[2];
    const real_t m3 = (real_t)m[3], m4 = (real_t)m[4], m5 = (real_t)m[5];
    elem_t *o = out + b * od.d[0] * od.d[1];
    // (a row length that is a multiple of four from an aligned start keeps every pair aligned)
    const bool whole = xq + 3 < o0 && (o0 & 3) == 0 &&
                       ((unsigned long long)o & (2 * sizeof(elem_t) - 1)) == 0;
    // each column's two source columns and weight, as ef_warp works them out
    bool xin[4];
    real_t tx[4];
    idx_t xa[4], xb[4];
#pragma unroll
    for (int c = 0; c < 4; c++) {
      const real_t fx = (real_t)(xq + c);
      const real_t bx = m0 * fx + m2;
      xin[c] = bx >= (real_t)-1e-4 && bx < (real_t)n0;
      const real_t xc = bx < (real_t)0 ? (real_t)0 : bx;
      const real_t gx = floor(xc);
      tx[c] = xc - gx;
      const idx_t ix = (idx_t)gx;
      xa[c] = ix >= n0 ? n0 - 1 : (ix < 0 ? 0 : ix);
      xb[c] = ix >= n0 - 1 ? n0 - 1 : (ix < 0 ? 0 : ix + 1);
    }
    // Where every column's samples are neighbours among xa[0] .. xa[0] + 3 (all threads but
    // those at an edge), column c reads the window at oa[c] and oa[c] + 1; doubling puts the
    // columns at 0, 0, 1, 1, which is compiled with constant places.
    int oa[4];
    bool near = xa[0] + 3 < n0;
#pragma unroll
    for (int c = 0; c < 4; c++) {
      oa[c] = (int)(xa[c] - xa[0]);
      near = near && xb[c] == xa[c] + 1 && oa[c] >= 0 && oa[c] <= 2;
    }
    const bool doubling = near && oa[1] == 0 && oa[2] == 1 && oa[3] == 1;
    const elem_t *col = img + xa[0];
    // the window as two loads of two elements where every row's window is so aligned
    const bool halves = near && (n0 & 1) == 0 &&
                        ((unsigned long long)col & (2 * sizeof(elem_t) - 1)) == 0;
    const real_t by = m3 * (real_t)xq + m5;
    elem_t *ocol = o + xq;
    const bool any_in = xin[0] || xin[1] || xin[2] || xin[3];
    for (idx_t y0 = (idx_t)blockIdx.y * WT; y0 < o1; y0 += (idx_t)gridDim.y * WT) {
      elem_t v[WT / 8][4];
      // the window's samples in source rows `held` (w) and `held + 1` (u)
      elem_t w[4], u[4];
      idx_t held = -1;
#pragma unroll
      for (int r = 0; r < WT / 8; r++) {
        const idx_t y = y0 + (idx_t)(WT / 8) * (idx_t)threadIdx.y + r;
        const real_t yi = m4 * (real_t)y + by;
#pragma unroll
        for (int c = 0; c < 4; c++) v[r][c] = (elem_t)0;
        if (y < o1 && any_in && yi >= (real_t)-1e-4 && yi < (real_t)n1) {
          const real_t yc = yi < (real_t)0 ? (real_t)0 : yi;
          const real_t gy = floor(yc), ty = yc - gy;
          const idx_t iy = (idx_t)gy;
          const elem_t *pa = offset_by(col, (int)((iy >= n1 ? n1 - 1 : iy) * n0));
          const elem_t *pb = offset_by(col, (int)((iy + 1 >= n1 ? n1 - 1 : iy + 1) * n0));
          if (near && !(r > 0 && iy == held)) {
            if (halves) {
              typedef ReadOnly<2 * sizeof(elem_t)> R;
              const typename R::bits a0 = R::get(pa), a1 = R::get(pa + 2);
              const typename R::bits b0 = R::get(pb), b1 = R::get(pb + 2);
              memcpy(w, &a0, 2 * sizeof(elem_t));
              memcpy(w + 2, &a1, 2 * sizeof(elem_t));
              memcpy(u, &b0, 2 * sizeof(elem_t));
              memcpy(u + 2, &b1, 2 * sizeof(elem_t));
            } else {
#pragma unroll
              for (int k = 0; k < 4; k++) w[k] = read_only(pa, k), u[k] = read_only(pb, k);
            }
            held = iy;
          }
#pragma unroll
          for (int c = 0; c < 4; c++) {
            elem_t p0, p1, q0, q1;
            if (doubling) {
              const int k = c / 2;
              p0 = w[k], p1 = w[k + 1], q0 = u[k], q1 = u[k + 1];
            } else if (near) {
              const int k = oa[c];
              p0 = k == 0 ? w[0] : (k == 1 ? w[1] : w[2]);
              p1 = k == 0 ? w[1] : (k == 1 ? w[2] : w[3]);
              q0 = k == 0 ? u[0] : (k == 1 ? u[1] : u[2]);
              q1 = k == 0 ? u[1] : (k == 1 ? u[2] : u[3]);
            } else {
              const int ka = (int)(xa[c] - xa[0]), kb = (int)(xb[c] - xa[0]);
              p0 = read_only(pa, ka), p1 = read_only(pa, kb);
              q0 = read_only(pb, ka), q1 = read_only(pb, kb);
            }
            const real_t t = tx[c];
            real_t r0 = (real_t)p0 * ((real_t)1 - t) + (real_t)p1 * t;
            real_t r1 = (real_t)q0 * ((real_t)1 - t) + (real_t)q1 * t;
            v[r][c] = xin[c] ? to_elem(r0 * ((real_t)1 - ty) + r1 * ty) : (elem_t)0;
          }
        }
      }
      // (the pair stores and the single ones in separate loops, as in ef_resize2)
      if (whole) {
#pragma unroll
        for (int r = 0; r < WT / 8; r++) {
          const idx_t y = y0 + (idx_t)(WT / 8) * (idx_t)threadIdx.y + r;
          if (y >= o1) continue;
          store_pair(ocol + y * o0, v[r][0], v[r][1]);
          store_pair(ocol + y * o0 + 2, v[r][2], v[r][3]);
        }
      } else {
#pragma unroll
        for (int r = 0; r < WT / 8; r++) {
          const idx_t y = y0 + (idx_t)(WT / 8) * (idx_t)threadIdx.y + r;
          if (y >= o1) continue;
#pragma unroll
          for (int c = 0; c < 4; c++)
            if (xq + c < o0) ocol[y * o0 + c] = v[r][c];
        }
      }
    }
  }
}

#if ELEM_QUAD
// Resizing by exactly two (ArrayFire's rule: output pixel x samples input x n0 / o0), with
// the bilinear kernels' arithmetic (`lerp_af` is their expression) and every sample they read,
// in kernels that know the map: no map, floor or clamp a row, loads of several elements and
// stores of four (16 bytes for 4-byte elements). The host sends a map here only where the sizes
// are exact multiples and both images' starts are aligned to four elements (`image.rs`).

// a (1 - t) + b t, written as the bilinear kernels write it, so compiled to the same operations.
__device__ __forceinline__ real_t lerp_af(real_t a, real_t b, real_t t) {
  return a * ((real_t)1 - t) + b * t;
}

// Four neighbouring elements stored as one word of four times their size, at an address aligned
// to it.
__device__ __forceinline__ void store_quad(elem_t *at, elem_t a, elem_t b, elem_t c, elem_t d) {
  constexpr int S = sizeof(elem_t);
  typedef typename BitsOf<S>::type B;
  typedef typename BitsOf<2 * S>::type W;
  B x[4];
  memcpy(&x[0], &a, S);
  memcpy(&x[1], &b, S);
  memcpy(&x[2], &c, S);
  memcpy(&x[3], &d, S);
  const W lo = (W)x[0] | ((W)x[1] << (8 * S)), hi = (W)x[2] | ((W)x[3] << (8 * S));
  PairStore<2 * S>::put(__cvta_generic_to_global(at), lo, hi);
}

// Halving, o0 = n0 / 2 and o1 = n1 / 2 with o0 a multiple of four: output (x, y) is the
// bilinear sample at (2x, 2y), weight 1 on that pixel and 0 on its neighbours (x + 1, y + 1 and
// both), which are still read: 0 times an infinity or NaN is NaN, and +0 from a neighbour turns
// a -0 sample into +0, as in ef_resize2. Each thread computes four outputs of a row (two quads
// of each of its two source rows) in WR rows; launched on (32, 8) blocks, grid.x covering
// dimension 0 in 128 outputs a block, grid.y the rows in 8 WR a block, grid.z striding over the
// images.
extern "C" __global__ void __launch_bounds__(256)
    ef_resize_half(const elem_t *__restrict__ in, elem_t *__restrict__ out, long long o0_,
                   long long o1_, long long images) {
  const idx_t o0 = (idx_t)o0_, o1 = (idx_t)o1_, n0 = 2 * o0;
  const idx_t xq = 4 * ((idx_t)blockIdx.x * 32 + (idx_t)threadIdx.x);
  const idx_t y0 = WR * ((idx_t)blockIdx.y * 8 + (idx_t)threadIdx.y);
  if (xq >= o0 || y0 >= o1) return;
  for (long long b = blockIdx.z; b < images; b += gridDim.z) {
    const elem_t *img = in + b * (4 * o0_ * o1_);
    elem_t *o = out + b * (o0_ * o1_);
    // every row's loads first, so that all of them are in flight together
    elem4 p[WR][4];
#pragma unroll
    for (int r = 0; r < WR; r++) {
      const idx_t y = y0 + r < o1 ? y0 + r : o1 - 1;
      const elem_t *top = img + (2 * y * n0 + 2 * xq);
      p[r][0] = load_quad(top);
      p[r][1] = load_quad(top + 4);
      p[r][2] = load_quad(top + n0);
      p[r][3] = load_quad(top + n0 + 4);
    }
#pragma unroll
    for (int r = 0; r < WR; r++) {
      if (y0 + r >= o1) break;
      elem_t v[4];
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const elem4 a = p[r][h], c = p[r][2 + h];
        const real_t r0 = lerp_af((real_t)a.a, (real_t)a.b, (real_t)0);
        const real_t r1 = lerp_af((real_t)c.a, (real_t)c.b, (real_t)0);
        v[2 * h] = to_elem(lerp_af(r0, r1, (real_t)0));
        const real_t s0 = lerp_af((real_t)a.c, (real_t)a.d, (real_t)0);
        const real_t s1 = lerp_af((real_t)c.c, (real_t)c.d, (real_t)0);
        v[2 * h + 1] = to_elem(lerp_af(s0, s1, (real_t)0));
      }
      store_quad(o + ((y0 + r) * o0 + xq), v[0], v[1], v[2], v[3]);
    }
  }
}

// Doubling, o0 = 2 n0 and o1 = 2 n1 with n0 even: output x samples x / 2, so an even x takes
// source column x / 2 (weight 1, its right neighbour weight 0) and an odd one the mean of x / 2
// and x / 2 + 1, the last column repeating the edge; rows alike. Each thread reads a pair of
// source columns and the next column of WR + 1 source rows, and writes the four output columns
// (one quad) of the 2 WR output rows they make, so that a warp's every store is 512 contiguous
// bytes (for 4-byte elements); launched on (32, 8) blocks, grid.x covering dimension 0 in 64
// source columns a block, grid.y the source rows in 8 WR a block, grid.z striding over the
// images.
extern "C" __global__ void __launch_bounds__(256)
    ef_resize_double(const elem_t *__restrict__ in, elem_t *__restrict__ out, long long n0_,
                     long long n1_, long long images) {
  const idx_t n0 = (idx_t)n0_, n1 = (idx_t)n1_, o0 = 2 * n0;
  const idx_t j = 2 * ((idx_t)blockIdx.x * 32 + (idx_t)threadIdx.x);
  const idx_t y0 = WR * ((idx_t)blockIdx.y * 8 + (idx_t)threadIdx.y);
  if (j >= n0 || y0 >= n1) return;
  const idx_t next = j + 2 < n0 ? j + 2 : n0 - 1;
  typedef ReadOnly<2 * sizeof(elem_t)> Pair;
  for (long long b = blockIdx.z; b < images; b += gridDim.z) {
    const elem_t *img = in + b * (n0_ * n1_);
    elem_t *o = out + b * (4 * n0_ * n1_);
    elem_t q[WR + 1][3];
#pragma unroll
    for (int r = 0; r <= WR; r++) {
      const idx_t y = y0 + r < n1 ? y0 + r : n1 - 1;
      const elem_t *row = img + y * n0;
      const typename Pair::bits u = Pair::get(row + j);
      memcpy(q[r], &u, 2 * sizeof(elem_t));
      q[r][2] = read_only(row, (int)next);
    }
    // row r's samples at the four output columns' points
    real_t h[WR + 1][4];
#pragma unroll
    for (int r = 0; r <= WR; r++) {
      const real_t c0 = (real_t)q[r][0], c1 = (real_t)q[r][1], c2 = (real_t)q[r][2];
      h[r][0] = lerp_af(c0, c1, (real_t)0);
      h[r][1] = lerp_af(c0, c1, (real_t)0.5);
      h[r][2] = lerp_af(c1, c2, (real_t)0);
      h[r][3] = lerp_af(c1, c2, (real_t)0.5);
    }
#pragma unroll
    for (int r = 0; r < WR; r++) {
      if (y0 + r >= n1) break;
      elem_t *row = o + (2 * (y0 + r) * o0 + 2 * j);
#pragma unroll
      for (int half = 0; half < 2; half++) {
        const real_t ty = half ? (real_t)0.5 : (real_t)0;
        elem_t v[4];
#pragma unroll
        for (int k = 0; k < 4; k++) v[k] = to_elem(lerp_af(h[r][k], h[r + 1][k], ty));
        store_quad(row + half * o0, v[0], v[1], v[2], v[3]);
      }
    }
  }
}
#endif

// Histograms of `slices` consecutive runs of `per_slice` elements into `nbins` bins each:
// bin floor((v - minval) * scale), clamped to [0, nbins - 1]; NaN is not counted. `out` holds
// slices * nbins zeros on entry. grid.y strides over the slices; each block counts its part of
// a slice in shared memory, then adds its sums to `out`. Two layouts of the shared counters:
// - `banked` (nbins <= 256): bin b of lane l at counts[b * 32 + l], so that the 32 additions
//   of a warp's instruction fall in 32 different banks whatever the values (random bytes put
//   three or four lanes on one bank otherwise, and the instruction repeats for each);
// - else `copies` sub-histograms of nbins counters (warp w into copy w % copies, so that warps
//   do not contend for one counter); `copies` 0 (too many bins for shared memory) counts
//   straight into `out`.
// Elements are read 16 bytes at a time between the slice's first and last 16-byte boundary,
// the next load issued before the current one is counted. 1-byte elements look their bin up
// in a table of the 256 values' bins, made by the same arithmetic; banked, the table holds the
// bins as bytes, four to a word, and is laid out by lane as the counters are. `identity` says
// that every byte value is its own bin (256 bins over [0, 255], the common case): no table.
__device__ __forceinline__ int hist_bin(elem_t x, real_t lo, real_t s, int nbins) {
  real_t v = (real_t)x;
  if (v != v) return -1;
  real_t f = floor((v - lo) * s);
  return f < (real_t)0 ? 0 : (f >= (real_t)nbins ? nbins - 1 : (int)f);
}

extern "C" __global__ void ef_histogram(const elem_t *in, long long per_slice, long long slices,
                                        unsigned *out, int nbins, double minval, double scale,
                                        int copies, int banked, int identity) {
  extern __shared__ unsigned counts[];
  __shared__ int table[256];
  const int VEC = 16 / (int)sizeof(elem_t);
  const bool bytes = sizeof(elem_t) == 1;
  const real_t lo = (real_t)minval, s = (real_t)scale;
  const int lane = threadIdx.x & 31;
  const int slots = banked ? 32 * nbins : copies * nbins;
  unsigned *packed = counts + slots;  // banked bytes' table: 64 words of four bins, by lane
  if (bytes && identity) {
    // every byte value is its own bin: no table
  } else if (bytes && banked) {
    for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) {
      const int v = (i >> 5) * 4;
      unsigned w = 0;
      for (int k = 0; k < 4; k++) w |= (unsigned)hist_bin((elem_t)(v + k), lo, s, nbins) << (8 * k);
      packed[i] = w;
    }
  } else if (bytes) {
    for (int v = threadIdx.x; v < 256; v += blockDim.x) table[v] = hist_bin((elem_t)v, lo, s, nbins);
  }
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long threads = (long long)gridDim.x * blockDim.x;
  for (long long sl = blockIdx.y; sl < slices; sl += gridDim.y) {
    unsigned *global = out + sl * nbins;
    for (int b = threadIdx.x; b < slots; b += blockDim.x) counts[b] = 0;
    __syncthreads();
    unsigned *mine = banked ? counts + lane
                            : (copies ? counts + ((threadIdx.x >> 5) % copies) * nbins : global);
    const int stride = banked ? 32 : 1;
    auto add = [&](elem_t x) {
      int b;
      if (bytes && identity) {
        b = (int)(unsigned char)x;
      } else if (bytes && banked) {
        const unsigned v = (unsigned char)x;
        b = (int)((packed[(v >> 2) * 32 + lane] >> ((v & 3u) * 8u)) & 255u);
      } else {
        b = bytes ? table[(unsigned char)x] : hist_bin(x, lo, s, nbins);
      }
      if (b >= 0) atomicAdd(&mine[b * stride], 1u);
    };
    const elem_t *src = in + sl * per_slice;
    long long head = (long long)((16 - ((unsigned long long)src & 15)) & 15) / (long long)sizeof(elem_t);
    head = head < per_slice ? head : per_slice;
    const long long vectors = (per_slice - head) / VEC;
    for (long long i = tid; i < head; i += threads) add(src[i]);
    for (long long i = head + vectors * VEC + tid; i < per_slice; i += threads) add(src[i]);
    const uint4 *vsrc = (const uint4 *)(src + head);
    long long v = tid;
    uint4 next;
    if (v < vectors) next = __ldg(vsrc + v);
    while (v < vectors) {
      const uint4 q = next;
      const long long w = v + threads;
      if (w < vectors) next = __ldg(vsrc + w);
      elem_t e[16 / sizeof(elem_t)];
      memcpy(e, &q, 16);
#pragma unroll
      for (int k = 0; k < VEC; k++) add(e[k]);
      v = w;
    }
    if (banked || copies) {
      __syncthreads();
      for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        unsigned c = 0;
        if (banked)  // lane k of bin b, the lanes rotated by b so that a warp's reads differ in bank
          for (int k = 0; k < 32; k++) c += counts[b * 32 + ((k + b) & 31)];
        else
          for (int k = 0; k < copies; k++) c += counts[k * nbins + b];
        if (c) atomicAdd(&global[b], c);
      }
    }
    __syncthreads();
  }
}

#ifdef WINDOW_OP
// Window filters: each block computes tiles of TXW x TYH outputs of one image (TXW = 32 TCG,
// TYH = 8 TR; TCG and TR are compile-time) from a copy in shared memory of the input tile
// grown by the window (W0 x W1, compile-time, centred at (W0 / 2, W1 / 2); see tile.cu for
// the copy and for the walk over the tiles). Outside the image the copy holds `fill`
// (BORDER 0) or the image reflected about its edge pixels without repeating them (BORDER 1).
// Each thread computes, in each of its TCG columns 32 apart, the TR neighbouring outputs
// (x, y .. y + TR - 1), y = y0 + TR ty, sharing their reads of the tile rows. WINDOW_OP is
// - 0 (maximum) or 1 (minimum) over the positions `mask` (W0 x W1) holds a positive value at
//   (MASKED 1), or over every position (MASKED 0: a box; `mask` is unused);
// - 2, the median of the whole window, by the sorting network MEDIAN_NETWORK of CX(i, j)
//   comparators, the middle value in wire MEDIAN_MID (3 x 3: from sorted rows, below);
// - 3, the 3 x 3 Sobel derivatives along dimensions 0 and 1 into `out` and `out2`, computed
//   in out_t.
// Launched on (32, 8) blocks, as many as stay resident; a block loads its next tile while it
// computes this one.
#define TXW (32 * TCG)
#define TYH (8 * TR)

__device__ __forceinline__ idx_t reflect101(idx_t x, idx_t n) {
  if (n == 1) return 0;
  idx_t p = 2 * (n - 1);
  idx_t m = x % p;
  if (m < 0) m += p;
  return m < n ? m : p - m;
}

#ifdef ELEM_MAX
#define MX(a, b) ((b) > (a) ? (b) : (a))
#define MN(a, b) ((b) < (a) ? (b) : (a))
#else
#define MX(a, b) fmax(a, b)
#define MN(a, b) fmin(a, b)
#endif
// the median of three values
#define MED3(a, b, c) MX(MN(a, b), MN(MX(a, b), c))

#if WINDOW_OP == 0 || WINDOW_OP == 1
// The fold of the filter: the larger (dilation) or the smaller (erosion) of two values.
#if WINDOW_OP == 0
#define EXTREME(a, b) MX(a, b)
#else
#define EXTREME(a, b) MN(a, b)
#endif
// Folds the TR outputs of the staged tile whose first window row starts at `col` (the
// thread's column of the tile, in its first row of the thread's outputs) into `acc`, reading
// each of the W1 + TR - 1 tile rows they share once. Window position (a, c) of output r is
// tile element (a, r + c) from `col`. CHECK: only the positions `marked` holds. (The maximum
// and minimum do not depend on the order.)
template <bool CHECK>
__device__ __forceinline__ void fold(const elem_t *col, const bool *marked, elem_t fill,
                                     elem_t acc[TR]) {
  const int w = TXW + W0 - 1;
  if (!CHECK) {
    // A box is separable: each shared tile row's extreme over the W0 positions once, then each
    // output's over its W1 rows. (W0 - 1) (W1 + TR - 1) + TR (W1 - 1) folds against the
    // W0 W1 TR of folding every position into every output (48 against 100 for 5 x 5 with
    // four rows a thread), the same reads; the extreme of a set does not depend on the order,
    // so the result is the same.
    elem_t line[W1 + TR - 1];
#pragma unroll
    for (int j = 0; j < W1 + TR - 1; j++) {
      const elem_t *row = col + j * w;
      elem_t m = row[0];
#pragma unroll
      for (int a = 1; a < W0; a++) {
        m = EXTREME(m, row[a]);
      }
      line[j] = m;
    }
#pragma unroll
    for (int r = 0; r < TR; r++) {
      elem_t m = line[r];
#pragma unroll
      for (int c = 1; c < W1; c++) {
        m = EXTREME(m, line[r + c]);
      }
      acc[r] = m;
    }
    return;
  }
  bool started[TR];
#pragma unroll
  for (int r = 0; r < TR; r++) {
    acc[r] = fill;
    started[r] = false;
  }
#pragma unroll
  for (int j = 0; j < W1 + TR - 1; j++) {
    const elem_t *row = col + j * w;
#pragma unroll
    for (int a = 0; a < W0; a++) {
      const elem_t v = row[a];
#pragma unroll
      for (int r = 0; r < TR; r++) {
        const int c = j - r;
        if (c >= 0 && c < W1 && (!CHECK || marked[a + c * W0])) {
          acc[r] = started[r] ? EXTREME(acc[r], v) : v;
          started[r] = true;
        }
      }
    }
  }
}
#endif

// (Resident blocks a multiprocessor that the register budget must leave room for: left to
// itself the compiler spends registers on the tile loads and keeps fewer blocks resident,
// which costs more than it saves. Sobel computes two outputs from each position's reads;
// 8-byte elements take twice the registers and are left to the compiler.)
#if WINDOW_OP == 3
#define WINDOW_BLOCKS 5
#elif W0 * W1 <= 25
#define WINDOW_BLOCKS 4
#else
#define WINDOW_BLOCKS 1
#endif
extern "C" __global__ void __launch_bounds__(256, sizeof(elem_t) <= 4 ? WINDOW_BLOCKS : 1)
    ef_window(const elem_t *__restrict__ in, Dims id, out_t *__restrict__ out,
              out_t *__restrict__ out2, unsigned long long fill_bits,
              const elem_t *__restrict__ mask) {
  const int w = TXW + W0 - 1;
  const int tid = threadIdx.x + threadIdx.y * 32;
  __shared__ elem_t tile[(TXW + W0 - 1) * (TYH + W1 - 1)];
#if MASKED
  // The mask's marks; a mask that marks every position is folded as a box, unchecked.
  __shared__ bool marked[W0 * W1];
  for (int k = tid; k < W0 * W1; k += 256) marked[k] = mask[k] > (elem_t)0;
  __syncthreads();
  bool box = true;
  for (int k = 0; k < W0 * W1; k++) box = box && marked[k];
#else
  const bool *marked = nullptr;
  const bool box = true;
#endif
  const elem_t fill = *(const elem_t *)&fill_bits;
  const idx_t n0 = (idx_t)id.d[0], n1 = (idx_t)id.d[1];
  const long long plane = id.d[0] * id.d[1];
  TileRegs<TXW + W0 - 1, TYH + W1 - 1, 256, elem_t> next;
  auto fetch = [&](const TileIter<TXW, TYH> &at) {
    const elem_t *img = in + at.image * plane;
    const idx_t sx0 = at.x0 - W0 / 2, sy0 = at.y0 - W1 / 2;
    next.fetch_image(tid, img, n0, n1, sx0, sy0, [&](int i, int j) {
      const idx_t sx = sx0 + i, sy = sy0 + j;
#if BORDER == 1
      return img[reflect101(sx, n0) + reflect101(sy, n1) * n0];
#else
      const bool inside = sx >= 0 && sx < n0 && sy >= 0 && sy < n1;
      return inside ? img[sx + sy * n0] : fill;
#endif
    });
  };
  TileIter<TXW, TYH> at(id.d[0], id.d[1], id.d[2] * id.d[3]);
  if (at.valid()) fetch(at);
  while (at.valid()) {
    __syncthreads();  // the previous tile's readers are done
    next.store(tile, tid);
    __syncthreads();
    TileIter<TXW, TYH> after = at;
    after.advance();
    if (after.valid()) fetch(after);
    const idx_t x0 = at.x0, y0 = at.y0;
    out_t *o = out + at.image * plane;
    const idx_t yb = y0 + TR * (idx_t)threadIdx.y;
#pragma unroll
    for (int g = 0; g < TCG; g++) {
      const int cx = threadIdx.x + 32 * g;
      const idx_t x = x0 + cx;
      // the tile element of window position (0, 0) of the thread's first output
      const elem_t *col = tile + TR * threadIdx.y * w + cx;
#if WINDOW_OP == 0 || WINDOW_OP == 1
      elem_t acc[TR];
      if (box)
        fold<false>(col, marked, fill, acc);
      else
        fold<true>(col, marked, fill, acc);
#pragma unroll
      for (int r = 0; r < TR; r++)
        if (x < n0 && yb + r < n1) o[x + (yb + r) * n0] = acc[r];
#elif WINDOW_OP == 2 && W0 == 3 && W1 == 3
      // The 3 x 3 medians from the TR + 2 tile rows they share, each row's three values
      // sorted once: the median of nine is the median of (the largest of the rows' minima, the
      // median of their medians, the smallest of their maxima).
      elem_t lo[TR + 2], mid[TR + 2], hi[TR + 2];
#pragma unroll
      for (int j = 0; j < TR + 2; j++) {
        const elem_t *row = col + j * w;
        const elem_t a = row[0], b = row[1], c = row[2];
        const elem_t l = MN(a, b), h = MX(a, b);
        lo[j] = MN(l, c);
        hi[j] = MX(h, c);
        mid[j] = MX(l, MN(h, c));
      }
#pragma unroll
      for (int r = 0; r < TR; r++) {
        const elem_t l = MX(MX(lo[r], lo[r + 1]), lo[r + 2]);
        const elem_t h = MN(MN(hi[r], hi[r + 1]), hi[r + 2]);
        const elem_t m = MED3(mid[r], mid[r + 1], mid[r + 2]);
        if (x < n0 && yb + r < n1) o[x + (yb + r) * n0] = MED3(l, m, h);
      }
#elif WINDOW_OP == 2
#pragma unroll
      for (int r = 0; r < TR; r++) {
        // window position (a, c) of output r is tile element (a, r + c) from `col`
        const elem_t *win = col + r * w;
        elem_t v[W0 * W1];
#pragma unroll
        for (int c = 0; c < W1; c++)
#pragma unroll
          for (int a = 0; a < W0; a++) v[a + c * W0] = win[a + c * w];
#define CX(i, j) { elem_t lo = MN(v[i], v[j]); v[j] = MX(v[i], v[j]); v[i] = lo; }
        MEDIAN_NETWORK
#undef CX
        if (x < n0 && yb + r < n1) o[x + (yb + r) * n0] = v[MEDIAN_MID];
      }
#else
      // Sobel: the TR + 2 tile rows' three values each, read once.
      out_t p[TR + 2][3];
#pragma unroll
      for (int j = 0; j < TR + 2; j++)
#pragma unroll
        for (int a = 0; a < 3; a++) p[j][a] = (out_t)col[a + j * w];
      out_t *o2 = out2 + at.image * plane;
#pragma unroll
      for (int r = 0; r < TR; r++) {
        // window position (a, c) is p[r + c][a]; rows along dimension 0: n(orth) is a - 1,
        // s(outh) a + 1; w(est) c - 1, e(ast) c + 1
        const out_t nw = p[r][0], nn = p[r + 1][0], ne = p[r + 2][0];
        const out_t ww = p[r][1], ee = p[r + 2][1];
        const out_t sw = p[r][2], ss = p[r + 1][2], se = p[r + 2][2];
        const out_t dx = ((sw + se) - (nw + ne)) + ((ss - nn) * (out_t)2);
        const out_t dy = ((ne + se) - (nw + sw)) + ((ee - ww) * (out_t)2);
        if (x < n0 && yb + r < n1) {
          o[x + (yb + r) * n0] = dx;
          o2[x + (yb + r) * n0] = dy;
        }
      }
#endif
    }
    at = after;
  }
}
#endif
