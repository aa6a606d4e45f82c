//! Reductions fused with their element-wise producer on the CPU.
//!
//! The producer (a `Program` with one output) is evaluated chunk by chunk exactly as
//! `eval::run` does, but each chunk's values are folded into accumulators instead of being
//! written out, so `sum(&(&a * &b), 0)` reads `a` and `b` once and never stores `a * b`.
//!
//! Work is cut into tasks that depend only on the shape (never on the thread count), each task
//! produces partial results for a contiguous range of output elements, and the partials are
//! combined in task order: results are the same on every run and every machine.
//!
//! Accumulators are wider than the elements: f64 for f16, bf16, f32 and f64; c64 for c32 and
//! c64; i64 or u64 (wrapping) for integers and bool. Integer sums and products therefore wrap in
//! the output type, exactly as if they had been computed in it.

use std::sync::OnceLock;

pub(crate) mod siblings;

use super::acc::Arith;
use super::eval::{eval_steps, output_buffers, set_written, write_chunk, OutPtr, Val};
use super::kernels::Src;
use std::sync::Arc;

use crate::backend::reduce::{IndexOp, Reduction};
use crate::backend::schedule::{program_for, reduction_program, sibling_program};
use crate::backend::Buffer;
use crate::dtype::{c32, c64, DType};
use crate::error::Error;
use crate::jit::{BinOp, Data, Instr, Node, Program};
use crate::storage::{try_filled, try_mapped, with_dtype, Element, HostVec, Lit};
use half::f16;

/// Elements per chunk, as in `eval`: a few temporaries of this size stay in L2.
const CHUNK: usize = 4096;
/// Elements of the producer one contiguous task covers.
const PIECE: usize = 1 << 16;
/// Rows (steps along the reduced dimension) one task covers when the output runs are long.
const ROWS: usize = 64;

/// Reduces output 0 of `p` along `dim`, or over all of its elements (taken in column-major
/// order) when `dim` is `None`. The result holds `out` elements: the producer's shape with
/// `dim` set to 1 (one element for `None`). The program's other outputs (operations of its
/// shape that are read again later, see `backend::schedule::reduction_program`) are stored as
/// the fold computes them and returned in output order, each contiguous. Fails with
/// [`Error::OutOfMemory`] when the result or a stored output does not fit.
pub(crate) fn reduce(
    p: &Program,
    op: Reduction,
    dim: Option<usize>,
    out: DType,
) -> Result<(HostVec, Vec<HostVec>), Error> {
    let t = p.steps[p.outputs[0]].dtype;
    let n = p.dims.elements() as usize;
    let (mut stored, to) = output_buffers(p, &p.outputs[1..], n)?;
    let reduced = with_dtype!(t, T => match op {
        Reduction::Sum => values::<T, _>(&Sum, &drive::<T, _>(p, &Sum, dim, &to)?, out),
        Reduction::Product => values::<T, _>(&Prod, &drive::<T, _>(p, &Prod, dim, &to)?, out),
        Reduction::Min => values::<T, _>(&Min, &drive::<T, _>(p, &Min, dim, &to)?, out),
        Reduction::Max => values::<T, _>(&Max, &drive::<T, _>(p, &Max, dim, &to)?, out),
        Reduction::AllTrue => values::<T, _>(&All, &drive::<T, _>(p, &All, dim, &to)?, out),
        Reduction::AnyTrue => values::<T, _>(&Any, &drive::<T, _>(p, &Any, dim, &to)?, out),
        Reduction::Count => values::<T, _>(&Count, &drive::<T, _>(p, &Count, dim, &to)?, out),
        Reduction::SumNan(v) => {
            values::<T, _>(&SumNan(v), &drive::<T, _>(p, &SumNan(v), dim, &to)?, out)
        }
        Reduction::ProductNan(v) => {
            values::<T, _>(&ProdNan(v), &drive::<T, _>(p, &ProdNan(v), dim, &to)?, out)
        }
    })?;
    // SAFETY: the fold visits every element of the producer exactly once, and every visit
    // stored its values of each output (`Producer::store`).
    unsafe { set_written(&mut stored, n) };
    Ok((reduced, stored))
}

