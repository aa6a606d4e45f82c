//! arrayfire-rust's `randu!` and `randn!` macros.

/// An array of uniform random numbers in [0, 1) from the default engine:
/// `randu!(d0, d1, ...)` for `f32`, `randu!(T; d0, d1, ...)` for another element type.
///
/// ```
/// use emberfire::randu;
/// let a = randu!(3, 2);
/// assert_eq!(a.dims(), emberfire::dim4!(3, 2));
/// assert!(a.to_vec().iter().all(|&x: &f32| (0.0..1.0).contains(&x)));
/// let bytes = randu!(u8; 16);
/// assert_eq!(bytes.elements(), 16);
/// ```
#[macro_export]
macro_rules! randu {
    ($($dim:expr),+ $(,)?) => {
        $crate::randu::<f32>($crate::dim4!($($dim),+))
    };
    ($type:ty; $($dim:expr),+ $(,)?) => {
        $crate::randu::<$type>($crate::dim4!($($dim),+))
    };
}

/// An array of standard normal random numbers from the default engine:
/// `randn!(d0, d1, ...)` for `f32`, `randn!(T; d0, d1, ...)` for `f64`, `c32` or `c64`.
///
/// ```
/// use emberfire::randn;
/// let a = randn!(4, 4);
/// assert_eq!(a.elements(), 16);
/// let z = randn!(f64; 8);
/// assert!(z.to_vec().iter().all(|x: &f64| x.is_finite()));
/// ```
#[macro_export]
macro_rules! randn {
    ($($dim:expr),+ $(,)?) => {
        $crate::randn::<f32>($crate::dim4!($($dim),+))
    };
    ($type:ty; $($dim:expr),+ $(,)?) => {
        $crate::randn::<$type>($crate::dim4!($($dim),+))
    };
}
