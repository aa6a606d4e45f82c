//! The `Array` handle and its companions: host transfers, shape and type predicates, strides,
//! clone (shallow) versus copy (deep), `Dim4`, the macros, and the printed formats (Display,
//! Debug, `print`, `print_gen`, `af_print!`).

use crate::common;

use common::*;
use emberfire as ef;
use emberfire::{bf16, c32, c64, dim4, f16, Array, DType, Dim4};

// ---- host transfers and accessors -------------------------------------------------------------

fn roundtrip<T: Elem>(d: Dim4, s: u64) -> Result<(), String> {
    let mut r = Rng64::seed_from_u64(s);
    let v = gen_vec(&mut r, d.elements() as usize, &|r| T::any(r));
    let a = Array::new(&v, d);
    let ctx = format!("{} {d}", T::TY.name);
    if a.dims() != d || a.elements() != v.len() || a.get_type() != T::TY.dtype {
        return Err(format!(
            "{ctx}: dims {} elements {} type {:?}",
            a.dims(),
            a.elements(),
            a.get_type()
        ));
    }
    if a.numdims() as usize != d.ndims() {
        return Err(format!("{ctx}: numdims {}", a.numdims()));
    }
    check_all(&a.to_vec(), &vs(&v), Tol::EXACT, &|i| format!("{ctx}: to_vec element {i}"))?;
    let mut h = vec![T::from_v(V::I(0)); v.len()];
    a.host(&mut h);
    check_all(&h, &vs(&v), Tol::EXACT, &|i| format!("{ctx}: host element {i}"))?;
    a.try_host(&mut h).map_err(|e| format!("{ctx}: try_host: {e}"))?;
    check_all(&h, &vs(&v), Tol::EXACT, &|i| format!("{ctx}: try_host element {i}"))?;
    if a.get_backend() != ef::get_active_backend() || a.get_device_id() != ef::get_device() {
        return Err(format!("{ctx}: backend {:?} device {}", a.get_backend(), a.get_device_id()));
    }
    Ok(())
}

#[test]
fn host_roundtrip_of_every_type() {
    run_cases(16, |d, s| {
        roundtrip::<bool>(d, s)?;
        roundtrip::<u8>(d, s)?;
        roundtrip::<i16>(d, s)?;
        roundtrip::<u16>(d, s)?;
        roundtrip::<i32>(d, s)?;
        roundtrip::<u32>(d, s)?;
        roundtrip::<i64>(d, s)?;
        roundtrip::<u64>(d, s)?;
        roundtrip::<f16>(d, s)?;
        roundtrip::<bf16>(d, s)?;
        roundtrip::<f32>(d, s)?;
        roundtrip::<f64>(d, s)?;
        roundtrip::<c32>(d, s)?;
        roundtrip::<c64>(d, s)
    });
}

// ---- predicates -------------------------------------------------------------------------------

