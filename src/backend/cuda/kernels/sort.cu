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
// Before the passes, on the same stream:
//   ef_sort_clear      zeroes the digit counts, the tile status words and the tile counters;
//   ef_sort_histogram  counts the digits of every key pass in one read of the elements;
//   ef_sort_starts     one block per pass turns its 256 counts into where each digit's first
//                      key goes (the digit counts of the segment passes follow from the
//                      segment length and need no reading).
// Then one kernel per pass, ef_sort_onesweep: each block takes the next tile (a counter
// hands tiles out in order), ranks its keys by digit in shared memory (stable: warp match for
// equal digits, then per-warp counts), publishes its per-digit counts, and finds how many keys
// of each digit the tiles before it hold by looking back at their published counts (decoupled
// look-back: it sums counts until it meets a tile that has published its running total). It
// then writes its keys in digit order, so that consecutive threads write consecutive
// addresses of each digit's run. Every pass reads and writes the keys once.
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
  const void* in;              // EF_FIRST: the elements, dense
  const ef_word* keys_in;      // other passes: the words of the previous pass
  const unsigned* vals_in;     // other passes (EF_VALS): the payloads of the previous pass
  ef_word* keys_out;           // passes but the last: words
  unsigned* vals_out;          // passes but the last (EF_VALS): payloads
  void* out;                   // EF_LAST: the sorted elements
  unsigned* idx_out;           // EF_LAST with EF_WRITE_VALS: payloads
  unsigned* counts;            // EF_ELEM_BYTES x EF_RADIX digit counts of the key passes
  unsigned* starts;            // passes x EF_RADIX: where each digit's first key goes
  unsigned long long* status;  // tiles x EF_RADIX tile status words (ef_sort_onesweep)
  unsigned* next_tile;         // one tile counter per pass
  long long n;
  long long tiles;
  unsigned seg_len;
  int shift;                   // the digit's lowest bit (in the word, or in the segment number)
  int flags;
  int pass;                    // this pass's number, from 0
  int passes;                  // key passes (EF_ELEM_BYTES) and segment passes
  int pad;
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

// The lanes of the warp whose digit equals this lane's: a digit is 0..255, or EF_RADIX for a
// lane with nothing to rank (which matches no lane). Eight ballots, one per bit of the digit,
// cost far less than the hardware's general match instruction.
template <bool FULL>
__device__ __forceinline__ unsigned ef_peers(unsigned d) {
  // in a full tile every lane has a digit
  unsigned peers = FULL ? EF_FULL : __ballot_sync(EF_FULL, d < EF_RADIX);
#pragma unroll
  for (int b = 0; b < 8; b++) {
    // the lanes that agree with this one on bit b: the ballot of the bit, inverted where
    // this lane's bit is clear (four instructions; plain C takes six)
    unsigned agree;
    asm("{\n\t.reg .pred p;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 p, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
        "@!p not.b32 %0, %0;\n\t}"
        : "=r"(agree)
        : "r"(d), "r"(1u << b));
    peers &= agree;
  }
  return peers;
}

// The exclusive prefix sum of `v` over the block's threads in thread order, and in `total`
// the sum of all. `s_wsum` is shared scratch of EF_WARPS words. Every thread takes part.
__device__ __forceinline__ unsigned ef_block_exclusive(unsigned v, unsigned* s_wsum,
                                                       unsigned* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned incl = v;
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned y = __shfl_up_sync(EF_FULL, incl, o);
    if (lane >= o) incl += y;
  }
  if (lane == 31) s_wsum[warp] = incl;
  __syncthreads();
  unsigned before = 0u, all = 0u;
  for (int w = 0; w < EF_WARPS; w++) {
    const unsigned s = s_wsum[w];
    if (w < warp) before += s;
    all += s;
  }
  __syncthreads();  // s_wsum may be reused once every thread has read it
  *total = all;
  return before + incl - v;
}

// Zeroes what the histogram and the passes accumulate into: the key passes' digit counts and
// the tile counters (one block; the histogram kernel clears the tile status words).
extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_sort_clear(SortArgs a) {
  for (int i = threadIdx.x; i < EF_ELEM_BYTES * EF_RADIX; i += EF_BLOCK) a.counts[i] = 0u;
  for (int i = threadIdx.x; i < a.passes; i += EF_BLOCK) a.next_tile[i] = 0u;
}

// Shared histograms of the histogram kernel: lanes l, l + PARTS, ... share one copy, so that
// equal digits in a warp (common in the high bytes) collide on one counter at most
// EF_ELEM_BYTES ways; the odd stride puts the copies' counters of one digit in different banks.
// (Lane-private 16-bit counters, which never collide, measured slower.)
#define EF_HIST_PARTS (32 / EF_ELEM_BYTES)
#define EF_HIST_STRIDE (EF_ELEM_BYTES * EF_RADIX + 1)

