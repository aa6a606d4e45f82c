//! DLPack exchange (`emberfire::dlpack`): export then import is the same memory and the same
//! values for every element type and for strided views; foreign tensors (made here by hand,
//! over host vectors) import as views in the layouts DLPack allows, copy only where they
//! must, and their deleter runs exactly once, on whichever thread drops the last array; an
//! exported tensor keeps its buffer alive until its deleter runs; what cannot be exchanged is
//! a clear error. On a CUDA device, a producer still writing on its own stream is read
//! finished.
//!
//! Round trips run on the backend `EMBERFIRE_BACKEND` names; tests of foreign host memory run
//! on the CPU backend whatever it names (host memory is the CPU backend's).

use crate::common;

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::MutexGuard;

use common::{Elem, Rng64, SeedableRng};
use emberfire::dlpack::{self, ffi};
use emberfire::*;

/// One test at a time (the binary's `serial` lock, which every test of it takes): the tests
/// read process-wide counters (deleter calls, buffer counts).
fn serial() -> MutexGuard<'static, ()> {
    crate::serial()
}

/// `serial`, with the CPU backend active on this thread.
fn cpu() -> MutexGuard<'static, ()> {
    let g = serial();
    set_backend(Backend::CPU);
    g
}

/// The address of an evaluated, contiguous array's first element (locks and unlocks it).
fn address<T: HasAfEnum>(a: &Array<T>) -> usize {
    let p = a.device_ptr() as usize;
    a.unlock();
    p
}

fn tensor_of(t: NonNull<ffi::DLManagedTensorVersioned>) -> ffi::DLTensor {
    // SAFETY: a live tensor.
    unsafe { (*t.as_ptr()).dl_tensor }
}

/// Reads the first four shape and stride entries of a tensor (1 and 0 past `ndim`).
fn shape_strides(t: &ffi::DLTensor) -> ([i64; 4], [i64; 4]) {
    let mut shape = [1i64; 4];
    let mut strides = [0i64; 4];
    for k in 0..t.ndim as usize {
        // SAFETY: a live tensor has `ndim` shape and stride entries.
        unsafe {
            shape[k] = *t.shape.add(k);
            strides[k] = *t.strides.add(k);
        }
    }
    (shape, strides)
}

/// Export then import, versioned and legacy, of random values of type `T` in a few shapes:
/// same address, same values, same shape; the tensor describes the array column-major.
fn round_trip<T: Elem>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for dims in [dim4!(1), dim4!(7), dim4!(3, 5), dim4!(2, 3, 4), dim4!(2, 1, 3, 2)] {
        let host: Vec<T> = (0..dims.elements()).map(|_| T::small(&mut r)).collect();
        let a = Array::new(&host, dims);
        let at = address(&a);

        let t = dlpack::to_dlpack(&a).unwrap();
        let dl = tensor_of(t);
        assert_eq!(dl.data as usize, at, "{}: tensor data is the array's memory", T::TY.name);
        assert_eq!(dlpack::dtype_of(dl.dtype), Ok(T::TY.dtype));
        let (shape, strides) = shape_strides(&dl);
        let want_strides = dims.strides();
        for k in 0..dl.ndim as usize {
            assert_eq!(shape[k] as u64, dims[k], "{}: shape of {dims}", T::TY.name);
            assert_eq!(strides[k] as u64, want_strides[k], "{}: strides of {dims}", T::TY.name);
        }
        // SAFETY: a live tensor from `to_dlpack`, consumed.
        let b: Array<T> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
        assert_eq!(b.dims(), dims);
        assert_eq!(address(&b), at, "{}: imported array is the same memory", T::TY.name);
        assert_eq!(b.to_vec(), host, "{}: values of {dims}", T::TY.name);

        let t = dlpack::to_dlpack_legacy(&a).unwrap();
        // SAFETY: a live tensor from `to_dlpack_legacy`, consumed.
        let c: Array<T> = unsafe { dlpack::from_dlpack_legacy(t, None) }.unwrap();
        assert_eq!(address(&c), at);
        assert_eq!(c.to_vec(), host);
    }
}

#[test]
fn round_trip_every_type_is_the_same_memory() {
    let _g = serial();
    round_trip::<f32>(1);
    round_trip::<f64>(2);
    round_trip::<c32>(3);
    round_trip::<c64>(4);
    round_trip::<f16>(5);
    round_trip::<bf16>(14);
    round_trip::<bool>(6);
    round_trip::<u8>(7);
    round_trip::<i16>(8);
    round_trip::<u16>(9);
    round_trip::<i32>(10);
    round_trip::<u32>(11);
    round_trip::<i64>(12);
    round_trip::<u64>(13);
}

