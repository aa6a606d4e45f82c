//! The code of the book's "Lazy evaluation" chapter: when work happens, evaluating several
//! arrays together, loops, manual evaluation, and the element-wise rules for integers and casts.
//! Every result is checked, so running the example verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: lazy
    let x = Array::new(&[0.0f32, 0.5, 1.0, 1.5], dim4!(4));
    let y = Array::new(&[2.0f32, 2.0, 2.0, 2.0], dim4!(4));

    // Building the expression computes nothing: `z` is a node of the expression graph.
    let z = sin(&x) * cos(&y) + &x * &y - 0.5f32;
    assert!(!z.is_linear()); // not evaluated yet, so there is no memory to be linear

    // A value is needed: the whole tree runs as one fused pass, and `z` now holds data.
    z.eval();
    assert!(z.is_linear());

    let expected: Vec<f32> =
        [0.0f32, 0.5, 1.0, 1.5].iter().map(|&v| v.sin() * 2f32.cos() + v * 2.0 - 0.5).collect();
    for (got, want) in z.to_vec().iter().zip(&expected) {
        assert!((got - want).abs() < 1e-6, "{got} != {want}");
    }
    // ANCHOR_END: lazy

    // ANCHOR: multiple
    // Two results that share a sub-expression: evaluated together, `t` is computed once and
    // both outputs are written in the same pass.
    let t = exp(&x) * 3.0f32;
    let (lo, hi) = (&t - 1.0f32, &t + 1.0f32);
    eval_multiple(vec![&lo, &hi]);
    for (l, h) in lo.to_vec().iter().zip(hi.to_vec()) {
        assert!((h - l - 2.0).abs() < 1e-5);
    }
    // ANCHOR_END: multiple

    // ANCHOR: reduce
    // A reduction computes its element-wise input as it goes: on the CPU, the products
    // below are never written to memory, and `x` and `y` are each read once.
    // 2 * (0 + 0.5 + 1 + 1.5) = 6
    let dot = sum_all(&(&x * &y));
    assert_eq!(dot, (6.0, 0.0));
    // ANCHOR_END: reduce

    // ANCHOR: siblings
    // Reductions along a dimension that read a common expression share one pass when they
    // are computed together: `w` below is computed once per element for all three results
    // and never stored. `eval_multiple` computes them together; reading one of them would
    // too, as they are pending at the time.
    let m = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    let w = &m * 2.0f32;
    let (s, sq, top) = (sum(&w, 1), sum(&(&w * &w), 1), max(&w, 1));
    eval_multiple(vec![&s, &sq, &top]);
    // rows of w: [2, 6, 10] and [4, 8, 12]
    assert_eq!(s.to_vec(), vec![18.0, 24.0]);
    assert_eq!(sq.to_vec(), vec![140.0, 224.0]);
    assert_eq!(top.to_vec(), vec![10.0, 12.0]);
    // ANCHOR_END: siblings

    // ANCHOR: loop
    // A loop that grows a tree. emberfire evaluates a tree that grows taller than a fixed
    // height, so memory stays bounded and the loop needs no explicit `eval`.
    let step = constant(0.25f32, dim4!(4));
    let mut acc = constant(0.0f32, dim4!(4));
    for _ in 0..1000 {
        acc = &acc + &step;
    }
    assert_eq!(acc.to_vec(), vec![250.0; 4]);
    // ANCHOR_END: loop

    // ANCHOR: manual
    // Manual evaluation turns the heuristics off: trees run only when a value is read or
    // `eval` is called. It is a process-wide switch.
    set_manual_eval(true);
    let mut acc = constant(1.0f32, dim4!(2));
    for _ in 0..10 {
        acc = &acc * 2.0f32;
    }
    acc.eval();
    set_manual_eval(false);
    assert_eq!(acc.to_vec(), vec![1024.0, 1024.0]);
    // ANCHOR_END: manual

    // ANCHOR: integers
    let a = Array::new(&[7i32, -7, i32::MAX], dim4!(3));
    // Integer division and remainder by zero give 0 (no trap, no undefined value).
    assert_eq!((&a / 0i32).to_vec(), vec![0, 0, 0]);
    assert_eq!((&a % 0i32).to_vec(), vec![0, 0, 0]);
    // Integer arithmetic wraps.
    assert_eq!((&a + 1i32).to_vec(), vec![8, -6, i32::MIN]);
    // Shifts by the bit width or more (or by a negative amount) shift everything out:
    // left shifts give 0, right shifts give 0 or, for negative values, -1.
    assert_eq!((&a << 40i32).to_vec(), vec![0, 0, 0]);
    assert_eq!((&a >> 40i32).to_vec(), vec![0, -1, 0]);
    assert_eq!((&a >> 1i32).to_vec(), vec![3, -4, i32::MAX >> 1]);
    // ANCHOR_END: integers

    // ANCHOR: casts
    let f = Array::new(&[2.9f64, -2.9, 1e10, f64::NAN], dim4!(4));
    // Floats to integers truncate toward zero and saturate; NaN gives 0.
    assert_eq!(f.cast::<i32>().to_vec(), vec![2, -2, i32::MAX, 0]);
    // Integers to narrower integers wrap.
    assert_eq!(Array::new(&[257i32, -1], dim4!(2)).cast::<u8>().to_vec(), vec![1, 255]);
    // Anything to bool is "not zero"; bool to a number is 0 or 1.
    let b = Array::new(&[0.0f32, -0.5, 3.0], dim4!(3)).cast::<bool>();
    assert_eq!(b.to_vec(), vec![false, true, true]);
    assert_eq!(b.cast::<u16>().to_vec(), vec![0, 1, 1]);
    // ANCHOR_END: casts
}
