//! SUSAN corners, after ArrayFire's `susan` example: detect the corners of a picture and
//! mark each with a small red box.
//!
//! The picture is drawn here: two rectangles of different brightness on a dark
//! background. Their eight corners are known, so the example checks that SUSAN finds each
//! of them, within a pixel, and nothing else.
//!
//! Run with `cargo run --example vision_susan [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/vision_susan` in the system's temporary directory.

use emberfire::*;

#[path = "common/vision_picture.rs"]
#[allow(dead_code)]
mod vision_picture;
use vision_picture::{marked, H, W};

/// The picture (column-major, values in [0, 1]) and the corners of its shapes as (x, y):
/// two rectangles, one bright and one mid-grey, on a dark background.
fn picture() -> (Vec<f32>, Vec<(f32, f32)>) {
    let shapes = [(20usize, 44usize, 14usize, 50usize, 0.9f32), (40, 80, 70, 110, 0.5)];
    let mut px = vec![0.1f32; H * W];
    let mut corners = Vec::new();
    for &(y0, y1, x0, x1, level) in &shapes {
        for x in x0..=x1 {
            for y in y0..=y1 {
                px[y + H * x] = level;
            }
        }
        for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1)] {
            corners.push((x as f32, y as f32));
        }
    }
    (px, corners)
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("vision_susan"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    let (px, corners) = picture();
    // ANCHOR: susan
    let img = Array::new(&px, dim4!(H as u64, W as u64));
    // A disc of radius 3; pixels within about 0.2 of the nucleus count as alike; a corner
    // is a nucleus with fewer than 14.5 alike pixels (half the disc); at most 5% of the
    // pixels; nothing within 3 pixels of the border.
    let feat = susan(&img, 3, 0.2, 14.5, 0.05, 3);
    let (xs, ys) = (feat.xpos().to_vec(), feat.ypos().to_vec());
    let found: Vec<(f32, f32)> = xs.into_iter().zip(ys).collect();
    save_image(out("susan.png"), &marked(&px, &found));
    // ANCHOR_END: susan

    // Every corner is found, and every feature is a corner.
    assert_eq!(found.len(), corners.len(), "{found:?}");
    let near =
        |a: (f32, f32), b: (f32, f32), d: f32| (a.0 - b.0).abs() <= d && (a.1 - b.1).abs() <= d;
    for &c in &corners {
        assert!(found.iter().any(|&f| near(f, c, 1.0)), "corner {c:?} not found in {found:?}");
    }
    println!("SUSAN found {} corners; wrote susan.png to {}", found.len(), dir.display());
}
