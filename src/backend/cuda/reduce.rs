//! Running a reduction on a CUDA device: choose the kernel's layout from the shape, find or
//! compile it (`codegen::reduce`), size the grid from the device and the kernel's occupancy,
//! and launch it on the device's emberfire stream. One launch per reduction.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::codegen;
use super::codegen::args::{aligned_for, linear_inputs, push_coord_args, push_step_args};
use super::codegen::reduce::{self as rc, Fold, Layout, BLOCKS_PER_SM};
use super::kernel::{Family, KernelArgs, KernelFn, KernelKey};
use super::launch::order_inputs;
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::backend::reduce::{IndexOp, Reduction};
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::{Data, Instr, Node, Program};
use crate::storage::HostVec;
use crate::sync::lock;

/// Threads per block.
const THREADS: u32 = 256;
/// Lanes of a warp.
const WARP: u32 = 32;

/// Wide loads each thread should make at least, per split, before splitting a row further
/// pays for the partials.
const MIN_LOADS: usize = 8;

/// The producer's elements as `outer` slabs of `r` rows of `inner` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Extent {
    pub inner: usize,
    pub r: usize,
    pub outer: usize,
}

impl Extent {
    /// The extent of reducing `dims` along `dim`, or over everything for `None`.
    pub(crate) fn of(dims: crate::dim4::Dim4, dim: Option<usize>) -> Extent {
        match dim {
            None => Extent { inner: 1, r: dims.elements() as usize, outer: 1 },
            Some(d) => {
                let prod = |ks: std::ops::Range<usize>| ks.map(|k| dims[k] as usize).product();
                Extent { inner: prod(0..d), r: dims[d] as usize, outer: prod(d + 1..4) }
            }
        }
    }
}

/// How the work is laid out: the compiled part (`layout`) and the launch-time part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Grid {
    pub layout: Layout,
    /// Output tiles per slab (`ceil(inner / (tx * vector))` in column mode, 1 in row mode).
    pub tiles: usize,
    /// Groups of `tz` tiles: `ceil(tiles * outer / tz)`.
    pub groups: usize,
    /// Blocks along the reduced dimension, and rows each covers.
    pub splits: usize,
    pub jchunk: usize,
    /// Blocks along x (the groups, or fewer with a grid-stride loop when not split).
    pub blocks: usize,
}

/// How many element positions a thread's loop takes at once in a reduction of `p`.
///
/// Unrolling keeps several wide loads of a thread in flight, which a memory-bound body needs
/// to reach the copy bandwidth; it also repeats the body in the kernel, and NVRTC's compile
/// time grows with it (a reduction of two random leaves, `pi`'s, compiled in 336 ms unrolled
/// four times and 181 ms not unrolled; a product of normals 372, 283 and 205 ms unrolled four
/// times, twice and not at all: times of the compiler alone, which is most of a first run
/// with an empty kernel cache). A body that loads nothing (random numbers, ranges, scalars)
/// has no loads to overlap: its arithmetic is overlapped by the other warps of the device, so
/// it is not unrolled. Other bodies are unrolled less as they grow.
pub(crate) fn choose_unroll(p: &Program) -> u32 {
    let loads = p.steps.iter().any(|s| matches!(s.instr, Instr::Input(_) | Instr::Mapped(..)));
    match p.steps.len() {
        _ if !loads => 1,
        0..=8 => 4,
        9..=24 => 2,
        _ => 1,
    }
}

