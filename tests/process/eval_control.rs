//! What decides when trees are evaluated: the height heuristic that keeps `b = &b + &c` loops
//! bounded, and manual evaluation mode. Both, and the memory counters these tests read, are
//! process-wide, so the tests of this file take turns through the lock that every test of this
//! binary takes (`serial`).

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use emberfire as ef;
use emberfire::{dim4, Array};

/// This test's turn: the binary's `serial` lock, which every test of it takes.
fn turn() -> MutexGuard<'static, ()> {
    crate::serial()
}

/// Turns manual evaluation off again even if the test panics.
struct ManualEval;

impl ManualEval {
    fn on() -> ManualEval {
        ef::set_manual_eval(true);
        ManualEval
    }
}

impl Drop for ManualEval {
    fn drop(&mut self) {
        ef::set_manual_eval(false);
    }
}

/// Values that f32 adds exactly, so the result of the loop is known exactly.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let b: Vec<f32> = (0..n).map(|i| (i % 11) as f32 - 5.0).collect();
    let c: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.25 - 0.75).collect();
    (b, c)
}

/// Runs `b = &b + &c` `iterations` times; returns b and how many times the previous value had
/// been evaluated by the time the next one was built.
fn add_loop(b0: &[f32], c: &Array<f32>, iterations: usize) -> (Array<f32>, usize, usize) {
    let mut b = Array::new(b0, c.dims());
    let mut evaluated = 0;
    let mut max_buffers = 0;
    for i in 0..iterations {
        let prev = b.clone();
        b = &b + c;
        // (the first `prev` is the input, which is data from the start)
        if i > 0 && prev.is_linear() {
            evaluated += 1;
        }
        max_buffers = max_buffers.max(ef::device_mem_info().1);
    }
    (b, evaluated, max_buffers)
}

#[test]
fn a_loop_of_additions_stays_shallow_small_and_correct() {
    let _t = turn();
    let n = 1000;
    let (b0, ch) = inputs(n);
    let c = Array::new(&ch, dim4!(n));
    ef::device_gc();
    let (bytes0, buffers0, _, _) = ef::device_mem_info();
    let start = Instant::now();
    let (b, evaluated, max_buffers) = add_loop(&b0, &c, 1000);
    b.eval();
    let elapsed = start.elapsed();
    let want: Vec<f32> = (0..n).map(|i| b0[i] + 1000.0 * ch[i]).collect();
    assert_eq!(b.to_vec(), want);
    // the heuristic evaluated the growing tree from time to time (every 30-odd iterations)
    assert!(evaluated >= 1000 / 64, "only {evaluated} evaluations in 1000 iterations");
    assert!(evaluated < 1000, "every iteration evaluated: the graph is not lazy at all");
    // intermediate results were freed as the loop went: a handful of buffers at any time
    assert!(
        max_buffers <= buffers0 + 8,
        "{max_buffers} buffers alive during the loop (from {buffers0})"
    );
    ef::device_gc();
    let (bytes1, buffers1, _, _) = ef::device_mem_info();
    assert!(buffers1 <= buffers0 + 3, "{buffers1} buffers after the loop (from {buffers0})");
    assert!(bytes1 <= bytes0 + 3 * n * 4, "{bytes1} bytes after the loop (from {bytes0})");
    assert!(elapsed < Duration::from_secs(20), "1000 iterations took {elapsed:?}");
    drop(b);
    drop(c);
}

/// Twenty thousand iterations: a graph that grew without bound would overflow the stack when
/// evaluated or dropped, and its evaluation would take quadratic time.
#[test]
fn a_long_loop_completes() {
    let _t = turn();
    let n = 64;
    let (b0, ch) = inputs(n);
    let c = Array::new(&ch, dim4!(n));
    let start = Instant::now();
    let (b, _, max_buffers) = add_loop(&b0, &c, 20_000);
    let want: Vec<f32> = (0..n).map(|i| b0[i] + 20_000.0 * ch[i]).collect();
    assert_eq!(b.to_vec(), want);
    assert!(max_buffers < 64, "{max_buffers} buffers alive during the loop");
    assert!(start.elapsed() < Duration::from_secs(30), "took {:?}", start.elapsed());
}

#[test]
fn manual_eval_evaluates_only_when_asked() {
    let _t = turn();
    assert!(!ef::is_manual_eval());
    let n = 100;
    let (b0, ch) = inputs(n);
    let c = Array::new(&ch, dim4!(n));
    {
        let _m = ManualEval::on();
        assert!(ef::is_manual_eval());
        let (b, evaluated, _) = add_loop(&b0, &c, 200);
        assert_eq!(evaluated, 0, "manual mode evaluated on its own");
        assert!(!b.is_linear());
        b.eval();
        assert!(b.is_linear());
        let want: Vec<f32> = (0..n).map(|i| b0[i] + 200.0 * ch[i]).collect();
        assert_eq!(b.to_vec(), want);
        // reading a value still evaluates
        let (d, _, _) = add_loop(&b0, &c, 50);
        let want: Vec<f32> = (0..n).map(|i| b0[i] + 50.0 * ch[i]).collect();
        assert_eq!(d.to_vec(), want);
    }
    assert!(!ef::is_manual_eval());
    let (_, evaluated, _) = add_loop(&b0, &c, 200);
    assert!(evaluated > 0, "automatic evaluation did not resume");
}

/// A clone is another handle to the same memory; a copy has its own.
#[test]
fn clone_shares_memory_and_copy_allocates() {
    let _t = turn();
    let n = 1000;
    let a = Array::new(&vec![1.5f32; n], dim4!(n));
    ef::device_gc();
    let (bytes0, buffers0, _, _) = ef::device_mem_info();
    let c = a.clone();
    ef::device_gc();
    assert_eq!(ef::device_mem_info().1, buffers0, "clone allocated");
    let k = a.copy();
    ef::device_gc();
    let (bytes1, buffers1, _, _) = ef::device_mem_info();
    assert_eq!(buffers1, buffers0 + 1, "copy did not allocate a buffer");
    assert!(bytes1 >= bytes0 + n * 4, "copy holds {} new bytes", bytes1 - bytes0);
    drop(a);
    ef::device_gc();
    assert_eq!(ef::device_mem_info().1, buffers0 + 1, "the clone keeps the shared buffer alive");
    assert_eq!((c.to_vec(), k.to_vec()), (vec![1.5; n], vec![1.5; n]));
    drop((c, k));
    ef::device_gc();
    assert_eq!(ef::device_mem_info().1, buffers0 - 1, "dropping every handle frees the buffers");
}
