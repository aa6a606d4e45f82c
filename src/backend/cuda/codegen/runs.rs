//! The loop of a kernel with coordinates: warps take runs of consecutive elements along
//! dimension 0, in one of two layouts.
//!
//! - **Interleaved**: lane `l` of a warp takes the elements `l`, `l + 32`, ... of its run. Every
//!   read of the warp is one contiguous piece, whatever each read's address expression is.
//! - **Blocked**: lane `l` takes the `plan.vector` consecutive elements from `l * vector`. A read
//!   that moves along dimension 0 with the output ([`LaneRead::Wide`]: a linear input, or a
//!   mapped leaf that keeps coordinate 0, such as a `shift` along another dimension) is one wide
//!   load a lane; a read of the same row a few elements along ([`LaneRead::Neighbour`]: a shift
//!   or clamped neighbour along dimension 0) comes from the wide read's registers, the adjacent
//!   lane's (a shuffle), and for the warp's first or last lane one load of the element just past
//!   its run.
//!
//! The heat equation's step (a field and its four neighbours, f32, 4096 x 4096 torus) on an
//! NVIDIA H200, 200 steps: interleaved 9.21 ms (79% of a copy's time), blocked with its
//! dimension-0 neighbours loaded one by one 8.56 ms (85%), blocked with them from registers and
//! shuffles 7.87 ms (93%). A program gets the blocked layout when it reads a neighbour and
//! every read that moves along dimension 0 is wide or a neighbour ([`prefers_blocked`]); a read
//! gathered element by element (a strided input, a tile along dimension 0) would touch four
//! times the cache lines a load in it, so such programs keep the interleaved layout. `EMBERFIRE_RUN_LAYOUT=interleaved` or
//! `blocked` overrides the choice (for measuring).

use std::fmt::Write;
use std::sync::Arc;

use super::mapped;
use super::{body, element_read, index, storage_type, store_expr, wide_read, Access, Plan};
use crate::jit::index_map::Axis;
use crate::jit::{Instr, Program};

/// Lanes that share a run: a warp.
pub(crate) const RUN_LANES: usize = 32;

/// The most elements a lane takes in the blocked layout: more would hold too many registers
/// for a stencil's rows (a byte stencil keeps nine rows of `vector` elements).
pub(crate) const BLOCKED_MAX_VECTOR: usize = 4;

/// How a read step is read by a lane of the blocked layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneRead {
    /// One wide load of the lane's consecutive elements.
    Wide,
    /// The element `delta` along dimension 0 of the same row that wide read step `of` reads.
    Neighbour { of: usize, delta: i64 },
    /// The same element for every element of the lane (broadcast along dimension 0).
    Uniform,
    /// Each element loaded by its own address.
    Gathered,
}

/// How read step `i` of `p` is read in the blocked layout with `w` elements a lane; `None` for
/// a step that reads nothing. Structural: whether a wide mapped read is aligned is a launch's
/// question (`args::aligned_for`).
pub(crate) fn lane_read(
    p: &Program,
    access: &[Option<Access>],
    i: usize,
    w: usize,
) -> Option<LaneRead> {
    let st = &p.steps[i];
    match &st.instr {
        Instr::Input(_) | Instr::Random(_) if access[i] == Some(Access::Linear) => {
            Some(LaneRead::Wide)
        }
        Instr::Input(_) | Instr::Random(_) if st.dims[0] == 1 => Some(LaneRead::Uniform),
        Instr::Input(_) | Instr::Random(_) => Some(LaneRead::Gathered),
        Instr::Mapped(_, m) => Some(if st.dims[0] == 1 || m.src[0] == 1 {
            LaneRead::Uniform
        } else if mapped::reads_rows(st.dims, m) {
            LaneRead::Wide
        } else if let Some((of, delta)) = neighbour(p, access, i, w) {
            LaneRead::Neighbour { of, delta }
        } else {
            LaneRead::Gathered
        }),
        _ => None,
    }
}

