// Scans along one dimension of a 4-D array, optionally restarted where a key changes.
//
// `cuda/scan.rs` puts a header before this text that defines, for one combination of input
// type, output type, key type and operation:
//   ef_in, ef_acc, ef_out, ef_key   the stored input, accumulator, stored output and key types
//   KEYED                           1 for scan_by_key
//   ef_load(ef_in) -> ef_acc        converts an input element
//   ef_store(ef_acc) -> ef_out      rounds an accumulator to the output
//   ef_empty()                      the start of a run: the operation's identity (NaN for
//                                   floating min/max, which ignore NaN)
//   ef_first()                      what an exclusive scan shows first in a run
//   ef_apply(a, b)                  a (earlier) combined with b (later); associative, not
//                                   necessarily commutative (complex min/max keep the earlier)
//   ef_shfl_up(v, d), ef_shfl_idx(v, l)   warp shuffles of an accumulator
//
// A line is the `len` elements one scan runs along. Lines are numbered by the other three
// dimensions in order; element j of line L is read at in_off(L) + j * in_st[dim] and written
// at out_off(L) + j * inner (the output is dense). Every element carries a flag that starts a
// run: j == 0, or (KEYED) a key different from the previous element's. Runs combine with the
// segmented rule (fa, a) . (fb, b) = (fa | fb, fb ? b : a . b), which is associative, so
// partial results can be grouped freely; the grouping depends on the shape only, so results
// are the same on every run.
//
// Kernels:
//   ef_scan_rows_warp      inner == 1, short lines: one warp per line, 32 elements per step.
//   ef_scan_tiles_*        inner == 1, long lines: three phases over tiles of TILE elements
//                          (reduce each tile, scan the tile totals of each line into carries,
//                          rescan each tile from its carry).
//   ef_scan_cols_*         inner > 1: one thread per line and block of rows, consecutive threads
//                          on consecutive lines (coalesced); the same three phases when lines
//                          are few and long enough to be cut into blocks.

#define EF_TPB 256
#define EF_ITEMS 8
#define EF_TILE (EF_TPB * EF_ITEMS)
#define EF_WARPS (EF_TPB / 32)
#define EF_FULL 0xffffffffu

struct ScanArgs {
  const void* in;
  const void* keys;
  void* out;
  void* part;               // per tile or block: its total
  void* carry;              // per tile or block: the combined value of the earlier ones
  unsigned char* part_flag; // per tile or block: whether a run starts inside it
  long long dims[4];
  long long in_st[4];
  long long key_st[4];
  long long lines;
  long long len;
  long long inner;          // the output's stride along a line
  long long blocks;         // tiles (rows kernels) or blocks of rows (cols kernels) per line
  long long block_len;      // rows per block (cols kernels)
  int dim;
  int inclusive;
};

// The offsets of element 0 of line `line` in the input, the keys and the output.
__device__ __forceinline__ void ef_line(const ScanArgs& a, long long line, long long* io,
                                        long long* ko, long long* oo) {
  long long i = line % a.inner, o = line / a.inner;
  long long ri = i, ro = o, x = 0, y = 0;
  for (int k = 0; k < 4; k++) {
    if (k == a.dim) continue;
    long long c;
    if (k < a.dim) {
      c = ri % a.dims[k];
      ri /= a.dims[k];
    } else {
      c = ro % a.dims[k];
      ro /= a.dims[k];
    }
    x += c * a.in_st[k];
    y += c * a.key_st[k];
  }
  *io = x;
  *ko = y;
  *oo = i + o * a.inner * a.len;
}

__device__ __forceinline__ ef_acc ef_value(const ScanArgs& a, long long io, long long j) {
  return ef_load(((const ef_in*)a.in)[io + j * a.in_st[a.dim]]);
}

// Whether element j of a line starts a run.
__device__ __forceinline__ int ef_starts(const ScanArgs& a, long long ko, long long j) {
  if (j == 0) return 1;
#if KEYED
  const ef_key* k = (const ef_key*)a.keys;
  long long s = a.key_st[a.dim];
  return k[ko + j * s] != k[ko + (j - 1) * s];
#else
  return 0;
#endif
}

