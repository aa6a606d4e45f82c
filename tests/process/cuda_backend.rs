//! The CUDA backend's promises at the level of arrays: the kernel cache (in memory, on disk,
//! bounded in loops), memory that returns to where it started, locked memory that survives
//! pressure, out-of-memory as an error the process survives, and threads. Needs a CUDA device
//! (run with `--include-ignored` on a GPU machine).

use emberfire::*;

/// Selects CUDA for this thread and serialises the tests, through the binary's `serial` lock:
/// several of them read the device's global memory counters, which other tests would move.
fn on_cuda() -> std::sync::MutexGuard<'static, ()> {
    let guard = crate::serial();
    set_backend(Backend::CUDA);
    guard
}

#[test]
#[ignore = "needs a CUDA device"]
fn identical_tree_hits_the_cache() {
    let _serial = on_cuda();
    let a = Array::new(&[0.5f32, 1.5, 2.5], dim4!(3));
    (tanh(&a) * 3.0f32 - &a).eval();
    let before = jit_stats();
    let r = tanh(&a) * 7.0f32 - &a; // same structure, another scalar
    let expect: Vec<f32> = [0.5f32, 1.5, 2.5].iter().map(|x| x.tanh() * 7.0 - x).collect();
    let got = r.to_vec();
    for (g, e) in got.iter().zip(&expect) {
        assert!((g - e).abs() < 1e-6, "{g} vs {e}");
    }
    let after = jit_stats();
    assert_eq!(after.compiles, before.compiles);
    assert!(after.memory_hits > before.memory_hits);
}

