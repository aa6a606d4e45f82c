//! Graphs deeper than any thread's stack: a loop of 200,000 lazy operations in manual evaluation
//! mode, read and dropped unread, with and without other handles to its intermediate nodes; the
//! same loop with automatic evaluation; wide trees and many outputs that one kernel cannot take.
//! Every test runs on the default thread stack.
//!
//! Manual evaluation and the memory counters are process-wide, so the tests of this file take
//! turns through the lock that every test of this binary takes (`serial`).

use crate::common;

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use common::*;
use emberfire as ef;
use emberfire::{dim4, Array};

/// Levels of the deep chains: far more than a recursion per level could survive.
const LEVELS: usize = 200_000;

/// Elements of the arrays of the deep chains.
const N: usize = 257;

/// This test's turn: the binary's `serial` lock, which every test of it takes.
fn turn() -> MutexGuard<'static, ()> {
    crate::serial()
}

/// Sets manual evaluation for the life of the guard, and puts back what was there before
/// even if the test panics.
struct ManualEval(bool);

impl ManualEval {
    fn set(flag: bool) -> ManualEval {
        let before = ef::is_manual_eval();
        ef::set_manual_eval(flag);
        ManualEval(before)
    }
}

impl Drop for ManualEval {
    fn drop(&mut self) {
        ef::set_manual_eval(self.0);
    }
}

/// Random multiples of 1/8 in [-4, 4], never all zero: f32 adds them exactly as long as the
/// sums stay below 2^21 in magnitude, so a sum of 200,000 of them has one right answer, the
/// f64 one computed on the host.
fn eighths(r: &mut Rng64, n: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..n).map(|_| r.gen_range(-32i32..=32) as f32 / 8.0).collect();
    v[0] = 1.25;
    v
}

fn rng(seed: u64) -> Rng64 {
    Rng64::seed_from_u64(seed)
}

/// `b0 + k * c` for each element, in f64.
fn reference(b0: &[f32], c: &[f32], k: usize) -> Vec<V> {
    b0.iter().zip(c).map(|(&b, &c)| V::F(b as f64 + k as f64 * c as f64)).collect()
}

/// `b = &b + c`, `levels` times, with nothing evaluated in manual mode.
fn chain(b0: &Array<f32>, c: &Array<f32>, levels: usize) -> Array<f32> {
    let mut b = b0.clone();
    for _ in 0..levels {
        b = &b + c;
    }
    b
}

/// Fails a test that took quadratic time (minutes in a debug build) rather than seconds.
fn check_time(started: Instant, what: &str) {
    let t = started.elapsed();
    assert!(t < Duration::from_secs(120), "{what} took {t:?}");
}

#[test]
fn manual_chain_of_200000_additions_is_read() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(1);
    let (b0h, ch) = (eighths(&mut r, N), eighths(&mut r, N));
    let (b0, c) = (Array::new(&b0h, dim4!(N as u64)), Array::new(&ch, dim4!(N as u64)));
    ef::device_gc();
    let buffers0 = ef::device_mem_info().1;
    let compiles0 = ef::jit_stats().compiles;
    let started = Instant::now();

    let b = chain(&b0, &c, LEVELS);
    assert!(!b.is_linear(), "manual mode evaluated on its own");
    assert_array(&b, dim4!(N as u64), &reference(&b0h, &ch, LEVELS), Tol::EXACT, "b + 200000 c");
    assert!(b.is_linear());
    check_time(started, "building, reading and evaluating the chain");
    // On CUDA the chain is cut into programs of a few structures: one kernel each, not one
    // per program.
    let compiles = ef::jit_stats().compiles - compiles0;
    assert!(compiles < 100, "{compiles} kernels compiled for one chain");

    drop(b);
    ef::device_gc();
    let buffers1 = ef::device_mem_info().1;
    assert!(
        buffers1 <= buffers0,
        "{buffers1} buffers after the chain was dropped (from {buffers0})"
    );
}

#[test]
fn manual_chain_of_200000_additions_is_dropped_unread() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(2);
    let (b0h, ch) = (eighths(&mut r, N), eighths(&mut r, N));
    let (b0, c) = (Array::new(&b0h, dim4!(N as u64)), Array::new(&ch, dim4!(N as u64)));
    let started = Instant::now();
    let b = chain(&b0, &c, LEVELS);
    drop(b);
    check_time(started, "building and dropping the chain");
    // the leaves held by the caller survive the tree that read them
    assert_eq!(b0.to_vec(), b0h);
    assert_eq!(c.to_vec(), ch);
}

