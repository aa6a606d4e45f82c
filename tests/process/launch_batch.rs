//! Small element-wise launches held back on emberfire's own stream and sent together as one
//! graph keep the order a launch made at once has: before a host read, a reduction, a sort,
//! a matrix product (cuBLAS), a transform (cuFFT, whose plan was bound to the stream when
//! made), an assignment, an upload into memory freed by a held launch's result, an event, and
//! across threads. Each round makes small additions over new inputs, so their shapes are
//! replayed, and so held back, from the third launch on. Needs a CUDA device (run with
//! `--include-ignored` on a GPU machine). How many launches went out in graphs is counted in a
//! process of its own (a test here that hands the stream or context to the user, as the
//! DLPack tests do, stops the holding for the rest of its process).

use emberfire::*;

const N: usize = 1000;
const ROUNDS: usize = 40;

fn on_cuda() -> std::sync::MutexGuard<'static, ()> {
    let guard = crate::serial();
    set_backend(Backend::CUDA);
    guard
}

/// Round `r`'s input values (exact in f32 through `step` and `step_ref`).
fn values(r: usize) -> Vec<f32> {
    (0..N).map(|i| ((i * 7 + r * 13) % 101) as f32 * 0.25 - 12.0).collect()
}

/// The small evaluation every round repeats, and its f64 reference.
fn step(x: &Array<f32>) -> Array<f32> {
    x * 2.0f32 + 1.0f32
}
fn step_ref(v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| x * 2.0 + 1.0).collect()
}

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((*g as f64 - w).abs() <= tol * (w.abs() + 1.0), "{what}: element {i}: {g} vs {w}");
    }
}

