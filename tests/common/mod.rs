//! Shared helpers of the integration tests: exact host values of every element type, random
//! inputs per type, host casting rules, tolerance-aware comparison, broadcasting arithmetic,
//! the property-test runner, and references for the element-wise operations.
//!
//! Every reference here is computed on the host from the test's own inputs; nothing in this
//! module calls emberfire to compute an expected value.

#![allow(dead_code)]

pub mod refs;
pub mod special;

use std::fmt::Debug;

use emberfire::{bf16, c32, c64, dim4, f16, Array, DType, Dim4, HasAfEnum};
use proptest::strategy::{Just, Strategy};
use proptest::test_runner::{Config, TestCaseError, TestRng, TestRunner};
pub use rand::{Rng, SeedableRng};

/// A small, fast generator (SplitMix64): the tests draw millions of values, and a
/// cryptographic generator dominated their run time in debug builds.
#[derive(Clone, Debug)]
pub struct Rng64(u64);

impl rand::RngCore for Rng64 {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl SeedableRng for Rng64 {
    type Seed = [u8; 8];
    fn from_seed(seed: [u8; 8]) -> Self {
        Rng64(u64::from_le_bytes(seed))
    }
}

/// A value of any element type, held exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum V {
    B(bool),
    I(i128),
    F(f64),
    C(c64),
}

impl V {
    /// As a real number (bool 0/1, complex: the real part).
    pub fn f(self) -> f64 {
        match self {
            V::B(b) => b as u8 as f64,
            V::I(i) => i as f64,
            V::F(f) => f,
            V::C(c) => c.re,
        }
    }

    /// As a complex number.
    pub fn c(self) -> c64 {
        match self {
            V::C(c) => c,
            other => c64::new(other.f(), 0.0),
        }
    }

    /// As an integer; only for bool and integer values.
    pub fn i(self) -> i128 {
        match self {
            V::B(b) => b as i128,
            V::I(i) => i,
            other => panic!("test bug: {other:?} is not an integer"),
        }
    }

    /// "Not zero", the truth value of any element.
    pub fn nz(self) -> bool {
        match self {
            V::B(b) => b,
            V::I(i) => i != 0,
            V::F(f) => f != 0.0,
            V::C(c) => c.re != 0.0 || c.im != 0.0,
        }
    }
}

/// The family of an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Bool,
    Int,
    Float,
    Complex,
}

/// What the tests need to know about an element type.
#[derive(Clone, Copy, Debug)]
pub struct Ty {
    pub name: &'static str,
    pub dtype: DType,
    pub class: Class,
    /// Width in bits for integers (8 for bool, which computes as u8).
    pub bits: u32,
    pub signed: bool,
    /// Relative tolerance of a correctly rounded result (floating types).
    pub rel: f64,
    /// The smallest positive subnormal (floating types): the absolute tolerance floor.
    pub tiny: f64,
}

/// An element type under test.
pub trait Elem: HasAfEnum + Copy + PartialEq + Debug + Send + Sync + 'static {
    const TY: Ty;
    /// The exact value.
    fn to_v(self) -> V;
    /// The value converted with emberfire's documented cast rules (Rust `as` for numbers:
    /// integers wrap, floats truncate and saturate, NaN gives 0; complex keeps the real part;
    /// bool is "not zero"), implemented here independently.
    fn from_v(v: V) -> Self;
    /// A random value from the whole range, special values included (NaN, infinities, zeros,
    /// MIN, MAX).
    fn any(r: &mut Rng64) -> Self;
    /// A random moderate value: |x| <= 8, no special values.
    fn small(r: &mut Rng64) -> Self;
}

fn int_any(r: &mut Rng64, min: i128, max: i128) -> i128 {
    match r.gen_range(0..10) {
        0 => [0, 1, min, max, (-1i128).max(min), min + 1, max - 1][r.gen_range(0..7)],
        1..=4 => r.gen_range(-12i128..=12).clamp(min, max),
        _ => r.gen_range(min..=max),
    }
}

/// A random real: mostly moderate magnitudes, sometimes very small or large ones (up to
/// 10^max_exp), sometimes NaN, ±inf and ±0.
pub fn float_any(r: &mut Rng64, max_exp: f64) -> f64 {
    let sign = if r.gen_bool(0.5) { -1.0 } else { 1.0 };
    match r.gen_range(0..100) {
        0..=3 => f64::NAN,
        4..=6 => f64::INFINITY,
        7..=9 => f64::NEG_INFINITY,
        10..=12 => 0.0,
        13..=14 => -0.0,
        15..=22 => sign * 10f64.powf(r.gen_range(-max_exp..max_exp)),
        23..=30 => (r.gen_range(-40..=40) as f64) * 0.5,
        _ => sign * r.gen_range(1.0..10.0) * 10f64.powf(r.gen_range(-3.0..3.0)),
    }
}

