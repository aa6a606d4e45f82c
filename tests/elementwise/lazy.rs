//! Lazy evaluation: random expression DAGs (shared sub-expressions, broadcasting leaves,
//! constants, ranges, casts, selects) evaluated fused, one operation at a time, and with
//! `eval_multiple`, all against host references; and arrays used from several threads.

use crate::common;

use std::sync::Arc;

use common::*;
use emberfire as ef;
use emberfire::{dim4, Array, Dim4};

const CASES: u32 = 24;

/// A value of a random DAG: its shape, its elements computed on the host, and the array.
struct Val<T: ef::HasAfEnum> {
    dims: Dim4,
    host: Vec<T>,
    arr: Array<T>,
}

/// Some dimensions of `d` replaced by 1, so that leaves broadcast against each other.
fn reduced(d: Dim4, r: &mut Rng64) -> Dim4 {
    let mut x = d;
    for k in 0..4 {
        if r.gen_bool(0.25) {
            x[k] = 1;
        }
    }
    x
}

/// A leaf: a random array, a constant, a range or an iota, of a shape that broadcasts to `d`.
fn leaf<T: Elem>(d: Dim4, r: &mut Rng64, value: &dyn Fn(&mut Rng64) -> T) -> Val<T> {
    let dims = reduced(d, r);
    let n = dims.elements() as usize;
    match r.gen_range(0..6) {
        0 => {
            let v = value(r);
            Val { dims, host: vec![v; n], arr: ef::constant(v, dims) }
        }
        1 => {
            let k = r.gen_range(0..4usize);
            let host = (0..n).map(|i| T::from_v(V::I(coords(dims, i)[k] as i128))).collect();
            Val { dims, host, arr: ef::range::<T>(dims, k as i32) }
        }
        2 => {
            let host = (0..n).map(|i| T::from_v(V::I(i as i128))).collect();
            Val { dims, host, arr: ef::iota::<T>(dims, Dim4::default()) }
        }
        _ => {
            let host = gen_vec(r, n, value);
            let arr = Array::new(&host, dims);
            Val { dims, host, arr }
        }
    }
}

/// Applies a binary operation to two values on the host and in emberfire.
fn bin<T: Elem>(
    a: &Val<T>,
    b: &Val<T>,
    host: impl Fn(T, T) -> T,
    op: impl Fn(&Array<T>, &Array<T>) -> Array<T>,
) -> Val<T> {
    let dims = bcast(a.dims, b.dims);
    let host = (0..dims.elements() as usize)
        .map(|i| host(a.host[bidx(dims, a.dims, i)], b.host[bidx(dims, b.dims, i)]))
        .collect();
    Val { dims, host, arr: op(&a.arr, &b.arr) }
}

fn un<T: Elem>(a: &Val<T>, host: impl Fn(T) -> T, op: impl Fn(&Array<T>) -> Array<T>) -> Val<T> {
    Val { dims: a.dims, host: a.host.iter().map(|&x| host(x)).collect(), arr: op(&a.arr) }
}

/// `cond(a, b) ? c : d` through `select`.
fn sel<T: Elem>(
    vals: [&Val<T>; 4],
    cond: impl Fn(T, T) -> bool,
    op: impl Fn(&Array<T>, &Array<T>) -> Array<bool>,
) -> Val<T> {
    let dims = vals.iter().fold(vals[0].dims, |acc, v| bcast(acc, v.dims));
    let at = |v: &Val<T>, i: usize| v.host[bidx(dims, v.dims, i)];
    let host = (0..dims.elements() as usize)
        .map(|i| if cond(at(vals[0], i), at(vals[1], i)) { at(vals[2], i) } else { at(vals[3], i) })
        .collect();
    let c = op(&vals[0].arr, &vals[1].arr);
    Val { dims, host, arr: ef::select(&vals[2].arr, &c, &vals[3].arr) }
}

