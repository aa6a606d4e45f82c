//! Scans on the CPU, fused with their element-wise producer.
//!
//! The producer is a `Program` whose first output is the values, already converted to the
//! scan's output type, and whose second output, for `scan_by_key`, is the keys as i64. It is
//! evaluated chunk by chunk as `eval::run` would, and each chunk is scanned as it comes, so a
//! lazy input is never stored.
//!
//! The array is seen as `outer` slabs of `r` rows of `inner` contiguous elements; a line
//! (`inner` × `outer` of them) is the `r` elements at stride `inner` that one scan runs along.
//! Work is split into tasks by shape only:
//! - when `inner` is small, a task is a range of whole slabs, read in memory order: for
//!   `inner == 1` (a scan along the first dimension larger than 1) these are whole lines, each
//!   scanned sequentially; otherwise the scan advances row by row, all `inner` lines at once,
//!   so that reads stay sequential;
//! - when `inner` is large, a task is a strip of lines `CHUNK` wide, read row by row;
//! - when that leaves few tasks and the lines are long, each slab or strip is cut into blocks
//!   of rows: a first pass computes every block's total, the totals are combined in order into
//!   each block's starting value (its carry), and a second pass scans each block from its
//!   carry (a two-pass, reduce-then-scan scheme; the producer is evaluated twice).
//!
//! Accumulators are wider than the output where that is free: f64 for f32 and f64, c64 for
//! c32 and c64; integers accumulate in their own type with wrapping arithmetic.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::acc::Arith;
use super::eval::eval_steps;
use super::kernels::Src;
use crate::backend::scan::BinaryOp;
use crate::backend::scan::ScanSpec;
use crate::dtype::{c32, c64, DType};
use crate::error::Error;
use crate::jit::Expr;
use crate::jit::Node;
use crate::jit::Program;
use crate::storage::{alloc_uninit, Element, HostVec};
use std::sync::Arc;

/// Elements per evaluation of the producer: a few temporaries of this size stay in L2.
const CHUNK: usize = 4096;
/// Elements one task covers, roughly.
const PIECE: usize = 1 << 16;
/// A slab or strip of more elements than this is cut into blocks when there are few of them.
const LONG: usize = 1 << 18;
/// Fewer slabs or strips than this leave threads idle.
const FEW: usize = 16;

/// Scans the first output of `p` along `spec.dim`, restarting wherever its second output (the
/// keys), if any, changes. Returns the result in the first output's type, in the program's
/// shape, or [`Error::OutOfMemory`] when it does not fit.
pub(crate) fn scan(p: &Program, spec: ScanSpec) -> Result<HostVec, Error> {
    let t = p.steps[p.outputs[0]].dtype;
    match t {
        DType::F32 => by_op::<f32>(p, spec),
        DType::F64 => by_op::<f64>(p, spec),
        DType::C32 => by_op::<c32>(p, spec),
        DType::C64 => by_op::<c64>(p, spec),
        DType::S32 => by_op::<i32>(p, spec),
        DType::U32 => by_op::<u32>(p, spec),
        DType::S64 => by_op::<i64>(p, spec),
        DType::U64 => by_op::<u64>(p, spec),
        other => unreachable!("internal error: scan output type {}", other.name()),
    }
}

fn by_op<T: Out>(p: &Program, spec: ScanSpec) -> Result<HostVec, Error> {
    Ok(T::wrap(match spec.op {
        BinaryOp::ADD => drive::<T, Add>(p, spec)?,
        BinaryOp::MUL => drive::<T, Mul>(p, spec)?,
        BinaryOp::MIN => drive::<T, Min>(p, spec)?,
        BinaryOp::MAX => drive::<T, Max>(p, spec)?,
    }))
}

/// An accumulator type: the shared arithmetic and the starting values of scans.
trait Acc: Arith {
    /// The start of a running minimum: a value `min` ignores (NaN for floating types, so that
    /// a run of NaN stays NaN), the largest value for integers.
    const MIN_EMPTY: Self;
    /// The start of a running maximum, as `MIN_EMPTY`.
    const MAX_EMPTY: Self;
    /// The identity an exclusive minimum scan shows first: the largest value.
    const MIN_FIRST: Self;
    /// The identity an exclusive maximum scan shows first: the smallest value.
    const MAX_FIRST: Self;
}

impl Acc for f64 {
    const MIN_EMPTY: f64 = f64::NAN;
    const MAX_EMPTY: f64 = f64::NAN;
    const MIN_FIRST: f64 = f64::INFINITY;
    const MAX_FIRST: f64 = f64::NEG_INFINITY;
}

