//! CUDA C code generation for fused element-wise programs.
//!
//! One kernel computes every output of a `Program` in a grid-stride loop. Sizes, strides,
//! pointers and scalar values are kernel parameters, so the source (and the compiled kernel)
//! depends only on the program's structure: its operations, element types, which inputs are read
//! linearly and which through strides, and the vector width. `plan` decides those, `key`
//! encodes them compactly for the in-memory cache, and `source` writes the kernel.
//!
//! The semantics of every operation mirror the CPU kernels (`backend/cpu/kernels.rs`): integer
//! arithmetic wraps (computed in unsigned types to avoid C++'s undefined signed overflow),
//! division by zero gives 0, float-to-integer casts saturate with NaN giving 0, f16 is computed
//! in f32 and rounded after every operation, bool arithmetic is computed on the stored bytes.
//!
//! - this file: the plan, the structural key, and the emitter that writes a kernel;
//! - `runs.rs`: the loop of kernels with coordinates, whose warps take runs along dimension 0
//!   (interleaved, or blocked for stencils);
//! - `types.rs`: the C types of element types, and loads and stores;
//! - `ops.rs`: the expression of every operation and cast;
//! - `random.rs`: random leaves, whose numbers are computed where they are read;
//! - `kernels/elementwise_prelude.cu`: the device functions every kernel starts with.

pub(crate) mod args;
pub(crate) mod index;
pub(crate) mod mapped;
mod ops;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod runs;
mod types;

use std::fmt::Write;

use crate::dtype::DType;
use crate::jit::{BinOp, Instr, Program};
pub(crate) use ops::cast_expr;
use ops::{binary_expr, ipow_fn, near_trig_expr, unary_expr};
use runs::{run_loop, BLOCKED_MAX_VECTOR, RUN_LANES};
pub(crate) use types::{c_type, load_expr, reg_type, storage_type, store_expr};

/// How an input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Element `i` of the output reads element `i` of the input (after its offset).
    Linear,
    /// Read through four strides (0 along broadcast dimensions).
    Strided,
}

/// The structural choices a kernel is compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// For each step that is an `Input`, how it is read (indexed by step).
    pub access: Vec<Option<Access>>,
    /// Elements per thread per iteration (1, 2, 4, 8 or 16): consecutive elements read and
    /// written with one wide access per linear input and output. With coordinates, a run
    /// along dimension 0 (which the width divides) that shares one coordinate computation.
    pub vector: usize,
    /// With coordinates: each lane takes `vector` consecutive elements of its warp's run (the
    /// blocked layout of `runs`) instead of every 32nd.
    pub blocked: bool,
    /// In the blocked layout, how each step is read by a lane (`runs::lane_read`; `None` for a
    /// step that reads nothing); empty otherwise. Classified once, in `plan`: the key and the
    /// source both follow it.
    pub lane_reads: Vec<Option<runs::LaneRead>>,
    /// True when some step needs the coordinates of the element (strided input, range, iota).
    pub coords: bool,
    /// True when the (single) output is written through four strides into an existing buffer
    /// (`run_into`) instead of densely into a new one.
    pub strided_out: bool,
    /// True when coordinates and offsets are computed in 32 bits (`index::fits_narrow`).
    pub narrow: bool,
    /// Leading dimensions of the program's shape that may exceed 1 (`index::rank`).
    pub rank: usize,
}

impl Plan {
    /// Writes the output through strides: needs coordinates, and one element per iteration.
    pub(crate) fn write_strided(&mut self) {
        self.strided_out = true;
        self.coords = true;
        self.vector = 1;
        self.blocked = false;
        self.lane_reads.clear();
    }
}

