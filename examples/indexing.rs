//! The code of the book's "Indexing" chapter: sequences and views, rows and columns, index
//! arrays, lookup, assignment and copy-on-write, and the `seq!`/`view!`/`eval!` macros. Every
//! result is checked, so running the example verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: seq
    // a 4x5 matrix whose element (i, j) is 10 i + j
    let values: Vec<i32> = (0..20).map(|n| 10 * (n % 4) + n / 4).collect();
    let a = Array::new(&values, dim4!(4, 5));

    // rows 1 to 3, every other column from the first
    let sub = index(&a, &[Seq::new(1, 3, 1), Seq::new(0, 4, 2)]);
    assert_eq!(sub.dims(), dim4!(3, 3));
    assert_eq!(sub.to_vec(), vec![10, 20, 30, 12, 22, 32, 14, 24, 34]);

    // Seq::default() is the whole dimension; negative positions count from the end, and a
    // negative step walks backwards
    let last_col = index(&a, &[Seq::default(), Seq::new(-1, -1, 1)]);
    assert_eq!(last_col.to_vec(), vec![4, 14, 24, 34]);
    let flipped = index(&a, &[Seq::new(-1, 0, -1), Seq::new(0, 0, 1)]);
    assert_eq!(flipped.to_vec(), vec![30, 20, 10, 0]);
    // ANCHOR_END: seq

    // ANCHOR: views
    // Indexing by sequences copies nothing: the result is a view of `a`'s memory, with its
    // own offset and strides (negative for a negative step).
    assert_eq!(sub.offset(), 1); // element (1, 0) of a
    assert!(!sub.is_linear());
    // Views feed expressions and reductions directly, read in place.
    let scaled: Array<i32> = &sub * 2 + 1;
    assert_eq!(scaled.to_vec()[0], 21);
    let (total, _) = sum_all(&flipped);
    assert_eq!(total, 60);
    // A view keeps the memory alive after the array it views is gone.
    let column = col(&a, 2);
    drop(a);
    assert_eq!(column.to_vec(), vec![2, 12, 22, 32]);
    // ANCHOR_END: views

    // ANCHOR: helpers
    let m = Array::new(&values, dim4!(4, 5));
    assert_eq!(row(&m, -1).to_vec(), vec![30, 31, 32, 33, 34]);
    assert_eq!(rows(&m, 1, 2).dims(), dim4!(2, 5));
    // first > last with a negative last: the rows are taken backwards
    assert_eq!(col(&rows(&m, -1, -2), 0).to_vec(), vec![30, 20]);
    assert_eq!(cols(&m, 3, 4).to_vec()[..4], [3, 13, 23, 33]);
    let cube = Array::new(&(0..8).collect::<Vec<u8>>(), dim4!(2, 2, 2));
    assert_eq!(slice(&cube, 1).to_vec(), vec![4, 5, 6, 7]);
    assert_eq!(slices(&cube, -1, -2).dims(), dim4!(2, 2, 2));
    // one sequence on a matrix indexes it as one column, in column-major order
    assert_eq!(index(&m, &[Seq::new(3, 5, 1)]).to_vec(), vec![30, 1, 11]);
    // ANCHOR_END: helpers

    // ANCHOR: gather
    // An Indexer takes a Seq or an index array per dimension.
    let which_rows = Array::new(&[3u32, 0, 3], dim4!(3));
    let first_two_cols = Seq::new(0, 1, 1);
    let mut idx = Indexer::default();
    idx.set_index(&which_rows, 0, None);
    idx.set_index(&first_two_cols, 1, None);
    let picked = index_gen(&m, idx);
    assert_eq!(picked.dims(), dim4!(3, 2));
    assert_eq!(picked.to_vec(), vec![30, 0, 30, 31, 1, 31]);

    // lookup takes positions along one dimension; reals index too (truncated)
    let cols_wanted = Array::new(&[4.0f32, 0.0], dim4!(2));
    assert_eq!(lookup(&m, &cols_wanted, 1).to_vec(), vec![4, 14, 24, 34, 0, 10, 20, 30]);

    // An index outside the dimension is folded back into it, never read out of bounds:
    // -1 reads position 0, and 4 (one past the end of 4 rows) reads position 3.
    let outside = Array::new(&[-1i64, 4], dim4!(2));
    assert_eq!(lookup(&m, &outside, 0).to_vec()[..2], [0, 30]);
    // ANCHOR_END: gather

    // ANCHOR: assign
    let mut grid = constant(0.0f32, dim4!(3, 4));
    let keep = grid.clone(); // shares grid's memory

    // the value has the region's shape...
    let top_right = [Seq::new(0.0, 1.0, 1.0), Seq::new(2.0, 3.0, 1.0)];
    assign_seq(&mut grid, &top_right, &constant(1.0f32, dim4!(2, 2)));
    // ...or is a single element, written everywhere in the region...
    set_row(&mut grid, &constant(5.0f32, dim4!(1)), -1);
    // ...or, for a vector region, a vector of the same length in any orientation
    set_col(&mut grid, &Array::new(&[7.0f32, 8.0, 9.0], dim4!(1, 3)), 0);
    assert_eq!(grid.to_vec(), vec![7.0, 8.0, 9.0, 0.0, 0.0, 5.0, 1.0, 1.0, 5.0, 1.0, 1.0, 5.0]);

    // copy-on-write: the clone made before the assignments still sees the old values
    assert_eq!(keep.to_vec(), vec![0.0; 12]);

    // A lazy value is computed as it is written: `x * 2 + 1` is never stored on its own.
    let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(1, 4));
    set_row(&mut grid, &(&x * 2.0f32 + 1.0f32), 1);
    assert_eq!(row(&grid, 1).to_vec(), vec![3.0, 5.0, 7.0, 9.0]);
    // ANCHOR_END: assign

    // ANCHOR: scatter
    // assign_gen writes through an Indexer; with an index array the values are scattered.
    let mut hist = constant(0u32, dim4!(5));
    let at = Array::new(&[4u8, 0, 2], dim4!(3));
    let mut idx = Indexer::default();
    idx.set_index(&at, 0, None);
    assign_gen(&mut hist, &idx, &Array::new(&[40u32, 1, 20], dim4!(3)));
    assert_eq!(hist.to_vec(), vec![1, 0, 20, 0, 40]);
    // ANCHOR_END: scatter

    // ANCHOR: macros
    let m = Array::new(&values, dim4!(4, 5));
    // seq!(begin:end:step) is a Seq<i32>; seq!() spans
    assert_eq!(seq!(1:3:1), Seq::new(1, 3, 1));
    // view! with literal sequences is `index`, with variables `index_gen`
    let corner = view!(m[2:3:1, -2:-1:1]);
    assert_eq!(corner.to_vec(), vec![23, 33, 24, 34]);
    let r = Array::new(&[1u16, 0], dim4!(2));
    let all = seq!();
    assert_eq!(view!(m[r, all]).dims(), dim4!(2, 5));

    // eval! assigns into an indexed array...
    let mut target = constant(0i32, dim4!(4, 5));
    eval!(target[0:1:1, 0:1:1] = m[2:3:1, 3:4:1]);
    assert_eq!(view!(target[0:1:1, 0:1:1]).to_vec(), vec![23, 33, 24, 34]);
    // ...and evaluates several arrays together
    let (p, q): (Array<i32>, Array<i32>) = (&m + 1, &m * 2);
    eval!(&p, &q);
    assert!(p.is_linear() && q.is_linear());
    // ANCHOR_END: macros

    println!("indexing: all results checked");
}
