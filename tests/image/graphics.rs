//! Graphics, off-screen: known inputs drawn into windows that never reach a screen, and the
//! pixels of their frames checked against positions and colours worked out here from the
//! documented layout (chart margins, grid cells, the 3D view) and colour-map formulas; and
//! arrayfire-rust's example programs run to their end off-screen, each in a child process, with
//! their PNG frames checked.

use crate::common;

use common::{Rng, Rng64, SeedableRng};
use emberfire::*;

/// The documented 2D chart margins: left, top, right, bottom.
const MARGINS: (i64, i64, i64, i64) = (64, 10, 20, 32);
/// The documented height of a cell's title band.
const TITLE_BAND: usize = 16;
const WHITE: [u8; 4] = [255, 255, 255, 255];
const LINE: [u8; 4] = [0, 90, 200, 255];
const BAR: [u8; 4] = [70, 130, 180, 255];

fn offscreen(w: i32, h: i32) -> Window {
    Window::new_offscreen(w, h, "test".to_string())
}

fn rgba(c: [u8; 3]) -> [u8; 4] {
    [c[0], c[1], c[2], 255]
}

/// The plot area `(x, y, w, h)` of a chart covering a `w x h` region at `(x, y)`.
fn plot_area(x: i64, y: i64, w: i64, h: i64) -> (i64, i64, i64, i64) {
    let (l, t, r, b) = MARGINS;
    (x + l, y + t, w - l - r, h - t - b)
}

/// Pixel column of `v` in an area spanning `lo..hi` (first column `lo`, last column `hi`).
fn map_x(area: (i64, i64, i64, i64), lo: f64, hi: f64, v: f64) -> i64 {
    area.0 + ((v - lo) / (hi - lo) * (area.2 - 1) as f64).round() as i64
}

/// Pixel row of `v` (last row `lo`, first row `hi`).
fn map_y(area: (i64, i64, i64, i64), lo: f64, hi: f64, v: f64) -> i64 {
    area.1 + area.3 - 1 - ((v - lo) / (hi - lo) * (area.3 - 1) as f64).round() as i64
}

/// A byte from a level in [0, 1] as the image rules say (clamped, rounded).
fn level(v: f64) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn check_image_1to1<T: HasAfEnum>(
    values: &[T],
    h: usize,
    w: usize,
    ch: usize,
    to_level: impl Fn(T) -> f64,
) {
    let img = Array::new(values, dim4!(h as u64, w as u64, ch as u64));
    let win = offscreen(w as i32, h as i32);
    win.draw_image(&img, None);
    let f = win.frame();
    assert_eq!((f.width(), f.height()), (w, h));
    let plane = h * w;
    for y in 0..h {
        for x in 0..w {
            let at = y + x * h;
            let expected = match ch {
                1 => {
                    let b = level(to_level(values[at]));
                    [b, b, b, 255]
                }
                3 => [0, 1, 2]
                    .map(|k| level(to_level(values[at + k * plane])))
                    .map(Some)
                    .map(|v| v.unwrap_or(0))
                    .into_iter()
                    .chain([255])
                    .collect::<Vec<_>>()
                    .try_into()
                    .unwrap(),
                _ => {
                    let a = to_level(values[at + 3 * plane]).clamp(0.0, 1.0);
                    let c = [0, 1, 2].map(|k| {
                        let v = f64::from(level(to_level(values[at + k * plane])));
                        (v * a + 255.0 * (1.0 - a)).round() as u8
                    });
                    [c[0], c[1], c[2], 255]
                }
            };
            assert_eq!(f.pixel(x, y), expected, "pixel ({x}, {y}) of a {h} x {w} x {ch} image");
        }
    }
}

#[test]
fn image_drawn_one_to_one_keeps_its_values() {
    let mut r = Rng64::seed_from_u64(7);
    for &(h, w) in &[(1usize, 1usize), (3, 5), (17, 9), (40, 64)] {
        for ch in [1usize, 3, 4] {
            let n = h * w * ch;
            let u: Vec<u8> = (0..n).map(|_| r.gen()).collect();
            check_image_1to1(&u, h, w, ch, |v| f64::from(v) / 255.0);
            // Floating-point values beyond [0, 1] are clamped.
            let f: Vec<f32> = (0..n).map(|_| r.gen_range(-0.2f32..1.2)).collect();
            check_image_1to1(&f, h, w, ch, f64::from);
            let d: Vec<f64> = (0..n).map(|_| r.gen_range(0.0..1.0)).collect();
            check_image_1to1(&d, h, w, ch, |v| v);
            let b: Vec<bool> = (0..n).map(|_| r.gen()).collect();
            check_image_1to1(&b, h, w, ch, |v| if v { 1.0 } else { 0.0 });
            let i: Vec<i32> = (0..n).map(|_| r.gen_range(-20..300)).collect();
            check_image_1to1(&i, h, w, ch, |v| f64::from(v) / 255.0);
        }
    }
}

