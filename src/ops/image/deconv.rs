//! Deconvolution by FFT: [`iterative_deconv`] (Landweber, Richardson-Lucy) and
//! [`inverse_deconv`] (Tikhonov), with ArrayFire's setup: the image is padded (edges
//! repeated) to a size the FFT handles well, the point spread function is zero-padded to the
//! same size and rolled so that its centre sits at the origin, and every step is an
//! element-wise product of spectra.

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{c32, DeconvInput, HasAfEnum};
use crate::ops::arith::{abs, conjg};
use crate::ops::index::index;
use crate::ops::movement::{pad, shift, BorderType};
use crate::ops::seq::Seq;
use crate::ops::signal::{fft2_c2r, fft2_r2c};

use super::{InverseDeconvAlgo, IterativeDeconvAlgo};

/// Whether `n` has no prime factor above 7.
fn seven_smooth(mut n: u64) -> bool {
    for p in [2, 3, 5, 7] {
        while n.is_multiple_of(p) {
            n /= p;
        }
    }
    n == 1
}

/// The padded problem: the image and the spectrum of the centred point spread function on
/// the padded grid, and where the image lies in it.
struct Padded {
    image: Array<f32>,
    psf: Array<c32>,
    dims: Dim4,
    crop: [Seq<f64>; 4],
}

impl Padded {
    fn new<T: DeconvInput>(func: &str, input: &Array<T>, kernel: &Array<f32>) -> Padded {
        let idims = input.dims();
        let fdims = kernel.dims();
        assert!(
            idims[2] == 1 && idims[3] == 1 && idims.elements() > 0,
            "{func}: input must be one non-empty 2D image; its dims are {idims}"
        );
        assert!(
            fdims[2] == 1 && fdims[3] == 1 && fdims.elements() > 0,
            "{func}: kernel must be a non-empty 2D array; its dims are {fdims}"
        );
        let mut size = [1u64; 4];
        let mut before = [0u64; 4];
        let mut after = [0u64; 4];
        let mut crop = [Seq::default(), Seq::default(), Seq::default(), Seq::default()];
        for k in 0..2 {
            let mut p = idims[k] + fdims[k];
            while !seven_smooth(p) {
                p += 1;
            }
            size[k] = p;
            let extra = p - idims[k];
            before[k] = extra / 2;
            after[k] = extra - extra / 2;
            crop[k] = Seq::new(before[k] as f64, (before[k] + idims[k] - 1) as f64, 1.0);
        }
        let image = pad(
            &input.cast::<f32>(),
            Dim4::new(&before),
            Dim4::new(&after),
            BorderType::CLAMP_TO_EDGE,
        );
        image.eval();
        let grown = pad(
            kernel,
            Dim4::new(&[0, 0, 0, 0]),
            Dim4::new(&[size[0] - fdims[0], size[1] - fdims[1], 0, 0]),
            BorderType::ZERO,
        );
        let centred = shift(&grown, &[-((fdims[0] / 2) as i32), -((fdims[1] / 2) as i32), 0, 0]);
        let psf = fft2_r2c(&centred, 1.0, 0, 0);
        Padded { image, psf, dims: Dim4::new(&size), crop }
    }

    fn forward(&self, x: &Array<f32>) -> Array<c32> {
        fft2_r2c(x, 1.0, 0, 0)
    }

    fn inverse(&self, x: &Array<c32>) -> Array<f32> {
        let n = self.dims.elements() as f64;
        fft2_c2r(x, 1.0 / n, self.dims[0] % 2 == 1)
    }

    fn cropped<O: HasAfEnum>(&self, x: &Array<f32>) -> Array<O> {
        index(x, &self.crop).cast()
    }
}

