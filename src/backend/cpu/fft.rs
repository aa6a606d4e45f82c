//! FFTs on the CPU: rustfft for complex transforms and realfft for the real forms, with plans
//! cached per length and direction (the planners keep every plan they made), and independent
//! lines transformed in parallel on rayon's pool.
//!
//! Transforms here are unnormalised and work on dense column-major data: a transform "along
//! axis k" transforms every line of the array that runs along dimension k. Lines along
//! dimension 0 are contiguous and transformed where they lie; lines along another dimension
//! are gathered, a few at a time, into a contiguous buffer that stays in cache, transformed
//! together, and scattered back.

use std::sync::{Arc, Mutex, OnceLock};

use num_complex::Complex;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftNum, FftPlanner};

/// Lines along a strided axis gathered per task: enough to amortise the plan's overhead,
/// few enough to stay in L2 for lengths in the thousands.
const LINES_PER_TASK: usize = 16;

/// The planners of one precision. A planner caches every plan it returns, so asking again
/// for a length is a hash lookup.
pub(crate) struct Planners<T: FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
}

impl<T: FftNum> Planners<T> {
    fn new() -> Self {
        Planners { complex: Mutex::new(FftPlanner::new()), real: Mutex::new(RealFftPlanner::new()) }
    }
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
    let mut p = T::planners().complex.lock().unwrap_or_else(|e| e.into_inner());
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
    let zero = Complex::new(T::zero(), T::zero());
    if inner == 1 {
        // Contiguous lines: several per task so that short transforms are not dominated by
        // task overhead.
        let per_task = (4096 / n).max(1);
        data.par_chunks_mut(n * per_task).for_each_init(
            || vec![zero; scratch_len],
            |scratch, lines| fft.process_with_scratch(lines, scratch),
        );
        return;
    }
    let groups = inner.div_ceil(LINES_PER_TASK);
    let base_ptr = SharedMut(data.as_mut_ptr());
    (0..outer * groups).into_par_iter().for_each_init(
        || (vec![zero; LINES_PER_TASK * n], vec![zero; scratch_len]),
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
    let plan: Arc<dyn RealToComplex<T>> =
        T::planners().real.lock().unwrap_or_else(|e| e.into_inner()).plan_fft_forward(n);
    let half = n / 2 + 1;
    let per_task = (4096 / n).max(1);
    let zero = Complex::new(T::zero(), T::zero());
    input.par_chunks_mut(n * per_task).zip(output.par_chunks_mut(half * per_task)).for_each_init(
        || vec![zero; plan.get_scratch_len()],
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
    let plan: Arc<dyn ComplexToReal<T>> =
        T::planners().real.lock().unwrap_or_else(|e| e.into_inner()).plan_fft_inverse(n);
    let half = n / 2 + 1;
    let per_task = (4096 / n).max(1);
    let zero = Complex::new(T::zero(), T::zero());
    input.par_chunks_mut(half * per_task).zip(output.par_chunks_mut(n * per_task)).for_each_init(
        || vec![zero; plan.get_scratch_len()],
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
