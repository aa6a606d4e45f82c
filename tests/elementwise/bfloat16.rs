//! bf16 as an element type of its own: the edges the generic per-type tests (which include
//! bf16) do not reach by chance. Casts at and beside rounding ties, NaN and infinities,
//! creation (`range`, `randu`, `randn`), element-wise results against the f64 reference with
//! bf16's tolerance, promotion with the other types, indexing, assignment, joins and printing.
//!
//! Every expected value comes from `common::bf16_nearest`, which rounds by comparing with the
//! neighbouring bf16 values in f64, independently of emberfire and of the `half` crate.

use crate::common;

use common::{bf16_nearest, bf16_nearest_int, Rng64, SeedableRng};
use emberfire::*;
use rand::Rng;

/// Half an ulp of bf16 at `y`'s magnitude (the spacing of the bf16 values around it), with the
/// smallest subnormal's half for values below the normal range.
fn half_ulp(y: f64) -> f64 {
    let a = y.abs();
    let e = if a < 2f64.powi(-126) { -126 } else { a.log2().floor() as i32 };
    2f64.powi(e - 7) / 2.0
}

/// `got` is within half an ulp of `want` after an f32 computation: the f32 result may be a few
/// f32 ulps from the exact value (2^-21 relative allows for the library's functions), which
/// can move a value sitting next to a bf16 tie to the other side.
fn assert_bf16_close(got: bf16, want: f64, what: &str) {
    let g = got.to_f64();
    if want.is_nan() {
        assert!(got.is_nan(), "{what}: got {g}, want NaN");
        return;
    }
    if want.is_infinite() {
        assert_eq!(g, want, "{what}");
        return;
    }
    let allowed = half_ulp(want) + want.abs() * 2f64.powi(-21);
    assert!((g - want).abs() <= allowed, "{what}: got {g}, want {want} (within {allowed:e})");
}

fn bits(v: &[bf16]) -> Vec<u16> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn casts_from_f64_round_to_nearest_even_at_and_beside_ties() {
    let tie = 1.0 + 2f64.powi(-8); // halfway between 1 and the next bf16
    let odd_tie = 1.0 + 3.0 * 2f64.powi(-8); // halfway above an odd significand
    let x = vec![
        tie,
        tie + 2f64.powi(-40), // above the tie only in bits an f32 would drop
        tie - 2f64.powi(-40),
        odd_tie,
        -odd_tie,
        bf16::MAX.to_f64() + 2f64.powi(118), // below half an ulp past the largest: finite
        bf16::MAX.to_f64() + 2f64.powi(119), // the tie past the largest: infinite
        1e300,
        -1e-300,
        2f64.powi(-133), // the smallest subnormal
        2f64.powi(-134), // half of it: a tie, to zero (even)
        3.0 * 2f64.powi(-134),
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
    ];
    let got = Array::new(&x, dim4!(x.len() as u64)).cast::<bf16>().to_vec();
    let want: Vec<bf16> = x.iter().map(|&v| bf16_nearest(v)).collect();
    assert_eq!(bits(&got), bits(&want), "inputs {x:?}");
    assert_eq!(got[1].to_bits(), 0x3f81, "a hair above a tie rounds up");
    assert!(got[6].is_infinite() && got[5].is_finite());
    let nan = Array::new(&[f64::NAN, -f64::NAN], dim4!(2)).cast::<bf16>().to_vec();
    assert!(nan.iter().all(|v| v.is_nan()));
}

