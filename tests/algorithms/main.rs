//! Reductions, scans, sorting and sets, the by-key and ragged reductions, and statistics (with
//! the older signatures), each against host references. Each module was a test binary of its
//! own; they share this one, and its tests run in parallel threads: none of them reads or
//! changes process-wide state that another one would disturb (those live in `tests/process`).

#[path = "../common/mod.rs"]
mod common;

mod by_key_nan;
mod max_ragged;
mod reduce;
mod scan;
mod siblings;
mod sort;
mod stats;
mod stats_legacy;
