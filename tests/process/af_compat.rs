//! arrayfire-rust names that exist for code ported from it: the FFI type names and the null
//! `af_array`, host and pinned memory, the memory step, `init`, `mem_info!`, `Scalar`, the enum
//! values and conversions, `get_allocated_bytes`, and the scalar operators it accepts (bool on
//! the right of + - * /, shifts assigned by an unsigned scalar).

use std::panic::catch_unwind;

use emberfire::*;

fn panic_text<R>(r: std::thread::Result<R>) -> String {
    let payload = r.err().expect("the call should have panicked");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Column-major product of an m×k and a k×n matrix, in f64.
fn host_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            c[i + m * j] = (0..k).map(|p| a[i + m * p] * b[p + k * j]).sum();
        }
    }
    c
}

/// arrayfire-rust's `gemm` example that starts from a null handle, with its `use` line changed.
#[test]
fn gemm_example_with_a_null_handle() {
    let _serial = crate::serial();
    let dims = Dim4::new(&[5, 5, 1, 1]);

    #[allow(clippy::unnecessary_cast)] // kept as the example writes it
    let alpha = vec![1.0 as f32];
    #[allow(clippy::unnecessary_cast)]
    let beta = vec![2.0 as f32];

    let lhs = randu::<f32>(dims);
    let rhs = randu::<f32>(dims);

    let mut result: Array<f32> = (std::ptr::null_mut() as af_array).into();

    gemm(&mut result, MatProp::NONE, MatProp::NONE, alpha, &lhs, &rhs, beta);

    // A fresh output has nothing for beta to scale: the result is lhs·rhs.
    let (l, r) = (lhs.cast::<f64>().to_vec(), rhs.cast::<f64>().to_vec());
    let want = host_matmul(&l, &r, 5, 5, 5);
    assert_eq!(result.dims(), dims);
    for (g, w) in result.to_vec().iter().zip(&want) {
        assert!((*g as f64 - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
    }
}

#[test]
fn null_handle_gives_an_empty_array_of_each_type() {
    let _serial = crate::serial();
    fn check<T: HasAfEnum>() {
        let a: Array<T> = (std::ptr::null_mut() as af_array).into();
        assert_eq!(a.elements(), 0);
        assert_eq!(a.dims(), dim4!(0));
        assert_eq!(a.get_type(), T::get_af_dtype());
    }
    check::<f32>();
    check::<c64>();
    check::<bool>();
    check::<u16>();
    check::<f16>();
}

#[test]
fn a_live_handle_cannot_be_adopted() {
    let _serial = crate::serial();
    let mut x = 0u8;
    let handle = &mut x as *mut u8 as af_array;
    let text = panic_text(catch_unwind(|| -> Array<f32> { handle.into() }));
    assert!(text.contains("non-null") && text.contains("af_array"), "{text}");
}

#[test]
fn ffi_type_names_have_the_c_sizes() {
    let _serial = crate::serial();
    assert_eq!(std::mem::size_of::<dim_t>(), 8);
    assert_eq!(std::mem::size_of::<u64_t>(), 8);
    let (d, u): (dim_t, u64_t) = (i64::MIN, u64::MAX);
    assert!(d < 0 && u == u64::MAX);
    let p: void_ptr = std::ptr::null_mut();
    let h: af_array = p;
    assert!(h.is_null());
}

#[test]
fn mem_info_example_runs() {
    let _serial = crate::serial();
    let dims = Dim4::new(&[5, 5, 1, 1]);
    let a = randu::<f32>(dims);
    print(&a);
    mem_info!("Hello!");
    // The counts it prints include `a`.
    a.eval();
    let (bytes, buffers, _, _) = device_mem_info();
    assert!(bytes >= 100 && buffers >= 1, "{bytes} bytes in {buffers} buffers");
}

#[test]
fn init_and_memory_step() {
    let _serial = crate::serial();
    init();
    assert!(get_device() >= 0 && get_device() < device_count());
    let old = get_mem_step_size();
    for step in [0, 1, 4096, usize::MAX] {
        set_mem_step_size(step);
        assert_eq!(get_mem_step_size(), step);
    }
    set_mem_step_size(old);
    // the step does not change how arrays are allocated
    let a = Array::new(&[1u8; 3], dim4!(3));
    assert_eq!(a.get_allocated_bytes(), 3);
}

fn rust_size(t: DType) -> usize {
    use std::mem::size_of;
    match t {
        DType::F32 => size_of::<f32>(),
        DType::C32 => size_of::<c32>(),
        DType::F64 => size_of::<f64>(),
        DType::C64 => size_of::<c64>(),
        DType::B8 => size_of::<bool>(),
        DType::S32 => size_of::<i32>(),
        DType::U32 => size_of::<u32>(),
        DType::U8 => size_of::<u8>(),
        DType::S64 => size_of::<i64>(),
        DType::U64 => size_of::<u64>(),
        DType::S16 => size_of::<i16>(),
        DType::U16 => size_of::<u16>(),
        DType::F16 => size_of::<f16>(),
        DType::BF16 => size_of::<bf16>(),
    }
}

#[test]
fn get_size_is_the_element_size_of_each_type() {
    let _serial = crate::serial();
    for t in DType::ALL {
        assert_eq!(get_size(t), rust_size(t), "{t:?}");
    }
}

#[test]
fn host_memory_of_each_type_is_zeroed_aligned_and_writable() {
    let _serial = crate::serial();
    for t in DType::ALL {
        for elements in [0usize, 1, 7, 1000] {
            let bytes = elements * get_size(t);
            let p = alloc_host::<u8>(elements, t) as *mut u8;
            assert!(!p.is_null());
            assert_eq!(p as usize % 64, 0, "{t:?}");
            // SAFETY: the block holds `bytes` bytes owned by this test until free_host.
            let block = unsafe { std::slice::from_raw_parts_mut(p, bytes) };
            assert!(block.iter().all(|&b| b == 0), "{t:?} not zeroed");
            block.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
            assert!(block.iter().enumerate().all(|(i, &b)| b == i as u8));
            free_host(p);
        }
    }
    free_host(std::ptr::null_mut::<f32>());
}

#[test]
fn free_host_refuses_what_it_did_not_allocate() {
    let _serial = crate::serial();
    let p = alloc_host::<f64>(4, DType::F64) as *mut f64;
    free_host(p);
    let text = panic_text(catch_unwind(|| free_host(p)));
    assert!(text.contains("free_host") && text.contains("freed already"), "{text}");

    let mut local = [0u32; 4];
    let foreign = local.as_mut_ptr();
    let text = panic_text(catch_unwind(|| free_host(foreign)));
    assert!(text.contains("not returned by alloc_host"), "{text}");

    // SAFETY: the pointer is only passed back to the free functions.
    let pinned = unsafe { alloc_pinned(16) };
    let text = panic_text(catch_unwind(|| free_host(pinned)));
    assert!(text.contains("not returned by alloc_host"), "{text}");
    // SAFETY: from alloc_pinned, freed once.
    unsafe { free_pinned(pinned) };

    let text = panic_text(catch_unwind(|| alloc_host::<u8>(usize::MAX, DType::C64)));
    assert!(text.contains("overflow"), "{text}");
}

#[test]
fn pinned_memory_round_trips_and_is_checked() {
    let _serial = crate::serial();
    for bytes in [0usize, 1, 4096, 3 << 20] {
        // SAFETY: the block is used within `bytes` bytes and freed once.
        unsafe {
            let p = alloc_pinned(bytes) as *mut u8;
            assert!(!p.is_null());
            let block = std::slice::from_raw_parts_mut(p, bytes);
            assert!(block.iter().all(|&b| b == 0));
            block.iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
            assert!(block.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
            free_pinned(p as void_ptr);
        }
    }
    let host = alloc_host::<u8>(8, DType::U8) as *mut u8;
    // SAFETY: free_pinned refuses the pointer before touching it.
    let text = panic_text(catch_unwind(|| unsafe { free_pinned(host as void_ptr) }));
    assert!(text.contains("not returned by alloc_pinned"), "{text}");
    free_host(host);
    // SAFETY: a null pointer is ignored.
    unsafe { free_pinned(std::ptr::null_mut()) };
}

#[test]
fn is_eval_manual_follows_set_manual_eval() {
    let _serial = crate::serial();
    // No other test of this binary runs meanwhile (`serial`), and those that change the flag
    // put it back, so it starts off here.
    assert!(!is_eval_manual());
    set_manual_eval(true);
    assert!(is_eval_manual() && is_manual_eval());
    set_manual_eval(false);
    assert!(!is_eval_manual());
}

#[test]
fn allocated_bytes_of_each_type_views_and_lazy_arrays() {
    let _serial = crate::serial();
    fn check<T: HasAfEnum + Copy + Default>() {
        let size = get_size(T::get_af_dtype());
        let a = Array::new(&[T::default(); 12], dim4!(3, 4));
        assert_eq!(a.get_allocated_bytes(), 12 * size, "{:?}", T::get_af_dtype());
        let one = Array::new(&[T::default()], dim4!(1));
        assert_eq!(one.get_allocated_bytes(), size);
        let lazy = a.cast::<f64>() + 1.0f64;
        assert_eq!(lazy.get_allocated_bytes(), 0, "lazy arrays hold no buffer");
        lazy.eval();
        assert_eq!(lazy.get_allocated_bytes(), 12 * 8);
        let empty = Array::<T>::new_empty(dim4!(0, 3));
        // CUDA keeps a one-byte block even for no elements.
        assert!(empty.get_allocated_bytes() <= 1);
    }
    check::<f32>();
    check::<f64>();
    check::<c32>();
    check::<c64>();
    check::<f16>();
    check::<bool>();
    check::<u8>();
    check::<i16>();
    check::<u16>();
    check::<i32>();
    check::<u32>();
    check::<i64>();
    check::<u64>();

    let a = Array::new(&[1.0f32; 20], dim4!(4, 5));
    let c = col(&a, 2);
    c.eval();
    let ready_view = c.get_allocated_bytes();
    // an evaluated column is either a view of `a` (its whole buffer) or a copy of 4 floats
    assert!(ready_view == 80 || ready_view == 16, "{ready_view}");
}

#[test]
fn scalar_tags_its_type() {
    let _serial = crate::serial();
    let cases = [
        (Scalar::F32(1.5), DType::F32),
        (Scalar::C32(c32::new(1.0, -1.0)), DType::C32),
        (Scalar::F64(-0.25), DType::F64),
        (Scalar::C64(c64::new(0.0, 2.0)), DType::C64),
        (Scalar::B8(true), DType::B8),
        (Scalar::S32(-7), DType::S32),
        (Scalar::U32(7), DType::U32),
        (Scalar::U8(255), DType::U8),
        (Scalar::S64(i64::MIN), DType::S64),
        (Scalar::U64(u64::MAX), DType::U64),
        (Scalar::S16(-1), DType::S16),
        (Scalar::U16(65535), DType::U16),
    ];
    for (s, t) in cases {
        assert_eq!(s.dtype(), t);
        assert_eq!(s, s.clone());
    }
    assert_ne!(Scalar::F32(1.0), Scalar::F64(1.0));
}

#[test]
fn backend_values_and_names_are_arrayfires() {
    let _serial = crate::serial();
    let table = [
        (Backend::DEFAULT, 0, "Default"),
        (Backend::CPU, 1, "CPU"),
        (Backend::CUDA, 2, "Cuda"),
        (Backend::OPENCL, 4, "OpenCL"),
    ];
    for (b, value, name) in table {
        assert_eq!(b as u32, value);
        assert_eq!(b.to_string(), name);
    }
    assert_eq!(format!("{}", get_active_backend()), get_active_backend().to_string());
}

#[test]
fn dtype_from_u32_is_arrayfires_numbering() {
    let _serial = crate::serial();
    for (k, t) in DType::ALL.into_iter().enumerate() {
        assert_eq!(DType::from(k as u32), t);
        assert_eq!(t as u32, k as u32);
    }
    assert_eq!(DType::from(12), DType::F16);
    // bf16, which ArrayFire lacks, comes after ArrayFire's numbers
    assert_eq!(DType::from(13), DType::BF16);
    let text = panic_text(catch_unwind(|| DType::from(14)));
    assert!(text.contains("14"), "{text}");
}

#[test]
fn matprop_from_u32_and_bitor() {
    let _serial = crate::serial();
    let all = [
        (MatProp::NONE, 0),
        (MatProp::TRANS, 1),
        (MatProp::CTRANS, 2),
        (MatProp::CONJ, 4),
        (MatProp::UPPER, 32),
        (MatProp::LOWER, 64),
        (MatProp::DIAGUNIT, 128),
        (MatProp::SYM, 512),
        (MatProp::POSDEF, 1024),
        (MatProp::ORTHOG, 2048),
        (MatProp::TRIDIAG, 4096),
        (MatProp::BLOCKDIAG, 8192),
    ];
    for (p, v) in all {
        assert_eq!(MatProp::from(v), p);
        assert_eq!(MatProp::NONE | p, p);
        assert_eq!(p | MatProp::NONE, p);
        assert_eq!(p | p, p);
    }
    for bad in [3u32, 8, 33, 96, u32::MAX] {
        let text = panic_text(catch_unwind(|| MatProp::from(bad)));
        assert!(text.contains(&bad.to_string()), "{text}");
    }
    assert!(catch_unwind(|| MatProp::UPPER | MatProp::LOWER).is_err());
    // an or-ed property drives an operation like the property itself
    let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2));
    let t = matmul(&a, &a, MatProp::TRANS | MatProp::NONE, MatProp::NONE).to_vec();
    assert_eq!(t, host_matmul(&[1.0, 3.0, 2.0, 4.0], &[1.0, 2.0, 3.0, 4.0], 2, 2, 2));
}

/// `a <<= s` and `a >>= s` for array type `$t` and scalar type `$s`, against the host's
/// shifts (left shifts wrap in `$t`, right shifts of signed values are arithmetic).
macro_rules! check_shift_assign {
    ($t:ty, $s:ty, $values:expr) => {{
        let values: Vec<$t> = $values;
        let dims = dim4!(values.len() as u64);
        for shift in [0 as $s, 1, 3, 7] {
            let want_l: Vec<$t> = values.iter().map(|x| x.wrapping_shl(shift as u32)).collect();
            let want_r: Vec<$t> = values.iter().map(|x| x >> shift).collect();
            let mut a = Array::new(&values, dims);
            a <<= shift;
            assert_eq!(a.to_vec(), want_l, "{} <<= {shift}{}", stringify!($t), stringify!($s));
            let mut a = Array::new(&values, dims);
            a >>= shift;
            assert_eq!(a.to_vec(), want_r, "{} >>= {shift}{}", stringify!($t), stringify!($s));
        }
    }};
}

#[test]
fn shift_assign_by_unsigned_scalars() {
    let _serial = crate::serial();
    // every pair arrayfire-rust accepts: the scalar promotes to the array's own type
    let u64s = || vec![0u64, 1, 5, 1 << 40, u64::MAX];
    check_shift_assign!(u64, u8, u64s());
    check_shift_assign!(u64, u16, u64s());
    check_shift_assign!(u64, u32, u64s());
    check_shift_assign!(u64, u64, u64s());
    let i64s = || vec![0i64, 1, -5, 1 << 40, i64::MAX, i64::MIN];
    check_shift_assign!(i64, u8, i64s());
    check_shift_assign!(i64, u16, i64s());
    check_shift_assign!(i64, u32, i64s());
    let u32s = || vec![0u32, 1, 77, u32::MAX];
    check_shift_assign!(u32, u8, u32s());
    check_shift_assign!(u32, u16, u32s());
    check_shift_assign!(u32, u32, u32s());
    let i32s = || vec![0i32, 1, -77, i32::MAX, i32::MIN];
    check_shift_assign!(i32, u8, i32s());
    check_shift_assign!(i32, u16, i32s());
    check_shift_assign!(u16, u8, vec![0u16, 1, 300, u16::MAX]);
    check_shift_assign!(u16, u16, vec![0u16, 1, 300, u16::MAX]);
    check_shift_assign!(i16, u8, vec![0i16, 1, -300, i16::MAX, i16::MIN]);
    check_shift_assign!(u8, u8, vec![0u8, 1, 100, u8::MAX]);
    // size-1 and empty arrays
    let mut one = Array::new(&[3u32], dim4!(1));
    one <<= 2u8;
    assert_eq!(one.to_vec(), vec![12]);
    let mut empty = Array::<i32>::new_empty(dim4!(0));
    empty >>= 1u16;
    assert_eq!(empty.elements(), 0);
}

/// Wraps an exact integer result into the range of integer type `t` (floats pass through).
fn wrap_to(t: DType, v: f64) -> f64 {
    let bits = match t {
        DType::U8 | DType::B8 => 8,
        DType::S16 | DType::U16 => 16,
        DType::S32 | DType::U32 => 32,
        DType::S64 | DType::U64 => 64,
        _ => return v,
    };
    let signed = matches!(t, DType::S16 | DType::S32 | DType::S64);
    let m = (v as i128).rem_euclid(1i128 << bits);
    (if signed && m >= 1i128 << (bits - 1) { m - (1i128 << bits) } else { m }) as f64
}

/// `a op b` for a bool `b` equals `a op (b as 0/1)` computed in f64.
fn check_bool_rhs<T>(values: &[T], tol: f64)
where
    T: HasAfEnum + Copy + ImplicitPromote<bool>,
    bool: ImplicitPromote<T>,
    T: num_traits_like::ToF64,
{
    let a = Array::new(values, dim4!(values.len() as u64));
    let host: Vec<f64> = values.iter().map(|v| v.to_f64()).collect();
    for b in [false, true] {
        let bv = if b { 1.0 } else { 0.0 };
        let cases: [(&str, Vec<f64>, Vec<f64>); 3] = [
            ("+", (&a + b).cast::<f64>().to_vec(), host.iter().map(|x| x + bv).collect()),
            ("-", (a.clone() - b).cast::<f64>().to_vec(), host.iter().map(|x| x - bv).collect()),
            ("*", (&a * b).cast::<f64>().to_vec(), host.iter().map(|x| x * bv).collect()),
        ];
        let out = (&a + b).get_type();
        for (op, got, want) in cases {
            for (g, w) in got.iter().zip(want.into_iter().map(|w| wrap_to(out, w))) {
                assert!((g - w).abs() <= tol * w.abs().max(1.0), "{op} {b}: {g} vs {w}");
            }
        }
    }
    // division by true is the identity; by false is a float division by zero
    let got = (a.clone() / true).cast::<f64>().to_vec();
    for (g, w) in got.iter().zip(&host) {
        assert!((g - w).abs() <= tol * w.abs().max(1.0), "/ true: {g} vs {w}");
    }
}

mod num_traits_like {
    pub trait ToF64 {
        fn to_f64(self) -> f64;
    }
    macro_rules! to_f64 {
        ($($t:ty),*) => { $( impl ToF64 for $t { fn to_f64(self) -> f64 { self as f64 } } )* };
    }
    to_f64!(f32, f64, i16, i32, i64, u8, u16, u32, u64);
}

#[test]
fn arithmetic_with_a_bool_on_the_right() {
    let _serial = crate::serial();
    check_bool_rhs(&[0.5f32, -3.25, 1e6, 0.0], 1e-7);
    check_bool_rhs(&[0.5f64, -3.25, 1e300, 0.0], 1e-15);
    check_bool_rhs(&[5i32, -3, 0, 1 << 20], 0.0);
    check_bool_rhs(&[5i64, -3, 0, 1 << 40], 0.0);
    check_bool_rhs(&[7u8, 200, 0, 1], 0.0);
    check_bool_rhs(&[7u32, 60000, 1], 0.0);
    check_bool_rhs(&[-9i16, 300, 1], 0.0);
    let x = Array::new(&[2.0f32, -1.0], dim4!(2));
    let d = (x / false).to_vec();
    assert!(d[0].is_infinite() && d[0] > 0.0 && d[1].is_infinite() && d[1] < 0.0, "{d:?}");
    let one = Array::new(&[1.0f64], dim4!(1)) * true;
    assert_eq!(one.to_vec(), vec![1.0]);
}

/// A program written for arrayfire-rust names std's two-argument `Result` beside the glob
/// import; emberfire's own alias must not shadow it (it lives at `emberfire::error::Result`).
fn checked_sum(values: &[f32]) -> Result<f32, String> {
    if values.is_empty() {
        return Err("no values".to_string());
    }
    let a = Array::new(values, dim4!(values.len() as u64));
    Ok(sum_all(&a).0)
}

#[test]
fn std_result_is_not_shadowed_by_the_glob_import() {
    let _serial = crate::serial();
    let values = [0.5f32, 1.25, -2.0, 4.0];
    let expected: f64 = values.iter().map(|&v| v as f64).sum();
    let got = checked_sum(&values).unwrap();
    assert!((got as f64 - expected).abs() < 1e-6, "{got} vs {expected}");
    assert_eq!(checked_sum(&[]), Err("no values".to_string()));
    // emberfire's alias is still reachable by its path.
    let a = Array::new(&values, dim4!(4));
    let r: emberfire::error::Result<()> = a.try_eval();
    assert!(r.is_ok());
}

/// A freed host block's address is never handed out again, so a stale pointer stays "freed
/// already" however many blocks are allocated after it; that is what makes the safe
/// `free_host` sound.
#[test]
fn a_stale_host_pointer_is_refused_after_later_allocations() {
    let _serial = crate::serial();
    let p = alloc_host::<f32>(256, DType::F32) as *mut f32;
    free_host(p);
    let later: Vec<*mut f32> =
        (0..64).map(|_| alloc_host::<f32>(256, DType::F32) as *mut f32).collect();
    assert!(later.iter().all(|&q| q != p), "a freed address was handed out again");
    let text = panic_text(catch_unwind(|| free_host(p)));
    assert!(text.contains("free_host") && text.contains("freed already"), "{text}");
    for q in later {
        // SAFETY: each block holds 256 f32, owned by this test until it is freed below.
        unsafe { q.add(255).write(1.5) };
        // SAFETY: as above.
        assert_eq!(unsafe { q.add(255).read() }, 1.5);
        free_host(q);
    }
}
