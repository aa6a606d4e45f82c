// Copies a block of elements between two arrays, either side addressed through index arrays:
// the gather of index_gen and lookup, and the scatter of assign_gen. Element c of the block is
// read from the source position its side selects and written to the destination position its
// side selects. Along each dimension a side selects `start + c * step`, or `idx[c]` folded into
// the dimension (negative indices reflect from the start, indices past the end reflect from
// the end), so no index value can address memory outside the array.
//
// The layout of `Side` and `Params` matches `SideParams` and `CopyParams` in index_copy.rs:
// 64-bit fields only, so neither side has padding.

struct Side {
  long long offset;
  long long stride[4];
  long long start[4];
  long long step[4];
  long long len[4];
  const long long* idx[4];  // null along affine dimensions
};

struct Params {
  long long n;
  long long block[4];
  Side src;
  Side dst;
};

__device__ __forceinline__ long long ef_fold(long long i, long long len) {
  if (i < 0) return (-(i + 1)) % len;
  if (i >= len) return len - 1 - i % len;
  return i;
}

__device__ __forceinline__ long long ef_address(const Side& s, const long long (&c)[4]) {
  long long a = s.offset;
#pragma unroll
  for (int k = 0; k < 4; k++) {
    const long long pos = s.idx[k] ? ef_fold(s.idx[k][c[k]], s.len[k]) : s.start[k] + c[k] * s.step[k];
    a += pos * s.stride[k];
  }
  return a;
}

// One 16-byte element (c64) moves with a single aligned load and store, so a repeated index
// never leaves half of one value and half of another.
struct __align__(16) ef_e16 { unsigned long long a, b; };

template <typename E>
__device__ __forceinline__ void ef_copy_block(const E* __restrict__ src, E* __restrict__ dst, const Params& p) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.n;
       i += (long long)gridDim.x * blockDim.x) {
    long long c[4];
    long long r = i;
    c[0] = r % p.block[0]; r /= p.block[0];
    c[1] = r % p.block[1]; r /= p.block[1];
    c[2] = r % p.block[2];
    c[3] = r / p.block[2];
    dst[ef_address(p.dst, c)] = src[ef_address(p.src, c)];
  }
}

extern "C" __global__ void ef_index_copy_1(const unsigned char* src, unsigned char* dst, const Params p) { ef_copy_block(src, dst, p); }
extern "C" __global__ void ef_index_copy_2(const unsigned short* src, unsigned short* dst, const Params p) { ef_copy_block(src, dst, p); }
extern "C" __global__ void ef_index_copy_4(const unsigned int* src, unsigned int* dst, const Params p) { ef_copy_block(src, dst, p); }
extern "C" __global__ void ef_index_copy_8(const unsigned long long* src, unsigned long long* dst, const Params p) { ef_copy_block(src, dst, p); }
extern "C" __global__ void ef_index_copy_16(const ef_e16* src, ef_e16* dst, const Params p) { ef_copy_block(src, dst, p); }
