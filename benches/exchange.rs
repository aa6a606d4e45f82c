//! The cost of exchanging a 1 GiB array through DLPack, beside the cost of copying it:
//!
//! ```text
//! case=<name> impl=emberfire us=<median microseconds>
//! ```
//!
//! - `dlpack_export_1gib`: `to_dlpack` of an evaluated array, then the consumer's deleter;
//! - `dlpack_import_own_1gib`: `from_dlpack` of a tensor emberfire exported (the original
//!   buffer comes back), export included;
//! - `dlpack_import_foreign_1gib`: `from_dlpack` of another producer's tensor (host memory
//!   on the CPU, a cudarc allocation on CUDA), then dropping the array, which calls its
//!   deleter;
//! - `copy_1gib`: a device copy of the same array (`Array::copy`, evaluated and synchronised),
//!   what an exchange by copy would cost at least.
//!
//! Usage: `cargo bench --bench exchange [-- --quick]`; other arguments are ignored.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::time::Instant;

use emberfire::dlpack::{self, ffi};
use emberfire::{constant, dim4, get_active_backend, sync, Array, Backend, DType};

const ELEMENTS: u64 = 1 << 28; // f32: 1 GiB

fn median_us(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn emit(case: &str, us: f64) {
    println!("case={case} impl=emberfire us={us:.3}");
}

/// What a foreign tensor owns: its shape and stride (the memory is the bench's).
struct Dims {
    shape: [i64; 1],
    strides: [i64; 1],
}

unsafe extern "C" fn free_dims(t: *mut ffi::DLManagedTensorVersioned) {
    // SAFETY: the boxes `foreign` leaked, freed once.
    unsafe {
        let t = Box::from_raw(t);
        drop(Box::from_raw(t.manager_ctx as *mut Dims));
    }
}

/// A producer's tensor over `n` f32 at `ptr` on `device`.
fn foreign(ptr: usize, n: u64, device: ffi::DLDevice) -> NonNull<ffi::DLManagedTensorVersioned> {
    let dims = Box::into_raw(Box::new(Dims { shape: [n as i64], strides: [1] }));
    // SAFETY: `dims` was just leaked and lives until the deleter.
    let (shape, strides) = unsafe { ((*dims).shape.as_mut_ptr(), (*dims).strides.as_mut_ptr()) };
    NonNull::from(Box::leak(Box::new(ffi::DLManagedTensorVersioned {
        version: ffi::DLPackVersion { major: 1, minor: 0 },
        manager_ctx: dims as *mut c_void,
        deleter: Some(free_dims),
        flags: 0,
        dl_tensor: ffi::DLTensor {
            data: ptr as *mut c_void,
            device,
            ndim: 1,
            dtype: dlpack::dl_data_type(DType::F32),
            shape,
            strides,
            byte_offset: 0,
        },
    })))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 5 } else { 25 };
    let backend = get_active_backend();
    eprintln!("backend {backend:?}, 1 GiB of f32 ({ELEMENTS} elements)");

    let a = constant(1.5f32, dim4!(ELEMENTS));
    a.eval();
    sync(-1);

    emit(
        "dlpack_export_1gib",
        median_us(reps, || {
            let t = dlpack::to_dlpack(&a).unwrap();
            // SAFETY: the consumer's side: the deleter, run once.
            unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
        }),
    );

    emit(
        "dlpack_import_own_1gib",
        median_us(reps, || {
            let t = dlpack::to_dlpack(&a).unwrap();
            // SAFETY: a live tensor, consumed.
            let b: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
            drop(b);
        }),
    );

    // Another producer's memory: a host vector on the CPU, a driver allocation on CUDA.
    let (ptr, device, _keep): (usize, ffi::DLDevice, Box<dyn std::any::Any>) = match backend {
        Backend::CUDA => {
            let stream = emberfire::cuda::own_stream(0).unwrap();
            let mem = stream.alloc_zeros::<f32>(ELEMENTS as usize).unwrap();
            let p = {
                use cudarc::driver::DevicePtr;
                let (p, _sync) = mem.device_ptr(&stream);
                p as usize
            };
            stream.synchronize().unwrap();
            (
                p,
                ffi::DLDevice { device_type: ffi::DLDeviceType::kDLCUDA, device_id: 0 },
                Box::new(mem),
            )
        }
        _ => {
            let mut v = vec![0.5f32; ELEMENTS as usize];
            (
                v.as_mut_ptr() as usize,
                ffi::DLDevice { device_type: ffi::DLDeviceType::kDLCPU, device_id: 0 },
                Box::new(v),
            )
        }
    };
    emit(
        "dlpack_import_foreign_1gib",
        median_us(reps, || {
            let t = foreign(ptr, ELEMENTS, device);
            // SAFETY: a live tensor over memory `_keep` holds for the whole bench.
            let b: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
            drop(b);
        }),
    );

    emit(
        "copy_1gib",
        median_us(reps.min(9), || {
            let c = a.copy();
            c.eval();
            sync(-1);
        }),
    );
}
