//! Fused evaluation of a program on the CPU: the output is cut into chunks that stay in cache,
//! every step of the program is applied to one chunk before moving to the next, and chunks run
//! in parallel (`fork.rs`: the caller and rayon's pool). No intermediate result ever goes to
//! main memory.

use std::mem::MaybeUninit;

use super::kernels::{select, CpuMath, Src};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Instr, Program};
use crate::storage::{convert, with_dtype, with_vec, Element, HostVec};

use crate::backend::Buffer;

/// Elements per chunk of the other chunked CPU loops: evaluation into views (`write_into.rs`)
/// and index copies.
pub(crate) const CHUNK: usize = 4096;

/// Bytes per chunk of the widest value in a program: the few temporaries alive at once fit in
/// L2. Larger chunks mean fewer passes' start-up costs per element; 64 KiB measured 3% faster
/// than 16 KiB on `chain_f32` and `axpy_f32` (2^24 f32, two cores).
const CHUNK_BYTES: usize = 64 << 10;

/// Outputs of at least this many bytes in all are written with streaming stores
/// (`stream.rs`): they do not fit in the cache, so the next reader would not find them there,
/// and streaming saves reading each line of the destination before writing it.
const STREAMING_BYTES: usize = 16 << 20;

/// The value of one step over one chunk.
pub(crate) enum Val<'a> {
    Owned(HostVec),
    /// `len` elements of a ready buffer starting at `start`, read in place.
    View(&'a HostVec, usize),
    /// One value for the whole chunk.
    Splat(HostVec),
}

impl Val<'_> {
    pub(crate) fn src<T: Element>(&self, len: usize) -> Src<'_, T> {
        match self {
            Val::Owned(h) => Src::Slice(h.as_slice::<T>()),
            Val::View(h, start) => Src::Slice(&h.as_slice::<T>()[*start..*start + len]),
            Val::Splat(h) => Src::Splat(h.as_slice::<T>()[0]),
        }
    }
    fn is_splat(&self) -> bool {
        matches!(self, Val::Splat(_))
    }
}

/// Evaluates a program, returning one contiguous vector per output, or
/// [`Error::OutOfMemory`] when the outputs do not fit in memory.
pub(crate) fn run(p: &Program) -> Result<Vec<HostVec>, Error> {
    let n = p.dims.elements() as usize;
    let (mut outs, ptrs) = output_buffers(p, &p.outputs, n)?;
    let last = p.last_uses();
    let widest = p.steps.iter().map(|s| s.dtype.size()).max().unwrap_or(1);
    let chunk = CHUNK_BYTES / widest;
    let nchunks = n.div_ceil(chunk);
    let out_bytes: usize = p.outputs.iter().map(|&o| p.steps[o].dtype.size() * n).sum();
    let streaming = out_bytes >= STREAMING_BYTES;
    let work = |c: usize| {
        let start = c * chunk;
        let len = chunk.min(n - start);
        eval_chunk(p, &last, start, len, &ptrs, streaming);
    };
    super::fork::for_each_task(nchunks, work);
    // SAFETY: every chunk wrote all of its elements of every output above.
    unsafe { set_written(&mut outs, n) };
    Ok(outs)
}

/// A new buffer of `n` elements, not yet written, for each of the program's `steps` (of its
/// type), and where each starts.
pub(crate) fn output_buffers(
    p: &Program,
    steps: &[usize],
    n: usize,
) -> Result<(Vec<HostVec>, Vec<OutPtr>), Error> {
    let mut outs: Vec<HostVec> = steps
        .iter()
        .map(|&o| {
            with_dtype!(p.steps[o].dtype, T => Ok(T::wrap(crate::storage::alloc_uninit::<T>(n)?)))
        })
        .collect::<Result<_, Error>>()?;
    let ptrs = outs
        .iter_mut()
        .map(|h| with_vec!(h, v, T => OutPtr(v.spare_capacity_mut().as_mut_ptr() as *mut u8)))
        .collect();
    Ok((outs, ptrs))
}

/// Sets the length of each buffer of [`output_buffers`] to `n`.
///
/// # Safety
/// All `n` elements of every buffer were written.
pub(crate) unsafe fn set_written(outs: &mut [HostVec], n: usize) {
    for h in outs {
        // SAFETY: the caller's contract; `n` is within the capacity `output_buffers` gave.
        with_vec!(h, v, T => unsafe { v.set_len(n) });
    }
}

