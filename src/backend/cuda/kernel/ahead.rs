//! Kernels compiled in the background, so that a launch does not wait for its compile.
//!
//! A program's first run compiles each of its kernels once, and until now one after another:
//! every evaluation waited for its kernel's NVRTC compile (100 to 450 ms for a generated
//! reduction on the device machines, unless the driver's compile cache held it) before it could
//! queue its launch and let the program build the next. k-means' first iteration compiles
//! eleven kernels, so its first run was the sum of eleven compiles.
//!
//! Now a kernel missing from both caches is compiled on a thread of its own, and the launch
//! that needed it is held back (`replay.rs`, `held.rs`) instead of waiting: the program goes
//! on building and evaluating, and every new kernel it meets before it reads a result compiles
//! at the same time as the others, on as many threads as [`MAX_AT_ONCE`] and the processor
//! allow. What is held is sent, in the order it was launched, by whatever reaches the stream
//! next (a synchronisation, a copy, a launch of a kernel already loaded, ...), which waits for
//! the compiles it needs and loads their modules first. A launch on a user's stream, or on a
//! device whose stream was handed to the user, waits for its compile at once, as before.
//!
//! A compile that fails in the background is reported by the launch or send that needed the
//! kernel, and by every later launch of it (the source is the same each time, so a new compile
//! would fail the same way). `EMBERFIRE_COMPILE_AHEAD=0` compiles every kernel in the thread
//! that needs it.
//!
//! When the process exits while compiles are running, the exit waits for them (at most
//! [`EXIT_WAIT`]): NVRTC's own teardown must not run under a compile.

use std::sync::{Arc, Condvar, Mutex, Once, OnceLock};
use std::time::Duration;

use crate::error::Error;
use crate::sync::lock;

/// Compiles running at once at most: each takes one core and about 100 MB while it runs.
pub(crate) const MAX_AT_ONCE: usize = 8;
/// How long the process's exit waits for compiles still running.
const EXIT_WAIT: Duration = Duration::from_secs(20);

/// Whether kernels are compiled ahead (`EMBERFIRE_COMPILE_AHEAD` is not `0`), read once.
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("EMBERFIRE_COMPILE_AHEAD").map_or(true, |v| v.trim() != "0"))
}

/// A compile running in the background, and then its image (CUBIN or PTX) or its error.
pub(crate) struct Compiling {
    state: Mutex<State>,
    done: Condvar,
}

enum State {
    Running,
    Done(Result<Vec<u8>, Error>),
    /// The image was handed to the waiter that loads it.
    Taken,
}

impl Compiling {
    /// Starts `job` on a thread of its own, which runs it once fewer than [`MAX_AT_ONCE`]
    /// compiles run. Returns at once.
    pub(crate) fn start(
        job: impl FnOnce() -> Result<Vec<u8>, Error> + Send + 'static,
    ) -> Arc<Compiling> {
        let c = Arc::new(Compiling { state: Mutex::new(State::Running), done: Condvar::new() });
        let slots = Slots::get();
        slots.born();
        let mine = c.clone();
        let spawned =
            std::thread::Builder::new().name("emberfire-compile".into()).spawn(move || {
                slots.enter();
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
                    .unwrap_or_else(|_| Err(Error::Driver("a kernel compile panicked".into())));
                mine.finish(result);
                slots.leave(true);
            });
        if let Err(e) = spawned {
            slots.leave(false);
            c.finish(Err(Error::Driver(format!("could not start a compile thread: {e}"))));
        }
        c
    }

    fn finish(&self, result: Result<Vec<u8>, Error>) {
        *lock(&self.state) = State::Done(result);
        self.done.notify_all();
    }

