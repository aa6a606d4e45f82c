//! arrayfire-rust's indexing examples (its API documentation of `Indexer`, `index`, `row`,
//! `col`, `assign_seq`, `index_gen`, `assign_gen`, its book's indexing chapter, and its macro
//! documentation), ported: each example's statements are kept as arrayfire-rust writes them,
//! so they compile against emberfire with only the `use` lines changed. The originals print
//! their results; here each is followed by assertions against a host reference.
//!
//! The examples draw their inputs with emberfire's `randu`, as the originals do with
//! arrayfire-rust's; the references are computed on the host from the values actually drawn.

// The ported statements are kept as written (`2.0 as f32`, `let _sub2 = assign_gen(..)`).
#![allow(clippy::unnecessary_cast, clippy::let_unit_value)]

use emberfire::*;
/// The examples' checks catch an index that picks the wrong element only if the elements
/// differ: `randu` must give distinct values in [0, 1), and new values on each call.
#[test]
fn randu_inputs_tell_elements_apart() {
    let a = randu::<f32>(Dim4::new(&[5, 5, 1, 1])).to_vec();
    let b = randu::<f32>(Dim4::new(&[5, 5, 1, 1])).to_vec();
    assert!(a.iter().all(|x| (0.0..1.0).contains(x)), "{a:?}");
    let mut sorted = a.clone();
    sorted.sort_by(f32::total_cmp);
    sorted.dedup();
    assert_eq!(sorted.len(), a.len(), "repeated values in {a:?}");
    assert_ne!(a, b, "two calls drew the same values");
}

/// Element (i, j) of a column-major matrix with `rows` rows.
fn at(v: &[f32], rows: usize, i: usize, j: usize) -> f32 {
    v[i + rows * j]
}

#[test]
fn indexer_correct_usage() {
    let dims = Dim4::new(&[1, 3, 1, 1]);
    let indices = [1u8, 0, 1];
    let idx = Array::new(&indices, dims);
    let values = [2.0f32, 5.0, 6.0];
    let arr = Array::new(&values, dims);

    let mut idxr = Indexer::default();

    idxr.set_index(&idx, 0, None);

    let out = index_gen(&arr, idxr);
    // one index on a 1x3 array indexes it flattened
    assert_eq!(out.to_vec(), vec![5.0, 2.0, 5.0]);
}

#[test]
fn index_example() {
    let dims = Dim4::new(&[5, 5, 1, 1]);
    let a = randu::<f32>(dims);
    let seqs = &[Seq::new(1.0, 3.0, 1.0), Seq::default()];
    let sub = index(&a, seqs);
    println!("a(seq(1, 3, 1), span)");
    print(&sub);

    let v = a.to_vec();
    assert_eq!(sub.dims(), dim4!(3, 5));
    let want: Vec<f32> =
        (0..5).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(sub.to_vec(), want);
}

#[test]
fn row_and_col_examples() {
    let dims = Dim4::new(&[5, 5, 1, 1]);
    let a = randu::<f32>(dims);
    println!("Grab last row of the random matrix");
    print(&a);
    print(&row(&a, 4));
    println!("Grab last col of the random matrix");
    print(&col(&a, 4));

    let v = a.to_vec();
    assert_eq!(row(&a, 4).to_vec(), (0..5).map(|j| at(&v, 5, 4, j)).collect::<Vec<_>>());
    assert_eq!(col(&a, 4).to_vec(), (0..5).map(|i| at(&v, 5, i, 4)).collect::<Vec<_>>());
}

#[test]
fn assign_seq_example() {
    let mut a = constant(2.0 as f32, Dim4::new(&[5, 3, 1, 1]));
    print(&a);

    let b = constant(1.0 as f32, Dim4::new(&[3, 3, 1, 1]));
    let seqs = &[Seq::new(1.0, 3.0, 1.0), Seq::default()];
    assign_seq(&mut a, seqs, &b);

    print(&a);
    let want: Vec<f32> =
        (0..15).map(|n| if (1..4).contains(&(n % 5)) { 1.0 } else { 2.0 }).collect();
    assert_eq!(a.to_vec(), want);
}

#[test]
fn index_gen_example() {
    let values: [f32; 3] = [1.0, 2.0, 3.0];
    let indices = Array::new(&values, Dim4::new(&[3, 1, 1, 1]));
    let seq4gen = Seq::new(0.0, 2.0, 1.0);
    let a = randu::<f32>(Dim4::new(&[5, 3, 1, 1]));

    let mut idxrs = Indexer::default();
    idxrs.set_index(&indices, 0, None); // 2nd parameter is indexing dimension
    idxrs.set_index(&seq4gen, 1, Some(false)); // 3rd parameter indicates batch operation

    let sub2 = index_gen(&a, idxrs);
    println!("a(indices, seq(0, 2, 1))");
    print(&sub2);

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..3).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(sub2.to_vec(), want);
}

