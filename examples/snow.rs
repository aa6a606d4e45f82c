// Television snow: a random colour image drawn as fast as the window takes it.
//
// arrayfire-rust's `snow` example (BSD 3-Clause, Copyright (c) ArrayFire), unchanged but for
// its `use` line: it runs as it is against emberfire. Where no display is available the window
// writes its frames as PNG files (`EMBERFIRE_FRAMES_DIR`, default `emberfire-frames` in the
// temporary folder) and closes after `EMBERFIRE_FRAMES` frames (default 5), so `cargo run
// --example snow` ends by itself there.

use emberfire::*;

#[allow(unused_variables)]
#[allow(unused_must_use)]
fn main() {
    set_device(0);
    info();

    let wnd = Window::new(1280, 720, String::from("Snow"));

    let dims = Dim4::new(&[1280, 720, 3, 1]);

    loop {
        wnd.draw_image(&randu::<f32>(dims), None);

        if wnd.is_closed() {
            break;
        }
    }
}
