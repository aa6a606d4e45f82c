//! The computer-vision functions against references computed here on the host in f64 with
//! plain loops (FAST, SUSAN, the difference of Gaussians, every descriptor distance,
//! template disparities), and against known geometry (corners of squares and rotated
//! squares, planted matches and patches, a known projective transform).

use crate::common;

use common::{Rng, Rng64, SeedableRng};
use emberfire::*;

// ---- helpers --------------------------------------------------------------------------------

/// A column-major image of `h x w` pixels from `f(row, column)`.
fn image(h: usize, w: usize, f: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let mut v = vec![0.0; h * w];
    for c in 0..w {
        for r in 0..h {
            v[r + h * c] = f(r, c);
        }
    }
    v
}

fn arr(v: &[f32], h: usize, w: usize) -> Array<f32> {
    Array::new(v, dim4!(h as u64, w as u64))
}

/// The features as `(x, y, score)` triples.
fn triples(f: &Features) -> Vec<(f32, f32, f32)> {
    let (x, y, s) = (f.xpos().to_vec(), f.ypos().to_vec(), f.score().to_vec());
    x.into_iter().zip(y).zip(s).map(|((x, y), s)| (x, y, s)).collect()
}

/// A square of side `side` rotated by `angle` about `(cy, cx)`, bright on dark, and its
/// four corners as `(x, y)`.
fn rotated_square(
    n: usize,
    cy: f64,
    cx: f64,
    side: f64,
    angle: f64,
) -> (Vec<f32>, Vec<(f64, f64)>) {
    let (s, c) = angle.sin_cos();
    let half = side / 2.0;
    // the fraction of each pixel the square covers, from 4 x 4 samples
    let img = image(n, n, |r, col| {
        let mut inside = 0;
        for a in 0..4 {
            for b in 0..4 {
                let dy = r as f64 - 0.375 + 0.25 * a as f64 - cy;
                let dx = col as f64 - 0.375 + 0.25 * b as f64 - cx;
                // coordinates in the square's frame
                let u = c * dx + s * dy;
                let v = -s * dx + c * dy;
                if u.abs() <= half && v.abs() <= half {
                    inside += 1;
                }
            }
        }
        inside as f32 / 16.0
    });
    let corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
        .iter()
        .map(|&(u, v)| (cx + c * u - s * v, cy + s * u + c * v))
        .collect();
    (img, corners)
}

/// Each corner has a feature within `tol` pixels along each axis.
fn assert_corners_found(f: &Features, corners: &[(f64, f64)], tol: f64, what: &str) {
    let pts = triples(f);
    for &(cx, cy) in corners {
        let best = pts
            .iter()
            .map(|&(x, y, _)| (x as f64 - cx).abs().max((y as f64 - cy).abs()))
            .fold(f64::INFINITY, f64::min);
        assert!(
            best <= tol,
            "{what}: corner ({cx:.2}, {cy:.2}) is {best:.2} from the nearest feature of {pts:?}"
        );
    }
}

// ---- FAST -----------------------------------------------------------------------------------

const CIRCLE: [(i64, i64); 16] = [
    (-3, 0),
    (-3, 1),
    (-2, 2),
    (-1, 3),
    (0, 3),
    (1, 3),
    (2, 2),
    (3, 1),
    (3, 0),
    (3, -1),
    (2, -2),
    (1, -3),
    (0, -3),
    (-1, -3),
    (-2, -2),
    (-3, -1),
];

/// FAST on the host: features in row-major order.
#[allow(clippy::too_many_arguments)]
fn fast_ref(
    img: &[f32],
    h: usize,
    w: usize,
    thr: f64,
    arc: usize,
    non_max: bool,
    ratio: f64,
    edge: usize,
) -> Vec<(f32, f32, f32)> {
    let edge = edge.max(3);
    let px = |r: i64, c: i64| img[r as usize + h * c as usize] as f64;
    let mut score = vec![0.0f64; h * w];
    let mut corner = vec![false; h * w];
    for r in edge..h.saturating_sub(edge) {
        for c in edge..w.saturating_sub(edge) {
            let p = px(r as i64, c as i64);
            let mut state = [0i32; 16];
            let (mut sb, mut sd) = (0.0, 0.0);
            for (i, &(dy, dx)) in CIRCLE.iter().enumerate() {
                let v = px(r as i64 + dy, c as i64 + dx);
                if v > p + thr {
                    state[i] = 1;
                    sb += (v - p).abs() - thr;
                } else if v < p - thr {
                    state[i] = -1;
                    sd += (p - v).abs() - thr;
                }
            }
            let found = (0..16).any(|s| {
                (0..arc).all(|k| state[(s + k) % 16] == 1)
                    || (0..arc).all(|k| state[(s + k) % 16] == -1)
            });
            if found {
                corner[r + h * c] = true;
                score[r + h * c] = sb.max(sd);
            }
        }
    }
    let limit = (ratio * (h * w) as f64) as usize;
    let mut out = Vec::new();
    for r in 0..h {
        for c in 0..w {
            if !corner[r + h * c] {
                continue;
            }
            if non_max {
                let lo = edge + 2;
                if r < lo || c < lo || r >= h - lo || c >= w - lo {
                    continue;
                }
                let v = score[r + h * c];
                let mut best = true;
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        if (dy, dx) != (0, 0)
                            && score[(r as i64 + dy) as usize + h * (c as i64 + dx) as usize] >= v
                        {
                            best = false;
                        }
                    }
                }
                if !best {
                    continue;
                }
            }
            out.push((c as f32, r as f32, score[r + h * c] as f32));
        }
    }
    out.truncate(limit);
    out
}

fn assert_same_features(got: &[(f32, f32, f32)], want: &[(f32, f32, f32)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: feature count\n got {got:?}\nwant {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.0 == w.0 && g.1 == w.1 && (g.2 - w.2).abs() <= 1e-3 * (1.0 + w.2.abs()),
            "{what}: feature {i}: got {g:?}, want {w:?}"
        );
    }
}

