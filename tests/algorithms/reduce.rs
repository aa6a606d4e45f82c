//! Reductions: every function on every element type, along each of the four dimensions and
//! over whole arrays, on random shapes (empty and size-1 dimensions included), against
//! references computed here on the host in f64, c64 or i128; NaN rules; integer wrapping; and
//! the fused form (`sum(&(&a * &b), d)`) against the evaluated-then-reduced form.

use std::fmt::Debug;

use emberfire::*;

/// SplitMix64: small, fast and deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Mostly in ±[0.5, 1.5] (products stay in range), one in ten exactly zero.
    fn real(&mut self) -> f64 {
        if self.below(10) == 0 {
            return 0.0;
        }
        let m = 0.5 + self.unit();
        if self.below(2) == 0 {
            -m
        } else {
            m
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Bool,
    Int,
    Float,
    Complex,
}

/// What the tests need of an element type: random values, exact host views, wrapping.
trait E: HasAfEnum + Debug {
    const KIND: Kind;
    /// Relative accuracy of the type (for floating outputs).
    const EPS: f64 = 0.0;
    /// Smallest and largest values (integer and bool types).
    const RANGE: (i128, i128) = (0, 0);
    fn gen(r: &mut Rng) -> Self;
    fn re(self) -> f64;
    fn im(self) -> f64 {
        0.0
    }
    fn int(self) -> i128 {
        self.re() as i128
    }
    /// The value `v` wrapped into the type (integers), or rounded (floats).
    fn from_i128(v: i128) -> Self;
    fn from_c(re: f64, im: f64) -> Self;
    fn nan() -> Self {
        Self::from_c(f64::NAN, 0.0)
    }
    /// `self + o` as emberfire computes it in this type: integers wrap, floats round once;
    /// for bool, the "either is non-zero" of the producer `plus` uses.
    fn add_t(self, o: Self) -> Self {
        match Self::KIND {
            Kind::Int => Self::from_i128(self.int() + o.int()),
            Kind::Bool => Self::from_i128(self.int() | o.int()),
            _ => Self::from_c(self.re() + o.re(), self.im() + o.im()),
        }
    }
}

macro_rules! int_e {
    ($t:ty, $lo:expr, $hi:expr) => {
        impl E for $t {
            const KIND: Kind = Kind::Int;
            const RANGE: (i128, i128) = (<$t>::MIN as i128, <$t>::MAX as i128);
            fn gen(r: &mut Rng) -> Self {
                if r.below(8) == 0 {
                    0
                } else {
                    ($lo as i128 + r.below(($hi - $lo) as u64) as i128) as $t
                }
            }
            fn re(self) -> f64 {
                self as f64
            }
            fn int(self) -> i128 {
                self as i128
            }
            fn from_i128(v: i128) -> Self {
                v as $t
            }
            fn from_c(re: f64, _: f64) -> Self {
                re as $t
            }
        }
    };
}
int_e!(u8, 0i64, 20i64);
int_e!(u16, 0i64, 300i64);
int_e!(u32, 0i64, 1000i64);
int_e!(u64, 0i64, 1000i64);
int_e!(i16, -300i64, 300i64);
int_e!(i32, -1000i64, 1000i64);
int_e!(i64, -1000i64, 1000i64);

impl E for bool {
    const KIND: Kind = Kind::Bool;
    const RANGE: (i128, i128) = (0, 1);
    fn gen(r: &mut Rng) -> Self {
        r.below(5) != 0
    }
    fn re(self) -> f64 {
        self as u8 as f64
    }
    fn from_i128(v: i128) -> Self {
        v != 0
    }
    fn from_c(re: f64, _: f64) -> Self {
        re != 0.0
    }
}

macro_rules! float_e {
    ($t:ty, $eps:expr, $to:expr, $from:expr) => {
        impl E for $t {
            const KIND: Kind = Kind::Float;
            const EPS: f64 = $eps;
            fn gen(r: &mut Rng) -> Self {
                $from(r.real())
            }
            fn re(self) -> f64 {
                $to(self)
            }
            fn from_i128(v: i128) -> Self {
                $from(v as f64)
            }
            fn from_c(re: f64, _: f64) -> Self {
                $from(re)
            }
        }
    };
}
float_e!(f32, 1e-6, |x: f32| x as f64, |v: f64| v as f32);
float_e!(f64, 1e-14, |x: f64| x, |v: f64| v);
float_e!(f16, 1e-3, |x: f16| x.to_f64(), f16::from_f64);
float_e!(bf16, 4e-3, |x: bf16| x.to_f64(), crate::common::bf16_nearest);

macro_rules! complex_e {
    ($t:ty, $p:ty, $eps:expr) => {
        impl E for $t {
            const KIND: Kind = Kind::Complex;
            const EPS: f64 = $eps;
            fn gen(r: &mut Rng) -> Self {
                <$t>::new(r.real() as $p, r.real() as $p)
            }
            fn re(self) -> f64 {
                self.re as f64
            }
            fn im(self) -> f64 {
                self.im as f64
            }
            fn from_i128(v: i128) -> Self {
                <$t>::new(v as $p, 0.0)
            }
            fn from_c(re: f64, im: f64) -> Self {
                <$t>::new(re as $p, im as $p)
            }
        }
    };
}
complex_e!(c32, f32, 1e-6);
complex_e!(c64, f64, 1e-14);

/// An element type with every output type of the reductions testable too.
trait Reducible:
    E
    + HasAfEnum<
        InType = Self,
        BaseType: E + Fromf64,
        AggregateOutType: E + HasAfEnum<BaseType: E + Fromf64>,
        ProductOutType: E + HasAfEnum<BaseType: E + Fromf64>,
    >
{
}

impl<T> Reducible for T where
    T: E
        + HasAfEnum<
            InType = T,
            BaseType: E + Fromf64,
            AggregateOutType: E + HasAfEnum<BaseType: E + Fromf64>,
            ProductOutType: E + HasAfEnum<BaseType: E + Fromf64>,
        >
{
}

fn nonzero<T: E>(x: T) -> bool {
    x.re() != 0.0 || x.im() != 0.0 || x.re().is_nan() || x.im().is_nan()
}

fn is_nan<T: E>(x: T) -> bool {
    x.re().is_nan() || x.im().is_nan()
}

/// The groups of input elements each output element reduces, in output order; `dim` None is
/// the whole array.
fn groups<T: Copy>(v: &[T], dims: [u64; 4], dim: Option<usize>) -> (Vec<Vec<T>>, [u64; 4]) {
    let Some(d) = dim else {
        return (vec![v.to_vec()], [1, 1, 1, 1]);
    };
    let mut od = dims;
    od[d] = 1;
    let on = od.iter().product::<u64>() as usize;
    let mut g = vec![Vec::new(); on];
    for (lin, &x) in v.iter().enumerate() {
        let mut c = [0u64; 4];
        let mut rest = lin as u64;
        for k in 0..4 {
            c[k] = rest % dims[k];
            rest /= dims[k];
        }
        c[d] = 0;
        let o = c[0] + od[0] * (c[1] + od[1] * (c[2] + od[2] * c[3]));
        g[o as usize].push(x);
    }
    (g, od)
}

/// Checks a floating (or complex) result against `want` with a tolerance scaled by `scale`.
fn close(got: (f64, f64), want: (f64, f64), eps: f64, scale: f64, what: &str) {
    let ok = |g: f64, w: f64| {
        (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= eps * scale.max(1.0) * 4.0
    };
    assert!(ok(got.0, want.0) && ok(got.1, want.1), "{what}: got {got:?}, want {want:?}");
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Sum,
    Product,
    Min,
    Max,
    All,
    Any,
    Count,
    SumNan(f64),
    ProductNan(f64),
}

/// The reference result of `op` over `g`, checked against `got`, an output element of type O.
fn check_group<T: E, O: E>(op: Op, g: &[T], got: O, what: &str) {
    let fix = |x: T, v: f64| if is_nan(x) { T::from_c(v, 0.0) } else { x };
    match op {
        Op::Sum | Op::SumNan(_) => {
            let v = if let Op::SumNan(v) = op { v } else { f64::NAN };
            let xs: Vec<T> = g.iter().map(|&x| fix(x, v)).collect();
            if matches!(T::KIND, Kind::Int | Kind::Bool) {
                let s = xs.iter().fold(0i128, |a, &x| a.wrapping_add(x.int()));
                assert_eq!(got.int(), O::from_i128(s).int(), "{what}: wrapped sum");
            } else {
                let want = xs.iter().fold((0.0, 0.0), |a, &x| (a.0 + x.re(), a.1 + x.im()));
                let scale = xs.iter().map(|x| x.re().abs() + x.im().abs()).sum::<f64>();
                close((got.re(), got.im()), want, O::EPS, scale, what);
            }
        }
        Op::Product | Op::ProductNan(_) => {
            let v = if let Op::ProductNan(v) = op { v } else { f64::NAN };
            let xs: Vec<T> = g.iter().map(|&x| fix(x, v)).collect();
            if matches!(T::KIND, Kind::Int | Kind::Bool) {
                let p = xs.iter().fold(1i128, |a, &x| a.wrapping_mul(x.int()));
                assert_eq!(got.int(), O::from_i128(p).int(), "{what}: wrapped product");
            } else {
                let want = if T::KIND == Kind::Complex {
                    xs.iter().fold((1.0, 0.0), |a: (f64, f64), &x| {
                        (a.0 * x.re() - a.1 * x.im(), a.0 * x.im() + a.1 * x.re())
                    })
                } else {
                    (xs.iter().map(|x| x.re()).product::<f64>(), 0.0)
                };
                let scale =
                    xs.iter().map(|x| x.re().hypot(x.im())).product::<f64>() * (xs.len() as f64);
                // Whether a magnitude of e^l is beyond the output type's range.
                let overflows = |l: f64| O::from_c(l.exp(), 0.0).re().is_infinite();
                let logs: Vec<f64> = xs.iter().map(|x| x.re().hypot(x.im()).ln()).collect();
                let product_log: f64 = logs.iter().sum();
                // The largest product of any subset: some order of multiplication meets it.
                let peak_log: f64 = logs.iter().filter(|&&l| l > 0.0).sum();
                let finite = got.re().is_finite() && got.im().is_finite();
                if T::KIND == Kind::Complex && overflows(product_log) {
                    // Beyond the range: infinite, and which parts become NaN (inf - inf)
                    // depends on the order of the products.
                    assert!(!finite, "{what}: got {got:?}, want a non-finite product");
                } else if T::KIND == Kind::Complex && overflows(peak_log) && !finite {
                    // A partial product of this order overflowed, though the whole is in range.
                } else {
                    // rounded to the output type: a product beyond its range is infinite
                    let w = O::from_c(want.0, want.1);
                    let want = if w.re().is_infinite() || w.im().is_infinite() {
                        (w.re(), w.im())
                    } else {
                        want
                    };
                    close((got.re(), got.im()), want, O::EPS, scale, what);
                }
            }
        }
        Op::Min | Op::Max => {
            let is_min = matches!(op, Op::Min);
            let keep: Vec<T> = g.iter().copied().filter(|&x| !is_nan(x)).collect();
            match T::KIND {
                Kind::Int | Kind::Bool => {
                    let want = if is_min {
                        keep.iter().map(|x| x.int()).min().unwrap_or(T::RANGE.1)
                    } else {
                        keep.iter().map(|x| x.int()).max().unwrap_or(T::RANGE.0)
                    };
                    assert_eq!(got.int(), want, "{what}");
                }
                Kind::Float => {
                    let it = keep.iter().map(|x| x.re());
                    let want = if is_min {
                        it.fold(f64::NAN, f64::min)
                    } else {
                        it.fold(f64::NAN, f64::max)
                    };
                    assert!(
                        got.re() == want || (got.re().is_nan() && want.is_nan()),
                        "{what}: got {got:?}, want {want}"
                    );
                }
                Kind::Complex => {
                    let mags = keep.iter().map(|x| x.re().hypot(x.im()));
                    let want = if is_min {
                        mags.fold(f64::NAN, f64::min)
                    } else {
                        mags.fold(f64::NAN, f64::max)
                    };
                    let m = got.re().hypot(got.im());
                    assert!(
                        m == want || (m.is_nan() && want.is_nan()),
                        "{what}: |got| {m}, want {want}"
                    );
                    assert!(
                        keep.is_empty()
                            || keep.iter().any(|x| x.re() == got.re() && x.im() == got.im()),
                        "{what}: {got:?} is not an input"
                    );
                }
            }
        }
        Op::All => assert_eq!(got.int(), g.iter().all(|&x| nonzero(x)) as i128, "{what}"),
        Op::Any => assert_eq!(got.int(), g.iter().any(|&x| nonzero(x)) as i128, "{what}"),
        Op::Count => {
            assert_eq!(got.int(), g.iter().filter(|&&x| nonzero(x)).count() as i128, "{what}")
        }
    }
}

/// The position `imin` (or `imax`) must find in `g`: NaN skipped, magnitude for complex
/// values (compared as squared norms, as both backends do), the first of equal values; 0 when
/// every element is NaN or there is none.
fn extreme_index<T: E>(g: &[T], is_min: bool) -> usize {
    let key = |x: T| {
        if T::KIND == Kind::Complex {
            x.re() * x.re() + x.im() * x.im()
        } else {
            x.re()
        }
    };
    let mut best: Option<usize> = None;
    for (j, &x) in g.iter().enumerate() {
        if is_nan(x) {
            continue;
        }
        let better = match best {
            None => true,
            Some(b) if T::KIND == Kind::Int => {
                if is_min {
                    x.int() < g[b].int()
                } else {
                    x.int() > g[b].int()
                }
            }
            Some(b) => {
                if is_min {
                    key(x) < key(g[b])
                } else {
                    key(x) > key(g[b])
                }
            }
        };
        if better {
            best = Some(j);
        }
    }
    best.unwrap_or(0)
}

/// Checks an `imin`/`imax` result (value and position) for one group.
fn check_index_group<T: E>(g: &[T], is_min: bool, got: T, at: u32, what: &str) {
    let want = extreme_index(g, is_min);
    assert_eq!(at as usize, want, "{what}: position");
    if g.is_empty() || g.iter().all(|&x| is_nan(x)) {
        // the identity of min/max (checked with the plain reduction's rules)
        let op = if is_min { Op::Min } else { Op::Max };
        check_group::<T, T>(op, g, got, what);
    } else {
        let w = g[want];
        assert!(w.re() == got.re() && w.im() == got.im(), "{what}: got {got:?}, want {w:?}");
    }
}

fn check_dim_index<T: E>(
    host: &[T],
    dims: [u64; 4],
    d: usize,
    is_min: bool,
    out: (Array<T>, Array<u32>),
) {
    let (gs, od) = groups(host, dims, Some(d));
    assert_eq!(out.0.dims(), Dim4::new(&od), "imin/imax along {d} of {dims:?}: dims");
    assert_eq!(out.1.dims(), Dim4::new(&od), "imin/imax along {d} of {dims:?}: index dims");
    let (vals, idx) = (out.0.to_vec(), out.1.to_vec());
    for (k, g) in gs.iter().enumerate() {
        let what = format!(
            "{} {} along {d} of {dims:?}, out {k}",
            T::get_af_dtype().name(),
            if is_min { "imin" } else { "imax" }
        );
        check_index_group(g, is_min, vals[k], idx[k], &what);
    }
}

fn check_all_index<T: E, B: E>(host: &[T], dims: [u64; 4], is_min: bool, got: (B, B, u32)) {
    let what = format!(
        "{} {} over all of {dims:?}",
        T::get_af_dtype().name(),
        if is_min { "imin_all" } else { "imax_all" }
    );
    let want = extreme_index(host, is_min);
    assert_eq!(got.2 as usize, want, "{what}: position");
    if host.is_empty() || host.iter().all(|&x| is_nan(x)) {
        let op = if is_min { Op::Min } else { Op::Max };
        check_all(op, host, dims, (got.0, got.1));
    } else {
        let w = host[want];
        assert!(w.re() == got.0.re() && w.im() == got.1.re(), "{what}: got {got:?}, want {w:?}");
    }
}

fn check_dim<T: E, O: E>(op: Op, host: &[T], dims: [u64; 4], d: usize, out: &Array<O>) {
    let (gs, od) = groups(host, dims, Some(d));
    assert_eq!(out.dims(), Dim4::new(&od), "{op:?} along {d} of {dims:?}: dims");
    let got = out.to_vec();
    for (k, (g, &x)) in gs.iter().zip(&got).enumerate() {
        check_group::<T, O>(
            op,
            g,
            x,
            &format!("{} {op:?} along {d} of {dims:?}, out {k}", T::get_af_dtype().name()),
        );
    }
}

fn check_all<T: E, B: E>(op: Op, host: &[T], dims: [u64; 4], got: (B, B)) {
    let what = format!("{} {op:?} over all of {dims:?}", T::get_af_dtype().name());
    // the (re, im) pair read as one value of the output's complex-or-real kind
    struct Pair<B>(B, B);
    let g = groups(host, dims, None).0.pop().unwrap();
    let p = Pair(got.0, got.1);
    match op {
        Op::All | Op::Any | Op::Count => check_group::<T, B>(op, &g, p.0, &what),
        _ if T::KIND == Kind::Complex => {
            // rebuild a complex output of the parts' precision
            if B::EPS > 1e-10 {
                check_group::<T, c32>(op, &g, c32::new(p.0.re() as f32, p.1.re() as f32), &what)
            } else {
                check_group::<T, c64>(op, &g, c64::new(p.0.re(), p.1.re()), &what)
            }
        }
        _ => {
            assert_eq!(p.1.re(), 0.0, "{what}: imaginary part");
            check_group::<T, B>(op, &g, p.0, &what)
        }
    }
}

/// Random shapes: small, with empty and size-1 dimensions.
fn shapes(r: &mut Rng, n: usize) -> Vec<[u64; 4]> {
    let mut v = vec![[0, 3, 1, 1], [1, 1, 1, 1], [5, 1, 2, 1], [2, 3, 4, 5]];
    for _ in 0..n {
        let mut d = [1u64; 4];
        let nd = 1 + r.below(4) as usize;
        for x in d.iter_mut().take(nd) {
            *x = match r.below(8) {
                0 => 0,
                1 => 1,
                _ => 1 + r.below(13),
            };
        }
        v.push(d);
    }
    v
}

fn check_type<T: Reducible>(seed: u64, nan: bool) {
    let mut r = Rng(seed);
    for dims in shapes(&mut r, 6) {
        let n = dims.iter().product::<u64>() as usize;
        let host: Vec<T> = (0..n)
            .map(|_| if nan && r.below(6) == 0 { T::nan() } else { T::gen(&mut r) })
            .collect();
        let a = Array::new(&host, Dim4::new(&dims));
        check_array(&a, &host, dims);
    }
}

/// Every reduction of `a` (whose elements are `host`, in shape `dims`) along each dimension and
/// over everything, against the host references.
fn check_array<T: Reducible>(a: &Array<T>, host: &[T], dims: [u64; 4]) {
    let host = host.to_vec();
    let a = a.clone();
    for d in 0..4 {
        let di = d as i32;
        check_dim(Op::Sum, &host, dims, d, &sum(&a, di));
        check_dim(Op::Product, &host, dims, d, &product(&a, di));
        check_dim(Op::Min, &host, dims, d, &min(&a, di));
        check_dim(Op::Max, &host, dims, d, &max(&a, di));
        check_dim(Op::All, &host, dims, d, &all_true(&a, di));
        check_dim(Op::Any, &host, dims, d, &any_true(&a, di));
        check_dim(Op::Count, &host, dims, d, &count(&a, di));
        check_dim(Op::SumNan(0.25), &host, dims, d, &sum_nan(&a, di, 0.25));
        check_dim(Op::ProductNan(2.0), &host, dims, d, &product_nan(&a, di, 2.0));
        check_dim_index(&host, dims, d, true, imin(&a, di));
        check_dim_index(&host, dims, d, false, imax(&a, di));
    }
    check_all(Op::Sum, &host, dims, sum_all(&a));
    check_all(Op::Product, &host, dims, product_all(&a));
    check_all(Op::Min, &host, dims, min_all(&a));
    check_all(Op::Max, &host, dims, max_all(&a));
    check_all(Op::All, &host, dims, all_true_all(&a));
    check_all(Op::Any, &host, dims, any_true_all(&a));
    check_all(Op::Count, &host, dims, count_all(&a));
    check_all(Op::SumNan(-1.0), &host, dims, sum_nan_all(&a, -1.0));
    check_all(Op::ProductNan(0.5), &host, dims, product_nan_all(&a, 0.5));
    check_all_index(&host, dims, true, imin_all(&a));
    check_all_index(&host, dims, false, imax_all(&a));
}

/// One test per element type and NaN setting, for the same reason as the lazy-producer tests
/// below: on CUDA each compiles a few hundred kernels, and apart they run in parallel.
macro_rules! type_tests {
    ($($name:ident: $t:ty, $seed:expr, $nan:expr;)*) => {
        $(
            #[test]
            fn $name() {
                check_type::<$t>($seed, $nan);
            }
        )*
    };
}

type_tests! {
    every_function_f32: f32, 1, false;
    every_function_f64: f64, 2, false;
    every_function_f16: f16, 3, false;
    every_function_bf16: bf16, 14, false;
    every_function_c32: c32, 4, false;
    every_function_c64: c64, 5, false;
    every_function_bool: bool, 6, false;
    every_function_u8: u8, 7, false;
    every_function_u16: u16, 8, false;
    every_function_u32: u32, 9, false;
    every_function_u64: u64, 10, false;
    every_function_i16: i16, 11, false;
    every_function_i32: i32, 12, false;
    every_function_i64: i64, 13, false;
    nan_inputs_f32: f32, 21, true;
    nan_inputs_f64: f64, 22, true;
    nan_inputs_f16: f16, 23, true;
    nan_inputs_bf16: bf16, 25, true;
    nan_inputs_c32: c32, 24, true;
}

/// NaN rules on small cases: min and max skip NaN unless a run has nothing else, sums
/// propagate it, `sum_nan` replaces it.
#[test]
fn nan_rules() {
    let a = Array::new(&[f32::NAN, f32::NAN, 1.0, f32::NAN], dim4!(2, 2));
    let m = min(&a, 0).to_vec();
    assert!(m[0].is_nan() && m[1] == 1.0, "min of an all-NaN column is NaN: {m:?}");
    assert!(max_all(&Array::new(&[f64::NAN], dim4!(1))).0.is_nan());
    assert!(sum(&a, 0).to_vec()[0].is_nan(), "sum propagates NaN");
    assert_eq!(sum_nan(&a, 0, 1.5).to_vec(), vec![3.0, 2.5]);
}

/// Reductions of lazy producers, which the backends fold without evaluating them: a sum of
/// two arrays of the same shape (read linearly, in wide loads on CUDA), a sum with an array
/// broadcast along one dimension (read through strides), and a sum with `range` (computed from
/// coordinates); every function, along each dimension, on random shapes.
fn check_lazy<T: Reducible>(seed: u64) {
    let mut r = Rng(seed);
    for dims in shapes(&mut r, 3) {
        let n = dims.iter().product::<u64>() as usize;
        let gen = |r: &mut Rng, n: usize| -> Vec<T> { (0..n).map(|_| T::gen(r)).collect() };
        let (x, y) = (gen(&mut r, n), gen(&mut r, n));
        let a = Array::new(&x, Dim4::new(&dims));
        let b = Array::new(&y, Dim4::new(&dims));
        let sum_ab: Vec<T> = x.iter().zip(&y).map(|(&p, &q)| p.add_t(q)).collect();
        check_array(&plus(&a, &b, false), &sum_ab, dims);

        // broadcast along a dimension `k`, and `range` along it
        let k = r.below(4) as usize;
        let mut cd = dims;
        cd[k] = 1;
        let c_host = gen(&mut r, cd.iter().product::<u64>() as usize);
        let c = Array::new(&c_host, Dim4::new(&cd));
        let at = |lin: usize| -> [usize; 4] {
            let mut co = [0usize; 4];
            let mut rest = lin;
            for d in 0..4 {
                co[d] = rest % dims[d] as usize;
                rest /= dims[d] as usize;
            }
            co
        };
        let bcast: Vec<T> = (0..n)
            .map(|lin| {
                let mut co = at(lin);
                co[k] = 0;
                let ci = co[0]
                    + cd[0] as usize * (co[1] + cd[1] as usize * (co[2] + cd[2] as usize * co[3]));
                x[lin].add_t(c_host[ci])
            })
            .collect();
        check_array(&plus(&a, &c, true), &bcast, dims);
        let ranged: Vec<T> =
            (0..n).map(|lin| x[lin].add_t(T::from_i128(at(lin)[k] as i128))).collect();
        check_array(&plus(&a, &range::<T>(Dim4::new(&dims), k as i32), false), &ranged, dims);
    }
}

/// The lazy producer `a + b`; for bool, `or` (0 or 1): a bool sum keeps its byte, as ArrayFire's
/// `b8` does (true + true is 2), which a reference of Rust `bool`s cannot hold
/// (`tests/elementwise/bool_bytes.rs` checks reductions of such bytes).
fn plus<T: Reducible>(a: &Array<T>, b: &Array<T>, batch: bool) -> Array<T> {
    if T::KIND == Kind::Bool {
        or(a, b, batch).cast::<T>()
    } else {
        add(a, b, batch)
    }
}

/// One test per element type: on CUDA each compiles a few hundred fused kernels (every fold,
/// layout and producer), so apart they run in parallel and each stays short.
macro_rules! lazy_tests {
    ($($name:ident: $t:ty, $seed:expr;)*) => {
        $(
            #[test]
            fn $name() {
                check_lazy::<$t>($seed);
            }
        )*
    };
}

lazy_tests! {
    lazy_producers_f32: f32, 31;
    lazy_producers_f64: f64, 32;
    lazy_producers_f16: f16, 33;
    lazy_producers_bf16: bf16, 38;
    lazy_producers_c32: c32, 34;
    lazy_producers_c64: c64, 35;
    lazy_producers_bool: bool, 36;
    lazy_producers_u8: u8, 37;
    lazy_producers_u16: u16, 38;
    lazy_producers_u32: u32, 39;
    lazy_producers_u64: u64, 40;
    lazy_producers_i16: i16, 41;
    lazy_producers_i32: i32, 42;
    lazy_producers_i64: i64, 43;
}

/// `imin`/`imax` rules on small cases: the first of equal values, NaN skipped, all-NaN and
/// empty runs, complex magnitude.
#[test]
fn index_reductions_first_position_and_nan() {
    let a = Array::new(&[2.0f32, 1.0, 1.0, 3.0, f32::NAN, 3.0], dim4!(3, 2));
    let (v, i) = imin(&a, 0);
    assert_eq!((v.to_vec(), i.to_vec()), (vec![1.0, 3.0], vec![1, 0]));
    let (v, i) = imax(&a, 0);
    assert_eq!((v.to_vec(), i.to_vec()), (vec![2.0, 3.0], vec![0, 0]));
    let (v, i) = imax(&a, 1);
    assert_eq!((v.to_vec(), i.to_vec()), (vec![3.0, 1.0, 3.0], vec![1, 0, 1]));
    let nan = Array::new(&[f64::NAN, f64::NAN], dim4!(2));
    let (v, _, i) = imin_all(&nan);
    assert!(v.is_nan() && i == 0, "all NaN: {v} at {i}");
    let e = Array::<i32>::new_empty(dim4!(0, 2));
    let (v, i) = imin(&e, 0);
    assert_eq!((v.to_vec(), i.to_vec()), (vec![i32::MAX; 2], vec![0, 0]));
    let z = Array::new(&[c64::new(3.0, 4.0), c64::new(-5.0, 0.0), c64::new(0.0, 1.0)], dim4!(3));
    assert_eq!(imax_all(&z), (3.0, 4.0, 0)); // |3+4i| = |-5|: the first wins
    assert_eq!(imin_all(&z), (0.0, 1.0, 2));
    let u = Array::new(&[7u8, 7, 9, 9], dim4!(4));
    assert_eq!(imax_all(&u), (9, 0, 2));
    assert_eq!(imin_all(&u), (7, 0, 0));
}

#[test]
#[should_panic(expected = "imax: `dim` is 5")]
fn index_reduction_dim_out_of_range_panics() {
    let _ = imax(&Array::new(&[1.0f32], dim4!(1)), 5);
}

#[test]
fn empty_inputs_give_identities() {
    let e = Array::<f32>::new_empty(dim4!(0, 3));
    assert_eq!(sum(&e, 0).dims(), dim4!(1, 3));
    assert_eq!(sum(&e, 0).to_vec(), vec![0.0; 3]);
    assert_eq!(product(&e, 0).to_vec(), vec![1.0; 3]);
    assert!(min(&e, 0).to_vec().iter().all(|x| x.is_nan()));
    assert_eq!(sum(&e, 1).dims(), dim4!(0, 1));
    assert_eq!(sum_all(&e), (0.0, 0.0));
    assert_eq!(product_all(&e), (1.0, 0.0));
    assert_eq!(count_all(&e), (0, 0));
    assert_eq!(all_true_all(&e), (true, false));
    assert_eq!(any_true_all(&e), (false, false));
    let i = Array::<i16>::new_empty(dim4!(0));
    assert_eq!(min_all(&i), (i16::MAX, 0));
    assert_eq!(max_all(&i), (i16::MIN, 0));
}

#[test]
fn integer_sums_and_products_wrap_in_the_output_type() {
    let a = Array::new(&[i32::MAX, 1, 5], dim4!(3));
    assert_eq!(sum_all(&a), (i32::MIN.wrapping_add(5), 0));
    let u = Array::new(&[200u8; 4], dim4!(4));
    assert_eq!(sum_all(&u), (800, 0)); // u8 sums in u32
    assert_eq!(product(&u, 0).to_vec(), vec![200u32.wrapping_pow(4)]);
    let big = Array::new(&[u64::MAX, 2], dim4!(2));
    assert_eq!(sum_all(&big), (1, 0)); // exact, not through an f64
    let b = Array::new(&[true, true, false], dim4!(3));
    assert_eq!(sum_all(&b), (2, 0));
    assert_eq!(product_all(&b), (false, false));
}

#[test]
fn dim_minus_one_is_the_first_dimension_above_one() {
    let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(1, 3));
    assert_eq!(sum(&a, -1).to_vec(), vec![6.0]);
}

#[test]
#[should_panic(expected = "sum: `dim` is 4")]
fn dim_out_of_range_panics() {
    let _ = sum(&Array::new(&[1.0f32], dim4!(1)), 4);
}

/// Shapes large enough to take every path of the CPU reduction (many tasks per output run,
/// runs that straddle tasks, output runs long enough to be split by rows) and of the CUDA
/// kernels (rows and columns split between blocks, combined by the last block; wide and
/// scalar loads), with accumulators of every kind: f64, c64, 64-bit integers, value and
/// position.
#[test]
fn large_shapes_every_path() {
    let mut r = Rng(99);
    // (the last: a row split over many blocks whose last piece is shorter than a wide load)
    let all = [
        [70_000u64, 2, 1, 1],
        [3, 50_000, 1, 1],
        [8_200, 70, 1, 1],
        [9, 5, 3000, 2],
        [1_000_003, 1, 1, 1],
    ];
    for dims in all {
        let n = dims.iter().product::<u64>() as usize;
        let host: Vec<f32> = (0..n).map(|_| r.real() as f32).collect();
        let ints: Vec<i32> = (0..n).map(|_| i32::gen(&mut r)).collect();
        let cplx: Vec<c32> = (0..n).map(|_| c32::gen(&mut r)).collect();
        let a = Array::new(&host, Dim4::new(&dims));
        let ia = Array::new(&ints, Dim4::new(&dims));
        let ca = Array::new(&cplx, Dim4::new(&dims));
        for d in 0..4 {
            let di = d as i32;
            check_dim(Op::Sum, &host, dims, d, &sum(&a, di));
            check_dim(Op::Max, &host, dims, d, &max(&a, di));
            check_dim(Op::Sum, &ints, dims, d, &sum(&ia, di));
            check_dim(Op::Count, &ints, dims, d, &count(&ia, di));
            check_dim_index(&host, dims, d, true, imin(&a, di));
            check_dim_index(&ints, dims, d, false, imax(&ia, di));
            check_dim(Op::Sum, &cplx, dims, d, &sum(&ca, di));
            check_dim(Op::Min, &cplx, dims, d, &min(&ca, di));
            check_dim_index(&cplx, dims, d, false, imax(&ca, di));
        }
        check_all(Op::Sum, &host, dims, sum_all(&a));
        check_all(Op::Min, &ints, dims, min_all(&ia));
        check_all(Op::Sum, &cplx, dims, sum_all(&ca));
        check_all_index(&host, dims, false, imax_all(&a));
        check_all_index(&cplx, dims, true, imin_all(&ca));
    }
}

/// A fused producer gives bit for bit what evaluating it first and reducing gives, and the
/// same on every call.
#[test]
fn fused_equals_evaluated_then_reduced() {
    let mut r = Rng(7);
    for dims in [[1000u64, 70, 1, 1], [5, 7, 3, 2], [100_000, 1, 1, 1], [8_200, 3, 1, 1]] {
        let n = dims.iter().product::<u64>() as usize;
        let x: Vec<f32> = (0..n).map(|_| r.real() as f32).collect();
        let y: Vec<f32> = (0..n).map(|_| r.real() as f32).collect();
        let a = Array::new(&x, Dim4::new(&dims));
        let b = Array::new(&y, Dim4::new(&dims));
        let trees: Vec<Box<dyn Fn() -> Array<f32>>> = vec![
            Box::new(|| &a * &b),
            Box::new(|| &a + &b),
            Box::new(|| sin(&a) * &b - &a),
            Box::new(|| &a * 2.0f32),
        ];
        for t in &trees {
            let lazy = t();
            let done = t();
            done.eval();
            for d in 0..4 {
                assert_eq!(sum(&lazy, d).to_vec(), sum(&done, d).to_vec(), "sum along {d}");
                assert_eq!(max(&lazy, d).to_vec(), max(&done, d).to_vec(), "max along {d}");
            }
            assert_eq!(sum_all(&t()), sum_all(&done));
            assert_eq!(sum_all(&t()), sum_all(&t()), "reproducible");
            assert_eq!(product_all(&t()), product_all(&done));
            assert_eq!(count_all(&t()), count_all(&done));
        }
    }
    // the dot product matches an f64 reference
    let x: Vec<f32> = (0..10_000).map(|_| r.real() as f32).collect();
    let y: Vec<f32> = (0..10_000).map(|_| r.real() as f32).collect();
    let want: f64 = x.iter().zip(&y).map(|(&p, &q)| (p * q) as f64).sum();
    let (a, b) = (Array::new(&x, dim4!(10_000)), Array::new(&y, dim4!(10_000)));
    let got = sum_all(&(&a * &b)).0 as f64;
    assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "{got} vs {want}");
}