macro_rules! int_elem {
    ($t:ty, $dt:ident, $signed:expr) => {
        impl Elem for $t {
            const TY: Ty = Ty {
                name: stringify!($t),
                dtype: DType::$dt,
                class: Class::Int,
                bits: <$t>::BITS,
                signed: $signed,
                rel: 0.0,
                tiny: 0.0,
            };
            fn to_v(self) -> V {
                V::I(self as i128)
            }
            fn from_v(v: V) -> Self {
                match v {
                    V::B(b) => b as $t,
                    V::I(i) => i as $t,
                    V::F(f) => f as $t,
                    V::C(c) => c.re as $t,
                }
            }
            fn any(r: &mut Rng64) -> Self {
                int_any(r, <$t>::MIN as i128, <$t>::MAX as i128) as $t
            }
            fn small(r: &mut Rng64) -> Self {
                r.gen_range(-8i128..=8).clamp(<$t>::MIN as i128, <$t>::MAX as i128) as $t
            }
        }
    };
}

int_elem!(u8, U8, false);
int_elem!(i16, S16, true);
int_elem!(u16, U16, false);
int_elem!(i32, S32, true);
int_elem!(u32, U32, false);
int_elem!(i64, S64, true);
int_elem!(u64, U64, false);

impl Elem for bool {
    const TY: Ty = Ty {
        name: "bool",
        dtype: DType::B8,
        class: Class::Bool,
        bits: 8,
        signed: false,
        rel: 0.0,
        tiny: 0.0,
    };
    fn to_v(self) -> V {
        V::B(self)
    }
    fn from_v(v: V) -> Self {
        v.nz()
    }
    fn any(r: &mut Rng64) -> Self {
        r.gen_bool(0.5)
    }
    fn small(r: &mut Rng64) -> Self {
        r.gen_bool(0.5)
    }
}

macro_rules! float_elem {
    ($t:ty, $dt:ident, $rel:expr, $tiny:expr, $max_exp:expr, $from:expr, $from_int:expr, $to:expr) => {
        impl Elem for $t {
            const TY: Ty = Ty {
                name: stringify!($t),
                dtype: DType::$dt,
                class: Class::Float,
                bits: 0,
                signed: true,
                rel: $rel,
                tiny: $tiny,
            };
            fn to_v(self) -> V {
                V::F($to(self))
            }
            fn from_v(v: V) -> Self {
                match v {
                    V::B(b) => $from(b as u8 as f64),
                    // Rounds once (f16: integers beyond f16's range overflow either way).
                    V::I(i) => $from_int(i),
                    V::F(f) => $from(f),
                    V::C(c) => $from(c.re),
                }
            }
            fn any(r: &mut Rng64) -> Self {
                $from(float_any(r, $max_exp))
            }
            fn small(r: &mut Rng64) -> Self {
                $from(r.gen_range(-8.0..8.0))
            }
        }
    };
}

#[rustfmt::skip]
mod floats {
    use super::*;
    float_elem!(f32, F32, 1e-6, (f32::MIN_POSITIVE * f32::EPSILON) as f64, 38.0, |x: f64| x as f32, |i: i128| i as f32, |x: f32| x as f64);
    float_elem!(f64, F64, 1e-13, f64::MIN_POSITIVE * f64::EPSILON, 300.0, |x: f64| x, |i: i128| i as f64, |x: f64| x);
    float_elem!(f16, F16, 1e-3, 5.960_464_477_539_063e-8, 4.5, f16::from_f64, |i: i128| f16::from_f64(i as f64), |x: f16| x.to_f64());
    float_elem!(bf16, BF16, 4e-3, 9.183_549_615_799_121e-41, 38.0, bf16_nearest, bf16_nearest_int, |x: bf16| x.to_f64());
}

