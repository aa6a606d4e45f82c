//! Fast element-wise math over slices for the CPU backend.
//!
//! The fused element-wise evaluator calls one slice kernel
//! `fn(src: &[T], dst: &mut [T])` per op on chunks of a few thousand
//! elements. The C library's scalar `sinf`/`expf`/`logf` cost around 10 ns
//! per element and do not vectorize, so this module implements the
//! transcendental functions itself, in a form LLVM can auto-vectorize:
//!
//! * Every function has a per-lane kernel written as straight-line,
//!   branch-free code (range reduction by rounding with the "magic number"
//!   trick, polynomial evaluation, exponent manipulation via
//!   `to_bits`/`from_bits`, special cases resolved with selects). The slice
//!   loop around it has no early exits, so LLVM turns it into SIMD code.
//! * The crate is compiled for the x86-64 baseline (SSE2). To use the vector
//!   width the machine has, each body is `#[inline(always)]` and generic over
//!   `const FMA: bool`; it is instantiated as plain code, inside a
//!   `#[target_feature(enable = "avx2,fma")]` function, and inside one that
//!   adds AVX-512 (F, DQ, VL: 16 f32 or 8 f64 lanes a register, which halves
//!   the instructions of `sin` and `cos`, whose arithmetic is in f64). A
//!   dispatcher checks the CPU once (cached in an atomic) and calls the widest
//!   instantiation it supports. Fused multiply-adds are used only in the FMA
//!   instantiation: without hardware FMA, `mul_add` would call a slow
//!   software routine, so the baseline uses `a * b + c`.
//!
//! Accuracy (f32): every function is within 1 ulp of the correctly rounded
//! result for every input, on every instantiation. This was checked
//! exhaustively against the f64 standard library rounded to f32 when the
//! module was written (all 2^32 inputs; for sin/cos all |x| < 2^27, beyond
//! which they call the f64 library routine); the unit tests re-check samples.
//! The AVX-512 instantiation, added later, gave the same bits as the AVX2+FMA
//! one for all 2^32 inputs of every f32 function (the same operations in the
//! same order, only more lanes to a register).
//! `sin`, `cos`, `tanh` and `sigmoid` do their arithmetic in f64 internally
//! and round once; `exp` and `log` work in f32. NaN, infinities, zeros and
//! subnormals are handled without flushing.
//!
//! `sin`/`cos` reduce the argument in f64 with a two-part Cody–Waite split of
//! pi/2 whose first step is exact for |x| <= 2^26; the rare elements above
//! that (and non-finite ones) are recomputed with the scalar f64 library
//! routine, after a cheap read-only scan of each block.
//!
//! The f64 functions are plain loops over the standard library (correctly
//! rounded in practice, but not vectorized).

use std::f64::consts::{FRAC_1_PI, LN_2, LOG2_E};

// ---------------------------------------------------------------------------
// Runtime dispatch
// ---------------------------------------------------------------------------

/// 0 = not yet checked, 1 = baseline only, 2 = AVX2 + FMA available, 3 = AVX-512 (F, DQ
/// and VL) as well.
#[cfg(target_arch = "x86_64")]
static CPU_LEVEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The widest instantiation the running CPU supports (checked once, then cached): see
/// `CPU_LEVEL`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn cpu_level() -> u8 {
    use std::sync::atomic::Ordering;
    match CPU_LEVEL.load(Ordering::Relaxed) {
        0 => {
            let level = if !(std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma"))
            {
                1
            } else if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
            {
                3
            } else {
                2
            };
            CPU_LEVEL.store(level, Ordering::Relaxed);
            level
        }
        level => level,
    }
}

/// Whether the running CPU supports AVX2 and FMA (checked once, then cached).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2_fma() -> bool {
    cpu_level() >= 2
}