#[test]
fn image_goes_through_the_colour_map() {
    // The documented formulas, written out here: HEAT is (c(3t), c(3t-1), c(3t-2)), BLUE is
    // (c(2t-1), c(2t-1), c(2t)).
    let c = |x: f64| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    let heat = |t: f64| [c(3.0 * t), c(3.0 * t - 1.0), c(3.0 * t - 2.0)];
    let blue = |t: f64| [c(2.0 * t - 1.0), c(2.0 * t - 1.0), c(2.0 * t)];
    let mut r = Rng64::seed_from_u64(3);
    let (h, w) = (9usize, 13usize);
    let v: Vec<f32> = (0..h * w).map(|_| r.gen_range(0.0f32..1.0)).collect();
    let img = Array::new(&v, dim4!(h as u64, w as u64));
    for (cmap, reference) in
        [(ColorMap::HEAT, &heat as &dyn Fn(f64) -> [u8; 3]), (ColorMap::BLUE, &blue)]
    {
        let mut win = offscreen(w as i32, h as i32);
        win.set_colormap(cmap);
        win.draw_image(&img, None);
        let f = win.frame();
        for y in 0..h {
            for x in 0..w {
                assert_eq!(
                    f.pixel(x, y),
                    rgba(reference(f64::from(v[y + x * h]))),
                    "{cmap:?} at ({x}, {y})"
                );
            }
        }
    }
}

#[test]
fn image_is_stretched_to_nearest_pixels() {
    // A 2 x 3 image over a 6 x 4 window: each image pixel becomes a 2 x 2 block.
    let v = [0u8, 10, 20, 30, 40, 50];
    let win = offscreen(6, 4);
    win.draw_image(&Array::new(&v, dim4!(2, 3)), None);
    let f = win.frame();
    for y in 0..4 {
        for x in 0..6 {
            let b = v[y / 2 + (x / 2) * 2];
            assert_eq!(f.pixel(x, y), [b, b, b, 255], "({x}, {y})");
        }
    }
}

/// The rows of column `x` inside the area whose pixel is `colour`.
fn rows_of(f: &Frame, area: (i64, i64, i64, i64), x: i64, colour: [u8; 4]) -> Vec<i64> {
    (area.1..area.1 + area.3).filter(|&y| f.pixel(x as usize, y as usize) == colour).collect()
}

#[test]
fn line_plot_crosses_the_expected_pixels() {
    let (w, h) = (300i64, 200i64);
    let area = plot_area(0, 0, w, h);
    // y = 2x + 1 over 0..10 in three segments; the axes fit the data.
    let xs = [0.0f64, 2.5, 7.0, 10.0];
    let ys: Vec<f64> = xs.iter().map(|x| 2.0 * x + 1.0).collect();
    for dtype_case in 0..2 {
        let win = offscreen(w as i32, h as i32);
        if dtype_case == 0 {
            win.draw_plot2(&Array::new(&xs, dim4!(4)), &Array::new(&ys, dim4!(4)), None);
        } else {
            let xf: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
            let yf: Vec<f32> = ys.iter().map(|&v| v as f32).collect();
            win.draw_plot(&Array::new(&[xf, yf].concat(), dim4!(4, 2)), None);
        }
        let f = win.frame();
        for (&x, &y) in xs.iter().zip(&ys) {
            let (px, py) = (map_x(area, 0.0, 10.0, x), map_y(area, 1.0, 21.0, y));
            assert_eq!(f.pixel(px as usize, py as usize), LINE, "data point ({x}, {y})");
        }
        // Every column of the area holds the line within a pixel of the ideal row.
        for px in area.0..area.0 + area.2 {
            let x = (px - area.0) as f64 / (area.2 - 1) as f64 * 10.0;
            let ideal = area.1 as f64 + (area.3 - 1) as f64 * (1.0 - (2.0 * x) / 20.0);
            let rows = rows_of(&f, area, px, LINE);
            assert!(!rows.is_empty(), "column {px} misses the line");
            for r in rows {
                assert!((r as f64 - ideal).abs() <= 1.5, "column {px}: row {r}, ideal {ideal}");
            }
        }
        // Far from the line, the area is background.
        let (px, py) = (map_x(area, 0.0, 10.0, 8.0), map_y(area, 1.0, 21.0, 5.0));
        assert_eq!(f.pixel(px as usize, py as usize), WHITE);
    }
}

