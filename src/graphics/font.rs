//! Text: the 8 x 8 bitmap glyphs of the `font8x8` crate (public-domain glyph data), one pixel
//! per bit, for titles, tick labels and axis titles. A bitmap font needs no font file, no
//! shaping and no rasteriser, and renders the same on every machine, which the pixel tests
//! rely on.

/// The glyph of `ch`, one byte per row from the top, bit 0 the leftmost pixel; characters
/// outside ASCII are drawn as `?`.
pub(super) fn glyph(ch: char) -> [u8; 8] {
    let i = if ch.is_ascii() { ch as usize } else { '?' as usize };
    font8x8::legacy::BASIC_LEGACY[i]
}

/// Width in pixels of `text` as drawn.
pub(super) fn width(text: &str) -> i64 {
    8 * text.chars().count() as i64
}
