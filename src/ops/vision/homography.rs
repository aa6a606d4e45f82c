//! Homography estimation by random sampling: RANSAC and least median of squares.
//!
//! The work is a few thousand fits of an 8 x 8 linear system and scores of a few hundred
//! points: small and sequential, so it runs on the host in f64, with coordinates
//! normalised (centred, mean distance √2) for conditioning. The samples come from a fixed
//! seed, so a call gives the same answer every time.

use super::HomographyType;
use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealFloating};
use crate::ops::build::with_backend_of;

/// A homography, row-major: `(x', y', w) = H (x, y, 1)`.
type Mat3 = [f64; 9];

fn apply(h: &Mat3, x: f64, y: f64) -> (f64, f64) {
    let w = h[6] * x + h[7] * y + h[8];
    ((h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w)
}

fn mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut c = [0.0; 9];
    for r in 0..3 {
        for k in 0..3 {
            c[3 * r + k] = (0..3).map(|j| a[3 * r + j] * b[3 * j + k]).sum();
        }
    }
    c
}

/// The similarity that centres `pts` and scales their mean distance to √2, and its inverse.
fn normaliser(pts: &[(f64, f64)]) -> (Mat3, Mat3) {
    let n = pts.len() as f64;
    let (cx, cy) = pts.iter().fold((0.0, 0.0), |(a, b), p| (a + p.0 / n, b + p.1 / n));
    let mean_d =
        pts.iter().map(|p| ((p.0 - cx).powi(2) + (p.1 - cy).powi(2)).sqrt()).sum::<f64>() / n;
    let s = if mean_d > 0.0 { std::f64::consts::SQRT_2 / mean_d } else { 1.0 };
    let t = [s, 0.0, -s * cx, 0.0, s, -s * cy, 0.0, 0.0, 1.0];
    let inv = [1.0 / s, 0.0, cx, 0.0, 1.0 / s, cy, 0.0, 0.0, 1.0];
    (t, inv)
}

/// Solves `a x = b` (`n x n`, row-major) by Gaussian elimination with partial pivoting;
/// None when the system is (nearly) singular.
fn solve(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Option<Vec<f64>> {
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))?;
        if a[p * n + c].abs() < 1e-12 {
            return None;
        }
        if p != c {
            for k in 0..n {
                a.swap(p * n + k, c * n + k);
            }
            b.swap(p, c);
        }
        for r in c + 1..n {
            let f = a[r * n + c] / a[c * n + c];
            for k in c..n {
                a[r * n + k] -= f * a[c * n + k];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[r * n + k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r * n + r];
    }
    Some(x)
}

/// The least-squares homography (with `h33 = 1`) mapping `src[i]` to `dst[i]` over the
/// points `idx` (normalised coordinates), from the normal equations.
fn fit(src: &[(f64, f64)], dst: &[(f64, f64)], idx: &[usize]) -> Option<Mat3> {
    let mut ata = vec![0.0; 64];
    let mut atb = vec![0.0; 8];
    for &i in idx {
        let ((x, y), (u, v)) = (src[i], dst[i]);
        let rows = [
            ([x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y], u),
            ([0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y], v),
        ];
        for (r, rhs) in rows {
            for p in 0..8 {
                atb[p] += r[p] * rhs;
                for q in 0..8 {
                    ata[p * 8 + q] += r[p] * r[q];
                }
            }
        }
    }
    let h = solve(ata, atb, 8)?;
    Some([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], 1.0])
}

/// A small deterministic generator (SplitMix64) for the samples.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }

    fn four(&mut self, n: usize) -> [usize; 4] {
        let mut s = [usize::MAX; 4];
        let mut k = 0;
        while k < 4 {
            let i = self.below(n);
            if !s[..k].contains(&i) {
                s[k] = i;
                k += 1;
            }
        }
        s
    }
}

