//! The lowering of a convolution to matrix products: [`columns`] gathers every window of a
//! signal into a matrix per image (im2col), [`add_columns`] adds such matrices back into a
//! signal (col2im), and [`filter_matrix`] and [`filter_from_matrix`] lay a filter out as the
//! matching matrix.
//!
//! Layout: the columns of image `n` form a `[ow * oh, taps]` matrix (one row per output
//! pixel, the pixels in the output's column-major order), stored `[ow * oh, taps, 1, n]`, so
//! that the output of filter `f` for image `n` is row block `n` of a batched product with the
//! `[taps, f]` filter matrix, already in the output's `[ow, oh, f, n]` layout: no transpose of
//! the output is needed, unlike ArrayFire's lowering, which orders rows by image first.
//!
//! Tap `c + channels * (i + fw * j)` of the window at output pixel `(a, b)` reads signal pixel
//! `(a sx - px + (fw - 1 - i) dx, b sy - py + (fh - 1 - j) dy)` of channel `c`: the filter is
//! flipped in the gather (ArrayFire's convolutions are true convolutions), so the filter
//! matrix is the filter itself with its channels moved first. Channels first lets the gather
//! be one join, along dimension 2, of `fw * fh` strided views of the (padded) signal: one
//! copy of the columns, and no arithmetic.

use crate::array::Array;
use crate::dim4::Dim4;
use crate::ops::assign::assign_seq;
use crate::ops::blas::GemmType;
use crate::ops::build::with_backend_of;
use crate::ops::data::constant;
use crate::ops::index::index;
use crate::ops::movement::{join_many, moddims, pad, reorder_v2, BorderType};
use crate::ops::seq::Seq;

use crate::backend::ml::Geometry;

/// `count` positions from `first`, `step` apart.
fn grid(first: u64, count: u64, step: u64) -> Seq<f64> {
    Seq::new(first as f64, (first + step * (count - 1)) as f64, step as f64)
}

/// The positions of the padded signal that tap `(i, j)` reads, for every output pixel.
fn tap_seqs(g: &Geometry, i: u64, j: u64) -> [Seq<f64>; 2] {
    let (fw, fh) = (g.filter[0], g.filter[1]);
    [
        grid((fw - 1 - i) * g.dilation[0], g.out[0], g.stride[0]),
        grid((fh - 1 - j) * g.dilation[1], g.out[1], g.stride[1]),
    ]
}

fn padding_dims(g: &Geometry) -> Dim4 {
    Dim4::new(&[g.padding[0], g.padding[1], 0, 0])
}

/// The columns of every image of `signal` (`[w, h, c, n]`): `[ow * oh, taps, 1, n]`.
pub(crate) fn columns<T: GemmType>(signal: &Array<T>, g: &Geometry) -> Array<T> {
    let padded = if g.padding == [0, 0] {
        signal.clone()
    } else {
        pad(signal, padding_dims(g), padding_dims(g), BorderType::ZERO)
    };
    padded.eval();
    let (fw, fh) = (g.filter[0], g.filter[1]);
    let views: Vec<Array<T>> = (0..fh)
        .flat_map(|j| (0..fw).map(move |i| (i, j)))
        .map(|(i, j)| index(&padded, &tap_seqs(g, i, j)))
        .collect();
    let joined = join_many(2, views.iter().collect());
    moddims(&joined, Dim4::new(&[g.out_pixels(), g.taps(), 1, g.signal[3]]))
}

/// The sum, into a zero `[w, h, c, n]` signal, of every tap of `cols` (laid out as
/// [`columns`] makes them) at the pixel it was gathered from: the adjoint of [`columns`].
pub(crate) fn add_columns<T: GemmType>(cols: &Array<T>, g: &Geometry) -> Array<T> {
    let [w, h, c, n] = g.signal;
    let grown = Dim4::new(&[w + 2 * g.padding[0], h + 2 * g.padding[1], c, n]);
    let per_tap = moddims(cols, Dim4::new(&[g.out[0], g.out[1], g.taps(), n]));
    per_tap.eval();
    let mut acc: Array<T> = with_backend_of(cols, || constant(0.0f64, grown)).cast();
    acc.eval();
    let span = Seq::<f64>::default();
    let (fw, fh) = (g.filter[0], g.filter[1]);
    for j in 0..fh {
        for i in 0..fw {
            let first = c * (i + fw * j);
            let part =
                index(&per_tap, &[span, span, Seq::new(first as f64, (first + c - 1) as f64, 1.0)]);
            let [sa, sb] = tap_seqs(g, i, j);
            let seqs = [sa, sb, span, span];
            let sum = &index(&acc, &seqs) + &part;
            // evaluated first, so that `acc` is not shared and takes the values in place
            sum.eval();
            assign_seq(&mut acc, &seqs, &sum);
        }
    }
    if g.padding == [0, 0] {
        return acc;
    }
    let crop = [
        Seq::new(g.padding[0] as f64, (g.padding[0] + w - 1) as f64, 1.0),
        Seq::new(g.padding[1] as f64, (g.padding[1] + h - 1) as f64, 1.0),
    ];
    index(&acc, &crop).copy()
}

/// The `[taps, f]` matrix of a `[fw, fh, c, f]` filter that multiplies [`columns`].
pub(crate) fn filter_matrix<T: GemmType>(filter: &Array<T>, g: &Geometry) -> Array<T> {
    let channels_first =
        if g.filter[2] == 1 { filter.clone() } else { reorder_v2(filter, 2, 0, Some(vec![1, 3])) };
    moddims(&channels_first, Dim4::new(&[g.taps(), g.filter[3], 1, 1]))
}

/// The `[fw, fh, c, f]` filter of a `[taps, f]` matrix laid out as [`filter_matrix`] makes.
pub(crate) fn filter_from_matrix<T: GemmType>(m: &Array<T>, g: &Geometry) -> Array<T> {
    let [fw, fh, c, f] = g.filter;
    let channels_first = moddims(m, Dim4::new(&[c, fw, fh, f]));
    if c == 1 {
        return moddims(&channels_first, Dim4::new(&[fw, fh, c, f]));
    }
    reorder_v2(&channels_first, 1, 2, Some(vec![0, 3])).copy()
}