/// Like `reduce` for `imin`/`imax`: the extreme values (of the producer's type) and their
/// positions along `dim` (linear positions for `None`) as u32. NaN is skipped; ties and runs
/// of NaN give the first position; an empty run gives position 0.
pub(crate) fn reduce_index(
    p: &Program,
    op: IndexOp,
    dim: Option<usize>,
) -> Result<(HostVec, HostVec), Error> {
    let t = p.steps[p.outputs[0]].dtype;
    fn split<T: Widen, F: Fold<T>>(
        p: &Program,
        f: &F,
        dim: Option<usize>,
    ) -> Result<(HostVec, HostVec), Error> {
        let acc = drive::<T, F>(p, f, dim, &[])?;
        let idx = try_mapped(&acc, |&a| f.index(a).unwrap_or(0) as u32)?;
        Ok((values::<T, F>(f, &acc, T::DTYPE)?, HostVec::U32(idx)))
    }
    with_dtype!(t, T => match op {
        IndexOp::Min => split::<T, _>(p, &IMin, dim),
        IndexOp::Max => split::<T, _>(p, &IMax, dim),
    })
}

/// An accumulator value (f64, i64, u64 or c64): the shared arithmetic and what reductions
/// ask besides.
trait Acc: Arith {
    fn nonzero(self) -> bool;
    /// Whether the value is NaN (either part, for complex values).
    fn is_nan(self) -> bool;
    /// Strictly smaller: by value, by magnitude for complex values; false when either is NaN.
    fn less(self, o: Self) -> bool;
    /// `v` (with a zero imaginary part) where `self` is NaN.
    fn nan_to(self, v: f64) -> Self;
    fn lit(self) -> Lit;
}