fn type_predicates<T: Elem>(expect_dtype: DType) {
    let a = Array::new(&[T::from_v(V::I(1))], Dim4::default());
    let t = a.get_type();
    assert_eq!(t, expect_dtype);
    let complex = matches!(t, DType::C32 | DType::C64);
    let real_float = matches!(t, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
    let int = matches!(
        t,
        DType::U8 | DType::S16 | DType::U16 | DType::S32 | DType::U32 | DType::S64 | DType::U64
    );
    let name = T::TY.name;
    assert_eq!(a.is_complex(), complex, "{name}.is_complex");
    assert_eq!(a.is_real(), !complex, "{name}.is_real");
    assert_eq!(a.is_double(), matches!(t, DType::F64 | DType::C64), "{name}.is_double");
    assert_eq!(a.is_single(), matches!(t, DType::F32 | DType::C32), "{name}.is_single");
    assert_eq!(a.is_half(), t == DType::F16, "{name}.is_half");
    assert_eq!(a.is_realfloating(), real_float, "{name}.is_realfloating");
    assert_eq!(a.is_floating(), real_float || complex, "{name}.is_floating");
    assert_eq!(a.is_integer(), int, "{name}.is_integer");
    assert_eq!(a.is_bool(), t == DType::B8, "{name}.is_bool");
    assert!(!a.is_sparse(), "{name}.is_sparse");
}

#[test]
fn type_predicates_of_every_type() {
    type_predicates::<bool>(DType::B8);
    type_predicates::<u8>(DType::U8);
    type_predicates::<i16>(DType::S16);
    type_predicates::<u16>(DType::U16);
    type_predicates::<i32>(DType::S32);
    type_predicates::<u32>(DType::U32);
    type_predicates::<i64>(DType::S64);
    type_predicates::<u64>(DType::U64);
    type_predicates::<f16>(DType::F16);
    type_predicates::<bf16>(DType::BF16);
    type_predicates::<f32>(DType::F32);
    type_predicates::<f64>(DType::F64);
    type_predicates::<c32>(DType::C32);
    type_predicates::<c64>(DType::C64);
}

/// Shape predicates follow ArrayFire: a row is 1×n and a column n×1 with n > 1, a vector has
/// exactly one dimension larger than 1 and the others 1, a scalar has one element.
#[test]
fn shape_predicates() {
    let cases: [([u64; 4], [bool; 5]); 11] = [
        // dims             empty  scalar row    column vector
        ([1, 1, 1, 1], [false, true, false, false, false]),
        ([5, 1, 1, 1], [false, false, false, true, true]),
        ([1, 5, 1, 1], [false, false, true, false, true]),
        ([1, 1, 5, 1], [false, false, false, false, true]),
        ([1, 1, 1, 5], [false, false, false, false, true]),
        ([2, 3, 1, 1], [false, false, false, false, false]),
        ([2, 1, 3, 1], [false, false, false, false, false]),
        ([0, 1, 1, 1], [true, false, false, false, false]),
        ([1, 0, 1, 1], [true, false, false, false, false]),
        ([0, 5, 1, 1], [true, false, false, false, false]),
        ([3, 4, 5, 6], [false, false, false, false, false]),
    ];
    for (d, [empty, scalar, row, column, vector]) in cases {
        let a = Array::<f32>::new_empty(Dim4::new(&d));
        let b = ef::constant(1u8, Dim4::new(&d)) + 1u8; // lazy: answered without evaluating
        for (x, what) in [(a.is_empty(), "empty"), (b.is_empty(), "empty (lazy)")] {
            assert_eq!(x, empty, "{d:?} {what}");
        }
        assert_eq!(a.is_scalar(), scalar, "{d:?} scalar");
        assert_eq!(a.is_row(), row, "{d:?} row");
        assert_eq!(a.is_column(), column, "{d:?} column");
        assert_eq!(a.is_vector(), vector, "{d:?} vector");
        assert_eq!(
            (b.is_scalar(), b.is_row(), b.is_column(), b.is_vector()),
            (scalar, row, column, vector)
        );
    }
}

// ---- evaluation state, strides, clone and copy --------------------------------------------

#[test]
fn strides_offset_and_evaluation_state() {
    let a = Array::new(&(0..24).collect::<Vec<i32>>(), dim4!(2, 3, 4));
    assert_eq!(a.strides(), dim4!(1, 2, 6, 24));
    assert_eq!(a.offset(), 0);
    assert!(a.is_linear() && a.is_owner());
    let lazy = &a * 2i32;
    assert!(!lazy.is_linear(), "a fresh expression is not evaluated");
    assert!(lazy.try_eval().is_ok());
    assert!(lazy.is_linear() && lazy.is_owner());
    assert_eq!(lazy.strides(), dim4!(1, 2, 6, 24));
    // strides evaluate a lazy array
    let other = &a + 1i32;
    assert_eq!(other.strides(), dim4!(1, 2, 6, 24));
    assert!(other.is_linear());
    assert_eq!(Array::<u8>::new_empty(dim4!(5, 1, 3)).strides(), dim4!(1, 5, 5, 15));
    assert_eq!(Array::<c64>::new_empty(dim4!(7)).strides(), dim4!(1, 7, 7, 7));
}

#[test]
fn clone_shares_and_copy_is_independent() {
    let x = Array::new(&[1.0f64, 2.0, 3.0], dim4!(3));
    let lazy = ef::exp(&x);
    let shallow = lazy.clone();
    shallow.eval();
    // the clone is the same array: evaluating it evaluated the original
    assert!(lazy.is_linear());
    let lazy2 = ef::sqrt(&x);
    let deep = lazy2.copy();
    assert!(deep.is_linear());
    assert_eq!(deep.dims(), lazy2.dims());
    assert_eq!(deep.to_vec(), lazy2.to_vec());
    // replacing the original's contents leaves the copy and the clone untouched
    let mut a = Array::new(&[1i16, 2, 3, 4], dim4!(2, 2));
    let (c, k) = (a.clone(), a.copy());
    ef::replace_scalar(&mut a, &Array::new(&[false; 4], dim4!(2, 2)), 9.0);
    assert_eq!(a.to_vec(), vec![9; 4]);
    assert_eq!(c.to_vec(), vec![1, 2, 3, 4]);
    assert_eq!(k.to_vec(), vec![1, 2, 3, 4]);
    // dropping the original leaves handles and copies valid
    drop(a);
    drop(x);
    assert_eq!(shallow.to_vec(), vec![1f64.exp(), 2f64.exp(), 3f64.exp()]);
    assert_eq!(deep.to_vec(), vec![1.0, 2f64.sqrt(), 3f64.sqrt()]);
}

#[test]
fn arrays_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Array<f32>>();
    check::<Array<c64>>();
    check::<Array<bool>>();
    check::<Array<f16>>();
}

