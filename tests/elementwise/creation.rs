//! Creation functions (constant, range, iota, identity, diag_create, diag_extract, lower,
//! upper) and element selection (select, selectl, selectr, replace, replace_scalar), for all
//! thirteen element types on random shapes, against host references.

use crate::common;

use common::*;
use emberfire as ef;
use emberfire::{bf16, c32, c64, dim4, f16, Array, Dim4};

const CASES: u32 = 24;

macro_rules! all_types {
    ($case:ident, $d:expr, $s:expr) => {{
        $case::<bool>($d, $s)?;
        $case::<u8>($d, $s)?;
        $case::<i16>($d, $s)?;
        $case::<u16>($d, $s)?;
        $case::<i32>($d, $s)?;
        $case::<u32>($d, $s)?;
        $case::<i64>($d, $s)?;
        $case::<u64>($d, $s)?;
        $case::<f16>($d, $s)?;
        $case::<bf16>($d, $s)?;
        $case::<f32>($d, $s)?;
        $case::<f64>($d, $s)?;
        $case::<c32>($d, $s)?;
        $case::<c64>($d, $s)?;
    }};
}

/// Checks an array's type, shape and every element against a reference.
fn expect<T: Elem>(got: &Array<T>, dims: Dim4, want: &[V], what: &str) -> Result<(), String> {
    if got.get_type() != T::TY.dtype || got.dims() != dims {
        return Err(format!("{what}: type {:?} dims {}, want {dims}", got.get_type(), got.dims()));
    }
    check_all(&got.to_vec(), want, Tol::EXACT, &|i| format!("{what}, element {i}"))
}

#[test]
fn constant() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let v = T::any(&mut r);
        let n = d.elements() as usize;
        let what = format!("constant({v:?}, {d}) of {}", T::TY.name);
        expect(&ef::constant(v, d), d, &vec![v.to_v(); n], &what)?;
        expect(&<T as ef::ConstGenerator>::generate(&v, d), d, &vec![v.to_v(); n], &what)?;
        // a constant inside an expression broadcasts without being stored
        let x = gen_vec(&mut r, n, &|r| T::any(r));
        let sum = ef::add(&Array::new(&x, d), &ef::constant(v, d), false);
        let want: Vec<V> = x.iter().map(|a| common::refs::add(a.to_v(), v.to_v(), T::TY)).collect();
        expect(&sum, d, &want, &format!("x + {what}"))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn constant_macro() {
    let a = ef::constant!(2.5f64; 3, 2);
    assert_eq!((a.dims(), a.to_vec()), (dim4!(3, 2), vec![2.5; 6]));
    let b = ef::constant!(7u8; 2, 1, 3, 2);
    assert_eq!((b.dims(), b.to_vec()), (dim4!(2, 1, 3, 2), vec![7; 12]));
    let c = ef::constant!(c32::new(1.0, -1.0); 4);
    assert_eq!(c.to_vec(), vec![c32::new(1.0, -1.0); 4]);
    let e = ef::constant!(true; 0, 5);
    assert!(e.is_empty() && e.dims() == dim4!(0, 5));
}

