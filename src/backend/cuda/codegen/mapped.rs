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
//!
//! Mapped leaves of one program often read the same data with the same rule along some
//! dimension: the eight shifts of a Conway generation read one array, and three of them share
//! each column offset. Each such leaf reads through the pointer and strides of the first leaf
//! with the same data ([`Alias::data`]), and computes its coordinate along a dimension with
//! the extent and offset parameters of the first leaf with the same rule there
//! ([`Alias::coord`]), so that equal expressions are written alike and the compiler computes
//! them once. Which leaves alias which is part of the structural key. For a Conway generation
//! this takes the loop of its kernel from 73 to 53 instructions an element (NVRTC 12.9,
//! sm_90).

use super::{index, storage_type, Plan};
use crate::backend::cuda::dense::{first_aligned, input_ptr};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::jit::index_map::{Axis, IndexMap};
use crate::jit::{Data, Instr, Program};
use std::sync::Arc;

/// Appends to the structural key `k` the bytes of mapped step `i` of `p` (after its element
/// type): its rules, broadcast and short-wrap dimensions, and its [`Alias`].
pub(crate) fn push_key(p: &Program, i: usize, k: &mut Vec<u8>) {
    let st = &p.steps[i];
    let Instr::Mapped(_, m) = &st.instr else { unreachable!("internal error: not a mapped step") };
    let dims = st.dims;
    let [lo, hi] = m.key().to_le_bytes();
    let broadcast = (0..4).filter(|&k| dims[k] == 1).fold(0u8, |b, k| b | (1 << k));
    let short = (0..4).filter(|&k| short_wrap(m, dims, k)).fold(0u8, |b, k| b | (1 << k));
    k.extend([9, lo, hi, broadcast, short]);
    let a = alias(p, i);
    for step in std::iter::once(a.data).chain(a.coord) {
        k.extend((step as u32).to_le_bytes());
    }
}

/// Which earlier mapped steps a mapped step shares its reads with (each field names itself
/// when it shares nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Alias {
    /// The first mapped step with the same data, shape and read strides: its pointer and
    /// strides are used.
    pub data: usize,
    /// For each dimension, the first mapped step whose coordinate along it is computed by the
    /// same rule, offset and source extent (for the same output extent): its extent and
    /// offset parameters are used.
    pub coord: [usize; 4],
}

/// The [`Alias`] of mapped step `i` of `p`.
pub(crate) fn alias(p: &Program, i: usize) -> Alias {
    let Instr::Mapped(d, m) = &p.steps[i].instr else {
        unreachable!("internal error: not a mapped step")
    };
    let dims = p.steps[i].dims;
    let mut a = Alias { data: i, coord: [i; 4] };
    let mut found = [false; 5];
    let strides = read_strides(d, dims, m);
    for (j, sj) in p.steps[..i].iter().enumerate() {
        let Instr::Mapped(dj, mj) = &sj.instr else { continue };
        if !found[4]
            && Arc::ptr_eq(&d.buf, &dj.buf)
            && d.offset == dj.offset
            && strides == read_strides(dj, sj.dims, mj)
        {
            a.data = j;
            found[4] = true;
        }
        for k in 0..4 {
            if !found[k]
                && m.axes[k] == mj.axes[k]
                && m.src[k] == mj.src[k]
                && dims[k] == sj.dims[k]
            {
                a.coord[k] = j;
                found[k] = true;
            }
        }
    }
    a
}

/// The strides a mapped read moves by: 0 along a dimension of extent 1 that keeps its
/// coordinate (broadcast); a rule with an offset (a one-element crop at `o`) reads
/// `o * stride`.
pub(crate) fn read_strides(d: &Data, dims: Dim4, m: &IndexMap) -> [i64; 4] {
    std::array::from_fn(|k| if dims[k] == 1 && m.axes[k] == Axis::Same { 0 } else { d.strides[k] })
}