#[test]
fn assign_gen_example() {
    let values: [f32; 3] = [1.0, 2.0, 3.0];
    let indices = Array::new(&values, Dim4::new(&[3, 1, 1, 1]));
    let seq4gen = Seq::new(0.0, 2.0, 1.0);
    let mut a = randu::<f32>(Dim4::new(&[5, 3, 1, 1]));
    let old = a.to_vec();

    let b = constant(2.0 as f32, Dim4::new(&[3, 3, 1, 1]));

    let mut idxrs = Indexer::default();
    idxrs.set_index(&indices, 0, None); // 2nd parameter is indexing dimension
    idxrs.set_index(&seq4gen, 1, Some(false)); // 3rd parameter indicates batch operation

    assign_gen(&mut a, &idxrs, &b);
    println!("a(indices, seq(0, 2, 1))");
    print(&a);

    let want: Vec<f32> =
        (0..15).map(|n| if (1..4).contains(&(n % 5)) { 2.0 } else { old[n] }).collect();
    assert_eq!(a.to_vec(), want);
}

// ---- the book's indexing chapter ------------------------------------------------------------

#[test]
fn non_macro_seq_index() {
    set_device(0);
    let dims = Dim4::new(&[5, 5, 1, 1]);
    let a = randu::<f32>(dims);

    // Index array using sequences
    let seqs = &[Seq::new(1u32, 3, 1), Seq::default()];
    let _sub = index(&a, seqs);

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..5).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(_sub.to_vec(), want);
}

#[test]
fn seq_index() {
    set_device(0);
    let dims = dim4!(5, 5, 1, 1);
    let a = randu::<f32>(dims);
    let first3 = seq!(1:3:1);
    let allindim2 = seq!();
    let _sub = view!(a[first3, allindim2]);

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..5).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(_sub.to_vec(), want);
}

#[test]
fn non_macro_seq_assign() {
    set_device(0);
    let mut a = constant(2.0_f32, dim4!(5, 3));

    let b = constant(1.0_f32, dim4!(3, 3));
    let seqs = [seq!(1:3:1), seq!()];
    assign_seq(&mut a, &seqs, &b);

    let want: Vec<f32> =
        (0..15).map(|n| if (1..4).contains(&(n % 5)) { 1.0 } else { 2.0 }).collect();
    assert_eq!(a.to_vec(), want);
}

#[test]
fn non_macro_seq_array_index() {
    set_device(0);
    let values: [f32; 3] = [1.0, 2.0, 3.0];
    let indices = Array::new(&values, Dim4::new(&[3, 1, 1, 1]));
    let seq4gen = Seq::new(0.0, 2.0, 1.0);
    let a = randu::<f32>(Dim4::new(&[5, 3, 1, 1]));

    let mut idxrs = Indexer::default();
    idxrs.set_index(&indices, 0, None); // 2nd arg is indexing dimension
    idxrs.set_index(&seq4gen, 1, Some(false)); // 3rd arg indicates batch operation

    let _sub2 = index_gen(&a, idxrs);

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..3).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(_sub2.to_vec(), want);
}

#[test]
fn seq_array_index() {
    set_device(0);
    let values: [f32; 3] = [1.0, 2.0, 3.0];
    let indices = Array::new(&values, Dim4::new(&[3, 1, 1, 1]));
    let seq4gen = seq!(0:2:1);
    let a = randu::<f32>(Dim4::new(&[5, 3, 1, 1]));
    let _sub2 = view!(a[indices, seq4gen]);

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..3).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(_sub2.to_vec(), want);
}

#[test]
fn non_macro_seq_array_assign() {
    set_device(0);
    let values: [f32; 3] = [1.0, 2.0, 3.0];
    let indices = Array::new(&values, dim4!(3, 1, 1, 1));
    let seq4gen = seq!(0:2:1);
    let mut a = randu::<f32>(dim4!(5, 3, 1, 1));
    let old = a.to_vec();

    let b = constant(2.0_f32, dim4!(3, 3, 1, 1));

    let mut idxrs = Indexer::default();
    idxrs.set_index(&indices, 0, None); // 2nd arg is indexing dimension
    idxrs.set_index(&seq4gen, 1, Some(false)); // 3rd arg indicates batch operation

    let _sub2 = assign_gen(&mut a, &idxrs, &b);

    let want: Vec<f32> =
        (0..15).map(|n| if (1..4).contains(&(n % 5)) { 2.0 } else { old[n] }).collect();
    assert_eq!(a.to_vec(), want);
}