/// Chooses the thread layout (everything but the split) for extent `e`, given the widest
/// load `vector` the inputs allow (1 when some input is strided or coordinates are needed),
/// the element positions a thread takes at once (`choose_unroll`) and the number of threads
/// the device holds at once.
pub(crate) fn choose_layout(e: Extent, vector: u32, unroll: u32, resident: usize) -> Layout {
    if e.inner == 1 {
        // wide loads along the row need every row (and every split) to start aligned
        let w = if vector > 1 && (e.outer == 1 || e.r.is_multiple_of(vector as usize)) {
            vector
        } else {
            1
        };
        let pieces = e.r.div_ceil(w as usize).max(1);
        let mut ty = (pieces.next_power_of_two() as u32).min(WARP);
        // more threads per row while the rows alone would leave most of the device idle
        while ty < THREADS
            && e.outer * (ty as usize) * 2 <= resident
            && pieces > (ty as usize) * MIN_LOADS
        {
            ty *= 2;
        }
        Layout { rows: true, tx: 1, ty, tz: THREADS / ty, vector: w, unroll, split: false }
    } else {
        let w = if vector > 1 && e.inner.is_multiple_of(vector as usize) { vector } else { 1 };
        let tx = (e.inner.div_ceil(w as usize).next_power_of_two() as u32).min(WARP);
        let ty = (e.r.max(1).next_power_of_two() as u32).min(THREADS / tx);
        let tz = THREADS / (tx * ty);
        Layout { rows: false, tx, ty, tz, vector: w, unroll, split: false }
    }
}

/// Completes a layout into a grid, splitting the reduced dimension between blocks when the
/// groups alone cannot fill the `slots` blocks the device runs at once.
pub(crate) fn choose_grid(e: Extent, mut layout: Layout, slots: usize) -> Grid {
    let (_, groups) = groups_of(e, &layout);
    layout.split = groups * 2 <= slots && wanted_splits(e, &layout, groups, slots) > 1;
    grid_for(e, layout, slots)
}

/// Output tiles per slab and groups of `tz` tiles.
fn groups_of(e: Extent, l: &Layout) -> (usize, usize) {
    let per_tile = (l.tx * if l.rows { 1 } else { l.vector }) as usize;
    let tiles = e.inner.div_ceil(per_tile).max(1);
    (tiles, (tiles * e.outer).div_ceil(l.tz as usize).max(1))
}

/// Blocks per group that fill `slots` while leaving each thread at least `MIN_LOADS` loads.
fn wanted_splits(e: Extent, l: &Layout, groups: usize, slots: usize) -> usize {
    let step = (l.ty * if l.rows { l.vector } else { 1 }) as usize;
    (slots / groups).min(e.r / (step * MIN_LOADS)).max(1)
}

/// The grid for a layout whose split is already decided (a split kernel also runs correctly
/// with a single split).
pub(crate) fn grid_for(e: Extent, layout: Layout, slots: usize) -> Grid {
    let (tiles, groups) = groups_of(e, &layout);
    // the row kernels take their group as their output (`codegen::reduce::source_many`)
    debug_assert!(!layout.rows || tiles == 1, "a row layout of {tiles} tiles");
    let (mut splits, mut jchunk) = (1, e.r.max(1));
    if layout.split {
        let w = if layout.rows { layout.vector as usize } else { 1 };
        splits = wanted_splits(e, &layout, groups, slots);
        jchunk = e.r.div_ceil(splits).div_ceil(w).max(1) * w;
        splits = e.r.div_ceil(jchunk).max(1);
    }
    let blocks = if layout.split { groups } else { groups.min(slots * 16) };
    Grid { layout, tiles, groups, splits, jchunk, blocks }
}

