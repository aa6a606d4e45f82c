//! Line plots and scatter plots, in two and three dimensions: points joined in order by
//! one-pixel lines, or marked one by one.

use super::axes::{axis_limits, extent, AxesSettings, Chart2d, Chart3d};
use super::frame::{Frame, Rect};
use super::marker::{self, MarkerType};

/// The colour of plotted lines.
pub(super) const LINE: [u8; 3] = [0, 90, 200];
/// The colour of scatter markers.
pub(super) const MARKER: [u8; 3] = [200, 30, 30];

/// How points are drawn.
#[derive(Clone, Copy)]
pub(super) enum Style {
    Line,
    Markers(MarkerType),
}

/// Draws 2D points: `coords` holds the x and the y values.
pub(super) fn render2(
    frame: &mut Frame,
    content: Rect,
    axes: &AxesSettings,
    coords: &[Vec<f64>],
    style: Style,
) {
    let (xs, ys) = (&coords[0], &coords[1]);
    let x = axis_limits(axes.limits[0], extent(xs));
    let y = axis_limits(axes.limits[1], extent(ys));
    let chart = Chart2d::draw_frame(frame, content, axes, x, y);
    let pts: Vec<Option<(i64, i64)>> = xs
        .iter()
        .zip(ys)
        .map(|(&a, &b)| (a.is_finite() && b.is_finite()).then(|| (chart.px(a), chart.py(b))))
        .collect();
    draw_points(frame, &chart.area, &pts, style);
}

/// Draws 3D points: `coords` holds the x, y and z values.
pub(super) fn render3(
    frame: &mut Frame,
    content: Rect,
    axes: &AxesSettings,
    coords: &[Vec<f64>],
    style: Style,
) {
    let limits = [0, 1, 2].map(|i| axis_limits(axes.limits[i], extent(&coords[i])));
    let chart = Chart3d::new(content, limits);
    chart.draw_axes(frame);
    let pts: Vec<Option<(i64, i64)>> = (0..coords[0].len())
        .map(|i| {
            let p = [coords[0][i], coords[1][i], coords[2][i]];
            p.iter().all(|v| v.is_finite()).then(|| chart.pixel(p))
        })
        .collect();
    draw_points(frame, &content, &pts, style);
    chart.draw_labels(frame, axes);
}

/// Joins or marks points already on the screen; a missing (non-finite) point breaks a line.
fn draw_points(frame: &mut Frame, clip: &Rect, pts: &[Option<(i64, i64)>], style: Style) {
    match style {
        Style::Line => {
            for w in pts.windows(2) {
                if let (Some(a), Some(b)) = (w[0], w[1]) {
                    frame.line(clip, a, b, LINE);
                }
            }
            if let [Some(p)] = pts {
                frame.line(clip, *p, *p, LINE);
            }
        }
        Style::Markers(m) => {
            for &(x, y) in pts.iter().flatten() {
                marker::draw(frame, clip, m, x, y, MARKER);
            }
        }
    }
}