#[test]
fn automatic_chain_of_200000_additions_is_read_and_dropped() {
    let _t = turn();
    let _m = ManualEval::set(false);
    let mut r = rng(3);
    let (b0h, ch) = (eighths(&mut r, N), eighths(&mut r, N));
    let (b0, c) = (Array::new(&b0h, dim4!(N as u64)), Array::new(&ch, dim4!(N as u64)));
    let started = Instant::now();
    let b = chain(&b0, &c, LEVELS);
    assert_array(&b, dim4!(N as u64), &reference(&b0h, &ch, LEVELS), Tol::EXACT, "b + 200000 c");
    // and a second chain that nobody reads
    drop(chain(&b, &c, LEVELS));
    check_time(started, "two chains with automatic evaluation");
}

/// Handles kept to intermediate nodes of a deep chain: dropping the chain unread must leave
/// their trees whole, and each of them, itself a deep tree, reads right afterwards.
#[test]
fn manual_chain_with_shared_intermediate_nodes() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(4);
    let (b0h, ch) = (eighths(&mut r, N), eighths(&mut r, N));
    let (b0, c) = (Array::new(&b0h, dim4!(N as u64)), Array::new(&ch, dim4!(N as u64)));
    let started = Instant::now();
    let every = 20_000;
    let mut kept: Vec<(usize, Array<f32>)> = Vec::new();
    let mut b = b0.clone();
    for level in 1..=LEVELS {
        b = &b + &c;
        if level % every == 0 && level < LEVELS {
            kept.push((level, b.clone()));
        }
    }
    // a branch off a kept node, sharing everything below it with the main chain
    let (fork_level, fork) = (kept[4].0 + 5_000, chain(&kept[4].1, &c, 5_000));
    drop(b);
    assert!(kept.iter().all(|(_, k)| !k.is_linear()), "a kept node was evaluated");

    // deepest first: the first read evaluates nodes that the later ones' trees share
    for (level, k) in kept.iter().rev() {
        let want = reference(&b0h, &ch, *level);
        assert_array(k, dim4!(N as u64), &want, Tol::EXACT, &format!("kept node {level}"));
    }
    let want = reference(&b0h, &ch, fork_level);
    assert_array(&fork, dim4!(N as u64), &want, Tol::EXACT, "fork");

    // and the other way round: the handles go first, then a chain that was read by none
    let b = chain(&b0, &c, LEVELS);
    let kept: Vec<Array<f32>> = (0..10).map(|i| chain(&b, &c, 10 * i)).collect();
    drop(kept);
    let want = reference(&b0h, &ch, LEVELS);
    assert_array(&b, dim4!(N as u64), &want, Tol::EXACT, "chain after its readers were dropped");
    check_time(started, "the shared chains");
}

/// Each level reads the previous one twice: counted per path, the leaves of the tree double at
/// every level, far past any integer, while the graph stays small.
#[test]
fn manual_chain_that_reuses_each_level() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(5);
    let (b0h, ch) = (eighths(&mut r, N), eighths(&mut r, N));
    let (b0, c) = (Array::new(&b0h, dim4!(N as u64)), Array::new(&ch, dim4!(N as u64)));
    let started = Instant::now();
    // (b + c) - b is c again, exactly, for these values; then one more addition
    let mut b = b0.clone();
    for _ in 0..LEVELS / 2 {
        let t = &b + &c;
        b = &(&t - &b) + &b0;
    }
    let want: Vec<V> = b0h.iter().zip(&ch).map(|(&b, &c)| V::F(b as f64 + c as f64)).collect();
    assert_array(&b, dim4!(N as u64), &want, Tol::EXACT, "((b + c) - b) + b0, repeated");
    check_time(started, "the reusing chain");
}

