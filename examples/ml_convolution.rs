//! A convolution layer trained by gradient descent: random images are convolved with a known
//! 3 x 3 filter bank to make the targets, and a second bank, started at zero, learns it from
//! the images and targets alone with the gradients of `convolve2_gradient_nn`.
//!
//! Run with `cargo run --example ml_convolution`. The example checks that the loss falls and
//! that the learned filters and biases match the known ones.

use emberfire::*;

fn main() {
    set_seed(7);
    // ANCHOR: layer
    // 8 images of 2 channels, 16 x 16, in [-1, 1); 3 filters of 3 x 3 over both channels
    let x = &(&randu::<f32>(dim4!(16, 16, 2, 8)) * 2.0f32) - 1.0f32;
    let target_w = randu::<f32>(dim4!(3, 3, 2, 3));
    let target_b = Array::new(&[0.5f32, -1.0, 0.25], dim4!(1, 1, 3, 1));
    let (strides, padding, dilation) = (dim4!(1, 1), dim4!(1, 1), dim4!(1, 1));
    let layer = |w: &Array<f32>, b: &Array<f32>| {
        // padding 1 keeps the images' 16 x 16; the bias broadcasts over pixels and images
        let y = convolve2_nn(&x, w, strides, padding, dilation);
        add(&y, b, true)
    };
    let targets = layer(&target_w, &target_b);
    assert_eq!(targets.dims(), dim4!(16, 16, 3, 8));
    // ANCHOR_END: layer

    // ANCHOR: train
    let mut w = constant(0.0f32, dim4!(3, 3, 2, 3));
    let mut b = constant(0.0f32, dim4!(1, 1, 3, 1));
    let pixels = (16 * 16 * 8) as f32;
    let mut losses = Vec::new();
    for _ in 0..60 {
        let y = layer(&w, &b);
        // loss = mean squared error / 2; its gradient with respect to y:
        let dy = &(&y - &targets) / pixels;
        losses.push(sum_all(&(&dy * &(&y - &targets))).0 / 2.0);
        let grad = |t| convolve2_gradient_nn(&dy, &x, &w, &y, strides, padding, dilation, t);
        let (dw, db) = (grad(ConvGradientType::FILTER), grad(ConvGradientType::BIAS));
        w = &w - &(&dw * 1.5f32);
        b = &b - &(&db * 0.5f32);
        w.eval();
        b.eval();
    }
    // ANCHOR_END: train

    println!("loss: first {:.3e}, last {:.3e}", losses[0], losses[losses.len() - 1]);
    assert!(losses[losses.len() - 1] < 1e-6 * losses[0], "the loss fell too little: {losses:?}");
    let err = max_all(&abs(&(&w - &target_w))).0;
    assert!(err < 1e-3, "the learned filters are off by {err}");
    let err = max_all(&abs(&(&b - &target_b))).0;
    assert!(err < 1e-3, "the learned biases are off by {err}");
    println!("learned the filters and biases to within 1e-3");
}