/// Per device and stream, the tickets that split kernels count finished blocks on. Kernels
/// leave them at zero, so one zeroed buffer serves every launch on that stream in turn. A
/// buffer that is outgrown is kept, not freed: another thread may hold its address for a launch
/// it has not queued yet, and freed memory could by then belong to someone else.
///
/// A new buffer is memory no stream has used, zeroed on the stream without sending the
/// launches held back first (and without waiting): nothing held can touch it, and every launch
/// that counts on it is queued after the zeroing. A first run's first split reduction used to
/// wait here for every kernel compiling ahead and for the device, so the kernels after it
/// compiled in a second wave.
pub(crate) fn tickets(dev: &Device, count: usize) -> Result<u64, Error> {
    type Tickets = HashMap<(usize, usize), Vec<DeviceMem>>;
    static T: OnceLock<Mutex<Tickets>> = OnceLock::new();
    let mut map = lock(T.get_or_init(Default::default));
    // (the stream as it is: asking for it raw would send the launches held back)
    let stream = dev.current_stream_id();
    let buffers = map.entry((dev.ordinal(), stream.handle() as usize)).or_default();
    if let Some(m) = buffers.last() {
        if m.len() >= count * 4 {
            return Ok(m.ptr());
        }
    }
    let bytes = count.next_power_of_two().max(1024) * 4;
    let m = dev.memory().alloc_unused(bytes, stream)?;
    dev.bind()?;
    // SAFETY: `m` is `bytes` of live memory of this device that nothing else uses, and the
    // stream is the device's own or a user's stream open in this thread's scope.
    unsafe { cudarc::driver::result::memset_d8_async(m.ptr(), 0, bytes, stream.handle()) }
        .map_err(|e| super::driver_error("zeroing a reduction's tickets", e))?;
    let ptr = m.ptr();
    buffers.push(m);
    Ok(ptr)
}

/// Reduces `node` (a CUDA array of device `ordinal`) along `dim` (everything for `None`) into
/// a new buffer of `out` elements, and for index folds a second buffer of u32 positions.
pub(crate) fn reduce(
    ordinal: usize,
    node: &Arc<Node>,
    fold: Fold,
    nanval: f64,
    dim: Option<usize>,
    out: DType,
) -> Result<(DeviceMem, Option<DeviceMem>), Error> {
    let dev = runtime::device(ordinal)?;
    let p = crate::backend::schedule::program_for(std::slice::from_ref(node))?;
    let e = Extent::of(p.dims, dim);
    let nout = e.inner * e.outer;
    let out_mem = dev.memory().alloc((nout * out.size()).max(1))?;
    let idx_mem =
        if fold.has_index() { Some(dev.memory().alloc((nout * 4).max(1))?) } else { None };
    if nout == 0 {
        return Ok((out_mem, idx_mem));
    }
    let linear = linear_inputs(&p);
    let plan = codegen::plan(&p, &linear, |w| aligned_for(&p, &linear, w));
    let vector = if plan.coords { 1 } else { plan.vector as u32 };
    let resident = (dev.sm_count() * 2048) as usize;
    let layout = choose_layout(e, vector, choose_unroll(&p), resident);
    let grid = choose_grid(e, layout, (dev.sm_count() * BLOCKS_PER_SM) as usize);
    let func = kernel(dev, &p, &plan, fold, out, &grid.layout, dim)?;
    let t = p.steps[p.outputs[0]].dtype;
    let part = if grid.layout.split {
        Some(dev.memory().alloc(grid.splits * nout * rc::acc_size(fold, t))?)
    } else {
        None
    };
    let ticket = if grid.layout.split { tickets(dev, grid.groups)? } else { 0 };
    order_inputs(dev, &p)?;

    let mut args = KernelArgs::with_capacity(16 + p.steps.len() * 5);
    for v in [e.inner, e.r, e.outer, grid.tiles, grid.groups, grid.jchunk] {
        args.u64(v as u64);
    }
    push_coord_args(&p, &plan, &mut args);
    push_step_args(&p, &plan, &mut args);
    args.f64(nanval);
    args.u64(out_mem.ptr());
    args.u64(idx_mem.as_ref().map_or(0, |m| m.ptr()));
    args.u64(part.as_ref().map_or(0, |m| m.ptr()));
    args.u64(ticket);
    let l = grid.layout;
    // SAFETY: the parameters match `codegen::reduce::source`'s signature in order and size;
    // every pointer is live device memory of this device held by `p`, the outputs, the
    // partials (sized `splits * nout` accumulators) or the tickets (at least `groups`
    // counters, all zero between launches on this stream); the launch is ordered on the
    // device's stream before any use of the outputs and before the partials are reused.
    unsafe {
        func.launch(
            dev,
            (grid.blocks as u32, grid.splits as u32, 1),
            (l.threads(), 1, 1),
            0,
            &mut args,
        )?
    };
    drop(part);
    Ok((out_mem, idx_mem))
}

