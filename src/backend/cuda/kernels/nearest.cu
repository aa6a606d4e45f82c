// The nearest train point of every query by the sum of squared differences (SSD, k = 1), in
// f32, without the query x train matrix of distances ever reaching memory.
//
// Queries are the nq columns of `q` (K x nq, column-major) and train points the nt columns of
// `t` (K x nt). ||q - t||^2 = ||q||^2 + ||t||^2 - 2 q.t, and ||q||^2 is the same for every
// candidate of a query, so the search ranks ||t||^2 - 2 q.t: a matrix product (2 K nq nt
// operations, a fused multiply-add each) whose epilogue keeps each query's running minimum in
// registers. The winner's distance is then summed directly, (q - t)^2 over K, so the distance
// returned has no cancellation error. Ties go to the lower train index.
//
// Each block owns BM = 128 queries and walks every train point in tiles of BN = 128, the
// product of a tile in chunks of BK = 16 features staged in shared memory (the next chunk
// loaded into registers while this one is used). Its 256 threads each hold an 8 x 8 part of
// the tile: queries 4 ty + i and 64 + 4 ty + i, points 4 tx + j and 64 + 4 tx + j (tx, ty in
// 0..16), so that every shared read is a 16-byte vector, broadcast or conflict-free. Requires
// K % 4 == 0 and 16-byte aligned `q` and `t` (the host checks).
#define BM 128
#define BN 128
#define BK 16

struct Chunk { float4 q[2], t[2]; };

// Features [k0, k0 + 16) of query (or point) column `c` of a K x n matrix, 4 at a time: slot s
// holds features k0 + 4 s .. k0 + 4 s + 3; zeros past K or n.
__device__ __forceinline__ float4 load4(const float *__restrict__ m, int K, int n, int c, int k) {
  if (c < n && k < K) return *reinterpret_cast<const float4 *>(m + (long long)c * K + k);
  return make_float4(0.f, 0.f, 0.f, 0.f);
}

extern "C" __global__ void __launch_bounds__(256, 2)
    ef_nearest_ssd(const float *__restrict__ q, const float *__restrict__ t, int K, int nq,
                   int nt, unsigned *__restrict__ out_idx, float *__restrict__ out_dist) {
  __shared__ __align__(16) float qs[BK][BM];
  __shared__ __align__(16) float ts[BK][BN];
  __shared__ float tnorm[2][BN];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  // the staging role: column tid % 128 of both tiles, feature slots tid / 128 and that + 2
  const int lc = tid % 128, ls = tid / 128;
  const int q0 = blockIdx.x * BM;

  float best[8];
  unsigned bidx[8];
#pragma unroll
  for (int i = 0; i < 8; i++) {
    best[i] = __int_as_float(0x7f800000);  // +inf
    bidx[i] = 0xffffffffu;
  }

  for (int p0 = 0; p0 < nt; p0 += BN) {
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
      for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
    float norm = 0.f;  // of point p0 + lc, over this thread's feature slots

    Chunk next;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      next.q[h] = load4(q, K, nq, q0 + lc, 4 * (ls + 2 * h));
      next.t[h] = load4(t, K, nt, p0 + lc, 4 * (ls + 2 * h));
    }
    for (int k0 = 0; k0 < K; k0 += BK) {
      __syncthreads();  // the previous chunk's readers are done
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int s = 4 * (ls + 2 * h);
        qs[s][lc] = next.q[h].x; qs[s + 1][lc] = next.q[h].y;
        qs[s + 2][lc] = next.q[h].z; qs[s + 3][lc] = next.q[h].w;
        ts[s][lc] = next.t[h].x; ts[s + 1][lc] = next.t[h].y;
        ts[s + 2][lc] = next.t[h].z; ts[s + 3][lc] = next.t[h].w;
        norm += next.t[h].x * next.t[h].x + next.t[h].y * next.t[h].y +
                next.t[h].z * next.t[h].z + next.t[h].w * next.t[h].w;
      }
      __syncthreads();
      if (k0 + BK < K) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
          next.q[h] = load4(q, K, nq, q0 + lc, k0 + BK + 4 * (ls + 2 * h));
          next.t[h] = load4(t, K, nt, p0 + lc, k0 + BK + 4 * (ls + 2 * h));
        }
      }
#pragma unroll
      for (int kk = 0; kk < BK; kk++) {
        const float4 a0 = *reinterpret_cast<const float4 *>(&qs[kk][4 * ty]);
        const float4 a1 = *reinterpret_cast<const float4 *>(&qs[kk][64 + 4 * ty]);
        const float4 b0 = *reinterpret_cast<const float4 *>(&ts[kk][4 * tx]);
        const float4 b1 = *reinterpret_cast<const float4 *>(&ts[kk][64 + 4 * tx]);
        const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
          for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    tnorm[ls][lc] = norm;
    __syncthreads();
    // fold this tile's points into each query's running minimum, in increasing point order
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const int c = (j < 4 ? 4 * tx + j : 64 + 4 * tx + j - 4);
      const int p = p0 + c;
      const float tn = tnorm[0][c] + tnorm[1][c];
#pragma unroll
      for (int i = 0; i < 8; i++) {
        const float d = fmaf(-2.f, acc[i][j], tn);
        if (p < nt && d < best[i]) {
          best[i] = d;
          bidx[i] = (unsigned)p;
        }
      }
    }
  }

  // The 16 threads of a query row (lanes differing in their low 4 bits) agree on its winner.
#pragma unroll
  for (int i = 0; i < 8; i++) {
#pragma unroll
    for (int m = 1; m < 16; m <<= 1) {
      const float od = __shfl_xor_sync(0xffffffffu, best[i], m);
      const unsigned oi = __shfl_xor_sync(0xffffffffu, bidx[i], m);
      if (od < best[i] || (od == best[i] && oi < bidx[i])) {
        best[i] = od;
        bidx[i] = oi;
      }
    }
  }
  // Each winner's distance summed directly, the row's 16 lanes taking every 16th feature.
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int r = q0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
    const unsigned w = bidx[i];
    float d = 0.f;
    if (r < nq && w < (unsigned)nt) {
      const float *qc = q + (long long)r * K, *tc = t + (long long)w * K;
      for (int k = tx; k < K; k += 16) {
        const float e = qc[k] - tc[k];
        d = fmaf(e, e, d);
      }
    }
#pragma unroll
    for (int m = 1; m < 16; m <<= 1) d += __shfl_xor_sync(0xffffffffu, d, m);
    if (tx == 0 && r < nq) {
      out_idx[r] = w;
      out_dist[r] = w < (unsigned)nt ? d : __int_as_float(0x7f800000);
    }
  }
}
