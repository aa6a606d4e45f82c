//! CUDA C for reductions fused with their element-wise producer.
//!
//! A reduction kernel computes the producer (a `Program` with one output, emitted by
//! `codegen::body` exactly as the element-wise kernel computes it) element by element and folds
//! each value into accumulators in registers: `sum(&(&x * &y), 0)` reads `x` and `y` once and
//! never writes `x * y`.
//!
//! The producer's elements are seen as `outer` slabs of `r` rows of `inner` contiguous
//! elements; output `(i, o)` folds the `r` elements `i + inner * (j + r * o)`. Reducing along
//! dimension 0, or over everything, has `inner == 1` ("row" mode: the folded elements are
//! contiguous); along dimensions 1 to 3 `inner > 1` ("column" mode: neighbouring outputs are
//! contiguous, the folded elements are `inner` apart).
//!
//! One kernel shape serves both. A block has `tx * ty * tz` threads (256 at most):
//! - `tz` independent groups, each producing `tx * w` (column mode) or one (row mode) outputs;
//! - in column mode the `tx` threads of a group cover `tx * w` consecutive outputs, each thread
//!   `w` of them with one wide load per row, so a warp reads whole cache lines;
//! - the `ty` threads of a group split the rows `j` between them (consecutive `w`-element
//!   pieces of a row in row mode, so that again a warp reads consecutive memory), and combine
//!   their accumulators at the end with warp shuffles, or through shared memory when the group
//!   spans several warps;
//! - when there are too few outputs to fill the device ("split"), the rows of each output are
//!   also divided between `gridDim.y` blocks. Each block writes its partial results, and the
//!   last block of a group to finish (counted with an integer atomic on a ticket that it resets
//!   afterwards) combines the partials in a fixed order and writes the outputs: one launch, no
//!   floating-point atomics, and the same bits on every run.
//!
//! Which thread folds which element depends only on the shape and on the device's
//! multiprocessor count (through the number of splits), never on timing, so results are
//! reproducible on a given device.
//!
//! Accumulation (see `ops/reduce.rs` for the documented semantics): sums and products of f16,
//! bf16, f32 and f64 accumulate in f64, complex ones in c64, integer ones wrap in 64 bits and are
//! truncated to the output type once; min and max keep the element's own precision (f16 and bf16 in
//! f32, c32 compared in f64). f64 accumulation costs one conversion and one f64 add per
//! element: on the H100 and H200 (64 f64 adds and 16 conversions per clock per
//! multiprocessor) that is well under what streaming 4 bytes per element from memory leaves
//! idle, so the kernels stay bound by memory bandwidth and match the CPU's accuracy. On parts
//! with slow f64 arithmetic (consumer GPUs) this choice costs throughput.

use std::fmt::Write;

use super::Plan;
use crate::backend::cuda::codegen;
use crate::backend::reduce::{IndexOp, Reduction};
use crate::dtype::DType;
use crate::jit::{Instr, Program};

/// Blocks per multiprocessor a grid is sized for. The kernels are compiled to fit at least this
/// many (`__launch_bounds__`), 1024 threads per multiprocessor, which keeps enough loads in
/// flight to saturate memory. It is a constant rather than the compiled kernel's occupancy so
/// that how the work is split, and hence the rounding of the result, depends only on the shape
/// and the device: a fused producer and its evaluated form reduce to the same bits.
pub(crate) const BLOCKS_PER_SM: u32 = 4;

/// The entry point's name in every generated reduction kernel.
pub(crate) const ENTRY: &str = "ef_reduce";

/// What a kernel folds. The NaN replacement value of `SumNan`/`ProductNan` is a kernel
/// argument, not part of the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Fold {
    Sum,
    Product,
    Min,
    Max,
    All,
    Any,
    Count,
    SumNan,
    ProductNan,
    IndexMin,
    IndexMax,
}

impl Fold {
    /// The fold of `op` and its NaN replacement value (0 where there is none).
    pub(crate) fn of(op: Reduction) -> (Fold, f64) {
        match op {
            Reduction::Sum => (Fold::Sum, 0.0),
            Reduction::Product => (Fold::Product, 0.0),
            Reduction::Min => (Fold::Min, 0.0),
            Reduction::Max => (Fold::Max, 0.0),
            Reduction::AllTrue => (Fold::All, 0.0),
            Reduction::AnyTrue => (Fold::Any, 0.0),
            Reduction::Count => (Fold::Count, 0.0),
            Reduction::SumNan(v) => (Fold::SumNan, v),
            Reduction::ProductNan(v) => (Fold::ProductNan, v),
        }
    }

    /// The fold of an index reduction.
    pub(crate) fn of_index(op: IndexOp) -> Fold {
        match op {
            IndexOp::Min => Fold::IndexMin,
            IndexOp::Max => Fold::IndexMax,
        }
    }

    /// Whether the kernel also writes positions (`imin`, `imax`).
    pub(crate) fn has_index(self) -> bool {
        matches!(self, Fold::IndexMin | Fold::IndexMax)
    }
}

/// The structural choices a reduction kernel is compiled for (sizes are arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// True when the folded elements are contiguous (`inner == 1`).
    pub rows: bool,
    /// Threads of a group across outputs (1 in row mode).
    pub tx: u32,
    /// Threads of a group along the reduced dimension.
    pub ty: u32,
    /// Groups per block.
    pub tz: u32,
    /// Elements per wide load: along the reduced dimension in row mode, across outputs in
    /// column mode. 1 when some input is read through strides or a step needs coordinates.
    pub vector: u32,
    /// Loads issued back to back before they are used (1, 2 or 4).
    pub unroll: u32,
    /// The rows are divided between blocks, with partials and a last-block combine.
    pub split: bool,
}

impl Layout {
    /// Threads per block.
    pub(crate) fn threads(&self) -> u32 {
        self.tx * self.ty * self.tz
    }

    /// Outputs one thread accumulates (column mode: its `vector` columns).
    fn outputs_per_thread(&self) -> u32 {
        if self.rows {
            1
        } else {
            self.vector
        }
    }
}

/// A compact encoding of everything the source depends on. It starts with `b'R'`, which no
/// element-wise key starts with.
pub(crate) fn key(
    p: &Program,
    plan: &Plan,
    fold: Fold,
    out: DType,
    l: &Layout,
    axis: Option<usize>,
) -> Vec<u8> {
    let mut k = vec![b'R', fold as u8, out as u8, l.rows as u8, l.split as u8, l.unroll as u8];
    k.push(axis.map_or(0xff, |a| a as u8));
    k.extend([l.tx, l.ty, l.tz, l.vector].iter().flat_map(|v| (*v as u16).to_le_bytes()));
    k.extend(codegen::key(p, plan));
    k
}

