// Signal processing kernels: copies that pad, crop, convert and scale; broadcasting products;
// direct convolution; IIR recursions; interpolation.
//
// The including code puts typedefs of `src_t`, `dst_t` and `real_t` in front of this file
// (one of float, double, cf_ and cd_ each), so each entry point is compiled once per element
// type. Shapes are column-major with four dimensions; every kernel is a grid-stride loop.

struct __align__(8) cf_ { float re, im; };
struct __align__(16) cd_ { double re, im; };

// A shape or an offset, passed by value.
struct Dims { long long d[4]; };

__device__ __forceinline__ cf_ operator+(cf_ a, cf_ b) { cf_ r; r.re = a.re + b.re; r.im = a.im + b.im; return r; }
__device__ __forceinline__ cd_ operator+(cd_ a, cd_ b) { cd_ r; r.re = a.re + b.re; r.im = a.im + b.im; return r; }
__device__ __forceinline__ cf_ operator-(cf_ a, cf_ b) { cf_ r; r.re = a.re - b.re; r.im = a.im - b.im; return r; }
__device__ __forceinline__ cd_ operator-(cd_ a, cd_ b) { cd_ r; r.re = a.re - b.re; r.im = a.im - b.im; return r; }
__device__ __forceinline__ cf_ operator*(cf_ a, cf_ b) { cf_ r; r.re = a.re * b.re - a.im * b.im; r.im = a.re * b.im + a.im * b.re; return r; }
__device__ __forceinline__ cd_ operator*(cd_ a, cd_ b) { cd_ r; r.re = a.re * b.re - a.im * b.im; r.im = a.re * b.im + a.im * b.re; return r; }
__device__ __forceinline__ cd_ operator*(cd_ a, double s) { cd_ r; r.re = a.re * s; r.im = a.im * s; return r; }
__device__ __forceinline__ cd_ operator/(cd_ a, cd_ b) {
  double n = b.re * b.re + b.im * b.im;
  cd_ r; r.re = (a.re * b.re + a.im * b.im) / n; r.im = (a.im * b.re - a.re * b.im) / n; return r;
}

__device__ __forceinline__ cd_ mkcd(double re, double im) { cd_ r; r.re = re; r.im = im; return r; }
// Widening to complex double holds every value of the four types exactly.
__device__ __forceinline__ cd_ to_cd(float v) { return mkcd(v, 0.0); }
__device__ __forceinline__ cd_ to_cd(double v) { return mkcd(v, 0.0); }
__device__ __forceinline__ cd_ to_cd(cf_ v) { return mkcd(v.re, v.im); }
__device__ __forceinline__ cd_ to_cd(cd_ v) { return v; }
// Narrowing keeps the real part for real types.
__device__ __forceinline__ void from_cd(cd_ v, float *o) { *o = (float)v.re; }
__device__ __forceinline__ void from_cd(cd_ v, double *o) { *o = v.re; }
__device__ __forceinline__ void from_cd(cd_ v, cf_ *o) { o->re = (float)v.re; o->im = (float)v.im; }
__device__ __forceinline__ void from_cd(cd_ v, cd_ *o) { *o = v; }

__device__ __forceinline__ void set_zero(float *v) { *v = 0.0f; }
__device__ __forceinline__ void set_zero(double *v) { *v = 0.0; }
__device__ __forceinline__ void set_zero(cf_ *v) { v->re = 0.0f; v->im = 0.0f; }
__device__ __forceinline__ void set_zero(cd_ *v) { v->re = 0.0; v->im = 0.0; }

__device__ __forceinline__ void coords(long long i, const Dims &d, long long c[4]) {
  c[0] = i % d.d[0]; i /= d.d[0];
  c[1] = i % d.d[1]; i /= d.d[1];
  c[2] = i % d.d[2];
  c[3] = i / d.d[2];
}

// Index of output coordinate `c` in an operand of shape `d` broadcast to the output.
__device__ __forceinline__ long long bcast_index(const long long c[4], const Dims &d) {
  long long idx = 0, stride = 1;
  for (int k = 0; k < 4; k++) {
    if (d.d[k] != 1) idx += c[k] * stride;
    stride *= d.d[k];
  }
  return idx;
}

#define GRID_LOOP(i, n) \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (long long)gridDim.x * blockDim.x)