/// The bf16 nearest to `x`, ties to the even significand, found by comparing `x` with the
/// bf16 values around it in f64 (exact: every bf16 and every difference of neighbours is an
/// f64), independently of how emberfire or the `half` crate round. NaN stays NaN; past the
/// largest finite value by half an ulp or more is infinite.
pub fn bf16_nearest(x: f64) -> bf16 {
    if x.is_nan() {
        return bf16::NAN;
    }
    let max = bf16::MAX.to_f64();
    let half_ulp_of_max = 2f64.powi(127 - 8);
    if x.abs() >= max + half_ulp_of_max {
        return if x > 0.0 { bf16::INFINITY } else { bf16::NEG_INFINITY };
    }
    // the bf16 bit patterns of |x|'s truncation and the next one up bracket |x|
    let a = x.abs();
    let mut lo = 0u16;
    let mut hi = bf16::MAX.to_bits();
    // largest pattern whose value is <= a (the patterns of non-negative values are ordered)
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if bf16::from_bits(mid).to_f64() <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let below = lo;
    let pick = if bf16::from_bits(below).to_f64() == a || below == bf16::MAX.to_bits() {
        below
    } else {
        let above = below + 1;
        let (db, da) = (a - bf16::from_bits(below).to_f64(), bf16::from_bits(above).to_f64() - a);
        if db < da || (db == da && below & 1 == 0) {
            below
        } else {
            above
        }
    };
    let m = bf16::from_bits(pick);
    if x.is_sign_negative() {
        -m
    } else {
        m
    }
}

/// The bf16 nearest to the integer `i` (ties to even), exactly: beyond 2^53, where an f64 of
/// `i` would round first, every bf16 is an integer and the comparison is made in i128.
pub fn bf16_nearest_int(i: i128) -> bf16 {
    if i.unsigned_abs() <= 1u128 << 53 {
        return bf16_nearest(i as f64);
    }
    let a = i.unsigned_abs();
    let width = 128 - a.leading_zeros();
    let shift = width - 8; // bf16 keeps 8 significant bits
    let below = (a >> shift) << shift;
    let above = below + (1u128 << shift);
    let (db, da) = (a - below, above - a);
    let kept = below >> shift;
    let pick = if db < da || (db == da && kept & 1 == 0) { below } else { above };
    // the pick is a power-of-two multiple of at most 9 bits: exact in f64
    bf16_nearest(if i < 0 { -(pick as f64) } else { pick as f64 })
}

macro_rules! complex_elem {
    ($t:ty, $re:ty, $dt:ident, $rel:expr, $tiny:expr) => {
        impl Elem for $t {
            const TY: Ty = Ty {
                name: stringify!($t),
                dtype: DType::$dt,
                class: Class::Complex,
                bits: 0,
                signed: true,
                rel: $rel,
                tiny: $tiny,
            };
            fn to_v(self) -> V {
                V::C(c64::new(self.re as f64, self.im as f64))
            }
            fn from_v(v: V) -> Self {
                match v {
                    V::C(c) => <$t>::new(c.re as $re, c.im as $re),
                    other => <$t>::new(<$re as Elem>::from_v(other), 0.0),
                }
            }
            fn any(r: &mut Rng64) -> Self {
                let part = |r: &mut Rng64| {
                    if r.gen_bool(0.03) {
                        [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0][r.gen_range(0..4)]
                    } else {
                        let s = if r.gen_bool(0.5) { -1.0 } else { 1.0 };
                        s * r.gen_range(1.0..10.0) * 10f64.powf(r.gen_range(-3.0..3.0))
                    }
                };
                <$t>::new(part(r) as $re, part(r) as $re)
            }
            fn small(r: &mut Rng64) -> Self {
                <$t>::new(r.gen_range(-4.0..4.0), r.gen_range(-4.0..4.0))
            }
        }
    };
}

complex_elem!(c32, f32, C32, 1e-6, (f32::MIN_POSITIVE * f32::EPSILON) as f64);
complex_elem!(c64, f64, C64, 1e-13, f64::MIN_POSITIVE * f64::EPSILON);

/// How close a result must be to the reference.
#[derive(Clone, Copy, Debug)]
pub struct Tol {
    /// Multiplies the type's relative tolerance.
    pub factor: f64,
    /// Added to |reference| before applying the relative tolerance: an absolute allowance for
    /// results that pass near zero where the reference itself is only absolutely accurate.
    pub scale: f64,
    /// Integer results computed through floating point (root, atan2, hypot) are the float
    /// result rounded to the nearest integer; a result within a few f64 ulps of that is
    /// accepted too (the last bit of the float decides near half-integers, and 64-bit
    /// results are larger than f64's integer precision).
    pub int_slack: bool,
    /// The relative accuracy of the reference itself, where it is computed by a series or an
    /// approximation rather than by a correctly rounded library function.
    pub reference: f64,
}