/// A random i32 DAG over shape `d`: every new value combines earlier ones (so values are
/// shared), with `.eval()` after each operation when `stepwise`.
fn i32_dag(d: Dim4, seed: u64, stepwise: bool) -> Vec<Val<i32>> {
    let mut r = Rng64::seed_from_u64(seed);
    let small = |r: &mut Rng64| if r.gen_bool(0.5) { i32::small(r) } else { i32::any(r) };
    let mut vals: Vec<Val<i32>> = (0..4).map(|_| leaf(d, &mut r, &small)).collect();
    for _ in 0..r.gen_range(8..20) {
        let n = vals.len();
        let (i, j, k, l) =
            (r.gen_range(0..n), r.gen_range(0..n), r.gen_range(0..n), r.gen_range(0..n));
        let (a, b) = (&vals[i], &vals[j]);
        let v = match r.gen_range(0..11) {
            0 => bin(a, b, i32::wrapping_add, |x, y| ef::add(x, y, true)),
            1 => bin(a, b, i32::wrapping_sub, |x, y| ef::sub(x, y, true)),
            2 => bin(a, b, i32::wrapping_mul, |x, y| ef::mul(x, y, true)),
            3 => bin(a, b, |x, y| x ^ y, |x, y| ef::bitxor(x, y, true)),
            4 => bin(a, b, i32::min, |x, y| ef::minof(x, y, true)),
            5 => bin(
                a,
                b,
                |x, y| if y == 0 { 0 } else { x.wrapping_rem(y) },
                |x, y| ef::rem(x, y, true),
            ),
            6 => {
                let s = r.gen_range(0..31);
                un(a, move |x| x >> s, move |x| x >> s)
            }
            7 => un(a, i32::wrapping_neg, |x| -x),
            // through i64 and back: wraps to i32
            8 => bin(
                a,
                b,
                |x, y| (x as i64 * 3 + y as i64) as i32,
                |x, y| ef::add(&(x.cast::<i64>() * 3i64), &y.cast::<i64>(), true).cast::<i32>(),
            ),
            9 => sel([a, b, &vals[k], &vals[l]], |x, y| x < y, |x, y| ef::lt(x, y, true)),
            _ => un(a, |x| x.wrapping_add(7), |x| x + 7i32),
        };
        if stepwise {
            v.arr.eval();
        }
        vals.push(v);
    }
    vals
}

/// A random f64 DAG of positive values (no cancellation, so that results are comparable to a
/// relative tolerance on every backend).
fn f64_dag(d: Dim4, seed: u64, stepwise: bool) -> Vec<Val<f64>> {
    let mut r = Rng64::seed_from_u64(seed);
    let pos = |r: &mut Rng64| r.gen_range(0.5..2.0);
    let mut vals: Vec<Val<f64>> = (0..4)
        .map(|_| {
            let mut v = leaf(d, &mut r, &pos);
            // ranges and iotas start at 0: shift them to be positive
            v.host.iter_mut().for_each(|x| *x += 1.0);
            v.arr = &v.arr + 1.0f64;
            v
        })
        .collect();
    for _ in 0..r.gen_range(8..20) {
        let n = vals.len();
        let (i, j, k, l) =
            (r.gen_range(0..n), r.gen_range(0..n), r.gen_range(0..n), r.gen_range(0..n));
        let (a, b) = (&vals[i], &vals[j]);
        let v = match r.gen_range(0..10) {
            0 => bin(a, b, |x, y| x + y, |x, y| ef::add(x, y, true)),
            1 => bin(a, b, |x, y| x * y, |x, y| ef::mul(x, y, true)),
            2 => bin(a, b, |x, y| x / y, |x, y| ef::div(x, y, true)),
            3 => bin(a, b, f64::max, |x, y| ef::maxof(x, y, true)),
            4 => un(a, f64::sqrt, ef::sqrt),
            5 => un(a, |x| 1.0 + x.sin() * x.sin(), |x| 1.0f64 + ef::sin(x) * ef::sin(x)),
            6 => un(a, |x| (-x).exp() + 0.5, |x| ef::exp(&-x) + 0.5f64),
            7 => un(a, |x| x as f32 as f64, |x| x.cast::<f32>().cast::<f64>()),
            8 => sel([a, b, &vals[k], &vals[l]], |x, y| x > y, |x, y| ef::gt(x, y, true)),
            _ => un(a, |x| x.powf(0.75), |x| ef::pow(x, &0.75f64, false)),
        };
        if stepwise {
            v.arr.eval();
        }
        vals.push(v);
    }
    vals
}

