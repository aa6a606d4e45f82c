//! Template matching, after ArrayFire's `matching` example: cut a patch out of a picture,
//! find where it matches best, and frame that place in red.
//!
//! The picture is drawn here: a bright rectangle and a square turned by 30 degrees on a
//! dark, gently sloping background, with a little noise. The patch is a corner of the
//! turned square, so the example knows where it must be found; it checks that the best
//! match of each disparity (SAD, ZSAD, SSD) is exactly there.
//!
//! Run with `cargo run --example vision_matching [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/vision_matching` in the system's temporary directory.

use emberfire::*;

#[path = "common/vision_picture.rs"]
#[allow(dead_code)]
mod vision_picture;
use vision_picture::{picture, H, W};

/// The picture in grey with a red frame around the `h x w` window at `(x, y)`, as RGB.
fn framed(px: &[f32], x: usize, y: usize, h: usize, w: usize) -> Array<f32> {
    let mut rgb = [px.to_vec(), px.to_vec(), px.to_vec()];
    let mut paint = |yy: usize, xx: usize| {
        let p = yy + H * xx;
        rgb[0][p] = 1.0;
        rgb[1][p] = 0.0;
        rgb[2][p] = 0.0;
    };
    for xx in x..x + w {
        paint(y, xx);
        paint(y + h - 1, xx);
    }
    for yy in y..y + h {
        paint(yy, x);
        paint(yy, x + w - 1);
    }
    Array::new(&rgb.concat(), dim4!(H as u64, W as u64, 3))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("vision_matching"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    let (clean, _) = picture();
    set_seed(3);
    let noise = (randu::<f32>(dim4!(H as u64, W as u64)) - 0.5f32) * 0.04f32;
    let img = Array::new(&clean, dim4!(H as u64, W as u64)) + noise;
    let px = img.to_vec();

    // ANCHOR: matching
    // The patch: 16 x 16 pixels whose top-left corner is at row 26, column 78 (around the
    // top corner of the turned square).
    let (ty, tx, th, tw) = (26usize, 78usize, 16usize, 16usize);
    let patch = index(
        &img,
        &[
            Seq::new(ty as f64, (ty + th - 1) as f64, 1.0),
            Seq::new(tx as f64, (tx + tw - 1) as f64, 1.0),
        ],
    );
    // The sum of absolute differences between the patch and the window that starts at each
    // pixel: the best match is the smallest.
    let disparity = match_template(&img, &patch, MatchType::SAD);
    let (_, _, at) = imin_all(&disparity);
    let (y, x) = (at as usize % H, at as usize / H);
    save_image(out("matching.png"), &framed(&px, x, y, th, tw));
    // ANCHOR_END: matching

    assert_eq!((x, y), (tx, ty), "SAD finds the patch where it was cut");
    for mt in [MatchType::ZSAD, MatchType::SSD] {
        let (best, _, at) = imin_all(&match_template(&img, &patch, mt));
        assert_eq!(at as usize, ty + H * tx, "{mt:?} finds the patch");
        assert!(best.abs() < 1e-3, "{mt:?}: the patch matches itself exactly ({best})");
    }
    println!("the patch was found at ({x}, {y}); wrote matching.png to {}", dir.display());
}