impl Acc for f64 {
    #[inline(always)]
    fn nonzero(self) -> bool {
        self != 0.0
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn less(self, o: f64) -> bool {
        self < o
    }
    #[inline(always)]
    fn nan_to(self, v: f64) -> f64 {
        if self.is_nan() {
            v
        } else {
            self
        }
    }
    fn lit(self) -> Lit {
        Lit::Real(self)
    }
}

macro_rules! int_acc {
    ($t:ty, $lit:ident) => {
        impl Acc for $t {
            #[inline(always)]
            fn nonzero(self) -> bool {
                self != 0
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn less(self, o: $t) -> bool {
                self < o
            }
            #[inline(always)]
            fn nan_to(self, _: f64) -> $t {
                self
            }
            fn lit(self) -> Lit {
                Lit::$lit(self)
            }
        }
    };
}
int_acc!(i64, Int);
int_acc!(u64, Uint);

impl Acc for c64 {
    #[inline(always)]
    fn nonzero(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
    fn is_nan(self) -> bool {
        c64::is_nan(self)
    }
    fn less(self, o: c64) -> bool {
        self.norm_sqr() < o.norm_sqr()
    }
    fn nan_to(self, v: f64) -> c64 {
        if self.is_nan() {
            c64::new(v, 0.0)
        } else {
            self
        }
    }
    fn lit(self) -> Lit {
        Lit::Cplx(self)
    }
}

/// An element type with its accumulator and the identities of `min` and `max`.
trait Widen: Element {
    type W: Acc;
    /// The start of a minimum: NaN for floating types, the type's largest value otherwise.
    const MIN_ID: Self::W;
    /// The start of a maximum: NaN for floating types, the type's smallest value otherwise.
    const MAX_ID: Self::W;
    fn widen(self) -> Self::W;
    /// True for the types whose trailing add, subtract or multiply is computed in the fold.
    const TAIL: bool = false;
    /// `x op y` for a trailing add, subtract or multiply, rounded as the element-wise kernels
    /// round it.
    #[inline(always)]
    fn tail(_op: BinOp, _x: Self, _y: Self) -> Self {
        unreachable!("internal error: no fused tail for this type")
    }
}

macro_rules! float_tail {
    ($t:ty) => {
        #[inline(always)]
        fn tail(op: BinOp, x: $t, y: $t) -> $t {
            match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                _ => x * y,
            }
        }
    };
}

macro_rules! widen {
    ($t:ty, $w:ty, $min:expr, $max:expr, $x:ident => $e:expr) => {
        impl Widen for $t {
            type W = $w;
            const MIN_ID: $w = $min;
            const MAX_ID: $w = $max;
            #[inline(always)]
            fn widen(self) -> $w {
                let $x = self;
                $e
            }
        }
    };
}
impl Widen for f32 {
    type W = f64;
    const MIN_ID: f64 = f64::NAN;
    const MAX_ID: f64 = f64::NAN;
    #[inline(always)]
    fn widen(self) -> f64 {
        self as f64
    }
    const TAIL: bool = true;
    float_tail!(f32);
}
impl Widen for f64 {
    type W = f64;
    const MIN_ID: f64 = f64::NAN;
    const MAX_ID: f64 = f64::NAN;
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    const TAIL: bool = true;
    float_tail!(f64);
}
widen!(f16, f64, f64::NAN, f64::NAN, x => x.to_f64());
widen!(half::bf16, f64, f64::NAN, f64::NAN, x => x.to_f64());
widen!(c32, c64, c64::new(f64::NAN, f64::NAN), c64::new(f64::NAN, f64::NAN),
    x => c64::new(x.re as f64, x.im as f64));
widen!(c64, c64, c64::new(f64::NAN, f64::NAN), c64::new(f64::NAN, f64::NAN), x => x);
widen!(crate::storage::BoolByte, u64, u8::MAX as u64, 0, x => x.0 as u64);
widen!(u8, u64, u8::MAX as u64, 0, x => x as u64);
widen!(u16, u64, u16::MAX as u64, 0, x => x as u64);
widen!(u32, u64, u32::MAX as u64, 0, x => x as u64);
widen!(u64, u64, u64::MAX, 0, x => x);
widen!(i16, i64, i16::MAX as i64, i16::MIN as i64, x => x as i64);
widen!(i32, i64, i32::MAX as i64, i32::MIN as i64, x => x as i64);
widen!(i64, i64, i64::MAX, i64::MIN, x => x);

/// One reduction over elements of type `T`.
trait Fold<T>: Sync {
    type A: Copy + Send + Sync;
    fn id(&self) -> Self::A;
    /// Folds in `x`, the element at position `j` along the reduced dimension (only the index
    /// reductions look at `j`; the others ignore it and the compiler drops it).
    fn step(&self, a: Self::A, x: T, j: u64) -> Self::A;
    fn merge(&self, a: Self::A, b: Self::A) -> Self::A;
    fn lit(&self, a: Self::A) -> Lit;
    /// The position an index reduction found (`None` for an empty run).
    fn index(&self, _a: Self::A) -> Option<u64> {
        None
    }
}

struct Sum;
struct Prod;
struct Min;
struct Max;
struct All;
struct Any;
struct Count;
struct SumNan(f64);
struct ProdNan(f64);

macro_rules! wide_fold {
    ($s:ident, $id:expr, |$me:ident, $a:ident, $x:ident| $step:expr, $merge:ident) => {
        impl<T: Widen> Fold<T> for $s {
            type A = T::W;
            #[inline(always)]
            fn id(&self) -> T::W {
                $id
            }
            #[inline(always)]
            fn step(&self, $a: T::W, $x: T, _: u64) -> T::W {
                let $me = self;
                let _ = $me;
                $step
            }
            #[inline(always)]
            fn merge(&self, a: T::W, b: T::W) -> T::W {
                a.$merge(b)
            }
            fn lit(&self, a: T::W) -> Lit {
                a.lit()
            }
        }
    };
}
wide_fold!(Sum, T::W::ZERO, |s, a, x| a.add(x.widen()), add);
wide_fold!(Prod, T::W::ONE, |s, a, x| a.mul(x.widen()), mul);
wide_fold!(Min, T::MIN_ID, |s, a, x| a.min(x.widen()), min);
wide_fold!(Max, T::MAX_ID, |s, a, x| a.max(x.widen()), max);
wide_fold!(SumNan, T::W::ZERO, |s, a, x| a.add(x.widen().nan_to(s.0)), add);
wide_fold!(ProdNan, T::W::ONE, |s, a, x| a.mul(x.widen().nan_to(s.0)), mul);

macro_rules! bool_fold {
    ($s:ident, $a_ty:ty, $id:expr, |$a:ident, $x:ident| $step:expr, |$p:ident, $q:ident| $merge:expr, $lit:ident) => {
        impl<T: Widen> Fold<T> for $s {
            type A = $a_ty;
            #[inline(always)]
            fn id(&self) -> $a_ty {
                $id
            }
            #[inline(always)]
            fn step(&self, $a: $a_ty, x: T, _: u64) -> $a_ty {
                let $x = x.widen().nonzero();
                $step
            }
            #[inline(always)]
            fn merge(&self, $p: $a_ty, $q: $a_ty) -> $a_ty {
                $merge
            }
            fn lit(&self, a: $a_ty) -> Lit {
                Lit::$lit(a)
            }
        }
    };
}
bool_fold!(All, bool, true, |a, x| a & x, |p, q| p & q, Bool);
bool_fold!(Any, bool, false, |a, x| a | x, |p, q| p | q, Bool);
bool_fold!(Count, u64, 0, |a, x| a + x as u64, |p, q| p + q, Uint);

struct IMin;
struct IMax;

/// Whether `b` beats `a` in an index reduction whose order is `less`: NaN loses to any number;
/// between two NaN, or two equal values, the smaller position wins. The rule does not depend
/// on the order in which partial results meet, so lanes and tasks may combine in any order.
#[inline(always)]
fn beats<W: Acc>(b: (W, u64), a: (W, u64), less: impl Fn(W, W) -> bool) -> bool {
    match (b.0.is_nan(), a.0.is_nan()) {
        (true, true) => b.1 < a.1,
        (true, false) => false,
        (false, true) => true,
        (false, false) => less(b.0, a.0) || (!less(a.0, b.0) && b.1 < a.1),
    }
}

macro_rules! index_fold {
    ($s:ident, $id:ident, |$p:ident, $q:ident| $less:expr) => {
        impl<T: Widen> Fold<T> for $s {
            type A = (T::W, u64);
            #[inline(always)]
            fn id(&self) -> (T::W, u64) {
                (T::$id, u64::MAX)
            }
            #[inline(always)]
            fn step(&self, a: (T::W, u64), x: T, j: u64) -> (T::W, u64) {
                Fold::<T>::merge(self, a, (x.widen(), j))
            }
            #[inline(always)]
            fn merge(&self, a: (T::W, u64), b: (T::W, u64)) -> (T::W, u64) {
                if beats(b, a, |$p: T::W, $q: T::W| $less) {
                    b
                } else {
                    a
                }
            }
            fn lit(&self, a: (T::W, u64)) -> Lit {
                a.0.lit()
            }
            fn index(&self, a: (T::W, u64)) -> Option<u64> {
                (a.1 != u64::MAX).then_some(a.1)
            }
        }
    };
}
index_fold!(IMin, MIN_ID, |p, q| p.less(q));
index_fold!(IMax, MAX_ID, |p, q| q.less(p));

/// Independent accumulators in `fold_run`: enough to hide the latency of a floating-point add
/// (eight SSE or four AVX registers of f64).
const LANES: usize = 16;

/// One chunk of the producer's values: computed, or the two operands of a trailing add,
/// subtract or multiply that the fold computes itself (so that `x * y` is never stored, not
/// even in a chunk buffer).
#[derive(Clone, Copy)]
enum Vals<'a, T> {
    One(&'a [T]),
    Pair(BinOp, &'a [T], &'a [T]),
}

impl<'a, T: Copy> Vals<'a, T> {
    /// The number of values.
    fn len(self) -> usize {
        match self {
            Vals::One(x) => x.len(),
            Vals::Pair(_, x, _) => x.len(),
        }
    }

    /// The values `a..b` of the chunk.
    fn sub(self, a: usize, b: usize) -> Vals<'a, T> {
        match self {
            Vals::One(x) => Vals::One(&x[a..b]),
            Vals::Pair(op, x, y) => Vals::Pair(op, &x[a..b], &y[a..b]),
        }
    }
}

/// Folds `g(xs[i], ys[i])` over a run into one accumulator, in independent lanes so that the
/// loop vectorises and is not bound by the latency of one running total (which also rounds
/// less). Lane `k` takes the elements `k`, `k + LANES`, ... in order, so the result does not
/// depend on the instruction set the loop was compiled for.
#[inline(always)]
fn lanes<T: Copy, F: Fold<T>>(f: &F, j0: u64, xs: &[T], ys: &[T], g: impl Fn(T, T) -> T) -> F::A {
    let n = xs.len().min(ys.len());
    let (xc, yc) = (xs[..n].chunks_exact(LANES), ys[..n].chunks_exact(LANES));
    let (xr, yr) = (xc.remainder(), yc.remainder());
    let mut acc = [f.id(); LANES];
    let mut j = j0;
    for (x, y) in xc.zip(yc) {
        for k in 0..LANES {
            acc[k] = f.step(acc[k], g(x[k], y[k]), j + k as u64);
        }
        j += LANES as u64;
    }
    let mut a = f.id();
    for l in acc {
        a = f.merge(a, l);
    }
    for (&x, &y) in xr.iter().zip(yr) {
        a = f.step(a, g(x, y), j);
        j += 1;
    }
    a
}

/// Folds `g(xs[i], ys[i])`, all at position `j` along the reduced dimension, into `acc[i]`.
#[inline(always)]
fn columns<T: Copy, F: Fold<T>>(
    f: &F,
    acc: &mut [F::A],
    j: u64,
    xs: &[T],
    ys: &[T],
    g: impl Fn(T, T) -> T,
) {
    for ((a, &x), &y) in acc.iter_mut().zip(xs).zip(ys) {
        *a = f.step(*a, g(x, y), j);
    }
}

/// Calls `$body` with `$g` bound to the element function of `$v` (the value itself, or the
/// trailing operation) and `$x`, `$y` to its operand slices, once per operation so that each
/// loop is specialised.
macro_rules! with_vals {
    ($v:expr, |$x:ident, $y:ident, $g:ident| $body:expr) => {
        match $v {
            Vals::One($x) => {
                let $y = $x;
                let $g = |p: T, _: T| p;
                $body
            }
            Vals::Pair(BinOp::Add, $x, $y) => {
                let $g = |p: T, q: T| T::tail(BinOp::Add, p, q);
                $body
            }
            Vals::Pair(BinOp::Sub, $x, $y) => {
                let $g = |p: T, q: T| T::tail(BinOp::Sub, p, q);
                $body
            }
            Vals::Pair(_, $x, $y) => {
                let $g = |p: T, q: T| T::tail(BinOp::Mul, p, q);
                $body
            }
        }
    };
}

/// The AVX2 instantiations of `lanes` and `columns`: the same arithmetic in the same order,
/// twice as wide (f32 to f64 conversion and adds are the inner loop of `sum` and `dot`).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Fold;

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lanes<T: Copy, F: Fold<T>>(
        f: &F,
        j0: u64,
        xs: &[T],
        ys: &[T],
        g: impl Fn(T, T) -> T,
    ) -> F::A {
        super::lanes(f, j0, xs, ys, g)
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn columns<T: Copy, F: Fold<T>>(
        f: &F,
        acc: &mut [F::A],
        j: u64,
        xs: &[T],
        ys: &[T],
        g: impl Fn(T, T) -> T,
    ) {
        super::columns(f, acc, j, xs, ys, g)
    }
}

/// Folds a run of values at positions `j0, j0 + 1, ...` into one accumulator.
fn fold_run<T: Widen, F: Fold<T>>(f: &F, j0: u64, v: Vals<T>) -> F::A {
    with_vals!(v, |xs, ys, g| {
        #[cfg(target_arch = "x86_64")]
        if super::vmath::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 (checked above).
            return unsafe { avx2::lanes(f, j0, xs, ys, g) };
        }
        lanes(f, j0, xs, ys, g)
    })
}

