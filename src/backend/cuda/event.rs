//! A CUDA event owned by a user-facing [`crate::Event`]: created on one device, recorded on
//! and waited for by that thread's current stream there (emberfire's own stream, or the
//! user's inside `cuda::with_stream`), and destroyed with its owner.
//!
//! Events of the memory manager are recycled through its free list; this one is not, because
//! its lifetime is the user's: it may stay recorded for as long as they keep it.

use cudarc::driver::{result as cu, sys};

use super::driver_error;
use super::runtime;
use crate::error::Error;

/// A raw `CUevent` of device `ordinal`'s primary context, kept as an integer so that its owner
/// can move between threads (a CUDA event may be used from any thread of the process).
#[derive(Debug)]
pub(crate) struct DeviceEvent {
    ordinal: usize,
    raw: u64,
}

impl DeviceEvent {
    /// A new event on device `ordinal`, without timing (which would make recording slower).
    pub(crate) fn new(ordinal: usize) -> Result<DeviceEvent, Error> {
        runtime::device(ordinal)?.bind()?;
        let raw = cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| driver_error("creating an event", e))?;
        Ok(DeviceEvent { ordinal, raw: raw as usize as u64 })
    }

    /// The device the event belongs to.
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    fn raw(&self) -> sys::CUevent {
        self.raw as usize as sys::CUevent
    }

    /// Records, on this thread's current stream of the event's device, the work queued there so
    /// far.
    pub(crate) fn record(&self) -> Result<(), Error> {
        let dev = runtime::device(self.ordinal)?;
        dev.bind()?;
        // SAFETY: the event is live (we own it); the current stream is emberfire's own or one
        // an open scope keeps alive, and both belong to the event's context.
        unsafe { cu::event::record(self.raw(), dev.stream_raw()) }
            .map_err(|e| driver_error("recording an event", e))
    }

    /// Makes this thread's current stream of device `ordinal` wait, on the device, for the work
    /// recorded. The stream may belong to another device than the event: CUDA orders across
    /// devices through events.
    pub(crate) fn wait_on(&self, ordinal: usize) -> Result<(), Error> {
        let dev = runtime::device(ordinal)?;
        dev.bind()?;
        // SAFETY: the event is live; the stream is live as in `record`.
        unsafe {
            cu::stream::wait_event(
                dev.stream_raw(),
                self.raw(),
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|e| driver_error("making a stream wait for an event", e))
    }

    /// Blocks the calling thread until the work recorded has finished.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        runtime::device(self.ordinal)?.bind()?;
        // SAFETY: the event is live.
        unsafe { cu::event::synchronize(self.raw()) }
            .map_err(|e| driver_error("waiting for an event", e))
    }
}

impl Drop for DeviceEvent {
    fn drop(&mut self) {
        // The driver releases a recorded event once its work is done, so destroying it here
        // never waits. A failure means the context is gone (process exit): nothing to do, and
        // panicking in a destructor would abort.
        if let Ok(dev) = runtime::device(self.ordinal) {
            let _ = dev.bind();
            // SAFETY: the event is ours and destroyed only here.
            let _ = unsafe { cu::event::destroy(self.raw()) };
        }
    }
}
