//! Vector and matrix norms: [`norm`] and [`NormType`].

use super::matrix_shape;
use super::svd::singular_values;
use crate::array::Array;
use crate::dtype::{c64, FloatingPoint, HasAfEnum};
use crate::ops::arith::{abs, pow};
use crate::ops::reduce::{max, max_all, sum, sum_all};

/// Which norm [`norm`] computes, as in arrayfire-rust (the same names and values).
///
/// ```
/// use emberfire::{dim4, norm, Array, NormType};
/// let v = Array::new(&[3.0f32, -4.0], dim4!(2));
/// assert_eq!(norm(&v, NormType::VECTOR_2, 0.0, 0.0), 5.0);
/// assert_eq!(norm(&v, NormType::VECTOR_1, 0.0, 0.0), 7.0);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NormType {
    /// The input as a vector: the sum of absolute values.
    VECTOR_1 = 0,
    /// The input as a vector: the largest absolute value.
    VECTOR_INF = 1,
    /// The input as a vector: the Euclidean norm (the Frobenius norm of a matrix).
    VECTOR_2 = 2,
    /// The input as a vector: `(Σ |x|^p)^(1/p)`.
    VECTOR_P = 3,
    /// The largest column sum of absolute values.
    MATRIX_1 = 4,
    /// The largest row sum of absolute values.
    MATRIX_INF = 5,
    /// The largest singular value.
    MATRIX_2 = 6,
    /// `(Σ_j (Σ_i |a_ij|^p)^(q/p))^(1/q)`: the p-norms of the columns, combined by a q-norm.
    MATRIX_L_PQ = 7,
}

/// A norm of a vector or matrix, in f64 (computed in f64 from the values converted to f64, so
/// that f32 inputs neither overflow nor lose precision in the sums).
///
/// `p` is used by `VECTOR_P` and `MATRIX_L_PQ`, `q` by `MATRIX_L_PQ`; both must then be
/// positive (infinity is allowed). The `VECTOR_*` norms treat every element of the matrix as
/// one vector. An empty input has norm 0. Panics if the input is a batch of matrices, or for
/// a `p` or `q` that is not positive where it is used.
///
/// ```
/// use emberfire::{dim4, norm, Array, NormType};
/// let a = Array::new(&[1.0f64, -3.0, 2.0, 4.0], dim4!(2, 2)); // [1 2; -3 4]
/// assert_eq!(norm(&a, NormType::MATRIX_1, 0.0, 0.0), 6.0); // |2| + |4|
/// assert_eq!(norm(&a, NormType::MATRIX_INF, 0.0, 0.0), 7.0); // |-3| + |4|
/// assert_eq!(norm(&a, NormType::VECTOR_INF, 0.0, 0.0), 4.0);
/// let pq = norm(&a, NormType::MATRIX_L_PQ, 1.0, 1.0); // every |a_ij| summed
/// assert_eq!(pq, 10.0);
/// ```
pub fn norm<T>(input: &Array<T>, ntype: NormType, p: f64, q: f64) -> f64
where
    T: HasAfEnum + FloatingPoint,
{
    const FUNC: &str = "norm";
    let (m, n) = matrix_shape(FUNC, "input", input.dims());
    if m * n == 0 {
        return 0.0;
    }
    let positive = |name: &str, v: f64| {
        assert!(
            v > 0.0,
            "{FUNC}: `{name}` is {v}, but NormType::{ntype:?} needs a positive {name} (input \
             dims {})",
            input.dims()
        )
    };
    // |x| in f64 (of the value converted to f64 or c64), fused into each reduction.
    let a: Array<f64> =
        if T::is_complex() { abs(&input.cast::<c64>()) } else { abs(&input.cast::<f64>()) };
    match ntype {
        NormType::VECTOR_1 => sum_all(&a).0,
        NormType::VECTOR_INF => max_all(&a).0,
        NormType::VECTOR_2 => euclidean(&a),
        NormType::VECTOR_P => {
            positive("p", p);
            p_norm_all(&a, p)
        }
        NormType::MATRIX_1 => max_all(&sum(&a, 0)).0,
        NormType::MATRIX_INF => max_all(&sum(&a, 1)).0,
        NormType::MATRIX_2 => singular_values(FUNC, input).first().copied().unwrap_or(0.0),
        NormType::MATRIX_L_PQ => {
            positive("p", p);
            positive("q", q);
            let columns = if p.is_infinite() {
                max(&a, 0)
            } else {
                pow(&sum(&pow(&a, &p, false), 0), &(1.0 / p), false)
            };
            p_norm_all(&columns, q)
        }
    }
}

/// `sqrt(Σ x²)` of non-negative values, scaled by the largest so that it cannot overflow.
fn euclidean(a: &Array<f64>) -> f64 {
    let big = max_all(a).0;
    if big == 0.0 || !big.is_finite() {
        return big;
    }
    let scaled = a / big;
    big * sum_all(&(&scaled * &scaled)).0.sqrt()
}

/// `(Σ x^p)^(1/p)` of non-negative values (the largest for an infinite `p`).
fn p_norm_all(a: &Array<f64>, p: f64) -> f64 {
    if p.is_infinite() {
        return max_all(a).0;
    }
    if p == 1.0 {
        return sum_all(a).0;
    }
    if p == 2.0 {
        return euclidean(a);
    }
    sum_all(&pow(a, &p, false)).0.powf(1.0 / p)
}