/// The C type, size in bytes and class of an accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AccTy {
    Float,
    Double,
    Cd,
    Int,
    UInt,
    LongLong,
    ULongLong,
}

impl AccTy {
    fn c(self) -> &'static str {
        match self {
            AccTy::Float => "float",
            AccTy::Double => "double",
            AccTy::Cd => "cd",
            AccTy::Int => "int",
            AccTy::UInt => "unsigned int",
            AccTy::LongLong => "long long",
            AccTy::ULongLong => "unsigned long long",
        }
    }

    fn size(self) -> usize {
        match self {
            AccTy::Float | AccTy::Int | AccTy::UInt => 4,
            AccTy::Double | AccTy::LongLong | AccTy::ULongLong => 8,
            AccTy::Cd => 16,
        }
    }
}

/// The accumulator type of `fold` over elements of type `t` (for index folds, the type of the
/// value part).
fn acc_ty(fold: Fold, t: DType) -> AccTy {
    use Fold::*;
    match fold {
        Sum | Product | SumNan | ProductNan => {
            if t.is_complex() {
                AccTy::Cd
            } else if t.is_real_float() {
                AccTy::Double
            } else {
                AccTy::ULongLong
            }
        }
        All | Any => AccTy::Int,
        Count => AccTy::ULongLong,
        Min | Max | IndexMin | IndexMax => match t {
            DType::F16 | DType::BF16 | DType::F32 => AccTy::Float,
            DType::F64 => AccTy::Double,
            DType::C32 | DType::C64 => AccTy::Cd,
            DType::U32 => AccTy::UInt,
            DType::S64 => AccTy::LongLong,
            DType::U64 => AccTy::ULongLong,
            _ => AccTy::Int,
        },
    }
}

/// Bytes of one partial result of `fold` over elements of type `t` (the C `acc_t`).
pub(crate) fn acc_size(fold: Fold, t: DType) -> usize {
    let v = acc_ty(fold, t).size();
    if fold.has_index() {
        // struct { V v; unsigned long long j; }, aligned to 8
        v.div_ceil(8) * 8 + 8
    } else {
        v
    }
}

/// A quiet NaN of an accumulator type.
fn nan_of(a: AccTy) -> &'static str {
    match a {
        AccTy::Float => "__int_as_float(0x7fc00000)",
        AccTy::Double => "__longlong_as_double(0x7ff8000000000000LL)",
        _ => "mk(__longlong_as_double(0x7ff8000000000000LL), __longlong_as_double(0x7ff8000000000000LL), (cd*)0)",
    }
}

/// The start of a minimum (`least == false`: the type's largest value) or maximum over `t`.
fn extreme_id(t: DType, a: AccTy, for_min: bool) -> String {
    if t.is_floating() {
        return nan_of(a).to_string();
    }
    let (lo, hi) = match t {
        DType::B8 => ("0", "255"),
        DType::U8 => ("0", "255"),
        DType::S16 => ("-32768", "32767"),
        DType::U16 => ("0", "65535"),
        DType::S32 => ("(-2147483647 - 1)", "2147483647"),
        DType::U32 => ("0u", "4294967295u"),
        DType::S64 => ("(-9223372036854775807LL - 1)", "9223372036854775807LL"),
        _ => ("0ull", "18446744073709551615ull"),
    };
    if for_min { hi } else { lo }.to_string()
}

/// C expressions over a computed element `x` of type `t`.
fn nonzero(t: DType) -> &'static str {
    if t.is_complex() {
        "(x.re != 0 || x.im != 0)"
    } else {
        "(x != 0)"
    }
}

fn is_nan_expr(t: DType, v: &str) -> String {
    if t.is_complex() {
        format!("(ef_isnan({v}.re) || ef_isnan({v}.im))")
    } else if t.is_real_float() {
        format!("({v} != {v})")
    } else {
        "false".into()
    }
}

/// `x` widened to the accumulator of a sum or product.
fn widen(t: DType) -> &'static str {
    match t {
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => "(double)x",
        DType::C32 => "c2d(x)",
        DType::C64 => "x",
        DType::S16 | DType::S32 | DType::S64 => "(unsigned long long)(long long)x",
        _ => "(unsigned long long)x",
    }
}

