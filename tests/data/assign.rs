//! Assignment: `assign_seq`, `assign_gen`, the `set_` helpers and the assignment form of
//! `eval!`, for every element type, against host references (tests/index_ref); and
//! copy-on-write: no other array (a clone, a view, a view's parent, a lazy expression) ever
//! sees an assignment, and a user's lock forces a copy.

use crate::common;
use crate::index_ref;

use common::{run_cases, Elem, Rng, Rng64, SeedableRng, V};
use emberfire::*;
use index_ref::*;

fn gen<T: Elem>(r: &mut Rng64, n: u64) -> Vec<T> {
    (0..n).map(|_| T::any(r)).collect()
}

/// The shapes a value may have for a region: the region's own, a single element, or (for a
/// vector region) a vector along another dimension.
fn value_dims(r: &mut Rng64, region: Dim4) -> Dim4 {
    let n = region.elements();
    let long = (0..4).filter(|&k| region[k] != 1).count();
    match r.gen_range(0..4) {
        0 if n > 0 => dim4!(1),
        1 if long == 1 && n > 1 => {
            let mut d = [1u64; 4];
            d[r.gen_range(0..4)] = n;
            Dim4::new(&d)
        }
        _ => region,
    }
}

/// Builds the value in one of several forms holding the same elements: dense data, a lazy
/// expression (fused into the write), or a strided view of a larger array.
fn value_array<T: Elem>(r: &mut Rng64, vals: &[T], dims: Dim4) -> (Array<T>, &'static str) {
    match r.gen_range(0..3) {
        0 => (Array::new(vals, dims), "dense"),
        1 => {
            // cond ? x : garbage, with cond all true: a lazy tree whose result is `vals`
            let junk: Vec<T> = (0..dims.elements()).map(|_| T::any(r)).collect();
            let cond = constant(true, dims);
            (select(&Array::new(vals, dims), &cond, &Array::new(&junk, dims)), "lazy")
        }
        _ => {
            // every other element of a twice-longer first dimension, walked backwards
            let mut big_dims = dims;
            big_dims[0] *= 2;
            let mut big: Vec<T> = (0..big_dims.elements()).map(|_| T::any(r)).collect();
            for i in 0..dims.elements() {
                let c = coords_of(dims, i);
                let bc = [2 * (dims[0] - 1 - c[0]) + 1, c[1], c[2], c[3]];
                big[lin(big_dims, bc)] = vals[i as usize];
            }
            let big = Array::new(&big, big_dims);
            if dims[0] == 0 {
                return (Array::new(vals, dims), "dense");
            }
            let s = Seq::new(-1.0, 1.0, -2.0);
            (index(&big, &[s, Seq::default(), Seq::default(), Seq::default()]), "view")
        }
    }
}

fn assign_seq_case<T: Elem>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let old: Vec<T> = gen(&mut r, dims.elements());
    let mut a = Array::new(&old, dims);
    let seqs = random_seqs(&mut r, dims);
    let lay = layout(dims, seqs.len());
    let pos = seqs_positions(&seqs, lay).unwrap();
    let region = shape_of(&pos);
    // Something that must not see the write, made before it (or nothing, so that the array
    // is written in place): a clone, a view, or a lazy expression reading the array.
    let observer = r.gen_range(0..4);
    let view_seqs: Vec<S> = (0..4).map(|k| random_seq(&mut r, dims[k])).collect();
    let vpos = seqs_positions(&view_seqs, dims).unwrap();
    let clone = (observer == 1).then(|| a.clone());
    let view =
        (observer == 2).then(|| index(&a, &view_seqs.iter().map(|s| s.seq()).collect::<Vec<_>>()));
    let lazy = (observer == 3).then(|| select(&a, &constant(true, dims), &a));
    let vd = value_dims(&mut r, region);
    let vals: Vec<T> = gen(&mut r, vd.elements());
    let (value, form) = value_array(&mut r, &vals, vd);
    let what = format!(
        "assign_seq({}, dims {dims}, seqs {seqs:?}, {form} value of dims {vd}, observer \
         {observer})",
        T::TY.name
    );
    assign_seq(&mut a, &seqs.iter().map(|s| s.seq()).collect::<Vec<_>>(), &value);
    let mut want = old.clone();
    put(&mut want, lay, &pos, &vals);
    same(&a, dims, &want, &what)?;
    if let Some(c) = clone {
        same(&c, dims, &old, &format!("a clone made before {what}"))?;
    }
    if let Some(v) = view {
        same(&v, shape_of(&vpos), &take(&old, dims, &vpos), &format!("a view before {what}"))?;
    }
    if let Some(l) = lazy {
        same(&l, dims, &old, &format!("a lazy expression before {what}"))?;
    }
    same(&value, vd, &vals, &format!("the value after {what}"))
}

