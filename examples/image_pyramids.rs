//! Image pyramids, after ArrayFire's `pyramids` example: a Gaussian pyramid built by
//! blurring with a 5 x 5 binomial kernel and keeping every other row and column, and the way
//! back up by spreading the pixels out and blurring again, for a colour picture and its gray
//! version.
//!
//! The picture is drawn here (a smooth colour pattern), so the first level down is checked
//! against the same blur and subsampling done on the host, and every level's size and mean
//! against what they must be.
//!
//! Run with `cargo run --example image_pyramids [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/image_pyramids` in the system's temporary directory.

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)
const BINOMIAL: [f32; 5] = [1.0, 4.0, 6.0, 4.0, 1.0];

// ANCHOR: pyramid
/// The 5 x 5 binomial kernel (the outer product of 1 4 6 4 1 with itself), summing to 1.
fn kernel() -> Array<f32> {
    let taps: Vec<f32> =
        BINOMIAL.iter().flat_map(|&a| BINOMIAL.iter().map(move |&b| a * b / 256.0)).collect();
    Array::new(&taps, dim4!(5, 5))
}

/// `levels` steps down (blur, then every other row and column) or up (every pixel spread to
/// every other row and column of an image twice as large, then blurred with 4 times the
/// kernel, as a quarter of the pixels carry the whole weight). Channels are batched.
fn pyramid(img: &Array<f32>, levels: u32, down: bool) -> Array<f32> {
    let mut p = img.clone();
    for _ in 0..levels {
        let d = p.dims();
        if down {
            let blurred = convolve2(&p, &kernel(), ConvMode::DEFAULT, ConvDomain::SPATIAL);
            let every_other = |n: u64| Seq::new(0.0, n as f64 - 1.0, 2.0);
            p = index(&blurred, &[every_other(d[0]), every_other(d[1]), Seq::default()]);
        } else {
            let mut spread = constant(0.0f32, dim4!(2 * d[0], 2 * d[1], d[2]));
            let every_other = |n: u64| Seq::new(0.0, 2.0 * n as f64 - 1.0, 2.0);
            assign_seq(&mut spread, &[every_other(d[0]), every_other(d[1]), Seq::default()], &p);
            let four = &kernel() * 4.0f32;
            p = convolve2(&spread, &four, ConvMode::DEFAULT, ConvDomain::SPATIAL);
        }
    }
    p
}
// ANCHOR_END: pyramid

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("image_pyramids"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    // Smooth stripes and rings in [0, 1], a different pattern per channel.
    let mut px = vec![0.0f32; H * W * 3];
    for x in 0..W {
        for y in 0..H {
            let (yf, xf) = (y as f32, x as f32);
            let r = ((yf - 48.0).powi(2) + (xf - 64.0).powi(2)).sqrt();
            px[y + H * x] = 0.5 + 0.5 * (r / 5.0).sin();
            px[y + H * x + H * W] = 0.5 + 0.5 * (xf / 9.0).cos();
            px[y + H * x + 2 * H * W] = yf / (H - 1) as f32;
        }
    }
    let rgb = Array::new(&px, dim4!(H as u64, W as u64, 3));
    save_image(out("input.png"), &rgb);

    // ANCHOR: levels
    let gray = color_space(&rgb, ColorSpace::GRAY, ColorSpace::RGB);
    let down1 = pyramid(&rgb, 1, true);
    let down2 = pyramid(&rgb, 2, true);
    let up1 = pyramid(&rgb, 1, false);
    let gray_down2 = pyramid(&gray, 2, true);
    let gray_up2 = pyramid(&gray, 2, false);
    // ANCHOR_END: levels
    for (name, a) in [
        ("down1", &down1),
        ("down2", &down2),
        ("up1", &up1),
        ("gray_down2", &gray_down2),
        ("gray_up2", &gray_up2),
    ] {
        save_image(out(&format!("{name}.png")), a);
    }

    let (h, w) = (H as u64, W as u64);
    assert_eq!(down1.dims(), dim4!(h / 2, w / 2, 3));
    assert_eq!(down2.dims(), dim4!(h / 4, w / 4, 3));
    assert_eq!(up1.dims(), dim4!(2 * h, 2 * w, 3));
    assert_eq!(gray_down2.dims(), dim4!(h / 4, w / 4));
    assert_eq!(gray_up2.dims(), dim4!(4 * h, 4 * w));

    // The first level down, pixel by pixel: the blur (zeros outside the picture) at every
    // other row and column.
    let got = down1.to_vec();
    for c in 0..3 {
        for x in 0..W / 2 {
            for y in 0..H / 2 {
                let mut want = 0.0f64;
                for (j, kj) in BINOMIAL.iter().enumerate() {
                    for (i, ki) in BINOMIAL.iter().enumerate() {
                        let (yy, xx) = (2 * y + i, 2 * x + j);
                        if (2..H + 2).contains(&yy) && (2..W + 2).contains(&xx) {
                            let v = px[yy - 2 + H * (xx - 2) + H * W * c] as f64;
                            want += v * (*ki as f64) * (*kj as f64) / 256.0;
                        }
                    }
                }
                let g = got[y + H / 2 * x + H * W / 4 * c] as f64;
                assert!((g - want).abs() < 1e-5, "level 1 at ({y}, {x}, {c}): {g} vs {want}");
            }
        }
    }

    // Away from the border (where the blur reads zeros), every level keeps the picture's mean.
    let inner_mean = |a: &Array<f32>, frame: u64| {
        let d = a.dims();
        let inner = index(
            a,
            &[
                Seq::new(frame as f64, (d[0] - frame - 1) as f64, 1.0),
                Seq::new(frame as f64, (d[1] - frame - 1) as f64, 1.0),
                Seq::default(),
            ],
        );
        mean_all(&inner).0
    };
    let base = inner_mean(&rgb, 8);
    for (name, a, frame) in [("down1", &down1, 4), ("down2", &down2, 2), ("up1", &up1, 16)] {
        let m = inner_mean(a, frame);
        assert!((m - base).abs() < 0.01, "{name}: mean {m} vs {base}");
    }

    println!("wrote the pyramid PNGs to {}", dir.display());
}
