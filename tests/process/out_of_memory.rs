//! Running out of memory is a failure of the environment on every backend: the `try_` form
//! of a call returns `Error::OutOfMemory` with the size of the request, the plain form panics
//! with that text through the error handler, and the process goes on: the next operation
//! works and gives correct values.
//!
//! The requests are far beyond any machine's memory (400 GB and more), so they fail when they
//! are made on the CPU backend too, where Linux overcommits: a request it grants is only
//! backed when its pages are touched, and a failure then cannot be reported by anyone.

use std::panic::{catch_unwind, AssertUnwindSafe};

use emberfire::*;

/// 10^11 f32 elements: 400 GB.
const HUGE: u64 = 100_000_000_000;
const HUGE_BYTES: usize = 400_000_000_000;

/// The text of a panic's payload.
fn panic_text(r: std::thread::Result<()>) -> String {
    let payload = r.expect_err("the call should have panicked");
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else {
        String::from("(a panic without a message)")
    }
}

/// A small computation whose values are known: what must still work after a failure.
fn still_works() {
    let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
    let y = &x * 2.0f32 + 1.0f32;
    assert_eq!(y.to_vec(), vec![3.0, 5.0, 7.0, 9.0]);
    assert_eq!(sum_all(&x).0, 10.0);
    let c = constant(0.5f64, dim4!(3, 2)) + range::<f64>(dim4!(3, 2), 1);
    assert_eq!(c.to_vec(), vec![0.5, 0.5, 0.5, 1.5, 1.5, 1.5]);
}

#[test]
fn try_eval_of_an_array_larger_than_memory_returns_out_of_memory() {
    let _serial = crate::serial();
    let huge = constant(1.0f32, dim4!(HUGE));
    match huge.try_eval() {
        Err(Error::OutOfMemory { bytes }) => assert_eq!(bytes, HUGE_BYTES),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    still_works();
    // the array is still lazy and fails the same way again: nothing was left half done
    assert_eq!(huge.try_eval(), Err(Error::OutOfMemory { bytes: HUGE_BYTES }));
    still_works();
}

#[test]
fn plain_eval_panics_naming_out_of_memory_and_the_next_operation_works() {
    let _serial = crate::serial();
    let huge = constant(1.0f32, dim4!(HUGE)) * 3.0f32;
    let text = panic_text(catch_unwind(AssertUnwindSafe(|| huge.eval())));
    assert!(
        text.contains(&format!("out of memory allocating {HUGE_BYTES} bytes")),
        "panic text: {text}"
    );
    assert_eq!(text, format!("evaluation failed: {}", Error::OutOfMemory { bytes: HUGE_BYTES }));
    still_works();
}

#[test]
fn a_shape_whose_element_count_overflows_is_out_of_memory_not_a_wrapped_size() {
    let _serial = crate::serial();
    // 2^96 elements: the count does not fit in 64 bits
    let huge = constant(1.0f32, dim4!(1u64 << 32, 1u64 << 32, 1u64 << 32));
    assert_eq!(huge.elements(), usize::MAX);
    assert_eq!(huge.try_eval(), Err(Error::OutOfMemory { bytes: usize::MAX }));
    let text = panic_text(catch_unwind(|| {
        randu::<f64>(dim4!(1u64 << 40, 1u64 << 40));
    }));
    assert!(text.contains("randu: out of memory"), "panic text: {text}");
    still_works();
}

#[test]
fn random_numbers_larger_than_memory_are_out_of_memory() {
    let _serial = crate::serial();
    // integers are drawn into memory when asked for, on every backend
    let text = panic_text(catch_unwind(|| {
        randu::<u32>(dim4!(HUGE));
    }));
    assert_eq!(text, format!("randu: out of memory allocating {HUGE_BYTES} bytes"));
    still_works();
    // f32 draws are lazy on CUDA (drawn where they are read): storing them is what fails, at
    // the draw on the CPU and at the evaluation on CUDA
    let text = panic_text(catch_unwind(|| {
        randu::<f32>(dim4!(HUGE)).eval();
    }));
    assert!(text.ends_with(&format!("out of memory allocating {HUGE_BYTES} bytes")), "{text}");
    still_works();
}

#[test]
fn a_product_larger_than_memory_is_out_of_memory() {
    let _serial = crate::serial();
    // a 10^6 x 10^6 outer product of two 4 MB vectors: 4 TB
    let n = 1_000_000u64;
    let col = constant(1.0f32, dim4!(n, 1));
    let row = constant(1.0f32, dim4!(1, n));
    match try_matmul(&col, &row, MatProp::NONE, MatProp::NONE) {
        Err(Error::OutOfMemory { bytes }) => assert_eq!(bytes as u64, n * n * 4),
        Err(e) => panic!("expected OutOfMemory, got {e}"),
        Ok(_) => panic!("expected OutOfMemory, got a product"),
    }
    let small = try_matmul(&col, &constant(2.0f32, dim4!(1, 2)), MatProp::NONE, MatProp::NONE)
        .expect("a product that fits");
    assert_eq!(small.dims(), dim4!(n, 2));
    assert_eq!(sum_all(&small).0, (4 * n) as f32);
    still_works();
}

#[test]
fn a_reduction_whose_result_is_larger_than_memory_is_out_of_memory() {
    let _serial = crate::serial();
    let text = panic_text(catch_unwind(|| {
        sum(&constant(1.0f32, dim4!(HUGE, 2)), 1).eval();
    }));
    // (the CPU backend accumulates f32 in f64: it asks for twice the result's bytes)
    assert!(text.contains("out of memory allocating"), "{text}");
    still_works();
}

#[test]
fn the_error_handler_sees_out_of_memory() {
    let _serial = crate::serial();
    // The default handler panics with the message; a returning handler observes the code and
    // the call still fails.
    let _ = catch_unwind(|| constant(1u8, dim4!(HUGE, 8)).eval());
    assert_eq!(get_last_error(), "No Last Error", "the default handler consumes the message");
    fn observe(code: AfError) {
        assert_eq!(code, AfError::ERR_NO_MEM);
    }
    register_error_handler(Callback::new(observe));
    let text = panic_text(catch_unwind(|| constant(1u8, dim4!(HUGE, 8)).eval()));
    register_error_handler(Callback::new(handle_error_general));
    assert!(text.contains("out of memory allocating 800000000000 bytes"), "{text}");
    assert_eq!(get_last_error(), text);
    still_works();
}
