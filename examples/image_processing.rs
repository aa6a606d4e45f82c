//! Image processing on a picture the example draws itself: a bright disk on a dark gradient,
//! with salt-and-pepper noise. It is written to a PNG and read back, cleaned with a median
//! filter, blurred, its edges found with Sobel, thresholded and opened with morphology, its
//! centroid found with moments, and its colours changed through HSV. Every step checks its
//! result, and writes a PNG.
//!
//! Run with `cargo run --example image_processing [-- OUT_DIR]` (default:
//! `emberfire-examples/image_processing` in the system's temporary directory, made if missing).

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)
const CY: f32 = 40.0; // the disk's centre and radius, in pixels
const CX: f32 = 70.0;
const R: f32 = 22.0;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples/image_processing"));
    std::fs::create_dir_all(&dir).expect("an output folder that can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    // ANCHOR: draw
    // An RGB picture, channels along dimension 2: an orange disk on a blue-gray gradient.
    let mut seed = 7u32;
    let mut pixels = vec![0.0f32; H * W * 3];
    for x in 0..W {
        for y in 0..H {
            let inside = (y as f32 - CY).powi(2) + (x as f32 - CX).powi(2) < R * R;
            let rgb = if inside { [230.0, 140.0, 30.0] } else { [40.0, 50.0, (60 + x / 2) as f32] };
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let salt = match seed >> 24 {
                0..=3 => Some(0.0), // about 3% of the pixels are noise
                4..=7 => Some(255.0),
                _ => None,
            };
            for c in 0..3 {
                pixels[y + H * (x + W * c)] = salt.unwrap_or(rgb[c]);
            }
        }
    }
    let picture = Array::new(&pixels, dim4!(H, W, 3));
    save_image(out("image_input.png"), &picture);
    let rgb: Array<f32> = load_image(out("image_input.png"), true);
    assert!(rgb.to_vec() == pixels, "PNG keeps 8-bit values exactly");
    // ANCHOR_END: draw

    // ANCHOR: denoise
    let gray = rgb2gray(&rgb, 0.2126, 0.7152, 0.0722);
    let clean = medfilt(&gray, 3, 3, BorderType::SYMMETRIC);
    let noisy_left = |a: &Array<f32>| {
        // pixels far from both of their horizontal neighbours
        let v = a.to_vec();
        (H..H * (W - 1))
            .filter(|&i| (v[i] - v[i - H]).abs() > 60.0 && (v[i] - v[i + H]).abs() > 60.0)
            .count()
    };
    assert!(noisy_left(&gray) > 200 && noisy_left(&clean) < 10, "the median removes the salt");
    save_image(out("image_median.png"), &clean);
    // ANCHOR_END: denoise

    // ANCHOR: edges
    let blur =
        convolve2(&clean, &gaussian_kernel(5, 5, 1.0, 1.0), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let (d_rows, d_cols) = sobel(&blur, 3);
    let magnitude = sqrt(&(&(&d_rows * &d_rows) + &(&d_cols * &d_cols)));
    let (top, _, at) = imax_all(&magnitude);
    let (ey, ex) = ((at as usize % H) as f32, (at as usize / H) as f32);
    let from_centre = ((ey - CY).powi(2) + (ex - CX).powi(2)).sqrt();
    assert!(top > 100.0 && (from_centre - R).abs() < 3.0, "the strongest edge is the disk's rim");
    save_image(out("image_edges.png"), &(&magnitude * (255.0 / top)));
    // ANCHOR_END: edges

    // ANCHOR: morphology
    // A binary mask of the disk, opened (eroded, then dilated) to drop small specks.
    let mask = gt(&clean, &100.0f32, false).cast::<f32>();
    let disk = constant(1.0f32, dim4!(5, 5));
    let opened = dilate(&erode(&mask, &disk), &disk);
    let area = sum_all(&opened).0;
    let expected = std::f32::consts::PI * R * R;
    assert!((area - expected).abs() < 0.05 * expected, "area {area} vs {expected}");
    save_image(out("image_mask.png"), &opened);
    // ANCHOR_END: morphology

    // ANCHOR: moments
    let m = moments(&opened, MomentType::FIRST_ORDER).to_vec();
    let (cy, cx) = (m[1] / m[0], m[2] / m[0]); // M01 weighs rows, M10 columns
    assert!((cy - CY).abs() < 0.5 && (cx - CX).abs() < 0.5, "centroid ({cy}, {cx})");
    // ANCHOR_END: moments

    // ANCHOR: colour
    // Turn the orange disk green: shift the hue by a third where the mask is set.
    let hsv = rgb2hsv(&(&medfilt(&rgb, 3, 3, BorderType::SYMMETRIC) / 255.0f32));
    let hue = slice(&hsv, 0);
    let shifted = &(&hue + &(&opened * (1.0f32 / 3.0))) % 1.0f32;
    let recoloured = join_many(2, vec![&shifted, &slice(&hsv, 1), &slice(&hsv, 2)]);
    let green = hsv2rgb(&recoloured);
    let centre =
        index(&green, &[Seq::new(CY, CY, 1.0), Seq::new(CX, CX, 1.0), Seq::default()]).to_vec();
    assert!(centre[1] > centre[0] && centre[1] > centre[2], "the disk is green: {centre:?}");
    save_image(out("image_green.png"), &green);
    // ANCHOR_END: colour

    println!("wrote image_*.png to {}", dir.display());
}
