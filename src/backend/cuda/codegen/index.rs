//! Index arithmetic of generated kernels: how an element's linear index becomes coordinates,
//! and in which integer width.
//!
//! Kernels that read strided or mapped inputs (`shift`, `tile`, broadcasts) need each element's
//! coordinates, and on a GPU that arithmetic, not memory, was what bounded them: three 64-bit
//! divisions per element, and one 64-bit remainder per shifted read. Two things make it cheap:
//!
//! - **Narrow kernels.** When the program has fewer than 2^31 elements and every buffer it reads
//!   fewer than 2^31 elements, every coordinate, extent, stride and in-bounds offset fits a
//!   32-bit `int`, and the kernel computes them in 32 bits (one instruction per multiply-add
//!   instead of several). Which width a kernel uses is part of its structural key.
//! - **Division by invariant integers.** The extents a linear index is divided by are fixed for
//!   a launch, so the host computes for each one a multiplier and shift (Granlund and
//!   Montgomery, "Division by invariant integers using multiplication", 1994, theorem 4.2) and
//!   the kernel divides with one wide multiplication and a shift (`ef_udiv` in the prelude).
//!
//! The kernel is also compiled for its *rank* (how many leading dimensions have more than one
//! element): a 2-D program computes two coordinates with one division, not four with three.

use crate::dim4::Dim4;
use crate::jit::{Instr, Program};

/// Elements, extents and buffer lengths below this fit a kernel's 32-bit index arithmetic.
const NARROW_LIMIT: u64 = 1 << 31;

/// Where the shift is kept in a packed divisor: above the multiplier, which has at most 33 bits.
const SHIFT_AT: u32 = 58;

/// Whether every index of `p`'s kernel fits 32-bit arithmetic: the element count, each input's
/// buffer (so that any in-bounds offset, with any stride, fits) and each extent.
pub(crate) fn fits_narrow(p: &Program) -> bool {
    let small = |n: u64| n < NARROW_LIMIT;
    small(p.dims.elements())
        && p.steps.iter().all(|s| match &s.instr {
            Instr::Input(d) | Instr::Mapped(d, _) => {
                small(d.buf.byte_len() as u64 / s.dtype.size() as u64)
            }
            _ => true,
        })
        && p.steps.iter().all(|s| (0..4).all(|k| small(s.dims[k])))
}

/// The number of leading dimensions of `dims` that may have more than one element (1 to 4):
/// coordinates past it are 0.
pub(crate) fn rank(dims: Dim4) -> usize {
    (1..4).rev().find(|&k| dims[k] > 1).map_or(1, |k| k + 1)
}

/// The C type of coordinates in a narrow or a wide kernel.
pub(crate) fn ix(narrow: bool) -> &'static str {
    if narrow {
        "int"
    } else {
        "long long"
    }
}

/// The packed divisor `ef_udiv` takes for dividing by `d` (1 <= d < 2^31): the multiplier
/// `m = floor(2^(31 + l) / d) + 1` with `l = ceil(log2 d)`, and the shift `31 + l` above it.
/// For every `x < 2^31`, `floor(x * m / 2^(31 + l)) == floor(x / d)` (theorem 4.2 of the paper
/// above, since `2^(31+l) < m * d <= 2^(31+l) + d <= 2^(31+l) + 2^l`), and `x * m < 2^64`
/// because `m <= 2^32` for `d >= 2` (and `m = 2^31 + 1` for `d = 1`).
pub(crate) fn divisor(d: u64) -> u64 {
    debug_assert!((1..NARROW_LIMIT).contains(&d));
    let l = 64 - (d - 1).leading_zeros() as u64; // ceil(log2 d); 0 for d = 1
    let m = (1u128 << (31 + l)) / d as u128 + 1;
    m as u64 | (31 + l) << SHIFT_AT
}

/// What `ef_udiv(x, divisor(d))` computes on the device, for tests.
#[cfg(test)]
fn udiv(x: u32, packed: u64) -> u32 {
    let m = packed & ((1u64 << SHIFT_AT) - 1);
    ((x as u64 * m) >> (packed >> SHIFT_AT)) as u32
}

/// The kernel parameters a narrow kernel with coordinates takes after `d0, d1, d2`: the packed
/// divisors of the first `rank - 1` extents.
pub(crate) fn divisor_params(rank: usize) -> Vec<String> {
    (0..rank - 1).map(|k| format!("const unsigned long long m{k}")).collect()
}

