//! Indexing: views by sequences (`index`, `row(s)`, `col(s)`, `slice(s)`), views of views,
//! negative positions and steps, views read by element-wise expressions and reductions, and
//! gathers by index arrays (`index_gen`, `lookup`), for every element type, against host
//! references computed from the test's own inputs (tests/index_ref).

use crate::common;
use crate::index_ref;

use common::{check_all, run_cases, Elem, Rng, Rng64, SeedableRng, Tol, V};
use emberfire::*;
use index_ref::*;

fn random_array<T: Elem>(r: &mut Rng64, dims: Dim4) -> (Vec<T>, Array<T>) {
    let v: Vec<T> = (0..dims.elements()).map(|_| T::any(r)).collect();
    let a = Array::new(&v, dims);
    (v, a)
}

fn seqs_f64(seqs: &[S]) -> Vec<Seq<f64>> {
    seqs.iter().map(|s| s.seq()).collect()
}

fn index_case<T: Elem>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let (v, a) = random_array::<T>(&mut r, dims);
    let seqs = random_seqs(&mut r, dims);
    let lay = layout(dims, seqs.len());
    let pos = seqs_positions(&seqs, lay).expect("generated sequences are valid");
    let want = take(&v, lay, &pos);
    let what = format!("index({}, dims {dims}, seqs {seqs:?})", T::TY.name);
    let got = index(&a, &seqs_f64(&seqs));
    same(&got, shape_of(&pos), &want, &what)?;
    // the same through an Indexer of sequences, and through view! (Seq<i32>)
    let mut idx = Indexer::default();
    let s: Vec<Seq<f64>> = seqs_f64(&seqs);
    for (k, q) in s.iter().enumerate() {
        idx.set_index(q, k as u32, None);
    }
    same(&index_gen(&a, idx), shape_of(&pos), &want, &format!("index_gen of seqs: {what}"))
}

#[test]
fn index_by_random_sequences_every_type() {
    run_cases(48, |dims, seed| {
        every_type!(index_case(dims, seed));
        Ok(())
    });
}

fn view_of_view_case<T: Elem>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let (v, a) = random_array::<T>(&mut r, dims);
    // first view: one sequence per dimension (no flattening), so it may be strided
    let first: Vec<S> = (0..4).map(|k| random_seq(&mut r, dims[k])).collect();
    let p1 = seqs_positions(&first, dims).unwrap();
    let (v1, d1) = (take(&v, dims, &p1), shape_of(&p1));
    let a1 = index(&a, &seqs_f64(&first));
    let second = random_seqs(&mut r, d1);
    let lay = layout(d1, second.len());
    let p2 = seqs_positions(&second, lay).unwrap();
    let want = take(&v1, lay, &p2);
    let what = format!("view of view ({}, dims {dims}, {first:?} then {second:?})", T::TY.name);
    same(&index(&a1, &seqs_f64(&second)), shape_of(&p2), &want, &what)?;
    // the parent is unchanged and still readable
    same(&a, dims, &v, "parent after viewing")
}

#[test]
fn views_of_views_compose_offsets_and_strides() {
    run_cases(48, |dims, seed| {
        every_type!(view_of_view_case(dims, seed));
        Ok(())
    });
}