/// Squared transfer errors of every point under `h` (original coordinates).
fn errors(h: &Mat3, src: &[(f64, f64)], dst: &[(f64, f64)]) -> Vec<f64> {
    src.iter()
        .zip(dst)
        .map(|(s, d)| {
            let (u, v) = apply(h, s.0, s.1);
            let e = (u - d.0).powi(2) + (v - d.1).powi(2);
            if e.is_finite() {
                e
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The homography mapping the source points to the destination points, and its number of
/// inliers.
///
/// Each iteration fits an exact homography to four random correspondences and scores it:
/// with [`HomographyType::RANSAC`] by the number of points whose transfer error (the
/// distance between `H (x_src, y_src)` and `(x_dst, y_dst)`) is below `inlier_thr`, with
/// [`HomographyType::LMEDS`] by the median squared error, whose best value then sets the
/// inlier threshold (2.5 robust standard deviations). The best model is refined by least
/// squares over its inliers, and the inliers are those of the result. RANSAC stops early
/// once the inlier ratio found makes a better sample unlikely (99% confidence), as
/// ArrayFire's CPU backend does; at most `iterations` samples are drawn. Samples come from
/// a fixed seed: the same input gives the same answer.
///
/// `H` is 3 x 3 with `(x', y', w) = H (x, y, 1)` and `H[2][2] = 1`, stored as ArrayFire
/// stores it (the array's column `j` holds row `j` of `H`, so it works with
/// [`transform_coords`](crate::transform_coords) and [`transform`](crate::transform)).
///
/// ```
/// use emberfire::{dim4, homography, Array, HomographyType};
/// // a translation by (5, -2) of six points
/// let xs = [0.0f32, 10.0, 10.0, 0.0, 5.0, 3.0];
/// let ys = [0.0f32, 0.0, 10.0, 10.0, 5.0, 8.0];
/// let xd: Vec<f32> = xs.iter().map(|x| x + 5.0).collect();
/// let yd: Vec<f32> = ys.iter().map(|y| y - 2.0).collect();
/// let a = |v: &[f32]| Array::new(v, dim4!(6));
/// let (h, inliers) = homography::<f32>(&a(&xs), &a(&ys), &a(&xd), &a(&yd),
///                                      HomographyType::RANSAC, 0.5, 100);
/// assert_eq!(inliers, 6);
/// let h = h.to_vec();
/// assert!((h[2] - 5.0).abs() < 1e-3 && (h[5] + 2.0).abs() < 1e-3);
/// ```
///
/// Panics if the four arrays differ in length or hold fewer than 4 points, if
/// `inlier_thr` is not positive (RANSAC) or `iterations` is 0.
pub fn homography<OutType>(
    x_src: &Array<f32>,
    y_src: &Array<f32>,
    x_dst: &Array<f32>,
    y_dst: &Array<f32>,
    htype: HomographyType,
    inlier_thr: f32,
    iterations: u32,
) -> (Array<OutType>, i32)
where
    OutType: HasAfEnum + RealFloating,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(x_src, || {
        const FUNC: &str = "homography";
        let n = x_src.elements();
        for (name, a) in [("y_src", y_src), ("x_dst", x_dst), ("y_dst", y_dst)] {
            assert!(
                a.elements() == n,
                "{FUNC}: `{name}` has {} points but `x_src` has {n}",
                a.elements()
            );
        }
        assert!(n >= 4, "{FUNC}: at least 4 points are needed (got {n})");
        assert!(iterations > 0, "{FUNC}: `iterations` must be positive");
        assert!(
            htype == HomographyType::LMEDS || inlier_thr > 0.0,
            "{FUNC}: `inlier_thr` must be positive (got {inlier_thr})"
        );
        let host = |a: &Array<f32>| -> Vec<f64> { a.to_vec().into_iter().map(f64::from).collect() };
        let (xs, ys, xd, yd) = (host(x_src), host(y_src), host(x_dst), host(y_dst));
        let src: Vec<(f64, f64)> = xs.into_iter().zip(ys).collect();
        let dst: Vec<(f64, f64)> = xd.into_iter().zip(yd).collect();
        let (ts, _) = normaliser(&src);
        let (td, td_inv) = normaliser(&dst);
        let ns: Vec<(f64, f64)> = src.iter().map(|p| apply(&ts, p.0, p.1)).collect();
        let nd: Vec<(f64, f64)> = dst.iter().map(|p| apply(&td, p.0, p.1)).collect();
        // back to original coordinates: H = Td^-1 Hn Ts
        let denormalise = |hn: &Mat3| {
            let h = mul(&td_inv, &mul(hn, &ts));
            let s = h[8];
            if s.abs() > 0.0 {
                h.map(|v| v / s)
            } else {
                h
            }
        };
        let thr2 = f64::from(inlier_thr) * f64::from(inlier_thr);
        let mut rng = Rng(0x005E_ED0F_4F17);
        let mut best: Option<(Mat3, f64)> = None; // model, score (lower is better)
        let mut budget = u64::from(iterations);
        let mut it = 0u64;
        while it < budget {
            it += 1;
            let sample = rng.four(n);
            let Some(hn) = fit(&ns, &nd, &sample) else { continue };
            let h = denormalise(&hn);
            let e = errors(&h, &src, &dst);
            let score = match htype {
                HomographyType::RANSAC => -(e.iter().filter(|&&v| v < thr2).count() as f64),
                HomographyType::LMEDS => median(e),
            };
            if best.as_ref().is_none_or(|b| score < b.1) {
                best = Some((h, score));
                if htype == HomographyType::RANSAC {
                    let ratio = -score / n as f64;
                    let miss = 1.0 - ratio.powi(4);
                    if miss <= f64::EPSILON {
                        budget = it;
                    } else {
                        let need = ((1.0f64 - 0.99).ln() / miss.ln()).ceil();
                        if need.is_finite() && need >= 0.0 {
                            budget = budget.min((need as u64).max(it));
                        }
                    }
                }
            }
        }
        let Some((h, score)) = best else {
            return (Array::new(&[0.0f64; 9], Dim4::new(&[3, 3, 1, 1])).cast(), 0);
        };
        let limit = match htype {
            HomographyType::RANSAC => thr2,
            HomographyType::LMEDS => {
                let sigma = 1.4826 * (1.0 + 5.0 / (n as f64 - 4.0).max(1.0)) * score.sqrt();
                (2.5 * sigma).powi(2).max(1e-12)
            }
        };
        let inliers_of = |h: &Mat3| -> Vec<usize> {
            errors(h, &src, &dst)
                .iter()
                .enumerate()
                .filter(|(_, &e)| e <= limit)
                .map(|(i, _)| i)
                .collect()
        };
        let mut h = h;
        let mut inl = inliers_of(&h);
        if inl.len() > 4 {
            if let Some(hn) = fit(&ns, &nd, &inl) {
                let refined = denormalise(&hn);
                let r = inliers_of(&refined);
                if r.len() >= inl.len() {
                    h = refined;
                    inl = r;
                }
            }
        }
        (Array::new(&h, Dim4::new(&[3, 3, 1, 1])).cast(), inl.len() as i32)
    })
}
