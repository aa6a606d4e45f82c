//! The error handler of arrayfire-rust: a process-wide callback that receives an [`AfError`]
//! code whenever an emberfire call fails in a way its caller did not choose to handle.
//!
//! Which failures reach the handler: failures of the environment (no usable backend, an invalid
//! device, out of memory, a driver or compiler error) raised by the plain, panicking form of a
//! call (`eval`, `matmul`, `set_device`, ...). The `try_` forms return the [`Error`] instead and
//! never call the handler. Programmer errors (shapes that do not match, an index out of range)
//! panic directly, as std's do; they are bugs to fix, not conditions to handle.
//!
//! When a handler returns instead of panicking, the call still panics with its message: a
//! failed call has no value to return (in arrayfire-rust it would return an invalid array).
//! So a handler observes failures (logs them, counts them, panics with its own payload); it
//! cannot turn them into successes. Use the `try_` forms for that.

use std::cell::RefCell;
use std::sync::RwLock;

use crate::compat::af_error::AfError;
use crate::error::Error;

/// The signature of an error handler: it receives the code of each failure.
///
/// ```
/// use emberfire::{AfError, ErrorCallback};
/// fn ignore(_: AfError) {}
/// let cb: ErrorCallback = ignore;
/// cb(AfError::SUCCESS);
/// ```
pub type ErrorCallback = fn(AfError);

/// A handler to install with [`register_error_handler`].
///
/// ```
/// use emberfire::{AfError, Callback};
/// fn quiet(_: AfError) {}
/// Callback::new(quiet).call(AfError::ERR_ARG);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Callback {
    cb: ErrorCallback,
}

impl Callback {
    /// Wraps `callback`.
    ///
    /// ```
    /// use emberfire::{AfError, Callback};
    /// let cb = Callback::new(|code| assert_eq!(code, AfError::ERR_SIZE));
    /// cb.call(AfError::ERR_SIZE);
    /// ```
    pub fn new(callback: ErrorCallback) -> Self {
        Callback { cb: callback }
    }

    /// Calls the wrapped function with `error_code`.
    ///
    /// ```
    /// use emberfire::{AfError, Callback};
    /// Callback::new(|_| {}).call(AfError::ERR_UNKNOWN);
    /// ```
    pub fn call(&self, error_code: AfError) {
        (self.cb)(error_code)
    }
}

// A plain function pointer, copied out before it is called: a handler that registers another
// handler, or panics, never runs while the lock is held.
static HANDLER: RwLock<ErrorCallback> = RwLock::new(handle_error_general);

thread_local! {
    // ArrayFire keeps the last message per thread, and reading it clears it.
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs `cb_value` as the handler for the whole process, replacing the previous one
/// (initially [`handle_error_general`]). Register it before other calls, so that all failures
/// reach it.
///
/// ```
/// use emberfire::{handle_error_general, register_error_handler, AfError, Callback};
/// fn log_and_panic(code: AfError) {
///     if code != AfError::SUCCESS {
///         panic!("emberfire failed: {code}");
///     }
/// }
/// register_error_handler(Callback::new(log_and_panic));
/// register_error_handler(Callback::new(handle_error_general)); // back to the default
/// ```
pub fn register_error_handler(cb_value: Callback) {
    *HANDLER.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = cb_value.cb;
}

/// The default handler: nothing for [`AfError::SUCCESS`]; otherwise it panics with the message
/// of the failure (the one [`get_last_error`] would return, which it consumes), or with the
/// code's description when there is none.
///
/// ```
/// use emberfire::{handle_error_general, AfError};
/// handle_error_general(AfError::SUCCESS); // no-op
/// let r = std::panic::catch_unwind(|| handle_error_general(AfError::ERR_NO_MEM));
/// assert!(r.is_err());
/// ```
pub fn handle_error_general(error_code: AfError) {
    if error_code == AfError::SUCCESS {
        return;
    }
    match LAST_ERROR.with(|l| l.borrow_mut().take()) {
        Some(message) => panic!("{message}"),
        None => panic!("{error_code} ({error_code:?} = {})", error_code as u32),
    }
}

/// Passes `error_code` to the registered handler.
///
/// ```
/// use emberfire::{AfError, HANDLE_ERROR};
/// HANDLE_ERROR(AfError::SUCCESS); // the default handler ignores success
/// ```
#[allow(non_snake_case)]
pub fn HANDLE_ERROR(error_code: AfError) {
    let cb = *HANDLER.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    cb(error_code)
}

/// The message of the last failure on this thread that went to the handler, and clears it;
/// `"No Last Error"` when there is none.
///
/// ```
/// use emberfire::{get_last_error, register_error_handler, set_device, AfError, Callback};
/// register_error_handler(Callback::new(|_| {})); // observe only
/// let r = std::panic::catch_unwind(|| set_device(1 << 20));
/// assert!(r.is_err()); // the call still fails
/// assert!(get_last_error().contains("invalid device"));
/// assert_eq!(get_last_error(), "No Last Error");
/// register_error_handler(Callback::new(emberfire::handle_error_general));
/// ```
pub fn get_last_error() -> String {
    LAST_ERROR.with(|l| l.borrow_mut().take()).unwrap_or_else(|| String::from("No Last Error"))
}

/// Reports a failure of the environment raised by a panicking call: records `message` (the
/// text these calls have always panicked with), hands the code of `e` to the registered
/// handler, and panics with the message if the handler returns.
#[cold]
#[track_caller]
pub(crate) fn raise(e: &Error, message: String) -> ! {
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(message.clone()));
    HANDLE_ERROR(AfError::from(e));
    panic!("{message}")
}

/// The plain, panicking form of a fallible call: `r.or_raise("matmul")` is the value, or the
/// failure reported through the error handler as "matmul: <error>" (see [`raise`]).
pub(crate) trait OrRaise<T> {
    fn or_raise(self, what: &str) -> T;
}

impl<T> OrRaise<T> for Result<T, Error> {
    #[track_caller]
    fn or_raise(self, what: &str) -> T {
        match self {
            Ok(v) => v,
            Err(e) => raise(&e, format!("{what}: {e}")),
        }
    }
}