/// Decides how each input is read and the vector width, given each input's contiguity and
/// alignment (`linear[i]` for step i: true when it is laid out like the output, and
/// `aligned_for(width)` when every linear input, and every mapped leaf that reads whole rows
/// (`mapped::reads_rows`), is aligned for loads of `width` elements).
pub(crate) fn plan(p: &Program, linear: &[bool], aligned_for: impl Fn(usize) -> bool) -> Plan {
    let mut access = vec![None; p.steps.len()];
    let mut coords = false;
    for (i, s) in p.steps.iter().enumerate() {
        match s.instr {
            Instr::Input(_) | Instr::Random(_) => {
                let a = if linear[i] { Access::Linear } else { Access::Strided };
                coords |= a == Access::Strided;
                access[i] = Some(a);
            }
            Instr::Range(_) | Instr::Iota(_) | Instr::Mapped(..) => coords = true,
            _ => {}
        }
    }
    let widest = p
        .steps
        .iter()
        .enumerate()
        .filter(|(i, _)| access[*i].is_some() || p.outputs.contains(i))
        .map(|(_, s)| s.dtype.size())
        .max()
        .unwrap_or(4);
    let mut vector = (16 / widest).max(1);
    let narrow = coords && index::fits_narrow(p);
    let mut blocked = false;
    let mut lane_reads = Vec::new();
    if coords {
        // Runs of elements along dimension 0 per warp (see `run_loop`): they share the
        // division into coordinates and every offset along the other dimensions. Only where
        // whole runs tile dimension 0.
        while vector > 1 && !(narrow && p.dims[0].is_multiple_of((RUN_LANES * vector) as u64)) {
            vector /= 2;
        }
        let lane = vector.min(BLOCKED_MAX_VECTOR);
        if lane > 1 {
            if let Some(reads) = runs::blocked_reads(p, &access, lane).filter(|_| aligned_for(lane))
            {
                vector = lane;
                blocked = true;
                lane_reads = reads;
            }
        }
    } else if vector > 1 && !aligned_for(vector) {
        vector = 1;
    }
    let rank = index::rank(p.dims);
    Plan { access, vector, blocked, lane_reads, coords, strided_out: false, narrow, rank }
}

/// A compact encoding of everything the generated source depends on.
pub(crate) fn key(p: &Program, plan: &Plan) -> Vec<u8> {
    let mut k = Vec::with_capacity(p.steps.len() * 8 + 8);
    k.push(plan.vector as u8);
    k.push(plan.coords as u8);
    k.push(plan.strided_out as u8);
    k.push(plan.narrow as u8);
    k.push(plan.rank as u8);
    k.push(plan.blocked as u8);
    if plan.blocked {
        runs::push_key(plan, &mut k);
    }
    for (i, s) in p.steps.iter().enumerate() {
        k.push(s.dtype as u8);
        let operands = s.instr.operands();
        match &s.instr {
            // a strided read skips the terms of its broadcast dimensions
            Instr::Input(_) => k.extend([
                1,
                (plan.access[i] == Some(Access::Linear)) as u8,
                broadcast_mask(s.dims),
            ]),
            Instr::Scalar(_) => k.push(2),
            Instr::Range(d) => k.extend([3, *d, broadcast_mask(s.dims)]),
            Instr::Iota(_) => k.extend([4, broadcast_mask(s.dims)]),
            Instr::Unary(op, _) => k.extend([5, *op as u8]),
            Instr::Binary(op, _, _) => k.extend([6, *op as u8]),
            Instr::Cast(_) => k.push(7),
            Instr::Select(..) => k.push(8),
            Instr::Mapped(..) => mapped::push_key(p, i, &mut k),
            Instr::Random(d) => {
                k.extend([
                    10,
                    (plan.access[i] == Some(Access::Linear)) as u8,
                    broadcast_mask(s.dims),
                ]);
                k.extend(random::key(d));
            }
        }
        for o in operands {
            k.extend((o as u32).to_le_bytes());
        }
    }
    k.push(0xff);
    for &o in &p.outputs {
        k.extend((o as u32).to_le_bytes());
    }
    k
}

/// Bit k set when dimension k has size 1: range and iota read coordinate 0 along it, and that
/// choice is compiled into the source.
fn broadcast_mask(dims: crate::dim4::Dim4) -> u8 {
    (0..4).filter(|&k| dims[k] == 1).fold(0, |m, k| m | (1 << k))
}

/// The entry point's name in every generated kernel.
pub(crate) const ENTRY: &str = "ef_fused";

/// The device functions every generated kernel starts with: the single-precision sines and
/// cosines (shared with the random generators), then the prelude proper.
pub(crate) const PRELUDE: &str =
    concat!(include_str!("../kernels/trig.cu"), include_str!("../kernels/elementwise_prelude.cu"));

