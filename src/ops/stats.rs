//! Statistics with arrayfire-rust's names and signatures: means, variances, standard
//! deviations, covariance, correlation, medians and top-k. (Histograms are image functions:
//! [`histogram`](crate::histogram).)
//!
//! Means, variances, covariance and correlation are built from the lazy element-wise
//! operations and the reductions, so they run on every backend without kernels of their own.
//! They work in f64: the input is cast to f64 inside the fused producer of the reduction (the
//! reductions accumulate f64), and the result is rounded once to `T::MeanOutType`. Variances
//! are two-pass (the mean first, then the mean squared deviation from it), which keeps their
//! accuracy when the mean is large compared with the spread.
//!
//! `median`, `median_all` and `topk` copy the input to the host, compute there and
//! upload the result: correct on both backends, but not fast on CUDA until device sorting lands.
//!
//! Semantics shared by every function here:
//! - `dim` is 0 to 3, or -1 for the first dimension larger than 1 (0 if there is none).
//! - Complex inputs are not supported yet: the functions panic naming themselves.
//! - An empty run gives NaN for means, variances and medians.

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{CovarianceComputable, HasAfEnum, MedianComputable, RealFloating, RealNumber};
use crate::ops::arith::{mul, sqrt, sub};
use crate::ops::build::with_backend_of;
use crate::ops::reduce::{sum, sum_all};
use crate::storage::{Element, Lit};

/// Which normalisation a variance uses.
///
/// ```
/// use emberfire::{dim4, var_all_v2, Array, VarianceBias};
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(4));
/// assert_eq!(var_all_v2(&a, VarianceBias::POPULATION).0, 1.25); // divides by n
/// assert_eq!(var_all_v2(&a, VarianceBias::SAMPLE).0, 5.0 / 3.0); // divides by n - 1
/// assert_eq!(var_all_v2(&a, VarianceBias::DEFAULT).0, 1.25); // population
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum VarianceBias {
    /// ArrayFire's default: the population variance.
    DEFAULT = 0,
    /// The sample variance: divides by `n - 1` (Bessel's correction).
    SAMPLE = 1,
    /// The population variance: divides by `n`.
    POPULATION = 2,
}

/// Whether `topk` picks the smallest or the largest values.
///
/// ```
/// use emberfire::{dim4, topk, Array, TopkFn};
/// let a = Array::new(&[3.0f32, 1.0, 4.0, 1.5], dim4!(4));
/// let (vals, idx) = topk(&a, 2, 0, TopkFn::MIN);
/// assert_eq!(vals.to_vec(), vec![1.0, 1.5]);
/// assert_eq!(idx.to_vec(), vec![1, 3]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum TopkFn {
    /// The smallest values, ascending.
    MIN = 1,
    /// The largest values, descending.
    MAX = 2,
    /// ArrayFire's default: the largest values.
    DEFAULT = 0,
}

/// The dimension `dim` names for an array of shape `dims`.
fn resolve_dim(func: &str, dims: Dim4, dim: i64) -> usize {
    match dim {
        0..=3 => dim as usize,
        -1 => (0..4).find(|&k| dims[k] > 1).unwrap_or(0),
        _ => panic!(
            "{func}: `dim` is {dim}, but it must be 0, 1, 2 or 3 (or -1 for the first dimension \
             larger than 1); the input's dims are {dims}"
        ),
    }
}

fn reject_complex<T: HasAfEnum>(func: &str, input: &Array<T>) {
    if input.is_complex() {
        panic!(
            "{func}: complex inputs are not supported yet; the input is {:?} with dims {}",
            T::get_af_dtype(),
            input.dims()
        );
    }
}

fn same_dims(func: &str, what: &str, a: Dim4, b: Dim4) {
    if a != b {
        panic!("{func}: the input's dims are {a} but the {what}' dims are {b}; they must match");
    }
}

/// The input as a lazy f64 array (the cast fuses into the reduction that reads it).
fn as_f64<T: HasAfEnum>(func: &str, input: &Array<T>) -> Array<f64> {
    reject_complex(func, input);
    input.cast::<f64>()
}