// Inclusive segmented scan of (v, f) across the lanes of a warp, in lane order.
__device__ __forceinline__ void ef_warp_scan(ef_acc& v, int& f, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    ef_acc o = ef_shfl_up(v, d);
    int of = __shfl_up_sync(EF_FULL, f, d);
    if (lane >= d) {
      if (!f) v = ef_apply(o, v);
      f |= of;
    }
  }
}

// Inclusive segmented scan of (v, f) across the threads of a block, in thread order.
__device__ __forceinline__ void ef_block_scan(ef_acc& v, int& f, ef_acc* wv, int* wf) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  __syncthreads();  // an earlier call's readers of wv are done
  ef_warp_scan(v, f, lane);
  if (lane == 31) {
    wv[w] = v;
    wf[w] = f;
  }
  __syncthreads();
  if (w == 0) {
    ef_acc x = lane < EF_WARPS ? wv[lane] : ef_empty();
    int g = lane < EF_WARPS ? wf[lane] : 0;
    ef_warp_scan(x, g, lane);
    if (lane < EF_WARPS) {
      wv[lane] = x;
      wf[lane] = g;
    }
  }
  __syncthreads();
  if (w > 0) {
    if (!f) v = ef_apply(wv[w - 1], v);
    f |= wf[w - 1];
  }
}

// ---- inner == 1, short lines: a warp per line ----------------------------------------------

extern "C" __global__ void ef_scan_rows_warp(ScanArgs a) {
  const int lane = threadIdx.x & 31;
  long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  ef_out* out = (ef_out*)a.out;
  for (long long line = warp; line < a.lines; line += warps) {
    long long io, ko, oo;
    ef_line(a, line, &io, &ko, &oo);
    ef_acc carry = ef_empty();
    for (long long base = 0; base < a.len; base += 32) {
      long long j = base + lane;
      ef_acc v = ef_empty();
      int f = 0;
      if (j < a.len) {
        v = ef_value(a, io, j);
        f = ef_starts(a, ko, j);
      }
      int own = f;
      ef_warp_scan(v, f, lane);
      ef_acc full = f ? v : ef_apply(carry, v);
      ef_acc before = ef_shfl_up(full, 1);
      if (lane == 0) before = carry;
      if (j < a.len) out[oo + j] = ef_store(a.inclusive ? full : (own ? ef_first() : before));
      carry = ef_shfl_idx(full, 31);
    }
  }
}

// ---- inner == 1, long lines: tiles in three phases ----------------------------------------

// Loads tile `tile` of a line into shared memory, coalesced (element e by thread e % EF_TPB),
// with each element's run flag. Elements past the line are the identity, with no flag.
__device__ __forceinline__ void ef_load_tile(const ScanArgs& a, long long io, long long ko,
                                             long long tile, ef_acc* sv, unsigned char* sf) {
  long long base = tile * EF_TILE;
#pragma unroll
  for (int k = 0; k < EF_ITEMS; k++) {
    int e = k * EF_TPB + threadIdx.x;
    long long j = base + e;
    ef_acc v = ef_empty();
    unsigned char f = 0;
    if (j < a.len) {
      v = ef_value(a, io, j);
      f = (unsigned char)ef_starts(a, ko, j);
    }
    sv[e] = v;
    sf[e] = f;
  }
  __syncthreads();
}

// This thread's EF_ITEMS consecutive elements of the loaded tile, folded in order.
__device__ __forceinline__ void ef_fold_items(const ef_acc* sv, const unsigned char* sf,
                                              ef_acc& v, int& f) {
  v = ef_empty();
  f = 0;
#pragma unroll
  for (int k = 0; k < EF_ITEMS; k++) {
    int e = threadIdx.x * EF_ITEMS + k;
    if (sf[e]) {
      v = sv[e];
      f = 1;
    } else {
      v = ef_apply(v, sv[e]);
    }
  }
}