fn compare<T: Elem>(v: &Val<T>, got: &Array<T>, tol: Tol, what: &str) -> Result<(), String> {
    if got.dims() != v.dims {
        return Err(format!("{what}: dims {} want {}", got.dims(), v.dims));
    }
    check_all(&got.to_vec(), &vs(&v.host), tol, &|i| format!("{what}, element {i} of {}", v.dims))
}

/// Fused, one by one, and several outputs at once: all equal the host reference.
#[test]
fn fused_and_stepwise_dags_agree_with_the_host() {
    run_cases(CASES, |d, s| {
        let fused = i32_dag(d, s, false);
        let step = i32_dag(d, s, true);
        let n = fused.len();
        // the last values, fused together by eval_multiple
        let last: Vec<&Array<i32>> = fused[n - 3..].iter().map(|v| &v.arr).collect();
        ef::eval_multiple(last);
        for k in 0..n {
            compare(&fused[k], &fused[k].arr, Tol::EXACT, &format!("i32 fused value {k}"))?;
            compare(&step[k], &step[k].arr, Tol::EXACT, &format!("i32 stepwise value {k}"))?;
        }
        let fused = f64_dag(d, s, false);
        let step = f64_dag(d, s, true);
        let tol = Tol { factor: 1e7, ..Tol::EXACT }; // 1e-6 relative: the f32 round trip may
                                                     // round differently after an ulp change
        for k in (0..fused.len()).rev() {
            compare(&fused[k], &fused[k].arr, tol, &format!("f64 fused value {k}"))?;
            compare(&step[k], &step[k].arr, tol, &format!("f64 stepwise value {k}"))?;
            // fused and stepwise results are the same computation
            compare(&fused[k], &step[k].arr, tol, &format!("f64 stepwise vs fused value {k}"))?;
        }
        Ok(())
    });
}

#[test]
fn eval_multiple_computes_shared_subexpressions_once_and_all_outputs() {
    let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(3, 2));
    let t = &x * 2.0f32 + 1.0f32;
    let (a, b, c) = (&t + 1.0f32, &t - 1.0f32, ef::sqrt(&t));
    // another shape: evaluated in its own pass
    let row = Array::new(&[1.0f32, 4.0], dim4!(1, 2)) * 1.0f32;
    ef::eval_multiple(vec![&a, &b, &c, &a, &row]);
    for v in [&a, &b, &c, &row] {
        assert!(v.is_linear(), "evaluated by eval_multiple");
    }
    let tv: Vec<f32> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].iter().map(|x| x * 2.0 + 1.0).collect();
    assert_eq!(a.to_vec(), tv.iter().map(|x| x + 1.0).collect::<Vec<_>>());
    assert_eq!(b.to_vec(), tv.iter().map(|x| x - 1.0).collect::<Vec<_>>());
    assert_eq!(c.to_vec(), tv.iter().map(|x| x.sqrt()).collect::<Vec<_>>());
    assert_eq!(row.to_vec(), vec![1.0, 4.0]);
    // nothing to do
    ef::eval_multiple::<f32>(vec![]);
    ef::eval_multiple(vec![&x]);
    assert_eq!(x.to_vec(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

/// A lazy array shared between trees is computed once and then read by both.
#[test]
fn evaluating_a_shared_node_updates_every_tree_that_uses_it() {
    let x = Array::new(&[1i32, 2, 3], dim4!(3));
    let shared = &x * 10i32;
    let p = &shared + 1i32;
    let q = &shared - &x;
    shared.eval();
    assert!(shared.is_linear());
    assert_eq!(p.to_vec(), vec![11, 21, 31]);
    assert_eq!(q.to_vec(), vec![9, 18, 27]);
    assert_eq!(shared.to_vec(), vec![10, 20, 30]);
}

/// Eight threads build and evaluate different trees at the same time.
#[test]
fn eight_threads_compute_different_trees() {
    let handles: Vec<_> = (0..8u64)
        .map(|t| {
            std::thread::spawn(move || -> Result<(), String> {
                let d = [dim4!(10007), dim4!(5, 3, 7, 97), dim4!(64, 64), dim4!(3, 1, 4)]
                    [t as usize % 4];
                for round in 0..3 {
                    let vals = i32_dag(d, 1000 * t + round, round == 1);
                    for (k, v) in vals.iter().enumerate() {
                        compare(
                            v,
                            &v.arr,
                            Tol::EXACT,
                            &format!("thread {t} round {round} value {k}"),
                        )?;
                    }
                }
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread panicked").unwrap();
    }
}

/// One lazy array read by eight threads at once: every thread sees the same values.
#[test]
fn eight_threads_share_one_lazy_array() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let n = 20_000;
    let host: Vec<f64> = (0..n).map(|i| i as f64 * 0.001).collect();
    let x = Array::new(&host, dim4!(n));
    let shared = Arc::new(ef::sin(&x) * 2.0f64 + &x);
    assert_send_sync(&*shared);
    let want: Vec<f64> = host.iter().map(|v| v.sin() * 2.0 + v).collect();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (shared, want) = (Arc::clone(&shared), want.clone());
            std::thread::spawn(move || {
                let mine = &*shared + t as f64;
                let got = mine.to_vec();
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - (w + t as f64)).abs() <= 1e-12 * (w + t as f64).abs().max(1.0),
                        "thread {t} element {i}"
                    );
                }
                shared.to_vec()
            })
        })
        .collect();
    for h in handles {
        let got = h.join().expect("thread panicked");
        assert_eq!(got.len(), n);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0));
        }
    }
    // an array moved into a thread and back
    let a = Array::new(&[1u8, 2, 3], dim4!(3));
    let b = std::thread::spawn(move || &a + 1u8).join().unwrap();
    assert_eq!(b.to_vec(), vec![2, 3, 4]);
}

