//! Generated code for mapped leaves (`tile`, `shift`, `pad`; see `jit/index_map.rs`): their
//! kernel parameters, the values passed for them at launch, and the expression that reads one
//! element. Kept in one place so that the parameter order of the source and of the launch
//! cannot drift apart.
//!
//! Parameters of mapped step `i`: the pointer `in{i}`, four strides `s{i}_k` (0 along the
//! dimensions the step is broadcast over), then for each dimension `k` whose rule is not
//! [`Axis::Same`], the source extent `n{i}_k` and the offset `o{i}_k`. Which rule each
//! dimension follows, and which dimensions are broadcast, are compiled into the source and
//! are part of the structural key; extents, offsets and strides are arguments.

use super::codegen::storage_type;
use super::launch::input_ptr;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::jit::index_map::{Axis, IndexMap};
use crate::jit::Data;

/// The bytes a mapped step adds to the structural key (after its element type).
pub(crate) fn key(m: &IndexMap, dims: Dim4) -> [u8; 4] {
    let [lo, hi] = m.key().to_le_bytes();
    let broadcast = (0..4).filter(|&k| dims[k] == 1).fold(0u8, |b, k| b | (1 << k));
    [9, lo, hi, broadcast]
}

/// The parameter declarations of mapped step `i`.
pub(crate) fn params(i: usize, t: DType, m: &IndexMap) -> Vec<String> {
    let mut p = vec![format!("const {}* __restrict__ in{i}", storage_type(t))];
    p.extend((0..4).map(|k| format!("const long long s{i}_{k}")));
    for (k, a) in m.axes.iter().enumerate() {
        if *a != Axis::Same {
            p.push(format!("const long long n{i}_{k}"));
            p.push(format!("const long long o{i}_{k}"));
        }
    }
    p
}

/// The argument values of a mapped step, in the order of [`params`].
pub(crate) fn values(d: &Data, t: DType, dims: Dim4, m: &IndexMap) -> Vec<u64> {
    let mut v = vec![input_ptr(d, t.size())];
    v.extend((0..4).map(|k| if dims[k] == 1 { 0 } else { d.strides[k] as u64 }));
    for (k, a) in m.axes.iter().enumerate() {
        if *a != Axis::Same {
            v.push(m.src[k]);
            v.push(a.offset() as u64);
        }
    }
    v
}

/// The stored element of mapped step `i` (of shape `dims`) at the output coordinates
/// `c0..c3` of the kernel's loop.
pub(crate) fn element(i: usize, t: DType, dims: Dim4, m: &IndexMap) -> String {
    let mut index = Vec::with_capacity(4);
    let mut inside = Vec::new();
    for (k, a) in m.axes.iter().enumerate() {
        let c = if dims[k] == 1 { "0LL".to_string() } else { format!("c{k}") };
        let (n, x) = (format!("n{i}_{k}"), format!("({c} + o{i}_{k})"));
        let at = match a {
            Axis::Same => c,
            Axis::Wrap(_) => format!("({x} % {n})"),
            Axis::Clamp(_) => format!("min(max({x}, 0LL), {n} - 1)"),
            Axis::Mirror(_) => {
                format!("({x} < 0 ? (-{x} - 1) % {n} : {x} >= {n} ? {n} - 1 - {x} % {n} : {x})")
            }
            Axis::Zero(_) => {
                inside.push(format!("{x} >= 0 && {x} < {n}"));
                // clamped so that the address stays inside the source even where unused
                format!("min(max({x}, 0LL), {n} - 1)")
            }
        };
        index.push(format!("{at} * s{i}_{k}"));
    }
    let load = format!("in{i}[{}]", index.join(" + "));
    if inside.is_empty() {
        return load;
    }
    let zero = match t {
        DType::C32 => "mk(0.0f, 0.0f, (cf*)0)".to_string(),
        DType::C64 => "mk(0.0, 0.0, (cd*)0)".to_string(),
        _ => format!("({})0", storage_type(t)),
    };
    format!("(({}) ? {load} : {zero})", inside.join(" && "))
}
