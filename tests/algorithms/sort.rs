//! Sorting, sets, `locate` and the by-key reductions: every sortable element type, ascending
//! and descending, along each of the four dimensions, on random shapes (empty and size-1
//! dimensions included), against references computed here on the host with the standard
//! library's stable sort and the documented order (NaN last in both directions, -0.0 just
//! below 0.0); stability; sets with duplicates and empty inputs; by-key runs of length one and
//! long runs; and the panics for bad input.

use crate::common;

use std::cmp::Ordering;

use common::*;
use emberfire::*;

/// The documented order on exact values: integers naturally, floats by IEEE total order with
/// every NaN equal and last.
fn order(a: V, b: V) -> Ordering {
    match (a, b) {
        (V::F(x), V::F(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => x.total_cmp(&y),
        },
        (V::B(x), V::B(y)) => x.cmp(&y),
        (V::I(x), V::I(y)) => x.cmp(&y),
        _ => unreachable!("mixed kinds"),
    }
}

fn is_nan(v: V) -> bool {
    matches!(v, V::F(f) if f.is_nan())
}

/// Exact equality that tells -0.0 from 0.0 and takes NaN as equal to NaN (complex values
/// part by part).
fn same(a: V, b: V) -> bool {
    let part = |x: f64, y: f64| x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan();
    match (a, b) {
        (V::F(x), V::F(y)) => part(x, y),
        (V::C(x), V::C(y)) => part(x.re, y.re) && part(x.im, y.im),
        _ => a == b,
    }
}

/// Position of element `j` of segment `s` along `dim` (column-major).
fn seg_pos(dims: Dim4, dim: usize, s: usize, j: usize) -> usize {
    let d = dims.get().map(|x| x as usize);
    let stride: usize = d[..dim].iter().product();
    (s / stride) * d[dim] * stride + s % stride + j * stride
}

/// The reference: for every segment along `dim`, the stable order of positions.
fn ref_perm(x: &[V], dims: Dim4, dim: usize, ascending: bool) -> Vec<u32> {
    let n = x.len();
    let len = dims[dim] as usize;
    let mut perm = vec![0u32; n];
    if n == 0 {
        return perm;
    }
    for s in 0..n / len {
        let mut js: Vec<usize> = (0..len).collect();
        js.sort_by(|&a, &b| {
            let (va, vb) = (x[seg_pos(dims, dim, s, a)], x[seg_pos(dims, dim, s, b)]);
            match (is_nan(va), is_nan(vb)) {
                (false, false) if !ascending => order(vb, va),
                _ => order(va, vb),
            }
        });
        for (j, &src) in js.iter().enumerate() {
            perm[seg_pos(dims, dim, s, j)] = src as u32;
        }
    }
    perm
}

fn check_sort_case<T: Elem + RealNumber>(dims: Dim4, seed: u64) -> std::result::Result<(), String> {
    let mut r = Rng64::seed_from_u64(seed);
    let n = dims.elements() as usize;
    // half the cases draw from a few small values, so that many keys are equal
    let x: Vec<T> = if seed.is_multiple_of(2) {
        gen_vec(&mut r, n, &T::any)
    } else {
        gen_vec(&mut r, n, &T::small)
    };
    let xv = vs(&x);
    let a = Array::new(&x, dims);
    let positions: Vec<u32> = (0..n as u32).collect();
    let pos = Array::new(&positions, dims);
    for dim in 0..4usize {
        for ascending in [true, false] {
            let what = format!("{} {dims} dim {dim} ascending {ascending}", T::TY.name);
            let perm = ref_perm(&xv, dims, dim, ascending);
            let want: Vec<V> = (0..n)
                .map(|p| {
                    let s_j = (p, perm[p] as usize);
                    // perm holds the source position along `dim` of the same segment
                    let d = dims.get().map(|x| x as usize);
                    let stride: usize = d[..dim].iter().product();
                    let j_out = (s_j.0 / stride) % d[dim].max(1);
                    let base = s_j.0 - j_out * stride;
                    xv[base + s_j.1 * stride]
                })
                .collect();
            let sorted = sort(&a, dim as u32, ascending);
            if sorted.dims() != dims {
                return Err(format!("{what}: sort dims {}", sorted.dims()));
            }
            let got = vs(&sorted.to_vec());
            if let Some(i) = (0..n).find(|&i| !same(got[i], want[i])) {
                return Err(format!(
                    "{what}: sort element {i}: got {:?}, want {:?}",
                    got[i], want[i]
                ));
            }
            let (values, index) = sort_index(&a, dim as u32, ascending);
            let gv = vs(&values.to_vec());
            if let Some(i) = (0..n).find(|&i| !same(gv[i], want[i])) {
                return Err(format!(
                    "{what}: sort_index values {i}: got {:?}, want {:?}",
                    gv[i], want[i]
                ));
            }
            if index.to_vec() != perm {
                return Err(format!("{what}: sort_index indices differ from the stable order"));
            }
            // the values moved by sort_by_key are the linear positions: they show stability
            let (keys_out, moved) = sort_by_key(&a, &pos, dim as u32, ascending);
            let gk = vs(&keys_out.to_vec());
            if let Some(i) = (0..n).find(|&i| !same(gk[i], want[i])) {
                return Err(format!(
                    "{what}: sort_by_key keys {i}: got {:?}, want {:?}",
                    gk[i], want[i]
                ));
            }
            let mv = moved.to_vec();
            for p in 0..n {
                let d = dims.get().map(|x| x as usize);
                let stride: usize = d[..dim].iter().product();
                let j_out = (p / stride) % d[dim];
                let src = p - j_out * stride + perm[p] as usize * stride;
                if mv[p] as usize != src {
                    return Err(format!(
                        "{what}: sort_by_key value {p}: got {}, want {src}",
                        mv[p]
                    ));
                }
            }
        }
    }
    Ok(())
}

macro_rules! sort_tests {
    ($($name:ident: $t:ty),*) => {$(
        #[test]
        fn $name() {
            run_cases(24, check_sort_case::<$t>);
        }
    )*};
}

sort_tests!(
    sort_f32: f32,
    sort_f64: f64,
    sort_i32: i32,
    sort_u32: u32,
    sort_i16: i16,
    sort_u16: u16,
    sort_u8: u8,
    sort_bool: bool,
    sort_i64: i64,
    sort_u64: u64
);

#[test]
fn sort_long_vectors_take_the_parallel_radix_path() {
    let mut r = Rng64::seed_from_u64(7);
    for n in [2047usize, 2048, 70_001, 300_000] {
        let x: Vec<f32> = gen_vec(&mut r, n, &|r: &mut Rng64| f32::any(r));
        let dims = dim4!(n as u64);
        let xv = vs(&x);
        for ascending in [true, false] {
            let perm = ref_perm(&xv, dims, 0, ascending);
            let (values, index) = sort_index(&Array::new(&x, dims), 0, ascending);
            assert_eq!(index.to_vec(), perm, "sort_index n {n} ascending {ascending}");
            let got = values.to_vec();
            for i in 0..n {
                assert!(same(got[i].to_v(), xv[perm[i] as usize]), "n {n} element {i}");
            }
            let plain = sort(&Array::new(&x, dims), 0, ascending).to_vec();
            for i in 0..n {
                assert!(same(plain[i].to_v(), xv[perm[i] as usize]), "sort n {n} element {i}");
            }
        }
    }
    // 64-bit keys with large magnitudes need all eight byte passes
    let x: Vec<i64> = gen_vec(&mut r, 50_000, &|r: &mut Rng64| i64::any(r));
    let mut want = x.clone();
    want.sort();
    assert_eq!(sort(&Array::new(&x, dim4!(50_000)), 0, true).to_vec(), want);
}

#[test]
fn sort_nan_and_signed_zero_order() {
    let x = [0.0f64, f64::NAN, -0.0, -f64::NAN, f64::NEG_INFINITY, 1.0, -1.0, f64::INFINITY];
    let a = Array::new(&x, dim4!(8));
    let asc = sort(&a, 0, true).to_vec();
    let want_asc = [f64::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f64::INFINITY];
    for i in 0..6 {
        assert_eq!(asc[i].to_bits(), want_asc[i].to_bits(), "ascending {i}");
    }
    assert!(asc[6].is_nan() && asc[7].is_nan());
    let (desc, idx) = sort_index(&a, 0, false);
    let desc = desc.to_vec();
    let want_desc = [f64::INFINITY, 1.0, 0.0, -0.0, -1.0, f64::NEG_INFINITY];
    for i in 0..6 {
        assert_eq!(desc[i].to_bits(), want_desc[i].to_bits(), "descending {i}");
    }
    assert!(desc[6].is_nan() && desc[7].is_nan());
    // NaNs are equal to each other: they keep their input order
    assert_eq!(&idx.to_vec()[6..], &[1, 3]);
}

#[test]
fn sort_lazy_input_and_other_value_types() {
    let a = Array::new(&[3.0f32, 1.0, 2.0, 0.5], dim4!(2, 2));
    let lazy = &a * 2.0f32 - 1.0f32;
    assert_eq!(sort(&lazy, 0, true).to_vec(), vec![1.0, 5.0, 0.0, 3.0]);
    // complex values ride along with real keys
    let vals = Array::new(
        &[c32::new(1.0, 1.0), c32::new(2.0, 0.0), c32::new(3.0, -1.0), c32::new(4.0, 0.0)],
        dim4!(2, 2),
    );
    let (k, v) = sort_by_key(&a, &vals, 1, false);
    assert_eq!(k.to_vec(), vec![3.0, 1.0, 2.0, 0.5]);
    assert_eq!(v.to_vec(), vals.to_vec());
    let (k, v) = sort_by_key(&a, &vals, 0, true);
    assert_eq!(k.to_vec(), vec![1.0, 3.0, 0.5, 2.0]);
    assert_eq!(
        v.to_vec(),
        vec![c32::new(2.0, 0.0), c32::new(1.0, 1.0), c32::new(4.0, 0.0), c32::new(3.0, -1.0)]
    );
}

// ----- scale: many tiles, many segments, views -----

/// Checks `sort` and `sort_index` of `a` along `dim` against the stable reference order of
/// its host values.
fn check_against_reference<T: Elem + RealNumber>(a: &Array<T>, dim: usize, what: &str) {
    let x = vs(&a.to_vec());
    let dims = a.dims();
    for ascending in [true, false] {
        let perm = ref_perm(&x, dims, dim, ascending);
        let d = dims.get().map(|v| v as usize);
        let stride: usize = d[..dim].iter().product();
        let source = |p: usize| {
            let j = (p / stride) % d[dim];
            p - j * stride + perm[p] as usize * stride
        };
        let sorted = vs(&sort(a, dim as u32, ascending).to_vec());
        let (values, index) = sort_index(a, dim as u32, ascending);
        let values = vs(&values.to_vec());
        assert_eq!(index.to_vec(), perm, "{what}: sort_index along {dim}, ascending {ascending}");
        for p in 0..x.len() {
            let want = x[source(p)];
            assert!(same(sorted[p], want), "{what}: sort element {p}: {:?} vs {want:?}", sorted[p]);
            assert!(same(values[p], want), "{what}: sort_index value {p}");
        }
    }
}

/// Three million keys: several hundred tiles of a device pass, many equal keys (stability
/// shows in the indices), NaN, both zeros and infinities; sorted NaNs are the canonical NaN.
#[test]
fn sort_millions_with_duplicates_nan_and_signed_zero() {
    let mut r = Rng64::seed_from_u64(11);
    let n = 3_000_000;
    let x: Vec<f32> = gen_vec(&mut r, n, &|r: &mut Rng64| match r.gen_range(0..100) {
        0 => f32::NAN,
        1 => -f32::NAN,
        2 => -0.0,
        3 => 0.0,
        4 => f32::INFINITY,
        5 => f32::NEG_INFINITY,
        _ => r.gen_range(0..1000) as f32 / 8.0 - 60.0,
    });
    let a = Array::new(&x, dim4!(n as u64));
    check_against_reference(&a, 0, "3M f32");
    let sorted = sort(&a, 0, false).to_vec();
    for v in sorted.iter().filter(|v| v.is_nan()) {
        assert_eq!(v.to_bits(), f32::NAN.to_bits(), "sorted NaN is not the canonical NaN");
    }
    // every byte of 64-bit keys, and the one pass of 8-bit keys
    let wide: Vec<i64> = gen_vec(&mut r, 300_000, &|r: &mut Rng64| i64::any(r));
    check_against_reference(&Array::new(&wide, dim4!(300_000)), 0, "300k i64");
    let bytes: Vec<u8> = gen_vec(&mut r, 300_000, &|r: &mut Rng64| u8::any(r));
    check_against_reference(&Array::new(&bytes, dim4!(300_000)), 0, "300k u8");
}

/// Batched sorts: a 1000 x 1000 matrix along each dimension (1000 sorts of 1000), more
/// segments than one byte numbers (two segment passes on a device), and a 4-D shape.
#[test]
fn sort_batched_along_every_dimension() {
    check_sort_case::<f32>(dim4!(1000, 1000), 2).unwrap();
    check_sort_case::<f64>(dim4!(300, 700), 3).unwrap();
    check_sort_case::<i32>(dim4!(3, 300, 2), 4).unwrap();
    check_sort_case::<u16>(dim4!(9, 8, 7, 6), 5).unwrap();
    check_sort_case::<i64>(dim4!(2, 3, 500, 2), 6).unwrap();
}

/// Views (offsets, steps, permuted and reversed strides) and lazy expressions are sorted as
/// the values they show.
#[test]
fn sort_views_and_lazy_inputs() {
    let mut r = Rng64::seed_from_u64(12);
    let x: Vec<f64> = gen_vec(&mut r, 50 * 40, &|r: &mut Rng64| f64::small(r));
    let base = Array::new(&x, dim4!(50, 40));
    let stepped = index(&base, &[Seq::new(3.0, 45.0, 2.0), Seq::new(1.0, 38.0, 3.0)]);
    let transposed = reorder_v2(&base, 1, 0, None);
    let reversed = flip(&base, 1);
    let lazy = &base * 2.0 - 1.0;
    for (a, what) in [
        (stepped, "stepped view"),
        (transposed, "transposed view"),
        (reversed, "flipped view"),
        (lazy, "lazy"),
    ] {
        for dim in 0..2 {
            check_against_reference(&a, dim, what);
        }
    }
    // sort_by_key with views for both keys and values
    let keys = index(&base, &[Seq::new(0.0, 48.0, 2.0), Seq::default()]);
    let vals = flip(&index(&base, &[Seq::new(1.0, 49.0, 2.0), Seq::default()]), 0);
    let (kv, vv) = (vs(&keys.to_vec()), vals.to_vec());
    let perm = ref_perm(&kv, keys.dims(), 1, true);
    let (_, moved) = sort_by_key(&keys, &vals, 1, true);
    let rows = keys.dims()[0] as usize;
    for (p, m) in moved.to_vec().into_iter().enumerate() {
        let want = vv[p % rows + perm[p] as usize * rows];
        assert_eq!(m.to_bits(), want.to_bits(), "sort_by_key of views, element {p}");
    }
}

/// `sort_by_key` moves values of every element type with the keys (the values are drawn so
/// that each is distinct where it can be, and compared exactly).
#[test]
fn sort_by_key_moves_every_value_type() {
    fn check<V: Elem>(keys: &Array<f32>, dim: usize, seed: u64) {
        let mut r = Rng64::seed_from_u64(seed);
        let dims = keys.dims();
        let vals: Vec<V> = gen_vec(&mut r, dims.elements() as usize, &|r: &mut Rng64| V::any(r));
        let va = Array::new(&vals, dims);
        let kv = vs(&keys.to_vec());
        for ascending in [true, false] {
            let perm = ref_perm(&kv, dims, dim, ascending);
            let d = dims.get().map(|v| v as usize);
            let stride: usize = d[..dim].iter().product();
            let (_, moved) = sort_by_key(keys, &va, dim as u32, ascending);
            for (p, m) in moved.to_vec().into_iter().enumerate() {
                let j = (p / stride) % d[dim];
                let src = p - j * stride + perm[p] as usize * stride;
                assert!(
                    same(m.to_v(), vals[src].to_v()),
                    "sort_by_key {} values along {dim}: element {p}",
                    V::TY.name
                );
            }
        }
    }
    let mut r = Rng64::seed_from_u64(13);
    let dims = dim4!(60, 70, 3);
    let k: Vec<f32> = gen_vec(&mut r, dims.elements() as usize, &|r: &mut Rng64| f32::small(r));
    let keys = Array::new(&k, dims);
    for dim in 0..3 {
        check::<u8>(&keys, dim, 1);
        check::<bool>(&keys, dim, 2);
        check::<i16>(&keys, dim, 3);
        check::<u32>(&keys, dim, 4);
        check::<f64>(&keys, dim, 5);
        check::<c64>(&keys, dim, 6);
        check::<f16>(&keys, dim, 7);
    }
}

/// Sets of inputs that span many compaction blocks, with many duplicates.
#[test]
fn sets_of_large_inputs() {
    let mut r = Rng64::seed_from_u64(14);
    let a: Vec<i32> = gen_vec(&mut r, 300_000, &|r: &mut Rng64| r.gen_range(-50_000..50_000));
    let b: Vec<i32> = gen_vec(&mut r, 200_000, &|r: &mut Rng64| r.gen_range(0..200_000));
    let (aa, ba) = (Array::new(&a, dim4!(600, 500)), Array::new(&b, dim4!(200_000)));
    let mut ua = a.clone();
    ua.sort();
    ua.dedup();
    assert_eq!(set_unique(&aa, false).to_vec(), ua);
    let mut ub = b.clone();
    ub.sort();
    ub.dedup();
    let mut all: Vec<i32> = ua.iter().chain(&ub).copied().collect();
    all.sort();
    all.dedup();
    assert_eq!(set_union(&aa, &ba, false).to_vec(), all);
    let both: Vec<i32> = ua.iter().copied().filter(|v| ub.binary_search(v).is_ok()).collect();
    assert_eq!(set_intersect(&aa, &ba, false).to_vec(), both);
}

/// On CUDA a sort takes at most 2^31 - 1 elements: a larger input is refused with its
/// function and shape before anything is evaluated (the input here is a lazy constant).
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_sort_rejects_2_pow_31_elements() {
    set_backend(Backend::CUDA);
    let big = constant(1u8, dim4!(1 << 16, 1 << 15));
    let err = std::panic::catch_unwind(|| sort(&big, 0, true)).expect_err("no panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("sort: dims [65536 32768 1 1] hold 2147483648 elements"),
        "unexpected message: {msg}"
    );
}

// ----- sets -----

/// Reference set: -0.0 as 0.0, sorted, one of each value (one NaN).
fn ref_set(x: &[V]) -> Vec<V> {
    let mut v: Vec<V> = x
        .iter()
        .map(|&e| match e {
            V::F(0.0) => V::F(0.0), // matches -0.0 too
            e => e,
        })
        .collect();
    v.sort_by(|a, b| order(*a, *b));
    v.dedup_by(|a, b| order(*a, *b) == Ordering::Equal);
    v
}

fn check_sets<T: Elem + RealNumber>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (na, nb) in [(0usize, 0usize), (0, 5), (7, 0), (1, 1), (40, 33), (5000, 3000)] {
        let gen = |r: &mut Rng64| if r.gen_bool(0.5) { T::small(r) } else { T::any(r) };
        let a: Vec<T> = gen_vec(&mut r, na, &gen);
        let b: Vec<T> = gen_vec(&mut r, nb, &gen);
        let (av, bv) = (vs(&a), vs(&b));
        let (aa, ba) = (Array::new(&a, dim4!(na as u64)), Array::new(&b, dim4!(nb as u64)));
        let what = format!("{} sizes {na}, {nb}", T::TY.name);

        let want = ref_set(&av);
        for sorted_hint in [false, true] {
            let got = set_unique(&aa, sorted_hint);
            assert_eq!(got.dims(), dim4!(want.len() as u64), "set_unique {what}");
            let g = vs(&got.to_vec());
            assert!(
                g.iter().zip(&want).all(|(x, y)| same(*x, *y)),
                "set_unique {what}: {g:?} vs {want:?}"
            );
        }

        let mut both = av.clone();
        both.extend(&bv);
        let want = ref_set(&both);
        let g = vs(&set_union(&aa, &ba, false).to_vec());
        assert!(
            g.len() == want.len() && g.iter().zip(&want).all(|(x, y)| same(*x, *y)),
            "set_union {what}"
        );

        let sb = ref_set(&bv);
        let want: Vec<V> = ref_set(&av)
            .into_iter()
            .filter(|x| sb.iter().any(|y| order(*x, *y) == Ordering::Equal))
            .collect();
        let got = set_intersect(&aa, &ba, false);
        assert_eq!(got.dims(), dim4!(want.len() as u64), "set_intersect {what}");
        let g = vs(&got.to_vec());
        assert!(
            g.iter().zip(&want).all(|(x, y)| same(*x, *y)),
            "set_intersect {what}: {g:?} vs {want:?}"
        );
    }
}