/// Writes the kernel's source. Parameter order (which `launch` follows): `n`; the output's d0,
/// d1, d2 when coordinates are needed, then in a narrow kernel the packed divisors
/// (`index::divisor_params`); then, step by step, each input's pointer (and its four
/// strides when strided), each scalar's value, each iota's four block sizes; then one pointer
/// per output; then, for a strided output, its four strides.
pub(crate) fn source(p: &Program, plan: &Plan) -> String {
    let mut s = helpers(p);
    let mut params: Vec<String> = vec!["const long long n".into()];
    if plan.coords {
        params.extend(
            ["const long long d0", "const long long d1", "const long long d2"].map(String::from),
        );
        if plan.narrow {
            params.extend(index::divisor_params(plan.rank));
        }
    }
    params.extend(step_params(p, plan));
    for (o, &idx) in p.outputs.iter().enumerate() {
        params.push(format!("{}* __restrict__ out{o}", storage_type(p.steps[idx].dtype)));
    }
    if plan.strided_out {
        params.extend((0..4).map(|k| format!("const long long os_{k}")));
    }
    let _ = writeln!(s, "extern \"C\" __global__ void {ENTRY}({}) {{", params.join(", "));

    let w = plan.vector;
    if w > 1 && plan.coords {
        run_loop(&mut s, p, plan);
        s.push_str("}\n");
        return s;
    }
    if w > 1 {
        // Vector loop: each thread handles `w` consecutive elements with one wide load/store per
        // array, then a scalar tail handles the last n % w elements.
        let _ = writeln!(s, "  const long long nv = n / {w};");
        let _ = writeln!(
            s,
            "  for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {{"
        );
        let _ = writeln!(s, "    const long long i0 = v * {w};");
        for (i, st) in p.steps.iter().enumerate() {
            if let Instr::Input(_) | Instr::Random(_) = st.instr {
                let _ = writeln!(s, "    {}", wide_read(p, i, &format!("r{i}"), w, "i0"));
            }
        }
        for (o, &idx) in p.outputs.iter().enumerate() {
            let _ = writeln!(s, "    {} w{o}[{w}];", storage_type(p.steps[idx].dtype));
        }
        let elements = |s: &mut String, near: bool, ind: &str| {
            let _ = writeln!(s, "#pragma unroll\n{ind}for (int j = 0; j < {w}; j++) {{");
            body_with(s, p, &format!("{ind}  "), |i| format!("r{i}[j]"), near);
            for (o, &idx) in p.outputs.iter().enumerate() {
                let v = store_expr(p.steps[idx].dtype, &format!("v{idx}"));
                let _ = writeln!(s, "{ind}  w{o}[j] = {v};");
            }
            let _ = writeln!(s, "{ind}}}");
        };
        if has_near_trig(p) {
            // sines and cosines without a branch in the loop; the rare vector with a far
            // argument is computed again with the accurate functions, from inputs made opaque
            // so that the compiler cannot keep the first pass's values for it
            let _ = writeln!(s, "    bool far = false;");
            elements(&mut s, true, "    ");
            let _ = writeln!(s, "    if (far) {{");
            for (i, st) in p.steps.iter().enumerate() {
                if let Instr::Input(_) | Instr::Random(_) = st.instr {
                    let _ = writeln!(s, "      ef_opaque(r{i});");
                }
            }
            elements(&mut s, false, "      ");
            let _ = writeln!(s, "    }}");
        } else {
            elements(&mut s, false, "    ");
        }
        for o in 0..p.outputs.len() {
            let _ = writeln!(s, "    vstore(out{o} + i0, w{o});");
        }
        let _ = writeln!(s, "  }}");
        let _ = writeln!(
            s,
            "  for (long long i = nv * {w} + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{"
        );
    } else {
        let _ = writeln!(
            s,
            "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{"
        );
    }
    if plan.coords {
        let _ = writeln!(s, "    {}", index::coords("i", plan.narrow, plan.rank));
    }
    body(&mut s, p, "    ", |i| element_read(p, plan, i));
    let out_at =
        if plan.strided_out { "c0 * os_0 + c1 * os_1 + c2 * os_2 + c3 * os_3" } else { "i" };
    for (o, &idx) in p.outputs.iter().enumerate() {
        let v = store_expr(p.steps[idx].dtype, &format!("v{idx}"));
        let _ = writeln!(s, "    out{o}[{out_at}] = {v};");
    }
    s.push_str("  }\n}\n");
    s
}