/// The wide read step and the offset along dimension 0 that mapped step `i` reads, where it
/// is a shift of at most `w` elements (wrapped, clamped or mirrored at the row's ends, which
/// only a warp's first and last lanes can reach) of the same rows as that step.
fn neighbour(p: &Program, access: &[Option<Access>], i: usize, w: usize) -> Option<(usize, i64)> {
    let st = &p.steps[i];
    let Instr::Mapped(d, m) = &st.instr else { return None };
    let n = st.dims[0];
    if m.src[0] != n || m.axes[1..].iter().any(|a| matches!(a, Axis::Zero(_))) {
        return None;
    }
    let delta = match m.axes[0] {
        Axis::Wrap(k) if k <= w as u64 => k as i64,
        Axis::Wrap(k) if n - k <= w as u64 => k as i64 - n as i64,
        Axis::Clamp(k) | Axis::Mirror(k) if k.unsigned_abs() <= w as u64 => k,
        _ => return None,
    };
    if delta == 0 {
        return None;
    }
    let strides = mapped::read_strides(d, st.dims, m);
    let of = p.steps.iter().enumerate().position(|(q, sq)| match &sq.instr {
        Instr::Input(dq) => {
            access[q] == Some(Access::Linear)
                && Arc::ptr_eq(&d.buf, &dq.buf)
                && d.offset == dq.offset
                && st.dims == p.dims
                && m.axes[1..].iter().all(|a| *a == Axis::Same)
                && (0..4).all(|k| st.dims[k] <= 1 || strides[k] == p.dims.strides()[k] as i64)
        }
        Instr::Mapped(dq, mq) => {
            mapped::reads_rows(sq.dims, mq)
                && Arc::ptr_eq(&d.buf, &dq.buf)
                && d.offset == dq.offset
                && sq.dims == st.dims
                && mq.src == m.src
                && mq.axes[1..] == m.axes[1..]
                && mapped::read_strides(dq, sq.dims, mq) == strides
        }
        _ => false,
    })?;
    Some((of, delta))
}

/// How each step of `p` is read in the blocked layout with `w` elements a lane, when `p` should
/// have that layout: it has a neighbour read along dimension 0 and reads nothing element by
/// element (a stencil, which that layout serves better than the interleaved one).
/// Other programs keep the interleaved layout, which serves them as well with wider loads for
/// narrow types.
pub(crate) fn blocked_reads(
    p: &Program,
    access: &[Option<Access>],
    w: usize,
) -> Option<Vec<Option<LaneRead>>> {
    let reads: Vec<_> = (0..p.steps.len()).map(|i| lane_read(p, access, i, w)).collect();
    let stencil = reads.iter().any(|r| matches!(r, Some(LaneRead::Neighbour { .. })))
        && !reads.contains(&Some(LaneRead::Gathered));
    layout_override().unwrap_or(stencil).then_some(reads)
}

/// The layout named by `EMBERFIRE_RUN_LAYOUT` (`blocked` or `interleaved`), if any.
fn layout_override() -> Option<bool> {
    static LAYOUT: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *LAYOUT.get_or_init(|| match std::env::var("EMBERFIRE_RUN_LAYOUT").ok()?.trim() {
        "blocked" => Some(true),
        "interleaved" => Some(false),
        _ => None,
    })
}

/// Appends to a structural key what the blocked layout compiles in: each read's [`LaneRead`].
pub(crate) fn push_key(plan: &Plan, k: &mut Vec<u8>) {
    for read in &plan.lane_reads {
        match *read {
            None => {}
            Some(LaneRead::Neighbour { of, delta }) => {
                k.push(2);
                k.extend((of as u32).to_le_bytes());
                k.extend((delta as i32).to_le_bytes());
            }
            Some(LaneRead::Wide) => k.push(1),
            Some(LaneRead::Uniform) => k.push(3),
            Some(LaneRead::Gathered) => k.push(4),
        }
    }
}

