//! Linear filters and their relatives: [`gaussian_kernel`], [`gradient`], [`sobel`] and the
//! summed-area table [`sat`].
//!
//! `gradient` and `sobel` are sums of shifted reads (one fused pass; Sobel reads a copy of
//! the image grown by one pixel); `sat` is the backend's summed-area table (on CUDA the image
//! read twice and written once, on the CPU two fused running sums). `gaussian_kernel` is computed
//! on the host: it is a few weights, and ArrayFire too reads their sum back to normalise.

use super::border::{grown, window_read, Fill};
use super::calc::Val;
use super::tiled::{filter, tiled};
use crate::array::Array;
use crate::backend::image::{WindowFilter, WindowOp};
use crate::dim4::Dim4;
use crate::dtype::{DType, FloatingPoint, HasAfEnum, ImageFilterType, RealNumber};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};
use crate::ops::movement::{offset_read, BorderType};

/// A Gaussian filter of `rows x cols` weights, normalised to sum to 1: weight `(i, j)` is
/// `exp(-((i - (rows - 1) / 2) / sigma_r)^2 / 2 - ((j - (cols - 1) / 2) / sigma_c)^2 / 2)`
/// before normalisation. A sigma of 0 or less means `0.25` times the size along its
/// dimension; a dimension of size 1 does not vary. Use it with [`convolve2`](crate::convolve2)
/// or, separably, two 1D kernels with [`convolve2_sep`](crate::convolve2_sep).
///
/// ```
/// use emberfire::{dim4, gaussian_kernel};
/// let g = gaussian_kernel(3, 1, 1.0, 0.0);
/// assert_eq!(g.dims(), dim4!(3, 1));
/// let w = g.to_vec();
/// let e = (-0.5f64).exp();
/// assert!((w[1] as f64 - 1.0 / (1.0 + 2.0 * e)).abs() < 1e-6);
/// assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
/// ```
///
/// Panics if `rows` or `cols` is less than 1.
pub fn gaussian_kernel(rows: i32, cols: i32, sigma_r: f64, sigma_c: f64) -> Array<f32> {
    assert!(rows >= 1, "gaussian_kernel: rows must be at least 1 (got {rows})");
    assert!(cols >= 1, "gaussian_kernel: cols must be at least 1 (got {cols})");
    let term = |n: i32, sigma: f64, i: i32| {
        if n <= 1 {
            return 0.0;
        }
        let s = if sigma > 0.0 { sigma } else { 0.25 * n as f64 };
        let d = (i as f64 - (n - 1) as f64 / 2.0) / s;
        d * d
    };
    let mut w = Vec::with_capacity((rows * cols) as usize);
    for j in 0..cols {
        for i in 0..rows {
            w.push((-0.5 * (term(rows, sigma_r, i) + term(cols, sigma_c, j))).exp());
        }
    }
    let total: f64 = w.iter().sum();
    let v: Vec<f32> = w.iter().map(|x| (x / total) as f32).collect();
    Array::new(&v, Dim4::new(&[rows as u64, cols as u64, 1, 1]))
}

/// The numerical gradient of each image: along dimension 0 (`dx`, first) and dimension 1
/// (`dy`), central differences `(x[i + 1] - x[i - 1]) / 2` inside and one-sided differences
/// at the edges, as ArrayFire computes them. Dimensions 2 and 3 are batches. Along a
/// dimension of size 1 the gradient is 0 (ArrayFire reads past the image there).
///
/// f32, f64, c32 and c64; an empty input gives empty outputs.
///
/// ```
/// use emberfire::{dim4, gradient, Array};
/// let img = Array::new(&[1.0f32, 4.0, 9.0, 16.0], dim4!(4));
/// let (dx, dy) = gradient(&img);
/// assert_eq!(dx.to_vec(), vec![3.0, 4.0, 6.0, 7.0]);
/// assert_eq!(dy.to_vec(), vec![0.0; 4]);
/// ```
pub fn gradient<T>(input: &Array<T>) -> (Array<T>, Array<T>)
where
    T: HasAfEnum + FloatingPoint,
{
    let dims = input.dims();
    if dims.elements() == 0 {
        return (input.clone(), input.clone());
    }
    let t = T::get_af_dtype();
    let along = |k: usize| {
        let mut plus = [0i64; 4];
        let mut minus = [0i64; 4];
        plus[k] = 1;
        minus[k] = -1;
        let p = Val::of(&offset_read(input, dims, plus, BorderType::CLAMP_TO_EDGE), t);
        let m = Val::of(&offset_read(input, dims, minus, BorderType::CLAMP_TO_EDGE), t);
        let i = p.index(dims, k as u8, DType::S32);
        let edge = i.eq(&i.k(0.0)).or(&i.eq(&i.k((dims[k] - 1) as f64)));
        let factor = Val::select(&edge, &p.k(1.0), &p.k(0.5));
        ((&p - &m) * factor).array()
    };
    (along(0), along(1))
}

