//! Copies between two CUDA devices.
//!
//! The copy runs on the destination device's current stream. Two events order it with the
//! rest of the program without blocking the host: the destination stream waits for the work
//! that produced the source, and the source device's stream waits for the copy, so the
//! source's memory is not reused (or rewritten) before the copy has read it.
//!
//! Where the two devices can reach each other's memory (NVLink, or PCIe peer-to-peer), peer
//! access is enabled once per pair, both ways, and the copy goes directly from one device to
//! the other; where they cannot, the driver stages it through host memory. Both are the same
//! `cuMemcpyPeerAsync` call.

use std::collections::HashSet;
use std::sync::Mutex;

use cudarc::driver::{result as cu, sys};

use super::driver_error;
use super::event::DeviceEvent;
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::error::Error;
use crate::sync::lock;

/// Whether device `a` can read and write the memory of device `b` directly.
pub(crate) fn can_access_peer(a: usize, b: usize) -> Result<bool, Error> {
    if a == b {
        return Ok(true);
    }
    let (da, db) = (runtime::device(a)?, runtime::device(b)?);
    let mut can = 0;
    // SAFETY: both handles are devices the driver gave us; `can` outlives the call.
    unsafe {
        sys::cuDeviceCanAccessPeer(&mut can, da.context().cu_device(), db.context().cu_device())
    }
    .result()
    .map_err(|e| driver_error("asking whether two devices can access each other", e))?;
    Ok(can != 0)
}

/// Enables direct access between `a` and `b` (both ways) the first time the pair is used, if
/// the hardware allows it. Failure to enable is not an error: copies then go through the host.
fn enable_peer_access(a: &Device, b: &Device) -> Result<(), Error> {
    static ENABLED: Mutex<Option<HashSet<(usize, usize)>>> = Mutex::new(None);
    let key = (a.ordinal().min(b.ordinal()), a.ordinal().max(b.ordinal()));
    let mut enabled = lock(&ENABLED);
    let set = enabled.get_or_insert_with(HashSet::new);
    if !set.insert(key) {
        return Ok(());
    }
    if !can_access_peer(a.ordinal(), b.ordinal())? || !can_access_peer(b.ordinal(), a.ordinal())? {
        return Ok(());
    }
    for (from, to) in [(a, b), (b, a)] {
        from.bind()?;
        // Any failure (already enabled by the user, too many peers) leaves copies working,
        // through the host if need be, so the result is not an error.
        // SAFETY: `to`'s primary context is live for the process; enabling access from the
        // current context (`from`'s) only maps memory, it frees or moves nothing.
        let _ = unsafe { sys::cuCtxEnablePeerAccess(to.context().cu_ctx(), 0) };
    }
    Ok(())
}

/// A new buffer on device `to` holding `bytes` bytes of `src` from `src_offset` (bytes),
/// copied in stream order as the module describes. Does not wait for the copy.
pub(crate) fn copy_to_device(
    src: &DeviceMem,
    src_offset: usize,
    bytes: usize,
    to: usize,
) -> Result<DeviceMem, Error> {
    let from = runtime::device(src.ordinal())?;
    let dest = runtime::device(to)?;
    assert!(
        src_offset.checked_add(bytes).is_some_and(|end| end <= src.len()),
        "copy_to_device: {bytes} bytes at offset {src_offset} do not fit in {} bytes",
        src.len()
    );
    let dst = dest.memory().alloc(bytes.max(1))?;
    if bytes == 0 {
        return Ok(dst);
    }
    enable_peer_access(from, dest)?;

    // The source's producer, on its device, before the copy on the destination's stream.
    from.bind()?;
    let from_stream = from.current_stream_id();
    from.memory().order_use(src, from_stream)?;
    let source_ready = DeviceEvent::new(from.ordinal())?;
    source_ready.record()?;
    source_ready.wait_on(dest.ordinal())?;

    dest.bind()?;
    let to_stream = dest.current_stream_id();
    dest.memory().order_use(&dst, to_stream)?;
    // SAFETY: both ranges lie in live memory of their devices (checked above, and `dst` was
    // just allocated with at least `bytes` bytes); both contexts are primary contexts kept for
    // the process; the source is kept from reuse until the copy is done (below).
    unsafe {
        cu::memcpy_peer_async(
            dest.context().cu_ctx(),
            dst.ptr(),
            from.context().cu_ctx(),
            src.ptr() + src_offset as u64,
            bytes,
            to_stream.as_raw(),
        )
    }
    .map_err(|e| driver_error("copying between devices", e))?;
    dest.memory().producer_waits_for(&dst, to_stream)?;

    // Whatever the source's device does next (reusing or rewriting the source) waits for the
    // copy. `order_use` above marked the source as used on `from_stream`, so its reuse waits
    // for that stream, which now waits for the copy.
    let copied = DeviceEvent::new(dest.ordinal())?;
    copied.record()?;
    copied.wait_on(from.ordinal())?;
    Ok(dst)
}