/// The shared device functions a program's kernel needs: the prelude, and integer powers for
/// each integer type the program raises to a power. Every kernel made from a program (the
/// element-wise one here, the reductions in `reduce.rs`) starts with this.
pub(crate) fn helpers(p: &Program) -> String {
    let mut s = String::with_capacity(4096);
    s.push_str(PRELUDE);
    s.push_str(&random::helpers(p));
    let mut pow_types: Vec<DType> = p
        .steps
        .iter()
        .filter(|st| matches!(st.instr, Instr::Binary(BinOp::Pow, ..)))
        .filter_map(|st| match st.instr {
            Instr::Binary(_, a, _) => Some(p.steps[a].dtype),
            _ => None,
        })
        .map(|t| if t == DType::B8 { DType::U8 } else { t })
        .filter(|t| t.is_integer())
        .collect();
    pow_types.sort_by_key(|t| *t as u8);
    pow_types.dedup();
    for t in pow_types {
        s.push_str(&ipow_fn(t));
    }
    s
}

/// The kernel parameters of a program's steps, in step order: each input's pointer (and its
/// four strides when strided), each scalar's value, each iota's four block sizes.
/// each mapped leaf's parameters (`mapped::params`). `args::push_step_args` passes the
/// matching values.
pub(crate) fn step_params(p: &Program, plan: &Plan) -> Vec<String> {
    let mut params = Vec::new();
    for (i, st) in p.steps.iter().enumerate() {
        let ty = storage_type(st.dtype);
        match &st.instr {
            Instr::Input(_) | Instr::Random(_) => {
                if let Instr::Random(_) = st.instr {
                    params.extend(random::params(i));
                } else {
                    params.push(format!("const {ty}* __restrict__ in{i}"));
                }
                if plan.access[i] == Some(Access::Strided) {
                    for k in 0..4 {
                        params.push(format!("const long long s{i}_{k}"));
                    }
                }
            }
            Instr::Scalar(_) => params.push(format!("const {ty} k{i}")),
            Instr::Mapped(_, m) => params.extend(mapped::params(i, st.dtype, m)),
            Instr::Iota(_) => {
                for k in 0..4 {
                    params.push(format!("const long long b{i}_{k}"));
                }
            }
            _ => {}
        }
    }
    params
}

/// The stored element of input step `i` at the element with linear index `i` and coordinates
/// `c0..c3` (variables of the generated code), for a kernel that reads one element at a time.
pub(crate) fn element_read(p: &Program, plan: &Plan, i: usize) -> String {
    let st = &p.steps[i];
    if let Instr::Mapped(..) = &st.instr {
        return mapped::element(p, i, plan);
    }
    let at = if plan.access[i] == Some(Access::Strided) {
        // only the dimensions the read moves along: below the rank, not broadcast
        let terms: Vec<String> = (0..plan.rank)
            .filter(|&k| st.dims[k] != 1)
            .map(|k| format!("c{k} * ({})s{i}_{k}", index::ix(plan.narrow)))
            .collect();
        if terms.is_empty() {
            "0".to_string()
        } else {
            terms.join(" + ")
        }
    } else {
        "i".to_string()
    };
    linear_read(p, i, &at)
}

/// The stored element of input or random step `i` at index `at` (a C expression) of its
/// buffer or request.
pub(crate) fn linear_read(p: &Program, i: usize, at: &str) -> String {
    match p.steps[i].instr {
        Instr::Random(_) => random::element(p, i, at),
        _ => format!("in{i}[{at}]"),
    }
}

/// Declares `reg[w]` holding the `w` elements of input or random step `k` from index `at` (a
/// C expression, a multiple of `w`): one wide load, or the random leaf's numbers.
pub(crate) fn wide_read(p: &Program, k: usize, reg: &str, w: usize, at: &str) -> String {
    match p.steps[k].instr {
        Instr::Random(_) => random::fill(p, k, reg, w, at),
        _ => format!("{} {reg}[{w}]; vload({reg}, in{k} + {at});", storage_type(p.steps[k].dtype)),
    }
}

/// Declares `reg[w]` holding the first `lim` (a C expression, 1 to `w`) of the `w` elements of
/// input or random step `k` from index `at` (a multiple of `w`): a wide load when all `w` are
/// there, else one load an element, those past `lim` repeating the first (read, never used). A
/// random leaf computes its numbers whatever `lim`.
pub(crate) fn partial_read(
    p: &Program,
    k: usize,
    reg: &str,
    w: usize,
    at: &str,
    lim: &str,
) -> String {
    match p.steps[k].instr {
        Instr::Random(_) => wide_read(p, k, reg, w, at),
        _ => format!(
            "{} {reg}[{w}];\n        if ({lim} == {w}) vload({reg}, in{k} + {at});\n        else {{\n#pragma unroll\n          for (int e = 0; e < {w}; e++) {reg}[e] = in{k}[{at} + (e < {lim} ? e : 0)];\n        }}",
            storage_type(p.steps[k].dtype)
        ),
    }
}