#[test]
fn fast_matches_host_reference_on_random_blocks() {
    let mut rng = Rng64::seed_from_u64(11);
    let (h, w) = (37, 29);
    // blocky random image so that corners exist
    let blocks: Vec<f32> = (0..100).map(|_| rng.gen_range(0.0..1.0)).collect();
    let img = image(h, w, |r, c| blocks[(r / 4) * 10 % 100 + (c / 5) % 10]);
    for &(arc, non_max, edge) in
        &[(9usize, false, 3u32), (9, true, 3), (12, true, 5), (16, false, 4)]
    {
        let f = fast(&arr(&img, h, w), 0.1, arc as u32, non_max, 1.0, edge);
        let want = fast_ref(&img, h, w, 0.1, arc, non_max, 1.0, edge as usize);
        assert!(!want.is_empty() || arc == 16);
        assert_same_features(&triples(&f), &want, &format!("fast arc {arc} non_max {non_max}"));
        assert_eq!(f.orientation().to_vec(), vec![0.0; want.len()]);
        assert_eq!(f.size().to_vec(), vec![1.0; want.len()]);
    }
}

#[test]
fn fast_feature_ratio_keeps_the_first_in_row_major_order() {
    let mut rng = Rng64::seed_from_u64(4);
    let (h, w) = (40, 40);
    let blocks: Vec<f32> = (0..100).map(|_| rng.gen_range(0.0..1.0)).collect();
    let img = image(h, w, |r, c| blocks[(r / 4) * 10 % 100 + (c / 5) % 10]);
    let all = fast_ref(&img, h, w, 0.3, 9, false, 1.0, 3);
    assert!(all.len() > 5);
    let ratio = 5.0 / (h * w) as f32 + 1e-6;
    let f = fast(&arr(&img, h, w), 0.3, 9, false, ratio, 3);
    assert_same_features(&triples(&f), &all[..5], "fast limited");
}

#[test]
fn fast_finds_square_corners_and_integer_inputs() {
    let (img, _) = rotated_square(32, 15.5, 15.5, 12.0, 0.0);
    let f = fast(&arr(&img, 32, 32), 0.5, 9, true, 0.05, 3);
    assert_eq!(f.num_features(), 4);
    assert_corners_found(
        &f,
        &[(9.5, 9.5), (21.5, 9.5), (21.5, 21.5), (9.5, 21.5)],
        1.0,
        "fast square",
    );
    for &(n, side, angle) in &[(64usize, 26.0, 0.5), (40, 14.0, 0.3)] {
        let c = n as f64 / 2.0;
        let (img, corners) = rotated_square(n, c - 0.3, c + 0.2, side, angle);
        let f = fast(&arr(&img, n, n), 0.2, 9, true, 1.0, 3);
        assert_eq!(f.num_features(), 4);
        // FAST marks the pixel whose circle sees the arc: up to a pixel inside the corner
        assert_corners_found(&f, &corners, 1.6, &format!("fast square rotated by {angle}"));
    }
    let bytes: Vec<u8> = img.iter().map(|&v| (v * 200.0) as u8).collect();
    let g = fast(&Array::new(&bytes, dim4!(32, 32)), 50.0, 9, true, 0.05, 3);
    assert_eq!(
        triples(&g).iter().map(|t| (t.0, t.1)).collect::<Vec<_>>(),
        triples(&f).iter().map(|t| (t.0, t.1)).collect::<Vec<_>>()
    );
}

#[test]
fn fast_on_flat_and_tiny_images_finds_nothing() {
    let flat = Array::new(&[0.5f32; 400], dim4!(20, 20));
    assert_eq!(fast(&flat, 0.1, 9, true, 1.0, 3).num_features(), 0);
    let one = Array::new(&[1.0f32], dim4!(1, 1));
    let f = fast(&one, 0.1, 9, true, 1.0, 3);
    assert_eq!(f.num_features(), 0);
    assert_eq!(f.xpos().elements(), 0);
}

#[test]
#[should_panic(expected = "fast: `arc_len` must be 9 to 16")]
fn fast_rejects_short_arcs() {
    fast(&Array::new(&[0.0f32; 100], dim4!(10, 10)), 0.1, 8, true, 1.0, 3);
}

#[test]
#[should_panic(expected = "fast: `input` must be one 2D image")]
fn fast_rejects_batches() {
    fast(&Array::new(&[0.0f32; 200], dim4!(10, 10, 2)), 0.1, 9, true, 1.0, 3);
}

// ---- SUSAN ----------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
fn susan_ref(
    img: &[f32],
    h: usize,
    w: usize,
    radius: i64,
    t: f64,
    g: f64,
    ratio: f64,
    edge: usize,
) -> Vec<(f32, f32, f32)> {
    let mut resp = vec![0.0f64; h * w];
    for c in edge..w - edge {
        for r in edge..h - edge {
            let m0 = img[r + h * c] as f64;
            let mut n = 0.0;
            for dx in -radius..=radius {
                for dy in -radius..=radius {
                    if dx * dx + dy * dy < radius * radius {
                        let m = img[(r as i64 + dy) as usize + h * (c as i64 + dx) as usize] as f64;
                        n += (-((m - m0) / t).powi(6)).exp();
                    }
                }
            }
            resp[r + h * c] = if n < g { g - n } else { 0.0 };
        }
    }
    let mut out = Vec::new();
    let lo = edge + 1;
    for c in lo..w - lo {
        for r in lo..h - lo {
            let v = resp[r + h * c];
            let mut best = true;
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if (dy, dx) != (0, 0)
                        && resp[(r as i64 + dy) as usize + h * (c as i64 + dx) as usize] >= v
                    {
                        best = false;
                    }
                }
            }
            if best {
                out.push((c as f32, r as f32, v as f32));
            }
        }
    }
    out.truncate((ratio * (h * w) as f64) as usize);
    out
}

