//! `draw_image`: an image stretched over its cell, nearest pixel.
//!
//! The image's rows (dimension 0) run down and its columns (dimension 1) across, as everywhere
//! in emberfire's image family, so an `h x w` array drawn in a `w x h` window keeps every pixel
//! in place. Floating-point values from 0 to 1 (and `bool`) span black to white; integer
//! values from 0 to 255. One channel goes through the window's colour map; three are red,
//! green and blue; a fourth is opacity over the white background.

use super::colormap::ColorMap;
use super::frame::{Frame, Rect, BACKGROUND};
use crate::{DType, Dim4};

/// Draws `values` (an image of dims `d` and type `dtype`) over `content`.
pub(super) fn render(
    frame: &mut Frame,
    content: Rect,
    values: &[f64],
    d: Dim4,
    dtype: DType,
    cmap: ColorMap,
) {
    let (h, w, ch) = (d[0] as usize, d[1] as usize, d[2] as usize);
    if h == 0 || w == 0 || content.w <= 0 || content.h <= 0 {
        return;
    }
    let unit = matches!(dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16 | DType::B8);
    let level = |v: f64| if unit { v.clamp(0.0, 1.0) } else { (v / 255.0).clamp(0.0, 1.0) };
    let (cw, chh) = (content.w as usize, content.h as usize);
    let plane = h * w;
    for y in 0..chh {
        let r = ((y as f64 + 0.5) * h as f64 / chh as f64) as usize;
        let r = r.min(h - 1);
        for x in 0..cw {
            let c = (((x as f64 + 0.5) * w as f64 / cw as f64) as usize).min(w - 1);
            let at = r + c * h;
            let rgb = if ch == 1 {
                cmap.rgb(level(values[at]))
            } else {
                let px = [0, 1, 2].map(|k| (level(values[at + k * plane]) * 255.0).round());
                if ch == 4 {
                    let a = level(values[at + 3 * plane]);
                    [0, 1, 2]
                        .map(|k| (px[k] * a + f64::from(BACKGROUND[k]) * (1.0 - a)).round() as u8)
                } else {
                    px.map(|v| v as u8)
                }
            };
            frame.put(&content, content.x + x as i64, content.y + y as i64, rgb);
        }
    }
}
