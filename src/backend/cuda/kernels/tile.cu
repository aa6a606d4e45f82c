// Staging of a rectangle of an image into shared memory, shared by the tiled filters
// (`ef_window` in image.cu, `ef_convolve2_tiled` in signal.cu).
//
// A TX x TY tile (row length TX) is read into registers by `fetch`, element (i, j) as
// f(i, j), and written to shared memory by `store`. Each of the block's THREADS threads issues
// all of its loads before it stores any: a loop that stores each load as it arrives waits for
// one load at a time. The filters fetch the block's next tile right after storing this one,
// so the next tile's loads are in flight while this tile's outputs are computed.
template <int TX, int TY, int THREADS, typename T>
struct TileRegs {
  static constexpr int N = TX * TY, PER = (N + THREADS - 1) / THREADS;
  T held[PER];

  template <typename F>
  __device__ __forceinline__ void fetch(int thread, F f) {
#pragma unroll
    for (int m = 0; m < PER; m++) {
      const int k = thread + THREADS * m;
      if (k < N) held[m] = f(k % TX, k / TX);
    }
  }

  __device__ __forceinline__ void store(T *tile, int thread) const {
#pragma unroll
    for (int m = 0; m < PER; m++) {
      const int k = thread + THREADS * m;
      if (k < N) tile[k] = held[m];
    }
  }
};
