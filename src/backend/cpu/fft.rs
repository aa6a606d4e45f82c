//! FFTs on the CPU: rustfft for complex transforms and realfft for the real forms, with plans
//! cached per length and direction (the planners keep every plan they made), and independent
//! lines transformed in parallel on rayon's pool.
//!
//! Transforms here are unnormalised and work on dense column-major data: a transform "along
//! axis k" transforms every line of the array that runs along dimension k. Lines along
//! dimension 0 are contiguous and transformed where they lie; lines along another dimension
//! are gathered, a few at a time, into a contiguous buffer that stays in cache, transformed
//! together, and scattered back.
//!
//! Working space (a transform's scratch, the gathered lines) comes from a small pool per
//! precision and goes back to it: a long transform needs scratch as large as its data, and
//! asking the allocator for it on every call made the cost depend on what ran before. After
//! other work had left glibc's heap in another state, a 2^20-point c32 transform's two 8 MiB
//! blocks (the output and the scratch) were handed back to the system and faulted in afresh on
//! every call: 16 ms instead of 5.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::sync::lock;
use num_complex::Complex;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftNum, FftPlanner};

/// Lines along a strided axis gathered per task: enough to amortise the plan's overhead,
/// few enough to stay in L2 for lengths in the thousands.
const LINES_PER_TASK: usize = 16;

/// Bytes of working space a precision's pool keeps between transforms; a buffer returned
/// beyond that is freed. 64 MiB holds the scratch of a 2^23-point c32 or 2^22-point c64
/// transform.
const SCRATCH_KEPT_BYTES: usize = 64 << 20;

/// The planners of one precision, and its pool of working space. A planner caches every plan
/// it returns, so asking again for a length is a hash lookup.
pub(crate) struct Planners<T: FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
    scratch: ScratchPool<T>,
}

impl<T: FftNum> Planners<T> {
    fn new() -> Self {
        Planners {
            complex: Mutex::new(FftPlanner::new()),
            real: Mutex::new(RealFftPlanner::new()),
            scratch: ScratchPool::new(SCRATCH_KEPT_BYTES),
        }
    }
}

/// Buffers of complex values free for the next transform, at most `limit` bytes of them.
struct ScratchPool<T> {
    free: Mutex<Vec<Vec<Complex<T>>>>,
    limit: usize,
}

impl<T: FftNum> ScratchPool<T> {
    fn new(limit: usize) -> Self {
        ScratchPool { free: Mutex::new(Vec::new()), limit }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Vec<Complex<T>>>> {
        // Buffers are pushed and removed whole, so a panic elsewhere cannot leave it half done.
        lock(&self.free)
    }

    /// Working space of `len` values: the smallest free buffer that is large enough, else a new
    /// one (zeroed). It returns to the pool when dropped. Its contents are whatever the last
    /// transform left there; transforms write scratch before they read it.
    fn take(&self, len: usize) -> Scratch<'_, T> {
        let found = {
            let mut free = self.lock();
            let best =
                (0..free.len()).filter(|&i| free[i].len() >= len).min_by_key(|&i| free[i].len());
            best.map(|i| free.swap_remove(i))
        };
        let buf = found.unwrap_or_else(|| vec![Complex::new(T::zero(), T::zero()); len]);
        Scratch { buf, len, pool: self }
    }

    /// Keeps `buf`; over the limit, the smallest buffers are freed first (they are the
    /// cheapest to make again). A buffer over the limit by itself is freed at once.
    fn give(&self, buf: Vec<Complex<T>>) {
        let bytes = |b: &Vec<Complex<T>>| b.len() * size_of::<Complex<T>>();
        if bytes(&buf) > self.limit {
            return;
        }
        let mut free = self.lock();
        free.push(buf);
        let mut kept: usize = free.iter().map(bytes).sum();
        let mut evicted = Vec::new();
        while kept > self.limit {
            let i = (0..free.len()).min_by_key(|&i| free[i].len()).expect("a buffer was pushed");
            kept -= bytes(&free[i]);
            evicted.push(free.swap_remove(i));
        }
        drop(free);
        drop(evicted); // freed after the lock is released
    }

    /// Frees every buffer.
    fn clear(&self) {
        let all = std::mem::take(&mut *self.lock());
        drop(all);
    }

    /// Bytes kept.
    #[cfg(test)]
    fn kept_bytes(&self) -> usize {
        self.lock().iter().map(|b| b.len() * size_of::<Complex<T>>()).sum()
    }
}

/// Working space taken from a `ScratchPool`, `len` values long, returned to it on drop.
struct Scratch<'p, T: FftNum> {
    buf: Vec<Complex<T>>,
    len: usize,
    pool: &'p ScratchPool<T>,
}

