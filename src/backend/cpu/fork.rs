//! Parallel loops in which the calling thread takes part.
//!
//! rayon runs a parallel loop started outside its pool on the pool alone: the caller queues
//! the loop, sleeps until the pool has finished it, and is woken again, two thread switches
//! per loop. The CPU backend's loops are often short: a step of conjugate gradients over 1 MiB
//! vectors is five loops of 50 to 200 µs each, and those switches (with the futex calls that
//! make them) took about a seventh of its CPU time. Here the caller starts on the tasks at
//! once, the pool's threads join in as they wake, and the caller then waits only for the tasks
//! that another thread has begun, spinning briefly before it yields its core.
//!
//! Tasks are claimed from one counter, in order; which thread runs a task is left to timing,
//! so callers whose results must not depend on it write each task's result to its own place
//! (as `reduce.rs` does, combining them in task order afterwards).

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::sync::lock;

/// The task function with its lifetime erased (see [`Loop::run`] for why that is sound).
type Work = *const (dyn Fn(usize) + Sync + 'static);

/// One parallel loop, shared by the caller and the pool's helpers.
struct Loop {
    /// The next task to claim (claims past `tasks` fail).
    next: AtomicUsize,
    /// How many claimed tasks have finished.
    done: AtomicUsize,
    tasks: usize,
    work: Work,
    /// The first panic of a task, to resume on the caller's thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `work` points to a `Sync` function, called only while the caller keeps it alive
// (see `Loop::run`); the other fields are thread-safe.
unsafe impl Send for Loop {}
// SAFETY: as above.
unsafe impl Sync for Loop {}

impl Loop {
    /// Claims and runs tasks until none is left.
    fn run(&self) {
        loop {
            let t = self.next.fetch_add(1, Ordering::Relaxed);
            if t >= self.tasks {
                return;
            }
            // SAFETY: task `t` was claimed, so it is not done, and `for_each_task` returns
            // only once every task is done: the function it borrowed is still alive. A helper
            // that starts late claims nothing and never reads the pointer.
            let work = unsafe { &*self.work };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| work(t))) {
                lock(&self.panic).get_or_insert(p);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// Runs `work(t)` for every task `t` in `0..tasks`, on the calling thread and as many of the
/// pool's threads as there are tasks besides (at most the pool's size in all), and returns
/// once all have run. A panic of a task is resumed on the caller once every task has run.
///
/// The caller may itself be one of the pool's threads (a loop inside a parallel loop).
pub(crate) fn for_each_task(tasks: usize, work: impl Fn(usize) + Sync) {
    let helpers = rayon::current_num_threads().min(tasks).saturating_sub(1);
    if helpers == 0 {
        (0..tasks).for_each(work);
        return;
    }
    let borrowed: &(dyn Fn(usize) + Sync + '_) = &work;
    // SAFETY: only the lifetime changes; `Loop::run` says why the pointer is never used after
    // `work` is gone.
    let erased = unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), Work>(borrowed as *const _)
    };
    let shared = Arc::new(Loop {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        tasks,
        work: erased,
        panic: Mutex::new(None),
    });
    for _ in 0..helpers {
        let helper = shared.clone();
        rayon::spawn(move || helper.run());
    }
    shared.run();
    // every task is claimed now; wait for those another thread is still running (a task is
    // short, so spin first; yield the core if the thread running it was descheduled)
    let mut spins = 0u32;
    while shared.done.load(Ordering::Acquire) < tasks {
        if spins < 4096 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
    let panic = lock(&shared.panic).take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_task_runs_once() {
        for tasks in [0usize, 1, 2, 3, 17, 1000] {
            let runs: Vec<AtomicU64> = (0..tasks).map(|_| AtomicU64::new(0)).collect();
            for_each_task(tasks, |t| {
                runs[t].fetch_add(1, Ordering::Relaxed);
            });
            assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1), "{tasks} tasks");
        }
    }

    #[test]
    fn loops_nest_inside_the_pool_and_inside_each_other() {
        use rayon::prelude::*;
        let total = AtomicU64::new(0);
        (0..8u64).into_par_iter().for_each(|i| {
            for_each_task(10, |t| {
                for_each_task(3, |u| {
                    total.fetch_add(i * 100 + t as u64 * 10 + u as u64, Ordering::Relaxed);
                });
            });
        });
        let want: u64 = (0..8u64)
            .flat_map(|i| {
                (0..10u64).flat_map(move |t| (0..3u64).map(move |u| i * 100 + t * 10 + u))
            })
            .sum();
        assert_eq!(total.load(Ordering::Relaxed), want);
    }

    #[test]
    fn a_panicking_task_reaches_the_caller_after_the_others_ran() {
        let runs = AtomicU64::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            for_each_task(64, |t| {
                runs.fetch_add(1, Ordering::Relaxed);
                assert!(t != 5, "task five fails");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(runs.load(Ordering::Relaxed), 64);
    }
}
