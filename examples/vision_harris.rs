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

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)

/// The picture (column-major, values in [0, 1]) and the corners of its shapes as (x, y).
fn picture() -> (Vec<f32>, Vec<(f32, f32)>) {
    let (s, c) = (30f32.to_radians().sin(), 30f32.to_radians().cos());
    let (cx, cy, half) = (90.0f32, 50.0f32, 15.0f32);
    let mut px = vec![0.0f32; H * W];
    for x in 0..W {
        for y in 0..H {
            // the fraction of the pixel each shape covers, from 4 x 4 samples
            let mut cover = 0.0;
            for a in 0..4 {
                for b in 0..4 {
                    let (yy, xx) =
                        (y as f32 - 0.375 + 0.25 * a as f32, x as f32 - 0.375 + 0.25 * b as f32);
                    let rect = (20.0..=44.0).contains(&yy) && (14.0..=50.0).contains(&xx);
                    let (u, v) = (c * (xx - cx) + s * (yy - cy), -s * (xx - cx) + c * (yy - cy));
                    let turned = u.abs() <= half && v.abs() <= half;
                    if rect || turned {
                        cover += 1.0 / 16.0;
                    }
                }
            }
            px[y + H * x] = 0.1 + 0.05 * x as f32 / W as f32 + 0.8 * cover;
        }
    }
    let mut corners = vec![(14.0, 20.0), (50.0, 20.0), (50.0, 44.0), (14.0, 44.0)];
    for (u, v) in [(-half, -half), (half, -half), (half, half), (-half, half)] {
        corners.push((cx + c * u - s * v, cy + s * u + c * v));
    }
    (px, corners)
}

/// The picture in grey with a red 5 x 5 box around each point, as an RGB array.
fn marked(px: &[f32], points: &[(f32, f32)]) -> Array<f32> {
    let mut rgb = [px.to_vec(), px.to_vec(), px.to_vec()];
    for &(x, y) in points {
        let (x, y) = (x.round() as i64, y.round() as i64);
        for d in -2i64..=2 {
            for (yy, xx) in [(y - 2, x + d), (y + 2, x + d), (y + d, x - 2), (y + d, x + 2)] {
                if (0..H as i64).contains(&yy) && (0..W as i64).contains(&xx) {
                    let p = yy as usize + H * xx as usize;
                    rgb[0][p] = 1.0;
                    rgb[1][p] = 0.0;
                    rgb[2][p] = 0.0;
                }
            }
        }
    }
    Array::new(&rgb.concat(), dim4!(H as u64, W as u64, 3))
}

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
