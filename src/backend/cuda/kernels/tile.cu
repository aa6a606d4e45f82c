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
// Addresses and loads written out in PTX. Left to itself, the compiler folds a pointer's
// offsets into one 64-bit index and spends four or five instructions on each address; a wide
// multiply-add from a pointer is one. The loads read through the read-only path, as loads
// from `const __restrict__` pointers do.
template <typename T>
__device__ __forceinline__ const T *offset_by(const T *p, int k) {
  const T *a;
  asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(a) : "r"(k), "r"((int)sizeof(T)), "l"(p));
  return a;
}
template <int S> struct ReadOnly;
template <> struct ReadOnly<1> {
  typedef unsigned char bits;
  static __device__ __forceinline__ bits get(const void *p) {
    unsigned short v;
    asm volatile("ld.global.nc.u8 %0, [%1];" : "=h"(v) : "l"(p));
    return (bits)v;
  }
};
template <> struct ReadOnly<2> {
  typedef unsigned short bits;
  static __device__ __forceinline__ bits get(const void *p) {
    bits v;
    asm volatile("ld.global.nc.b16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
  }
};
template <> struct ReadOnly<4> {
  typedef unsigned bits;
  static __device__ __forceinline__ bits get(const void *p) {
    bits v;
    asm volatile("ld.global.nc.b32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
  }
};
template <> struct ReadOnly<8> {
  typedef unsigned long long bits;
  static __device__ __forceinline__ bits get(const void *p) {
    bits v;
    asm volatile("ld.global.nc.b64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
  }
};
template <> struct ReadOnly<16> {
  struct bits { unsigned long long a, b; };
  static __device__ __forceinline__ bits get(const void *p) {
    bits v;
    asm volatile("ld.global.nc.v2.b64 {%0, %1}, [%2];" : "=l"(v.a), "=l"(v.b) : "l"(p));
    return v;
  }
};
// Element `k` of the global read-only array `p`.
template <typename T>
__device__ __forceinline__ T read_only(const T *p, int k) {
  const typename ReadOnly<sizeof(T)>::bits b = ReadOnly<sizeof(T)>::get(offset_by(p, k));
  T v;
  memcpy(&v, &b, sizeof(T));
  return v;
}

template <int TX, int TY, int THREADS, typename T>
struct TileRegs {
  static constexpr int N = TX * TY, PER = (N + THREADS - 1) / THREADS;
  T held[PER];

  template <typename F>
  __device__ __forceinline__ void fetch(int thread, F f) {
#pragma unroll
    for (int m = 0; m < PER; m++) {
      const int k = thread + THREADS * m;
      // (every thread has an element in each round but perhaps the last)
      if (m < PER - 1 || k < N) held[m] = f(k % TX, k / TX);
    }
  }

  // The tile whose element (i, j) is element (sx0 + i, sy0 + j) of the image at `img` (n1 rows
  // of n0 elements): where the whole tile lies inside the image (every tile but those along its
  // edges) read straight from memory, each thread moving from one of its elements to the next
  // by additions; else element by element through `edge(i, j)`, which knows what lies outside.
  // (Each element found from its number, bounds checked and addressed on its own costs some
  // twenty instructions: as many as a thread's whole share of a 5 x 5 convolution's arithmetic.)
  template <typename I, typename F>
  __device__ __forceinline__ void fetch_image(int thread, const T *img, I n0, I n1, I sx0, I sy0,
                                              F edge) {
    // (offsets within the tile's rectangle in 32 bits: images with rows of more than 2^31 / TY
    // elements take the element by element way)
    if (sx0 >= 0 && sy0 >= 0 && sx0 + TX <= n0 && sy0 + TY <= n1 && n0 <= (I)(0x7fffffff / TY)) {
      constexpr int DI = THREADS % TX, DJ = THREADS / TX;
      // (the thread number passes through an opaque move so that the compiler works each
      // element's place out again for every tile: kept from one tile to the next, those
      // places take a register each, which costs the filters resident blocks)
      int t;
      asm volatile("mov.b32 %0, %1;" : "=r"(t) : "r"(thread));
      int i = t % TX;
      const T *p = img + (sx0 + sy0 * n0);
      int at = i + (t / TX) * (int)n0;
      const int step = DI + DJ * (int)n0, wrap = (int)n0 - TX;
#pragma unroll
      for (int m = 0; m < PER; m++) {
        // (every thread has an element in each round but perhaps the last)
        if (m < PER - 1 || thread + THREADS * m < N) held[m] = read_only(p, at);
        i += DI;
        at += step;
        if (i >= TX) {
          i -= TX;
          at += wrap;
        }
      }
    } else {
      fetch(thread, edge);
    }
  }

  __device__ __forceinline__ void store(T *tile, int thread) const {
#pragma unroll
    for (int m = 0; m < PER; m++) {
      const int k = thread + THREADS * m;
      if (m < PER - 1 || k < N) tile[k] = held[m];
    }
  }
};
