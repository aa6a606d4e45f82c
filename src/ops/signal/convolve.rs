//! Convolution in one to three dimensions, in the spatial domain (direct summation) or the
//! frequency domain (FFTs), with ArrayFire's output sizes and batching.
//!
//! `convolveN(signal, filter, ..)` convolves over the first N dimensions:
//! `out[i] = sum_j signal[i + start - j] * filter[j]`, samples outside the signal being zero,
//! where `start` is 0 for `ConvMode::EXPAND` (the full convolution, `s + f - 1` long) and
//! `f / 2` for `ConvMode::DEFAULT` (the signal's length, centred on the filter). The other
//! dimensions are batches: where the signal and the filter have the same size each pair is
//! convolved, and a size of 1 on either side is repeated (one filter for many signals, many
//! filters for one signal, or both). ArrayFire accepts the same batches, with a mixed one
//! only in the frequency domain; emberfire accepts every one in both domains.
//!
//! The filter is converted to the signal's compute type (a complex filter on a real signal
//! keeps its real part, as in ArrayFire). The frequency domain pads to the next size of the
//! form 2^a 3^b 5^c 7^d (ArrayFire: the next power of two) and uses real transforms for real
//! data.

use std::sync::Arc;

use super::compute_type;
use super::{ConvDomain, ConvMode};
use crate::array::Array;
use crate::backend::signal::{Dense, FftKind};
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::error::Result;
use crate::error_handler::OrRaise;
use crate::jit::{Expr, Node, UnOp};
use crate::ops::build::{cast_node, common_backend};

/// The output shape and the start offsets of a convolution of rank `rank`.
fn conv_shape(func: &str, sd: Dim4, fd: Dim4, rank: usize, mode: ConvMode) -> (Dim4, [i64; 4]) {
    let mut od = sd;
    let mut start = [0i64; 4];
    for k in 0..4 {
        if k < rank {
            if mode == ConvMode::EXPAND {
                od[k] = sd[k] + fd[k] - 1;
            } else {
                start[k] = (fd[k] / 2) as i64;
            }
        } else {
            assert!(
                sd[k] == fd[k] || sd[k] == 1 || fd[k] == 1,
                "{func}: the signal's dims {sd} and the filter's dims {fd} differ along batch \
                 dimension {k} and neither size is 1"
            );
            od[k] = sd[k].max(fd[k]);
        }
    }
    (od, start)
}

/// ArrayFire's rule for `ConvDomain::AUTO`: true when the frequency domain is expected to be
/// faster for a filter of shape `fd` in a convolution of rank `rank`.
pub(crate) fn prefers_frequency(rank: usize, fd: Dim4) -> bool {
    let batched: u64 = (rank..4).map(|k| fd[k]).product();
    if batched >= 10 {
        return true;
    }
    match rank {
        1 => fd[0] > 128,
        2 => fd[0] > 17 || fd[1] > 17 || (fd[0] != fd[1] && fd[0] > 5),
        _ => fd[0] > 5 || fd[1] > 5 || fd[2] > 5,
    }
}

/// The smallest size of the form 2^a 3^b 5^c 7^d that is at least `n`: FFTs of such sizes are
/// fast on both backends.
pub(crate) fn fft_size(n: u64) -> u64 {
    let mut m = n.max(1);
    loop {
        let mut r = m;
        for p in [2, 3, 5, 7] {
            while r.is_multiple_of(p) {
                r /= p;
            }
        }
        if r == 1 {
            return m;
        }
        m += 1;
    }
}

