// Stand-alone check and timing of emberfire's CUDA radix sort (src/backend/cuda/kernels/sort.cu)
// beside CUB's, for f32 keys, on the GPU machine (nvcc, no Rust needed):
//
//   bash benches/gpu/sort_lab.sh                 # builds the variants below and runs them
//   nvcc -O3 -std=c++17 -arch=sm_90 [-DEF_VALS=1] [-DITEMS=24] [-DEF_LOOK_BACK=4] \
//        -o sort_lab benches/gpu/sort_lab.cu && ./sort_lab [n] [descending] [dup]
//
// Prints the time of each kernel of one sort, the mean time of a whole sort over ten, CUB's
// time in the same process, and the count of elements (and, with payloads, positions) that
// differ from CUB's result or break stability. `dup` rounds the keys to few distinct values.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#define EF_ELEM_BYTES 4
#define EF_KIND 2
typedef unsigned int ef_bits;
typedef unsigned int ef_word;
#ifndef EF_VALS
#define EF_VALS 0  // 1: payloads (source positions) travel with the keys, as sort_index
#endif
#ifndef ITEMS      // keys per thread: the library's choice (cuda/sort.rs, `items`) by default
#if EF_VALS
#define ITEMS 16
#else
#define ITEMS 24
#endif
#endif
#define EF_ITEMS ITEMS
#include "../../src/backend/cuda/kernels/sort.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
static float el(cudaEvent_t a, cudaEvent_t b) { float m; cudaEventElapsedTime(&m, a, b); return m; }
int main(int argc, char** argv) {
  long long n = argc > 1 ? atoll(argv[1]) : (1ll << 26);
  int desc = argc > 2 ? atoi(argv[2]) : 0;
  int reps = 10;
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::vector<float> h(n);
  unsigned long long x = 88172645463325252ull;
  for (long long i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; h[i] = (float)((x >> 40) * (1.0 / 16777216.0)); }
  if (argc > 3)  // few distinct values: stability matters
    for (long long i = 0; i < n; i++) h[i] = (float)((long long)(h[i] * 1000));
  float *d_in, *d_out, *d_ref; CK(cudaMalloc(&d_in, n * 4)); CK(cudaMalloc(&d_out, n * 4)); CK(cudaMalloc(&d_ref, n * 4));
  CK(cudaMemcpy(d_in, h.data(), n * 4, cudaMemcpyHostToDevice));
  unsigned *k0, *k1, *v0, *v1, *idx, *counts;
  CK(cudaMalloc(&k0, n * 4)); CK(cudaMalloc(&k1, n * 4)); CK(cudaMalloc(&v0, n * 4)); CK(cudaMalloc(&v1, n * 4)); CK(cudaMalloc(&idx, n * 4));
  const int TILE = 256 * EF_ITEMS;
  long long tiles = (n + TILE - 1) / TILE;
  CK(cudaMalloc(&counts, 256 * (tiles + 64) * 4));
  cudaEvent_t ev[64]; for (int i = 0; i < 64; i++) cudaEventCreate(&ev[i]);
  const int passes = 4;
  SortArgs a = {};
  a.in = d_in; a.out = d_out; a.idx_out = idx; a.n = n; a.tiles = tiles; a.seg_len = (unsigned)n; a.counts = counts;
  unsigned *starts, *next; unsigned long long* status;
  CK(cudaMalloc(&starts, 256 * 16 * 4)); CK(cudaMalloc(&next, 64)); CK(cudaMalloc(&status, tiles * 256 * 8));
  a.starts = starts; a.next_tile = next; a.status = status; a.passes = passes;
  int hist_blocks = sms * (getenv("HB") ? atoi(getenv("HB")) : 4);
  auto run = [&](bool timed) {
    int e = 0;
    a.flags = desc ? EF_DESC : 0;
    if (timed) cudaEventRecord(ev[e++]);
    ef_sort_clear<<<1, 256>>>(a);
    if (timed) cudaEventRecord(ev[e++]);
    ef_sort_histogram<<<hist_blocks, 256>>>(a);
    if (timed) cudaEventRecord(ev[e++]);
    ef_sort_starts<<<passes, 256>>>(a);
    for (int p = 0; p < passes; p++) {
      a.flags = (desc ? EF_DESC : 0) | (p == 0 ? EF_FIRST : 0) | (p == passes - 1 ? (EF_LAST | EF_WRITE_VALS) : 0);
      a.keys_in = p % 2 ? k0 : k1; a.vals_in = p % 2 ? v0 : v1; a.keys_out = p % 2 ? k1 : k0; a.vals_out = p % 2 ? v1 : v0;
      a.shift = 8 * p; a.pass = p;
      if (timed) cudaEventRecord(ev[e++]);
      ef_sort_onesweep<<<tiles, 256>>>(a);
    }
    if (timed) { cudaEventRecord(ev[e++]); cudaEventSynchronize(ev[e - 1]);
      printf("clear %.3f histogram %.3f starts %.3f\n", el(ev[0], ev[1]), el(ev[1], ev[2]), el(ev[2], ev[3]));
      for (int p = 0; p < passes; p++) printf("pass %d: onesweep %.3f\n", p, el(ev[3 + p], ev[4 + p])); }
  };
  run(false); CK(cudaDeviceSynchronize());
  cudaEventRecord(ev[60]); for (int r = 0; r < reps; r++) run(false); cudaEventRecord(ev[61]); CK(cudaEventSynchronize(ev[61]));
  float ours = el(ev[60], ev[61]) / reps;
  run(true);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  // CUB
  size_t tb = 0; cub::DeviceRadixSort::SortKeys(nullptr, tb, d_in, d_ref, (int)n);
  void* tmp; CK(cudaMalloc(&tmp, tb));
  auto cubsort = [&]() { if (desc) cub::DeviceRadixSort::SortKeysDescending(tmp, tb, d_in, d_ref, (int)n); else cub::DeviceRadixSort::SortKeys(tmp, tb, d_in, d_ref, (int)n); };
  cubsort(); CK(cudaDeviceSynchronize());
  cudaEventRecord(ev[60]); for (int r = 0; r < reps; r++) cubsort(); cudaEventRecord(ev[61]); CK(cudaEventSynchronize(ev[61]));
  float cubms = el(ev[60], ev[61]) / reps;
  std::vector<float> o(n), r(n); std::vector<unsigned> ix(n);
  CK(cudaMemcpy(o.data(), d_out, n * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(r.data(), d_ref, n * 4, cudaMemcpyDeviceToHost));
  long long bad = 0; for (long long i = 0; i < n; i++) bad += o[i] != r[i];
  long long badv = 0;
#if EF_VALS
  CK(cudaMemcpy(ix.data(), idx, n * 4, cudaMemcpyDeviceToHost));
  for (long long i = 0; i < n; i++) { if (h[ix[i]] != o[i]) badv++; if (i && o[i] == o[i-1] && ix[i] <= ix[i-1]) badv++; }
#endif
  printf("n=%lld desc=%d vals=%d: ours %.3f ms, cub %.3f ms, ratio cub/ours %.2f, mismatches %lld, payload errors %lld\n", n, desc, EF_VALS, ours, cubms, cubms / ours, bad, badv);
  return bad || badv;
}
