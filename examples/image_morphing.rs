//! Morphology, after ArrayFire's `morphing` example: erosion, dilation, opening, closing,
//! the morphological gradient, top-hat and bottom-hat transforms, a blur, and borders.
//!
//! The picture is drawn here: colour blocks on a dark background, with small bright specks
//! and small dark holes that the openings and closings are meant to find. Erosion and
//! dilation are checked against a minimum and maximum taken on the host.
//!
//! Run with `cargo run --example image_morphing [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/image_morphing` in the system's temporary directory.

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)

/// The picture's colour at `(y, x)`, in `[0, 1]`, and whether the pixel is a speck (a bright
/// 2 x 2 dot on the background) or a hole (a dark 2 x 2 dot in a block).
fn pixel(y: usize, x: usize) -> ([f32; 3], bool, bool) {
    let speck = y % 16 >= 6 && y % 16 < 8 && x % 16 >= 6 && x % 16 < 8;
    if (16..80).contains(&y) && (24..104).contains(&x) {
        let hole = speck && (32..64).contains(&y);
        let c = if x < 64 { [0.9, 0.6, 0.2] } else { [0.3, 0.7, 0.9] };
        (if hole { [0.0; 3] } else { c }, false, hole)
    } else {
        (if speck { [1.0; 3] } else { [0.1, 0.1, 0.15] }, speck, false)
    }
}

/// The minimum (`max == false`) or maximum of `v` (one `H x W` channel) over the 5 x 5 window
/// at each pixel, positions outside the picture left out.
fn host_extreme(v: &[f32], max: bool) -> Vec<f32> {
    let mut out = vec![0.0; H * W];
    for x in 0..W {
        for y in 0..H {
            let mut e = v[y + H * x];
            for xx in x.saturating_sub(2)..=(x + 2).min(W - 1) {
                for yy in y.saturating_sub(2)..=(y + 2).min(H - 1) {
                    let p = v[yy + H * xx];
                    e = if max { e.max(p) } else { e.min(p) };
                }
            }
            out[y + H * x] = e;
        }
    }
    out
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("image_morphing"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();

    let mut px = vec![0.0f32; H * W * 3];
    let (mut specks, mut holes) = (vec![false; H * W], vec![false; H * W]);
    for x in 0..W {
        for y in 0..H {
            let (rgb, speck, hole) = pixel(y, x);
            for c in 0..3 {
                px[y + H * x + H * W * c] = rgb[c];
            }
            specks[y + H * x] = speck;
            holes[y + H * x] = hole;
        }
    }
    let img = Array::new(&px, dim4!(H as u64, W as u64, 3));
    save_image(out("input.png"), &img);

    // ANCHOR: morph
    let mask = constant(1.0f32, dim4!(5, 5));
    let eroded = erode(&img, &mask);
    let dilated = dilate(&img, &mask);
    let opened = dilate(&eroded, &mask); // removes bright details smaller than the mask
    let closed = erode(&dilated, &mask); // fills dark details smaller than the mask
    let gradient = &dilated - &eroded; // the outlines
    let top_hat = &img - &opened; // the bright details alone
    let bottom_hat = &closed - &img; // the dark details alone
                                     // ANCHOR_END: morph
    for (name, a) in [
        ("erode", &eroded),
        ("dilate", &dilated),
        ("open", &opened),
        ("close", &closed),
        ("gradient", &gradient),
        ("tophat", &top_hat),
        ("bottomhat", &bottom_hat),
    ] {
        save_image(out(&format!("{name}.png")), a);
    }

    // Erosion and dilation are the host's minimum and maximum, channel by channel.
    let (e, d) = (eroded.to_vec(), dilated.to_vec());
    for c in 0..3 {
        let channel = &px[H * W * c..H * W * (c + 1)];
        assert_eq!(&e[H * W * c..H * W * (c + 1)], &host_extreme(channel, false)[..], "erode");
        assert_eq!(&d[H * W * c..H * W * (c + 1)], &host_extreme(channel, true)[..], "dilate");
    }
    // The top hat is exactly the specks, the bottom hat exactly the holes (in the green
    // channel, where every block is brighter than 0.5).
    let (t, b) = (top_hat.to_vec(), bottom_hat.to_vec());
    for p in 0..H * W {
        assert_eq!(t[p + H * W] > 0.5, specks[p], "top hat at pixel {p}");
        assert_eq!(b[p + H * W] > 0.5, holes[p], "bottom hat at pixel {p}");
    }

    // ANCHOR: blur_border
    // A 5 x 5 Gaussian blur of every channel (convolve2 batches over dimension 2).
    let blurred =
        convolve2(&img, &gaussian_kernel(5, 5, 0.0, 0.0), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    // A gray frame: 20 rows at the top, 30 at the bottom, 40 columns left and 50 right.
    let keep = [
        Seq::new(20.0, (H - 31) as f64, 1.0),
        Seq::new(40.0, (W - 51) as f64, 1.0),
        Seq::default(),
    ];
    let mut framed = constant(0.5f32, img.dims());
    assign_seq(&mut framed, &keep, &index(&img, &keep));
    save_image(out("blur.png"), &blurred);
    save_image(out("border.png"), &framed);
    // ANCHOR_END: blur_border
    let inner = (H - 50) * (W - 90) * 3;
    let gray = framed.to_vec().iter().filter(|&&v| v == 0.5).count();
    assert_eq!(gray, H * W * 3 - inner, "the frame's pixels");
    let bl = blurred.to_vec();
    assert!((bl[48 + H * 40] - 0.9).abs() < 1e-5, "a block's inside stays flat");

    println!("wrote the morphology PNGs to {}", dir.display());
}
