// Batched matrix transpose through shared-memory tiles: out[j + i*d1 + b*d0*d1] = in(i, j, b).
//
// Why it is shaped this way:
// - Both global accesses are coalesced. A tile of TILE x TILE elements is read with consecutive
//   threads on consecutive elements of an input column (dimension 0, stride 1) and written with
//   consecutive threads on consecutive elements of an output column; the transposition itself
//   happens in shared memory.
// - The tile's rows are padded by one element, so a warp reading a tile column touches 32
//   different banks (row stride TILE + 1 words is 1 mod 32).
// - Each thread moves TILE * TILE / (32 * ROWS) elements, all loads issued before the first
//   store: with 256-thread blocks at full occupancy that keeps enough bytes in flight per
//   multiprocessor to run near the device's copy bandwidth.
// - Tiles are visited in a grid-stride loop over (tile along d0, tile along d1, batch), so any
//   shape and any batch count fits in a one-dimensional grid.
//
// The file is compiled at run time with these macros defined in front of it:
//   EF_T     the element's storage type (an unsigned type of the element's size, or ef_c32 /
//            ef_c64 when the conjugate is taken)
//   EF_CONJ  1 to negate imaginary parts (conjugate transpose of complex elements), else 0
//   EF_W     tile width in units of 32 elements (1: 32 x 32 tiles, 2: 64 x 64 tiles)
//   EF_ROWS  thread rows per block (blockDim = 32 x EF_ROWS)

struct __align__(8) ef_c32 { float re, im; };
struct __align__(16) ef_c64 { double re, im; };
struct __align__(16) ef_b16 { unsigned long long lo, hi; };

template <typename T> __device__ __forceinline__ T ef_conj(T v) { return v; }
template <> __device__ __forceinline__ ef_c32 ef_conj<ef_c32>(ef_c32 v) { v.im = -v.im; return v; }
template <> __device__ __forceinline__ ef_c64 ef_conj<ef_c64>(ef_c64 v) { v.im = -v.im; return v; }

template <typename T, bool CONJ, int W, int ROWS>
__device__ __forceinline__ void transpose_tiles(
    const T* __restrict__ in, T* __restrict__ out,
    long long d0, long long d1, long long d2,
    long long s1, long long s2, long long s3,
    long long tiles0, long long tiles1, long long ntiles)
{
    constexpr int TILE = 32 * W;
    __shared__ T tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long per_batch = tiles0 * tiles1;
    for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const long long b = t / per_batch;
        const long long r = t - b * per_batch;
        const long long tj = r / tiles0;
        const long long i0 = (r - tj * tiles0) * TILE, j0 = tj * TILE;
        const long long k = b % d2, l = b / d2;
        const T* src = in + k * s2 + l * s3 + i0 + j0 * s1;
        T* dst = out + b * d0 * d1 + j0 + i0 * d1;
        const int ni = (int)min((long long)TILE, d0 - i0), nj = (int)min((long long)TILE, d1 - j0);
        if (ni == TILE && nj == TILE) {
            // a full tile: no bounds checks, every load in flight before the barrier
#pragma unroll
            for (int m = 0; m < TILE; m += ROWS)
#pragma unroll
                for (int w = 0; w < W; w++)
                    tile[ty + m][tx + 32 * w] = src[tx + 32 * w + (ty + m) * s1];
            __syncthreads();
#pragma unroll
            for (int m = 0; m < TILE; m += ROWS)
#pragma unroll
                for (int w = 0; w < W; w++) {
                    const T v = tile[tx + 32 * w][ty + m];
                    dst[tx + 32 * w + (ty + m) * d1] = CONJ ? ef_conj(v) : v;
                }
        } else {
#pragma unroll
            for (int m = 0; m < TILE; m += ROWS)
#pragma unroll
                for (int w = 0; w < W; w++)
                    if (tx + 32 * w < ni && ty + m < nj)
                        tile[ty + m][tx + 32 * w] = src[tx + 32 * w + (ty + m) * s1];
            __syncthreads();
#pragma unroll
            for (int m = 0; m < TILE; m += ROWS)
#pragma unroll
                for (int w = 0; w < W; w++)
                    if (tx + 32 * w < nj && ty + m < ni) {
                        const T v = tile[tx + 32 * w][ty + m];
                        dst[tx + 32 * w + (ty + m) * d1] = CONJ ? ef_conj(v) : v;
                    }
        }
        __syncthreads();
    }
}

#ifdef EF_T
extern "C" __global__ void __launch_bounds__(32 * EF_ROWS) ef_transpose(
    const EF_T* __restrict__ in, EF_T* __restrict__ out,
    long long d0, long long d1, long long d2,
    long long s1, long long s2, long long s3,
    long long tiles0, long long tiles1, long long ntiles)
{
    transpose_tiles<EF_T, EF_CONJ != 0, EF_W, EF_ROWS>(in, out, d0, d1, d2, s1, s2, s3, tiles0, tiles1, ntiles);
}
#endif