#[test]
fn susan_matches_host_reference() {
    let (img, _) = rotated_square(40, 19.3, 20.1, 14.0, 0.4);
    for &(radius, edge) in &[(3i64, 3usize), (2, 4)] {
        let f = susan(&arr(&img, 40, 40), radius as u32, 0.5, 10.0, 1.0, edge as u32);
        let want = susan_ref(&img, 40, 40, radius, 0.5, 10.0, 1.0, edge);
        assert!(!want.is_empty());
        assert_same_features(&triples(&f), &want, &format!("susan radius {radius}"));
    }
}

#[test]
fn susan_finds_the_corners_of_a_square() {
    let (img, corners) = rotated_square(48, 23.2, 23.7, 20.0, 0.0);
    let f = susan(&arr(&img, 48, 48), 3, 0.3, 14.5, 1.0, 3);
    assert_eq!(f.num_features(), 4, "{:?}", triples(&f));
    assert_corners_found(&f, &corners, 1.0, "susan square");
}

#[test]
fn susan_on_a_flat_image_finds_nothing() {
    let flat = Array::new(&[3u8; 400], dim4!(20, 20));
    assert_eq!(susan(&flat, 3, 10.0, 10.0, 0.05, 3).num_features(), 0);
}

#[test]
#[should_panic(expected = "susan: `edge` (2) must be at least `radius` (3)")]
fn susan_rejects_small_edges() {
    susan(&Array::new(&[0.0f32; 400], dim4!(20, 20)), 3, 0.1, 10.0, 0.05, 2);
}

// ---- Harris ---------------------------------------------------------------------------------

#[test]
fn harris_finds_corners_of_squares_and_rotated_squares() {
    let (img, corners) = rotated_square(48, 23.2, 23.7, 20.0, 0.0);
    let f = harris(&arr(&img, 48, 48), 4, 0.0, 1.0, 0, 0.04);
    assert_eq!(f.num_features(), 4);
    assert_corners_found(&f, &corners, 1.0, "harris square");
    // fewer than found: the strongest, by decreasing response
    let all = triples(&f);
    let two = triples(&harris(&arr(&img, 48, 48), 2, 0.0, 1.0, 0, 0.04));
    let mut by_score = all.clone();
    by_score.sort_by(|a, b| b.2.partial_cmp(&a.2).unwrap());
    assert_eq!(two, by_score[..2].to_vec());

    for &(n, side, angle) in &[(64usize, 26.0, 0.5), (40, 14.0, 0.3)] {
        let c = n as f64 / 2.0;
        let (img, corners) = rotated_square(n, c - 0.3, c + 0.2, side, angle);
        let f = harris(&arr(&img, n, n), 4, 0.0, 0.5, 0, 0.04);
        assert_eq!(f.num_features(), 4);
        assert_corners_found(&f, &corners, 1.1, &format!("harris square rotated by {angle}"));
        // f64 gives the same corners
        let img64: Vec<f64> = img.iter().map(|&v| v as f64).collect();
        let g = harris(&Array::new(&img64, dim4!(n as u64, n as u64)), 4, 0.0, 0.5, 0, 0.04);
        assert_eq!(g.xpos().to_vec(), f.xpos().to_vec());
        assert_eq!(g.ypos().to_vec(), f.ypos().to_vec());
    }
}

#[test]
fn harris_with_min_response_keeps_column_major_order() {
    let (img, corners) = rotated_square(40, 19.7, 20.2, 14.0, 0.3);
    let f = harris(&arr(&img, 40, 40), 0, 1e-3, 0.5, 0, 0.04);
    let t = triples(&f);
    assert!(t.len() >= 4, "{t:?}");
    assert_corners_found(&f, &corners, 1.1, "harris min_response");
    let keys: Vec<(f32, f32)> = t.iter().map(|p| (p.0, p.1)).collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(keys, sorted, "column-major order");
    assert!(t.iter().all(|p| p.2 >= 1e-3));
}

#[test]
fn harris_on_a_flat_image_finds_nothing() {
    let flat = Array::new(&[1.0f32; 900], dim4!(30, 30));
    assert_eq!(harris(&flat, 10, 0.0, 1.0, 0, 0.04).num_features(), 0);
}

#[test]
#[should_panic(expected = "harris: `k_thr` must be at least 0.01")]
fn harris_rejects_small_k() {
    harris(&Array::new(&[0.0f32; 900], dim4!(30, 30)), 10, 0.0, 1.0, 0, 0.001);
}

#[test]
#[should_panic(expected = "harris: `input` of dims")]
fn harris_rejects_one_pixel() {
    harris(&Array::new(&[0.0f32], dim4!(1, 1)), 10, 0.0, 1.0, 0, 0.04);
}

// ---- DoG ------------------------------------------------------------------------------------

fn blur_ref(img: &[f64], h: usize, w: usize, r: i64) -> Vec<f64> {
    let n = 2 * r + 1;
    let s = 0.25 * n as f64;
    let mut k = vec![0.0; (n * n) as usize];
    for j in 0..n {
        for i in 0..n {
            let (a, b) = ((i - r) as f64 / s, (j - r) as f64 / s);
            k[(i + n * j) as usize] = (-0.5 * (a * a + b * b)).exp();
        }
    }
    let total: f64 = k.iter().sum();
    let mut out = vec![0.0; h * w];
    for c in 0..w as i64 {
        for rr in 0..h as i64 {
            let mut acc = 0.0;
            for j in -r..=r {
                for i in -r..=r {
                    let (y, x) = (rr + i, c + j);
                    if y >= 0 && x >= 0 && y < h as i64 && x < w as i64 {
                        acc += img[y as usize + h * x as usize] * k[(i + r + n * (j + r)) as usize]
                            / total;
                    }
                }
            }
            out[rr as usize + h * c as usize] = acc;
        }
    }
    out
}