/// The device functions of the accumulator: `acc_t`, `ef_id`, `ef_lift` (an element to an
/// accumulator), `ef_merge` (earlier, later), `ef_shfl` (a warp shuffle down) and `ef_ldcg` (a
/// load that bypasses L1, for partials written by other blocks).
fn acc_functions(fold: Fold, t: DType) -> String {
    use Fold::*;
    let a = acc_ty(fold, t);
    let at = a.c();
    let mut s = String::new();
    let shfl_scalar = |v: &str| format!("__shfl_down_sync(0xffffffffu, {v}, d)");
    let shfl_value = |v: &str| match a {
        AccTy::Cd => format!(
            "mk({}, {}, (cd*)0)",
            shfl_scalar(&format!("{v}.re")),
            shfl_scalar(&format!("{v}.im"))
        ),
        _ => shfl_scalar(v),
    };
    let ldcg_cd = |p: &str| format!("mk(__ldcg(&{p}re), __ldcg(&{p}im), (cd*)0)");
    if fold.has_index() {
        let for_min = fold == IndexMin;
        let v = match t {
            DType::C32 => "c2d(x)".to_string(),
            _ if a == AccTy::Cd => "x".to_string(),
            _ => format!("({at})x"),
        };
        let less = |p: &str, q: &str| match (a, for_min) {
            (AccTy::Cd, true) => format!("(cnorm2({p}) < cnorm2({q}))"),
            (AccTy::Cd, false) => format!("(cnorm2({p}) > cnorm2({q}))"),
            (_, true) => format!("({p} < {q})"),
            (_, false) => format!("({p} > {q})"),
        };
        let nan_a = is_nan_expr(if a == AccTy::Cd { DType::C64 } else { t }, "a.v");
        let nan_b = is_nan_expr(if a == AccTy::Cd { DType::C64 } else { t }, "b.v");
        let _ = writeln!(s, "struct acc_t {{ {at} v; unsigned long long j; }};");
        let _ = writeln!(
            s,
            "__device__ __forceinline__ acc_t ef_id() {{ acc_t a; a.v = {}; a.j = 0xffffffffffffffffull; return a; }}",
            extreme_id(t, a, for_min)
        );
        let _ = writeln!(
            s,
            "__device__ __forceinline__ acc_t ef_lift(const {} x, const unsigned long long j, const double) {{ acc_t a; a.v = {v}; a.j = j; return a; }}",
            codegen::reg_type(t)
        );
        // NaN loses to any number; two NaN or two equal values: the smaller position wins
        let _ = writeln!(
            s,
            "__device__ __forceinline__ acc_t ef_merge(const acc_t a, const acc_t b) {{\n  const bool an = {nan_a}, bn = {nan_b};\n  bool take;\n  if (bn) take = an && b.j < a.j;\n  else if (an) take = true;\n  else take = {} || (!{} && b.j < a.j);\n  return take ? b : a;\n}}",
            less("b.v", "a.v"),
            less("a.v", "b.v")
        );
        let _ = writeln!(
            s,
            "__device__ __forceinline__ acc_t ef_shfl(const acc_t a, const int d) {{ acc_t r; r.v = {}; r.j = {}; return r; }}",
            shfl_value("a.v"),
            shfl_scalar("a.j")
        );
        let vload = match a {
            AccTy::Cd => ldcg_cd("p->v."),
            _ => "__ldcg(&p->v)".to_string(),
        };
        let _ = writeln!(
            s,
            "__device__ __forceinline__ acc_t ef_ldcg(const acc_t* p) {{ acc_t r; r.v = {vload}; r.j = __ldcg(&p->j); return r; }}"
        );
        return s;
    }
    let nz = nonzero(t);
    let (id, lift, merge) = match fold {
        Sum | SumNan | Product | ProductNan => {
            let product = matches!(fold, Product | ProductNan);
            let id = match (a, product) {
                (AccTy::Cd, false) => "mk(0.0, 0.0, (cd*)0)",
                (AccTy::Cd, true) => "mk(1.0, 0.0, (cd*)0)",
                (AccTy::Double, false) => "0.0",
                (AccTy::Double, true) => "1.0",
                (_, false) => "0ull",
                (_, true) => "1ull",
            };
            let w = widen(t);
            let lift = if matches!(fold, SumNan | ProductNan) && t.is_floating() {
                let nanv = if a == AccTy::Cd { "mk(nv, 0.0, (cd*)0)" } else { "nv" };
                format!("{} ? {nanv} : {w}", is_nan_expr(t, "x"))
            } else {
                w.to_string()
            };
            let merge = match (a, product) {
                (AccTy::Cd, false) => "cadd(a, b)",
                (AccTy::Cd, true) => "cmul(a, b)",
                (_, false) => "a + b",
                (_, true) => "a * b",
            };
            (id.to_string(), lift, merge.to_string())
        }
        Min | Max => {
            let for_min = fold == Min;
            let lift = match t {
                DType::C32 => "c2d(x)".to_string(),
                _ if a == AccTy::Cd => "x".to_string(),
                _ => format!("({at})x"),
            };
            let merge = match a {
                AccTy::Float => if for_min { "fminf(a, b)" } else { "fmaxf(a, b)" }.to_string(),
                AccTy::Double => if for_min { "fmin(a, b)" } else { "fmax(a, b)" }.to_string(),
                AccTy::Cd => {
                    let cmp = if for_min { "<" } else { ">" };
                    format!(
                        "(ef_isnan(a.re) || ef_isnan(a.im) || (!(ef_isnan(b.re) || ef_isnan(b.im)) && cnorm2(b) {cmp} cnorm2(a))) ? b : a"
                    )
                }
                _ => if for_min { "b < a ? b : a" } else { "b > a ? b : a" }.to_string(),
            };
            (extreme_id(t, a, for_min), lift, merge)
        }
        All => ("1".into(), format!("(int){nz}"), "a & b".into()),
        Any => ("0".into(), format!("(int){nz}"), "a | b".into()),
        Count => ("0ull".into(), format!("{nz} ? 1ull : 0ull"), "a + b".into()),
        IndexMin | IndexMax => unreachable!(),
    };
    let _ = writeln!(s, "typedef {at} acc_t;");
    let _ = writeln!(s, "__device__ __forceinline__ acc_t ef_id() {{ return {id}; }}");
    let _ = writeln!(
        s,
        "__device__ __forceinline__ acc_t ef_lift(const {} x, const unsigned long long, const double nv) {{ (void)nv; return {lift}; }}",
        codegen::reg_type(t)
    );
    let _ = writeln!(
        s,
        "__device__ __forceinline__ acc_t ef_merge(const acc_t a, const acc_t b) {{ return {merge}; }}"
    );
    let _ = writeln!(
        s,
        "__device__ __forceinline__ acc_t ef_shfl(const acc_t a, const int d) {{ return {}; }}",
        shfl_value("a")
    );
    let ld = match a {
        AccTy::Cd => ldcg_cd("p->"),
        _ => "__ldcg(p)".to_string(),
    };
    let _ =
        writeln!(s, "__device__ __forceinline__ acc_t ef_ldcg(const acc_t* p) {{ return {ld}; }}");
    s
}

/// The stored form, in the output type `out`, of an accumulator value `v` of type `a`.
fn store_value(a: AccTy, out: DType, v: &str) -> String {
    match (a, out) {
        (AccTy::Double, DType::F32) => format!("(float){v}"),
        (AccTy::Double, DType::F16) => format!("d2h({v})"),
        (AccTy::Float, DType::F16) => format!("f2h({v})"),
        (AccTy::Double, DType::BF16) => format!("d2b({v})"),
        (AccTy::Float, DType::BF16) => format!("f2b({v})"),
        (AccTy::Float, DType::F64) => format!("(double){v}"),
        (AccTy::Double | AccTy::Float, DType::F32 | DType::F64) => v.to_string(),
        (AccTy::Cd, DType::C32) => format!("d2c({v})"),
        (AccTy::Cd, DType::C64) => v.to_string(),
        (_, DType::B8) => format!("(unsigned char)({v} != 0)"),
        (_, t) if t.is_integer() => {
            // wrap to the width of the output, as if computed in it
            let st = codegen::storage_type(t);
            let unsigned = match t.size() {
                1 => "unsigned char",
                2 => "unsigned short",
                4 => "unsigned int",
                _ => "unsigned long long",
            };
            format!("({st})({unsigned}){v}")
        }
        _ => unreachable!("internal error: reduction from {a:?} to {out:?}"),
    }
}

