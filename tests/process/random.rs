//! Random numbers: the engines' known answers, every element type against a host reference of
//! the generators written here from their published definitions, the counter semantics of
//! engines (seeding, successive calls, clones, types, the default engine), empty and size-1
//! shapes, random shapes, and distribution tests (mean, variance, Kolmogorov-Smirnov, bit
//! balance) that a broken engine would fail.
//!
//! Because every value is compared with the reference computed here on the host, running this
//! file with `EMBERFIRE_BACKEND=cuda` checks that the CUDA kernel gives the CPU's numbers.

use crate::common;

use std::fmt::Debug;
use std::mem::size_of;

use common::special::erfc;
use emberfire::*;

// ---------------------------------------------------------------------------------------------
// The reference generators, from Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
// easy as 1, 2, 3" (SC11), section 3, and the Random123 library that accompanies it.
// ---------------------------------------------------------------------------------------------

/// Philox4x32 with `rounds` rounds. A round maps (L0, R0, L1, R1) to
/// (hi(M1 R1) ^ L0' ^ k0, lo(M1 R1), hi(M0 R0) ^ L1' ^ k1, lo(M0 R0)) where, in Random123's word
/// order, R0 = x[0], L0' = x[1], R1 = x[2], L1' = x[3]; the key is bumped by the Weyl
/// constants (golden ratio, sqrt(3) - 1) before every round but the first.
fn ref_philox(rounds: u32, ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const M: [u64; 2] = [0xD251_1F53, 0xCD9E_8D57];
    const BUMP: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
    let mut x = ctr;
    let mut k = key;
    for round in 0..rounds {
        if round > 0 {
            k = [k[0].wrapping_add(BUMP[0]), k[1].wrapping_add(BUMP[1])];
        }
        let p0 = M[0] * x[0] as u64;
        let p1 = M[1] * x[2] as u64;
        x = [
            (p1 >> 32) as u32 ^ x[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ x[3] ^ k[1],
            p0 as u32,
        ];
    }
    x
}

/// Threefry2x32 with `rounds` rounds: the key schedule is the key words and their xor with
/// Skein's parity constant; subkey s = (ks[s mod 3], ks[(s+1) mod 3] + s) is added before the
/// first round and after every fourth; each round is x0 += x1, x1 = rotl(x1, R) ^ x0 with
/// Threefish's rotation constants for two 32-bit words.
fn ref_threefry(rounds: u32, ctr: [u32; 2], key: [u32; 2]) -> [u32; 2] {
    const R: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let subkey = |s: u32| (ks[s as usize % 3], ks[(s as usize + 1) % 3].wrapping_add(s));
    let (a, b) = subkey(0);
    let (mut x0, mut x1) = (ctr[0].wrapping_add(a), ctr[1].wrapping_add(b));
    for round in 0..rounds {
        x0 = x0.wrapping_add(x1);
        x1 = x1.rotate_left(R[round as usize % 8]) ^ x0;
        if round % 4 == 3 {
            let (a, b) = subkey(round / 4 + 1);
            x0 = x0.wrapping_add(a);
            x1 = x1.wrapping_add(b);
        }
    }
    [x0, x1]
}

/// Known-answer tests of the reference generators: lines of `tests/kat_vectors` in the
/// Random123 distribution (D. E. Shaw Research), columns counter, key, expected output.
#[test]
fn reference_generators_match_random123_known_answers() {
    let _serial = crate::serial();
    let pi_ctr4 = [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344];
    let pi_key2 = [0xa409_3822, 0x299f_31d0];
    let philox = [
        (7, [0u32; 4], [0u32; 2], [0x5f6f_b709, 0x0d89_3f64, 0x4f12_1f81, 0x4f73_0a48]),
        (7, [!0; 4], [!0; 2], [0x5207_ddc2, 0x4516_5e59, 0x4d8e_e751, 0x8c52_f662]),
        (7, pi_ctr4, pi_key2, [0x4dfc_caba, 0x190a_87f0, 0xc473_62ba, 0xb6b5_242a]),
        (10, [0; 4], [0; 2], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
        (10, [!0; 4], [!0; 2], [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]),
        (10, pi_ctr4, pi_key2, [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]),
    ];
    for (rounds, ctr, key, want) in philox {
        assert_eq!(ref_philox(rounds, ctr, key), want, "philox4x32-{rounds} {ctr:x?} {key:x?}");
    }
    let (pi_ctr2, pi_key) = ([0x243f_6a88, 0x85a3_08d3], [0x1319_8a2e, 0x0370_7344]);
    let threefry = [
        (13, [0u32; 2], [0u32; 2], [0x9d1c_5ec6, 0x8bd5_0731]),
        (13, [!0; 2], [!0; 2], [0xfd36_d048, 0x2d17_272c]),
        (13, pi_ctr2, pi_key, [0xba3e_4725, 0xf27d_669e]),
        (20, [0; 2], [0; 2], [0x6b20_0159, 0x99ba_4efe]),
        (20, [!0; 2], [!0; 2], [0x1cb9_96fc, 0xbb00_2be7]),
        (20, pi_ctr2, pi_key, [0xc492_3a9c, 0x483d_f7a0]),
        (32, [0; 2], [0; 2], [0xcee3_d47e, 0xa23d_fd5c]),
        (32, [!0; 2], [!0; 2], [0x6e2f_e0d0, 0xb1b7_6f82]),
        (32, pi_ctr2, pi_key, [0xe282_7716, 0xc3c0_5cdf]),
    ];
    for (rounds, ctr, key, want) in threefry {
        assert_eq!(ref_threefry(rounds, ctr, key), want, "threefry2x32-{rounds} {ctr:x?}");
    }
}

/// The Philox4x32-10 known answer for counter 0 and key 0, through the public API: a fresh
/// Philox engine with seed 0 draws block 0 first, and `u32` elements are the words themselves.
#[test]
fn philox_engine_gives_the_random123_answer_for_seed_zero() {
    let _serial = crate::serial();
    let e = RandomEngine::new(RandomEngineType::PHILOX_4X32_10, Some(0));
    let got = random_uniform::<u32>(dim4!(4), &e).to_vec();
    assert_eq!(got, vec![0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
}

// ---------------------------------------------------------------------------------------------
// The reference byte stream and element values, as the "Random numbers" chapter defines them.
// ---------------------------------------------------------------------------------------------

/// The four words of block `g` of an engine of type `t` with `seed`.
fn ref_block(t: RandomEngineType, seed: u64, g: u64) -> [u32; 4] {
    let key = [seed as u32, (seed >> 32) as u32];
    let philox = |lane: u32| ref_philox(10, [g as u32, (g >> 32) as u32, lane, 0], key);
    match t {
        RandomEngineType::PHILOX_4X32_10 => philox(0),
        RandomEngineType::MERSENNE_GP11213 => philox(11213),
        RandomEngineType::THREEFRY_2X32_16 => {
            let c = g.wrapping_mul(2);
            let a = ref_threefry(16, [c as u32, (c >> 32) as u32], key);
            let c = c.wrapping_add(1);
            let b = ref_threefry(16, [c as u32, (c >> 32) as u32], key);
            [a[0], a[1], b[0], b[1]]
        }
    }
}

/// `nbytes` bytes of the stream starting at block `first`.
fn ref_bytes(t: RandomEngineType, seed: u64, first: u64, nbytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(nbytes + 16);
    let mut g = first;
    while out.len() < nbytes {
        for w in ref_block(t, seed, g) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        g += 1;
    }
    out.truncate(nbytes);
    out
}

/// Blocks of 16 bytes a request of `n` elements of `T` uses.
fn blocks<T>(n: usize) -> u64 {
    (n * size_of::<T>()).div_ceil(16) as u64
}

fn word(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().unwrap())
}
/// Uniform in [0, 1) from the top 24 bits of a word, in f64.
fn unit24(b: &[u8]) -> f64 {
    (word(b) >> 8) as f64 / (1u64 << 24) as f64
}
/// Uniform in [0, 1) from the top 53 bits of two words, in f64.
fn unit53(b: &[u8]) -> f64 {
    (u64::from_le_bytes(b[..8].try_into().unwrap()) >> 11) as f64 / (1u64 << 53) as f64
}

/// Element types with uniform numbers: the expected element from its bytes of the stream.
trait Uniform: HasAfEnum + PartialEq + Debug {
    fn from_stream(b: &[u8]) -> Self;
}

impl Uniform for f32 {
    fn from_stream(b: &[u8]) -> Self {
        unit24(b) as f32 // exact: 24 bits
    }
}
impl Uniform for f64 {
    fn from_stream(b: &[u8]) -> Self {
        unit53(b)
    }
}
impl Uniform for f16 {
    fn from_stream(b: &[u8]) -> Self {
        let h = u16::from_le_bytes([b[0], b[1]]);
        f16::from_f64((h >> 5) as f64 / 2048.0) // exact: 11 bits
    }
}
impl Uniform for c32 {
    fn from_stream(b: &[u8]) -> Self {
        c32::new(unit24(b) as f32, unit24(&b[4..]) as f32)
    }
}
impl Uniform for c64 {
    fn from_stream(b: &[u8]) -> Self {
        c64::new(unit53(b), unit53(&b[8..]))
    }
}
impl Uniform for bool {
    fn from_stream(b: &[u8]) -> Self {
        b[0] % 2 == 1
    }
}
macro_rules! uniform_int {
    ($($t:ty),*) => {$(
        impl Uniform for $t {
            fn from_stream(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b[..size_of::<$t>()].try_into().unwrap())
            }
        }
    )*};
}
uniform_int!(u8, i16, u16, i32, u32, i64, u64);

/// The expected uniform elements of a request of shape `dims` starting at block `first`.
fn ref_uniform<T: Uniform>(t: RandomEngineType, seed: u64, first: u64, n: usize) -> Vec<T> {
    let s = size_of::<T>();
    let bytes = ref_bytes(t, seed, first, n * s);
    (0..n).map(|i| T::from_stream(&bytes[i * s..])).collect()
}

/// Element types with normal numbers: their parts as f64, and the tolerance against the f64
/// reference (the backends' ln, sin and cos are within a few ulps; the angle is rounded once).
trait Normal: HasAfEnum + FloatingPoint + Debug {
    /// Bytes of one uniform value (4 for f32 parts, 8 for f64 parts).
    const UNIT: usize;
    const PARTS: usize;
    const TOL: f64;
    fn parts(self) -> Vec<f64>;
}
impl Normal for f32 {
    const UNIT: usize = 4;
    const PARTS: usize = 1;
    const TOL: f64 = 1e-5;
    fn parts(self) -> Vec<f64> {
        vec![self as f64]
    }
}
impl Normal for f64 {
    const UNIT: usize = 8;
    const PARTS: usize = 1;
    const TOL: f64 = 1e-12;
    fn parts(self) -> Vec<f64> {
        vec![self]
    }
}
impl Normal for c32 {
    const UNIT: usize = 4;
    const PARTS: usize = 2;
    const TOL: f64 = 1e-5;
    fn parts(self) -> Vec<f64> {
        vec![self.re as f64, self.im as f64]
    }
}
impl Normal for c64 {
    const UNIT: usize = 8;
    const PARTS: usize = 2;
    const TOL: f64 = 1e-12;
    fn parts(self) -> Vec<f64> {
        vec![self.re, self.im]
    }
}

/// The expected normal parts (Box-Muller over pairs of uniform values) of `n` elements.
fn ref_normal<T: Normal>(t: RandomEngineType, seed: u64, first: u64, n: usize) -> Vec<f64> {
    let reals = n * T::PARTS;
    let pairs = reals.div_ceil(2);
    let bytes = ref_bytes(t, seed, first, pairs * 2 * T::UNIT);
    let unit = |b: &[u8]| if T::UNIT == 4 { unit24(b) } else { unit53(b) };
    let step = if T::UNIT == 4 { 2f64.powi(-24) } else { 2f64.powi(-53) };
    let mut out = Vec::with_capacity(2 * pairs);
    for p in 0..pairs {
        let b = &bytes[2 * T::UNIT * p..];
        let u = unit(b) + step;
        let theta = 2.0 * std::f64::consts::PI * unit(&b[T::UNIT..]);
        let r = (-2.0 * u.ln()).sqrt();
        out.push(r * theta.cos());
        out.push(r * theta.sin());
    }
    out.truncate(reals);
    out
}

// ---------------------------------------------------------------------------------------------
// Checks against the reference
// ---------------------------------------------------------------------------------------------

const TYPES: [RandomEngineType; 3] = [PHILOX, THREEFRY, MERSENNE];

/// A check that reports what differs (`emberfire::*` brings its own `Result`).
type Check = std::result::Result<(), String>;

/// Two successive uniform draws of shape `dims` from a new engine equal the reference's first
/// and following blocks.
fn check_uniform<T: Uniform>(t: RandomEngineType, seed: u64, dims: Dim4) -> Check {
    let n = dims.elements() as usize;
    let e = RandomEngine::new(t, Some(seed));
    let a = random_uniform::<T>(dims, &e);
    let b = random_uniform::<T>(dims, &e);
    for (k, (arr, first)) in [(a, 0), (b, blocks::<T>(n))].into_iter().enumerate() {
        if arr.dims() != dims || arr.get_backend() != get_active_backend() {
            return Err(format!("{t:?}: dims {} on {:?}", arr.dims(), arr.get_backend()));
        }
        let got = arr.to_vec();
        let want = ref_uniform::<T>(t, seed, first, n);
        if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
            return Err(format!(
                "{t:?} seed {seed} dims {dims} {} call {k}: element {i} is {:?}, expected {:?}",
                std::any::type_name::<T>(),
                got[i],
                want[i]
            ));
        }
    }
    Ok(())
}

/// As `check_uniform`, for normal numbers within the type's tolerance.
fn check_normal<T: Normal>(t: RandomEngineType, seed: u64, dims: Dim4) -> Check {
    let n = dims.elements() as usize;
    let e = RandomEngine::new(t, Some(seed));
    let a = random_normal::<T>(dims, &e);
    let b = random_normal::<T>(dims, &e);
    for (k, (arr, first)) in [(a, 0), (b, blocks::<T>(n))].into_iter().enumerate() {
        if arr.dims() != dims {
            return Err(format!("{t:?}: dims {} instead of {dims}", arr.dims()));
        }
        let got: Vec<f64> = arr.to_vec().into_iter().flat_map(T::parts).collect();
        let want = ref_normal::<T>(t, seed, first, n);
        if let Some(i) = (0..got.len()).find(|&i| outside(got[i], want[i], T::TOL)) {
            return Err(format!(
                "{t:?} seed {seed} dims {dims} {} call {k}: part {i} is {}, expected {}",
                std::any::type_name::<T>(),
                got[i],
                want[i]
            ));
        }
    }
    Ok(())
}

/// True when `got` is NaN or further than `tol` from `want`.
fn outside(got: f64, want: f64, tol: f64) -> bool {
    got.is_nan() || (got - want).abs() > tol
}

fn ok(r: Check) {
    if let Err(e) = r {
        panic!("{e}");
    }
}

/// Shapes every type is checked on: empty (in each position), single elements, each of the
/// four dimensions long, sizes that end inside a 16-byte block, and more than one CPU chunk.
fn fixed_shapes() -> Vec<Dim4> {
    vec![
        dim4!(0),
        dim4!(3, 0),
        dim4!(1, 1, 0, 2),
        dim4!(1, 1, 1, 0),
        dim4!(1),
        dim4!(1, 1, 1, 1),
        dim4!(7),
        dim4!(1, 5),
        dim4!(1, 1, 3),
        dim4!(1, 1, 1, 9),
        dim4!(3, 5, 2, 3),
        dim4!(4097, 5),
    ]
}

macro_rules! uniform_tests {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let _serial = crate::serial();
            for (k, t) in TYPES.into_iter().enumerate() {
                for d in fixed_shapes() {
                    ok(check_uniform::<$t>(t, 0x5eed_0000 + k as u64, d));
                }
            }
            common::run_cases(24, |d, seed| check_uniform::<$t>(TYPES[seed as usize % 3], seed, d));
        }
    )*};
}

