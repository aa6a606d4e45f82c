//! What can go wrong when CUDA handles cross between your code and emberfire.

use std::fmt;

/// An interop call that could not be done. Every variant names the function that refused.
///
/// ```
/// use emberfire_cuda_interop::Error;
/// let e = Error::NullPointer { function: "array_from_device_ptr" };
/// assert!(e.to_string().contains("array_from_device_ptr"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// emberfire could not do its part: CUDA is not available, the device id does not exist,
    /// memory ran out, a driver or compiler call failed.
    Emberfire(emberfire::Error),
    /// A CUDA driver call made here failed.
    Driver {
        /// What was being done.
        doing: String,
        /// The driver's name for the failure, e.g. `CUDA_ERROR_INVALID_VALUE`.
        error: String,
    },
    /// A null device pointer.
    NullPointer {
        /// The function that refused it.
        function: &'static str,
    },
    /// An address that the driver does not know as device memory (host memory, or no
    /// allocation at all).
    NotDeviceMemory {
        /// The function that refused it.
        function: &'static str,
        /// The address.
        ptr: u64,
    },
    /// A pointer, stream, slice or array of another device than the one the call works on.
    WrongDevice {
        /// The function that refused it.
        function: &'static str,
        /// The device the call works on (emberfire's id, the CUDA ordinal).
        expected: i32,
        /// The device the handle belongs to.
        found: i32,
    },
    /// A pointer or stream of another CUDA context on the right device (emberfire uses the
    /// device's primary context).
    WrongContext {
        /// The function that refused it.
        function: &'static str,
        /// What was of another context ("pointer", "stream", "slice").
        what: &'static str,
    },
    /// The memory is smaller than the array that was to be made of it, or the array's size
    /// does not fit in memory at all.
    SizeMismatch {
        /// The function that refused it.
        function: &'static str,
        /// Bytes the array needs (`usize::MAX` when the size overflows).
        needed: usize,
        /// Bytes available at the address.
        available: usize,
    },
    /// Adopting memory needs the start of an allocation (it is freed with `cuMemFree`).
    NotAllocationStart {
        /// The function that refused it.
        function: &'static str,
        /// The address given.
        ptr: u64,
        /// The start of the allocation that contains it.
        start: u64,
    },
    /// An array that lives on the CPU backend where a CUDA array is needed.
    NotOnCuda {
        /// The function that refused it.
        function: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Emberfire(e) => write!(f, "{e}"),
            Error::Driver { doing, error } => write!(f, "{doing}: {error}"),
            Error::NullPointer { function } => write!(f, "{function}: null device pointer"),
            Error::NotDeviceMemory { function, ptr } => {
                write!(f, "{function}: {ptr:#x} is not CUDA device memory")
            }
            Error::WrongDevice { function, expected, found } => write!(
                f,
                "{function}: the handle belongs to CUDA device {found}, the call works on device \
                 {expected}"
            ),
            Error::WrongContext { function, what } => write!(
                f,
                "{function}: the {what} belongs to another CUDA context than the device's primary \
                 context, which emberfire uses"
            ),
            Error::SizeMismatch { function, needed, available } if *needed == usize::MAX => {
                write!(f, "{function}: the array's size overflows ({available} bytes available)")
            }
            Error::SizeMismatch { function, needed, available } => write!(
                f,
                "{function}: the array needs {needed} bytes, the memory has {available} from that \
                 address"
            ),
            Error::NotAllocationStart { function, ptr, start } => write!(
                f,
                "{function}: {ptr:#x} is inside the allocation starting at {start:#x}; only a \
                 whole allocation can be adopted"
            ),
            Error::NotOnCuda { function } => {
                write!(f, "{function}: the array lives on the CPU backend, not on a CUDA device")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Emberfire(e) => Some(e),
            _ => None,
        }
    }
}

impl From<emberfire::Error> for Error {
    fn from(e: emberfire::Error) -> Error {
        Error::Emberfire(e)
    }
}

/// A cudarc call's failure, for `?` in code that mixes cudarc and this crate.
impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Error {
        Error::driver("a CUDA driver call", e)
    }
}

impl Error {
    /// A failed driver call, with the driver's name for the error.
    pub(crate) fn driver(doing: impl Into<String>, e: cudarc::driver::DriverError) -> Error {
        let error = e
            .error_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("CUresult {}", e.0 as u32));
        Error::Driver { doing: doing.into(), error }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
