//! `Event`: marks, waits on the queue and on the host, between threads (arrayfire-rust's book
//! example), across backends, and, on a CUDA device, on emberfire's stream and on a user's
//! stream made current with `cuda::with_stream`.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use emberfire::*;

fn host_ref(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> Vec<f64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y) as f64).collect()
}

fn assert_close(got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((*g as f64 - w).abs() <= 1e-5 * (w.abs() + 1.0), "element {i}: {g} vs {w}");
    }
}

/// arrayfire-rust's threaded example (with shorter pauses): each result travels to the main
/// thread with an event marked after it, and the main thread waits for it before use.
fn results_cross_threads_with_their_events() {
    set_device(0);
    let a = randu::<f32>(dim4!(10, 10));
    let b = randu::<f32>(dim4!(10, 10));
    let c = randu::<f32>(dim4!(10, 10));
    let d = randu::<f32>(dim4!(10, 10));
    let (ha, hb, hc, hd) = (a.to_vec(), b.to_vec(), c.to_vec(), d.to_vec());
    let backend = get_active_backend();
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        set_backend(backend);
        set_device(0);
        let add_event = Event::default();
        let add_res = b + c;
        add_res.eval();
        add_event.mark();
        tx.send((add_res, add_event)).unwrap();
        thread::sleep(Duration::from_millis(50));
        let sub_event = Event::default();
        let sub_res = d - 2.0f32;
        sub_res.eval();
        sub_event.mark();
        tx.send((sub_res, sub_event)).unwrap();
    });
    let (add_res, add_event) = rx.recv().unwrap();
    add_event.block();
    let scaled = a * add_res;
    let (sub_res, sub_event) = rx.recv().unwrap();
    sub_event.enqueue_wait();
    let fin = pow(&scaled, &sub_res, false);
    worker.join().unwrap();
    let bc = host_ref(&hb, &hc, |x, y| x + y);
    let want: Vec<f64> =
        (0..100).map(|i| (ha[i] as f64 * bc[i]).powf(hd[i] as f64 - 2.0)).collect();
    assert_close(&fin.to_vec(), &want);
}

#[test]
fn threads_on_the_default_backend() {
    results_cross_threads_with_their_events();
}

#[test]
fn waiting_for_an_unmarked_event_returns() {
    let e = Event::default();
    e.enqueue_wait();
    e.block();
}

#[test]
fn marks_can_be_moved_and_repeated() {
    let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    let e = Event::default();
    for k in 1..4 {
        let b = &a * k as f32;
        b.eval();
        e.mark();
        e.block();
        let want: Vec<f64> = [1.0, 2.0, 3.0].iter().map(|x| x * k as f64).collect();
        assert_close(&b.to_vec(), &want);
    }
}

fn on_cuda() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    set_backend(Backend::CUDA);
    guard
}

#[test]
#[ignore = "needs a CUDA device"]
fn threads_on_cuda() {
    let _serial = on_cuda();
    results_cross_threads_with_their_events();
}

/// Work marked on emberfire's stream, waited for on a user's stream inside `with_stream`,
/// then read back; and an event marked on the user's stream, waited for on emberfire's.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_events_order_a_user_stream() {
    let _serial = on_cuda();
    let n = 1 << 20;
    let host: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.5).collect();
    let a = Array::new(&host, dim4!(n as u64));
    let b = sin(&a) * 2.0f32;
    b.eval();
    let produced = Event::default();
    produced.mark();
    let ctx = emberfire::cuda::context(0).unwrap();
    let mine = ctx.new_stream().unwrap();
    let consumed = Event::default();
    // SAFETY: `mine` is a live stream of device 0's primary context, and it outlives the
    // scope, which ends when the closure returns.
    let c = unsafe {
        emberfire::cuda::with_stream(0, mine.cu_stream(), || {
            produced.enqueue_wait();
            let c = &b + 1.0f32;
            c.eval();
            consumed.mark(); // on the user's stream
            c
        })
    }
    .unwrap();
    consumed.enqueue_wait(); // emberfire's own stream waits for the user's
    consumed.block();
    let want: Vec<f64> = host.iter().map(|&x| ((x.sin() * 2.0) + 1.0) as f64).collect();
    assert_close(&c.to_vec(), &want);
}

/// An event marked on CUDA and waited for while the CPU backend is active blocks the host
/// (the CPU's queue is the calling thread), and a mark on the CPU records nothing.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_event_waited_for_on_the_cpu() {
    let _serial = on_cuda();
    let a = randu::<f32>(dim4!(256, 256));
    let b = matmul(&a, &a, MatProp::NONE, MatProp::NONE);
    b.eval();
    let e = Event::default();
    e.mark();
    set_backend(Backend::CPU);
    e.enqueue_wait();
    e.mark(); // on the CPU: nothing to record
    e.block();
    set_backend(Backend::CUDA);
    e.block();
    assert_eq!(b.dims(), dim4!(256, 256));
}
