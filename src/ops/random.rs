//! Random arrays: `randu`, `randn`, `random_uniform`, `random_normal`, with arrayfire-rust's
//! names and signatures.
//!
//! The request reserves its range of the engine's counter when the function is called, so the
//! order of calls alone decides which numbers each array gets. See `random/stream.rs` for the
//! exact definition of the values, which both backends follow.
//!
//! When the numbers are computed: f32 and f64 arrays on CUDA are lazy leaves of the expression
//! graph (`Expr::Random`), so the kernel that reads them computes them where it reads them (a
//! Monte Carlo loop that draws and reduces then never stores its draws); evaluating such an
//! array stores the same numbers. Every other type, and the CPU backend (whose generator is
//! fastest filling whole buffers), computes them at once.
//!
//! bf16 arrays are f32 draws of the same counters rounded to nearest even (a lazy cast, fused
//! into whatever reads them): bf16 keeps f32's exponent, so the f32 numbers' tails survive the
//! rounding, where a draw made at bf16's 8 bits would quantise them. The uniform draws that
//! would round up to 1 are held at the largest bf16 below 1, so `randu` stays in [0, 1).

use crate::array::Array;
use crate::backend::BackendKind;
use crate::device::active_kind;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, RandomNormal};
use crate::error::Error;
use crate::error_handler::OrRaise;
use crate::jit::{Data, Expr, Node};
use crate::random::stream::{blocks_for, Distribution};
use crate::random::RandomEngine;

/// An array of shape `dims` drawn from `engine` with distribution `dist` on the active backend.
fn draw<T: HasAfEnum>(
    func: &str,
    dims: Dim4,
    engine: &RandomEngine,
    dist: Distribution,
) -> Array<T> {
    if T::DTYPE == DType::BF16 {
        return draw_bf16(func, dims, engine, dist);
    }
    // A count past what an allocation can hold fails as out of memory, as evaluating an array
    // of that shape does, before the engine reserves numbers for it.
    let n = usize::try_from(dims.elements()).unwrap_or(usize::MAX);
    if n.checked_mul(T::DTYPE.size()).is_none() {
        Err::<(), _>(Error::OutOfMemory { bytes: usize::MAX }).or_raise(func);
    }
    let request = engine.reserve(blocks_for(n, T::DTYPE.size()), dist);
    let kind = active_kind();
    if matches!(kind, BackendKind::Cuda(_)) && matches!(T::DTYPE, DType::F32 | DType::F64) && n > 0
    {
        return Array::lazy(dims, kind, Expr::Random(request));
    }
    let buf = kind.ops().random(&request, T::DTYPE, n).or_raise(func);
    Array::from_node(Node::ready(T::DTYPE, dims, kind, Data::dense(buf, dims)))
}

/// A bf16 array (as `T`, which is bf16): the f32 draw rounded to nearest even; uniform values
/// that round to 1 become the largest bf16 below 1 (1 - 2^-8).
fn draw_bf16<T: HasAfEnum>(
    func: &str,
    dims: Dim4,
    engine: &RandomEngine,
    dist: Distribution,
) -> Array<T> {
    let rounded = draw::<f32>(func, dims, engine, dist).cast::<T>();
    match dist {
        Distribution::Normal => rounded,
        Distribution::Uniform => {
            let below_one = crate::ops::data::constant(1.0f32 - 1.0 / 256.0, Dim4::default());
            crate::ops::build::binary(
                func,
                crate::jit::BinOp::Min,
                rounded.node(),
                below_one.cast::<T>().node(),
                DType::BF16,
                false,
            )
        }
    }
}

/// Uniform random numbers of shape `dims` from the default engine: floats in [0, 1) (complex:
/// both parts), integers over every bit pattern of the type, `bool` true or false with equal
/// odds. Each call gives new numbers; [`set_seed`](crate::set_seed) restarts the sequence.
///
/// ```
/// use emberfire::{dim4, randu, set_seed};
/// set_seed(1);
/// let a = randu::<f64>(dim4!(1000));
/// assert!(a.to_vec().iter().all(|x| (0.0..1.0).contains(x)));
/// let mean = a.to_vec().iter().sum::<f64>() / 1000.0;
/// assert!((mean - 0.5).abs() < 0.05);
/// let flags = randu::<bool>(dim4!(8, 8));
/// assert_eq!(flags.dims(), dim4!(8, 8));
/// ```
pub fn randu<T: HasAfEnum>(dims: Dim4) -> Array<T> {
    draw("randu", dims, &crate::random::get_default_random_engine(), Distribution::Uniform)
}

/// Standard normal random numbers (mean 0, variance 1; for complex types the real and imaginary
/// parts are each standard normal) of shape `dims` from the default engine.
///
/// ```
/// use emberfire::{dim4, randn, set_seed};
/// set_seed(2);
/// let z = randn::<f32>(dim4!(4000)).to_vec();
/// let mean = z.iter().sum::<f32>() / 4000.0;
/// let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / 3999.0;
/// assert!(mean.abs() < 0.1 && (var - 1.0).abs() < 0.1);
/// ```
pub fn randn<T: HasAfEnum + RandomNormal>(dims: Dim4) -> Array<T> {
    draw("randn", dims, &crate::random::get_default_random_engine(), Distribution::Normal)
}

/// Uniform random numbers of shape `dims` from `engine` (values as for [`randu`]), advancing the
/// engine's counter.
///
/// ```
/// use emberfire::{dim4, random_uniform, RandomEngine, THREEFRY};
/// let e = RandomEngine::new(THREEFRY, Some(99));
/// let a = random_uniform::<u16>(dim4!(2, 3), &e);
/// let b = random_uniform::<u16>(dim4!(2, 3), &e);
/// assert_eq!(a.dims(), dim4!(2, 3));
/// assert_ne!(a.to_vec(), b.to_vec());
/// ```
pub fn random_uniform<T: HasAfEnum>(dims: Dim4, engine: &RandomEngine) -> Array<T> {
    draw("random_uniform", dims, engine, Distribution::Uniform)
}

/// Standard normal random numbers of shape `dims` from `engine` (values as for [`randn`]),
/// advancing the engine's counter.
///
/// ```
/// use emberfire::{c32, dim4, random_normal, RandomEngine, PHILOX};
/// let e = RandomEngine::new(PHILOX, Some(4));
/// let z = random_normal::<c32>(dim4!(3), &e);
/// assert!(z.to_vec().iter().all(|c| c.re.is_finite() && c.im.is_finite()));
/// ```
pub fn random_normal<T: HasAfEnum + RandomNormal>(dims: Dim4, engine: &RandomEngine) -> Array<T> {
    draw("random_normal", dims, engine, Distribution::Normal)
}