/// Folds values, all at position `j`, element-wise into `acc`.
fn fold_into<T: Widen, F: Fold<T>>(f: &F, acc: &mut [F::A], j: u64, v: Vals<T>) {
    with_vals!(v, |xs, ys, g| {
        #[cfg(target_arch = "x86_64")]
        if super::vmath::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 (checked above).
            return unsafe { avx2::columns(f, acc, j, xs, ys, g) };
        }
        columns(f, acc, j, xs, ys, g)
    })
}

/// The reduction seen as `outer` slabs of `r` rows of `inner` contiguous elements; the
/// output element `(i, o)` reduces the `r` producer elements `i + inner * (j + r * o)`.
#[derive(Clone, Copy)]
struct Shape {
    inner: usize,
    r: usize,
}

/// A unit of parallel work; it yields partials for a contiguous range of output elements.
enum Task {
    /// Producer elements `a..b`, read in order.
    Range { a: usize, b: usize },
    /// Output elements `o * inner + i0 .. o * inner + i1`, over rows `j0..j1`.
    Rows { o: usize, i0: usize, i1: usize, j0: usize, j1: usize },
}

/// The accumulators of every output element, in output order; the values of the program's
/// outputs after the first are written to `stores` (one buffer of the producer's elements
/// each, in output order).
fn drive<T: Widen, F: Fold<T>>(
    p: &Program,
    f: &F,
    dim: Option<usize>,
    stores: &[OutPtr],
) -> Result<Vec<F::A>, Error> {
    let (sh, out_n, tasks) = plan_tasks(p.dims, dim);
    let mut acc = try_filled(out_n, f.id())?;
    if !tasks.is_empty() {
        let prod = Producer::new::<T>(p, stores);
        let run = |t: &Task| run_task(&prod, f, sh, t);
        // each task's partials in its own slot, combined below in task order
        let slots: Vec<OnceLock<(usize, Vec<F::A>)>> =
            tasks.iter().map(|_| OnceLock::new()).collect();
        super::fork::for_each_task(tasks.len(), |t| {
            let _ = slots[t].set(run(&tasks[t]));
        });
        for slot in slots {
            let (start, part) = slot.into_inner().expect("internal error: a task left no partials");
            for (a, b) in acc[start..start + part.len()].iter_mut().zip(part) {
                *a = f.merge(*a, b);
            }
        }
    }
    Ok(acc)
}