/// A view (every other row and a column range) exports with its own strides and offset into
/// the viewed array's memory, and imports back as the same view.
#[test]
fn strided_views_export_without_a_copy() {
    let _g = serial();
    let (m, n) = (6u64, 5u64);
    let host: Vec<f64> = (0..m * n).map(|i| i as f64 * 0.25 - 3.0).collect();
    let a = Array::new(&host, dim4!(m, n));
    let base = address(&a);
    let v = index(&a, &[Seq::new(1.0, 5.0, 2.0), Seq::new(1.0, 3.0, 1.0)]);
    let t = dlpack::to_dlpack(&v).unwrap();
    let dl = tensor_of(t);
    let (shape, strides) = shape_strides(&dl);
    assert_eq!((shape[0], shape[1]), (3, 3));
    assert_eq!((strides[0], strides[1]), (2, m as i64), "the view's own strides");
    // element (0, 0) of the view is (1, 1) of `a`
    assert_eq!(dl.data as usize, base + (1 + m as usize) * 8, "no copy: a pointer into `a`");
    // SAFETY: a live tensor, consumed.
    let w: Array<f64> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    let mut want = Vec::new();
    for j in 1..=3u64 {
        for i in [1u64, 3, 5] {
            want.push(host[(i + j * m) as usize]);
        }
    }
    assert_eq!(w.to_vec(), want);
    assert_eq!(v.to_vec(), want);
}

/// How many times the hand-made tensors' deleter ran.
static DELETED: AtomicUsize = AtomicUsize::new(0);

/// What a hand-made tensor owns: its elements' memory, shape and strides.
struct Owned {
    _bytes: Vec<u64>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

unsafe extern "C" fn count_and_free(t: *mut ffi::DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the boxes `foreign` leaked, freed once (this deleter runs once).
    unsafe {
        let t = Box::from_raw(t);
        drop(Box::from_raw(t.manager_ctx as *mut Owned));
    }
}

/// A producer's tensor over a copy of `values` (bytes of any element type, placed at the
/// start of an 8-byte aligned allocation, from `byte_offset` on), with the given shape and
/// strides (`None`: row-major, a null stride pointer).
fn foreign(
    bytes: &[u8],
    dtype: ffi::DLDataType,
    shape: &[i64],
    strides: Option<&[i64]>,
    byte_offset: u64,
    flags: u64,
) -> NonNull<ffi::DLManagedTensorVersioned> {
    let mut words = vec![0u64; bytes.len().div_ceil(8) + 1];
    // SAFETY: `words` has room for `bytes`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr() as *mut u8, bytes.len())
    };
    let mut owned = Box::new(Owned {
        _bytes: words,
        shape: shape.to_vec(),
        strides: strides.map(<[i64]>::to_vec).unwrap_or_default(),
    });
    let data = owned._bytes.as_mut_ptr() as *mut c_void;
    let strides_ptr =
        if strides.is_some() { owned.strides.as_mut_ptr() } else { std::ptr::null_mut() };
    let t = Box::new(ffi::DLManagedTensorVersioned {
        version: ffi::DLPackVersion { major: 1, minor: 0 },
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(count_and_free),
        flags,
        dl_tensor: ffi::DLTensor {
            data: (data as usize - byte_offset as usize) as *mut c_void,
            device: ffi::DLDevice { device_type: ffi::DLDeviceType::kDLCPU, device_id: 0 },
            ndim: shape.len() as i32,
            dtype,
            shape: owned.shape.as_mut_ptr(),
            strides: strides_ptr,
            byte_offset,
        },
    });
    let t = Box::leak(t);
    t.manager_ctx = Box::into_raw(owned) as *mut c_void;
    NonNull::from(t)
}

fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain element types without padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
        .to_vec()
}

fn data_ptr(t: NonNull<ffi::DLManagedTensorVersioned>) -> usize {
    let dl = tensor_of(t);
    dl.data as usize + dl.byte_offset as usize
}

/// Imports a tensor made by `foreign`, checks the values against `want` (column-major),
/// that the deleter has not run while arrays use the memory, and that it runs exactly once
/// when the last one (a clone, sent to another thread) drops.
fn import_and_count<T: Elem>(t: NonNull<ffi::DLManagedTensorVersioned>, dims: Dim4, want: &[T]) {
    DELETED.store(0, Ordering::SeqCst);
    // SAFETY: a live tensor over memory its context owns.
    let a: Array<T> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(a.dims(), dims);
    assert_eq!(a.to_vec(), want);
    let lazy = &a + &a; // holds the buffer through its expression
    let b = a.clone();
    drop(a);
    assert_eq!(DELETED.load(Ordering::SeqCst), 0, "memory still in use");
    lazy.eval();
    drop(lazy);
    std::thread::spawn(move || {
        assert_eq!(b.to_vec().len(), dims.elements() as usize);
        drop(b);
    })
    .join()
    .unwrap();
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "deleter runs exactly once");
}

