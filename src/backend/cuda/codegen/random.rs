//! Random leaves (`Instr::Random`) in generated kernels: a request's numbers computed where
//! the kernel reads them, with the generators the random kernel uses
//! (`kernels/random_core.cu`) and the element functions of `kernels/random_leaf.cu`.
//!
//! A leaf is read like an input: linearly when it has the program's shape (element `i` of the
//! program is element `i` of the request), otherwise through the strides of its own dense
//! shape, 0 along the dimensions it is broadcast over (`args::push_step_args`). Wide reads
//! of `w` elements from a multiple of `w` compute each 16-byte block once.
//!
//! Why: a program that draws numbers and reduces them at once (a Monte Carlo estimate) would
//! otherwise write every number to memory and read it back; computed in the reduction's
//! kernel, the numbers cost their arithmetic only. `mc_barrier_f32` (2^20 paths of 179 normal
//! steps) stored and reloaded 751 MB that way.

use crate::backend::cuda::random::GENERATORS;
use crate::dtype::DType;
use crate::jit::{Instr, Program};
use crate::random::stream::{Distribution, Draw, Generator};

/// The element functions of random leaves.
const LEAF_FUNCTIONS: &str = include_str!("../kernels/random_leaf.cu");

/// The device code a program's kernel needs for its random leaves: none without any.
pub(crate) fn helpers(p: &Program) -> String {
    if p.steps.iter().any(|s| matches!(s.instr, Instr::Random(_))) {
        format!("{GENERATORS}\n{LEAF_FUNCTIONS}")
    } else {
        String::new()
    }
}

/// What the source of random step `i` depends on beyond its type and access: the generator
/// and the distribution, which are template arguments.
pub(crate) fn key(d: &Draw) -> [u8; 2] {
    [(d.generator == Generator::Threefry) as u8, (d.dist == Distribution::Normal) as u8]
}

/// The kernel parameters of random step `i` (strides, when it has them, follow): the round
/// keys, the request's first block, and Philox's stream word.
pub(crate) fn params(i: usize) -> [String; 3] {
    [
        format!("const ef_keys rk{i}"),
        format!("const unsigned long long rb{i}"),
        format!("const unsigned int rl{i}"),
    ]
}

/// The element type's name in the leaf functions: `f32` or `f64`.
fn suffix(t: DType) -> &'static str {
    match t {
        DType::F32 => "f32",
        DType::F64 => "f64",
        t => unreachable!("internal error: a random leaf of type {}", t.name()),
    }
}

/// The template arguments of step `i`'s functions, without the width.
fn template(p: &Program, i: usize) -> String {
    let Instr::Random(d) = &p.steps[i].instr else {
        unreachable!("internal error: not a random step")
    };
    let [threefry, normal] = key(d);
    format!("{threefry}, {normal}")
}

/// The element of random step `i` with index `e` (a C expression) in its request.
pub(crate) fn element(p: &Program, i: usize, e: &str) -> String {
    format!(
        "ef_rand_{}<{}>((unsigned long long)({e}), rb{i}, rl{i}, rk{i})",
        suffix(p.steps[i].dtype),
        template(p, i)
    )
}