/// The shape of reducing `dims` along `dim` (everything for `None`), the number of outputs,
/// and the tasks that cover the producer (none when it is empty). The tasks depend on the
/// shape alone.
fn plan_tasks(dims: crate::dim4::Dim4, dim: Option<usize>) -> (Shape, usize, Vec<Task>) {
    let n = dims.elements() as usize;
    let (inner, r, outer) = match dim {
        None => (1, n, 1),
        Some(d) => {
            let prod = |ks: std::ops::Range<usize>| ks.map(|k| dims[k] as usize).product::<usize>();
            (prod(0..d), dims[d] as usize, prod(d + 1..4))
        }
    };
    let mut tasks = Vec::new();
    if n > 0 {
        if inner >= 2 * CHUNK {
            for o in 0..outer {
                for i0 in (0..inner).step_by(CHUNK) {
                    for j0 in (0..r).step_by(ROWS) {
                        let (i1, j1) = ((i0 + CHUNK).min(inner), (j0 + ROWS).min(r));
                        tasks.push(Task::Rows { o, i0, i1, j0, j1 });
                    }
                }
            }
        } else {
            for a in (0..n).step_by(PIECE) {
                tasks.push(Task::Range { a, b: (a + PIECE).min(n) });
            }
        }
    }
    (Shape { inner, r }, inner * outer, tasks)
}

