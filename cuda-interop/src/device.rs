//! Devices and the handles emberfire uses on them: native ids, the context, the streams.

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};
use emberfire::Backend;

use crate::error::{Error, Result};

/// How many CUDA devices there are, or why CUDA cannot be used here (no driver, no device).
///
/// ```
/// match emberfire_cuda_interop::device_count() {
///     Ok(n) => assert!(n > 0),
///     Err(e) => println!("no CUDA here: {e}"),
/// }
/// ```
pub fn device_count() -> Result<i32> {
    Ok(emberfire::cuda::device_count()?)
}

/// Checks that `id` is a CUDA device of emberfire's.
pub(crate) fn check_device(id: i32) -> Result<()> {
    emberfire::cuda::native_id(id)?;
    Ok(())
}

/// The CUDA ordinal of emberfire's CUDA device `id`, as ArrayFire's `afcu::getNativeId`.
/// emberfire numbers devices as the CUDA driver does for the process (after
/// `CUDA_VISIBLE_DEVICES`), so this is `id` itself; see [`emberfire::get_device_native_id`].
///
/// ```
/// if emberfire_cuda_interop::device_count().is_ok() {
///     assert_eq!(emberfire_cuda_interop::get_device_native_id(0), Ok(0));
/// }
/// assert!(emberfire_cuda_interop::get_device_native_id(-1).is_err());
/// ```
pub fn get_device_native_id(id: i32) -> Result<i32> {
    Ok(emberfire::cuda::native_id(id)?)
}

/// Makes CUDA the active backend of this thread and the device with CUDA ordinal `native_id`
/// its active device, as ArrayFire's `afcu::setNativeId`.
///
/// ```
/// if emberfire_cuda_interop::device_count().is_ok() {
///     emberfire_cuda_interop::set_device_native_id(0).unwrap();
///     assert_eq!(emberfire::get_active_backend(), emberfire::Backend::CUDA);
///     assert_eq!(emberfire::get_device(), 0);
/// }
/// ```
pub fn set_device_native_id(native_id: i32) -> Result<()> {
    let count = device_count()?;
    let id = (0..count)
        .find(|&id| emberfire::cuda::native_id(id) == Ok(native_id))
        .ok_or(emberfire::Error::InvalidDevice { requested: native_id, count })?;
    emberfire::try_set_backend(Backend::CUDA)?;
    emberfire::try_set_device(id)?;
    Ok(())
}

/// The CUDA context emberfire uses on device `id`: the device's primary context, which the
/// CUDA runtime and `CudaContext::new(ordinal)` use too. Pointers, streams and events of that
/// context pass between your code and emberfire directly.
///
/// ```
/// if let Ok(ctx) = emberfire_cuda_interop::context(0) {
///     assert_eq!(ctx.cu_ctx(), cudarc::driver::CudaContext::new(0).unwrap().cu_ctx());
/// }
/// ```
pub fn context(id: i32) -> Result<Arc<CudaContext>> {
    check_device(id)?;
    Ok(emberfire::cuda::context(id)?)
}

/// The raw stream emberfire's work on device `id` goes to from this thread, as ArrayFire's
/// `afcu::getStream`: emberfire's own stream, or the stream of the innermost
/// [`with_stream`](crate::with_stream) scope. Work you queue on it is ordered with
/// emberfire's (before and after) with no synchronisation at all. Never destroy it.
///
/// ```
/// if let Ok(s) = emberfire_cuda_interop::get_stream(0) {
///     assert_eq!(s, emberfire_cuda_interop::stream(0).unwrap().cu_stream());
/// }
/// ```
pub fn get_stream(id: i32) -> Result<sys::CUstream> {
    check_device(id)?;
    Ok(emberfire::cuda::current_stream(id)?)
}

/// emberfire's own stream on device `id`, as a cudarc stream: launch kernels and copies on it
/// with cudarc, and they run in order with emberfire's work. emberfire keeps the stream for the
/// life of the process; it is never destroyed, whatever happens to the returned handle.
///
/// ```
/// if let Ok(s) = emberfire_cuda_interop::stream(0) {
///     s.synchronize().unwrap();
/// }
/// ```
pub fn stream(id: i32) -> Result<Arc<CudaStream>> {
    check_device(id)?;
    Ok(emberfire::cuda::own_stream(id)?)
}

/// The emberfire device (CUDA ordinal) of a cudarc context, checking that it is the primary
/// context emberfire uses there.
pub(crate) fn device_of_context(
    function: &'static str,
    what: &'static str,
    ctx: &CudaContext,
) -> Result<i32> {
    let id = ctx.ordinal() as i32;
    let ours = context(id)?;
    if ours.cu_ctx() != ctx.cu_ctx() {
        return Err(Error::WrongContext { function, what });
    }
    Ok(id)
}

/// The emberfire device of a stream, checking that it belongs to a primary context (the
/// stream's context is asked of the driver, not taken from the cudarc wrapper).
pub(crate) fn device_of_stream(function: &'static str, stream: &CudaStream) -> Result<i32> {
    let id = device_of_context(function, "stream", stream.context())?;
    let ours = context(id)?;
    ours.bind_to_thread().map_err(|e| Error::driver("making the context current", e))?;
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a live stream (borrowed) and a valid out-pointer.
    unsafe { sys::cuStreamGetCtx(stream.cu_stream(), &mut ctx) }
        .result()
        .map_err(|e| Error::driver("finding the context of a stream", e))?;
    if ctx != ours.cu_ctx() {
        return Err(Error::WrongContext { function, what: "stream" });
    }
    Ok(id)
}
