//! What the tiled image filters (`ef_window` in `kernels/image.cu`, `ef_convolve2_tiled` in
//! `kernels/signal.cu`, and the grid of `ef_warp`) share on the host: the source of their tile
//! order and shared-memory staging (`kernels/tile.cu`), the shape of their output tiles, and
//! their grids.

use std::sync::OnceLock;

use super::kernel::KernelFn;
use super::runtime::Device;
use crate::dim4::Dim4;

/// The tile order and staging the tiled filters include in front of their own source.
pub(crate) const TILE_STAGING: &str = include_str!("kernels/tile.cu");

/// The output tile of a tiled filter run on (32, 8) blocks: `groups` columns of 32 outputs
/// side by side (the kernels' `TCG`), each thread computing `rows` neighbouring outputs of
/// each of its columns (`TR`), so `32 groups` x `8 rows` outputs a tile; and the order the
/// blocks take the tiles in (`walk`: see `tile.cu`). With `pairs` (the convolution only,
/// `TCP = 2`), each of those columns is two neighbouring ones, which a thread reads and
/// stores as pairs, and the tile is twice as wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileShape {
    pub(crate) groups: u64,
    pub(crate) rows: u64,
    pub(crate) walk: bool,
    pub(crate) pairs: bool,
}

impl TileShape {
    /// The defines that compile a kernel for this shape.
    pub(crate) fn defines(self) -> String {
        format!(
            "#define TCG {}\n#define TR {}\n#define TILE_WALK {}\n#define TCP {}\n",
            self.groups,
            self.rows,
            self.walk as u8,
            self.columns_a_thread()
        )
    }

    /// The bytes the key of a kernel compiled for this shape holds.
    pub(crate) fn key(self) -> [u8; 4] {
        [self.groups as u8, self.rows as u8, self.walk as u8, self.pairs as u8]
    }

    /// Neighbouring columns a thread computes in each of its groups.
    fn columns_a_thread(self) -> u64 {
        1 + self.pairs as u64
    }

    pub(crate) fn width(self) -> u64 {
        32 * self.groups * self.columns_a_thread()
    }

    pub(crate) fn height(self) -> u64 {
        8 * self.rows
    }

    /// The bytes of the staged input tile of elements of `elem` bytes for a `window`.
    fn staged_bytes(self, window: [u64; 2], elem: usize) -> u64 {
        (self.width() + window[0] - 1) * (self.height() + window[1] - 1) * elem as u64
    }
}

/// The tile the convolution prefers: 64 x 64 outputs, each thread computing eight rows of two
/// neighbouring columns (`pairs`), so that a thread's share of a tile's fixed cost (staging,
/// addresses, the walk) and of its shared-memory reads covers sixteen outputs. The
/// convolution's instructions, not its bytes, were what held it back: 32 x 64 tiles of one
/// column a thread issued some 66 instructions an output of a 5 x 5 filter, of which 25 are
/// its multiply-adds; these issue some 48. `gauss5_f32` (4096 x 4096): 0.053 ms, 83% of
/// copy, against 0.057 with one column a thread and 0.060 before (an H100, 2026-12-07: see
/// the performance chapter).
pub(crate) const CONVOLUTION_TILE: TileShape =
    TileShape { groups: 1, rows: 8, walk: true, pairs: true };

/// The tile the window filters (morphology, medians) prefer.
pub(crate) const WINDOW_TILE: TileShape =
    TileShape { groups: 2, rows: 4, walk: true, pairs: false };

/// The tile Sobel prefers: 32 x 32 (each thread computes two outputs at each position, and
/// larger tiles measured no faster), one wave of blocks walking the tiles (0.081 ms against
/// 0.087 with blocks keeping their columns on an H100, 2026-12-07: see the performance
/// chapter).
pub(crate) const SOBEL_TILE: TileShape = TileShape { groups: 1, rows: 4, walk: true, pairs: false };

/// The tile shape a filter that prefers `preferred`, with this window, over elements of
/// `elem` bytes, is compiled for. A taller or wider tile reads fewer halo elements per output
/// and shares more of each thread's reads of the staged rows among its outputs, as long as
/// the staged tile and the registers that carry the next one stay small enough for several
/// blocks a multiprocessor; a large window or element falls back to 32 x 32 tiles. (Measured
/// on an H100 beside 32 x 32 tiles, 2026-11-26: see the performance chapter.) Pairs of
/// columns only where `preferred` has them (the filters that compute them) and for elements
/// of 4 bytes and windows of at most 25 elements: larger ones leave no registers for a
/// thread's second column.
pub(crate) fn tile_shape(preferred: TileShape, window: [u64; 2], elem: usize) -> TileShape {
    let can_pair = preferred.pairs && elem == 4 && window[0] * window[1] <= 25;
    let mut shape = tuned_shape().unwrap_or(preferred);
    shape.pairs &= can_pair;
    // the staged tile within 24 KiB, which also keeps a thread's share of the next one (the
    // registers that carry it) within 24 words
    let fits = |s: TileShape| s.staged_bytes(window, elem) <= 24 * 1024;
    if fits(shape) {
        shape
    } else {
        TileShape { rows: 4, groups: 1, pairs: false, ..shape }
    }
}

