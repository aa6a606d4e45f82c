//! Host references for indexing, written from the rules that src/ops/seq.rs, index.rs,
//! indexer.rs and assign.rs document: which positions a sequence selects (negative values
//! count from the end, step 0 only in the span), the one-index flattening rule, spans for the
//! dimensions past the last index, and index values folded into their dimension. Nothing here
//! calls emberfire to compute an expected value.

#![allow(dead_code)]

use crate::common::{check_all, vs, Elem, Rng, Rng64, Tol};
use emberfire::{Array, Dim4, HasAfEnum, IndexableType, Indexer, Seq};

/// What a check returns: nothing, or what went wrong.
pub type Res = std::result::Result<(), String>;

/// Runs `$f::<T>($($arg),*)?` for every element type.
macro_rules! every_type {
    ($f:ident($($arg:expr),*)) => {{
        $f::<f32>($($arg),*)?;
        $f::<f64>($($arg),*)?;
        $f::<emberfire::c32>($($arg),*)?;
        $f::<emberfire::c64>($($arg),*)?;
        $f::<emberfire::f16>($($arg),*)?;
        $f::<bool>($($arg),*)?;
        $f::<u8>($($arg),*)?;
        $f::<i16>($($arg),*)?;
        $f::<u16>($($arg),*)?;
        $f::<i32>($($arg),*)?;
        $f::<u32>($($arg),*)?;
        $f::<i64>($($arg),*)?;
        $f::<u64>($($arg),*)?;
    }};
}
pub(crate) use every_type;

/// Compares an array with expected host values exactly (indexing and assignment move values
/// unchanged; NaN matches NaN).
pub fn same<T: Elem>(a: &Array<T>, dims: Dim4, want: &[T], what: &str) -> Res {
    if a.dims() != dims {
        return Err(format!("{what}: dims {} (expected {dims})", a.dims()));
    }
    check_all(&a.to_vec(), &vs(want), Tol::EXACT, &|i| format!("{what}, element {i}"))
}

/// A sequence as the tests give it (begin, end, step), always whole numbers here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct S(pub f64, pub f64, pub f64);

pub const SPAN: S = S(1.0, 1.0, 0.0);

impl S {
    pub fn seq(self) -> emberfire::Seq<f64> {
        emberfire::Seq::new(self.0, self.1, self.2)
    }
    pub fn seq_i32(self) -> emberfire::Seq<i32> {
        emberfire::Seq::new(self.0 as i32, self.1 as i32, self.2 as i32)
    }
}

/// Linear index of coordinates `c` in a dense column-major array of shape `dims`.
pub fn lin(dims: Dim4, c: [u64; 4]) -> usize {
    (c[0] + dims[0] * (c[1] + dims[1] * (c[2] + dims[2] * c[3]))) as usize
}

/// Coordinates of linear index `i` in `dims` (no dimension may be 0).
pub fn coords_of(dims: Dim4, mut i: u64) -> [u64; 4] {
    let mut c = [0; 4];
    for k in 0..4 {
        c[k] = i % dims[k];
        i /= dims[k];
    }
    c
}

/// The positions a sequence selects along a dimension of length `len`, or `None` where
/// emberfire must refuse it.
pub fn seq_positions(s: S, len: u64) -> Option<Vec<u64>> {
    let S(b, e, step) = s;
    if step == 0.0 && b == 1.0 && e == 1.0 {
        return Some((0..len).collect());
    }
    let from_end = |v: f64| if v < 0.0 { len as f64 + v } else { v };
    let (b, e) = (from_end(b), from_end(e));
    if step == 0.0 || b < 0.0 || e < 0.0 || b >= len as f64 || e >= len as f64 {
        return None;
    }
    if (step > 0.0 && b > e) || (step < 0.0 && b < e) {
        return None;
    }
    let (mut x, e, step) = (b as i64, e as i64, step as i64);
    let mut out = Vec::new();
    while (step > 0 && x <= e) || (step < 0 && x >= e) {
        out.push(x as u64);
        x += step;
    }
    Some(out)
}

/// The shape an index applies to: one column of all elements when a single index is given
/// for an array that does not have exactly one dimension (ArrayFire's rule).
pub fn layout(dims: Dim4, n_indices: usize) -> Dim4 {
    let ndims = if dims.elements() == 0 {
        0
    } else {
        (0..4).rev().find(|&k| dims[k] != 1).map_or(1, |k| k + 1)
    };
    if n_indices == 1 && ndims != 1 {
        Dim4::new(&[dims.elements(), 1, 1, 1])
    } else {
        dims
    }
}