#[test]
fn dog_matches_host_reference() {
    let mut rng = Rng64::seed_from_u64(3);
    let (h, w) = (13, 17);
    let img: Vec<f64> = (0..h * w).map(|_| rng.gen_range(0.0..1.0)).collect();
    let want: Vec<f64> =
        blur_ref(&img, h, w, 1).iter().zip(blur_ref(&img, h, w, 3)).map(|(a, b)| a - b).collect();
    let got = dog(&Array::new(&img, dim4!(h as u64, w as u64)), 1, 3).to_vec();
    for (i, (g, e)) in got.iter().zip(&want).enumerate() {
        assert!((g - e).abs() < 1e-5, "dog f64 element {i}: {g} vs {e}");
    }
    let bytes: Vec<u8> = img.iter().map(|v| (v * 255.0) as u8).collect();
    let b64: Vec<f64> = bytes.iter().map(|&v| v as f64).collect();
    let want: Vec<f64> =
        blur_ref(&b64, h, w, 2).iter().zip(blur_ref(&b64, h, w, 4)).map(|(a, b)| a - b).collect();
    let got: Vec<f32> = dog(&Array::new(&bytes, dim4!(h as u64, w as u64)), 2, 4).to_vec();
    for (i, (g, e)) in got.iter().zip(&want).enumerate() {
        assert!((*g as f64 - e).abs() < 1e-2, "dog u8 element {i}: {g} vs {e}");
    }
}

#[test]
#[should_panic(expected = "dog: `radius2` (1) must be larger than `radius1` (2)")]
fn dog_rejects_swapped_radii() {
    dog(&Array::new(&[0.0f32; 9], dim4!(3, 3)), 2, 1);
}

// ---- matching -------------------------------------------------------------------------------

/// The distance (or correlation) of `q` and `t` by `mt`, in f64.
fn dist_ref(q: &[f64], t: &[f64], mt: MatchType) -> f64 {
    let n = q.len() as f64;
    let (mq, mtt) = (q.iter().sum::<f64>() / n, t.iter().sum::<f64>() / n);
    let pairs = q.iter().zip(t);
    match mt {
        MatchType::SAD => pairs.map(|(a, b)| (b - a).abs()).sum(),
        MatchType::SSD => pairs.map(|(a, b)| (b - a).powi(2)).sum(),
        MatchType::ZSAD => pairs.map(|(a, b)| ((b - mtt) - (a - mq)).abs()).sum(),
        MatchType::ZSSD => pairs.map(|(a, b)| ((b - mtt) - (a - mq)).powi(2)).sum(),
        MatchType::LSAD => pairs.map(|(a, b)| (b - mtt / mq * a).abs()).sum(),
        MatchType::LSSD => pairs.map(|(a, b)| (b - mtt / mq * a).powi(2)).sum(),
        MatchType::NCC => {
            let num: f64 = pairs.map(|(a, b)| a * b).sum();
            num / (q.iter().map(|a| a * a).sum::<f64>() * t.iter().map(|b| b * b).sum::<f64>())
                .sqrt()
        }
        MatchType::ZNCC => {
            let num: f64 = pairs.map(|(a, b)| (a - mq) * (b - mtt)).sum();
            let qa: f64 = q.iter().map(|a| (a - mq).powi(2)).sum();
            let tb: f64 = t.iter().map(|b| (b - mtt).powi(2)).sum();
            num / (qa * tb).sqrt()
        }
        MatchType::SHD => pairs.map(|(a, b)| ((*a as u64) ^ (*b as u64)).count_ones() as f64).sum(),
    }
}

/// `nq` queries that are noisy copies of a permutation of `nt` train descriptors of `d`
/// values (column per descriptor), and the permutation.
fn planted(rng: &mut Rng64, d: usize, nt: usize, nq: usize) -> (Vec<f64>, Vec<f64>, Vec<usize>) {
    let train: Vec<f64> = (0..d * nt).map(|_| rng.gen_range(1.0..10.0)).collect();
    let perm: Vec<usize> = (0..nq).map(|i| (i * 7 + 3) % nt).collect();
    let mut query = Vec::with_capacity(d * nq);
    for &p in &perm {
        for k in 0..d {
            query.push(train[k + d * p] + rng.gen_range(-0.05..0.05));
        }
    }
    (train, query, perm)
}

const ALL: [MatchType; 8] = [
    MatchType::SAD,
    MatchType::ZSAD,
    MatchType::LSAD,
    MatchType::SSD,
    MatchType::ZSSD,
    MatchType::LSSD,
    MatchType::NCC,
    MatchType::ZNCC,
];