/// Whether the baseline instantiation may use `mul_add`, i.e. FMA is
/// guaranteed at compile time (aarch64 always has it).
#[cfg(not(target_arch = "x86_64"))]
const BASELINE_FMA: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// Defines the public dispatcher `$name` and, on x86-64, the AVX2+FMA
/// instantiation `$avx` of the generic body `$body` (and, inside the dispatcher, the AVX-512
/// one, which the dispatcher's tests reach on machines that have it).
macro_rules! dispatched {
    ($(#[$doc:meta])* $name:ident, $avx:ident, $body:ident, $t:ty) => {
        $(#[$doc])*
        pub fn $name(src: &[$t], dst: &mut [$t]) {
            assert_eq!(src.len(), dst.len());
            #[cfg(target_arch = "x86_64")]
            {
                /// # Safety
                /// The CPU must support AVX-512 (F, DQ, VL), AVX2 and FMA.
                #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
                unsafe fn wide(src: &[$t], dst: &mut [$t]) {
                    $body::<true>(src, dst);
                }
                match cpu_level() {
                    // SAFETY: the CPU supports AVX-512 F, DQ and VL, AVX2 and FMA (level 3).
                    3 => unsafe { wide(src, dst) },
                    // SAFETY: the CPU supports AVX2 and FMA (level 2).
                    2 => unsafe { $avx(src, dst) },
                    _ => $body::<false>(src, dst),
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            $body::<BASELINE_FMA>(src, dst);
        }

        /// AVX2 + FMA instantiation of the generic body.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx(src: &[$t], dst: &mut [$t]) {
            $body::<true>(src, dst);
        }
    };
}

// ---------------------------------------------------------------------------
// Shared helpers and constants
// ---------------------------------------------------------------------------

/// `a * b + c`, fused only in the FMA instantiation.
#[inline(always)]
fn madd32<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `a * b + c`, fused only in the FMA instantiation.
#[inline(always)]
fn madd64<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Adding then subtracting 1.5 * 2^23 rounds an f32 of magnitude < 2^22 to
/// the nearest integer (ties to even); the integer sits in the low mantissa
/// bits of the sum.
const ROUND_F32: f32 = 12_582_912.0;
/// Bit pattern of `ROUND_F32`.
const ROUND_F32_BITS: i32 = 0x4b40_0000;
/// Adding then subtracting 1.5 * 2^52 rounds an f64 of magnitude < 2^51 to
/// the nearest integer (ties to even); the integer sits in the low mantissa
/// bits of the sum.
const ROUND_F64: f64 = 6_755_399_441_055_744.0;

/// Applies `f` to every element. The fixed-size inner loop is unrolled
/// into several independent vector chains, which hides the latency of the
/// long dependency chains in the kernels.
#[inline(always)]
fn map_f32(src: &[f32], dst: &mut [f32], f: impl Fn(f32) -> f32) {
    const UNROLL: usize = 16;
    let mut d_chunks = dst.chunks_exact_mut(UNROLL);
    let mut s_chunks = src.chunks_exact(UNROLL);
    for (d, s) in (&mut d_chunks).zip(&mut s_chunks) {
        for (y, &x) in d.iter_mut().zip(s) {
            *y = f(x);
        }
    }
    let d_rest = d_chunks.into_remainder();
    for (y, &x) in d_rest.iter_mut().zip(s_chunks.remainder()) {
        *y = f(x);
    }
}

/// Whether `pred` holds for the bit pattern of any element; a read-only,
/// vectorized pass without early exit.
#[inline(always)]
fn any_lane(src: &[f32], pred: impl Fn(u32) -> bool) -> bool {
    src.iter().fold(0u32, |acc, x| acc | u32::from(pred(x.to_bits()))) != 0
}

/// Elements per block for kernels that scan their input for special values
/// (sin/cos for the scalar fallback, log for the cheaper kernel).
const BLOCK: usize = 256;

// ---------------------------------------------------------------------------
// sin / cos (f32 in, f64 arithmetic inside)
// ---------------------------------------------------------------------------

/// pi/2 ~= PIO2_A + PIO2_B (error 1.6e-26). PIO2_A has 27 significant bits,
/// so for an integer |m| < 2^26 and an f32 `x` near `m * pi/2` both
/// `m * PIO2_A` and `x - m * PIO2_A` are exact. The second step then only adds
/// errors below 2^-57, tiny next to the smallest reduced argument of any f32
/// below 2^26 (2^-27.8, at x = 252.89821).
const PIO2_A: f64 = 1.570_796_325_802_803;
const PIO2_B: f64 = 9.920_935_796_805_404e-10;
/// pi split the same way (exact doubling).
const PI_A: f64 = 2.0 * PIO2_A;
const PI_B: f64 = 2.0 * PIO2_B;

/// Inputs with |x| above this (and NaN/inf) are recomputed with the scalar
/// library routine; below it the split above is accurate (the multiples of
/// pi/2 involved stay below 2^26). Value: 2^26 = 67108864.
const TRIG_LIMIT_BITS: u32 = 0x4c80_0000;

/// Minimax coefficients: sin(r) ~= r + r^3 * P(r^2) on |r| <= pi/2
/// (relative error 2^-27.3, enough for a 1-ulp f32 result).
const SIN_C0: f64 = -0.166_666_595_445_857_35;
const SIN_C1: f64 = 0.008_333_066_083_010_435;
const SIN_C2: f64 = -0.000_198_095_901_221_488_52;
const SIN_C3: f64 = 2.605_750_739_171_076_3e-6;

#[inline(always)]
fn sin_poly<const FMA: bool>(r: f64) -> f64 {
    let s = r * r;
    let p = madd64::<FMA>(SIN_C3, s, SIN_C2);
    let p = madd64::<FMA>(p, s, SIN_C1);
    let p = madd64::<FMA>(p, s, SIN_C0);
    // r * (1 + s P) rather than r + r s P keeps the sign of r = -0.
    r * madd64::<FMA>(p, s, 1.0)
}

/// sin of one lane, valid for |x| <= 2^26.
#[inline(always)]
fn sin_lane<const FMA: bool>(x: f32) -> f32 {
    let x = f64::from(x);
    // q = round(x / pi); sin(x) = (-1)^q sin(x - q pi).
    let t = madd64::<FMA>(x, FRAC_1_PI, ROUND_F64);
    let q = t - ROUND_F64;
    let r = madd64::<FMA>(q, -PI_A, x);
    let r = madd64::<FMA>(q, -PI_B, r);
    let v = sin_poly::<FMA>(r);
    f64::from_bits(v.to_bits() ^ (t.to_bits() << 63)) as f32
}

/// cos of one lane, valid for |x| <= 2^26.
#[inline(always)]
fn cos_lane<const FMA: bool>(x: f32) -> f32 {
    let x = f64::from(x);
    // n = round(x / pi - 1/2), m = 2n + 1; cos(x) = (-1)^n sin(m pi/2 - x).
    let t = madd64::<FMA>(x, FRAC_1_PI, -0.5) + ROUND_F64;
    let n = t - ROUND_F64;
    let m = madd64::<FMA>(n, 2.0, 1.0);
    let r = madd64::<FMA>(m, PIO2_A, -x);
    let r = madd64::<FMA>(m, PIO2_B, r);
    let v = sin_poly::<FMA>(r);
    f64::from_bits(v.to_bits() ^ (t.to_bits() << 63)) as f32
}

/// Recomputes, with `f` in f64, the lanes whose input is beyond the fast
/// reduction's range or not finite. Cheap when no lane qualifies: one
/// vectorized read-only pass.
#[inline(always)]
fn trig_fixup(src: &[f32], dst: &mut [f32], f: fn(f64) -> f64) {
    if any_lane(src, |b| b & 0x7fff_ffff > TRIG_LIMIT_BITS) {
        trig_fallback(src, dst, f);
    }
}

#[cold]
#[inline(never)]
fn trig_fallback(src: &[f32], dst: &mut [f32], f: fn(f64) -> f64) {
    for (y, &x) in dst.iter_mut().zip(src) {
        if x.to_bits() & 0x7fff_ffff > TRIG_LIMIT_BITS {
            *y = f(f64::from(x)) as f32;
        }
    }
}

#[inline(always)]
fn sin_f32_body<const FMA: bool>(src: &[f32], dst: &mut [f32]) {
    for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        map_f32(s, d, sin_lane::<FMA>);
        trig_fixup(s, d, f64::sin);
    }
}

#[inline(always)]
fn cos_f32_body<const FMA: bool>(src: &[f32], dst: &mut [f32]) {
    for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        map_f32(s, d, cos_lane::<FMA>);
        trig_fixup(s, d, f64::cos);
    }
}

dispatched!(
    /// `dst[i] = sin(src[i])`, within 1 ulp; NaN and ±inf give NaN.
    sin_f32,
    sin_f32_avx2,
    sin_f32_body,
    f32
);
dispatched!(
    /// `dst[i] = cos(src[i])`, within 1 ulp; NaN and ±inf give NaN.
    cos_f32,
    cos_f32_avx2,
    cos_f32_body,
    f32
);

// ---------------------------------------------------------------------------
// exp (f32)
// ---------------------------------------------------------------------------

/// ln 2 = LN2_A + LN2_B (+ 5.5e-14). LN2_A has 16 significant bits, so
/// `n * LN2_A` is exact for |n| < 2^8.
const LN2_A: f32 = 0.693_145_75;
const LN2_B: f32 = 1.428_606_8e-6;

/// Minimax: e^r ~= 1 + r + r^2 * P(r) on |r| <= 0.3467 (relative 2^-28.3).
const EXP_C0: f32 = 0.499_999_94;
const EXP_C1: f32 = 0.166_665_21;
const EXP_C2: f32 = 0.041_668_39;
const EXP_C3: f32 = 0.008_368_735;
const EXP_C4: f32 = 0.001_381_456;

/// Inputs are clamped to this range: e^89 overflows, e^-104 rounds to zero.
const EXP_HI: f32 = 89.0;
const EXP_LO: f32 = -104.0;

#[inline(always)]
fn exp_lane<const FMA: bool>(x: f32) -> f32 {
    // Comparisons are false for NaN, so NaN passes through unchanged.
    let x = if x > EXP_HI { EXP_HI } else { x };
    let x = if x < EXP_LO { EXP_LO } else { x };
    // n = round(x / ln 2) in [-150, 128]; r = x - n ln 2.
    let t = madd32::<FMA>(x, std::f32::consts::LOG2_E, ROUND_F32);
    let n = t - ROUND_F32;
    let r = madd32::<FMA>(n, -LN2_A, x);
    let r = madd32::<FMA>(n, -LN2_B, r);
    let p = madd32::<FMA>(EXP_C4, r, EXP_C3);
    let p = madd32::<FMA>(p, r, EXP_C2);
    let p = madd32::<FMA>(p, r, EXP_C1);
    let p = madd32::<FMA>(p, r, EXP_C0);
    let y = madd32::<FMA>(r * r, p, r) + 1.0;
    // Scale by 2^n as 2^n1 * 2^n2 (each factor a normal f32): the first
    // product is exact, the second rounds once, also into the subnormal range
    // or to infinity.
    let ni = (t.to_bits() as i32).wrapping_sub(ROUND_F32_BITS);
    let n1 = ni >> 1;
    let n2 = ni.wrapping_sub(n1);
    let s1 = f32::from_bits((n1.wrapping_add(127) << 23) as u32);
    let s2 = f32::from_bits((n2.wrapping_add(127) << 23) as u32);
    y * s1 * s2
}

#[inline(always)]
fn exp_f32_body<const FMA: bool>(src: &[f32], dst: &mut [f32]) {
    map_f32(src, dst, exp_lane::<FMA>);
}

dispatched!(
    /// `dst[i] = e^src[i]`, within 1 ulp (subnormal results are rounded
    /// correctly, not flushed); overflow gives +inf, `exp(-inf) = 0`.
    exp_f32,
    exp_f32_avx2,
    exp_f32_body,
    f32
);

// ---------------------------------------------------------------------------
// log (f32)
// ---------------------------------------------------------------------------

/// Bit pattern of sqrt(1/2) as f32.
const SQRT_HALF_BITS: i32 = 0x3f35_04f3;

/// Minimax: ln(1 + f) ~= f - f^2/2 + f^3 * P(f) on
/// sqrt(1/2) - 1 <= f <= sqrt(2) - 1 (relative 2^-27.4).
const LOG_C0: f32 = 0.333_333_3;
const LOG_C1: f32 = -0.250_008_2;
const LOG_C2: f32 = 0.200_012_27;
const LOG_C3: f32 = -0.166_233_57;
const LOG_C4: f32 = 0.142_017_56;
const LOG_C5: f32 = -0.131_601_86;
const LOG_C6: f32 = 0.127_615_91;
const LOG_C7: f32 = -0.076_345_06;

/// ln x for positive, normal, finite `x`, with `e_bias` added to the
/// binary exponent.
#[inline(always)]
fn log_core<const FMA: bool>(x: f32, e_bias: i32) -> f32 {
    // x = 2^e * m with m in [sqrt(1/2), sqrt(2)).
    let ix = (x.to_bits() as i32).wrapping_sub(SQRT_HALF_BITS);
    let e = ((ix >> 23) + e_bias) as f32;
    let m = f32::from_bits(((ix & 0x007f_ffff) + SQRT_HALF_BITS) as u32);
    let f = m - 1.0;
    let f2 = f * f;
    let p = madd32::<FMA>(LOG_C7, f, LOG_C6);
    let p = madd32::<FMA>(p, f, LOG_C5);
    let p = madd32::<FMA>(p, f, LOG_C4);
    let p = madd32::<FMA>(p, f, LOG_C3);
    let p = madd32::<FMA>(p, f, LOG_C2);
    let p = madd32::<FMA>(p, f, LOG_C1);
    let p = madd32::<FMA>(p, f, LOG_C0);
    // lo = -f^2/2 + f^3 P(f) + e * LN2_B; ln x = e * LN2_A + (f + lo).
    let lo = madd32::<FMA>(f2 * f, p, -0.5 * f2);
    let lo = madd32::<FMA>(e, LN2_B, lo);
    madd32::<FMA>(e, LN2_A, f + lo)
}

/// ln of one lane whose input is positive, normal and finite.
#[inline(always)]
fn log_lane_normal<const FMA: bool>(x: f32) -> f32 {
    log_core::<FMA>(x, 0)
}

/// ln of one lane, any input.
#[inline(always)]
fn log_lane<const FMA: bool>(x: f32) -> f32 {
    // Scale subnormals (and, harmlessly, zero/negative inputs) up by 2^23.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let res = log_core::<FMA>(xs, if tiny { -23 } else { 0 });
    // Special cases (tested on the bits, which vectorizes to a few integer
    // compares): ±0 -> -inf, +inf -> +inf, negative or NaN -> NaN.
    let bits = x.to_bits() as i32;
    let special = bits <= 0 || bits >= 0x7f80_0000;
    let sv = if bits == 0x7f80_0000 { x } else { f32::NAN };
    let sv = if bits << 1 == 0 { f32::NEG_INFINITY } else { sv };
    if special {
        sv
    } else {
        res
    }
}

#[inline(always)]
fn log_f32_body<const FMA: bool>(src: &[f32], dst: &mut [f32]) {
    for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        // Blocks holding only positive normal numbers (bits in
        // [0x0080_0000, 0x7f80_0000)) take the cheaper kernel.
        if any_lane(s, |b| b.wrapping_sub(0x0080_0000) >= 0x7f00_0000) {
            map_f32(s, d, log_lane::<FMA>);
        } else {
            map_f32(s, d, log_lane_normal::<FMA>);
        }
    }
}

