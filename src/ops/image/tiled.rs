//! The window filters' fast path on CUDA: one tiled kernel of the image family
//! (`backend::image::window`) for the maximum, minimum and median over a window and for the
//! Sobel derivatives. Each block copies its tile of the image, grown by the window, into
//! shared memory once and computes every output of the tile from there, so the image is read
//! about once and each output written once, where the composed element-wise form reads a
//! grown copy of the image (one more pass) and spends an address computation on every read of
//! every window position.
//!
//! The kernel folds in the same order, with the same minimum and maximum, as the composed
//! form, so both give the same results bit for bit; the CPU keeps the composed form, which is
//! as fast there as a kernel of its own.

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::image::{window, window_runs, WindowFilter, WindowOp};
use crate::dtype::{DType, HasAfEnum};
use crate::error_handler::OrRaise;

/// The bits of the lowest (`lowest`) or highest value of type `t`: the identity of a maximum
/// or a minimum (infinities for floating types).
pub(super) fn extreme_bits(t: DType, lowest: bool) -> u64 {
    macro_rules! int {
        ($t:ty, $u:ty) => {
            (if lowest { <$t>::MIN } else { <$t>::MAX }) as $u as u64
        };
    }
    match t {
        DType::F32 => (if lowest { f32::NEG_INFINITY } else { f32::INFINITY }).to_bits() as u64,
        DType::F64 => (if lowest { f64::NEG_INFINITY } else { f64::INFINITY }).to_bits(),
        DType::U8 => int!(u8, u8),
        DType::S16 => int!(i16, u16),
        DType::U16 => int!(u16, u16),
        DType::S32 => int!(i32, u32),
        DType::U32 => int!(u32, u32),
        DType::S64 => int!(i64, u64),
        DType::U64 => int!(u64, u64),
        other => unreachable!("internal error: no window kernel for {}", other.name()),
    }
}

/// Whether the kernel takes images of type `t` (bool, f16 and complex images take the
/// composed form, or are converted by the caller).
fn kernel_type(t: DType) -> bool {
    !matches!(t, DType::B8 | DType::F16 | DType::C32 | DType::C64)
}

/// Runs `filter` over `input` with the tiled kernel where it applies (see `window_runs`),
/// returning its one or two outputs of type `O`; `None` where the caller's composed form
/// runs instead.
pub(super) fn tiled<T: HasAfEnum, O: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    filter: WindowFilter,
) -> Option<(Array<O>, Option<Array<O>>)> {
    let node = input.node();
    if !window_runs(node.backend, filter.size) || !kernel_type(node.dtype) {
        return None;
    }
    let run = || -> crate::error::Result<(Dense, Option<Dense>)> {
        let d = Dense::of(node)?;
        window(&d, &filter, O::get_af_dtype())
    };
    let (a, b) = run().or_raise(func);
    Some((Array::from_node(a.into_node()), b.map(|b| Array::from_node(b.into_node()))))
}

/// The mask bits of window positions `offs` (offsets from the window's start) of a window
/// `size[0]` tall, or `None` where they do not fit the kernel's 256.
pub(super) fn mask_bits(offs: &[[i64; 4]], size0: u64) -> Option<[u64; 4]> {
    let mut bits = [0u64; 4];
    for o in offs {
        let bit = (o[0] as u64 + size0 * o[1] as u64) as usize;
        if o[2] != 0 || bit >= 256 {
            return None;
        }
        bits[bit / 64] |= 1 << (bit % 64);
    }
    Some(bits)
}

/// A window filter with no mask, network or fill.
pub(super) fn filter(op: WindowOp, size: [u64; 2]) -> WindowFilter {
    WindowFilter { op, size, mask_bits: [0; 4], network: Vec::new(), fill_bits: 0, reflect: false }
}