#[test]
fn assign_seq_every_type_and_value_form() {
    run_cases(48, |dims, seed| {
        every_type!(assign_seq_case(dims, seed));
        Ok(())
    });
}

/// Assigning into a view changes the view only, never the array it views (nor the other way
/// round); assigning into a lazy array evaluates it first.
#[test]
fn assignment_into_views_and_lazy_arrays() {
    let base: Vec<i32> = (0..12).collect();
    let parent = Array::new(&base, dim4!(3, 4));
    let mut v = col(&parent, 1);
    set_row(&mut v, &constant(-1, dim4!(1)), 0);
    assert_eq!(v.to_vec(), vec![-1, 4, 5]);
    assert_eq!(parent.to_vec(), base);
    let mut p2 = parent.clone();
    let v2 = row(&p2, -1);
    set_col(&mut p2, &constant(100, dim4!(1)), 3);
    assert_eq!(v2.to_vec(), vec![2, 5, 8, 11]);
    assert_eq!(p2.to_vec(), [0, 1, 2, 3, 4, 5, 6, 7, 8, 100, 100, 100]);
    let mut lazy = parent.clone() * 2;
    set_rows(&mut lazy, &Array::new(&[7, 7, 7, 7], dim4!(1, 4)), 1, 1);
    assert_eq!(lazy.to_vec(), [0, 7, 4, 6, 7, 10, 12, 7, 16, 18, 7, 22]);
}

/// Writes in place when nothing else can observe the memory; a clone, or a user's lock,
/// forces a copy. (One test, in this order: the locked buffer is released by the copy.)
#[test]
fn copy_on_write_only_when_shared_or_locked() {
    let mut a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
    let p = a.device_ptr();
    a.unlock();
    set_row(&mut a, &constant(9.0f32, dim4!(1)), 1);
    assert_eq!(a.to_vec(), vec![1.0, 9.0, 3.0, 4.0]);
    assert_eq!(a.device_ptr(), p, "an unshared array is written in place");
    a.unlock();
    let b = a.clone();
    set_row(&mut a, &constant(8.0f32, dim4!(1)), 2);
    assert_ne!(a.device_ptr(), p, "a shared array is copied first");
    a.unlock();
    assert_eq!(b.to_vec(), vec![1.0, 9.0, 3.0, 4.0]);
    assert_eq!(a.to_vec(), vec![1.0, 9.0, 8.0, 4.0]);
    // locked by the user, and otherwise unshared: the write goes to a copy
    let mut c = Array::new(&[5i64, 6, 7], dim4!(3));
    let raw = c.device_ptr();
    assert!(c.is_locked());
    set_rows(&mut c, &Array::new(&[0i64, 0], dim4!(2)), 0, 1);
    assert_eq!(c.to_vec(), vec![0, 0, 7]);
    assert!(!c.is_locked(), "the copy is not the user's locked memory");
    assert_ne!(c.device_ptr(), raw);
    c.unlock();
}

/// A value that reads the array it is written into sees the old values (the write goes to
/// a copy when the value's tree holds the array).
#[test]
fn value_reading_the_destination_sees_old_values() {
    let base: Vec<u32> = (0..8).collect();
    let mut a = Array::new(&base, dim4!(8));
    let shifted = rows(&a, 0, 6);
    set_rows(&mut a, &shifted, 1, 7);
    assert_eq!(a.to_vec(), vec![0, 0, 1, 2, 3, 4, 5, 6]);
    let mut b = Array::new(&base, dim4!(8));
    let twice = &b * 2u32;
    set_rows(&mut b, &rows(&twice, -1, -8), 0, 7); // reversed, doubled, from b's old values
    assert_eq!(b.to_vec(), vec![14, 12, 10, 8, 6, 4, 2, 0]);
}