impl Acc for c64 {
    const MIN_EMPTY: c64 = c64::new(f64::NAN, f64::NAN);
    const MAX_EMPTY: c64 = c64::new(f64::NAN, f64::NAN);
    const MIN_FIRST: c64 = c64::new(f64::INFINITY, 0.0);
    const MAX_FIRST: c64 = c64::new(0.0, 0.0);
}

macro_rules! int_acc {
    ($($t:ty),*) => {$(
        impl Acc for $t {
            const MIN_EMPTY: $t = <$t>::MAX;
            const MAX_EMPTY: $t = <$t>::MIN;
            const MIN_FIRST: $t = <$t>::MAX;
            const MAX_FIRST: $t = <$t>::MIN;
        }
    )*};
}
int_acc!(i32, u32, i64, u64);

/// An output type of a scan, with the accumulator it is computed in.
trait Out: Element {
    type A: Acc;
    fn widen(self) -> Self::A;
    /// Rounds (floating types) an accumulator to the output type.
    fn narrow(a: Self::A) -> Self;
}

macro_rules! out_type {
    ($t:ty, $a:ty, $x:ident => $widen:expr, $y:ident => $narrow:expr) => {
        impl Out for $t {
            type A = $a;
            #[inline(always)]
            fn widen(self) -> $a {
                let $x = self;
                $widen
            }
            #[inline(always)]
            fn narrow($y: $a) -> $t {
                $narrow
            }
        }
    };
}
out_type!(f32, f64, x => x as f64, a => a as f32);
out_type!(f64, f64, x => x, a => a);
out_type!(c32, c64, x => c64::new(x.re as f64, x.im as f64), a => c32::new(a.re as f32, a.im as f32));
out_type!(c64, c64, x => x, a => a);
out_type!(i32, i32, x => x, a => a);
out_type!(u32, u32, x => x, a => a);
out_type!(i64, i64, x => x, a => a);
out_type!(u64, u64, x => x, a => a);

/// One of the four scan operations.
trait Op: Sync {
    /// The value a run starts from (before its first element).
    fn empty<A: Acc>() -> A;
    /// What an exclusive scan shows for the first element of a run.
    fn first<A: Acc>() -> A;
    /// `a` (earlier elements) combined with `b` (later ones).
    fn apply<A: Acc>(a: A, b: A) -> A;
}

struct Add;
struct Mul;
struct Min;
struct Max;

macro_rules! op {
    ($s:ident, $empty:ident, $first:ident, $f:ident) => {
        impl Op for $s {
            #[inline(always)]
            fn empty<A: Acc>() -> A {
                A::$empty
            }
            #[inline(always)]
            fn first<A: Acc>() -> A {
                A::$first
            }
            #[inline(always)]
            fn apply<A: Acc>(a: A, b: A) -> A {
                a.$f(b)
            }
        }
    };
}
op!(Add, ZERO, ZERO, add);
op!(Mul, ONE, ONE, mul);
op!(Min, MIN_EMPTY, MIN_FIRST, min);
op!(Max, MAX_EMPTY, MAX_FIRST, max);

/// One step of a scan: `x` enters the run held in `acc` (a new run when `reset`); returns the
/// element of the result.
#[inline(always)]
fn cell<T: Out, O: Op>(acc: &mut T::A, x: T, reset: bool, inclusive: bool) -> T {
    let before = *acc;
    let after = if reset { x.widen() } else { O::apply(before, x.widen()) };
    *acc = after;
    T::narrow(if inclusive {
        after
    } else if reset {
        O::first()
    } else {
        before
    })
}

/// The scan's view of the array (see the module documentation).
#[derive(Clone, Copy)]
struct Shape {
    inner: usize,
    r: usize,
    outer: usize,
}

impl Shape {
    fn slab(self) -> usize {
        self.inner * self.r
    }
}

/// A unit of parallel work: rows `j0..j1` of lines `i0..i1` in slabs `o0..o1`. Either the
/// lines are whole slabs (`i0 == 0`, `i1 == inner`) and, when there are several slabs, the
/// rows are all of them; or there is one slab. `group` numbers the slab range or strip, and
/// the blocks of one group are consecutive tasks.
#[derive(Clone, Copy, Debug)]
struct Task {
    o0: usize,
    o1: usize,
    i0: usize,
    i1: usize,
    j0: usize,
    j1: usize,
    group: usize,
}