/// A bf16 tensor as PyTorch or JAX hands it over (`kDLBfloat`, 16 bits, row-major) imports
/// as a view of its memory, values and specials bit for bit.
#[test]
fn bf16_tensors_import_as_views() {
    let _g = cpu();
    let values: Vec<bf16> = [1.5, -2.0, 0.1, 3.0e38, 1e-40, -0.0, 7.0, -1e-3]
        .iter()
        .map(|&v| common::bf16_nearest(v))
        .collect();
    let dtype = ffi::DLDataType { code: 4, bits: 16, lanes: 1 };
    // row-major [2, 4]: element (i, j) is values[4 i + j]
    let want: Vec<bf16> = (0..8).map(|k| values[4 * (k % 2) + k / 2]).collect();
    import_and_count::<bf16>(
        foreign(&bytes_of(&values), dtype, &[2, 4], None, 0, 0),
        dim4!(2, 4),
        &want,
    );
    // contiguous: the producer's memory itself, specials bit for bit, and back out as bf16
    DELETED.store(0, Ordering::SeqCst);
    let specials = [bf16::NAN, bf16::INFINITY, bf16::NEG_INFINITY, bf16::NEG_ZERO];
    let t = foreign(&bytes_of(&specials), dtype, &[4], None, 0, 0);
    let producer = data_ptr(t);
    // SAFETY: a live tensor over memory its context owns.
    let a: Array<bf16> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(address(&a), producer, "a view, not a copy");
    let bits = |v: Vec<bf16>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(a.to_vec()), bits(specials.to_vec()));
    let out = dlpack::to_dlpack(&a).unwrap();
    let dl = tensor_of(out);
    assert_eq!((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (4, 16, 1));
    // SAFETY: a live tensor from `to_dlpack`.
    let back: Array<bf16> = unsafe { dlpack::from_dlpack(out, None) }.unwrap();
    assert_eq!(bits(back.to_vec()), bits(specials.to_vec()));
    drop((a, back));
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
}

/// An i8 tensor (NumPy's and PyTorch's int8) imports as i16, every byte with its sign,
/// reading the producer's memory until it is evaluated (its deleter waits for that); as any
/// other type it is an error naming the type.
#[test]
fn i8_tensors_import_as_i16() {
    let _g = cpu();
    let values: Vec<i8> = vec![-128, -127, -1, 0, 1, 63, 64, 127, -64, 5, -5, 100];
    let dtype = ffi::DLDataType { code: 0, bits: 8, lanes: 1 };
    // row-major [3, 4]: element (i, j) is values[4 i + j]
    let want: Vec<i16> = (0..12).map(|k| values[4 * (k % 3) + k / 3] as i16).collect();
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&bytes_of(&values), dtype, &[3, 4], None, 0, 0);
    // SAFETY: a live tensor over memory its context owns.
    let a: Array<i16> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(a.dims(), dim4!(3, 4));
    // the widening is lazy: until something evaluates it, it reads the producer's memory
    let doubled = &a * 2i16;
    assert_eq!(DELETED.load(Ordering::SeqCst), 0, "the bytes are read where they are");
    assert_eq!(doubled.to_vec(), want.iter().map(|v| v * 2).collect::<Vec<_>>());
    assert_eq!(a.to_vec(), want);
    drop((a, doubled));
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "deleter runs exactly once");
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&bytes_of(&values), dtype, &[12], None, 0, 0);
    // SAFETY: a live tensor, consumed whatever the outcome.
    let e = unsafe { dlpack::from_dlpack::<u8>(t, None) }.unwrap_err();
    assert!(e.to_string().contains("signed 8-bit"), "{e}");
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    // an empty one
    let t = foreign(&[], dtype, &[0], None, 0, 0);
    // SAFETY: a live tensor.
    let a: Array<i16> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(a.elements(), 0);
}

/// A row-major (C-order) tensor imports as a strided view over the producer's memory:
/// element [i, j] is element (i, j); the memory is not copied.
#[test]
fn row_major_tensors_import_as_views() {
    let _g = cpu();
    let (m, n) = (3usize, 4usize);
    let c_order: Vec<f32> = (0..m * n).map(|i| i as f32 * 1.5 - 4.0).collect();
    let want: Vec<f32> =
        (0..n).flat_map(|j| (0..m).map(move |i| (i * n + j) as f32 * 1.5 - 4.0)).collect();
    for strides in [None, Some(&[n as i64, 1][..])] {
        let dtype = dlpack::dl_data_type(DType::F32);
        let t = foreign(&bytes_of(&c_order), dtype, &[m as i64, n as i64], strides, 0, 0);
        import_and_count::<f32>(t, dim4!(m as u64, n as u64), &want);
    }
    // the view reads the producer's memory: a write there shows through
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&bytes_of(&c_order), dlpack::dl_data_type(DType::F32), &[12], None, 0, 0);
    let p = data_ptr(t) as *mut f32;
    // SAFETY: a live tensor, consumed.
    let a: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(address(&a), p as usize, "a contiguous tensor is not copied");
    // SAFETY: the producer's memory, alive while `a` is; nothing reads it concurrently.
    unsafe { *p.add(5) = 100.0 };
    assert_eq!(a.to_vec()[5], 100.0);
    drop(a);
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
}

