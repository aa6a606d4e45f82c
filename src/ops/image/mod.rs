//! Image processing with arrayfire-rust's names, signatures and enums: colour spaces
//! ([`rgb2gray`], [`rgb2hsv`], [`rgb2ycbcr`], [`color_space`] and their inverses), image
//! files ([`load_image`], [`save_image`] and their native forms), filters
//! ([`gaussian_kernel`], [`sobel`], [`gradient`], [`sat`], [`medfilt`], [`minfilt`],
//! [`maxfilt`], [`bilateral`]), morphology ([`dilate`], [`erode`], [`dilate3`], [`erode3`]),
//! [`moments`], [`histogram`] and [`hist_equal`], patches ([`unwrap`], [`wrap`]), geometric
//! transforms ([`resize`], [`transform`], [`rotate`], [`translate`], [`scale`], [`skew`],
//! [`transform_coords`]), and the iterative
//! algorithms: connected components ([`regions`]), edges ([`canny`]), region growing
//! ([`confidence_cc`]), smoothing ([`anisotropic_diffusion`], [`mean_shift`]) and
//! deconvolution ([`iterative_deconv`], [`inverse_deconv`]).
//!
//! Conventions, as in ArrayFire: an image is column-major, `y` (rows) along dimension 0 and
//! `x` (columns) along dimension 1; colour channels lie along dimension 2; dimension 3 (and
//! dimension 2 where a function works on one channel) is a batch of images processed
//! independently.
//!
//! Nearly every function here is built from emberfire's backend-neutral operations (element-wise
//! arithmetic and `select`, reads shifted by an index map, gathers, strided views and
//! assignment, joins, reductions and scans), so it runs on every backend and gives the same
//! results on each: a filter over a window is one fused pass that reads the input once per
//! window offset, and nothing is computed on the host but small tables (a Gaussian kernel's
//! weights, a mask's offsets, the source rows of a reflected border) and the few scalars
//! ArrayFire reads back too (a histogram's extremes in `hist_equal`, an image's maximum when
//! saving). The exceptions are the geometric transforms and [`histogram`], which are kernels
//! of the image family in each backend (`backend::image`): a warp samples at computed points
//! and a histogram scatters counts, neither of which an element-wise pass can express.
//!
//! The algorithms that iterate until nothing changes (component labels, Canny's hysteresis,
//! region growing) repeat one fused element-wise step of shifted reads and a gather, and
//! check for convergence with one reduction every few steps rather than every step, so the
//! host waits on the device rarely (see each function's documentation). Mean shift moves
//! every pixel's window by its own amount, so it reads each window offset with a gather,
//! and checks in the same way whether any pixel still moves.
//!
//! Where ArrayFire's backends disagree or leave a case undefined, emberfire picks one rule
//! and says so in the function's documentation (for example, what a morphological filter
//! reads outside the image, or the gradient of a dimension of size 1).

mod bilateral;
mod border;
pub(crate) mod calc;
mod canny;
mod color;
mod confidence;
mod deconv;
mod diffusion;
mod filter;
mod histogram;
mod io;
mod labels;
mod mean_shift;
mod moments;
mod morph;
mod regions;
mod tiled;
mod transform;
mod window;
mod wrap;

pub use bilateral::bilateral;
pub use canny::canny;
pub use color::{color_space, gray2rgb, hsv2rgb, rgb2gray, rgb2hsv, rgb2ycbcr, ycbcr2rgb};
pub use confidence::confidence_cc;
pub use deconv::{inverse_deconv, iterative_deconv};
pub use diffusion::anisotropic_diffusion;
pub use filter::{gaussian_kernel, gradient, sat, sobel};
pub use histogram::{hist_equal, histogram};
pub use io::{
    is_imageio_available, load_image, load_image_native, save_image, save_image_native,
    try_load_image, try_load_image_native, try_save_image, try_save_image_native,
};
pub use mean_shift::mean_shift;
pub use moments::{moments, moments_all};
pub use morph::{dilate, dilate3, erode, erode3};
pub use regions::regions;
pub use transform::{resize, rotate, scale, skew, transform, transform_coords, translate};
pub use window::{maxfilt, medfilt, medfilt1, minfilt};
pub use wrap::{unwrap, wrap};

/// Colour spaces of [`color_space`].
///
/// arrayfire-rust names `GRAY`, `RGB` and `HSV`; emberfire adds `YCbCr` (ArrayFire's C API
/// has it too), converted with the ITU-R BT.601 standard as ArrayFire does.
///
/// ```
/// use emberfire::{color_space, dim4, Array, ColorSpace};
/// let rgb = Array::new(&[1.0f32, 0.0, 0.0], dim4!(1, 1, 3));
/// let hsv = color_space(&rgb, ColorSpace::HSV, ColorSpace::RGB);
/// assert_eq!(hsv.to_vec(), vec![0.0, 1.0, 1.0]);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColorSpace {
    /// One channel of intensity.
    GRAY = 0,
    /// Red, green and blue, in `[0, 1]` for the conversions to HSV and YCbCr.
    RGB = 1,
    /// Hue, saturation and value, each in `[0, 1]`.
    HSV = 2,
    /// Luma and two chroma channels (`Y` in `[16, 235]`, `Cb` and `Cr` in `[16, 240]`).
    YCbCr = 3,
}

