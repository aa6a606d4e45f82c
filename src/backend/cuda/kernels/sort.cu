// Stable LSD radix sort of the sortable element types, 8 bits per pass, and the compaction
// that the set functions run on sorted data.
//
// `cuda/sort.rs` puts a header before this text that defines, for one element type:
//   EF_ELEM_BYTES   1, 2, 4 or 8
//   EF_KIND         0 unsigned (and bool, stored as 0 or 1), 1 signed, 2 floating point
//   ef_bits         the unsigned integer type of the element's size (elements are moved as bits)
//   ef_word         the sort word: unsigned int, or unsigned long long for 8-byte elements
//   EF_ITEMS        keys per thread in a tile
//   EF_VALS         1 when a payload (a u32 source position) travels with the keys
//
// A pass is three kernels on the same stream:
//   ef_sort_count    each block counts the digit of the keys in its range of tiles, written
//                    digit-major: counts[digit * blocks + block];
//   ef_sort_scan     one block turns the counts into exclusive prefix sums, in place: then
//                    counts[d * blocks + b] is where block b writes its first key of digit d
//                    (all smaller digits first, then digit d of earlier blocks: stable);
//   ef_sort_scatter  each block walks its tiles in order; a tile's keys are ranked by digit in
//                    shared memory (stable: warp match for equal digits, then per-warp counts),
//                    exchanged there into digit order, and written out so that consecutive
//                    threads write consecutive addresses of each digit's run.
// The first pass reads the elements and turns them into order-preserving words (and the
// payload is the element's position); the last pass turns words back into elements. Batched
// sorts (many segments of `seg_len` consecutive elements) run the key passes first and then
// passes on the segment number `position / seg_len` of the payload: stable, so each segment
// ends up sorted and in place.

#define EF_BLOCK 256
#define EF_WARPS (EF_BLOCK / 32)
#define EF_RADIX 256
#define EF_TILE (EF_BLOCK * EF_ITEMS)
#define EF_FULL 0xffffffffu

// SortArgs::flags
#define EF_FIRST 1        // keys come from `in` (elements); the payload is the position
#define EF_LAST 2         // keys go to `out` (elements), payloads to `idx_out`
#define EF_DESC 4         // descending: words are inverted (NaN excepted) on the way in and out
#define EF_SEG_PASS 8     // the digit is a byte of the payload's segment number
#define EF_WRITE_VALS 16  // the last pass writes payloads
#define EF_ALONG 32       // ... as positions within their segment (`p % seg_len`)

#if EF_ELEM_BYTES == 8
#define EF_SIGN_BITS 0x8000000000000000ull
#define EF_ABS_BITS 0x7fffffffffffffffull
#define EF_INF_BITS 0x7ff0000000000000ull
#define EF_CANON_NAN 0x7ff8000000000000ull
#elif EF_ELEM_BYTES == 4
#define EF_SIGN_BITS 0x80000000u
#define EF_ABS_BITS 0x7fffffffu
#define EF_INF_BITS 0x7f800000u
#define EF_CANON_NAN 0x7fc00000u
#elif EF_ELEM_BYTES == 2
#define EF_SIGN_BITS 0x8000u
#else
#define EF_SIGN_BITS 0x80u
#endif

// All ones in the element's width, as a word: the word of NaN, and what descending inverts.
#define EF_KEY_MASK ((ef_word)(ef_bits)~(ef_bits)0)

struct SortArgs {
  const void* in;          // EF_FIRST: the elements, dense
  const ef_word* keys_in;  // other passes: the words of the previous pass
  const unsigned* vals_in; // other passes (EF_VALS): the payloads of the previous pass
  ef_word* keys_out;       // passes but the last: words
  unsigned* vals_out;      // passes but the last (EF_VALS): payloads
  void* out;               // EF_LAST: the sorted elements
  unsigned* idx_out;       // EF_LAST with EF_WRITE_VALS: payloads
  unsigned* counts;        // EF_RADIX * blocks
  long long n;
  long long tiles;
  long long tiles_per_block;
  unsigned seg_len;
  int shift;               // the digit's lowest bit (in the word, or in the segment number)
  int flags;
  int blocks;
};

