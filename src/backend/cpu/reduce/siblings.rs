//! Several reductions along one dimension in one fold: the sibling reductions that
//! `backend::siblings` groups (n-body's three sums over one pair expression, a sum beside a
//! maximum of the same input).
//!
//! The producer is a `Program` whose first outputs are the reduced trees, one per reduction;
//! each chunk of it is evaluated once, so the steps the trees share are computed once per
//! element, and each reduction then folds its own output's values with its own accumulator
//! type. The work is cut into the same shape-only tasks as a single reduction, and every
//! reduction's partials are combined in task order, so each result has the bits the same
//! reduction has when it runs alone.
//!
//! The reductions differ in element type and fold, so each is a [`Member`] behind a trait
//! object, called once per chunk (not per element): the inner loops are the single
//! reduction's own, specialised as they are there.

use std::any::Any;
use std::sync::OnceLock;

use super::{fold_into, fold_range, plan_tasks, values, Fold, Shape, Task, Vals, Widen};
use super::{All, Any as AnyTrue, Count, Max, Min, Prod, ProdNan, Sum, SumNan};
use crate::backend::cpu::eval::{
    eval_steps, output_buffers, set_written, write_chunk, OutPtr, Val,
};
use crate::backend::cpu::kernels::Src;
use crate::backend::reduce::Reduction;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Program;
use crate::storage::{try_filled, with_dtype, HostVec};

/// Accumulators of one reduction over a task's outputs (a `Vec` of its fold's type).
type Partials = Box<dyn Any + Send + Sync>;

/// One reduction of the group, folding the values of one output of the program.
trait Member: Sync {
    /// Accumulators for `len` outputs, each the fold's identity.
    fn start(&self, len: usize) -> Partials;
    /// Folds `v` (`len` values, all at row `j`) element-wise into `acc` (a `Task::Rows`).
    fn fold_rows(&self, acc: &mut Partials, v: &Val, len: usize, j: u64);
    /// Folds `v` (`len` values of producer elements `c..`) into `acc` (a `Task::Range` whose
    /// first slab is `o_first`).
    fn fold_range(
        &self,
        acc: &mut Partials,
        v: &Val,
        len: usize,
        sh: Shape,
        o_first: usize,
        c: usize,
    );
    /// The results, from the partials of every task in task order (each with the first output
    /// it covers), as elements of the output type.
    fn finish(&self, out_n: usize, parts: Vec<(usize, Partials)>) -> Result<HostVec, Error>;
}

/// A reduction `f` over elements of type `T`, into `out`.
struct Typed<T, F> {
    f: F,
    out: DType,
    _t: std::marker::PhantomData<fn() -> T>,
}

/// The values of `v` as a slice of `T` (a splat spread over `buf`).
fn slice_of<'a, T: Widen>(v: &'a Val, len: usize, buf: &'a mut Vec<T>) -> &'a [T] {
    match v.src::<T>(len) {
        Src::Slice(s) => s,
        Src::Splat(x) => {
            buf.clear();
            buf.resize(len, x);
            buf
        }
    }
}

impl<T: Widen, F: Fold<T> + 'static> Member for Typed<T, F>
where
    F::A: 'static,
{
    fn start(&self, len: usize) -> Partials {
        Box::new(vec![self.f.id(); len])
    }

    fn fold_rows(&self, acc: &mut Partials, v: &Val, len: usize, j: u64) {
        let acc = acc.downcast_mut::<Vec<F::A>>().expect("internal error: partials");
        let mut buf = Vec::new();
        fold_into(&self.f, acc, j, Vals::One(slice_of::<T>(v, len, &mut buf)));
    }

    fn fold_range(
        &self,
        acc: &mut Partials,
        v: &Val,
        len: usize,
        sh: Shape,
        o_first: usize,
        c: usize,
    ) {
        let acc = acc.downcast_mut::<Vec<F::A>>().expect("internal error: partials");
        let mut buf = Vec::new();
        fold_range(&self.f, sh, acc, o_first, c, Vals::One(slice_of::<T>(v, len, &mut buf)));
    }

    fn finish(&self, out_n: usize, parts: Vec<(usize, Partials)>) -> Result<HostVec, Error> {
        let mut total = try_filled(out_n, self.f.id())?;
        for (start, part) in parts {
            let part = part.downcast::<Vec<F::A>>().expect("internal error: partials");
            for (a, b) in total[start..start + part.len()].iter_mut().zip(*part) {
                *a = self.f.merge(*a, b);
            }
        }
        values::<T, F>(&self.f, &total, self.out)
    }
}

