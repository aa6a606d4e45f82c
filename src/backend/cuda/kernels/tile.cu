// What the tiled image filters share (`ef_window` and `ef_warp` in image.cu,
// `ef_convolve2_tiled` in signal.cu): the walk of a grid's blocks over the output tiles, and
// the staging of a rectangle of an image into shared memory. The including code defines
// `idx_t` first.

// The output tiles of images of o0 x o1 elements, TX x TY each, numbered along dimension 0
// first, then 1, then image by image. The grid has as many blocks as the device keeps
// resident (one wave), and block k takes tiles k, k + gridDim.x, ...: every block gets the
// same number of tiles give or take one, so no partial last wave leaves multiprocessors idle,
// and the blocks working at one time cover neighbouring tiles, whose overlapping reads meet
// in L2.
struct TileWalk {
  long long across, per_image, total;

  __device__ __forceinline__ TileWalk(long long o0, long long o1, long long images, int tx,
                                      int ty) {
    across = (o0 + tx - 1) / tx;
    per_image = across * ((o1 + ty - 1) / ty);
    total = per_image * images;
  }

  // Tile t's image and the coordinates of its first output.
  __device__ __forceinline__ void at(long long t, int tx, int ty, long long &image, idx_t &x0,
                                     idx_t &y0) const {
    image = t / per_image;
    const long long r = t - image * per_image;
    const long long row = r / across;
    x0 = (idx_t)((r - row * across) * tx);
    y0 = (idx_t)(row * ty);
  }
};

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