/// Unique positions for an index array of `count` values along a dimension of length `len`
/// (written sometimes negative or past the end, which fold back onto them).
fn unique_indices(r: &mut Rng64, count: usize, len: u64) -> Vec<i64> {
    let mut all: Vec<u64> = (0..len).collect();
    for i in (1..all.len()).rev() {
        all.swap(i, r.gen_range(0..=i));
    }
    all.into_iter()
        .take(count)
        .map(|p| match r.gen_range(0..6) {
            0 => -(p as i64) - 1,               // folds to p
            1 => 2 * len as i64 - 1 - p as i64, // past the end, folds to p
            _ => p as i64,
        })
        .collect()
}

fn assign_gen_case<T: Elem, I: Elem + IndexableType>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let old: Vec<T> = gen(&mut r, dims.elements());
    let mut a = Array::new(&old, dims);
    let clone = a.clone();
    let n = r.gen_range(1..=4usize);
    let lay = layout(dims, n);
    let ad = r.gen_range(0..n);
    if lay[ad] == 0 {
        return Ok(());
    }
    let far = 2 * lay[ad] as i128;
    if I::from_v(V::I(far)).to_v() != V::I(far) && I::from_v(V::I(far)).to_v() != V::F(far as f64) {
        return Ok(()); // the index type cannot hold every spelling of every position
    }
    let count = r.gen_range(0..=lay[ad].min(5) as usize);
    let mut raw = unique_indices(&mut r, count, lay[ad]);
    if I::TY.class == common::Class::Int && !I::TY.signed {
        // unsigned types cannot hold the negative spellings
        raw.iter_mut().for_each(|x| *x = fold(*x, lay[ad]) as i64);
    }
    let conv: Vec<I> = raw.iter().map(|&x| I::from_v(V::I(x as i128))).collect();
    let idx = Array::new(&conv, dim4!(count as u64));
    let seqs: Vec<S> = (0..n).map(|k| random_seq(&mut r, lay[k])).collect();
    let mut pos = seqs_positions(&seqs, lay).unwrap();
    pos[ad] = raw.iter().map(|&i| fold(i, lay[ad])).collect();
    let region = shape_of(&pos);
    let vd = value_dims(&mut r, region);
    let vals: Vec<T> = gen(&mut r, vd.elements());
    let (value, form) = value_array(&mut r, &vals, vd);
    let seq_vals: Vec<Seq<f64>> = seqs.iter().map(|s| s.seq()).collect();
    let indexer = mixed_indexer(&idx, ad, &seq_vals);
    let what = format!(
        "assign_gen({}, dims {dims}, {} indices {raw:?} on dimension {ad}, seqs {seqs:?}, {form} \
         value of dims {vd})",
        T::TY.name,
        I::TY.name
    );
    assign_gen(&mut a, &indexer, &value);
    let mut want = old.clone();
    put(&mut want, lay, &pos, &vals);
    same(&a, dims, &want, &what)?;
    same(&clone, dims, &old, &format!("a clone made before {what}"))
}

fn assign_gen_index_types<T: Elem>(dims: Dim4, seed: u64) -> Res {
    assign_gen_case::<T, u8>(dims, seed)?;
    assign_gen_case::<T, i16>(dims, seed ^ 1)?;
    assign_gen_case::<T, u32>(dims, seed ^ 2)?;
    assign_gen_case::<T, i64>(dims, seed ^ 3)?;
    assign_gen_case::<T, f32>(dims, seed ^ 4)?;
    assign_gen_case::<T, f64>(dims, seed ^ 5)
}

#[test]
fn assign_gen_scatters_by_index_arrays() {
    run_cases(32, |dims, seed| {
        every_type!(assign_gen_index_types(dims, seed));
        Ok(())
    });
}