#[test]
fn sets_every_type() {
    check_sets::<f32>(1);
    check_sets::<f64>(2);
    check_sets::<i32>(3);
    check_sets::<u32>(4);
    check_sets::<i16>(5);
    check_sets::<u16>(6);
    check_sets::<u8>(7);
    check_sets::<bool>(8);
    check_sets::<i64>(9);
    check_sets::<u64>(10);
}

#[test]
fn sets_of_matrices_are_flat_and_signed_zero_is_zero() {
    let a = Array::new(&[2.0f32, -0.0, 2.0, f32::NAN, 0.0, f32::NAN], dim4!(2, 3));
    let u = set_unique(&a, false).to_vec();
    assert_eq!(u.len(), 3);
    assert_eq!((u[0].to_bits(), u[1]), (0.0f32.to_bits(), 2.0));
    assert!(u[2].is_nan());
    let b = Array::new(&[0.0f32, 5.0], dim4!(1, 2));
    let i = set_intersect(&a, &b, true).to_vec();
    assert_eq!(i, vec![0.0]);
}

// ----- locate -----

fn check_locate<T: Elem>(dims: Dim4, seed: u64) -> std::result::Result<(), String> {
    let mut r = Rng64::seed_from_u64(seed);
    let n = dims.elements() as usize;
    let x: Vec<T> = gen_vec(&mut r, n, &|r: &mut Rng64| {
        if r.gen_bool(0.4) {
            T::from_v(V::I(0))
        } else {
            T::any(r)
        }
    });
    let want: Vec<u32> = (0..n as u32)
        .filter(|&i| match x[i as usize].to_v() {
            V::B(b) => b,
            V::I(v) => v != 0,
            V::F(f) => f != 0.0,
            V::C(c) => c.re != 0.0 || c.im != 0.0,
        })
        .collect();
    let got = locate(&Array::new(&x, dims));
    if got.dims() != dim4!(want.len() as u64) || got.to_vec() != want {
        return Err(format!("locate {} {dims}: got {:?}, want {want:?}", T::TY.name, got.to_vec()));
    }
    Ok(())
}

