//! Tests that read or change state the whole process shares: the memory and kernel counters
//! (`device_mem_info`, `jit_stats`), manual evaluation and the height heuristic, the error
//! handler, the cuBLAS math mode, the default random engine, the memory step, locked and
//! adopted memory, DLPack's buffers, out-of-memory failures, and the CUDA backend's cache and
//! pool. Each module was a test binary, and so a process, of its own; here they share one.
//!
//! The test harness runs a binary's tests on parallel threads, so every test here takes
//! [`serial`] first and holds it to its end: no two of them run at once, and each leaves the
//! state it changed as it found it for the next. `adopted_host_memory`'s counting allocator is
//! the `#[global_allocator]` of this whole binary (it passes every call on to the system's).

#[path = "../common/mod.rs"]
mod common;

mod adopted_host_memory;
mod af_compat;
mod blas_global;
mod compile_ahead;
mod cuda_backend;
mod deep_graph;
mod dlpack;
mod error_handler;
mod eval_control;
mod launch_batch;
mod movement_fusion;
mod out_of_memory;
mod random;
mod reduce_fusion;

use std::sync::{Mutex, MutexGuard};

/// The one lock of this binary: every test takes it first and holds it to its end, so that no
/// two tests read or change the process's shared state at once. A test that panics while
/// holding it poisons it; the next test takes it all the same.
pub fn serial() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs test `name` of this binary in a child process with `envs` set (ignored tests
/// included), asserts that it passed, and returns the numbers of the line it printed starting
/// `child `: `key=value` fields, as `counts("key=")` reads them.
pub fn run_child(name: &str, envs: &[(&str, &std::ffi::OsStr)]) -> impl Fn(&str) -> u64 {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--include-ignored", "--nocapture"]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "child failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    let line = text.lines().find_map(|l| l.strip_prefix("child ")).expect("the child's counts");
    let line = line.to_string();
    move |key: &str| -> u64 {
        let field = line.split(' ').find_map(|f| f.strip_prefix(key)).expect("a count");
        field.parse().unwrap()
    }
}