/// A fresh process with the same cache directory loads the kernel from disk, compiling none.
#[test]
#[ignore = "needs a CUDA device"]
fn new_process_finds_the_disk_cache() {
    if std::env::var("EF_DISK_CACHE_CHILD").is_ok() {
        let _serial = on_cuda();
        let a = Array::new(&[1.0f64, 4.0], dim4!(2));
        let r = sqrt(&a) * 3.25f64 + cbrt(&a);
        assert_eq!(r.to_vec(), vec![3.25 + 1.0, 6.5 + 4f64.cbrt()]);
        let s = jit_stats();
        println!("child compiles={} disk_hits={}", s.compiles, s.disk_hits);
        return;
    }
    let _serial = crate::serial();
    let dir = std::env::temp_dir().join(format!("ef-cache-{}", std::process::id()));
    let run = || {
        let envs =
            [("EF_DISK_CACHE_CHILD", "1".as_ref()), ("EMBERFIRE_KERNEL_CACHE", dir.as_os_str())];
        let count = crate::run_child("cuda_backend::new_process_finds_the_disk_cache", &envs);
        (count("compiles="), count("disk_hits="))
    };
    assert_eq!(run(), (1, 0), "the first child compiles");
    assert_eq!(run(), (0, 1), "the second child reads the disk cache");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs a CUDA device"]
fn growing_loop_compiles_a_bounded_number_of_kernels() {
    let _serial = on_cuda();
    let c = Array::new(&[0.25f64; 5], dim4!(5));
    let mut b = Array::new(&[1.0f64; 5], dim4!(5));
    for _ in 0..200 {
        b = &b + &c;
    }
    b.eval();
    let start = jit_stats().compiles;
    for _ in 0..1000 {
        b = &b + &c;
    }
    assert_eq!(b.to_vec(), vec![1.0 + 0.25 * 1200.0; 5]);
    assert_eq!(jit_stats().compiles, start, "the second loop reuses the first loop's kernels");
}

#[test]
#[ignore = "needs a CUDA device"]
fn create_eval_drop_cycles_leave_memory_where_it_started() {
    let _serial = on_cuda();
    let x = Array::new(&[1.0f32; 1000], dim4!(1000));
    (&x + 1.0f32).eval();
    sync(get_device());
    let start = device_mem_info();
    for i in 0..100_000 {
        let y = &x * (i as f32) + 1.0f32;
        y.eval();
    }
    sync(get_device());
    assert_eq!(device_mem_info(), start);
}

#[test]
#[ignore = "needs a CUDA device"]
fn locked_array_keeps_its_contents_under_pressure() {
    let _serial = on_cuda();
    let n = 1 << 20;
    let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = Array::new(&values, dim4!(n));
    let locked0 = device_mem_info().3;
    let ptr = a.device_ptr();
    assert!(a.is_locked());
    assert_eq!(device_mem_info().3, locked0 + 1, "one locked buffer");
    // churn through many buffers of the same size: none may be the locked one
    for k in 0..200 {
        let b = constant(-1.0f32, dim4!(n)) * (k as f32);
        b.eval();
        assert_ne!(b.device_ptr(), ptr);
        b.unlock();
    }
    assert_eq!(a.to_vec(), values);
    a.unlock();
    assert!(!a.is_locked());
    assert_eq!(device_mem_info().3, locked0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn out_of_memory_is_an_error_and_the_next_operation_works() {
    let _serial = on_cuda();
    let huge = constant(1.0f64, dim4!(1u64 << 20, 1u64 << 20)); // 8 TiB
    match huge.try_eval() {
        Err(Error::OutOfMemory { bytes }) => assert!(bytes >= 1 << 40),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    let ok = Array::new(&[2.0f64, 3.0], dim4!(2)) * 2.0f64;
    assert_eq!(ok.to_vec(), vec![4.0, 6.0]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn eight_threads_evaluate_different_trees() {
    let _serial = on_cuda();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                set_backend(Backend::CUDA);
                let n = 10_000 + t * 17;
                let x: Vec<f64> = (0..n).map(|i| (i % 97) as f64 * 0.01).collect();
                let a = Array::new(&x, dim4!(n));
                for round in 0..20 {
                    let r = match t % 4 {
                        0 => sin(&a) * (round as f64) + &a,
                        1 => exp(&(-&a)) + &a * &a,
                        2 => sqrt(&(&a + 1.0f64)) - (t as f64),
                        _ => maxof(&a, &cos(&a), false) / 2.0f64,
                    };
                    let got = r.to_vec();
                    for (i, &v) in x.iter().enumerate() {
                        let e = match t % 4 {
                            0 => v.sin() * (round as f64) + v,
                            1 => (-v).exp() + v * v,
                            2 => (v + 1.0).sqrt() - (t as f64),
                            _ => v.max(v.cos()) / 2.0,
                        };
                        assert!(
                            (got[i] - e).abs() <= 1e-12 * (1.0 + e.abs()),
                            "thread {t} elem {i}"
                        );
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// The compile counter is per process: this test runs with every other test of this binary held
/// off (moved here from the parity tests, whose concurrent compiles it counted).
#[test]
#[ignore = "needs a CUDA device"]
fn kernel_cache_loops_and_eval_multiple() {
    let _serial = on_cuda();
    let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    let b = Array::new(&[4.0f32, 5.0, 6.0], dim4!(3));
    (sin(&a) + &b * 3.5f32).eval();
    let before = jit_stats();
    let r = sin(&b) + &a * 1.25f32; // same structure, other data and scalar
    assert_eq!(r.to_vec(), vec![4f32.sin() + 1.25, 5f32.sin() + 2.5, 6f32.sin() + 3.75]);
    assert_eq!(jit_stats().compiles, before.compiles, "an identical tree must not compile");
    // a loop adding in place compiles a bounded number of kernels
    let c = Array::new(&[1.0f32; 3], dim4!(3));
    let mut acc = Array::new(&[0.0f32; 3], dim4!(3));
    let start = jit_stats().compiles;
    for _ in 0..1000 {
        acc = &acc + &c;
    }
    assert_eq!(acc.to_vec(), vec![1000.0; 3]);
    assert!(jit_stats().compiles - start <= 40, "compiles: {}", jit_stats().compiles - start);
    // two outputs, one kernel
    let t = &a * 2.0f32;
    let (p, q) = (&t + 1.0f32, &t - 1.0f32);
    eval_multiple(vec![&p, &q]);
    assert_eq!(p.to_vec(), vec![3.0, 5.0, 7.0]);
    assert_eq!(q.to_vec(), vec![1.0, 3.0, 5.0]);
}
