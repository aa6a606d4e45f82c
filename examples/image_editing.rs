//! Image editing, after ArrayFire's `image_editing` example: contrast and brightness, clamping,
//! an unsharp mask, a digital zoom (a crop resized back to full size), a translation, an
//! alpha blend of two pictures through a mask, and boundary extraction by erosion.
//!
//! Both pictures are drawn here: a lit sphere on a gradient, and a striped background for the
//! blend. Every edit is checked against the same formula computed on the host, pixel by pixel.
//!
//! Run with `cargo run --example image_editing [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/image_editing` in the system's temporary directory.

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)

/// The foreground's gray level at `(y, x)` in [0, 255]: a shaded sphere on a dark gradient
/// (0 in the top-left corner, so the blend's mask has something to leave out).
fn sphere(y: usize, x: usize) -> f32 {
    let (dy, dx) = ((y as f32 - 48.0) / 30.0, (x as f32 - 64.0) / 30.0);
    let r2 = dy * dy + dx * dx;
    if r2 < 1.0 {
        // a light from the upper left
        let z = (1.0 - r2).sqrt();
        (40.0 + 215.0 * (0.5 * z - 0.35 * dy - 0.35 * dx).clamp(0.0, 1.0)).min(255.0)
    } else {
        (x + y) as f32 * 0.1
    }
}

/// The blend's background: diagonal stripes.
fn stripes(y: usize, x: usize) -> f32 {
    if ((x + y) / 8).is_multiple_of(2) {
        200.0
    } else {
        90.0
    }
}

// ANCHOR: edits
/// Contrast: `c` in (-1, 1); 0 leaves the picture as it is.
fn change_contrast(img: &Array<f32>, c: f32) -> Array<f32> {
    let scale = ((c + 1.0) * std::f32::consts::PI / 4.0).tan();
    ((img / 255.0f32 - 0.5f32) * scale + 0.5f32) * 255.0f32
}

/// Brightness: `b` is a fraction of the full range added to every pixel.
fn change_brightness(img: &Array<f32>, b: f32) -> Array<f32> {
    img + b * 255.0
}

/// Values below `lo` become 0 and above `hi` become 255, as ArrayFire's example clamps.
fn clamp_range(img: &Array<f32>, lo: f32, hi: f32) -> Array<f32> {
    let inside = ge(img, &lo, false) & le(img, &hi, false);
    let above = gt(img, &hi, false);
    select(img, &inside, &selectr(&constant(255.0f32, img.dims()), &above, 0.0))
}

/// Unsharp masking: the picture plus `amount` times its difference from a Gaussian blur.
fn unsharp(img: &Array<f32>, radius: i32, amount: f32) -> Array<f32> {
    let len = 2 * radius + 1;
    let blur = convolve2(
        img,
        &gaussian_kernel(len, len, 0.0, 0.0),
        ConvMode::DEFAULT,
        ConvDomain::SPATIAL,
    );
    img + amount * (img - &blur)
}

/// A digital zoom: the `rows x cols` block at `(y, x)`, resized back to the full picture.
fn zoom(img: &Array<f32>, y: f64, x: f64, rows: f64, cols: f64) -> Array<f32> {
    let d = img.dims();
    let crop = index(img, &[Seq::new(y, y + rows - 1.0, 1.0), Seq::new(x, x + cols - 1.0, 1.0)]);
    resize(&crop, d[0] as i64, d[1] as i64, InterpType::BILINEAR)
}

/// `a` where `mask` is 1, `b` where it is 0, mixed in between.
fn alpha_blend(a: &Array<f32>, b: &Array<f32>, mask: &Array<f32>) -> Array<f32> {
    a * mask + (1.0f32 - mask) * b
}

/// The outlines of bright regions: the picture minus its erosion, stretched to [0, 255].
fn boundary(img: &Array<f32>) -> Array<f32> {
    let edge = img - &erode(img, &constant(1.0f32, dim4!(3, 3)));
    let (lo, hi) = (min_all(&edge).0 as f32, max_all(&edge).0 as f32);
    (edge - lo) * (255.0 / (hi - lo))
}
// ANCHOR_END: edits