// Phase 1: the total of every tile but the last of each line.
extern "C" __global__ void __launch_bounds__(EF_TPB) ef_scan_tiles_reduce(ScanArgs a) {
  __shared__ ef_acc sv[EF_TILE];
  __shared__ unsigned char sf[EF_TILE];
  __shared__ ef_acc wv[EF_WARPS];
  __shared__ int wf[EF_WARPS];
  ef_acc* part = (ef_acc*)a.part;
  for (long long line = blockIdx.y; line < a.lines; line += gridDim.y) {
    long long io, ko, oo;
    ef_line(a, line, &io, &ko, &oo);
    for (long long tile = blockIdx.x; tile < a.blocks - 1; tile += gridDim.x) {
      __syncthreads();  // the previous tile's readers of sv are done
      ef_load_tile(a, io, ko, tile, sv, sf);
      ef_acc v;
      int f;
      ef_fold_items(sv, sf, v, f);
      ef_block_scan(v, f, wv, wf);
      if (threadIdx.x == EF_TPB - 1) {
        part[line * a.blocks + tile] = v;
        a.part_flag[line * a.blocks + tile] = (unsigned char)f;
      }
    }
  }
}

// Phase 2: for every line, carry[tile] = the combined totals of tiles 0..tile-1 (one block
// per line, EF_TPB tiles per step).
extern "C" __global__ void __launch_bounds__(EF_TPB) ef_scan_tiles_carry(ScanArgs a) {
  __shared__ ef_acc wv[EF_WARPS];
  __shared__ int wf[EF_WARPS];
  __shared__ ef_acc next_run;
  const ef_acc* part = (const ef_acc*)a.part;
  ef_acc* carry = (ef_acc*)a.carry;
  for (long long line = blockIdx.x; line < a.lines; line += gridDim.x) {
    ef_acc run = ef_empty();
    for (long long c = 0; c < a.blocks; c += EF_TPB) {
      long long t = c + threadIdx.x;
      ef_acc v = ef_empty();
      int f = 0;
      if (t < a.blocks - 1) {
        v = part[line * a.blocks + t];
        f = a.part_flag[line * a.blocks + t];
      }
      ef_block_scan(v, f, wv, wf);
      ef_acc full = f ? v : ef_apply(run, v);
      if (t + 1 < a.blocks) carry[line * a.blocks + t + 1] = full;
      if (t == 0) carry[line * a.blocks] = ef_empty();
      if (threadIdx.x == EF_TPB - 1) next_run = full;
      __syncthreads();
      run = next_run;
      __syncthreads();
    }
  }
}

// Phase 3: every tile scanned from its carry, results written.
extern "C" __global__ void __launch_bounds__(EF_TPB) ef_scan_tiles_apply(ScanArgs a) {
  __shared__ ef_acc sv[EF_TILE];
  __shared__ unsigned char sf[EF_TILE];
  __shared__ ef_acc wv[EF_WARPS];
  __shared__ int wf[EF_WARPS];
  __shared__ ef_acc tv[EF_TPB];
  __shared__ int tf[EF_TPB];
  const ef_acc* carry = (const ef_acc*)a.carry;
  ef_out* out = (ef_out*)a.out;
  for (long long line = blockIdx.y; line < a.lines; line += gridDim.y) {
    long long io, ko, oo;
    ef_line(a, line, &io, &ko, &oo);
    for (long long tile = blockIdx.x; tile < a.blocks; tile += gridDim.x) {
      __syncthreads();  // the previous tile's readers of sv, tv are done
      ef_load_tile(a, io, ko, tile, sv, sf);
      ef_acc v;
      int f;
      ef_fold_items(sv, sf, v, f);
      ef_block_scan(v, f, wv, wf);
      tv[threadIdx.x] = v;
      tf[threadIdx.x] = f;
      __syncthreads();
      // the combined value of everything before this thread's first element in its run
      ef_acc p = carry[line * a.blocks + tile];
      if (threadIdx.x > 0) {
        ef_acc q = tv[threadIdx.x - 1];
        p = tf[threadIdx.x - 1] ? q : ef_apply(p, q);
      }
#pragma unroll
      for (int k = 0; k < EF_ITEMS; k++) {
        int e = threadIdx.x * EF_ITEMS + k;
        ef_acc x = sv[e];
        ef_acc r;
        if (sf[e]) {
          r = a.inclusive ? x : ef_first();
          p = x;
        } else {
          ef_acc np = ef_apply(p, x);
          r = a.inclusive ? np : p;
          p = np;
        }
        sv[e] = r;
      }
      __syncthreads();
      long long base = tile * EF_TILE;
#pragma unroll
      for (int k = 0; k < EF_ITEMS; k++) {
        int e = k * EF_TPB + threadIdx.x;
        long long j = base + e;
        if (j < a.len) out[oo + j] = ef_store(sv[e]);
      }
    }
  }
}