impl Tol {
    pub const EXACT: Tol = Tol { factor: 1.0, scale: 0.0, int_slack: false, reference: 0.0 };

    pub fn x(factor: f64) -> Tol {
        Tol { factor, ..Tol::EXACT }
    }

    pub fn scale(self, scale: f64) -> Tol {
        Tol { scale, ..self }
    }

    pub fn slack(self) -> Tol {
        Tol { int_slack: true, ..self }
    }

    pub fn reference(self, rel: f64) -> Tol {
        Tol { reference: rel, ..self }
    }

    fn rel(self, ty: Ty) -> f64 {
        (ty.rel * self.factor).max(self.reference)
    }
}

fn float_close(g: f64, w: f64, ty: Ty, tol: Tol) -> bool {
    if w.is_nan() {
        return g.is_nan();
    }
    if w.is_infinite() || g.is_infinite() || g.is_nan() {
        return g == w;
    }
    let allowed = (tol.rel(ty) * (w.abs() + tol.scale)).max(ty.tiny * tol.factor.max(1.0));
    (g - w).abs() <= allowed
}

/// Whether `got` matches the reference value `want` (exact, before conversion to `O`).
pub fn close<O: Elem>(got: O, want: V, tol: Tol) -> bool {
    let ty = O::TY;
    let w = O::from_v(want);
    match ty.class {
        Class::Bool | Class::Int => {
            if got == w {
                return true;
            }
            if let (true, V::F(x)) = (tol.int_slack, want) {
                // within half a unit of the float result, give or take a few of its ulps
                return (got.to_v().f() - x).abs() <= 0.5 + x.abs() * 2e-15;
            }
            false
        }
        Class::Float => float_close(got.to_v().f(), w.to_v().f(), ty, tol),
        Class::Complex => {
            let (g, w) = (got.to_v().c(), w.to_v().c());
            if w.re.is_finite() && w.im.is_finite() {
                if !(g.re.is_finite() && g.im.is_finite()) {
                    return false;
                }
                let allowed = (tol.rel(ty) * (w.norm() + tol.scale)).max(ty.tiny * tol.factor);
                (g - w).norm() <= allowed
            } else {
                float_close(g.re, w.re, ty, tol) && float_close(g.im, w.im, ty, tol)
            }
        }
    }
}

/// Compares a whole result; the error names the first mismatch and describes it with `what`.
pub fn check_all<O: Elem>(
    got: &[O],
    want: &[V],
    tol: Tol,
    what: &dyn Fn(usize) -> String,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{}: {} elements, expected {}", what(0), got.len(), want.len()));
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !close(got[i], want[i], tol)).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{}: got {:?}, want {:?} (exact {:?}); {} of {} elements differ",
            what(i),
            got[i],
            O::from_v(want[i]),
            want[i],
            bad.len(),
            got.len()
        )),
    }
}

/// Asserts an array's type, shape and values against a reference.
pub fn assert_array<O: Elem>(a: &Array<O>, dims: Dim4, want: &[V], tol: Tol, what: &str) {
    assert_eq!(a.get_type(), O::TY.dtype, "{what}: element type");
    assert_eq!(a.dims(), dims, "{what}: dims");
    if let Err(e) = check_all(&a.to_vec(), want, tol, &|i| format!("{what}, element {i}")) {
        panic!("{e}");
    }
}

/// The exact values of a slice.
pub fn vs<T: Elem>(x: &[T]) -> Vec<V> {
    x.iter().map(|v| v.to_v()).collect()
}

/// `n` random values.
pub fn gen_vec<T>(r: &mut Rng64, n: usize, g: &dyn Fn(&mut Rng64) -> T) -> Vec<T> {
    (0..n).map(|_| g(r)).collect()
}

// ---- shapes and broadcasting ----------------------------------------------------------------

/// The shape of a broadcast result: equal sizes stay, a size of 1 takes the other's.
pub fn bcast(a: Dim4, b: Dim4) -> Dim4 {
    let mut d = [0u64; 4];
    for k in 0..4 {
        d[k] = if a[k] == b[k] || b[k] == 1 { a[k] } else { b[k] };
    }
    Dim4::new(&d)
}