/// Views feed element-wise expressions (strided reads in the fused pass) and reductions.
#[test]
fn views_in_expressions_and_reductions() {
    run_cases(64, |dims, seed| {
        let mut r = Rng64::seed_from_u64(seed);
        let x: Vec<f64> = (0..dims.elements()).map(|_| r.gen_range(-4.0..4.0)).collect();
        let y: Vec<f64> = (0..dims.elements()).map(|_| r.gen_range(-4.0..4.0)).collect();
        let (a, b) = (Array::new(&x, dims), Array::new(&y, dims));
        let seqs: Vec<S> = (0..4).map(|k| random_seq(&mut r, dims[k])).collect();
        let pos = seqs_positions(&seqs, dims).unwrap();
        let out = shape_of(&pos);
        let (vx, vy) = (index(&a, &seqs_f64(&seqs)), index(&b, &seqs_f64(&seqs)));
        let (tx, ty) = (take(&x, dims, &pos), take(&y, dims, &pos));
        let e: Array<f64> = &vx * 2.0 + sin(&vy) - &vx * &vy;
        let want: Vec<V> =
            tx.iter().zip(&ty).map(|(&p, &q)| V::F(p * 2.0 + q.sin() - p * q)).collect();
        let what = |i: usize| format!("expression of views, dims {dims}, {seqs:?}, element {i}");
        check_all(&e.to_vec(), &want, Tol::x(4.0).scale(8.0), &what)?;
        // reductions along each dimension and over everything
        for d in 0..4 {
            let s = sum(&vx, d as i32);
            let mut rd = out;
            rd[d] = 1;
            let mut want = vec![0.0f64; rd.elements() as usize];
            for i in 0..out.elements() {
                let mut c = coords_of(out, i);
                c[d] = 0;
                want[lin(rd, c)] += tx[i as usize];
            }
            let want: Vec<V> = want.into_iter().map(V::F).collect();
            check_all(&s.to_vec(), &want, Tol::x(64.0).scale(64.0), &|i| {
                format!("sum over dimension {d} of a view, dims {dims}, {seqs:?}, element {i}")
            })?;
        }
        let (total, _) = sum_all(&vx);
        let want: f64 = tx.iter().sum();
        if (total - want).abs() > 1e-9 * (1.0 + want.abs()) * tx.len().max(1) as f64 {
            return Err(format!("sum_all of a view: {total} != {want} ({seqs:?}, dims {dims})"));
        }
        Ok(())
    });
}

/// Negative steps make negative strides: the view is not linear, every reader (host copy,
/// element-wise, reduction, copy, printing) walks it backwards, and a view of it walks forward
/// again.
#[test]
fn negative_steps_read_backwards_everywhere() {
    let v: Vec<i32> = (0..24).collect();
    let a = Array::new(&v, dim4!(4, 3, 2));
    let r = index(&a, &[Seq::new(-1, 0, -1), Seq::new(2, 0, -2), Seq::new(1, 0, -1)]);
    assert_eq!(r.dims(), dim4!(4, 2, 2));
    assert!(!r.is_linear() && !r.is_owner());
    // element (i, j, k) of r is a(3 - i, 2 - 2j, 1 - k) = (3 - i) + 4 (2 - 2j) + 12 (1 - k)
    let want: Vec<i32> = (0..16)
        .map(|n| {
            let (i, j, k) = (n % 4, (n / 4) % 2, n / 8);
            (3 - i) + 4 * (2 - 2 * j) + 12 * (1 - k)
        })
        .collect();
    assert_eq!(r.to_vec(), want);
    // `offset` and `strides` cannot describe a negative stride, so asking for them gives the
    // view a contiguous copy of its own first (as `device_ptr` does); the values stay the same
    assert_eq!(r.offset(), 0);
    assert_eq!(r.strides(), dim4!(1, 4, 8, 16));
    assert_eq!(r.to_vec(), want);
    let doubled: Array<i32> = &r * 2;
    assert_eq!(doubled.to_vec(), want.iter().map(|x| x * 2).collect::<Vec<_>>());
    assert_eq!(r.copy().to_vec(), want);
    assert!(r.copy().is_linear());
    assert_eq!(sum_all(&r).0, want.iter().sum::<i32>());
    let s0 = sum(&r, 0).to_vec();
    for (j, s) in s0.iter().enumerate() {
        assert_eq!(*s, want[j * 4..j * 4 + 4].iter().sum::<i32>(), "sum along dim 0");
    }
    // reversing again reads forwards
    let rr = index(&r, &[Seq::new(-1, 0, -1)]);
    let flat_rev: Vec<i32> = want.iter().rev().copied().collect();
    assert_eq!(rr.to_vec(), flat_rev); // one sequence indexes the flattened (copied) view
    let back = index(&r, &[Seq::new(-1.0, 0.0, -1.0), Seq::default(), Seq::default()]);
    let want_back: Vec<i32> = (0..16)
        .map(|n| {
            let (i, j, k) = (n % 4, (n / 4) % 2, n / 8);
            i + 4 * (2 - 2 * j) + 12 * (1 - k)
        })
        .collect();
    assert_eq!(back.to_vec(), want_back);
    // printing walks the view too
    let text = format!("{r}");
    assert!(text.contains("23"), "{text}");
}

