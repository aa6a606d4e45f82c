//! Images and what is drawn: image processing, the iterative image algorithms, mean shift,
//! geometric transforms, image files, computer vision and graphics (off-screen). Each module
//! was a test binary of its own; they share this one, and its tests run in parallel threads:
//! none of them reads or changes process-wide state that another one would disturb (those live
//! in `tests/process`). `graphics` runs this binary again in child processes, by the test name
//! `graphics::example_child`.

#[path = "../common/mod.rs"]
mod common;

mod graphics;
mod image;
mod image_algos;
mod image_io;
mod image_mean_shift;
mod image_transform;
mod vision;
