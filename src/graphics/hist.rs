//! `draw_hist`: a histogram's counts as bars side by side over `[minval, maxval]`.

use super::axes::{axis_limits, extent, AxesSettings, Chart2d};
use super::frame::{Frame, Rect};

/// The colour of histogram bars.
pub(super) const BAR: [u8; 3] = [70, 130, 180];

/// Draws `counts` as bars: bin `i` spans `minval + i * (maxval - minval) / n` to the next
/// bin's start, from 0 up to its count. The y axis runs from 0 to the largest count unless
/// the user set its limits.
pub(super) fn render(
    frame: &mut Frame,
    content: Rect,
    axes: &AxesSettings,
    counts: &[f64],
    minval: f64,
    maxval: f64,
) {
    let x = axis_limits(axes.limits[0], Some([minval, maxval]));
    let top = extent(counts).map(|[_, hi]| [0.0, hi.max(0.0)]);
    let y = axis_limits(axes.limits[1], top);
    let chart = Chart2d::draw_frame(frame, content, axes, x, y);
    let n = counts.len();
    let width = (maxval - minval) / n as f64;
    for (i, &c) in counts.iter().enumerate() {
        if !c.is_finite() {
            continue;
        }
        let left = chart.px(minval + i as f64 * width);
        let right = chart.px(minval + (i + 1) as f64 * width) - 1;
        let (base, top) = (chart.py(y[0].max(0.0).min(y[1])), chart.py(c));
        let (y0, y1) = (top.min(base), top.max(base));
        let bar = Rect::new(left, y0, (right - left + 1).max(1), y1 - y0 + 1);
        let clipped = intersect(&bar, &chart.area);
        frame.fill(&clipped, BAR);
    }
}

fn intersect(a: &Rect, b: &Rect) -> Rect {
    let x0 = a.x.max(b.x);
    let y0 = a.y.max(b.y);
    let x1 = (a.x + a.w).min(b.x + b.w);
    let y1 = (a.y + a.h).min(b.y + b.h);
    Rect::new(x0, y0, x1 - x0, y1 - y0)
}
