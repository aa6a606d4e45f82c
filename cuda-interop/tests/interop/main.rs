//! The interop crate's tests, one module per former test binary: a user's allocator under
//! emberfire's pool, CPU arrays and machines without CUDA, devices and handles, the book's
//! examples, `RawKernel`, memory across the boundary, the races the ordering prevents,
//! launches replayed from graphs, and emberfire on a user's stream. Every test that uses the GPU takes the lock of
//! `common::cuda()`, one for the whole binary, so that the tests that fill the device's memory
//! or read device-wide counters run alone; the `cpu_arrays` tests never touch the GPU.

#[path = "../common/mod.rs"]
mod common;

mod allocator;
mod cpu_arrays;
mod devices;
mod examples;
mod kernel;
mod memory;
mod races;
mod replay;
mod streams;
