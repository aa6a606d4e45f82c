//! The result of a feature detector: five columns of f32 of one length.

use crate::array::Array;
use crate::dim4::Dim4;

/// The features a detector found: for each, its position (`x` the column, `y` the row), its
/// score, its orientation (radians) and its size (scale). Each is an f32 column of
/// [`num_features`](Features::num_features) elements, in the detector's order.
///
/// As in arrayfire-rust, cloning is cheap (the arrays are shared handles), and the type is
/// `Send + Sync`. Detectors that do not compute an orientation give 0, those without scales
/// a size of 1.
///
/// ```
/// use emberfire::Features;
/// let f = Features::new(3);
/// assert_eq!(f.num_features(), 3);
/// assert_eq!(f.xpos().to_vec(), vec![0.0; 3]);
/// ```
#[derive(Clone)]
pub struct Features {
    x: Array<f32>,
    y: Array<f32>,
    score: Array<f32>,
    orientation: Array<f32>,
    size: Array<f32>,
}

fn column(v: f32, n: u64) -> Array<f32> {
    crate::ops::data::constant(v, Dim4::new(&[n, 1, 1, 1]))
}

impl Features {
    /// `n` features, each with every field 0.
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(0).num_features(), 0);
    /// ```
    pub fn new(n: u64) -> Self {
        Features {
            x: column(0.0, n),
            y: column(0.0, n),
            score: column(0.0, n),
            orientation: column(0.0, n),
            size: column(0.0, n),
        }
    }

    /// Features from their columns; orientation and size default as for detectors that
    /// compute neither (0 and 1).
    pub(crate) fn from_columns(
        x: Array<f32>,
        y: Array<f32>,
        score: Array<f32>,
        orientation: Option<Array<f32>>,
        size: Option<Array<f32>>,
    ) -> Self {
        let n = x.elements() as u64;
        let as_column = |a: Array<f32>| {
            if a.dims()[0] == n && a.dims().elements() == n {
                a
            } else {
                crate::ops::movement::moddims(&a, Dim4::new(&[n, 1, 1, 1]))
            }
        };
        Features {
            x: as_column(x),
            y: as_column(y),
            score: as_column(score),
            orientation: orientation.map(as_column).unwrap_or_else(|| column(0.0, n)),
            size: size.map(as_column).unwrap_or_else(|| column(1.0, n)),
        }
    }

    /// No features.
    pub(crate) fn empty() -> Self {
        Features::new(0)
    }

    /// How many features there are.
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(5).num_features(), 5);
    /// ```
    pub fn num_features(&self) -> i64 {
        self.x.elements() as i64
    }

    /// The `x` coordinates (columns, dimension 1 of the image).
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(2).xpos().elements(), 2);
    /// ```
    pub fn xpos(&self) -> Array<f32> {
        self.x.clone()
    }

    /// The `y` coordinates (rows, dimension 0 of the image).
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(2).ypos().elements(), 2);
    /// ```
    pub fn ypos(&self) -> Array<f32> {
        self.y.clone()
    }

    /// The detector's score of each feature (larger is stronger).
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(2).score().elements(), 2);
    /// ```
    pub fn score(&self) -> Array<f32> {
        self.score.clone()
    }

    /// The orientation of each feature, in radians (0 where the detector computes none).
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(2).orientation().elements(), 2);
    /// ```
    pub fn orientation(&self) -> Array<f32> {
        self.orientation.clone()
    }

    /// The size (scale) of each feature (1 where the detector works at one scale).
    ///
    /// ```
    /// use emberfire::Features;
    /// assert_eq!(Features::new(2).size().elements(), 2);
    /// ```
    pub fn size(&self) -> Array<f32> {
        self.size.clone()
    }
}