/// Strides of every kind DLPack allows: a byte offset, negative strides (a flipped axis),
/// zero strides (broadcast), gaps; three and four dimensions, 0-d scalars.
#[test]
fn any_strides_import_and_read_right() {
    let _g = cpu();
    let src: Vec<i32> = (0..128).map(|i| i * 7 - 100).collect();
    // (shape, strides, offset of element 0 in `src`)
    let cases: [(&[i64], &[i64], usize); 6] = [
        (&[4, 3], &[1, 4], 0),
        (&[4, 3], &[-1, 4], 3),
        (&[5], &[0], 9),
        (&[2, 3, 4], &[1, 8, 24], 2),
        (&[2, 2, 2, 3], &[-16, 4, 1, -30], 76),
        (&[], &[], 17),
    ];
    for (shape, strides, first) in cases {
        let nd = shape.len();
        let mut d = [1u64; 4];
        let mut s = [0i64; 4];
        for k in 0..nd {
            d[k] = shape[k] as u64;
            s[k] = strides[k];
        }
        let mut want = Vec::new();
        for l in 0..d[3] {
            for k in 0..d[2] {
                for j in 0..d[1] {
                    for i in 0..d[0] {
                        let at = first as i64
                            + i as i64 * s[0]
                            + j as i64 * s[1]
                            + k as i64 * s[2]
                            + l as i64 * s[3];
                        want.push(src[at as usize]);
                    }
                }
            }
        }
        // the whole source in the producer's memory, element 0 `first` elements in (negative
        // strides reach below it), through the byte offset
        let dtype = dlpack::dl_data_type(DType::S32);
        let t = foreign(&bytes_of(&src), dtype, shape, Some(strides), 0, 0);
        // SAFETY: the tensor is live and not yet handed over.
        unsafe { (*t.as_ptr()).dl_tensor.byte_offset = 4 * first as u64 };
        import_and_count::<i32>(t, Dim4::new(&d), &want);
    }
}

/// Copies happen only where they must: unaligned memory, bools that are not 0 or 1, empty
/// tensors. Each still calls the deleter exactly once (at once, since nothing is shared).
#[test]
fn imports_copy_only_where_they_must() {
    let _g = cpu();
    // unaligned f64s: the byte offset moves the first element off an 8-byte boundary
    let vals: Vec<f64> = vec![1.5, -2.25, 3.0];
    let mut bytes = vec![0u8];
    bytes.extend(bytes_of(&vals));
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&bytes, dlpack::dl_data_type(DType::F64), &[3], Some(&[1]), 0, 0);
    // SAFETY: the tensor is live and not yet handed over.
    unsafe { (*t.as_ptr()).dl_tensor.byte_offset = 1 };
    let p = data_ptr(t);
    // SAFETY: a live tensor, consumed.
    let a: Array<f64> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "copied, so the producer is released");
    assert_ne!(address(&a), p);
    assert_eq!(a.to_vec(), vals);

    // bools: a byte of 2 is read as true, by a copy
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&[0, 1, 2, 0], dlpack::dl_data_type(DType::B8), &[4], None, 0, 0);
    // SAFETY: a live tensor, consumed.
    let b: Array<bool> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    assert_eq!(b.to_vec(), vec![false, true, true, false]);
    // valid bools are shared
    let t = foreign(&[1, 0, 1], dlpack::dl_data_type(DType::B8), &[3], None, 0, 0);
    import_and_count::<bool>(t, dim4!(3), &[true, false, true]);

    // empty
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&[], dlpack::dl_data_type(DType::U16), &[0, 3], None, 0, 0);
    // SAFETY: a live tensor, consumed.
    let e: Array<u16> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    assert_eq!(e.dims(), dim4!(0, 3));
    assert!(e.is_empty());
}