/// Writes a step's value over elements `start..start + len` (of type `dtype`) into an
/// output buffer, with streaming stores if `streaming`.
///
/// # Safety
/// `to` is a buffer of [`output_buffers`] for a step of type `dtype`, of at least
/// `start + len` elements, and no other thread writes this range meanwhile.
pub(crate) unsafe fn write_chunk(
    v: &Val,
    dtype: crate::dtype::DType,
    to: OutPtr,
    start: usize,
    len: usize,
    streaming: bool,
) {
    with_dtype!(dtype, T => {
        // SAFETY: the caller's contract.
        let dst = unsafe {
            std::slice::from_raw_parts_mut((to.0 as *mut MaybeUninit<T>).add(start), len)
        };
        match v.src::<T>(len) {
            Src::Slice(s) if streaming => super::stream::copy(s, dst),
            Src::Slice(s) => {
                for (d, &x) in dst.iter_mut().zip(s) {
                    d.write(x);
                }
            }
            Src::Splat(x) => {
                for d in dst.iter_mut() {
                    d.write(x);
                }
            }
        }
    });
}

/// Base pointer of an output's allocation; chunks write disjoint ranges of it.
#[derive(Clone, Copy)]
pub(crate) struct OutPtr(*mut u8);
// SAFETY: the pointer is only used to write disjoint element ranges from different threads.
unsafe impl Send for OutPtr {}
// SAFETY: as above; chunks share the pointer, never an element.
unsafe impl Sync for OutPtr {}

fn eval_chunk(
    p: &Program,
    last: &[usize],
    start: usize,
    len: usize,
    outs: &[OutPtr],
    streaming: bool,
) {
    let vals = eval_steps(p, last, start, len);
    for (o, &idx) in p.outputs.iter().enumerate() {
        let v = vals[idx].as_ref().expect("internal error: output missing");
        // SAFETY: `outs[o]` is the buffer of output `o` (`run`), and no other chunk writes
        // this range.
        unsafe { write_chunk(v, p.steps[idx].dtype, outs[o], start, len, streaming) };
    }
}

/// Evaluates every step of a program over elements `start..start + len`; the values of the
/// outputs are kept, the others are dropped after their last use.
pub(crate) fn eval_steps<'a>(
    p: &'a Program,
    last: &[usize],
    start: usize,
    len: usize,
) -> Vec<Option<Val<'a>>> {
    let mut vals: Vec<Option<Val<'a>>> = (0..p.steps.len()).map(|_| None).collect();
    for (i, step) in p.steps.iter().enumerate() {
        let get = |k: usize| vals[k].as_ref().expect("internal error: operand freed early");
        let v = match &step.instr {
            Instr::Input(d) => load(d, step.dims, p.dims, start, len),
            Instr::Mapped(d, m) => super::gather::load_mapped(d, m, step.dims, p.dims, start, len),
            Instr::Scalar(h) => Val::Splat(h.clone()),
            Instr::Range(dim) => {
                index_values(step.dtype, step.dims, p.dims, start, len, |c| c[*dim as usize])
            }
            Instr::Iota(b) => {
                let b: [usize; 4] = std::array::from_fn(|k| b[k] as usize);
                index_values(step.dtype, step.dims, p.dims, start, len, move |c| {
                    c[0] % b[0] + b[0] * (c[1] % b[1] + b[1] * (c[2] % b[2] + b[2] * (c[3] % b[3])))
                })
            }
            Instr::Random(d) => {
                // each element's index in the leaf's own (column-major) shape, then its number
                let strides = step.dims.strides();
                let at = |c: [usize; 4]| (0..4).map(|k| c[k] * strides[k] as usize).sum();
                let numbers = |h: &HostVec| super::random::at_indices(d, step.dtype, h.as_slice());
                match index_values(crate::dtype::DType::U64, step.dims, p.dims, start, len, at) {
                    Val::Splat(h) => Val::Splat(numbers(&h)),
                    Val::Owned(h) => Val::Owned(numbers(&h)),
                    Val::View(..) => unreachable!("internal error: indices read in place"),
                }
            }
            Instr::Unary(op, a) => {
                let t = p.steps[*a].dtype;
                let a = get(*a);
                with_dtype!(t, T => {
                    match a.src::<T>(len) {
                        Src::Slice(s) => Val::Owned(T::unary(*op, s)),
                        Src::Splat(x) => Val::Splat(T::unary(*op, &[x])),
                    }
                })
            }
            Instr::Binary(op, a, b) => {
                let t = p.steps[*a].dtype;
                let (va, vb) = (get(*a), get(*b));
                let out = with_dtype!(t, T => T::binary(*op, va.src::<T>(len), vb.src::<T>(len)));
                if va.is_splat() && vb.is_splat() {
                    Val::Splat(out)
                } else {
                    Val::Owned(out)
                }
            }
            Instr::Cast(a) => {
                let va = get(*a);
                let from = p.steps[*a].dtype;
                let out = with_dtype!(from, S => with_dtype!(step.dtype, D => {
                    match va.src::<S>(len) {
                        Src::Slice(s) => D::wrap(crate::storage::cast_slice::<S, D>(s)),
                        Src::Splat(x) => D::wrap(vec![convert::<S, D>(x)]),
                    }
                }));
                if va.is_splat() {
                    Val::Splat(out)
                } else {
                    Val::Owned(out)
                }
            }
            Instr::Select(c, a, b) => {
                let (vc, va, vb) = (get(*c), get(*a), get(*b));
                if vc.is_splat() && va.is_splat() && vb.is_splat() {
                    with_dtype!(step.dtype, T => Val::Splat(T::wrap(select(
                        vc.src::<crate::storage::BoolByte>(1), va.src::<T>(1), vb.src::<T>(1), 1))))
                } else {
                    with_dtype!(step.dtype, T => Val::Owned(T::wrap(select(
                        vc.src::<crate::storage::BoolByte>(len), va.src::<T>(len), vb.src::<T>(len), len))))
                }
            }
        };
        vals[i] = Some(v);
        for k in step.instr.operands() {
            if last[k] == i {
                vals[k] = None;
            }
        }
    }
    vals
}