// ---- inner > 1: a thread per line and block of rows ----------------------------------------

// Scans rows [j0, j1) of a line from `acc`; writes results when `write`. Returns the final
// value in `acc` and whether a run started in `seen`.
__device__ __forceinline__ void ef_col_walk(const ScanArgs& a, long long line, long long blk,
                                            bool write, ef_acc& acc, int& seen) {
  long long io, ko, oo;
  ef_line(a, line, &io, &ko, &oo);
  long long j0 = blk * a.block_len;
  long long j1 = j0 + a.block_len < a.len ? j0 + a.block_len : a.len;
  ef_out* out = (ef_out*)a.out;
  seen = 0;
#if KEYED
  const ef_key* keys = (const ef_key*)a.keys;
  long long ks = a.key_st[a.dim];
  ef_key prev = j0 > 0 ? keys[ko + (j0 - 1) * ks] : (ef_key)0;
#endif
  for (long long j = j0; j < j1; j++) {
    ef_acc x = ef_value(a, io, j);
    int reset = j == 0;
#if KEYED
    ef_key key = keys[ko + j * ks];
    if (j > 0 && key != prev) reset = 1;
    prev = key;
#endif
    seen |= reset;
    ef_acc after = reset ? x : ef_apply(acc, x);
    if (write) out[oo + j * a.inner] = ef_store(a.inclusive ? after : (reset ? ef_first() : acc));
    acc = after;
  }
}

// Phase 1: the total of every block but the last of each line; index blk * lines + line.
extern "C" __global__ void ef_scan_cols_reduce(ScanArgs a) {
  long long total = a.lines * (a.blocks - 1);
  ef_acc* part = (ef_acc*)a.part;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
       t += (long long)gridDim.x * blockDim.x) {
    long long line = t % a.lines, blk = t / a.lines;
    ef_acc acc = ef_empty();
    int seen;
    ef_col_walk(a, line, blk, false, acc, seen);
    part[t] = acc;
    a.part_flag[t] = (unsigned char)seen;
  }
}

// Phase 2: carry[blk * lines + line] = the combined totals of blocks 0..blk-1 of the line.
extern "C" __global__ void ef_scan_cols_carry(ScanArgs a) {
  const ef_acc* part = (const ef_acc*)a.part;
  ef_acc* carry = (ef_acc*)a.carry;
  for (long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x; line < a.lines;
       line += (long long)gridDim.x * blockDim.x) {
    ef_acc run = ef_empty();
    for (long long blk = 0; blk < a.blocks; blk++) {
      long long t = blk * a.lines + line;
      carry[t] = run;
      if (blk + 1 < a.blocks) run = a.part_flag[t] ? part[t] : ef_apply(run, part[t]);
    }
  }
}

// Phase 3 (or the only phase when a line is one block): every block scanned from its carry.
extern "C" __global__ void ef_scan_cols_apply(ScanArgs a) {
  long long total = a.lines * a.blocks;
  const ef_acc* carry = (const ef_acc*)a.carry;
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total;
       t += (long long)gridDim.x * blockDim.x) {
    long long line = t % a.lines, blk = t / a.lines;
    ef_acc acc = a.blocks > 1 ? carry[t] : ef_empty();
    int seen;
    ef_col_walk(a, line, blk, true, acc, seen);
  }
}