#[test]
fn nearest_neighbour_recovers_a_permutation_for_every_float_match_type() {
    let mut rng = Rng64::seed_from_u64(5);
    let (d, nt, nq) = (16, 23, 9);
    let (train, query, perm) = planted(&mut rng, d, nt, nq);
    let t64 = Array::new(&train, dim4!(d as u64, nt as u64));
    let q64 = Array::new(&query, dim4!(d as u64, nq as u64));
    let t32: Array<f32> = t64.cast();
    let q32: Array<f32> = q64.cast();
    for mt in ALL {
        let (idx, dist) = nearest_neighbour(&q64, &t64, 0, 1, mt);
        assert_eq!(idx.dims(), dim4!(1, nq as u64));
        let idx = idx.to_vec();
        let dist = dist.to_vec();
        for j in 0..nq {
            assert_eq!(idx[j] as usize, perm[j], "{mt:?} query {j}");
            let want =
                dist_ref(&query[d * j..d * (j + 1)], &train[d * perm[j]..d * (perm[j] + 1)], mt);
            assert!(
                (dist[j] - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "{mt:?} f64 distance {j}: {} vs {want}",
                dist[j]
            );
        }
        // f32, descriptors along dimension 1
        let (idx, dist) =
            nearest_neighbour(&transpose(&q32, false), &transpose(&t32, false), 1, 1, mt);
        assert_eq!(
            idx.to_vec().iter().map(|&i| i as usize).collect::<Vec<_>>(),
            perm,
            "{mt:?} f32"
        );
        let dist = dist.to_vec();
        for j in 0..nq {
            let want =
                dist_ref(&query[d * j..d * (j + 1)], &train[d * perm[j]..d * (perm[j] + 1)], mt);
            assert!(
                (dist[j] as f64 - want).abs() <= 1e-3 * (1.0 + want.abs()),
                "{mt:?} f32 distance {j}"
            );
        }
    }
}

#[test]
fn nearest_neighbour_k_best_are_sorted_and_match_the_host() {
    let mut rng = Rng64::seed_from_u64(8);
    let (d, nt, nq, k) = (5, 31, 7, 4);
    let train: Vec<f64> = (0..d * nt).map(|_| rng.gen_range(0.0..1.0)).collect();
    let query: Vec<f64> = (0..d * nq).map(|_| rng.gen_range(0.0..1.0)).collect();
    for mt in [MatchType::SAD, MatchType::SSD, MatchType::ZNCC] {
        let (idx, dist) = nearest_neighbour(
            &Array::new(&query, dim4!(d as u64, nq as u64)),
            &Array::new(&train, dim4!(d as u64, nt as u64)),
            0,
            k as u32,
            mt,
        );
        assert_eq!(idx.dims(), dim4!(k as u64, nq as u64));
        let (idx, dist) = (idx.to_vec(), dist.to_vec());
        for j in 0..nq {
            let mut all: Vec<(f64, usize)> = (0..nt)
                .map(|i| (dist_ref(&query[d * j..d * (j + 1)], &train[d * i..d * (i + 1)], mt), i))
                .collect();
            if mt == MatchType::ZNCC {
                all.sort_by(|a, b| b.0.total_cmp(&a.0));
            } else {
                all.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            for r in 0..k {
                assert_eq!(idx[r + k * j] as usize, all[r].1, "{mt:?} query {j} rank {r}");
                assert!((dist[r + k * j] - all[r].0).abs() < 1e-9, "{mt:?} distance");
            }
        }
    }
}

#[test]
fn nearest_neighbour_integer_sad_and_ssd_are_exact() {
    let mut rng = Rng64::seed_from_u64(9);
    let (d, nt, nq) = (8, 12, 5);
    let train: Vec<u8> = (0..d * nt).map(|_| rng.gen_range(0..=255u8)).collect();
    let query: Vec<u8> = (0..d * nq).map(|_| rng.gen_range(0..=255u8)).collect();
    let f = |v: &[u8]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    for mt in [MatchType::SAD, MatchType::SSD] {
        let (idx, dist) = nearest_neighbour(
            &Array::new(&query, dim4!(d as u64, nq as u64)),
            &Array::new(&train, dim4!(d as u64, nt as u64)),
            0,
            1,
            mt,
        );
        let (idx, dist): (Vec<u32>, Vec<u32>) = (idx.to_vec(), dist.to_vec());
        for j in 0..nq {
            let (best, bi) = (0..nt)
                .map(|i| {
                    (
                        dist_ref(
                            &f(&query[d * j..d * (j + 1)]),
                            &f(&train[d * i..d * (i + 1)]),
                            mt,
                        ),
                        i,
                    )
                })
                .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a });
            assert_eq!((dist[j] as f64, idx[j] as usize), (best, bi), "{mt:?} query {j}");
        }
    }
}

#[test]
fn hamming_matcher_recovers_a_permutation_of_u32_and_u8_descriptors() {
    let mut rng = Rng64::seed_from_u64(12);
    let (d, nt, nq) = (8, 40, 15);
    let train: Vec<u32> = (0..d * nt).map(|_| rng.gen()).collect();
    let perm: Vec<usize> = (0..nq).map(|i| (i * 11 + 5) % nt).collect();
    let mut query = Vec::new();
    for &p in &perm {
        for k in 0..d {
            // flip one bit in each word
            query.push(train[k + d * p] ^ (1 << (k * 3)));
        }
    }
    let (idx, dist) = hamming_matcher(
        &Array::new(&query, dim4!(d as u64, nq as u64)),
        &Array::new(&train, dim4!(d as u64, nt as u64)),
        0,
        1,
    );
    assert_eq!(idx.to_vec().iter().map(|&i| i as usize).collect::<Vec<_>>(), perm);
    assert_eq!(dist.to_vec(), vec![d as u32; nq]);
    // bytes, descriptors along dimension 1, two best
    let tb: Vec<u8> = (0..nt * 4).map(|_| rng.gen()).collect();
    let qb: Vec<u8> = (0..nq * 4).map(|_| rng.gen()).collect();
    let (idx, dist) = hamming_matcher(
        &Array::new(&qb, dim4!(nq as u64, 4)),
        &Array::new(&tb, dim4!(nt as u64, 4)),
        1,
        2,
    );
    let (idx, dist) = (idx.to_vec(), dist.to_vec());
    for j in 0..nq {
        let mut all: Vec<(u32, usize)> = (0..nt)
            .map(|i| ((0..4).map(|k| (qb[j + nq * k] ^ tb[i + nt * k]).count_ones()).sum(), i))
            .collect();
        all.sort();
        assert_eq!(dist[2 * j], all[0].0);
        assert_eq!(dist[2 * j + 1], all[1].0);
        let i = idx[2 * j] as usize;
        let di: u32 = (0..4).map(|k| (qb[j + nq * k] ^ tb[i + nt * k]).count_ones()).sum();
        assert_eq!(di, all[0].0);
    }
}

