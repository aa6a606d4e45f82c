//! What the interop calls do with arrays of the CPU backend, and without a CUDA device: errors
//! that name the function, never panics. These run on every machine.

use emberfire::{dim4, set_backend, Array, Backend};
use emberfire_cuda_interop::{self as interop, arg, Error, LaunchConfig, RawKernel};

#[test]
fn cpu_arrays_are_refused_by_name() {
    set_backend(Backend::CPU);
    let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    assert_eq!(interop::lock(&a).unwrap_err(), Error::NotOnCuda { function: "lock" });
    let k = RawKernel::new("extern \"C\" __global__ void f(float* x) {}", "f");
    // SAFETY: refused before any launch.
    let e = unsafe { k.launch(LaunchConfig::for_num_elems(2), &[arg(&a)]) }.unwrap_err();
    assert_eq!(e, Error::NotOnCuda { function: "RawKernel::launch" });
    // SAFETY: refused before the pointer is used.
    let e = unsafe { interop::array_from_device_ptr(8 as *mut f32, dim4!(2)) }.unwrap_err();
    assert_eq!(e, Error::NotOnCuda { function: "array_from_device_ptr" });
    let owner = std::sync::Arc::new(());
    // SAFETY: as above.
    let e =
        unsafe { interop::array_from_borrowed_ptr(8 as *const u8, dim4!(2), owner) }.unwrap_err();
    assert_eq!(e, Error::NotOnCuda { function: "array_from_borrowed_ptr" });
    assert!(e.to_string().starts_with("array_from_borrowed_ptr: "), "{e}");
    // Nothing was locked or changed.
    assert!(!a.is_locked());
    assert_eq!(a.to_vec(), vec![1.0, 2.0]);
}

#[test]
fn without_cuda_every_call_says_why() {
    let Err(why) = interop::device_count() else {
        return; // a CUDA machine: the other test files cover it
    };
    assert!(matches!(why, Error::Emberfire(emberfire::Error::BackendUnavailable(_))), "{why:?}");
    assert!(interop::get_device_native_id(0).is_err());
    assert!(interop::set_device_native_id(0).is_err());
    assert!(interop::get_stream(0).is_err());
    assert!(interop::stream(0).is_err());
    assert!(interop::context(0).is_err());
    assert!(interop::unlock_device_ptr(0, 0x1000).is_err());
    assert!(RawKernel::new("extern \"C\" __global__ void f() {}", "f").compile(0).is_err());
    assert!(emberfire::cuda::driver_allocator(0).is_err());
    assert!(emberfire::cuda::set_allocator(0, std::sync::Arc::new(NoMemory)).is_err());
    assert_eq!(get_active_backend_after_set_native_id(), Backend::CPU);
}

/// The active backend after a refused `set_device_native_id` (unchanged).
fn get_active_backend_after_set_native_id() -> Backend {
    set_backend(Backend::CPU);
    let _ = interop::set_device_native_id(0);
    emberfire::get_active_backend()
}

/// An allocator that never has memory (installing it must fail without CUDA anyway).
struct NoMemory;

// SAFETY: it never returns memory.
unsafe impl emberfire::cuda::DeviceAllocator for NoMemory {
    fn allocate(&self, bytes: usize) -> emberfire::error::Result<u64> {
        Err(emberfire::Error::OutOfMemory { bytes })
    }
    unsafe fn free(&self, _ptr: u64, _bytes: usize) {}
}
