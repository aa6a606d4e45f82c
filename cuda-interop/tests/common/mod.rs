//! Shared helpers of the interop tests: choosing the CUDA device (or skipping where there is
//! none), serialising tests that watch device-wide counters, deterministic random inputs, and
//! the driver's view of free memory.

#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

use emberfire::Backend;
pub use rand::{Rng, SeedableRng};

/// Held by every test that needs the GPU: several of them fill the device's memory or read
/// device-wide counters, which tests running at the same time would disturb.
fn serial() -> MutexGuard<'static, ()> {
    static GPU: Mutex<()> = Mutex::new(());
    GPU.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes CUDA device 0 active for this thread and returns the guard that serialises GPU tests,
/// or `None` where CUDA cannot be used: the test then returns at once. A run that asks for CUDA
/// (`EMBERFIRE_BACKEND=cuda`, as on the GPU machine) must have it: there the missing device is
/// a failure, not a skip.
pub fn cuda() -> Option<MutexGuard<'static, ()>> {
    let why = match emberfire_cuda_interop::device_count() {
        Ok(_) => match emberfire::try_set_backend(Backend::CUDA) {
            Ok(()) => None,
            Err(e) => Some(e.to_string()),
        },
        Err(e) => Some(e.to_string()),
    };
    if let Some(why) = why {
        let wanted =
            std::env::var("EMBERFIRE_BACKEND").is_ok_and(|b| b.eq_ignore_ascii_case("cuda"));
        assert!(!wanted, "EMBERFIRE_BACKEND=cuda, but CUDA cannot be used: {why}");
        eprintln!("skipped (no usable CUDA device: {why})");
        return None;
    }
    let guard = serial();
    emberfire::set_device(dev());
    Some(guard)
}

/// The device under test: the one `EMBERFIRE_DEVICE` names (as emberfire's default device),
/// else 0, so that the suite runs on any GPU of a machine.
pub fn dev() -> i32 {
    std::env::var("EMBERFIRE_DEVICE").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// A deterministic generator for a test, from a name.
pub fn rng(name: &str) -> rand::rngs::StdRng {
    let seed = name
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// `n` random f32 values in `[-range, range]`, never all zero.
pub fn random_f32(name: &str, n: usize, range: f32) -> Vec<f32> {
    let mut r = rng(name);
    (0..n).map(|_| r.gen_range(-range..=range)).collect()
}

/// Free device memory in bytes, as the driver reports it (after the device has finished its
/// queued work, so frees have taken effect).
pub fn free_device_memory() -> usize {
    let ctx = emberfire_cuda_interop::context(dev()).expect("a CUDA device");
    ctx.synchronize().expect("synchronising the device");
    ctx.mem_get_info().expect("querying free memory").0
}

/// A kernel source no earlier run compiled (so the caches start cold for it).
pub fn unique(tag: &str, source: &str) -> String {
    let nonce =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("// {tag} {nonce} {}\n{source}", std::process::id())
}

/// Asserts `got` is within `tol` (relative to max(1, |want|)) of `want` at every index.
pub fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (*g as f64 - w).abs() / w.abs().max(1.0);
        assert!(err <= tol, "{what}: element {i} is {g}, expected {w}");
    }
}