/// Convolution through FFTs, returning `od` elements starting at `start` of the full result.
fn frequency(s: &Dense, f: &Dense, rank: usize, od: Dim4, start: [i64; 4]) -> Result<Dense> {
    let (mut ps, mut pf, mut full) = (s.dims, f.dims, s.dims);
    let mut points = 1u64;
    for k in 0..4 {
        if k < rank {
            let p = fft_size(s.dims[k] + f.dims[k] - 1);
            (ps[k], pf[k], full[k]) = (p, p, p);
            points *= p;
        } else {
            full[k] = s.dims[k].max(f.dims[k]);
        }
    }
    let inv = 1.0 / points as f64;
    let result = if s.dtype.is_complex() {
        let fwd = FftKind::C2C { inverse: false };
        let sf = s.backend.ops().fft(s, fwd, rank, ps, 1.0)?;
        let ff = f.backend.ops().fft(f, fwd, rank, pf, 1.0)?;
        let prod = sf.backend.ops().mul_bcast(&sf, &ff, full)?;
        prod.backend.ops().fft(&prod, FftKind::C2C { inverse: true }, rank, full, inv)?
    } else {
        let sf = s.backend.ops().fft(s, FftKind::R2C, rank, ps, 1.0)?;
        let ff = f.backend.ops().fft(f, FftKind::R2C, rank, pf, 1.0)?;
        let mut half = full;
        half[0] = full[0] / 2 + 1;
        let prod = sf.backend.ops().mul_bcast(&sf, &ff, half)?;
        prod.backend.ops().fft(&prod, FftKind::C2R, rank, full, inv)?
    };
    let offset = std::array::from_fn(|k| if k < rank { start[k] } else { 0 });
    result.backend.ops().reshape_copy(&result, od, s.dtype, offset, 1.0)
}

/// Converts a result computed in `node.dtype` back to `to`: integer and bool results are
/// rounded to nearest first.
///
/// A bool result keeps its number, as ArrayFire stores the float result of a `b8` signal's
/// convolution in the signal's `char` bytes: the rounded value, saturated into 0..=255, becomes
/// the byte (a convolution of a bool board with a 3x3 kernel of ones holds the neighbour
/// counts, and `eq(&counts, &constant(3.0, ..), false)` finds the cells with three). A cast to
/// bool would keep only "not zero". `func` names the caller in an error (out of memory while
/// the bytes are made).
pub(crate) fn finish(func: &str, node: Arc<Node>, to: DType) -> Arc<Node> {
    if node.dtype == to {
        return node;
    }
    let rounded = if to.is_integer() || to == DType::B8 {
        Node::lazy(node.dtype, node.dims, node.backend, Expr::Unary(UnOp::Round, node))
    } else {
        node
    };
    if to == DType::B8 {
        let bytes = Dense::of(&cast_node(&rounded, DType::U8)).or_raise(func);
        return bytes.bytes_as_bool().into_node();
    }
    cast_node(&rounded, to)
}

/// The convolution of `signal` with `filter` over the first `rank` dimensions into `od`
/// elements from `start`, in the domain chosen, as a node of the signal's type.
pub(crate) fn convolve_nodes(
    func: &str,
    signal: &Arc<Node>,
    filter: &Arc<Node>,
    rank: usize,
    od: Dim4,
    start: [i64; 4],
    in_frequency: bool,
) -> Arc<Node> {
    let ct = compute_type(signal.dtype);
    let run = || -> Result<Dense> {
        let s = Dense::of(&cast_node(signal, ct))?;
        let f = Dense::of(&cast_node(filter, ct))?;
        if in_frequency {
            frequency(&s, &f, rank, od, start)
        } else {
            s.backend.ops().convolve(&s, &f, rank, od, start)
        }
    };
    let out = run().or_raise(func);
    finish(func, out.into_node(), signal.dtype)
}

fn convolve_n<T: HasAfEnum, F: HasAfEnum>(
    func: &str,
    signal: &Array<T>,
    filter: &Array<F>,
    rank: usize,
    mode: ConvMode,
    domain: ConvDomain,
) -> Array<T> {
    let (s, f) = (signal.node(), filter.node());
    common_backend(func, &[s, f]);
    if s.dims.elements() == 0 || f.dims.elements() == 0 {
        return signal.clone();
    }
    let (od, start) = conv_shape(func, s.dims, f.dims, rank, mode);
    let in_frequency = match domain {
        ConvDomain::SPATIAL => false,
        ConvDomain::FREQUENCY => true,
        ConvDomain::AUTO => prefers_frequency(rank, f.dims),
    };
    Array::from_node(convolve_nodes(func, s, f, rank, od, start, in_frequency))
}