// ---- summed-area tables: running sums along dimensions 0 and 1 ----------------------------
//
// Compiled where the operation is ADD (EF_SUM). The sums of `a.lines` images of a.dims[0] = W
// by a.dims[1] = H elements (image i at i % dims[2] * in_st[2] + i / dims[2] * in_st[3]), the
// output dense. Thread t of block b owns the EF_SAT_EPT consecutive positions x0 = (b *
// EF_SAT_TPB + t) * EF_SAT_EPT of dimension 0, and a warp's 32 * EF_SAT_EPT positions are its
// chunk c (NC = a.inner - W chunks a row). Each image is cut into a.blocks strips of
// a.block_len consecutive rows (indices of dimension 1; the last may be shorter). For y in
// strip s the table is
//
//   T(x, y) = Q(x, s) + the sum over rows y' = y0(s) ..= y of R(x, y'),
//
// with R(x, y') the running sum of row y' up to x and Q(x, s) = T(x, y0(s) - 1). Both are
// put together from a warp's values and per-chunk totals, so no kernel waits at a block-wide
// barrier (which held the passes at a third of the bandwidth when a block spanned the row):
//   ef_sat_strips   per strip: each position's sum over the strip (q at a.part: a row of
//                   a.inner a strip, the W positions' sums and then their NC chunks' totals),
//                   and each row's chunk totals (t at a.carry: NC a row);
//   ef_sat_carries  replaces q(s, .) by the sum of q(0..s, .), what the strips above add, and
//                   t(y, c) by the sum of t(y, 0..c), what the chunks to the left add;
//   ef_sat_apply    per strip: Q from q (the chunks to the left, then the chunk's column
//                   carries scanned along the warp), then row by row R from t and a warp
//                   scan, summed down the strip and written.
// The image is read twice and written once; additions are grouped by the shape only, so
// results are the same on every run. Both passes over the image take its rows EF_SAT_ROWS at
// a time (the header sets it), all their loads in flight together.
#if EF_SUM
#ifndef EF_SAT_ROWS
#define EF_SAT_ROWS 4
#endif
#define EF_SAT_TPB 256
#define EF_SAT_EPT 4
#define EF_SAT_VEC (16 / (int)sizeof(ef_in) < EF_SAT_EPT ? 16 / (int)sizeof(ef_in) : EF_SAT_EPT)
#define EF_SAT_GROUPS 16
// Blocks a multiprocessor keeps resident: four (64 registers a thread) where the compiler then
// spills nothing, fewer for wide inputs and complex sums.
#define EF_SAT_MIN_BLOCKS (sizeof(ef_acc) > 8 ? 2 : sizeof(ef_in) > 4 ? 3 : 4)

// The running sum of `x` along the warp's lanes.
__device__ __forceinline__ ef_acc ef_sat_warp_inclusive(ef_acc x) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const ef_acc o = ef_shfl_up(x, d);
    if (lane >= d) x = ef_apply(o, x);
  }
  return x;
}

// The sum of `x` over the warp's lanes, the same bits in every lane (each step adds the same
// two values in every pair of lanes).
__device__ __forceinline__ ef_acc ef_sat_warp_total(ef_acc x) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) x = ef_apply(x, ef_shfl_xor(x, d));
  return x;
}

// The sum of `x` over the lanes before this one.
__device__ __forceinline__ ef_acc ef_sat_warp_exclusive(ef_acc x) {
  const ef_acc up = ef_shfl_up(ef_sat_warp_inclusive(x), 1);
  return (threadIdx.x & 31) > 0 ? up : ef_empty();
}