/// The loop of a kernel with coordinates and runs along dimension 0: each warp takes
/// `32 * plan.vector` consecutive elements at a time, in the plan's layout (see the module's
/// doc), so that every read and write of the warp is one contiguous piece as in a plain loop,
/// while each lane divides its index into coordinates once and computes the offsets along the
/// other dimensions once for its `plan.vector` elements (the generated code shadows `i` and
/// `c0` for each). The run divides the first extent, so runs never straddle a row and need no
/// tail; the launch gives each thread `plan.vector` elements. Such kernels are always narrow,
/// so indices are 32-bit.
///
/// Which warp takes which run: with one row, consecutive warps take consecutive runs. With
/// several rows (rows are the elements that share coordinates 1 to 3), the warps of a block
/// take the same run of consecutive rows, a tile of `blockDim.x / 32` rows, and blocks walk
/// the tiles along the rows first. A stencil's vertical neighbours (a `shift` along the
/// second dimension) are then rows that other warps of the same block read too, which can
/// come from the multiprocessor's L1 instead of L2: heat2d's step, whose five reads of the
/// field each went to L2 when consecutive warps took consecutive runs of one row, was bound
/// by L2 throughput (81%, DRAM 65%; 77% and 67% with tiles). Where the rows do not fill the
/// tiles well (fewer than eight tiles' worth that the tile height does not divide), the runs
/// are taken in order as with one row.
///
/// Measured and not kept (H100, 2026-11-28, whole cases, interleaved layout): compiling shifts
/// of one or two along dimension 0 in as constant offsets, read without wrapping away from a
/// row's ends (a Conway generation's loop from 53 instructions an element to 20, but the case
/// 4.6 ms against 4.7, and heat2d 12.8 ms against 11.1); and, with those, warps walking their
/// run down 2, 4, 8 or 16 rows in order (heat2d 11.5, 11.1, 11.7, 12.9 ms; Conway 5.1, 5.3,
/// 6.2, 8.6 ms). Nor (one call, both forms from one build) staging each block's tile of rows in
/// shared memory: each warp read its run once, the first and last warps the rows above and
/// below and lanes 0 and 31 the elements past the run's ends, and a warp whose neighbours all
/// lay in the tile read them from there (constant offsets, one barrier an iteration with two
/// copies of the tile). Conway 4.15 ms against 4.15 unstaged, heat2d 12.16 against 12.13; the
/// heat step's kernel stayed at 59 us (DRAM 60%, L2 69%). A first version that chose per
/// read between the tile and memory took Conway to 18.3 ms: the compiler computed both.
pub(crate) fn run_loop(s: &mut String, p: &Program, plan: &Plan) {
    let w = plan.vector;
    let span = RUN_LANES * w;
    s.push_str(
        "  const int lane_ = threadIdx.x % 32, wib_ = threadIdx.x / 32, wpb_ = blockDim.x / 32;\n",
    );
    let _ = writeln!(s, "  const int nruns_ = (int)n / {span};");
    if plan.rank == 1 {
        s.push_str("  const bool tiled_ = false; const int runs_ = 1, rows_ = 1; (void)runs_; (void)rows_;\n");
    } else {
        let _ = writeln!(s, "  const int runs_ = (int)d0 / {span}, rows_ = (int)n / (int)d0;");
        s.push_str("  const bool tiled_ = rows_ % wpb_ == 0 || rows_ >= 8 * wpb_;\n");
    }
    // tile (g_, r_) is rows g_ * wpb_ .. of run r_ (tiled), or runs g_ * wpb_ .. (not)
    s.push_str("  const int across_ = tiled_ ? runs_ : 1, high_ = tiled_ ? rows_ : nruns_;\n");
    s.push_str("  const int tiles_ = (high_ + wpb_ - 1) / wpb_ * across_;\n");
    s.push_str("  int g_ = blockIdx.x / across_, r_ = blockIdx.x % across_;\n");
    s.push_str("  const int gq_ = gridDim.x / across_, gr_ = gridDim.x % across_;\n");
    s.push_str("  for (int t_ = blockIdx.x; t_ < tiles_; t_ += gridDim.x) {\n");
    s.push_str("    const int h_ = g_ * wpb_ + wib_, run_ = h_ * across_ + r_;\n");
    s.push_str("    g_ += gq_; r_ += gr_; if (r_ >= across_) { r_ -= across_; g_ += 1; }\n");
    // whole warps skip together: the blocked layout's shuffles need every lane
    s.push_str("    if (h_ >= high_) continue;\n");
    let (first, next) =
        if plan.blocked { (format!("lane_ * {w}"), "j") } else { ("lane_".to_string(), "32 * j") };
    let _ = writeln!(s, "    const int ib = run_ * {span} + {first};");
    let _ = writeln!(s, "    {}", index::coords("ib", plan.narrow, plan.rank));
    s.push_str("    const int c0b_ = c0;\n");
    let reads: Vec<Option<LaneRead>> =
        if plan.blocked { plan.lane_reads.clone() } else { vec![None; p.steps.len()] };
    lane_rows(s, p, plan, &reads);
    for (o, &idx) in p.outputs.iter().enumerate().filter(|_| plan.blocked) {
        let _ = writeln!(s, "    {} w{o}[{w}];", storage_type(p.steps[idx].dtype));
    }
    let _ = writeln!(s, "#pragma unroll\n    for (int j = 0; j < {w}; j++) {{");
    let _ = writeln!(
        s,
        "      const int i = ib + {next}; const int c0 = c0b_ + {next}; (void)i; (void)c0;"
    );
    body(s, p, "      ", |i| match reads[i] {
        Some(LaneRead::Wide | LaneRead::Neighbour { .. }) => format!("r{i}[j]"),
        _ => element_read(p, plan, i),
    });
    for (o, &idx) in p.outputs.iter().enumerate() {
        let v = store_expr(p.steps[idx].dtype, &format!("v{idx}"));
        if plan.blocked {
            let _ = writeln!(s, "      w{o}[j] = {v};");
        } else {
            let _ = writeln!(s, "      out{o}[i] = {v};");
        }
    }
    s.push_str("    }\n");
    for o in (0..p.outputs.len()).filter(|_| plan.blocked) {
        let _ = writeln!(s, "    vstore(out{o} + ib, w{o});");
    }
    s.push_str("  }\n");
}

