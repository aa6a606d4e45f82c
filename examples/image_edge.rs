//! Edge detection, after ArrayFire's `edge` example: Prewitt and Sobel gradients of a
//! smoothed picture, Canny's edges with Otsu's threshold, and the picture's histogram.
//!
//! The picture is drawn here: a bright rectangle and a disk on a dark, slightly sloping
//! background, with a little noise. Its shapes are known, so the example checks that the
//! edges lie on their outlines and nowhere else, and that the histogram counts what the
//! host counts.
//!
//! Run with `cargo run --example image_edge [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/image_edge` in the system's temporary directory.

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)

/// Whether pixel `(y, x)` lies inside one of the shapes.
fn inside(y: usize, x: usize) -> bool {
    let (yf, xf) = (y as f32, x as f32);
    let rectangle = (16..48).contains(&y) && (16..64).contains(&x);
    let disk = (yf - 62.0).powi(2) + (xf - 96.0).powi(2) < 20.0f32.powi(2);
    rectangle || disk
}

/// Whether pixel `(y, x)` is within `d` pixels (along each axis) of a shape's outline.
fn near_outline(y: usize, x: usize, d: usize) -> bool {
    let me = inside(y, x);
    let (y0, x0) = (y.saturating_sub(d), x.saturating_sub(d));
    (y0..=(y + d).min(H - 1)).any(|yy| (x0..=(x + d).min(W - 1)).any(|xx| inside(yy, xx) != me))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("image_edge"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    // ANCHOR: picture
    // Shapes at 200 on a background from 40 to 56, plus noise in [-4, 4), rounded to
    // whole levels as an 8-bit picture would be.
    let mut clean = vec![0.0f32; H * W];
    for x in 0..W {
        for y in 0..H {
            clean[y + H * x] = if inside(y, x) { 200.0 } else { 40.0 + x as f32 / 8.0 };
        }
    }
    set_seed(1);
    let noise = &(&randu::<f32>(dim4!(H as u64, W as u64)) - 0.5f32) * 8.0f32;
    let picture = round(&(&Array::new(&clean, dim4!(H as u64, W as u64)) + &noise));
    save_image(out("input.png"), &picture);
    // ANCHOR_END: picture
    let pixels = picture.to_vec();

    // ANCHOR: gradients
    // Smooth first (a 3 x 3 Gaussian, as ArrayFire's example uses for small pictures).
    let smooth = convolve2(
        &picture,
        &gaussian_kernel(3, 3, 0.0, 0.0),
        ConvMode::DEFAULT,
        ConvDomain::SPATIAL,
    );
    // Prewitt: a difference across one axis and a sum along the other, as two 1D filters.
    let sum3 = Array::new(&[1.0f32, 1.0, 1.0], dim4!(3));
    let diff3 = Array::new(&[-1.0f32, 0.0, 1.0], dim4!(3));
    let prewitt_rows = convolve2_sep(&diff3, &sum3, &smooth, ConvMode::DEFAULT);
    let prewitt_cols = convolve2_sep(&sum3, &diff3, &smooth, ConvMode::DEFAULT);
    let prewitt = hypot(&prewitt_rows, &prewitt_cols, false);
    // Sobel: both derivatives in one call.
    let (sobel_rows, sobel_cols) = sobel(&smooth, 3);
    let sobel_mag = hypot(&sobel_rows, &sobel_cols, false);
    // Scaled to [0, 1] for display.
    let normalise = |a: &Array<f32>| {
        let (lo, hi) = (min_all(a).0, max_all(a).0);
        &(a - lo) / (hi - lo)
    };
    let (prewitt, sobel_mag) = (normalise(&prewitt), normalise(&sobel_mag));
    save_image(out("prewitt.png"), &prewitt);
    save_image(out("sobel.png"), &sobel_mag);
    // ANCHOR_END: gradients

    // Strong gradients lie on the outlines only, and every stretch of outline has them.
    // (The convolutions read zeros outside the picture, so its own frame is an edge too:
    // the check leaves out the outermost three pixels.)
    for (name, mag) in [("prewitt", &prewitt), ("sobel", &sobel_mag)] {
        let v = mag.to_vec();
        for x in 3..W - 3 {
            for y in 3..H - 3 {
                if v[y + H * x] > 0.25 {
                    assert!(near_outline(y, x, 2), "{name}: strong gradient at ({y}, {x})");
                }
            }
        }
        for (y, x) in [(16, 40), (47, 40), (30, 16), (30, 63), (42, 96), (62, 116)] {
            assert!(v[y + H * x] > 0.25, "{name}: no gradient on the outline at ({y}, {x})");
        }
    }

    // ANCHOR: canny
    // Canny with the high threshold from Otsu's method, as ArrayFire's example does.
    let edges = canny(&picture, CannyThresholdType::OTSU, 0.18, 0.54, 3, false);
    save_image(out("canny.png"), &edges.cast::<f32>());
    // ANCHOR_END: canny
    let e = edges.to_vec();
    let mut outline = 0;
    let mut found = 0;
    for x in 3..W - 3 {
        for y in 3..H - 3 {
            if e[y + H * x] {
                assert!(near_outline(y, x, 1), "canny: an edge away from the outlines ({y}, {x})");
            }
            // every pixel just inside a shape's outline has an edge pixel next to it
            if inside(y, x) && near_outline(y, x, 1) {
                outline += 1;
                let seen = (y - 1..=y + 1).any(|yy| (x - 1..=x + 1).any(|xx| e[yy + H * xx]));
                found += seen as usize;
            }
        }
    }
    assert!(found * 100 >= outline * 98, "canny found {found} of {outline} outline pixels");

    // ANCHOR: histogram
    // One bin per grey level, 0 to 255.
    let hist = histogram(&picture, 256, 0.0, 255.0);
    // ANCHOR_END: histogram
    let mut counts = vec![0u32; 256];
    for &p in &pixels {
        counts[(p as usize).min(255)] += 1;
    }
    assert_eq!(hist.to_vec(), counts, "the histogram counts each level");
    let shapes = (0..H * W).filter(|&p| inside(p % H, p / H)).count() as u32;
    assert_eq!(counts[196..=204].iter().sum::<u32>(), shapes, "the shapes' levels");

    println!("wrote input, prewitt, sobel and canny PNGs to {}", dir.display());
}