/// A deep lazy array fused into the operations that take a tree rather than data: a
/// reduction, a scan, a reshape, and an assignment.
#[test]
fn manual_chain_feeds_reductions_reshapes_and_assignments() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(6);
    let (rows, cols) = (16usize, 8usize);
    let n = rows * cols;
    let (b0h, ch) = (eighths(&mut r, n), eighths(&mut r, n));
    let dims = dim4!(rows as u64, cols as u64);
    let (b0, c) = (Array::new(&b0h, dims), Array::new(&ch, dims));
    let want = reference(&b0h, &ch, LEVELS);
    let want_f: Vec<f64> = want.iter().map(|v| v.f()).collect();
    let started = Instant::now();

    // Sums of these values are not exact in f32, and the order of a parallel sum is not
    // the host's: the tolerance allows n roundings of the largest partial sum.
    let sum_abs: f64 = want_f.iter().map(|x| x.abs()).sum();
    let tol = |terms: usize| Tol::x(terms as f64).scale(sum_abs);
    let total: f64 = want_f.iter().sum();
    let got = ef::sum_all(&chain(&b0, &c, LEVELS)).0;
    assert!(close(got, V::F(total), tol(n)), "sum_all: got {got}, want {total}");

    let cols_sum = ef::sum(&chain(&b0, &c, LEVELS), 0);
    let want_cols: Vec<V> =
        (0..cols).map(|j| V::F(want_f[j * rows..(j + 1) * rows].iter().sum())).collect();
    assert_array(&cols_sum, dim4!(1, cols as u64), &want_cols, tol(rows), "sum along 0");

    let acc = ef::accum(&chain(&b0, &c, LEVELS), 0);
    let mut want_acc = Vec::with_capacity(n);
    for j in 0..cols {
        let mut s = 0.0;
        for i in 0..rows {
            s += want_f[j * rows + i];
            want_acc.push(V::F(s));
        }
    }
    assert_array(&acc, dims, &want_acc, tol(rows), "accum along 0");

    let flat = ef::moddims(&chain(&b0, &c, LEVELS), dim4!(n as u64));
    assert_array(&flat, dim4!(n as u64), &want, Tol::EXACT, "moddims");

    // into rows 2..2+rows of a taller array
    let tall = dim4!(rows as u64 + 4, cols as u64);
    let mut target = ef::constant(0.5f32, tall);
    let seqs = [ef::Seq::new(2, rows as i32 + 1, 1), ef::Seq::default()];
    ef::assign_seq(&mut target, &seqs, &chain(&b0, &c, LEVELS));
    let want_t: Vec<V> = (0..(rows + 4) * cols)
        .map(|i| {
            let (row, col) = (i % (rows + 4), i / (rows + 4));
            if (2..2 + rows).contains(&row) {
                want[col * rows + row - 2]
            } else {
                V::F(0.5)
            }
        })
        .collect();
    assert_array(&target, tall, &want_t, Tol::EXACT, "assign_seq");
    check_time(started, "the fused consumers");
}

/// A balanced sum of 1024 distinct arrays in manual mode: shallow, but with far more inputs
/// than one kernel's parameters can take, so it is cut by its leaves, many sub-trees at once.
#[test]
fn manual_tree_of_1024_inputs() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(7);
    let inputs: Vec<Vec<f32>> = (0..1024).map(|_| eighths(&mut r, N)).collect();
    let mut level: Vec<Array<f32>> =
        inputs.iter().map(|h| Array::new(h, dim4!(N as u64))).collect();
    while level.len() > 1 {
        level = level.chunks(2).map(|p| &p[0] + &p[1]).collect();
    }
    let want: Vec<V> = (0..N).map(|i| V::F(inputs.iter().map(|h| h[i] as f64).sum())).collect();
    assert_array(&level[0], dim4!(N as u64), &want, Tol::EXACT, "sum of 1024 arrays");
}

/// `eval_multiple` of more and larger trees than one kernel can take together: they are
/// computed in several programs, each output right.
#[test]
fn eval_multiple_of_many_trees() {
    let _t = turn();
    let _m = ManualEval::set(true);
    let mut r = rng(8);
    let pool: Vec<Vec<f32>> = (0..64).map(|_| eighths(&mut r, N)).collect();
    let arrays: Vec<Array<f32>> = pool.iter().map(|h| Array::new(h, dim4!(N as u64))).collect();
    let scalars: Vec<f32> = (0..100).map(|j| (j as f32 - 50.0) / 8.0).collect();
    // 100 trees of 40 inputs each, from a pool of 64, plus a scalar of its own
    let mut outs = Vec::new();
    let mut want = Vec::new();
    for (j, &k) in scalars.iter().enumerate() {
        let picks: Vec<usize> = (0..40).map(|i| (j * 7 + i) % 64).collect();
        let mut t = ef::constant(k, dim4!(N as u64));
        for &p in &picks {
            t = &t + &arrays[p];
        }
        outs.push(t);
        want.push(
            (0..N)
                .map(|i| V::F(k as f64 + picks.iter().map(|&p| pool[p][i] as f64).sum::<f64>()))
                .collect::<Vec<V>>(),
        );
    }
    ef::eval_multiple(outs.iter().collect());
    for (j, (o, w)) in outs.iter().zip(&want).enumerate() {
        assert!(o.is_linear(), "output {j} was not evaluated");
        assert_array(o, dim4!(N as u64), w, Tol::EXACT, &format!("output {j}"));
    }
}
