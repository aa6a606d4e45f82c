//! Axes: the settings a cell keeps (limits, titles, label formats), the 2D chart frame (a box
//! with ticks and labels around the plot area) and the 3D view (a fixed orthographic
//! projection of the limits' cube).
//!
//! The 2D plot area is the cell's content less [`MARGIN_LEFT`], [`MARGIN_TOP`],
//! [`MARGIN_RIGHT`] and [`MARGIN_BOTTOM`] pixels; the value `xmin` falls on its first column
//! and `xmax` on its last, `ymin` on its last row and `ymax` on its first, and a value in
//! between on `first + round(fraction * (size - 1))`. The box is drawn one pixel outside the
//! plot area, so it never hides data; each axis has [`TICKS`] + 1 evenly spaced ticks,
//! labelled with the axis's label format.

use super::format::format_number;
use super::frame::{Frame, Rect, INK};

/// Pixels left of a 2D plot area: the y axis's title, its tick labels and ticks.
pub(super) const MARGIN_LEFT: i64 = 64;
/// Pixels above a 2D plot area.
pub(super) const MARGIN_TOP: i64 = 10;
/// Pixels right of a 2D plot area (room for the last x label).
pub(super) const MARGIN_RIGHT: i64 = 20;
/// Pixels below a 2D plot area: the x axis's tick labels and title.
pub(super) const MARGIN_BOTTOM: i64 = 32;
/// Intervals between ticks on each axis.
pub(super) const TICKS: usize = 4;

/// What `set_axes_*` recorded for one cell (or for the whole window).
#[derive(Clone, Debug)]
pub(super) struct AxesSettings {
    /// Limits set by the user, per axis; `None` lets each draw fit its data.
    pub limits: [Option<[f64; 2]>; 3],
    pub titles: [String; 3],
    pub formats: [String; 3],
}

impl Default for AxesSettings {
    fn default() -> Self {
        AxesSettings {
            limits: [None; 3],
            titles: ["X Axis".into(), "Y Axis".into(), "Z Axis".into()],
            formats: ["%4.1f".into(), "%4.1f".into(), "%4.1f".into()],
        }
    }
}

/// Limits for `set_axes_limits_*`: as given when `exact`, else widened outwards to a multiple of
/// a round step (a power of ten a tenth of the range's order of magnitude), as ArrayFire
/// rounds inexact limits to readable values.
pub(super) fn user_limits(lo: f64, hi: f64, exact: bool) -> [f64; 2] {
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if exact || !(hi - lo).is_finite() || hi == lo {
        return [lo, hi];
    }
    let step = 10f64.powf((hi - lo).log10().floor() - 1.0);
    [(lo / step).floor() * step, (hi / step).ceil() * step]
}

/// The smallest and largest finite values, or `None` when there are none.
pub(super) fn extent(values: &[f64]) -> Option<[f64; 2]> {
    let mut it = values.iter().copied().filter(|v| v.is_finite());
    let first = it.next()?;
    Some(it.fold([first, first], |[lo, hi], v| [lo.min(v), hi.max(v)]))
}

/// The limits an axis uses: the user's, else the data's extent; a range of zero width is
/// widened by one on each side (by 0.5 around 0..1 data) so that every value has a place.
pub(super) fn axis_limits(user: Option<[f64; 2]>, data: Option<[f64; 2]>) -> [f64; 2] {
    let [lo, hi] = user.or(data).unwrap_or([0.0, 1.0]);
    if hi > lo {
        [lo, hi]
    } else {
        [lo - 1.0, hi + 1.0]
    }
}

/// A 2D chart: the plot area and the limits that map data onto it.
pub(super) struct Chart2d {
    pub area: Rect,
    pub x: [f64; 2],
    pub y: [f64; 2],
}