/// The values of `acc` as elements of type `out`.
fn values<T: Widen, F: Fold<T>>(f: &F, acc: &[F::A], out: DType) -> Result<HostVec, Error> {
    with_dtype!(out, O => Ok(O::wrap(try_mapped(acc, |&a| O::from_lit(f.lit(a)))?)))
}

/// The producer as the tasks evaluate it. When its last step is an add, subtract or multiply
/// of two operands of the (f32 or f64) element type, that step is split off and computed inside
/// the fold loop (`Vals::Pair`): the general evaluator would write it to a chunk buffer through
/// the element-wise kernels, and `sum_all(&(&x * &y))` is the dot product users time.
struct Producer {
    prog: Program,
    last: Vec<usize>,
    tail: Option<BinOp>,
    /// The program's outputs after those the fold reads (one, or the tail's two), each with
    /// the buffer its values are stored in.
    stores: Vec<(usize, OutPtr)>,
    /// Elements per call of `chunk`: `CHUNK` when steps compute temporaries (which should stay
    /// in cache), a whole `PIECE` when every value is read in place from an input, so that
    /// the per-chunk bookkeeping is paid less often.
    step: usize,
}

impl Producer {
    fn new<T: Widen>(p: &Program, stores: &[OutPtr]) -> Producer {
        let out = p.outputs[0];
        let kept = &p.outputs[1..];
        let split = match p.steps[out].instr {
            Instr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b)
                if T::TAIL
                    && out + 1 == p.steps.len()
                    && p.steps[a].dtype == T::DTYPE
                    && p.steps[b].dtype == T::DTYPE =>
            {
                Some((op, a, b))
            }
            _ => None,
        };
        let (prog, tail) = match split {
            Some((op, a, b)) => {
                // (the stored outputs are operations under the root, so none is dropped here)
                let outputs = [a, b].into_iter().chain(kept.iter().copied()).collect();
                (Program { steps: p.steps[..out].to_vec(), outputs, dims: p.dims }, Some(op))
            }
            None => (p.clone(), None),
        };
        let stores = kept.iter().copied().zip(stores.iter().copied()).collect();
        let last = prog.last_uses();
        let in_place = prog.steps.iter().all(|s| match &s.instr {
            Instr::Input(d) => s.dims == prog.dims && d.is_contiguous(s.dims),
            _ => false,
        });
        let step = if in_place { PIECE } else { CHUNK };
        Producer { prog, last, tail, stores, step }
    }

    /// Writes the chunk's values of the stored outputs (elements `start..start + len`).
    fn store(&self, vals: &[Option<Val>], start: usize, len: usize) {
        for &(step, to) in &self.stores {
            let v = vals[step].as_ref().expect("internal error: stored output");
            // SAFETY: `to` is the buffer of this output (`reduce`), and each chunk of the fold
            // covers elements no other chunk covers.
            unsafe { write_chunk(v, self.prog.steps[step].dtype, to, start, len, false) };
        }
    }

    /// Calls `g` with the producer's values for elements `start..start + len`.
    fn chunk<T: Widen, R>(
        &self,
        start: usize,
        len: usize,
        buf: &mut Vec<T>,
        g: impl FnOnce(Vals<T>) -> R,
    ) -> R {
        let vals = eval_steps(&self.prog, &self.last, start, len);
        self.store(&vals, start, len);
        let val = |k: usize| vals[self.prog.outputs[k]].as_ref().expect("internal error: output");
        let spread = |buf: &mut Vec<T>, x: T| {
            buf.clear();
            buf.resize(len, x);
        };
        match self.tail {
            None => match val(0).src::<T>(len) {
                Src::Slice(s) => g(Vals::One(s)),
                Src::Splat(x) => {
                    spread(buf, x);
                    g(Vals::One(buf))
                }
            },
            Some(op) => match (val(0).src::<T>(len), val(1).src::<T>(len)) {
                (Src::Slice(x), Src::Slice(y)) => g(Vals::Pair(op, x, y)),
                (Src::Slice(x), Src::Splat(q)) => {
                    spread(buf, q);
                    g(Vals::Pair(op, x, buf))
                }
                (Src::Splat(p), Src::Slice(y)) => {
                    spread(buf, p);
                    g(Vals::Pair(op, buf, y))
                }
                (Src::Splat(p), Src::Splat(q)) => {
                    spread(buf, T::tail(op, p, q));
                    g(Vals::One(buf))
                }
            },
        }
    }
}