dispatched!(
    /// `dst[i] = ln(src[i])`, within 1 ulp (subnormal inputs included);
    /// `ln(±0) = -inf`, `ln(+inf) = +inf`, negative inputs and NaN give NaN.
    log_f32,
    log_f32_avx2,
    log_f32_body,
    f32
);

// ---------------------------------------------------------------------------
// tanh / sigmoid (f32 in, f64 arithmetic inside)
// ---------------------------------------------------------------------------

/// Minimax: e^r - 1 ~= r + r^2 * P(r) on |r| <= 0.3467 (relative 2^-34.2).
const EXPM1_C0: f64 = 0.500_000_006_778_628_1;
const EXPM1_C1: f64 = 0.166_666_658_676_567_05;
const EXPM1_C2: f64 = 0.041_666_294_561_886_995;
const EXPM1_C3: f64 = 0.008_333_497_251_769_989;
const EXPM1_C4: f64 = 0.001_394_468_870_248_247_9;
const EXPM1_C5: f64 = 0.000_197_903_123_618_204_22;

/// Splits e^y = 2^n * (1 + u) and returns `(2^n, u)`, with u accurate to
/// about 2^-34 relative. Valid for -1000 < y < 700.
#[inline(always)]
fn exp_split_f64<const FMA: bool>(y: f64) -> (f64, f64) {
    let t = madd64::<FMA>(y, LOG2_E, ROUND_F64);
    let n = t - ROUND_F64;
    let r = madd64::<FMA>(n, -LN_2, y);
    let p = madd64::<FMA>(EXPM1_C5, r, EXPM1_C4);
    let p = madd64::<FMA>(p, r, EXPM1_C3);
    let p = madd64::<FMA>(p, r, EXPM1_C2);
    let p = madd64::<FMA>(p, r, EXPM1_C1);
    let p = madd64::<FMA>(p, r, EXPM1_C0);
    let u = madd64::<FMA>(r * r, p, r);
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    (scale, u)
}

