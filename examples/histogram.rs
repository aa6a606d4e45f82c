// A picture and its histogram, in two windows.
//
// arrayfire-rust's `histogram` example (BSD 3-Clause, Copyright (c) ArrayFire), unchanged but
// for its `use` line, and the picture it loads: it runs as it is against emberfire. Where no
// display is available the window writes its frames as PNG files (`EMBERFIRE_FRAMES_DIR`,
// default `emberfire-frames` in the temporary folder) and closes after `EMBERFIRE_FRAMES`
// frames (default 5), so `cargo run --example histogram` ends by itself there.

use emberfire::*;
use std::env;
use std::path::Path;

#[allow(unused_variables)]
#[allow(unused_must_use)]
fn main() {
    set_device(0);
    info();

    // emberfire: ArrayFire's picture comes with its C++ sources; this example makes its own.
    let assets_dir = env::temp_dir().join("emberfire-histogram");
    make_picture(&assets_dir.join("man.jpg"));

    let img_wnd = Window::new(480, 640, String::from("Input Image"));
    img_wnd.set_position(100, 100);

    let hst_wnd = Window::new(512, 512, String::from("Input Image Histogram"));
    hst_wnd.set_position(600, 100);

    let man = load_image::<f32>(format!("{}/man.jpg", assets_dir.display()), false);
    let hst = histogram(&man, 256, 0.0, 255.0);

    let disp_img = div(&man, &constant(255_f32, man.dims()), false);

    loop {
        img_wnd.draw_image(&disp_img, None);
        hst_wnd.draw_hist(&hst, 0.0, 255.0, None);

        if img_wnd.is_closed() {
            break;
        }
        if hst_wnd.is_closed() {
            break;
        }
    }
}

/// Writes a 640 x 480 grey picture (rows x columns): a bright disc on a shaded background,
/// with noise.
fn make_picture(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).expect("create the picture's folder");
    let dims = Dim4::new(&[640, 480, 1, 1]);
    let dy = range::<f32>(dims, 0) - 320.0f32;
    let dx = range::<f32>(dims, 1) - 240.0f32;
    let inside = lt(&(&dx * &dx + &dy * &dy), &(150.0f32 * 150.0f32), false);
    let background = range::<f32>(dims, 1) * (120.0f32 / 480.0f32) + 20.0f32;
    let picture = select(&constant(210.0f32, dims), &inside, &background);
    let noisy = clamp(&(picture + randn::<f32>(dims) * 12.0f32), &0.0f32, &255.0f32, false);
    save_image(path.display().to_string(), &noisy);
}