/// 1D convolution of every column of `signal` with `filter` (see the module documentation
/// for sizes, batching and types).
///
/// ```
/// use emberfire::{convolve1, dim4, Array, ConvDomain, ConvMode};
/// let s = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4));
/// let f = Array::new(&[1.0f32, 0.0, -1.0], dim4!(3));
/// let full = convolve1(&s, &f, ConvMode::EXPAND, ConvDomain::SPATIAL);
/// assert_eq!(full.to_vec(), vec![1.0, 2.0, 2.0, 2.0, -3.0, -4.0]);
/// let same = convolve1(&s, &f, ConvMode::DEFAULT, ConvDomain::SPATIAL);
/// assert_eq!(same.to_vec(), vec![2.0, 2.0, 2.0, -3.0]);
/// ```
pub fn convolve1<T, F>(
    signal: &Array<T>,
    filter: &Array<F>,
    mode: ConvMode,
    domain: ConvDomain,
) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    convolve_n("convolve1", signal, filter, 1, mode, domain)
}

/// 2D convolution over dimensions 0 and 1, batched over 2 and 3.
///
/// ```
/// use emberfire::{convolve2, dim4, Array, ConvDomain, ConvMode};
/// // sum of the 3x3 neighbourhood of each cell
/// let img = Array::new(&[1.0f64; 9], dim4!(3, 3));
/// let k = Array::new(&[1.0f64; 9], dim4!(3, 3));
/// let n = convolve2(&img, &k, ConvMode::DEFAULT, ConvDomain::SPATIAL).to_vec();
/// assert_eq!(n, vec![4.0, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0]);
/// ```
pub fn convolve2<T, F>(
    signal: &Array<T>,
    filter: &Array<F>,
    mode: ConvMode,
    domain: ConvDomain,
) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    convolve_n("convolve2", signal, filter, 2, mode, domain)
}

/// 3D convolution over dimensions 0, 1 and 2, batched over 3.
///
/// ```
/// use emberfire::{convolve3, dim4, Array, ConvDomain, ConvMode};
/// let v = Array::new(&[1.0f32; 8], dim4!(2, 2, 2));
/// let k = Array::new(&[1.0f32; 8], dim4!(2, 2, 2));
/// let full = convolve3(&v, &k, ConvMode::EXPAND, ConvDomain::AUTO);
/// assert_eq!(full.dims(), dim4!(3, 3, 3));
/// assert_eq!(full.to_vec()[13], 8.0); // the centre sees all eight products
/// ```
pub fn convolve3<T, F>(
    signal: &Array<T>,
    filter: &Array<F>,
    mode: ConvMode,
    domain: ConvDomain,
) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    convolve_n("convolve3", signal, filter, 3, mode, domain)
}

/// [`convolve1`] in the frequency domain.
///
/// ```
/// use emberfire::{dim4, fft_convolve1, Array, ConvMode};
/// let s = Array::new(&[1i32, 2, 3], dim4!(3));
/// let f = Array::new(&[1i32, 1], dim4!(2));
/// assert_eq!(fft_convolve1(&s, &f, ConvMode::EXPAND).to_vec(), vec![1, 3, 5, 3]);
/// ```
pub fn fft_convolve1<T, F>(signal: &Array<T>, filter: &Array<F>, mode: ConvMode) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    convolve_n("fft_convolve1", signal, filter, 1, mode, ConvDomain::FREQUENCY)
}

/// [`convolve2`] in the frequency domain.
///
/// ```
/// use emberfire::{dim4, fft_convolve2, Array, ConvMode};
/// let s = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let f = Array::new(&[2.0f32], dim4!(1, 1));
/// let y = fft_convolve2(&s, &f, ConvMode::DEFAULT).to_vec();
/// assert!(y.iter().zip([2.0, 4.0, 6.0, 8.0]).all(|(a, b)| (a - b).abs() < 1e-5));
/// ```
pub fn fft_convolve2<T, F>(signal: &Array<T>, filter: &Array<F>, mode: ConvMode) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    convolve_n("fft_convolve2", signal, filter, 2, mode, ConvDomain::FREQUENCY)
}