/// A read-only tensor is never written in place: an assignment to the array copies first.
#[test]
fn read_only_tensors_are_not_written() {
    let _g = cpu();
    DELETED.store(0, Ordering::SeqCst);
    let vals: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0];
    let flag = ffi::DLPACK_FLAG_BITMASK_READ_ONLY as u64;
    let t = foreign(&bytes_of(&vals), dlpack::dl_data_type(DType::F32), &[4], None, 0, flag);
    let p = data_ptr(t) as *const f32;
    // the test keeps the memory, so that it can be read after the producer is released
    // SAFETY: the tensor's context is the `Owned` that `foreign` made, not yet handed over.
    let _kept = std::mem::take(unsafe { &mut (*((*t.as_ptr()).manager_ctx as *mut Owned))._bytes });
    // SAFETY: a live tensor, consumed.
    let mut a: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert!(a.is_locked(), "read-only memory counts as locked");
    let ones = constant(9.0f32, dim4!(2));
    assign_seq(&mut a, &[Seq::new(0.0, 1.0, 1.0)], &ones);
    assert_eq!(a.to_vec(), vec![9.0, 9.0, 3.0, 4.0]);
    // SAFETY: `_kept` holds the producer's memory.
    let seen: Vec<f32> = (0..4).map(|i| unsafe { *p.add(i) }).collect();
    assert_eq!(seen, vals, "the producer's memory is untouched");
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "the array moved to a copy of its own");
    drop(a);
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);

    // without the flag, an assignment to a dense import writes the producer's memory
    let t = foreign(&bytes_of(&vals), dlpack::dl_data_type(DType::F32), &[4], None, 0, 0);
    let p = data_ptr(t) as *const f32;
    // SAFETY: a live tensor, consumed.
    let mut b: Array<f32> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert!(!b.is_locked());
    assign_seq(&mut b, &[Seq::new(3.0, 3.0, 1.0)], &constant(-1.0f32, dim4!(1)));
    // SAFETY: as above.
    assert_eq!(unsafe { *p.add(3) }, -1.0);
    drop(b);
}

/// An exported tensor keeps the buffer alive after every array is gone, until its deleter
/// runs (on another thread here), and the buffer is released then.
#[test]
fn exports_keep_their_buffer_until_the_deleter() {
    let _g = cpu();
    let host: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    let before = device_mem_info();
    let a = Array::new(&host, dim4!(10, 100));
    let t = dlpack::to_dlpack(&a).unwrap();
    drop(a);
    assert_eq!(device_mem_info().1, before.1 + 1, "one buffer still held, by the tensor");
    let dl = tensor_of(t);
    // SAFETY: the tensor's memory, alive until its deleter runs.
    let seen = unsafe { std::slice::from_raw_parts(dl.data as *const u32, 1000) }.to_vec();
    assert_eq!(seen, host);
    let addr = t.as_ptr() as usize;
    std::thread::spawn(move || {
        let t = addr as *mut ffi::DLManagedTensorVersioned;
        // SAFETY: the tensor's deleter, run once, on another thread.
        unsafe { ((*t).deleter.unwrap())(t) };
    })
    .join()
    .unwrap();
    assert_eq!(device_mem_info().1, before.1, "the buffer is released by the deleter");
}

/// While exported, the buffer is not written in place by an assignment to the array.
#[test]
fn exported_buffers_are_not_written_in_place() {
    let _g = serial();
    let mut a = Array::new(&[1i64, 2, 3], dim4!(3));
    let t = dlpack::to_dlpack_legacy(&a).unwrap();
    assign_seq(&mut a, &[Seq::new(0.0, 0.0, 1.0)], &constant(50i64, dim4!(1)));
    assert_eq!(a.to_vec(), vec![50, 2, 3]);
    // SAFETY: a live tensor, consumed: it still holds the values it was exported with.
    let b: Array<i64> = unsafe { dlpack::from_dlpack_legacy(t, None) }.unwrap();
    assert_eq!(b.to_vec(), vec![1, 2, 3]);
}