fn run_task<T: Widen, F: Fold<T>>(p: &Producer, f: &F, sh: Shape, t: &Task) -> (usize, Vec<F::A>) {
    let Shape { inner, r } = sh;
    let slab = inner * r;
    let mut buf: Vec<T> = Vec::with_capacity(CHUNK);
    match *t {
        Task::Rows { o, i0, i1, j0, j1 } => {
            let mut acc = vec![f.id(); i1 - i0];
            for j in j0..j1 {
                let start = o * slab + j * inner + i0;
                p.chunk(start, i1 - i0, &mut buf, |v: Vals<T>| fold_into(f, &mut acc, j as u64, v));
            }
            (o * inner + i0, acc)
        }
        Task::Range { a, b } => {
            let (o_first, o_last) = (a / slab, (b - 1) / slab);
            let mut acc = vec![f.id(); (o_last - o_first + 1) * inner];
            for c in (a..b).step_by(p.step) {
                let len = p.step.min(b - c);
                p.chunk(c, len, &mut buf, |v: Vals<T>| fold_range(f, sh, &mut acc, o_first, c, v));
            }
            (o_first * inner, acc)
        }
    }
}

/// Folds the values `v` of producer elements `c..` (a chunk of a `Task::Range` whose first
/// slab is `o_first`) into the task's accumulators `acc`.
fn fold_range<T: Widen, F: Fold<T>>(
    f: &F,
    sh: Shape,
    acc: &mut [F::A],
    o_first: usize,
    c: usize,
    v: Vals<T>,
) {
    let Shape { inner, r } = sh;
    let slab = inner * r;
    let len = v.len();
    let mut q = c;
    while q < c + len {
        let o = q / slab;
        if inner == 1 {
            // a whole run along the reduced dimension folds to one value
            let end = ((o + 1) * slab).min(c + len);
            let k = o - o_first;
            let run = fold_run(f, (q - o * slab) as u64, v.sub(q - c, end - c));
            acc[k] = f.merge(acc[k], run);
            q = end;
        } else {
            let i = q % inner;
            let end = (q + inner - i).min(c + len);
            let base = (o - o_first) * inner + i;
            let j = ((q - o * slab) / inner) as u64;
            fold_into(f, &mut acc[base..base + end - q], j, v.sub(q - c, end - c));
            q = end;
        }
    }
}