#[test]
fn locate_every_type() {
    run_cases(16, |d, s| {
        check_locate::<f32>(d, s)?;
        check_locate::<f64>(d, s)?;
        check_locate::<c32>(d, s)?;
        check_locate::<c64>(d, s)?;
        check_locate::<f16>(d, s)?;
        check_locate::<bool>(d, s)?;
        check_locate::<i32>(d, s)?;
        check_locate::<u8>(d, s)?;
        check_locate::<i64>(d, s)?;
        check_locate::<u16>(d, s)
    });
}

// ----- by-key reductions -----

#[derive(Clone, Copy, Debug)]
enum Op {
    Sum,
    Product,
    Min,
    Max,
    All,
    Any,
    Count,
}

fn nonzero(v: V) -> bool {
    match v {
        V::B(b) => b,
        V::I(i) => i != 0,
        V::F(f) => f != 0.0,
        V::C(c) => c.re != 0.0 || c.im != 0.0,
    }
}

/// Reference reduction of one run (exact values, f64/c64/i128 arithmetic; integer results are
/// wrapped by `from_v` into the output type, which equals wrapping every step).
fn ref_run(op: Op, run: &[V]) -> V {
    let complex = run.iter().any(|v| matches!(v, V::C(_)));
    let float = run.iter().any(|v| matches!(v, V::F(_)));
    let ints = |f: fn(i128, i128) -> i128| {
        let mut acc = match run[0] {
            V::B(b) => b as i128,
            V::I(i) => i,
            _ => 0,
        };
        for v in &run[1..] {
            let x = match *v {
                V::B(b) => b as i128,
                V::I(i) => i,
                _ => 0,
            };
            acc = f(acc, x);
        }
        V::I(acc)
    };
    match op {
        Op::All => V::I(run.iter().all(|&v| nonzero(v)) as i128),
        Op::Any => V::I(run.iter().any(|&v| nonzero(v)) as i128),
        Op::Count => V::I(run.iter().filter(|&&v| nonzero(v)).count() as i128),
        Op::Sum if complex => V::C(run.iter().map(|v| v.c()).sum()),
        Op::Product if complex => V::C(run.iter().map(|v| v.c()).product()),
        Op::Sum if float => V::F(run.iter().map(|v| v.f()).sum()),
        Op::Product if float => V::F(run.iter().map(|v| v.f()).product()),
        Op::Sum => ints(|a, b| a.wrapping_add(b) % (1i128 << 100)),
        Op::Product => ints(|a, b| {
            // keep the low 64 bits exactly (wrapping in the output type only needs those)
            let m = (a.wrapping_mul(b)) & ((1i128 << 64) - 1);
            if m >= 1i128 << 63 {
                m - (1i128 << 64)
            } else {
                m
            }
        }),
        Op::Min | Op::Max => {
            let want_less = matches!(op, Op::Min);
            let mut best = run[0];
            for &v in &run[1..] {
                let better = match (best, v) {
                    (V::F(a), V::F(b)) => {
                        (a.is_nan() && !b.is_nan()) || (if want_less { b < a } else { b > a })
                    }
                    (V::C(a), V::C(b)) => {
                        let (x, y) = (a.norm(), b.norm());
                        (x.is_nan() && !y.is_nan()) || (if want_less { y < x } else { y > x })
                    }
                    (a, b) => {
                        order(a, b) == if want_less { Ordering::Greater } else { Ordering::Less }
                    }
                };
                if better {
                    best = v;
                }
            }
            best
        }
    }
}