// The first element of column y of image `img` in the input.
__device__ __forceinline__ const ef_in* ef_sat_column(const ScanArgs& a, long long img,
                                                      long long y) {
  long long off = img % a.dims[2] * a.in_st[2] + img / a.dims[2] * a.in_st[3] + y * a.in_st[1];
  return (const ef_in*)a.in + off;
}

// One load of BYTES bytes (1, 2, 4, 8 or 16) from an address aligned to them, through the
// read-only cache.
template <int BYTES> struct EfSatLoad;
template <> struct EfSatLoad<1> { static __device__ __forceinline__ void get(const void* p, void* d) { unsigned char v = __ldg((const unsigned char*)p); memcpy(d, &v, 1); } };
template <> struct EfSatLoad<2> { static __device__ __forceinline__ void get(const void* p, void* d) { unsigned short v = __ldg((const unsigned short*)p); memcpy(d, &v, 2); } };
template <> struct EfSatLoad<4> { static __device__ __forceinline__ void get(const void* p, void* d) { unsigned int v = __ldg((const unsigned int*)p); memcpy(d, &v, 4); } };
template <> struct EfSatLoad<8> { static __device__ __forceinline__ void get(const void* p, void* d) { uint2 v = __ldg((const uint2*)p); memcpy(d, &v, 8); } };
template <> struct EfSatLoad<16> { static __device__ __forceinline__ void get(const void* p, void* d) { uint4 v = __ldg((const uint4*)p); memcpy(d, &v, 16); } };

// This thread's EF_SAT_EPT elements of a column, raw; positions past W are left as they are.
// With a.inclusive set (rows aligned to EF_SAT_VEC elements) whole groups of EF_SAT_VEC
// elements inside the row are read in one load.
__device__ __forceinline__ void ef_sat_fetch(const ScanArgs& a, const ef_in* col, long long x0,
                                             ef_in* r) {
  const long long W = a.dims[0];
#pragma unroll
  for (int e = 0; e < EF_SAT_EPT; e += EF_SAT_VEC) {
    if (a.inclusive && x0 + e + EF_SAT_VEC <= W) {
      EfSatLoad<EF_SAT_VEC * sizeof(ef_in)>::get(col + x0 + e, r + e);
    } else {
#pragma unroll
      for (int k = 0; k < EF_SAT_VEC; k++)
        if (x0 + e + k < W) r[e + k] = col[(x0 + e + k) * a.in_st[0]];
    }
  }
}

// Launched on (ceil(W / (EF_SAT_TPB * EF_SAT_EPT)), strips, images) blocks of EF_SAT_TPB.
extern "C" __global__ void __launch_bounds__(EF_SAT_TPB, EF_SAT_MIN_BLOCKS) ef_sat_strips(ScanArgs a) {
  const int lane = threadIdx.x & 31;
  const long long W = a.dims[0], H = a.dims[1], ld = a.inner, NC = ld - W;
  const long long x0 = ((long long)blockIdx.x * EF_SAT_TPB + threadIdx.x) * EF_SAT_EPT;
  const long long c = x0 / (32 * EF_SAT_EPT);
  ef_acc* q = (ef_acc*)a.part;
  ef_acc* t = (ef_acc*)a.carry;
  for (long long img = blockIdx.z; img < a.lines; img += gridDim.z) {
    for (long long s = blockIdx.y; s < a.blocks; s += gridDim.y) {
      const long long y0 = s * a.block_len;
      const long long y1 = y0 + a.block_len < H ? y0 + a.block_len : H;
      ef_acc sum[EF_SAT_EPT];
#pragma unroll
      for (int e = 0; e < EF_SAT_EPT; e++) sum[e] = ef_empty();
      for (long long y = y0; y < y1; y += EF_SAT_ROWS) {
        ef_in r[EF_SAT_ROWS][EF_SAT_EPT];
#pragma unroll
        for (int k = 0; k < EF_SAT_ROWS; k++)
          if (y + k < y1 && x0 < W) ef_sat_fetch(a, ef_sat_column(a, img, y + k), x0, r[k]);
#pragma unroll
        for (int k = 0; k < EF_SAT_ROWS; k++) {
          if (y + k >= y1) break;  // the same rows for every lane
          ef_acc row = ef_empty();
#pragma unroll
          for (int e = 0; e < EF_SAT_EPT; e++)
            if (x0 + e < W) {
              const ef_acc v = ef_load(r[k][e]);
              sum[e] = ef_apply(sum[e], v);
              row = ef_apply(row, v);
            }
          row = ef_sat_warp_total(row);
          if (lane == 0 && c < NC) t[(img * H + y + k) * NC + c] = row;
        }
      }
      ef_acc* qs = q + (img * a.blocks + s) * ld;
      ef_acc chunk = ef_empty();
#pragma unroll
      for (int e = 0; e < EF_SAT_EPT; e++)
        if (x0 + e < W) {
          qs[x0 + e] = sum[e];
          chunk = ef_apply(chunk, sum[e]);
        }
      chunk = ef_sat_warp_total(chunk);
      if (lane == 0 && c < NC) qs[W + c] = chunk;
    }
  }
}