/// A view with an offset that starts inside the buffer is read in place (its offset and
/// strides are visible), contiguous views are linear, and a view keeps its parent's memory
/// alive after the parent is dropped.
#[test]
fn views_share_memory_and_outlive_their_parent() {
    let v: Vec<f32> = (0..30).map(|x| x as f32).collect();
    let a = Array::new(&v, dim4!(5, 6));
    let c = col(&a, 2);
    assert_eq!(c.offset(), 10);
    assert!(c.is_linear() && !c.is_owner());
    let r = row(&a, 3);
    assert_eq!((r.offset(), r.strides()), (3, dim4!(1, 5, 30, 30)));
    let sub = index(&a, &[Seq::new(1.0, 4.0, 3.0), Seq::new(1.0, 5.0, 2.0)]);
    assert_eq!(sub.offset(), 6);
    assert_eq!(sub.strides()[0], 3);
    assert_eq!(sub.strides()[1], 10);
    drop(a);
    assert_eq!(c.to_vec(), vec![10.0, 11.0, 12.0, 13.0, 14.0]);
    assert_eq!(r.to_vec(), vec![3.0, 8.0, 13.0, 18.0, 23.0, 28.0]);
    assert_eq!(sub.to_vec(), vec![6.0, 9.0, 16.0, 19.0, 26.0, 29.0]);
    // a lazy input is evaluated before it is viewed
    let lazy = Array::new(&v, dim4!(5, 6)) * 2.0f32;
    assert_eq!(col(&lazy, -1).to_vec(), vec![50.0, 52.0, 54.0, 56.0, 58.0]);
}

fn helpers_case<T: Elem>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let (v, a) = random_array::<T>(&mut r, dims);
    type Helper<T> = fn(&Array<T>, i64, i64) -> Array<T>;
    let helpers: [(&str, usize, Helper<T>); 3] = [
        ("rows", 0, |a, f, l| rows(a, f, l)),
        ("cols", 1, |a, f, l| cols(a, f, l)),
        ("slices", 2, |a, f, l| slices(a, f, l)),
    ];
    for (name, d, f) in helpers {
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
        // arrayfire-rust's choice of step
        let step = if first > last && last < 0 { -1.0 } else { 1.0 };
        let s = S(first as f64, last as f64, step);
        let mut seqs = vec![SPAN; 4];
        seqs[d] = s;
        let what = format!("{name}({}, dims {dims}, {first}, {last})", T::TY.name);
        match seqs_positions(&seqs, dims) {
            Some(pos) => same(&f(&a, first, last), shape_of(&pos), &take(&v, dims, &pos), &what)?,
            None => {
                let caught =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&a, first, last)));
                if caught.is_ok() {
                    return Err(format!("{what}: expected a panic"));
                }
            }
        }
        // single positions
        let at = pick(&mut r);
        let mut seqs = vec![SPAN; 4];
        seqs[d] = S(at as f64, at as f64, 1.0);
        let pos = seqs_positions(&seqs, dims).unwrap();
        let got = match d {
            0 => row(&a, at),
            1 => col(&a, at),
            _ => slice(&a, at),
        };
        same(&got, shape_of(&pos), &take(&v, dims, &pos), &format!("{name} single {at}: {what}"))?;
    }
    Ok(())
}

#[test]
fn row_col_slice_helpers_with_negative_positions() {
    run_cases(32, |dims, seed| {
        every_type!(helpers_case(dims, seed));
        Ok(())
    });
}

/// An index array of element type `I` holding `vals` (converted with the cast rules), and
/// the i64 value of each element as emberfire reads it: converted as casts convert (integers
/// wrap, so a u64 past i64::MAX reads as negative; reals truncate and saturate, NaN is 0).
fn index_array<I: Elem + IndexableType>(vals: &[i64], dims: Dim4) -> (Array<I>, Vec<i64>) {
    let conv: Vec<I> = vals.iter().map(|&x| I::from_v(V::I(x as i128))).collect();
    let read: Vec<i64> = conv
        .iter()
        .map(|x| match x.to_v() {
            V::I(i) => i as i64,
            other => other.f() as i64,
        })
        .collect();
    (Array::new(&conv, dims), read)
}

