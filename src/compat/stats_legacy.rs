//! The statistics forms that arrayfire-rust 3.8 deprecated but still exports: a `bool` says
//! which normalisation a variance uses, where the current forms take a [`VarianceBias`].
//!
//! They are kept so that code written against those signatures compiles unchanged; each one
//! forwards to its `_v2` form. As in arrayfire-rust, `isbiased == true` selects
//! [`VarianceBias::SAMPLE`] (divide by `n - 1`) and `false` selects
//! [`VarianceBias::POPULATION`] (divide by `n`), whatever the word "biased" suggests; the
//! forms without a flag use the population normalisation.

use crate::array::Array;
use crate::dtype::{CovarianceComputable, HasAfEnum};
use crate::ops::stats::{cov_v2, stdev_all_v2, stdev_v2, var_all_v2, var_v2, VarianceBias};

/// arrayfire-rust's reading of the `isbiased` flag.
fn bias_of(isbiased: bool) -> VarianceBias {
    if isbiased {
        VarianceBias::SAMPLE
    } else {
        VarianceBias::POPULATION
    }
}

/// The variance along `dim`: the sample variance (divided by `n - 1`) when `isbiased` is true,
/// the population variance (divided by `n`) when it is false. Forwards to [`var_v2`], whose
/// rules and panics it shares.
///
/// ```
/// # #![allow(deprecated)]
/// use emberfire::{dim4, var, Array};
/// let a = Array::new(&[1.0f64, 3.0, 2.0, 6.0], dim4!(2, 2));
/// assert_eq!(var(&a, false, 0).to_vec(), vec![1.0, 4.0]);
/// assert_eq!(var(&a, true, 0).to_vec(), vec![2.0, 8.0]);
/// ```
#[deprecated(
    since = "0.1.0",
    note = "use var_v2 (VarianceBias names the normalisation), as arrayfire-rust does since 3.8.0"
)]
pub fn var<T>(arr: &Array<T>, isbiased: bool, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
{
    var_v2(arr, bias_of(isbiased), dim)
}

/// The covariance of `x` and `y`, normalised by `n - 1` when `isbiased` is true and by `n`
/// when it is false. Forwards to [`cov_v2`], whose rules and panics it shares.
///
/// ```
/// # #![allow(deprecated)]
/// use emberfire::{cov, dim4, Array};
/// let x = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
/// let y = Array::new(&[2.0f64, 4.0, 9.0], dim4!(3));
/// assert_eq!(cov(&x, &y, true).to_vec(), vec![3.5]);
/// assert_eq!(cov(&x, &y, false).to_vec(), vec![7.0 / 3.0]);
/// ```
#[deprecated(
    since = "0.1.0",
    note = "use cov_v2 (VarianceBias names the normalisation), as arrayfire-rust does since 3.8.0"
)]
pub fn cov<T>(x: &Array<T>, y: &Array<T>, isbiased: bool) -> Array<T::MeanOutType>
where
    T: HasAfEnum + CovarianceComputable,
    T::MeanOutType: HasAfEnum,
{
    cov_v2(x, y, bias_of(isbiased))
}

/// The variance of all elements as `(variance, 0.0)`: divided by `n - 1` when `isbiased` is
/// true, by `n` when it is false. Forwards to [`var_all_v2`].
///
/// ```
/// # #![allow(deprecated)]
/// use emberfire::{dim4, var_all, Array};
/// let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// assert_eq!(var_all(&a, false), (1.25, 0.0));
/// assert_eq!(var_all(&a, true), (5.0 / 3.0, 0.0));
/// ```
#[deprecated(
    since = "0.1.0",
    note = "use var_all_v2 (VarianceBias names the normalisation), as arrayfire-rust does since 3.8.0"
)]
pub fn var_all<T: HasAfEnum>(input: &Array<T>, isbiased: bool) -> (f64, f64) {
    var_all_v2(input, bias_of(isbiased))
}

/// The population standard deviation along `dim` (the square root of the variance divided by
/// `n`). Forwards to [`stdev_v2`] with [`VarianceBias::POPULATION`].
///
/// ```
/// # #![allow(deprecated)]
/// use emberfire::{dim4, stdev, Array};
/// let a = Array::new(&[1.0f32, 3.0, 2.0, 6.0], dim4!(2, 2));
/// assert_eq!(stdev(&a, 0).to_vec(), vec![1.0, 2.0]);
/// ```
#[deprecated(
    since = "0.1.0",
    note = "use stdev_v2 (VarianceBias names the normalisation), as arrayfire-rust does since 3.8.0"
)]
pub fn stdev<T>(input: &Array<T>, dim: i64) -> Array<T::MeanOutType>
where
    T: HasAfEnum,
    T::MeanOutType: HasAfEnum,
{
    stdev_v2(input, VarianceBias::POPULATION, dim)
}

/// The population standard deviation of all elements, as `(stdev, 0.0)`. Forwards to
/// [`stdev_all_v2`] with [`VarianceBias::POPULATION`]. (arrayfire-rust 3.8 exports this form
/// without marking it deprecated, and so does emberfire; [`stdev_all_v2`] chooses the
/// normalisation.)
///
/// ```
/// use emberfire::{dim4, stdev_all, Array};
/// let a = Array::new(&[2i32, 4, 4, 4, 5, 5, 7, 9], dim4!(8));
/// assert_eq!(stdev_all(&a), (2.0, 0.0));
/// ```
pub fn stdev_all<T: HasAfEnum>(input: &Array<T>) -> (f64, f64) {
    stdev_all_v2(input, VarianceBias::POPULATION)
}
