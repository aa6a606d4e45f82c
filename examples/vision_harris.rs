//! Harris corners, after ArrayFire's `harris` example: the strongest corners of a picture,
//! each marked with a small red box.
//!
//! The picture is drawn here: a bright rectangle and a square turned by 30 degrees on a
//! dark, gently sloping background. Their eight corners are known, so the example checks
//! that the eight strongest Harris responses lie on them, within a pixel.
//!
//! Run with `cargo run --example vision_harris [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/vision_harris` in the system's temporary directory.

use emberfire::*;

#[path = "common/vision_picture.rs"]
#[allow(dead_code)]
mod vision_picture;
use vision_picture::{marked, picture, H, W};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("vision_harris"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    let (px, corners) = picture();
    // ANCHOR: harris
    let img = Array::new(&px, dim4!(H as u64, W as u64));
    // The 8 strongest corners; a Gaussian window of deviation 0.5 (block_size 0 lets sigma
    // choose the window's size), and the usual k of 0.04.
    let feat = harris(&img, 8, 0.0, 0.5, 0, 0.04);
    let (xs, ys) = (feat.xpos().to_vec(), feat.ypos().to_vec());
    let found: Vec<(f32, f32)> = xs.into_iter().zip(ys).collect();
    save_image(out("harris.png"), &marked(&px, &found));
    // ANCHOR_END: harris

    // The eight strongest responses are the eight corners.
    assert_eq!(found.len(), 8);
    let near =
        |a: (f32, f32), b: (f32, f32), d: f32| (a.0 - b.0).abs() <= d && (a.1 - b.1).abs() <= d;
    for &c in &corners {
        assert!(found.iter().any(|&f| near(f, c, 1.1)), "corner {c:?} not found in {found:?}");
    }
    let scores = feat.score().to_vec();
    assert!(scores.iter().all(|&s| s > 0.0), "corners respond positively: {scores:?}");
    println!("Harris found {} corners; wrote harris.png to {}", found.len(), dir.display());
}
