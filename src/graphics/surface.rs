//! `draw_surface`: a height field as triangles seen in the 3D view, coloured by height
//! through the window's colour map, farthest first (painter's order).

use super::axes::{axis_limits, extent, AxesSettings, Chart3d};
use super::colormap::ColorMap;
use super::frame::{Frame, Rect};

/// A projected triangle: its depth, its corners on the screen, and its colour.
type Triangle = (f64, [(f64, f64); 3], [u8; 3]);

/// Draws the surface `z[i + j * m]` over the points `(x[i], y[j])` (or `(x[i + j * m],
/// y[i + j * m])` when the coordinates are full grids). Each grid square is two triangles
/// whose colour is the colour map at the mean of their corners' heights, scaled from the z
/// limits to `[0, 1]`.
#[allow(clippy::too_many_arguments)]
pub(super) fn render(
    frame: &mut Frame,
    content: Rect,
    axes: &AxesSettings,
    cmap: ColorMap,
    xs: &[f64],
    ys: &[f64],
    zs: &[f64],
    m: usize,
    n: usize,
) {
    let grid = xs.len() == zs.len() && m * n == zs.len() && !(xs.len() == m && ys.len() == n);
    let point = |i: usize, j: usize| -> [f64; 3] {
        if grid {
            [xs[i + j * m], ys[i + j * m], zs[i + j * m]]
        } else {
            [xs[i], ys[j], zs[i + j * m]]
        }
    };
    let limits = [
        axis_limits(axes.limits[0], extent(xs)),
        axis_limits(axes.limits[1], extent(ys)),
        axis_limits(axes.limits[2], extent(zs)),
    ];
    let chart = Chart3d::new(content, limits);
    chart.draw_axes(frame);
    let [zlo, zhi] = limits[2];
    let mut tris: Vec<Triangle> = Vec::new();
    for j in 0..n.saturating_sub(1) {
        for i in 0..m.saturating_sub(1) {
            let corners = [point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1)];
            for t in [[0, 1, 2], [0, 2, 3]] {
                let p = t.map(|k| corners[k]);
                if p.iter().flatten().any(|v| !v.is_finite()) {
                    continue;
                }
                let height = (p[0][2] + p[1][2] + p[2][2]) / 3.0;
                let colour = cmap.rgb((height - zlo) / (zhi - zlo));
                let s = p.map(|q| chart.project_unit(chart.unit(q)));
                let depth = (s[0].2 + s[1].2 + s[2].2) / 3.0;
                tris.push((depth, s.map(|(x, y, _)| (x, y)), colour));
            }
        }
    }
    tris.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, t, c) in &tris {
        frame.triangle(&content, *t, *c);
    }
    chart.draw_labels(frame, axes);
}
