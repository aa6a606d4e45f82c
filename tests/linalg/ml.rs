//! Neural-network convolutions against a direct convolution computed here in f64 with plain
//! loops over every output pixel, filter tap and channel, and their gradients against the
//! same loops scattering backwards and against finite differences of the forward pass.

use emberfire::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One convolution: signal `[w, h, c, n]`, filter `[fw, fh, c, f]`, strides, padding and
/// dilation along dimensions 0 and 1.
#[derive(Clone, Copy, Debug)]
struct Case {
    s: [usize; 4],
    f: [usize; 4],
    stride: [usize; 2],
    pad: [usize; 2],
    dil: [usize; 2],
}

const fn case(
    s: [usize; 4],
    f: [usize; 4],
    stride: [usize; 2],
    pad: [usize; 2],
    dil: [usize; 2],
) -> Case {
    Case { s, f, stride, pad, dil }
}

/// Odd sizes, strides, paddings (beyond the filter too), dilations, batches of images and of
/// filters, 1 x 1 filters, a filter as large as the padded signal, non-square everything.
const CASES: [Case; 12] = [
    case([1, 1, 1, 1], [1, 1, 1, 1], [1, 1], [0, 0], [1, 1]),
    case([5, 7, 1, 1], [3, 3, 1, 1], [1, 1], [0, 0], [1, 1]),
    case([6, 5, 3, 2], [3, 2, 3, 4], [1, 1], [1, 1], [1, 1]),
    case([9, 8, 2, 3], [3, 3, 2, 2], [2, 3], [1, 2], [1, 1]),
    case([11, 7, 2, 2], [3, 2, 2, 3], [1, 2], [2, 1], [2, 3]),
    case([7, 9, 3, 1], [1, 1, 3, 5], [2, 2], [0, 0], [1, 1]),
    case([4, 3, 2, 2], [4, 3, 2, 3], [1, 1], [0, 0], [1, 1]),
    case([3, 2, 1, 2], [5, 4, 1, 2], [1, 1], [1, 1], [1, 1]),
    case([5, 5, 2, 1], [2, 2, 2, 2], [3, 1], [4, 0], [1, 2]),
    case([13, 10, 4, 3], [5, 3, 4, 6], [2, 1], [2, 1], [1, 2]),
    case([8, 1, 2, 2], [3, 1, 2, 2], [1, 1], [1, 0], [1, 1]),
    case([16, 12, 8, 4], [3, 3, 8, 8], [1, 1], [1, 1], [1, 1]),
];

impl Case {
    fn out(&self) -> [usize; 2] {
        let o = |k: usize| {
            let span = (self.f[k] - 1) * self.dil[k] + 1;
            (self.s[k] + 2 * self.pad[k] - span) / self.stride[k] + 1
        };
        [o(0), o(1)]
    }

    fn out_dims(&self) -> [usize; 4] {
        let [ow, oh] = self.out();
        [ow, oh, self.f[3], self.s[3]]
    }

    fn args(&self) -> (Dim4, Dim4, Dim4) {
        let two = |v: [usize; 2]| dim4!(v[0] as u64, v[1] as u64);
        (two(self.stride), two(self.pad), two(self.dil))
    }

