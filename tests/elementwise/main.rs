//! Element-wise computation and the `Array` handle: binary and unary functions, casts, creation
//! and selection, the operators, integer semantics, bool bytes, lazy evaluation of fused
//! expression graphs, the CPU/CUDA parity checks, the array API and the programmer-error
//! panics. Each module was a test binary of its own; they share this one, and its tests run in
//! parallel threads: none of them reads or changes process-wide state that another one would
//! disturb (those live in `tests/process`): `array_api` counts locked host buffers, and no other
//! test here locks memory. `array_api` runs this binary again in a child process, by the test
//! name `array_api::print_functions_write_arrayfire_layout`.

#[path = "../common/mod.rs"]
mod common;

mod arith_binary;
mod arith_unary;
mod array_api;
mod bfloat16;
mod bool_bytes;
mod cast;
mod creation;
mod cuda_parity;
mod integer_semantics;
mod lazy;
mod operators;
mod panics;
