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

use super::codegen::{index, storage_type, Plan};
use super::launch::input_ptr;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::jit::index_map::{Axis, IndexMap};
use crate::jit::Data;

/// The bytes a mapped step adds to the structural key (after its element type).
pub(crate) fn key(m: &IndexMap, dims: Dim4) -> [u8; 5] {
    let [lo, hi] = m.key().to_le_bytes();
    let broadcast = (0..4).filter(|&k| dims[k] == 1).fold(0u8, |b, k| b | (1 << k));
    let short = (0..4).filter(|&k| short_wrap(m, dims, k)).fold(0u8, |b, k| b | (1 << k));
    [9, lo, hi, broadcast, short]
}

/// Whether a wrapping read along dimension `k` goes round at most once, so that one compare
/// and subtract replaces the remainder: the output is no longer than the source along `k` (a
/// `shift`, not a `tile`), so `c + offset < 2 n`.
fn short_wrap(m: &IndexMap, dims: Dim4, k: usize) -> bool {
    matches!(m.axes[k], Axis::Wrap(_)) && dims[k] <= m.src[k]
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
    // a dimension of extent 1 is broadcast (stride 0) only where the rule keeps the
    // coordinate; a rule with an offset (a one-element crop at `o`) reads `o * stride`
    let stride = |k: usize| {
        if dims[k] == 1 && m.axes[k] == Axis::Same {
            0
        } else {
            d.strides[k] as u64
        }
    };
    v.extend((0..4).map(stride));
    for (k, a) in m.axes.iter().enumerate() {
        if *a != Axis::Same {
            v.push(m.src[k]);
            v.push(a.offset() as u64);
        }
    }
    v
}

/// The stored element of mapped step `i` (of shape `dims`) at the output coordinates
/// `c0..c3` of the kernel's loop, in the kernel's index width.
pub(crate) fn element(i: usize, t: DType, dims: Dim4, m: &IndexMap, plan: &Plan) -> String {
    let ix = index::ix(plan.narrow);
    let zero = if plan.narrow { "0" } else { "0LL" };
    let mut index = Vec::with_capacity(4);
    let mut inside = Vec::new();
    for (k, a) in m.axes.iter().enumerate() {
        let stride = format!("({ix})s{i}_{k}");
        if dims[k] == 1 && *a == Axis::Same {
            continue; // coordinate 0: no term
        }
        let c = if dims[k] == 1 { zero.to_string() } else { format!("c{k}") };
        let (n, x) = (format!("(({ix})n{i}_{k})"), format!("({c} + ({ix})o{i}_{k})"));
        let at = match a {
            Axis::Same => c,
            Axis::Wrap(_) if short_wrap(m, dims, k) => format!("({x} >= {n} ? {x} - {n} : {x})"),
            Axis::Wrap(_) => format!("({x} % {n})"),
            Axis::Clamp(_) => format!("min(max({x}, {zero}), {n} - 1)"),
            Axis::Mirror(_) => {
                format!("({x} < 0 ? (-{x} - 1) % {n} : {x} >= {n} ? {n} - 1 - {x} % {n} : {x})")
            }
            Axis::Zero(_) => {
                inside.push(format!("{x} >= 0 && {x} < {n}"));
                // clamped so that the address stays inside the source even where unused
                format!("min(max({x}, {zero}), {n} - 1)")
            }
        };
        index.push(format!("{at} * {stride}"));
    }
    let load = if index.is_empty() {
        format!("in{i}[0]")
    } else {
        format!("in{i}[{}]", index.join(" + "))
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::codegen::{plan, source, ENTRY};
    use crate::backend::Buffer;
    use crate::jit::program::{Program, Step};
    use crate::jit::{BinOp, Instr};
    use crate::storage::HostVec;
    use std::sync::Arc;

    fn rules() -> [Axis; 5] {
        [Axis::Same, Axis::Wrap(1), Axis::Clamp(-2), Axis::Mirror(-1), Axis::Zero(-3)]
    }

    /// A program reading a mapped leaf of type `t` with `axes`, added to a plain input when the
    /// type has addition, broadcast along dimension 3.
    fn program(t: DType, axes: [Axis; 4]) -> Program {
        let out = Dim4::new(&[6, 5, 4, 3]);
        let leaf_dims = Dim4::new(&[6, 5, 4, 1]);
        let buf = Arc::new(Buffer::host(HostVec::zeros(t, 60)));
        let data = Data { buf, offset: 0, strides: [1, 3, 15, 60] };
        let map = IndexMap { src: Dim4::new(&[3, 5, 4, 1]), axes };
        let mut steps =
            vec![Step { instr: Instr::Mapped(data.clone(), map), dtype: t, dims: leaf_dims }];
        if BinOp::Add.supports(t) {
            steps.push(Step { instr: Instr::Input(data), dtype: t, dims: out });
            steps.push(Step { instr: Instr::Binary(BinOp::Add, 0, 1), dtype: t, dims: out });
        }
        let last = steps.len() - 1;
        Program { steps, outputs: vec![last], dims: out }
    }

    /// Every rule on every dimension and every element type: the kernel signature has the
    /// parameters `values` passes (5 plus 2 per mapped dimension), the key tells the rules
    /// apart, and with `EMBERFIRE_DUMP_KERNELS=dir` the sources are written for the offline
    /// compile check.
    #[test]
    fn every_rule_and_type_generates_a_kernel() {
        let mut all = String::new();
        let mut keys = std::collections::HashSet::new();
        let mut n = 0;
        for t in DType::ALL {
            for (r, rule) in rules().into_iter().enumerate() {
                for d in 0..4 {
                    let mut axes = [Axis::Same; 4];
                    axes[d] = rule;
                    axes[(d + 1) % 4] = rules()[(r + 1) % 5];
                    let p = program(t, axes);
                    let linear: Vec<bool> = p.steps.iter().map(|s| s.dims == p.dims).collect();
                    let plan = plan(&p, &linear, |_| true);
                    assert!(plan.coords, "a mapped leaf needs coordinates");
                    let w = plan.vector as u64;
                    assert!(w == 1 || p.dims[0] % (32 * w) == 0, "runs tile dimension 0");
                    let src = source(&p, &plan);
                    let mapped = axes.iter().filter(|a| **a != Axis::Same).count();
                    let sig = src.split(ENTRY).nth(1).unwrap().split(')').next().unwrap();
                    let want = params(0, t, &IndexMap { src: Dim4::new(&[1; 4]), axes });
                    assert_eq!(want.len(), 5 + 2 * mapped);
                    for w in &want {
                        assert!(sig.contains(w.as_str()), "{w} missing from {sig}");
                    }
                    keys.insert(super::super::codegen::key(&p, &plan));
                    n += 1;
                    let at = src.find("extern \"C\"").unwrap();
                    if all.is_empty() {
                        all.push_str(&src[..at]); // the prelude, once
                    }
                    let body = src[at..].replace(ENTRY, &format!("k{n}"));
                    all.push_str(&format!("namespace m{n} {{\n{body}}}\n"));
                }
            }
        }
        assert_eq!(keys.len(), n, "every combination of rules has its own key");
        if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
            std::fs::write(format!("{dir}/mapped_kernels.cu"), all).unwrap();
        }
    }
}