    /// Waits for the compile and takes its image; an error is cloned, so every caller sees it.
    /// Called once per compile, by the one loader (`KernelFn`'s module cell).
    pub(crate) fn wait(&self) -> Result<Vec<u8>, Error> {
        let mut st = lock(&self.state);
        loop {
            match std::mem::replace(&mut *st, State::Taken) {
                State::Running => {
                    *st = State::Running;
                    st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                State::Done(Ok(image)) => return Ok(image),
                State::Done(Err(e)) => {
                    *st = State::Done(Err(e.clone()));
                    return Err(e);
                }
                State::Taken => {
                    return Err(Error::Driver(
                        "internal error: a compiled image was taken twice".into(),
                    ))
                }
            }
        }
    }

    /// Whether the compile has finished (successfully or not).
    #[cfg(test)]
    fn finished(&self) -> bool {
        !matches!(*lock(&self.state), State::Running)
    }
}

/// The compile threads alive (started, and not yet finished) and those among them compiling,
/// which [`MAX_AT_ONCE`] bounds.
struct Slots {
    counts: Mutex<Counts>,
    changed: Condvar,
}

struct Counts {
    alive: usize,
    running: usize,
}

impl Slots {
    fn get() -> &'static Slots {
        static SLOTS: Slots =
            Slots { counts: Mutex::new(Counts { alive: 0, running: 0 }), changed: Condvar::new() };
        static AT_EXIT: Once = Once::new();
        AT_EXIT.call_once(|| {
            // SAFETY: registers a plain function taking nothing, as `atexit` expects; it is
            // registered after NVRTC was loaded (a compile is about to start), so it runs
            // before NVRTC's own exit handlers.
            unsafe { libc::atexit(wait_at_exit) };
        });
        &SLOTS
    }

    /// Counts a thread about to start.
    fn born(&self) {
        lock(&self.counts).alive += 1;
    }

    /// Waits for a free slot and takes it.
    fn enter(&self) {
        let limit =
            std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_AT_ONCE);
        let mut c = lock(&self.counts);
        while c.running >= limit {
            c = self.changed.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        c.running += 1;
    }

    /// Gives the slot back (when `ran`) and counts the thread as finished.
    fn leave(&self, ran: bool) {
        let mut c = lock(&self.counts);
        c.running -= ran as usize;
        c.alive -= 1;
        drop(c);
        self.changed.notify_all();
    }
}

/// Waits, at most [`EXIT_WAIT`], until no compile thread is alive.
extern "C" fn wait_at_exit() {
    let slots = Slots::get();
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    let mut c = lock(&slots.counts);
    while c.alive > 0 {
        let now = std::time::Instant::now();
        if now >= deadline {
            return;
        }
        c = match slots.changed.wait_timeout(c, deadline - now) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_compile_hands_its_image_to_the_one_waiter() {
        let c = Compiling::start(|| {
            std::thread::sleep(Duration::from_millis(20));
            Ok(vec![1, 2, 3])
        });
        assert_eq!(c.wait().unwrap(), vec![1, 2, 3]);
        assert!(c.finished());
        assert!(matches!(c.wait(), Err(Error::Driver(m)) if m.contains("taken twice")));
    }

    #[test]
    fn a_failed_compile_is_reported_to_every_caller() {
        let c = Compiling::start(|| Err(Error::Driver("no luck".into())));
        for _ in 0..3 {
            assert!(matches!(c.wait(), Err(Error::Driver(ref m)) if m == "no luck"));
        }
    }

    #[test]
    fn compiles_run_at_once_but_never_more_than_the_limit() {
        static RUNNING: AtomicUsize = AtomicUsize::new(0);
        static PEAK: AtomicUsize = AtomicUsize::new(0);
        let jobs: Vec<_> = (0..3 * MAX_AT_ONCE as u8)
            .map(|k| {
                Compiling::start(move || {
                    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
                    PEAK.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(15));
                    RUNNING.fetch_sub(1, Ordering::SeqCst);
                    Ok(vec![k])
                })
            })
            .collect();
        for (k, c) in jobs.iter().enumerate() {
            assert_eq!(c.wait().unwrap(), vec![k as u8]);
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let peak = PEAK.load(Ordering::SeqCst);
        assert!(peak <= MAX_AT_ONCE.min(cores), "{peak} at once");
        // Other tests of this process may hold slots too, so only "more than one" is certain
        // where there are cores for it.
        if cores > 1 {
            assert!(peak > 1, "the compiles ran one at a time");
        }
    }
}