impl Chart2d {
    /// Lays out a chart in `content` and draws its frame: box, ticks, labels and titles.
    pub fn draw_frame(
        frame: &mut Frame,
        content: Rect,
        axes: &AxesSettings,
        x: [f64; 2],
        y: [f64; 2],
    ) -> Chart2d {
        let area = content.inset(MARGIN_LEFT, MARGIN_TOP, MARGIN_RIGHT, MARGIN_BOTTOM);
        let chart = Chart2d { area, x, y };
        if area.w < 2 || area.h < 2 {
            return chart;
        }
        let (l, t) = (area.x - 1, area.y - 1);
        let (r, b) = (area.x + area.w, area.y + area.h);
        for (p, q) in [((l, t), (r, t)), ((r, t), (r, b)), ((r, b), (l, b)), ((l, b), (l, t))] {
            frame.line(&content, p, q, INK);
        }
        for k in 0..=TICKS {
            let f = k as f64 / TICKS as f64;
            // x ticks below the box, labels centred under them.
            let px = area.x + (f * (area.w - 1) as f64).round() as i64;
            frame.line(&content, (px, b), (px, b + 3), INK);
            let label = format_number(&axes.formats[0], x[0] + f * (x[1] - x[0]));
            let label = label.trim();
            frame.text(&content, px - super::font::width(label) / 2, b + 6, label, INK);
            // y ticks left of the box, labels right-aligned before them.
            let py = area.y + area.h - 1 - (f * (area.h - 1) as f64).round() as i64;
            frame.line(&content, (l - 3, py), (l, py), INK);
            let label = format_number(&axes.formats[1], y[0] + f * (y[1] - y[0]));
            let label = label.trim();
            frame.text(&content, l - 6 - super::font::width(label), py - 4, label, INK);
        }
        let xt = &axes.titles[0];
        frame.text(&content, area.x + (area.w - super::font::width(xt)) / 2, b + 18, xt, INK);
        let yt = &axes.titles[1];
        frame.text_up(
            &content,
            content.x + 2,
            area.y + (area.h - super::font::width(yt)) / 2,
            yt,
            INK,
        );
        chart
    }

    /// The pixel column of the value `v` on the x axis (may lie outside the area).
    pub fn px(&self, v: f64) -> i64 {
        let f = (v - self.x[0]) / (self.x[1] - self.x[0]);
        self.area.x + (f * (self.area.w - 1) as f64).round().clamp(-1e9, 1e9) as i64
    }

    /// The pixel row of the value `v` on the y axis (may lie outside the area).
    pub fn py(&self, v: f64) -> i64 {
        let f = (v - self.y[0]) / (self.y[1] - self.y[0]);
        self.area.y + self.area.h
            - 1
            - (f * (self.area.h - 1) as f64).round().clamp(-1e9, 1e9) as i64
    }
}

/// Turn of the 3D view about the z axis, in degrees.
pub(super) const AZIMUTH_DEG: f64 = 45.0;
/// Height of the 3D view's eye above the x-y plane, in degrees.
pub(super) const ELEVATION_DEG: f64 = 30.0;
/// Pixels kept free around a 3D view.
pub(super) const MARGIN_3D: i64 = 24;

/// A 3D chart: an orthographic view of the limits' cube, each axis scaled to `[-1, 1]`, turned
/// by [`AZIMUTH_DEG`] about z and seen from [`ELEVATION_DEG`] above, scaled to fit the cell's
/// content less [`MARGIN_3D`] on each side and centred in it.
pub(super) struct Chart3d {
    pub clip: Rect,
    pub limits: [[f64; 2]; 3],
    cx: f64,
    cy: f64,
    scale: f64,
}

impl Chart3d {
    pub fn new(content: Rect, limits: [[f64; 2]; 3]) -> Chart3d {
        let area = content.inset(MARGIN_3D, MARGIN_3D, MARGIN_3D, MARGIN_3D);
        let (sa, ca) = ELEVATION_DEG.to_radians().sin_cos();
        let half_w = std::f64::consts::SQRT_2;
        let half_h = ca + std::f64::consts::SQRT_2 * sa;
        let scale = (area.w as f64 / (2.0 * half_w)).min(area.h as f64 / (2.0 * half_h)).max(0.0);
        Chart3d {
            clip: content,
            limits,
            cx: area.x as f64 + area.w as f64 / 2.0,
            cy: area.y as f64 + area.h as f64 / 2.0,
            scale,
        }
    }

