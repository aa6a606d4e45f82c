//! Conway's Game of Life by convolution: the live neighbours of every cell are one
//! `convolve2` of the board with a 3x3 kernel, and the rules are two comparisons.
//!
//! Run with `cargo run --example game_of_life [-- OUT_DIR]` (default: `game_of_life` in the system's
//! temporary directory). It writes the first frames as PNGs and checks that a blinker
//! oscillates and a glider moves one cell diagonally every four generations.

use emberfire::*;

const SIZE: usize = 32;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("game_of_life"));
    std::fs::create_dir_all(&dir).expect("create the output folder");

    // A glider near the top left corner and a blinker on the right (row, column).
    let glider = [(1, 2), (2, 3), (3, 1), (3, 2), (3, 3)];
    let blinker = [(10, 20), (10, 21), (10, 22)];
    let mut cells = vec![0.0f32; SIZE * SIZE];
    for &(r, c) in glider.iter().chain(&blinker) {
        cells[r + c * SIZE] = 1.0;
    }
    let mut state = Array::new(&cells, dim4!(SIZE, SIZE));

    let mut frames = vec![state.to_vec()];
    for _ in 0..8 {
        state = step(&state);
        frames.push(state.to_vec());
    }

    // The blinker turns vertical, then back.
    let alive = |f: &[f32], r: usize, c: usize| f[r + c * SIZE] == 1.0;
    assert!(alive(&frames[1], 9, 21) && alive(&frames[1], 10, 21) && alive(&frames[1], 11, 21));
    assert!(!alive(&frames[1], 10, 20) && !alive(&frames[1], 10, 22));
    assert!(blinker.iter().all(|&(r, c)| alive(&frames[2], r, c)));
    // The glider reappears one row down and one column right every four generations.
    for (gen, shift) in [(4, 1), (8, 2)] {
        assert!(glider.iter().all(|&(r, c)| alive(&frames[gen], r + shift, c + shift)));
    }
    let population: Vec<usize> =
        frames.iter().map(|f| f.iter().filter(|&&v| v == 1.0).count()).collect();
    assert!(population.iter().all(|&p| p == 8), "population {population:?}");

    for (i, f) in frames.iter().enumerate() {
        write_frame(&dir.join(format!("frame{i:02}.png")), f);
    }
    println!("{} frames written to {}", frames.len(), dir.display());
}

// ANCHOR: step
/// One generation: a live cell with 2 or 3 live neighbours lives on, a cell with exactly 3
/// live neighbours becomes alive, every other cell dies. Cells beyond the edge are dead.
fn step(state: &Array<f32>) -> Array<f32> {
    let kernel = Array::new(&[1.0f32, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0], dim4!(3, 3));
    let neighbours = convolve2(state, &kernel, ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let two = eq(&neighbours, &2.0f32, false);
    let three = eq(&neighbours, &3.0f32, false);
    state * &two + &three
}
// ANCHOR_END: step

/// Writes a board as a black-on-white PNG, 8 pixels per cell.
fn write_frame(path: &std::path::Path, cells: &[f32]) {
    const SCALE: usize = 8;
    let side = SIZE * SCALE;
    let mut pixels = vec![255u8; side * side];
    for y in 0..side {
        for x in 0..side {
            if cells[y / SCALE + (x / SCALE) * SIZE] == 1.0 {
                pixels[y * side + x] = 0;
            }
        }
    }
    let file = std::fs::File::create(path).expect("create the PNG file");
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), side as u32, side as u32);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().expect("write the PNG header");
    writer.write_image_data(&pixels).expect("write the PNG pixels");
}