#[test]
fn axis_limits_set_by_the_user_place_the_data() {
    let (w, h) = (240i64, 180i64);
    let area = plot_area(0, 0, w, h);
    let mut win = offscreen(w as i32, h as i32);
    win.set_axes_limits_2d(-10.0, 10.0, 0.0, 100.0, true);
    let x = Array::new(&[-5i32, 5], dim4!(2));
    let y = Array::new(&[25i32, 25], dim4!(2));
    win.draw_plot2(&x, &y, None);
    let f = win.frame();
    let row = map_y(area, 0.0, 100.0, 25.0);
    for px in area.0..area.0 + area.2 {
        let on = f.pixel(px as usize, row as usize) == LINE;
        let inside = px >= map_x(area, -10.0, 10.0, -5.0) && px <= map_x(area, -10.0, 10.0, 5.0);
        assert_eq!(on, inside, "column {px}");
    }
    // Inexact limits widen to round values: limits computed from 0.5 .. 99.5 become 0 .. 100,
    // and a line from 10 to 90 starts and ends where those limits place it.
    let mut win = offscreen(w as i32, h as i32);
    let range = Array::new(&[99.5f32, 0.5, 5.0], dim4!(3));
    win.set_axes_limits_compute(&range, &Array::new(&[0.0f32, 1.0], dim4!(2)), None, false);
    win.draw_plot2(
        &Array::new(&[10.0f32, 90.0], dim4!(2)),
        &Array::new(&[0.5f32, 0.5], dim4!(2)),
        None,
    );
    let f = win.frame();
    let row = map_y(area, 0.0, 1.0, 0.5) as usize;
    let (start, end) = (map_x(area, 0.0, 100.0, 10.0), map_x(area, 0.0, 100.0, 90.0));
    assert_ne!((start, end), (map_x(area, 0.5, 99.5, 10.0), map_x(area, 0.5, 99.5, 90.0)));
    assert_eq!(f.pixel(start as usize, row), LINE);
    assert_eq!(f.pixel(end as usize, row), LINE);
    assert_eq!(f.pixel(start as usize - 1, row), WHITE);
    assert_eq!(f.pixel(end as usize + 1, row), WHITE);
}

#[test]
fn histogram_bars_have_the_counts_heights() {
    let (w, h) = (320i64, 220i64);
    let area = plot_area(0, 0, w, h);
    let counts = [3u32, 7, 0, 10, 5, 1];
    let win = offscreen(w as i32, h as i32);
    win.draw_hist(&Array::new(&counts, dim4!(6)), -3.0, 9.0, None);
    let f = win.frame();
    let max = 10.0;
    for (i, &c) in counts.iter().enumerate() {
        let left = map_x(area, -3.0, 9.0, -3.0 + 2.0 * i as f64);
        let right = map_x(area, -3.0, 9.0, -3.0 + 2.0 * (i + 1) as f64) - 1;
        let centre = (left + right) / 2;
        let expected = ((f64::from(c) / max) * (area.3 - 1) as f64).round() as usize + 1;
        assert_eq!(rows_of(&f, area, centre, BAR).len(), expected, "bar {i} of count {c}");
        // The bar spans its bin's columns exactly.
        let base = (area.1 + area.3 - 1) as usize;
        assert_eq!(f.pixel(left as usize, base), BAR);
        assert_eq!(f.pixel(right as usize, base), BAR);
    }
    // Data of a histogram computed by emberfire, checked against counts made here.
    let mut r = Rng64::seed_from_u64(11);
    let data: Vec<f32> = (0..500).map(|_| r.gen_range(0.0f32..1.0)).collect();
    let mut host = [0usize; 5];
    for &v in &data {
        host[((v * 5.0) as usize).min(4)] += 1;
    }
    let win = offscreen(w as i32, h as i32);
    win.draw_hist(&histogram(&Array::new(&data, dim4!(500)), 5, 0.0, 1.0), 0.0, 1.0, None);
    let f = win.frame();
    let max = *host.iter().max().unwrap() as f64;
    for (i, &c) in host.iter().enumerate() {
        let left = map_x(area, 0.0, 1.0, 0.2 * i as f64);
        let right = map_x(area, 0.0, 1.0, 0.2 * (i + 1) as f64) - 1;
        let expected = ((c as f64 / max) * (area.3 - 1) as f64).round() as usize + 1;
        assert_eq!(rows_of(&f, area, (left + right) / 2, BAR).len(), expected, "bin {i}");
    }
}

