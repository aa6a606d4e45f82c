//! The iterative image algorithms (regions, canny, confidence_cc, mean_shift,
//! anisotropic_diffusion, iterative_deconv, inverse_deconv) against references computed
//! here on the host with plain loops: a breadth-first search for components, the Canny
//! stages pixel by pixel, diffusion steps over every pixel, a direct DFT for deconvolution.

mod common;

use common::{Elem, Rng, Rng64, SeedableRng, V};
use emberfire::*;

// ---- helpers --------------------------------------------------------------------------------

fn d4(a: usize, b: usize, c: usize, e: usize) -> Dim4 {
    dim4!(a as u64, b as u64, c as u64, e as u64)
}

/// `n` random values in `[lo, hi)`, converted to `T` (integers truncate).
fn uniform<T: Elem>(r: &mut Rng64, n: usize, lo: f64, hi: f64) -> Vec<T> {
    (0..n).map(|_| T::from_v(V::F(r.gen_range(lo..hi)))).collect()
}

fn f64s<T: Elem>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_v().f()).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}, element {i}: got {g}, want {w}");
    }
}

/// The offsets of the 4 or 8 neighbours along dimensions 0 and 1.
fn nbrs(eight: bool) -> Vec<(i64, i64)> {
    let mut v = vec![(-1, 0), (1, 0), (0, -1), (0, 1)];
    if eight {
        v.extend([(-1, -1), (1, -1), (-1, 1), (1, 1)]);
    }
    v
}

/// Breadth-first labelling of one `h x w` image: components numbered in the order of their
/// first pixel in column-major order.
fn label_ref(mask: &[bool], h: usize, w: usize, eight: bool) -> Vec<u32> {
    let mut out = vec![0u32; h * w];
    let mut next = 0;
    for start in 0..h * w {
        if !mask[start] || out[start] != 0 {
            continue;
        }
        next += 1;
        out[start] = next;
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(p) = queue.pop_front() {
            let (y, x) = ((p % h) as i64, (p / h) as i64);
            for (dy, dx) in nbrs(eight) {
                let (yy, xx) = (y + dy, x + dx);
                if yy < 0 || xx < 0 || yy >= h as i64 || xx >= w as i64 {
                    continue;
                }
                let q = yy as usize + h * xx as usize;
                if mask[q] && out[q] == 0 {
                    out[q] = next;
                    queue.push_back(q);
                }
            }
        }
    }
    out
}

// ---- regions --------------------------------------------------------------------------------

fn regions_case<O: Elem + RealNumber>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (h, w) in [(1, 1), (1, 9), (7, 1), (3, 5), (67, 45)] {
        for density in [0.3, 0.55, 0.8] {
            let mask: Vec<bool> = (0..h * w).map(|_| r.gen_bool(density)).collect();
            let img = Array::new(&mask, d4(h, w, 1, 1));
            for (conn, eight) in [(Connectivity::FOUR, false), (Connectivity::EIGHT, true)] {
                let got: Array<O> = regions(&img, conn);
                assert_eq!(got.dims(), d4(h, w, 1, 1));
                assert_eq!(got.get_type(), O::TY.dtype);
                let want = label_ref(&mask, h, w, eight);
                let g: Vec<f64> = f64s(&got.to_vec());
                let wv: Vec<f64> = want.iter().map(|&x| x as f64).collect();
                assert_eq!(g, wv, "regions {h}x{w} density {density} {conn:?}");
            }
        }
    }
}

#[test]
fn regions_every_output_type() {
    regions_case::<f32>(1);
    regions_case::<f64>(2);
    regions_case::<i32>(3);
    regions_case::<u32>(4);
    regions_case::<i16>(5);
    regions_case::<u16>(6);
}

#[test]
fn regions_long_snake_converges() {
    // a serpentine path through a 41 x 41 image: one component whose diameter is ~800
    let n = 41;
    let mut mask = vec![false; n * n];
    for x in (0..n).step_by(2) {
        for y in 0..n {
            mask[y + n * x] = true;
        }
        if x + 1 < n {
            let y = if (x / 2) % 2 == 0 { n - 1 } else { 0 };
            mask[y + n * (x + 1)] = true;
        }
    }
    let img = Array::new(&mask, d4(n, n, 1, 1));
    let got: Array<i32> = regions(&img, Connectivity::FOUR);
    let want: Vec<i32> = mask.iter().map(|&m| m as i32).collect();
    assert_eq!(got.to_vec(), want);
}

#[test]
fn regions_empty_and_all_background() {
    let img = Array::new(&[false; 6], dim4!(2, 3));
    let got: Array<f32> = regions(&img, Connectivity::EIGHT);
    assert_eq!(got.to_vec(), vec![0.0; 6]);
    let all = Array::new(&[true; 6], dim4!(2, 3));
    let got: Array<u32> = regions(&all, Connectivity::FOUR);
    assert_eq!(got.to_vec(), vec![1; 6]);
}

#[test]
#[should_panic(expected = "regions: OutType u8 is not supported")]
fn regions_rejects_u8_output() {
    let img = Array::new(&[true; 4], dim4!(2, 2));
    let _: Array<u8> = regions(&img, Connectivity::FOUR);
}

#[test]
#[should_panic(expected = "regions: input must be one 2D image")]
fn regions_rejects_batches() {
    let img = Array::new(&[true; 8], dim4!(2, 2, 2));
    let _: Array<f32> = regions(&img, Connectivity::FOUR);
}