impl<T: FftNum> std::ops::Deref for Scratch<'_, T> {
    type Target = [Complex<T>];
    fn deref(&self) -> &[Complex<T>] {
        &self.buf[..self.len]
    }
}

impl<T: FftNum> std::ops::DerefMut for Scratch<'_, T> {
    fn deref_mut(&mut self) -> &mut [Complex<T>] {
        &mut self.buf[..self.len]
    }
}

impl<T: FftNum> Drop for Scratch<'_, T> {
    fn drop(&mut self) {
        self.pool.give(std::mem::take(&mut self.buf));
    }
}

/// Frees the working space both precisions keep (`device_gc` on the CPU).
pub(crate) fn release_scratch() {
    f32::planners().scratch.clear();
    f64::planners().scratch.clear();
}

/// The real types the CPU transforms: f32 and f64.
pub(crate) trait FftReal: FftNum + num_traits::Float {
    /// The process-wide planners of this precision.
    fn planners() -> &'static Planners<Self>;
}

impl FftReal for f32 {
    fn planners() -> &'static Planners<f32> {
        static P: OnceLock<Planners<f32>> = OnceLock::new();
        P.get_or_init(Planners::new)
    }
}

impl FftReal for f64 {
    fn planners() -> &'static Planners<f64> {
        static P: OnceLock<Planners<f64>> = OnceLock::new();
        P.get_or_init(Planners::new)
    }
}

fn complex_plan<T: FftReal>(n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
    let mut p = lock(&T::planners().complex);
    if inverse {
        p.plan_fft_inverse(n)
    } else {
        p.plan_fft_forward(n)
    }
}

/// A raw pointer that may cross threads; users guarantee that tasks touch disjoint elements.
#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);
// SAFETY: only used by tasks that read and write disjoint elements (see each use).
unsafe impl<T> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedMut<T> {}

/// Transforms, in place and unnormalised, every line along `axis` of `data`, a dense array of
/// shape `dims`. `inverse` selects the sign of the exponent (+ for the inverse).
pub(crate) fn c2c_axis<T: FftReal>(
    data: &mut [Complex<T>],
    dims: [usize; 4],
    axis: usize,
    inverse: bool,
) {
    let n = dims[axis];
    if n <= 1 || data.is_empty() {
        return;
    }
    let inner: usize = dims[..axis].iter().product();
    let outer: usize = dims[axis + 1..].iter().product();
    let fft = complex_plan::<T>(n, inverse);
    let scratch_len = fft.get_inplace_scratch_len();
    if inner == 1 {
        // Contiguous lines: several per task so that short transforms are not dominated by
        // task overhead.
        let per_task = (4096 / n).max(1);
        data.par_chunks_mut(n * per_task).for_each_init(
            || T::planners().scratch.take(scratch_len),
            |scratch, lines| fft.process_with_scratch(lines, scratch),
        );
        return;
    }
    let groups = inner.div_ceil(LINES_PER_TASK);
    let base_ptr = SharedMut(data.as_mut_ptr());
    (0..outer * groups).into_par_iter().for_each_init(
        || {
            (
                T::planners().scratch.take(LINES_PER_TASK * n),
                T::planners().scratch.take(scratch_len),
            )
        },
        |(buf, scratch), task| {
            let ptr = base_ptr;
            let (o, g) = (task / groups, task % groups);
            let first = g * LINES_PER_TASK;
            let count = LINES_PER_TASK.min(inner - first);
            let base = o * inner * n + first;
            let buf = &mut buf[..count * n];
            // SAFETY: this task owns lines `first..first + count` of slab `o`: the elements
            // `base + k * inner + l` for k < n, l < count, which no other task touches, and
            // all lie inside `data`.
            unsafe {
                for k in 0..n {
                    let row = ptr.0.add(base + k * inner);
                    for l in 0..count {
                        buf[l * n + k] = *row.add(l);
                    }
                }
            }
            fft.process_with_scratch(buf, scratch);
            // SAFETY: as above.
            unsafe {
                for k in 0..n {
                    let row = ptr.0.add(base + k * inner);
                    for l in 0..count {
                        *row.add(l) = buf[l * n + k];
                    }
                }
            }
        },
    );
}