/// What cannot be exchanged is an `Error::Exchange` naming the function and the reason, and
/// the tensor's deleter has run.
#[test]
fn unexchangeable_tensors_are_clear_errors() {
    let _g = cpu();
    let bytes = [0u8; 64];
    let f32t = dlpack::dl_data_type(DType::F32);
    let cases: Vec<(NonNull<ffi::DLManagedTensorVersioned>, &str)> = vec![
        (
            foreign(&bytes, ffi::DLDataType { code: 4, bits: 32, lanes: 1 }, &[4], None, 0, 0),
            "bfloat of this width",
        ),
        (
            foreign(&bytes, ffi::DLDataType { code: 4, bits: 16, lanes: 1 }, &[4], None, 0, 0),
            "BF16 elements, not F32",
        ),
        (
            foreign(&bytes, ffi::DLDataType { code: 0, bits: 8, lanes: 1 }, &[4], None, 0, 0),
            "signed 8-bit",
        ),
        (
            foreign(&bytes, ffi::DLDataType { code: 77, bits: 8, lanes: 1 }, &[4], None, 0, 0),
            "type code",
        ),
        (foreign(&bytes, dlpack::dl_data_type(DType::F64), &[4], None, 0, 0), "not F32"),
        (foreign(&bytes, f32t, &[1, 1, 1, 1, 2], None, 0, 0), "at most 4"),
        (foreign(&bytes, f32t, &[2, -1], None, 0, 0), "negative size"),
    ];
    for (t, why) in cases {
        DELETED.store(0, Ordering::SeqCst);
        // SAFETY: a live tensor, consumed whatever the outcome.
        let e = unsafe { dlpack::from_dlpack::<f32>(t, None) }.unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Exchange(_)), "{msg}");
        assert!(msg.contains("from_dlpack") && msg.contains(why), "{msg} (wanted {why})");
        assert_eq!(DELETED.load(Ordering::SeqCst), 1, "{why}: the deleter ran");
    }
    // devices: a CUDA device this machine does not have (none, or fewer than 1000), and a
    // device emberfire lacks
    for (device_type, why) in
        [(ffi::DLDeviceType::kDLCUDA, "CUDA device 999"), (ffi::DLDeviceType::kDLMetal, "Metal")]
    {
        DELETED.store(0, Ordering::SeqCst);
        let t = foreign(&bytes, f32t, &[4], None, 0, 0);
        // SAFETY: the tensor is live and not yet handed over.
        unsafe {
            (*t.as_ptr()).dl_tensor.device.device_type = device_type;
            (*t.as_ptr()).dl_tensor.device.device_id = 999;
        }
        // SAFETY: a live tensor, consumed.
        let e = unsafe { dlpack::from_dlpack::<f32>(t, None) }.unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
        assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    }
    // a newer major version is refused (and its deleter still called, as DLPack allows)
    DELETED.store(0, Ordering::SeqCst);
    let t = foreign(&bytes, f32t, &[4], None, 0, 0);
    // SAFETY: as above.
    unsafe { (*t.as_ptr()).version.major = 2 };
    // SAFETY: a live tensor, consumed.
    let e = unsafe { dlpack::from_dlpack::<f32>(t, None) }.unwrap_err();
    assert!(e.to_string().contains("DLPack 2.0"), "{e}");
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    // a sparse array has no DLPack form
    let dense = Array::new(&[0.0f32, 1.0, 0.0, 2.0], dim4!(2, 2));
    let sp = sparse_from_dense(&dense, SparseFormat::CSR);
    let e = dlpack::to_dlpack(&sp).unwrap_err();
    assert!(e.to_string().contains("sparse"), "{e}");
}

/// The bytes of an exported bool tensor's elements, in the tensor's own layout (column-major
/// positions of a tensor of at most two dimensions).
fn exported_bool_bytes(t: &ffi::DLTensor) -> Vec<u8> {
    let (shape, strides) = shape_strides(t);
    let mut out = Vec::new();
    for j in 0..shape[1] {
        for i in 0..shape[0] {
            let at = i * strides[0] + j * strides[1];
            // SAFETY: a live host tensor holds an element at every position of its layout.
            out.push(unsafe { *(t.data as *const u8).add(t.byte_offset as usize + at as usize) });
        }
    }
    out
}