// The accumulators are exercised through every element type by tests/algorithms/reduce.rs;
// these pin the two rules that are easy to get wrong.

impl crate::backend::reduce::Reduce for super::Cpu {
    fn reduce_dim(
        &self,
        node: &Arc<Node>,
        op: Reduction,
        dim: usize,
        out: DType,
    ) -> Result<Buffer, Error> {
        Ok(Buffer::host(reduce_holding(node, op, Some(dim), out)?))
    }

    fn reduce_dim_siblings(
        &self,
        roots: &[Arc<Node>],
        ops: &[(Reduction, DType)],
        dim: usize,
    ) -> Result<Vec<Buffer>, Error> {
        let (prog, held) = sibling_program(roots)?;
        let (reduced, stored) = siblings::reduce_many(&prog, ops, dim)?;
        for (n, h) in held.iter().zip(stored) {
            n.set_ready(Data::dense(Buffer::host(h), n.dims));
        }
        Ok(reduced.into_iter().map(Buffer::host).collect())
    }

    fn reduce_all(&self, node: &Arc<Node>, op: Reduction, out: DType) -> Result<HostVec, Error> {
        reduce_holding(node, op, None, out)
    }

    fn reduce_dim_index(
        &self,
        node: &Arc<Node>,
        op: IndexOp,
        dim: usize,
    ) -> Result<(Buffer, Buffer), Error> {
        let (v, i) = reduce_index(&program_for(std::slice::from_ref(node))?, op, Some(dim))?;
        Ok((Buffer::host(v), Buffer::host(i)))
    }

    fn reduce_all_index(&self, node: &Arc<Node>, op: IndexOp) -> Result<(HostVec, u32), Error> {
        let (v, i) = reduce_index(&program_for(std::slice::from_ref(node))?, op, None)?;
        Ok((v, i.as_slice::<u32>()[0]))
    }
}

/// A reduction of `node`: the lazy operations under it that may be read again are stored
/// while it folds, and become ready (see `schedule::reduction_program`).
fn reduce_holding(
    node: &Arc<Node>,
    op: Reduction,
    dim: Option<usize>,
    out: DType,
) -> Result<HostVec, Error> {
    let (prog, held) = reduction_program(node)?;
    let (reduced, stored) = reduce(&prog, op, dim, out)?;
    for (n, h) in held.iter().zip(stored) {
        n.set_ready(Data::dense(Buffer::host(h), n.dims));
    }
    Ok(reduced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(l: Lit) -> f64 {
        match l {
            Lit::Real(x) => x,
            other => panic!("not a real: {other:?}"),
        }
    }

    #[test]
    fn min_max_ignore_nan_unless_all_are() {
        let xs = [f32::NAN, 2.0, -1.0, f32::NAN];
        assert_eq!(real(Fold::<f32>::lit(&Min, fold_run(&Min, 0, Vals::One(&xs[..])))), -1.0);
        assert_eq!(real(Fold::<f32>::lit(&Max, fold_run(&Max, 0, Vals::One(&xs[..])))), 2.0);
        let all_nan = [f32::NAN; 3];
        assert!(real(Fold::<f32>::lit(&Max, fold_run(&Max, 0, Vals::One(&all_nan[..])))).is_nan());
    }

    #[test]
    fn integer_sums_wrap_in_the_output_type() {
        let xs = [i32::MAX, 1];
        let s = fold_run(&Sum, 0, Vals::One(&xs[..]));
        assert_eq!(i32::from_lit(Fold::<i32>::lit(&Sum, s)), i32::MIN);
    }
}
