//! Devices and handles: native ids are CUDA ordinals, emberfire's context is the primary one
//! (shared with cudarc), and the stream handles are emberfire's. Needs a CUDA device (skips
//! without one).

use crate::common;

use emberfire::{dim4, Array, Backend};
use emberfire_cuda_interop::{self as interop, cudarc::driver::CudaContext, Error};

#[test]
fn native_ids_are_the_driver_ordinals() {
    let Some(_gpu) = common::cuda() else { return };
    let count = interop::device_count().unwrap();
    assert_eq!(count, emberfire::device_count());
    for id in 0..count {
        let native = interop::get_device_native_id(id).unwrap();
        assert_eq!(native, id);
        assert_eq!(emberfire::get_device_native_id(id), native);
        // The same GPU for emberfire and for cudarc at that ordinal (after CUDA_VISIBLE_DEVICES,
        // which the driver applies to both).
        let theirs = CudaContext::new(native as usize).unwrap();
        let ours = interop::context(id).unwrap();
        assert_eq!(theirs.cu_device(), ours.cu_device());
        assert_eq!(theirs.uuid().unwrap().bytes, ours.uuid().unwrap().bytes);
        interop::set_device_native_id(native).unwrap();
        assert_eq!(emberfire::get_device(), id);
    }
    interop::set_device_native_id(0).unwrap();
    for bad in [-1, count, count + 5] {
        let e = interop::get_device_native_id(bad).unwrap_err();
        assert_eq!(e, Error::Emberfire(emberfire::Error::InvalidDevice { requested: bad, count }));
        assert!(interop::set_device_native_id(bad).is_err());
        assert!(interop::get_stream(bad).is_err() && interop::context(bad).is_err());
    }
    assert_eq!(emberfire::get_device(), 0);
}

#[test]
fn set_device_native_id_selects_the_cuda_backend() {
    let Some(_gpu) = common::cuda() else { return };
    emberfire::set_backend(Backend::CPU);
    interop::set_device_native_id(0).unwrap();
    assert_eq!(emberfire::get_active_backend(), Backend::CUDA);
    let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    assert_eq!(a.get_backend(), Backend::CUDA);
    assert_eq!(a.get_device_id(), 0);
}

#[test]
fn emberfire_and_cudarc_share_the_primary_context() {
    let Some(_gpu) = common::cuda() else { return };
    let ours = interop::context(common::dev()).unwrap();
    let theirs = CudaContext::new(common::dev() as usize).unwrap();
    assert!(theirs.is_primary());
    assert_eq!(ours.cu_ctx(), theirs.cu_ctx());
    // Memory cudarc allocates through its own context object is usable by emberfire as it is.
    let s = theirs.new_stream().unwrap();
    let slice = s.clone_htod(&[3.0f32, 1.0, 2.0]).unwrap();
    let a = interop::array_from_slice(slice, dim4!(3)).unwrap();
    assert_eq!(emberfire::sum_all(&(&a * 2.0f32)).0, 12.0);
}

#[test]
fn stream_handles_are_emberfires_own_outside_scopes() {
    let Some(_gpu) = common::cuda() else { return };
    let raw = interop::get_stream(common::dev()).unwrap();
    let own = interop::stream(common::dev()).unwrap();
    assert_eq!(raw, own.cu_stream());
    assert!(!raw.is_null(), "a stream of emberfire's own, not the legacy default stream");
    // Work queued on it through cudarc runs in order with emberfire's: a copy of an array's
    // memory needs no synchronisation before it.
    let a = Array::new(&[1.5f64, 2.5, 3.5], dim4!(3)) * 2.0f64;
    let guard = interop::lock(&a).unwrap();
    assert_eq!(own.clone_dtoh(&guard.view().unwrap()).unwrap(), vec![3.0, 5.0, 7.0]);
    // Dropping the handle leaves the stream alive (emberfire keeps it).
    drop(own);
    drop(guard);
    let b = &a + 1.0f64;
    assert_eq!(b.to_vec(), vec![4.0, 6.0, 8.0]);
    assert_eq!(interop::stream(common::dev()).unwrap().cu_stream(), raw);
}
