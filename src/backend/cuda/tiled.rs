//! What the tiled image filters (`ef_window` in `kernels/image.cu`, `ef_convolve2_tiled` in
//! `kernels/signal.cu`) share on the host: the source of their shared-memory staging
//! (`kernels/tile.cu`) and the shape of their grid.

use super::runtime::Device;
use crate::dim4::Dim4;

/// The staging the tiled filters include in front of their own source.
pub(crate) const TILE_STAGING: &str = include_str!("kernels/tile.cu");

/// The side of a tiled filter's square output tile (the kernels' `TW` and `CT`).
pub(crate) const TILE: u64 = 32;

/// Resident blocks of 256 threads a device keeps per multiprocessor, at most.
const BLOCKS_PER_SM: u64 = 8;

/// The grid of a kernel of (32, 8) blocks computing tiles of `TILE x rows` outputs, over
/// images of shape `dims`: grid.x covers dimension 0, grid.z the images (up to the limit), and
/// grid.y only as many tiles of dimension 1 as make about two waves of resident blocks, so
/// that each block walks several tiles and has the next one's loads in flight while it
/// finishes this one (a block with one tile waits for its loads with nothing to do).
pub(crate) fn tiled_grid(dev: &Device, dims: Dim4, rows: u64) -> (u32, u32, u32) {
    let gx = dims[0].div_ceil(TILE);
    let gz = (dims[2] * dims[3]).clamp(1, 65_535);
    let tiles = dims[1].div_ceil(rows).max(1);
    let want = (dev.sm_count() as u64 * BLOCKS_PER_SM * 2).div_ceil(gx * gz).clamp(1, tiles);
    // as many rows of blocks as split the tiles evenly
    let gy = tiles.div_ceil(tiles.div_ceil(want)).min(65_535);
    (gx as u32, gy as u32, gz as u32)
}