fn divisor(n: u64, bias: VarianceBias) -> f64 {
    match bias {
        // An empty run divides by 0 (NaN, like its mean), not by -1.
        VarianceBias::SAMPLE => n.saturating_sub(1) as f64,
        VarianceBias::DEFAULT | VarianceBias::POPULATION => n as f64,
    }
}

fn mean_f64(x: &Array<f64>, d: usize) -> Array<f64> {
    let n = x.dims()[d];
    sum(x, d as i32) / n as f64
}

fn var_f64(x: &Array<f64>, d: usize, bias: VarianceBias) -> (Array<f64>, Array<f64>) {
    let m = mean_f64(x, d);
    m.eval();
    let dev = sub(x, &m, true);
    let var = sum(&(&dev * &dev), d as i32) / divisor(x.dims()[d], bias);
    (m, var)
}

fn weighted_f64(func: &str, x: &Array<f64>, w: &Array<f64>, d: usize) -> (Array<f64>, Array<f64>) {
    same_dims(func, "weights", x.dims(), w.dims());
    let wsum = sum(w, d as i32);
    wsum.eval();
    let m = sum(&(x * w), d as i32) / &wsum;
    m.eval();
    let dev = sub(x, &m, true);
    let var = sum(&(&(&dev * &dev) * w), d as i32) / &wsum;
    (m, var)
}