#[test]
fn nearest_neighbour_large_ssd_uses_the_product_and_agrees() {
    let mut rng = Rng64::seed_from_u64(13);
    let (d, nt, nq) = (64, 300, 250);
    let (train, query, perm) = planted(&mut rng, d, nt, nq);
    let t: Array<f32> = Array::new(&train, dim4!(d as u64, nt as u64)).cast();
    let q: Array<f32> = Array::new(&query, dim4!(d as u64, nq as u64)).cast();
    let (idx, dist) = nearest_neighbour(&q, &t, 0, 1, MatchType::SSD);
    assert_eq!(idx.to_vec().iter().map(|&i| i as usize).collect::<Vec<_>>(), perm);
    for (j, &g) in dist.to_vec().iter().enumerate() {
        let want = dist_ref(
            &query[d * j..d * (j + 1)],
            &train[d * perm[j]..d * (perm[j] + 1)],
            MatchType::SSD,
        );
        assert!((g as f64 - want).abs() < 2e-2, "query {j}: {g} vs {want}");
    }
}

/// Random (unplanted) f32 descriptors of `d` values, with sizes that fill no tile evenly, as
/// the fused SSD search on CUDA sees them: the chosen point's distance is the smallest (up to
/// f32 rounding), the distance returned is that point's, and of equal points the first wins.
#[test]
fn nearest_neighbour_ssd_of_random_descriptors_finds_the_minimum() {
    let mut rng = Rng64::seed_from_u64(29);
    for (d, nt, nq) in [(20, 1031, 257), (64, 129, 130), (4, 7, 1), (36, 500, 3)] {
        let mut train: Vec<f64> = (0..d * nt).map(|_| rng.gen_range(0.0..1.0)).collect();
        // a duplicate of point 3 later on: ties go to the lower index
        let dup = nt - 1;
        for k in 0..d {
            train[k + d * dup] = train[k + d * 3.min(dup)];
        }
        let query: Vec<f64> = (0..d * nq).map(|_| rng.gen_range(0.0..1.0)).collect();
        let t: Array<f32> = Array::new(&train, dim4!(d as u64, nt as u64)).cast();
        let q: Array<f32> = Array::new(&query, dim4!(d as u64, nq as u64)).cast();
        // the same search with descriptors along dimension 1
        let (tq, tt) = (transpose(&q, false), transpose(&t, false));
        for (idx, dist) in [
            nearest_neighbour(&q, &t, 0, 1, MatchType::SSD),
            nearest_neighbour(&tq, &tt, 1, 1, MatchType::SSD),
        ] {
            assert_eq!(idx.dims(), dim4!(1, nq as u64));
            let (idx, dist) = (idx.to_vec(), dist.to_vec());
            for j in 0..nq {
                let qj = &query[d * j..d * (j + 1)];
                let all: Vec<f64> = (0..nt)
                    .map(|p| dist_ref(qj, &train[d * p..d * (p + 1)], MatchType::SSD))
                    .collect();
                let best = all.iter().cloned().fold(f64::INFINITY, f64::min);
                let i = idx[j] as usize;
                assert!(i < nt && i != dup, "query {j} of {d}x{nq} vs {nt}: index {i}");
                assert!(all[i] - best < 1e-4 * (1.0 + best), "query {j}: {} vs {best}", all[i]);
                assert!((dist[j] as f64 - all[i]).abs() < 1e-4 * (1.0 + all[i]), "query {j}");
            }
        }
    }
}

#[test]
#[should_panic(expected = "nearest_neighbour: `query` (dims")]
fn nearest_neighbour_rejects_different_lengths() {
    nearest_neighbour(
        &Array::new(&[0.0f32; 6], dim4!(3, 2)),
        &Array::new(&[0.0f32; 8], dim4!(4, 2)),
        0,
        1,
        MatchType::SSD,
    );
}

#[test]
#[should_panic(expected = "nearest_neighbour: `dist_type` SHD needs integer descriptors")]
fn nearest_neighbour_rejects_hamming_of_floats() {
    let a = Array::new(&[0.0f32; 6], dim4!(3, 2));
    nearest_neighbour(&a, &a, 0, 1, MatchType::SHD);
}

#[test]
#[should_panic(expected = "nearest_neighbour: `n_dist` must be 1 to 256")]
fn nearest_neighbour_rejects_too_many_neighbours() {
    let a = Array::new(&[0.0f32; 6], dim4!(3, 2));
    nearest_neighbour(&a, &a, 0, 3, MatchType::SAD);
}

// ---- template matching ----------------------------------------------------------------------

fn template_ref(
    s: &[f64],
    h: usize,
    w: usize,
    t: &[f64],
    th: usize,
    tw: usize,
    mt: MatchType,
) -> Vec<f64> {
    let mut out = vec![0.0; h * w];
    for c in 0..w {
        for r in 0..h {
            let mut win = Vec::with_capacity(th * tw);
            for j in 0..tw {
                for i in 0..th {
                    let (y, x) = (r + i, c + j);
                    win.push(if y < h && x < w { s[y + h * x] } else { 0.0 });
                }
            }
            // the window plays the train role, the template the query role
            out[r + h * c] = dist_ref(t, &win, mt);
        }
    }
    out
}