#[test]
fn casts_from_f32_f16_and_integers_round_once() {
    let mut r = Rng64::seed_from_u64(38);
    let f: Vec<f32> = (0..4000)
        .map(|i| match i % 4 {
            // f32 values that are bf16 ties: the kept bits, then exactly one half
            0 => {
                f32::from_bits((r.gen::<u32>() & 0x7fff_0000 & !0x7f80_0000 | 0x3f00_0000) | 0x8000)
            }
            1 => f32::from_bits(r.gen::<u32>() & 0x7f7f_ffff),
            2 => -(r.gen::<f32>() * 1e-38),
            _ => r.gen_range(-1e6f32..1e6),
        })
        .collect();
    let got = Array::new(&f, dim4!(f.len() as u64)).cast::<bf16>().to_vec();
    let want: Vec<bf16> = f.iter().map(|&v| bf16_nearest(v as f64)).collect();
    assert_eq!(bits(&got), bits(&want));

    let big_tie = (1i64 << 62) + (1i64 << 54);
    let ints =
        vec![257i64, 259, -259, 65_793, big_tie, big_tie + 1, -big_tie - 1, i64::MIN, i64::MAX, 0];
    let got = Array::new(&ints, dim4!(ints.len() as u64)).cast::<bf16>().to_vec();
    let want: Vec<bf16> = ints.iter().map(|&i| bf16_nearest_int(i as i128)).collect();
    assert_eq!(bits(&got), bits(&want), "{ints:?}");
    let u = vec![u64::MAX, (1u64 << 63) + (1u64 << 55) + 1, 255, 0];
    let got = Array::new(&u, dim4!(u.len() as u64)).cast::<bf16>().to_vec();
    let want: Vec<bf16> = u.iter().map(|&i| bf16_nearest_int(i as i128)).collect();
    assert_eq!(bits(&got), bits(&want), "{u:?}");

    let h: Vec<f16> =
        [0.1f64, 65504.0, -3.0e-5, 1.0 / 3.0, 6.0e-8].iter().map(|&v| f16::from_f64(v)).collect();
    let got = Array::new(&h, dim4!(h.len() as u64)).cast::<bf16>().to_vec();
    let want: Vec<bf16> = h.iter().map(|v| bf16_nearest(v.to_f64())).collect();
    assert_eq!(bits(&got), bits(&want));
}

#[test]
fn casts_out_of_bf16_are_exact_or_saturate() {
    let v: Vec<bf16> =
        [1.5, -2.75, 3.0e38, -1e-40, 300.0].iter().map(|&x| bf16_nearest(x)).collect();
    let a = Array::new(&v, dim4!(5));
    let f = a.cast::<f64>().to_vec();
    assert_eq!(f, v.iter().map(|x| x.to_f64()).collect::<Vec<_>>());
    // to integers: truncation toward zero, saturating, NaN to 0 (Rust's `as`)
    let specials =
        Array::new(&[bf16::NAN, bf16::INFINITY, bf16::NEG_INFINITY, bf16_nearest(-2.75)], dim4!(4));
    assert_eq!(specials.cast::<i32>().to_vec(), vec![0, i32::MAX, i32::MIN, -2]);
    assert_eq!(a.cast::<u8>().to_vec(), vec![1, 0, 255, 0, 255]);
    // to f16: one rounding from the exact value (bf16's range is wider: large values overflow)
    let h = a.cast::<f16>().to_vec();
    assert_eq!(h[0], f16::from_f64(1.5));
    assert!(h[2].is_infinite());
    assert_eq!(a.cast::<bool>().to_vec(), vec![true; 5]);
}

#[test]
fn creation_range_constant_and_empty() {
    // range beyond 256 is rounded: bf16 holds every integer only up to 2^8
    let r = range::<bf16>(dim4!(600), 0).to_vec();
    for (i, v) in r.iter().enumerate() {
        assert_eq!(v.to_bits(), bf16_nearest(i as f64).to_bits(), "range element {i}");
    }
    let c = constant(bf16_nearest(0.1), dim4!(3, 1, 2)).to_vec();
    assert_eq!(bits(&c), vec![bf16_nearest(0.1).to_bits(); 6]);
    let e = Array::<bf16>::new_empty(dim4!(0, 3));
    assert_eq!(e.elements(), 0);
    assert!(e.to_vec().is_empty());
    assert!((&e + &e).to_vec().is_empty());
    assert_eq!(sum(&e, 0).dims(), dim4!(1, 3));
    assert_eq!(sum(&e, 0).to_vec(), vec![0.0f32; 3]);
}