/// Declares `reg[w]` and fills it with the elements `e0 .. e0 + w` of random step `i`, `e0`
/// (a C expression) a multiple of `w`: the random leaf's form of a wide load.
pub(crate) fn fill(p: &Program, i: usize, reg: &str, w: usize, e0: &str) -> String {
    let t = p.steps[i].dtype;
    format!(
        "{} {reg}[{w}]; ef_rand_fill_{}<{}, {w}>({reg}, (unsigned long long)({e0}), rb{i}, rl{i}, rk{i});",
        super::storage_type(t),
        suffix(t),
        template(p, i)
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::backend::cuda::codegen::reduce::{self as reduce_codegen, Fold, Layout};
    use crate::backend::cuda::codegen::{key, plan, source, Access, ENTRY};
    use crate::backend::Buffer;
    use crate::dim4::Dim4;
    use crate::jit::index_map::{Axis, IndexMap};
    use crate::jit::program::Step;
    use crate::jit::{BinOp, Data, UnOp};
    use crate::storage::HostVec;

    fn draw(threefry: bool, normal: bool) -> Draw {
        let g = if threefry { Generator::Threefry } else { Generator::Philox };
        let d = if normal { Distribution::Normal } else { Distribution::Uniform };
        Draw::new(g, 0, 5, 7, d)
    }

    /// `exp(leaf * 0.5) + other`: the leaf of shape `leaf`, `other` a field of the program's
    /// shape read linearly or through a wrapped shift along dimension 0 (a stencil).
    fn program(t: DType, dims: Dim4, leaf: Dim4, r: Draw, shifted: bool) -> Program {
        let data = Data {
            buf: Arc::new(Buffer::host(HostVec::zeros(t, dims.elements() as usize))),
            offset: 0,
            strides: std::array::from_fn(|k| dims.strides()[k] as i64),
        };
        let half = HostVec::zeros(t, 1);
        let mut steps = vec![
            Step { instr: Instr::Random(r), dtype: t, dims: leaf },
            Step { instr: Instr::Scalar(half), dtype: t, dims: Dim4::new(&[1, 1, 1, 1]) },
            Step { instr: Instr::Binary(BinOp::Mul, 0, 1), dtype: t, dims: leaf },
            Step { instr: Instr::Unary(UnOp::Exp, 2), dtype: t, dims: leaf },
            Step { instr: Instr::Input(data.clone()), dtype: t, dims },
        ];
        if shifted {
            let mut axes = [Axis::Same; 4];
            axes[0] = Axis::Wrap(1);
            let map = IndexMap { src: dims, axes };
            steps.push(Step { instr: Instr::Mapped(data, map), dtype: t, dims });
            steps.push(Step { instr: Instr::Binary(BinOp::Add, 4, 5), dtype: t, dims });
            steps.push(Step { instr: Instr::Binary(BinOp::Add, 3, 6), dtype: t, dims });
        } else {
            steps.push(Step { instr: Instr::Binary(BinOp::Add, 3, 4), dtype: t, dims });
        }
        Program { outputs: vec![steps.len() - 1], steps, dims }
    }

    fn linear(p: &Program) -> Vec<bool> {
        p.steps
            .iter()
            .map(|s| matches!(s.instr, Instr::Input(_) | Instr::Random(_)) && s.dims == p.dims)
            .collect()
    }

    /// Every generator, distribution and type, in every kind of kernel a leaf meets: the plain
    /// loop with wide reads and its scalar tail, a broadcast leaf read through strides, runs
    /// in both layouts (a stencil beside the leaf), and reductions over rows and columns. The
    /// key tells the generators and distributions apart. With `EMBERFIRE_DUMP_KERNELS=dir` the
    /// sources are written for the offline compile check.
    #[test]
    fn leaves_generate_in_every_kind_of_kernel() {
        let dims = Dim4::new(&[64, 6, 1, 1]);
        let column = Dim4::new(&[64, 1, 1, 1]);
        let mut all = String::new();
        let mut keys = Vec::new();
        let mut n = 0;
        let mut add = |src: String, all: &mut String| {
            assert!(src.contains("ef_rand_"), "{src}");
            let src = src.replace(ENTRY, &format!("k{n}"));
            let src = src.replace(reduce_codegen::ENTRY, &format!("r{n}"));
            all.push_str(&format!("namespace k{n} {{\n{src}}}\n#undef EF_TRIG_CU\n"));
            n += 1;
        };
        for t in [DType::F32, DType::F64] {
            for (threefry, normal) in [(false, false), (false, true), (true, false), (true, true)] {
                let r = draw(threefry, normal);
                // wide reads: the vector loop
                let p = program(t, dims, dims, r, false);
                let pl = plan(&p, &linear(&p), |_| true);
                assert!(pl.vector > 1 && !pl.coords);
                keys.push(key(&p, &pl));
                add(source(&p, &pl), &mut all);
                // broadcast along dimension 1: strides and coordinates
                let p = program(t, dims, column, r, false);
                let pl = plan(&p, &linear(&p), |_| true);
                assert!(pl.coords && pl.access[0] == Some(Access::Strided));
                add(source(&p, &pl), &mut all);
                // a stencil beside the leaf: runs, blocked (the leaf is one wide read a lane)
                let p = program(t, dims, dims, r, true);
                let pl = plan(&p, &linear(&p), |_| true);
                assert!(pl.blocked, "{t:?}");
                let src = source(&p, &pl);
                assert!(src.contains("ef_rand_fill_"), "{src}");
                add(src, &mut all);
                // reductions: along rows (over everything) and columns (dimension 1)
                let p = program(t, dims, dims, r, false);
                let pl = plan(&p, &linear(&p), |_| true);
                let w = (16 / t.size()) as u32;
                for (rows, axis) in [(true, None), (false, Some(1))] {
                    let tx = if rows { 1 } else { 16 };
                    for vector in [1, w] {
                        let l = Layout { rows, tx, ty: 16, tz: 1, vector, unroll: 2, split: false };
                        let src = reduce_codegen::source(&p, &pl, Fold::Sum, t, &l, axis);
                        add(src, &mut all);
                    }
                }
            }
        }
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 8, "generator and distribution are in the key");
        if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
            std::fs::write(format!("{dir}/random_leaves.cu"), all).unwrap();
        }
    }
}