/// Whether a mapped leaf of shape `dims` reads, along dimension 0, the output's elements of
/// whole rows of its source: it keeps coordinate 0 of a source as long as the output's
/// dimension 0 (longer than 1), and no element is zero. A lane of the blocked run layout reads
/// its consecutive elements of such a leaf with one wide load (`codegen::runs`).
pub(crate) fn reads_rows(dims: Dim4, m: &IndexMap) -> bool {
    dims[0] > 1
        && m.axes[0] == Axis::Same
        && m.src[0] == dims[0]
        && !m.axes.iter().any(|a| matches!(a, Axis::Zero(_)))
}

/// Whether a leaf that [`reads_rows`] can be read `w` elements at a time with aligned wide
/// loads: its rows are contiguous and every row starts at a multiple of `w` elements.
pub(crate) fn rows_aligned(d: &Data, t: DType, dims: Dim4, m: &IndexMap, w: usize) -> bool {
    let s = read_strides(d, dims, m);
    s[0] == 1 && s[1..].iter().all(|&x| x % w as i64 == 0) && first_aligned(d, t.size(), w)
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
    v.extend(read_strides(d, dims, m).map(|s| s as u64));
    for (k, a) in m.axes.iter().enumerate() {
        if *a != Axis::Same {
            v.push(m.src[k]);
            v.push(a.offset() as u64);
        }
    }
    v
}