/// The member for reduction `op` of elements of type `t` into `out`.
fn member(op: Reduction, t: DType, out: DType) -> Box<dyn Member> {
    fn typed<T: Widen, F: Fold<T> + 'static>(f: F, out: DType) -> Box<dyn Member>
    where
        F::A: 'static,
    {
        Box::new(Typed::<T, F> { f, out, _t: std::marker::PhantomData })
    }
    with_dtype!(t, T => match op {
        Reduction::Sum => typed::<T, _>(Sum, out),
        Reduction::Product => typed::<T, _>(Prod, out),
        Reduction::Min => typed::<T, _>(Min, out),
        Reduction::Max => typed::<T, _>(Max, out),
        Reduction::AllTrue => typed::<T, _>(All, out),
        Reduction::AnyTrue => typed::<T, _>(AnyTrue, out),
        Reduction::Count => typed::<T, _>(Count, out),
        Reduction::SumNan(v) => typed::<T, _>(SumNan(v), out),
        Reduction::ProductNan(v) => typed::<T, _>(ProdNan(v), out),
    })
}

/// Reduces outputs `0..ops.len()` of `p` along `dim`, output `k` by `ops[k]` (the reduction
/// and its output type), in one fold. The program's further outputs (operations read again
/// later, see `backend::schedule::sibling_program`) are stored as the fold computes them.
/// Returns the reduced values in order, and the stored outputs in order, each contiguous.
pub(crate) fn reduce_many(
    p: &Program,
    ops: &[(Reduction, DType)],
    dim: usize,
) -> Result<(Vec<HostVec>, Vec<HostVec>), Error> {
    let m = ops.len();
    let n = p.dims.elements() as usize;
    let (mut stored, to) = output_buffers(p, &p.outputs[m..], n)?;
    let members: Vec<Box<dyn Member>> = ops
        .iter()
        .zip(&p.outputs)
        .map(|(&(op, out), &o)| member(op, p.steps[o].dtype, out))
        .collect();
    let (sh, out_n, tasks) = plan_tasks(p.dims, Some(dim));
    let last = p.last_uses();
    let stores: Vec<(usize, OutPtr)> = p.outputs[m..].iter().copied().zip(to).collect();
    // each task's partials (of every member) in its own slot, combined in task order
    let slots: Vec<OnceLock<(usize, Vec<Partials>)>> =
        tasks.iter().map(|_| OnceLock::new()).collect();
    let chunk = |start: usize, len: usize, fold: &mut dyn FnMut(&[Option<Val>])| {
        let vals = eval_steps(p, &last, start, len);
        for &(step, to) in &stores {
            let v = vals[step].as_ref().expect("internal error: stored output");
            // SAFETY: `to` is the buffer of this output, and each chunk of the fold covers
            // elements no other chunk covers.
            unsafe { write_chunk(v, p.steps[step].dtype, to, start, len, false) };
        }
        fold(&vals);
    };
    let run = |t: &Task| -> (usize, Vec<Partials>) {
        let Shape { inner, r } = sh;
        match *t {
            Task::Rows { o, i0, i1, j0, j1 } => {
                let mut accs: Vec<Partials> = members.iter().map(|mb| mb.start(i1 - i0)).collect();
                for j in j0..j1 {
                    let start = o * inner * r + j * inner + i0;
                    chunk(start, i1 - i0, &mut |vals| {
                        for (k, (mb, acc)) in members.iter().zip(&mut accs).enumerate() {
                            let v = vals[p.outputs[k]].as_ref().expect("internal error: output");
                            mb.fold_rows(acc, v, i1 - i0, j as u64);
                        }
                    });
                }
                (o * inner + i0, accs)
            }
            Task::Range { a, b } => {
                let slab = inner * r;
                let (o_first, o_last) = (a / slab, (b - 1) / slab);
                let len_out = (o_last - o_first + 1) * inner;
                let mut accs: Vec<Partials> = members.iter().map(|mb| mb.start(len_out)).collect();
                for c in (a..b).step_by(super::CHUNK) {
                    let len = super::CHUNK.min(b - c);
                    chunk(c, len, &mut |vals| {
                        for (k, (mb, acc)) in members.iter().zip(&mut accs).enumerate() {
                            let v = vals[p.outputs[k]].as_ref().expect("internal error: output");
                            mb.fold_range(acc, v, len, sh, o_first, c);
                        }
                    });
                }
                (o_first * inner, accs)
            }
        }
    };
    crate::backend::cpu::fork::for_each_task(tasks.len(), |t| {
        let _ = slots[t].set(run(&tasks[t]));
    });
    let mut per_member: Vec<Vec<(usize, Partials)>> = (0..m).map(|_| Vec::new()).collect();
    for slot in slots {
        let (start, accs) = slot.into_inner().expect("internal error: a task left no partials");
        for (k, acc) in accs.into_iter().enumerate() {
            per_member[k].push((start, acc));
        }
    }
    let reduced = members
        .iter()
        .zip(per_member)
        .map(|(mb, parts)| mb.finish(out_n, parts))
        .collect::<Result<Vec<_>, Error>>()?;
    // SAFETY: the fold visits every element of the producer exactly once, and every visit
    // stored its values of each stored output.
    unsafe { set_written(&mut stored, n) };
    Ok((reduced, stored))
}