// out[o] = scale * src[o + off] where inside src, else 0, converted to dst_t.
extern "C" __global__ void ef_reshape_copy(const src_t *src, Dims sd, dst_t *out, Dims od,
                                           Dims off, double scale, long long n) {
  GRID_LOOP(i, n) {
    long long c[4];
    coords(i, od, c);
    long long idx = 0, stride = 1;
    bool inside = true;
    for (int k = 0; k < 4; k++) {
      long long s = c[k] + off.d[k];
      inside = inside && s >= 0 && s < sd.d[k];
      idx += s * stride;
      stride *= sd.d[k];
    }
    dst_t v;
    if (inside) from_cd(to_cd(src[idx]) * scale, &v); else set_zero(&v);
    out[i] = v;
  }
}

// out = a * b with size-1 dimensions broadcast.
extern "C" __global__ void ef_mul_bcast(const src_t *a, Dims ad, const src_t *b, Dims bd,
                                        src_t *out, Dims od, long long n) {
  GRID_LOOP(i, n) {
    long long c[4];
    coords(i, od, c);
    out[i] = a[bcast_index(c, ad)] * b[bcast_index(c, bd)];
  }
}

// Direct convolution over the first `rank` dimensions, batched with broadcasting over the
// others: out[o] = sum_f s[o + start - f] * f[f], samples outside the signal being zero.
extern "C" __global__ void ef_convolve(const src_t *sig, Dims sd, const src_t *filt, Dims fd,
                                       src_t *out, Dims od, Dims start, int rank, long long n) {
  GRID_LOOP(i, n) {
    long long c[4];
    coords(i, od, c);
    long long lo[4], hi[4], sbase = 0, fbase = 0;
    long long sst[4], fst[4];
    sst[0] = 1; fst[0] = 1;
    for (int k = 1; k < 4; k++) { sst[k] = sst[k - 1] * sd.d[k - 1]; fst[k] = fst[k - 1] * fd.d[k - 1]; }
    bool empty = false;
    for (int k = 0; k < 4; k++) {
      if (k < rank) {
        // taps f with 0 <= c + start - f < sd
        long long ce = c[k] + start.d[k];
        lo[k] = ce - sd.d[k] + 1 > 0 ? ce - sd.d[k] + 1 : 0;
        hi[k] = ce + 1 < fd.d[k] ? ce + 1 : fd.d[k];
        if (lo[k] >= hi[k]) empty = true;
      } else {
        lo[k] = 0; hi[k] = 1;
        if (sd.d[k] != 1) sbase += c[k] * sst[k];
        if (fd.d[k] != 1) fbase += c[k] * fst[k];
      }
    }
    src_t acc;
    set_zero(&acc);
    if (!empty) {
      long long ce[4];
      for (int k = 0; k < 4; k++) ce[k] = k < rank ? c[k] + start.d[k] : 0;
      for (long long f3 = lo[3]; f3 < hi[3]; f3++)
        for (long long f2 = lo[2]; f2 < hi[2]; f2++)
          for (long long f1 = lo[1]; f1 < hi[1]; f1++) {
            long long so = sbase, fo = fbase;
            if (rank > 3) { so += (ce[3] - f3) * sst[3]; fo += f3 * fst[3]; }
            if (rank > 2) { so += (ce[2] - f2) * sst[2]; fo += f2 * fst[2]; }
            if (rank > 1) { so += (ce[1] - f1) * sst[1]; fo += f1 * fst[1]; }
            for (long long f0 = lo[0]; f0 < hi[0]; f0++)
              acc = acc + sig[so + ce[0] - f0] * filt[fo + f0];
          }
    }
    out[i] = acc;
  }
}

#ifdef CF0
// The same for rank 2 and a CF0 x CF1 filter (compile-time), tiled: each block computes tiles
// of TXW x TYH outputs of one output image (TXW = 32 TCG TCP, TYH = 8 TR, compile-time) from a
// copy in shared memory of the signal rows and columns they need (the tile grown by the
// filter; see tile.cu for the copy and the walk over the tiles), each thread the TR
// neighbouring outputs along dimension 1 of each of its TCG groups of TCP neighbouring
// columns (groups 32 TCP apart) with the filter in registers. Launched on (32, 8) blocks, as
// many as stay resident; the images (dimensions 2 and 3) broadcast as in ef_convolve; a block
// loads its next tile while it computes this one. Indices within an image are `idx_t` (int
// where they fit).
//
// With TCP = 2 (elements of 4 bytes, small filters) a thread's two columns read each staged
// row's CF0 + 1 elements as pairs, one 8-byte shared load for two, and store their outputs as
// one 8-byte store where the rows allow: a row's reads cost (CF0 + 1) / 2 loads for two columns
// where one column costs CF0, and the tile is twice as wide for the same rows, so a thread's
// share of the tile's fixed cost (staging, addresses, the walk) covers twice the outputs. The
// convolution's instructions, not its bytes, were what kept it from the copy ceiling.
#ifndef TCP
#define TCP 1
#endif
#define TXW (32 * TCG * TCP)
#define TYH (8 * TR)
// The staged rows' length: the tile grown by the filter, rounded up to whole pairs so that
// every thread's first column starts a pair.
#define TSW ((TXW + CF0 - 1 + TCP - 1) / TCP * TCP)
// The elements a thread reads of each staged row, in whole pairs.
#define TVN ((CF0 + TCP - 1 + TCP - 1) / TCP * TCP)
struct __align__(TCP * sizeof(src_t)) tcp_t { src_t v[TCP]; };
// Output r of each of a thread's TCP columns, stored at `at` as one store. (Pairs of 4-byte
// elements are stored in PTX: the compiler splits an 8-byte store through a pointer it cannot
// prove aligned into two.)
template <typename T>
__device__ __forceinline__ void store_tcp(T *at, const T (&acc)[TCP][TR], int r) {
#if TCP == 2
  if (sizeof(T) == 4) {
    unsigned a, b;
    memcpy(&a, &acc[0][r], 4);
    memcpy(&b, &acc[1][r], 4);
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(at), "r"(a), "r"(b) : "memory");
    return;
  }