/// The ITU-R standards of [`rgb2ycbcr`] and [`ycbcr2rgb`], with their luma weights of blue
/// (`kb`) and red (`kr`).
///
/// ```
/// use emberfire::{dim4, rgb2ycbcr, Array, YCCStd};
/// let white = Array::new(&[1.0f64, 1.0, 1.0], dim4!(1, 1, 3));
/// let y = rgb2ycbcr(&white, YCCStd::YCC_709).to_vec();
/// assert!((y[0] - 235.0).abs() < 1e-9 && (y[1] - 128.0).abs() < 1e-9);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum YCCStd {
    /// BT.601: `kb = 0.114`, `kr = 0.299`.
    YCC_601 = 601,
    /// BT.709: `kb = 0.0722`, `kr = 0.2126`.
    YCC_709 = 709,
    /// BT.2020: `kb = 0.0593`, `kr = 0.2627`.
    YCC_2020 = 2020,
}

impl YCCStd {
    /// The weights `(kb, kr)` of blue and red in the luma.
    pub(crate) fn weights(self) -> (f64, f64) {
        match self {
            YCCStd::YCC_601 => (0.114, 0.299),
            YCCStd::YCC_709 => (0.0722, 0.2126),
            YCCStd::YCC_2020 => (0.0593, 0.2627),
        }
    }
}

/// Which neighbours are connected, for connected-component labelling.
///
/// ```
/// use emberfire::Connectivity;
/// assert_eq!(Connectivity::EIGHT as u32, 8);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Connectivity {
    /// The four neighbours that share an edge.
    FOUR = 4,
    /// The eight neighbours that share an edge or a corner.
    EIGHT = 8,
}

/// The image moments [`moments`] computes: single moments, or `FIRST_ORDER` for all four.
/// The values are bit flags, as in ArrayFire.
///
/// ```
/// use emberfire::{dim4, moments_all, Array, MomentType};
/// let img = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// assert_eq!(moments_all(&img, MomentType::M00), 10.0);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MomentType {
    /// The sum of the pixel values.
    M00 = 1,
    /// The sum of the values weighted by the row index (dimension 0).
    M01 = 2,
    /// The sum of the values weighted by the column index (dimension 1).
    M10 = 4,
    /// The sum of the values weighted by the product of the two indices.
    M11 = 8,
    /// All four, in the order M00, M01, M10, M11.
    FIRST_ORDER = 15,
}

/// How Canny edge detection picks its thresholds.
///
/// ```
/// use emberfire::CannyThresholdType;
/// assert_ne!(CannyThresholdType::MANUAL, CannyThresholdType::OTSU);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CannyThresholdType {
    /// The caller's thresholds.
    MANUAL = 0,
    /// The high threshold from Otsu's method.
    OTSU = 1,
}

/// The diffusion equation of anisotropic diffusion.
///
/// ```
/// use emberfire::DiffusionEq;
/// assert_eq!(DiffusionEq::DEFAULT as u32, 0);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiffusionEq {
    /// The quadratic form.
    QUADRATIC = 1,
    /// The exponential form.
    EXPONENTIAL = 2,
    /// The library's default (exponential).
    DEFAULT = 0,
}

/// The flux function of anisotropic diffusion.
///
/// ```
/// use emberfire::FluxFn;
/// assert_eq!(FluxFn::MCDE as u32, 2);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FluxFn {
    /// Gradient-based flux.
    GRADIENT = 1,
    /// Modified curvature diffusion equation.
    MCDE = 2,
    /// The library's default (gradient).
    DEFAULT = 0,
}

/// Algorithms of iterative deconvolution.
///
/// ```
/// use emberfire::IterativeDeconvAlgo;
/// assert_eq!(IterativeDeconvAlgo::RICHARDSONLUCY as u32, 2);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IterativeDeconvAlgo {
    /// Landweber's iteration.
    LANDWEBER = 1,
    /// The Richardson-Lucy algorithm.
    RICHARDSONLUCY = 2,
    /// The library's default (Landweber).
    DEFAULT = 0,
}

/// Algorithms of inverse deconvolution.
///
/// ```
/// use emberfire::InverseDeconvAlgo;
/// assert_eq!(InverseDeconvAlgo::TIKHONOV as u32, 1);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InverseDeconvAlgo {
    /// Tikhonov regularisation.
    TIKHONOV = 1,
    /// The library's default (Tikhonov).
    DEFAULT = 0,
}
