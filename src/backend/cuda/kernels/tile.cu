// What the tiled image filters share (`ef_window` in image.cu, `ef_convolve2_tiled` in
// signal.cu): the order in which a grid's blocks take the output tiles, and the staging of a
// rectangle of an image into shared memory. The including code defines `idx_t` and
// TILE_WALK first.

// The output tiles of images of o0 x o1 elements, TX x TY each, that a block computes, one
// after the other: `image`, `x0` and `y0` say which (the coordinates of its first output)
// while `valid()`, and `advance()` moves to the block's next. Two orders (TILE_WALK):
// - 0: grid.x covers dimension 0; grid.y and grid.z stride over the tiles of dimension 1 and
//   over the images, so a block keeps its column;
// - 1: the tiles are numbered along dimension 0 first, then 1, then image by image, and block
//   k of a grid of one wave of resident blocks takes tiles k, k + gridDim.x, ...: every block
//   gets the same number of tiles give or take one, so no partial last wave leaves
//   multiprocessors idle. The step is split into whole images, rows and columns of tiles once,
//   so moving on costs a few additions, no division.
template <int TX, int TY>
struct TileIter {
  long long image, images;
  idx_t x0, y0, o1;
#if TILE_WALK
  long long step_images;
  int across, down, tx, ty, step_rows, step_cols;
#endif

  __device__ __forceinline__ TileIter(long long o0, long long o1_, long long images_)
      : images(images_), o1((idx_t)o1_) {
#if TILE_WALK
    // (an image has fewer than 2^31 tiles: the host tiles larger ones with the other order)
    across = (int)((o0 + TX - 1) / TX);
    down = (int)((o1_ + TY - 1) / TY);
    const long long per_image = (long long)across * down;
    const long long t = blockIdx.x, g = gridDim.x;
    image = t / per_image;
    const int in_image = (int)(t - image * per_image);
    ty = in_image / across;
    tx = in_image - ty * across;
    step_images = g / per_image;
    const int step_in = (int)(g - step_images * per_image);
    step_rows = step_in / across;
    step_cols = step_in - step_rows * across;
    x0 = (idx_t)tx * TX;
    y0 = (idx_t)ty * TY;
#else
    (void)o0;
    image = blockIdx.z;
    x0 = (idx_t)blockIdx.x * TX;
    y0 = (idx_t)blockIdx.y * TY;
    if (y0 >= o1) image = images;
#endif
  }

  __device__ __forceinline__ bool valid() const { return image < images; }

  __device__ __forceinline__ void advance() {
#if TILE_WALK
    tx += step_cols;
    if (tx >= across) {
      tx -= across;
      ty++;
    }
    ty += step_rows;
    if (ty >= down) {
      ty -= down;
      image++;
    }
    image += step_images;
    x0 = (idx_t)tx * TX;
    y0 = (idx_t)ty * TY;
#else
    y0 += (idx_t)gridDim.y * TY;
    if (y0 >= o1) {
      y0 = (idx_t)blockIdx.y * TY;
      image += gridDim.z;
    }
#endif
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