/// The Sobel derivatives of each image with a 3 x 3 kernel: `dx` along dimension 0
/// (`[-1 0 1]` down the rows, smoothed by `[1 2 1]` across the columns) and `dy` along
/// dimension 1, first and second. Outside the image, the image is reflected about its edge
/// pixels without repeating them (`x[-1] = x[1]`), as ArrayFire does; along a dimension of
/// size 1 the pixel itself is read. Dimensions 2 and 3 are batches.
///
/// f32 and f64 give their own type; integers and bool give i32, computed in i32 (as in
/// ArrayFire).
///
/// ```
/// use emberfire::{dim4, sobel, Array};
/// // a horizontal ramp: values grow along dimension 1
/// let img = Array::new(&[0.0f32, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0], dim4!(3, 3));
/// let (dx, dy) = sobel(&img, 3);
/// assert_eq!(dx.to_vec(), vec![0.0; 9]);
/// assert_eq!(dy.to_vec()[4], 8.0); // (1 + 2 + 1) * (2 - 0) at the centre
/// ```
///
/// Panics if `ker_size` is not 3 (the only size ArrayFire implements).
#[allow(clippy::type_complexity)]
pub fn sobel<T>(input: &Array<T>, ker_size: u32) -> (Array<T::SobelOutType>, Array<T::SobelOutType>)
where
    T: HasAfEnum + ImageFilterType,
    T::SobelOutType: HasAfEnum,
{
    assert!(ker_size == 3, "sobel: ker_size must be 3 (got {ker_size})");
    let dims = input.dims();
    let x: Array<T::SobelOutType> = input.cast();
    if dims.elements() == 0 {
        return (x.clone(), x);
    }
    // the kernel reads the input as it is and converts each pixel it uses (bool as u8)
    let f = WindowFilter { reflect: true, ..filter(WindowOp::Sobel, [3, 3]) };
    let fast = if T::get_af_dtype() == DType::B8 {
        tiled::<u8, T::SobelOutType>("sobel", &input.cast::<u8>(), None, f)
    } else {
        tiled::<T, T::SobelOutType>("sobel", input, None, f)
    };
    if let Some((dx, Some(dy))) = fast {
        return (dx, dy);
    }
    let t = T::SobelOutType::get_af_dtype();
    let g = grown(&x, [1, 1, 0, 0], [1, 1, 0, 0], Fill::Reflect101);
    // the pixel at (row + a, column + b)
    let px = |a: i64, b: i64| Val::of(&window_read(&g, dims, [1 + a, 1 + b, 0, 0]), t);
    let (nw, n, ne) = (px(-1, -1), px(-1, 0), px(-1, 1));
    let (w, e) = (px(0, -1), px(0, 1));
    let (sw, s, se) = (px(1, -1), px(1, 0), px(1, 1));
    let dx = &(&(&sw + &se) - &(&nw + &ne)) + &((&s - &n) * 2.0);
    let dy = &(&(&ne + &se) - &(&nw + &sw)) + &((&e - &w) * 2.0);
    (dx.array(), dy.array())
}

/// The summed-area table of each image: element `(i, j)` is the sum of the input over rows
/// `0..=i` and columns `0..=j`. Dimensions 2 and 3 are batches. The result has the type of
/// sums of `T` (u32 for u8, u16 and bool; i32 for i16; the type itself otherwise), as in
/// arrayfire-rust.
///
/// ```
/// use emberfire::{dim4, sat, Array};
/// let img = Array::new(&[1u8, 2, 3, 4], dim4!(2, 2));
/// assert_eq!(sat(&img).to_vec(), vec![1u32, 3, 4, 10]);
/// ```
pub fn sat<T>(input: &Array<T>) -> Array<T::AggregateOutType>
where
    T: HasAfEnum + RealNumber,
    T::AggregateOutType: HasAfEnum,
{
    let node = input.node();
    let (dims, out) = (node.dims, T::AggregateOutType::get_af_dtype());
    let buf = node.backend.ops().summed_area(node, out).or_raise("sat");
    Array::from_node(Node::ready(out, dims, node.backend, Data::dense(buf, dims)))
}
