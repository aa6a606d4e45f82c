// Sparse matrix kernels: offsets from sorted indices and back, scattering coordinates into a
// dense matrix, and the CSR times dense product.
//
// The including code puts a typedef of `val_t` (float, double, cf_ or cd_) in front of this
// file, so each entry point is compiled once per value type. Indices and offsets are int;
// every index was checked against the matrix's shape before any of these kernels runs.

struct __align__(8) cf_ { float re, im; };
struct __align__(16) cd_ { double re, im; };

__device__ __forceinline__ void set_zero(float &v) { v = 0.0f; }
__device__ __forceinline__ void set_zero(double &v) { v = 0.0; }
__device__ __forceinline__ void set_zero(cf_ &v) { v.re = 0.0f; v.im = 0.0f; }
__device__ __forceinline__ void set_zero(cd_ &v) { v.re = 0.0; v.im = 0.0; }

// acc += a * b
__device__ __forceinline__ void mul_add(float &acc, float a, float b) { acc = fmaf(a, b, acc); }
__device__ __forceinline__ void mul_add(double &acc, double a, double b) { acc = fma(a, b, acc); }
__device__ __forceinline__ void mul_add(cf_ &acc, cf_ a, cf_ b) {
  acc.re = fmaf(a.re, b.re, fmaf(-a.im, b.im, acc.re));
  acc.im = fmaf(a.re, b.im, fmaf(a.im, b.re, acc.im));
}
__device__ __forceinline__ void mul_add(cd_ &acc, cd_ a, cd_ b) {
  acc.re = fma(a.re, b.re, fma(-a.im, b.im, acc.re));
  acc.im = fma(a.re, b.im, fma(a.im, b.re, acc.im));
}
__device__ __forceinline__ void add_to(float &acc, float v) { acc += v; }
__device__ __forceinline__ void add_to(double &acc, double v) { acc += v; }
__device__ __forceinline__ void add_to(cf_ &acc, cf_ v) { acc.re += v.re; acc.im += v.im; }
__device__ __forceinline__ void add_to(cd_ &acc, cd_ v) { acc.re += v.re; acc.im += v.im; }
__device__ __forceinline__ val_t product(val_t a, val_t b) { val_t r; set_zero(r); mul_add(r, a, b); return r; }

__device__ __forceinline__ void atomic_add_to(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_to(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add_to(cf_ *p, cf_ v) { atomicAdd(&p->re, v.re); atomicAdd(&p->im, v.im); }
__device__ __forceinline__ void atomic_add_to(cd_ *p, cd_ v) { atomicAdd(&p->re, v.re); atomicAdd(&p->im, v.im); }

__device__ __forceinline__ float shfl_down(float v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ double shfl_down(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ cf_ shfl_down(cf_ v, int d) { v.re = shfl_down(v.re, d); v.im = shfl_down(v.im, d); return v; }
__device__ __forceinline__ cd_ shfl_down(cd_ v, int d) { v.re = shfl_down(v.re, d); v.im = shfl_down(v.im, d); return v; }

#define GRID_LOOP(i, n) \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (long long)gridDim.x * blockDim.x)

// offsets[k] = the number of indices below k, for k in 0..=n, from `nnz` ascending indices.
// Thread i writes the offsets of the keys in (sorted[i - 1], sorted[i]], so each is written once.
extern "C" __global__ void ef_compress(const int *__restrict__ sorted, long long nnz, long long n,
                                       int *__restrict__ offsets) {
  GRID_LOOP(i, nnz + 1) {
    long long prev = i > 0 ? sorted[i - 1] : -1;
    long long cur = i < nnz ? sorted[i] : n;
    for (long long k = prev + 1; k <= cur; k++) offsets[k] = (int)i;
  }
}

// idx[j] = k for offsets[k] <= j < offsets[k + 1], over the n compressed keys.
extern "C" __global__ void ef_expand(const int *__restrict__ offsets, long long n,
                                     int *__restrict__ idx) {
  GRID_LOOP(k, n) {
    for (int j = offsets[k]; j < offsets[k + 1]; j++) idx[j] = (int)k;
  }
}

extern "C" __global__ void ef_zero(val_t *__restrict__ out, long long n) {
  GRID_LOOP(i, n) { set_zero(out[i]); }
}

// out[rows[j] + cols[j] * m] += values[j]: positions stored twice add up.
extern "C" __global__ void ef_scatter(const val_t *__restrict__ values, const int *__restrict__ rows,
                                      const int *__restrict__ cols, long long nnz, long long m,
                                      val_t *__restrict__ out) {
  GRID_LOOP(j, nnz) { atomic_add_to(out + rows[j] + (long long)cols[j] * m, values[j]); }
}

// y = A x for CSR `A` (m rows) and each column of the dense `x`: column c of x starts at
// x + c * x_ld, of y at y + c * m.
//
// Each block takes ROWS consecutive rows. When their nonzeros fit in shared memory (the common
// case: up to TILE / ROWS per row on average), the block reads them with coalesced loads, keeps
// each value times its x element in shared memory, and then each thread sums its own row
// from there. Otherwise (long rows) each warp takes whole rows and its lanes stride along them.
#define ROWS 256
#define TILE (16384 / sizeof(val_t))
extern "C" __global__ void __launch_bounds__(ROWS)
ef_csr_mm(const val_t *__restrict__ values, const int *__restrict__ offsets,
          const int *__restrict__ cols, long long m, long long ncols,
          const val_t *__restrict__ x, long long x_ld, val_t *__restrict__ y) {
  __shared__ val_t tile[TILE];
  __shared__ int ptr[ROWS + 1];
  long long r0 = (long long)blockIdx.x * ROWS;
  int nr = (int)min((long long)ROWS, m - r0);
  for (int t = threadIdx.x; t <= nr; t += blockDim.x) ptr[t] = offsets[r0 + t];
  __syncthreads();
  const int base = ptr[0];
  const int len = ptr[nr] - base;
  for (long long c = blockIdx.y; c < ncols; c += gridDim.y) {
    const val_t *xc = x + c * x_ld;
    val_t *yc = y + c * m + r0;
    if (len <= (int)TILE) {
      #pragma unroll 4
      for (int j = threadIdx.x; j < len; j += ROWS) {
        tile[j] = product(values[base + j], xc[cols[base + j]]);
      }
      __syncthreads();
      if (threadIdx.x < nr) {
        val_t acc;
        set_zero(acc);
        const int end = ptr[threadIdx.x + 1] - base;
        for (int j = ptr[threadIdx.x] - base; j < end; j++) add_to(acc, tile[j]);
        yc[threadIdx.x] = acc;
      }
      __syncthreads();  // the tile is reused for the next column
    } else {
      const int lane = threadIdx.x & 31;
      for (int r = threadIdx.x >> 5; r < nr; r += ROWS / 32) {
        val_t acc;
        set_zero(acc);
        for (int j = ptr[r] + lane; j < ptr[r + 1]; j += 32) mul_add(acc, values[j], xc[cols[j]]);
        for (int d = 16; d > 0; d >>= 1) add_to(acc, shfl_down(acc, d));
        if (lane == 0) yc[r] = acc;
      }
    }
  }
}