/// A tile shape named by `EMBERFIRE_TILE_SHAPE=groups,rows,walk[,pairs]` (for measuring
/// others; pairs where the filter computes them).
fn tuned_shape() -> Option<TileShape> {
    static SHAPE: OnceLock<Option<TileShape>> = OnceLock::new();
    *SHAPE.get_or_init(|| parse_shape(&std::env::var("EMBERFIRE_TILE_SHAPE").ok()?))
}

fn parse_shape(v: &str) -> Option<TileShape> {
    let mut parts = v.split(',').map(|p| p.trim().parse::<u64>().ok());
    let groups = parts.next()??;
    let rows = parts.next()??;
    let walk = parts.next()??;
    let pairs = parts.next().unwrap_or(Some(0))?;
    let fine = matches!(groups, 1 | 2 | 4)
        && matches!(rows, 1 | 2 | 4 | 8 | 16)
        && walk < 2
        && pairs < 2
        && parts.next().is_none();
    if fine {
        Some(TileShape { groups, rows, walk: walk == 1, pairs: pairs == 1 })
    } else {
        None
    }
}

/// Resident blocks of 256 threads a device keeps per multiprocessor, at most.
const BLOCKS_PER_SM: u64 = 8;

/// The grid of a tiled kernel `k` over images of shape `dims` in tiles of `shape`: with the
/// walk, as many (32, 8) blocks as the device keeps resident (one wave), and no more than
/// there are tiles; else [`column_grid`].
pub(crate) fn tiled_grid(
    dev: &Device,
    k: &KernelFn,
    dims: Dim4,
    shape: TileShape,
) -> (u32, u32, u32) {
    if !shape.walk {
        return column_grid(dev, dims, shape.width(), shape.height());
    }
    let tiles =
        dims[0].div_ceil(shape.width()) * dims[1].div_ceil(shape.height()) * dims[2] * dims[3];
    let resident = dev.sm_count() as u64 * k.resident_blocks() as u64;
    (resident.min(tiles).clamp(1, u32::MAX as u64) as u32, 1, 1)
}

/// The grid of a kernel of (32, 8) blocks computing tiles of `width x height` outputs over
/// images of shape `dims`, each block keeping its column: grid.x covers dimension 0, grid.z
/// the images (up to the limit), and grid.y only as many tiles of dimension 1 as make about
/// two waves of resident blocks, so that each block walks several tiles and has the next
/// one's loads in flight while it finishes this one (a block with one tile waits for its
/// loads with nothing to do).
pub(crate) fn column_grid(dev: &Device, dims: Dim4, width: u64, height: u64) -> (u32, u32, u32) {
    let gx = dims[0].div_ceil(width);
    let gz = (dims[2] * dims[3]).clamp(1, 65_535);
    let tiles = dims[1].div_ceil(height).max(1);
    let want = (dev.sm_count() as u64 * BLOCKS_PER_SM * 2).div_ceil(gx * gz).clamp(1, tiles);
    // as many rows of blocks as split the tiles evenly
    let gy = tiles.div_ceil(tiles.div_ceil(want)).min(65_535);
    (gx as u32, gy as u32, gz as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_with_and_without_pairs() {
        let s = |groups, rows, walk, pairs| Some(TileShape { groups, rows, walk, pairs });
        assert_eq!(parse_shape("2,4,1"), s(2, 4, true, false));
        assert_eq!(parse_shape(" 1, 8, 0, 1"), s(1, 8, false, true));
        for bad in ["", "1,8", "3,8,1", "1,3,1", "1,8,2", "1,8,1,2", "1,8,1,1,0", "a,8,1"] {
            assert_eq!(parse_shape(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_convolution_pairs_columns_only_on_small_filters_of_4_byte_elements() {
        // (the tuned shape comes from the environment, unset in the suite)
        if tuned_shape().is_some() {
            return;
        }
        let conv = |window, elem| tile_shape(CONVOLUTION_TILE, window, elem);
        let paired = conv([5, 5], 4);
        assert!(paired.pairs);
        assert_eq!((paired.width(), paired.height()), (64, 64));
        assert!(paired.defines().contains("#define TCP 2\n"));
        for (window, elem) in [([5, 5], 8), ([5, 5], 16), ([9, 9], 4), ([7, 5], 4)] {
            let s = conv(window, elem);
            assert!(!s.pairs, "{window:?} {elem}");
            assert_eq!(s.width(), 32, "{window:?} {elem}");
            assert!(s.defines().contains("#define TCP 1\n"));
            assert!(s.staged_bytes(window, elem) <= 24 * 1024);
        }
        // the window filters never pair
        assert!(!tile_shape(WINDOW_TILE, [3, 3], 4).pairs);
        assert!(!tile_shape(SOBEL_TILE, [3, 3], 4).pairs);
        // every key differs where the shape does
        assert_ne!(paired.key(), conv([5, 5], 8).key());
    }
}