fn check_by_key<Val: Elem>(op: Op, dims: Dim4, seed: u64) -> std::result::Result<(), String>
where
    Val::AggregateOutType: Elem,
    Val::ProductOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for dim in 0..4usize {
        let len = dims[dim] as usize;
        // runs: mostly length 1, sometimes long
        let mut keys: Vec<i32> = Vec::with_capacity(len);
        let mut k = 0i32;
        while keys.len() < len {
            let run = if r.gen_bool(0.6) { 1 } else { r.gen_range(2..=len.max(2)) };
            for _ in 0..run.min(len - keys.len()) {
                keys.push(k);
            }
            k += r.gen_range(1..3) * if r.gen_bool(0.3) { -1 } else { 1 };
        }
        let n = dims.elements() as usize;
        let x: Vec<Val> = gen_vec(&mut r, n, &|r: &mut Rng64| {
            if r.gen_bool(0.2) {
                Val::from_v(V::I(0))
            } else {
                Val::small(r)
            }
        });
        let xv = vs(&x);
        let starts: Vec<usize> = (0..len).filter(|&i| i == 0 || keys[i] != keys[i - 1]).collect();
        let runs = starts.len();
        let mut odims = dims;
        odims[dim] = runs as u64;
        let d = dims.get().map(|x| x as usize);
        let stride: usize = d[..dim].iter().product();
        let segs = n.checked_div(len).unwrap_or(0);
        let mut want = vec![V::I(0); segs * runs];
        for s in 0..segs {
            for (ri, &st) in starts.iter().enumerate() {
                let end = starts.get(ri + 1).copied().unwrap_or(len);
                let run: Vec<V> = (st..end).map(|j| xv[seg_pos(dims, dim, s, j)]).collect();
                want[(s / stride) * runs * stride + s % stride + ri * stride] = ref_run(op, &run);
            }
        }
        let ka = Array::new(&keys, dim4!(len as u64));
        let va = Array::new(&x, dims);
        let want_keys: Vec<i32> = starts.iter().map(|&i| keys[i]).collect();
        let what = format!("{op:?}_by_key {} {dims} dim {dim}", Val::TY.name);
        let tol = Tol::x(64.0);
        macro_rules! check {
            ($f:ident) => {{
                let (ok, ov) = $f(&ka, &va, dim as i32);
                if ok.to_vec() != want_keys {
                    return Err(format!("{what}: keys {:?}, want {want_keys:?}", ok.to_vec()));
                }
                if ov.dims() != odims {
                    return Err(format!("{what}: dims {}, want {odims}", ov.dims()));
                }
                check_all(&ov.to_vec(), &want, tol, &|i| format!("{what}, element {i}"))?;
            }};
        }
        match op {
            Op::Sum => check!(sum_by_key),
            Op::Product => check!(product_by_key),
            Op::Min => check!(min_by_key),
            Op::Max => check!(max_by_key),
            Op::All => check!(all_true_by_key),
            Op::Any => check!(any_true_by_key),
            Op::Count => check!(count_by_key),
        }
    }
    Ok(())
}

