//! FAST corners, after ArrayFire's `fast` example: detect the corners of a picture and mark
//! each with a small red box.
//!
//! The picture is drawn here: a bright rectangle and a square turned by 30 degrees on a
//! dark, gently sloping background. Their eight corners are known, so the example checks
//! that FAST finds each of them (within a pixel and a half: FAST marks the pixel whose
//! circle sees the arc, just inside the corner) and nothing far from them.
//!
//! Run with `cargo run --example vision_fast [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/vision_fast` in the system's temporary directory.

use emberfire::*;

#[path = "common/vision_picture.rs"]
#[allow(dead_code)]
mod vision_picture;
use vision_picture::{marked, picture, H, W};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("vision_fast"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    let (px, corners) = picture();
    // ANCHOR: fast
    let img = Array::new(&px, dim4!(H as u64, W as u64));
    // A threshold of 0.2 (a fifth of the contrast), arcs of 9 pixels, non-maximal
    // suppression, at most 5% of the pixels, nothing within 3 pixels of the border.
    let feat = fast(&img, 0.2, 9, true, 0.05, 3);
    let (xs, ys) = (feat.xpos().to_vec(), feat.ypos().to_vec());
    let found: Vec<(f32, f32)> = xs.into_iter().zip(ys).collect();
    save_image(out("fast.png"), &marked(&px, &found));
    // ANCHOR_END: fast

    // Every corner is found, and every feature is a corner.
    let near =
        |a: (f32, f32), b: (f32, f32), d: f32| (a.0 - b.0).abs() <= d && (a.1 - b.1).abs() <= d;
    for &c in &corners {
        assert!(found.iter().any(|&f| near(f, c, 1.6)), "corner {c:?} not found in {found:?}");
    }
    for &f in &found {
        assert!(corners.iter().any(|&c| near(f, c, 2.0)), "feature {f:?} is not at a corner");
    }
    println!("FAST found {} corners; wrote fast.png to {}", found.len(), dir.display());
}
