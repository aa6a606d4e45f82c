//! `Window`: arrayfire-rust's graphics window, its state, and the dispatch of each draw call
//! to the draw kinds.

use super::axes::{self, AxesSettings};
use super::colormap::ColorMap;
use super::frame::{Frame, Rect};
use super::host;
use super::layout;
use super::marker::MarkerType;
use super::plot::Style;
use super::sink::Sink;
use crate::{Array, HasAfEnum};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Numbers windows in the order a program opens them, to name their frame files apart.
static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// A window that draws arrays: images, line and scatter plots, histograms, surfaces and
/// vector fields, alone or in a grid of cells, with arrayfire-rust's methods and signatures.
///
/// **On a screen** (where `DISPLAY` or `WAYLAND_DISPLAY` is set and an X server answers), the
/// window opens on it; the user's close button makes [`is_closed`](Window::is_closed) true.
///
/// **Off-screen** (servers, CI, a GPU machine, or `EMBERFIRE_OFFSCREEN=1`), the same calls
/// render the same picture, and each frame shown is written as a PNG file: `frame-00000.png`,
/// `frame-00001.png`, ... in the folder `EMBERFIRE_FRAMES_DIR` names (default
/// `emberfire-frames` in the system's temporary folder; a program's second window writes
/// `window1-frame-00000.png`, ...). After `EMBERFIRE_FRAMES` frames (default 5),
/// `is_closed` returns true, so a `while !win.is_closed()` loop ends by itself. When a display
/// is set but no window can be opened, the window goes off-screen and says why once on
/// stderr; the lack of a display is never an error.
///
/// A frame is shown by a draw with no view set (it covers the whole window, as in ArrayFire),
/// or by [`show`](Window::show) after drawing into the cells of a [`grid`](Window::grid).
/// Arrays of any backend are read by the window itself; the user copies nothing.
///
/// Differences from arrayfire-rust: a draw with `None` as title leaves its cell untitled
/// (arrayfire-rust passes a placeholder `"Cell(c,r))"`); `set_axes_label_formats` sets the
/// label formats (arrayfire-rust's sets the titles). Additions: [`Window::new_offscreen`] and
/// [`Window::frame`].
///
/// ```
/// use emberfire::*;
/// let mut win = Window::new_offscreen(320, 240, "Sine".to_string());
/// let x = range::<f32>(dim4!(100), 0) / 10.0f32;
/// let mut frames = 0;
/// while !win.is_closed() {
///     win.draw_plot2(&x, &sin(&x), None);
///     frames += 1;
/// }
/// assert_eq!(frames, 5); // EMBERFIRE_FRAMES's default
/// ```
pub struct Window {
    row: i32,
    col: i32,
    cmap: ColorMap,
    state: RefCell<State>,
}

struct State {
    title: String,
    frame: Frame,
    grid: (i32, i32),
    axes: HashMap<(i32, i32), AxesSettings>,
    sink: Sink,
    shown: usize,
    visible: bool,
}

impl Window {
    /// Opens a `width x height` window titled `title`: on the screen where there is one,
    /// off-screen otherwise (see [`Window`]). Panics when a size is not positive.
    ///
    /// ```
    /// let win = emberfire::Window::new(64, 48, "A window".to_string());
    /// assert!(win.frame().width() == 64);
    /// ```
    pub fn new(width: i32, height: i32, title: String) -> Self {
        Self::open(width, height, title, false, "new")
    }

    /// Opens a window that never goes on the screen, even where there is one: its frames are
    /// written as files as described in [`Window`]. An emberfire addition, for tests and for
    /// programs that only want the pictures.
    ///
    /// ```
    /// let win = emberfire::Window::new_offscreen(64, 48, "Pictures".to_string());
    /// assert!(!win.is_closed());
    /// ```
    pub fn new_offscreen(width: i32, height: i32, title: String) -> Self {
        Self::open(width, height, title, true, "new_offscreen")
    }