#[test]
fn random_numbers_are_the_f32_draws_rounded() {
    let e = RandomEngine::new(PHILOX, Some(380));
    let u32s = random_uniform::<f32>(dim4!(20_000), &e).to_vec();
    let e = RandomEngine::new(PHILOX, Some(380));
    let u16s = random_uniform::<bf16>(dim4!(20_000), &e).to_vec();
    let below_one = 1.0 - 2f64.powi(-8);
    for (i, (&f, b)) in u32s.iter().zip(&u16s).enumerate() {
        let want = bf16_nearest(f as f64).to_f64().min(below_one);
        assert_eq!(b.to_f64(), want, "uniform element {i} from {f}");
        assert!((0.0..1.0).contains(&b.to_f64()));
    }
    let e = RandomEngine::new(THREEFRY, Some(7));
    let n32 = random_normal::<f32>(dim4!(5000), &e).to_vec();
    let e = RandomEngine::new(THREEFRY, Some(7));
    let n16 = random_normal::<bf16>(dim4!(5000), &e).to_vec();
    for (&f, b) in n32.iter().zip(&n16) {
        assert_eq!(b.to_bits(), bf16_nearest(f as f64).to_bits(), "normal from {f}");
    }
    let mean = n16.iter().map(|x| x.to_f64()).sum::<f64>() / 5000.0;
    assert!(mean.abs() < 0.1, "{mean}");
    // the default engine too
    set_seed(5);
    assert!(randu::<bf16>(dim4!(100)).to_vec().iter().all(|x| (0.0..1.0).contains(&x.to_f64())));
    assert_eq!(randn::<bf16>(dim4!(3, 3)).dims(), dim4!(3, 3));
}

/// Random bf16 values of moderate size and their exact values.
fn inputs(r: &mut Rng64, n: usize, lo: f64, hi: f64) -> (Vec<bf16>, Vec<f64>) {
    let v: Vec<bf16> = (0..n).map(|_| bf16_nearest(r.gen_range(lo..hi))).collect();
    let x = v.iter().map(|b| b.to_f64()).collect();
    (v, x)
}

#[test]
fn arithmetic_is_the_exact_result_rounded_once() {
    let mut r = Rng64::seed_from_u64(1);
    let n = 3000;
    let (a, x) = inputs(&mut r, n, -100.0, 100.0);
    let (b, y) = inputs(&mut r, n, 0.01, 50.0);
    let (aa, bb) = (Array::new(&a, dim4!(n as u64)), Array::new(&b, dim4!(n as u64)));
    // + - * of bf16 values are exact in f32, so the result is the exact value's nearest bf16
    let exact = |got: Vec<bf16>, f: &dyn Fn(f64, f64) -> f64, what: &str| {
        for i in 0..n {
            let want = bf16_nearest(f(x[i], y[i]));
            assert_eq!(got[i].to_bits(), want.to_bits(), "{what} {} {}", x[i], y[i]);
        }
    };
    exact((&aa + &bb).to_vec(), &|p, q| p + q, "add");
    exact((&aa - &bb).to_vec(), &|p, q| p - q, "sub");
    exact((&aa * &bb).to_vec(), &|p, q| p * q, "mul");
    // fused: each operation rounds, as the CPU and CUDA kernels both do
    let fused = ((&aa * &bb) + &aa).to_vec();
    for i in 0..n {
        let want = bf16_nearest(bf16_nearest(x[i] * y[i]).to_f64() + x[i]);
        assert_eq!(fused[i].to_bits(), want.to_bits(), "fused {i}");
    }
    let q = (&aa / &bb).to_vec();
    let s = sqrt(&bb).to_vec();
    // scaled by powers of two, exact in bf16, so the reference's argument is the kernel's
    let ex = exp(&(&bb * bf16_nearest(0.125))).to_vec();
    let sn = sin(&aa).to_vec();
    let lg = log(&bb).to_vec();
    let th = tanh(&(&aa * bf16_nearest(0.0625))).to_vec();
    for i in 0..n {
        assert_bf16_close(q[i], x[i] / y[i], "div");
        assert_bf16_close(s[i], y[i].sqrt(), "sqrt");
        assert_bf16_close(ex[i], (y[i] * 0.125).exp(), "exp");
        assert_bf16_close(sn[i], x[i].sin(), "sin");
        assert_bf16_close(lg[i], y[i].ln(), "log");
        assert_bf16_close(th[i], (x[i] * 0.0625).tanh(), "tanh");
    }
}

