//! The code of the book's "Configuring" chapter: which backend arrays are created on, and what
//! the machine offers. Every result is checked, so running the example verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: query
    // The active backend of this thread: what `EMBERFIRE_BACKEND` named, or the best available.
    let active = get_active_backend();
    println!("active backend: {active:?}");
    assert_ne!(active, Backend::DEFAULT); // always resolved to a concrete backend

    // The CPU backend is always available.
    let available = get_available_backends();
    assert!(available.contains(&Backend::CPU));
    assert_eq!(get_backend_count() as usize, available.len());

    // A one-line description of the device.
    println!("{}", info_string(false));
    // ANCHOR_END: query

    // ANCHOR: switch
    // Choose the backend of this thread in code; arrays created afterwards live there.
    set_backend(Backend::CPU);
    let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    assert_eq!(a.get_backend(), Backend::CPU);

    // Asking for a backend that cannot be used is an error from the `try_` form
    // (and a panic from `set_backend`); the active backend does not change.
    let err = try_set_backend(Backend::OPENCL).unwrap_err();
    println!("OpenCL: {err}");
    assert_eq!(get_active_backend(), Backend::CPU);
    // ANCHOR_END: switch

    // ANCHOR: threads
    // The active backend is per thread: a new thread starts from `EMBERFIRE_BACKEND`.
    let other = std::thread::spawn(|| {
        set_backend(Backend::CPU);
        (Array::new(&[3i32], dim4!(1)) * 2i32).to_vec()
    })
    .join()
    .unwrap();
    assert_eq!(other, vec![6]);
    // ANCHOR_END: threads
}