#[test]
fn by_key_reductions_every_value_type() {
    let ops = [Op::Sum, Op::Product, Op::Min, Op::Max, Op::All, Op::Any, Op::Count];
    run_cases(12, |d, s| {
        for op in ops {
            check_by_key::<f32>(op, d, s)?;
            check_by_key::<f64>(op, d, s)?;
            check_by_key::<c32>(op, d, s)?;
            check_by_key::<c64>(op, d, s)?;
            check_by_key::<f16>(op, d, s)?;
            check_by_key::<i32>(op, d, s)?;
            check_by_key::<u32>(op, d, s)?;
            check_by_key::<i16>(op, d, s)?;
            check_by_key::<u16>(op, d, s)?;
            check_by_key::<u8>(op, d, s)?;
            check_by_key::<bool>(op, d, s)?;
            check_by_key::<i64>(op, d, s)?;
            check_by_key::<u64>(op, d, s)?;
        }
        Ok(())
    });
}

#[test]
fn by_key_u32_keys_and_nan() {
    let keys = Array::new(&[5u32, 5, 5, 1], dim4!(4));
    let vals = Array::new(&[f32::NAN, 2.0, 1.0, f32::NAN], dim4!(4));
    let (k, mn) = min_by_key(&keys, &vals, 0);
    assert_eq!(k.to_vec(), vec![5, 1]);
    let mn = mn.to_vec();
    assert_eq!(mn[0], 1.0);
    assert!(mn[1].is_nan());
    let (_, s) = sum_by_key(&keys, &vals, -1);
    assert!(s.to_vec()[0].is_nan());
}