/// Iterative deconvolution of an image blurred by `kernel` (its point spread function),
/// `iterations` steps of `algo`, with ⊗ the convolution (by FFT on the padded grid) and `P`
/// the kernel:
/// - `LANDWEBER` (and `DEFAULT`): `x ← x + relaxation_factor * Pᵀ ⊗ (I - P ⊗ x)`;
/// - `RICHARDSONLUCY`: `x ← x * (Pᵀ ⊗ (I / (P ⊗ x)))`, where `relaxation_factor` is unused;
///
/// starting from the observed image `I`. As in ArrayFire, the image is first padded along
/// each dimension to at least its size plus the kernel's, by repeating its edges (the extra
/// split evenly before and after), the kernel's centre is element `(rows / 2, cols / 2)`, the
/// convolution is circular on the padded grid, and the result is the image's part of it.
/// ArrayFire pads to a size whose prime factors are at most 13 on its CPU backend and 7 on
/// its GPU backends; emberfire uses 7 everywhere, so that results agree across backends.
///
/// The input is one image (a vector is an image of one row or column; ArrayFire asks for two
/// dimensions). Accepts f32, i16, u16 and u8; the result is f32, computed in f32 (as in
/// ArrayFire), with no clamping of its range.
///
/// ```
/// use emberfire::{constant, dim4, iterative_deconv, Array, IterativeDeconvAlgo};
/// // an image blurred by a kernel that keeps it whole comes back as it was
/// let img = Array::new(&[1.0f32, 5.0, 2.0, 8.0, 3.0, 4.0], dim4!(2, 3));
/// let identity = constant(1.0f32, dim4!(1, 1));
/// let out = iterative_deconv(&img, &identity, 5, 0.5, IterativeDeconvAlgo::LANDWEBER);
/// let back = out.to_vec();
/// assert!(back.iter().zip(img.to_vec()).all(|(a, b)| (a - b).abs() < 1e-4));
/// ```
///
/// Panics if the input or the kernel is empty or has more than two dimensions,
/// `iterations` is 0, or `relaxation_factor` is not finite and positive.
pub fn iterative_deconv<T>(
    input: &Array<T>,
    kernel: &Array<f32>,
    iterations: u32,
    relaxation_factor: f32,
    algo: IterativeDeconvAlgo,
) -> Array<T::AbsOutType>
where
    T: DeconvInput,
    T::AbsOutType: HasAfEnum,
{
    let func = "iterative_deconv";
    assert!(iterations > 0, "{func}: iterations must be at least 1");
    assert!(
        relaxation_factor.is_finite() && relaxation_factor > 0.0,
        "{func}: relaxation_factor must be finite and positive (got {relaxation_factor})"
    );
    let p = Padded::new(func, input, kernel);
    let psf_conj = conjg(&p.psf);
    let estimate = match algo {
        IterativeDeconvAlgo::RICHARDSONLUCY => {
            let mut x = p.image.clone();
            for _ in 0..iterations {
                let blurred = p.inverse(&(&p.forward(&x) * &p.psf));
                let ratio = &p.image / &blurred;
                let correction = p.inverse(&(&p.forward(&ratio) * &psf_conj));
                x = &x * &correction;
                x.eval();
            }
            x
        }
        IterativeDeconvAlgo::LANDWEBER | IterativeDeconvAlgo::DEFAULT => {
            let observed = p.forward(&p.image);
            let power = abs(&p.psf);
            let power = &power * &power;
            let keep = (1.0f32 - &power * relaxation_factor).cast::<c32>();
            let gain = &(&psf_conj * &observed) * c32::new(relaxation_factor, 0.0);
            let mut x = observed.clone();
            for _ in 0..iterations {
                x = &(&x * &keep) + &gain;
                x.eval();
            }
            p.inverse(&x)
        }
    };
    p.cropped(&estimate)
}

/// Inverse (non-iterative) deconvolution of an image blurred by `kernel`, by Tikhonov's
/// regularisation: in the frequency domain, `X = I * conj(P) / (|P|² + gamma)`, with the
/// padding, kernel centring and cropping of [`iterative_deconv`]. `TIKHONOV` and `DEFAULT`
/// are the same algorithm.
///
/// Accepts f32, i16, u16 and u8 (one image); the result is f32, computed in f32.
///
/// ```
/// use emberfire::{constant, dim4, inverse_deconv, Array, InverseDeconvAlgo};
/// let img = Array::new(&[2.0f32, 4.0, 6.0, 8.0], dim4!(2, 2));
/// let identity = constant(1.0f32, dim4!(1, 1));
/// // |P|² = 1 everywhere: the image comes back scaled by 1 / (1 + gamma)
/// let out = inverse_deconv(&img, &identity, 1.0, InverseDeconvAlgo::TIKHONOV).to_vec();
/// assert!((out[3] - 4.0).abs() < 1e-4);
/// ```
///
/// Panics if the input or the kernel is empty or has more than two dimensions, or `gamma` is
/// not finite and positive.
pub fn inverse_deconv<T>(
    input: &Array<T>,
    kernel: &Array<f32>,
    gamma: f32,
    algo: InverseDeconvAlgo,
) -> Array<T::AbsOutType>
where
    T: DeconvInput,
    T::AbsOutType: HasAfEnum,
{
    let func = "inverse_deconv";
    assert!(
        gamma.is_finite() && gamma > 0.0,
        "{func}: gamma must be finite and positive (got {gamma})"
    );
    let (InverseDeconvAlgo::TIKHONOV | InverseDeconvAlgo::DEFAULT) = algo;
    let p = Padded::new(func, input, kernel);
    let observed = p.forward(&p.image);
    let power = abs(&p.psf);
    let denominator = (&(&power * &power) + gamma).cast::<c32>();
    let spectrum = &(&observed * &conjg(&p.psf)) / &denominator;
    p.cropped(&p.inverse(&spectrum))
}