/// Asserts `got` against the host's `want`, pixel by pixel, within `tol`.
fn check(got: &Array<f32>, want: &[f32], tol: f32, what: &str) {
    let g = got.to_vec();
    assert_eq!(g.len(), want.len(), "{what}: size");
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= tol, "{what}: pixel {i} is {a}, the host's {b}");
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("image_editing"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    let mut fg = vec![0.0f32; H * W];
    let mut bg = vec![0.0f32; H * W];
    for x in 0..W {
        for y in 0..H {
            fg[y + H * x] = sphere(y, x);
            bg[y + H * x] = stripes(y, x);
        }
    }
    let dims = dim4!(H as u64, W as u64);
    let (man, back) = (Array::new(&fg, dims), Array::new(&bg, dims));
    save_image(out("input.png"), &man);

    // ANCHOR: run
    let contrast = clamp_range(&change_contrast(&man, 0.3), 0.0, 255.0);
    let bright = clamp_range(&change_brightness(&man, 0.2), 0.0, 255.0);
    let sharp = clamp_range(&unsharp(&man, 3, 1.2), 0.0, 255.0);
    let zoomed = zoom(&man, 24.0, 32.0, 48.0, 64.0);
    let moved = translate(&man, 10.0, 20.0, 0, 0, InterpType::NEAREST);
    let mask = gt(&man, &10.0f32, false).cast::<f32>(); // the sphere and the lighter half
    let blend = alpha_blend(&man, &back, &mask);
    let edges = boundary(&man);
    // ANCHOR_END: run
    for (name, a) in [
        ("contrast.png", &contrast),
        ("brightness.png", &bright),
        ("unsharp.png", &sharp),
        ("zoom.png", &zoomed),
        ("translate.png", &moved),
        ("blend.png", &blend),
        ("boundary.png", &edges),
    ] {
        save_image(out(name), a);
    }

    // Contrast, brightness and the clamp, from their formulas.
    let scale = (1.3f32 * std::f32::consts::PI / 4.0).tan();
    let clamp = |v: f32| v.clamp(0.0, 255.0);
    let want: Vec<f32> =
        fg.iter().map(|&v| clamp(((v / 255.0 - 0.5) * scale + 0.5) * 255.0)).collect();
    check(&contrast, &want, 1e-2, "contrast");
    let want: Vec<f32> = fg.iter().map(|&v| clamp(v + 51.0)).collect();
    check(&bright, &want, 1e-2, "brightness");

    // The translation: pixel (y, x) shows the input's (y + 10, x + 20), black past the edge.
    let mut want = vec![0.0f32; H * W];
    for x in 0..W - 20 {
        for y in 0..H - 10 {
            want[y + H * x] = fg[y + 10 + H * (x + 20)];
        }
    }
    check(&moved, &want, 0.0, "translate");

    // The zoom doubles the 48 x 64 block at (24, 32): even pixels are the block's own.
    let z = zoomed.to_vec();
    for x in (0..W).step_by(2) {
        for y in (0..H).step_by(2) {
            let v = fg[24 + y / 2 + H * (32 + x / 2)];
            assert!((z[y + H * x] - v).abs() < 1e-3, "zoom at ({y}, {x})");
        }
    }

    // The blend takes the stripes exactly where the picture is 10 or darker.
    let want: Vec<f32> = fg.iter().zip(&bg).map(|(&f, &b)| if f > 10.0 { f } else { b }).collect();
    check(&blend, &want, 0.0, "blend");

    // Unsharp masking keeps flat regions (the blur of a constant is itself, away from the
    // zero-padded frame) and raises the contrast across the sphere's rim.
    let s = sharp.to_vec();
    let (inside, rim_out) = (48 + H * 64, 48 + H * 96); // centre, and just outside the rim
    assert!((s[inside] - fg[inside]).abs() < 2.0, "unsharp changed the flat centre");
    assert!(s[rim_out] <= fg[rim_out], "unsharp did not darken the outside of the rim");

    // The boundary is 0 on flat ground and 255 at its strongest, on the sphere's rim.
    let e = edges.to_vec();
    let top = e.iter().cloned().fold(f32::MIN, f32::max);
    assert!((top - 255.0).abs() < 1e-3, "the boundary's maximum is {top}");
    let rim = (0..W)
        .flat_map(|x| (0..H).map(move |y| (y, x)))
        .filter(|&(y, x)| e[y + H * x] > 128.0)
        .all(|(y, x)| {
            let r = ((y as f32 - 48.0).powi(2) + (x as f32 - 64.0).powi(2)).sqrt();
            (r - 30.0).abs() <= 2.0 || y < 2 || x < 2 || y + 2 >= H || x + 2 >= W
        });
    assert!(rim, "a strong boundary pixel lies away from the rim");
    println!("image_editing: all edits match the host; pictures in {}", dir.display());
}