/// The coordinates of element `start` when output elements `start..start + len` lie inside
/// one run along dimension 0 (one column), where an input can often be read in place; `None`
/// when the chunk crosses runs.
pub(crate) fn inside_one_run(out: Dim4, start: usize, len: usize) -> Option<[usize; 4]> {
    let d0 = out[0] as usize;
    (start % d0 + len <= d0).then(|| coords(start, out))
}

/// Coordinates of linear index `i` in `dims`.
fn coords(mut i: usize, dims: Dim4) -> [usize; 4] {
    let mut c = [0; 4];
    for (d, cd) in c.iter_mut().enumerate() {
        let n = dims[d] as usize;
        *cd = i % n;
        i /= n;
    }
    c
}

/// Calls `f(first_position, run_length, coords)` for the runs along dimension 0 that cover
/// output elements `start..start+len`.
pub(crate) fn for_runs(
    out: Dim4,
    start: usize,
    len: usize,
    mut f: impl FnMut(usize, usize, [usize; 4]),
) {
    let mut c = coords(start, out);
    let mut done = 0;
    let d0 = out[0] as usize;
    while done < len {
        let run = (d0 - c[0]).min(len - done);
        f(done, run, c);
        done += run;
        c[0] = 0;
        for d in 1..4 {
            c[d] += 1;
            if c[d] < out[d] as usize {
                break;
            }
            c[d] = 0;
        }
    }
}

/// Reads the elements of a ready input for an output chunk, in place when it is laid out like
/// the output.
fn load<'a>(d: &'a Data, dims: Dim4, out: Dim4, start: usize, len: usize) -> Val<'a> {
    let Buffer::Host(h) = d.buffer() else {
        unreachable!("internal error: device buffer in a CPU program")
    };
    if dims.elements() == 1 {
        return Val::Splat(h.sub(d.offset..d.offset + 1));
    }
    if dims == out && d.is_contiguous(dims) {
        return Val::View(h, d.offset + start);
    }
    let es: [i64; 4] = std::array::from_fn(|k| if dims[k] == 1 { 0 } else { d.strides[k] });
    let base_of =
        |c: [usize; 4]| d.offset as i64 + (1..4).map(|k| c[k] as i64 * es[k]).sum::<i64>();
    // A chunk inside one run along dimension 0 (the usual case: chunks are a few thousand
    // elements, columns longer) reads a broadcast or strided input in place where it can: one
    // value repeated, or a contiguous piece of the buffer.
    if let Some(c) = inside_one_run(out, start, len) {
        let at = base_of(c) + c[0] as i64 * es[0];
        match es[0] {
            0 => return Val::Splat(h.sub(at as usize..at as usize + 1)),
            1 => return Val::View(h, at as usize),
            _ => {}
        }
    }
    with_vec!(h, v, T => {
        let mut o: Vec<T> = Vec::with_capacity(len);
        for_runs(out, start, len, |_, run, c| {
            let at = base_of(c) + c[0] as i64 * es[0];
            match es[0] {
                0 => o.resize(o.len() + run, v[at as usize]),
                1 => o.extend_from_slice(&v[at as usize..at as usize + run]),
                step => o.extend((0..run as i64).map(|j| v[(at + j * step) as usize])),
            }
        });
        Val::Owned(T::wrap(o))
    })
}

