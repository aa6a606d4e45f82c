//! Scans and differences: `accum`, `scan` (every `BinaryOp`, inclusive and exclusive),
//! `scan_by_key` (every key type) and `diff1`/`diff2`, on every element type, along each of
//! the four dimensions, on random shapes (empty and size-1 dimensions, lines of more than a
//! million elements), on lazy inputs and on views, against references computed here on the
//! host: integers in i128 wrapped to the output type after every step, floats in f64, complex
//! numbers in c64.

use crate::common;

use common::*;
use emberfire::*;

// ---- the reference ----------------------------------------------------------------------------

/// The scan's view of a shape: element (i, j, o) of `outer` slabs of `len` rows of `inner`
/// elements is at `i + inner * (j + len * o)`; a line is fixed (i, o).
fn lines(dims: Dim4, dim: usize) -> (usize, usize, usize) {
    let p = |r: std::ops::Range<usize>| r.map(|k| dims[k] as usize).product::<usize>();
    (p(0..dim), dims[dim] as usize, p(dim + 1..4))
}

/// The largest and smallest values of an integer type.
fn int_limits(t: Ty) -> (i128, i128) {
    if t.signed {
        (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
    } else {
        (0, (1i128 << t.bits) - 1)
    }
}

/// `a` (earlier) combined with `b` in output type `t`: integers wrap, floats and complex
/// numbers compute in f64, minima and maxima skip NaN and compare complex numbers by
/// magnitude, keeping the earlier of equal ones.
fn combine(op: BinaryOp, a: V, b: V, t: Ty) -> V {
    match t.class {
        Class::Bool | Class::Int => {
            let wrap = |v: i128| conv_int(v, t);
            match op {
                BinaryOp::ADD => V::I(wrap(a.i() + b.i())),
                BinaryOp::MUL => V::I(wrap(a.i().wrapping_mul(b.i()))),
                BinaryOp::MIN => V::I(a.i().min(b.i())),
                BinaryOp::MAX => V::I(a.i().max(b.i())),
            }
        }
        Class::Float => match op {
            BinaryOp::ADD => V::F(a.f() + b.f()),
            BinaryOp::MUL => V::F(a.f() * b.f()),
            BinaryOp::MIN => V::F(a.f().min(b.f())),
            BinaryOp::MAX => V::F(a.f().max(b.f())),
        },
        Class::Complex => {
            let (x, y) = (a.c(), b.c());
            let pick = |later: bool| if later { b } else { a };
            match op {
                BinaryOp::ADD => V::C(x + y),
                BinaryOp::MUL => V::C(x * y),
                BinaryOp::MIN => pick(x.is_nan() || (!y.is_nan() && y.norm_sqr() < x.norm_sqr())),
                BinaryOp::MAX => pick(x.is_nan() || (!y.is_nan() && y.norm_sqr() > x.norm_sqr())),
            }
        }
    }
}

/// An integer wrapped into the integer type `t`.
fn conv_int(v: i128, t: Ty) -> i128 {
    let m = 1i128 << t.bits;
    let r = v.rem_euclid(m);
    if t.signed && r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// What an exclusive scan shows first in a run, in output type `t`.
fn first(op: BinaryOp, t: Ty) -> V {
    match (t.class, op) {
        (_, BinaryOp::ADD) => V::I(0),
        (_, BinaryOp::MUL) => V::I(1),
        (Class::Float, BinaryOp::MIN) => V::F(f64::INFINITY),
        (Class::Float, BinaryOp::MAX) => V::F(f64::NEG_INFINITY),
        (Class::Complex, BinaryOp::MIN) => V::C(c64::new(f64::INFINITY, 0.0)),
        (Class::Complex, BinaryOp::MAX) => V::C(c64::new(0.0, 0.0)),
        (_, BinaryOp::MIN) => V::I(int_limits(t).1),
        (_, BinaryOp::MAX) => V::I(int_limits(t).0),
    }
}

/// The magnitude a value contributes to the error bound of a sum.
fn mag(v: V) -> f64 {
    match v {
        V::C(c) => c.norm(),
        v => v.f().abs(),
    }
}

/// The tolerance of an element that combines `count` values whose magnitudes add to `sum_abs`:
/// sums accumulate in f64 with an error of at most `count` f64 roundings of `sum_abs` (the
/// order of the additions differs between the backends and the reference), products at most
/// a few roundings per factor, relative to the product; minima and maxima are exact.
fn tol_for(op: BinaryOp, t: Ty, count: usize, sum_abs: f64) -> Tol {
    if matches!(t.class, Class::Bool | Class::Int) || matches!(op, BinaryOp::MIN | BinaryOp::MAX) {
        return Tol::EXACT;
    }
    let per = if op == BinaryOp::ADD { 2.3e-16 } else { 6e-16 };
    let tol = Tol::x(4.0 + count as f64 * per / t.rel);
    if op == BinaryOp::ADD {
        tol.scale(sum_abs)
    } else {
        tol
    }
}

/// The expected scan of `xs` (exact values of the input, in the output type's terms) along
/// `dim` of `dims`, restarted where `keys` change, with each element's tolerance.
fn reference(
    xs: &[V],
    keys: Option<&[i64]>,
    dims: Dim4,
    dim: usize,
    op: BinaryOp,
    inclusive: bool,
    t: Ty,
) -> Vec<(V, Tol)> {
    let (inner, len, outer) = lines(dims, dim);
    let mut want = vec![(V::I(0), Tol::EXACT); xs.len()];
    for o in 0..outer {
        for i in 0..inner {
            let (mut acc, mut count, mut sum_abs) = (V::I(0), 0usize, 0.0f64);
            for j in 0..len {
                let q = i + inner * (j + len * o);
                let reset = j == 0 || keys.is_some_and(|k| k[q] != k[q - inner]);
                let before = (acc, tol_for(op, t, count, sum_abs));
                if reset {
                    (acc, count, sum_abs) = (xs[q], 1, mag(xs[q]));
                } else {
                    acc = combine(op, acc, xs[q], t);
                    count += 1;
                    sum_abs += mag(xs[q]);
                }
                want[q] = if inclusive {
                    (acc, tol_for(op, t, count, sum_abs))
                } else if reset {
                    (first(op, t), Tol::EXACT)
                } else {
                    before
                };
            }
        }
    }
    want
}

/// Compares a result with its reference element by element.
fn check<O: Elem>(
    got: &Array<O>,
    dims: Dim4,
    want: &[(V, Tol)],
    what: &str,
) -> std::result::Result<(), String> {
    if got.get_type() != O::TY.dtype || got.dims() != dims {
        return Err(format!(
            "{what}: got type {:?} dims {}, want {} dims {dims}",
            got.get_type(),
            got.dims(),
            O::TY.name
        ));
    }
    let g = got.to_vec();
    let bad: Vec<usize> = (0..g.len()).filter(|&i| !close(g[i], want[i].0, want[i].1)).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{what}: element {i} {:?} of {dims}: got {:?}, want {:?} (exact {:?}); {} of {} differ",
            coords(dims, i),
            g[i],
            O::from_v(want[i].0),
            want[i].0,
            bad.len(),
            g.len()
        )),
    }
}

