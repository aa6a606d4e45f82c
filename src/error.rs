//! Failures of the environment, returned by the `try_` forms of calls.
//!
//! Programmer errors (shapes that do not match, a host slice of the wrong length, an index out
//! of range) are not `Error`s: they panic with a message naming the function, the argument and
//! the shapes, as std and ndarray do.

use std::fmt;

/// What went wrong outside the caller's control.
///
/// ```
/// let e = emberfire::Error::BackendUnavailable("CUDA: no driver".into());
/// assert!(e.to_string().contains("no driver"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The requested backend cannot be used on this machine; the text says why.
    BackendUnavailable(String),
    /// A device id outside `0..device_count()`.
    InvalidDevice {
        /// The id asked for.
        requested: i32,
        /// How many devices there are.
        count: i32,
    },
    /// Memory could not be allocated, even after returning cached memory to the system.
    OutOfMemory {
        /// The size of the failed request, in bytes.
        bytes: usize,
    },
    /// A driver, compiler or library call failed; the text carries its message.
    Driver(String),
    /// An image file could not be read or written: it is missing, unreadable, corrupt, or in
    /// a format (or of a pixel layout) this build does not handle.
    ImageFile {
        /// The file's path, as given.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A tensor could not be exchanged through DLPack (see [`crate::dlpack`]): a device or an
    /// element type emberfire does not have, a tensor on another device than the active one, a
    /// layout it cannot hold. The text names the function and the reason.
    Exchange(String),
    /// A collective between ranks could not be formed or carried out: a rank that did not
    /// arrive in time, ranks that disagree on the group, a port in use, an argument the call
    /// cannot take (arrays not one per rank, on the wrong device, of a type it cannot reduce).
    /// The text names the function and the reason.
    Collective(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BackendUnavailable(why) => write!(f, "backend unavailable: {why}"),
            Error::InvalidDevice { requested, count } => {
                write!(f, "invalid device {requested}: there are {count} device(s)")
            }
            Error::OutOfMemory { bytes } => write!(f, "out of memory allocating {bytes} bytes"),
            Error::Driver(msg) => write!(f, "driver error: {msg}"),
            Error::ImageFile { path, reason } => write!(f, "image file {path:?}: {reason}"),
            Error::Exchange(why) => write!(f, "exchange failed: {why}"),
            Error::Collective(why) => write!(f, "collective failed: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// `Result` with emberfire's error.
pub type Result<T> = std::result::Result<T, Error>;