/// Static shared memory a kernel may use (CUDA's limit without opting in is 48 KiB).
const SHARED_LIMIT: usize = 48 << 10;

/// Reduces each of `roots` (one shape) along `dim`, root `k` by `ops[k]`, in one kernel that
/// computes their trees once per element (`codegen::reduce::source_many`): one new buffer per
/// root, in order. The layout is chosen as for a single reduction of the same producer; a
/// group whose accumulators would need more shared memory than a block has is halved.
pub(crate) fn reduce_siblings(
    ordinal: usize,
    roots: &[Arc<Node>],
    ops: &[(Reduction, DType)],
    dim: usize,
) -> Result<Vec<DeviceMem>, Error> {
    let dev = runtime::device(ordinal)?;
    let p = crate::backend::schedule::program_for(roots)?;
    let e = Extent::of(p.dims, Some(dim));
    let nout = e.inner * e.outer;
    let members: Vec<rc::Member> = ops
        .iter()
        .zip(&p.outputs)
        .map(|(&(op, out), &step)| rc::Member { fold: Fold::of(op).0, out, step })
        .collect();
    let linear = linear_inputs(&p);
    let plan = codegen::plan(&p, &linear, |w| aligned_for(&p, &linear, w));
    let vector = if plan.coords { 1 } else { plan.vector as u32 };
    let resident = (dev.sm_count() * 2048) as usize;
    let layout = choose_layout(e, vector, choose_unroll(&p), resident);
    if roots.len() > 1 && rc::shared_bytes(&p, &members, &layout) > SHARED_LIMIT {
        let half = roots.len() / 2;
        let mut outs = reduce_siblings(ordinal, &roots[..half], &ops[..half], dim)?;
        outs.extend(reduce_siblings(ordinal, &roots[half..], &ops[half..], dim)?);
        return Ok(outs);
    }
    let outs = ops
        .iter()
        .map(|&(_, out)| dev.memory().alloc((nout * out.size()).max(1)))
        .collect::<Result<Vec<_>, Error>>()?;
    if nout == 0 {
        return Ok(outs);
    }
    let grid = choose_grid(e, layout, (dev.sm_count() * BLOCKS_PER_SM) as usize);
    let l = grid.layout;
    let axis = Some(dim);
    let key = KernelKey::new(Family::Reduce, rc::key_many(&p, &plan, &members, &l, axis));
    let func = dev
        .kernels()
        .kernel(dev, key, rc::ENTRY, || rc::source_many(&p, &plan, &members, &l, axis))?;
    let parts = if l.split {
        members
            .iter()
            .map(|m| {
                let size = rc::acc_size(m.fold, p.steps[m.step].dtype);
                dev.memory().alloc(grid.splits * nout * size).map(Some)
            })
            .collect::<Result<Vec<_>, Error>>()?
    } else {
        members.iter().map(|_| None).collect()
    };
    let ticket = if l.split { tickets(dev, grid.groups)? } else { 0 };
    order_inputs(dev, &p)?;

    let mut args = KernelArgs::with_capacity(16 + p.steps.len() * 5 + members.len() * 3);
    for v in [e.inner, e.r, e.outer, grid.tiles, grid.groups, grid.jchunk] {
        args.u64(v as u64);
    }
    push_coord_args(&p, &plan, &mut args);
    push_step_args(&p, &plan, &mut args);
    for &(op, _) in ops {
        args.f64(Fold::of(op).1);
    }
    for m in &outs {
        args.u64(m.ptr());
    }
    args.u64(0);
    for part in &parts {
        args.u64(part.as_ref().map_or(0, |m| m.ptr()));
    }
    args.u64(ticket);
    // SAFETY: the parameters match `codegen::reduce::source_many`'s signature in order and
    // size; every pointer is live device memory of this device held by `p`, the outputs, the
    // partials (each sized `splits * nout` of its reduction's accumulators) or the tickets (at
    // least `groups` counters, all zero between launches on this stream); the launch is
    // ordered on the device's stream before any use of the outputs and before the partials
    // are reused.
    unsafe {
        func.launch(
            dev,
            (grid.blocks as u32, grid.splits as u32, 1),
            (l.threads(), 1, 1),
            0,
            &mut args,
        )?
    };
    drop(parts);
    Ok(outs)
}