// ---- inputs -----------------------------------------------------------------------------------

/// A random input for `op`: the whole range with NaN, infinities and extremes for minima and
/// maxima and for integer sums and products (which wrap); moderate values for floating sums;
/// magnitudes near 1 for floating products, so that long runs stay in range.
fn gen<T: Elem>(r: &mut Rng64, op: BinaryOp) -> T {
    match (T::TY.class, op) {
        (Class::Float, BinaryOp::ADD) | (Class::Complex, BinaryOp::ADD) => T::small(r),
        (Class::Float, BinaryOp::MUL) => {
            let s = if r.gen_bool(0.5) { -1.0 } else { 1.0 };
            T::from_v(V::F(s * r.gen_range(0.5..1.5)))
        }
        (Class::Complex, BinaryOp::MUL) => {
            let (m, a) = (r.gen_range(0.5..1.5), r.gen_range(0.0..std::f64::consts::TAU));
            T::from_v(V::C(c64::from_polar(m, a)))
        }
        _ => T::any(r),
    }
}

/// Keys with runs along every line: each step starts a new run (with a key from 0 to 3, which
/// may repeat an earlier run's) with probability `p`, so runs of one element are common.
fn gen_keys(r: &mut Rng64, dims: Dim4, dim: usize, p: f64) -> Vec<i64> {
    let (inner, len, outer) = lines(dims, dim);
    let mut k = vec![0i64; dims.elements() as usize];
    for o in 0..outer {
        for i in 0..inner {
            let mut key = r.gen_range(0..4);
            for j in 0..len {
                if r.gen_bool(p) {
                    key = r.gen_range(0..4);
                }
                k[i + inner * (j + len * o)] = key;
            }
        }
    }
    k
}

/// `a`, or the same values as a lazy expression (`a + 0`) that the scan must evaluate.
fn maybe_lazy<T: Elem>(a: Array<T>, lazy: bool) -> Array<T> {
    if !lazy {
        return a;
    }
    let zeros = Array::new(&vec![T::from_v(V::I(0)); a.elements()], a.dims());
    add(&a, &zeros, false)
}

/// The name of a scan, for messages.
fn describe(func: &str, op: BinaryOp, inclusive: bool, dim: usize, lazy: bool) -> String {
    let kind = if inclusive { "inclusive" } else { "exclusive" };
    let lazy = if lazy { ", lazy input" } else { "" };
    format!("{func} {op:?} {kind} along {dim}{lazy}")
}

// ---- random cases ----------------------------------------------------------------------------