/// Repeated indices: every written position holds one of the values aimed at it, and the
/// positions not indexed keep their values.
#[test]
fn repeated_indices_write_one_of_their_values() {
    let n = 10_000u64;
    let mut a = constant(-1i32, dim4!(n));
    let idx: Vec<u32> = (0..3 * n as u32).map(|i| (i * 7) % 5000).collect();
    let vals: Vec<i32> = (0..3 * n as i32).collect();
    let (ia, va) = (Array::new(&idx, dim4!(3 * n)), Array::new(&vals, dim4!(3 * n)));
    let mut ix = Indexer::default();
    ix.set_index(&ia, 0, None);
    assign_gen(&mut a, &ix, &va);
    let got = a.to_vec();
    for (p, g) in got.iter().enumerate() {
        if p < 5000 {
            assert!(
                idx.iter().zip(&vals).any(|(&i, &v)| i as usize == p && v == *g),
                "position {p} holds {g}, which was not aimed at it"
            );
        } else {
            assert_eq!(*g, -1, "position {p} was not indexed");
        }
    }
}

fn set_helpers_case<T: Elem>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let old: Vec<T> = gen(&mut r, dims.elements());
    for (name, d) in [("row", 0usize), ("col", 1), ("slice", 2)] {
        let len = dims[d];
        if len == 0 {
            continue;
        }
        let pick = |r: &mut Rng64| {
            let p = r.gen_range(0..len) as i64;
            if r.gen_bool(0.4) {
                p - len as i64
            } else {
                p
            }
        };
        let (first, last) = (pick(&mut r), pick(&mut r));
        let step = if first > last && last < 0 { -1.0 } else { 1.0 };
        let mut seqs = vec![SPAN; 4];
        seqs[d] = S(first as f64, last as f64, step);
        if let Some(pos) = seqs_positions(&seqs, dims) {
            let region = shape_of(&pos);
            let vals: Vec<T> = gen(&mut r, region.elements());
            let mut a = Array::new(&old, dims);
            let v = Array::new(&vals, region);
            match d {
                0 => set_rows(&mut a, &v, first, last),
                1 => set_cols(&mut a, &v, first, last),
                _ => set_slices(&mut a, &v, first, last),
            }
            let mut want = old.clone();
            put(&mut want, dims, &pos, &vals);
            same(
                &a,
                dims,
                &want,
                &format!("set_{name}s({}, dims {dims}, {first}, {last})", T::TY.name),
            )?;
        }
        let at = pick(&mut r);
        let mut seqs = vec![SPAN; 4];
        seqs[d] = S(at as f64, at as f64, 1.0);
        let pos = seqs_positions(&seqs, dims).unwrap();
        let vals: Vec<T> = gen(&mut r, shape_of(&pos).elements());
        let mut a = Array::new(&old, dims);
        let v = Array::new(&vals, shape_of(&pos));
        match d {
            0 => set_row(&mut a, &v, at),
            1 => set_col(&mut a, &v, at),
            _ => set_slice(&mut a, &v, at),
        }
        let mut want = old.clone();
        put(&mut want, dims, &pos, &vals);
        same(&a, dims, &want, &format!("set_{name}({}, dims {dims}, {at})", T::TY.name))?;
    }
    Ok(())
}

#[test]
fn set_helpers_with_negative_positions() {
    run_cases(32, |dims, seed| {
        every_type!(set_helpers_case(dims, seed));
        Ok(())
    });
}

