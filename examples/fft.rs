//! The spectrum of a noisy signal with two tones, found with `fft_r2c` and drawn as a PNG.
//!
//! Run with `cargo run --example fft [-- OUT.png]` (default: `fft_spectrum.png` in the system's
//! temporary directory). The example checks that the two largest peaks are at the tones' bins,
//! that an inverse transform returns the signal, and that a low-pass FIR filter removes the
//! higher tone.

use emberfire::*;

const N: usize = 1024;
const TONE_A: usize = 50; // cycles per N samples
const TONE_B: usize = 120;

fn main() {
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("fft_spectrum.png"));

    // ANCHOR: spectrum
    // Two tones and some deterministic noise.
    let mut seed = 12345u32;
    let samples: Vec<f32> = (0..N)
        .map(|i| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let noise = (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            let t = i as f32 / N as f32;
            (2.0 * std::f32::consts::PI * TONE_A as f32 * t).sin()
                + 0.5 * (2.0 * std::f32::consts::PI * TONE_B as f32 * t).cos()
                + 0.3 * noise
        })
        .collect();
    let signal = Array::new(&samples, dim4!(N));

    // The non-redundant half of the spectrum: N / 2 + 1 bins, scaled so a unit sine gives 1.
    let spectrum = fft_r2c(&signal, 2.0 / N as f64, 0);
    let magnitude = abs(&spectrum);
    assert_eq!(magnitude.dims(), dim4!(N / 2 + 1));
    // ANCHOR_END: spectrum

    // ANCHOR: peaks
    let mags = magnitude.to_vec();
    let mut bins: Vec<usize> = (0..mags.len()).collect();
    bins.sort_by(|&a, &b| mags[b].total_cmp(&mags[a]));
    assert_eq!(bins[0], TONE_A, "the strongest peak is the unit sine");
    assert_eq!(bins[1], TONE_B, "the second is the half-amplitude cosine");
    assert!((mags[TONE_A] - 1.0).abs() < 0.05 && (mags[TONE_B] - 0.5).abs() < 0.05);
    // ANCHOR_END: peaks

    // ANCHOR: inverse
    // fft_c2r undoes fft_r2c: the scale factors of the two multiply to 1 / N.
    let back = fft_c2r(&spectrum, 1.0 / 2.0, N % 2 == 1);
    let err = max_all(&abs(&(&back - &signal))).0;
    assert!(err < 1e-4, "round trip error {err}");
    // ANCHOR_END: inverse

    // ANCHOR: filter
    // A 9-tap moving average keeps most of the slow tone and removes most of the fast one.
    let taps = Array::new(&[1.0f32 / 9.0; 9], dim4!(9));
    let smooth = fir(&taps, &signal);
    let smooth_mags = abs(&fft_r2c(&smooth, 2.0 / N as f64, 0)).to_vec();
    assert!(smooth_mags[TONE_B] < 0.15 * mags[TONE_B]);
    assert!(smooth_mags[TONE_A] > 0.6 * mags[TONE_A]);
    // ANCHOR_END: filter

    write_plot(&path, &mags);
    println!(
        "peaks at bins {} and {} (of {}); spectrum written to {}",
        bins[0],
        bins[1],
        mags.len(),
        path.display()
    );
}

/// Draws the magnitudes as vertical bars, one column per bin, on a 256-pixel-high grey
/// image, and writes it as a PNG.
fn write_plot(path: &std::path::Path, mags: &[f32]) {
    let (w, h) = (mags.len(), 256usize);
    let top = mags.iter().cloned().fold(0.0f32, f32::max).max(1e-12);
    let mut pixels = vec![255u8; w * h];
    for (x, &m) in mags.iter().enumerate() {
        let bar = ((m / top) * (h - 1) as f32).round() as usize;
        for y in (h - 1 - bar)..h {
            pixels[y * w + x] = 30;
        }
    }
    let file = std::fs::File::create(path).expect("create the PNG file");
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w as u32, h as u32);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().expect("write the PNG header");
    writer.write_image_data(&pixels).expect("write the PNG pixels");
}