__device__ __forceinline__ bool ef_is_nan(ef_bits b) {
#if EF_KIND == 2
  return (b & EF_ABS_BITS) > EF_INF_BITS;
#else
  return false;
#endif
}

// The word whose unsigned order is the element order: integers with the sign bit flipped,
// floats with the sign bit set (positive) or every bit flipped (negative), every NaN all ones.
__device__ __forceinline__ ef_word ef_to_word(ef_bits b, bool desc) {
#if EF_KIND == 2
  if (ef_is_nan(b)) return EF_KEY_MASK;  // last in both directions
  ef_bits k = (b & EF_SIGN_BITS) ? (ef_bits)~b : (ef_bits)(b | EF_SIGN_BITS);
#elif EF_KIND == 1
  ef_bits k = (ef_bits)(b ^ EF_SIGN_BITS);
#else
  ef_bits k = b;
#endif
  ef_word w = (ef_word)k;
  return desc ? (ef_word)(w ^ EF_KEY_MASK) : w;
}

// The inverse of ef_to_word; NaN comes back as the canonical quiet NaN.
__device__ __forceinline__ ef_bits ef_from_word(ef_word w, bool desc) {
#if EF_KIND == 2
  if (w == EF_KEY_MASK) return (ef_bits)EF_CANON_NAN;
#endif
  if (desc) w ^= EF_KEY_MASK;
  ef_bits k = (ef_bits)w;
#if EF_KIND == 2
  return (k & EF_SIGN_BITS) ? (ef_bits)(k ^ EF_SIGN_BITS) : (ef_bits)~k;
#elif EF_KIND == 1
  return (ef_bits)(k ^ EF_SIGN_BITS);
#else
  return k;
#endif
}

// Element `i`'s word and payload as this pass reads them.
__device__ __forceinline__ void ef_load(const SortArgs& a, long long i, ef_word* key,
                                        unsigned* val) {
  if (a.flags & EF_FIRST) {
    *key = ef_to_word(((const ef_bits*)a.in)[i], (a.flags & EF_DESC) != 0);
    *val = (unsigned)i;
  } else {
    *key = a.keys_in[i];
#if EF_VALS
    *val = a.vals_in[i];
#else
    *val = 0u;
#endif
  }
}

__device__ __forceinline__ unsigned ef_digit(const SortArgs& a, ef_word key, unsigned val) {
#if EF_VALS
  if (a.flags & EF_SEG_PASS) return ((val / a.seg_len) >> a.shift) & 0xffu;
#endif
  return (unsigned)(key >> a.shift) & 0xffu;
}

// The range of tiles block `b` sorts, as element positions [begin, end).
__device__ __forceinline__ void ef_block_range(const SortArgs& a, long long b, long long* begin,
                                               long long* end) {
  long long first = b * a.tiles_per_block;
  long long last = min(first + a.tiles_per_block, a.tiles);
  *begin = first * EF_TILE;
  *end = min(last * EF_TILE, a.n);
}

extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_sort_count(SortArgs a) {
  __shared__ unsigned hist[EF_WARPS][EF_RADIX];
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  for (int d = lane; d < EF_RADIX; d += 32) hist[warp][d] = 0u;
  __syncwarp();
  long long begin, end;
  ef_block_range(a, blockIdx.x, &begin, &end);
  // every lane of a warp takes part in each step (the match needs the whole warp); lanes
  // past the end carry the digit EF_RADIX, which is never counted
  for (long long base = begin; base < end; base += EF_BLOCK) {
    long long i = base + t;
    unsigned d = EF_RADIX;
    if (i < end) {
      ef_word k;
      unsigned v;
      ef_load(a, i, &k, &v);
      d = ef_digit(a, k, v);
    }
    // one shared-memory add per distinct digit of the warp: equal digits (common in the high
    // bytes) would otherwise serialise on one counter
    unsigned peers = __match_any_sync(EF_FULL, d);
    if (d < EF_RADIX && lane == __ffs(peers) - 1) atomicAdd(&hist[warp][d], __popc(peers));
  }
  __syncthreads();
  unsigned sum = 0;
  for (int w = 0; w < EF_WARPS; w++) sum += hist[w][t];
  a.counts[(long long)t * a.blocks + blockIdx.x] = sum;
}

