//! Vector fields: an arrow from each point along its direction, in two or three dimensions.

use super::axes::{axis_limits, extent, AxesSettings, Chart2d, Chart3d};
use super::frame::{Frame, Rect};

/// The colour of arrows.
pub(super) const ARROW: [u8; 3] = [0, 130, 60];

/// Draws arrows from `points[k][i]` to `points[k][i] + dirs[k][i]` (data units), `k` over the
/// 2 or 3 coordinates. The axes fit both the points and the arrows' tips unless set.
pub(super) fn render(
    frame: &mut Frame,
    content: Rect,
    axes: &AxesSettings,
    points: &[Vec<f64>],
    dirs: &[Vec<f64>],
) {
    let k = points.len();
    let tips: Vec<Vec<f64>> =
        (0..k).map(|c| points[c].iter().zip(&dirs[c]).map(|(p, d)| p + d).collect()).collect();
    let lim = |c: usize| {
        let both: Vec<f64> = points[c].iter().chain(&tips[c]).copied().collect();
        axis_limits(axes.limits[c], extent(&both))
    };
    let n = points[0].len();
    let mut segs = Vec::with_capacity(n);
    let mut chart3 = None;
    let clip = if k == 2 {
        let chart = Chart2d::draw_frame(frame, content, axes, lim(0), lim(1));
        for i in 0..n {
            let a = (chart.px(points[0][i]), chart.py(points[1][i]));
            let b = (chart.px(tips[0][i]), chart.py(tips[1][i]));
            segs.push((a, b, [points[0][i], points[1][i], tips[0][i], tips[1][i]]));
        }
        chart.area
    } else {
        let chart = Chart3d::new(content, [lim(0), lim(1), lim(2)]);
        chart.draw_axes(frame);
        for i in 0..n {
            let p = [points[0][i], points[1][i], points[2][i]];
            let t = [tips[0][i], tips[1][i], tips[2][i]];
            segs.push((chart.pixel(p), chart.pixel(t), [p[0], p[1], t[0], t[1]]));
        }
        chart3 = Some(chart);
        content
    };
    for (a, b, raw) in segs {
        if raw.iter().any(|v| !v.is_finite()) {
            continue;
        }
        frame.line(&clip, a, b, ARROW);
        arrow_head(frame, &clip, a, b);
    }
    if let Some(chart) = chart3 {
        chart.draw_labels(frame, axes);
    }
}

/// Two short strokes back from the tip `b`, 30 degrees either side of the shaft.
fn arrow_head(frame: &mut Frame, clip: &Rect, a: (i64, i64), b: (i64, i64)) {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1.0 {
        return;
    }
    let size = (len * 0.35).min(6.0);
    let (ux, uy) = (dx / len, dy / len);
    for s in [-1.0f64, 1.0] {
        let (sn, cs) = (s * 30f64.to_radians()).sin_cos();
        let (rx, ry) = (-(ux * cs - uy * sn), -(ux * sn + uy * cs));
        let end = (b.0 + (rx * size).round() as i64, b.1 + (ry * size).round() as i64);
        frame.line(clip, b, end, ARROW);
    }
}