#[inline(always)]
fn tanh_lane<const FMA: bool>(x: f32) -> f32 {
    let x = f64::from(x);
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a };
    // em = e^(-2a) - 1 without cancellation; tanh(a) = -em / (em + 2).
    let (scale, u) = exp_split_f64::<FMA>(-2.0 * a);
    let em = madd64::<FMA>(scale, u, scale - 1.0);
    (em / (em + 2.0)).copysign(x) as f32
}

#[inline(always)]
fn tanh_f32_body<const FMA: bool>(src: &[f32], dst: &mut [f32]) {
    map_f32(src, dst, tanh_lane::<FMA>);
}

dispatched!(
    /// `dst[i] = tanh(src[i])`, within 1 ulp; ±inf give ±1.
    tanh_f32,
    tanh_f32_avx2,
    tanh_f32_body,
    f32
);

#[inline(always)]
fn sigmoid_lane<const FMA: bool>(x: f32) -> f32 {
    let x = f64::from(x);
    let a = x.abs();
    let a = if a > 120.0 { 120.0 } else { a };
    // e = e^-|x|; sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e) otherwise.
    let (scale, u) = exp_split_f64::<FMA>(-a);
    let e = madd64::<FMA>(scale, u, scale);
    let num = if x < 0.0 { e } else { 1.0 };
    (num / (1.0 + e)) as f32
}

