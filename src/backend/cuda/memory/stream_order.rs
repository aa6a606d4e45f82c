//! Stream ordering: the ids and events the pool orders reuse with, and the user-stream scopes
//! that make a stream of the user's current on a thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, RwLockReadGuard};

use cudarc::driver::{sys, CudaStream};

use super::device_mem::DeviceMem;
use super::pool::{MemoryManager, Pool};
use crate::error::Error;
use crate::sync::{read, write};

/// A CUDA stream as the pool sees it: the raw `CUstream` as an integer (0 is the legacy
/// default stream). Only compared and handed back to [`StreamOrder`]; never dereferenced here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StreamId(pub(crate) u64);

impl StreamId {
    /// The id of a cudarc stream.
    pub(crate) fn of(stream: &CudaStream) -> StreamId {
        StreamId::from_raw(stream.cu_stream())
    }

    /// The id of a raw stream handle.
    pub(crate) fn from_raw(stream: sys::CUstream) -> StreamId {
        StreamId(stream as usize as u64)
    }

    /// The raw stream handle.
    ///
    /// Launches held back (`kernel/replay.rs`) are sent first, since the caller is about to
    /// queue work on the stream or wait for it.
    pub(crate) fn as_raw(self) -> sys::CUstream {
        crate::backend::cuda::kernel::replay::send_all_held();
        self.handle()
    }

    /// The raw handle as it is, sending nothing: for a launch, which orders itself after the
    /// launches held back.
    pub(crate) fn handle(self) -> sys::CUstream {
        self.0 as usize as sys::CUstream
    }
}

/// A recorded event (a raw `CUevent` as an integer for the driver implementation).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fence(pub(crate) u64);

/// The event operations that order a block's reuse after its earlier uses, abstracted so the
/// pool can be tested without a GPU.
pub(crate) trait StreamOrder: Send + Sync {
    /// Records, on `stream`, the work queued there so far.
    fn record(&self, stream: StreamId) -> Result<Fence, Error>;
    /// Makes `stream` wait (on the device) until `fence` has completed.
    fn wait(&self, stream: StreamId, fence: &Fence) -> Result<(), Error>;
    /// Gives a fence back once no later call needs it (waits already queued are unaffected).
    fn release(&self, fence: Fence);
    /// Blocks the host until `stream`'s queued work has completed.
    fn synchronize(&self, stream: StreamId) -> Result<(), Error>;
    /// Blocks the host until all work on the device has completed (before memory is freed).
    fn synchronize_all(&self) -> Result<(), Error>;
}

/// Waits on the host until the work queued on `streams` (as they stand now: a retired user
/// stream is the own stream) has completed.
pub(super) fn synchronize_streams(pool: &Pool, streams: &[StreamId]) {
    let (registry, streams) = effective_streams(pool, streams);
    for s in streams {
        let _ = pool.order.synchronize(s);
    }
    drop(registry);
}

/// `streams` with every retired user stream replaced by the own stream, without repeats, and
/// the stream table held for reading when a user stream remains (so that it cannot retire
/// while the caller records on it or synchronises it).
pub(super) fn effective_streams<'p>(
    pool: &'p Pool,
    streams: &[StreamId],
) -> (Option<RwLockReadGuard<'p, HashMap<StreamId, usize>>>, Vec<StreamId>) {
    if streams.iter().all(|&s| s == pool.own_stream) {
        return (None, vec![pool.own_stream]);
    }
    let registry = read_streams(pool);
    let mut out: Vec<StreamId> = Vec::with_capacity(streams.len());
    for &s in streams {
        let e = effective(&registry, pool.own_stream, s);
        if !out.contains(&e) {
            out.push(e);
        }
    }
    (Some(registry), out)
}

/// The stream that stands for `s` now: the own stream for itself and for a retired user
/// stream (whose work the own stream has waited for), else `s`.
fn effective(registry: &HashMap<StreamId, usize>, own: StreamId, s: StreamId) -> StreamId {
    match registry.get(&s) {
        Some(0) => own,
        _ => s,
    }
}