/// The assignment forms of `eval!`, and `eval!` of several arrays.
#[test]
fn eval_macro_assignment_forms() {
    let base: Vec<f64> = (0..20).map(|x| x as f64).collect();
    let other: Vec<f64> = (0..20).map(|x| 100.0 + x as f64).collect();
    let b = Array::new(&other, dim4!(4, 5));
    let at = |v: &[f64], i: usize, j: usize| v[i + 4 * j];
    // literal sequences = an array
    let mut a = Array::new(&base, dim4!(4, 5));
    let small = Array::new(&[-1.0, -2.0, -3.0, -4.0], dim4!(2, 2));
    eval!(a[1:2:1, -1:-2:-1] = small);
    let got = a.to_vec();
    assert_eq!(
        [at(&got, 1, 4), at(&got, 2, 4), at(&got, 1, 3), at(&got, 2, 3)],
        [-1.0, -2.0, -3.0, -4.0]
    );
    assert_eq!(at(&got, 0, 4), 16.0);
    // literal sequences = literal-indexed array
    let mut a = Array::new(&base, dim4!(4, 5));
    eval!(a[0:3:3, 0:0:1] = b[3:0:-3, 4:4:1]);
    let got = a.to_vec();
    assert_eq!([at(&got, 0, 0), at(&got, 3, 0)], [at(&other, 3, 4), at(&other, 0, 4)]);
    // variables (sequences and index arrays) = variable-indexed array
    let mut a = Array::new(&base, dim4!(4, 5));
    let rows_idx = Array::new(&[3i32, 1], dim4!(2));
    let c = seq!(2:2:1);
    let (s0, s1) = (seq!(0:1:1), seq!(0:0:1));
    eval!(a[rows_idx, c] = b[s0, s1]);
    let got = a.to_vec();
    assert_eq!([at(&got, 3, 2), at(&got, 1, 2)], [at(&other, 0, 0), at(&other, 1, 0)]);
    // variables = an expression
    let mut a = Array::new(&base, dim4!(4, 5));
    let all = seq!();
    eval!(a[all, c] = constant(0.5f64, dim4!(1)) * 4.0);
    let got = a.to_vec();
    assert!((0..4).all(|i| at(&got, i, 2) == 2.0));
    assert_eq!(at(&got, 0, 1), 4.0);
    // several arrays
    let (x, y) = (&a + 1.0, &a * 2.0);
    eval!(&x, &y);
    assert!(x.is_linear() && y.is_linear());
    assert_eq!(y.to_vec()[9], 2.0 * got[9]);
}

/// Empty values change nothing; values that do not fit the region panic with the shapes.
#[test]
fn empty_values_and_empty_arrays() {
    let mut a = Array::new(&[1u8, 2, 3], dim4!(3));
    assign_seq(&mut a, &[Seq::new(0, 1, 1)], &Array::<u8>::new_empty(dim4!(0)));
    assert_eq!(a.to_vec(), vec![1, 2, 3]);
    let mut e = Array::<u8>::new_empty(dim4!(0, 4));
    assign_seq(&mut e, &[Seq::<i32>::default(), Seq::new(1, 2, 1)], &constant(5u8, dim4!(1)));
    assert_eq!(e.dims(), dim4!(0, 4));
}

#[test]
#[should_panic(
    expected = "assign_seq: the value has dims [2 2 1 1] but the indexed region of the \
                           array (dims [5 3 1 1]) has dims [3 3 1 1]"
)]
fn value_of_the_wrong_shape_panics() {
    let mut a = constant(0.0f32, dim4!(5, 3));
    assign_seq(&mut a, &[Seq::new(1.0, 3.0, 1.0), Seq::default()], &constant(1.0f32, dim4!(2, 2)));
}

#[test]
#[should_panic(expected = "set_row: the value has dims [3 1 1 1] but the indexed region")]
fn row_value_of_the_wrong_length_panics() {
    let mut a = constant(0i32, dim4!(2, 2));
    set_row(&mut a, &Array::new(&[1, 2, 3], dim4!(3)), 0);
}

#[test]
#[should_panic(expected = "assign_gen: the value has dims [3 1 1 1] but the indexed region")]
fn scatter_value_of_the_wrong_shape_panics() {
    let mut a = constant(0i32, dim4!(4, 2));
    let idx = Array::new(&[0u8, 1], dim4!(2));
    let both = Seq::new(0, 1, 1);
    let mut ix = Indexer::default();
    ix.set_index(&idx, 0, None);
    ix.set_index(&both, 1, None);
    assign_gen(&mut a, &ix, &Array::new(&[1, 2, 3], dim4!(3)));
}

#[test]
#[should_panic(expected = "set_cols: sequence 3:1:1 along dimension 1")]
fn assignment_out_of_range_panics() {
    let mut a = constant(0i32, dim4!(2, 2));
    set_cols(&mut a, &constant(1i32, dim4!(1)), 3, 1);
}
