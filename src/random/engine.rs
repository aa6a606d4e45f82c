//! `RandomEngine`, its types, and the default engine, with arrayfire-rust's names.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::stream::{Distribution, Draw, Generator, MERSENNE_LANE};
use crate::sync::lock;

/// The kinds of random engine, with ArrayFire's names and numeric values.
///
/// All three are counter-based in emberfire, so the same seed gives the same numbers on every
/// backend:
/// - `PHILOX_4X32_10`: Philox with 4 words of 32 bits and 10 rounds, as in ArrayFire.
/// - `THREEFRY_2X32_16`: Threefry with 2 words of 32 bits and 16 rounds, as in ArrayFire.
/// - `MERSENNE_GP11213`: ArrayFire uses MTGP32, a Mersenne Twister for GPUs. emberfire does
///   not implement it: an engine of this type draws from Philox4x32-10 in a separate part of
///   its counter space (third counter word 11213), so its numbers differ from those of a
///   Philox engine with the same seed, have Philox's statistical quality, and are the same on
///   the CPU and on CUDA. They are not ArrayFire's Mersenne numbers.
///
/// No engine reproduces ArrayFire's own sequences: the way counters map to elements is
/// emberfire's (see the "Random numbers" chapter of the book).
///
/// ```
/// use emberfire::RandomEngineType;
/// assert_eq!(RandomEngineType::from(200), RandomEngineType::THREEFRY_2X32_16);
/// assert_eq!(RandomEngineType::PHILOX_4X32_10 as u32, 100);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RandomEngineType {
    /// Philox, N = 4 words, W = 32 bits, 10 rounds.
    PHILOX_4X32_10 = 100,
    /// Threefry, N = 2 words, W = 32 bits, 16 rounds.
    THREEFRY_2X32_16 = 200,
    /// ArrayFire's Mersenne type (MEXP = 11213); a Philox stream of its own in emberfire.
    MERSENNE_GP11213 = 300,
}

/// Converts ArrayFire's numeric engine codes (100, 200, 300); panics on any other value.
impl From<u32> for RandomEngineType {
    fn from(t: u32) -> Self {
        match t {
            100 => RandomEngineType::PHILOX_4X32_10,
            200 => RandomEngineType::THREEFRY_2X32_16,
            300 => RandomEngineType::MERSENNE_GP11213,
            _ => panic!("RandomEngineType::from: {t} is not an engine type (100, 200 or 300)"),
        }
    }
}

/// Philox, the default engine type: `RandomEngineType::PHILOX_4X32_10`.
///
/// ```
/// assert_eq!(emberfire::PHILOX, emberfire::RandomEngineType::PHILOX_4X32_10);
/// ```
pub const PHILOX: RandomEngineType = RandomEngineType::PHILOX_4X32_10;
/// Threefry: `RandomEngineType::THREEFRY_2X32_16`.
///
/// ```
/// assert_eq!(emberfire::THREEFRY, emberfire::RandomEngineType::THREEFRY_2X32_16);
/// ```
pub const THREEFRY: RandomEngineType = RandomEngineType::THREEFRY_2X32_16;
/// The Mersenne type: `RandomEngineType::MERSENNE_GP11213` (see its note).
///
/// ```
/// assert_eq!(emberfire::MERSENNE, emberfire::RandomEngineType::MERSENNE_GP11213);
/// ```
pub const MERSENNE: RandomEngineType = RandomEngineType::MERSENNE_GP11213;
/// The type of the default engine when the process starts: [`PHILOX`].
///
/// ```
/// assert_eq!(emberfire::DEFAULT_RANDOM_ENGINE, emberfire::PHILOX);
/// ```
pub const DEFAULT_RANDOM_ENGINE: RandomEngineType = PHILOX;

/// What an engine is: its type, its seed, and how many blocks it has handed out since the
/// seed was set.
#[derive(Clone, Copy, Debug)]
struct EngineState {
    kind: RandomEngineType,
    seed: u64,
    counter: u64,
}

