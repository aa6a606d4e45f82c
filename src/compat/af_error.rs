//! `AfError`: ArrayFire's numeric error codes, for code that matches on them (error handlers
//! registered with [`register_error_handler`](crate::register_error_handler)).
//!
//! emberfire's own failures are [`Error`](crate::Error)s; each maps to one code here, so that a
//! handler written for arrayfire-rust sees the code ArrayFire would have reported.

use std::fmt;

use crate::error::Error;

/// An ArrayFire error code; the names and the numeric values are ArrayFire's.
///
/// ```
/// use emberfire::AfError;
/// assert_eq!(AfError::ERR_NO_MEM as u32, 101);
/// assert_eq!(AfError::from(202), AfError::ERR_ARG);
/// assert!(AfError::ERR_SIZE.to_string().contains("size"));
/// ```
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AfError {
    /// No error.
    SUCCESS = 0,
    /// Memory ran out on the device or the host.
    ERR_NO_MEM = 101,
    /// A driver call failed.
    ERR_DRIVER = 102,
    /// The runtime environment failed (a backend that cannot be used, a compiler error).
    ERR_RUNTIME = 103,
    /// An argument is not a valid array.
    ERR_INVALID_ARRAY = 201,
    /// An argument has a bad value.
    ERR_ARG = 202,
    /// A size or shape is wrong.
    ERR_SIZE = 203,
    /// The function does not accept this element type.
    ERR_TYPE = 204,
    /// The element types of the inputs do not go together.
    ERR_DIFF_TYPE = 205,
    /// The function cannot run batched.
    ERR_BATCH = 207,
    /// An input lives on another device.
    ERR_DEVICE = 208,
    /// The option or parameter is not supported.
    ERR_NOT_SUPPORTED = 301,
    /// This build does not include the feature.
    ERR_NOT_CONFIGURED = 302,
    /// The device does not compute in double precision.
    ERR_NO_DBL = 401,
    /// No graphics support.
    ERR_NO_GFX = 402,
    /// An internal error, in the library or one it calls.
    ERR_INTERNAL = 998,
    /// An error of unknown origin.
    ERR_UNKNOWN = 999,
}

impl AfError {
    const ALL: [AfError; 17] = [
        AfError::SUCCESS,
        AfError::ERR_NO_MEM,
        AfError::ERR_DRIVER,
        AfError::ERR_RUNTIME,
        AfError::ERR_INVALID_ARRAY,
        AfError::ERR_ARG,
        AfError::ERR_SIZE,
        AfError::ERR_TYPE,
        AfError::ERR_DIFF_TYPE,
        AfError::ERR_BATCH,
        AfError::ERR_DEVICE,
        AfError::ERR_NOT_SUPPORTED,
        AfError::ERR_NOT_CONFIGURED,
        AfError::ERR_NO_DBL,
        AfError::ERR_NO_GFX,
        AfError::ERR_INTERNAL,
        AfError::ERR_UNKNOWN,
    ];
}

/// The code with this numeric value. Panics for a number that is no code (arrayfire-rust's
/// conversion accepts any number in 0..=999 and then holds an invalid enum value).
///
/// ```
/// use emberfire::AfError;
/// assert_eq!(AfError::from(0), AfError::SUCCESS);
/// assert_eq!(AfError::from(999), AfError::ERR_UNKNOWN);
/// ```
impl From<i32> for AfError {
    fn from(code: i32) -> Self {
        AfError::ALL
            .into_iter()
            .find(|e| *e as i64 == i64::from(code))
            .unwrap_or_else(|| panic!("AfError::from: {code} is not an ArrayFire error code"))
    }
}

/// The code ArrayFire reports for the same kind of failure.
///
/// ```
/// use emberfire::{AfError, Error};
/// assert_eq!(AfError::from(&Error::OutOfMemory { bytes: 8 }), AfError::ERR_NO_MEM);
/// ```
impl From<&Error> for AfError {
    fn from(e: &Error) -> Self {
        match e {
            Error::BackendUnavailable(_) => AfError::ERR_RUNTIME,
            Error::InvalidDevice { .. } => AfError::ERR_ARG,
            Error::OutOfMemory { .. } => AfError::ERR_NO_MEM,
            Error::Driver(_) => AfError::ERR_DRIVER,
            Error::ImageFile { .. } => AfError::ERR_NOT_SUPPORTED,
            Error::Exchange(_) => AfError::ERR_NOT_SUPPORTED,
            Error::Collective(_) => AfError::ERR_RUNTIME,
        }
    }
}

impl fmt::Display for AfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AfError::SUCCESS => "success",
            AfError::ERR_NO_MEM => "out of device or host memory",
            AfError::ERR_DRIVER => "device driver error",
            AfError::ERR_RUNTIME => "runtime environment error",
            AfError::ERR_INVALID_ARRAY => "invalid array argument",
            AfError::ERR_ARG => "invalid argument",
            AfError::ERR_SIZE => "wrong size",
            AfError::ERR_TYPE => "element type not supported by this function",
            AfError::ERR_DIFF_TYPE => "element types of the inputs do not match",
            AfError::ERR_BATCH => "batched operation not supported",
            AfError::ERR_DEVICE => "input belongs to another device",
            AfError::ERR_NOT_SUPPORTED => "option or parameter not supported",
            AfError::ERR_NOT_CONFIGURED => "feature not included in this build",
            AfError::ERR_NO_DBL => "device has no double precision",
            AfError::ERR_NO_GFX => "no graphics support",
            AfError::ERR_INTERNAL => "internal error",
            AfError::ERR_UNKNOWN => "unknown error",
        })
    }
}