fn kernel(
    dev: &Device,
    p: &Program,
    plan: &codegen::Plan,
    fold: Fold,
    out: DType,
    layout: &Layout,
    axis: Option<usize>,
) -> Result<Arc<KernelFn>, Error> {
    let key = KernelKey::new(Family::Reduce, rc::key(p, plan, fold, out, layout, axis));
    dev.kernels().kernel(dev, key, rc::ENTRY, || rc::source(p, plan, fold, out, layout, axis))
}

impl crate::backend::reduce::Reduce for super::Cuda {
    fn reduce_dim(
        &self,
        node: &Arc<Node>,
        op: Reduction,
        dim: usize,
        out: DType,
    ) -> Result<Buffer, Error> {
        let (fold, nanval) = Fold::of(op);
        let (m, _) = reduce(self.ordinal, node, fold, nanval, Some(dim), out)?;
        Ok(Buffer::Cuda(m))
    }

    fn reduce_dim_siblings(
        &self,
        roots: &[Arc<Node>],
        ops: &[(Reduction, DType)],
        dim: usize,
    ) -> Result<Vec<Buffer>, Error> {
        let outs = reduce_siblings(self.ordinal, roots, ops, dim)?;
        Ok(outs.into_iter().map(Buffer::Cuda).collect())
    }

    fn reduce_all(&self, node: &Arc<Node>, op: Reduction, out: DType) -> Result<HostVec, Error> {
        let (fold, nanval) = Fold::of(op);
        let (m, _) = reduce(self.ordinal, node, fold, nanval, None, out)?;
        one(m, out)
    }

    fn reduce_dim_index(
        &self,
        node: &Arc<Node>,
        op: IndexOp,
        dim: usize,
    ) -> Result<(Buffer, Buffer), Error> {
        let fold = Fold::of_index(op);
        let (v, i) = reduce(self.ordinal, node, fold, 0.0, Some(dim), node.dtype)?;
        let i = i.expect("internal error: an index reduction writes positions");
        Ok((Buffer::Cuda(v), Buffer::Cuda(i)))
    }

    fn reduce_all_index(&self, node: &Arc<Node>, op: IndexOp) -> Result<(HostVec, u32), Error> {
        let fold = Fold::of_index(op);
        let (v, i) = reduce(self.ordinal, node, fold, 0.0, None, node.dtype)?;
        let i = i.expect("internal error: an index reduction writes positions");
        let (v, i) = (one(v, node.dtype)?, one(i, DType::U32)?);
        Ok((v, i.as_slice::<u32>()[0]))
    }
}

