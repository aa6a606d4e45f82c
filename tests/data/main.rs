//! Reading and moving data: indexing (views, gathers, arrayfire-rust's examples), assignment
//! and copy-on-write, data movement, the uniform-grid interpolations, events, arrays on several
//! devices, and groups of processes meeting over the loopback address. Each module was a test
//! binary of its own; they share this one, and its tests run in parallel threads: none of them
//! reads or changes process-wide state that another one would disturb (those live in
//! `tests/process`). The one setting changed here, `approx_uniform`'s FFT plan cache size,
//! changes no result, and that test puts back the default. `process_group` starts processes
//! of its own (this binary again, one test each), which change nothing here.

#[path = "../common/mod.rs"]
mod common;
#[path = "../index_ref/mod.rs"]
mod index_ref;

mod approx_uniform;
mod assign;
mod event;
mod index;
mod index_ported;
mod movement;
mod multi_device;
mod process_group;
