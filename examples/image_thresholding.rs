//! Thresholding, after ArrayFire's `binary_thresholding` and `adaptive_thresholding`
//! examples: a fixed threshold and Otsu's threshold on a noisy two-level picture, then a
//! grid under uneven light, where one global threshold fails and a threshold against each
//! pixel's local mean succeeds.
//!
//! The pictures are drawn here, and every mask's pixel count is compared with the count the
//! host computes from the same pixels.
//!
//! Run with `cargo run --example image_thresholding [-- OUT_DIR]`; the PNGs go to OUT_DIR,
//! by default `emberfire-examples/image_thresholding` in the system's temporary directory.

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)

/// Otsu's threshold of a 256-bin histogram, on the host: the level that maximises the
/// variance between the two classes it splits (the first such level).
fn host_otsu(hist: &[f64]) -> usize {
    let total: f64 = hist.iter().sum();
    let all: f64 = hist.iter().enumerate().map(|(i, h)| i as f64 * h).sum();
    let (mut w_b, mut sum_b, mut best, mut at) = (0.0, 0.0, -1.0, 0);
    for (i, h) in hist.iter().enumerate() {
        w_b += h;
        sum_b += i as f64 * h;
        let w_f = total - w_b;
        if w_b == 0.0 || w_f == 0.0 {
            continue;
        }
        let d = sum_b / w_b - (all - sum_b) / w_f;
        let between = w_b * w_f * d * d;
        if between > best {
            (best, at) = (between, i);
        }
    }
    at
}