/// Arithmetic on bools keeps counts in their bytes; what an export hands out is 0 and 1 only
/// (DLPack consumers read any other byte differently), without touching the array, and
/// without a copy where the bytes are already 0 and 1.
#[test]
fn exported_bools_hold_only_zero_and_one() {
    let _g = cpu();
    let mut r = Rng64::seed_from_u64(39);
    let x: Vec<bool> = (0..24).map(|_| bool::small(&mut r)).collect();
    let y: Vec<bool> = (0..24).map(|_| bool::small(&mut r)).collect();
    let (a, b) = (Array::new(&x, dim4!(4, 6)), Array::new(&y, dim4!(4, 6)));
    // the byte counts, computed here independently: a + b + a holds 0..=3
    let counts: Vec<u8> = x.iter().zip(&y).map(|(&p, &q)| 2 * p as u8 + q as u8).collect();
    let want: Vec<u8> = counts.iter().map(|&c| (c != 0) as u8).collect();
    assert!(counts.iter().any(|&c| c > 1), "the sample has counts above 1");
    let lazy = &(&a + &b) + &a;
    let ready = lazy.copy();
    ready.eval();
    for (name, s) in [("lazy", &lazy), ("evaluated", &ready)] {
        assert_eq!(s.cast::<u8>().to_vec(), counts, "{name}: the array holds the counts");
        let t = dlpack::to_dlpack(s).unwrap();
        assert_eq!(exported_bool_bytes(&tensor_of(t)), want, "{name}: versioned export");
        // SAFETY: the tensor's deleter, run once.
        unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
        let t = dlpack::to_dlpack_legacy(s).unwrap();
        // SAFETY: a live legacy tensor.
        let dl = unsafe { (*t.as_ptr()).dl_tensor };
        assert_eq!(exported_bool_bytes(&dl), want, "{name}: legacy export");
        // SAFETY: as above.
        unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
        assert_eq!(s.cast::<u8>().to_vec(), counts, "{name}: the array is unchanged");
    }
    // a view of counts (every other column) is normalised too
    let v = index(&ready, &[Seq::default(), Seq::new(0.0, 5.0, 2.0)]);
    let t = dlpack::to_dlpack(&v).unwrap();
    let want_v: Vec<u8> = (0..3).flat_map(|j| want[8 * j..8 * j + 4].to_vec()).collect();
    assert_eq!(exported_bool_bytes(&tensor_of(t)), want_v);
    // SAFETY: the tensor's deleter, run once.
    unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
    // bools of 0 and 1 (host data, a comparison, a computed sum checked on export) leave
    // without a copy: two exports point at the same memory, the array's own
    let cmp = gt(&Array::new(&[1.0f32, -1.0, 2.0, 0.0], dim4!(4)), &0.0f32, false);
    let sum =
        &Array::new(&[true, false, false, false], dim4!(4)) + &Array::new(&[false; 4], dim4!(4));
    for (name, s) in [("host data", a.clone()), ("comparison", cmp), ("clean sum", sum)] {
        s.eval();
        let own = address(&s);
        let t1 = dlpack::to_dlpack(&s).unwrap();
        let t2 = dlpack::to_dlpack(&s).unwrap();
        assert_eq!(data_ptr(t1), data_ptr(t2), "{name}: no copy");
        assert_eq!(data_ptr(t1), own, "{name}: the array's memory");
        // SAFETY: each tensor's deleter, run once.
        unsafe {
            ((*t1.as_ptr()).deleter.unwrap())(t1.as_ptr());
            ((*t2.as_ptr()).deleter.unwrap())(t2.as_ptr());
        }
    }
}

/// With the CUDA backend active: a host tensor becomes an array of the CPU backend (the same
/// memory), operations on it run on the CPU (scalars included), mixing it with a CUDA array
/// is an error that says how to move one, and `to_backend` moves it.
#[test]
#[ignore = "needs a CUDA device"]
fn host_tensors_stay_on_the_host_with_cuda_active() {
    let _g = serial();
    set_backend(Backend::CUDA);
    let vals = [1.5f64, -2.0, 4.25, 8.0];
    let t = foreign(&bytes_of(&vals), dlpack::dl_data_type(DType::F64), &[4], None, 0, 0);
    let p = data_ptr(t);
    // SAFETY: a live tensor over memory its context owns.
    let a: Array<f64> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(a.get_backend(), Backend::CPU);
    assert_eq!(get_active_backend(), Backend::CUDA, "the active backend is left alone");
    let b: Array<f64> = &a * 2.0f64 + 1.0f64;
    assert_eq!(b.get_backend(), Backend::CPU);
    assert_eq!(b.to_vec(), vals.iter().map(|v| v * 2.0 + 1.0).collect::<Vec<_>>());
    let g = Array::new(&vals, dim4!(4));
    assert_eq!(g.get_backend(), Backend::CUDA);
    let e = std::panic::catch_unwind(|| &a + &g).unwrap_err();
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("CPU backend and CUDA device") && msg.contains("to_backend"), "{msg}");
    let moved = a.to_backend(Backend::CUDA);
    assert_eq!((&moved + &g).to_vec(), vals.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
    assert_eq!(address(&a), p, "the import shares the producer's memory");
    set_backend(Backend::CPU);
}

/// On a CUDA device: bool arrays of unknown bytes are exported as a normalised copy, those of
/// a comparison without one.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_bool_exports_hold_only_zero_and_one() {
    let _g = serial();
    set_backend(Backend::CUDA);
    let x = Array::new(&[true, true, false, true], dim4!(4));
    let counts = &x + &x;
    assert_eq!(counts.cast::<u8>().to_vec(), vec![2, 2, 0, 2]);
    let t = dlpack::to_dlpack(&counts).unwrap();
    // SAFETY: a live tensor, consumed; the import reads the exported bytes as they are.
    let back: Array<bool> = unsafe { dlpack::from_dlpack(t, None) }.unwrap();
    assert_eq!(back.cast::<u8>().to_vec(), vec![1, 1, 0, 1]);
    let cmp = gt(&Array::new(&[1.0f32, -1.0], dim4!(2)), &0.0f32, false);
    cmp.eval();
    let own = address(&cmp);
    let t = dlpack::to_dlpack(&cmp).unwrap();
    assert_eq!(data_ptr(t), own, "a comparison leaves without a copy");
    // SAFETY: the tensor's deleter, run once.
    unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
    set_backend(Backend::CPU);
}