fn gather_case<T: Elem, I: Elem + IndexableType>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let (v, a) = random_array::<T>(&mut r, dims);
    // one dimension (or the flattened array) indexed by an array, others by sequences
    let n = r.gen_range(1..=4usize);
    let lay = layout(dims, n);
    let ad = r.gen_range(0..n);
    if lay[ad] == 0 {
        return Ok(()); // no position to index (covered by the empty-array test)
    }
    let count = r.gen_range(0..6usize);
    let raw = random_indices(&mut r, count, lay[ad], true);
    let idx_dims = if r.gen_bool(0.5) { dim4!(count as u64) } else { dim4!(1, count as u64) };
    let (idx, read) = index_array::<I>(&raw, idx_dims);
    let seqs: Vec<S> = (0..n).map(|k| random_seq(&mut r, lay[k])).collect();
    let mut pos = seqs_positions(&seqs, lay).unwrap();
    pos[ad] = read.iter().map(|&i| fold(i, lay[ad])).collect();
    let want = take(&v, lay, &pos);
    let seq_vals = seqs_f64(&seqs);
    let indexer = mixed_indexer(&idx, ad, &seq_vals);
    let what = format!(
        "index_gen({}, dims {dims}, index array of {} {read:?} on dimension {ad}, seqs {seqs:?})",
        T::TY.name,
        I::TY.name
    );
    same(&index_gen(&a, indexer), shape_of(&pos), &want, &what)
}

fn gather_all_index_types<T: Elem>(dims: Dim4, seed: u64) -> Res {
    gather_case::<T, u8>(dims, seed)?;
    gather_case::<T, i16>(dims, seed ^ 1)?;
    gather_case::<T, u16>(dims, seed ^ 2)?;
    gather_case::<T, i32>(dims, seed ^ 3)?;
    gather_case::<T, u32>(dims, seed ^ 4)?;
    gather_case::<T, i64>(dims, seed ^ 5)?;
    gather_case::<T, u64>(dims, seed ^ 6)?;
    gather_case::<T, f32>(dims, seed ^ 7)?;
    gather_case::<T, f64>(dims, seed ^ 8)
}

#[test]
fn index_gen_gathers_by_arrays_of_every_index_type() {
    run_cases(24, |dims, seed| {
        every_type!(gather_all_index_types(dims, seed));
        Ok(())
    });
}

/// Two index arrays at once, index arrays that are themselves views (strided, reversed) or
/// lazy expressions, and fractional real indices (truncated toward zero).
#[test]
fn index_arrays_can_be_views_expressions_and_reals() {
    let v: Vec<u16> = (0..60).collect();
    let a = Array::new(&v, dim4!(5, 4, 3));
    let rows_src = Array::new(&[9i32, 4, 8, 0, 7, 2], dim4!(6));
    let rows_view = index(&rows_src, &[Seq::new(-1, 0, -2)]); // [2, 0, 4]
    let cols = Array::new(&[1.9f32, -0.7, 3.2], dim4!(3)) * 1.0f32; // lazy; reads 1, 0, 3
    let mut idx = Indexer::default();
    idx.set_index(&rows_view, 0, None);
    idx.set_index(&cols, 1, None);
    let got = index_gen(&a, idx);
    assert_eq!(got.dims(), dim4!(3, 3, 3));
    let want: Vec<u16> = (0..27)
        .map(|n| {
            let (i, j, k) = (n % 3, (n / 3) % 3, n / 9);
            let (p, q) = ([2u16, 0, 4][i], [1u16, 0, 3][j]);
            p + 5 * q + 20 * k as u16
        })
        .collect();
    assert_eq!(got.to_vec(), want);
}

