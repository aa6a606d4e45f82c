//! The `_v2` forms of the interpolation functions, which write into an output array the
//! caller passes, with arrayfire-rust's signatures.
//!
//! `output` is updated as a value, as [`gemm`](crate::gemm) updates its output: it must have
//! the result's dims, or no elements at all (then it takes the result's dims); arrays that
//! shared its data (clones of it, expressions built on it) keep the old values.

use super::approx::{approx1, approx2};
use super::approx_uniform::{approx1_uniform, approx2_uniform};
use super::InterpType;
use crate::array::Array;
use crate::dtype::{FloatingPoint, HasAfEnum, RealFloating};

/// Stores `result` in `output` when their shapes agree or `output` is empty.
fn store<T: HasAfEnum>(func: &str, output: &mut Array<T>, result: Array<T>) {
    assert!(
        output.elements() == 0 || output.dims() == result.dims(),
        "{func}: `output` has dims {}, but the result has dims {} (pass an array of the \
         result's dims, or an empty one)",
        output.dims(),
        result.dims()
    );
    *output = result;
}

/// [`approx1`], writing the result into `output` (of the result's dims, or empty).
///
/// ```
/// use emberfire::{approx1_v2, dim4, Array, InterpType};
/// let y = Array::new(&[0.0f32, 10.0, 20.0], dim4!(3));
/// let x = Array::new(&[0.5f32, 1.25], dim4!(2));
/// let mut out = Array::<f32>::new_empty(dim4!(2));
/// approx1_v2(&mut out, &y, &x, InterpType::LINEAR, 0.0);
/// assert_eq!(out.to_vec(), vec![5.0, 12.5]);
/// ```
pub fn approx1_v2<T, P>(
    output: &mut Array<T>,
    input: &Array<T>,
    pos: &Array<P>,
    method: InterpType,
    off_grid: f32,
) where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    store("approx1_v2", output, approx1(input, pos, method, off_grid));
}

/// [`approx1_uniform`], writing the result into `output` (of the result's dims, or empty).
///
/// ```
/// use emberfire::{approx1_uniform_v2, dim4, Array, InterpType};
/// let y = Array::new(&[1.0f64, 2.0, 4.0], dim4!(3)); // at 10, 20, 30
/// let x = Array::new(&[15.0f64, 25.0], dim4!(2));
/// let mut out = Array::new(&[0.0f64, 0.0], dim4!(2));
/// approx1_uniform_v2(&mut out, &y, &x, 0, 10.0, 10.0, InterpType::LINEAR, 0.0);
/// assert_eq!(out.to_vec(), vec![1.5, 3.0]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn approx1_uniform_v2<T, P>(
    output: &mut Array<T>,
    input: &Array<T>,
    pos: &Array<P>,
    interp_dim: i32,
    start: f64,
    step: f64,
    method: InterpType,
    off_grid: f32,
) where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    let r = approx1_uniform(input, pos, interp_dim, start, step, method, off_grid);
    store("approx1_uniform_v2", output, r);
}

/// [`approx2`], writing the result into `output` (of the result's dims, or empty).
///
/// ```
/// use emberfire::{approx2_v2, dim4, Array, InterpType};
/// let img = Array::new(&[0.0f32, 1.0, 10.0, 11.0], dim4!(2, 2));
/// let x = Array::new(&[0.5f32], dim4!(1));
/// let y = Array::new(&[1.0f32], dim4!(1));
/// let mut out = Array::<f32>::new_empty(dim4!(0));
/// approx2_v2(&mut out, &img, &x, &y, InterpType::BILINEAR, 0.0);
/// assert_eq!(out.to_vec(), vec![10.5]);
/// ```
pub fn approx2_v2<T, P>(
    output: &mut Array<T>,
    input: &Array<T>,
    pos0: &Array<P>,
    pos1: &Array<P>,
    method: InterpType,
    off_grid: f32,
) where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    store("approx2_v2", output, approx2(input, pos0, pos1, method, off_grid));
}

/// [`approx2_uniform`], writing the result into `output` (of the result's dims, or empty).
///
/// ```
/// use emberfire::{approx2_uniform_v2, dim4, Array, InterpType};
/// let img = Array::new(&[0.0f32, 1.0, 10.0, 11.0], dim4!(2, 2)); // x + 10 y at x, y in {0, 1}
/// let x = Array::new(&[1.0f32], dim4!(1));
/// let y = Array::new(&[0.5f32], dim4!(1));
/// let mut out = Array::new(&[0.0f32], dim4!(1));
/// approx2_uniform_v2(&mut out, &img, &x, 0, 0.0, 1.0, &y, 1, 0.0, 1.0, InterpType::BILINEAR, 0.0);
/// assert_eq!(out.to_vec(), vec![6.0]);
/// ```
#[allow(clippy::too_many_arguments)]
pub fn approx2_uniform_v2<T, P>(
    output: &mut Array<T>,
    input: &Array<T>,
    pos0: &Array<P>,
    interp_dim0: i32,
    start0: f64,
    step0: f64,
    pos1: &Array<P>,
    interp_dim1: i32,
    start1: f64,
    step1: f64,
    method: InterpType,
    off_grid: f32,
) where
    T: HasAfEnum + FloatingPoint,
    P: HasAfEnum + RealFloating,
{
    let r = approx2_uniform(
        input,
        pos0,
        interp_dim0,
        start0,
        step0,
        pos1,
        interp_dim1,
        start1,
        step1,
        method,
        off_grid,
    );
    store("approx2_uniform_v2", output, r);
}