// Counts the digits of every key pass over a grid-strided share of the elements (as the first
// pass reads them) and adds them to a.counts[pass * EF_RADIX + digit]; also zeroes the tile
// status words.
extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_sort_histogram(SortArgs a) {
  __shared__ unsigned hist[EF_HIST_PARTS * EF_HIST_STRIDE];
  const int t = threadIdx.x;
  const long long stride = (long long)gridDim.x * EF_BLOCK;
  for (long long i = (long long)blockIdx.x * EF_BLOCK + t; i < a.tiles * EF_RADIX; i += stride)
    a.status[i] = 0ull;
  for (int i = t; i < EF_HIST_PARTS * EF_HIST_STRIDE; i += EF_BLOCK) hist[i] = 0u;
  __syncthreads();
  unsigned* mine = hist + (t % EF_HIST_PARTS) * EF_HIST_STRIDE;
  const bool desc = (a.flags & EF_DESC) != 0;
  const ef_bits* in = (const ef_bits*)a.in;
  for (long long base = (long long)blockIdx.x * EF_TILE; base < a.n;
       base += (long long)gridDim.x * EF_TILE) {
    // all loads first, so that a tile's worth is in flight at once
    ef_word key[EF_ITEMS];
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      const long long e = base + i * EF_BLOCK + t;
      key[i] = e < a.n ? ef_to_word(in[e], desc) : (ef_word)0;
    }
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      if (base + i * EF_BLOCK + t < a.n) {
#pragma unroll
        for (int p = 0; p < EF_ELEM_BYTES; p++)
          atomicAdd(&mine[p * EF_RADIX + ((unsigned)(key[i] >> (8 * p)) & 0xffu)], 1u);
      }
    }
  }
  __syncthreads();
  for (int i = t; i < EF_ELEM_BYTES * EF_RADIX; i += EF_BLOCK) {
    unsigned sum = 0u;
    for (int part = 0; part < EF_HIST_PARTS; part++) sum += hist[part * EF_HIST_STRIDE + i];
    if (sum) atomicAdd(&a.counts[i], sum);
  }
}

// Block p turns pass p's digit counts into a.starts[p * EF_RADIX + digit]: the number of keys
// with a smaller digit. A segment pass's counts need no reading: segment numbers 0..segments
// each label seg_len keys, so how many have byte j equal to d follows from the numbers.
extern "C" __global__ void __launch_bounds__(EF_BLOCK) ef_sort_starts(SortArgs a) {
  __shared__ unsigned s_wsum[EF_WARPS];
  const int p = blockIdx.x, d = threadIdx.x;
  unsigned c;
  if (p < EF_ELEM_BYTES) {
    c = a.counts[p * EF_RADIX + d];
  } else {
    const unsigned long long segments = (unsigned long long)a.n / a.seg_len;
    const int j = p - EF_ELEM_BYTES;
    const unsigned long long unit = 1ull << (8 * j), cycle = unit << 8;
    const unsigned long long rest = segments % cycle, low = (unsigned long long)d * unit;
    unsigned long long numbers = (segments / cycle) * unit;
    if (rest > low) numbers += min(rest - low, unit);
    c = (unsigned)(numbers * a.seg_len);
  }
  unsigned total;
  a.starts[p * EF_RADIX + d] = ef_block_exclusive(c, s_wsum, &total);
}

// Tile status words (one per tile and digit): the pass's tag (pass + 1) in bits 34 and up, a
// flag in bits 32-33, a count in bits 0-31. A word of another tag is not yet written for this
// pass. EF_AGGREGATE: the count is the tile's own keys of that digit; EF_PREFIX: it is the
// keys of that digit in this tile and every tile before it.
#define EF_AGGREGATE 1ull
#define EF_PREFIX 2ull

// Status words are written and read with relaxed device-scope accesses: each word is one
// self-contained value, and device scope keeps them in L2 without the cost of a volatile
// (system-scope) access.
__device__ __forceinline__ void ef_publish(unsigned long long* w, unsigned long long tag,
                                           unsigned long long flag, unsigned count) {
  const unsigned long long v = (tag << 34) | (flag << 32) | count;
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(w), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned long long ef_status(const unsigned long long* w) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(w) : "memory");
  return v;
}

// Look-back window: the status words of this many earlier tiles are read at once. Tiles that
// run together publish their counts before their running totals, so a look-back often walks
// over several counts before it meets a total; reading a few at a time shortens that walk,
// while wide windows cost more L2 traffic than they save (measured on an H100 at 2^26 keys:
// 1, 2, 4, 8 and 16 tiles gave 1.82, 1.68, 1.66, 1.69 and 1.76 ms).
#ifndef EF_LOOK_BACK
#define EF_LOOK_BACK 4
#endif