/// One reduction of a kernel: its fold, its output type and the program step whose values it
/// folds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    pub fold: Fold,
    pub out: DType,
    pub step: usize,
}

/// The names that each reduction of a kernel has of its own: its accumulator type and array,
/// its device functions, its output, partials, NaN value and shared tile.
const MEMBER_NAMES: [&str; 11] = [
    "acc", "acc_t", "ef_id", "ef_lift", "ef_merge", "ef_shfl", "ef_ldcg", "out", "part", "nv", "sh",
];

/// `text` (CUDA C written for a kernel of one reduction) with `sfx` appended to every
/// identifier of [`MEMBER_NAMES`], so that the text of several reductions can stand side by
/// side in one kernel. Numbers and other identifiers are left as they are.
fn rename(text: &str, sfx: &str) -> String {
    if sfx.is_empty() {
        return text.to_string();
    }
    let mut r = String::with_capacity(text.len() + text.len() / 8);
    let mut word = String::new();
    let mut in_number = false;
    let flush = |r: &mut String, word: &mut String| {
        r.push_str(word);
        if MEMBER_NAMES.contains(&word.as_str()) {
            r.push_str(sfx);
        }
        word.clear();
    };
    for c in text.chars() {
        let ident = c.is_ascii_alphanumeric() || c == '_';
        if ident && (in_number || (word.is_empty() && c.is_ascii_digit())) {
            // a number and its suffixes (`0ull`, `1e-6`) are no identifier
            in_number = true;
            r.push(c);
            continue;
        }
        in_number = false;
        if ident {
            word.push(c);
        } else {
            flush(&mut r, &mut word);
            r.push(c);
        }
    }
    flush(&mut r, &mut word);
    r
}

/// The suffix of the names of member `k` of `n` ([`rename`]): none for a kernel of one
/// reduction, whose source is then exactly the single reduction's.
fn suffix(k: usize, n: usize) -> String {
    if n == 1 {
        String::new()
    } else {
        format!("_m{k}")
    }
}

/// Bytes of shared memory the kernel of `members` uses for combining across warps.
pub(crate) fn shared_bytes(p: &Program, members: &[Member], l: &Layout) -> usize {
    if l.ty > 1 && l.tx * l.ty > 32 {
        let per = (l.threads() * l.outputs_per_thread()) as usize;
        members.iter().map(|m| per * acc_size(m.fold, p.steps[m.step].dtype)).sum()
    } else {
        0
    }
}

/// The key of a kernel of several reductions ([`source_many`]). It starts with `b'M'`,
/// which no other key starts with.
pub(crate) fn key_many(
    p: &Program,
    plan: &Plan,
    members: &[Member],
    l: &Layout,
    axis: Option<usize>,
) -> Vec<u8> {
    let mut k = vec![b'M', members.len() as u8];
    for m in members {
        k.extend([m.fold as u8, m.out as u8]);
        k.extend((m.step as u32).to_le_bytes());
    }
    k.extend(key(p, plan, Fold::Sum, DType::F32, l, axis));
    k
}

/// Writes the source of the reduction kernel. Parameters, in order (`cuda::reduce` passes
/// them): `inner`, `r`, `outer`, `tiles` (output tiles per slab), `groups`, `jchunk` (rows per
/// split); `d0`, `d1`, `d2` when the producer needs coordinates, then in a narrow kernel the
/// packed divisors (`codegen::index::divisor_params`); the producer's step parameters
/// (`codegen::step_params`); `nv` (the NaN replacement); the output, the index output (null
/// unless `fold.has_index()`), the partials and the tickets (null unless `layout.split`).
///
/// `axis` is the dimension reduced (`None` for a reduction over everything): with coordinates,
/// the folded elements of one output differ only in that coordinate, which is the row index.
pub(crate) fn source(
    p: &Program,
    plan: &Plan,
    fold: Fold,
    out: DType,
    l: &Layout,
    axis: Option<usize>,
) -> String {
    source_many(p, plan, &[Member { fold, out, step: p.outputs[0] }], l, axis)
}

