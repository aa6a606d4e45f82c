//! ArrayFire's own interop pattern: the application's device buffers become arrays without a
//! copy (`Array::new_from_device_ptr`), are locked so that emberfire does not free them, and
//! are freed by the application once the arrays are gone. Here the application's buffers are
//! cudarc slices, which free their memory when dropped.
//!
//! When the last array using adopted memory is dropped while the memory is locked, the memory
//! goes back to the application: emberfire waits for its own work on it and forgets it. It
//! frees nothing, `device_mem_info` stops counting it, and no record of the address is kept,
//! so nothing is left behind however many times the pattern runs.
//!
//! Run it with `cargo run -p emberfire-cuda-interop --example lend_buffers`. Without a CUDA
//! device it says so and exits successfully.

use std::sync::Arc;

use emberfire::*;
use emberfire_cuda_interop as interop;
use interop::cudarc::driver::{CudaStream, DevicePtr};

/// What one round of the pattern gives back: the sum, and the addresses the application's two
/// buffers had (so that a test can check that emberfire kept no record of them).
pub struct Lent {
    /// `xs + ys`, computed by emberfire over the application's buffers.
    pub sum: Vec<f32>,
    /// The device addresses of the two buffers, already freed by the application.
    pub buffers: [u64; 2],
}

/// Lends two buffers of the application's to emberfire, adds them there, and frees them. The
/// buffers live on `stream`, emberfire's own stream as a cudarc stream
/// ([`interop::stream`]), so their copies from the host come before emberfire's reads with no
/// synchronisation.
pub fn lend_buffers(stream: &Arc<CudaStream>, xs: &[f32], ys: &[f32]) -> interop::Result<Lent> {
    assert_eq!(xs.len(), ys.len(), "lend_buffers: xs and ys differ in length");
    // ANCHOR: lend
    // The application's buffers: cudarc slices, which free their memory when dropped.
    let in_x = stream.clone_htod(xs)?;
    let in_y = stream.clone_htod(ys)?;
    let px = in_x.device_ptr(stream).0;
    let py = in_y.device_ptr(stream).0;
    let dims = dim4!(xs.len() as u64);

    // SAFETY: each slice holds `dims` initialised floats, written on emberfire's own stream;
    // the locks below keep emberfire from freeing them (the slices do that), and the slices
    // outlive the arrays.
    let x = unsafe { Array::new_from_device_ptr(px as *mut f32, dims) };
    // SAFETY: as for `x`.
    let y = unsafe { Array::new_from_device_ptr(py as *mut f32, dims) };
    // Lock before any array using them can be dropped: emberfire then leaves the memory to
    // the slices (ArrayFire's "lock to avoid free").
    x.lock();
    y.lock();

    let o = &x + &y;
    let sum = o.to_vec();
    let _o_ptr = o.device_ptr(); // locks o's memory (emberfire's own) for our use...
    o.unlock(); // ...and gives it back.

    // The arrays go; x's and y's memory is locked, so it goes back to the application:
    // emberfire forgets it (it frees nothing and keeps no record of it).
    drop((x, y, o));
    // The application frees its buffers, exactly once.
    drop((in_x, in_y));
    // ANCHOR_END: lend
    Ok(Lent { sum, buffers: [px, py] })
}

pub fn main() -> interop::Result<()> {
    if let Err(why) = interop::device_count() {
        println!("lend_buffers needs a CUDA device, and there is none here: {why}");
        return Ok(());
    }
    set_backend(Backend::CUDA);
    set_device(0);
    let stream = interop::stream(0)?;
    let (xs, ys) = (vec![1.0f32; 64 * 64], vec![2.0f32; 64 * 64]);
    let before = device_mem_info();
    let lent = lend_buffers(&stream, &xs, &ys)?;
    assert!(lent.sum.iter().all(|&v| v == 3.0), "x + y is not 3 everywhere");
    assert_eq!(device_mem_info(), before, "the lent buffers left something behind");
    for p in lent.buffers {
        assert!(!interop::unlock_device_ptr(0, p)?, "emberfire kept a record of {p:#x}");
    }
    println!("x + y = {} everywhere; memory as before: {:?}", lent.sum[0], device_mem_info());
    Ok(())
}