/// Writes the computation of every step for one element; `raw(i)` is the stored element of
/// input step `i`.
pub(crate) fn body(s: &mut String, p: &Program, ind: &str, raw: impl Fn(usize) -> String) {
    body_with(s, p, ind, raw, false)
}

/// Whether some step of `p` is a sine or cosine that `body_with(.., near = true)` computes on
/// the prelude's branch-free path.
fn has_near_trig(p: &Program) -> bool {
    p.steps.iter().any(|st| match st.instr {
        Instr::Unary(op, a) => near_trig_expr(op, "x", p.steps[a].dtype).is_some(),
        _ => false,
    })
}

/// `body`, with `near`: single-precision sines and cosines on the branch-free path that sets
/// the generated code's `far` flag (`ops::near_trig_expr`) instead of the accurate functions.
fn body_with(s: &mut String, p: &Program, ind: &str, raw: impl Fn(usize) -> String, near: bool) {
    for (i, st) in p.steps.iter().enumerate() {
        let t = st.dtype;
        let rt = reg_type(t);
        let e = match &st.instr {
            Instr::Input(_) | Instr::Mapped(..) | Instr::Random(_) => load_expr(t, &raw(i)),
            Instr::Scalar(_) => load_expr(t, &format!("k{i}")),
            Instr::Range(d) => {
                let c = if st.dims[*d as usize] == 1 { "0".to_string() } else { format!("c{d}") };
                cast_expr(&format!("(unsigned long long){c}"), DType::U64, t)
            }
            Instr::Iota(_) => {
                let c = |k: usize| {
                    if st.dims[k] == 1 {
                        "0".to_string()
                    } else {
                        format!("c{k}")
                    }
                };
                let e = format!(
                    "(unsigned long long)({} % b{i}_0 + b{i}_0 * ({} % b{i}_1 + b{i}_1 * ({} % b{i}_2 + b{i}_2 * ({} % b{i}_3))))",
                    c(0),
                    c(1),
                    c(2),
                    c(3)
                );
                cast_expr(&e, DType::U64, t)
            }
            Instr::Unary(op, a) => {
                let (v, t) = (format!("v{a}"), p.steps[*a].dtype);
                near.then(|| near_trig_expr(*op, &v, t))
                    .flatten()
                    .unwrap_or_else(|| unary_expr(*op, &v, t))
            }
            Instr::Binary(op, a, b) => {
                binary_expr(*op, &format!("v{a}"), &format!("v{b}"), p.steps[*a].dtype)
            }
            Instr::Cast(a) => cast_expr(&format!("v{a}"), p.steps[*a].dtype, t),
            Instr::Select(c, a, b) => format!("(v{c} ? v{a} : v{b})"),
        };
        let _ = writeln!(s, "{ind}const {rt} v{i} = {e};");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Buffer;
    use crate::dim4::Dim4;
    use crate::jit::program::Step;
    use crate::jit::Data;
    use crate::jit::UnOp;
    use crate::storage::HostVec;
    use std::sync::Arc;

    fn input(t: DType, dims: Dim4) -> Step {
        let buf = Arc::new(Buffer::host(HostVec::zeros(t, dims.elements() as usize)));
        Step { instr: Instr::Input(Data { buf, offset: 0, strides: [1, 1, 1, 1] }), dtype: t, dims }
    }

    fn program(steps: Vec<Step>, dims: Dim4) -> Program {
        let last = steps.len() - 1;
        Program { steps, outputs: vec![last], dims }
    }

    /// Every operation on every type it accepts, each cast between types, broadcasting and
    /// vector widths: the sources that `EMBERFIRE_DUMP_KERNELS=dir` writes for an offline
    /// compile check. Without the variable it checks that generation does not panic.
    #[test]
    fn generates_every_operation() {
        // 64 rows: the programs with coordinates (range, iota) get runs along dimension 0
        let d = Dim4::new(&[64, 3, 1, 1]);
        let mut kernels = Vec::new();
        for t in DType::ALL {
            for op in UNARY {
                if op.supports(t) {
                    let steps = vec![input(t, d), step(Instr::Unary(op, 0), op.out_type(t), d)];
                    kernels.push(program(steps, d));
                }
            }
            for op in BINARY {
                if op.supports(t) {
                    let steps = vec![
                        input(t, d),
                        input(t, Dim4::new(&[64, 1, 1, 1])),
                        step(Instr::Binary(op, 0, 1), op.out_type(t), d),
                    ];
                    kernels.push(program(steps, d));
                }
            }
            for u in DType::ALL {
                let steps = vec![input(t, d), step(Instr::Cast(0), u, d)];
                kernels.push(program(steps, d));
            }
            let steps = vec![
                step(Instr::Range(1), t, d),
                step(Instr::Iota([64, 1, 1, 1]), t, d),
                input(DType::B8, d),
                step(Instr::Select(2, 0, 1), t, d),
            ];
            kernels.push(program(steps, d));
        }
        let dump = std::env::var("EMBERFIRE_DUMP_KERNELS").ok();
        let mut all = String::from(PRELUDE);
        for (n, p) in kernels.iter().enumerate() {
            let linear: Vec<bool> = p.steps.iter().map(|s| s.dims == p.dims).collect();
            for aligned in [false, true] {
                let plan = plan(p, &linear, |_| aligned);
                let src = source(p, &plan);
                assert!(src.starts_with(PRELUDE));
                let body = src[PRELUDE.len()..].replace(ENTRY, &format!("k{n}_{aligned}"));
                all.push_str(&format!("namespace n{n}_{aligned} {{\n{body}}}\n"));
            }
        }
        if let Some(dir) = dump {
            std::fs::write(format!("{dir}/all_kernels.cu"), all).unwrap();
        }
    }

    /// Kernels writing through a strided output (`run_into`): a copy of every type, a scalar
    /// broadcast, and a fused expression of strided inputs; dumped like the others.
    #[test]
    fn generates_strided_outputs() {
        let d = Dim4::new(&[8, 3, 2, 1]);
        let mut kernels = Vec::new();
        for t in DType::ALL {
            kernels.push(program(vec![input(t, d)], d));
            kernels.push(program(vec![step(Instr::Scalar(HostVec::zeros(t, 1)), t, d)], d));
        }
        kernels.push(program(
            vec![
                input(DType::F32, d),
                input(DType::F32, Dim4::new(&[8, 1, 1, 1])),
                step(Instr::Binary(BinOp::Mul, 0, 1), DType::F32, d),
                step(Instr::Unary(UnOp::Sin, 2), DType::F32, d),
            ],
            d,
        ));
        let mut all = String::from(PRELUDE);
        for (n, p) in kernels.iter().enumerate() {
            let linear: Vec<bool> = p.steps.iter().map(|s| s.dims == p.dims).collect();
            let mut plan = plan(p, &linear, |_| true);
            plan.write_strided();
            assert!(plan.coords && plan.vector == 1);
            let dense = key(p, &super::plan(p, &linear, |_| true));
            assert_ne!(key(p, &plan), dense, "the strided form must have its own kernel");
            let src = source(p, &plan);
            assert!(src.contains("os_3") && src.contains("c0 * os_0"));
            let body = src[PRELUDE.len()..].replace(ENTRY, &format!("s{n}"));
            all.push_str(&format!("namespace s{n} {{\n{body}}}\n"));
        }
        if let Ok(dir) = std::env::var("EMBERFIRE_DUMP_KERNELS") {
            std::fs::write(format!("{dir}/strided_out_kernels.cu"), all).unwrap();
        }
    }

    fn step(instr: Instr, dtype: DType, dims: Dim4) -> Step {
        Step { instr, dtype, dims }
    }

    const UNARY: [UnOp; 44] = {
        use UnOp::*;
        [
            Neg, Not, BitNot, Abs, Arg, Sign, Round, Trunc, Floor, Ceil, Sigmoid, Expm1, Erf, Erfc,
            Log10, Log1p, Log2, Cbrt, Tgamma, Lgamma, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh,
            Tanh, Asinh, Acosh, Atanh, Exp, Log, Sqrt, Rsqrt, Real, Imag, Conjg, Pow2, Factorial,
            IsZero, IsInf, IsNan,
        ]
    };
    const BINARY: [BinOp; 26] = {
        use BinOp::*;
        [
            Add, Sub, Mul, Div, Rem, Mod, Pow, Root, Atan2, Hypot, Min, Max, Cplx2, BitAnd, BitOr,
            BitXor, Shl, Shr, Lt, Gt, Le, Ge, Eq, Neq, And, Or,
        ]
    };
}