// ---- Dim4 and the macros ----------------------------------------------------------------------

#[test]
fn dim4_and_its_macro() {
    assert_eq!(dim4!(3).get(), &[3, 1, 1, 1]);
    assert_eq!(dim4!(3, 4).get(), &[3, 4, 1, 1]);
    assert_eq!(dim4!(3, 4, 5).get(), &[3, 4, 5, 1]);
    assert_eq!(dim4!(3, 4, 5, 6).get(), &[3, 4, 5, 6]);
    let n: usize = 7;
    assert_eq!(dim4!(n, 2u8), Dim4::new(&[7, 2, 1, 1]));
    let d = Dim4::new(&[2, 3, 4, 5]);
    assert_eq!(d.elements(), 120);
    assert_eq!((d[0], d[1], d[2], d[3]), (2, 3, 4, 5));
    assert_eq!(d.strides(), dim4!(1, 2, 6, 24));
    assert_eq!(d.to_string(), "[2 3 4 5]");
    assert_eq!(format!("{d:?}"), "[2 3 4 5]");
    assert_eq!(Dim4::default(), dim4!(1, 1, 1, 1));
    assert_eq!(Dim4::from([4, 1, 2, 1]), dim4!(4, 1, 2));
    let mut m = d;
    m[2] = 1;
    assert_eq!(m, dim4!(2, 3, 1, 5));
    let ndims = [
        (dim4!(1), 1),
        (dim4!(5), 1),
        (dim4!(1, 5), 2),
        (dim4!(5, 1, 2), 3),
        (dim4!(1, 1, 1, 2), 4),
        (dim4!(0, 4), 0),
        (dim4!(3, 0, 2), 0),
    ];
    for (d, n) in ndims {
        assert_eq!(d.ndims(), n, "ndims of {d}");
        assert_eq!(Array::<u8>::new_empty(d).numdims() as usize, n, "numdims of {d}");
    }
    let mut set = std::collections::HashSet::new();
    set.insert(dim4!(2, 2));
    assert!(set.contains(&Dim4::new(&[2, 2, 1, 1])));
}

// ---- printing -----------------------------------------------------------------------------

#[test]
fn display_uses_arrayfire_layout() {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    let want =
        "[2 3 1 1]\n    1.0000     3.0000     5.0000 \n    2.0000     4.0000     6.0000 \n\n";
    assert_eq!(format!("{a}"), want);
    // a lazy array prints its values
    let lazy = &a - 1.0f32;
    let want =
        "[2 3 1 1]\n    0.0000     2.0000     4.0000 \n    1.0000     3.0000     5.0000 \n\n";
    assert_eq!(format!("{lazy}"), want);
    // precision from the format string
    let p = Array::new(&[std::f64::consts::PI, -2.0], dim4!(2));
    assert_eq!(format!("{p:.2}"), "[2 1 1 1]\n    3.14 \n   -2.00 \n\n");
    let i = Array::new(&[1i32, -20, 300, 4], dim4!(1, 4));
    assert_eq!(format!("{i}"), "[1 4 1 1]\n         1        -20        300          4 \n");
    let b = Array::new(&[true, false], dim4!(2));
    assert_eq!(format!("{b}"), "[2 1 1 1]\n         1 \n         0 \n\n");
    let z = Array::new(&[c32::new(1.0, -0.5)], dim4!(1));
    assert_eq!(format!("{z}"), "[1 1 1 1]\n(1.0000,-0.5000) \n");
    let h = Array::new(&[f16::from_f64(0.25), f16::INFINITY, f16::NAN], dim4!(1, 3));
    assert_eq!(format!("{h}"), "[1 3 1 1]\n    0.2500        inf        nan \n");
    let cube = Array::new(&[1u8, 2, 3, 4, 5, 6, 7, 8], dim4!(2, 2, 2));
    let want = concat!(
        "[2 2 2 1]\n",
        "         1          3 \n",
        "         2          4 \n",
        "\n",
        "         5          7 \n",
        "         6          8 \n",
        "\n",
        "\n"
    );
    assert_eq!(format!("{cube}"), want);
    let e = Array::<f64>::new_empty(dim4!(0, 3));
    assert_eq!(format!("{e}"), "[0 3 1 1]\n<empty>\n");
}

