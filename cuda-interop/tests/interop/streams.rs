//! Running emberfire on a stream of the user's: scopes, nesting, panics, streams of other
//! contexts, streams dropped after their scope, vendor plans made in one scope and used in
//! another, and memory reused across streams. Needs a CUDA device (skips without one).

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use emberfire::{c32, cos, dim4, fft, sin, sum_all, Array};
use emberfire_cuda_interop::{self as interop, cudarc::driver::CudaContext, Error};

#[test]
fn emberfire_works_on_the_users_stream_inside_the_scope() {
    let Some(_gpu) = common::cuda() else { return };
    let ctx = interop::context(common::dev()).unwrap();
    let own = interop::get_stream(common::dev()).unwrap();
    let mine = ctx.new_stream().unwrap();
    let values = common::random_f32("scope", 10_000, 3.0);
    let before = Array::new(&values, dim4!(100, 100)) * 2.0f32; // lazy, computed in the scope
    let (inside, sum) = interop::with_stream(&mine, || {
        assert_eq!(interop::get_stream(common::dev()).unwrap(), mine.cu_stream());
        let y = sin(&before) + 1.0f32;
        (interop::get_stream(common::dev()).unwrap(), sum_all(&y).0 as f64)
    })
    .unwrap();
    assert_eq!(inside, mine.cu_stream());
    assert_eq!(interop::get_stream(common::dev()).unwrap(), own, "back on emberfire's stream");
    let expect: f64 = values.iter().map(|&v| ((v * 2.0) as f64).sin() + 1.0).sum();
    assert!((sum - expect).abs() < 1e-3 * expect.abs().max(1.0), "{sum} vs {expect}");
    // `before` was evaluated on the user's stream; emberfire's stream uses it afterwards.
    let after = (&before * 0.5f32).to_vec();
    common::assert_close(
        "after",
        &after,
        &values.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        1e-6,
    );
}

#[test]
fn scopes_nest_and_a_panic_ends_them() {
    let Some(_gpu) = common::cuda() else { return };
    let ctx = interop::context(common::dev()).unwrap();
    let own = interop::get_stream(common::dev()).unwrap();
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let a = Array::new(&[1i32, 2, 3], dim4!(3));
    let r = interop::with_stream(&s1, || {
        let b = &a + 1i32;
        let inner = interop::with_stream(&s2, || {
            assert_eq!(interop::get_stream(common::dev()).unwrap(), s2.cu_stream());
            (&b * 10i32).to_vec()
        })
        .unwrap();
        assert_eq!(interop::get_stream(common::dev()).unwrap(), s1.cu_stream());
        inner
    })
    .unwrap();
    assert_eq!(r, vec![20, 30, 40]);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        interop::with_stream(&s1, || {
            let _lazy = &a * 3i32;
            panic!("a failure inside the scope");
        })
    }));
    assert!(caught.is_err());
    assert_eq!(interop::get_stream(common::dev()).unwrap(), own, "the panic ended the scope");
    assert_eq!((&a * 3i32).to_vec(), vec![3, 6, 9]);
    // Other threads never see this thread's scope.
    interop::with_stream(&s1, || {
        let other = std::thread::spawn(|| {
            emberfire::set_backend(emberfire::Backend::CUDA);
            interop::get_stream(common::dev()).unwrap() as usize
        });
        assert_eq!(other.join().unwrap(), own as usize);
    })
    .unwrap();
}

#[test]
fn the_legacy_default_stream_can_be_used_too() {
    let Some(_gpu) = common::cuda() else { return };
    let ctx = interop::context(common::dev()).unwrap();
    let legacy = ctx.default_stream();
    let v =
        interop::with_stream(&legacy, || (Array::new(&[2.0f64, 4.0], dim4!(2)) / 2.0f64).to_vec())
            .unwrap();
    assert_eq!(v, vec![1.0, 2.0]);
}

#[test]
fn a_stream_of_another_context_is_refused() {
    let Some(_gpu) = common::cuda() else { return };
    let other = CudaContext::new_non_primary(common::dev() as usize, 0).unwrap();
    let theirs = other.new_stream().unwrap();
    let wrong = Error::WrongContext { function: "with_stream", what: "stream" };
    assert_eq!(interop::with_stream(&theirs, || ()).unwrap_err(), wrong);
    let e = interop::stream_wait_for_emberfire(&theirs).unwrap_err();
    assert_eq!(e, Error::WrongContext { function: "stream_wait_for_emberfire", what: "stream" });
    let e = interop::emberfire_wait_for_stream(&theirs).unwrap_err();
    assert_eq!(e, Error::WrongContext { function: "emberfire_wait_for_stream", what: "stream" });
    drop(theirs);
    drop(other);
    // emberfire is unaffected.
    assert_eq!((Array::new(&[1u8, 2], dim4!(2)) + 1u8).to_vec(), vec![2, 3]);
}