/// The index into an operand of shape `inp` of element `lin` of a result of shape `out`.
pub fn bidx(out: Dim4, inp: Dim4, lin: usize) -> usize {
    let mut rest = lin as u64;
    let (mut idx, mut stride) = (0u64, 1u64);
    for k in 0..4 {
        let c = rest % out[k].max(1);
        rest /= out[k].max(1);
        if inp[k] != 1 {
            idx += c * stride;
        }
        stride *= inp[k];
    }
    idx as usize
}

/// Coordinates of linear index `lin` in `dims` (column-major).
pub fn coords(dims: Dim4, lin: usize) -> [u64; 4] {
    let mut rest = lin as u64;
    let mut c = [0u64; 4];
    for k in 0..4 {
        c[k] = rest % dims[k].max(1);
        rest /= dims[k].max(1);
    }
    c
}

/// Random shapes: up to four dimensions of 0 (rarely), 1 (often) or 2..=7, and sometimes a
/// shape of more than 4096 elements (so that several CPU chunks run in parallel), with the
/// long dimension in any position.
pub fn dims() -> impl Strategy<Value = Dim4> {
    let d = proptest::prop_oneof![1 => Just(0u64), 16 => Just(1u64), 23 => 2u64..=7];
    let big = proptest::prop_oneof![
        Just([10007u64, 1, 1, 1]),
        Just([1, 10007, 1, 1]),
        Just([1, 1, 4099, 1]),
        Just([1, 1, 1, 10007]),
        Just([97, 103, 1, 1]),
        Just([5, 3, 7, 97]),
    ];
    proptest::prop_oneof![
        11 => [d.clone(), d.clone(), d.clone(), d].prop_map(|a| Dim4::new(&a)),
        1 => big.prop_map(|a| Dim4::new(&a)),
    ]
}

/// Runs `f` on `cases` random (shape, seed) pairs; a failure is shrunk on the shape and
/// reported with the shape and seed that reproduce it. The sequence is deterministic.
pub fn run_cases(cases: u32, f: impl Fn(Dim4, u64) -> Result<(), String>) {
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    let rng = TestRng::deterministic_rng(config.rng_algorithm);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (dims(), proptest::num::u64::ANY);
    if let Err(e) = runner.run(&strategy, |(d, seed)| f(d, seed).map_err(TestCaseError::fail)) {
        panic!("{e}");
    }
}

/// How the operands of a binary operation are shaped in one test case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Both operands have the result's shape.
    Same,
    /// Size-1 dimensions broadcast (batch = true).
    Batch,
    /// The right operand is a Rust scalar.
    ScalarRhs,
    /// The left operand is a Rust scalar.
    ScalarLhs,
    /// The right operand is a single-element array (broadcast without batch).
    OneRhs,
    /// The left operand is a single-element array.
    OneLhs,
}

/// Operand shapes and mode for a binary case with result shape `dims`.
pub fn binary_shapes(dims: Dim4, r: &mut Rng64, scalars: bool) -> (Dim4, Dim4, bool, Mode) {
    let one = Dim4::default();
    let pick = r.gen_range(0..10);
    match pick {
        0..=2 => (dims, dims, r.gen_bool(0.5), Mode::Same),
        3..=6 => {
            let (mut a, mut b) = (dims, dims);
            for k in 0..4 {
                match r.gen_range(0..4) {
                    0 => a[k] = 1,
                    1 => b[k] = 1,
                    _ => {}
                }
            }
            (a, b, true, Mode::Batch)
        }
        7 if scalars => (dims, one, false, Mode::ScalarRhs),
        8 if scalars => (one, dims, false, Mode::ScalarLhs),
        7 | 9 => (dims, one, false, Mode::OneRhs),
        _ => (one, dims, r.gen_bool(0.5), Mode::OneLhs),
    }
}

/// A binary function of two arrays with a batch flag.
pub type ArraysFn<'a, A, B, O> = &'a dyn Fn(&Array<A>, &Array<B>, bool) -> Array<O>;
/// A binary function of an array and a scalar on the right.
pub type ScalarRhsFn<'a, A, B, O> = &'a dyn Fn(&Array<A>, &B) -> Array<O>;
/// A binary function of a scalar on the left and an array.
pub type ScalarLhsFn<'a, A, B, O> = &'a dyn Fn(&A, &Array<B>) -> Array<O>;

/// A binary operation in its forms: two arrays, and (for the functions that accept them)
/// a scalar on either side.
pub struct BinOp<'a, A: HasAfEnum, B: HasAfEnum, O: HasAfEnum> {
    pub arrays: ArraysFn<'a, A, B, O>,
    pub scalar_rhs: Option<ScalarRhsFn<'a, A, B, O>>,
    pub scalar_lhs: Option<ScalarLhsFn<'a, A, B, O>>,
}

