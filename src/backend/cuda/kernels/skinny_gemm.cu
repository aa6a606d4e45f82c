// Matrix products with two small sizes (see skinny.rs). The host prepends the definitions of
// T (float or double), of the small sizes as compile-time constants, and of the part wanted
// (K_ for tall; M_ for long):
//   ef_gemm_tall: C (m x N_) = alpha * A (m x K_) * op(B) (K_ x N_) + beta * C
//   ef_gemm_long: C (M_ x N_) = alpha * A^T * B + beta * C, A stored k x M_, B stored k x N_:
//                 each block writes the partial product of a chunk of rows, and the last
//                 block to finish (counted on a ticket) adds them in block order.

#ifdef K_
// ---- tall: one row of A and C per thread, op(B) in shared memory
extern "C" __global__ void __launch_bounds__(256) ef_gemm_tall(
    const T* __restrict__ a, const long long lda, const T* __restrict__ b, const long long bs0,
    const long long bs1, T* __restrict__ c, const long long m, const T alpha, const T beta,
    const int read_c) {
  // op(B) column by column: element (l, j) at sb[j * K_ + l]; every thread reads the same
  // elements at the same time, which shared memory broadcasts
  __shared__ __align__(16) T sb[N_ * K_];
  for (int e = threadIdx.x; e < K_ * N_; e += blockDim.x) {
    const int j = e / K_, l = e % K_;
    sb[e] = b[l * bs0 + j * bs1];
  }
  __syncthreads();
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
       i += (long long)gridDim.x * blockDim.x) {
    // the row of A in registers: K_ loads, each coalesced across the warp
    T ar[K_];
#pragma unroll
    for (int l = 0; l < K_; l++) ar[l] = a[i + l * lda];
    // one column of C at a time: a dot product of the row with a column of op(B)
#pragma unroll 2
    for (int j = 0; j < N_; j++) {
      T s = (T)0;
#pragma unroll
      for (int l = 0; l < K_; l++) s += ar[l] * sb[j * K_ + l];
      T v = alpha * s;
      if (read_c) v += beta * c[i + j * m];
      c[i + j * m] = v;
    }
  }
}
#endif

#ifdef M_
// ---- long: each block sums the outer products of its chunks of rows
//
// A tile of ROWS_ rows of A and B is staged in shared memory (coalesced reads along the rows);
// the M_ x N_ outputs are split into TI_ x TJ_ register blocks, and the GROUPS_ groups of
// threads that cover them take every GROUPS_-th row of the tile. At the end the groups' sums
// are added in shared memory and the block writes its partial product.
#define BI_ ((M_ + TI_ - 1) / TI_)
#define BJ_ ((N_ + TJ_ - 1) / TJ_)
#define GROUPS_ (256 / (BI_ * BJ_))

extern "C" __global__ void __launch_bounds__(256) ef_gemm_long(
    const T* __restrict__ a, const long long lda, const T* __restrict__ b, const long long ldb,
    T* part, const long long k, const long long chunk, unsigned int* ticket,
    T* __restrict__ c, const T alpha, const T beta, const int read_c) {
  __shared__ int last_;
  __shared__ T sa[ROWS_][M_ + 1];
  __shared__ T sb[ROWS_][N_ + 1];
  const int t = threadIdx.x;
  const int blk = t % (BI_ * BJ_), g = t / (BI_ * BJ_);
  const int i0 = (blk / BJ_) * TI_, j0 = (blk % BJ_) * TJ_;
  T acc[TI_][TJ_];
#pragma unroll
  for (int x = 0; x < TI_; x++)
#pragma unroll
    for (int y = 0; y < TJ_; y++) acc[x][y] = (T)0;
  const long long lo = (long long)blockIdx.x * chunk;
  const long long hi = lo + chunk < k ? lo + chunk : k;
  for (long long r0 = lo; r0 < hi; r0 += ROWS_) {
    __syncthreads();
    // stage the tile: row r0 + e % ROWS_, column e / ROWS_, so a warp reads consecutive rows
    for (int e = t; e < ROWS_ * M_; e += 256) {
      const int r = e % ROWS_, col = e / ROWS_;
      sa[r][col] = r0 + r < hi ? a[r0 + r + col * lda] : (T)0;
    }
    for (int e = t; e < ROWS_ * N_; e += 256) {
      const int r = e % ROWS_, col = e / ROWS_;
      sb[r][col] = r0 + r < hi ? b[r0 + r + col * ldb] : (T)0;
    }
    __syncthreads();
    if (g < GROUPS_) {
      for (int r = g; r < ROWS_; r += GROUPS_) {
        T av[TI_], bv[TJ_];
#pragma unroll
        for (int x = 0; x < TI_; x++) av[x] = i0 + x < M_ ? sa[r][i0 + x] : (T)0;
#pragma unroll
        for (int y = 0; y < TJ_; y++) bv[y] = j0 + y < N_ ? sb[r][j0 + y] : (T)0;
#pragma unroll
        for (int x = 0; x < TI_; x++)
#pragma unroll
          for (int y = 0; y < TJ_; y++) acc[x][y] += av[x] * bv[y];
      }
    }
  }
  // the groups' sums, in a fixed order: group 0's, then 1's, ...
  __syncthreads();
  T* sum = &sa[0][0];  // M_ * N_ values fit: ROWS_ * (M_ + 1) >= M_ * N_ (host checks)
  for (int gg = 0; gg < GROUPS_; gg++) {
    if (g == gg) {
#pragma unroll
      for (int x = 0; x < TI_; x++)
#pragma unroll
        for (int y = 0; y < TJ_; y++) {
          if (i0 + x < M_ && j0 + y < N_) {
            T* s = &sum[(i0 + x) + (j0 + y) * M_];
            *s = gg == 0 ? acc[x][y] : *s + acc[x][y];
          }
        }
    }
    __syncthreads();
  }
  for (int e = t; e < M_ * N_; e += 256) part[(long long)blockIdx.x * (M_ * N_) + e] = sum[e];
  // publish the partial and count this block; the last one adds the partials in block order
  __threadfence();
  __syncthreads();
  if (t == 0) last_ = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last_) return;
  __threadfence();
  for (int e = t; e < M_ * N_; e += 256) {
    T s = (T)0;
    for (unsigned q = 0; q < gridDim.x; q++) s += __ldcg(&part[(long long)q * (M_ * N_) + e]);
    T v = alpha * s;
    if (read_c) v += beta * c[e];
    c[e] = v;
  }
  if (t == 0) *ticket = 0;  // left at zero for the next launch on this stream
}
#endif
