//! The macros of arrayfire-rust: `dim4!`, `constant!`, `af_print!`, `join_many!`, `mem_info!`.

/// A [`Dim4`](crate::Dim4) from one to four sizes; missing sizes are 1.
///
/// ```
/// use emberfire::dim4;
/// assert_eq!(dim4!(3, 2).get(), &[3, 2, 1, 1]);
/// ```
#[macro_export]
macro_rules! dim4 {
    ($d0:expr) => {
        $crate::Dim4::new(&[$d0 as u64, 1, 1, 1])
    };
    ($d0:expr, $d1:expr) => {
        $crate::Dim4::new(&[$d0 as u64, $d1 as u64, 1, 1])
    };
    ($d0:expr, $d1:expr, $d2:expr) => {
        $crate::Dim4::new(&[$d0 as u64, $d1 as u64, $d2 as u64, 1])
    };
    ($d0:expr, $d1:expr, $d2:expr, $d3:expr) => {
        $crate::Dim4::new(&[$d0 as u64, $d1 as u64, $d2 as u64, $d3 as u64])
    };
}

/// A constant array: `constant!(value; d0, d1, ...)`.
///
/// ```
/// use emberfire::constant;
/// let a = constant!(7u8; 2, 2);
/// assert_eq!(a.to_vec(), vec![7; 4]);
/// ```
#[macro_export]
macro_rules! constant {
    ($value:expr; $($dim:expr),+ $(,)?) => {
        $crate::constant($value, $crate::dim4!($($dim),+))
    };
}

/// Prints arrays in ArrayFire's layout, each under its expression as a name.
///
/// ```
/// use emberfire::{af_print, Array, dim4};
/// let a = Array::new(&[1.0f32, 2.0], dim4!(2));
/// af_print!("a is", a);
/// af_print!("with 2 digits", a, 2);
/// ```
#[macro_export]
macro_rules! af_print {
    ($msg:expr, $x:expr) => {
        $crate::print_gen($msg.to_string(), &$x, Some(4))
    };
    ($msg:expr, $x:expr, $precision:expr) => {
        $crate::print_gen($msg.to_string(), &$x, Some($precision))
    };
}

/// Joins arrays along a dimension: `join_many![dim; a, b, c]` is
/// [`join_many`](fn@crate::join_many)`(dim, vec![a, b, c])`, each argument an `&Array`.
///
/// ```
/// use emberfire::{join_many, Array, dim4};
/// let a = &Array::new(&[1, 2], dim4!(2));
/// let b = &Array::new(&[3], dim4!(1));
/// assert_eq!(join_many![0; a, b, a].to_vec(), vec![1, 2, 3, 1, 2]);
/// ```
#[macro_export]
macro_rules! join_many {
    [$dim:expr; $($x:expr),+ $(,)?] => {
        $crate::join_many($dim, vec![$($x),+])
    };
}

/// Prints [`device_mem_info`](crate::device_mem_info) under a title: the bytes and buffers that
/// arrays hold on the active device, and how many of them are locked by the user.
///
/// ```
/// use emberfire::{mem_info, randu, print, Dim4};
/// let a = randu::<f32>(Dim4::new(&[5, 5, 1, 1]));
/// print(&a);
/// mem_info!("after randu");
/// ```
#[macro_export]
macro_rules! mem_info {
    [$msg:expr] => {{
        let (bytes, buffers, lbytes, lbuffers) = $crate::device_mem_info();
        println!("AF Memory: {:?}", $msg);
        println!("Allocated [Bytes | Buffers] = [ {} | {} ]", bytes, buffers);
        println!("In Use    [Bytes | Buffers] = [ {} | {} ]", lbytes, lbuffers);
    }};
}