/// The documented 3D view of a `w x h` region: unit-cube point to pixel.
fn project(w: f64, h: f64, u: [f64; 3]) -> (usize, usize) {
    let m = 24.0;
    let (aw, ah) = (w - 2.0 * m, h - 2.0 * m);
    let (se, ce) = 30f64.to_radians().sin_cos();
    let (sz, cz) = 45f64.to_radians().sin_cos();
    let scale = (aw / (2.0 * 2f64.sqrt())).min(ah / (2.0 * (ce + 2f64.sqrt() * se)));
    let xr = u[0] * cz - u[1] * sz;
    let yr = u[0] * sz + u[1] * cz;
    let up = u[2] * ce + yr * se;
    ((m + aw / 2.0 + scale * xr).round() as usize, (m + ah / 2.0 - scale * up).round() as usize)
}

#[test]
fn surface_colours_follow_the_colour_map() {
    // Heights 0 where x < 5 and 1 where x >= 5, on a 10 x 10 grid; SPECTRUM's hue 270 (1 - t):
    // violet (128, 0, 255) at 0 and red at 1.
    let n = 10usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let z: Vec<f32> = (0..n * n).map(|k| if k % n >= 5 { 1.0 } else { 0.0 }).collect();
    let (w, h) = (400usize, 300usize);
    let mut win = offscreen(w as i32, h as i32);
    win.set_colormap(ColorMap::SPECTRUM);
    let v = Array::new(&xs, dim4!(n as u64));
    win.draw_surface(&v, &v, &Array::new(&z, dim4!(n as u64, n as u64)), None);
    let f = win.frame();
    let unit = |x: f64, y: f64, z: f64| [2.0 * x / 9.0 - 1.0, 2.0 * y / 9.0 - 1.0, 2.0 * z - 1.0];
    for (x, y, z, colour) in [
        (1.5, 4.5, 0.0, [128, 0, 255, 255]),
        (2.5, 7.5, 0.0, [128, 0, 255, 255]),
        (7.5, 4.5, 1.0, [255, 0, 0, 255]),
        (6.5, 1.5, 1.0, [255, 0, 0, 255]),
    ] {
        let (px, py) = project(w as f64, h as f64, unit(x, y, z));
        assert_eq!(f.pixel(px, py), colour, "surface point ({x}, {y}, {z}) at pixel ({px}, {py})");
    }
    // Outside the surface's outline, the background.
    assert_eq!(f.pixel(2, h - 2), WHITE);
}

#[test]
fn grid_cells_land_in_their_places() {
    let (w, h) = (301usize, 200usize);
    let mut win = offscreen(w as i32, h as i32);
    win.grid(2, 3);
    let shade = |r: usize, c: usize| (40 * (r * 3 + c) + 20) as u8;
    for r in 0..2 {
        for c in 0..3 {
            win.set_view(r as i32, c as i32);
            let title = (r == 1 && c == 2).then(|| "last".to_string());
            win.draw_image(&constant(shade(r, c), dim4!(4, 4)), title);
        }
    }
    win.show();
    let f = win.frame();
    // Cells are w / 3 = 100 and h / 2 = 100 pixels; the last column takes the remainder.
    let (cw, ch) = (w / 3, h / 2);
    for r in 0..2 {
        for c in 0..3 {
            let (x0, y0) = (c * cw, r * ch);
            let x1 = if c == 2 { w } else { x0 + cw };
            let top = if r == 1 && c == 2 { y0 + TITLE_BAND } else { y0 };
            let s = shade(r, c);
            for (x, y) in [
                (x0, top),
                (x1 - 1, top),
                (x0, y0 + ch - 1),
                (x1 - 1, y0 + ch - 1),
                ((x0 + x1) / 2, y0 + ch / 2),
            ] {
                assert_eq!(f.pixel(x, y), [s, s, s, 255], "cell ({r}, {c}) at ({x}, {y})");
            }
        }
    }
    // The titled cell: a white band with black text in it.
    let (x0, y0) = (2 * cw, ch);
    assert_eq!(f.pixel(x0, y0), WHITE);
    let band: Vec<[u8; 4]> = (y0..y0 + TITLE_BAND)
        .flat_map(|y| (x0..w).map(move |x| (x, y)))
        .map(|(x, y)| f.pixel(x, y))
        .collect();
    assert!(band.contains(&[0, 0, 0, 255]), "no title text");
    // After show, a draw without a view covers the whole window again.
    win.draw_image(&constant(7u8, dim4!(2, 2)), None);
    let f = win.frame();
    assert_eq!(f.pixel(0, 0), [7, 7, 7, 255]);
    assert_eq!(f.pixel(w - 1, h - 1), [7, 7, 7, 255]);
}