/// One random scan of a `T` array of shape `dims` (keys of type `K` when keyed).
fn scan_case<T, K>(dims: Dim4, seed: u64, keyed: bool) -> std::result::Result<(), String>
where
    T: Elem,
    T::AggregateOutType: Elem,
    K: Elem + Scanable,
{
    let mut r = Rng64::seed_from_u64(seed);
    let op = BinaryOp::from(r.gen_range(0..4u32));
    let inclusive = r.gen_bool(0.5);
    let dim = r.gen_range(0..4usize);
    let lazy = r.gen_bool(0.3);
    let x: Vec<T> = gen_vec(&mut r, dims.elements() as usize, &|r| gen::<T>(r, op));
    let out_t = <T::AggregateOutType as Elem>::TY;
    let xs: Vec<V> = x.iter().map(|v| refs::conv(v.to_v(), out_t.dtype)).collect();
    let a = maybe_lazy(Array::new(&x, dims), lazy);
    let (got, keys, func) = if keyed {
        let keys = gen_keys(&mut r, dims, dim, 0.3);
        let kv: Vec<K> = keys.iter().map(|&k| K::from_v(V::I(k as i128))).collect();
        let ka = maybe_lazy(Array::new(&kv, dims), r.gen_bool(0.3));
        (scan_by_key(&ka, &a, dim as i32, op, inclusive), Some(keys), "scan_by_key")
    } else if op == BinaryOp::ADD && inclusive && r.gen_bool(0.5) {
        (accum(&a, dim as i32), None, "accum")
    } else {
        (scan(&a, dim as i32, op, inclusive), None, "scan")
    };
    let want = reference(&xs, keys.as_deref(), dims, dim, op, inclusive, out_t);
    let what = format!(
        "{} of {} (keys {})",
        describe(func, op, inclusive, dim, lazy),
        T::TY.name,
        K::TY.name
    );
    check(&got, dims, &want, &what)
}

/// Random scans, keyed or not, with every key type, of one element type.
fn random_scans<T>(cases: u32)
where
    T: Elem,
    T::AggregateOutType: Elem,
{
    run_cases(cases, |dims, seed| match seed % 6 {
        0 => scan_case::<T, i32>(dims, seed, true),
        1 => scan_case::<T, u32>(dims, seed, true),
        2 => scan_case::<T, i64>(dims, seed, true),
        3 => scan_case::<T, u64>(dims, seed, true),
        _ => scan_case::<T, i32>(dims, seed, false),
    });
}

#[test]
fn random_scans_of_real_floats() {
    random_scans::<f32>(96);
    random_scans::<f64>(96);
    random_scans::<f16>(64);
    random_scans::<bf16>(64);
}

#[test]
fn random_scans_of_complex() {
    random_scans::<c32>(64);
    random_scans::<c64>(64);
}

#[test]
fn random_scans_of_integers() {
    random_scans::<u8>(48);
    random_scans::<i16>(48);
    random_scans::<u16>(48);
    random_scans::<i32>(64);
    random_scans::<u32>(64);
    random_scans::<i64>(64);
    random_scans::<u64>(64);
}

#[test]
fn random_scans_of_bool() {
    random_scans::<bool>(64);
}

/// Every operation, both kinds and all four dimensions on one shape per type family, so that
/// no combination depends on the random draw.
fn every_combination<T>(dims: Dim4, seed: u64)
where
    T: Elem,
    T::AggregateOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    let out_t = <T::AggregateOutType as Elem>::TY;
    for op in [BinaryOp::ADD, BinaryOp::MUL, BinaryOp::MIN, BinaryOp::MAX] {
        let x: Vec<T> = gen_vec(&mut r, dims.elements() as usize, &|r| gen::<T>(r, op));
        let xs: Vec<V> = x.iter().map(|v| refs::conv(v.to_v(), out_t.dtype)).collect();
        let a = Array::new(&x, dims);
        for dim in 0..4 {
            let keys = gen_keys(&mut r, dims, dim, 0.4);
            let ka = Array::new(&keys.iter().map(|&k| k as i32).collect::<Vec<_>>(), dims);
            for inclusive in [true, false] {
                let what = describe("scan", op, inclusive, dim, false) + " of " + T::TY.name;
                let want = reference(&xs, None, dims, dim, op, inclusive, out_t);
                check(&scan(&a, dim as i32, op, inclusive), dims, &want, &what).unwrap();
                let what = describe("scan_by_key", op, inclusive, dim, false) + " of " + T::TY.name;
                let want = reference(&xs, Some(&keys), dims, dim, op, inclusive, out_t);
                check(&scan_by_key(&ka, &a, dim as i32, op, inclusive), dims, &want, &what)
                    .unwrap();
            }
        }
    }
}

#[test]
fn every_operation_kind_and_dimension_on_every_type() {
    let dims = dim4!(5, 4, 3, 6);
    every_combination::<f32>(dims, 1);
    every_combination::<f64>(dims, 2);
    every_combination::<f16>(dims, 3);
    every_combination::<bf16>(dims, 6);
    every_combination::<c32>(dims, 4);
    every_combination::<c64>(dims, 5);
    every_combination::<bool>(dims, 6);
    every_combination::<u8>(dims, 7);
    every_combination::<i16>(dims, 8);
    every_combination::<u16>(dims, 9);
    every_combination::<i32>(dims, 10);
    every_combination::<u32>(dims, 11);
    every_combination::<i64>(dims, 12);
    every_combination::<u64>(dims, 13);
}

// ---- long lines: the blocked CPU paths and the multi-block CUDA paths --------------------