// The keys of digit `d` in the tiles before `tile`: summed from their status words, from the
// nearest back, until one holds a running total; waits where one is not written yet.
__device__ __forceinline__ unsigned ef_look_back(const unsigned long long* status, unsigned tile,
                                                 int d, unsigned long long tag) {
  unsigned before = 0u;
  long long j = (long long)tile - 1;  // the nearest tile not yet summed
  while (j >= 0) {
    unsigned long long s[EF_LOOK_BACK];
#pragma unroll
    for (int k = 0; k < EF_LOOK_BACK; k++)
      s[k] = j - k >= 0 ? ef_status(status + (j - k) * EF_RADIX + d)
                        : (tag << 34) | (EF_PREFIX << 32);  // before tile 0: a total of 0
    int k = 0;
    for (; k < EF_LOOK_BACK; k++) {
      if ((s[k] >> 34) != tag) break;  // not written yet: read again from here
      before += (unsigned)s[k];
      if ((s[k] >> 32) & EF_PREFIX) return before;
    }
    j -= k;
  }
  return before;
}

// One pass: block takes the next tile, ranks it, publishes its counts, looks back for the
// keys of each digit before it, and writes its keys to their places.
#ifndef EF_SWEEP_BLOCKS
#define EF_SWEEP_BLOCKS 3  // blocks per multiprocessor the register budget is cut for
#endif

// The shared memory of one pass's block.
struct ef_sweep_shared {
  ef_word keys[EF_TILE];          // the tile in digit order
#if EF_VALS
  unsigned vals[EF_TILE];         // their payloads
  unsigned char digit[EF_TILE];   // their digits (read back in segment passes only)
#endif
  unsigned whist[EF_WARPS][EF_RADIX];
  unsigned shift[EF_RADIX];       // output position minus tile position, per digit
  unsigned wsum[EF_WARPS];
  unsigned tile;
};

// Writes the tile, in digit order from shared memory, to its places: consecutive threads
// write consecutive positions of a digit's run. LAST: as elements (and positions), else as
// words and payloads for the next pass; SEG: the digit is the stored one, else the key's.
template <bool FULL, bool LAST, bool SEG>
__device__ __forceinline__ void ef_write_tile(const SortArgs& a, const ef_sweep_shared& sh,
                                              unsigned tile_n) {
  const bool desc = (a.flags & EF_DESC) != 0;
#pragma unroll
  for (int i = 0; i < EF_ITEMS; i++) {
    const unsigned j = threadIdx.x + i * EF_BLOCK;
    if (FULL || j < tile_n) {
      const ef_word k = sh.keys[j];
#if EF_VALS
      const unsigned d = SEG ? (unsigned)sh.digit[j] : (unsigned)(k >> a.shift) & 0xffu;
#else
      const unsigned d = (unsigned)(k >> a.shift) & 0xffu;
#endif
      const unsigned g = sh.shift[d] + j;
      if (LAST)
        ((ef_bits*)a.out)[g] = ef_from_word(k, desc);
      else
        a.keys_out[g] = k;
#if EF_VALS
      if (!LAST) {
        a.vals_out[g] = sh.vals[j];
      } else if (a.flags & EF_WRITE_VALS) {
        const unsigned v = sh.vals[j];
        a.idx_out[g] = (a.flags & EF_ALONG) ? v % a.seg_len : v;
      }
#endif
    }
  }
}

// One pass over one tile (FULL: EF_TILE keys, no bounds to check): load, rank by digit in
// shared memory, publish the tile's counts, look back for the keys of each digit before it,
// and write the keys to their places.
template <bool FULL>
__device__ __forceinline__ void ef_sweep_tile(const SortArgs& a, ef_sweep_shared& sh) {
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  const unsigned below = (1u << lane) - 1u;  // the lanes before this one
  const unsigned tile = sh.tile;
  const unsigned tile_base = tile * EF_TILE;  // positions fit 32 bits (n < 2^31)
  const unsigned tile_end = FULL ? tile_base + EF_TILE : (unsigned)a.n;
  const bool seg = (a.flags & EF_SEG_PASS) != 0;
  // warp-striped: item i of lane l of warp w is element w * 32 * EF_ITEMS + i * 32 + l of the
  // tile, so (warp, item, lane) order is tile order and each load is coalesced
  const unsigned first_e = tile_base + warp * 32 * EF_ITEMS + lane;
  ef_word key[EF_ITEMS];
  unsigned val[EF_ITEMS];
  unsigned rank[EF_ITEMS];  // the digit (bits 16 and up), then the rank within the warp
  if (a.flags & EF_FIRST) {
    const bool desc = (a.flags & EF_DESC) != 0;
    const ef_bits* in = (const ef_bits*)a.in;
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      const unsigned e = first_e + i * 32;
      key[i] = (FULL || e < tile_end) ? ef_to_word(in[e], desc) : (ef_word)0;
      val[i] = e;
    }
  } else {
#pragma unroll
    for (int i = 0; i < EF_ITEMS; i++) {
      const unsigned e = first_e + i * 32;
      const bool inside = FULL || e < tile_end;
      key[i] = inside ? a.keys_in[e] : (ef_word)0;
#if EF_VALS
      val[i] = inside ? a.vals_in[e] : 0u;
#else
      val[i] = 0u;
#endif
    }
  }