/// The mean along `dim`.
///
/// ```
/// use emberfire::{dim4, mean, Array};
/// let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(2, 3));
/// assert_eq!(mean(&a, 0).to_vec(), vec![1.5f32, 3.5, 5.5]);
/// assert_eq!(mean(&a, 1).to_vec(), vec![3.0f32, 4.0]);
/// ```
pub fn mean<T>(input: &Array<T>, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
{
    let d = resolve_dim("mean", input.dims(), dim);
    mean_f64(&as_f64("mean", input), d).cast()
}

/// The mean along `dim` weighted by `weights` (same dims as `input`):
/// `sum(w * x) / sum(w)`.
///
/// ```
/// use emberfire::{dim4, mean_weighted, Array};
/// let a = Array::new(&[1.0f32, 3.0], dim4!(2));
/// let w = Array::new(&[3.0f32, 1.0], dim4!(2));
/// assert_eq!(mean_weighted(&a, &w, 0).to_vec(), vec![1.5]);
/// ```
pub fn mean_weighted<T, W>(input: &Array<T>, weights: &Array<W>, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
    W: HasAfEnum + RealFloating,
{
    let func = "mean_weighted";
    let d = resolve_dim(func, input.dims(), dim);
    weighted_f64(func, &as_f64(func, input), &weights.cast(), d).0.cast()
}

/// The variance along `dim`, two-pass, normalised as `bias_kind` says.
///
/// ```
/// use emberfire::{dim4, var_v2, Array, VarianceBias};
/// let a = Array::new(&[1.0f64, 3.0, 2.0, 6.0], dim4!(2, 2));
/// assert_eq!(var_v2(&a, VarianceBias::POPULATION, 0).to_vec(), vec![1.0, 4.0]);
/// assert_eq!(var_v2(&a, VarianceBias::SAMPLE, 0).to_vec(), vec![2.0, 8.0]);
/// ```
pub fn var_v2<T>(arr: &Array<T>, bias_kind: VarianceBias, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
{
    let d = resolve_dim("var_v2", arr.dims(), dim);
    var_f64(&as_f64("var_v2", arr), d, bias_kind).1.cast()
}

/// The weighted (population) variance along `dim`: `sum(w * (x - m)^2) / sum(w)` with `m` the
/// weighted mean.
///
/// ```
/// use emberfire::{dim4, var_weighted, Array};
/// let a = Array::new(&[0.0f64, 4.0], dim4!(2));
/// let w = Array::new(&[3.0f64, 1.0], dim4!(2));
/// assert_eq!(var_weighted(&a, &w, 0).to_vec(), vec![3.0]); // mean 1: (3*1 + 9) / 4
/// ```
pub fn var_weighted<T, W>(input: &Array<T>, weights: &Array<W>, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
    W: HasAfEnum + RealFloating,
{
    let func = "var_weighted";
    let d = resolve_dim(func, input.dims(), dim);
    weighted_f64(func, &as_f64(func, input), &weights.cast(), d).1.cast()
}

/// The standard deviation along `dim`: the square root of [`var_v2`].
///
/// ```
/// use emberfire::{dim4, stdev_v2, Array, VarianceBias};
/// let a = Array::new(&[1.0f32, 3.0, 2.0, 6.0], dim4!(2, 2));
/// assert_eq!(stdev_v2(&a, VarianceBias::POPULATION, 0).to_vec(), vec![1.0, 2.0]);
/// ```
pub fn stdev_v2<T>(input: &Array<T>, bias_kind: VarianceBias, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
{
    let d = resolve_dim("stdev_v2", input.dims(), dim);
    sqrt(&var_f64(&as_f64("stdev_v2", input), d, bias_kind).1).cast()
}

/// The mean and the variance along `dim` in one call. With an empty `weights` array (of dims
/// other than the input's) the variance is normalised as `bias` says; with weights of the
/// input's dims both are weighted as in [`mean_weighted`] and [`var_weighted`], and `bias` is
/// not used; weights of any other dims panic.
///
/// ```
/// use emberfire::{dim4, meanvar, Array, VarianceBias};
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(4));
/// let none = Array::<f64>::new_empty(dim4!(0));
/// let (m, v) = meanvar(&a, &none, VarianceBias::SAMPLE, 0);
/// assert_eq!((m.to_vec(), v.to_vec()), (vec![2.5], vec![5.0 / 3.0]));
/// ```
#[allow(clippy::type_complexity)]
pub fn meanvar<T, W>(
    input: &Array<T>,
    weights: &Array<W>,
    bias: VarianceBias,
    dim: i64,
) -> (Array<T::MeanOutType>, Array<T::MeanOutType>)
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
    W: HasAfEnum + RealFloating,
{
    let func = "meanvar";
    let d = resolve_dim(func, input.dims(), dim);
    let x = as_f64(func, input);
    let (m, v) = if weights.elements() == 0 && weights.dims() != input.dims() {
        var_f64(&x, d, bias)
    } else {
        weighted_f64(func, &x, &weights.cast(), d)
    };
    (m.cast(), v.cast())
}

/// The covariance of `x` and `y` (vectors or matrices of the same dims), column by column
/// along dimension 0: `sum((x - mx) * (y - my)) / n` (or `n - 1` for `SAMPLE`).
///
/// ```
/// use emberfire::{cov_v2, dim4, Array, VarianceBias};
/// let x = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
/// let y = Array::new(&[2.0f64, 4.0, 9.0], dim4!(3));
/// assert_eq!(cov_v2(&x, &y, VarianceBias::SAMPLE).to_vec(), vec![3.5]);
/// ```
pub fn cov_v2<T>(x: &Array<T>, y: &Array<T>, bias_kind: VarianceBias) -> Array<T::MeanOutType>
where
    T: HasAfEnum + CovarianceComputable,
    T::MeanOutType: HasAfEnum,
{
    let func = "cov_v2";
    same_dims(func, "second input", x.dims(), y.dims());
    if x.dims()[2] != 1 || x.dims()[3] != 1 {
        panic!("{func}: the inputs must be vectors or matrices, but their dims are {}", x.dims());
    }
    let (xf, yf) = (as_f64(func, x), as_f64(func, y));
    let (mx, my) = (mean_f64(&xf, 0), mean_f64(&yf, 0));
    let prod = mul(&sub(&xf, &mx, true), &sub(&yf, &my, true), false);
    (sum(&prod, 0) / divisor(x.dims()[0], bias_kind)).cast()
}

/// The mean of all elements, as `(mean, 0.0)`.
///
/// ```
/// use emberfire::{dim4, mean_all, Array};
/// assert_eq!(mean_all(&Array::new(&[1u8, 2, 3, 6], dim4!(2, 2))), (3.0, 0.0));
/// ```
pub fn mean_all<T: HasAfEnum>(input: &Array<T>) -> (f64, f64) {
    let x = as_f64("mean_all", input);
    (sum_all(&x).0 / input.elements() as f64, 0.0)
}

fn var_all_f64(x: &Array<f64>, bias: VarianceBias) -> f64 {
    let n = x.elements();
    let m = sum_all(x).0 / n as f64;
    let dev = x - m;
    sum_all(&(&dev * &dev)).0 / divisor(n as u64, bias)
}

/// The variance of all elements, two-pass, as `(variance, 0.0)`.
///
/// ```
/// use emberfire::{dim4, var_all_v2, Array, VarianceBias};
/// let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// assert_eq!(var_all_v2(&a, VarianceBias::POPULATION), (1.25, 0.0));
/// ```
pub fn var_all_v2<T: HasAfEnum>(input: &Array<T>, bias_kind: VarianceBias) -> (f64, f64) {
    (var_all_f64(&as_f64("var_all_v2", input), bias_kind), 0.0)
}

/// The standard deviation of all elements, as `(stdev, 0.0)`.
///
/// ```
/// use emberfire::{dim4, stdev_all_v2, Array, VarianceBias};
/// let a = Array::new(&[2i32, 4, 4, 4, 5, 5, 7, 9], dim4!(8));
/// assert_eq!(stdev_all_v2(&a, VarianceBias::POPULATION), (2.0, 0.0));
/// ```
pub fn stdev_all_v2<T: HasAfEnum>(input: &Array<T>, bias_kind: VarianceBias) -> (f64, f64) {
    (var_all_f64(&as_f64("stdev_all_v2", input), bias_kind).sqrt(), 0.0)
}

fn weighted_all_f64<T: HasAfEnum, W: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    weights: &Array<W>,
) -> (f64, f64) {
    same_dims(func, "weights", input.dims(), weights.dims());
    let x = as_f64(func, input);
    let w = weights.cast::<f64>();
    let wsum = sum_all(&w).0;
    let m = sum_all(&(&x * &w)).0 / wsum;
    let dev = &x - m;
    (m, sum_all(&(&(&dev * &dev) * &w)).0 / wsum)
}

/// The weighted mean of all elements, `sum(w * x) / sum(w)`, as `(mean, 0.0)`.
///
/// ```
/// use emberfire::{dim4, mean_all_weighted, Array};
/// let a = Array::new(&[1.0f64, 3.0], dim4!(2));
/// let w = Array::new(&[1.0f64, 3.0], dim4!(2));
/// assert_eq!(mean_all_weighted(&a, &w), (2.5, 0.0));
/// ```
pub fn mean_all_weighted<T, W>(input: &Array<T>, weights: &Array<W>) -> (f64, f64)
where
    T: HasAfEnum,
    W: HasAfEnum + RealFloating,
{
    (weighted_all_f64("mean_all_weighted", input, weights).0, 0.0)
}

/// The weighted (population) variance of all elements, as `(variance, 0.0)`.
///
/// ```
/// use emberfire::{dim4, var_all_weighted, Array};
/// let a = Array::new(&[0.0f64, 4.0], dim4!(2));
/// let w = Array::new(&[3.0f64, 1.0], dim4!(2));
/// assert_eq!(var_all_weighted(&a, &w), (3.0, 0.0));
/// ```
pub fn var_all_weighted<T, W>(input: &Array<T>, weights: &Array<W>) -> (f64, f64)
where
    T: HasAfEnum,
    W: HasAfEnum + RealFloating,
{
    (weighted_all_f64("var_all_weighted", input, weights).1, 0.0)
}

/// Pearson's correlation coefficient of all elements of `x` and `y` (same dims), as
/// `(r, 0.0)`.
///
/// ```
/// use emberfire::{corrcoef, dim4, Array};
/// let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
/// let y = Array::new(&[5.0f32, 3.0, 1.0], dim4!(3));
/// assert!((corrcoef(&x, &y).0 + 1.0).abs() < 1e-12);
/// ```
pub fn corrcoef<T>(x: &Array<T>, y: &Array<T>) -> (f64, f64)
where
    T: HasAfEnum + RealNumber,
{
    let func = "corrcoef";
    same_dims(func, "second input", x.dims(), y.dims());
    let (xf, yf) = (as_f64(func, x), as_f64(func, y));
    let n = x.elements() as f64;
    let dx = &xf - sum_all(&xf).0 / n;
    let dy = &yf - sum_all(&yf).0 / n;
    let sxy = sum_all(&(&dx * &dy)).0;
    let sxx = sum_all(&(&dx * &dx)).0;
    let syy = sum_all(&(&dy * &dy)).0;
    (sxy / (sxx * syy).sqrt(), 0.0)
}

/// A real element as f64 (the types here are real; complex inputs are rejected earlier).
fn real_f64<T: Element>(v: T) -> f64 {
    match v.to_lit() {
        Lit::Bool(b) => b as u8 as f64,
        Lit::Int(i) => i as f64,
        Lit::Uint(u) => u as f64,
        Lit::Real(r) => r,
        Lit::Cplx(c) => c.re,
    }
}

/// The median of a run, sorted in place; the mean of the two middle values for even lengths.
fn median_of(run: &mut [f64]) -> f64 {
    if run.is_empty() {
        return f64::NAN;
    }
    run.sort_by(f64::total_cmp);
    let h = run.len() / 2;
    if run.len() % 2 == 1 {
        run[h]
    } else {
        (run[h - 1] + run[h]) / 2.0
    }
}

/// Host copies of the runs along dimension `d`, in output (column-major) order.
fn runs_along<T: HasAfEnum>(input: &Array<T>, d: usize) -> (Vec<Vec<f64>>, Vec<Vec<usize>>) {
    let dims = input.dims();
    let host: Vec<f64> = input.to_vec().into_iter().map(real_f64).collect();
    let mut stride = [1usize; 4];
    for k in 1..4 {
        stride[k] = stride[k - 1] * dims[k - 1] as usize;
    }
    let mut outer = dims;
    outer[d] = 1;
    let (mut runs, mut positions) = (Vec::new(), Vec::new());
    for i3 in 0..outer[3] as usize {
        for i2 in 0..outer[2] as usize {
            for i1 in 0..outer[1] as usize {
                for i0 in 0..outer[0] as usize {
                    let base = i0 * stride[0] + i1 * stride[1] + i2 * stride[2] + i3 * stride[3];
                    let pos: Vec<usize> =
                        (0..dims[d] as usize).map(|j| base + j * stride[d]).collect();
                    runs.push(pos.iter().map(|&p| host[p]).collect());
                    positions.push(pos);
                }
            }
        }
    }
    (runs, positions)
}

/// The median along `dim`; for an even count the mean of the two middle values, rounded to
/// `T` (truncated for integers). Computed on the host (see the module notes).
///
/// ```
/// use emberfire::{dim4, median, Array};
/// let a = Array::new(&[3.0f32, 1.0, 2.0, 9.0, 5.0, 7.0, 4.0, 8.0], dim4!(4, 2));
/// assert_eq!(median(&a, 0).to_vec(), vec![2.5, 6.0]);
/// ```
pub fn median<T>(input: &Array<T>, dim: i64) -> Array<T>
where
    T: HasAfEnum + MedianComputable,
{
    let d = resolve_dim("median", input.dims(), dim);
    let mut dims = input.dims();
    dims[d] = 1;
    let (runs, _) = runs_along(input, d);
    let out: Vec<T> =
        runs.into_iter().map(|mut r| T::from_lit(Lit::Real(median_of(&mut r)))).collect();
    with_backend_of(input, || Array::new(&out, dims))
}

/// The median of all elements, as `(median, 0.0)`. Computed on the host.
///
/// ```
/// use emberfire::{dim4, median_all, Array};
/// assert_eq!(median_all(&Array::new(&[4i32, 1, 3, 2], dim4!(2, 2))), (2.5, 0.0));
/// ```
pub fn median_all<T>(input: &Array<T>) -> (f64, f64)
where
    T: HasAfEnum + MedianComputable,
{
    let mut all: Vec<f64> = input.to_vec().into_iter().map(real_f64).collect();
    (median_of(&mut all), 0.0)
}

/// The `k` largest (`TopkFn::MAX`, `DEFAULT`) or smallest (`TopkFn::MIN`) values along `dim`,
/// in that order, and their indices along `dim`; ties keep the lower index first. Computed on
/// the host (see the module notes).
///
/// ```
/// use emberfire::{dim4, topk, Array, TopkFn};
/// let a = Array::new(&[5i32, 9, 1, 7], dim4!(4));
/// let (vals, idx) = topk(&a, 2, 0, TopkFn::DEFAULT);
/// assert_eq!((vals.to_vec(), idx.to_vec()), (vec![9, 7], vec![1, 3]));
/// ```
pub fn topk<T>(input: &Array<T>, k: u32, dim: i32, order: TopkFn) -> (Array<T>, Array<u32>)
where
    T: HasAfEnum,
{
    reject_complex("topk", input);
    let d = resolve_dim("topk", input.dims(), dim as i64);
    let dims = input.dims();
    if k == 0 || u64::from(k) > dims[d] {
        panic!(
            "topk: k is {k}, but it must be 1 to {} (the length of dim {d} of dims {dims})",
            dims[d]
        );
    }
    let host = input.to_vec();
    let (runs, positions) = runs_along(input, d);
    let (mut vals, mut idx) = (Vec::new(), Vec::new());
    for (run, pos) in runs.iter().zip(&positions) {
        let mut order_idx: Vec<usize> = (0..run.len()).collect();
        match order {
            TopkFn::MIN => order_idx.sort_by(|&a, &b| run[a].total_cmp(&run[b])),
            TopkFn::MAX | TopkFn::DEFAULT => order_idx.sort_by(|&a, &b| run[b].total_cmp(&run[a])),
        }
        for &j in &order_idx[..k as usize] {
            vals.push(host[pos[j]]);
            idx.push(j as u32);
        }
    }
    let mut out_dims = dims;
    out_dims[d] = u64::from(k);
    // The values come out run by run; put them back in column-major order of `out_dims`.
    let (vals, idx) = runs_to_layout(&vals, &idx, out_dims, d);
    with_backend_of(input, || (Array::new(&vals, out_dims), Array::new(&idx, out_dims)))
}

/// Reorders values listed run by run (each `dims[d]` long, runs in column-major order of the
/// other dims) into column-major order of `dims`.
fn runs_to_layout<T: Copy>(vals: &[T], idx: &[u32], dims: Dim4, d: usize) -> (Vec<T>, Vec<u32>) {
    let len = dims[d] as usize;
    let mut stride = [1usize; 4];
    for k in 1..4 {
        stride[k] = stride[k - 1] * dims[k - 1] as usize;
    }
    let mut outer = dims;
    outer[d] = 1;
    let mut out_v = vals.to_vec();
    let mut out_i = idx.to_vec();
    let mut r = 0;
    for i3 in 0..outer[3] as usize {
        for i2 in 0..outer[2] as usize {
            for i1 in 0..outer[1] as usize {
                for i0 in 0..outer[0] as usize {
                    let base = i0 * stride[0] + i1 * stride[1] + i2 * stride[2] + i3 * stride[3];
                    for j in 0..len {
                        out_v[base + j * stride[d]] = vals[r * len + j];
                        out_i[base + j * stride[d]] = idx[r * len + j];
                    }
                    r += 1;
                }
            }
        }
    }
    (out_v, out_i)
}