/// The single element of a device buffer, on the host.
fn one(m: DeviceMem, dtype: DType) -> Result<HostVec, Error> {
    let dims = Dim4::new(&[1, 1, 1, 1]);
    crate::backend::download(&Data::dense(Buffer::Cuda(m), dims), dims, dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: usize = 132 * 2048;

    #[test]
    fn a_long_vector_is_split_over_the_whole_device() {
        let e = Extent { inner: 1, r: 1 << 26, outer: 1 };
        let l = choose_layout(e, 4, 4, H100);
        assert_eq!((l.tx, l.ty, l.tz, l.vector), (1, 256, 1, 4));
        let g = choose_grid(e, l, 132 * 4);
        assert!(g.layout.split && g.splits == 132 * 4, "{g:?}");
        assert_eq!(g.jchunk % 4, 0);
        assert!(g.jchunk * g.splits >= e.r && g.jchunk * (g.splits - 1) < e.r);
    }

    #[test]
    fn contiguous_rows_of_a_square_matrix_take_a_warp_each() {
        let e = Extent { inner: 1, r: 8192, outer: 8192 };
        let l = choose_layout(e, 4, 4, H100);
        assert_eq!((l.ty, l.tz), (32, 8));
        let g = choose_grid(e, l, 132 * 4);
        assert!(!g.layout.split);
        assert_eq!(g.groups, 1024);
    }

    #[test]
    fn strided_columns_are_split_when_few() {
        let e = Extent { inner: 8192, r: 8192, outer: 1 };
        let l = choose_layout(e, 4, 4, H100);
        assert_eq!((l.tx, l.ty, l.tz, l.vector), (32, 8, 1, 4));
        let g = choose_grid(e, l, 132 * 4);
        assert_eq!(g.tiles, 64);
        assert!(g.layout.split && g.splits == 8, "{g:?}");
    }

    /// `steps` steps: an input (or, without loads, a random leaf), then scalars and sums.
    fn program_of(steps: usize, loads: bool) -> Program {
        use crate::jit::program::Step;
        use crate::jit::BinOp;
        use crate::random::stream::{Distribution, Draw, Generator};
        let d = Dim4::new(&[64, 1, 1, 1]);
        let leaf = if loads {
            let buf = Arc::new(Buffer::host(HostVec::zeros(DType::F32, 64)));
            Instr::Input(Data { buf, offset: 0, strides: [1, 64, 64, 64] })
        } else {
            Instr::Random(Draw::new(Generator::Philox, 0, 1, 0, Distribution::Uniform))
        };
        let mut p = Program {
            steps: vec![Step { instr: leaf, dtype: DType::F32, dims: d }],
            outputs: vec![],
            dims: d,
        };
        while p.steps.len() < steps {
            let k = p.steps.len();
            let instr = if k % 2 == 1 {
                Instr::Scalar(HostVec::zeros(DType::F32, 1))
            } else {
                Instr::Binary(BinOp::Add, k - 2, k - 1)
            };
            p.steps.push(Step { instr, dtype: DType::F32, dims: d });
        }
        p.outputs.push(p.steps.len() - 1);
        p
    }

    #[test]
    fn bodies_that_load_are_unrolled_less_as_they_grow_and_others_not_at_all() {
        for (steps, unroll) in [(1, 4), (3, 4), (8, 4), (9, 2), (24, 2), (25, 1), (40, 1)] {
            assert_eq!(choose_unroll(&program_of(steps, true)), unroll, "{steps} steps");
        }
        for steps in [1, 3, 9, 25] {
            assert_eq!(choose_unroll(&program_of(steps, false)), 1, "{steps} steps, no loads");
        }
        // the unroll chosen is the layout's
        let e = Extent { inner: 1, r: 1 << 20, outer: 1 };
        assert_eq!(choose_layout(e, 4, 1, H100).unroll, 1);
        assert_eq!(choose_layout(e, 4, 2, H100).unroll, 2);
    }

    #[test]
    fn small_and_empty_extents_stay_in_one_block_per_group() {
        for e in [
            Extent { inner: 1, r: 0, outer: 5 },
            Extent { inner: 3, r: 0, outer: 1 },
            Extent { inner: 1, r: 7, outer: 1 },
            Extent { inner: 3, r: 5, outer: 2 },
        ] {
            let l = choose_layout(e, 1, 4, H100);
            assert_eq!(l.threads(), 256);
            let g = choose_grid(e, l, 132 * 4);
            assert!(!g.layout.split, "{e:?}: {g:?}");
            assert!(g.groups * l.tz as usize >= g.tiles * e.outer);
        }
    }
}