fn lookup_case<T: Elem, I: Elem + IndexableType>(dims: Dim4, seed: u64) -> Res {
    let mut r = Rng64::seed_from_u64(seed);
    let (v, a) = random_array::<T>(&mut r, dims);
    let d = r.gen_range(0..4usize);
    if dims[d] == 0 {
        return Ok(());
    }
    let count = r.gen_range(1..8usize);
    let raw = random_indices(&mut r, count, dims[d], true);
    let mut idims = [1u64; 4];
    idims[r.gen_range(0..4)] = count as u64;
    let (idx, read) = index_array::<I>(&raw, Dim4::new(&idims));
    let mut pos: [Vec<u64>; 4] = std::array::from_fn(|k| (0..dims[k]).collect());
    pos[d] = read.iter().map(|&i| fold(i, dims[d])).collect();
    let what =
        format!("lookup({}, dims {dims}, {} indices {read:?}, dim {d})", T::TY.name, I::TY.name);
    same(&lookup(&a, &idx, d as i32), shape_of(&pos), &take(&v, dims, &pos), &what)
}

fn lookup_all_index_types<T: Elem>(dims: Dim4, seed: u64) -> Res {
    lookup_case::<T, u8>(dims, seed)?;
    lookup_case::<T, i16>(dims, seed ^ 11)?;
    lookup_case::<T, i32>(dims, seed ^ 12)?;
    lookup_case::<T, u64>(dims, seed ^ 13)?;
    lookup_case::<T, f64>(dims, seed ^ 14)?;
    lookup_case::<T, f32>(dims, seed ^ 15)
}

#[test]
fn lookup_along_every_dimension() {
    run_cases(32, |dims, seed| {
        every_type!(lookup_all_index_types(dims, seed));
        Ok(())
    });
}

/// ArrayFire's folding of out-of-range indices, worked by hand.
#[test]
fn out_of_range_indices_fold_into_the_dimension() {
    let a = Array::new(&[10, 11, 12, 13], dim4!(4));
    let idx = Array::new(&[-1i64, -4, -5, 4, 5, 9, i64::MIN, i64::MAX], dim4!(8));
    // -1 -> 0, -4 -> 3, -5 -> 0, 4 -> 3, 5 -> 2, 9 -> 2, MIN -> (2^63 - 1) % 4 = 3,
    // MAX -> 3 - MAX % 4 = 0
    assert_eq!(lookup(&a, &idx, 0).to_vec(), vec![10, 13, 10, 13, 12, 12, 13, 10]);
    let reals = Array::new(&[f64::NAN, 2.9, -1.5, 1e30], dim4!(4)); // 0, 2, -1 -> 0, MAX -> 0
    assert_eq!(lookup(&a, &reals, 0).to_vec(), vec![10, 12, 10, 10]);
}

/// Empty arrays and empty selections.
#[test]
fn empty_arrays_and_selections() {
    let e = Array::<f32>::new_empty(dim4!(0, 3));
    let v = index(&e, &[Seq::<i32>::default(), Seq::new(1, 2, 1)]);
    assert_eq!(v.dims(), dim4!(0, 2));
    assert!(v.to_vec().is_empty());
    let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    let none = Array::<u32>::new_empty(dim4!(0));
    assert_eq!(lookup(&a, &none, 0).dims(), dim4!(0));
    let mut idx = Indexer::default();
    idx.set_index(&none, 0, None);
    assert_eq!(index_gen(&a, idx).dims(), dim4!(0));
    // an empty index array on an empty dimension selects nothing, which is fine
    let mut idx = Indexer::default();
    idx.set_index(&none, 0, None);
    assert_eq!(index_gen(&e, idx).dims(), dim4!(0));
}

#[test]
#[should_panic(expected = "index: sequence 0:5:1 along dimension 0 of an array of dims [5 2 1 1]")]
fn sequence_past_the_end_panics() {
    let a = Array::new(&[0u8; 10], dim4!(5, 2));
    index(&a, &[Seq::new(0, 5, 1), Seq::default()]);
}

#[test]
#[should_panic(expected = "row: sequence -4:-4:1 along dimension 0 of an array of dims [3 1 1 1]")]
fn negative_position_before_the_start_panics() {
    row(&Array::new(&[1, 2, 3], dim4!(3)), -4);
}