#[test]
fn match_template_finds_a_planted_patch_and_matches_the_host() {
    let mut rng = Rng64::seed_from_u64(21);
    let (h, w, th, tw) = (19, 23, 4, 5);
    let mut s: Vec<f64> = (0..h * w).map(|_| rng.gen_range(1.0..2.0)).collect();
    let tpl: Vec<f64> = (0..th * tw).map(|_| rng.gen_range(3.0..9.0)).collect();
    let (pr, pc) = (7, 11);
    for j in 0..tw {
        for i in 0..th {
            s[pr + i + h * (pc + j)] = tpl[i + th * j];
        }
    }
    let sa = Array::new(&s, dim4!(h as u64, w as u64));
    let ta = Array::new(&tpl, dim4!(th as u64, tw as u64));
    for mt in [
        MatchType::SAD,
        MatchType::ZSAD,
        MatchType::LSAD,
        MatchType::SSD,
        MatchType::ZSSD,
        MatchType::LSSD,
    ] {
        let got = match_template(&sa, &ta, mt);
        assert_eq!(got.dims(), sa.dims());
        let (_, _, at) = imin_all(&got);
        assert_eq!(at as usize, pr + h * pc, "{mt:?}");
        let want = template_ref(&s, h, w, &tpl, th, tw, mt);
        for (i, (g, e)) in got.to_vec().iter().zip(&want).enumerate() {
            assert!((g - e).abs() <= 1e-9 * (1.0 + e.abs()), "{mt:?} element {i}: {g} vs {e}");
        }
        // u8 input gives f32
        let sb: Vec<u8> = s.iter().map(|&v| (v * 20.0) as u8).collect();
        let tb: Vec<u8> = tpl.iter().map(|&v| (v * 20.0) as u8).collect();
        let g8: Array<f32> =
            match_template(&Array::new(&sb, sa.dims()), &Array::new(&tb, ta.dims()), mt);
        let (_, _, at) = imin_all(&g8);
        assert_eq!(at as usize, pr + h * pc, "{mt:?} u8");
    }
}

#[test]
#[should_panic(expected = "match_template: `mtype` NCC is not supported")]
fn match_template_rejects_ncc() {
    let a = Array::new(&[0.0f32; 9], dim4!(3, 3));
    match_template(&a, &a, MatchType::NCC);
}

#[test]
#[should_panic(expected = "match_template: `template_img` (dims")]
fn match_template_rejects_large_templates() {
    let a = Array::new(&[0.0f32; 9], dim4!(3, 3));
    match_template(&a, &Array::new(&[0.0f32; 16], dim4!(4, 4)), MatchType::SAD);
}

// ---- homography -----------------------------------------------------------------------------

