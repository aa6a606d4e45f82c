//! Your streams and emberfire's: running emberfire on a stream of yours, and ordering two
//! streams with events instead of blocking the host.

use cudarc::driver::CudaStream;

use crate::device::device_of_stream;
use crate::error::Result;

/// Runs `f` with emberfire working on `stream` for this thread: the arrays `f` evaluates on
/// the stream's device are computed on `stream` (and allocated for it), so your kernels on
/// `stream` and emberfire's operations need no synchronisation at all. ArrayFire cannot do
/// this.
///
/// On entry, `stream` waits on the device for the work emberfire queued before; when `f`
/// returns (or panics), emberfire's own stream waits on the device for everything queued on
/// `stream` so far, and emberfire goes back to it. The host never blocks. Scopes nest, and other
/// threads keep emberfire's own stream. After the last scope on a stream has returned,
/// emberfire never touches that stream again, so you may drop it.
///
/// Errors: [`Error::WrongContext`](crate::Error::WrongContext) for a stream that is not of a
/// device's primary context (the one emberfire uses).
///
/// ```
/// use emberfire::{dim4, Array};
/// if let Ok(ctx) = emberfire_cuda_interop::context(0) {
///     emberfire::set_backend(emberfire::Backend::CUDA);
///     let mine = ctx.new_stream().unwrap();
///     let sum = emberfire_cuda_interop::with_stream(&mine, || {
///         let a = Array::new(&[1.0f32, 2.0], dim4!(2));
///         (&a + 1.0f32).to_vec() // computed on `mine`
///     })
///     .unwrap();
///     assert_eq!(sum, vec![2.0, 3.0]);
/// }
/// ```
pub fn with_stream<R>(stream: &CudaStream, f: impl FnOnce() -> R) -> Result<R> {
    let id = device_of_stream("with_stream", stream)?;
    // SAFETY: `stream` belongs to the device's primary context (checked) and is borrowed, so
    // alive, until this call returns.
    Ok(unsafe { emberfire::cuda::with_stream(id, stream.cu_stream(), f) }?)
}

/// Makes `stream` wait, on the device, for all the work emberfire has queued on the stream's
/// device so far (on its own stream and on streams [`with_stream`] scopes made current): work
/// you queue on `stream` afterwards sees every array emberfire computed before. The host does
/// not wait.
///
/// ```
/// if let Ok(ctx) = emberfire_cuda_interop::context(0) {
///     let mine = ctx.new_stream().unwrap();
///     emberfire_cuda_interop::stream_wait_for_emberfire(&mine).unwrap();
/// }
/// ```
pub fn stream_wait_for_emberfire(stream: &CudaStream) -> Result<()> {
    let id = device_of_stream("stream_wait_for_emberfire", stream)?;
    // SAFETY: a live stream of the device's primary context (checked, borrowed).
    Ok(unsafe { emberfire::cuda::wait_for_emberfire(id, stream.cu_stream()) }?)
}

/// Makes the work emberfire queues on the stream's device from now on wait, on the device, for
/// the work queued on `stream` so far: emberfire then reads what your kernels wrote. The host
/// does not wait.
///
/// ```
/// if let Ok(ctx) = emberfire_cuda_interop::context(0) {
///     let mine = ctx.new_stream().unwrap();
///     emberfire_cuda_interop::emberfire_wait_for_stream(&mine).unwrap();
/// }
/// ```
pub fn emberfire_wait_for_stream(stream: &CudaStream) -> Result<()> {
    let id = device_of_stream("emberfire_wait_for_stream", stream)?;
    // SAFETY: a live stream of the device's primary context (checked, borrowed).
    Ok(unsafe { emberfire::cuda::emberfire_waits_for(id, stream.cu_stream()) }?)
}