/// Cuts the scan into tasks, depending on the shape only.
fn plan(sh: Shape) -> Vec<Task> {
    let Shape { inner, r, outer } = sh;
    let slab = sh.slab();
    let mut tasks = Vec::new();
    let mut push_blocks = |o0, o1, i0, i1, rows: usize, group| {
        for j0 in (0..r).step_by(rows) {
            tasks.push(Task { o0, o1, i0, i1, j0, j1: (j0 + rows).min(r), group });
        }
    };
    if inner <= CHUNK {
        let per = (PIECE / slab).max(1);
        let groups = outer.div_ceil(per);
        let split = per == 1 && slab > LONG && groups < FEW;
        let rows = if split { (PIECE / inner).max(1) } else { r };
        for (g, o0) in (0..outer).step_by(per).enumerate() {
            push_blocks(o0, (o0 + per).min(outer), 0, inner, rows, g);
        }
    } else {
        let strips = inner.div_ceil(CHUNK);
        let split = outer * strips < FEW && r * CHUNK > LONG;
        let rows = if split { (PIECE / CHUNK).max(1) } else { r };
        let mut g = 0;
        for o in 0..outer {
            for i0 in (0..inner).step_by(CHUNK) {
                push_blocks(o, o + 1, i0, (i0 + CHUNK).min(inner), rows, g);
                g += 1;
            }
        }
    }
    tasks
}

/// The running state of one task's lines.
struct State<A> {
    acc: Vec<A>,
    /// The key of each line's previous element.
    prev: Vec<i64>,
    /// Whether a run started (at the start of a line or a key change) within the task.
    seen: Vec<bool>,
}

/// Where results go: the base of the output's allocation. Tasks write disjoint elements.
#[derive(Clone, Copy)]
struct OutPtr<T>(*mut MaybeUninit<T>);
// SAFETY: the pointer is only used to write disjoint elements from different threads.
unsafe impl<T> Send for OutPtr<T> {}
// SAFETY: as above; tasks share the pointer, never an element.
unsafe impl<T> Sync for OutPtr<T> {}

impl<T> OutPtr<T> {
    /// The output elements `a..b` when `write` is set.
    ///
    /// # Safety
    ///
    /// `a..b` lies within the output, and no other live slice covers any of it.
    unsafe fn elements<'a>(
        self,
        write: bool,
        a: usize,
        b: usize,
    ) -> Option<&'a mut [MaybeUninit<T>]> {
        // SAFETY: the caller's contract; the allocation holds every element of the output.
        write.then(|| unsafe { std::slice::from_raw_parts_mut(self.0.add(a), b - a) })
    }
}

/// The producer and everything a task needs to scan.
struct Scanner<'p, T> {
    prog: &'p Program,
    last: Vec<usize>,
    keyed: bool,
    inclusive: bool,
    sh: Shape,
    out: OutPtr<T>,
}

/// Reusable buffers for splatted (constant) chunks.
struct Bufs<T> {
    x: Vec<T>,
    k: Vec<i64>,
}

