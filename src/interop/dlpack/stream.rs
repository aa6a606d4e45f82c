//! Stream order of exchanged CUDA memory, as DLPack's protocol states it: the consumer's stream
//! waits for the producer's pending work, through an event, and the host never blocks.
//!
//! Stream values are the Python protocol's integers: `-1` no ordering, `1` the legacy default
//! stream, `2` the per-thread default stream, anything else a `CUstream` handle. `0` is
//! refused, as the protocol does, because it is ambiguous between the two default streams.

use cudarc::driver::sys;

use crate::backend::native::{self, Device, DeviceMem, StreamId};
use crate::error::{Error, Result};

/// The legacy default stream.
pub(super) const LEGACY_DEFAULT: isize = 1;
/// The per-thread default stream.
pub(super) const PER_THREAD_DEFAULT: isize = 2;

/// Whether `stream` names one of CUDA's default streams, which live as long as the context.
pub(super) fn is_default(stream: isize) -> bool {
    stream == LEGACY_DEFAULT || stream == PER_THREAD_DEFAULT
}

/// The raw stream `stream` names, `None` for "no ordering", or an error for `0` and other
/// negative values.
fn handle(func: &str, stream: isize) -> Result<Option<sys::CUstream>> {
    match stream {
        -1 => Ok(None),
        0 => Err(Error::Exchange(format!(
            "{func}: `stream` 0 is ambiguous on CUDA; use 1 (legacy default stream), 2 \
             (per-thread default stream) or a stream handle"
        ))),
        s if s < 0 => Err(Error::Exchange(format!("{func}: `stream` {s} is not a stream"))),
        s => Ok(Some(s as usize as sys::CUstream)),
    }
}

/// The device of `mem`, bound to this thread, with `stream` checked to belong to its context
/// (default streams belong to every context).
fn device_for(mem: &DeviceMem, stream: sys::CUstream) -> Result<&'static Device> {
    let dev = native::device(mem.ordinal())?;
    if is_default(stream as usize as isize) {
        dev.bind()?;
    } else {
        native::check_stream(dev, stream)?;
    }
    Ok(dev)
}

/// Makes the consumer's `stream` wait, on the device, for the work that wrote `mem`.
///
/// # Safety
///
/// `stream` is `-1`, a default stream, or a live stream of `mem`'s device's primary context.
pub(super) unsafe fn consumer_waits(func: &str, mem: &DeviceMem, stream: isize) -> Result<()> {
    let Some(s) = handle(func, stream)? else { return Ok(()) };
    let dev = device_for(mem, s)?;
    dev.memory().wait_for_producer(mem, StreamId::from_raw(s))
}

/// Makes everything emberfire does with `mem` from now on (reading it, writing it, handing it
/// back) wait, on the device, for the work queued on `stream` so far.
///
/// # Safety
///
/// As for [`consumer_waits`].
pub(super) unsafe fn emberfire_waits(func: &str, mem: &DeviceMem, stream: isize) -> Result<()> {
    let Some(s) = handle(func, stream)? else { return Ok(()) };
    let dev = device_for(mem, s)?;
    dev.memory().producer_waits_for(mem, StreamId::from_raw(s))
}

/// Checks a stream value without using it (for the CPU backend, where there is nothing to
/// order, and before any work is done).
pub(super) fn check_value(func: &str, stream: isize) -> Result<()> {
    handle(func, stream).map(|_| ())
}
