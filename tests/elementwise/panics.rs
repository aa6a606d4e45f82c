//! Programmer errors panic with a message that names the function, the argument and the
//! shapes or types involved.

use emberfire as ef;
use emberfire::{c32, dim4, Array};

fn col(n: usize) -> Array<f32> {
    Array::new(&vec![1.0f32; n], dim4!(n))
}

#[test]
#[should_panic(
    expected = "add: shapes [2 1 1 1] and [3 1 1 1] differ; pass batch = true to broadcast"
)]
fn shape_mismatch_without_batch() {
    let _ = ef::add(&col(2), &col(3), false);
}

#[test]
#[should_panic(expected = "add: shapes [2 3 1 1] and [2 1 1 1] differ; pass batch = true")]
fn broadcastable_shapes_need_batch() {
    let a = Array::new(&[1.0f32; 6], dim4!(2, 3));
    let _ = ef::add(&a, &col(2), false);
}

#[test]
#[should_panic(
    expected = "mul: shapes [2 1 1 1] and [3 1 1 1] do not broadcast: dimension 0 differs and neither size is 1"
)]
fn shape_mismatch_with_batch() {
    let _ = ef::mul(&col(2), &col(3), true);
}

#[test]
#[should_panic(expected = "lt: shapes [4 1 1 1] and [1 4 1 1] differ")]
fn comparison_shape_mismatch() {
    let _ = ef::lt(&col(4), &Array::new(&[1.0f32; 4], dim4!(1, 4)), false);
}

#[test]
#[should_panic(expected = "neq: shapes")]
fn array_only_function_shape_mismatch() {
    let _ = ef::neq(&col(4), &col(5), false);
}

#[test]
#[should_panic(expected = "select: shapes [2 1 1 1] and [3 1 1 1] and [2 1 1 1] do not broadcast")]
fn select_shape_mismatch() {
    let cond = Array::new(&[true, false], dim4!(2));
    let _ = ef::select(&col(3), &cond, &col(2));
}

#[test]
#[should_panic(expected = "clamp: shapes [4 1 1 1] and [3 1 1 1] and [3 1 1 1]")]
fn clamp_shape_mismatch() {
    let _ = ef::clamp(&col(4), &col(3), &col(3), true);
}

#[test]
#[should_panic(expected = "Array::new: `values` has 3 elements but dims [2 2 1 1] need 4")]
fn new_with_wrong_length() {
    let _ = Array::new(&[1i32, 2, 3], dim4!(2, 2));
}

#[test]
#[should_panic(expected = "Array::new: dims")]
fn new_with_too_many_elements() {
    let _ = Array::<u8>::new(&[], dim4!(u64::MAX, 4));
}

#[test]
#[should_panic(expected = "Array::host: `data` has 3 elements but the array [2 2 1 1] has 4")]
fn host_with_wrong_length() {
    let a = Array::new(&[1i32, 2, 3, 4], dim4!(2, 2));
    let mut out = [0i32; 3];
    a.host(&mut out);
}

#[test]
#[should_panic(expected = "Array::host: `data` has 5 elements but the array [4 1 1 1] has 4")]
fn try_host_with_wrong_length_panics_too() {
    let mut out = [0.0f32; 5];
    let _ = col(4).try_host(&mut out);
}

#[test]
#[should_panic(expected = "Array::new_strided: element (1,0,0,0) is at index 5, past the 4 values")]
fn new_strided_past_the_end() {
    let _ = Array::new_strided(&[1u8, 2, 3, 4], 0, dim4!(2), dim4!(5, 10, 10, 10));
}

#[test]
#[should_panic(expected = "range: dimension 4 is not in 0..4")]
fn range_dimension_out_of_range() {
    let _ = ef::range::<f32>(dim4!(2, 2), 4);
}

#[test]
#[should_panic(expected = "diag_create: input must be a vector or a matrix, got dims [2 2 2 1]")]
fn diag_create_of_a_volume() {
    let _ = ef::diag_create(&Array::new(&[0u8; 8], dim4!(2, 2, 2)), 0);
}

#[test]
#[should_panic(
    expected = "replace: cond [2 3 1 1] and b [2 1 1 1] would change the shape of a [2 1 1 1]"
)]
fn replace_that_would_grow_the_array() {
    let mut a = col(2);
    ef::replace(&mut a, &Array::new(&[true; 6], dim4!(2, 3)), &col(2));
}

#[test]
#[should_panic(expected = "replace_scalar: cond [2 3 1 1] would change the shape of a [2 1 1 1]")]
fn replace_scalar_that_would_grow_the_array() {
    let mut a = col(2);
    ef::replace_scalar(&mut a, &Array::new(&[true; 6], dim4!(2, 3)), 0.0);
}

#[test]
#[should_panic(expected = "rem: not defined for c32 arrays (operands are c32 and c32)")]
fn remainder_of_complex() {
    let z = Array::new(&[c32::new(1.0, 1.0)], dim4!(1));
    let _ = ef::rem(&z, &z, false);
}

#[test]
#[should_panic(expected = "bitand: not defined for f32 arrays")]
fn bitwise_and_of_floats() {
    let _ = ef::bitand(&col(2), &col(2), false);
}

#[test]
#[should_panic(expected = "shiftl: not defined for f64 arrays")]
fn shift_of_floats() {
    let a = Array::new(&[1.0f64], dim4!(1));
    let _ = ef::shiftl(&a, &1.0f64, false);
}

#[test]
#[should_panic(expected = "hypot: not defined for c64 arrays")]
fn hypot_of_complex() {
    let z = Array::new(&[emberfire::c64::new(1.0, 1.0)], dim4!(1));
    let _ = ef::hypot(&z, &z, false);
}