fn read_streams(pool: &Pool) -> RwLockReadGuard<'_, HashMap<StreamId, usize>> {
    read(&pool.streams)
}

/// Makes `waiter` wait (on the device) for the work queued on `waited` so far.
fn join(pool: &Pool, waiter: StreamId, waited: StreamId) -> Result<(), Error> {
    if waiter == waited {
        return Ok(());
    }
    let fence = pool.order.record(waited)?;
    let waited_on = pool.order.wait(waiter, &fence);
    pool.order.release(fence);
    waited_on
}

thread_local! {
    /// This thread's open user-stream scopes, innermost last: (pool address, stream).
    static SCOPES: RefCell<Vec<(usize, StreamId)>> = const { RefCell::new(Vec::new()) };
}

/// A user stream made current on this thread by [`MemoryManager::enter_stream`]. Leaving it
/// ([`StreamScope::leave`], or dropping it) orders the own stream after it.
///
/// Not `Send`: it must end on the thread it began on. It must not be leaked (the user's stream
/// would stay current after its owner may have destroyed it), which is why the public API
/// only offers closures.
pub(crate) struct StreamScope {
    pool: Arc<Pool>,
    stream: StreamId,
    outer: StreamId,
    registered: bool,
    left: bool,
    _not_send: PhantomData<*const ()>,
}

impl MemoryManager {
    /// The stream this thread's work on the device goes to: the user stream of the innermost
    /// open scope, else the own stream.
    pub(crate) fn current_stream(&self) -> StreamId {
        let key = Arc::as_ptr(&self.pool) as usize;
        SCOPES
            .with(|scopes| scopes.borrow().iter().rev().find(|(k, _)| *k == key).map(|&(_, s)| s))
            .unwrap_or(self.pool.own_stream)
    }

    /// The device's own stream.
    pub(crate) fn own_stream(&self) -> StreamId {
        self.pool.own_stream
    }

    /// Makes `stream` this thread's current stream until the returned scope is left. The user's
    /// stream first waits (on the device) for the work queued so far on the stream that was
    /// current and on the own stream, so it sees every array computed before.
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of this device's primary context, and stays alive until the
    /// scope has been left.
    pub(crate) unsafe fn enter_stream(&self, stream: StreamId) -> Result<StreamScope, Error> {
        let pool = &self.pool;
        let outer = self.current_stream();
        let registered = stream != pool.own_stream;
        if registered {
            let mut registry = write(&pool.streams);
            *registry.entry(stream).or_insert(0) += 1;
        }
        let mut scope = StreamScope {
            pool: pool.clone(),
            stream,
            outer,
            registered,
            left: true,
            _not_send: PhantomData,
        };
        let waited = join(pool, stream, outer).and_then(|()| {
            if outer != pool.own_stream {
                join(pool, stream, pool.own_stream)
            } else {
                Ok(())
            }
        });
        if let Err(e) = waited {
            // Undo the registration (the scope never became current).
            let _ = scope.retire_if_last();
            return Err(e);
        }
        let key = Arc::as_ptr(pool) as usize;
        SCOPES.with(|scopes| scopes.borrow_mut().push((key, stream)));
        scope.left = false;
        Ok(scope)
    }

    /// Makes `waiter` wait on the device for the work that produced `mem` (queued on its home
    /// stream), and records `waiter` as a user of `mem`, so that its reuse waits for `waiter`
    /// too. `waiter` must stay alive until `mem` drops, or be a stream that scopes retire.
    pub(crate) fn order_use(&self, mem: &DeviceMem, waiter: StreamId) -> Result<(), Error> {
        if mem.home == waiter {
            return Ok(());
        }
        self.wait_for_producer(mem, waiter)?;
        mem.mark_used_on(waiter);
        Ok(())
    }

    /// Makes `waiter` wait on the device for the work queued so far on `mem`'s home stream
    /// (where it was written), without recording `waiter` as a user.
    pub(crate) fn wait_for_producer(&self, mem: &DeviceMem, waiter: StreamId) -> Result<(), Error> {
        if mem.home == waiter {
            return Ok(());
        }
        let pool = &self.pool;
        let (registry, home) = effective_streams(pool, &[mem.home]);
        let r = join(pool, waiter, home[0]);
        drop(registry);
        r
    }