/// Keys for long lines that change at and next to the block boundaries of both backends
/// (multiples of 2048 and 65536 along the line, and of 32), as well as at random places.
fn boundary_keys(r: &mut Rng64, dims: Dim4, dim: usize) -> Vec<i64> {
    let (inner, len, outer) = lines(dims, dim);
    let mut k = gen_keys(r, dims, dim, 0.0005);
    for o in 0..outer {
        for i in 0..inner {
            for j in 0..len {
                let near = |m: usize| j % m == 0 || j % m == 1 || j % m == m - 1;
                if (near(65536) || near(2048)) && r.gen_bool(0.5) {
                    k[i + inner * (j + len * o)] = 100 + (j % 7) as i64;
                }
            }
        }
    }
    k
}

fn long_case<T>(dims: Dim4, dim: usize, seed: u64)
where
    T: Elem,
    T::AggregateOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    let out_t = <T::AggregateOutType as Elem>::TY;
    let n = dims.elements() as usize;
    for (op, inclusive) in [
        (BinaryOp::ADD, true),
        (BinaryOp::MIN, false),
        (BinaryOp::MUL, true),
        (BinaryOp::MAX, true),
    ] {
        let x: Vec<T> = gen_vec(&mut r, n, &|r| gen::<T>(r, op));
        let xs: Vec<V> = x.iter().map(|v| refs::conv(v.to_v(), out_t.dtype)).collect();
        let a = Array::new(&x, dims);
        let what =
            describe("scan", op, inclusive, dim, false) + &format!(" of {} {dims}", T::TY.name);
        let want = reference(&xs, None, dims, dim, op, inclusive, out_t);
        check(&scan(&a, dim as i32, op, inclusive), dims, &want, &what).unwrap();
        let keys = boundary_keys(&mut r, dims, dim);
        let ka = Array::new(&keys.iter().map(|&k| k as u32).collect::<Vec<_>>(), dims);
        let what = describe("scan_by_key", op, !inclusive, dim, false)
            + &format!(" of {} {dims}", T::TY.name);
        let want = reference(&xs, Some(&keys), dims, dim, op, !inclusive, out_t);
        check(&scan_by_key(&ka, &a, dim as i32, op, !inclusive), dims, &want, &what).unwrap();
    }
}

#[test]
fn one_line_of_more_than_a_million_elements() {
    long_case::<f32>(dim4!(1_100_003), 0, 21);
    long_case::<i32>(dim4!(1_048_577), 0, 22);
}

#[test]
fn a_long_line_along_a_later_dimension() {
    // a line along dim 1 with nothing before it is contiguous
    long_case::<f64>(dim4!(1, 1_050_001), 1, 23);
    // few strided lines, long enough to be cut into blocks
    long_case::<u32>(dim4!(3, 400_001), 1, 24);
    long_case::<c32>(dim4!(2, 1, 300_007), 2, 25);
    long_case::<i64>(dim4!(5000, 1, 1, 230), 3, 26);
}

#[test]
fn many_medium_lines() {
    long_case::<f32>(dim4!(5000, 9), 0, 27);
    long_case::<u8>(dim4!(2500, 300), 0, 28);
    long_case::<f64>(dim4!(9000, 40), 1, 29);
}

// ---- semantics ---------------------------------------------------------------------------------

#[test]
fn integer_sums_and_products_wrap_in_the_output_type() {
    let a = Array::new(&[i32::MAX, 1, 1], dim4!(3));
    assert_eq!(accum(&a, 0).to_vec(), vec![i32::MAX, i32::MIN, i32::MIN + 1]);
    let b = Array::new(&[u64::MAX, 2], dim4!(2));
    assert_eq!(accum(&b, 0).to_vec(), vec![u64::MAX, 1]);
    let c = Array::new(&[1i64 << 40, 1 << 40], dim4!(2));
    assert_eq!(scan(&c, 0, BinaryOp::MUL, true).to_vec(), vec![1i64 << 40, 0]);
    // small types scan in a wider output type, so they do not wrap at their own width
    let d = Array::new(&[200u8, 100, 250], dim4!(3));
    assert_eq!(accum(&d, 0).to_vec(), vec![200u32, 300, 550]);
    let e = Array::new(&[i16::MIN, -1], dim4!(2));
    assert_eq!(accum(&e, 0).to_vec(), vec![i16::MIN as i32, i16::MIN as i32 - 1]);
    let f = Array::new(&[65535u16, 65535, 65535], dim4!(3));
    assert_eq!(
        scan(&f, 0, BinaryOp::MUL, true).to_vec(),
        vec![
            65535u32,
            65535u32.wrapping_mul(65535),
            65535u32.wrapping_mul(65535).wrapping_mul(65535)
        ]
    );
}

#[test]
fn min_and_max_skip_nan() {
    let a = Array::new(&[f32::NAN, 3.0, f32::NAN, 1.0, 2.0], dim4!(5));
    let incl = scan(&a, 0, BinaryOp::MIN, true).to_vec();
    assert!(incl[0].is_nan(), "a run of NaN stays NaN: {incl:?}");
    assert_eq!(&incl[1..], &[3.0, 3.0, 1.0, 1.0]);
    let excl = scan(&a, 0, BinaryOp::MAX, false).to_vec();
    assert_eq!(excl[0], f32::NEG_INFINITY);
    assert!(excl[1].is_nan(), "{excl:?}");
    assert_eq!(&excl[2..], &[3.0, 3.0, 3.0]);
    // sums and products propagate NaN
    let s = accum(&a, 0).to_vec();
    assert!(s.iter().all(|v| v.is_nan()), "{s:?}");
}