#endif
  tcp_t q;
#pragma unroll
  for (int p = 0; p < TCP; p++) q.v[p] = acc[p][r];
  *(tcp_t *)at = q;
}
// (At least four blocks a multiprocessor where the filter takes at most 25 registers and a
// thread computes at most 8 outputs a tile: it would otherwise leave room for three, too few
// reads in flight. Three where a thread computes 16: their accumulators and the next tile's
// share need some 80 registers, and the tiles are twice as large, so three blocks have more
// bytes in flight than four of the smaller ones. Larger filters would spill.)
#define CONV_BLOCKS (CF0 * CF1 * sizeof(src_t) <= 100 ? (TCP * TR * TCG > 8 ? 3 : 4) : 1)
extern "C" __global__ void __launch_bounds__(256, CONV_BLOCKS)
    ef_convolve2_tiled(const src_t *__restrict__ sig, Dims sd, const src_t *__restrict__ filt,
                       Dims fd, src_t *__restrict__ out, Dims od, Dims start) {
  const int tid = threadIdx.x + threadIdx.y * 32;
  __shared__ tcp_t tile_pairs[TSW / TCP * (TYH + CF1 - 1)];
  src_t *tile = tile_pairs[0].v;
  const idx_t n0 = (idx_t)sd.d[0], n1 = (idx_t)sd.d[1], o0 = (idx_t)od.d[0], o1 = (idx_t)od.d[1];
  const long long splane = sd.d[0] * sd.d[1], fplane = CF0 * CF1;
  // (a thread's outputs in a row stored as one where every row of outputs starts a pair;
  // offsets within an image fit `idx_t`, and interior rows advance by pointer)
  const bool aligned_rows = o0 % TCP == 0;
  TileRegs<TSW, TYH + CF1 - 1, 256, src_t> next;
  // tile element (i, j) is signal (x0 + start0 - (CF0 - 1) + i, y0 + start1 - (CF1 - 1) + j)
  // image b's coordinates along dimensions 2 and 3 (no division for a single plane)
  auto plane_of = [&](long long b, long long &z, long long &q) {
    z = od.d[2] == 1 ? 0 : b % od.d[2];
    q = od.d[2] == 1 ? b : b / od.d[2];
  };
  auto fetch = [&](const TileIter<TXW, TYH> &at) {
    long long z, q;
    plane_of(at.image, z, q);
    const src_t *s =
        sig + (sd.d[2] > 1 ? z : 0) * splane + (sd.d[3] > 1 ? q : 0) * splane * sd.d[2];
    const idx_t sx0 = at.x0 + (idx_t)start.d[0] - (CF0 - 1);
    const idx_t sy0 = at.y0 + (idx_t)start.d[1] - (CF1 - 1);
    next.fetch_image(tid, s, n0, n1, sx0, sy0, [&](int i, int j) {
      const idx_t sx = sx0 + i, sy = sy0 + j;
      src_t v;
      set_zero(&v);
      if (sx >= 0 && sx < n0 && sy >= 0 && sy < n1) v = s[sx + sy * n0];
      return v;
    });
  };
  long long fb = -1;  // the filter `fr` holds
  src_t fr[CF0 * CF1];
  TileIter<TXW, TYH> at(od.d[0], od.d[1], od.d[2] * od.d[3]);
  if (at.valid()) fetch(at);
  while (at.valid()) {
    __syncthreads();  // the previous tile's readers are done
    next.store(tile, tid);
    __syncthreads();
    TileIter<TXW, TYH> after = at;
    after.advance();
    if (after.valid()) fetch(after);  // in flight while this tile is computed
    const long long b = at.image;
    const idx_t x0 = at.x0, y0 = at.y0;
    long long z, q;
    plane_of(b, z, q);
    const long long f_at = (fd.d[2] > 1 ? z : 0) + (fd.d[3] > 1 ? q : 0) * fd.d[2];
    if (f_at != fb) {
      fb = f_at;
#pragma unroll
      for (int k = 0; k < CF0 * CF1; k++) fr[k] = filt[f_at * fplane + k];
    }
    src_t *o = out + b * od.d[0] * od.d[1];
    // Each thread computes the TR outputs (x, y .. y + TR - 1), y = y0 + TR ty, of each of its
    // columns, which share all but TR - 1 of their filter rows' tile reads: row j of the tile
    // (CF1 + TR - 1 of them) is read once and added to every output whose window holds it.
    // Output (x, y) sums signal (x + start0 - a, y + start1 - c) * filter (a, c): tile element
    // (cx + CF0 - 1 - a, TR ty + r + CF1 - 1 - c).
    const idx_t y = y0 + TR * (idx_t)threadIdx.y;
    const bool inside = aligned_rows && x0 + TXW <= o0 && y0 + TYH <= o1;
#pragma unroll
    for (int g = 0; g < TCG; g++) {
      const int cx = TCP * threadIdx.x + 32 * TCP * g;
      const idx_t x = x0 + cx;
      src_t acc[TCP][TR];
#pragma unroll
      for (int p = 0; p < TCP; p++)
#pragma unroll
        for (int r = 0; r < TR; r++) set_zero(&acc[p][r]);
      // (rows last to first, so that each output adds its filter rows in order, as the CPU)
#pragma unroll
      for (int j = CF1 + TR - 2; j >= 0; j--) {
        const tcp_t *row = (const tcp_t *)(tile + (TR * threadIdx.y + j) * TSW + cx);
        src_t v[TVN];
#pragma unroll
        for (int i = 0; i < TVN / TCP; i++) {
          const tcp_t q = row[i];
#pragma unroll
          for (int p = 0; p < TCP; p++) v[TCP * i + p] = q.v[p];
        }
#pragma unroll
        for (int r = 0; r < TR; r++) {
          const int c = CF1 - 1 + r - j;  // the filter row tile row j meets in output r
          if (c >= 0 && c < CF1) {
#pragma unroll
            for (int p = 0; p < TCP; p++)
#pragma unroll
              for (int a = 0; a < CF0; a++)
                acc[p][r] = acc[p][r] + v[p + CF0 - 1 - a] * fr[a + c * CF0];
          }
        }
      }
      if (inside) {
        // (every output of the tile lies in the image: no bounds, and each row's address one
        // multiply-add from the first)
        src_t *o_row = o + (y * o0 + x);
#pragma unroll
        for (int r = 0; r < TR; r++) {
          store_tcp(o_row, acc, r);
          o_row += o0;
        }
      } else {
#pragma unroll
        for (int r = 0; r < TR; r++) {
          if (y + r >= o1) break;
          src_t *o_row = o + (y + r) * o0;
#pragma unroll
          for (int p = 0; p < TCP; p++)
            if (x + p < o0) o_row[x + p] = acc[p][r];
        }
      }
    }
    at = after;
  }
}
#endif

