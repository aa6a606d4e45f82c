//! Image filters, after ArrayFire's `filters` example: "hurl" noise (random pixels replaced
//! by random colours), then a Gaussian blur, a median filter and a bilateral filter to remove
//! it; a "spread" effect (each pixel taken from a random neighbour), a difference of
//! Gaussians, an emboss effect, and mean-shift smoothing.
//!
//! The picture is drawn here (a red rectangle and a green disk on a blue gradient), so every
//! step is checked against what the host computes from the same pixels.
//!
//! Run with `cargo run --example image_filters [-- OUT_DIR]`; the PNGs go to OUT_DIR, by
//! default `emberfire-examples/image_filters` in the system's temporary directory.

use emberfire::*;

const H: usize = 96; // rows (dimension 0)
const W: usize = 128; // columns (dimension 1)

/// Which region pixel `(y, x)` belongs to: 0 background, 1 rectangle, 2 disk.
fn region(y: usize, x: usize) -> usize {
    if (20..60).contains(&y) && (12..56).contains(&x) {
        1
    } else if (y as f32 - 56.0).powi(2) + (x as f32 - 94.0).powi(2) < 24.0f32.powi(2) {
        2
    } else {
        0
    }
}

/// The region's colour at column `x` (the background is a gradient along the columns).
fn colour(r: usize, x: usize) -> [f32; 3] {
    match r {
        1 => [210.0, 40.0, 30.0],
        2 => [40.0, 190.0, 60.0],
        _ => [30.0, 60.0, 120.0 + x as f32 / 2.0],
    }
}