#[inline(always)]
fn sigmoid_f32_body<const FMA: bool>(src: &[f32], dst: &mut [f32]) {
    map_f32(src, dst, sigmoid_lane::<FMA>);
}

dispatched!(
    /// `dst[i] = 1 / (1 + e^-src[i])`, within 1 ulp (tiny results are
    /// subnormal, not flushed); ±inf give 1 and 0.
    sigmoid_f32,
    sigmoid_f32_avx2,
    sigmoid_f32_body,
    f32
);

// ---------------------------------------------------------------------------
// f64: loops over the standard library
// ---------------------------------------------------------------------------

/// `dst[i] = sin(src[i])` (standard library, not vectorized).
pub fn sin_f64(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len());
    for (y, &x) in dst.iter_mut().zip(src) {
        *y = x.sin();
    }
}

/// `dst[i] = cos(src[i])` (standard library, not vectorized).
pub fn cos_f64(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len());
    for (y, &x) in dst.iter_mut().zip(src) {
        *y = x.cos();
    }
}

/// `dst[i] = e^src[i]` (standard library, not vectorized).
pub fn exp_f64(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len());
    for (y, &x) in dst.iter_mut().zip(src) {
        *y = x.exp();
    }
}

/// `dst[i] = ln(src[i])` (standard library, not vectorized).
pub fn log_f64(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len());
    for (y, &x) in dst.iter_mut().zip(src) {
        *y = x.ln();
    }
}

/// `dst[i] = tanh(src[i])` (standard library, not vectorized).
pub fn tanh_f64(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len());
    for (y, &x) in dst.iter_mut().zip(src) {
        *y = x.tanh();
    }
}

