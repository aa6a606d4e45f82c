//! What the computer-vision examples share: the picture they search (a bright rectangle and
//! a square turned by 30 degrees on a dark, gently sloping background, whose eight corners
//! are known) and the marking of points on it. Included by each example with `#[path]`, so
//! each stays one program.

use emberfire::{dim4, Array};

pub const H: usize = 96; // rows (dimension 0)
pub const W: usize = 128; // columns (dimension 1)

/// The picture (column-major, values in [0, 1]) and the corners of its shapes as (x, y).
pub fn picture() -> (Vec<f32>, Vec<(f32, f32)>) {
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
pub fn marked(px: &[f32], points: &[(f32, f32)]) -> Array<f32> {
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