    /// Calls `visit(signal index, filter index, output index)` for every product term of the
    /// convolution (taps reading the padding are skipped).
    fn terms(&self, mut visit: impl FnMut(usize, usize, usize)) {
        let [w, h, c, n] = self.s;
        let [fw, fh, _, nf] = self.f;
        let [ow, oh] = self.out();
        for m in 0..n {
            for k in 0..nf {
                for b in 0..oh {
                    for a in 0..ow {
                        let o = a + ow * (b + oh * (k + nf * m));
                        for ch in 0..c {
                            for j in 0..fh {
                                for i in 0..fw {
                                    let x = (a * self.stride[0] + i * self.dil[0]) as i64
                                        - self.pad[0] as i64;
                                    let y = (b * self.stride[1] + j * self.dil[1]) as i64
                                        - self.pad[1] as i64;
                                    if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
                                        continue;
                                    }
                                    let s = x as usize + w * (y as usize + h * (ch + c * m));
                                    let f = (fw - 1 - i) + fw * ((fh - 1 - j) + fh * (ch + c * k));
                                    visit(s, f, o);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn forward_ref(&self, x: &[f64], w: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.out_dims().iter().product()];
        self.terms(|s, f, o| y[o] += x[s] * w[f]);
        y
    }

    fn data_ref(&self, dy: &[f64], w: &[f64]) -> Vec<f64> {
        let mut dx = vec![0.0; self.s.iter().product()];
        self.terms(|s, f, o| dx[s] += dy[o] * w[f]);
        dx
    }

    fn filter_ref(&self, dy: &[f64], x: &[f64]) -> Vec<f64> {
        let mut dw = vec![0.0; self.f.iter().product()];
        self.terms(|s, f, o| dw[f] += dy[o] * x[s]);
        dw
    }

    fn bias_ref(&self, dy: &[f64]) -> Vec<f64> {
        let [ow, oh, nf, n] = self.out_dims();
        (0..nf)
            .map(|k| {
                (0..n)
                    .map(|m| (0..ow * oh).map(|p| dy[p + ow * oh * (k + nf * m)]).sum::<f64>())
                    .sum()
            })
            .collect()
    }
}

fn dims(d: [usize; 4]) -> Dim4 {
    Dim4::new(&d.map(|x| x as u64))
}

fn random(r: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n).map(|_| r.gen_range(-1.0..1.0)).collect()
}

/// Element types under test, converted from and to f64.
trait Real: HasAfEnum + RealFloating + Copy + Default + std::fmt::Debug {
    /// Relative tolerance, against the sum of the magnitudes of the terms.
    const TOL: f64;
    fn of(v: f64) -> Self;
    fn f(self) -> f64;
}
impl Real for f32 {
    const TOL: f64 = 2e-6;
    fn of(v: f64) -> Self {
        v as f32
    }
    fn f(self) -> f64 {
        self as f64
    }
}
impl Real for f64 {
    const TOL: f64 = 1e-13;
    fn of(v: f64) -> Self {
        v
    }
    fn f(self) -> f64 {
        self
    }
}

fn array<T: Real>(v: &[f64], d: [usize; 4]) -> Array<T> {
    let t: Vec<T> = v.iter().map(|&x| T::of(x)).collect();
    Array::new(&t, dims(d))
}

/// Asserts `got` against `want`, each element within the tolerance of `T` times `scale`
/// (the largest sum of magnitudes of the terms of an element, about).
fn check<T: Real>(got: &Array<T>, d: [usize; 4], want: &[f64], scale: f64, what: &str) {
    assert_eq!(got.dims(), dims(d), "{what}: dims");
    let g = got.to_vec();
    assert_eq!(g.len(), want.len(), "{what}: element count");
    let tol = T::TOL * scale.max(1.0);
    for (i, (x, w)) in g.iter().zip(want).enumerate() {
        assert!((x.f() - w).abs() <= tol, "{what}, element {i}: got {x:?}, want {w} (tol {tol})");
    }
}

/// The inputs of a case, rounded to `T`, as f64 vectors and as arrays.
struct Inputs<T: HasAfEnum> {
    x: Vec<f64>,
    w: Vec<f64>,
    dy: Vec<f64>,
    xa: Array<T>,
    wa: Array<T>,
    dya: Array<T>,
}

fn inputs<T: Real>(c: &Case, seed: u64) -> Inputs<T> {
    let mut r = StdRng::seed_from_u64(seed);
    let round = |v: Vec<f64>| v.into_iter().map(|x| T::of(x).f()).collect::<Vec<_>>();
    let x = round(random(&mut r, c.s.iter().product()));
    let w = round(random(&mut r, c.f.iter().product()));
    let dy = round(random(&mut r, c.out_dims().iter().product()));
    Inputs { xa: array(&x, c.s), wa: array(&w, c.f), dya: array(&dy, c.out_dims()), x, w, dy }
}

/// Terms per element, for tolerances: a bound on the sums' magnitudes (inputs are in -1..1).
fn scale(c: &Case) -> f64 {
    let [ow, oh, _, n] = c.out_dims();
    (c.f[0] * c.f[1] * c.f[2]).max(ow * oh * n).max(c.f[3] * c.f[0] * c.f[1]) as f64
}

fn forward_matches<T: Real>() {
    for (i, c) in CASES.iter().enumerate() {
        let v = inputs::<T>(c, 10 + i as u64);
        let (s, p, d) = c.args();
        let y = convolve2_nn(&v.xa, &v.wa, s, p, d);
        check(&y, c.out_dims(), &c.forward_ref(&v.x, &v.w), scale(c), &format!("forward {c:?}"));
    }
}

#[test]
fn forward_matches_a_direct_convolution_f32() {
    forward_matches::<f32>();
}

#[test]
fn forward_matches_a_direct_convolution_f64() {
    forward_matches::<f64>();
}

fn gradients_match<T: Real>() {
    for (i, c) in CASES.iter().enumerate() {
        let v = inputs::<T>(c, 100 + i as u64);
        let (s, p, d) = c.args();
        let y = convolve2_nn(&v.xa, &v.wa, s, p, d);
        let grad = |t| convolve2_gradient_nn(&v.dya, &v.xa, &v.wa, &y, s, p, d, t);
        let sc = scale(c);
        let data = c.data_ref(&v.dy, &v.w);
        check(&grad(ConvGradientType::DATA), c.s, &data, sc, &format!("DATA {c:?}"));
        check(&grad(ConvGradientType::DEFAULT), c.s, &data, sc, &format!("DEFAULT {c:?}"));
        let filter = c.filter_ref(&v.dy, &v.x);
        check(&grad(ConvGradientType::FILTER), c.f, &filter, sc, &format!("FILTER {c:?}"));
        let bias = c.bias_ref(&v.dy);
        check(&grad(ConvGradientType::BIAS), [1, 1, c.f[3], 1], &bias, sc, &format!("BIAS {c:?}"));
    }
}

#[test]
fn gradients_match_a_direct_backward_convolution_f32() {
    gradients_match::<f32>();
}

#[test]
fn gradients_match_a_direct_backward_convolution_f64() {
    gradients_match::<f64>();
}

/// The loss `sum(dy * convolve2_nn(x, w))`, whose gradients are the data and filter
/// gradients with incoming gradient `dy`, and whose derivative with respect to a bias `b`
/// added to the output of filter `k` is the bias gradient.
fn loss(c: &Case, x: &[f64], w: &[f64], dy: &Array<f64>) -> f64 {
    let (s, p, d) = c.args();
    let y = convolve2_nn(&array::<f64>(x, c.s), &array::<f64>(w, c.f), s, p, d);
    sum_all(&(dy * &y)).0
}

#[test]
fn gradients_match_finite_differences_of_the_forward_pass() {
    let h = 1e-3;
    for (n, c) in CASES.iter().enumerate().filter(|(_, c)| c.s.iter().product::<usize>() <= 400) {
        let v = inputs::<f64>(c, 1000 + n as u64);
        let (s, p, d) = c.args();
        let y = convolve2_nn(&v.xa, &v.wa, s, p, d);
        let grad = |t| convolve2_gradient_nn(&v.dya, &v.xa, &v.wa, &y, s, p, d, t).to_vec();
        let (dx, dw) = (grad(ConvGradientType::DATA), grad(ConvGradientType::FILTER));
        for i in 0..v.x.len() {
            let (mut up, mut down) = (v.x.clone(), v.x.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (loss(c, &up, &v.w, &v.dya) - loss(c, &down, &v.w, &v.dya)) / (2.0 * h);
            assert!(
                (fd - dx[i]).abs() <= 1e-8 * scale(c),
                "DATA {c:?} element {i}: {} vs {fd}",
                dx[i]
            );
        }
        for i in 0..v.w.len() {
            let (mut up, mut down) = (v.w.clone(), v.w.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (loss(c, &v.x, &up, &v.dya) - loss(c, &v.x, &down, &v.dya)) / (2.0 * h);
            assert!(
                (fd - dw[i]).abs() <= 1e-8 * scale(c),
                "FILTER {c:?} element {i}: {} vs {fd}",
                dw[i]
            );
        }
        // a bias b_k added to every output pixel of filter k changes the loss by b_k times
        // the sum of dy over filter k's pixels
        let db = grad(ConvGradientType::BIAS);
        let [ow, oh, nf, nn] = c.out_dims();
        for k in 0..nf {
            let mut shift = vec![0.0; ow * oh * nf * nn];
            for m in 0..nn {
                for q in 0..ow * oh {
                    shift[q + ow * oh * (k + nf * m)] = h;
                }
            }
            let base = sum_all(&(&v.dya * &y)).0;
            let moved = sum_all(&(&v.dya * &(&y + &array::<f64>(&shift, c.out_dims())))).0;
            let fd = (moved - base) / h;
            assert!(
                (fd - db[k]).abs() <= 1e-8 * scale(c),
                "BIAS {c:?} filter {k}: {} vs {fd}",
                db[k]
            );
        }
    }
}

#[test]
fn inputs_may_be_lazy_expressions_and_views() {
    let c = CASES[3];
    let v = inputs::<f64>(&c, 7);
    let (s, p, d) = c.args();
    // x given as (2 x) / 2 and w as the transpose of its transpose (a strided view)
    let x2 = &(&v.xa * 2.0) / 2.0;
    let wt = reorder_v2(&reorder_v2(&v.wa, 1, 0, None), 1, 0, None);
    let y = convolve2_nn(&x2, &wt, s, p, d);
    check(&y, c.out_dims(), &c.forward_ref(&v.x, &v.w), scale(&c), "lazy forward");
    let dx = convolve2_gradient_nn(&(&v.dya + 0.0), &x2, &wt, &y, s, p, d, ConvGradientType::DATA);
    check(&dx, c.s, &c.data_ref(&v.dy, &v.w), scale(&c), "lazy data gradient");
}

#[test]
fn empty_batches_give_empty_or_zero_results() {
    let (s, p, d) = (dim4!(1, 1), dim4!(1, 1), dim4!(1, 1));
    // no images: an empty output; no filters: an empty output
    let x0 = Array::<f32>::new_empty(Dim4::new(&[5, 4, 2, 0]));
    let w = constant(1.0f32, Dim4::new(&[3, 3, 2, 3]));
    assert_eq!(convolve2_nn(&x0, &w, s, p, d).dims(), Dim4::new(&[5, 4, 3, 0]));
    let x = constant(1.0f32, Dim4::new(&[5, 4, 2, 2]));
    let w0 = Array::<f32>::new_empty(Dim4::new(&[3, 3, 2, 0]));
    assert_eq!(convolve2_nn(&x, &w0, s, p, d).dims(), Dim4::new(&[5, 4, 0, 2]));
    // no channels: zero outputs; gradients of the right shapes, zero
    let xc = Array::<f64>::new_empty(Dim4::new(&[5, 4, 0, 2]));
    let wc = Array::<f64>::new_empty(Dim4::new(&[3, 3, 0, 3]));
    let y = convolve2_nn(&xc, &wc, s, p, d);
    assert_eq!(y.dims(), Dim4::new(&[5, 4, 3, 2]));
    assert!(y.to_vec().iter().all(|&v| v == 0.0));
    let dy = constant(1.0f64, y.dims());
    let dw = convolve2_gradient_nn(&dy, &xc, &wc, &y, s, p, d, ConvGradientType::FILTER);
    assert_eq!(dw.dims(), wc.dims());
    let db = convolve2_gradient_nn(&dy, &xc, &wc, &y, s, p, d, ConvGradientType::BIAS);
    assert_eq!(db.dims(), Dim4::new(&[1, 1, 3, 1]));
}

// ---- bad arguments ------------------------------------------------------------------------

fn sig() -> Array<f32> {
    constant(1.0f32, Dim4::new(&[6, 6, 2, 1]))
}

fn filt(c: u64) -> Array<f32> {
    constant(1.0f32, Dim4::new(&[3, 3, c, 4]))
}

#[test]
#[should_panic(expected = "convolve2_nn: the signal has 2 channels")]
fn channel_mismatch_is_refused() {
    convolve2_nn(&sig(), &filt(3), dim4!(1, 1), dim4!(0, 0), dim4!(1, 1));
}

#[test]
#[should_panic(expected = "convolve2_nn: `strides` must be positive")]
fn zero_stride_is_refused() {
    convolve2_nn(&sig(), &filt(2), dim4!(1, 0), dim4!(0, 0), dim4!(1, 1));
}

#[test]
#[should_panic(expected = "convolve2_nn: `dilation` must be positive")]
fn zero_dilation_is_refused() {
    convolve2_nn(&sig(), &filt(2), dim4!(1, 1), dim4!(0, 0), dim4!(0, 1));
}

#[test]
#[should_panic(expected = "smaller than the filter")]
fn a_filter_larger_than_the_padded_signal_is_refused() {
    // a 3-tap filter dilated by 3 spans 7 pixels; the signal has 6
    convolve2_nn(&sig(), &filt(2), dim4!(1, 1), dim4!(0, 0), dim4!(3, 1));
}

#[test]
#[should_panic(expected = "convolve2_gradient_nn: `incoming_grad` has dims")]
fn a_gradient_of_the_wrong_shape_is_refused() {
    let (s, p, d) = (dim4!(1, 1), dim4!(1, 1), dim4!(1, 1));
    let y = convolve2_nn(&sig(), &filt(2), s, p, d);
    let dy = constant(1.0f32, dim4!(6, 6, 4, 2));
    convolve2_gradient_nn(&dy, &sig(), &filt(2), &y, s, p, d, ConvGradientType::DATA);
}

#[test]
#[should_panic(expected = "convolve2_gradient_nn: `convolved_output` has dims")]
fn an_output_of_the_wrong_shape_is_refused() {
    let (s, p, d) = (dim4!(1, 1), dim4!(1, 1), dim4!(1, 1));
    let y = constant(1.0f32, dim4!(5, 5, 4, 1));
    convolve2_gradient_nn(&y, &sig(), &filt(2), &y, s, p, d, ConvGradientType::FILTER);
}

#[test]
#[should_panic(expected = "convolve2_gradient_nn: the signal has 2 channels")]
fn a_gradient_with_a_channel_mismatch_is_refused() {
    let (s, p, d) = (dim4!(1, 1), dim4!(1, 1), dim4!(1, 1));
    let y = constant(1.0f32, dim4!(6, 6, 4, 1));
    convolve2_gradient_nn(&y, &sig(), &filt(3), &y, s, p, d, ConvGradientType::FILTER);
}