uniform_tests!(
    uniform_f32_matches_reference: f32,
    uniform_f64_matches_reference: f64,
    uniform_f16_matches_reference: f16,
    uniform_c32_matches_reference: c32,
    uniform_c64_matches_reference: c64,
    uniform_bool_matches_reference: bool,
    uniform_u8_matches_reference: u8,
    uniform_i16_matches_reference: i16,
    uniform_u16_matches_reference: u16,
    uniform_i32_matches_reference: i32,
    uniform_u32_matches_reference: u32,
    uniform_i64_matches_reference: i64,
    uniform_u64_matches_reference: u64,
);

macro_rules! normal_tests {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let _serial = crate::serial();
            for (k, t) in TYPES.into_iter().enumerate() {
                for d in fixed_shapes() {
                    ok(check_normal::<$t>(t, 0xface_0000 + k as u64, d));
                }
            }
            common::run_cases(24, |d, seed| check_normal::<$t>(TYPES[seed as usize % 3], seed, d));
        }
    )*};
}

normal_tests!(
    normal_f32_matches_reference: f32,
    normal_f64_matches_reference: f64,
    normal_c32_matches_reference: c32,
    normal_c64_matches_reference: c64,
);

/// A request far larger than the GPU's grid (so its threads loop) and than a CPU chunk, checked
/// at blocks spread over the whole array, the last partial block included.
#[test]
fn large_request_matches_reference_at_sampled_blocks() {
    let _serial = crate::serial();
    // 12 MiB of u8: more 16-byte blocks than the CUDA grid has threads (16 blocks of 256
    // threads per multiprocessor: 8.25 MiB on 132 multiprocessors), so threads loop
    let n = 12 * (1 << 20) + 7;
    let seed = 0x0123_4567_89ab_cdef;
    for t in [PHILOX, THREEFRY] {
        let e = RandomEngine::new(t, Some(seed));
        random_uniform::<u8>(dim4!(5), &e); // start the big request at block 1
        let got = random_uniform::<u8>(dim4!(n), &e).to_vec();
        let last = (n as u64 - 1) / 16;
        let sampled = (0..=last).step_by(9973).chain([last - 1, last]);
        for b in sampled {
            let want = ref_bytes(t, seed, 1 + b, 16);
            let lo = 16 * b as usize;
            let hi = (lo + 16).min(n);
            assert_eq!(got[lo..hi], want[..hi - lo], "{t:?}: block {b}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Draws read by other operations (on CUDA, f32 and f64 draws are computed where they are read)
// ---------------------------------------------------------------------------------------------

/// f32 and f64 as the reference computes them.
trait Real: Normal + Uniform + Copy + Into<f64> {}
impl Real for f32 {}
impl Real for f64 {}

/// The reference numbers of a draw of `n` elements from the first block of a new engine.
fn ref_draw<T: Real>(t: RandomEngineType, seed: u64, normal: bool, n: usize) -> Vec<f64> {
    if normal {
        ref_normal::<T>(t, seed, 0, n)
    } else {
        ref_uniform::<T>(t, seed, 0, n).into_iter().map(Into::into).collect()
    }
}

/// A draw of shape `dims` from a new engine.
fn draw<T: Real>(t: RandomEngineType, seed: u64, normal: bool, dims: Dim4) -> Array<T> {
    let e = RandomEngine::new(t, Some(seed));
    if normal {
        random_normal::<T>(dims, &e)
    } else {
        random_uniform::<T>(dims, &e)
    }
}

/// The sums of `exp(x / 4)` over dimension `d` (every dimension when `None`) of the column-major
/// values `x` of shape `dims`, in f64.
fn ref_sums(x: &[f64], dims: Dim4, d: Option<usize>) -> Vec<f64> {
    let mut out_dims = dims;
    match d {
        Some(d) => out_dims[d] = 1,
        None => out_dims = dim4!(1),
    }
    let s = dims.strides();
    let so = out_dims.strides();
    let mut out = vec![0.0; out_dims.elements() as usize];
    for (e, v) in x.iter().enumerate() {
        let c: [usize; 4] = std::array::from_fn(|k| e / s[k] as usize % dims[k] as usize);
        let o: usize =
            (0..4).map(|k| if out_dims[k] == 1 { 0 } else { c[k] * so[k] as usize }).sum();
        out[o] += (v / 4.0).exp();
    }
    out
}

/// Sums of a function of a draw along each dimension and over everything: on CUDA the
/// reduction's kernel computes the numbers (wide reads along rows and across columns, and
/// element by element for shapes that do not divide into them). Every engine type, both
/// distributions, shapes whose rows fill whole 16-byte blocks and shapes that do not.
macro_rules! reduced_draws_test {
    ($name:ident, $t:ty, $tol:expr) => {
        #[test]
        fn $name() {
            let _serial = crate::serial();
            let shapes =
                [dim4!(256, 37), dim4!(37, 256), dim4!(67, 5, 3), dim4!(4, 3, 2, 8), dim4!(1)];
            for (k, t) in TYPES.into_iter().enumerate() {
                for normal in [false, true] {
                    for dims in shapes {
                        let seed = 0xd1ce_0000 + k as u64;
                        let want_x = ref_draw::<$t>(t, seed, normal, dims.elements() as usize);
                        let x = draw::<$t>(t, seed, normal, dims);
                        let f = exp(&(&x * 0.25 as $t));
                        for d in [Some(0), Some(1), Some(2), Some(3), None] {
                            let got: Vec<f64> = match d {
                                Some(d) => {
                                    sum(&f, d as i32).to_vec().into_iter().map(f64::from).collect()
                                }
                                None => vec![sum_all(&f).0 as f64],
                            };
                            let want = ref_sums(&want_x, dims, d);
                            assert_eq!(got.len(), want.len());
                            let count = dims.elements() as f64 / want.len() as f64;
                            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                                assert!(
                                    (g - w).abs() <= $tol * count * w.abs().max(1.0),
                                    "{t:?} normal {normal} {dims} dim {d:?} [{i}]: {g} against {w}"
                                );
                            }
                        }
                    }
                }
            }
        }
    };
}

reduced_draws_test!(f32_draws_reduced_where_they_are_read_match_the_reference, f32, 1e-5);
reduced_draws_test!(f64_draws_reduced_where_they_are_read_match_the_reference, f64, 1e-12);

/// A draw broadcast against a larger shape (read through its own strides), reshaped, and read
/// by two programs: each element is the same number of the request every time.
#[test]
fn draws_keep_their_numbers_when_broadcast_reshaped_and_read_again() {
    let _serial = crate::serial();
    for (k, t) in TYPES.into_iter().enumerate() {
        let seed = 0xb0ad_0000 + k as u64;
        let want = ref_draw::<f32>(t, seed, true, 40);
        let x = draw::<f32>(t, seed, true, dim4!(40, 1));
        // broadcast along dimension 1 beside a range
        let y = add(&x, &range::<f32>(dim4!(40, 3), 1), true).to_vec();
        for (e, v) in y.iter().enumerate() {
            let w = want[e % 40] + (e / 40) as f64;
            assert!((*v as f64 - w).abs() <= 1e-5 * (1.0 + w.abs()), "{t:?} [{e}]: {v} {w}");
        }
        // the same leaf read again, reshaped, and along a row
        let again = moddims(&x, dim4!(8, 5)).to_vec();
        let row = transpose(&x, false).to_vec();
        for e in 0..40 {
            assert!((again[e] as f64 - want[e]).abs() <= 1e-5 * (1.0 + want[e].abs()));
            assert_eq!(again[e], row[e], "{t:?} [{e}]: two reads of one draw");
        }
    }
}

/// The Monte Carlo loop of a barrier option, as the programs benchmark writes it: normal draws,
/// their exponential's product along each path, a comparison and a mean, against the same
/// computation in f64 on the reference numbers.
#[test]
fn a_monte_carlo_estimate_from_draws_matches_the_reference() {
    let _serial = crate::serial();
    let (paths, steps, seed) = (4096u64, 48u64, 0x0b5e);
    let (vol, dt, drift) = (0.3f32, 0.01f32, 0.001f32);
    let z = draw::<f32>(PHILOX, seed, true, dim4!(paths, steps));
    let growth = exp(&(z * (vol * dt.sqrt()) + drift));
    let s = product(&growth, 1) * 100.0f32;
    let alive = lt(&s, &115.0f32, false).cast::<f32>();
    let got = mean_all(&(&s * &alive)).0;

    let zr = ref_draw::<f32>(PHILOX, seed, true, (paths * steps) as usize);
    let mut total = 0.0;
    for p in 0..paths as usize {
        let mut s = 100.0;
        for k in 0..steps as usize {
            s *= (zr[p + k * paths as usize] * (vol * dt.sqrt()) as f64 + drift as f64).exp();
        }
        total += if s < 115.0 { s } else { 0.0 };
    }
    let want = total / paths as f64;
    assert!((got - want).abs() <= 1e-4 * want, "{got} against {want}");
}

// ---------------------------------------------------------------------------------------------
// Engine semantics
// ---------------------------------------------------------------------------------------------

#[test]
fn same_seed_same_numbers_and_calls_move_on() {
    let _serial = crate::serial();
    for t in TYPES {
        let mut e = RandomEngine::new(t, Some(77));
        let a = random_uniform::<f32>(dim4!(6, 7), &e).to_vec();
        let b = random_uniform::<f32>(dim4!(6, 7), &e).to_vec();
        assert_ne!(a, b, "{t:?}: a second call gives new numbers");
        let other = RandomEngine::new(t, Some(77));
        assert_eq!(random_uniform::<f32>(dim4!(6, 7), &other).to_vec(), a, "{t:?}: same seed");
        e.set_seed(77);
        assert_eq!(e.get_seed(), 77);
        assert_eq!(random_uniform::<f32>(dim4!(6, 7), &e).to_vec(), a, "{t:?}: set_seed resets");
        e.set_seed(78);
        assert_ne!(random_uniform::<f32>(dim4!(6, 7), &e).to_vec(), a, "{t:?}: another seed");
    }
}

#[test]
fn engine_types_give_different_streams() {
    let _serial = crate::serial();
    let draw = |t| random_uniform::<u32>(dim4!(64), &RandomEngine::new(t, Some(5))).to_vec();
    let (p, f, m) = (draw(PHILOX), draw(THREEFRY), draw(MERSENNE));
    assert_ne!(p, f);
    assert_ne!(p, m);
    assert_ne!(f, m);
}

#[test]
fn clones_share_the_engine() {
    let _serial = crate::serial();
    let e = RandomEngine::new(THREEFRY, Some(3));
    let mut c = e.clone();
    // drawing from the clone advances the original: the original's next draw is block 1
    random_uniform::<u32>(dim4!(4), &c);
    let got = random_uniform::<u32>(dim4!(4), &e).to_vec();
    assert_eq!(got, ref_uniform::<u32>(THREEFRY, 3, 1, 4));
    // seed and type set through the clone are the original's
    c.set_seed(10);
    c.set_type(PHILOX);
    assert_eq!((e.get_seed(), e.get_type()), (10, PHILOX));
    assert_eq!(random_uniform::<u32>(dim4!(4), &e).to_vec(), ref_uniform::<u32>(PHILOX, 10, 0, 4));
}

#[test]
fn set_type_keeps_seed_and_counter() {
    let _serial = crate::serial();
    let mut e = RandomEngine::new(PHILOX, Some(21));
    random_uniform::<f64>(dim4!(3), &e); // 24 bytes: blocks 0 and 1
    e.set_type(THREEFRY);
    assert_eq!((e.get_type(), e.get_seed()), (THREEFRY, 21));
    let got = random_uniform::<u64>(dim4!(2), &e).to_vec();
    assert_eq!(got, ref_uniform::<u64>(THREEFRY, 21, 2, 2));
}

#[test]
fn empty_requests_use_no_counter() {
    let _serial = crate::serial();
    let e = RandomEngine::new(PHILOX, Some(8));
    let empty = random_uniform::<f32>(dim4!(0, 4), &e);
    assert_eq!((empty.elements(), empty.dims()), (0, dim4!(0, 4)));
    assert!(random_normal::<c64>(dim4!(2, 0), &e).is_empty());
    assert_eq!(random_uniform::<u32>(dim4!(4), &e).to_vec(), ref_uniform::<u32>(PHILOX, 8, 0, 4));
}

#[test]
fn engine_type_codes_and_constants() {
    let _serial = crate::serial();
    assert_eq!(RandomEngineType::from(100), PHILOX);
    assert_eq!(RandomEngineType::from(200), THREEFRY);
    assert_eq!(RandomEngineType::from(300), MERSENNE);
    assert_eq!(THREEFRY as u32, 200);
    assert_eq!(DEFAULT_RANDOM_ENGINE, RandomEngineType::PHILOX_4X32_10);
    assert_eq!(RandomEngine::new(MERSENNE, None).get_seed(), 0);
    let s = format!("{:?}", RandomEngine::new(THREEFRY, Some(4)));
    assert!(s.contains("THREEFRY_2X32_16") && s.contains('4'), "{s}");
}

#[test]
#[should_panic(expected = "RandomEngineType::from: 7 is not an engine type")]
fn unknown_engine_code_panics() {
    let _serial = crate::serial();
    let _ = RandomEngineType::from(7);
}

#[test]
#[should_panic(expected = "random_uniform: out of memory allocating 18446744073709551615 bytes")]
fn too_many_elements_are_out_of_memory() {
    let _serial = crate::serial();
    let e = RandomEngine::new(PHILOX, None);
    let _ = random_uniform::<f32>(dim4!(1u64 << 40, 1u64 << 40), &e);
}

#[test]
fn engines_are_shared_across_threads() {
    let _serial = crate::serial();
    // concurrent draws each take their own range of the counter: together they cover blocks
    // 0..8 exactly once
    let e = RandomEngine::new(PHILOX, Some(12));
    let parts: Vec<Vec<u32>> = std::thread::scope(|s| {
        let hs: Vec<_> =
            (0..8).map(|_| s.spawn(|| random_uniform::<u32>(dim4!(4), &e).to_vec())).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut got: Vec<[u32; 4]> = parts.iter().map(|v| [v[0], v[1], v[2], v[3]]).collect();
    let mut want: Vec<[u32; 4]> = (0..8).map(|g| ref_block(PHILOX, 12, g)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

/// The default engine, `randu`, `randn`, `set_seed`, `get_seed`, the macros and the default
/// type, in one test: other tests of this file use engines of their own, and no other test of
/// this binary runs meanwhile (`serial`), so nothing else moves the default engine's counter
/// while this runs. It puts the default engine's type and seed back as it found them.
#[test]
fn default_engine_functions_and_macros() {
    let _serial = crate::serial();
    let seed0 = get_seed();
    set_default_random_engine_type(PHILOX);
    set_seed(0);
    assert_eq!(get_seed(), 0);
    // the Random123 answer for counter 0 and key 0 again, through randu
    assert_eq!(
        randu::<u32>(dim4!(4)).to_vec(),
        [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
    );

    set_seed(31);
    assert_eq!(get_seed(), 31);
    let a: Vec<f32> = randu!(5, 3).to_vec();
    assert_eq!(a, ref_uniform::<f32>(PHILOX, 31, 0, 15));
    let b: Vec<f64> = randu!(f64; 2, 2).to_vec(); // blocks 4 and 5 (15 f32 used 4 blocks)
    assert_eq!(b, ref_uniform::<f64>(PHILOX, 31, 4, 4));
    let z = randn!(3).to_vec();
    let want = ref_normal::<f32>(PHILOX, 31, 6, 3);
    assert!(z.iter().zip(&want).all(|(g, w)| (*g as f64 - w).abs() < 1e-5), "{z:?} {want:?}");
    let zc = randn!(c64; 1, 1, 2);
    assert_eq!(zc.dims(), dim4!(1, 1, 2));
    let u = randu::<i16>(dim4!(9));
    assert_eq!(u.to_vec(), ref_uniform::<i16>(PHILOX, 31, 9, 9));
    let n = randn::<f64>(dim4!(2));
    assert_eq!(n.dims(), dim4!(2));

    // the shared default engine: seeding it through a handle seeds `randu`'s engine
    let mut d = get_default_random_engine();
    assert_eq!((d.get_type(), d.get_seed()), (PHILOX, 31));
    d.set_seed(31);
    assert_eq!(randu!(5, 3).to_vec(), a);

    set_default_random_engine_type(THREEFRY);
    assert_eq!(get_default_random_engine().get_type(), THREEFRY);
    set_seed(2);
    assert_eq!(randu::<u64>(dim4!(3)).to_vec(), ref_uniform::<u64>(THREEFRY, 2, 0, 3));
    set_default_random_engine_type(MERSENNE);
    assert_eq!(randu::<u8>(dim4!(20)).to_vec(), ref_uniform::<u8>(MERSENNE, 2, 2, 20));
    set_default_random_engine_type(DEFAULT_RANDOM_ENGINE);
    set_seed(seed0);
}

// ---------------------------------------------------------------------------------------------
// Distributions: tests a broken engine or mapping would fail. Bounds are five standard errors
// for moments and frequencies, and the Kolmogorov-Smirnov critical value at the 0.1 % level.
// ---------------------------------------------------------------------------------------------

const SAMPLES: usize = 1 << 18;

/// The Kolmogorov-Smirnov statistic of `x` against the distribution function `cdf`.
fn ks_statistic(mut x: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    x.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = cdf(v);
            (f - i as f64 / n).max((i + 1) as f64 / n - f)
        })
        .fold(0.0, f64::max)
}

/// The Kolmogorov-Smirnov critical value at the 0.1 % level for `n` samples.
fn ks_critical(n: usize) -> f64 {
    1.949 / (n as f64).sqrt()
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Checks uniform samples on [0, 1): range, mean 1/2 and variance 1/12 within five standard
/// errors (the variance's from the fourth moment 1/80), and the KS statistic.
fn check_uniform_distribution(what: &str, x: Vec<f64>) {
    let n = x.len() as f64;
    assert!(x.iter().all(|v| (0.0..1.0).contains(v)), "{what}: value outside [0, 1)");
    let (mean, var) = mean_var(&x);
    let se_mean = (1.0 / 12.0 / n).sqrt();
    let se_var = ((1.0 / 80.0 - 1.0 / 144.0) / n).sqrt();
    assert!((mean - 0.5).abs() < 5.0 * se_mean, "{what}: mean {mean}");
    assert!((var - 1.0 / 12.0).abs() < 5.0 * se_var, "{what}: variance {var}");
    let d = ks_statistic(x, |v| v.clamp(0.0, 1.0));
    assert!(d < ks_critical(n as usize), "{what}: KS statistic {d} (n = {n})");
}

/// Checks standard normal samples: mean 0 and variance 1 within five standard errors (the
/// variance's is sqrt(2/n)), and the KS statistic against the normal distribution function.
fn check_normal_distribution(what: &str, x: Vec<f64>) {
    let n = x.len() as f64;
    let (mean, var) = mean_var(&x);
    assert!(mean.abs() < 5.0 / n.sqrt(), "{what}: mean {mean}");
    assert!((var - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "{what}: variance {var}");
    let d = ks_statistic(x, normal_cdf);
    assert!(d < ks_critical(n as usize), "{what}: KS statistic {d} (n = {n})");
}

#[test]
fn uniform_floats_are_uniform() {
    let _serial = crate::serial();
    for t in TYPES {
        let e = RandomEngine::new(t, Some(1234));
        let x = random_uniform::<f32>(dim4!(SAMPLES), &e).to_vec();
        check_uniform_distribution(&format!("{t:?} f32"), x.iter().map(|&v| v as f64).collect());
        let x = random_uniform::<f64>(dim4!(SAMPLES), &e).to_vec();
        // the bits below f32's 24 must be random too: the low 29 bits of the 53 are uniform
        let low: Vec<f64> = x
            .iter()
            .map(|v| ((v * 2f64.powi(53)) as u64 % (1 << 29)) as f64 / 2f64.powi(29))
            .collect();
        check_uniform_distribution(&format!("{t:?} f64"), x);
        check_uniform_distribution(&format!("{t:?} f64 low bits"), low);
    }
    let e = RandomEngine::new(PHILOX, Some(99));
    let x = random_uniform::<f16>(dim4!(SAMPLES), &e).to_vec();
    // f16 takes 2^11 values: compare with the distribution of (k + 1/2) / 2048, k uniform
    check_uniform_distribution("f16", x.iter().map(|v| v.to_f64() + 0.5 / 2048.0).collect());
    let x = random_uniform::<c32>(dim4!(SAMPLES / 2), &e).to_vec();
    check_uniform_distribution("c32 re", x.iter().map(|c| c.re as f64).collect());
    check_uniform_distribution("c32 im", x.iter().map(|c| c.im as f64).collect());
}

#[test]
fn normal_floats_are_normal() {
    let _serial = crate::serial();
    for t in TYPES {
        let e = RandomEngine::new(t, Some(4321));
        let x = random_normal::<f32>(dim4!(SAMPLES), &e).to_vec();
        check_normal_distribution(&format!("{t:?} f32"), x.iter().map(|&v| v as f64).collect());
        let x = random_normal::<f64>(dim4!(SAMPLES), &e).to_vec();
        check_normal_distribution(&format!("{t:?} f64"), x);
    }
    let e = RandomEngine::new(THREEFRY, Some(17));
    let z = random_normal::<c64>(dim4!(SAMPLES / 2), &e).to_vec();
    let (re, im): (Vec<f64>, Vec<f64>) = z.iter().map(|c| (c.re, c.im)).unzip();
    // the two parts of a complex value come from one Box-Muller pair: uncorrelated
    let n = re.len() as f64;
    let corr = re.iter().zip(&im).map(|(a, b)| a * b).sum::<f64>() / n;
    assert!(corr.abs() < 5.0 / n.sqrt(), "c64 parts correlate: {corr}");
    check_normal_distribution("c64 re", re);
    check_normal_distribution("c64 im", im);
    let z = random_normal::<c32>(dim4!(SAMPLES / 2), &e).to_vec();
    check_normal_distribution("c32 im", z.iter().map(|c| c.im as f64).collect());
}

/// Each bit position of integer outputs is one in half the elements, within five standard
/// errors, and neighbouring elements are not equal more often than chance allows.
fn check_bits<T: HasAfEnum + Copy>(bits_of: impl Fn(T) -> u64, width: u32) {
    for t in TYPES {
        let e = RandomEngine::new(t, Some(2024));
        let x = random_uniform::<T>(dim4!(SAMPLES / 4), &e).to_vec();
        let n = x.len() as f64;
        for bit in 0..width {
            let ones = x.iter().filter(|&&v| bits_of(v) >> bit & 1 == 1).count() as f64;
            let z = (ones - n / 2.0) / (n / 4.0).sqrt();
            let name = std::any::type_name::<T>();
            assert!(z.abs() < 5.0, "{t:?} {name}: bit {bit} is one {ones} times in {n}");
        }
    }
}

#[test]
fn integer_bits_are_balanced() {
    let _serial = crate::serial();
    check_bits::<bool>(|v| v as u64, 1);
    check_bits::<u8>(|v| v as u64, 8);
    check_bits::<i16>(|v| v as u16 as u64, 16);
    check_bits::<u16>(|v| v as u64, 16);
    check_bits::<i32>(|v| v as u32 as u64, 32);
    check_bits::<u32>(|v| v as u64, 32);
    check_bits::<i64>(|v| v as u64, 64);
    check_bits::<u64>(|v| v, 64);
}

#[test]
fn random_arrays_feed_expressions() {
    let _serial = crate::serial();
    let e = RandomEngine::new(PHILOX, Some(6));
    let x = random_uniform::<f32>(dim4!(100, 3), &e);
    let y = &x * 2.0f32 - 1.0f32; // lazy, on the random array's backend
    let want = ref_uniform::<f32>(PHILOX, 6, 0, 300);
    for (g, w) in y.to_vec().iter().zip(&want) {
        assert_eq!(*g, w * 2.0 - 1.0);
    }
    let s = sum_all(&x).0 as f64;
    let ws: f64 = want.iter().map(|&v| v as f64).sum();
    assert!((s - ws).abs() < 1e-3, "{s} vs {ws}");
}
