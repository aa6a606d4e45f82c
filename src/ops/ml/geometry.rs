//! The shape of one 2-D convolution: the sizes of signal, filter and output, and the
//! strides, padding and dilation, checked once with messages that name the function and the
//! argument at fault.

use crate::backend::ml::Geometry;
use crate::dim4::Dim4;

impl Geometry {
    /// Checks the arguments of `func` and computes the output size. Only the first two
    /// values of `strides`, `padding` and `dilation` are read (dimension 0 and dimension 1),
    /// as ArrayFire reads them.
    ///
    /// Panics, naming `func` and the argument, when a stride or a dilation is 0, when the
    /// channels of the signal (dimension 2) and the filter (dimension 2) differ, or when the
    /// padded signal is smaller than the dilated filter.
    pub(crate) fn new(
        func: &str,
        signal: Dim4,
        filter: Dim4,
        strides: Dim4,
        padding: Dim4,
        dilation: Dim4,
    ) -> Geometry {
        let (s, f) = (*signal.get(), *filter.get());
        let stride = [strides[0], strides[1]];
        let padding = [padding[0], padding[1]];
        let dilation = [dilation[0], dilation[1]];
        assert!(
            stride.iter().all(|&x| x > 0),
            "{func}: `strides` must be positive along dimensions 0 and 1 (got {stride:?})"
        );
        assert!(
            dilation.iter().all(|&x| x > 0),
            "{func}: `dilation` must be positive along dimensions 0 and 1 (got {dilation:?})"
        );
        assert!(
            s[2] == f[2],
            "{func}: the signal has {} channels (dims {signal}) but the filter has {} (dims \
             {filter}); dimension 2 of both must match",
            s[2],
            f[2]
        );
        assert!(f[0] > 0 && f[1] > 0, "{func}: the filter has no width or height (dims {filter})");
        let mut out = [0u64; 2];
        for k in 0..2 {
            let span = (f[k] - 1)
                .checked_mul(dilation[k])
                .and_then(|x| x.checked_add(1))
                .unwrap_or_else(|| panic!("{func}: `dilation` {dilation:?} overflows"));
            let padded = padding[k]
                .checked_mul(2)
                .and_then(|p| p.checked_add(s[k]))
                .unwrap_or_else(|| panic!("{func}: `padding` {padding:?} overflows"));
            assert!(
                padded >= span,
                "{func}: along dimension {k} the signal ({} elements, dims {signal}) padded by \
                 {} on each side is smaller than the filter ({} elements) dilated by {} ({} \
                 elements); give more `padding` or a smaller `dilation`",
                s[k],
                padding[k],
                f[k],
                dilation[k],
                span
            );
            out[k] = (padded - span) / stride[k] + 1;
        }
        Geometry { signal: s, filter: f, stride, padding, dilation, out }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: u64, b: u64, c: u64, e: u64) -> Dim4 {
        Dim4::new(&[a, b, c, e])
    }

    #[test]
    fn output_sizes_follow_arrayfires_formula() {
        // 1 + (s + 2p - ((f - 1) d + 1)) / stride
        let g = Geometry::new(
            "t",
            d(7, 9, 2, 3),
            d(3, 2, 2, 5),
            d(2, 1, 1, 1),
            d(1, 0, 0, 0),
            d(1, 3, 1, 1),
        );
        // 1 + (7 + 2 - 3) / 2 = 4 and 1 + (9 - 4) / 1 = 6
        assert_eq!(g.out, [4, 6]);
        assert_eq!(g.out_dims(), d(4, 6, 5, 3));
    }

    #[test]
    #[should_panic(expected = "t: `strides` must be positive")]
    fn zero_stride_is_refused() {
        Geometry::new(
            "t",
            d(4, 4, 1, 1),
            d(3, 3, 1, 1),
            d(0, 1, 1, 1),
            d(0, 0, 0, 0),
            d(1, 1, 1, 1),
        );
    }
}
