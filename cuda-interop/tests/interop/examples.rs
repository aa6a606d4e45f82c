//! The book's interop examples, run as tests: each checks its own results against the
//! host, so a test here fails when an example computes something wrong. Needs a CUDA device
//! (skips without one).

use crate::common;

#[path = "../../examples/custom_kernel.rs"]
mod custom_kernel;

#[path = "../../examples/cuda_af_app.rs"]
mod cuda_af_app;

// Also used by `memory.rs`.
#[path = "../../examples/lend_buffers.rs"]
pub(crate) mod lend_buffers;

#[test]
fn the_custom_kernel_example() {
    let Some(_gpu) = common::cuda() else { return };
    custom_kernel::main().unwrap();
}

#[test]
fn the_seven_steps_example() {
    let Some(_gpu) = common::cuda() else { return };
    cuda_af_app::main().unwrap();
    // Twice: the second run takes its kernels from the cache and its memory from the pool.
    cuda_af_app::main().unwrap();
}

#[test]
fn the_lend_buffers_example() {
    let Some(_gpu) = common::cuda() else { return };
    lend_buffers::main().unwrap();
}
