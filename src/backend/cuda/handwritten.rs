//! Hand-written kernels (transposes, copies): compiling a variant once per device, and
//! launching it with 8-byte arguments.
//!
//! A variant is the kernel's `.cu` file with a few `#define`s in front (the element type, a
//! tile size). Compiled variants are kept by (device, variant name), so a launch does not
//! rebuild or hash the source; the NVRTC cache below also keeps them on disk.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use super::nvrtc::KernelFn;
use super::runtime::Device;
use crate::error::Error;

type Variants = HashMap<(usize, String), Arc<KernelFn>>;

/// The kernel `entry` of the variant called `name`, whose source `source` gives, compiled for
/// `dev` on first use.
pub(crate) fn kernel(
    dev: &Device,
    name: &str,
    entry: &str,
    source: impl FnOnce() -> String,
) -> Result<Arc<KernelFn>, Error> {
    static VARIANTS: OnceLock<Mutex<Variants>> = OnceLock::new();
    let map = VARIANTS.get_or_init(Default::default);
    let key = (dev.ordinal(), name.to_string());
    if let Some(k) = map.lock().unwrap().get(&key) {
        return Ok(k.clone());
    }
    let k = Arc::new(dev.kernels().get(dev, &source(), entry)?);
    map.lock().unwrap().insert(key, k.clone());
    Ok(k)
}

/// Launches `k` on `dev`'s stream with `args`, each an 8-byte value (a device address, a
/// 64-bit integer).
///
/// # Safety
///
/// `args` match the kernel's parameters in order, each parameter being 8 bytes; every address
/// is live memory of `dev`, large enough for what the kernel reads and writes with this grid,
/// and stays allocated until the kernel has run (memory freed afterwards is reused only in the
/// stream's order).
pub(crate) unsafe fn launch(
    k: &KernelFn,
    dev: &Device,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    args: &[u64],
) -> Result<(), Error> {
    let mut slots = args.to_vec();
    let mut params: Vec<*mut c_void> =
        slots.iter_mut().map(|s| s as *mut u64 as *mut c_void).collect();
    // SAFETY: the caller's contract; the slots outlive the call, which copies them.
    unsafe { k.launch_raw(grid, block, 0, dev, &mut params) }
}