#[test]
fn setrow() {
    set_device(0);
    let a = randu::<f32>(dim4!(5, 5, 1, 1));
    let _r = row(&a, 4);
    let _c = col(&a, 4);

    let v = a.to_vec();
    assert_eq!(_r.dims(), dim4!(1, 5));
    assert_eq!(_r.to_vec(), (0..5).map(|j| at(&v, 5, 4, j)).collect::<Vec<_>>());
    assert_eq!(_c.dims(), dim4!(5, 1));
    assert_eq!(_c.to_vec(), (0..5).map(|i| at(&v, 5, i, 4)).collect::<Vec<_>>());
}

#[test]
fn get_row() {
    set_device(0);
    let a = randu::<f32>(dim4!(5, 5));
    let _r = row(&a, -1);
    let _c = col(&a, -1);

    let v = a.to_vec();
    assert_eq!(_r.to_vec(), (0..5).map(|j| at(&v, 5, 4, j)).collect::<Vec<_>>());
    assert_eq!(_c.to_vec(), (0..5).map(|i| at(&v, 5, i, 4)).collect::<Vec<_>>());
}

#[test]
fn get_rows() {
    set_device(0);
    let a = randu::<f32>(dim4!(5, 5));
    let _r = rows(&a, -1, -2);
    let _c = cols(&a, -1, -3);

    // first > last with last negative walks backwards: rows 4, 3 and columns 4, 3, 2
    let v = a.to_vec();
    let want_r: Vec<f32> = (0..5).flat_map(|j| [4, 3].map(|i| at(&v, 5, i, j))).collect();
    assert_eq!((_r.dims(), _r.to_vec()), (dim4!(2, 5), want_r));
    let want_c: Vec<f32> = [4, 3, 2]
        .iter()
        .flat_map(|&j| (0..5).map(move |i| (i, j)))
        .map(|(i, j)| at(&v, 5, i, j))
        .collect();
    assert_eq!((_c.dims(), _c.to_vec()), (dim4!(5, 3), want_c));
}

#[test]
fn change_row() {
    set_device(0);

    let v0: Vec<bool> = vec![true, true, true, true, true, true];
    let mut a0 = Array::new(&v0, dim4!(v0.len() as u64));

    let v1: Vec<bool> = vec![false];
    let a1 = Array::new(&v1, dim4!(v1.len() as u64));

    set_row(&mut a0, &a1, 2);

    let mut res = vec![true; a0.elements()];
    a0.host(&mut res);

    let gold = vec![true, true, false, true, true, true];

    assert_eq!(gold, res);
}

#[test]
fn change_rows() {
    set_device(0);

    let v0: Vec<bool> = vec![true, true, true, true, true, true];
    let mut a0 = Array::new(&v0, dim4!(v0.len() as u64));

    let v1: Vec<bool> = vec![false, false];
    let a1 = Array::new(&v1, dim4!(v1.len() as u64));

    set_rows(&mut a0, &a1, 2, 3);

    let mut res = vec![true; a0.elements()];
    a0.host(&mut res);

    let gold = vec![true, true, false, false, true, true];

    assert_eq!(gold, res);
}

// ---- the macro documentation -------------------------------------------------------------------

#[test]
fn seq_construction() {
    let default_seq = seq!();
    let _range_1_to_10_step_1 = seq!(0:9:1);
    let _range_1_to_10_step_1_2 = seq!(f32; 0.0:9.0:1.5);
    let _range_from_exprs = seq!(default_seq.begin(), default_seq.end(), default_seq.step());
    let _range_from_exprs2 = seq!(f32; default_seq.begin() as f32,
             default_seq.end() as f32, default_seq.step() as f32);

    assert_eq!((default_seq.begin(), default_seq.end(), default_seq.step()), (1, 1, 0));
    assert_eq!(_range_1_to_10_step_1, Seq::new(0, 9, 1));
    assert_eq!(_range_1_to_10_step_1_2, Seq::new(0.0f32, 9.0, 1.5));
    assert_eq!(_range_from_exprs, default_seq);
    assert_eq!(_range_from_exprs2, Seq::<f32>::default());
}

