//! The error handler: which failures reach it, with which code and message, and that the
//! default keeps emberfire's panics as they were. The handler is process-wide, so the tests
//! that install one take the lock that every test of this binary takes (`serial`) and restore
//! the default before releasing it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::MutexGuard;

use emberfire::*;

/// Holds the binary's `serial` lock; puts the default handler back when dropped, even after a
/// panic.
struct Installed(#[allow(dead_code)] MutexGuard<'static, ()>);

impl Installed {
    fn new(cb: ErrorCallback) -> Installed {
        let guard = crate::serial();
        register_error_handler(Callback::new(cb));
        let _ = get_last_error(); // start from a clean slate on this thread
        Installed(guard)
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        register_error_handler(Callback::new(handle_error_general));
    }
}

fn panic_text(r: std::thread::Result<()>) -> String {
    let payload = r.expect_err("the call should have panicked");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// An id no machine has.
const NO_DEVICE: i32 = 1 << 20;

/// arrayfire-rust's `register_error_handler` example, with its `use` line changed.
#[test]
fn arrayfire_example_registers_a_handler() {
    fn handle_error(error_code: AfError) {
        match error_code {
            AfError::SUCCESS => {} /* No-op */
            _ => panic!("Error message: {}", error_code),
        }
    }
    let _installed = Installed::new(handle_error_general);
    register_error_handler(Callback::new(handle_error));
    info();
}

#[test]
fn default_handler_panics_with_the_message_calls_always_gave() {
    let _installed = Installed::new(handle_error_general);
    let text = panic_text(catch_unwind(|| set_device(NO_DEVICE)));
    let count = device_count();
    assert_eq!(
        text,
        format!("set_device: invalid device {NO_DEVICE}: there are {count} device(s)")
    );
    // the default handler consumed the message it panicked with
    assert_eq!(get_last_error(), "No Last Error");

    let text = panic_text(catch_unwind(|| set_backend(Backend::OPENCL)));
    assert!(text.starts_with("set_backend(OPENCL): backend unavailable"), "{text}");
}

static CALLS: AtomicUsize = AtomicUsize::new(0);
static LAST_CODE: AtomicU32 = AtomicU32::new(u32::MAX);

fn record(code: AfError) {
    CALLS.fetch_add(1, Ordering::SeqCst);
    LAST_CODE.store(code as u32, Ordering::SeqCst);
}

#[test]
fn a_returning_handler_observes_and_the_call_still_fails() {
    let _installed = Installed::new(record);
    CALLS.store(0, Ordering::SeqCst);

    let text = panic_text(catch_unwind(|| set_device(NO_DEVICE)));
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(AfError::from(LAST_CODE.load(Ordering::SeqCst) as i32), AfError::ERR_ARG);
    assert_eq!(get_last_error(), text, "the handler leaves the message for get_last_error");
    assert_eq!(get_last_error(), "No Last Error", "reading the message clears it");

    let _ = panic_text(catch_unwind(|| set_backend(Backend::OPENCL)));
    assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    assert_eq!(LAST_CODE.load(Ordering::SeqCst), AfError::ERR_RUNTIME as u32);
    assert!(get_last_error().contains("OpenCL"));

    let sync_text = panic_text(catch_unwind(|| sync(NO_DEVICE)));
    assert_eq!(CALLS.load(Ordering::SeqCst), 3);
    assert!(sync_text.starts_with("sync: invalid device"), "{sync_text}");
}

#[test]
fn try_forms_and_successful_calls_never_reach_the_handler() {
    let _installed = Installed::new(record);
    CALLS.store(0, Ordering::SeqCst);
    assert!(matches!(try_set_device(NO_DEVICE), Err(Error::InvalidDevice { .. })));
    assert!(try_set_backend(Backend::OPENCL).is_err());
    let a = Array::new(&[1.0f64, 2.0], dim4!(2));
    assert_eq!(sum_all(&(&a * 3.0)).0, 9.0);
    init();
    sync(-1); // the active device, as in ArrayFire
    assert_eq!(CALLS.load(Ordering::SeqCst), 0);
    assert_eq!(get_last_error(), "No Last Error");
}

#[test]
fn a_panicking_handler_decides_the_payload() {
    fn mine(code: AfError) {
        panic!("custom handler saw {code:?}");
    }
    let _installed = Installed::new(mine);
    let text = panic_text(catch_unwind(|| set_device(NO_DEVICE)));
    assert_eq!(text, "custom handler saw ERR_ARG");
}

#[test]
fn last_error_is_per_thread() {
    let _installed = Installed::new(record);
    let _ = catch_unwind(|| set_device(NO_DEVICE));
    let other = std::thread::spawn(get_last_error).join().unwrap();
    assert_eq!(other, "No Last Error");
    assert!(get_last_error().contains("invalid device"));
}

#[test]
fn handle_error_dispatches_to_the_registered_callback() {
    let _installed = Installed::new(record);
    CALLS.store(0, Ordering::SeqCst);
    HANDLE_ERROR(AfError::ERR_NO_DBL);
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(LAST_CODE.load(Ordering::SeqCst), 401);
}

#[test]
fn default_handler_without_a_message_names_the_code() {
    let _installed = Installed::new(handle_error_general);
    HANDLE_ERROR(AfError::SUCCESS);
    let text = panic_text(catch_unwind(AssertUnwindSafe(|| HANDLE_ERROR(AfError::ERR_SIZE))));
    assert!(text.contains("ERR_SIZE") && text.contains("203"), "{text}");
}

#[test]
fn af_error_codes_are_arrayfires() {
    let _serial = crate::serial();
    let table = [
        (AfError::SUCCESS, 0),
        (AfError::ERR_NO_MEM, 101),
        (AfError::ERR_DRIVER, 102),
        (AfError::ERR_RUNTIME, 103),
        (AfError::ERR_INVALID_ARRAY, 201),
        (AfError::ERR_ARG, 202),
        (AfError::ERR_SIZE, 203),
        (AfError::ERR_TYPE, 204),
        (AfError::ERR_DIFF_TYPE, 205),
        (AfError::ERR_BATCH, 207),
        (AfError::ERR_DEVICE, 208),
        (AfError::ERR_NOT_SUPPORTED, 301),
        (AfError::ERR_NOT_CONFIGURED, 302),
        (AfError::ERR_NO_DBL, 401),
        (AfError::ERR_NO_GFX, 402),
        (AfError::ERR_INTERNAL, 998),
        (AfError::ERR_UNKNOWN, 999),
    ];
    let mut texts = std::collections::HashSet::new();
    for (code, value) in table {
        assert_eq!(code as u32, value);
        assert_eq!(AfError::from(value as i32), code);
        assert!(texts.insert(code.to_string()), "{code:?} shares its description");
    }
    for bad in [-1, 1, 100, 206, 1000] {
        let text = panic_text(catch_unwind(|| {
            let _ = AfError::from(bad);
        }));
        assert!(text.contains(&bad.to_string()), "{text}");
    }
    assert_eq!(AfError::from(&Error::OutOfMemory { bytes: 1 }), AfError::ERR_NO_MEM);
    assert_eq!(AfError::from(&Error::Driver("x".into())), AfError::ERR_DRIVER);
}
