//! Random number engines: the engine objects of the public API ([`RandomEngine`], the default
//! engine and its seed) and the counter-based generators behind them.
//!
//! Every engine type is counter-based here: the numbers of a request are a pure function of
//! (engine type, seed, counter, element type, shape). A request reserves a range of 16-byte
//! blocks of the engine's counter, and each backend computes each block independently (rayon
//! chunks on the CPU, one thread per block on CUDA), so both produce the same numbers. How
//! blocks become words and words become elements is defined in [`stream`].

mod engine;
mod macros;
pub(crate) mod philox;
pub(crate) mod stream;
pub(crate) mod threefry;

pub use engine::{
    get_default_random_engine, get_seed, set_default_random_engine_type, set_seed, RandomEngine,
    RandomEngineType, DEFAULT_RANDOM_ENGINE, MERSENNE, PHILOX, THREEFRY,
};