#pragma unroll
  for (int i = 0; i < EF_ITEMS; i++) {
    const unsigned d = seg ? ((val[i] / a.seg_len) >> a.shift) & 0xffu
                           : (unsigned)(key[i] >> a.shift) & 0xffu;
    // past the end: the digit EF_RADIX, never counted, never written
    rank[i] = (FULL || first_e + i * 32 < tile_end ? d : EF_RADIX) << 16;
  }
  // rank within the warp: keys of equal digit before this one in (item, lane) order
  unsigned* whist = sh.whist[warp];
#pragma unroll
  for (int i = 0; i < EF_ITEMS; i++) {
    const unsigned d = rank[i] >> 16;
    const unsigned peers = ef_peers<FULL>(d);
    const int leader = __ffs(peers) - 1;
    unsigned before = 0u;
    if (lane == leader && (FULL || d < EF_RADIX)) {
      before = whist[d];
      whist[d] = before + __popc(peers);
    }
    before = __shfl_sync(EF_FULL, before, leader);
    rank[i] |= before + __popc(peers & below);
    __syncwarp();  // the next item's leader reads what this one's wrote
  }
  __syncthreads();
  // thread t owns digit t: the warps' counts become offsets within the digit
  unsigned total = 0u;
  for (int w = 0; w < EF_WARPS; w++) {
    const unsigned c = sh.whist[w][t];
    sh.whist[w][t] = total;
    total += c;
  }
  // publish this tile's count of digit t as early as possible: later tiles wait for it
  unsigned long long* my_status = a.status + (unsigned long long)tile * EF_RADIX + t;
  const unsigned long long tag = (unsigned long long)(a.pass + 1);
  ef_publish(my_status, tag, tile == 0 ? EF_PREFIX : EF_AGGREGATE, total);
  unsigned tile_keys;
  const unsigned start = ef_block_exclusive(total, sh.wsum, &tile_keys);
  // each warp's offset within the digit becomes its offset within the tile
  for (int w = 0; w < EF_WARPS; w++) sh.whist[w][t] += start;
  __syncthreads();
  // into digit order in shared memory (this frees the keys' registers for the look-back)
#pragma unroll
  for (int i = 0; i < EF_ITEMS; i++) {
    const unsigned d = rank[i] >> 16;
    if (FULL || d < EF_RADIX) {
      const unsigned p = (rank[i] & 0xffffu) + whist[d];
      sh.keys[p] = key[i];
#if EF_VALS
      sh.vals[p] = val[i];
      if (seg) sh.digit[p] = (unsigned char)d;
#endif
    }
  }
  // the keys of digit t in the tiles before this one; the running total is published at once,
  // so that the look-back of later tiles stops here
  const unsigned before = ef_look_back(a.status, tile, t, tag);
  if (tile > 0) ef_publish(my_status, tag, EF_PREFIX, before + total);
  sh.shift[t] = a.starts[a.pass * EF_RADIX + t] + before - start;
  __syncthreads();
  const unsigned tile_n = tile_end - tile_base;
  if (a.flags & EF_LAST) {
#if EF_VALS
    if (seg) {
      ef_write_tile<FULL, true, true>(a, sh, tile_n);
      return;
    }
#endif
    ef_write_tile<FULL, true, false>(a, sh, tile_n);
  } else {
#if EF_VALS
    if (seg) {
      ef_write_tile<FULL, false, true>(a, sh, tile_n);
      return;
    }
#endif
    ef_write_tile<FULL, false, false>(a, sh, tile_n);
  }
}

// One pass: each block takes the next tile and sorts it into place (ef_sweep_tile).
extern "C" __global__ void __launch_bounds__(EF_BLOCK, EF_SWEEP_BLOCKS)
    ef_sort_onesweep(SortArgs a) {
  __shared__ ef_sweep_shared sh;
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31;
  // tiles are handed out in the order blocks start, so every tile this one waits for in its
  // look-back belongs to a block that is already running
  if (t == 0) sh.tile = atomicAdd(&a.next_tile[a.pass], 1u);
  for (int d = lane; d < EF_RADIX; d += 32) sh.whist[warp][d] = 0u;
  __syncthreads();
  if ((long long)(sh.tile + 1) * EF_TILE <= a.n)
    ef_sweep_tile<true>(a, sh);
  else
    ef_sweep_tile<false>(a, sh);
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