/// A random number engine: a type, a seed and a counter.
///
/// Each call that draws from an engine ([`random_uniform`](crate::random_uniform),
/// [`random_normal`](crate::random_normal)) reserves the next range of its counter, so
/// successive calls give new numbers, and the numbers depend only on (type, seed, counter,
/// element type, shape): the same on the CPU and on CUDA, and reproducible after
/// [`set_seed`](Self::set_seed), which also resets the counter.
///
/// `Clone` is shallow, as in arrayfire-rust (where it retains the same native engine): a clone
/// shares the type, seed and counter of the original, so drawing from either advances both,
/// and setting the seed or type of either changes both. To get an independent engine, make a
/// new one. Engines are `Send + Sync`; concurrent draws each get their own range of the counter.
///
/// ```
/// use emberfire::{dim4, random_uniform, RandomEngine, RandomEngineType};
/// let mut e = RandomEngine::new(RandomEngineType::PHILOX_4X32_10, Some(42));
/// let a = random_uniform::<f32>(dim4!(4), &e);
/// let b = random_uniform::<f32>(dim4!(4), &e);
/// assert_ne!(a.to_vec(), b.to_vec()); // the counter moved on
/// e.set_seed(42); // back to the start
/// assert_eq!(random_uniform::<f32>(dim4!(4), &e).to_vec(), a.to_vec());
/// ```
pub struct RandomEngine {
    state: Arc<Mutex<EngineState>>,
}

impl RandomEngine {
    /// A new engine of type `rengine` with `seed` (0 when `None`), its counter at 0.
    ///
    /// ```
    /// use emberfire::{RandomEngine, THREEFRY};
    /// let e = RandomEngine::new(THREEFRY, Some(7));
    /// assert_eq!((e.get_type(), e.get_seed()), (THREEFRY, 7));
    /// assert_eq!(RandomEngine::new(THREEFRY, None).get_seed(), 0);
    /// ```
    pub fn new(rengine: RandomEngineType, seed: Option<u64>) -> Self {
        let state = EngineState { kind: rengine, seed: seed.unwrap_or(0), counter: 0 };
        RandomEngine { state: Arc::new(Mutex::new(state)) }
    }

    fn lock(&self) -> MutexGuard<'_, EngineState> {
        // The state is three plain values, always consistent: a panic elsewhere cannot leave
        // it half-written, so a poisoned lock is safe to use.
        lock(&self.state)
    }

    /// The engine's type.
    ///
    /// ```
    /// use emberfire::{RandomEngine, MERSENNE};
    /// assert_eq!(RandomEngine::new(MERSENNE, None).get_type(), MERSENNE);
    /// ```
    pub fn get_type(&self) -> RandomEngineType {
        self.lock().kind
    }

    /// Changes the engine's type (for every clone). The seed and the counter are kept, so later
    /// draws continue from the same counter with the new generator.
    ///
    /// ```
    /// use emberfire::{RandomEngine, PHILOX, THREEFRY};
    /// let mut e = RandomEngine::new(PHILOX, Some(1));
    /// e.set_type(THREEFRY);
    /// assert_eq!(e.get_type(), THREEFRY);
    /// assert_eq!(e.get_seed(), 1);
    /// ```
    pub fn set_type(&mut self, engine_type: RandomEngineType) {
        self.lock().kind = engine_type;
    }

    /// Sets the seed (for every clone) and resets the counter to 0, so the engine gives the
    /// same numbers again.
    ///
    /// ```
    /// use emberfire::{dim4, random_uniform, RandomEngine, PHILOX};
    /// let mut e = RandomEngine::new(PHILOX, None);
    /// e.set_seed(9);
    /// let a = random_uniform::<u32>(dim4!(3), &e).to_vec();
    /// e.set_seed(9);
    /// assert_eq!(random_uniform::<u32>(dim4!(3), &e).to_vec(), a);
    /// assert_eq!(e.get_seed(), 9);
    /// ```
    pub fn set_seed(&mut self, seed: u64) {
        let mut s = self.lock();
        s.seed = seed;
        s.counter = 0;
    }

    /// The engine's seed.
    ///
    /// ```
    /// use emberfire::{RandomEngine, PHILOX};
    /// assert_eq!(RandomEngine::new(PHILOX, Some(123)).get_seed(), 123);
    /// ```
    pub fn get_seed(&self) -> u64 {
        self.lock().seed
    }

    /// Reserves `blocks` blocks of the counter for one request and describes it.
    pub(crate) fn reserve(&self, blocks: u64, dist: Distribution) -> Draw {
        let mut s = self.lock();
        let base = s.counter;
        s.counter = s.counter.wrapping_add(blocks);
        let (generator, lane) = match s.kind {
            RandomEngineType::PHILOX_4X32_10 => (Generator::Philox, 0),
            RandomEngineType::THREEFRY_2X32_16 => (Generator::Threefry, 0),
            RandomEngineType::MERSENNE_GP11213 => (Generator::Philox, MERSENNE_LANE),
        };
        Draw::new(generator, lane, s.seed, base, dist)
    }
}

