//! The code of the book's "Statistics" chapter: means and variances along a dimension and over
//! whole arrays, weights, covariance and correlation, medians, top-k and histograms. Every
//! result is checked, so running the example verifies the chapter.

use emberfire::*;

fn main() {
    // ANCHOR: moments
    // Three columns of four measurements each.
    let data = [2.0f64, 4.0, 4.0, 6.0, 1.0, 1.0, 1.0, 1.0, 10.0, 20.0, 30.0, 40.0];
    let a = Array::new(&data, dim4!(4, 3));
    assert_eq!(mean(&a, 0).to_vec(), vec![4.0, 1.0, 25.0]);
    // Population variance divides by n, sample variance by n - 1.
    assert_eq!(var_v2(&a, VarianceBias::POPULATION, 0).to_vec(), vec![2.0, 0.0, 125.0]);
    let sample = var_v2(&a, VarianceBias::SAMPLE, 0).to_vec();
    let want = [8.0 / 3.0, 0.0, 500.0 / 3.0];
    assert!(sample.iter().zip(want).all(|(s, w)| (s - w).abs() < 1e-12));
    let sd = stdev_v2(&a, VarianceBias::POPULATION, 0).to_vec();
    assert!((sd[2] - 125f64.sqrt()).abs() < 1e-12);
    // Over the whole array: (real, imaginary) pairs, as in arrayfire-rust.
    assert_eq!(mean_all(&a), (10.0, 0.0));
    // Integer inputs give f32 results.
    let counts = Array::new(&[1u8, 2, 3, 4], dim4!(2, 2));
    assert_eq!(mean(&counts, 1).to_vec(), vec![2.0f32, 3.0]);
    // ANCHOR_END: moments

    // ANCHOR: weights
    // Grades weighted by credits: sum(w * x) / sum(w).
    let grades = Array::new(&[3.0f32, 4.0, 2.0], dim4!(3));
    let credits = Array::new(&[2.0f32, 1.0, 1.0], dim4!(3));
    assert_eq!(mean_weighted(&grades, &credits, 0).to_vec(), vec![3.0]);
    assert_eq!(var_weighted(&grades, &credits, 0).to_vec(), vec![0.5]);
    let (m, v) = meanvar(&grades, &credits, VarianceBias::DEFAULT, 0);
    assert_eq!((m.to_vec(), v.to_vec()), (vec![3.0], vec![0.5]));
    // ANCHOR_END: weights

    // ANCHOR: correlation
    let x = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(4));
    let y = Array::new(&[2.0f64, 4.1, 5.9, 8.0], dim4!(4));
    let c = cov_v2(&x, &y, VarianceBias::SAMPLE).to_vec()[0];
    assert!((c - 3.3).abs() < 1e-12);
    let r = corrcoef(&x, &y).0;
    assert!(r > 0.999 && r < 1.0);
    // ANCHOR_END: correlation

    // ANCHOR: order
    let scores = Array::new(&[7i32, 3, 9, 1, 8], dim4!(5));
    assert_eq!(median(&scores, 0).to_vec(), vec![7]);
    assert_eq!(median_all(&scores), (7.0, 0.0));
    let (best, at) = topk(&scores, 2, 0, TopkFn::MAX);
    assert_eq!((best.to_vec(), at.to_vec()), (vec![9, 8], vec![2, 4]));
    // Four bins over [0, 10): 0-2.5, 2.5-5, 5-7.5, 7.5-10.
    let h = histogram(&scores, 4, 0.0, 10.0);
    assert_eq!(h.to_vec(), vec![1, 1, 1, 2]);
    // ANCHOR_END: order

    println!("statistics: all checks passed");
}