    /// Makes `mem`'s home stream wait on the device for the work queued on `waited` so far, so
    /// that everything emberfire does with `mem` later (reads, reuse) comes after it.
    pub(crate) fn producer_waits_for(
        &self,
        mem: &DeviceMem,
        waited: StreamId,
    ) -> Result<(), Error> {
        if mem.home == waited {
            return Ok(());
        }
        let pool = &self.pool;
        let (registry, home) = effective_streams(pool, &[mem.home]);
        let r = join(pool, home[0], waited);
        drop(registry);
        r
    }

    /// Makes `waiter` wait on the device for the work queued so far on the own stream and on
    /// every user stream a scope has made current.
    pub(crate) fn wait_for_all(&self, waiter: StreamId) -> Result<(), Error> {
        let pool = &self.pool;
        let registry = read_streams(pool);
        let mut r = join(pool, waiter, pool.own_stream);
        for (&s, &open) in registry.iter() {
            if open > 0 {
                r = r.and_then(|()| join(pool, waiter, s));
            }
        }
        drop(registry);
        r
    }

    /// Makes the own stream and every user stream a scope has made current wait on the device
    /// for the work queued so far on `waited`.
    pub(crate) fn all_wait_for(&self, waited: StreamId) -> Result<(), Error> {
        let pool = &self.pool;
        let registry = read_streams(pool);
        let mut r = join(pool, pool.own_stream, waited);
        for (&s, &open) in registry.iter() {
            if open > 0 {
                r = r.and_then(|()| join(pool, s, waited));
            }
        }
        drop(registry);
        r
    }

    /// The user streams that scopes have made current and not yet left, on any thread.
    pub(crate) fn open_streams(&self) -> Vec<StreamId> {
        read_streams(&self.pool).iter().filter(|(_, &n)| n > 0).map(|(&s, _)| s).collect()
    }

    /// Whether `stream` is a user stream that scopes used and no scope uses any more.
    pub(crate) fn is_retired(&self, stream: StreamId) -> bool {
        read_streams(&self.pool).get(&stream) == Some(&0)
    }
}

impl StreamScope {
    /// The user's stream.
    pub(crate) fn stream(&self) -> StreamId {
        self.stream
    }

    /// Ends the scope: this thread's current stream is the outer one again, and the own stream
    /// (and the outer stream) wait on the device for everything queued on the user's stream.
    /// The scope ends also when this returns an error.
    pub(crate) fn leave(mut self) -> Result<(), Error> {
        self.leave_once()
    }

    fn leave_once(&mut self) -> Result<(), Error> {
        if self.left {
            return Ok(());
        }
        self.left = true;
        let key = Arc::as_ptr(&self.pool) as usize;
        SCOPES.with(|scopes| {
            let mut scopes = scopes.borrow_mut();
            if let Some(i) = scopes.iter().rposition(|&e| e == (key, self.stream)) {
                scopes.remove(i);
            }
        });
        let pool = self.pool.clone();
        let outer = if self.outer != pool.own_stream {
            join(&pool, self.outer, self.stream)
        } else {
            Ok(())
        };
        // Joining the own stream happens under the table's write lock, together with the
        // retirement, so no other thread records on the stream once it counts as retired.
        let own = self.retire_if_last();
        outer.and(own)
    }

    /// Joins the own stream after the user's and counts this scope out of the table; the
    /// stream retires when it was the last scope on it.
    fn retire_if_last(&mut self) -> Result<(), Error> {
        let pool = &self.pool;
        let mut registry = write(&pool.streams);
        let joined = join(pool, pool.own_stream, self.stream);
        if self.registered {
            self.registered = false;
            if let Some(open) = registry.get_mut(&self.stream) {
                *open = open.saturating_sub(1);
            }
        }
        joined
    }
}

impl Drop for StreamScope {
    fn drop(&mut self) {
        // A scope ended by a panic still restores the thread's stream and orders the own
        // stream after the user's; an error here has nowhere to go.
        let _ = self.leave_once();
    }
}
