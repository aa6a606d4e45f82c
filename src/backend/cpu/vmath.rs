//! Fast element-wise math over slices for the CPU backend.
//!
//! The fused element-wise evaluator calls one slice kernel
//! `fn(src: &[T], dst: &mut [T])` per op on chunks of a few thousand
//! elements. Calling the C library's scalar `sinf`/`expf`/`logf` per element
//! costs tens of nanoseconds each, so this module implements the
//! transcendental functions itself, in a form LLVM can auto-vectorize:
//!
//! * Every function has a per-lane kernel written as straight-line,
//!   branch-free code (range reduction by rounding with the "magic number"
//!   trick, polynomial evaluation, exponent manipulation via
//!   `to_bits`/`from_bits`, special cases resolved with selects). The slice
//!   loop around it has no early exits, so LLVM turns it into SIMD code.
//! * The crate is compiled for the x86-64 baseline (SSE2). To use AVX2 and
//!   FMA when the machine has them, each body is `#[inline(always)]` and
//!   generic over `const FMA: bool`; it is instantiated once as plain code and
//!   once inside a `#[target_feature(enable = "avx2,fma")]` function. A
//!   dispatcher checks the CPU once (cached in an atomic) and calls the right
//!   instantiation. Fused multiply-adds are used only in the FMA
//!   instantiation: without hardware FMA, `mul_add` would call a slow
//!   software routine, so the baseline uses `a * b + c`.
//!
//! Accuracy (f32): all functions are within 1 ulp of the correctly rounded
//! result for every input (checked exhaustively over all 2^32 inputs when
//! this module was written; the unit tests re-check samples). `sin`, `cos`,
//! `tanh` and `sigmoid` do their arithmetic in f64 internally and round once,
//! so they are almost always correctly rounded; `exp` and `log` work in f32.
//! NaN, infinities, zeros and subnormals are handled without flushing.
//!
//! `sin`/`cos` reduce the argument with a three-part Cody–Waite split of
//! pi/2 that is exact for |x| <= 2^24; the rare elements above that (and
//! non-finite ones) are recomputed with the scalar f64 library routine, after
//! a cheap read-only scan of each block.
//!
//! The f64 functions are plain loops over the standard library (correctly
//! rounded in practice, but not vectorized).

use std::f64::consts::{FRAC_1_PI, LN_2, LOG2_E};

// ---------------------------------------------------------------------------
// Runtime dispatch
// ---------------------------------------------------------------------------

