//! Leaves read through a per-dimension index map: how `tile`, `shift` and `pad` feed the JIT
//! without copying their input.
//!
//! A mapped leaf reads ready data of shape `src` for an output of another shape. Along each
//! dimension the output coordinate `c` becomes a source coordinate by one of a few rules
//! ([`Axis`]): unchanged, periodic (`(c + k) mod n`, for `tile` and `shift` and periodic
//! padding), clamped to the edge, mirrored at the edge, or outside the source (the element is
//! zero). The rule of each dimension is part of a generated kernel's structural key; the sizes
//! and offsets are kernel arguments, so one kernel serves every tile count and shift amount.

use crate::dim4::Dim4;

/// What a mapped leaf counts for in a tree's leaf budget (`MAX_LEAVES`): a generated kernel
/// takes up to 13 parameters for it (pointer, 4 strides, and a size and an offset per mapped
/// dimension), against 5 for a strided input.
pub(crate) const MAPPED_LEAF_WEIGHT: u32 = 3;

/// The rule that maps an output coordinate `c` to a source coordinate along one dimension of
/// a source of extent `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Axis {
    /// `c` itself (the output and the source have the same extent, or the source extent is 1
    /// and the data's stride is 0).
    Same,
    /// `(c + k) mod n`, with `0 <= k < n`.
    Wrap(u64),
    /// `c + k` clamped to `0..n`.
    Clamp(i64),
    /// `c + k` reflected at the edges with the edge element repeated, as ArrayFire's symmetric
    /// padding: `x < 0` reads `(-x - 1) mod n`, `x >= n` reads `n - 1 - (x mod n)`.
    Mirror(i64),
    /// `c + k` when it lies in `0..n`; otherwise the element is zero.
    Zero(i64),
}

impl Axis {
    /// A small code for the structural key and for generated code.
    pub(crate) fn code(self) -> u8 {
        match self {
            Axis::Same => 0,
            Axis::Wrap(_) => 1,
            Axis::Clamp(_) => 2,
            Axis::Mirror(_) => 3,
            Axis::Zero(_) => 4,
        }
    }

    /// The offset added to the output coordinate before the rule applies.
    pub(crate) fn offset(self) -> i64 {
        match self {
            Axis::Same => 0,
            Axis::Wrap(k) => k as i64,
            Axis::Clamp(k) | Axis::Mirror(k) | Axis::Zero(k) => k,
        }
    }

    /// The source coordinate for output coordinate `c` along a source extent of `n` (at least
    /// 1), or `None` when the element is zero.
    #[inline]
    pub(crate) fn source(self, c: u64, n: u64) -> Option<u64> {
        let (x, n_i) = (c as i64 + self.offset(), n as i64);
        match self {
            Axis::Same => Some(c),
            Axis::Wrap(k) => Some((c + k) % n),
            Axis::Clamp(_) => Some(x.clamp(0, n_i - 1) as u64),
            Axis::Mirror(_) => Some(if x < 0 {
                ((-x - 1) % n_i) as u64
            } else if x >= n_i {
                (n_i - 1 - x % n_i) as u64
            } else {
                x as u64
            }),
            Axis::Zero(_) => (0..n_i).contains(&x).then_some(x as u64),
        }
    }
}

/// How a mapped leaf reads its source: the source's shape and one rule per dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexMap {
    /// The shape of the data the leaf reads.
    pub src: Dim4,
    pub axes: [Axis; 4],
}

impl IndexMap {
    /// True when every dimension reads its coordinate unchanged.
    pub(crate) fn is_identity(&self) -> bool {
        self.axes.iter().all(|a| *a == Axis::Same)
    }

    /// The rule codes of the four dimensions, packed three bits each (for structural keys).
    pub(crate) fn key(&self) -> u16 {
        self.axes.iter().enumerate().fold(0, |k, (d, a)| k | (a.code() as u16) << (3 * d))
    }
}
