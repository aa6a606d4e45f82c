//! The code of the book's "Random numbers" chapter: engines and seeds, estimating pi by Monte
//! Carlo, normal numbers, the default engine and the macros, and integer types. Every result
//! is checked, so running the example verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: engine
    // An engine is a type, a seed and a counter. Each draw takes the next numbers.
    let mut engine = RandomEngine::new(RandomEngineType::PHILOX_4X32_10, Some(2024));
    let a = random_uniform::<f32>(dim4!(3, 2), &engine);
    let b = random_uniform::<f32>(dim4!(3, 2), &engine);
    assert_ne!(a.to_vec(), b.to_vec());
    assert!(a.to_vec().iter().all(|x| (0.0..1.0).contains(x)));

    // Setting the seed resets the counter: the same numbers come again, on any backend.
    engine.set_seed(2024);
    assert_eq!(random_uniform::<f32>(dim4!(3, 2), &engine).to_vec(), a.to_vec());

    // A clone shares the engine (as in arrayfire-rust): drawing from it moves both on.
    let shared = engine.clone();
    let c = random_uniform::<f32>(dim4!(3, 2), &shared);
    assert_eq!(c.to_vec(), b.to_vec());
    // ANCHOR_END: engine

    // ANCHOR: pi
    // Estimating pi: the fraction of uniform points of the unit square that fall inside the
    // quarter circle is pi / 4.
    let samples = 4_000_000;
    let engine = RandomEngine::new(THREEFRY, Some(7));
    let x = random_uniform::<f32>(dim4!(samples), &engine);
    let y = random_uniform::<f32>(dim4!(samples), &engine);
    let inside = count_all(&lt(&(&x * &x + &y * &y), &1.0f32, false)).0;
    let pi = 4.0 * inside as f64 / samples as f64;
    // the estimate's standard error is 4 sqrt(p (1 - p) / n) with p = pi / 4: about 0.0008
    let p = std::f64::consts::FRAC_PI_4;
    let se = 4.0 * (p * (1.0 - p) / samples as f64).sqrt();
    println!("pi is about {pi:.4} (standard error {se:.4})");
    assert!((pi - std::f64::consts::PI).abs() < 5.0 * se);
    // ANCHOR_END: pi

    // ANCHOR: normal
    // Standard normal numbers: mean 0, variance 1 (complex: each part).
    let n = 1_000_000;
    let z = random_normal::<f64>(dim4!(n), &engine);
    let mean = sum_all(&z).0 / n as f64;
    let var = sum_all(&(&z * &z)).0 / n as f64 - mean * mean;
    assert!(mean.abs() < 0.01 && (var - 1.0).abs() < 0.01, "{mean} {var}");

    // Other means and deviations are a scale and a shift away (lazy, fused with the draw's
    // consumer): here mean 10 and standard deviation 2.
    let w = random_normal::<f32>(dim4!(n), &engine) * 2.0f32 + 10.0f32;
    let w_mean = sum_all(&w).0 as f64 / n as f64;
    assert!((w_mean - 10.0).abs() < 0.02, "{w_mean}");
    // ANCHOR_END: normal

    // ANCHOR: default
    // `randu`, `randn` and their macros draw from the default engine; `set_seed` restarts it.
    set_seed(42);
    let u = randu!(4, 4); // f32
    let g = randn!(f64; 8);
    assert_eq!((u.dims(), g.dims()), (dim4!(4, 4), dim4!(8)));
    set_seed(42);
    assert_eq!(randu::<f32>(dim4!(4, 4)).to_vec(), u.to_vec());
    assert_eq!(get_seed(), 42);

    // The default engine can be retyped, or taken as a handle that shares it.
    set_default_random_engine_type(THREEFRY);
    assert_eq!(get_default_random_engine().get_type(), THREEFRY);
    set_default_random_engine_type(DEFAULT_RANDOM_ENGINE);
    // ANCHOR_END: default

    // ANCHOR: types
    // Integers take every bit pattern of their type; bools are true half the time.
    let engine = RandomEngine::new(MERSENNE, Some(1));
    let dice = random_uniform::<u32>(dim4!(60_000), &engine) % 6u32 + 1u32;
    let sixes = count_all(&eq(&dice, &6u32, false)).0 as f64;
    assert!((sixes / 60_000.0 - 1.0 / 6.0).abs() < 0.01, "{sixes}");
    let coins = random_uniform::<bool>(dim4!(10_000), &engine);
    let heads = count_all(&coins).0 as f64;
    assert!((heads / 10_000.0 - 0.5).abs() < 0.03, "{heads}");
    // ANCHOR_END: types
}