// ----- bad input -----

#[test]
#[should_panic(
    expected = "sort: `dim` is 4, but it must be 0, 1, 2 or 3; the input's dims are [2 3 1 1]"
)]
fn sort_bad_dim_panics() {
    sort(&Array::new(&[1.0f32; 6], dim4!(2, 3)), 4, true);
}

#[test]
#[should_panic(expected = "sort_by_key: `keys` dims [2 3 1 1] and `vals` dims [3 2 1 1] differ")]
fn sort_by_key_shape_mismatch_panics() {
    sort_by_key(
        &Array::new(&[1i32; 6], dim4!(2, 3)),
        &Array::new(&[1.0f32; 6], dim4!(3, 2)),
        0,
        true,
    );
}

#[test]
#[should_panic(
    expected = "sum_by_key: `keys` must be a vector with one key per index along dim 0 of `vals`, but `keys` has dims [3 1 1 1] and `vals` has dims [4 2 1 1]"
)]
fn by_key_length_mismatch_panics() {
    sum_by_key(&Array::new(&[1i32, 1, 2], dim4!(3)), &Array::new(&[1.0f32; 8], dim4!(4, 2)), 0);
}

#[test]
#[should_panic(expected = "count_by_key: `dim` is 7")]
fn by_key_bad_dim_panics() {
    count_by_key(&Array::new(&[1i32, 1, 2], dim4!(3)), &Array::new(&[1.0f32; 3], dim4!(3)), 7);
}