/// Values computed from coordinates (for `range` and `iota`); a dimension along which the node
/// is broadcast reads as coordinate 0.
fn index_values(
    dtype: crate::dtype::DType,
    dims: Dim4,
    out: Dim4,
    start: usize,
    len: usize,
    f: impl Fn([usize; 4]) -> usize,
) -> Val<'static> {
    if let Some(mut c) = inside_one_run(out, start, len).filter(|_| dims[0] == 1) {
        // one run, broadcast along it: one value for the chunk
        for k in 0..4 {
            if dims[k] == 1 {
                c[k] = 0;
            }
        }
        let v = f(c) as u64;
        return Val::Splat(with_dtype!(dtype, T => T::wrap(vec![convert::<u64, T>(v)])));
    }
    let mut idx: Vec<u64> = Vec::with_capacity(len);
    for_runs(out, start, len, |_, run, c| {
        let mut cc = c;
        for k in 1..4 {
            if dims[k] == 1 {
                cc[k] = 0;
            }
        }
        if dims[0] == 1 {
            // broadcast along the run: one value
            cc[0] = 0;
            idx.resize(idx.len() + run, f(cc) as u64);
        } else {
            idx.extend((0..run).map(|j| {
                let mut e = cc;
                e[0] += j;
                f(e) as u64
            }));
        }
    });
    Val::Owned(with_dtype!(dtype, T => T::wrap(crate::storage::cast_slice::<u64, T>(&idx))))
}

impl crate::backend::evaluate::Evaluate for super::Cpu {
    fn run(&self, p: &Program) -> Result<Vec<Buffer>, Error> {
        Ok(run(p)?.into_iter().map(Buffer::host).collect())
    }

    fn upload(&self, h: HostVec) -> Result<Buffer, Error> {
        Ok(Buffer::host(h))
    }

    fn download_dense(&self, d: &Data, n: usize, _dtype: DType) -> Result<HostVec, Error> {
        let Buffer::Host(h) = d.buffer() else {
            unreachable!("internal error: device data read as host data")
        };
        h.try_sub(d.offset..d.offset + n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::program::Step;
    use crate::random::stream::{Distribution, Draw, Generator};

    /// A random leaf broadcast along the second dimension of the program (strided) and one of
    /// the program's own shape (linear), added: each element holds the numbers of its indices
    /// in the two requests, in chunks that start inside rows.
    #[test]
    fn random_leaves_are_read_at_their_own_indices() {
        let dims = Dim4::new(&[37, 5, 1, 1]);
        let column = Dim4::new(&[37, 1, 1, 1]);
        let a = Draw::new(Generator::Philox, 0, 11, 3, Distribution::Normal);
        let b = Draw::new(Generator::Threefry, 0, 12, 0, Distribution::Uniform);
        let step = |instr, dims| Step { instr, dtype: crate::dtype::DType::F32, dims };
        let p = Program {
            steps: vec![
                step(Instr::Random(a), column),
                step(Instr::Random(b), dims),
                step(Instr::Binary(crate::jit::BinOp::Add, 0, 1), dims),
            ],
            outputs: vec![2],
            dims,
        };
        let last = p.last_uses();
        let (col, full) = (
            super::super::random::at_indices(
                &a,
                crate::dtype::DType::F32,
                &(0..37).collect::<Vec<_>>(),
            ),
            super::super::random::at_indices(
                &b,
                crate::dtype::DType::F32,
                &(0..185).collect::<Vec<_>>(),
            ),
        );
        let (col, full) = (col.as_slice::<f32>().to_vec(), full.as_slice::<f32>().to_vec());
        for (start, len) in [(0, 185), (30, 20), (74, 1), (100, 85)] {
            let vals = eval_steps(&p, &last, start, len);
            let got = vals[2].as_ref().unwrap().src::<f32>(len);
            let Src::Slice(got) = got else { panic!("one value for a chunk of {len}") };
            for (k, &g) in got.iter().enumerate() {
                let e = start + k;
                assert_eq!(g, col[e % 37] + full[e], "element {e}");
            }
        }
    }
}