/// A lazy array read by a reduction and held for later (as conjugate gradients holds `r`
/// while `dot(&r, &r)` reduces it, then reads `r` again): the reduction's value and the
/// array's, both against f64 references, for a dot product, a sum over everything, and a sum
/// along a strided dimension (long rows, the CPU's row tasks). On the CPU the reduction stores
/// the array as it folds; the values must not depend on that.
#[test]
fn a_held_lazy_operand_of_a_reduction_keeps_its_values() {
    let (rows, cols) = (9000u64, 5u64);
    let n = (rows * cols) as usize;
    let x: Vec<f32> = (0..n).map(|i| ((i * 37) % 101) as f32 * 0.01 - 0.3).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i * 11) % 53) as f32 * 0.02 + 0.1).collect();
    let r_want: Vec<f64> = x.iter().zip(&y).map(|(&a, &b)| a as f64 - 0.5 * b as f64).collect();
    let close = |got: f64, want: f64, what: &str| {
        assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "{what}: {got} vs {want}");
    };
    let vector = |v: &[f32]| Array::new(v, dim4!(n as u64));
    let matrix = |v: &[f32]| Array::new(v, dim4!(rows, cols));

    // dot(r, r), then r
    let r = &vector(&x) - &vector(&y) * 0.5f32;
    let rr = dot(&r, &r, MatProp::NONE, MatProp::NONE).to_vec()[0] as f64;
    close(rr, r_want.iter().map(|v| v * v).sum(), "dot(r, r)");
    for (i, (&g, &w)) in r.to_vec().iter().zip(&r_want).enumerate() {
        close(g as f64, w, &format!("r[{i}] after dot"));
    }

    // sum_all(r * 2 + 1), then r read by another expression
    let r = &vector(&x) - &vector(&y) * 0.5f32;
    let total = sum_all(&(&r * 2.0f32 + 1.0f32)).0 as f64;
    close(total, r_want.iter().map(|v| v * 2.0 + 1.0).sum(), "sum_all(r * 2 + 1)");
    let later = (&r * 3.0f32).to_vec();
    for (i, (&g, &w)) in later.iter().zip(&r_want).enumerate() {
        close(g as f64, 3.0 * w, &format!("3 r[{i}] after sum_all"));
    }

    // along dimension 1 of a 9000 x 5 matrix
    let m = &matrix(&x) - &matrix(&y) * 0.5f32;
    let s = sum(&(&m * &m), 1).to_vec();
    for (i, &g) in s.iter().enumerate() {
        let want: f64 = (0..cols as usize).map(|j| r_want[i + rows as usize * j].powi(2)).sum();
        close(g as f64, want, &format!("row {i} of sum(m * m, 1)"));
    }
    for (i, (&g, &w)) in m.to_vec().iter().zip(&r_want).enumerate() {
        close(g as f64, w, &format!("m[{i}] after sum along 1"));
    }
}