/// Sine and cosine of bf16 arguments on both paths of the CUDA kernels (below 105615 in
/// magnitude, and larger, infinite or NaN), mixed within the vectors of a fused loop (eight
/// bf16 elements a vector) and in its scalar tail.
#[test]
fn sin_cos_near_and_far_arguments() {
    let near = [0.0, -0.0, 0.5, -3.0, 100.0, 1e4, -1e5, 3.140625];
    let far = [1.1e5, -2e5, 1e6, 1e30, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    for n in [64usize, 67] {
        let mut xs: Vec<bf16> = (0..n).map(|i| bf16_nearest(near[i % near.len()])).collect();
        for (k, &f) in far.iter().enumerate() {
            xs[(k * 9 + 2) % n] = bf16_nearest(f);
        }
        let a = Array::new(&xs, dim4!(n as u64));
        let (s, c) = (sin(&a).to_vec(), cos(&a).to_vec());
        for (i, x) in xs.iter().enumerate() {
            let x = x.to_f64();
            assert_bf16_close(s[i], x.sin(), &format!("sin({x}) of {n}"));
            assert_bf16_close(c[i], x.cos(), &format!("cos({x}) of {n}"));
        }
    }
}

#[test]
fn specials_and_overflow() {
    let v = [bf16::NAN, bf16::INFINITY, bf16::NEG_INFINITY, bf16::MAX, bf16::ZERO, bf16::NEG_ZERO];
    let a = Array::new(&v, dim4!(6));
    let doubled = (&a * 2.0f32).cast::<bf16>().to_vec();
    assert!(doubled[0].is_nan());
    assert_eq!(doubled[1], bf16::INFINITY);
    assert_eq!(doubled[2], bf16::NEG_INFINITY);
    assert_eq!(doubled[3], bf16::INFINITY, "MAX * 2 overflows");
    let twice = (&a + &a).to_vec();
    assert_eq!(twice[3], bf16::INFINITY);
    assert_eq!(twice[5].to_bits(), bf16::NEG_ZERO.to_bits(), "-0 + -0 is -0");
    assert_eq!(isnan(&a).to_vec(), vec![true, false, false, false, false, false]);
    assert_eq!(isinf(&a).to_vec(), vec![false, true, true, false, false, false]);
    let inv = (constant(bf16::ONE, dim4!(6)) / &a).to_vec();
    assert!(inv[0].is_nan());
    assert_eq!(inv[4], bf16::INFINITY);
    assert_eq!(inv[5], bf16::NEG_INFINITY);
}

#[test]
fn promotion_with_other_types() {
    let b = Array::new(&[bf16_nearest(1.5), bf16_nearest(-0.25)], dim4!(2));
    let h = Array::new(&[f16::from_f64(0.1), f16::from_f64(2.0)], dim4!(2));
    let f = Array::new(&[0.1f32, 0.2], dim4!(2));
    let i = Array::new(&[3i32, 300], dim4!(2));
    let bh = &b + &h; // neither holds the other: f32, as PyTorch promotes them
    assert_eq!(bh.get_type(), DType::F32);
    assert_eq!(bh.to_vec(), vec![1.5 + f16::from_f64(0.1).to_f32(), 1.75]);
    let bf = &b * &f;
    assert_eq!(bf.get_type(), DType::F32);
    assert_eq!(bf.to_vec(), vec![1.5f32 * 0.1, -0.25 * 0.2]);
    let bi = &b + &i; // integers give bf16, as with f16
    assert_eq!(bi.get_type(), DType::BF16);
    assert_eq!(bits(&bi.to_vec()), bits(&[bf16_nearest(4.5), bf16_nearest(299.75)]));
    let d = &b - 0.1f64;
    assert_eq!(d.get_type(), DType::F64);
    assert_eq!(d.to_vec(), vec![1.5 - 0.1, -0.25 - 0.1]);
    // a scalar of the type itself, and in place
    let mut m = &b * bf16_nearest(3.0);
    assert_eq!(bits(&m.to_vec()), bits(&[bf16_nearest(4.5), bf16_nearest(-0.75)]));
    m += bf16_nearest(0.01);
    assert_eq!(
        bits(&m.to_vec()),
        bits(&[
            bf16_nearest(4.5 + bf16_nearest(0.01).to_f64()),
            bf16_nearest(-0.75 + bf16_nearest(0.01).to_f64())
        ])
    );
}

#[test]
fn broadcasting_over_size_one_dimensions() {
    let mut r = Rng64::seed_from_u64(3);
    let (a, x) = inputs(&mut r, 12, -4.0, 4.0);
    let (b, y) = inputs(&mut r, 3, -4.0, 4.0);
    let aa = Array::new(&a, dim4!(4, 3));
    let bb = Array::new(&b, dim4!(1, 3));
    let got = mul(&aa, &bb, true).to_vec();
    for j in 0..3 {
        for i in 0..4 {
            let want = bf16_nearest(x[i + 4 * j] * y[j]);
            assert_eq!(got[i + 4 * j].to_bits(), want.to_bits(), "({i}, {j})");
        }
    }
}

#[test]
fn indexing_assignment_joins_and_reshapes_move_bits() {
    let mut r = Rng64::seed_from_u64(9);
    let (a, _) = inputs(&mut r, 24, -1e4, 1e4);
    let mut a = a;
    a[5] = bf16::NAN;
    a[6] = bf16::NEG_INFINITY;
    let arr = Array::new(&a, dim4!(4, 6));
    // rows 1..=2 of columns 0, 2, 4
    let sub = index(&arr, &[Seq::new(1.0, 2.0, 1.0), Seq::new(0.0, 4.0, 2.0)]).to_vec();
    let want: Vec<u16> = [0usize, 2, 4]
        .iter()
        .flat_map(|&c| [a[1 + 4 * c], a[2 + 4 * c]])
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(bits(&sub), want);
    let t = transpose(&arr, false).to_vec();
    for i in 0..4 {
        for j in 0..6 {
            assert_eq!(t[j + 6 * i].to_bits(), a[i + 4 * j].to_bits());
        }
    }
    let m = moddims(&arr, dim4!(6, 4)).to_vec();
    assert_eq!(bits(&m), bits(&a));
    let joined = join(1, &arr, &arr).to_vec();
    assert_eq!(bits(&joined[..24]), bits(&a));
    assert_eq!(bits(&joined[24..]), bits(&a));
    let mut target = constant(bf16::ZERO, dim4!(4, 6));
    let patch = Array::new(&[bf16_nearest(7.0); 2], dim4!(1, 2));
    assign_seq(&mut target, &[Seq::new(3.0, 3.0, 1.0), Seq::new(1.0, 2.0, 1.0)], &patch);
    let tv = target.to_vec();
    assert_eq!(tv.len(), 24);
    for (k, v) in tv.iter().enumerate() {
        let want = if k == 3 + 4 || k == 3 + 8 { 7.0 } else { 0.0 };
        assert_eq!(v.to_f64(), want, "element {k}");
    }
    // a single element and a size-1 column
    assert_eq!(row(&arr, 2).dims(), dim4!(1, 6));
    assert_eq!(col(&arr, 5).to_vec()[3].to_bits(), a[23].to_bits());
}

#[test]
fn signal_and_image_functions_compute_in_f32() {
    // small integers: every product and sum is exact, so the results are exact too
    let x: Vec<bf16> = [1.0, 2.0, 3.0, 4.0, 5.0].iter().map(|&v| bf16_nearest(v)).collect();
    let k: Vec<bf16> = [1.0, -1.0, 2.0].iter().map(|&v| bf16_nearest(v)).collect();
    let c = convolve1(
        &Array::new(&x, dim4!(5)),
        &Array::new(&k, dim4!(3)),
        ConvMode::EXPAND,
        ConvDomain::SPATIAL,
    );
    assert_eq!(c.get_type(), DType::BF16);
    let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
    let ks = [1.0, -1.0, 2.0];
    let mut want = vec![0.0f64; 7];
    for (i, a) in xs.iter().enumerate() {
        for (j, b) in ks.iter().enumerate() {
            want[i + j] += a * b;
        }
    }
    assert_eq!(c.to_vec().iter().map(|v| v.to_f64()).collect::<Vec<_>>(), want);
    let e = std::panic::catch_unwind(|| {
        iir(&Array::new(&k, dim4!(3)), &Array::new(&k, dim4!(3)), &Array::new(&x, dim4!(5)))
    });
    let msg = e.unwrap_err().downcast::<String>().map(|s| *s).unwrap_or_default();
    assert!(msg.contains("iir") && msg.contains("bf16"), "{msg}");
}

#[test]
fn prints_like_f16() {
    let h = Array::new(&[bf16_nearest(0.25), bf16::INFINITY, bf16::NAN], dim4!(1, 3));
    assert_eq!(format!("{h}"), "[1 3 1 1]\n    0.2500        inf        nan \n");
    assert_eq!(DType::BF16.name(), "bf16");
    assert_eq!(DType::BF16.size(), 2);
    assert_eq!(get_size(DType::BF16), 2);
}