#[test]
fn the_users_stream_may_be_dropped_after_its_scope() {
    let Some(_gpu) = common::cuda() else { return };
    let ctx = interop::context(common::dev()).unwrap();
    let values = common::random_f32("dropped", 1 << 16, 2.0);
    let kept;
    {
        let mine = ctx.new_stream().unwrap();
        kept = interop::with_stream(&mine, || {
            let x = Array::new(&values, dim4!(1 << 16));
            let t = cos(&x) * 3.0f32;
            t.eval();
            let y = &t + &x;
            y.eval();
            drop(t); // freed while the user's stream is current
            y
        })
        .unwrap();
        // The stream is destroyed here; emberfire must never use it again.
    }
    // Used, copied and freed on emberfire's own stream after the user's stream is gone.
    let z = (&kept * 2.0f32).to_vec();
    let want: Vec<f64> =
        values.iter().map(|&v| 2.0 * ((v as f64).cos() * 3.0 + v as f64)).collect();
    common::assert_close("z", &z, &want, 1e-5);
    drop(kept);
    for _ in 0..4 {
        // Reuse of the blocks freed above, on emberfire's stream.
        let w = (Array::new(&values, dim4!(1 << 16)) - 1.0f32).to_vec();
        common::assert_close(
            "w",
            &w,
            &values.iter().map(|&v| v as f64 - 1.0).collect::<Vec<_>>(),
            1e-6,
        );
    }
    interop::context(common::dev()).unwrap().check_err().unwrap();
}

/// A cuFFT plan is cached by shape; the transform must run on the stream current when it
/// runs, not the one current when its plan was made. The plan is made inside a scope whose
/// stream is destroyed after it, used on emberfire's stream, inside a second scope, and on
/// emberfire's stream again, checked each time against a direct transform in f64.
#[test]
fn a_transform_runs_on_the_stream_current_when_it_runs() {
    let Some(_gpu) = common::cuda() else { return };
    let ctx = interop::context(common::dev()).unwrap();
    // An uncommon shape, so that no other test of this process made the plan before.
    let (n, cols) = (1155usize, 3usize);
    let values = common::random_f32("fft scope", n * cols, 2.0);
    let mut want = Vec::with_capacity(2 * n * cols);
    for c in 0..cols {
        let x = &values[c * n..(c + 1) * n];
        for k in 0..n {
            let (mut re, mut im) = (0.0f64, 0.0f64);
            for (j, &v) in x.iter().enumerate() {
                let t = -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                re += v as f64 * t.cos();
                im += v as f64 * t.sin();
            }
            want.push((re, im));
        }
    }
    let check = |what: &str, got: &Array<c32>| {
        let got = got.to_vec();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let e = (g.re as f64 - w.0).abs().max((g.im as f64 - w.1).abs());
            assert!(e <= 2e-3, "{what}: bin {i}: {g:?} vs {w:?}");
        }
    };
    let transform = || fft(&Array::new(&values, dim4!(n as u64, cols as u64)), 1.0, 0);
    {
        let mine = ctx.new_stream().unwrap();
        let inside = interop::with_stream(&mine, || {
            let y = transform();
            y.eval();
            y
        })
        .unwrap();
        check("made inside the first scope", &inside);
        // `mine` is destroyed here, with the plan made while it was current.
    }
    check("after the first scope", &transform());
    let other = ctx.new_stream().unwrap();
    let inside = interop::with_stream(&other, || {
        let y = transform();
        y.eval();
        y
    })
    .unwrap();
    other.synchronize().unwrap();
    check("inside the second scope", &inside);
    drop(other);
    check("after the second scope", &transform());
    interop::context(common::dev()).unwrap().check_err().unwrap();
}

/// One thread computes on a stream of its own and frees its arrays there while another
/// computes on emberfire's stream with arrays of the same size, so freed blocks pass between
/// the streams all the time. Every result is checked: a block reused before the other stream
/// was done with it would show as wrong values.
#[test]
fn memory_freed_on_one_stream_is_reused_on_another_in_order() {
    let Some(_gpu) = common::cuda() else { return };
    let n = 1 << 20;
    let values = common::random_f32("crossing", n, 1.0);
    let ctx = interop::context(common::dev()).unwrap();
    std::thread::scope(|s| {
        let on_user_stream = s.spawn(|| {
            emberfire::set_backend(emberfire::Backend::CUDA);
            let mine = ctx.new_stream().unwrap();
            for round in 0..12 {
                let k = 1.0 + round as f32;
                let got = interop::with_stream(&mine, || {
                    let mut y = Array::new(&values, dim4!(n)) * k;
                    for _ in 0..6 {
                        y = sin(&y) * 0.5f32 + &y;
                        y.eval();
                    }
                    let probe = y.to_vec();
                    (probe[0], probe[n / 2], probe[n - 1])
                })
                .unwrap();
                for (i, g) in [(0, got.0), (n / 2, got.1), (n - 1, got.2)] {
                    let mut y = values[i] as f64 * k as f64;
                    for _ in 0..6 {
                        y += y.sin() * 0.5;
                    }
                    assert!(
                        (g as f64 - y).abs() < 1e-4 * y.abs().max(1.0),
                        "user stream, round {round}"
                    );
                }
            }
        });
        let on_own_stream = s.spawn(|| {
            emberfire::set_backend(emberfire::Backend::CUDA);
            for round in 0..24 {
                let k = 2.0 + round as f32;
                let y = (Array::new(&values, dim4!(n)) * k - 1.0f32).to_vec();
                for i in [0, 1, n / 3, n - 1] {
                    let want = values[i] as f64 * k as f64 - 1.0;
                    assert!(
                        (y[i] as f64 - want).abs() < 1e-5 * want.abs().max(1.0),
                        "own stream, round {round}"
                    );
                }
            }
        });
        on_user_stream.join().unwrap();
        on_own_stream.join().unwrap();
    });
}