    fn open(width: i32, height: i32, title: String, offscreen: bool, method: &str) -> Self {
        assert!(
            width > 0 && height > 0,
            "Window::{method}: width and height must be positive, got {width} x {height}"
        );
        let (w, h) = (width as usize, height as usize);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let sink = Sink::open(w, h, &title, id, offscreen);
        Window {
            row: -1,
            col: -1,
            cmap: ColorMap::DEFAULT,
            state: RefCell::new(State {
                title,
                frame: Frame::new(w, h),
                grid: (1, 1),
                axes: HashMap::new(),
                sink,
                shown: 0,
                visible: true,
            }),
        }
    }

    /// Moves the window to `(x, y)` on the screen (nothing to do off-screen).
    ///
    /// ```
    /// let win = emberfire::Window::new_offscreen(64, 48, "w".to_string());
    /// win.set_position(100, 100);
    /// ```
    pub fn set_position(&self, x: u32, y: u32) {
        self.state.borrow_mut().sink.set_position(x, y);
    }

    /// Changes the window's title.
    ///
    /// ```
    /// let win = emberfire::Window::new_offscreen(64, 48, "before".to_string());
    /// win.set_title("after".to_string());
    /// ```
    pub fn set_title(&self, title: String) {
        let mut st = self.state.borrow_mut();
        st.sink.set_title(&title);
        st.title = title;
    }

    /// Shows or hides the window's frames: a hidden window on the screen keeps its last
    /// picture until shown again (the windowing library cannot unmap a window). Off-screen,
    /// frames are written either way.
    ///
    /// ```
    /// let win = emberfire::Window::new_offscreen(64, 48, "w".to_string());
    /// win.set_visibility(false);
    /// ```
    pub fn set_visibility(&self, is_visible: bool) {
        self.state.borrow_mut().visible = is_visible;
    }

    /// Resizes the window's frame to `w x h` pixels, clearing it. On the screen the window
    /// keeps its size and stretches the frame over it. Panics when a size is zero.
    ///
    /// ```
    /// let win = emberfire::Window::new_offscreen(64, 48, "w".to_string());
    /// win.set_size(32, 16);
    /// assert_eq!(win.frame().width(), 32);
    /// ```
    pub fn set_size(&self, w: u32, h: u32) {
        assert!(
            w > 0 && h > 0,
            "Window::set_size: width and height must be positive, got {w} x {h}"
        );
        self.state.borrow_mut().frame = Frame::new(w as usize, h as usize);
    }

    /// Sets the colour map of the draws that follow (single-channel images and surfaces).
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(64, 48, "w".to_string());
    /// win.set_colormap(emberfire::ColorMap::HEAT);
    /// ```
    pub fn set_colormap(&mut self, cmap: ColorMap) {
        self.cmap = cmap;
    }