// Exclusive prefix sums of `len` counts, in place, by one block of 1024 threads.
extern "C" __global__ void __launch_bounds__(1024) ef_sort_scan(unsigned* c, long long len) {
  __shared__ unsigned warp_sums[32];
  __shared__ unsigned block_sum;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  unsigned carry = 0;
  for (long long base = 0; base < len; base += 4 * 1024) {
    long long i0 = base + 4 * (long long)t;
    unsigned v[4];
    for (int j = 0; j < 4; j++) v[j] = (i0 + j < len) ? c[i0 + j] : 0u;
    unsigned mine = v[0] + v[1] + v[2] + v[3];
    unsigned incl = mine;
    for (int o = 1; o < 32; o <<= 1) {
      unsigned y = __shfl_up_sync(EF_FULL, incl, o);
      if (lane >= o) incl += y;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      unsigned s = warp_sums[lane];
      unsigned w_incl = s;
      for (int o = 1; o < 32; o <<= 1) {
        unsigned y = __shfl_up_sync(EF_FULL, w_incl, o);
        if (lane >= o) w_incl += y;
      }
      warp_sums[lane] = w_incl - s;
      if (lane == 31) block_sum = w_incl;
    }
    __syncthreads();
    unsigned run = carry + warp_sums[warp] + incl - mine;
    for (int j = 0; j < 4; j++) {
      if (i0 + j < len) c[i0 + j] = run;
      run += v[j];
    }
    carry += block_sum;
    __syncthreads();  // warp_sums and block_sum are rewritten by the next round
  }
}

extern "C" __global__ void __launch_bounds__(EF_BLOCK, 3) ef_sort_scatter(SortArgs a) {
  __shared__ ef_word s_keys[EF_TILE];       // the tile in digit order (payloads reuse it)
  __shared__ unsigned char s_digit[EF_TILE]; // the digit of each of those
  __shared__ unsigned s_whist[EF_WARPS][EF_RADIX];
  __shared__ unsigned s_start[EF_RADIX];    // where each digit starts in the tile
  __shared__ unsigned s_base[EF_RADIX];     // where the block's next key of each digit goes
  __shared__ unsigned s_wsum[EF_WARPS];
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const unsigned below = (1u << lane) - 1u;  // the lanes before this one
  const bool desc = (a.flags & EF_DESC) != 0;
  const bool last = (a.flags & EF_LAST) != 0;
  s_base[t] = a.counts[(long long)t * a.blocks + blockIdx.x];
  const long long first_tile = (long long)blockIdx.x * a.tiles_per_block;
  const long long end_tile = min(first_tile + a.tiles_per_block, a.tiles);
  for (long long tile = first_tile; tile < end_tile; tile++) {
    const long long tile_base = tile * EF_TILE;
    const int tile_n = (int)min((long long)EF_TILE, a.n - tile_base);
    ef_word key[EF_ITEMS];
    unsigned val[EF_ITEMS];
    unsigned dig[EF_ITEMS];
    unsigned pos[EF_ITEMS];
    // warp-striped: item i of lane l of warp w is element w * 32 * EF_ITEMS + i * 32 + l of
    // the tile, so (warp, item, lane) order is tile order and each load is coalesced
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      const int e = warp * 32 * EF_ITEMS + i * 32 + lane;
      if (e < tile_n) {
        ef_load(a, tile_base + e, &key[i], &val[i]);
        dig[i] = ef_digit(a, key[i], val[i]);
      } else {
        key[i] = 0;
        val[i] = 0u;
        dig[i] = EF_RADIX;  // past the end: never counted, never written
      }
    }
    for (int d = lane; d < EF_RADIX; d += 32) s_whist[warp][d] = 0u;
    __syncwarp();
    // rank within the warp: keys of equal digit before this one in (item, lane) order
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      const unsigned peers = __match_any_sync(EF_FULL, dig[i]);
      const int leader = __ffs(peers) - 1;
      unsigned before = 0u;
      if (lane == leader && dig[i] < EF_RADIX) {
        before = s_whist[warp][dig[i]];
        s_whist[warp][dig[i]] = before + __popc(peers);
      }
      before = __shfl_sync(EF_FULL, before, leader);
      pos[i] = before + __popc(peers & below);
      __syncwarp();  // the next item's leader reads what this one's wrote
    }
    __syncthreads();
    // thread t owns digit t: the warps' counts become offsets within the digit
    unsigned total = 0u;
    for (int w = 0; w < EF_WARPS; w++) {
      const unsigned c = s_whist[w][t];
      s_whist[w][t] = total;
      total += c;
    }
    // exclusive scan of the digit totals over the block
    unsigned incl = total;
    for (int o = 1; o < 32; o <<= 1) {
      const unsigned y = __shfl_up_sync(EF_FULL, incl, o);
      if (lane >= o) incl += y;
    }
    if (lane == 31) s_wsum[warp] = incl;
    __syncthreads();
    unsigned warp_off = 0u;
    for (int w = 0; w < warp; w++) warp_off += s_wsum[w];
    s_start[t] = warp_off + incl - total;
    __syncthreads();
    // into digit order in shared memory
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      if (dig[i] < EF_RADIX) {
        pos[i] += s_start[dig[i]] + s_whist[warp][dig[i]];
        s_keys[pos[i]] = key[i];
        s_digit[pos[i]] = (unsigned char)dig[i];
      }
    }
    __syncthreads();
    // out in digit order: consecutive threads write consecutive positions of a digit's run
    for (int j = t; j < tile_n; j += EF_BLOCK) {
      const unsigned d = s_digit[j];
      const unsigned g = s_base[d] + (unsigned)j - s_start[d];
      const ef_word k = s_keys[j];
      if (last)
        ((ef_bits*)a.out)[g] = ef_from_word(k, desc);
      else
        a.keys_out[g] = k;
    }