#[test]
fn exclusive_scans_start_with_the_identity() {
    let f = Array::new(&[2.0f64, 5.0], dim4!(2));
    assert_eq!(scan(&f, 0, BinaryOp::ADD, false).to_vec(), vec![0.0, 2.0]);
    assert_eq!(scan(&f, 0, BinaryOp::MUL, false).to_vec(), vec![1.0, 2.0]);
    assert_eq!(scan(&f, 0, BinaryOp::MIN, false).to_vec(), vec![f64::INFINITY, 2.0]);
    assert_eq!(scan(&f, 0, BinaryOp::MAX, false).to_vec(), vec![f64::NEG_INFINITY, 2.0]);
    let i = Array::new(&[-3i16, 4], dim4!(2));
    assert_eq!(scan(&i, 0, BinaryOp::MIN, false).to_vec(), vec![i32::MAX, -3]);
    assert_eq!(scan(&i, 0, BinaryOp::MAX, false).to_vec(), vec![i32::MIN, -3]);
    let u = Array::new(&[true, false], dim4!(2));
    assert_eq!(scan(&u, 0, BinaryOp::MIN, false).to_vec(), vec![u32::MAX, 1]);
    assert_eq!(scan(&u, 0, BinaryOp::MAX, false).to_vec(), vec![0u32, 1]);
    let c = Array::new(&[c32::new(1.0, 1.0), c32::new(0.0, 3.0)], dim4!(2));
    assert_eq!(
        scan(&c, 0, BinaryOp::MIN, false).to_vec(),
        vec![c32::new(f32::INFINITY, 0.0), c32::new(1.0, 1.0)]
    );
    assert_eq!(
        scan(&c, 0, BinaryOp::MAX, false).to_vec(),
        vec![c32::new(0.0, 0.0), c32::new(1.0, 1.0)]
    );
    assert_eq!(
        scan(&c, 0, BinaryOp::MAX, true).to_vec(),
        vec![c32::new(1.0, 1.0), c32::new(0.0, 3.0)]
    );
}

#[test]
fn f16_accumulates_in_at_least_f32() {
    // 10000 × 0.1 in f16 would stall near 256 when accumulated in f16
    let x = vec![f16::from_f64(0.1); 10_000];
    let s = accum(&Array::new(&x, dim4!(10_000)), 0).to_vec();
    let exact = f16::from_f64(0.1).to_f64() * 10_000.0;
    assert!((s[9_999] as f64 - exact).abs() < 1e-3, "{} vs {exact}", s[9_999]);
    assert_eq!(accum(&Array::new(&x, dim4!(10_000)), 0).get_type(), DType::F32);
}

#[test]
fn bf16_accumulates_in_at_least_f32() {
    // 10000 × 0.1 in bf16 would stall at 32 (where 0.1 is below half an ulp) if accumulated
    // in bf16; the f32 result is the exact sum rounded once
    let tenth = bf16_nearest(0.1);
    let x = vec![tenth; 10_000];
    let a = Array::new(&x, dim4!(10_000));
    let s = accum(&a, 0);
    assert_eq!(s.get_type(), DType::F32);
    let s = s.to_vec();
    for k in [0usize, 9, 999, 9_999] {
        let exact = tenth.to_f64() * (k + 1) as f64;
        assert!((s[k] as f64 - exact).abs() <= exact * 2f64.powi(-23), "{k}: {} vs {exact}", s[k]);
    }
    let total = sum_all(&a).0 as f64;
    let exact = tenth.to_f64() * 10_000.0;
    assert!((total - exact).abs() <= exact * 2f64.powi(-24), "{total} vs {exact}");
}

#[test]
fn keys_restart_runs_with_single_element_runs() {
    let key = Array::new(&[7u64, 8, 8, 9, 7, 7, 7, 1], dim4!(8));
    let val = Array::new(&[1i32, 2, 3, 4, 5, 6, 7, 8], dim4!(8));
    assert_eq!(
        scan_by_key(&key, &val, 0, BinaryOp::ADD, true).to_vec(),
        vec![1, 2, 5, 4, 5, 11, 18, 8]
    );
    assert_eq!(
        scan_by_key(&key, &val, 0, BinaryOp::ADD, false).to_vec(),
        vec![0, 0, 2, 0, 0, 5, 11, 0]
    );
    assert_eq!(
        scan_by_key(&key, &val, 0, BinaryOp::MUL, true).to_vec(),
        vec![1, 2, 6, 4, 5, 30, 210, 8]
    );
    // along dim 1 each row is keyed on its own
    let k2 = Array::new(&[1i64, 1, 1, 2, 1, 2], dim4!(2, 3));
    let v2 = Array::new(&[1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0], dim4!(2, 3));
    assert_eq!(
        scan_by_key(&k2, &v2, 1, BinaryOp::ADD, true).to_vec(),
        vec![1.0, 10.0, 3.0, 20.0, 6.0, 50.0]
    );
}