#[test]
fn every_draw_kind_renders_in_a_cell() {
    let mut win = offscreen(600, 400);
    win.grid(2, 3);
    let x = range::<f32>(dim4!(20), 0);
    let p = randu::<f64>(dim4!(15, 3));
    let cells: [(i32, i32); 6] = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)];
    for (k, &(r, c)) in cells.iter().enumerate() {
        win.set_view(r, c);
        let title = Some(format!("cell {k}"));
        match k {
            0 => win.draw_plot3(&x, &sin(&x), &cos(&x), title),
            1 => win.draw_scatter3(&x, &x, &x, MarkerType::STAR, title),
            2 => win.draw_scatter(&p, MarkerType::TRIANGLE, title),
            3 => win.draw_vector_field3(&x, &x, &x, &x, &x, &x, title),
            4 => win.draw_vector_field(&p, &p, title),
            _ => win.draw_scatter2(&x, &x, MarkerType::PLUS, title),
        }
    }
    win.show();
    let f = win.frame();
    // Each cell holds something other than background and ink below its title.
    for &(r, c) in &cells {
        let (x0, y0) = (c as usize * 200, r as usize * 200 + TITLE_BAND);
        let coloured = (y0..y0 + 184)
            .flat_map(|y| (x0..x0 + 200).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = f.pixel(x, y);
                p != WHITE && p != [0, 0, 0, 255]
            })
            .count();
        assert!(coloured > 10, "cell ({r}, {c}) drew {coloured} coloured pixels");
    }
}

#[test]
fn empty_and_single_point_inputs_draw_axes_only() {
    let win = offscreen(200, 150);
    let e = Array::new(&[] as &[f32], dim4!(0));
    win.draw_plot2(&e, &e, None);
    win.draw_scatter2(&e, &e, MarkerType::POINT, None);
    let one = Array::new(&[3.0f32], dim4!(1));
    win.draw_plot2(&one, &one, None);
    let f = win.frame();
    let area = plot_area(0, 0, 200, 150);
    // A single point: limits widen by one on each side, so it sits in the middle.
    let (px, py) = (map_x(area, 2.0, 4.0, 3.0), map_y(area, 2.0, 4.0, 3.0));
    assert_eq!(f.pixel(px as usize, py as usize), LINE);
}