/// [`convolve3`] in the frequency domain.
///
/// ```
/// use emberfire::{dim4, fft_convolve3, Array, ConvMode};
/// let s = Array::new(&[1.0f64; 8], dim4!(2, 2, 2));
/// let f = Array::new(&[1.0f64; 8], dim4!(2, 2, 2));
/// let y = fft_convolve3(&s, &f, ConvMode::EXPAND).to_vec();
/// assert!((y[13] - 8.0).abs() < 1e-12);
/// ```
pub fn fft_convolve3<T, F>(signal: &Array<T>, filter: &Array<F>, mode: ConvMode) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    convolve_n("fft_convolve3", signal, filter, 3, mode, ConvDomain::FREQUENCY)
}

/// Separable 2D convolution: `cfilt` along dimension 0 (down the columns), then `rfilt` along
/// dimension 1 (across the rows), batched over dimensions 2 and 3. The filters are vectors
/// (all their elements along one dimension). Spatial domain.
///
/// ```
/// use emberfire::{convolve2_sep, dim4, Array, ConvMode};
/// let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
/// let ones = Array::new(&[1.0f32; 3], dim4!(3));
/// let n = convolve2_sep(&ones, &ones, &img, ConvMode::DEFAULT).to_vec();
/// assert_eq!(n, vec![4.0, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0]);
/// ```
pub fn convolve2_sep<T, F>(
    cfilt: &Array<F>,
    rfilt: &Array<F>,
    signal: &Array<T>,
    mode: ConvMode,
) -> Array<T>
where
    T: HasAfEnum,
    F: HasAfEnum,
{
    const FUNC: &str = "convolve2_sep";
    let (c, r, s) = (cfilt.node(), rfilt.node(), signal.node());
    common_backend(FUNC, &[c, r, s]);
    for (name, f) in [("cfilt", c), ("rfilt", r)] {
        let d = f.dims;
        assert!(
            d.get().iter().filter(|&&x| x != 1).count() <= 1,
            "{FUNC}: `{name}` must be a vector (all elements along one dimension), but its dims \
             are {d}; the signal's dims are {}",
            s.dims
        );
    }
    if s.dims.elements() == 0 || c.dims.elements() == 0 || r.dims.elements() == 0 {
        return signal.clone();
    }
    let ct = compute_type(s.dtype);
    let (cn, rn) = (c.dims.elements(), r.dims.elements());
    let run = || -> Result<Dense> {
        let sig = Dense::of(&cast_node(s, ct))?;
        let mut cf = Dense::of(&cast_node(c, ct))?;
        let mut rf = Dense::of(&cast_node(r, ct))?;
        // a dense vector is the same memory whichever dimension it runs along
        cf.dims = Dim4::new(&[cn, 1, 1, 1]);
        rf.dims = Dim4::new(&[1, rn, 1, 1]);
        let (od1, start1) = conv_shape(FUNC, sig.dims, cf.dims, 2, mode);
        let cols = sig.backend.ops().convolve(&sig, &cf, 2, od1, start1)?;
        let (od2, start2) = conv_shape(FUNC, cols.dims, rf.dims, 2, mode);
        cols.backend.ops().convolve(&cols, &rf, 2, od2, start2)
    };
    let out = run().or_raise(FUNC);
    Array::from_node(finish(FUNC, out.into_node(), s.dtype))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fft_sizes_are_7_smooth() {
        assert_eq!(fft_size(0), 1);
        assert_eq!(fft_size(11), 12);
        assert_eq!(fft_size(13), 14);
        assert_eq!(fft_size(97), 98);
        assert_eq!(fft_size(1024), 1024);
    }

    #[test]
    fn auto_follows_arrayfire() {
        let d = |a, b, c, e| Dim4::new(&[a, b, c, e]);
        assert!(!prefers_frequency(1, d(128, 1, 1, 1)));
        assert!(prefers_frequency(1, d(129, 1, 1, 1)));
        assert!(prefers_frequency(1, d(3, 10, 1, 1)));
        assert!(!prefers_frequency(2, d(17, 17, 1, 1)));
        assert!(prefers_frequency(2, d(7, 5, 1, 1)));
        assert!(!prefers_frequency(2, d(5, 3, 1, 1)));
        assert!(prefers_frequency(3, d(6, 1, 1, 1)));
    }
}
