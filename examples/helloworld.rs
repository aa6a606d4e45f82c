//! A first tour: device information, array creation, arithmetic, and reading results back.
//! Runs on CUDA where a GPU is present, on the CPU otherwise (`EMBERFIRE_BACKEND` overrides).

use emberfire::*;

fn main() {
    info();
    println!("Active backend: {:?}", get_active_backend());

    // Arrays are created from host data, column-major.
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(3, 2));
    af_print!("a", a);

    // Element-wise work is lazy: this whole line becomes one fused pass when it is read.
    let b = sin(&a) * cos(&a) + &a * 0.5f32 - 1.0f32;
    af_print!("sin(a) * cos(a) + a * 0.5 - 1", b);

    // Broadcasting a row across the columns with `batch = true`.
    let row = Array::new(&[10.0f32, 20.0], dim4!(1, 2));
    af_print!("a + row (batched)", add(&a, &row, true));

    // Comparisons give bool arrays; select picks element by element.
    let big = gt(&a, &3.0f32, false);
    af_print!("a > 3", big);
    af_print!("select(a, a > 3, 0)", selectr(&a, &big, 0.0));

    // Creation functions.
    af_print!("identity 3x3", identity::<f32>(dim4!(3, 3)));
    af_print!("range along dim 1", range::<i32>(dim4!(2, 4), 1));

    // Read back to the host and reduce there.
    let values = b.to_vec();
    let total: f32 = values.iter().sum();
    println!("sum of b over {} elements = {total:.4}", values.len());
    print_mem_info("memory in use".to_string(), get_device());
}
