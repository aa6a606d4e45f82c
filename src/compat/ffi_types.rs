//! The C type names of arrayfire-rust's FFI layer, for code that names them, and the one use of
//! an `af_array` that ported code makes: a null handle turned into an empty `Array`.
//!
//! emberfire has no C library behind it, so there are no ArrayFire handles: an `af_array` can
//! only be null here. arrayfire-rust's `gemm` example starts from
//! `(std::ptr::null_mut() as af_array).into()` to get an array for `gemm` to fill; emberfire
//! gives an empty array (0 elements), which [`gemm`](crate::gemm) replaces with the product. A
//! non-null handle would be a live ArrayFire array that emberfire cannot adopt; converting one
//! panics.

#![allow(non_camel_case_types)]

use std::ffi::{c_longlong, c_ulonglong, c_void};

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;

/// ArrayFire's signed size type, C's `long long`.
///
/// ```
/// let n: emberfire::dim_t = -1;
/// assert_eq!(std::mem::size_of_val(&n), 8);
/// ```
pub type dim_t = c_longlong;

/// ArrayFire's unsigned 64-bit type, C's `unsigned long long`.
///
/// ```
/// let n: emberfire::u64_t = u64::MAX;
/// assert_eq!(n, u64::MAX);
/// ```
pub type u64_t = c_ulonglong;

/// C's `void*`, as raw pointers are typed in arrayfire-rust's signatures.
///
/// ```
/// let p: emberfire::void_ptr = std::ptr::null_mut();
/// assert!(p.is_null());
/// ```
pub type void_ptr = *mut c_void;

/// ArrayFire's array handle. In emberfire it is only ever null: see [`Array::from`] below.
///
/// ```
/// use emberfire::{af_array, Array};
/// let empty: Array<f32> = (std::ptr::null_mut() as af_array).into();
/// assert_eq!(empty.elements(), 0);
/// ```
pub type af_array = *mut c_void;

/// A null `af_array` becomes an empty array (dims 0×1×1×1) of type `T`, ready to be filled by
/// [`gemm`](crate::gemm) or replaced by assignment. Panics for a non-null handle: emberfire has
/// no ArrayFire handles and cannot adopt one (device memory is adopted with
/// [`Array::new_from_device_ptr`] instead).
///
/// ```
/// use emberfire::{af_array, dim4, gemm, Array, MatProp};
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let mut c: Array<f64> = (std::ptr::null_mut() as af_array).into();
/// gemm(&mut c, MatProp::NONE, MatProp::NONE, vec![1.0], &a, &a, vec![0.0]);
/// assert_eq!(c.to_vec(), vec![7.0, 10.0, 15.0, 22.0]);
/// ```
impl<T: HasAfEnum> From<af_array> for Array<T> {
    fn from(handle: af_array) -> Self {
        assert!(
            handle.is_null(),
            "Array::from(af_array): {handle:p} is a non-null ArrayFire handle; emberfire has no \
             ArrayFire arrays to adopt (only a null handle, giving an empty array, is accepted)"
        );
        Array::new_empty(Dim4::new(&[0, 1, 1, 1]))
    }
}