/// Positions for each dimension of `dims` from up to four sequences (the rest span), or
/// `None` if one of them must be refused.
pub fn seqs_positions(seqs: &[S], dims: Dim4) -> Option<[Vec<u64>; 4]> {
    let mut out: [Vec<u64>; 4] = Default::default();
    for k in 0..4 {
        out[k] = seq_positions(seqs.get(k).copied().unwrap_or(SPAN), dims[k])?;
    }
    Some(out)
}

/// An index value folded into `0..len`: negative values reflect from the start (-1 -> 0),
/// values past the end reflect from the end (len -> len - 1).
pub fn fold(i: i64, len: u64) -> u64 {
    let len = len as i128;
    let i = i as i128;
    let f = if i < 0 {
        (-i - 1) % len
    } else if i >= len {
        len - 1 - i % len
    } else {
        i
    };
    f as u64
}

/// The shape of a selection.
pub fn shape_of(pos: &[Vec<u64>; 4]) -> Dim4 {
    Dim4::new(&std::array::from_fn(|k| pos[k].len() as u64))
}

/// The elements of `vals` (shape `dims`) at the positions `pos`, in column-major order.
pub fn take<T: Copy>(vals: &[T], dims: Dim4, pos: &[Vec<u64>; 4]) -> Vec<T> {
    let out = shape_of(pos);
    (0..out.elements())
        .map(|i| {
            let c = coords_of(out, i);
            vals[lin(dims, std::array::from_fn(|k| pos[k][c[k] as usize]))]
        })
        .collect()
}

/// Writes `value` (in the selection's column-major order; a single element is written
/// everywhere) into `vals` (shape `dims`) at `pos`, in order, so a repeated position keeps
/// the last value.
pub fn put<T: Copy>(vals: &mut [T], dims: Dim4, pos: &[Vec<u64>; 4], value: &[T]) {
    let out = shape_of(pos);
    for i in 0..out.elements() {
        let c = coords_of(out, i);
        let v = if value.len() == 1 { value[0] } else { value[i as usize] };
        vals[lin(dims, std::array::from_fn(|k| pos[k][c[k] as usize]))] = v;
    }
}

/// A random valid sequence for a dimension of length `len`: the span, one position, or a run
/// forwards or backwards with a step of 1 to 3, each end sometimes written counting from the
/// end (negative).
pub fn random_seq(r: &mut Rng64, len: u64) -> S {
    if len == 0 || r.gen_bool(0.2) {
        return SPAN;
    }
    let b = r.gen_range(0..len);
    let (e, step) = match r.gen_range(0..4) {
        0 => (b, if r.gen_bool(0.5) { 1 } else { -1 }),
        1 => (r.gen_range(b..len), r.gen_range(1..=3)),
        2 => (r.gen_range(0..=b), -r.gen_range(1..=3)),
        _ => (if r.gen_bool(0.5) { len - 1 } else { 0 }, if b == 0 { 1 } else { -1 }),
    };
    let (e, step) = if step > 0 && e < b { (b, step) } else { (e, step) };
    let (e, step) = if step < 0 && e > b { (b, step) } else { (e, step) };
    let write = |r: &mut Rng64, v: u64| {
        if r.gen_bool(0.3) {
            v as f64 - len as f64
        } else {
            v as f64
        }
    };
    S(write(r, b), write(r, e), step as f64)
}

/// Random sequences for an array of shape `dims`: 1 to 4 of them (one flattens a
/// multi-dimensional array).
pub fn random_seqs(r: &mut Rng64, dims: Dim4) -> Vec<S> {
    let n = r.gen_range(1..=4);
    let lay = layout(dims, n);
    (0..n).map(|k| random_seq(r, lay[k])).collect()
}

/// Random index values for a dimension of length `len`: mostly inside it, sometimes negative
/// or past the end (to exercise folding) when `outside` is set.
pub fn random_indices(r: &mut Rng64, n: usize, len: u64, outside: bool) -> Vec<i64> {
    (0..n)
        .map(|_| {
            if outside && r.gen_bool(0.2) {
                let l = len.max(1) as i64;
                r.gen_range(-3 * l..3 * l + 3)
            } else {
                r.gen_range(0..len.max(1)) as i64
            }
        })
        .collect()
}

/// An indexer with the index array `idx` on dimension `at` and `seqs[k]` on every other
/// dimension `k` below `seqs.len()`.
pub fn mixed_indexer<'a, I: HasAfEnum + IndexableType>(
    idx: &'a Array<I>,
    at: usize,
    seqs: &'a [Seq<f64>],
) -> Indexer<'a> {
    let mut indexer = Indexer::default();
    for (k, s) in seqs.iter().enumerate() {
        if k == at {
            indexer.set_index(idx, k as u32, None);
        } else {
            indexer.set_index(s, k as u32, None);
        }
    }
    indexer
}
