//! The launch shape of a grid-stride kernel, computed on the host.
//!
//! Why one function: a grid-stride kernel covers any amount of work with any grid, so its
//! grid is only sized for the device: one block per `block` threads' worth of work, at least
//! one, and at most `blocks_per_sm` blocks per multiprocessor (more would only add
//! scheduling; the threads loop over the rest). Each family keeps its own block size and cap.

/// Blocks of `block` threads for `work` threads' worth of grid-stride work on a device of
/// `multiprocessors`, capped at `blocks_per_sm` blocks per multiprocessor.
pub(crate) fn grid_stride_blocks(
    work: u64,
    block: u32,
    multiprocessors: u32,
    blocks_per_sm: u32,
) -> u32 {
    work.div_ceil(block as u64).clamp(1, multiprocessors as u64 * blocks_per_sm as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_block_per_block_of_work_at_least_one_at_most_the_cap() {
        assert_eq!(grid_stride_blocks(0, 256, 132, 16), 1);
        assert_eq!(grid_stride_blocks(1, 256, 132, 16), 1);
        assert_eq!(grid_stride_blocks(257, 256, 132, 16), 2);
        assert_eq!(grid_stride_blocks(1 << 40, 256, 132, 16), 132 * 16);
        assert_eq!(grid_stride_blocks(1 << 40, 256, 132, 32), 132 * 32);
    }
}
