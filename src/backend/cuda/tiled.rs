//! What the tiled image filters (`ef_window` and `ef_warp` in `kernels/image.cu`,
//! `ef_convolve2_tiled` in `kernels/signal.cu`) share on the host: the source of their tile
//! walk and shared-memory staging (`kernels/tile.cu`), the shape of their output tiles, and
//! their grid.

use std::sync::OnceLock;

use super::kernel::KernelFn;
use super::runtime::Device;

/// The walk and staging the tiled filters include in front of their own source.
pub(crate) const TILE_STAGING: &str = include_str!("kernels/tile.cu");

/// The output tile of a tiled filter run on (32, 8) blocks: `groups` columns of 32 outputs
/// side by side (the kernels' `TCG`), each thread computing `rows` neighbouring outputs of
/// each of its columns (`TR`), so `32 groups` x `8 rows` outputs a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileShape {
    pub(crate) groups: u64,
    pub(crate) rows: u64,
}

impl TileShape {
    /// The defines that compile a kernel for this shape.
    pub(crate) fn defines(self) -> String {
        format!("#define TCG {}\n#define TR {}\n", self.groups, self.rows)
    }

    /// The bytes of the staged input tile of elements of `elem` bytes for a `window`.
    fn staged_bytes(self, window: [u64; 2], elem: usize) -> u64 {
        (32 * self.groups + window[0] - 1) * (8 * self.rows + window[1] - 1) * elem as u64
    }
}

/// The tile shape a filter with this window, over elements of `elem` bytes, is compiled for.
/// A taller, wider tile reads fewer halo elements per output and shares more of each
/// thread's reads of the staged rows among its outputs, as long as the staged tile and the
/// registers that carry the next one stay small enough for several blocks a multiprocessor.
pub(crate) fn tile_shape(window: [u64; 2], elem: usize) -> TileShape {
    let preferred = tuned_shape().unwrap_or(TileShape { groups: 1, rows: 8 });
    // registers holding the next tile (a thread's share of it) stay within 24 words
    let fits = |s: TileShape| {
        let bytes = s.staged_bytes(window, elem);
        bytes <= 24 * 1024 && bytes.div_ceil(256 * 4) <= 24
    };
    if fits(preferred) {
        preferred
    } else {
        TileShape { groups: 1, rows: 4 }
    }
}

/// A tile shape named by `EMBERFIRE_TILE_SHAPE=groups,rows` (for measuring others).
fn tuned_shape() -> Option<TileShape> {
    static SHAPE: OnceLock<Option<TileShape>> = OnceLock::new();
    *SHAPE.get_or_init(|| {
        let v = std::env::var("EMBERFIRE_TILE_SHAPE").ok()?;
        let (g, r) = v.split_once(',')?;
        let shape = TileShape { groups: g.trim().parse().ok()?, rows: r.trim().parse().ok()? };
        ([1, 2, 4].contains(&shape.groups) && [1, 2, 4, 8, 16].contains(&shape.rows))
            .then_some(shape)
    })
}

/// The grid of a tiled kernel `k`: as many (32, 8) blocks as the device keeps resident (one
/// wave; each block walks its share of the `tiles`), and no more than there are tiles.
pub(crate) fn tiled_grid(dev: &Device, k: &KernelFn, tiles: u64) -> (u32, u32, u32) {
    let resident = dev.sm_count() as u64 * k.resident_blocks() as u64;
    (resident.min(tiles).clamp(1, u32::MAX as u64) as u32, 1, 1)
}

/// The tiles of `width` x `height` outputs that cover images of shape `dims`.
pub(crate) fn tile_count(dims: crate::dim4::Dim4, width: u64, height: u64) -> u64 {
    dims[0].div_ceil(width) * dims[1].div_ceil(height) * dims[2] * dims[3]
}