    /// A data point's position scaled to the cube `[-1, 1]^3`.
    pub fn unit(&self, p: [f64; 3]) -> [f64; 3] {
        [0, 1, 2].map(|i| {
            let [lo, hi] = self.limits[i];
            2.0 * (p[i] - lo) / (hi - lo) - 1.0
        })
    }

    /// Screen position (x right, y down) and depth (larger is farther) of a point of the unit
    /// cube.
    pub fn project_unit(&self, u: [f64; 3]) -> (f64, f64, f64) {
        let (sz, cz) = AZIMUTH_DEG.to_radians().sin_cos();
        let (se, ce) = ELEVATION_DEG.to_radians().sin_cos();
        let xr = u[0] * cz - u[1] * sz;
        let yr = u[0] * sz + u[1] * cz;
        let up = u[2] * ce + yr * se;
        let depth = yr * ce - u[2] * se;
        (self.cx + self.scale * xr, self.cy - self.scale * up, depth)
    }

    /// Screen position of a data point, rounded to a pixel.
    pub fn pixel(&self, p: [f64; 3]) -> (i64, i64) {
        let (x, y, _) = self.project_unit(self.unit(p));
        (x.round().clamp(-1e9, 1e9) as i64, y.round().clamp(-1e9, 1e9) as i64)
    }

    /// The screen pixel of a point of the unit cube.
    fn unit_pixel(&self, u: [f64; 3]) -> (i64, i64) {
        let (x, y, _) = self.project_unit(u);
        (x.round() as i64, y.round() as i64)
    }

    /// Draws the cube's three axes from the corner of the lowest limits (the floor's front
    /// corner in this view: x runs to the right, y to the left, z up). Drawn before the data,
    /// which may then cover them.
    pub fn draw_axes(&self, frame: &mut Frame) {
        let o = self.unit_pixel(AXIS_ORIGIN);
        for end in AXIS_ENDS {
            frame.line(&self.clip, o, self.unit_pixel(end), INK);
        }
    }

    /// Writes each axis's title and upper limit at its end, and the lower z limit at the
    /// corner, kept inside the cell. Written after the data, so that it stays readable.
    pub fn draw_labels(&self, frame: &mut Frame, axes: &AxesSettings) {
        let o = self.unit_pixel(AXIS_ORIGIN);
        let fit = |x: i64, text: &str| {
            let right = self.clip.x + self.clip.w - super::font::width(text);
            x.min(right).max(self.clip.x)
        };
        for (i, end) in AXIS_ENDS.iter().enumerate() {
            let (ex, ey) = self.unit_pixel(*end);
            let hi = format_number(&axes.formats[i], self.limits[i][1]);
            let text = format!("{} {}", axes.titles[i], hi.trim());
            let w = super::font::width(&text);
            let (x, y) = match i {
                0 => (ex + 4, ey - 4),
                1 => (ex - w - 4, ey - 4),
                _ => (ex - w / 2, ey - 12),
            };
            frame.text(&self.clip, fit(x, &text), y, &text, INK);
        }
        let lo = format_number(&axes.formats[2], self.limits[2][0]);
        let lo = lo.trim();
        let x = o.0 - super::font::width(lo) / 2;
        frame.text(&self.clip, fit(x, lo), o.1 + 4, lo, INK);
    }
}

/// The corner the 3D axes start from, and their ends, in the unit cube.
const AXIS_ORIGIN: [f64; 3] = [-1.0, -1.0, -1.0];
const AXIS_ENDS: [[f64; 3]; 3] = [[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]];