/// Declares and fills `r{i}[w]`, the lane's elements of each wide and neighbour read: wide
/// reads first (one load each), then each neighbour from its wide read's registers, the
/// adjacent lane's registers, or, for the warp's last (first) lane reaching past the run's
/// end (start), its own load of the element.
fn lane_rows(s: &mut String, p: &Program, plan: &Plan, reads: &[Option<LaneRead>]) {
    let w = plan.vector as i64;
    for (i, r) in reads.iter().enumerate() {
        if *r != Some(LaneRead::Wide) {
            continue;
        }
        let read = match p.steps[i].instr {
            Instr::Input(_) | Instr::Random(_) => {
                wide_read(p, i, &format!("r{i}"), w as usize, "ib")
            }
            _ => {
                let ty = storage_type(p.steps[i].dtype);
                format!("{ty} r{i}[{w}]; vload(r{i}, &{});", mapped::element(p, i, plan))
            }
        };
        let _ = writeln!(s, "    {read}");
    }
    for (i, r) in reads.iter().enumerate() {
        let Some(LaneRead::Neighbour { of, delta }) = *r else { continue };
        let ty = storage_type(p.steps[i].dtype);
        let _ = writeln!(s, "    {ty} r{i}[{w}];");
        for j in 0..w {
            let t = j + delta;
            if (0..w).contains(&t) {
                let _ = writeln!(s, "    r{i}[{j}] = r{of}[{t}];");
                continue;
            }
            let lanes = t.div_euclid(w);
            // the next lane's registers, or the previous lane's
            let (next, edge) = if lanes > 0 { (1, 31) } else { (0, 0) };
            let _ = writeln!(
                s,
                "    r{i}[{j}] = ef_shfl_adjacent<{next}>(r{of}[{}]); if (lane_ == {edge}) {{ const int c0 = c0b_ + {j}; r{i}[{j}] = {}; }}",
                t.rem_euclid(w),
                mapped::element(p, i, plan)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::codegen::{key, plan, source, ENTRY, PRELUDE};
    use crate::backend::Buffer;
    use crate::dim4::Dim4;
    use crate::dtype::DType;
    use crate::jit::index_map::IndexMap;
    use crate::jit::program::Step;
    use crate::jit::Data;
    use crate::storage::HostVec;

    /// A 256 x 8 field of `t`, written out with its reads `shifts` along (dimensions 0 and 1:
    /// element `c` reads `c + shift`, wrapped), the last one of a second buffer when `other`.
    fn field(t: DType, shifts: &[(i64, i64)], other: bool) -> Program {
        let d = Dim4::new(&[256, 8, 1, 1]);
        let data = || Data {
            buf: Arc::new(Buffer::host(HostVec::zeros(t, 2048))),
            offset: 0,
            strides: [1, 256, 2048, 2048],
        };
        let (a, b) = (data(), data());
        let mut steps = vec![Step { instr: Instr::Input(a.clone()), dtype: t, dims: d }];
        for (n, &(x, y)) in shifts.iter().enumerate() {
            let mut axes = [Axis::Same; 4];
            for (k, by) in [(0, x), (1, y)] {
                if by != 0 {
                    axes[k] = Axis::Wrap(by.rem_euclid(d[k] as i64) as u64);
                }
            }
            let src = if other && n + 1 == shifts.len() { b.clone() } else { a.clone() };
            steps.push(Step {
                instr: Instr::Mapped(src, IndexMap { src: d, axes }),
                dtype: t,
                dims: d,
            });
        }
        Program { outputs: (0..steps.len()).collect(), steps, dims: d }
    }

    fn reads(p: &Program, w: usize) -> Vec<Option<LaneRead>> {
        let access: Vec<Option<Access>> = p
            .steps
            .iter()
            .map(|s| matches!(s.instr, Instr::Input(_)).then_some(Access::Linear))
            .collect();
        (0..p.steps.len()).map(|i| lane_read(p, &access, i, w)).collect()
    }

    /// Neighbours along dimension 0 within a lane's width come from the wide read of the same
    /// rows (the input itself, or a shift along dimension 1); farther ones, and those of
    /// another buffer, are gathered.
    #[test]
    fn neighbours_are_read_from_the_rows_of_the_same_data() {
        let p = field(DType::F32, &[(1, 0), (-4, 0), (0, 1), (-1, 1), (5, 0), (1, 0)], true);
        let n = |of, delta| Some(LaneRead::Neighbour { of, delta });
        let want =
            [Some(LaneRead::Wide), n(0, 1), n(0, -4), Some(LaneRead::Wide), n(3, -1), None, None];
        let got = reads(&p, 4);
        assert_eq!(&got[..5], &want[..5]);
        assert_eq!(got[5], Some(LaneRead::Gathered), "five along is past the adjacent lane");
        assert_eq!(got[6], Some(LaneRead::Gathered), "another buffer has rows of its own");
    }

    /// Every element type: a field with its neighbours one and a lane's width along dimension
    /// 0, and along both dimensions, gets the blocked layout with shuffles; a gathered read
    /// keeps the interleaved one. With `EMBERFIRE_DUMP_KERNELS=dir` the sources are written
    /// for the offline compile check.
    #[test]
    fn every_type_reads_its_neighbours_through_shuffles() {
        let mut all = String::from(PRELUDE);
        for (n, t) in DType::ALL.into_iter().enumerate() {
            let w = (16 / t.size()).clamp(1, BLOCKED_MAX_VECTOR) as i64;
            let p = field(t, &[(1, 0), (-1, 0), (w, 0), (-w, 0), (0, -1), (1, -1)], false);
            let linear: Vec<bool> =
                p.steps.iter().map(|s| matches!(s.instr, Instr::Input(_))).collect();
            let blocked = plan(&p, &linear, |_| true);
            assert_eq!(blocked.blocked, w > 1, "{t:?}");
            let src = source(&p, &blocked);
            if w > 1 {
                assert!(
                    src.contains("ef_shfl_adjacent<1>(r") && src.contains("ef_shfl_adjacent<0>(r"),
                    "{src}"
                );
            }
            let unaligned = plan(&p, &linear, |_| false);
            assert!(!unaligned.blocked);
            if w > 1 {
                assert_ne!(key(&p, &blocked), key(&p, &unaligned), "{t:?}");
            }
            let gathered = field(t, &[(1, 0), (w + 1, 0)], false);
            assert!(!plan(&gathered, &linear[..3], |_| true).blocked);
            let body = src[PRELUDE.len()..].replace(ENTRY, &format!("b{n}"));
            all.push_str(&format!("namespace b{n} {{\n{body}}}\n"));
        }
        if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
            std::fs::write(format!("{dir}/blocked_kernels.cu"), all).unwrap();
        }
    }
}
