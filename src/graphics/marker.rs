//! Scatter markers: the shapes of arrayfire-rust's `MarkerType`, drawn at each point.

use super::frame::{Frame, Rect};

/// The marker a scatter plot draws at each point (arrayfire-rust's names and values).
///
/// Each marker is at most 7 x 7 pixels, centred on its point; `NONE` marks a point with its
/// single pixel.
///
/// ```
/// use emberfire::*;
/// let win = Window::new_offscreen(200, 150, "markers".to_string());
/// let x = Array::new(&[0.0f32, 1.0, 2.0], dim4!(3));
/// win.draw_scatter2(&x, &x, MarkerType::CIRCLE, None);
/// assert_eq!(MarkerType::CIRCLE as u32, 2);
/// ```
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MarkerType {
    /// No marker: the point's own pixel.
    NONE = 0,
    /// A small filled dot.
    POINT = 1,
    /// A hollow circle.
    CIRCLE = 2,
    /// A hollow square.
    SQUARE = 3,
    /// A hollow triangle, point up.
    TRIANGLE = 4,
    /// A diagonal cross.
    CROSS = 5,
    /// A plus sign.
    PLUS = 6,
    /// A star: a plus sign and a diagonal cross.
    STAR = 7,
}

/// Half the width of a marker, in pixels.
const R: i64 = 3;

/// Draws `marker` centred on `(x, y)`.
pub(super) fn draw(frame: &mut Frame, clip: &Rect, marker: MarkerType, x: i64, y: i64, c: [u8; 3]) {
    let mut line =
        |a: (i64, i64), b: (i64, i64)| frame.line(clip, (x + a.0, y + a.1), (x + b.0, y + b.1), c);
    match marker {
        MarkerType::NONE => line((0, 0), (0, 0)),
        MarkerType::POINT => {
            for dy in -1..=1 {
                line((-1, dy), (1, dy));
            }
        }
        MarkerType::CIRCLE => {
            // Midpoint circle of radius R.
            let (mut px, mut py, mut err) = (R, 0i64, 1 - R);
            while px >= py {
                for (sx, sy) in [
                    (px, py),
                    (py, px),
                    (-py, px),
                    (-px, py),
                    (-px, -py),
                    (-py, -px),
                    (py, -px),
                    (px, -py),
                ] {
                    line((sx, sy), (sx, sy));
                }
                py += 1;
                if err < 0 {
                    err += 2 * py + 1;
                } else {
                    px -= 1;
                    err += 2 * (py - px) + 1;
                }
            }
        }
        MarkerType::SQUARE => {
            line((-R, -R), (R, -R));
            line((R, -R), (R, R));
            line((R, R), (-R, R));
            line((-R, R), (-R, -R));
        }
        MarkerType::TRIANGLE => {
            line((0, -R), (R, R));
            line((R, R), (-R, R));
            line((-R, R), (0, -R));
        }
        MarkerType::CROSS => {
            line((-R, -R), (R, R));
            line((-R, R), (R, -R));
        }
        MarkerType::PLUS => {
            line((-R, 0), (R, 0));
            line((0, -R), (0, R));
        }
        MarkerType::STAR => {
            line((-R, 0), (R, 0));
            line((0, -R), (0, R));
            line((-2, -2), (2, 2));
            line((-2, 2), (2, -2));
        }
    }
}