/// Shares the engine, as arrayfire-rust's `Clone` retains the same native engine: the clone
/// and the original draw from one counter.
impl Clone for RandomEngine {
    fn clone(&self) -> Self {
        RandomEngine { state: self.state.clone() }
    }
}

impl fmt::Debug for RandomEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = *self.lock();
        f.debug_struct("RandomEngine")
            .field("type", &s.kind)
            .field("seed", &s.seed)
            .field("counter", &s.counter)
            .finish()
    }
}

/// The process's default engine, used by `randu`, `randn`, `set_seed` and `get_seed`.
fn default_engine() -> &'static RandomEngine {
    static DEFAULT: OnceLock<RandomEngine> = OnceLock::new();
    DEFAULT.get_or_init(|| RandomEngine::new(DEFAULT_RANDOM_ENGINE, Some(0)))
}

/// The default engine, shared: drawing from, seeding or retyping the returned engine does the
/// same to the default engine that [`randu`](crate::randu()) and [`randn`](crate::randn()) use.
///
/// There is one default engine per process (ArrayFire keeps one per device); since every
/// engine type is counter-based, it gives the same numbers on every backend. It starts as
/// [`DEFAULT_RANDOM_ENGINE`] with seed 0.
///
/// ```
/// use emberfire::{dim4, get_default_random_engine, random_uniform, randu, set_seed};
/// set_seed(5);
/// let a = randu::<f32>(dim4!(4)).to_vec();
/// let mut e = get_default_random_engine();
/// e.set_seed(5);
/// assert_eq!(random_uniform::<f32>(dim4!(4), &e).to_vec(), a);
/// ```
pub fn get_default_random_engine() -> RandomEngine {
    default_engine().clone()
}

/// Sets the type of the default engine, keeping its seed and counter.
///
/// ```
/// use emberfire::{get_default_random_engine, set_default_random_engine_type, PHILOX, THREEFRY};
/// set_default_random_engine_type(THREEFRY);
/// assert_eq!(get_default_random_engine().get_type(), THREEFRY);
/// set_default_random_engine_type(PHILOX);
/// ```
pub fn set_default_random_engine_type(rtype: RandomEngineType) {
    default_engine().clone().set_type(rtype)
}

/// Sets the seed of the default engine and resets its counter, so `randu` and `randn` repeat
/// their numbers.
///
/// ```
/// use emberfire::{dim4, get_seed, randn, set_seed};
/// set_seed(11);
/// let a = randn::<f64>(dim4!(5)).to_vec();
/// set_seed(11);
/// assert_eq!(randn::<f64>(dim4!(5)).to_vec(), a);
/// assert_eq!(get_seed(), 11);
/// ```
pub fn set_seed(seed: u64) {
    default_engine().clone().set_seed(seed)
}

/// The seed of the default engine (0 until [`set_seed`] is called).
///
/// ```
/// emberfire::set_seed(3);
/// assert_eq!(emberfire::get_seed(), 3);
/// ```
pub fn get_seed() -> u64 {
    default_engine().get_seed()
}