#[test]
fn range() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let k = (s % 4) as usize;
        let got = ef::range::<T>(d, k as i32);
        let want: Vec<V> = (0..d.elements() as usize)
            .map(|i| T::from_v(V::I(coords(d, i)[k] as i128)).to_v())
            .collect();
        expect(&got, d, &want, &format!("range::<{}>({d}, {k})", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

/// A negative dimension means dimension 0, as in ArrayFire (whose C++ default is -1).
#[test]
fn range_along_a_negative_dimension_is_along_dimension_0() {
    let d = dim4!(3, 2, 2);
    let want: Vec<u16> = (0..12).map(|i| (i % 3) as u16).collect();
    assert_eq!(ef::range::<u16>(d, -1).to_vec(), want);
    assert_eq!(ef::range::<u16>(d, -1).to_vec(), ef::range::<u16>(d, 0).to_vec());
}

#[test]
fn iota() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        // keep the tiled result small: tile counts of 1..=3 on a shape of at most 64 elements
        let block = if d.elements() > 64 { dim4!(4, 3, 2) } else { d };
        let tile = Dim4::new(&[
            r.gen_range(1..=3),
            r.gen_range(1..=2),
            r.gen_range(1..=2),
            r.gen_range(1..=2),
        ]);
        let out = Dim4::new(&std::array::from_fn(|k| block[k] * tile[k]));
        let got = ef::iota::<T>(block, tile);
        let want: Vec<V> = (0..out.elements() as usize)
            .map(|i| {
                let c = coords(out, i);
                let (b0, b1, b2) = (block[0], block[1], block[2]);
                let lin = c[0] % b0 + b0 * (c[1] % b1 + b1 * (c[2] % b2 + b2 * (c[3] % block[3])));
                T::from_v(V::I(lin as i128)).to_v()
            })
            .collect();
        expect(&got, out, &want, &format!("iota::<{}>({block}, {tile})", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn identity() {
    fn case<T: Elem>(d: Dim4, _s: u64) -> Result<(), String> {
        let got = ef::identity::<T>(d);
        let want: Vec<V> = (0..d.elements() as usize)
            .map(|i| {
                let c = coords(d, i);
                T::from_v(V::B(c[0] == c[1])).to_v()
            })
            .collect();
        expect(&got, d, &want, &format!("identity::<{}>({d})", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn diag_create() {
    fn case<T: Elem>(_d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let (len, batches) = (r.gen_range(0..=6u64), r.gen_range(1..=3u64));
        let num = r.gen_range(-3..=3i32);
        let dims = dim4!(len, batches);
        let v = gen_vec(&mut r, (len * batches) as usize, &|r| T::any(r));
        let got = ef::diag_create(&Array::new(&v, dims), num);
        let n = len + num.unsigned_abs() as u64;
        let out = dim4!(n, n, batches);
        let want: Vec<V> = (0..out.elements() as usize)
            .map(|i| {
                let c = coords(out, i);
                let (row, col) = (c[0] as i64, c[1] as i64);
                if col - row == num as i64 {
                    let k = if num >= 0 { row } else { col } as u64;
                    v[(c[2] * len + k) as usize].to_v()
                } else {
                    T::from_v(V::I(0)).to_v()
                }
            })
            .collect();
        expect(&got, out, &want, &format!("diag_create({}, {dims}, {num})", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn diag_extract() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let num = r.gen_range(-(d[0] as i32) - 1..=d[1] as i32 + 1);
        let v = gen_vec(&mut r, d.elements() as usize, &|r| T::any(r));
        let got = ef::diag_extract(&Array::new(&v, d), num);
        let (r0, c0) = if num >= 0 { (0, num as i64) } else { (-num as i64, 0) };
        let len = (d[0] as i64 - r0).min(d[1] as i64 - c0).max(0) as u64;
        let out = dim4!(len, 1, d[2], d[3]);
        let want: Vec<V> = (0..out.elements() as usize)
            .map(|i| {
                let c = coords(out, i);
                let (row, col) = (c[0] + r0 as u64, c[0] + c0 as u64);
                v[(row + d[0] * (col + d[1] * (c[2] + d[2] * c[3]))) as usize].to_v()
            })
            .collect();
        expect(&got, out, &want, &format!("diag_extract({}, {d}, {num})", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn lower_and_upper() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let unit = r.gen_bool(0.5);
        let v = gen_vec(&mut r, d.elements() as usize, &|r| T::any(r));
        let a = Array::new(&v, d);
        let (zero, one) = (T::from_v(V::I(0)).to_v(), T::from_v(V::I(1)).to_v());
        for lower in [true, false] {
            let got = if lower { ef::lower(&a, unit) } else { ef::upper(&a, unit) };
            let want: Vec<V> = (0..v.len())
                .map(|i| {
                    let c = coords(d, i);
                    let keep = if lower { c[0] >= c[1] } else { c[0] <= c[1] };
                    if unit && c[0] == c[1] {
                        one
                    } else if keep {
                        v[i].to_v()
                    } else {
                        zero
                    }
                })
                .collect();
            let name = if lower { "lower" } else { "upper" };
            expect(&got, d, &want, &format!("{name}({}, {d}, unit {unit})", T::TY.name))?;
        }
        Ok(())
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

/// Shapes for select's three operands: each is the full shape or has some dimensions of 1
/// (they broadcast).
fn reduced(d: Dim4, r: &mut Rng64) -> Dim4 {
    let mut x = d;
    for k in 0..4 {
        if r.gen_bool(0.3) {
            x[k] = 1;
        }
    }
    x
}

#[test]
fn select_selectl_selectr() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let (dc, da, db) = (reduced(d, &mut r), reduced(d, &mut r), reduced(d, &mut r));
        let out = bcast(bcast(dc, da), db);
        let c: Vec<bool> = gen_vec(&mut r, dc.elements() as usize, &|r| r.gen_bool(0.5));
        let a = gen_vec(&mut r, da.elements() as usize, &|r| T::any(r));
        let b = gen_vec(&mut r, db.elements() as usize, &|r| T::any(r));
        let (ca, aa, ba) = (Array::new(&c, dc), Array::new(&a, da), Array::new(&b, db));
        let n = out.elements() as usize;
        let pick = |i: usize, x: V, y: V| if c[bidx(out, dc, i)] { x } else { y };
        let want: Vec<V> = (0..n)
            .map(|i| pick(i, a[bidx(out, da, i)].to_v(), b[bidx(out, db, i)].to_v()))
            .collect();
        let what = format!("select({}) cond {dc} a {da} b {db}", T::TY.name);
        expect(&ef::select(&aa, &ca, &ba), out, &want, &what)?;
        // scalars (f64, converted to T) on the left or the right
        let sc: f64 = [2.5, -1.0, 0.0, 300.0][r.gen_range(0..4)];
        let sv = T::from_v(V::F(sc)).to_v();
        let out_l = bcast(dc, db);
        let want: Vec<V> = (0..out_l.elements() as usize)
            .map(|i| if c[bidx(out_l, dc, i)] { sv } else { b[bidx(out_l, db, i)].to_v() })
            .collect();
        expect(&ef::selectl(sc, &ca, &ba), out_l, &want, &format!("selectl({sc}) {what}"))?;
        let out_r = bcast(dc, da);
        let want: Vec<V> = (0..out_r.elements() as usize)
            .map(|i| if c[bidx(out_r, dc, i)] { a[bidx(out_r, da, i)].to_v() } else { sv })
            .collect();
        expect(&ef::selectr(&aa, &ca, sc), out_r, &want, &format!("selectr({sc}) {what}"))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn replace_and_replace_scalar() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let mut r = Rng64::seed_from_u64(s);
        let (dc, db) = (reduced(d, &mut r), reduced(d, &mut r));
        let c: Vec<bool> = gen_vec(&mut r, dc.elements() as usize, &|r| r.gen_bool(0.5));
        let a = gen_vec(&mut r, d.elements() as usize, &|r| T::any(r));
        let b = gen_vec(&mut r, db.elements() as usize, &|r| T::any(r));
        let ca = Array::new(&c, dc);
        let mut x = Array::new(&a, d);
        let before = x.clone();
        ef::replace(&mut x, &ca, &Array::new(&b, db));
        let n = d.elements() as usize;
        let want: Vec<V> = (0..n)
            .map(|i| if c[bidx(d, dc, i)] { a[i].to_v() } else { b[bidx(d, db, i)].to_v() })
            .collect();
        expect(&x, d, &want, &format!("replace({}) cond {dc} b {db} in {d}", T::TY.name))?;
        // the handle that shared the old value keeps it
        expect(&before, d, &vs(&a), "replace leaves other handles alone")?;
        let mut y = Array::new(&a, d);
        ef::replace_scalar(&mut y, &ca, -2.0);
        let sv = T::from_v(V::F(-2.0)).to_v();
        let want: Vec<V> =
            (0..n).map(|i| if c[bidx(d, dc, i)] { a[i].to_v() } else { sv }).collect();
        expect(&y, d, &want, &format!("replace_scalar({}) cond {dc} in {d}", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}

#[test]
fn new_empty_and_new_strided() {
    fn case<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
        let e = Array::<T>::new_empty(d);
        expect(&e, d, &vec![T::from_v(V::I(0)).to_v(); d.elements() as usize], "new_empty")?;
        // a strided host layout: every element of `d` read from a padded buffer
        let mut r = Rng64::seed_from_u64(s);
        let mut strides = [r.gen_range(1..=2u64), 0, 0, 0];
        for k in 1..4 {
            strides[k] = strides[k - 1] * d[k - 1].max(1) + r.gen_range(0..=2);
        }
        let offset = r.gen_range(0..3u64);
        let span: u64 = (0..4).map(|k| d[k].saturating_sub(1) * strides[k]).sum();
        let len = (offset + span + 1) as usize;
        let buf = gen_vec(&mut r, len, &|r| T::any(r));
        let got = Array::new_strided(&buf, offset as i64, d, Dim4::new(&strides));
        let want: Vec<V> = (0..d.elements() as usize)
            .map(|i| {
                let c = coords(d, i);
                let idx = offset + (0..4).map(|k| c[k] * strides[k]).sum::<u64>();
                buf[idx as usize].to_v()
            })
            .collect();
        expect(&got, d, &want, &format!("new_strided({}, strides {strides:?}) {d}", T::TY.name))
    }
    run_cases(CASES, |d, s| {
        all_types!(case, d, s);
        Ok(())
    });
}