#[test]
fn off_screen_windows_close_after_the_frame_count() {
    let limit: usize =
        std::env::var("EMBERFIRE_FRAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let win = offscreen(16, 16);
    let img = constant(0.5f32, dim4!(16, 16));
    let mut shown = 0;
    while !win.is_closed() {
        win.draw_image(&img, None);
        shown += 1;
        assert!(shown <= limit, "still open after {shown} frames");
    }
    assert_eq!(shown, limit);
    let mut win = offscreen(16, 16);
    win.grid(1, 1);
    for _ in 0..limit {
        assert!(!win.is_closed());
        win.set_view(0, 0);
        win.draw_image(&img, None);
        assert!(!win.is_closed(), "a cell draw alone shows no frame");
        win.show();
    }
    assert!(win.is_closed());
}

#[test]
#[should_panic(expected = "Window::draw_plot2: x has 3 elements but y has 2")]
fn mismatched_lengths_panic() {
    let win = offscreen(100, 100);
    win.draw_plot2(&randu::<f32>(dim4!(3)), &randu::<f32>(dim4!(2)), None);
}

#[test]
#[should_panic(expected = "Window::draw_image: input must be h x w with 1, 3 or 4 channels")]
fn two_channel_image_panics() {
    offscreen(10, 10).draw_image(&randu::<f32>(dim4!(4, 4, 2)), None);
}

#[test]
#[should_panic(expected = "Window::draw_hist: the view (2, 0) is outside the grid of 2 x 2 cells")]
fn view_outside_the_grid_panics() {
    let mut win = offscreen(100, 100);
    win.grid(2, 2);
    win.set_view(2, 0);
    win.draw_hist(&randu::<f32>(dim4!(4)), 0.0, 1.0, None);
}

#[test]
#[should_panic(expected = "Window::new: width and height must be positive, got 0 x 10")]
fn zero_sized_window_panics() {
    let _ = Window::new(0, 10, "empty".to_string());
}

#[test]
#[should_panic(expected = "Window::draw_surface: zvals is 3 x 4, so xvals must have 3 elements")]
fn surface_of_mismatched_sizes_panics() {
    let v = randu::<f32>(dim4!(3));
    offscreen(100, 100).draw_surface(&v, &v, &randu::<f32>(dim4!(3, 4)), None);
}

// arrayfire-rust's example programs, compiled here as they are, and run one per child process
// so that each writes its frames under a fresh name into a folder of its own.
mod ex_conway {
    include!("../../examples/conway.rs");
    pub fn run() {
        main()
    }
}
mod ex_snow {
    include!("../../examples/snow.rs");
    pub fn run() {
        main()
    }
}
mod ex_histogram {
    include!("../../examples/histogram.rs");
    pub fn run() {
        main()
    }
}
mod ex_acoustic_wave {
    include!("../../examples/acoustic_wave.rs");
    pub fn run() {
        main()
    }
}
mod ex_graphics_grid {
    include!("../../examples/graphics_grid.rs");
    pub fn run() {
        main()
    }
}

/// The child's side: runs the example that `EMBERFIRE_TEST_EXAMPLE` names, and nothing in a
/// normal test run.
#[test]
fn example_child() {
    match std::env::var("EMBERFIRE_TEST_EXAMPLE").as_deref() {
        Ok("conway") => ex_conway::run(),
        Ok("snow") => ex_snow::run(),
        Ok("histogram") => ex_histogram::run(),
        Ok("acoustic_wave") => ex_acoustic_wave::run(),
        Ok("graphics_grid") => ex_graphics_grid::run(),
        _ => {}
    }
}

/// Runs an example off-screen for 3 frames in a child process; returns its frames' folder.
fn run_example(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("emberfire_graphics_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "graphics::example_child", "--test-threads=1", "--nocapture"])
        .env("EMBERFIRE_TEST_EXAMPLE", name)
        .env("EMBERFIRE_OFFSCREEN", "1")
        .env("EMBERFIRE_FRAMES", "3")
        .env("EMBERFIRE_FRAMES_DIR", &dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "example {name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for k in 0..3 {
        assert!(dir.join(format!("frame-{k:05}.png")).exists(), "{name}: frame {k} missing");
    }
    assert!(!dir.join("frame-00003.png").exists(), "{name}: more frames than EMBERFIRE_FRAMES");
    dir
}

fn load(path: &std::path::Path) -> image::RgbaImage {
    image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).to_rgba8()
}

#[test]
fn example_snow_draws_noise() {
    let dir = run_example("snow");
    let f = load(&dir.join("frame-00002.png"));
    assert_eq!(f.dimensions(), (1280, 720));
    // Uniform noise: each channel's mean near 127.5 and its values spread over the range.
    let px: Vec<f64> = f.pixels().map(|p| f64::from(p[0])).collect();
    let mean = px.iter().sum::<f64>() / px.len() as f64;
    assert!((mean - 127.5).abs() < 5.0, "mean {mean}");
    assert!(px.iter().filter(|&&v| v < 26.0).count() > px.len() / 20);
}

#[test]
fn example_histogram_draws_the_picture_and_its_histogram() {
    let dir = run_example("histogram");
    let picture = load(&std::env::temp_dir().join("emberfire-histogram").join("man.jpg"));
    let f = load(&dir.join("frame-00002.png"));
    // The 640 x 480 picture in a 480 x 640 window: pixel for pixel, its grey levels
    // (value / 255 drawn as value).
    assert_eq!(f.dimensions(), (480, 640));
    for (x, y) in [(0, 0), (240, 320), (479, 639), (100, 500), (400, 50)] {
        let g = picture.get_pixel(x, y)[0];
        let p = f.get_pixel(x, y);
        assert!(
            p[0].abs_diff(g) <= 1 && p[1] == p[0] && p[2] == p[0],
            "({x}, {y}): {p:?} for grey {g}"
        );
    }
    let hist = load(&dir.join("window1-frame-00002.png"));
    assert_eq!(hist.dimensions(), (512, 512));
    let bars = hist.pixels().filter(|p| p.0 == BAR).count();
    assert!(bars > 10_000, "{bars} bar pixels");
}

#[test]
fn example_acoustic_wave_draws_through_the_blue_map() {
    let dir = run_example("acoustic_wave");
    let f = load(&dir.join("frame-00002.png"));
    assert_eq!(f.dimensions(), (1000, 1000));
    // Still pressure is 0, normalised to 0.5: BLUE's (c(2t-1), c(2t-1), c(2t)) = (0, 0, 255).
    assert_eq!(f.get_pixel(10, 10).0, [0, 0, 255, 255]);
    assert_eq!(f.get_pixel(990, 500).0, [0, 0, 255, 255]);
    // The source, rows 700..=800 of column 800 of 1500, has moved away from 0.5.
    let (x, y) = (800 * 1000 / 1500, 750 * 1000 / 1500);
    assert_ne!(f.get_pixel(x, y).0, [0, 0, 255, 255]);
}

/// The three 256 x 256 boards of a conway frame: the window is 512 x 512, so cell (r, c) of
/// board k is the 2 x 2 block of pixels from (x, y) = (2c, 2r), in colour channel k; a live cell
/// is drawn at 255 (the board normalised by its largest value, 1), a dead one at 0.
fn conway_boards(f: &image::RgbaImage) -> Vec<bool> {
    let n = 256usize;
    let mut b = vec![false; n * n * 3];
    for k in 0..3 {
        for c in 0..n {
            for r in 0..n {
                let px = [(0, 0), (1, 0), (0, 1), (1, 1)]
                    .map(|(dx, dy)| f.get_pixel((2 * c + dx) as u32, (2 * r + dy) as u32)[k]);
                assert!(
                    px.iter().all(|&p| p == px[0]) && (px[0] == 0 || px[0] == 255),
                    "cell ({r}, {c}): {px:?}"
                );
                b[r + n * (c + n * k)] = px[0] == 255;
            }
        }
    }
    b
}

#[test]
fn example_conway_runs_to_its_end() {
    let dir = run_example("conway");
    let boards: Vec<Vec<bool>> = (0..3)
        .map(|k| {
            let f = load(&dir.join(format!("frame-{k:05}.png")));
            assert_eq!(f.dimensions(), (512, 512));
            conway_boards(&f)
        })
        .collect();
    for k in 0..2 {
        let want = common::life_step(&boards[k], [256, 256, 3]);
        let wrong = want.iter().zip(&boards[k + 1]).filter(|(a, b)| a != b).count();
        assert_eq!(
            wrong,
            0,
            "frame {}: {wrong} cells differ from one generation of frame {k}",
            k + 1
        );
    }
    for (k, b) in boards.iter().enumerate() {
        // a random half-full board keeps roughly a quarter to a half of its cells alive in the
        // first generations; a board that dies (the bug this guards against) has none
        let live = b.iter().filter(|&&x| x).count();
        assert!(
            live * 8 > b.len() && live * 4 < b.len() * 3,
            "frame {k}: {live} live cells of {}",
            b.len()
        );
    }
}

#[test]
fn example_graphics_grid_fills_six_cells() {
    let dir = run_example("graphics_grid");
    let f = load(&dir.join("frame-00002.png"));
    assert_eq!(f.dimensions(), (960, 600));
    for r in 0..2u32 {
        for c in 0..3u32 {
            let (x0, y0) = (c * 320, r * 300 + TITLE_BAND as u32);
            let coloured = (y0..y0 + 284)
                .flat_map(|y| (x0..x0 + 320).map(move |x| (x, y)))
                .filter(|&(x, y)| {
                    let p = f.get_pixel(x, y).0;
                    p != WHITE && p != [0, 0, 0, 255]
                })
                .count();
            assert!(coloured > 100, "cell ({r}, {c}): {coloured} coloured pixels");
        }
    }
}