/// Runs one random case of a binary operation against `reference`, which receives the exact
/// operand values.
#[allow(clippy::too_many_arguments)]
pub fn binary_case<A: Elem, B: Elem, O: Elem>(
    name: &str,
    dims: Dim4,
    seed: u64,
    ga: &dyn Fn(&mut Rng64) -> A,
    gb: &dyn Fn(&mut Rng64) -> B,
    op: &BinOp<A, B, O>,
    reference: &dyn Fn(V, V) -> V,
    tol: Tol,
) -> Result<(), String> {
    let mut r = Rng64::seed_from_u64(seed);
    let scalars = op.scalar_rhs.is_some();
    let (da, db, batch, mode) = binary_shapes(dims, &mut r, scalars);
    let a = gen_vec(&mut r, da.elements() as usize, ga);
    let b = gen_vec(&mut r, db.elements() as usize, gb);
    let out = match mode {
        Mode::ScalarRhs => (op.scalar_rhs.unwrap())(&Array::new(&a, da), &b[0]),
        Mode::ScalarLhs => (op.scalar_lhs.unwrap())(&a[0], &Array::new(&b, db)),
        _ => (op.arrays)(&Array::new(&a, da), &Array::new(&b, db), batch),
    };
    let od = bcast(da, db);
    let what = |i: usize| {
        let (x, y) = (a.get(bidx(od, da, i)), b.get(bidx(od, db, i)));
        format!(
            "{name}({}, {}) -> {}, {mode:?}, dims {da} and {db}, element {i} of {od}, inputs \
             {x:?} and {y:?}",
            A::TY.name,
            B::TY.name,
            O::TY.name
        )
    };
    if out.get_type() != O::TY.dtype || out.dims() != od {
        return Err(format!("{}: type {:?} dims {}", what(0), out.get_type(), out.dims()));
    }
    let n = od.elements() as usize;
    let want: Vec<V> =
        (0..n).map(|i| reference(a[bidx(od, da, i)].to_v(), b[bidx(od, db, i)].to_v())).collect();
    check_all(&out.to_vec(), &want, tol, &what)
}

/// Runs one random case of a unary operation; `reference` receives the exact input value.
pub fn unary_case<T: Elem, O: Elem>(
    name: &str,
    dims: Dim4,
    seed: u64,
    g: &dyn Fn(&mut Rng64) -> T,
    op: &dyn Fn(&Array<T>) -> Array<O>,
    reference: &dyn Fn(V) -> V,
    tol: Tol,
) -> Result<(), String> {
    let mut r = Rng64::seed_from_u64(seed);
    let a = gen_vec(&mut r, dims.elements() as usize, g);
    let out = op(&Array::new(&a, dims));
    let what = |i: usize| {
        format!(
            "{name}({}) -> {}, dims {dims}, element {i}, input {:?}",
            T::TY.name,
            O::TY.name,
            a.get(i)
        )
    };
    if out.get_type() != O::TY.dtype || out.dims() != dims {
        return Err(format!("{}: type {:?} dims {}", what(0), out.get_type(), out.dims()));
    }
    let want: Vec<V> = a.iter().map(|x| reference(x.to_v())).collect();
    check_all(&out.to_vec(), &want, tol, &what)
}

/// A shape for examples: `dim4!` re-exported for helpers that build literal arrays.
pub fn d(d0: u64, d1: u64, d2: u64, d3: u64) -> Dim4 {
    dim4!(d0, d1, d2, d3)
}

/// One generation of Life on every 2-D board of a [rows, cols, boards] stack, the cells outside
/// each board dead (the convolution pads with zeros).
pub fn life_step(b: &[bool], d: [usize; 3]) -> Vec<bool> {
    let [r, c, k] = d;
    let mut out = vec![false; b.len()];
    for p in 0..k {
        for j in 0..c {
            for i in 0..r {
                let mut n = 0;
                for dj in -1i64..=1 {
                    for di in -1i64..=1 {
                        let (y, x) = (i as i64 + di, j as i64 + dj);
                        if (di, dj) != (0, 0) && y >= 0 && x >= 0 && y < r as i64 && x < c as i64 {
                            n += b[y as usize + r * (x as usize + c * p)] as u32;
                        }
                    }
                }
                let at = i + r * (j + c * p);
                out[at] = n == 3 || (b[at] && n == 2);
            }
        }
    }
    out
}