/// `dst[i] = 1 / (1 + e^-src[i])`, evaluated as `e / (1 + e)` with
/// `e = e^x` for negative inputs so that it neither overflows nor loses
/// tiny results (standard library `exp`, not vectorized).
pub fn sigmoid_f64(src: &[f64], dst: &mut [f64]) {
    assert_eq!(src.len(), dst.len());
    for (y, &x) in dst.iter_mut().zip(src) {
        let e = (-x.abs()).exp();
        let num = if x < 0.0 { e } else { 1.0 };
        *y = num / (1.0 + e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Kernel = fn(&[f32], &mut [f32]);

    /// Largest error, in f32 ulps, allowed against the f64 reference rounded
    /// to f32 (the implementation was checked exhaustively against the same
    /// bound).
    const MAX_ULP: u64 = 1;

    /// Every way to run one f32 function: the dispatcher (the AVX-512
    /// instantiation where the CPU has it), the baseline body, the FMA body
    /// compiled without target features, and the AVX2+FMA instantiation when
    /// the CPU has it.
    macro_rules! paths {
        ($disp:ident, $body:ident, $avx:ident) => {{
            let v: Vec<(&'static str, Kernel)> = vec![
                ("dispatch", $disp),
                ("baseline", $body::<false>),
                ("generic-fma", $body::<true>),
            ];
            #[cfg(target_arch = "x86_64")]
            let v = {
                let mut v = v;
                if has_avx2_fma() {
                    // SAFETY: only pushed when the CPU has AVX2 and FMA.
                    v.push(("avx2+fma", |s, d| unsafe { $avx(s, d) }));
                }
                v
            };
            v
        }};
    }

    struct Case {
        name: &'static str,
        paths: Vec<(&'static str, Kernel)>,
        reference: fn(f32) -> f32,
    }

    fn sin_case() -> Case {
        Case {
            name: "sin",
            paths: paths!(sin_f32, sin_f32_body, sin_f32_avx2),
            reference: |x| f64::from(x).sin() as f32,
        }
    }

    fn cos_case() -> Case {
        Case {
            name: "cos",
            paths: paths!(cos_f32, cos_f32_body, cos_f32_avx2),
            reference: |x| f64::from(x).cos() as f32,
        }
    }

    fn exp_case() -> Case {
        Case {
            name: "exp",
            paths: paths!(exp_f32, exp_f32_body, exp_f32_avx2),
            reference: |x| f64::from(x).exp() as f32,
        }
    }

    fn log_case() -> Case {
        Case {
            name: "log",
            paths: paths!(log_f32, log_f32_body, log_f32_avx2),
            reference: |x| f64::from(x).ln() as f32,
        }
    }

    fn tanh_case() -> Case {
        Case {
            name: "tanh",
            paths: paths!(tanh_f32, tanh_f32_body, tanh_f32_avx2),
            reference: |x| f64::from(x).tanh() as f32,
        }
    }

    fn sigmoid_ref(x: f64) -> f64 {
        let e = (-x.abs()).exp();
        let num = if x < 0.0 { e } else { 1.0 };
        num / (1.0 + e)
    }

    fn sigmoid_case() -> Case {
        Case {
            name: "sigmoid",
            paths: paths!(sigmoid_f32, sigmoid_f32_body, sigmoid_f32_avx2),
            reference: |x| sigmoid_ref(f64::from(x)) as f32,
        }
    }

    fn all_cases() -> Vec<Case> {
        vec![sin_case(), cos_case(), exp_case(), log_case(), tanh_case(), sigmoid_case()]
    }

    /// Distance in ulps; ±0 are equal, NaN matches only NaN.
    fn ulp_diff(a: f32, b: f32) -> u64 {
        if a.is_nan() || b.is_nan() {
            return if a.is_nan() && b.is_nan() { 0 } else { u64::MAX };
        }
        fn key(x: f32) -> i64 {
            let b = x.to_bits();
            let m = i64::from(b & 0x7fff_ffff);
            if b >> 31 == 1 {
                -m
            } else {
                m
            }
        }
        key(a).abs_diff(key(b))
    }

    /// Runs every path of `case` on `inputs` and checks each result against
    /// the reference.
    fn check(case: &Case, inputs: &[f32]) {
        let want: Vec<f32> = inputs.iter().map(|&x| (case.reference)(x)).collect();
        let mut out = vec![0.0f32; inputs.len()];
        for (path, kernel) in &case.paths {
            kernel(inputs, &mut out);
            for ((&x, &got), &w) in inputs.iter().zip(&out).zip(&want) {
                let u = ulp_diff(got, w);
                assert!(
                    u <= MAX_ULP,
                    "{} [{path}]: x = {x:e} ({:#010x}): got {got:e}, want {w:e} ({u} ulp)",
                    case.name,
                    x.to_bits(),
                );
            }
        }
    }

    /// SplitMix64.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn bits(&mut self) -> u32 {
            (self.next() >> 32) as u32
        }

        /// Uniform in [lo, hi).
        fn uniform(&mut self, lo: f64, hi: f64) -> f32 {
            let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
            (lo + (hi - lo) * u) as f32
        }
    }

    /// All bit patterns, uniformly: every exponent, subnormals, NaN, ±inf.
    fn random_bits(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng(seed);
        (0..n).map(|_| f32::from_bits(rng.bits())).collect()
    }

    fn uniform(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f32> {
        let mut rng = Rng(seed);
        (0..n).map(|_| rng.uniform(lo, hi)).collect()
    }

    /// `x` and its neighbours within `k` ulps (same sign).
    fn around(x: f32, k: u32) -> Vec<f32> {
        let b = x.to_bits();
        (b.saturating_sub(k)..=b.saturating_add(k)).map(f32::from_bits).collect()
    }

    /// Zeros, extremes, subnormals and non-finite values, both signs.
    fn specials() -> Vec<f32> {
        let pos = [
            0.0,
            f32::from_bits(1),
            f32::from_bits(0x0040_0000),
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            f32::EPSILON,
            0.5,
            1.0,
            2.0,
            1e10,
            1e30,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
        ];
        pos.iter().flat_map(|&x| [x, -x]).collect()
    }

    #[test]
    fn special_inputs_all_functions() {
        for case in all_cases() {
            check(&case, &specials());
        }
    }

    #[test]
    fn random_bit_patterns_all_functions() {
        for (i, case) in all_cases().iter().enumerate() {
            check(case, &random_bits(50_000, 100 + i as u64));
        }
    }

    #[test]
    fn sin_cos_accuracy() {
        let mut inputs = Vec::new();
        inputs.extend(uniform(20_000, -4.0, 4.0, 1));
        inputs.extend(uniform(20_000, -1e3, 1e3, 2));
        inputs.extend(uniform(20_000, -67_108_864.0, 67_108_864.0, 3));
        inputs.extend(uniform(5_000, -1e8, 1e12, 4));
        inputs.extend(uniform(5_000, -1e-3, 1e-3, 5));
        // Near multiples of pi/2, where the reduced argument is tiny.
        let mut rng = Rng(6);
        for k in (1..2_000).chain((0..2_000).map(|_| rng.next() % 42_722_000)) {
            let x = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            inputs.extend(around(x, 3));
        }
        // The f32 below 2^26 closest to a multiple of pi/2, and the closest
        // one above 2^24.
        inputs.extend(around(252.898_21, 3));
        inputs.extend(around(42_781_604.0, 3));
        // Both sides of the scalar-fallback threshold.
        inputs.extend(around(67_108_864.0, 8));
        inputs.extend(around(-67_108_864.0, 8));
        check(&sin_case(), &inputs);
        check(&cos_case(), &inputs);
    }

    #[test]
    fn exp_accuracy() {
        let mut inputs = Vec::new();
        inputs.extend(uniform(40_000, -104.0, 89.0, 11));
        inputs.extend(uniform(20_000, -1.0, 1.0, 12));
        inputs.extend(uniform(10_000, -1e-6, 1e-6, 13));
        // Overflow, the normal/subnormal boundary, the last nonzero result.
        for x in [88.722_84, -87.336_55, -103.972_08, -104.0, 89.0] {
            inputs.extend(around(x, 300));
        }
        check(&exp_case(), &inputs);
    }

    #[test]
    fn log_accuracy() {
        let mut inputs = Vec::new();
        let mut rng = Rng(21);
        // Positive values of every magnitude, subnormals included.
        inputs.extend((0..40_000).map(|_| f32::from_bits(rng.bits() >> 1)));
        inputs.extend((0..10_000).map(|_| f32::from_bits(rng.bits() >> 9)));
        inputs.extend(uniform(20_000, 0.0, 10.0, 22));
        inputs.extend(around(1.0, 3_000));
        inputs.extend((-149..128).map(|e| 2f32.powi(e)));
        check(&log_case(), &inputs);
    }

    #[test]
    fn tanh_sigmoid_accuracy() {
        let mut inputs = Vec::new();
        inputs.extend(uniform(20_000, -12.0, 12.0, 31));
        inputs.extend(uniform(20_000, -1.0, 1.0, 32));
        inputs.extend(uniform(10_000, -1e-4, 1e-4, 33));
        inputs.extend(uniform(20_000, -120.0, 120.0, 34));
        inputs.extend(uniform(5_000, -1e6, 1e6, 35));
        check(&tanh_case(), &inputs);
        check(&sigmoid_case(), &inputs);
    }

    /// Exact results the tolerance-based checks cannot see (signed zeros) or
    /// that are worth spelling out.
    #[test]
    fn exact_special_results() {
        let run = |case: &Case, x: f32| -> Vec<f32> {
            case.paths
                .iter()
                .map(|(_, k)| {
                    let mut out = [0.0f32];
                    k(&[x], &mut out);
                    out[0]
                })
                .collect()
        };
        let is = |v: Vec<f32>, want: f32| {
            for got in v {
                assert_eq!(got.to_bits(), want.to_bits(), "got {got:e}, want {want:e}");
            }
        };
        let nan = |v: Vec<f32>| assert!(v.iter().all(|y| y.is_nan()), "{v:?}");
        let (sin, cos, exp, log) = (sin_case(), cos_case(), exp_case(), log_case());
        let (tanh, sigmoid) = (tanh_case(), sigmoid_case());
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            nan(run(&sin, x));
            nan(run(&cos, x));
        }
        is(run(&sin, -0.0), -0.0);
        is(run(&sin, 0.0), 0.0);
        is(run(&cos, 0.0), 1.0);
        is(run(&cos, -0.0), 1.0);
        is(run(&sin, f32::from_bits(1)), f32::from_bits(1));
        is(run(&exp, f32::NEG_INFINITY), 0.0);
        is(run(&exp, -1000.0), 0.0);
        is(run(&exp, f32::INFINITY), f32::INFINITY);
        is(run(&exp, 89.0), f32::INFINITY);
        is(run(&exp, 0.0), 1.0);
        is(run(&exp, -0.0), 1.0);
        is(run(&exp, -103.0), (-103f64).exp() as f32);
        nan(run(&exp, f32::NAN));
        is(run(&log, 0.0), f32::NEG_INFINITY);
        is(run(&log, -0.0), f32::NEG_INFINITY);
        is(run(&log, f32::INFINITY), f32::INFINITY);
        is(run(&log, 1.0), 0.0);
        is(run(&log, f32::from_bits(1)), (-149.0 * std::f64::consts::LN_2) as f32);
        nan(run(&log, -1.0));
        nan(run(&log, f32::NEG_INFINITY));
        nan(run(&log, f32::NAN));
        is(run(&tanh, f32::INFINITY), 1.0);
        is(run(&tanh, f32::NEG_INFINITY), -1.0);
        is(run(&tanh, 30.0), 1.0);
        is(run(&tanh, -0.0), -0.0);
        nan(run(&tanh, f32::NAN));
        is(run(&sigmoid, f32::INFINITY), 1.0);
        is(run(&sigmoid, f32::NEG_INFINITY), 0.0);
        is(run(&sigmoid, 0.0), 0.5);
        is(run(&sigmoid, -100.0), (-100f64).exp() as f32);
        nan(run(&sigmoid, f32::NAN));
    }

    /// Every element is written, for lengths around the unroll width and the
    /// block size, and for slices of mixed values (a huge one in the middle
    /// of a sin/cos block, a zero in a log block).
    #[test]
    fn lengths_and_tails() {
        let mut pool = uniform(5_000, -3.0, 3.0, 41);
        pool[300] = 1e20;
        pool[301] = 0.0;
        pool[302] = 5e-40;
        for case in all_cases() {
            for len in [0, 1, 7, 15, 16, 17, 255, 256, 257, 4096 + 3] {
                for start in [0, 1, 200] {
                    let src = &pool[start..start + len];
                    for (path, kernel) in &case.paths {
                        let mut out = vec![1234.5f32; len];
                        kernel(src, &mut out);
                        for (i, (&x, &got)) in src.iter().zip(&out).enumerate() {
                            let w = (case.reference)(x);
                            assert!(
                                ulp_diff(got, w) <= MAX_ULP,
                                "{} [{path}] len {len} start {start} index {i}: \
                                 x = {x:e}, got {got:e}, want {w:e}",
                                case.name
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic]
    fn mismatched_lengths_panic() {
        let mut out = [0.0f32; 3];
        sin_f32(&[1.0, 2.0], &mut out);
    }

    #[test]
    fn f64_functions() {
        let mut inputs =
            uniform(2_000, -50.0, 50.0, 51).into_iter().map(f64::from).collect::<Vec<_>>();
        inputs.extend([0.0, -0.0, 1e-300, -1e300, 750.0, -750.0]);
        inputs.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
        type K64 = fn(&[f64], &mut [f64]);
        type Scalar = fn(f64) -> f64;
        let cases: [(K64, Scalar); 5] = [
            (sin_f64, f64::sin),
            (cos_f64, f64::cos),
            (exp_f64, f64::exp),
            (log_f64, f64::ln),
            (tanh_f64, f64::tanh),
        ];
        let mut out = vec![0.0; inputs.len()];
        for (kernel, reference) in cases {
            kernel(&inputs, &mut out);
            for (&x, &got) in inputs.iter().zip(&out) {
                let w = reference(x);
                assert!(got.to_bits() == w.to_bits() || (got.is_nan() && w.is_nan()));
            }
        }
        // sigmoid: compare with 1/2 + tanh(x/2)/2 where that is accurate.
        sigmoid_f64(&inputs, &mut out);
        for (&x, &got) in inputs.iter().zip(&out) {
            if x.is_nan() {
                assert!(got.is_nan());
            } else if x >= -1.0 {
                let w = 0.5 + 0.5 * (0.5 * x).tanh();
                assert!((got - w).abs() <= 1e-15 * w, "x = {x}: {got} vs {w}");
            } else {
                let w = (x - x.exp().ln_1p()).exp();
                assert!((got - w).abs() <= 1e-12 * w, "x = {x}: {got} vs {w}");
            }
        }
        let mut one = [0.0f64];
        sigmoid_f64(&[f64::NEG_INFINITY], &mut one);
        assert_eq!(one[0], 0.0);
        sigmoid_f64(&[f64::INFINITY], &mut one);
        assert_eq!(one[0], 1.0);
        sigmoid_f64(&[-700.0], &mut one);
        assert!(one[0] > 0.0);
        sin_f64(&[], &mut []);
    }
}
