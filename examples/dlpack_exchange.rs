//! DLPack from Rust: an array handed to a consumer and taken back without a copy, and another
//! producer's row-major tensor read as a strided view whose deleter runs when the last array
//! using it drops. Checks its own results; the book's "Exchanging arrays" chapter shows it.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use emberfire::dlpack::{self, ffi};
use emberfire::{dim4, sum_all, Array, Backend, DType};

static RELEASED: AtomicUsize = AtomicUsize::new(0);

// ANCHOR: producer
/// What our producer keeps alive for a tensor: its elements, shape and strides.
struct Owned {
    values: Vec<f32>,
    shape: [i64; 2],
    strides: [i64; 2],
}

unsafe extern "C" fn release(t: *mut ffi::DLManagedTensorVersioned) {
    RELEASED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the two boxes `row_major` leaked; DLPack runs a deleter once.
    unsafe {
        let t = Box::from_raw(t);
        drop(Box::from_raw(t.manager_ctx as *mut Owned));
    }
}

/// A 2 x 3 row-major (C order) tensor, as NumPy or PyTorch would make it.
fn row_major(values: Vec<f32>) -> std::ptr::NonNull<ffi::DLManagedTensorVersioned> {
    let owned = Box::into_raw(Box::new(Owned { values, shape: [2, 3], strides: [3, 1] }));
    // SAFETY: `owned` was just leaked and lives until `release`.
    let o = unsafe { &mut *owned };
    let t = Box::new(ffi::DLManagedTensorVersioned {
        version: ffi::DLPackVersion { major: 1, minor: 0 },
        manager_ctx: owned as *mut c_void,
        deleter: Some(release),
        flags: 0,
        dl_tensor: ffi::DLTensor {
            data: o.values.as_mut_ptr() as *mut c_void,
            device: ffi::DLDevice { device_type: ffi::DLDeviceType::kDLCPU, device_id: 0 },
            ndim: 2,
            dtype: dlpack::dl_data_type(DType::F32),
            shape: o.shape.as_mut_ptr(),
            strides: o.strides.as_mut_ptr(),
            byte_offset: 0,
        },
    });
    std::ptr::NonNull::from(Box::leak(t))
}
// ANCHOR_END: producer

fn main() {
    // ANCHOR: round_trip
    let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(3, 2));
    let tensor = dlpack::to_dlpack(&a).unwrap(); // a's memory, column-major strides (1, 3)
                                                 // SAFETY: a live tensor from `to_dlpack`; `from_dlpack` takes it over.
    let b: Array<f64> = unsafe { dlpack::from_dlpack(tensor, None) }.unwrap();
    assert_eq!(b.to_vec(), a.to_vec()); // the same buffer, not a copy
                                        // ANCHOR_END: round_trip

    // ANCHOR: import
    let t = row_major(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]); // [[1, 2, 3], [4, 5, 6]]
                                                           // SAFETY: a live tensor whose memory stays valid until its deleter runs.
    let m: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(m.get_backend(), Backend::CPU); // host memory: the CPU backend, whatever is active
    assert_eq!(m.dims(), dim4!(2, 3)); // element [i, j] is element (i, j)
    assert_eq!(m.to_vec(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]); // read through strides (3, 1)
    let doubled = &m * 2.0f32; // lazy: still reads the producer's memory
    drop(m);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0); // `doubled` still uses it
    assert_eq!(sum_all(&doubled).0, 42.0);
    drop(doubled);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1); // the deleter ran, once
                                                    // ANCHOR_END: import
    println!("dlpack_exchange: ok");
}
