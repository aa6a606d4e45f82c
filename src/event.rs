//! [`Event`]: ordering points in the active device's work queue, with arrayfire-rust's API.

use std::cell::{Cell, RefCell};

use crate::backend::native::DeviceEvent;
use crate::backend::BackendKind;
use crate::device::active_kind;
use crate::error_handler::OrRaise;

/// A point in the active device's queue of work, to wait for later: on the device, without
/// blocking the host ([`enqueue_wait`](Event::enqueue_wait)), or on the host
/// ([`block`](Event::block)), as arrayfire-rust's `Event`.
///
/// - On CUDA, [`mark`](Event::mark) records a CUDA event on the calling thread's current
///   stream of the active device: emberfire's own stream, or the stream made current by
///   [`cuda::with_stream`](crate::interop::cuda::with_stream). Marking on another device than before
///   moves the event to that device.
/// - On the CPU, every operation has finished when its call returns, so a mark has nothing to
///   record and waiting for it returns at once.
///
/// Arrays are evaluated lazily: a mark covers the work queued so far, which includes an
/// expression only once something has evaluated it (`eval`, a host read, a non-element-wise
/// operation). emberfire orders its own work on arrays by itself; events are for work you
/// order across threads, streams or devices, such as your own kernels.
///
/// An `Event` can be moved to another thread (it is `Send`) but not shared between threads
/// (not `Sync`), as in arrayfire-rust. Waiting for an event that was never marked returns at
/// once, as in CUDA.
///
/// ```
/// use emberfire::{dim4, randu, Event};
/// let a = randu::<f32>(dim4!(64, 64));
/// let b = &a * 2.0f32;
/// b.eval();
/// let done = Event::default();
/// done.mark(); // after the work that computed `b`
/// done.enqueue_wait(); // work queued from now on starts after it
/// done.block(); // the host waits for it
/// assert_eq!(b.dims(), dim4!(64, 64));
/// ```
///
/// Sharing one between threads does not compile:
///
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// shared(&emberfire::Event::default());
/// ```
#[derive(Debug, Default)]
pub struct Event {
    /// The CUDA event, made by the first mark on a CUDA device and kept for reuse.
    device: RefCell<Option<DeviceEvent>>,
    /// Whether the last mark recorded `device` (false after a mark on the CPU).
    recorded: Cell<bool>,
}

impl Event {
    /// Marks the work queued so far on the active device (on CUDA, on the calling thread's
    /// current stream there): a later [`enqueue_wait`](Event::enqueue_wait) or
    /// [`block`](Event::block) waits for that work, and not for work queued after this call.
    /// Marking again moves the point.
    ///
    /// Panics with the driver's message if CUDA refuses to create or record the event.
    ///
    /// ```
    /// let e = emberfire::Event::default();
    /// e.mark();
    /// e.mark(); // moves the point to now
    /// e.block();
    /// ```
    pub fn mark(&self) {
        match active_kind() {
            BackendKind::Cpu => self.recorded.set(false),
            BackendKind::Cuda(ordinal) => {
                let mut slot = self.device.borrow_mut();
                if slot.as_ref().map(|e| e.ordinal()) != Some(ordinal) {
                    // An event can only be recorded on a stream of its own device.
                    *slot = Some(DeviceEvent::new(ordinal).or_raise("Event::mark"));
                }
                let event = slot.as_ref().expect("set just above");
                event.record().or_raise("Event::mark");
                self.recorded.set(true);
            }
        }
    }

    /// Makes the work queued on the active device from now on (on CUDA, on the calling
    /// thread's current stream there) start only after the marked work has finished, without
    /// blocking the host. The marked work may be on another stream or device.
    ///
    /// On the CPU the queue is the calling thread itself, so waiting for an event marked on a
    /// CUDA device blocks until that work has finished; an event marked on the CPU needs no
    /// wait.
    ///
    /// Panics with the driver's message if CUDA refuses the wait.
    ///
    /// ```
    /// let e = emberfire::Event::default();
    /// e.mark();
    /// e.enqueue_wait();
    /// ```
    pub fn enqueue_wait(&self) {
        if !self.recorded.get() {
            return;
        }
        let slot = self.device.borrow();
        let event = slot.as_ref().expect("a recorded event exists");
        let r = match active_kind() {
            BackendKind::Cuda(ordinal) => event.wait_on(ordinal),
            BackendKind::Cpu => event.synchronize(),
        };
        r.or_raise("Event::enqueue_wait");
    }

    /// Blocks the calling thread until the marked work has finished.
    ///
    /// Panics with the driver's message if CUDA reports an error while waiting (such as a
    /// kernel that failed).
    ///
    /// ```
    /// use emberfire::{dim4, sum_all, Array, Event};
    /// let a = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
    /// let e = Event::default();
    /// let s = sum_all(&a);
    /// e.mark();
    /// e.block();
    /// assert_eq!(s.0, 6.0);
    /// ```
    pub fn block(&self) {
        if !self.recorded.get() {
            return;
        }
        let slot = self.device.borrow();
        let event = slot.as_ref().expect("a recorded event exists");
        event.synchronize().or_raise("Event::block");
    }
}

#[cfg(test)]
mod tests {
    use super::Event;

    #[test]
    fn events_move_between_threads() {
        fn send<T: Send>() {}
        send::<Event>();
    }
}