#if EF_VALS
    if (!last || (a.flags & EF_WRITE_VALS)) {
      __syncthreads();  // the keys are out before the payloads take their place
      unsigned* s_vals = (unsigned*)s_keys;
#pragma unroll
      for (int i = 0; i < EF_ITEMS; i++)
        if (dig[i] < EF_RADIX) s_vals[pos[i]] = val[i];
      __syncthreads();
      for (int j = t; j < tile_n; j += EF_BLOCK) {
        const unsigned d = s_digit[j];
        const unsigned g = s_base[d] + (unsigned)j - s_start[d];
        const unsigned v = s_vals[j];
        if (!last)
          a.vals_out[g] = v;
        else
          a.idx_out[g] = (a.flags & EF_ALONG) ? v % a.seg_len : v;
      }
    }
#endif
    __syncthreads();  // the tile's shared data is read before the next tile rewrites it
    s_base[t] += total;
  }
}

// ---- the sort_by_key gather --------------------------------------------------------------

struct ef_16 { unsigned long long lo, hi; };

// dst[i] = src[idx[i]] for elements of `size` bytes (1, 2, 4, 8 or 16).
extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_sort_gather(
    const void* __restrict__ src, void* __restrict__ dst, const unsigned* __restrict__ idx,
    long long n, int size) {
  for (long long i = blockIdx.x * (long long)EF_BLOCK + threadIdx.x; i < n;
       i += (long long)gridDim.x * EF_BLOCK) {
    const unsigned s = idx[i];
    switch (size) {
      case 1: ((unsigned char*)dst)[i] = ((const unsigned char*)src)[s]; break;
      case 2: ((unsigned short*)dst)[i] = ((const unsigned short*)src)[s]; break;
      case 4: ((unsigned*)dst)[i] = ((const unsigned*)src)[s]; break;
      case 8: ((unsigned long long*)dst)[i] = ((const unsigned long long*)src)[s]; break;
      default: ((ef_16*)dst)[i] = ((const ef_16*)src)[s]; break;
    }
  }
}