#[test]
fn debug_lists_type_shape_and_values() {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.5], dim4!(2, 2));
    assert_eq!(format!("{a:?}"), "Array<f32> [2 2 1 1] [1.0000, 2.0000, 3.0000, 4.5000]");
    let z = &Array::new(&[c64::new(0.0, 1.0)], dim4!(1)) * 2.0f64;
    assert_eq!(format!("{z:?}"), "Array<c64> [1 1 1 1] [(0.0000,2.0000)]");
    let u = Array::new(&[3u64, 4], dim4!(1, 2));
    assert_eq!(format!("{u:?}"), "Array<u64> [1 2 1 1] [3, 4]");
    let big = ef::range::<i32>(dim4!(100), 0);
    let listed: Vec<String> = (0..64).map(|i| i.to_string()).collect();
    assert_eq!(format!("{big:?}"), format!("Array<i32> [100 1 1 1] [{}, ...]", listed.join(", ")));
    let e = Array::<bool>::new_empty(dim4!(0));
    assert_eq!(format!("{e:?}"), "Array<bool> [0 1 1 1] []");
}

/// `print`, `print_gen` and `af_print!` write to standard output, which the test harness
/// captures; so this test runs itself again in a child process that prints, and reads what
/// the child wrote.
#[test]
fn print_functions_write_arrayfire_layout() {
    const CHILD: &str = "EMBERFIRE_TEST_PRINT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let a = Array::new(&[1.0f32, 2.0], dim4!(2));
        println!("<<<");
        ef::print(&a);
        ef::print_gen("x".to_string(), &(&a * 0.5f32), Some(2));
        ef::af_print!("a is", a);
        ef::af_print!("ints", Array::new(&[7u8, 8, 9], dim4!(1, 3)), 0);
        println!(">>>");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "array_api::print_functions_write_arrayfire_layout",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("running the test binary again");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let start = text.find("<<<\n").expect("child output") + 4;
    let end = text.find(">>>").expect("child output");
    let want = concat!(
        "[2 1 1 1]\n    1.0000 \n    2.0000 \n\n",
        "x\n[2 1 1 1]\n    0.50 \n    1.00 \n\n",
        "a is\n[2 1 1 1]\n    1.0000 \n    2.0000 \n\n",
        "ints\n[1 3 1 1]\n     7      8      9 \n",
    );
    assert_eq!(&text[start..end], want);
}

/// On the CPU, memory locked by the user outlives its arrays, as on CUDA: the pointer keeps
/// its values while other buffers come and go, and it still counts as locked.
#[test]
fn locked_host_memory_outlives_its_array() {
    if emberfire::get_active_backend() != emberfire::Backend::CPU {
        return;
    }
    let n = 4096;
    let values: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.0).collect();
    let before = emberfire::device_mem_info();
    let a = Array::new(&values, dim4!(n as u64));
    let p = a.device_ptr() as *const f64;
    drop(a);
    let locked = emberfire::device_mem_info();
    assert_eq!(locked.3, before.3 + 1, "one more locked buffer");
    assert_eq!(locked.2, before.2 + n * 8, "its bytes are locked");
    for k in 0..50 {
        let b = emberfire::constant(-(k as f64), dim4!(n as u64));
        assert_ne!(b.device_ptr() as *const f64, p, "a locked buffer is never reused");
        b.unlock();
    }
    // SAFETY: the memory is locked, so it is still allocated and holds `n` f64 values.
    let seen = unsafe { std::slice::from_raw_parts(p, n) };
    assert_eq!(seen, &values[..]);
}