/// The stored element of mapped step `i` of `p` at the output coordinates `c0..c3` of the
/// kernel's loop, in the kernel's index width.
pub(crate) fn element(p: &Program, i: usize, plan: &Plan) -> String {
    let st = &p.steps[i];
    let Instr::Mapped(_, m) = &st.instr else { unreachable!("internal error: not a mapped step") };
    let (t, dims) = (st.dtype, st.dims);
    let alias = alias(p, i);
    let d = alias.data;
    let ix = index::ix(plan.narrow);
    let zero = if plan.narrow { "0" } else { "0LL" };
    let mut index = Vec::with_capacity(4);
    let mut inside = Vec::new();
    for (k, a) in m.axes.iter().enumerate() {
        let stride = format!("({ix})s{d}_{k}");
        if dims[k] == 1 && *a == Axis::Same {
            continue; // coordinate 0: no term
        }
        let c = if dims[k] == 1 { zero.to_string() } else { format!("c{k}") };
        let q = alias.coord[k];
        let (n, x) = (format!("(({ix})n{q}_{k})"), format!("({c} + ({ix})o{q}_{k})"));
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
        format!("in{d}[0]")
    } else {
        format!("in{d}[{}]", index.join(" + "))
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
                    assert!(w == 1 || p.dims[0].is_multiple_of(32 * w), "runs tile dimension 0");
                    let src = source(&p, &plan);
                    let mapped = axes.iter().filter(|a| **a != Axis::Same).count();
                    let sig = src.split(ENTRY).nth(1).unwrap().split(')').next().unwrap();
                    let want = params(0, t, &IndexMap { src: Dim4::new(&[1; 4]), axes });
                    assert_eq!(want.len(), 5 + 2 * mapped);
                    for w in &want {
                        assert!(sig.contains(w.as_str()), "{w} missing from {sig}");
                    }
                    keys.insert(super::super::key(&p, &plan));
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

#[cfg(test)]
mod alias_tests {
    use super::*;
    use crate::backend::cuda::codegen::{key, plan, source, ENTRY};
    use crate::backend::Buffer;
    use crate::jit::program::{Program, Step};
    use crate::jit::BinOp;
    use crate::storage::HostVec;
    use std::collections::BTreeSet;

    /// The sum of an array and its circular shifts by `shifts` (along dimensions 0 and 1) of
    /// a 256 x 256 array of `t`; `other` reads the last shift from a second buffer.
    fn stencil(t: DType, shifts: &[(i64, i64)], other: bool) -> Program {
        let d = Dim4::new(&[256, 256, 1, 1]);
        let data = |buf| Data { buf, offset: 0, strides: [1, 256, 65536, 65536] };
        let a = data(Arc::new(Buffer::host(HostVec::zeros(t, 65536))));
        let b = data(Arc::new(Buffer::host(HostVec::zeros(t, 65536))));
        let mut steps = vec![Step { instr: Instr::Input(a.clone()), dtype: t, dims: d }];
        for (n, &(x, y)) in shifts.iter().enumerate() {
            let mut axes = [Axis::Same; 4];
            for (k, by) in [(0, x), (1, y)] {
                if by != 0 {
                    axes[k] = Axis::Wrap(by.rem_euclid(256) as u64);
                }
            }
            let src = if other && n + 1 == shifts.len() { b.clone() } else { a.clone() };
            let map = IndexMap { src: d, axes };
            steps.push(Step { instr: Instr::Mapped(src, map), dtype: t, dims: d });
        }
        let mut acc = 0;
        for k in 1..=shifts.len() {
            steps.push(Step { instr: Instr::Binary(BinOp::Add, acc, k), dtype: t, dims: d });
            acc = steps.len() - 1;
        }
        Program { steps, outputs: vec![acc], dims: d }
    }

    fn generate(p: &Program) -> (Vec<u8>, String) {
        let linear: Vec<bool> =
            p.steps.iter().map(|s| matches!(s.instr, Instr::Input(_))).collect();
        let plan = plan(p, &linear, |_| true);
        (key(p, &plan), source(p, &plan))
    }

    /// The names `prefix{step}_{dim}` the loads of `src` use.
    fn names(src: &str, prefix: &str) -> BTreeSet<String> {
        let body = &src[src.find("const int lane_").unwrap()..];
        body.split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| {
                w.starts_with(prefix) && w[prefix.len()..].starts_with(|c: char| c.is_ascii_digit())
            })
            .map(String::from)
            .collect()
    }

    /// Conway's eight shifts of one array read through one pointer and one set of strides,
    /// and compute each distinct wrapped coordinate with the parameters of one leaf: two
    /// along each dimension (the offsets -1 and +1; offset 0 keeps the coordinate). A second
    /// buffer, or a new equality between shifts, gets a kernel of its own. With
    /// `EMBERFIRE_DUMP_KERNELS=dir` the sources are written for the offline compile check.
    #[test]
    fn shifts_of_one_array_share_their_reads() {
        let conway: Vec<(i64, i64)> =
            (-1..=1).flat_map(|x| (-1..=1).map(move |y| (x, y))).filter(|&s| s != (0, 0)).collect();
        let (k, src) = generate(&stencil(DType::U8, &conway, false));
        let loads = names(&src, "in");
        assert_eq!(loads, ["in0", "in1"].map(String::from).into(), "{src}");
        assert_eq!(names(&src, "s").iter().filter(|n| n.starts_with("s1_")).count(), 2);
        let offsets = names(&src, "o");
        assert_eq!(offsets.iter().filter(|n| n.ends_with("_0")).count(), 2, "{offsets:?}");
        assert_eq!(offsets.iter().filter(|n| n.ends_with("_1")).count(), 2, "{offsets:?}");

        let (k2, src2) = generate(&stencil(DType::U8, &conway, true));
        assert_ne!(k, k2, "another buffer is another structure");
        assert!(names(&src2, "in").contains("in8"), "the second buffer has its own pointer");
        let mut moved = conway.clone();
        moved[7] = (1, 2); // no longer shares its dimension-1 coordinate
        let (k3, src3) = generate(&stencil(DType::U8, &moved, false));
        assert_ne!(k, k3);
        assert_eq!(names(&src3, "o").iter().filter(|n| n.ends_with("_1")).count(), 3);
        if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
            let at = src.find("extern \"C\"").unwrap();
            let mut all = src[..at].to_string(); // the prelude, once
            for (n, s) in [&src, &src2, &src3].iter().enumerate() {
                let body = s[s.find("extern \"C\"").unwrap()..].replace(ENTRY, &format!("a{n}"));
                all.push_str(&format!("namespace a{n} {{\n{body}}}\n"));
            }
            std::fs::write(format!("{dir}/stencil_kernels.cu"), all).unwrap();
        }
    }
}
