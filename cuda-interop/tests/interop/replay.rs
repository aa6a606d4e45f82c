//! Launches replayed from graphs (the launch of a shape made before goes to the device as a
//! one-node graph with new arguments) keep every ordering a kernel launch has: with a user's
//! stream scope, with events, with locked arrays read by the user's own work, and inside a
//! capture of emberfire's stream into a graph of the user's, where nothing is replayed. Each
//! test makes one small addition many times over new inputs, so its shape is replayed from
//! the third launch on. Needs a CUDA device (skips without one).

use crate::common;

use emberfire::{dim4, jit_stats, Array, Event};
use emberfire_cuda_interop::{self as interop, cudarc::driver::sys};

const N: usize = 1000;
const ROUNDS: usize = 24;

/// Whether the process replays launches (`EMBERFIRE_LAUNCH_REPLAY=0` turns it off).
fn replay_on() -> bool {
    std::env::var("EMBERFIRE_LAUNCH_REPLAY").map_or(true, |v| v.trim() != "0")
}

/// Round `r`'s input, its values different in every round.
fn input(r: usize) -> (Vec<f32>, Array<f32>) {
    let v = common::random_f32(&format!("replay {r}"), N, 4.0);
    let a = Array::new(&v, dim4!(N as u64));
    (v, a)
}

/// The addition every test repeats, and its f64 reference.
fn step(x: &Array<f32>) -> Array<f32> {
    x * 2.0f32 + 1.0f32
}
fn step_ref(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64 * 2.0 + 1.0).collect()
}

#[test]
fn replayed_launches_give_the_direct_launches_results() {
    let Some(_gpu) = common::cuda() else { return };
    let before = jit_stats();
    for r in 0..ROUNDS {
        let (v, x) = input(r);
        let y = step(&x);
        common::assert_close(&format!("round {r}"), &y.to_vec(), &step_ref(&v), 1e-6);
    }
    let after = jit_stats();
    let replayed = after.replayed_launches - before.replayed_launches;
    if replay_on() {
        // at most the first two rounds launch directly (the shape may be known from before)
        assert!(replayed >= (ROUNDS - 2) as u64, "{replayed} of {ROUNDS} launches replayed");
    } else {
        assert_eq!(replayed, 0, "replay is off");
    }
}

#[test]
fn replay_keeps_its_order_with_a_users_stream_scope() {
    let Some(_gpu) = common::cuda() else { return };
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    for r in 0..ROUNDS {
        let (v, x) = input(r);
        // on emberfire's stream (replayed), then on the user's, then on emberfire's again,
        // nothing synchronised in between
        let y = step(&x);
        y.eval();
        let z = interop::with_stream(&mine, || {
            let z = &y + 3.0f32;
            z.eval();
            z
        })
        .unwrap();
        drop(y);
        let w = step(&z);
        let want: Vec<f64> = step_ref(&v).iter().map(|&y| (y + 3.0) * 2.0 + 1.0).collect();
        common::assert_close(&format!("round {r}"), &w.to_vec(), &want, 1e-6);
    }
}

#[test]
fn replay_keeps_its_order_with_events() {
    let Some(_gpu) = common::cuda() else { return };
    for r in 0..ROUNDS {
        let (v, x) = input(r);
        let (v2, x2) = input(r + 1000);
        // a thread's replayed results travel with an event marked after them
        let (y, done) = std::thread::scope(|s| {
            s.spawn(|| {
                let y = step(&x);
                y.eval();
                let done = Event::default();
                done.mark();
                (y, done)
            })
            .join()
            .unwrap()
        });
        done.enqueue_wait();
        let w = &y + step(&x2);
        let want: Vec<f64> = step_ref(&v).iter().zip(step_ref(&v2)).map(|(a, b)| a + b).collect();
        common::assert_close(&format!("round {r}, queued wait"), &w.to_vec(), &want, 1e-6);
        let y2 = step(&x2);
        y2.eval();
        let done = Event::default();
        done.mark();
        done.block();
        common::assert_close(&format!("round {r}, host wait"), &y2.to_vec(), &step_ref(&v2), 1e-6);
    }
}

#[test]
fn replay_keeps_its_order_with_locked_arrays() {
    let Some(_gpu) = common::cuda() else { return };
    let mine = interop::context(common::dev()).unwrap().new_stream().unwrap();
    for r in 0..ROUNDS {
        let (v, x) = input(r);
        let y = step(&x);
        // the user copies the locked result on their own stream, ordered after emberfire's
        let guard = interop::lock(&y).unwrap();
        let mut copy = mine.alloc_zeros::<f32>(N).unwrap();
        interop::stream_wait_for_emberfire(&mine).unwrap();
        {
            use interop::cudarc::driver::DevicePtrMut;
            let (dst, _sync) = copy.device_ptr_mut(&mine);
            // SAFETY: both hold N floats on this device; the copy is queued on `mine`, which
            // waits for emberfire's stream first.
            unsafe {
                interop::cudarc::driver::result::memcpy_dtod_async(
                    dst,
                    guard.ptr(),
                    N * 4,
                    mine.cu_stream(),
                )
            }
            .unwrap();
        }
        interop::emberfire_wait_for_stream(&mine).unwrap();
        drop(guard);
        // emberfire's next replayed launch reuses memory the user's copy may still read
        drop(y);
        let again = step(&x);
        common::assert_close(
            &format!("round {r}, user's copy"),
            &mine.clone_dtoh(&copy).unwrap(),
            &step_ref(&v),
            1e-6,
        );
        common::assert_close(&format!("round {r}, again"), &again.to_vec(), &step_ref(&v), 1e-6);
    }
}

#[test]
fn a_capture_of_emberfires_stream_records_kernels_not_graphs() {
    let Some(_gpu) = common::cuda() else { return };
    // make the shape replayed first
    for r in 0..4 {
        let (v, x) = input(r);
        common::assert_close("warm-up", &step(&x).to_vec(), &step_ref(&v), 1e-6);
    }
    let (v, x) = input(77);
    x.eval();
    interop::stream(common::dev()).unwrap().synchronize().unwrap();
    let before = jit_stats();
    let own = interop::get_stream(common::dev()).unwrap();
    // SAFETY: emberfire's live stream, captured in relaxed mode (emberfire's allocations from
    // its pool are not stream operations), the capture ended on the same stream below.
    unsafe {
        sys::cuStreamBeginCapture_v2(own, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
    }
    .result()
    .unwrap();
    let y = step(&x);
    y.eval();
    let mut graph = std::ptr::null_mut();
    // SAFETY: the capture begun above, on the same stream.
    unsafe { sys::cuStreamEndCapture(own, &mut graph) }.result().unwrap();
    assert_eq!(
        jit_stats().replayed_launches,
        before.replayed_launches,
        "nothing replayed in a capture"
    );
    let mut exec = std::ptr::null_mut();
    // SAFETY: the graph the capture made; its exec launched on emberfire's stream and both
    // destroyed after the stream has run it.
    unsafe {
        sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0).result().unwrap();
        sys::cuGraphLaunch(exec, own).result().unwrap();
        sys::cuStreamSynchronize(own).result().unwrap();
        sys::cuGraphExecDestroy(exec).result().unwrap();
        sys::cuGraphDestroy(graph).result().unwrap();
    }
    common::assert_close("the user's graph", &y.to_vec(), &step_ref(&v), 1e-6);
}