// The IIR recursion, one thread per line along dimension 0:
// y[i] = (c[i] - sum_{k>=1} a[k] y[i-k]) / a[0], in double precision.
extern "C" __global__ void ef_iir(const src_t *cin, Dims cd, const src_t *a, Dims ad,
                                  src_t *out, long long lines) {
  GRID_LOOP(j, lines) {
    long long c[4];
    c[0] = 0;
    c[1] = j % cd.d[1];
    c[2] = (j / cd.d[1]) % cd.d[2];
    c[3] = j / (cd.d[1] * cd.d[2]);
    const src_t *coef = a + bcast_index(c, ad);
    long long base = j * cd.d[0];
    long long na = ad.d[0];
    cd_ a0 = to_cd(coef[0]);
    for (long long i = 0; i < cd.d[0]; i++) {
      cd_ y = to_cd(cin[base + i]);
      for (long long k = 1; k < na && k <= i; k++) y = y - to_cd(coef[k]) * to_cd(out[base + i - k]);
      src_t v;
      from_cd(y / a0, &v);
      out[base + i] = v;
    }
  }
}

// Interpolation methods (the order of the host's `Interp`).
#define M_NEAREST 0
#define M_LOWER 1
#define M_LINEAR 2
#define M_LINEAR_COSINE 3
#define M_CUBIC 4
#define M_CUBIC_SPLINE 5

