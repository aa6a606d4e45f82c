//! Where frames go: a window on the screen where one can be opened, PNG files otherwise.
//!
//! The screen is reached through minifb's X11 backend, which opens libX11 at run time: the
//! crate needs no system library to build, and a machine with no X server, no libX11 or no
//! `DISPLAY` simply gets off-screen frames (the reason is written once to stderr). Wayland
//! sessions reach the screen through XWayland's `DISPLAY`.
//!
//! Off-screen, each shown frame is written as `frame-00000.png`, `frame-00001.png`, ... in the
//! folder `EMBERFIRE_FRAMES_DIR` names (default: `emberfire-frames` in the system's temporary
//! folder); the second window a program opens writes `window1-frame-00000.png`, and so on.
//! After `EMBERFIRE_FRAMES` frames (default 5) the window reports itself closed, so a program's
//! `while !win.is_closed()` loop ends. `EMBERFIRE_OFFSCREEN=1` keeps every window off-screen
//! even where a display exists.

use super::frame::Frame;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Frames a window shows off-screen before it reports itself closed, unless
/// `EMBERFIRE_FRAMES` says otherwise.
pub(super) const DEFAULT_FRAMES: usize = 5;

pub(super) enum Sink {
    Screen(Box<minifb::Window>),
    Files(Files),
}

pub(super) struct Files {
    /// Folder and file-name prefix of the frames.
    dir: PathBuf,
    prefix: String,
    limit: usize,
    failed: bool,
}

/// Says once per process why frames go to files although a display was expected.
fn note_once(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("emberfire: no window on the screen ({why}); frames are written as PNG files");
    }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
}

/// The folder off-screen frames go to.
pub(super) fn frames_dir() -> PathBuf {
    std::env::var_os("EMBERFIRE_FRAMES_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("emberfire-frames"))
}

/// How many frames an off-screen window shows before it reports itself closed.
pub(super) fn frame_limit() -> usize {
    match std::env::var("EMBERFIRE_FRAMES") {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            static SAID: AtomicBool = AtomicBool::new(false);
            if !SAID.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "emberfire: EMBERFIRE_FRAMES={v:?} is not a count; using {DEFAULT_FRAMES}"
                );
            }
            DEFAULT_FRAMES
        }),
        Err(_) => DEFAULT_FRAMES,
    }
}

impl Sink {
    /// Opens window number `id`: on the screen when a display is set and reachable and
    /// `offscreen` is false, off-screen otherwise.
    pub fn open(width: usize, height: usize, title: &str, id: usize, offscreen: bool) -> Sink {
        let wants_screen = !offscreen
            && !env_flag("EMBERFIRE_OFFSCREEN")
            && (std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty())
                || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty()));
        if wants_screen {
            let opened = std::panic::catch_unwind(|| {
                minifb::Window::new(
                    title,
                    width.max(1),
                    height.max(1),
                    minifb::WindowOptions::default(),
                )
            });
            match opened {
                Ok(Ok(mut w)) => {
                    w.set_target_fps(60);
                    return Sink::Screen(Box::new(w));
                }
                Ok(Err(e)) => note_once(&e.to_string()),
                Err(_) => note_once("the windowing library failed"),
            }
        }
        let prefix = if id == 0 { "frame".to_string() } else { format!("window{id}-frame") };
        Sink::Files(Files { dir: frames_dir(), prefix, limit: frame_limit(), failed: false })
    }

    /// Whether frames go to the screen.
    pub fn on_screen(&self) -> bool {
        matches!(self, Sink::Screen(_))
    }

    /// Shows frame number `index` (counting from 0).
    pub fn present(&mut self, frame: &Frame, index: usize, visible: bool) {
        match self {
            Sink::Screen(w) => {
                if visible {
                    if let Err(e) =
                        w.update_with_buffer(&frame.to_0rgb(), frame.width(), frame.height())
                    {
                        note_once(&e.to_string());
                    }
                }
            }
            Sink::Files(f) => {
                if index >= f.limit || f.failed {
                    return;
                }
                let dir = &f.dir;
                let path = dir.join(format!("{}-{index:05}.png", f.prefix));
                let written = std::fs::create_dir_all(dir)
                    .map_err(|e| e.to_string())
                    .and_then(|_| frame.save_png(&path).map_err(|e| e.to_string()));
                if let Err(e) = written {
                    eprintln!(
                        "emberfire: cannot write the window's frames to {}: {e}",
                        dir.display()
                    );
                    f.failed = true;
                }
            }
        }
    }

    /// Whether the window is closed, after `shown` frames.
    pub fn is_closed(&mut self, shown: usize) -> bool {
        match self {
            Sink::Screen(w) => {
                w.update();
                !w.is_open()
            }
            Sink::Files(f) => shown >= f.limit,
        }
    }

    pub fn set_title(&mut self, title: &str) {
        if let Sink::Screen(w) = self {
            w.set_title(title);
        }
    }

    pub fn set_position(&mut self, x: u32, y: u32) {
        if let Sink::Screen(w) = self {
            w.set_position(x as isize, y as isize);
        }
    }
}