/// Real-to-complex transforms of the contiguous lines of length `n` in `input` into lines of
/// length `n / 2 + 1` in `output`. `input` is used as scratch.
pub(crate) fn r2c_lines<T: FftReal>(input: &mut [T], output: &mut [Complex<T>], n: usize) {
    if input.is_empty() {
        return;
    }
    let plan: Arc<dyn RealToComplex<T>> = lock(&T::planners().real).plan_fft_forward(n);
    let half = n / 2 + 1;
    let per_task = (4096 / n).max(1);
    input.par_chunks_mut(n * per_task).zip(output.par_chunks_mut(half * per_task)).for_each_init(
        || T::planners().scratch.take(plan.get_scratch_len()),
        |scratch, (ins, outs)| {
            for (i, o) in ins.chunks_mut(n).zip(outs.chunks_mut(half)) {
                // Lengths match the plan, so this cannot fail.
                plan.process_with_scratch(i, o, scratch).expect("internal error: r2c lengths");
            }
        },
    );
}

/// Complex-to-real transforms of the contiguous lines of length `n / 2 + 1` in `input` into
/// real lines of length `n` in `output`. The imaginary parts of the first value (and, for
/// even `n`, the last) are ignored, as a Hermitian spectrum has none. `input` is used as
/// scratch.
pub(crate) fn c2r_lines<T: FftReal>(input: &mut [Complex<T>], output: &mut [T], n: usize) {
    if output.is_empty() {
        return;
    }
    let plan: Arc<dyn ComplexToReal<T>> = lock(&T::planners().real).plan_fft_inverse(n);
    let half = n / 2 + 1;
    let per_task = (4096 / n).max(1);
    input.par_chunks_mut(half * per_task).zip(output.par_chunks_mut(n * per_task)).for_each_init(
        || T::planners().scratch.take(plan.get_scratch_len()),
        |scratch, (ins, outs)| {
            for (i, o) in ins.chunks_mut(half).zip(outs.chunks_mut(n)) {
                // The only possible error reports non-zero imaginary parts that the transform
                // ignored (it still computed the result), which is the documented behaviour.
                let _ = plan.process_with_scratch(i, o, scratch);
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_is_reused_smallest_fit_first() {
        let pool = ScratchPool::<f32>::new(1 << 20);
        let (big, small) = (pool.take(1000), pool.take(100));
        let (big_at, small_at) = (big.as_ptr(), small.as_ptr());
        assert_eq!((big.len(), small.len()), (1000, 100));
        drop((big, small));
        assert_eq!(pool.kept_bytes(), 1100 * 8);
        // 50 values fit both; the smaller is taken, and the view is 50 long
        let a = pool.take(50);
        assert_eq!((a.as_ptr(), a.len()), (small_at, 50));
        let b = pool.take(500);
        assert_eq!(b.as_ptr(), big_at);
        // nothing free is large enough: a new, zeroed buffer
        let c = pool.take(2000);
        assert!(c.iter().all(|v| v.re == 0.0 && v.im == 0.0));
        drop((a, b, c));
        assert_eq!(pool.kept_bytes(), 3100 * 8);
        pool.clear();
        assert_eq!(pool.kept_bytes(), 0);
    }

    #[test]
    fn scratch_over_the_limit_frees_the_smallest_first() {
        let pool = ScratchPool::<f64>::new(16 * 1000); // 1000 c64 values
        let (a, b, c) = (pool.take(300), pool.take(600), pool.take(200));
        drop((a, b));
        assert_eq!(pool.kept_bytes(), 900 * 16);
        drop(c); // 1100 values: the 200 go again
        assert_eq!(pool.kept_bytes(), 900 * 16);
        let d = pool.take(500); // the 600
        let e = pool.take(2000); // over the limit alone: freed, the others stay
        drop((d, e));
        assert_eq!(pool.kept_bytes(), 900 * 16);
    }

    fn naive(x: &[Complex<f64>], inverse: bool) -> Vec<Complex<f64>> {
        let n = x.len();
        let sign = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                x.iter().enumerate().fold(Complex::new(0.0, 0.0), |acc, (j, &v)| {
                    let t = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    acc + v * Complex::new(t.cos(), t.sin())
                })
            })
            .collect()
    }

    #[test]
    fn strided_axis_matches_naive() {
        let dims = [3usize, 5, 2, 1];
        let total: usize = dims.iter().product();
        let data: Vec<Complex<f64>> = (0..total)
            .map(|i| Complex::new((i as f64 * 0.7).sin(), (i as f64 * 0.3).cos()))
            .collect();
        let mut got = data.clone();
        c2c_axis(&mut got, dims, 1, false);
        for o in 0..2 {
            for i in 0..3 {
                let line: Vec<_> = (0..5).map(|k| data[o * 15 + k * 3 + i]).collect();
                let want = naive(&line, false);
                for k in 0..5 {
                    assert!((got[o * 15 + k * 3 + i] - want[k]).norm() < 1e-12);
                }
            }
        }
    }
}