/// 0 = not yet checked, 1 = baseline only, 2 = AVX2 + FMA available.
#[cfg(target_arch = "x86_64")]
static CPU_LEVEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Whether the running CPU supports AVX2 and FMA (checked once, then cached).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2_fma() -> bool {
    use std::sync::atomic::Ordering;
    match CPU_LEVEL.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            CPU_LEVEL.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

/// Whether the baseline instantiation may use `mul_add`, i.e. FMA is
/// guaranteed at compile time (aarch64 always has it).
#[cfg(not(target_arch = "x86_64"))]
const BASELINE_FMA: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// Defines the public dispatcher `$name` and, on x86-64, the AVX2+FMA
/// instantiation `$avx` of the generic body `$body`.
macro_rules! dispatched {
    ($(#[$doc:meta])* $name:ident, $avx:ident, $body:ident, $t:ty) => {
        $(#[$doc])*
        pub fn $name(src: &[$t], dst: &mut [$t]) {
            assert_eq!(src.len(), dst.len());
            #[cfg(target_arch = "x86_64")]
            {
                if has_avx2_fma() {
                    // SAFETY: the CPU supports AVX2 and FMA (checked above).
                    unsafe { $avx(src, dst) };
                } else {
                    $body::<false>(src, dst);
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

/// Elements per block: the kernel runs over a block, then the block is
/// scanned for lanes needing the scalar fallback (sin/cos only).
const BLOCK: usize = 256;

// ---------------------------------------------------------------------------
// sin / cos (f32 in, f64 arithmetic inside)
// ---------------------------------------------------------------------------

/// pi/2 = PIO2_A + PIO2_B + PIO2_C. A and B have 29 significant bits, so
/// `m * PIO2_A` and `m * PIO2_B` are exact for integers |m| < 2^24.
const PIO2_A: f64 = 1.570_796_325_802_803;
const PIO2_B: f64 = 9.920_935_808_982_456e-10;
const PIO2_C: f64 = -1.217_705_177_797_396_6e-18;
/// pi split the same way (exact doubling).
const PI_A: f64 = 2.0 * PIO2_A;
const PI_B: f64 = 2.0 * PIO2_B;
const PI_C: f64 = 2.0 * PIO2_C;

/// Inputs with |x| above this (and NaN/inf) are recomputed with the scalar
/// library routine; below it the split above keeps the reduction exact
/// enough (multiples of pi/2 stay below 2^24). Value: 2^24 = 16777216.
const TRIG_LIMIT_BITS: u32 = 0x4b80_0000;

/// Minimax coefficients: sin(r) ~= r + r^3 * P(r^2) on |r| <= pi/2
/// (relative error 2^-35.3).
const SIN_C0: f64 = -0.166_666_666_261_078_98;
const SIN_C1: f64 = 0.008_333_331_106_781_102;
const SIN_C2: f64 = -0.000_198_408_679_646_588_56;
const SIN_C3: f64 = 2.752_537_151_069_682e-6;
const SIN_C4: f64 = -2.388_867_638_632_371_6e-8;

#[inline(always)]
fn sin_poly<const FMA: bool>(r: f64) -> f64 {
    let s = r * r;
    let p = madd64::<FMA>(SIN_C4, s, SIN_C3);
    let p = madd64::<FMA>(p, s, SIN_C2);
    let p = madd64::<FMA>(p, s, SIN_C1);
    let p = madd64::<FMA>(p, s, SIN_C0);
    madd64::<FMA>(r * s, p, r)
}

/// sin of one lane, valid for |x| <= 2^24.
#[inline(always)]
fn sin_lane<const FMA: bool>(x: f32) -> f32 {
    let x = f64::from(x);
    // q = round(x / pi); sin(x) = (-1)^q sin(x - q pi).
    let t = madd64::<FMA>(x, FRAC_1_PI, ROUND_F64);
    let q = t - ROUND_F64;
    let r = madd64::<FMA>(q, -PI_A, x);
    let r = madd64::<FMA>(q, -PI_B, r);
    let r = madd64::<FMA>(q, -PI_C, r);
    let v = sin_poly::<FMA>(r);
    f64::from_bits(v.to_bits() ^ (t.to_bits() << 63)) as f32
}

/// cos of one lane, valid for |x| <= 2^24.
#[inline(always)]
fn cos_lane<const FMA: bool>(x: f32) -> f32 {
    let x = f64::from(x);
    // n = round(x / pi - 1/2); cos(x) = (-1)^(n+1) sin(x - (2n+1) pi/2).
    let t = madd64::<FMA>(x, FRAC_1_PI, -0.5) + ROUND_F64;
    let n = t - ROUND_F64;
    let m = madd64::<FMA>(n, 2.0, 1.0);
    let r = madd64::<FMA>(m, -PIO2_A, x);
    let r = madd64::<FMA>(m, -PIO2_B, r);
    let r = madd64::<FMA>(m, -PIO2_C, r);
    let v = sin_poly::<FMA>(r);
    f64::from_bits(v.to_bits() ^ (!t.to_bits() << 63)) as f32
}

/// Recomputes, with `f` in f64, the lanes whose input is beyond the fast
/// reduction's range or not finite. Cheap when no lane qualifies: one
/// vectorized read-only pass.
#[inline(always)]
fn trig_fixup(src: &[f32], dst: &mut [f32], f: fn(f64) -> f64) {
    let big = src.iter().fold(0u32, |acc, x| {
        acc | u32::from(x.to_bits() & 0x7fff_ffff > TRIG_LIMIT_BITS)
    });
    if big != 0 {
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

#[inline(always)]
fn log_lane<const FMA: bool>(x: f32) -> f32 {
    // Scale subnormals (and, harmlessly, zero/negative inputs) up by 2^23.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let bias = if tiny { -23 } else { 0 };
    // x = 2^e * m with m in [sqrt(1/2), sqrt(2)).
    let ix = (xs.to_bits() as i32).wrapping_sub(SQRT_HALF_BITS);
    let e = ((ix >> 23) + bias) as f32;
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
    let res = madd32::<FMA>(e, LN2_A, f + lo);
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
    map_f32(src, dst, log_lane::<FMA>);
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