// Launched on (32, EF_SAT_GROUPS) blocks, (ceil(a.inner / 32) + ceil(H / EF_SAT_GROUPS),
// images) of them. The first ceil(a.inner / 32) take 32 consecutive columns of q each, the
// strips of an image in EF_SAT_GROUPS groups (a group's total first, then each group from the
// ones before it); the others take EF_SAT_GROUPS rows of t each, a warp a row.
extern "C" __global__ void ef_sat_carries(ScanArgs a) {
  __shared__ ef_acc total[EF_SAT_GROUPS][32];
  const long long W = a.dims[0], H = a.dims[1], ld = a.inner, NC = ld - W, S = a.blocks;
  const long long q_blocks = (ld + 31) / 32;
  if (blockIdx.x >= q_blocks) {
    // the chunks to the left of each chunk of a row (no barrier on this side)
    const long long y = (blockIdx.x - q_blocks) * EF_SAT_GROUPS + threadIdx.y;
    if (y >= H) return;
    for (long long img = blockIdx.y; img < a.lines; img += gridDim.y) {
      ef_acc* row = (ef_acc*)a.carry + (img * H + y) * NC;
      ef_acc carry = ef_empty();
      for (long long c0 = 0; c0 < NC; c0 += 32) {
        const long long c = c0 + threadIdx.x;
        const ef_acc v = c < NC ? row[c] : ef_empty();
        const ef_acc before = ef_sat_warp_exclusive(v);
        if (c < NC) row[c] = ef_apply(carry, before);
        carry = ef_apply(carry, ef_shfl_idx(ef_apply(before, v), 31));
      }
    }
    return;
  }
  const long long x = (long long)blockIdx.x * 32 + threadIdx.x;
  const int g = threadIdx.y;
  const long long per = (S + EF_SAT_GROUPS - 1) / EF_SAT_GROUPS;
  const long long s0 = g * per < S ? g * per : S, s1 = s0 + per < S ? s0 + per : S;
  ef_acc* q = (ef_acc*)a.part;
  for (long long img = blockIdx.y; img < a.lines; img += gridDim.y) {
    ef_acc* col = q + img * S * ld + x;
    ef_acc t = ef_empty();
    if (x < ld)
      for (long long s = s0; s < s1; s++) t = ef_apply(t, col[s * ld]);
    total[g][threadIdx.x] = t;
    __syncthreads();
    ef_acc c = ef_empty();
    for (int h = 0; h < g; h++) c = ef_apply(c, total[h][threadIdx.x]);
    if (x < ld)
      for (long long s = s0; s < s1; s++) {
        ef_acc v = col[s * ld];
        col[s * ld] = c;
        c = ef_apply(c, v);
      }
    __syncthreads();
  }
}