/// The values of [`divisor_params`] for a program of shape `dims`. An extent of 0 (a reduction
/// of an empty dimension still launches, to write its identities) divides as 1: no element is
/// ever divided by it.
pub(crate) fn divisor_values(dims: Dim4, rank: usize) -> Vec<u64> {
    (0..rank - 1).map(|k| divisor(dims[k].max(1))).collect()
}

/// C statements defining the coordinates `c0..c3` of the element whose linear index is the
/// expression `i` (non-negative), for a kernel of the given width and rank. A narrow kernel
/// divides with the packed divisors `m0..`; a wide one with `/` by `d0, d1, d2`.
pub(crate) fn coords(i: &str, narrow: bool, rank: usize) -> String {
    let t = ix(narrow);
    let mut s = String::new();
    if narrow {
        s.push_str(&format!("unsigned q_ = (unsigned)({i}); "));
        for k in 0..rank - 1 {
            s.push_str(&format!(
                "const unsigned n{k}_ = ef_udiv(q_, m{k}); const int c{k} = (int)(q_ - n{k}_ * (unsigned)d{k}); q_ = n{k}_; "
            ));
        }
        s.push_str(&format!("const int c{} = (int)q_; ", rank - 1));
    } else {
        s.push_str(&format!("long long q_ = {i}; "));
        for k in 0..rank - 1 {
            s.push_str(&format!("const long long c{k} = q_ % d{k}; q_ /= d{k}; "));
        }
        s.push_str(&format!("const long long c{} = q_; ", rank - 1));
    }
    for k in rank..4 {
        s.push_str(&format!("const {t} c{k} = 0; "));
    }
    s.push_str("(void)c0; (void)c1; (void)c2; (void)c3;");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    #[test]
    fn packed_divisors_divide_exactly() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut ds: Vec<u64> = (1..=4100).collect();
        ds.extend([(1 << 31) - 1, (1 << 30) + 1, 1 << 30, 65535, 65537, 46341, 3 << 20]);
        ds.extend((0..2000).map(|_| rng.gen_range(1..NARROW_LIMIT)));
        let mut xs: Vec<u32> = vec![0, 1, 2, (1 << 31) - 1, (1 << 31) - 2, 1 << 30];
        xs.extend((0..300).map(|_| rng.gen_range(0..1u32 << 31)));
        for &d in &ds {
            let p = divisor(d);
            // the multiples of d and their neighbours are where a wrong multiplier fails first
            let near = [d - 1, d, d + 1, 2 * d - 1, 2 * d];
            let top = ((1u64 << 31) - 1) / d * d;
            for x in xs.iter().map(|&x| x as u64).chain(near).chain([top, top - 1, top + d - 1]) {
                if x < NARROW_LIMIT {
                    assert_eq!(udiv(x as u32, p) as u64, x / d, "{x} / {d}");
                }
            }
        }
    }

    #[test]
    fn an_empty_extent_divides_as_one() {
        // a reduction along dimension 0 of a 0 x 3 array launches with d0 = 0
        let v = divisor_values(Dim4::new(&[0, 3, 1, 1]), 2);
        assert_eq!(v, vec![divisor(1)]);
    }

    #[test]
    fn rank_counts_leading_dimensions() {
        assert_eq!(rank(Dim4::new(&[5, 1, 1, 1])), 1);
        assert_eq!(rank(Dim4::new(&[1, 1, 1, 1])), 1);
        assert_eq!(rank(Dim4::new(&[5, 7, 1, 1])), 2);
        assert_eq!(rank(Dim4::new(&[1, 7, 1, 1])), 2);
        assert_eq!(rank(Dim4::new(&[5, 1, 3, 1])), 3);
        assert_eq!(rank(Dim4::new(&[5, 1, 1, 2])), 4);
    }

    #[test]
    fn coordinates_need_one_divisor_fewer_than_the_rank() {
        for rank in 1..=4 {
            assert_eq!(divisor_params(rank).len(), rank - 1);
            let c = coords("i", true, rank);
            assert_eq!(c.matches("ef_udiv").count(), rank - 1);
            assert!((0..4).all(|k| c.contains(&format!("c{k} ="))));
            let w = coords("i", false, rank);
            assert!(!w.contains("ef_udiv") && (0..4).all(|k| w.contains(&format!("c{k} ="))));
        }
    }
}