/// Rounds of chained small evaluations, nothing read until the end: every result is its own.
fn chains_of_held_launches() {
    let mut kept = Vec::new();
    for r in 0..ROUNDS {
        let x = Array::new(&values(r), dim4!(N as u64));
        let y = step(&x);
        y.eval();
        let z = step(&y);
        z.eval();
        kept.push((r, y, z));
    }
    for (r, y, z) in kept {
        let want_y = step_ref(&f64s(&values(r)));
        assert_close(&format!("round {r}, y"), &y.to_vec(), &want_y, 0.0);
        assert_close(&format!("round {r}, z"), &z.to_vec(), &step_ref(&want_y), 0.0);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn held_launches_give_every_round_its_own_result() {
    let _serial = on_cuda();
    chains_of_held_launches();
}

/// A child process's part of [`held_launches_go_out_as_graphs`]: the chains, then the counts.
#[test]
#[ignore = "run by held_launches_go_out_as_graphs in a process of its own"]
fn held_launches_counted() {
    if std::env::var("EF_HELD_CHILD").is_err() {
        return;
    }
    let _serial = on_cuda();
    let before = jit_stats();
    chains_of_held_launches();
    let after = jit_stats();
    println!(
        "child batched={} graphs={}",
        after.batched_launches - before.batched_launches,
        after.batch_graphs - before.batch_graphs
    );
}

/// Eighty small launches in a row with nothing read between them go out mostly within graphs
/// of several launches, when replay and batching are on (the child's environment is this
/// process's).
#[test]
#[ignore = "needs a CUDA device"]
fn held_launches_go_out_as_graphs() {
    let _serial = crate::serial();
    let count =
        crate::run_child("launch_batch::held_launches_counted", &[("EF_HELD_CHILD", "1".as_ref())]);
    let (batched, graphs) = (count("batched="), count("graphs="));
    let replay_off = std::env::var("EMBERFIRE_LAUNCH_REPLAY").is_ok_and(|v| v.trim() == "0");
    let batch_off = std::env::var("EMBERFIRE_LAUNCH_BATCH")
        .is_ok_and(|v| v.trim().parse::<usize>().is_ok_and(|n| n <= 1));
    if replay_off || batch_off {
        assert_eq!(batched, 0, "nothing is held back with replay or batching off");
    } else {
        // 2 x 40 launches of one shape: all but the first two held, in batches of the same
        // sequence, whose graph is made on its third batch
        assert!(batched >= 32, "{batched} of {} launches went out in graphs", 2 * ROUNDS);
        assert!(graphs >= 1, "no sequence graph was made");
    }
}

/// After held launches, each other kind of work on the stream sees their results.
#[test]
#[ignore = "needs a CUDA device"]
fn work_after_held_launches_sees_their_results() {
    let _serial = on_cuda();
    for r in 0..12 {
        let v = values(r);
        let want = step_ref(&f64s(&v));
        let x = Array::new(&v, dim4!(N as u64));
        let what = |w: &str| format!("round {r}: {w}");

        // a reduction of a held result
        let y = step(&x);
        y.eval();
        let total: f64 = want.iter().sum();
        assert!(
            (sum_all(&y).0 as f64 - total).abs() <= 1e-3 * total.abs().max(1.0),
            "{}",
            what("sum")
        );

        // a sort
        let y = step(&x);
        y.eval();
        let mut sorted = want.clone();
        sorted.sort_by(f64::total_cmp);
        assert_close(&what("sort"), &sort(&y, 0, true).to_vec(), &sorted, 0.0);

        // a matrix product (cuBLAS) of held results: 10 x 100 by 100 x 10
        let a = moddims(&step(&x), dim4!(10, 100));
        a.eval();
        let b = moddims(&step(&x), dim4!(100, 10));
        b.eval();
        let p = matmul(&a, &b, MatProp::NONE, MatProp::NONE).to_vec();
        let mut want_p = vec![0.0f64; 100];
        for j in 0..10 {
            for i in 0..10 {
                want_p[i + 10 * j] = (0..100).map(|k| want[i + 10 * k] * want[k + 100 * j]).sum();
            }
        }
        assert_close(&what("matmul"), &p, &want_p, 1e-5);

        // a transform (cuFFT) of a held result: the zero frequency is the sum
        let y = step(&x);
        y.eval();
        let spectrum = fft(&y, 1.0, 0).to_vec();
        assert!(
            (spectrum[0].re as f64 - total).abs() <= 1e-3 * total.abs().max(1.0),
            "{}",
            what("fft")
        );

        // an assignment into a held result
        let mut y = step(&x);
        y.eval();
        assign_seq(&mut y, &[Seq::new(0.0, 9.0, 1.0)], &constant(-1.0f32, dim4!(10)));
        let mut want_a = want.clone();
        want_a[..10].iter_mut().for_each(|w| *w = -1.0);
        assert_close(&what("assign"), &y.to_vec(), &want_a, 0.0);

        // an upload into memory a held result freed, and an evaluation reading it
        let y = step(&x);
        y.eval();
        drop(y);
        let w: Vec<f32> = v.iter().map(|&e| -e).collect();
        let u = Array::new(&w, dim4!(N as u64));
        let z = step(&u);
        assert_close(&what("upload"), &z.to_vec(), &step_ref(&f64s(&w)), 0.0);

        // an event marked after a held launch, waited for on the host
        let y = step(&x);
        y.eval();
        let e = Event::default();
        e.mark();
        e.block();
        assert_close(&what("event"), &y.to_vec(), &want, 0.0);
    }
}

/// Threads evaluating on the same device at once, each reading its own results at the end.
#[test]
#[ignore = "needs a CUDA device"]
fn held_launches_of_several_threads() {
    let _serial = on_cuda();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                set_backend(Backend::CUDA);
                let mut kept = Vec::new();
                for r in 0..ROUNDS {
                    let x = Array::new(&values(r + 100 * t), dim4!(N as u64));
                    let s = step(&x);
                    s.eval();
                    let y = step(&s);
                    y.eval();
                    kept.push((r, y));
                }
                for (r, y) in kept {
                    let want = step_ref(&step_ref(&f64s(&values(r + 100 * t))));
                    assert_close(&format!("thread {t}, round {r}"), &y.to_vec(), &want, 0.0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