#[test]
fn empty_and_single_element_arrays() {
    for dims in [dim4!(0), dim4!(3, 0), dim4!(0, 4, 2), dim4!(2, 2, 0, 5)] {
        let a = Array::<f32>::new(&[], dims);
        for dim in 0..4 {
            let s = scan(&a, dim, BinaryOp::MIN, false);
            assert_eq!((s.dims(), s.elements()), (dims, 0));
            let k = Array::<i32>::new(&[], dims);
            assert_eq!(scan_by_key(&k, &a, dim, BinaryOp::ADD, true).dims(), dims);
            assert_eq!(accum(&a, dim).dims(), dims);
        }
    }
    let one = Array::new(&[5u16], dim4!(1));
    for dim in 0..4 {
        assert_eq!(accum(&one, dim).to_vec(), vec![5u32]);
        assert_eq!(scan(&one, dim, BinaryOp::MUL, false).to_vec(), vec![1u32]);
    }
}

#[test]
fn lazy_inputs_match_evaluated_inputs() {
    let mut r = Rng64::seed_from_u64(31);
    let dims = dim4!(300, 7, 5);
    let x: Vec<f32> = gen_vec(&mut r, dims.elements() as usize, &|r| r.gen_range(-2.0..2.0));
    let y: Vec<f32> = gen_vec(&mut r, dims.elements() as usize, &|r| r.gen_range(-2.0..2.0));
    let (a, b) = (Array::new(&x, dims), Array::new(&y, dims));
    let prod = &a * &b; // lazy
    let evaluated = prod.copy();
    evaluated.eval();
    let keys = Array::new(
        &gen_keys(&mut r, dims, 1, 0.3).iter().map(|&k| k as i32).collect::<Vec<_>>(),
        dims,
    );
    for dim in 0..4 {
        for op in [BinaryOp::ADD, BinaryOp::MUL, BinaryOp::MIN, BinaryOp::MAX] {
            assert_eq!(
                scan(&prod, dim, op, true).to_vec(),
                scan(&evaluated, dim, op, true).to_vec()
            );
            let lazy_keys = &keys + 0i32;
            assert_eq!(
                scan_by_key(&lazy_keys, &prod, dim, op, false).to_vec(),
                scan_by_key(&keys, &evaluated, dim, op, false).to_vec()
            );
        }
    }
    // and against the reference
    let xs: Vec<V> = x.iter().zip(&y).map(|(p, q)| V::F((p * q) as f64)).collect();
    let want = reference(&xs, None, dims, 2, BinaryOp::ADD, true, <f32 as Elem>::TY);
    check(&accum(&prod, 2), dims, &want, "accum of a lazy product along 2").unwrap();
}

#[test]
fn scans_of_generated_arrays() {
    // a constant is one value for every element, and a range is computed from coordinates:
    // neither has data to read
    let dims = dim4!(5000, 3);
    let ones = accum(&constant(1i32, dims), 0).to_vec();
    assert!((0..15000).all(|q| ones[q] == (q % 5000) as i32 + 1));
    let rows = range::<u16>(dims, 1);
    let sums = accum(&rows, 1).to_vec();
    assert!((0..15000).all(|q| sums[q] == [0u32, 1, 3][q / 5000]), "{:?}", &sums[..4]);
    let keys = range::<i64>(dims, 0) / 7i64; // runs of seven
    let by_key = scan_by_key(&keys, &constant(2.0f64, dims), 0, BinaryOp::MUL, false).to_vec();
    assert!((0..15000).all(|q| by_key[q] == 2f64.powi(((q % 5000) % 7) as i32)));
}

#[test]
fn scans_of_views_read_offsets_and_strides() {
    // diff1 is built from offset views of its input; a scan reads them through the producer
    let mut r = Rng64::seed_from_u64(32);
    let dims = dim4!(6, 5, 4);
    let x: Vec<i32> = gen_vec(&mut r, dims.elements() as usize, &|r| r.gen_range(-50..50));
    let a = Array::new(&x, dims);
    for along in 0..3 {
        let d = diff1(&a, along);
        let dd = d.dims();
        let dv: Vec<V> = diff_reference(&vs(&x), dims, along as usize, 1, <i32 as Elem>::TY)
            .iter()
            .map(|w| w.0)
            .collect();
        for dim in 0..4 {
            let want = reference(&dv, None, dd, dim, BinaryOp::ADD, false, <i32 as Elem>::TY);
            let what = format!("exclusive sums along {dim} of diff1 along {along}");
            check(&scan(&d, dim as i32, BinaryOp::ADD, false), dd, &want, &what).unwrap();
        }
    }
}

#[test]
fn results_are_reproducible() {
    let mut r = Rng64::seed_from_u64(33);
    let dims = dim4!(700_001);
    let x: Vec<f32> = gen_vec(&mut r, dims.elements() as usize, &|r| r.gen_range(-1.0..1.0));
    let a = Array::new(&x, dims);
    let first = accum(&a, 0).to_vec();
    for _ in 0..3 {
        assert!(accum(&a, 0).to_vec() == first, "a second run gave other bits");
    }
}

