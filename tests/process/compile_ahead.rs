//! A program's first run, with every kernel new: kernels compile on threads of their own while
//! their launches are held back, and every result is still the one a launch made at once would
//! give, whatever reaches the stream next (a host read, a reduction, the process's first split
//! reduction, a sort, a matrix product, an upload, an event, a launch of a kernel already
//! loaded, other threads, a user's stream), and replay counts the launch sent after its compile
//! as a direct one. Each scenario runs in a child process with an empty disk cache of its own,
//! so that its kernels are new to it. Needs a CUDA device (run with `--include-ignored` on a
//! GPU machine).

use emberfire::*;

const N: usize = 4096;

fn on_cuda() -> std::sync::MutexGuard<'static, ()> {
    let guard = crate::serial();
    set_backend(Backend::CUDA);
    guard
}

/// The input values (small, so that the f32 results are close to the f64 reference).
fn values(seed: usize) -> Vec<f32> {
    (0..N).map(|i| ((i * 37 + seed * 11) % 257) as f32 / 64.0 - 2.0).collect()
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

/// A chain of new kernels, each reading the one before, nothing read until the end: two
/// element-wise evaluations, a reduction of one of them, and an element-wise evaluation of
/// both and the reduction's result.
fn chain() {
    let v = values(1);
    let x = Array::new(&v, dim4!(64, 64));
    let a = &x * 3.0f32 + 1.0f32;
    a.eval();
    let b = sin(&a) + &a;
    b.eval();
    let c = sum(&(&b * &b), 1); // 64 x 1
    let d = emberfire::sub(&exp(&(&a * 0.25f32)), &c, true);
    d.eval();
    let want_a: Vec<f64> = f64s(&v).iter().map(|x| x * 3.0 + 1.0).collect();
    let want_b: Vec<f64> = want_a.iter().map(|a| a.sin() + a).collect();
    let want_c: Vec<f64> =
        (0..64).map(|i| (0..64).map(|j| want_b[i + 64 * j] * want_b[i + 64 * j]).sum()).collect();
    let want_d: Vec<f64> = (0..N).map(|k| (want_a[k] * 0.25).exp() - want_c[k % 64]).collect();
    assert_close("chain: a", &a.to_vec(), &want_a, 1e-6);
    assert_close("chain: b", &b.to_vec(), &want_b, 1e-5);
    assert_close("chain: c", &c.to_vec(), &want_c, 1e-5);
    assert_close("chain: d", &d.to_vec(), &want_d, 1e-4);
}

/// A process's first split reduction (one whose blocks count themselves done on zeroed
/// tickets), of a new element-wise kernel's result still held for its compile: the tickets are
/// zeroed without sending what is held, and the sum still sees the held launch's result.
fn split_reduction_first() {
    const LONG: usize = 1 << 20;
    let v: Vec<f32> = (0..LONG).map(|i| ((i * 29) % 1021) as f32 / 256.0 - 2.0).collect();
    let x = Array::new(&v, dim4!(LONG as u64));
    let y = cos(&x) * 2.0f32 + 0.25f32;
    y.eval();
    let total = sum(&y, 0);
    let per_row = sum(&moddims(&y, dim4!(64, (LONG / 64) as u64)), 1);
    let want_y: Vec<f64> = f64s(&v).iter().map(|x| x.cos() * 2.0 + 0.25).collect();
    let want_total: f64 = want_y.iter().sum();
    let want_rows: Vec<f64> =
        (0..64).map(|i| want_y.iter().skip(i).step_by(64).sum::<f64>()).collect();
    assert_close("split: total", &total.to_vec(), &[want_total], 1e-5);
    assert_close("split: rows", &per_row.to_vec(), &want_rows, 1e-5);
}

/// After a launch held for its compile, each other kind of work sees its result.
fn other_work() {
    let v = values(2);
    let want: Vec<f64> = f64s(&v).iter().map(|x| x.cos() * 2.0 - x).collect();
    let step = |x: &Array<f32>| cos(x) * 2.0f32 - x;
    let x = Array::new(&v, dim4!(N as u64));

    // a host read
    let y = step(&x);
    y.eval();
    assert_close("read", &y.to_vec(), &want, 1e-6);

    // a sort of a new kernel's result
    let y = abs(&x) * 0.5f32 + &x;
    y.eval();
    let mut sorted: Vec<f64> = f64s(&v).iter().map(|x| x.abs() * 0.5 + x).collect();
    sorted.sort_by(f64::total_cmp);
    assert_close("sort", &sort(&y, 0, true).to_vec(), &sorted, 1e-6);

    // a matrix product (cuBLAS) of two new kernels' results: 16 x 256 by 256 x 16
    let a = moddims(&(&x * &x), dim4!(16, 256));
    a.eval();
    let b = moddims(&(&x - 0.5f32), dim4!(256, 16));
    b.eval();
    let p = matmul(&a, &b, MatProp::NONE, MatProp::NONE).to_vec();
    let xs = f64s(&v);
    let mut want_p = vec![0.0f64; 256];
    for j in 0..16 {
        for i in 0..16 {
            want_p[i + 16 * j] =
                (0..256).map(|k| xs[i + 16 * k].powi(2) * (xs[k + 256 * j] - 0.5)).sum();
        }
    }
    assert_close("matmul", &p, &want_p, 1e-5);

    // an upload into memory a held launch's result freed, and a new kernel reading it
    let y = tanh(&x) * 4.0f32;
    y.eval();
    drop(y);
    let w: Vec<f32> = v.iter().map(|&e| -e).collect();
    let u = Array::new(&w, dim4!(N as u64));
    let z = sqrt(&abs(&u)) + 1.0f32;
    let want_z: Vec<f64> = f64s(&w).iter().map(|x| x.abs().sqrt() + 1.0).collect();
    assert_close("upload", &z.to_vec(), &want_z, 1e-6);

    // an event marked after a held launch, waited for on the host
    let y = log1p(&abs(&x)) - 3.0f32;
    y.eval();
    let e = Event::default();
    e.mark();
    e.block();
    let want_y: Vec<f64> = f64s(&v).iter().map(|x| x.abs().ln_1p() - 3.0).collect();
    assert_close("event", &y.to_vec(), &want_y, 1e-6);
}

/// A kernel already loaded, launched after a new one whose compile is under way and reading
/// its result: it is held behind it (sending the held launches at once would wait for that
/// compile, and a program's later new kernels would compile in turns). Returns the launches
/// held for compiles meanwhile.
fn behind_a_compile() -> u64 {
    let v = values(4);
    let x = Array::new(&v, dim4!(N as u64));
    let twice = |a: &Array<f32>| a * 2.0f32 + 1.0f32;
    let first = twice(&x);
    let want_first: Vec<f64> = f64s(&v).iter().map(|x| x * 2.0 + 1.0).collect();
    assert_close("behind: loaded first", &first.to_vec(), &want_first, 1e-6);
    let before = jit_stats().held_for_compile;
    let y = atan(&x) * 3.0f32 - 0.5f32;
    y.eval();
    let z = twice(&y);
    z.eval();
    let held = jit_stats().held_for_compile - before;
    let want: Vec<f64> = f64s(&v).iter().map(|x| (x.atan() * 3.0 - 0.5) * 2.0 + 1.0).collect();
    assert_close("behind: after the new kernel", &z.to_vec(), &want, 1e-6);
    held
}

/// Threads evaluating new kernels of their own on one device at once.
fn threads() {
    let handles: Vec<_> = (0..4usize)
        .map(|t| {
            std::thread::spawn(move || {
                set_backend(Backend::CUDA);
                let v = values(10 + t);
                let x = Array::new(&v, dim4!(N as u64));
                // a structure of the thread's own: t + 1 square roots
                let mut y = abs(&x) + 1.0f32;
                let mut want: Vec<f64> = f64s(&v).iter().map(|x| x.abs() + 1.0).collect();
                for _ in 0..=t {
                    y = sqrt(&y);
                    want.iter_mut().for_each(|w| *w = w.sqrt());
                }
                y.eval();
                let s = sum(&y, 0);
                let total: f64 = want.iter().sum();
                assert_close(&format!("thread {t}"), &y.to_vec(), &want, 1e-6);
                assert_close(&format!("thread {t}, sum"), &s.to_vec(), &[total], 1e-5);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// A small new kernel launched round after round, each result read at once: its first launch,
/// held for the compile and sent directly, counts toward replay as a direct launch does, so
/// every round from the third is replayed from a graph. Returns the launches replayed.
fn replay_after_a_compile() -> u64 {
    const ROUNDS: usize = 24;
    let before = jit_stats().replayed_launches;
    for r in 0..ROUNDS {
        let v: Vec<f32> = values(20 + r)[..1000].to_vec();
        let x = Array::new(&v, dim4!(1000));
        let y = &x * 0.75f32 - 5.0f32;
        let want: Vec<f64> = f64s(&v).iter().map(|x| x * 0.75 - 5.0).collect();
        assert_close(&format!("replay round {r}"), &y.to_vec(), &want, 1e-6);
    }
    jit_stats().replayed_launches - before
}

/// A new kernel evaluated inside a user's stream scope (compiled where it is needed), after
/// launches held on the own stream. Hands the context to the user, so it comes last.
fn user_stream() {
    let v = values(3);
    let x = Array::new(&v, dim4!(N as u64));
    let a = &x * &x * 0.5f32;
    a.eval();
    let produced = Event::default();
    produced.mark();
    let ctx = emberfire::cuda::context(0).unwrap();
    let mine = ctx.new_stream().unwrap();
    // SAFETY: `mine` is a live stream of device 0's primary context that outlives the scope.
    let c = unsafe {
        emberfire::cuda::with_stream(0, mine.cu_stream(), || {
            produced.enqueue_wait();
            let c = cbrt(&a) - 1.0f32;
            c.eval();
            c
        })
    }
    .unwrap();
    mine.synchronize().unwrap();
    let want: Vec<f64> = f64s(&v).iter().map(|x| (x * x * 0.5).cbrt() - 1.0).collect();
    assert_close("user stream", &c.to_vec(), &want, 1e-6);
}

/// The child's part: every scenario, then the counts.
#[test]
#[ignore = "run by kernels_compile_ahead_of_their_launches in a process of its own"]
fn first_run_scenarios() {
    if std::env::var("EF_AHEAD_CHILD").is_err() {
        return;
    }
    let _serial = on_cuda();
    let before = jit_stats();
    split_reduction_first();
    chain();
    other_work();
    let behind = behind_a_compile();
    threads();
    let replayed = replay_after_a_compile();
    user_stream();
    let after = jit_stats();
    println!(
        "child compiles={} held={} replayed={replayed} behind={behind}",
        after.compiles - before.compiles,
        after.held_for_compile - before.held_for_compile
    );
}

/// Runs the scenarios in a child with an empty disk cache: every kernel is new, and their
/// launches are held for their compiles unless `EMBERFIRE_COMPILE_AHEAD=0` (the child's
/// environment is this process's).
#[test]
#[ignore = "needs a CUDA device"]
fn kernels_compile_ahead_of_their_launches() {
    let _serial = crate::serial();
    let dir = std::env::temp_dir().join(format!("ef-ahead-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let count = crate::run_child(
        "compile_ahead::first_run_scenarios",
        &[("EF_AHEAD_CHILD", "1".as_ref()), ("EMBERFIRE_KERNEL_CACHE", dir.as_os_str())],
    );
    let _ = std::fs::remove_dir_all(&dir);
    let (compiles, held, replayed) = (count("compiles="), count("held="), count("replayed="));
    let behind = count("behind=");
    if std::env::var("EMBERFIRE_LAUNCH_REPLAY").map_or(true, |v| v.trim() != "0") {
        // every round but the first two (the first held for its compile, then sent directly)
        assert!(replayed >= 22, "{replayed} of 24 launches replayed");
    }
    assert!(compiles >= 10, "only {compiles} kernels compiled: the disk cache was not empty?");
    if std::env::var("EMBERFIRE_COMPILE_AHEAD").is_ok_and(|v| v.trim() == "0") {
        assert_eq!(held, 0, "nothing is held for a compile with compiling ahead off");
    } else {
        // the chain alone holds four launches for their compiles
        assert!(held >= 4, "{held} launches were held for their compiles");
        // the new kernel's launch and the loaded one's behind it
        assert!(behind >= 2, "{behind} launches held around a compile, 2 expected");
    }
}