/// On a CUDA device: a producer whose kernel is still writing on its own stream when the
/// tensor is imported with that stream is read finished; and an export read by a kernel on a
/// consumer stream sees the array's values.
#[test]
#[ignore = "needs a CUDA device"]
fn cuda_producer_stream_is_ordered_before_reads() {
    let _g = serial();
    set_backend(Backend::CUDA);
    let ctx = emberfire::cuda::context(0).unwrap();
    let producer = ctx.new_stream().unwrap();
    let n = 1usize << 20;
    let mem = producer.alloc_zeros::<f32>(n).unwrap();
    // a slow writer: each thread spins ~20 ms of clock cycles before writing its element
    let src = r#"extern "C" __global__ void slow_fill(float* x, unsigned n, long long spin) {
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
        long long t0 = clock64();
        while (clock64() - t0 < spin) {}
        if (i < n) x[i] = 0.5f * (float)i + 1.0f;
    }"#;
    let k = emberfire::cuda::compile_kernel(0, src, "slow_fill").unwrap();
    let ptr = {
        use cudarc::driver::DevicePtr;
        let (p, _sync) = mem.device_ptr(&producer);
        p
    };
    let mut p = ptr;
    let mut count = n as u32;
    let mut spin: i64 = 40_000_000;
    let mut params = [
        &mut p as *mut u64 as *mut c_void,
        &mut count as *mut u32 as *mut c_void,
        &mut spin as *mut i64 as *mut c_void,
    ];
    // SAFETY: `mem` holds n floats on device 0, alive until the deleter (below) drops it.
    unsafe {
        k.launch_on(
            producer.cu_stream(),
            ((n as u32).div_ceil(256), 1, 1),
            (256, 1, 1),
            0,
            &mut params,
        )
    }
    .unwrap();
    // the tensor owns the slice: its deleter frees it
    struct Device {
        _mem: cudarc::driver::CudaSlice<f32>,
        shape: [i64; 1],
        strides: [i64; 1],
    }
    unsafe extern "C" fn free_device(t: *mut ffi::DLManagedTensorVersioned) {
        DELETED.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the boxes leaked below, freed once.
        unsafe {
            let t = Box::from_raw(t);
            drop(Box::from_raw(t.manager_ctx as *mut Device));
        }
    }
    let mut owner = Box::new(Device { _mem: mem, shape: [n as i64], strides: [1] });
    let t = Box::leak(Box::new(ffi::DLManagedTensorVersioned {
        version: ffi::DLPackVersion { major: 1, minor: 0 },
        manager_ctx: std::ptr::null_mut(),
        deleter: Some(free_device),
        flags: 0,
        dl_tensor: ffi::DLTensor {
            data: ptr as usize as *mut c_void,
            device: ffi::DLDevice { device_type: ffi::DLDeviceType::kDLCUDA, device_id: 0 },
            ndim: 1,
            dtype: dlpack::dl_data_type(DType::F32),
            shape: owner.shape.as_mut_ptr(),
            strides: owner.strides.as_mut_ptr(),
            byte_offset: 0,
        },
    }));
    t.manager_ctx = Box::into_raw(owner) as *mut c_void;
    DELETED.store(0, Ordering::SeqCst);
    let handle = producer.cu_stream() as usize as isize;
    // SAFETY: a live tensor; `producer` outlives the import and the reads.
    let a: Array<f32> = unsafe { dlpack::from_dlpack(NonNull::from(t), Some(handle)) }.unwrap();
    assert_eq!(address(&a), ptr as usize, "device memory imported without a copy");
    let b = &a * 2.0f32;
    let got = b.to_vec();
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, 2.0 * (0.5 * i as f32 + 1.0), "element {i} read before it was written");
    }
    drop((a, b));
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);

    // export for a consumer stream, read back through an import on that stream
    let consumer = ctx.new_stream().unwrap();
    let c = sin(&constant(1.0f32, dim4!(n as u64))) + 0.5f32;
    // SAFETY: `consumer` is a live stream of device 0's primary context.
    let t = unsafe { dlpack::to_dlpack_for_stream(&c, consumer.cu_stream() as usize as isize) }
        .unwrap();
    // SAFETY: a live tensor, consumed; the consumer stream is live.
    let d: Array<f32> =
        unsafe { dlpack::from_dlpack(t, Some(consumer.cu_stream() as usize as isize)) }.unwrap();
    let want = 1.0f32.sin() + 0.5;
    assert!(d.to_vec().iter().all(|&x| (x - want).abs() < 1e-6));
    set_backend(Backend::CPU);
}