    /// Whether the window is closed: by the user's close button on the screen, after
    /// `EMBERFIRE_FRAMES` frames (default 5) off-screen.
    ///
    /// ```
    /// let win = emberfire::Window::new_offscreen(8, 8, "w".to_string());
    /// assert!(!win.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        let mut st = self.state.borrow_mut();
        let shown = st.shown;
        st.sink.is_closed(shown)
    }

    /// Splits the window into `rows x cols` cells for the draws that follow a
    /// [`set_view`](Window::set_view). Panics when a count is not positive.
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.grid(1, 2);
    /// win.set_view(0, 1);
    /// ```
    pub fn grid(&self, rows: i32, cols: i32) {
        assert!(
            rows > 0 && cols > 0,
            "Window::grid: rows and cols must be positive, got {rows} x {cols}"
        );
        self.state.borrow_mut().grid = (rows, cols);
    }

    /// Shows the frame drawn so far (the cells of a grid), and resets the view so that the
    /// next draw without [`set_view`](Window::set_view) covers the whole window.
    ///
    /// ```
    /// use emberfire::*;
    /// let mut win = Window::new_offscreen(200, 100, "w".to_string());
    /// win.grid(1, 2);
    /// win.set_view(0, 0);
    /// win.draw_image(&constant(0.0f32, dim4!(8, 8)), Some("dark".to_string()));
    /// win.set_view(0, 1);
    /// win.draw_image(&constant(1.0f32, dim4!(8, 8)), Some("light".to_string()));
    /// win.show();
    /// ```
    pub fn show(&mut self) {
        self.state.borrow_mut().present();
        self.row = -1;
        self.col = -1;
    }

    /// Directs the draws that follow to cell `(r, c)` of the grid (row `r` from the top,
    /// column `c` from the left), until [`show`](Window::show).
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.grid(2, 2);
    /// win.set_view(1, 0);
    /// ```
    pub fn set_view(&mut self, r: i32, c: i32) {
        self.row = r;
        self.col = c;
    }

    /// Sets the titles of the axes of the current view's charts (`"X Axis"`, `"Y Axis"` and
    /// `"Z Axis"` until set).
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.set_axes_titles("time".to_string(), "height".to_string(), String::new());
    /// ```
    pub fn set_axes_titles(&mut self, xlabel: String, ylabel: String, zlabel: String) {
        self.axes_mut().titles = [xlabel, ylabel, zlabel];
    }

    /// Sets the C `printf` formats of the tick labels of the current view's charts (`"%4.1f"`
    /// until set): one `%f`, `%e`, `%g` or `%d` conversion with any text around it.
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.set_axes_label_format("%.0f s".to_string(), "%.2e".to_string(), "%g".to_string());
    /// ```
    pub fn set_axes_label_format(
        &mut self,
        xlabel_format: String,
        ylabel_format: String,
        zlabel_format: String,
    ) {
        self.axes_mut().formats = [xlabel_format, ylabel_format, zlabel_format];
    }

    /// The same as [`set_axes_label_format`](Window::set_axes_label_format) (arrayfire-rust
    /// has both names; its version of this one sets the axes' titles instead).
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.set_axes_label_formats("%.1f".to_string(), "%.1f".to_string(), "%.1f".to_string());
    /// ```
    pub fn set_axes_label_formats(&mut self, xformat: String, yformat: String, zformat: String) {
        self.set_axes_label_format(xformat, yformat, zformat);
    }

    /// Sets the current view's axis limits to the smallest and largest values of `xrange`,
    /// `yrange` and `zrange` (2D charts ignore z). Unless `exact`, each range widens outwards
    /// to a multiple of a round step (a tenth of its order of magnitude). Until limits are set,
    /// each draw fits its own data. Panics when an array is empty.
    ///
    /// ```
    /// use emberfire::*;
    /// let mut win = Window::new_offscreen(200, 100, "w".to_string());
    /// let x = Array::new(&[0.0f32, 9.5], dim4!(2));
    /// let y = Array::new(&[-1.0f32, 1.0], dim4!(2));
    /// win.set_axes_limits_compute(&x, &y, None, true);
    /// ```
    pub fn set_axes_limits_compute<T>(
        &mut self,
        xrange: &Array<T>,
        yrange: &Array<T>,
        zrange: Option<&Array<T>>,
        exact: bool,
    ) where
        T: HasAfEnum,
    {
        let method = "set_axes_limits_compute";
        let range = |a: &Array<T>, arg: &str| {
            axes::extent(&host::values(a, method, arg))
                .unwrap_or_else(|| panic!("Window::{method}: {arg} has no finite values"))
        };
        let x = range(xrange, "xrange");
        let y = range(yrange, "yrange");
        let z = zrange.map(|z| range(z, "zrange"));
        let a = self.axes_mut();
        a.limits[0] = Some(axes::user_limits(x[0], x[1], exact));
        a.limits[1] = Some(axes::user_limits(y[0], y[1], exact));
        if let Some(z) = z {
            a.limits[2] = Some(axes::user_limits(z[0], z[1], exact));
        }
    }

    /// Sets the current view's x and y limits (see
    /// [`set_axes_limits_compute`](Window::set_axes_limits_compute) for `exact`).
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.set_axes_limits_2d(0.0, 10.0, -1.0, 1.0, true);
    /// ```
    pub fn set_axes_limits_2d(&mut self, xmin: f32, xmax: f32, ymin: f32, ymax: f32, exact: bool) {
        let a = self.axes_mut();
        a.limits[0] = Some(axes::user_limits(xmin.into(), xmax.into(), exact));
        a.limits[1] = Some(axes::user_limits(ymin.into(), ymax.into(), exact));
    }

    /// Sets the current view's x, y and z limits (see
    /// [`set_axes_limits_compute`](Window::set_axes_limits_compute) for `exact`).
    ///
    /// ```
    /// let mut win = emberfire::Window::new_offscreen(200, 100, "w".to_string());
    /// win.set_axes_limits_3d(0.0, 1.0, 0.0, 1.0, -2.0, 2.0, false);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn set_axes_limits_3d(
        &mut self,
        xmin: f32,
        xmax: f32,
        ymin: f32,
        ymax: f32,
        zmin: f32,
        zmax: f32,
        exact: bool,
    ) {
        let a = self.axes_mut();
        a.limits[0] = Some(axes::user_limits(xmin.into(), xmax.into(), exact));
        a.limits[1] = Some(axes::user_limits(ymin.into(), ymax.into(), exact));
        a.limits[2] = Some(axes::user_limits(zmin.into(), zmax.into(), exact));
    }

    /// Draws an image, stretched over the whole window or the current cell. Dimension 0 runs
    /// down and dimension 1 across (an `h x w` image fills a `w x h` window pixel for pixel);
    /// floating-point values from 0 to 1 and integer values from 0 to 255 span dark to
    /// light. One channel goes through the colour map; 3 channels (dimension 2) are red,
    /// green and blue, and a fourth is opacity. Panics for other channel counts or a batch.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(4, 2, "image".to_string());
    /// let img = Array::new(&[0u8, 10, 20, 30, 40, 50, 60, 70], dim4!(2, 4));
    /// win.draw_image(&img, None);
    /// assert_eq!(win.frame().pixel(1, 0), [20, 20, 20, 255]);
    /// ```
    pub fn draw_image<T>(&self, input: &Array<T>, title: Option<String>)
    where
        T: HasAfEnum,
    {
        let d = input.dims();
        assert!(
            matches!(d[2], 1 | 3 | 4) && d[3] == 1,
            "Window::draw_image: input must be h x w with 1, 3 or 4 channels, got dims {d}"
        );
        let values = host::values(input, "draw_image", "input");
        let dtype = T::get_af_dtype();
        self.draw("draw_image", title, |frame, content, _, cmap| {
            super::image::render(frame, content, &values, d, dtype, cmap)
        });
    }

    /// Draws the line through the points `(x[i], y[i])` in order, with axes fitted to the data
    /// unless limits were set. Panics when the lengths differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "plot".to_string());
    /// let x = range::<f32>(dim4!(50), 0);
    /// win.draw_plot2(&x, &(&x * &x), None);
    /// ```
    pub fn draw_plot2<T>(&self, x: &Array<T>, y: &Array<T>, title: Option<String>)
    where
        T: HasAfEnum,
    {
        let m = "draw_plot2";
        let c = vec![host::values(x, m, "x"), host::values(y, m, "y")];
        host::same_len(m, &[("x", &c[0]), ("y", &c[1])]);
        self.draw(m, title, |f, r, a, _| super::plot::render2(f, r, a, &c, Style::Line));
    }

    /// Draws the line through the points `(x[i], y[i], z[i])` in the 3D view. Panics when the
    /// lengths differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "helix".to_string());
    /// let t = range::<f32>(dim4!(100), 0) / 10.0f32;
    /// win.draw_plot3(&cos(&t), &sin(&t), &t, None);
    /// ```
    pub fn draw_plot3<T>(&self, x: &Array<T>, y: &Array<T>, z: &Array<T>, title: Option<String>)
    where
        T: HasAfEnum,
    {
        let m = "draw_plot3";
        let c = vec![host::values(x, m, "x"), host::values(y, m, "y"), host::values(z, m, "z")];
        host::same_len(m, &[("x", &c[0]), ("y", &c[1]), ("z", &c[2])]);
        self.draw(m, title, |f, r, a, _| super::plot::render3(f, r, a, &c, Style::Line));
    }

    /// Draws the line through `points`, an `[n, 2]` or `[n, 3]` array (one point per row; the
    /// transposed `[2, n]` and `[3, n]` are accepted too), in 2D or 3D.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "points".to_string());
    /// let p = Array::new(&[0.0f32, 1.0, 2.0, 0.0, 1.0, 0.0], dim4!(3, 2));
    /// win.draw_plot(&p, None);
    /// ```
    pub fn draw_plot<T>(&self, points: &Array<T>, title: Option<String>)
    where
        T: HasAfEnum,
    {
        let c = host::points(points, &[2, 3], "draw_plot", "points");
        self.draw("draw_plot", title, |f, r, a, _| match c.len() {
            2 => super::plot::render2(f, r, a, &c, Style::Line),
            _ => super::plot::render3(f, r, a, &c, Style::Line),
        });
    }

    /// Draws a histogram: `hst`'s counts as bars over `[minval, maxval]` (as
    /// [`histogram`](crate::histogram) computes them), the y axis from 0 to the largest count
    /// unless limits were set. Panics when `hst` is empty or `minval >= maxval`.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "histogram".to_string());
    /// let data = randu::<f32>(dim4!(1000));
    /// win.draw_hist(&histogram(&data, 10, 0.0, 1.0), 0.0, 1.0, None);
    /// ```
    pub fn draw_hist<T>(&self, hst: &Array<T>, minval: f64, maxval: f64, title: Option<String>)
    where
        T: HasAfEnum,
    {
        let counts = host::values(hst, "draw_hist", "hst");
        assert!(!counts.is_empty(), "Window::draw_hist: hst is empty");
        assert!(
            minval < maxval,
            "Window::draw_hist: minval ({minval}) must be less than maxval ({maxval})"
        );
        self.draw("draw_hist", title, |f, r, a, _| {
            super::hist::render(f, r, a, &counts, minval, maxval)
        });
    }

    /// Draws the surface of heights `zvals` (`m x n`) over the points `(xvals[i], yvals[j])`,
    /// `xvals` having `m` elements and `yvals` `n` (or both `m x n` grids of coordinates), in
    /// the 3D view, coloured by height through the colour map. Panics when sizes disagree.
    ///
    /// ```
    /// use emberfire::*;
    /// let mut win = Window::new_offscreen(200, 150, "surface".to_string());
    /// win.set_colormap(ColorMap::SPECTRUM);
    /// let x = range::<f32>(dim4!(20), 0) / 19.0f32;
    /// let y = x.clone();
    /// let z = matmul(&x, &transpose(&y, false), MatProp::NONE, MatProp::NONE);
    /// win.draw_surface(&x, &y, &z, None);
    /// ```
    pub fn draw_surface<T>(
        &self,
        xvals: &Array<T>,
        yvals: &Array<T>,
        zvals: &Array<T>,
        title: Option<String>,
    ) where
        T: HasAfEnum,
    {
        let m = "draw_surface";
        let d = zvals.dims();
        assert!(d[2] == 1 && d[3] == 1, "Window::{m}: zvals must be a matrix, got dims {d}");
        let (rows, cols) = (d[0] as usize, d[1] as usize);
        let (xs, ys, zs) = (
            host::values(xvals, m, "xvals"),
            host::values(yvals, m, "yvals"),
            host::values(zvals, m, "zvals"),
        );
        let vectors = xs.len() == rows && ys.len() == cols;
        let grids = xs.len() == zs.len() && ys.len() == zs.len();
        assert!(
            vectors || grids,
            "Window::{m}: zvals is {rows} x {cols}, so xvals must have {rows} elements and yvals \
             {cols} (or both {rows} x {cols}); got {} and {}",
            xs.len(),
            ys.len()
        );
        self.draw(m, title, |f, r, a, cmap| {
            super::surface::render(f, r, a, cmap, &xs, &ys, &zs, rows, cols)
        });
    }

    /// Draws a marker at each point `(xvals[i], yvals[i])`. Panics when the lengths differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "scatter".to_string());
    /// win.draw_scatter2(&randu::<f32>(dim4!(50)), &randu::<f32>(dim4!(50)), MarkerType::CROSS, None);
    /// ```
    pub fn draw_scatter2<T>(
        &self,
        xvals: &Array<T>,
        yvals: &Array<T>,
        marker: MarkerType,
        title: Option<String>,
    ) where
        T: HasAfEnum,
    {
        let m = "draw_scatter2";
        let c = vec![host::values(xvals, m, "xvals"), host::values(yvals, m, "yvals")];
        host::same_len(m, &[("xvals", &c[0]), ("yvals", &c[1])]);
        self.draw(m, title, |f, r, a, _| super::plot::render2(f, r, a, &c, Style::Markers(marker)));
    }

    /// Draws a marker at each point `(xvals[i], yvals[i], zvals[i])` in the 3D view. Panics
    /// when the lengths differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "scatter".to_string());
    /// let v = randu::<f32>(dim4!(30));
    /// win.draw_scatter3(&v, &(&v * 2.0f32), &sin(&v), MarkerType::POINT, None);
    /// ```
    pub fn draw_scatter3<T>(
        &self,
        xvals: &Array<T>,
        yvals: &Array<T>,
        zvals: &Array<T>,
        marker: MarkerType,
        title: Option<String>,
    ) where
        T: HasAfEnum,
    {
        let m = "draw_scatter3";
        let c = vec![
            host::values(xvals, m, "xvals"),
            host::values(yvals, m, "yvals"),
            host::values(zvals, m, "zvals"),
        ];
        host::same_len(m, &[("xvals", &c[0]), ("yvals", &c[1]), ("zvals", &c[2])]);
        self.draw(m, title, |f, r, a, _| super::plot::render3(f, r, a, &c, Style::Markers(marker)));
    }

    /// Draws a marker at each point of `vals`, an `[n, 2]` or `[n, 3]` array (or its
    /// transpose), in 2D or 3D.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "scatter".to_string());
    /// win.draw_scatter(&randu::<f32>(dim4!(40, 2)), MarkerType::SQUARE, None);
    /// ```
    pub fn draw_scatter<T>(&self, vals: &Array<T>, marker: MarkerType, title: Option<String>)
    where
        T: HasAfEnum,
    {
        let c = host::points(vals, &[2, 3], "draw_scatter", "vals");
        self.draw("draw_scatter", title, |f, r, a, _| match c.len() {
            2 => super::plot::render2(f, r, a, &c, Style::Markers(marker)),
            _ => super::plot::render3(f, r, a, &c, Style::Markers(marker)),
        });
    }

    /// Draws an arrow from each point `(xpnts[i], ypnts[i])` to that point plus
    /// `(xdirs[i], ydirs[i])`, in data units. Panics when the lengths differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "field".to_string());
    /// let p = Array::new(&[0.0f32, 1.0, 2.0], dim4!(3));
    /// let d = Array::new(&[0.5f32, 0.5, 0.5], dim4!(3));
    /// win.draw_vector_field2(&p, &p, &d, &(-&d), None);
    /// ```
    pub fn draw_vector_field2<T>(
        &self,
        xpnts: &Array<T>,
        ypnts: &Array<T>,
        xdirs: &Array<T>,
        ydirs: &Array<T>,
        title: Option<String>,
    ) where
        T: HasAfEnum,
    {
        let m = "draw_vector_field2";
        let p = vec![host::values(xpnts, m, "xpnts"), host::values(ypnts, m, "ypnts")];
        let d = vec![host::values(xdirs, m, "xdirs"), host::values(ydirs, m, "ydirs")];
        host::same_len(
            m,
            &[("xpnts", &p[0]), ("ypnts", &p[1]), ("xdirs", &d[0]), ("ydirs", &d[1])],
        );
        self.draw(m, title, |f, r, a, _| super::vector_field::render(f, r, a, &p, &d));
    }

    /// Draws an arrow from each point `(xpnts[i], ypnts[i], zpnts[i])` along
    /// `(xdirs[i], ydirs[i], zdirs[i])` in the 3D view. Panics when the lengths differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "field".to_string());
    /// let p = randu::<f32>(dim4!(10));
    /// let d = constant(0.1f32, dim4!(10));
    /// win.draw_vector_field3(&p, &p, &p, &d, &d, &d, None);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn draw_vector_field3<T>(
        &self,
        xpnts: &Array<T>,
        ypnts: &Array<T>,
        zpnts: &Array<T>,
        xdirs: &Array<T>,
        ydirs: &Array<T>,
        zdirs: &Array<T>,
        title: Option<String>,
    ) where
        T: HasAfEnum,
    {
        let m = "draw_vector_field3";
        let p = vec![
            host::values(xpnts, m, "xpnts"),
            host::values(ypnts, m, "ypnts"),
            host::values(zpnts, m, "zpnts"),
        ];
        let d = vec![
            host::values(xdirs, m, "xdirs"),
            host::values(ydirs, m, "ydirs"),
            host::values(zdirs, m, "zdirs"),
        ];
        host::same_len(
            m,
            &[
                ("xpnts", &p[0]),
                ("ypnts", &p[1]),
                ("zpnts", &p[2]),
                ("xdirs", &d[0]),
                ("ydirs", &d[1]),
                ("zdirs", &d[2]),
            ],
        );
        self.draw(m, title, |f, r, a, _| super::vector_field::render(f, r, a, &p, &d));
    }

    /// Draws an arrow from each point of `points` along the same row of `directions`, both
    /// `[n, 2]` or `[n, 3]` arrays (or their transposes), in 2D or 3D. Panics when their
    /// shapes differ.
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(200, 150, "field".to_string());
    /// let p = randu::<f32>(dim4!(10, 2));
    /// win.draw_vector_field(&p, &(&p * 0.1f32), None);
    /// ```
    pub fn draw_vector_field<T>(
        &self,
        points: &Array<T>,
        directions: &Array<T>,
        title: Option<String>,
    ) where
        T: HasAfEnum,
    {
        let m = "draw_vector_field";
        let p = host::points(points, &[2, 3], m, "points");
        let d = host::points(directions, &[2, 3], m, "directions");
        assert!(
            p.len() == d.len() && p[0].len() == d[0].len(),
            "Window::{m}: points has dims {} but directions {}; they must match",
            points.dims(),
            directions.dims()
        );
        self.draw(m, title, |f, r, a, _| super::vector_field::render(f, r, a, &p, &d));
    }

    /// The latest frame: what the window shows or last wrote, with the cells drawn since
    /// (an emberfire addition, for tests and for programs that want the picture itself).
    ///
    /// ```
    /// use emberfire::*;
    /// let win = Window::new_offscreen(3, 2, "w".to_string());
    /// win.draw_image(&constant(0u8, dim4!(2, 3)), None);
    /// assert_eq!(win.frame().pixel(2, 1), [0, 0, 0, 255]);
    /// ```
    pub fn frame(&self) -> Frame {
        self.state.borrow().frame.clone()
    }

    /// The axes settings of the current view, created on first use.
    fn axes_mut(&mut self) -> &mut AxesSettings {
        let key = self.view_key();
        self.state.get_mut().axes.entry(key).or_default()
    }

    fn view_key(&self) -> (i32, i32) {
        if self.row < 0 || self.col < 0 {
            (-1, -1)
        } else {
            (self.row, self.col)
        }
    }

    /// Runs one draw kind on the whole window (and shows the frame) or on the current cell.
    fn draw(
        &self,
        method: &str,
        title: Option<String>,
        render: impl FnOnce(&mut Frame, Rect, &AxesSettings, ColorMap),
    ) {
        let key = self.view_key();
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let axes = st.axes.get(&key).cloned().unwrap_or_default();
        let (w, h) = (st.frame.width(), st.frame.height());
        if key == (-1, -1) {
            let content = layout::prepare(&mut st.frame, Rect::new(0, 0, w as i64, h as i64), None);
            render(&mut st.frame, content, &axes, self.cmap);
            st.present();
        } else {
            let (rows, cols) = st.grid;
            assert!(
                key.0 < rows && key.1 < cols,
                "Window::{method}: the view ({}, {}) is outside the grid of {rows} x {cols} cells",
                key.0,
                key.1
            );
            let cell = layout::cell(w, h, rows, cols, key.0, key.1);
            let content = layout::prepare(&mut st.frame, cell, title.as_deref());
            render(&mut st.frame, content, &axes, self.cmap);
        }
    }
}

impl State {
    fn present(&mut self) {
        let index = self.shown;
        self.sink.present(&self.frame, index, self.visible);
        self.shown += 1;
    }
}

impl std::fmt::Debug for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.borrow();
        f.debug_struct("Window")
            .field("title", &st.title)
            .field("size", &(st.frame.width(), st.frame.height()))
            .field("grid", &st.grid)
            .field("view", &(self.row, self.col))
            .field("cmap", &self.cmap)
            .field("on_screen", &st.sink.on_screen())
            .field("frames_shown", &st.shown)
            .finish()
    }
}
