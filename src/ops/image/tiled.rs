//! The window filters' fast path on CUDA: one tiled kernel of the image family
//! (`backend::image::Image::window`) for the maximum, minimum and median over a window and for the
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
use crate::backend::image::{WindowFilter, WindowOp};
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
    !matches!(t, DType::B8 | DType::F16 | DType::BF16 | DType::C32 | DType::C64)
}

/// Runs `filter` over `input` with the tiled kernel where it applies (see `Image::window_runs`),
/// returning its one or two outputs of type `O`; `None` where the caller's composed form
/// runs instead. A maximum or minimum folds over the positions where `mask` is positive (it
/// stays on the device: nothing waits for it), or over every position without one.
pub(super) fn tiled<T: HasAfEnum, O: HasAfEnum>(
    func: &str,
    input: &Array<T>,
    mask: Option<&Array<T>>,
    filter: WindowFilter,
) -> Option<(Array<O>, Option<Array<O>>)> {
    let node = input.node();
    if !node.backend.ops().window_runs(filter.size).or_raise(func) || !kernel_type(node.dtype) {
        return None;
    }
    let run = || -> crate::error::Result<(Dense, Option<Dense>)> {
        let d = Dense::of(node)?;
        let m = mask.map(|m| Dense::of(m.node())).transpose()?;
        d.backend.ops().window(&d, m.as_ref(), &filter, O::get_af_dtype())
    };
    let (a, b) = run().or_raise(func);
    Some((Array::from_node(a.into_node()), b.map(|b| Array::from_node(b.into_node()))))
}

/// A window filter with no network or fill.
pub(super) fn filter(op: WindowOp, size: [u64; 2]) -> WindowFilter {
    WindowFilter { op, size, network: Vec::new(), fill_bits: 0, reflect: false }
}