#[test]
fn seq_view() {
    let mut dim4d = dim4!(5, 3, 2, 1);
    dim4d[2] = 1;

    let a = randu::<f32>(dim4d);
    let seqs = &[seq!(1:3:1), seq!()];
    let _sub = index(&a, seqs);

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..3).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(_sub.to_vec(), want);
}

#[test]
fn seq_view2() {
    let a = randu::<f32>(dim4!(5, 5));
    let _sub = view!(a[1:3:1, 1:1:0]); // 1:1:0 means all elements along axis

    let v = a.to_vec();
    let want: Vec<f32> =
        (0..5).flat_map(|j| (1..4).map(move |i| (i, j))).map(|(i, j)| at(&v, 5, i, j)).collect();
    assert_eq!(_sub.to_vec(), want);
}

#[test]
fn view_macro() {
    let dims = dim4!(5, 5, 2, 1);
    let a = randu::<f32>(dims);
    let b = a.clone();
    let c = a.clone();
    let d = a.clone();
    let e = a.clone();

    let _v = view!(a);

    let _m = view!(c[1:3:1, 1:3:2]);

    let x = seq!(1:3:1);
    let y = seq!(1:3:2);
    let _u = view!(b[x, y]);

    let values: [u32; 3] = [1, 2, 3];
    let indices = Array::new(&values, dim4!(3, 1, 1, 1));
    let indices2 = Array::new(&values, dim4!(3, 1, 1, 1));

    let _w = view!(d[indices, indices2]);

    let _z = view!(e[indices, y]);

    // 5x5x2: element (i, j, k) at i + 5j + 25k; missing dimensions are kept whole
    let v = a.to_vec();
    let pick = |is: &[usize], js: &[usize]| -> Vec<f32> {
        (0..2)
            .flat_map(|k| js.iter().flat_map(move |&j| is.iter().map(move |&i| (i, j, k))))
            .map(|(i, j, k)| v[i + 5 * j + 25 * k])
            .collect()
    };
    assert_eq!(_v.to_vec(), v);
    assert_eq!(_m.to_vec(), pick(&[1, 2, 3], &[1, 3]));
    assert_eq!(_u.to_vec(), pick(&[1, 2, 3], &[1, 3]));
    assert_eq!(_w.to_vec(), pick(&[1, 2, 3], &[1, 2, 3]));
    assert_eq!(_z.to_vec(), pick(&[1, 2, 3], &[1, 3]));
}

#[test]
fn eval_assign_seq_indexed_array() {
    let dims = dim4!(5, 5);
    let mut a = randu::<f32>(dims);
    let old = a.to_vec();

    let b = randu::<f32>(dims);
    let bv = b.to_vec();

    let d0 = seq!(1:2:1);
    let d1 = seq!(1:2:1);
    let s0 = seq!(1:2:1);
    let s1 = seq!(1:2:1);
    eval!(a[d0, d1] = b[s0, s1]);

    let got = a.to_vec();
    for n in 0..25 {
        let (i, j) = (n % 5, n / 5);
        let inside = (1..3).contains(&i) && (1..3).contains(&j);
        assert_eq!(got[n], if inside { bv[n] } else { old[n] }, "element ({i}, {j})");
    }
}

#[test]
fn eval_assign_array_to_seqd_array() {
    let mut a = randu::<f32>(dim4!(5, 5));
    let old = a.to_vec();
    let b = randu::<f32>(dim4!(2, 2));
    eval!(a[1:2:1, 1:2:1] = b);

    let (got, bv) = (a.to_vec(), b.to_vec());
    for n in 0..25 {
        let (i, j) = (n % 5, n / 5);
        let inside = (1..3).contains(&i) && (1..3).contains(&j);
        let want = if inside { bv[(i - 1) + 2 * (j - 1)] } else { old[n] };
        assert_eq!(got[n], want, "element ({i}, {j})");
    }
}

#[test]
fn macro_seq_array_assign() {
    let values: [f32; 3] = [1.0, 2.0, 3.0];
    let indices = Array::new(&values, dim4!(3));
    let seq4gen = seq!(0:2:1);
    let mut a = randu::<f32>(dim4!(5, 3));
    let old = a.to_vec();

    let b = constant(2.0 as f32, dim4!(3, 3));

    eval!(a[indices, seq4gen] = b);

    let want: Vec<f32> =
        (0..15).map(|n| if (1..4).contains(&(n % 5)) { 2.0 } else { old[n] }).collect();
    assert_eq!(a.to_vec(), want);
}