impl<T: Out> Scanner<'_, T> {
    /// Calls `f` with the values (and keys) of elements `start..start + len`.
    fn chunk<R>(
        &self,
        start: usize,
        len: usize,
        bufs: &mut Bufs<T>,
        f: impl FnOnce(&[T], Option<&[i64]>) -> R,
    ) -> R {
        let vals = eval_steps(self.prog, &self.last, start, len);
        let val = |k: usize| vals[self.prog.outputs[k]].as_ref().expect("internal error: output");
        let xs = match val(0).src::<T>(len) {
            Src::Slice(s) => s,
            Src::Splat(x) => {
                bufs.x.clear();
                bufs.x.resize(len, x);
                &bufs.x[..]
            }
        };
        let ks = if self.keyed {
            Some(match val(1).src::<i64>(len) {
                Src::Slice(s) => s,
                Src::Splat(k) => {
                    bufs.k.clear();
                    bufs.k.resize(len, k);
                    &bufs.k[..]
                }
            })
        } else {
            None
        };
        f(xs, ks)
    }

    /// Runs task `t` starting from `carry` (the combined value of the earlier blocks of its
    /// lines), writing the results when `write` is set. Returns the final state, whose `acc`
    /// and `seen` are the task's totals.
    fn run<O: Op>(&self, t: &Task, carry: Option<&[T::A]>, write: bool) -> State<T::A> {
        let Shape { inner, r, .. } = self.sh;
        let slab = self.sh.slab();
        let w = if inner == 1 { 1 } else { t.i1 - t.i0 };
        let mut st = State {
            acc: carry.map_or_else(|| vec![O::empty(); w], |c| c.to_vec()),
            prev: vec![0; w],
            seen: vec![false; w],
        };
        let mut bufs = Bufs { x: Vec::new(), k: Vec::new() };
        if self.keyed && t.j0 > 0 {
            // the keys of the row before the block decide whether its first row starts runs
            let start = t.o0 * slab + (t.j0 - 1) * inner + t.i0;
            let prev = &mut st.prev;
            self.chunk(start, w, &mut bufs, |_, ks| prev.copy_from_slice(ks.expect("keys")));
        }
        if inner == 1 || (t.i0 == 0 && t.i1 == inner) {
            // whole rows: the task's elements are contiguous
            let a = t.o0 * slab + t.j0 * inner;
            let b = (t.o1 - 1) * slab + t.j1 * inner;
            for c in (a..b).step_by(CHUNK) {
                let len = CHUNK.min(b - c);
                self.chunk(c, len, &mut bufs, |xs, ks| {
                    let mut q = c;
                    while q < c + len {
                        let (end, first) = if inner == 1 {
                            let j = q % r;
                            ((q + r - j).min(c + len), j == 0)
                        } else {
                            let i = q % inner;
                            ((q + inner - i).min(c + len), (q / inner) % r == 0)
                        };
                        let (x, k) = (&xs[q - c..end - c], ks.map(|k| &k[q - c..end - c]));
                        // SAFETY: `q..end` is inside this task's elements, which no other
                        // task writes, and the slice is dropped before the next is made.
                        let dst = unsafe { self.out.elements(write, q, end) };
                        if inner == 1 {
                            along_line::<T, O>(&mut st, x, k, dst, first, self.inclusive);
                        } else {
                            across_lines::<T, O>(
                                &mut st,
                                q % inner,
                                x,
                                k,
                                dst,
                                first,
                                self.inclusive,
                            );
                        }
                        q = end;
                    }
                });
            }
        } else {
            // a strip of lines narrower than the slab: one chunk per row
            for j in t.j0..t.j1 {
                let start = t.o0 * slab + j * inner + t.i0;
                self.chunk(start, w, &mut bufs, |xs, ks| {
                    // SAFETY: as above; the row of this strip belongs to this task only.
                    let dst = unsafe { self.out.elements(write, start, start + w) };
                    across_lines::<T, O>(&mut st, 0, xs, ks, dst, j == 0, self.inclusive);
                });
            }
        }
        st
    }
}

/// Scans consecutive elements of one line (state slot 0); `first` when `xs[0]` starts it.
#[inline(always)]
fn along_line<T: Out, O: Op>(
    st: &mut State<T::A>,
    xs: &[T],
    ks: Option<&[i64]>,
    mut dst: Option<&mut [MaybeUninit<T>]>,
    first: bool,
    inclusive: bool,
) {
    let (mut acc, mut prev, mut seen) = (st.acc[0], st.prev[0], st.seen[0]);
    for (k, &x) in xs.iter().enumerate() {
        let mut reset = first && k == 0;
        if let Some(ks) = ks {
            reset |= ks[k] != prev;
            prev = ks[k];
        }
        seen |= reset;
        let y = cell::<T, O>(&mut acc, x, reset, inclusive);
        if let Some(d) = dst.as_deref_mut() {
            d[k].write(y);
        }
    }
    (st.acc[0], st.prev[0], st.seen[0]) = (acc, prev, seen);
}

/// Advances lines `s..s + xs.len()` by one row; `first` when the row is the lines' first.
#[inline(always)]
fn across_lines<T: Out, O: Op>(
    st: &mut State<T::A>,
    s: usize,
    xs: &[T],
    ks: Option<&[i64]>,
    mut dst: Option<&mut [MaybeUninit<T>]>,
    first: bool,
    inclusive: bool,
) {
    let n = xs.len();
    let (acc, prev, seen) = (&mut st.acc[s..s + n], &mut st.prev[s..s + n], &mut st.seen[s..s + n]);
    for k in 0..n {
        let mut reset = first;
        if let Some(ks) = ks {
            reset |= ks[k] != prev[k];
            prev[k] = ks[k];
        }
        seen[k] |= reset;
        let y = cell::<T, O>(&mut acc[k], xs[k], reset, inclusive);
        if let Some(d) = dst.as_deref_mut() {
            d[k].write(y);
        }
    }
}

/// Maps `f` over `items` in order, in parallel unless there is only one.
fn map_tasks<I: Sync, R: Send>(items: &[I], f: impl Fn(usize, &I) -> R + Sync) -> Vec<R> {
    if items.len() <= 1 {
        items.iter().enumerate().map(|(i, t)| f(i, t)).collect()
    } else {
        items.par_iter().enumerate().map(|(i, t)| f(i, t)).collect()
    }
}