/// Writes the source of a kernel that computes the producer once per element and folds the
/// values of several of its steps, each by its own reduction into its own output (sibling
/// reductions, see `backend::siblings`): the single kernel's text, with each reduction's
/// accumulators, device functions, combining and stores repeated under names of its own
/// ([`rename`]). Index folds take no part. Parameters as for [`source`], with `nv`, the output
/// and the partials repeated per reduction, in order: every `nv`, every output, the (null)
/// index output, every partials pointer, the tickets. With one member the source is
/// [`source`]'s.
pub(crate) fn source_many(
    p: &Program,
    plan: &Plan,
    members: &[Member],
    l: &Layout,
    axis: Option<usize>,
) -> String {
    let n = members.len();
    debug_assert!(n == 1 || members.iter().all(|m| !m.fold.has_index()));
    let sfx: Vec<String> = (0..n).map(|k| suffix(k, n)).collect();
    // the text `f` writes for each member, under its names
    let each = |f: &dyn Fn(&mut String, &Member)| -> String {
        let mut all = String::new();
        for (m, x) in members.iter().zip(&sfx) {
            let mut t = String::new();
            f(&mut t, m);
            all.push_str(&rename(&t, x));
        }
        all
    };
    let wo = l.outputs_per_thread();
    let w = l.vector;
    let mut s = codegen::helpers(p);
    let _ =
        writeln!(s, "enum {{ TX = {}, TY = {}, TZ = {}, W = {w}, WO = {wo} }};", l.tx, l.ty, l.tz);
    s.push_str(&each(&|t, m| t.push_str(&acc_functions(m.fold, p.steps[m.step].dtype))));

    let mut params: Vec<String> = ["inner", "r", "outer", "tiles", "groups", "jchunk"]
        .iter()
        .map(|n| format!("const long long {n}"))
        .collect();
    if plan.coords {
        params.extend(["d0", "d1", "d2"].iter().map(|n| format!("const long long {n}")));
        if plan.narrow {
            params.extend(codegen::index::divisor_params(plan.rank));
        }
    }
    params.extend(codegen::step_params(p, plan));
    params.extend(sfx.iter().map(|x| format!("const double nv{x}")));
    for (m, x) in members.iter().zip(&sfx) {
        params.push(format!("{}* __restrict__ out{x}", codegen::storage_type(m.out)));
    }
    params.push("unsigned int* __restrict__ oidx".into());
    // written and read by different blocks: no `__restrict__`, no read-only cache
    params.extend(sfx.iter().map(|x| format!("acc_t{x}* part{x}")));
    params.push("unsigned int* ticket".into());
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void __launch_bounds__({}, {}) {ENTRY}({}) {{",
        l.threads(),
        BLOCKS_PER_SM,
        params.join(", ")
    );
    let shared = l.ty > 1 && l.tx * l.ty > 32;
    // a one-dimensional block (blockDim.z is limited to 64) seen as TX x TY x TZ; lane
    // `x + TX * y` of a group is consecutive within a warp, which the shuffles rely on
    s.push_str("  const int x = threadIdx.x % TX, y = (threadIdx.x / TX) % TY, z = threadIdx.x / (TX * TY);\n");
    let voids = |name: &str| sfx.iter().map(|x| format!("(void){name}{x};")).collect::<Vec<_>>();
    let _ = writeln!(
        s,
        "  (void)x; (void)z; {} (void)oidx; {} (void)ticket;",
        voids("nv").join(" "),
        voids("part").join(" ")
    );
    if l.split {
        s.push_str("  const long long nout = inner * outer;\n");
    }
    s.push_str("  const long long jlo = (long long)blockIdx.y * jchunk;\n");
    s.push_str("  const long long jhi = r < jlo + jchunk ? r : jlo + jchunk;\n");
    if shared {
        s.push_str(&each(&|t, _| t.push_str("  __shared__ acc_t sh[TZ][TY][TX * WO];\n")));
    }
    if l.split {
        s.push_str("  __shared__ int last_;\n");
    }
    s.push_str("  for (long long g = blockIdx.x; g < groups; g += gridDim.x) {\n");
    s.push_str("    const long long q = g * TZ + z;\n");
    if l.rows {
        // a row is one tile (`choose_grid`): no 64-bit division, whose inlined routine was a
        // seventh of a row kernel's compile (pi's reduction: 126-129 against 108-110 ms with
        // NVRTC 13.0)
        s.push_str("    const long long t = 0, o = q; (void)tiles;\n");
    } else {
        s.push_str("    const long long t = q % tiles, o = q / tiles;\n");
    }
    s.push_str("    const long long i0 = (t * TX + x) * WO;\n");
    s.push_str("    const bool live = o < outer && i0 < inner;\n");
    let nacc = if l.rows { w } else { wo };
    s.push_str(&each(&|t, _| {
        let _ = writeln!(t, "    acc_t acc[{nacc}];");
        let _ =
            writeln!(t, "#pragma unroll\n    for (int e = 0; e < {nacc}; e++) acc[e] = ef_id();");
    }));
    s.push_str("    if (live) {\n");
    let folds: Vec<(usize, &str)> =
        members.iter().zip(&sfx).map(|(m, x)| (m.step, x.as_str())).collect();
    fold_loops(&mut s, p, plan, l, axis, &folds);
    s.push_str("    }\n");
    if l.rows && w > 1 {
        s.push_str(&each(&|t, _| {
            let _ = writeln!(
                t,
                "#pragma unroll\n    for (int e = 1; e < {w}; e++) acc[0] = ef_merge(acc[0], acc[e]);"
            );
        }));
    }
    s.push_str(&each(&|t, _| combine_rows(t, l, shared)));
    let store = |t: &mut String, m: &Member, ind: &str, src: &str| {
        let a = acc_ty(m.fold, p.steps[m.step].dtype);
        let _ = writeln!(
            t,
            "{ind}for (int e = 0; e < WO; e++) {{\n{ind}  const long long k = o * inner + i0 + e;\n{ind}  if (i0 + e < inner) {{"
        );
        if m.fold.has_index() {
            let _ =
                writeln!(t, "{ind}    out[k] = {};", store_value(a, m.out, &format!("{src}.v")));
            let _ = writeln!(
                t,
                "{ind}    oidx[k] = {src}.j == 0xffffffffffffffffull ? 0u : (unsigned int){src}.j;"
            );
        } else {
            let _ = writeln!(t, "{ind}    out[k] = {};", store_value(a, m.out, src));
        }
        let _ = writeln!(t, "{ind}  }}\n{ind}}}");
    };
    if !l.split {
        s.push_str("    if (y == 0 && live) {\n");
        s.push_str(&each(&|t, m| {
            t.push_str("#pragma unroll\n");
            store(t, m, "      ", "acc[e]");
        }));
        s.push_str("    }\n");
    } else {
        s.push_str("    if (y == 0 && live) {\n");
        s.push_str(&each(&|t, _| {
            t.push_str("#pragma unroll\n");
            t.push_str("      for (int e = 0; e < WO; e++) if (i0 + e < inner) part[(long long)blockIdx.y * nout + o * inner + i0 + e] = acc[e];\n");
        }));
        s.push_str("    }\n");
        // publish the partials, then count this block; the last one combines
        s.push_str("    __threadfence();\n    __syncthreads();\n");
        s.push_str("    if (x == 0 && y == 0 && z == 0) last_ = atomicAdd(&ticket[g], 1u) == gridDim.y - 1;\n");
        s.push_str("    __syncthreads();\n");
        s.push_str("    if (last_) {\n      __threadfence();\n");
        s.push_str(&each(&|t, _| {
            t.push_str("#pragma unroll\n      for (int e = 0; e < WO; e++) acc[e] = ef_id();\n");
        }));
        s.push_str(
            "      if (live) {\n        for (unsigned int sp = y; sp < gridDim.y; sp += TY) {\n",
        );
        s.push_str(&each(&|t, _| {
            t.push_str("#pragma unroll\n");
            t.push_str("          for (int e = 0; e < WO; e++) if (i0 + e < inner) acc[e] = ef_merge(acc[e], ef_ldcg(&part[(long long)sp * nout + o * inner + i0 + e]));\n");
        }));
        s.push_str("        }\n      }\n");
        s.push_str(&each(&|t, _| combine_rows(t, l, shared)));
        s.push_str("      if (y == 0 && live) {\n");
        s.push_str(&each(&|t, m| {
            t.push_str("#pragma unroll\n");
            store(t, m, "        ", "acc[e]");
        }));
        s.push_str("      }\n");
        s.push_str("      if (x == 0 && y == 0 && z == 0) ticket[g] = 0;\n");
        s.push_str("    }\n");
    }
    if shared || l.split {
        // `sh` and `last_` are reused by the next group of this block
        s.push_str("    __syncthreads();\n");
    }
    s.push_str("  }\n}\n");
    s
}

/// Combines the `ty` accumulators of each group into the thread with `y == 0`: warp shuffles
/// when the group lies within a warp, otherwise a tree in shared memory. Every thread of the
/// block runs it.
fn combine_rows(s: &mut String, l: &Layout, shared: bool) {
    if l.ty == 1 {
        return;
    }
    if !shared {
        s.push_str("#pragma unroll\n    for (int m = TY / 2; m > 0; m >>= 1) {\n#pragma unroll\n");
        s.push_str("      for (int e = 0; e < WO; e++) acc[e] = ef_merge(acc[e], ef_shfl(acc[e], m * TX));\n    }\n");
        return;
    }
    s.push_str("#pragma unroll\n    for (int e = 0; e < WO; e++) sh[z][y][x * WO + e] = acc[e];\n    __syncthreads();\n");
    // The tree's levels stay a loop: it runs once a group, and its up to eight levels unrolled
    // (twice in a split kernel) took 8% of a kernel's compile (pi's reduction: 133 against
    // 122 ms with NVRTC 13.0).
    s.push_str("#pragma unroll 1\n    for (int m = TY / 2; m > 0; m >>= 1) {\n");
    s.push_str("      if (y < m) {\n#pragma unroll\n        for (int e = 0; e < WO; e++) sh[z][y][x * WO + e] = ef_merge(sh[z][y][x * WO + e], sh[z][y + m][x * WO + e]);\n      }\n");
    s.push_str("      __syncthreads();\n    }\n");
    s.push_str("#pragma unroll\n    for (int e = 0; e < WO; e++) acc[e] = sh[z][0][x * WO + e];\n");
}

/// The loops that fold this thread's share of its group's rows into `acc`.
///
/// `folds` holds, for each reduction, the step whose values it folds and the suffix of its
/// names ([`rename`]): the producer's steps are computed once per element, then each folds.
fn fold_loops(
    s: &mut String,
    p: &Program,
    plan: &Plan,
    l: &Layout,
    axis: Option<usize>,
    folds: &[(usize, &str)],
) {
    // Along an axis, the coordinates of an output's first element are computed once and the
    // row index `j` is the coordinate along the axis; over everything, each element's
    // coordinates come from its linear index.
    let (first, coords) = match axis {
        Some(a) => (
            format!("      {}\n", codegen::index::coords("base", plan.narrow, plan.rank)),
            format!("        const {} c{a} = j; (void)c{a};\n", codegen::index::ix(plan.narrow)),
        ),
        None => (
            String::new(),
            format!("        {}\n", codegen::index::coords("i", plan.narrow, plan.rank)),
        ),
    };
    // one element: the producer's steps, then the fold (where `guard`, a C condition, holds);
    // `acc_k` and `j` are C expressions
    let guarded = |s: &mut String,
                   raw: &dyn Fn(usize) -> String,
                   acc_k: &str,
                   j: &str,
                   guard: Option<&str>| {
        s.push_str("        {\n");
        codegen::body(s, p, "          ", raw);
        let when = guard.map(|g| format!("if ({g}) ")).unwrap_or_default();
        for &(out, sfx) in folds {
            let fold =
                format!("          {when}{acc_k} = ef_merge({acc_k}, ef_lift(v{out}, {j}, nv));\n");
            s.push_str(&rename(&fold, sfx));
        }
        s.push_str("        }\n");
    };
    let element = |s: &mut String, raw: &dyn Fn(usize) -> String, acc_k: &str, j: &str| {
        guarded(s, raw, acc_k, j, None)
    };
    let inputs: Vec<usize> = p
        .steps
        .iter()
        .enumerate()
        .filter(|(_, st)| matches!(st.instr, Instr::Input(_) | Instr::Random(_)))
        .map(|(i, _)| i)
        .collect();
    if plan.coords {
        // One element at a time, inputs read through their strides. A narrow kernel counts
        // rows in 32 bits: with a 64-bit counter each unrolled read's address took four
        // instructions instead of one (n-body's pair sums: 40 instructions an element, 27
        // with this).
        let row = if plan.narrow {
            "for (int j = (int)jlo + y; j < (int)jhi; j += TY)"
        } else {
            "for (long long j = jlo + y; j < jhi; j += TY)"
        };
        if l.rows {
            s.push_str("      const long long base = o * r;\n");
            s.push_str(&first);
            let _ = writeln!(
                s,
                "#pragma unroll 4\n      {row} {{\n        const long long i = base + j; (void)i;"
            );
        } else {
            s.push_str("      const long long base = i0 + inner * r * o;\n");
            s.push_str(&first);
            let _ = writeln!(s, "#pragma unroll 4\n      {row} {{\n        const long long i = base + inner * j; (void)i;");
        }
        s.push_str(&coords);
        element(s, &|k| codegen::element_read(p, plan, k), "acc[0]", "j");
        s.push_str("      }\n");
        return;
    }
    // every input is read linearly: wide loads, several in flight before they are used
    let loads = |s: &mut String, u: u32, at: &str| {
        for &k in &inputs {
            let read = codegen::wide_read(p, k, &format!("r{k}_{u}"), l.vector as usize, at);
            let _ = writeln!(s, "        {read}");
        }
    };
    // `var` steps by TY from its start below `limit`; `at(u)` is the first element of the
    // u-th of `unroll` loads issued together, `pos(u)` the position `j` of its element `e`.
    // With `partial`, the one-at-a-time pass runs below that limit instead (the whole vectors
    // and the last, partial one) and folds the first `lim` elements of each.
    let wide_loops = |s: &mut String,
                      var: &str,
                      limit: &str,
                      at: &dyn Fn(u32) -> String,
                      pos: &dyn Fn(u32) -> String,
                      partial: Option<&str>| {
        let passes: &[u32] = if l.unroll > 1 { &[l.unroll, 1] } else { &[1] };
        for &count in passes {
            if count > 1 {
                let _ = writeln!(
                    s,
                    "      for (; {var} + {} * TY < {limit}; {var} += {count} * TY) {{",
                    count - 1
                );
                for u in 0..count {
                    loads(s, u, &at(u));
                }
            } else if let Some(all) = partial {
                let _ = writeln!(s, "      for (; {var} < {all}; {var} += TY) {{");
                let _ = writeln!(
                    s,
                    "        const int lim = {var} < {limit} ? W : (int)(nrow - {limit} * W);"
                );
                for &k in &inputs {
                    let reg = format!("r{k}_0");
                    let read = codegen::partial_read(p, k, &reg, l.vector as usize, &at(0), "lim");
                    let _ = writeln!(s, "        {read}");
                }
            } else {
                let _ = writeln!(s, "      for (; {var} < {limit}; {var} += TY) {{");
                loads(s, 0, &at(0));
            }
            s.push_str("#pragma unroll\n        for (int e = 0; e < W; e++) {\n");
            let guard = partial.filter(|_| count == 1).map(|_| "e < lim");
            for u in 0..count {
                let raw = move |k: usize| format!("r{k}_{u}[e]");
                guarded(s, &raw, "acc[e]", &pos(u), guard);
            }
            s.push_str("        }\n      }\n");
        }
    };
    if l.rows {
        // Lanes of a group read consecutive W-element pieces of the row. The row's last
        // (jhi - jlo) % W elements are a partial piece of the one-at-a-time pass, its elements
        // read one by one and folded up to `lim`: a loop of their own repeated the whole body
        // in the kernel, for NVRTC to compile twice over (a fifth of `pi`'s compile time).
        s.push_str("      const long long base = o * r + jlo;\n");
        s.push_str("      const long long nrow = jhi > jlo ? jhi - jlo : 0;\n");
        s.push_str("      const long long nvec = nrow / W;\n");
        s.push_str("      long long v = y;\n");
        let partial = (l.vector > 1).then_some("(nrow + W - 1) / W");
        wide_loops(
            s,
            "v",
            "nvec",
            &|u| format!("base + (v + {u} * TY) * W"),
            &|u| format!("jlo + (v + {u} * TY) * W + e"),
            partial,
        );
    } else {
        // each thread reads W consecutive outputs' elements of a row at once
        s.push_str("      const long long base = i0 + inner * r * o;\n");
        s.push_str("      long long j = jlo + y;\n");
        wide_loops(
            s,
            "j",
            "jhi",
            &|u| format!("base + inner * (j + {u} * TY)"),
            &|u| format!("j + {u} * TY"),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Buffer;
    use crate::dim4::Dim4;
    use crate::jit::program::Step;
    use crate::jit::{BinOp, Data, Instr};
    use crate::storage::HostVec;
    use std::sync::Arc;

    fn input(t: DType, dims: Dim4, strides: [i64; 4]) -> Step {
        let buf = Arc::new(Buffer::host(HostVec::zeros(t, dims.elements() as usize)));
        Step { instr: Instr::Input(Data { buf, offset: 0, strides }), dtype: t, dims }
    }

    const FOLDS: [Fold; 11] = [
        Fold::Sum,
        Fold::Product,
        Fold::Min,
        Fold::Max,
        Fold::All,
        Fold::Any,
        Fold::Count,
        Fold::SumNan,
        Fold::ProductNan,
        Fold::IndexMin,
        Fold::IndexMax,
    ];

    /// The output type the public functions ask for (`AggregateOutType`, `ProductOutType`,
    /// the input type, bool, u32).
    fn out_type(fold: Fold, t: DType) -> DType {
        use Fold::*;
        match fold {
            Sum | SumNan => match t {
                DType::B8 | DType::U8 | DType::U16 => DType::U32,
                DType::S16 => DType::S32,
                DType::F16 | DType::BF16 => DType::F32,
                t => t,
            },
            Product | ProductNan => match t {
                DType::U8 | DType::U16 => DType::U32,
                DType::S16 => DType::S32,
                DType::F16 | DType::BF16 => DType::F32,
                t => t,
            },
            All | Any => DType::B8,
            Count => DType::U32,
            Min | Max | IndexMin | IndexMax => t,
        }
    }

    /// Every fold on every element type and every layout family (rows and columns, wide and
    /// strided loads, shuffles and shared memory, split or not): the sources that
    /// `EMBERFIRE_DUMP_KERNELS=dir` writes for an offline compile check with NVRTC.
    #[test]
    fn generates_every_fold_and_layout() {
        let d = Dim4::new(&[8, 3, 1, 1]);
        let layouts = [
            Layout { rows: true, tx: 1, ty: 256, tz: 1, vector: 4, unroll: 4, split: true },
            Layout { rows: true, tx: 1, ty: 32, tz: 8, vector: 2, unroll: 2, split: false },
            Layout { rows: true, tx: 1, ty: 4, tz: 64, vector: 1, unroll: 1, split: false },
            Layout { rows: false, tx: 32, ty: 8, tz: 1, vector: 4, unroll: 4, split: true },
            Layout { rows: false, tx: 4, ty: 8, tz: 8, vector: 1, unroll: 2, split: false },
            Layout { rows: false, tx: 8, ty: 32, tz: 1, vector: 2, unroll: 1, split: false },
        ];
        let dump = std::env::var("EMBERFIRE_DUMP_KERNELS").ok();
        let mut n = 0;
        for t in DType::ALL {
            let mut all = String::new();
            for fold in FOLDS {
                for (li, l) in layouts.iter().enumerate() {
                    // a fused product of two inputs, linear or strided
                    let strided = li % 2 == 1;
                    let st = if strided { [3, 1, 24, 24] } else { [1, 8, 24, 24] };
                    let steps = vec![
                        input(t, d, [1, 8, 24, 24]),
                        input(t, d, st),
                        Step { instr: Instr::Binary(BinOp::Mul, 0, 1), dtype: t, dims: d },
                    ];
                    let p = Program { steps, outputs: vec![2], dims: d };
                    let linear = vec![true, !strided, false];
                    let plan = codegen::plan(&p, &linear, |_| true);
                    // a wide load is at most 16 bytes
                    let widest = (16 / t.size()).max(1) as u32;
                    let l = Layout { vector: l.vector.min(widest), ..*l };
                    // columns reduce along dimension 1, rows over everything
                    let axis = if l.rows { None } else { Some(1) };
                    let src = source(&p, &plan, fold, out_type(fold, t), &l, axis);
                    assert!(src.contains(ENTRY));
                    let body = src.replace(ENTRY, &format!("r{n}"));
                    // (the sine guard is undone so that the next namespace defines its own)
                    all.push_str(&format!("namespace n{n} {{\n{body}}}\n#undef EF_TRIG_CU\n"));
                    n += 1;
                }
            }
            if let Some(dir) = &dump {
                // one file per element type; the prelude is repeated in every namespace
                std::fs::write(format!("{dir}/reduce_{}.cu", t.name()), all).unwrap();
            }
        }
    }

    /// The kernel's compile time grows with the copies of the body: a row reduction writes it
    /// once per load of its unrolled pass and once for the pass that takes one load at a time,
    /// whose last, partial piece of a row needs no loop of its own.
    #[test]
    fn a_row_reduction_writes_its_body_once_per_load_in_flight_and_once_more() {
        let d = Dim4::new(&[1001, 1, 1, 1]);
        let t = DType::F32;
        let steps = vec![
            input(t, d, [1, 1001, 1001, 1001]),
            Step { instr: Instr::Unary(crate::jit::UnOp::Exp, 0), dtype: t, dims: d },
        ];
        let p = Program { steps, outputs: vec![1], dims: d };
        let plan = codegen::plan(&p, &[true, false], |_| true);
        for (vector, unroll, bodies) in [(4, 1, 1), (4, 2, 3), (4, 4, 5), (1, 1, 1), (1, 4, 5)] {
            let l = Layout { rows: true, tx: 1, ty: 256, tz: 1, vector, unroll, split: true };
            let src = source(&p, &plan, Fold::Sum, t, &l, None);
            let what = format!("vector {vector}, unroll {unroll}");
            assert_eq!(src.matches("ef_lift(v1").count(), bodies, "{what}");
            // the partial piece's elements are folded up to its length, and only there
            let guarded = src.matches("if (e < lim) acc[e]").count();
            assert_eq!(guarded, usize::from(vector > 1), "{what}");
            // the shared-memory trees (the block's, then the last block's) are loops
            assert_eq!(src.matches("#pragma unroll 1\n    for (int m = TY / 2;").count(), 2);
            // a row is one tile: its group is the output, without a division
            assert!(src.contains("const long long t = 0, o = q;") && !src.contains("q % tiles"));
        }
    }

    /// Several reductions of one producer: every non-index fold beside others of other
    /// accumulator types, on every layout family, each element's steps written once per
    /// element position and each reduction's names its own. `EMBERFIRE_DUMP_KERNELS=dir`
    /// writes the sources for an offline compile check with NVRTC.
    #[test]
    fn generates_sibling_kernels() {
        let d = Dim4::new(&[8, 3, 1, 1]);
        let layouts = [
            Layout { rows: true, tx: 1, ty: 256, tz: 1, vector: 4, unroll: 4, split: true },
            Layout { rows: true, tx: 1, ty: 32, tz: 8, vector: 2, unroll: 2, split: false },
            Layout { rows: false, tx: 32, ty: 8, tz: 1, vector: 4, unroll: 4, split: true },
            Layout { rows: false, tx: 4, ty: 8, tz: 8, vector: 1, unroll: 2, split: false },
        ];
        let dump = std::env::var("EMBERFIRE_DUMP_KERNELS").ok();
        let mut all = String::new();
        let mut n = 0;
        for t in DType::ALL {
            for fold in &FOLDS[..9] {
                for (li, l) in layouts.iter().enumerate() {
                    // w = a * b shared by `fold(w * a)`, `max(w)` and `count(w)`
                    let strided = li % 2 == 1;
                    let st = if strided { [3, 1, 24, 24] } else { [1, 8, 24, 24] };
                    let steps = vec![
                        input(t, d, [1, 8, 24, 24]),
                        input(t, d, st),
                        Step { instr: Instr::Binary(BinOp::Mul, 0, 1), dtype: t, dims: d },
                        Step { instr: Instr::Binary(BinOp::Mul, 2, 0), dtype: t, dims: d },
                    ];
                    let p = Program { steps, outputs: vec![3, 2, 2], dims: d };
                    let linear = vec![true, !strided, false, false];
                    let plan = codegen::plan(&p, &linear, |_| true);
                    let widest = (16 / t.size()).max(1) as u32;
                    let l = Layout { vector: l.vector.min(widest), ..*l };
                    let axis = if l.rows { Some(0) } else { Some(1) };
                    let members = [
                        Member { fold: *fold, out: out_type(*fold, t), step: 3 },
                        Member { fold: Fold::Max, out: t, step: 2 },
                        Member { fold: Fold::Count, out: DType::U32, step: 2 },
                    ];
                    let src = source_many(&p, &plan, &members, &l, axis);
                    let alone = source(&p, &plan, *fold, out_type(*fold, t), &l, axis);
                    // the producer's steps are written as often as for one reduction
                    let count = |s: &str, pat: &str| s.matches(pat).count();
                    assert_eq!(count(&src, " v2 = "), count(&alone, " v2 = "), "{t:?} {fold:?}");
                    for k in 0..3 {
                        for name in ["out", "part", "nv", "acc_t", "ef_merge"] {
                            assert!(src.contains(&format!("{name}_m{k}")), "{name}_m{k}");
                        }
                        // each reduction folds once per element position of the single one
                        let folds = count(&src, &format!("ef_lift_m{k}(v"));
                        assert_eq!(folds, count(&alone, "ef_lift(v"), "{t:?} {fold:?} member {k}");
                    }
                    assert!(!src.contains("ef_lift(v") && !src.contains(" acc["));
                    let key = key_many(&p, &plan, &members, &l, axis);
                    assert_ne!(key, key_many(&p, &plan, &members[..2], &l, axis));
                    let body = src.replace(ENTRY, &format!("s{n}"));
                    all.push_str(&format!("namespace s{n} {{\n{body}}}\n#undef EF_TRIG_CU\n"));
                    n += 1;
                }
            }
        }
        if let Some(dir) = &dump {
            std::fs::write(format!("{dir}/reduce_siblings.cu"), all).unwrap();
        }
    }

    #[test]
    fn renaming_touches_only_the_reductions_own_names() {
        let text = "acc_t acc[4]; acc[e] = ef_merge(acc[e], ef_lift(v3, j, nv)); nout = 0ull; out[k] = (float)acc2;";
        assert_eq!(
            rename(text, "_m1"),
            "acc_t_m1 acc_m1[4]; acc_m1[e] = ef_merge_m1(acc_m1[e], ef_lift_m1(v3, j, nv_m1)); nout = 0ull; out_m1[k] = (float)acc2;"
        );
        assert_eq!(rename(text, ""), text);
    }
}