/// Trees that read more inputs than one kernel may take (balanced and as a chain) are split
/// by the evaluation heuristics and still compute the right values.
#[test]
fn trees_with_many_inputs() {
    let n = 37;
    let inputs: Vec<Vec<i64>> =
        (0..100).map(|k| (0..n).map(|i| (k * 1000 + i) as i64).collect()).collect();
    let arrays: Vec<Array<i64>> = inputs.iter().map(|v| Array::new(v, dim4!(n))).collect();
    let want: Vec<i64> = (0..n).map(|i| inputs.iter().map(|v| v[i]).sum()).collect();
    // balanced: pairwise sums, level by level
    let mut level = arrays.clone();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|p| if p.len() == 2 { &p[0] + &p[1] } else { p[0].clone() })
            .collect();
    }
    assert_eq!(level[0].to_vec(), want);
    // a chain, with each input used twice: sum + x - x
    let mut acc = ef::constant(0i64, dim4!(n));
    for a in &arrays {
        acc = &(&acc + a) + &(a - a);
    }
    assert_eq!(acc.to_vec(), want);
    // a select of selects over many different inputs
    let mut s = arrays[0].clone();
    for (k, a) in arrays.iter().enumerate().skip(1) {
        let cond = ef::lt(&ef::range::<i64>(dim4!(n), 0), &((k % n) as i64), false);
        s = ef::select(&s, &cond, a);
    }
    let want: Vec<i64> = (0..n)
        .map(|i| {
            // the last k whose condition is false for element i wins, else input 0
            (1..100).rev().find(|&k| i >= k % n).map_or(inputs[0][i], |k| inputs[k][i])
        })
        .collect();
    assert_eq!(s.to_vec(), want);
}

/// Shapes with a dimension of 0 go through every kind of node without computing anything.
#[test]
fn empty_trees() {
    let e = Array::<f32>::new(&[], dim4!(3, 0, 2));
    let t = ef::sin(&e) * 2.0f32 + ef::range::<f32>(dim4!(3, 0, 2), 2);
    let u = ef::select(&t, &ef::gt(&t, &0.0f32, false), &e).cast::<i16>();
    u.eval();
    assert_eq!((u.dims(), u.to_vec()), (dim4!(3, 0, 2), vec![]));
    assert!(ef::iota::<u8>(dim4!(0), dim4!(3)).is_empty());
}
