//! Computer vision with arrayfire-rust's names, signatures and enums: the [`Features`] that
//! detectors return, corner and blob detectors ([`fast`], [`harris`], [`susan`], [`orb`],
//! [`dog`]), descriptor matching ([`nearest_neighbour`], [`hamming_matcher`]), template
//! matching ([`match_template`]) and the estimation of a projective transform between two
//! point sets ([`homography`]).
//!
//! Conventions, as in ArrayFire: an image is column-major, `y` (rows) along dimension 0 and
//! `x` (columns) along dimension 1, and a feature's `x` is its column, its `y` its row.
//! Detectors take one 2D image and return features in ArrayFire's order (the order of its
//! CPU backend, which is deterministic: FAST in row-major scan order, Harris and SUSAN in
//! column-major order, Harris with `max_corners` by decreasing response).
//!
//! Every detector is built from emberfire's backend-neutral operations, so the same code
//! runs on each backend: the response of every pixel is one fused element-wise pass over
//! shifted reads of the image (the 16 pixels of FAST's circle, SUSAN's disc, the Gaussian
//! window of Harris as a separable convolution), non-maximal suppression is a comparison
//! with the eight shifted responses, and the surviving pixels are gathered with
//! [`locate`](crate::locate) and [`lookup`](crate::lookup), then ordered with
//! [`sort_index`](crate::sort_index). Matching is a reduction over the descriptor dimension
//! of broadcast differences (or a matrix product, for SSD of floats), followed by a
//! minimum or a sort along the train dimension. Only what is small and sequential runs on
//! the host: the tables of filter weights, a template's pixel values, and the model fits of
//! [`homography`] on four points at a time.

mod common;
mod dog;
mod fast;
mod features;
mod harris;
mod homography;
mod matching;
mod orb;
mod susan;
mod template;

pub use dog::dog;
pub use fast::fast;
pub use features::Features;
pub use harris::harris;
pub use homography::homography;
pub use matching::{hamming_matcher, nearest_neighbour};
pub use orb::orb;
pub use susan::susan;
pub use template::match_template;

/// How two descriptors or an image window and a template are compared.
///
/// The `Z` forms subtract each vector's mean first, the `L` forms scale the template (or the
/// query) by the ratio of the two means. `NCC` and `ZNCC` are correlations (larger is more
/// alike); the others are distances (smaller is more alike). `SHD` counts differing bits of
/// integer descriptors.
///
/// ```
/// use emberfire::MatchType;
/// assert_eq!(MatchType::SSD as u32, 3);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchType {
    /// Sum of absolute differences.
    SAD = 0,
    /// Zero-mean sum of absolute differences.
    ZSAD = 1,
    /// Locally scaled sum of absolute differences.
    LSAD = 2,
    /// Sum of squared differences.
    SSD = 3,
    /// Zero-mean sum of squared differences.
    ZSSD = 4,
    /// Locally scaled sum of squared differences.
    LSSD = 5,
    /// Normalised cross-correlation.
    NCC = 6,
    /// Zero-mean normalised cross-correlation.
    ZNCC = 7,
    /// Sum of Hamming distances (differing bits).
    SHD = 8,
}

/// How [`homography`] scores a candidate transform.
///
/// ```
/// use emberfire::HomographyType;
/// assert_eq!(HomographyType::LMEDS as u32, 1);
/// ```
#[allow(clippy::upper_case_acronyms)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HomographyType {
    /// Random sample consensus: the transform with the most points within the inlier
    /// threshold wins.
    RANSAC = 0,
    /// Least median of squares: the transform with the smallest median squared error wins.
    LMEDS = 1,
}