// Launched as ef_sat_strips.
extern "C" __global__ void __launch_bounds__(EF_SAT_TPB, EF_SAT_MIN_BLOCKS) ef_sat_apply(ScanArgs a) {
  const int lane = threadIdx.x & 31;
  const long long W = a.dims[0], H = a.dims[1], ld = a.inner, NC = ld - W;
  const long long x0 = ((long long)blockIdx.x * EF_SAT_TPB + threadIdx.x) * EF_SAT_EPT;
  const long long c = x0 / (32 * EF_SAT_EPT);
  const long long left_chunks = c < NC ? c : NC;
  const ef_acc* q = (const ef_acc*)a.part;
  const ef_acc* t = (const ef_acc*)a.carry;
  ef_out* out = (ef_out*)a.out;
  // rows, and this thread's outputs in them, start on 16-byte boundaries: groups of 16
  // bytes are then inside the row or past it
  const bool wide = (W * (long long)sizeof(ef_out)) % 16 == 0 && (EF_SAT_EPT * sizeof(ef_out)) % 16 == 0;
  for (long long img = blockIdx.z; img < a.lines; img += gridDim.z) {
    for (long long s = blockIdx.y; s < a.blocks; s += gridDim.y) {
      const long long y0 = s * a.block_len;
      const long long y1 = y0 + a.block_len < H ? y0 + a.block_len : H;
      // Q(x, s): what the chunks to the left add, then the running carries within the chunk
      const ef_acc* qs = q + (img * a.blocks + s) * ld;
      ef_acc left = ef_empty();
      for (long long j = lane; j < left_chunks; j += 32) left = ef_apply(left, qs[W + j]);
      left = ef_sat_warp_total(left);
      ef_acc acc[EF_SAT_EPT];
      ef_acc run = ef_empty();
#pragma unroll
      for (int e = 0; e < EF_SAT_EPT; e++) {
        if (x0 + e < W) run = ef_apply(run, qs[x0 + e]);
        acc[e] = run;
      }
      const ef_acc base = ef_apply(left, ef_sat_warp_exclusive(run));
#pragma unroll
      for (int e = 0; e < EF_SAT_EPT; e++) acc[e] = ef_apply(base, acc[e]);
      for (long long y = y0; y < y1; y += EF_SAT_ROWS) {
        ef_in r[EF_SAT_ROWS][EF_SAT_EPT];
        ef_acc p[EF_SAT_ROWS];
#pragma unroll
        for (int k = 0; k < EF_SAT_ROWS; k++) {
          if (y + k < y1 && x0 < W) ef_sat_fetch(a, ef_sat_column(a, img, y + k), x0, r[k]);
          p[k] = y + k < y1 && c < NC ? t[(img * H + y + k) * NC + c] : ef_empty();
        }
#pragma unroll
        for (int k = 0; k < EF_SAT_ROWS; k++) {
          if (y + k >= y1) break;  // the same rows for every lane
          // R(x, y + k): the chunks to the left, the lanes before, this thread's positions
          ef_acc in_row[EF_SAT_EPT];
          ef_acc run = ef_empty();
#pragma unroll
          for (int e = 0; e < EF_SAT_EPT; e++) {
            if (x0 + e < W) run = ef_apply(run, ef_load(r[k][e]));
            in_row[e] = run;
          }
          const ef_acc before = ef_apply(p[k], ef_sat_warp_exclusive(run));
          ef_out o[EF_SAT_EPT];
#pragma unroll
          for (int e = 0; e < EF_SAT_EPT; e++) {
            acc[e] = ef_apply(acc[e], ef_apply(before, in_row[e]));
            o[e] = ef_store(acc[e]);
          }
          if (x0 >= W) continue;
          ef_out* row = out + (img * H + y + k) * W + x0;
          if (wide) {
#pragma unroll
            for (int e = 0; e < EF_SAT_EPT; e += 16 / (int)sizeof(ef_out))
              if (x0 + e < W) {
                uint4 w;
                memcpy(&w, o + e, 16);
                *(uint4*)(row + e) = w;
              }
          } else {
#pragma unroll
            for (int e = 0; e < EF_SAT_EPT; e++)
              if (x0 + e < W) row[e] = o[e];
          }
        }
      }
    }
  }
}
#endif