// ---- differences ------------------------------------------------------------------------------

/// The expected `order`-th differences (1 or 2) along `dim`: exact for floats and complex
/// numbers, wrapped for integers, "neighbours differ" for bool, with the tolerance of one
/// rounding per subtraction relative to the magnitudes subtracted.
fn diff_reference(xs: &[V], dims: Dim4, dim: usize, order: usize, t: Ty) -> Vec<(V, Tol)> {
    let (inner, len, _) = lines(dims, dim);
    let olen = len.saturating_sub(order);
    let mut want = Vec::new();
    let mut od = dims;
    od[dim] = olen as u64;
    for lin in 0..od.elements() as usize {
        let (i, rest) = (lin % inner, lin / inner);
        let (j, o) = (rest % olen, rest / olen);
        let at = |k: usize| xs[i + inner * (j + k + len * o)];
        let (x0, x1) = (at(0), at(1));
        let x2 = if order == 2 { at(2) } else { x0 };
        let w = match t.class {
            // computed on the bytes, as ArrayFire computes b8 in char: x2 - 2 x1 + x0 is
            // non-zero (it lies in -2..=2, no byte wraps to zero)
            Class::Bool => V::B(if order == 1 {
                x1.nz() != x0.nz()
            } else {
                x2.nz() as i32 - 2 * x1.nz() as i32 + x0.nz() as i32 != 0
            }),
            Class::Int => {
                let v = if order == 1 { x1.i() - x0.i() } else { x2.i() - 2 * x1.i() + x0.i() };
                V::I(conv_int(v, t))
            }
            Class::Float => V::F(if order == 1 {
                x1.f() - x0.f()
            } else {
                (x2.f() - x1.f()) - (x1.f() - x0.f())
            }),
            Class::Complex => V::C(if order == 1 {
                x1.c() - x0.c()
            } else {
                (x2.c() - x1.c()) - (x1.c() - x0.c())
            }),
        };
        let scale = if order == 1 { 0.0 } else { mag(x0) + 2.0 * mag(x1) + mag(x2) };
        want.push((w, Tol::x(2.0).scale(scale)));
    }
    want
}

fn diff_case<T>(dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    T: Elem,
    T::InType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    let order = r.gen_range(1..=2usize);
    let dim = r.gen_range(0..4usize);
    let lazy = r.gen_bool(0.3);
    // first differences of anything; second differences of moderate values, whose
    // intermediate differences cannot overflow
    let x: Vec<T> = if order == 1 {
        gen_vec(&mut r, dims.elements() as usize, &T::any)
    } else {
        gen_vec(&mut r, dims.elements() as usize, &T::small)
    };
    let a = maybe_lazy(Array::new(&x, dims), lazy);
    let got = if order == 1 { diff1(&a, dim as i32) } else { diff2(&a, dim as i32) };
    let want = diff_reference(&vs(&x), dims, dim, order, T::TY);
    let mut od = dims;
    od[dim] = od[dim].saturating_sub(order as u64);
    check(&got, od, &want, &format!("diff{order} of {} along {dim}, lazy {lazy}", T::TY.name))
}

#[test]
fn random_differences_of_every_type() {
    run_cases(48, diff_case::<f32>);
    run_cases(48, diff_case::<f64>);
    run_cases(32, diff_case::<f16>);
    run_cases(32, diff_case::<bf16>);
    run_cases(32, diff_case::<c32>);
    run_cases(32, diff_case::<c64>);
    run_cases(32, diff_case::<bool>);
    run_cases(32, diff_case::<u8>);
    run_cases(32, diff_case::<i16>);
    run_cases(32, diff_case::<u16>);
    run_cases(32, diff_case::<i32>);
    run_cases(32, diff_case::<u32>);
    run_cases(32, diff_case::<i64>);
    run_cases(32, diff_case::<u64>);
}

#[test]
fn differences_along_every_dimension() {
    let dims = dim4!(4, 3, 5, 3);
    let x: Vec<i64> = (0..dims.elements() as i64).map(|v| v * v - 7 * v).collect();
    let a = Array::new(&x, dims);
    for dim in 0..4 {
        for order in [1usize, 2] {
            let got = if order == 1 { diff1(&a, dim as i32) } else { diff2(&a, dim as i32) };
            let mut od = dims;
            od[dim] -= order as u64;
            let want = diff_reference(&vs(&x), dims, dim, order, <i64 as Elem>::TY);
            check(&got, od, &want, &format!("diff{order} along {dim}")).unwrap();
        }
    }
}

#[test]
fn short_dimensions_give_empty_differences() {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
    assert_eq!(diff1(&a, 2).dims(), dim4!(2, 2, 0));
    assert_eq!(diff2(&a, 0).dims(), dim4!(0, 2));
    assert_eq!(diff2(&a, 1).elements(), 0);
    assert_eq!(diff1(&a, 0).to_vec(), vec![1.0, 1.0]);
    assert_eq!(diff1(&Array::new(&[3u8, 1], dim4!(2)), 0).to_vec(), vec![254]);
}