/// Whether the whole `(2d + 1)`-wide window around `(y, x)` lies in the picture and in one
/// region.
fn flat_around(y: usize, x: usize, d: usize) -> bool {
    if y < d || x < d || y + d >= H || x + d >= W {
        return false;
    }
    let r = region(y, x);
    (y - d..=y + d).all(|yy| (x - d..=x + d).all(|xx| region(yy, xx) == r))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-examples").join("image_filters"));
    std::fs::create_dir_all(&dir).expect("the output directory can be made");
    let out = |name: &str| dir.join(name).to_str().expect("a UTF-8 path").to_string();
    let (h, w) = (H as u64, W as u64);
    let at = |y: usize, x: usize, c: usize| y + H * (x + W * c);

    let mut px = vec![0.0f32; H * W * 3];
    for x in 0..W {
        for y in 0..H {
            let rgb = colour(region(y, x), x);
            for c in 0..3 {
                px[at(y, x, c)] = rgb[c];
            }
        }
    }
    let picture = Array::new(&px, dim4!(h, w, 3));
    save_image(out("input.png"), &picture);

    // ANCHOR: hurl
    // Hurl noise: a tenth of the pixels, chosen at random, take a random colour.
    set_seed(5);
    let hit = lt(&randu::<f32>(dim4!(h, w)), &0.1f32, false);
    let random_colour = &randu::<f32>(dim4!(h, w, 3)) * 255.0f32;
    let hurled = select(&random_colour, &tile(&hit, dim4!(1, 1, 3)), &picture);
    save_image(out("hurl.png"), &hurled);
    // ANCHOR_END: hurl
    let noisy = hit.to_vec();

    // ANCHOR: denoise
    let blurred = convolve2(
        &hurled,
        &gaussian_kernel(3, 3, 0.8, 0.8),
        ConvMode::DEFAULT,
        ConvDomain::SPATIAL,
    );
    let median = medfilt(&hurled, 5, 5, BorderType::ZERO);
    let smoothed = bilateral(&hurled, 2.0, 40.0, true);
    save_image(out("gaussian.png"), &blurred);
    save_image(out("median.png"), &median);
    save_image(out("bilateral.png"), &smoothed);
    // ANCHOR_END: denoise

    // Where fewer than half of a 5 x 5 window is noise and the window lies in one region,
    // the median is the region's colour exactly.
    let m = median.to_vec();
    let mut restored = 0;
    for x in 2..W - 2 {
        for y in 2..H - 2 {
            let hits = (y - 2..=y + 2)
                .flat_map(|yy| (x - 2..=x + 2).map(move |xx| (yy, xx)))
                .filter(|&(yy, xx)| noisy[yy + H * xx])
                .count();
            if flat_around(y, x, 2) && hits < 13 && region(y, x) != 0 {
                for c in 0..3 {
                    assert_eq!(m[at(y, x, c)], px[at(y, x, c)], "median at ({y}, {x})");
                }
                restored += 1;
            }
        }
    }
    assert!(restored > 2000, "the median restored {restored} pixels");
    // Inside the regions, the bilateral filter and the blur bring the noisy pixels closer to
    // the clean picture.
    let error = |a: &Array<f32>| {
        let v = a.to_vec();
        let inner = (0..H * W).filter(|&p| flat_around(p % H, p / H, 3));
        inner
            .map(|p| (0..3).map(|c| (v[p + H * W * c] - px[p + H * W * c]).abs()).sum::<f32>())
            .sum::<f32>()
    };
    let (e_hurl, e_blur, e_bil) = (error(&hurled), error(&blurred), error(&smoothed));
    assert!(e_blur < e_hurl && e_bil < e_hurl, "errors {e_hurl} {e_blur} {e_bil}");

    // ANCHOR: spread
    // Spread: every pixel takes the colour of a random pixel up to 3 rows and columns away.
    let jitter = &(&randu::<f32>(dim4!(h, w)) * 2.0f32) - 1.0f32;
    let rows = clamp(
        &(&range::<f32>(dim4!(h, w), 0) + &floor(&(&jitter * 3.0f32))),
        &0.0f32,
        &(H as f32 - 1.0),
        false,
    );
    let cols = clamp(
        &(&range::<f32>(dim4!(h, w), 1) + &floor(&(&jitter * 3.0f32))),
        &0.0f32,
        &(W as f32 - 1.0),
        false,
    );
    let source = flat(&(&rows + &(&cols * H as f32))).cast::<u32>();
    let by_pixel = moddims(&picture, dim4!(h * w, 3));
    let spread = moddims(&lookup(&by_pixel, &source, 0), dim4!(h, w, 3));
    save_image(out("spread.png"), &spread);
    // ANCHOR_END: spread
    let (jit, s) = (jitter.to_vec(), spread.to_vec());
    for p in 0..H * W {
        let off = (jit[p] * 3.0).floor() as i64; // the same f32 arithmetic as above
        let y = (p as i64 % H as i64 + off).clamp(0, H as i64 - 1) as usize;
        let x = (p as i64 / H as i64 + off).clamp(0, W as i64 - 1) as usize;
        let q = y + H * x;
        for c in 0..3 {
            assert_eq!(s[p + H * W * c], px[q + H * W * c], "spread at pixel {p}");
        }
    }

    // ANCHOR: dog
    // Difference of Gaussians (3 x 3 minus 5 x 5) of the gray picture: zero on flat regions,
    // large across edges.
    let gray = rgb2gray(&picture, 0.2126, 0.7152, 0.0722);
    let g3 =
        convolve2(&gray, &gaussian_kernel(3, 3, 0.0, 0.0), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let g5 =
        convolve2(&gray, &gaussian_kernel(5, 5, 0.0, 0.0), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let dog = &g3 - &g5;
    let (lo, hi) = (min_all(&dog).0, max_all(&dog).0);
    save_image(out("dog.png"), &(&(&dog - lo) / (hi - lo)));
    // ANCHOR_END: dog
    let d = dog.to_vec();
    for x in 0..W {
        for y in 0..H {
            // the background's gradient is linear along the columns: both blurs keep it
            if flat_around(y, x, 2) {
                assert!(d[y + H * x].abs() < 1e-2, "DoG {} at ({y}, {x})", d[y + H * x]);
            }
        }
    }
    let across = (9..15).map(|x| d[40 + H * x].abs()).fold(0.0, f32::max);
    assert!(across > 1.0, "the DoG marks the rectangle's left edge ({across})");

    // ANCHOR: emboss
    // Emboss: light from azimuth 45 and elevation 20 degrees on the gray picture as a relief.
    let (azimuth, elevation, depth) = (45.0f32.to_radians(), 20.0f32.to_radians(), 10.0f32);
    let light = [
        255.99 * elevation.cos() * azimuth.cos(),
        255.99 * elevation.cos() * azimuth.sin(),
        255.99 * elevation.sin(),
    ];
    let step = Array::new(&[-1.0f32, 0.0, 1.0], dim4!(3));
    let slope_rows = convolve2(&gray, &step, ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let slope_cols =
        convolve2(&gray, &transpose(&step, false), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let z = 6.0 * 255.0 / depth;
    let towards = &(&(&slope_rows * light[0]) + &(&slope_cols * light[1])) + z * light[2];
    let length = sqrt(&(&(&(&slope_rows * &slope_rows) + &(&slope_cols * &slope_cols)) + z * z));
    let shade = &towards / &length;
    let emboss = select(&constant(0.0f32, shade.dims()), &lt(&towards, &0.0f32, false), &shade);
    save_image(out("emboss.png"), &(&emboss / 255.0f32));
    // ANCHOR_END: emboss
    let e = emboss.to_vec();
    let flat_shade = (e[40 + H * 30], light[2]);
    assert!((flat_shade.0 - flat_shade.1).abs() < 1e-3, "a flat pixel faces up: {flat_shade:?}");
    assert!(e.iter().all(|&v| (0.0..=256.0).contains(&v)));

    // ANCHOR: mean_shift
    // Mean shift flattens each region of the noisy picture: a pixel moves to the mean of the
    // pixels near it in space (sigma 1: a 3 x 3 window) and colour (sigma 30).
    let grain = &(&randu::<f32>(dim4!(h, w, 3)) - 0.5f32) * 24.0f32;
    let grainy = round(&(&picture + &grain));
    let flattened = mean_shift(&grainy, 1.0, 30.0, 5, true);
    save_image(out("grainy.png"), &grainy);
    save_image(out("mean_shift.png"), &flattened);
    // ANCHOR_END: mean_shift
    // Inside the regions, the spread of the values around the clean colour shrinks.
    let (g, f) = (grainy.to_vec(), flattened.to_vec());
    let (mut before, mut after, mut n) = (0.0f64, 0.0f64, 0);
    for x in 0..W {
        for y in 0..H {
            if flat_around(y, x, 3) && region(y, x) != 0 {
                for c in 0..3 {
                    let clean = px[at(y, x, c)] as f64;
                    before += (g[at(y, x, c)] as f64 - clean).powi(2);
                    after += (f[at(y, x, c)] as f64 - clean).powi(2);
                    n += 1;
                }
            }
        }
    }
    let (before, after) = ((before / n as f64).sqrt(), (after / n as f64).sqrt());
    assert!(after < 0.5 * before, "mean shift: rms {after} vs {before} before");

    println!("wrote the filtered PNGs to {}", dir.display());
}