// ---- compaction of sorted elements (set functions) ---------------------------------------

#define EF_UNIQUE_ITEMS 16
#define EF_UNIQUE_TILE (EF_BLOCK * EF_UNIQUE_ITEMS)

// The value sets compare: -0.0 is 0.0 and every NaN the canonical one.
__device__ __forceinline__ ef_bits ef_canonical(ef_bits b) {
#if EF_KIND == 2
  if ((b & EF_ABS_BITS) == 0) return 0;
  if (ef_is_nan(b)) return (ef_bits)EF_CANON_NAN;
#endif
  return b;
}

// Whether sorted element `i` is kept: mode 0 keeps the first of each run of equal values
// (unique), mode 1 the second (in the sorted union of two unique sets: the intersection).
__device__ __forceinline__ bool ef_keep(const ef_bits* x, long long i, int mode) {
  const ef_bits c = ef_canonical(x[i]);
  if (mode == 0) return i == 0 || ef_canonical(x[i - 1]) != c;
  return i > 0 && ef_canonical(x[i - 1]) == c;
}

// The sum of `v` over the block, in every thread.
__device__ __forceinline__ unsigned ef_block_sum(unsigned v, unsigned* s_wsum) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(EF_FULL, v, o);
  if (lane == 0) s_wsum[warp] = v;
  __syncthreads();
  unsigned s = 0u;
  for (int w = 0; w < EF_WARPS; w++) s += s_wsum[w];
  __syncthreads();
  return s;
}

// Block b counts the kept elements of its tile into counts[b]; block 0 also zeroes
// counts[gridDim.x], so that the scan of gridDim.x + 1 counts ends with the total.
extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_unique_count(
    const void* in, unsigned* counts, long long n, int mode) {
  __shared__ unsigned s_wsum[EF_WARPS];
  const ef_bits* x = (const ef_bits*)in;
  const long long begin = (long long)blockIdx.x * EF_UNIQUE_TILE;
  const long long end = min(begin + EF_UNIQUE_TILE, n);
  unsigned mine = 0u;
  for (long long i = begin + threadIdx.x; i < end; i += EF_BLOCK) mine += ef_keep(x, i, mode);
  const unsigned total = ef_block_sum(mine, s_wsum);
  if (threadIdx.x == 0) {
    counts[blockIdx.x] = total;
    if (blockIdx.x == 0) counts[gridDim.x] = 0u;
  }
}

// Block b writes the kept elements of its tile, in order, from out[offsets[b]] on.
extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_unique_write(
    const void* in, const unsigned* offsets, void* out, long long n, int mode) {
  __shared__ unsigned s_wsum[EF_WARPS];
  const ef_bits* x = (const ef_bits*)in;
  ef_bits* y = (ef_bits*)out;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  // thread t takes EF_UNIQUE_ITEMS consecutive elements, so thread order is element order
  const long long begin = (long long)blockIdx.x * EF_UNIQUE_TILE + (long long)t * EF_UNIQUE_ITEMS;
  unsigned keep = 0u;  // bit i: element begin + i is kept
  for (int i = 0; i < EF_UNIQUE_ITEMS; i++) {
    const long long e = begin + i;
    if (e < n && ef_keep(x, e, mode)) keep |= 1u << i;
  }
  const unsigned mine = __popc(keep);
  unsigned incl = mine;
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned v = __shfl_up_sync(EF_FULL, incl, o);
    if (lane >= o) incl += v;
  }
  if (lane == 31) s_wsum[warp] = incl;
  __syncthreads();
  unsigned warp_off = 0u;
  for (int w = 0; w < warp; w++) warp_off += s_wsum[w];
  unsigned at = offsets[blockIdx.x] + warp_off + incl - mine;
  for (int i = 0; i < EF_UNIQUE_ITEMS; i++) {
    if (keep & (1u << i)) y[at++] = ef_canonical(x[begin + i]);
  }
}