__device__ __forceinline__ cd_ cubic(cd_ v0, cd_ v1, cd_ v2, cd_ v3, double t, bool spline) {
  cd_ a0, a1, a2, a3;
  if (spline) {
    a0 = v0 * -0.5 + v1 * 1.5 + v2 * -1.5 + v3 * 0.5;
    a1 = v0 + v1 * -2.5 + v2 * 2.0 + v3 * -0.5;
    a2 = (v2 - v0) * 0.5;
    a3 = v1;
  } else {
    a0 = v3 - v2 - v0 + v1;
    a1 = v0 - v1 - a0;
    a2 = v2 - v0;
    a3 = v1;
  }
  return ((a0 * t + a1) * t + a2) * t + a3;
}

// The value at x (index units) of the n samples base[0], base[step], ...; x is inside
// [0, n - 1]. Neighbours past an edge repeat the edge.
__device__ cd_ interp1(const src_t *base, long long step, long long n, double x, int m) {
  double g = floor(x);
  double t = x - g;
  long long gi = (long long)g;
  long long last = n - 1;
#define AT(i) to_cd(base[((i) < 0 ? 0 : ((i) > last ? last : (i))) * step])
  switch (m) {
    case M_NEAREST: return AT((long long)round(x));
    case M_LOWER: return AT(gi);
    case M_LINEAR: return AT(gi) * (1.0 - t) + AT(gi + 1) * t;
    case M_LINEAR_COSINE: {
      double s = (1.0 - cos(t * 3.141592653589793)) / 2.0;
      return AT(gi) * (1.0 - s) + AT(gi + 1) * s;
    }
    default:
      return cubic(AT(gi - 1), AT(gi), AT(gi + 1), AT(gi + 2), t, m == M_CUBIC_SPLINE);
  }
#undef AT
}

__device__ __forceinline__ bool on_grid(double x, long long n) {
  return x >= 0.0 && x <= (double)(n - 1);
}

// approx1 (npos == 1: out[i,j,k,l] = column (j,k,l) at pos0[i (,j,k,l)]) and approx2
// (npos == 2: image (k,l) at (pos0[i,j], pos1[i,j] (,k,l))), positions broadcast over
// their size-1 dimensions.
extern "C" __global__ void ef_approx(const src_t *in, Dims id, const real_t *pos0,
                                     const real_t *pos1, Dims pd, int npos, src_t *out,
                                     Dims od, int m, double off_grid, long long n) {
  GRID_LOOP(i, n) {
    long long c[4];
    coords(i, od, c);
    long long p = bcast_index(c, pd);
    double x = (double)pos0[p];
    src_t v;
    from_cd(mkcd(off_grid, 0.0), &v);
    if (npos == 1) {
      if (on_grid(x, id.d[0])) {
        const src_t *col = in + c[1] * id.d[0] + c[2] * id.d[0] * id.d[1] + c[3] * id.d[0] * id.d[1] * id.d[2];
        from_cd(interp1(col, 1, id.d[0], x, m), &v);
      }
    } else {
      double y = (double)pos1[p];
      if (on_grid(x, id.d[0]) && on_grid(y, id.d[1])) {
        const src_t *img = in + c[2] * id.d[0] * id.d[1] + c[3] * id.d[0] * id.d[1] * id.d[2];
        // rows needed by the method along dimension 1, each interpolated along dimension 0
        double g = floor(y);
        double t = y - g;
        long long gi = (long long)g, last = id.d[1] - 1;
#define ROW(r) interp1(img + ((r) < 0 ? 0 : ((r) > last ? last : (r))) * id.d[0], 1, id.d[0], x, m)
        cd_ r;
        switch (m) {
          case M_NEAREST: r = ROW((long long)round(y)); break;
          case M_LOWER: r = ROW(gi); break;
          case M_LINEAR: r = ROW(gi) * (1.0 - t) + ROW(gi + 1) * t; break;
          case M_LINEAR_COSINE: {
            double s = (1.0 - cos(t * 3.141592653589793)) / 2.0;
            r = ROW(gi) * (1.0 - s) + ROW(gi + 1) * s;
            break;
          }
          default:
            r = cubic(ROW(gi - 1), ROW(gi), ROW(gi + 1), ROW(gi + 2), t, m == M_CUBIC_SPLINE);
        }
#undef ROW
        from_cd(r, &v);
      }
    }
    out[i] = v;
  }
}
