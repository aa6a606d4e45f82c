// Copies a strided 4-d block of elements into a dense destination with its own strides (the
// place of one input in the result of `join`).
//
//   dst[i + j*t1 + k*t2 + l*t3] = src[i*s0 + j*s1 + k*s2 + l*s3]   for (i, j, k, l) < (d0..d3)
//
// Two entry points: `ef_copy_columns` for columns long enough to give every thread of a
// block work (a block strides along a column; blocks along y take whole columns, so the
// column's coordinates are computed once per column, not per element), and
// `ef_copy_elements` for short columns (one flat grid-stride loop over all elements).
//
// Compiled at run time with EF_T defined as an unsigned type of the element's size (or
// ef_b16 for 16-byte elements): a copy only moves bits.

struct __align__(16) ef_b16 { unsigned long long lo, hi; };

extern "C" __global__ void ef_copy_columns(
    const EF_T* __restrict__ src, EF_T* __restrict__ dst,
    long long d0, long long d1, long long d2, long long columns,
    long long s0, long long s1, long long s2, long long s3,
    long long t1, long long t2, long long t3)
{
    for (long long c = blockIdx.y; c < columns; c += gridDim.y) {
        const long long j = c % d1, r = c / d1, k = r % d2, l = r / d2;
        const EF_T* from = src + j * s1 + k * s2 + l * s3;
        EF_T* to = dst + j * t1 + k * t2 + l * t3;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < d0;
             i += (long long)gridDim.x * blockDim.x)
            to[i] = from[i * s0];
    }
}

extern "C" __global__ void ef_copy_elements(
    const EF_T* __restrict__ src, EF_T* __restrict__ dst,
    long long d0, long long d1, long long d2, long long n,
    long long s0, long long s1, long long s2, long long s3,
    long long t1, long long t2, long long t3)
{
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (long long)gridDim.x * blockDim.x) {
        const long long i = e % d0, r = e / d0, j = r % d1, r2 = r / d1, k = r2 % d2, l = r2 / d2;
        dst[i + j * t1 + k * t2 + l * t3] = src[i * s0 + j * s1 + k * s2 + l * s3];
    }
}
