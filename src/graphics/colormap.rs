//! Colour maps: how a single-channel image or a surface turns a value into a colour.

/// The colour maps of arrayfire-rust, applied to single-channel images and to surfaces.
///
/// A value `t` normalised to `[0, 1]` (an image's value as drawn, a surface's height within
/// its z limits) is looked up in the map. emberfire computes each map from a short formula
/// (see [`ColorMap::rgb`]); the colours resemble ArrayFire's but are not copied from its tables.
///
/// ```
/// use emberfire::ColorMap;
/// assert_eq!(ColorMap::DEFAULT.rgb(0.0), [0, 0, 0]);
/// assert_eq!(ColorMap::DEFAULT.rgb(1.0), [255, 255, 255]);
/// assert_eq!(ColorMap::HEAT.rgb(1.0), [255, 255, 255]);
/// ```
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ColorMap {
    /// Grey levels from black (0) to white (1).
    #[default]
    DEFAULT = 0,
    /// The visible spectrum: violet at 0 through blue, green and yellow to red at 1.
    SPECTRUM = 1,
    /// Every hue once around the colour wheel: red at 0, through green and blue, back to red.
    COLORS = 2,
    /// Black through red to white.
    RED = 3,
    /// A calm map from deep blue through teal to pink.
    MOOD = 4,
    /// Black through red and yellow to white, as metal heats.
    HEAT = 5,
    /// Black through blue to white.
    BLUE = 6,
}

impl ColorMap {
    /// The colour, as red, green and blue bytes, of the value `t` (clamped to `[0, 1]`; NaN
    /// gives the colour of 0).
    ///
    /// The maps, with `c(x) = clamp(x, 0, 1)`: `DEFAULT` is `(t, t, t)`; `RED` is
    /// `(c(2t), c(2t-1), c(2t-1))` and `BLUE` `(c(2t-1), c(2t-1), c(2t))`; `HEAT` is
    /// `(c(3t), c(3t-1), c(3t-2))`; `SPECTRUM` is the fully saturated hue `270 (1 - t)`
    /// degrees and `COLORS` the hue `360 t`; `MOOD` interpolates linearly between
    /// (0.10, 0.15, 0.45) at 0, (0.20, 0.65, 0.65) at 0.5 and (1.00, 0.70, 0.85) at 1. Each
    /// component is then rounded to the nearest of 0..=255.
    ///
    /// ```
    /// use emberfire::ColorMap;
    /// assert_eq!(ColorMap::RED.rgb(0.5), [255, 0, 0]);
    /// assert_eq!(ColorMap::SPECTRUM.rgb(1.0), [255, 0, 0]);
    /// assert_eq!(ColorMap::BLUE.rgb(0.25), [0, 0, 128]);
    /// ```
    pub fn rgb(self, t: f64) -> [u8; 3] {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let c = |x: f64| x.clamp(0.0, 1.0);
        let f = match self {
            ColorMap::DEFAULT => [t, t, t],
            ColorMap::RED => [c(2.0 * t), c(2.0 * t - 1.0), c(2.0 * t - 1.0)],
            ColorMap::BLUE => [c(2.0 * t - 1.0), c(2.0 * t - 1.0), c(2.0 * t)],
            ColorMap::HEAT => [c(3.0 * t), c(3.0 * t - 1.0), c(3.0 * t - 2.0)],
            ColorMap::SPECTRUM => hue(270.0 * (1.0 - t)),
            ColorMap::COLORS => hue(360.0 * t),
            ColorMap::MOOD => {
                let (a, b, u) = if t < 0.5 {
                    ([0.10, 0.15, 0.45], [0.20, 0.65, 0.65], t * 2.0)
                } else {
                    ([0.20, 0.65, 0.65], [1.00, 0.70, 0.85], t * 2.0 - 1.0)
                };
                [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * u)
            }
        };
        f.map(|x| (x * 255.0).round() as u8)
    }
}

/// A fully saturated, fully bright colour of hue `h` degrees.
fn hue(h: f64) -> [f64; 3] {
    let h = h.rem_euclid(360.0) / 60.0;
    let x = 1.0 - (h % 2.0 - 1.0).abs();
    match h as u32 {
        0 => [1.0, x, 0.0],
        1 => [x, 1.0, 0.0],
        2 => [0.0, 1.0, x],
        3 => [0.0, x, 1.0],
        4 => [x, 0.0, 1.0],
        _ => [1.0, 0.0, x],
    }
}