fn project(h: &[f64; 9], x: f64, y: f64) -> (f64, f64) {
    let w = h[6] * x + h[7] * y + h[8];
    ((h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w)
}

fn check_homography<T: HasAfEnum + RealFloating + Into<f64>>(htype: HomographyType) {
    let mut rng = Rng64::seed_from_u64(31);
    let truth = [1.1, 0.2, 15.0, -0.1, 0.9, 30.0, 2e-4, -1e-4, 1.0];
    let n = 120;
    let (mut xs, mut ys, mut xd, mut yd) = (vec![], vec![], vec![], vec![]);
    let mut outlier = vec![false; n];
    for (i, o) in outlier.iter_mut().enumerate() {
        let (x, y) = (rng.gen_range(0.0..400.0), rng.gen_range(0.0..300.0));
        let (mut u, mut v) = project(&truth, x, y);
        if i % 4 == 1 {
            // a quarter are wrong matches
            u = rng.gen_range(0.0..500.0);
            v = rng.gen_range(0.0..400.0);
            *o = true;
        } else {
            u += rng.gen_range(-0.3..0.3);
            v += rng.gen_range(-0.3..0.3);
        }
        xs.push(x as f32);
        ys.push(y as f32);
        xd.push(u as f32);
        yd.push(v as f32);
    }
    let a = |v: &[f32]| Array::new(v, dim4!(n as u64));
    let (h, inliers) = homography::<T>(&a(&xs), &a(&ys), &a(&xd), &a(&yd), htype, 2.0, 2000);
    let hv: Vec<f64> = h.to_vec().into_iter().map(Into::into).collect();
    let hm: [f64; 9] = hv.try_into().unwrap();
    let good = outlier.iter().filter(|o| !**o).count() as i32;
    assert!(
        inliers >= good - 2 && inliers <= good + 3,
        "{htype:?}: {inliers} inliers, {good} true"
    );
    for (x, y) in [(0.0, 0.0), (400.0, 0.0), (400.0, 300.0), (0.0, 300.0), (200.0, 150.0)] {
        let (p, q) = project(&hm, x, y);
        let (u, v) = project(&truth, x, y);
        assert!(
            ((p - u).powi(2) + (q - v).powi(2)).sqrt() < 1.0,
            "{htype:?} at ({x}, {y}): ({p}, {q}) vs ({u}, {v})"
        );
    }
}

#[test]
fn homography_ransac_recovers_a_projective_transform() {
    check_homography::<f32>(HomographyType::RANSAC);
    check_homography::<f64>(HomographyType::RANSAC);
}

#[test]
fn homography_lmeds_recovers_a_projective_transform() {
    check_homography::<f32>(HomographyType::LMEDS);
    check_homography::<f64>(HomographyType::LMEDS);
}

#[test]
#[should_panic(expected = "homography: at least 4 points are needed (got 3)")]
fn homography_needs_four_points() {
    let a = Array::new(&[0.0f32, 1.0, 2.0], dim4!(3));
    homography::<f32>(&a, &a, &a, &a, HomographyType::RANSAC, 1.0, 10);
}

// ---- Features -------------------------------------------------------------------------------

#[test]
fn features_new_and_clone_share_columns() {
    let f = Features::new(4);
    let g = f.clone();
    assert_eq!(g.num_features(), 4);
    for col in [g.xpos(), g.ypos(), g.score(), g.orientation(), g.size()] {
        assert_eq!(col.dims(), dim4!(4));
    }
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Features>();
}

// ---- ORB ------------------------------------------------------------------------------------

/// A random image of flat blocks, lightly smoothed, `h x w`.
fn blocks(h: usize, w: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng64::seed_from_u64(seed);
    let v: Vec<f32> = (0..400).map(|_| rng.gen_range(0.0..1.0)).collect();
    image(h, w, |r, c| v[(r / 7) * 20 % 400 + (c / 6) % 20])
}

#[test]
fn orb_orientation_is_the_intensity_centroid_and_shapes_follow_arrayfire() {
    let (h, w) = (90, 100);
    let img = blocks(h, w, 41);
    let (f, desc) = orb(&arr(&img, h, w), 0.15, 60, 1.5, 3, false);
    let n = f.num_features() as usize;
    assert!(n > 10 && n <= 60, "{n} features");
    assert_eq!(desc.dims(), dim4!(8, n as u64));
    let (x, y, o, size) =
        (f.xpos().to_vec(), f.ypos().to_vec(), f.orientation().to_vec(), f.size().to_vec());
    let mut level0 = 0;
    for i in 0..n {
        assert!(size[i] == 31.0 || size[i] == 46.5 || size[i] == 69.75, "size {}", size[i]);
        if size[i] != 31.0 {
            continue;
        }
        level0 += 1;
        let (cx, cy) = (x[i] as i64, y[i] as i64);
        let (mut m01, mut m10) = (0.0f64, 0.0f64);
        for dx in -15i64..=15 {
            for dy in -15i64..=15 {
                if dx * dx + dy * dy <= 225 {
                    let p = img[(cy + dy) as usize + h * (cx + dx) as usize] as f64;
                    m01 += dy as f64 * p;
                    m10 += dx as f64 * p;
                }
            }
        }
        let want = m01.atan2(m10);
        assert!((o[i] as f64 - want).abs() < 1e-3, "feature {i}: orientation {} vs {want}", o[i]);
        assert!(cx >= 22 && cy >= 22 && cx < w as i64 - 22 && cy < h as i64 - 22);
    }
    assert!(level0 > 0);
    // scores decrease within the first level
    let s = f.score().to_vec();
    assert!(s[..level0].windows(2).all(|p| p[0] >= p[1]));
}

#[test]
fn orb_descriptors_match_across_a_quarter_turn() {
    let n = 96;
    let img = blocks(n, n, 43);
    // rotated a quarter turn: (x, y) goes to (y, n - 1 - x)
    let rot = image(n, n, |r, c| img[c + n * (n - 1 - r)]);
    let (fa, da) = orb(&arr(&img, n, n), 0.15, 80, 1.5, 1, true);
    let (fb, db) = orb(&arr(&rot, n, n), 0.15, 80, 1.5, 1, true);
    let (xa, ya, xb, yb) =
        (fa.xpos().to_vec(), fa.ypos().to_vec(), fb.xpos().to_vec(), fb.ypos().to_vec());
    let (da, db) = (da.to_vec(), db.to_vec());
    let mut dists = Vec::new();
    for i in 0..xa.len() {
        let (tx, ty) = (ya[i], (n - 1) as f32 - xa[i]);
        if let Some(j) = (0..xb.len()).find(|&j| xb[j] == tx && yb[j] == ty) {
            let d: u32 = (0..8).map(|k| (da[k + 8 * i] ^ db[k + 8 * j]).count_ones()).sum();
            dists.push(d);
        }
    }
    assert!(dists.len() * 2 >= xa.len(), "{} of {} features found again", dists.len(), xa.len());
    dists.sort();
    let median = dists[dists.len() / 2];
    assert!(median <= 40, "median Hamming distance {median} of {dists:?}");
    // and the matcher pairs them
    let (idx, _) = hamming_matcher(
        &Array::new(&da, dim4!(8, xa.len() as u64)),
        &Array::new(&db, dim4!(8, xb.len() as u64)),
        0,
        1,
    );
    let idx = idx.to_vec();
    let right = (0..xa.len())
        .filter(|&i| {
            let j = idx[i] as usize;
            xb[j] == ya[i] && yb[j] == (n - 1) as f32 - xa[i]
        })
        .count();
    assert!(right * 2 >= dists.len(), "{right} of {} matched", dists.len());
}

#[test]
fn orb_on_a_flat_image_finds_nothing() {
    let (f, d) = orb(&Array::new(&[0.5f32; 4096], dim4!(64, 64)), 0.1, 50, 1.5, 2, true);
    assert_eq!(f.num_features(), 0);
    assert_eq!(d.elements(), 0);
}

#[test]
#[should_panic(expected = "orb: `scl_fctr` must be above 1")]
fn orb_rejects_shrinking_scales() {
    orb(&Array::new(&[0.5f32; 4096], dim4!(64, 64)), 0.1, 50, 1.0, 2, true);
}

#[test]
fn match_template_treats_dimension_2_as_a_batch() {
    let mut rng = Rng64::seed_from_u64(22);
    let (h, w) = (12, 14);
    let tpl: Vec<f32> = (0..9).map(|_| rng.gen_range(5.0..9.0)).collect();
    let mut s: Vec<f32> = (0..2 * h * w).map(|_| rng.gen_range(0.0..1.0)).collect();
    let spots = [(2usize, 9usize), (8, 1)];
    for (b, &(r0, c0)) in spots.iter().enumerate() {
        for j in 0..3 {
            for i in 0..3 {
                s[b * h * w + r0 + i + h * (c0 + j)] = tpl[i + 3 * j];
            }
        }
    }
    let d = match_template(
        &Array::new(&s, dim4!(h as u64, w as u64, 2)),
        &Array::new(&tpl, dim4!(3, 3)),
        MatchType::SSD,
    );
    assert_eq!(d.dims(), dim4!(h as u64, w as u64, 2));
    let v = d.to_vec();
    for (b, &(r0, c0)) in spots.iter().enumerate() {
        let plane = &v[b * h * w..(b + 1) * h * w];
        let best = (0..h * w).min_by(|&a, &c| plane[a].total_cmp(&plane[c])).unwrap();
        assert_eq!(best, r0 + h * c0, "image {b}");
    }
}

#[test]
fn nearest_neighbour_of_no_queries_is_empty() {
    let train = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
    let none = Array::<f32>::new_empty(dim4!(2, 0));
    let (idx, dist) = nearest_neighbour(&none, &train, 0, 1, MatchType::SAD);
    assert_eq!(idx.elements(), 0);
    assert_eq!(dist.elements(), 0);
}
