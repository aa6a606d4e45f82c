// Every kind of chart in one window: a grid of six titled cells (an image through a colour
// map, a line plot with titled axes, a scatter plot, a histogram, a surface and a vector
// field), redrawn each frame as a wave moves along.
//
// Run with `cargo run --example graphics_grid`. Where no display is available the frames are
// written as PNG files (`EMBERFIRE_FRAMES_DIR`, default `emberfire-frames` in the temporary
// folder) and the window closes after `EMBERFIRE_FRAMES` frames (default 5).

use emberfire::*;

fn main() {
    // ANCHOR: data
    let n = 64;
    let x = range::<f32>(dim4!(n), 0) * (6.0f32 / n as f32);
    let grid_x = range::<f32>(dim4!(n, n), 0) / (n as f32 - 1.0);
    let grid_y = range::<f32>(dim4!(n, n), 1) / (n as f32 - 1.0);
    let samples = randn::<f32>(dim4!(4000));
    let arrows = range::<f32>(dim4!(8), 0);
    let (ax, ay) = (tile(&arrows, dim4!(1, 8)), tile(&transpose(&arrows, false), dim4!(8)));
    let (ax, ay) = (flat(&ax), flat(&ay));
    // ANCHOR_END: data

    // ANCHOR: grid
    let mut win = Window::new(960, 600, "emberfire graphics".to_string());
    win.grid(2, 3);
    let mut phase = 0.0f32;
    while !win.is_closed() {
        let wave = sin(&(&x + phase));
        let ripple = sin(&((&grid_x * &grid_x + &grid_y * &grid_y) * 12.0f32 - phase));

        win.set_view(0, 0);
        win.set_colormap(ColorMap::SPECTRUM);
        win.draw_image(&(&ripple * 0.5f32 + 0.5f32), Some("image (SPECTRUM)".to_string()));

        win.set_view(0, 1);
        win.set_axes_titles("time".to_string(), "height".to_string(), String::new());
        win.set_axes_limits_2d(0.0, 6.0, -1.0, 1.0, true);
        win.draw_plot2(&x, &wave, Some("draw_plot2".to_string()));

        win.set_view(0, 2);
        win.draw_scatter2(
            &x,
            &cos(&(&x * 2.0f32 - phase)),
            MarkerType::CIRCLE,
            Some("draw_scatter2".to_string()),
        );

        win.set_view(1, 0);
        win.set_axes_label_format("%.1f".to_string(), "%.0f".to_string(), "%.1f".to_string());
        win.draw_hist(
            &histogram(&(&samples + phase), 40, -4.0, 6.0),
            -4.0,
            6.0,
            Some("draw_hist".to_string()),
        );

        win.set_view(1, 1);
        win.set_colormap(ColorMap::HEAT);
        win.draw_surface(
            &col(&grid_x, 0),
            &flat(&row(&grid_y, 0)),
            &ripple,
            Some("draw_surface".to_string()),
        );

        win.set_view(1, 2);
        let (dx, dy) =
            (cos(&(&ay * 0.7f32 + phase)) * 0.8f32, sin(&(&ax * 0.7f32 + phase)) * 0.8f32);
        win.draw_vector_field2(&ax, &ay, &dx, &dy, Some("draw_vector_field2".to_string()));

        win.show();
        phase += 0.3;
    }
    // ANCHOR_END: grid
}
