//! The picture a window shows: an RGBA8 frame, and the primitives every draw kind is made of
//! (filled rectangles, lines, triangles, text), rasterised on the host.
//!
//! Rendering is software rasterisation of our own rather than a GPU or vector-graphics crate:
//! charts are a few thousand primitives at most, a frame must come out byte for byte the same
//! with or without a display (the off-screen PNGs are the on-screen picture), and the build stays
//! free of system libraries. Lines are one pixel wide and not anti-aliased, so that tests can
//! say exactly which pixels a line crosses.

use std::path::Path;

/// One rendered frame of a [`Window`](crate::Window): `width x height` pixels, row by row from
/// the top, four bytes (red, green, blue, alpha) per pixel.
///
/// Frames are what a window shows on screen and what it writes as PNG files off-screen;
/// [`Window::frame`](crate::Window::frame) returns the latest one (an emberfire addition, for
/// tests and for programs that want the picture itself).
///
/// ```
/// use emberfire::*;
/// let win = Window::new_offscreen(4, 3, "frame".to_string());
/// win.draw_image(&constant(1.0f32, dim4!(3, 4)), None);
/// let f = win.frame();
/// assert_eq!((f.width(), f.height()), (4, 3));
/// assert_eq!(f.pixel(3, 2), [255, 255, 255, 255]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    width: usize,
    height: usize,
    rgba: Vec<u8>,
}

/// The colour of backgrounds (white).
pub(super) const BACKGROUND: [u8; 3] = [255, 255, 255];
/// The colour of axes, ticks and text (black).
pub(super) const INK: [u8; 3] = [0, 0, 0];

impl Frame {
    /// A frame of `width x height` pixels filled with the background colour (opaque white).
    ///
    /// ```
    /// let f = emberfire::Frame::new(2, 2);
    /// assert_eq!(f.pixel(1, 1), [255, 255, 255, 255]);
    /// ```
    pub fn new(width: usize, height: usize) -> Frame {
        let mut rgba = vec![255u8; width * height * 4];
        rgba.shrink_to_fit();
        Frame { width, height, rgba }
    }

    /// The frame's width in pixels.
    ///
    /// ```
    /// assert_eq!(emberfire::Frame::new(5, 2).width(), 5);
    /// ```
    pub fn width(&self) -> usize {
        self.width
    }