fn drive<T: Out, O: Op>(p: &Program, spec: ScanSpec) -> Result<Vec<T>, Error> {
    let dims = p.dims;
    let n = dims.elements() as usize;
    let prod = |ks: std::ops::Range<usize>| ks.map(|k| dims[k] as usize).product::<usize>();
    let sh = Shape {
        inner: prod(0..spec.dim),
        r: dims[spec.dim] as usize,
        outer: prod(spec.dim + 1..4),
    };
    let mut out: Vec<T> = alloc_uninit(n)?;
    if n == 0 {
        return Ok(out);
    }
    let scanner = Scanner {
        prog: p,
        last: p.last_uses(),
        keyed: p.outputs.len() > 1,
        inclusive: spec.inclusive,
        sh,
        out: OutPtr(out.spare_capacity_mut().as_mut_ptr()),
    };
    let tasks = plan(sh);
    // a task whose group continues in the next task needs its total (first pass)
    let continued = |i: usize| tasks.get(i + 1).is_some_and(|u| u.group == tasks[i].group);
    let carries: Vec<Option<Vec<T::A>>> = if (0..tasks.len()).any(continued) {
        let totals =
            map_tasks(&tasks, |i, t| continued(i).then(|| scanner.run::<O>(t, None, false)));
        let mut carries = vec![None; tasks.len()];
        let mut run: Vec<T::A> = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            if t.j0 == 0 {
                run = Vec::new();
            } else {
                carries[i] = Some(run.clone());
            }
            if let Some(tot) = &totals[i] {
                if run.is_empty() {
                    run = vec![O::empty(); tot.acc.len()];
                }
                for ((r, &seen), &acc) in run.iter_mut().zip(&tot.seen).zip(&tot.acc) {
                    *r = if seen { acc } else { O::apply(*r, acc) };
                }
            }
        }
        carries
    } else {
        vec![None; tasks.len()]
    };
    map_tasks(&tasks, |i, t| {
        scanner.run::<O>(t, carries[i].as_deref(), true);
    });
    // SAFETY: the tasks cover every element of the output once, and each wrote its elements.
    unsafe { out.set_len(n) };
    Ok(out)
}

// The scans are exercised through every element type, operation and path by
// tests/algorithms/scan.rs; these pin the task plan, which decides the paths.

impl crate::backend::scan::Scan for super::Cpu {
    fn scan(
        &self,
        values: &Arc<Node>,
        keys: Option<&Arc<Node>>,
        spec: ScanSpec,
        out: DType,
    ) -> Result<crate::backend::Buffer, Error> {
        // the conversions become steps of the fused program
        let cast = |n: &Arc<Node>, t: DType| {
            if n.dtype == t {
                n.clone()
            } else {
                Node::lazy(t, n.dims, n.backend, Expr::Cast(n.clone()))
            }
        };
        let mut roots = vec![cast(values, out)];
        roots.extend(keys.map(|k| cast(k, DType::S64)));
        let program = crate::backend::schedule::program_for(&roots)?;
        Ok(crate::backend::Buffer::host(scan(&program, spec)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(sh: Shape) -> usize {
        plan(sh).iter().map(|t| (t.o1 - t.o0) * (t.i1 - t.i0) * (t.j1 - t.j0)).sum()
    }

    #[test]
    fn tasks_cover_every_element_once() {
        for sh in [
            Shape { inner: 1, r: 10, outer: 1 },
            Shape { inner: 1, r: 3_000_000, outer: 1 },
            Shape { inner: 1, r: 7, outer: 100_000 },
            Shape { inner: 3, r: 1_000_000, outer: 2 },
            Shape { inner: 5000, r: 300, outer: 2 },
            Shape { inner: 9000, r: 2, outer: 3 },
        ] {
            assert_eq!(
                covered(sh),
                sh.inner * sh.r * sh.outer,
                "inner {} r {} outer {}",
                sh.inner,
                sh.r,
                sh.outer
            );
        }
    }

    #[test]
    fn one_long_line_is_cut_into_blocks() {
        let tasks = plan(Shape { inner: 1, r: 3_000_000, outer: 1 });
        assert!(tasks.len() > 16);
        assert!(tasks.iter().all(|t| t.group == 0));
        let many = plan(Shape { inner: 1, r: 1000, outer: 1000 });
        assert!(many.iter().all(|t| t.j0 == 0 && t.j1 == 1000));
    }
}
