//! Graphics with arrayfire-rust's names and signatures: a [`Window`] that draws images, line
//! and scatter plots, histograms, surfaces and vector fields, alone or in a grid of titled
//! cells, with axes that carry ticks, labels and titles; and the enums [`ColorMap`] and
//! [`MarkerType`].
//!
//! ArrayFire draws with OpenGL through its Forge library and needs a display. emberfire
//! renders every frame itself, on the host, into an RGBA picture ([`Frame`]) and then either
//! shows it in a window on the screen or, where there is no screen, writes it as a PNG file,
//! so that a program written for a screen runs unchanged on a server and leaves its frames
//! behind (see [`Window`] for the environment variables). One renderer for both means the
//! off-screen files are exactly what a screen would show, and the tests can check pixels.
//!
//! Rendering on the host costs a copy of each drawn array from the device, which the
//! renderer makes itself: ArrayFire copies to an OpenGL buffer too, and the arrays a program
//! draws each frame (an image, a few thousand points) are small beside a frame's time.
//!
//! One concern per file: `window` (the public type and its state), `layout` (grid cells and
//! titles), `axes` (limits, ticks, labels, the 3D view), `format` (tick labels' `printf`
//! formats), `frame` (the picture and its primitives), `font` (text), `colormap`, `marker`,
//! one file per draw kind (`image`, `plot` for lines and scatters, `hist`, `surface`,
//! `vector_field`), `host` (reading arrays) and `sink` (screen or files).

mod axes;
mod colormap;
mod font;
mod format;
mod frame;
mod hist;
mod host;
mod image;
mod layout;
mod marker;
mod plot;
mod sink;
mod surface;
mod vector_field;
mod window;

pub use colormap::ColorMap;
pub use frame::Frame;
pub use marker::MarkerType;
pub use window::Window;