#[test]
fn differences_are_lazy_and_fuse() {
    let a = Array::new(&[1.0f64, 3.0, 6.0, 10.0], dim4!(4));
    let d = diff1(&a, 0);
    // a lazy node reading two views of `a`: reading it later computes from `a`'s data
    let twice = &d * 2.0f64;
    assert_eq!(twice.to_vec(), vec![4.0, 6.0, 8.0]);
    assert_eq!(diff1(&d, 0).to_vec(), diff2(&a, 0).to_vec());
    assert_eq!(sum_all(&d), (9.0, 0.0));
}

// ---- bad input -----------------------------------------------------------------------------

#[test]
#[should_panic(
    expected = "scan: `dim` is 4, but it must be 0, 1, 2 or 3; the input's dims are [2 3 1 1]"
)]
fn scan_dim_out_of_range() {
    scan(&Array::new(&[1.0f32; 6], dim4!(2, 3)), 4, BinaryOp::ADD, true);
}

#[test]
#[should_panic(expected = "accum: `dim` is -1")]
fn accum_dim_negative() {
    accum(&Array::new(&[1i32; 6], dim4!(2, 3)), -1);
}

#[test]
#[should_panic(expected = "diff1: `dim` is 7")]
fn diff1_dim_out_of_range() {
    diff1(&Array::new(&[1i32; 6], dim4!(2, 3)), 7);
}

#[test]
#[should_panic(expected = "diff2: `dim` is -2")]
fn diff2_dim_out_of_range() {
    diff2(&Array::new(&[1i32; 6], dim4!(2, 3)), -2);
}

#[test]
#[should_panic(expected = "scan_by_key: `key` has dims [3 2 1 1] but `input` has dims [2 3 1 1]")]
fn scan_by_key_shapes_differ() {
    let k = Array::new(&[0i32; 6], dim4!(3, 2));
    scan_by_key(&k, &Array::new(&[1.0f32; 6], dim4!(2, 3)), 0, BinaryOp::ADD, true);
}

#[test]
#[should_panic(expected = "BinaryOp::from: 4 is not")]
fn binary_op_from_out_of_range() {
    let _ = BinaryOp::from(4u32);
}

// ---- arrayfire-rust's documented examples, unchanged --------------------------------------

/// What the documented examples import, under arrayfire-rust's crate name.
mod arrayfire {
    pub use emberfire::*;

    /// Uniform values in [0, 1) (drawn from the test's own generator), as arrayfire-rust's
    /// `randu` gives.
    pub fn randu<T: HasAfEnum>(dims: Dim4) -> Array<T> {
        use super::common::{Rng, Rng64, SeedableRng};
        let mut r = Rng64::seed_from_u64(dims.elements());
        let v: Vec<f64> = (0..dims.elements()).map(|_| r.gen_range(0.0..1.0)).collect();
        Array::new(&v, dims).cast::<T>()
    }
}

/// The expected elements (with tolerances) and shape of a function of `a`'s values and shape.
type Expected<'a> = &'a dyn Fn(&[V], Dim4) -> (Vec<(V, Tol)>, Dim4);

/// The example's arrays checked against the reference: `b` is `want` of `a` along `dim`.
fn check_example<T: Elem, O: Elem>(a: &Array<T>, b: &Array<O>, dim: usize, want: Expected) {
    let (w, dims) = want(&vs(&a.to_vec()), a.dims());
    check(b, dims, &w, &format!("example along {dim}")).unwrap();
}

#[test]
fn accum_documented_example() {
    use arrayfire::{accum, print, randu, Dim4};
    let dims = Dim4::new(&[5, 3, 1, 1]);
    let a = randu::<f32>(dims);
    print(&a);
    let b = accum(&a, 0);
    print(&b);
    let c = accum(&a, 1);
    print(&c);

    let f32_t = <f32 as Elem>::TY;
    for (out, dim) in [(&b, 0), (&c, 1)] {
        check_example(&a, out, dim, &|x, d| {
            (reference(x, None, d, dim, BinaryOp::ADD, true, f32_t), d)
        });
    }
}

#[test]
fn diff1_documented_example() {
    use arrayfire::{diff1, print, randu, Dim4};
    let dims = Dim4::new(&[5, 3, 1, 1]);
    let a = randu::<f32>(dims);
    print(&a);
    let b = diff1(&a, 0);
    print(&b);
    let c = diff1(&a, 1);
    print(&c);

    for (out, dim) in [(&b, 0), (&c, 1)] {
        check_example(&a, out, dim, &|x, d| {
            let mut od = d;
            od[dim] -= 1;
            (diff_reference(x, d, dim, 1, <f32 as Elem>::TY), od)
        });
    }
}

#[test]
fn diff2_documented_example() {
    use arrayfire::{diff2, print, randu, Dim4};
    let dims = Dim4::new(&[5, 3, 1, 1]);
    let a = randu::<f32>(dims);
    print(&a);
    let b = diff2(&a, 0);
    print(&b);
    let c = diff2(&a, 1);
    print(&c);

    for (out, dim) in [(&b, 0), (&c, 1)] {
        check_example(&a, out, dim, &|x, d| {
            let mut od = d;
            od[dim] -= 2;
            (diff_reference(x, d, dim, 2, <f32 as Elem>::TY), od)
        });
    }
}