    /// The frame's height in pixels.
    ///
    /// ```
    /// assert_eq!(emberfire::Frame::new(5, 2).height(), 2);
    /// ```
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixel at column `x` and row `y` (row 0 at the top) as red, green, blue and alpha.
    /// Panics when the point is outside the frame.
    ///
    /// ```
    /// assert_eq!(emberfire::Frame::new(1, 1).pixel(0, 0), [255; 4]);
    /// ```
    pub fn pixel(&self, x: usize, y: usize) -> [u8; 4] {
        assert!(
            x < self.width && y < self.height,
            "Frame::pixel: ({x}, {y}) is outside the {} x {} frame",
            self.width,
            self.height
        );
        let i = (y * self.width + x) * 4;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2], self.rgba[i + 3]]
    }

    /// The pixels, row by row from the top, four bytes each (red, green, blue, alpha).
    ///
    /// ```
    /// assert_eq!(emberfire::Frame::new(2, 3).rgba().len(), 24);
    /// ```
    pub fn rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// Writes the frame as an RGBA PNG file; a file that cannot be written is an
    /// [`Error::ImageFile`](crate::Error::ImageFile).
    ///
    /// ```
    /// let path = std::env::temp_dir().join("emberfire-frame-doc.png");
    /// emberfire::Frame::new(3, 2).save_png(&path).unwrap();
    /// assert!(path.exists());
    /// ```
    pub fn save_png(&self, path: impl AsRef<Path>) -> Result<(), crate::Error> {
        use image::ImageEncoder;
        let path = path.as_ref();
        let fail = |e: &dyn std::fmt::Display| crate::Error::ImageFile {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
        let enc = image::codecs::png::PngEncoder::new_with_quality(
            std::io::BufWriter::new(file),
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::Sub,
        );
        enc.write_image(
            &self.rgba,
            self.width as u32,
            self.height as u32,
            image::ExtendedColorType::Rgba8,
        )
        .map_err(|e| fail(&e))
    }

    /// The pixels as `0RGB` words, the layout of a window's frame buffer.
    pub(super) fn to_0rgb(&self) -> Vec<u32> {
        self.rgba
            .chunks_exact(4)
            .map(|p| (u32::from(p[0]) << 16) | (u32::from(p[1]) << 8) | u32::from(p[2]))
            .collect()
    }

    /// Sets one pixel (opaque) if it lies inside the frame and inside `clip`.
    #[inline]
    pub(super) fn put(&mut self, clip: &Rect, x: i64, y: i64, c: [u8; 3]) {
        if clip.contains(x, y) && x >= 0 && y >= 0 {
            let (x, y) = (x as usize, y as usize);
            if x < self.width && y < self.height {
                let i = (y * self.width + x) * 4;
                self.rgba[i..i + 3].copy_from_slice(&c);
                self.rgba[i + 3] = 255;
            }
        }
    }

    /// Fills a rectangle (clipped to the frame).
    pub(super) fn fill(&mut self, r: &Rect, c: [u8; 3]) {
        for y in r.y..r.y + r.h {
            for x in r.x..r.x + r.w {
                self.put(r, x, y, c);
            }
        }
    }

    /// A one-pixel line from `(x0, y0)` to `(x1, y1)`, both ends included (Bresenham).
    pub(super) fn line(&mut self, clip: &Rect, p0: (i64, i64), p1: (i64, i64), c: [u8; 3]) {
        let (mut x, mut y) = p0;
        let (dx, dy) = ((p1.0 - x).abs(), -(p1.1 - y).abs());
        let (sx, sy) = (if x < p1.0 { 1 } else { -1 }, if y < p1.1 { 1 } else { -1 });
        // Lines far outside the frame (a limit set far from the data) would take long to walk.
        if dx > 1 << 20 || -dy > 1 << 20 {
            return;
        }
        let mut err = dx + dy;
        loop {
            self.put(clip, x, y, c);
            if (x, y) == p1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Fills the triangle `a b c` (pixel centres inside it or on its edges).
    pub(super) fn triangle(&mut self, clip: &Rect, t: [(f64, f64); 3], c: [u8; 3]) {
        let [a, b, d] = t;
        let area = (b.0 - a.0) * (d.1 - a.1) - (b.1 - a.1) * (d.0 - a.0);
        if area == 0.0 || !area.is_finite() {
            return;
        }
        let x0 = a.0.min(b.0).min(d.0).floor().max(clip.x as f64) as i64;
        let x1 = a.0.max(b.0).max(d.0).ceil().min((clip.x + clip.w) as f64) as i64;
        let y0 = a.1.min(b.1).min(d.1).floor().max(clip.y as f64) as i64;
        let y1 = a.1.max(b.1).max(d.1).ceil().min((clip.y + clip.h) as f64) as i64;
        let edge = |p: (f64, f64), q: (f64, f64), x: f64, y: f64| {
            ((q.0 - p.0) * (y - p.1) - (q.1 - p.1) * (x - p.0)) / area
        };
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (fx, fy) = (x as f64, y as f64);
                let (w0, w1, w2) = (edge(b, d, fx, fy), edge(d, a, fx, fy), edge(a, b, fx, fy));
                if w0 >= -1e-9 && w1 >= -1e-9 && w2 >= -1e-9 {
                    self.put(clip, x, y, c);
                }
            }
        }
    }

    /// Writes `text` with its top left corner at `(x, y)`, 8 x 8 pixels per character.
    pub(super) fn text(&mut self, clip: &Rect, x: i64, y: i64, text: &str, c: [u8; 3]) {
        for (k, ch) in text.chars().enumerate() {
            let glyph = super::font::glyph(ch);
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        self.put(clip, x + 8 * k as i64 + col, y + row as i64, c);
                    }
                }
            }
        }
    }

    /// Writes `text` turned a quarter to the left (reading upwards), its glyphs' tops facing
    /// left, with the top left corner of the turned text's box at `(x, y)`.
    pub(super) fn text_up(&mut self, clip: &Rect, x: i64, y: i64, text: &str, c: [u8; 3]) {
        let n = text.chars().count() as i64;
        for (k, ch) in text.chars().enumerate() {
            let glyph = super::font::glyph(ch);
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8i64 {
                    if bits >> col & 1 == 1 {
                        let px = x + row as i64;
                        let py = y + 8 * (n - 1 - k as i64) + (7 - col);
                        self.put(clip, px, py, c);
                    }
                }
            }
        }
    }
}

/// A rectangle of pixels: its top left corner and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rect {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

impl Rect {
    pub fn new(x: i64, y: i64, w: i64, h: i64) -> Rect {
        Rect { x, y, w: w.max(0), h: h.max(0) }
    }

    #[inline]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x >= self.x && y >= self.y && x < self.x + self.w && y < self.y + self.h
    }

    /// The rectangle less `left`, `top`, `right` and `bottom` pixels on each side.
    pub fn inset(&self, left: i64, top: i64, right: i64, bottom: i64) -> Rect {
        Rect::new(self.x + left, self.y + top, self.w - left - right, self.h - top - bottom)
    }
}
