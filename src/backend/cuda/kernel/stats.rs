//! Counts of kernel compilations and cache hits: one set per [`KernelCache`](super::KernelCache)
//! and one for the whole process, which `emberfire::jit_stats()` reports with the counts of
//! replayed launches (`replay.rs`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of kernel compilations and cache hits, across all devices, since the process began.
///
/// Every CUDA kernel emberfire runs is counted: the fused element-wise and reduction kernels,
/// the hand-written ones (sort, scan, transpose, signal processing, random numbers, ...) and
/// users' kernels compiled with `emberfire::cuda::compile_kernel`. A lookup is exactly one
/// of a compile, a memory hit or a disk hit.
///
/// ```
/// let before = emberfire::jit_stats();
/// let after = emberfire::jit_stats();
/// assert!(after.compiles >= before.compiles);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Kernels compiled with NVRTC.
    pub compiles: u64,
    /// Kernels found already loaded in this process.
    pub memory_hits: u64,
    /// Kernels loaded from the disk cache instead of being compiled.
    pub disk_hits: u64,
    /// Launches replayed from a graph: a small kernel (at most a block a multiprocessor)
    /// launched again with the same grid on emberfire's own stream goes to the device as a
    /// graph of one launch with new arguments, which costs the host less than a launch
    /// (`EMBERFIRE_LAUNCH_REPLAY=0` turns it off).
    pub replayed_launches: u64,
    /// Graphs made for replayed launches (one per kernel and grid, at most 256 a device).
    pub launch_graphs: u64,
    /// Launches sent to the device within a graph of several: small element-wise launches on
    /// emberfire's own stream are held back and sent together, as one graph where the same
    /// sequence of launches was sent twice before (`EMBERFIRE_LAUNCH_BATCH=0` turns it off).
    pub batched_launches: u64,
    /// Graphs made for sequences of held launches (at most 64 a device).
    pub batch_graphs: u64,
    /// Launches held back on emberfire's own stream while their kernel compiled on a thread of
    /// its own: a program's new kernels compile at the same time, and their launches go out,
    /// in order, when something needs them (`EMBERFIRE_COMPILE_AHEAD=0` compiles each kernel
    /// where it is needed instead).
    pub held_for_compile: u64,
}

/// Which of the three outcomes a lookup had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Compiled,
    MemoryHit,
    DiskHit,
}

/// Compile and hit counters; one global set and one per cache.
#[derive(Default, Debug)]
pub(crate) struct Counters {
    compiles: AtomicU64,
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
}

impl Counters {
    pub(crate) const fn new() -> Counters {
        Counters {
            compiles: AtomicU64::new(0),
            memory_hits: AtomicU64::new(0),
            disk_hits: AtomicU64::new(0),
        }
    }

    pub(crate) fn snapshot(&self) -> JitStats {
        JitStats {
            compiles: self.compiles.load(Ordering::Relaxed),
            memory_hits: self.memory_hits.load(Ordering::Relaxed),
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
            replayed_launches: 0,
            launch_graphs: 0,
            batched_launches: 0,
            batch_graphs: 0,
            held_for_compile: 0,
        }
    }

    fn add(&self, outcome: Outcome) {
        let counter = match outcome {
            Outcome::Compiled => &self.compiles,
            Outcome::MemoryHit => &self.memory_hits,
            Outcome::DiskHit => &self.disk_hits,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `outcome` here and in the process-wide counters.
    pub(crate) fn count(&self, outcome: Outcome) {
        self.add(outcome);
        GLOBAL.add(outcome);
    }
}

static GLOBAL: Counters = Counters::new();

/// The kernel compilation counters (global across devices).
pub(crate) fn jit_stats() -> JitStats {
    let c = super::replay::counts();
    JitStats {
        replayed_launches: c.replayed,
        launch_graphs: c.graphs,
        batched_launches: c.batched,
        batch_graphs: c.sequences,
        held_for_compile: c.held_for_compile,
        ..GLOBAL.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_counts_into_its_own_set_and_the_global_one() {
        let mine = Counters::new();
        let before = jit_stats();
        mine.count(Outcome::Compiled);
        mine.count(Outcome::MemoryHit);
        mine.count(Outcome::MemoryHit);
        mine.count(Outcome::DiskHit);
        assert_eq!(
            mine.snapshot(),
            JitStats {
                compiles: 1,
                memory_hits: 2,
                disk_hits: 1,
                replayed_launches: 0,
                launch_graphs: 0,
                batched_launches: 0,
                batch_graphs: 0,
                held_for_compile: 0,
            }
        );
        let after = jit_stats();
        // Other tests may count at the same time: the global set grew by at least this much.
        assert!(after.compiles > before.compiles && after.memory_hits >= before.memory_hits + 2);
        assert!(after.disk_hits > before.disk_hits);
    }
}