#[test]
#[should_panic(expected = "the step goes away from end")]
fn step_away_from_the_end_panics() {
    index(&Array::new(&[1, 2, 3], dim4!(3)), &[Seq::new(2, 0, 1)]);
}

#[test]
#[should_panic(expected = "step is 0")]
fn zero_step_other_than_the_span_panics() {
    index(&Array::new(&[1, 2, 3], dim4!(3)), &[Seq::new(1, 2, 0)]);
}

#[test]
#[should_panic(expected = "index: 5 indices given for an array of dims [2 1 1 1]")]
fn too_many_sequences_panic() {
    index(&Array::new(&[1, 2], dim4!(2)), &[Seq::<i32>::default(); 5]);
}

#[test]
#[should_panic(expected = "lookup: seq_dim 4 is not a dimension")]
fn lookup_of_a_missing_dimension_panics() {
    lookup(&Array::new(&[1, 2], dim4!(2)), &Array::new(&[0u8], dim4!(1)), 4);
}

#[test]
#[should_panic(expected = "lookup: `indices` must be a vector, but has dims [2 2 1 1]")]
fn lookup_with_a_matrix_of_indices_panics() {
    lookup(&Array::new(&[1, 2], dim4!(2)), &Array::new(&[0u8; 4], dim4!(2, 2)), 0);
}

#[test]
#[should_panic(expected = "index_gen: 2 indices along dimension 1, which has length 0")]
fn gather_from_an_empty_dimension_panics() {
    let e = Array::<f32>::new_empty(dim4!(2, 0));
    let idx = Array::new(&[0u8, 0], dim4!(2));
    let mut ix = Indexer::default();
    ix.set_index(&idx, 1, None);
    index_gen(&e, ix);
}

#[test]
#[should_panic(expected = "Indexer::set_index: dimension 4 does not exist")]
fn indexer_dimension_past_three_panics() {
    let s = Seq::new(0, 0, 1);
    let mut ix = Indexer::default();
    ix.set_index(&s, 4, None);
}

#[test]
#[should_panic(expected = "index_gen: 0 indices given")]
fn empty_indexer_panics() {
    index_gen(&Array::new(&[1, 2], dim4!(2)), Indexer::default());
}

/// `seq!` and `view!` in all their forms.
#[test]
fn seq_and_view_macros() {
    assert_eq!(seq!(), Seq::<i32>::default());
    assert_eq!(seq!(-3:-1:1), Seq::new(-3, -1, 1));
    assert_eq!(seq!(f32; 0.0:9.0:1.5), Seq::new(0.0f32, 9.0, 1.5));
    let d = seq!(1:2:1);
    assert_eq!(seq!(d.begin(), d.end() + 1, d.step()), Seq::new(1, 3, 1));
    assert_eq!(seq!(u16; 1, 2, 1), Seq::new(1u16, 2, 1));
    let v: Vec<i64> = (0..20).collect();
    let a = Array::new(&v, dim4!(4, 5));
    let host = |r: &[u64], c: &[u64]| -> Vec<i64> {
        c.iter().flat_map(|&j| r.iter().map(move |&i| (i + 4 * j) as i64)).collect()
    };
    assert_eq!(view!(a).to_vec(), v);
    assert_eq!(view!(a[1:3:2, -1:0:-2]).to_vec(), host(&[1, 3], &[4, 2, 0]));
    assert_eq!(view!(a[1:1:0, 2:2:1]).to_vec(), host(&[0, 1, 2, 3], &[2]));
    let (x, y) = (seq!(0:1:1), seq!(-2:-1:1));
    assert_eq!(view!(a[x, y]).to_vec(), host(&[0, 1], &[3, 4]));
    let r = Array::new(&[3u8, 3, 0], dim4!(3));
    let c = Array::new(&[4.0f64, 0.0], dim4!(2));
    assert_eq!(view!(a[r, c]).to_vec(), host(&[3, 3, 0], &[4, 0]));
    assert_eq!(view!(a[r, y]).to_vec(), host(&[3, 3, 0], &[3, 4]));
}