fn main() {
    let dir = std::env::args().nth(1).map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::env::temp_dir().join("emberfire-examples").join("image_thresholding")
    });
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();
    let (h, w) = (H as u64, W as u64);

    // ANCHOR: bimodal
    // A bright square on a dark background, both with strong noise, at three quarters of
    // the drawn size.
    set_seed(3);
    let square = |y: u64, x: u64| (24..72).contains(&y) && (32..96).contains(&x);
    let levels: Vec<f32> =
        (0..h * w).map(|p| if square(p % h, p / h) { 180.0 } else { 70.0 }).collect();
    let noise = &(&randu::<f32>(dim4!(h, w)) - 0.5f32) * 100.0f32;
    let drawn = round(&(&Array::new(&levels, dim4!(h, w)) + &noise));
    let bimodal = resize(&drawn, 72, 96, InterpType::NEAREST);
    // ANCHOR_END: bimodal
    save_image(out("bimodal.png"), &bimodal);
    let pixels = bimodal.to_vec();

    // ANCHOR: binary
    let fixed = gt(&bimodal, &150.0f32, false);
    // ANCHOR_END: binary
    save_image(out("fixed.png"), &fixed.cast::<f32>());
    let above = pixels.iter().filter(|&&v| v > 150.0).count() as u64;
    assert_eq!(count_all(&fixed).0, above, "the fixed threshold's pixel count");

    // ANCHOR: otsu
    // Otsu: for every level t, the weights and means of the pixels below and above it, from
    // the histogram's running sums; the threshold maximises w_below * w_above * (m_below -
    // m_above)^2.
    let hist = histogram(&bimodal, 256, 0.0, 255.0).cast::<f64>();
    let level = range::<f64>(dim4!(256), 0);
    let w_below = accum(&hist, 0);
    let w_above = &(&w_below * -1.0f64) + pixels.len() as f64;
    let sum_below = accum(&(&level * &hist), 0);
    let sum_above = &(&sum_below * -1.0f64) + sum_all(&(&level * &hist)).0;
    // (an empty class has a sum of 0: dividing by at least 1 gives it a mean of 0)
    let one = constant(1.0f64, dim4!(1));
    let diff =
        &(&sum_below / &maxof(&w_below, &one, true)) - &(&sum_above / &maxof(&w_above, &one, true));
    let between = &(&(&w_below * &w_above) * &diff) * &diff;
    let threshold = imax_all(&between).2 as usize;
    let otsu = gt(&bimodal, &(threshold as f32), false);
    // ANCHOR_END: otsu
    save_image(out("otsu.png"), &otsu.cast::<f32>());
    let mut host_hist = vec![0.0f64; 256];
    for &v in &pixels {
        host_hist[(v.max(0.0) as usize).min(255)] += 1.0;
    }
    assert_eq!(threshold, host_otsu(&host_hist), "Otsu's threshold");
    assert!((100..150).contains(&threshold), "Otsu's threshold {threshold} splits the modes");
    let above = pixels.iter().filter(|&&v| v > threshold as f32).count() as u64;
    assert_eq!(count_all(&otsu).0, above, "Otsu's pixel count");

    // ANCHOR: grid
    // Dark grid lines on paper lit unevenly, from 70 on the left to 250 on the right.
    let line = |y: u64, x: u64| y % 16 < 2 || x % 16 < 2;
    let paper: Vec<f32> = (0..h * w)
        .map(|p| {
            let (y, x) = (p % h, p / h);
            let light = 70.0 + 180.0 * x as f32 / (w - 1) as f32;
            if line(y, x) {
                light - 50.0
            } else {
                light
            }
        })
        .collect();
    let grid = Array::new(&paper, dim4!(h, w));
    // ANCHOR_END: grid
    save_image(out("grid.png"), &grid);

    // ANCHOR: adaptive
    // A pixel is dark where it lies more than 10 below the mean of the 9 x 9 window around it.
    let window = constant(1.0f32 / 81.0, dim4!(9, 9));
    let local_mean = convolve2(&grid, &window, ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let adaptive = gt(&(&local_mean - &grid), &10.0f32, false);
    // One threshold for the whole picture, halfway between its extremes, for comparison.
    let global = lt(&grid, &((min_all(&grid).0 + max_all(&grid).0) / 2.0), false);
    // ANCHOR_END: adaptive
    save_image(out("adaptive.png"), &adaptive.cast::<f32>());
    save_image(out("global.png"), &global.cast::<f32>());

    // The host's local means (zeros outside the picture, as the convolution reads), and the
    // count of pixels more than 10 below them; pixels within 1e-3 of the threshold could go
    // either way in f32 and are left out of the comparison.
    let (mask, g) = (adaptive.to_vec(), global.to_vec());
    let (mut agree, mut lines_found, mut global_right) = (0usize, 0usize, 0usize);
    for x in 0..W {
        for y in 0..H {
            let mut s = 0.0f64;
            for xx in x.saturating_sub(4)..=(x + 4).min(W - 1) {
                for yy in y.saturating_sub(4)..=(y + 4).min(H - 1) {
                    s += paper[yy + H * xx] as f64;
                }
            }
            let d = s / 81.0 - paper[y + H * x] as f64 - 10.0;
            let p = y + H * x;
            if d.abs() > 1e-3 {
                assert_eq!(mask[p], d > 0.0, "adaptive threshold at ({y}, {x})");
                agree += 1;
            }
            let inner = (4..H - 4).contains(&y) && (4..W - 4).contains(&x);
            if inner && line(y as u64, x as u64) {
                lines_found += mask[p] as usize;
            }
            global_right += (g[p] == line(y as u64, x as u64)) as usize;
        }
    }
    assert!(agree > H * W * 99 / 100, "{agree} pixels compared");
    let inner_lines = (4..H - 4)
        .flat_map(|y| (4..W - 4).map(move |x| (y, x)))
        .filter(|&(y, x)| line(y as u64, x as u64))
        .count();
    assert_eq!(lines_found, inner_lines, "the adaptive threshold finds every line pixel");
    assert!(global_right < H * W * 9 / 10, "one global threshold cannot: {global_right} right");

    println!("wrote the thresholding PNGs to {}", dir.display());
}
