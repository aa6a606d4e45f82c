//! Copying elements between two arrays where either side may be addressed through index
//! arrays: the gather under `index_gen` and `lookup`, and the scatter under `assign_gen`.
//!
//! A copy moves a block of elements of shape `block`. Element `c = (c0, c1, c2, c3)` of the
//! block is read from the source at the position its [`Side`] selects and written to the
//! destination at the position its side selects. Along each dimension, a side selects position
//! `start + c * step` ([`Axis::Affine`]) or `idx[c]` ([`Axis::Indices`]), an index read from an
//! array of 64-bit integers and folded into the dimension by [`fold_index`], so that no index
//! value can address memory outside the array.

use super::write_into::{address_range, buffer_elements, check_bounds, is_one_to_one};
use super::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;

/// How block coordinates select positions along one dimension.
#[derive(Clone, Debug)]
pub(crate) enum Axis {
    /// Position `start + c * step`.
    Affine { start: i64, step: i64 },
    /// Position `fold_index(idx[c], len)`; `idx` is dense i64 data with at least as many
    /// elements as the block has along this dimension.
    Indices(Data),
}

impl Axis {
    /// Every position in order.
    pub(crate) const IDENTITY: Axis = Axis::Affine { start: 0, step: 1 };
}

/// One side of a copy: an array (its shape, and where its elements are in the buffer) and
/// how block coordinates select its positions.
#[derive(Clone, Debug)]
pub(crate) struct Side {
    pub dims: Dim4,
    pub offset: usize,
    pub strides: [i64; 4],
    pub axes: [Axis; 4],
}

impl Side {
    /// A dense array of shape `dims` at the start of its buffer, read or written in order.
    pub(crate) fn dense(dims: Dim4) -> Side {
        let c = dims.strides();
        Side {
            dims,
            offset: 0,
            strides: std::array::from_fn(|k| c[k] as i64),
            axes: std::array::from_fn(|_| Axis::IDENTITY),
        }
    }
}

/// An index folded into `0..len` the way ArrayFire's `lookup` does: a negative index reflects
/// from the start (-1 reads position 0, -2 position 1, ...) and an index past the end reflects
/// from the end (`len` reads `len - 1`, `len + 1` reads `len - 2`, ...), so every value of an
/// index array selects some position of the dimension. `len` must be positive.
pub(crate) fn fold_index(i: i64, len: i64) -> i64 {
    if i < 0 {
        // -(i + 1) cannot overflow, even for i64::MIN
        (-(i + 1)) % len
    } else if i >= len {
        len - 1 - i % len
    } else {
        i
    }
}

/// Gathers and scatters on one backend.
pub(crate) trait IndexCopy {
    /// Copies the `block` from `src_buf` (addressed by `src`) to `dst_buf` (addressed by
    /// `dst`), both holding elements of `dtype`. Panics (an internal error) if a side can reach
    /// outside its buffer, or if the destination's layout could map two positions to one
    /// element. Two block elements may select the same destination position (repeated
    /// indices); which of them lands there is unspecified.
    fn index_copy(
        &self,
        dtype: DType,
        block: Dim4,
        src_buf: &Buffer,
        src: &Side,
        dst_buf: &mut Buffer,
        dst: &Side,
    ) -> Result<(), Error> {
        check_side("index_copy (source)", src_buf, dtype, block, src);
        check_side("index_copy (destination)", dst_buf, dtype, block, dst);
        assert!(
            is_one_to_one(dst.dims, dst.strides),
            "internal error: index_copy: the destination's layout maps two positions to one \
             element"
        );
        for k in 0..4 {
            if let (Axis::Affine { step: 0, .. }, true) = (&dst.axes[k], block[k] > 1) {
                panic!("internal error: index_copy: a destination axis with step 0");
            }
        }
        if block.elements() == 0 {
            return Ok(());
        }
        self.copy_checked(dtype, block, src_buf, src, dst_buf, dst)
    }

    /// The backend's part of [`IndexCopy::index_copy`], once both sides are checked and the
    /// block is not empty: both buffers are this backend's.
    fn copy_checked(
        &self,
        dtype: DType,
        block: Dim4,
        src_buf: &Buffer,
        src: &Side,
        dst_buf: &mut Buffer,
        dst: &Side,
    ) -> Result<(), Error>;
}

/// Checks that every position `side` can select for `block` lies in its array, that its index
/// arrays are long enough, and that the array lies in `buf`.
fn check_side(what: &str, buf: &Buffer, dtype: DType, block: Dim4, side: &Side) {
    if block.elements() == 0 {
        return;
    }
    check_bounds(what, buf, dtype, side.dims, side.offset, side.strides);
    for k in 0..4 {
        let len = side.dims[k] as i64;
        let n = block[k] as i64;
        match &side.axes[k] {
            Axis::Affine { start, step } => {
                let last = start + step * (n - 1);
                assert!(
                    (0..len).contains(start) && (0..len).contains(&last),
                    "internal error: {what}: positions {start} to {last} along dimension {k} of \
                     length {len}"
                );
            }
            Axis::Indices(d) => {
                assert!(len > 0, "internal error: {what}: indices into an empty dimension {k}");
                let dims = Dim4::new(&[n as u64, 1, 1, 1]);
                assert!(
                    d.is_contiguous(dims)
                        && address_range(dims, d.offset, [1, 1, 1, 1]).is_some_and(|(_, hi)| {
                            hi < buffer_elements(d.buffer(), DType::S64) as i64
                        }),
                    "internal error: {what}: index array along dimension {k} is shorter than \
                     the block's {n}"
                );
            }
        }
    }
}
