//! Layout: the cells of a window's grid, and the title band at the top of each.
//!
//! `grid(rows, cols)` splits the window into `rows x cols` cells of equal size (the division's
//! remainders go to the last row and column); cell `(r, c)` is the `r`-th from the top and the
//! `c`-th from the left. A draw into a cell clears it, writes its title centred in a band of
//! [`TITLE_BAND`] pixels at the top, and draws in what is left. A draw with no view set covers
//! the whole window, with no title, as ArrayFire does.

use super::frame::{Frame, Rect, BACKGROUND, INK};

/// Height in pixels of a cell's title band.
pub(super) const TITLE_BAND: i64 = 16;

/// The pixels of cell `(r, c)` of a `rows x cols` grid over a `width x height` window.
pub(super) fn cell(width: usize, height: usize, rows: i32, cols: i32, r: i32, c: i32) -> Rect {
    let (w, h) = (width as i64, height as i64);
    let (rows, cols, r, c) = (rows as i64, cols as i64, r as i64, c as i64);
    let x0 = c * (w / cols);
    let y0 = r * (h / rows);
    let x1 = if c == cols - 1 { w } else { (c + 1) * (w / cols) };
    let y1 = if r == rows - 1 { h } else { (r + 1) * (h / rows) };
    Rect::new(x0, y0, x1 - x0, y1 - y0)
}

/// Clears `cell`, writes `title` at its top when there is one, and returns the pixels left
/// for drawing.
pub(super) fn prepare(frame: &mut Frame, cell: Rect, title: Option<&str>) -> Rect {
    frame.fill(&cell, BACKGROUND);
    match title {
        Some(t) => {
            let x = cell.x + (cell.w - super::font::width(t)) / 2;
            frame.text(&cell, x.max(cell.x), cell.y + (TITLE_BAND - 8) / 2, t, INK);
            cell.inset(0, TITLE_BAND, 0, 0)
        }
        None => cell,
    }
}
