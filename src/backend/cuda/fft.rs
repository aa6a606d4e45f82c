//! FFTs on a CUDA device with cuFFT: plans cached per (device, shape, type, batch), bound to
//! the calling thread's current stream at each execution, with work areas from emberfire's
//! memory manager.
//!
//! - **Plans.** Making a cuFFT plan costs milliseconds, so the last plans made or used are
//!   kept (least recently used first out), as ArrayFire does: [`DEFAULT_PLAN_CACHE`] of them
//!   unless `set_fft_plan_cache_size` says otherwise. A plan is used by one thread at
//!   a time (its lock is held while its work area is set and the transform is queued).
//! - **Work areas.** Plans are made with cuFFT's own allocation off; each execution takes its
//!   work area from the memory manager on the transform's stream and returns it right after
//!   queueing, so it is reused in stream order like any buffer, counts in `device_mem_info`,
//!   and is collected with the cache when memory runs short. cuFFT never holds memory beside
//!   emberfire's pool, except the plans' small tables.
//! - **Copies.** A transform reads the input in place when it can: a complex-to-complex
//!   transform of complex data that needs no padding or scaling runs out of place, straight
//!   from the input to the output. Otherwise one copy kernel pads or truncates, converts real
//!   to complex and applies the normalisation factor in one pass, and the transform runs in
//!   place on its result. Complex-to-real transforms always copy first: cuFFT overwrites their
//!   input. Nothing waits for the device.

use std::ffi::{c_longlong, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::runtime::{self, Device};
use super::signal::reshape_copy;
use super::vendor::cufft::{self, cufft, Handle};
use crate::backend::signal::{Dense, FftKind};
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::sync::lock;

/// How many plans are kept, across devices, until the user sets another number.
const DEFAULT_PLAN_CACHE: usize = 16;

/// How many plans are kept, across devices.
static PLAN_CACHE: AtomicUsize = AtomicUsize::new(DEFAULT_PLAN_CACHE);

/// Keeps at most `size` plans from now on, dropping the least recently used ones beyond it at
/// once (a plan that a transform is using stays alive until that transform is queued). With
/// 0, every transform makes its plan and drops it after use.
pub(crate) fn set_plan_cache_size(size: usize) {
    let mut cache = lock(plans());
    PLAN_CACHE.store(size, Ordering::Relaxed);
    let excess = cache.len().saturating_sub(size);
    cache.drain(..excess);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PlanKey {
    ordinal: usize,
    /// Transform sizes in cuFFT's order (slowest varying first).
    n: [i64; 3],
    rank: usize,
    kind: i32,
    batch: i64,
}

struct Plan {
    handle: Handle,
    ordinal: usize,
    work_bytes: usize,
    /// Held while the work area is set and the transform queued.
    busy: Mutex<()>,
}

impl Drop for Plan {
    fn drop(&mut self) {
        if let (Ok(lib), Ok(dev)) = (cufft(), runtime::device(self.ordinal)) {
            let _ = dev.bind();
            // SAFETY: the handle was made by cufftCreate and is destroyed only here.
            let _ = unsafe { (lib.destroy)(self.handle) };
        }
    }
}

fn plans() -> &'static Mutex<Vec<(PlanKey, Arc<Plan>)>> {
    static PLANS: Mutex<Vec<(PlanKey, Arc<Plan>)>> = Mutex::new(Vec::new());
    &PLANS
}

/// The plan for `key`, from the cache or made now.
fn plan(dev: &Device, key: PlanKey) -> Result<Arc<Plan>, Error> {
    {
        let mut cache = lock(plans());
        if let Some(i) = cache.iter().position(|(k, _)| *k == key) {
            let entry = cache.remove(i);
            let p = entry.1.clone();
            cache.push(entry); // most recently used last
            return Ok(p);
        }
    }
    let lib = cufft()?;
    dev.bind()?;
    let mut handle: Handle = 0;
    // SAFETY: a valid out-pointer.
    cufft::check("creating a plan", unsafe { (lib.create)(&mut handle) })?;
    // From here the handle is destroyed by `Plan::drop` on every path.
    let mut plan = Plan { handle, ordinal: dev.ordinal(), work_bytes: 0, busy: Mutex::new(()) };
    // SAFETY: `handle` is a fresh plan. (Its stream is set by each execution: a plan is
    // cached by shape, and the stream a transform belongs on is the one current then.)
    unsafe {
        cufft::check("turning off automatic work areas", (lib.set_auto_allocation)(handle, 0))?;
    }
    let mut n: Vec<c_longlong> = key.n[3 - key.rank..].to_vec();
    let mut work = 0usize;
    // SAFETY: `n` holds `rank` sizes; null embeddings select the packed layout, for which the
    // strides and distances are ignored; `work` is a valid out-pointer.
    let status = unsafe {
        (lib.make_plan_many64)(
            handle,
            key.rank as i32,
            n.as_mut_ptr(),
            std::ptr::null_mut(),
            1,
            0,
            std::ptr::null_mut(),
            1,
            0,
            key.kind,
            key.batch,
            &mut work,
        )
    };
    cufft::check(
        &format!("planning a transform of sizes {:?} x {} (cuFFT {})", n, key.batch, lib.version),
        status,
    )?;
    plan.work_bytes = work;
    let plan = Arc::new(plan);
    let mut cache = lock(plans());
    // Read under the lock, so a concurrent resize is seen whole.
    let keep = PLAN_CACHE.load(Ordering::Relaxed);
    if keep > 0 {
        let excess = (cache.len() + 1).saturating_sub(keep);
        cache.drain(..excess);
        cache.push((key, plan.clone()));
    }
    Ok(plan)
}

/// True when `d` starts at a 16-byte boundary, as cuFFT wants.
fn aligned(d: &Dense) -> bool {
    device_ptr(d).is_multiple_of(16)
}

fn device_ptr(d: &Dense) -> u64 {
    match d.data.buffer() {
        Buffer::Cuda(m) => m.ptr() + (d.data.offset * d.dtype.size()) as u64,
        Buffer::Host(_) => unreachable!("internal error: host data on the CUDA path"),
    }
}

/// Runs `kind` (a cuFFT transform type) of `plan` from `input` to `output` (device
/// addresses; equal for in place), with a work area from the memory manager.
fn execute(
    dev: &Device,
    plan: &Plan,
    kind: i32,
    inverse: bool,
    input: u64,
    output: u64,
) -> Result<(), Error> {
    let lib = cufft()?;
    let _busy = lock(&plan.busy);
    dev.bind()?;
    // The plan runs on this thread's current stream (a user's inside `with_stream`), bound
    // under the plan's lock for this transform; the raw handle sends launches held back.
    // SAFETY: the plan is live and used by this thread alone while `busy` is held; the stream
    // is live for the duration of the call that queues the transform below.
    cufft::check("setting the stream", unsafe {
        (lib.set_stream)(plan.handle, dev.stream_raw() as *mut c_void)
    })?;
    let work = if plan.work_bytes > 0 { Some(dev.memory().alloc(plan.work_bytes)?) } else { None };
    if let Some(w) = &work {
        // SAFETY: the work area is live device memory of the plan's size on this device;
        // it is released to the pool only after the transform is queued on the same stream.
        cufft::check("setting the work area", unsafe {
            (lib.set_work_area)(plan.handle, w.ptr() as *mut c_void)
        })?;
    }
    let (i, o) = (input as *mut c_void, output as *mut c_void);
    let dir = if inverse { cufft::INVERSE } else { cufft::FORWARD };
    // SAFETY: `input` and `output` are live device buffers of this device holding (and with
    // room for) the plan's packed layout of `kind`; the transform is queued on the current
    // stream, in order with every producer and consumer of those buffers.
    let status = unsafe {
        match kind {
            cufft::C2C => (lib.exec_c2c)(plan.handle, i, o, dir),
            cufft::Z2Z => (lib.exec_z2z)(plan.handle, i, o, dir),
            cufft::R2C => (lib.exec_r2c)(plan.handle, i, o),
            cufft::D2Z => (lib.exec_d2z)(plan.handle, i, o),
            cufft::C2R => (lib.exec_c2r)(plan.handle, i, o),
            _ => (lib.exec_z2d)(plan.handle, i, o),
        }
    };
    cufft::check("running a transform", status)
}

/// The batched FFT of `Signal::fft` on device `ordinal`.
pub(crate) fn fft(
    ordinal: usize,
    src: &Dense,
    kind: FftKind,
    rank: usize,
    pdims: Dim4,
    scale: f64,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let backend = BackendKind::Cuda(ordinal);
    let double = matches!(src.dtype, DType::F64 | DType::C64);
    let (ctype, rtype) = if double { (DType::C64, DType::F64) } else { (DType::C32, DType::F32) };
    let mut half = pdims;
    half[0] = pdims[0] / 2 + 1;
    let (out_dims, out_type) = match kind {
        FftKind::C2C { .. } => (pdims, ctype),
        FftKind::R2C => (half, ctype),
        FftKind::C2R => (pdims, rtype),
    };
    let alloc = |dims: Dim4, t: DType| -> Result<Dense, Error> {
        let mem = dev.memory().alloc((dims.elements() as usize * t.size()).max(1))?;
        Ok(Dense::new(Buffer::Cuda(mem), dims, t, backend))
    };
    if pdims.elements() == 0 {
        return alloc(out_dims, out_type);
    }
    // Loading cuFFT first makes a missing library an error before any work is queued.
    cufft()?;
    let n: [i64; 3] = std::array::from_fn(|i| {
        let k = 2 - i; // cuFFT lists sizes slowest varying first
        if k < rank {
            pdims[k] as i64
        } else {
            1
        }
    });
    let batch = (rank..4).map(|k| pdims[k] as i64).product::<i64>();
    let key = |code: i32| PlanKey { ordinal, n, rank, kind: code, batch };
    match kind {
        FftKind::C2C { inverse } => {
            let code = if double { cufft::Z2Z } else { cufft::C2C };
            let p = plan(dev, key(code))?;
            if src.dtype == ctype && src.dims == pdims && scale == 1.0 && aligned(src) {
                let out = alloc(pdims, ctype)?;
                execute(dev, &p, code, inverse, device_ptr(src), device_ptr(&out))?;
                Ok(out)
            } else {
                let out = reshape_copy(ordinal, src, pdims, ctype, [0; 4], scale)?;
                let at = device_ptr(&out);
                execute(dev, &p, code, inverse, at, at)?;
                Ok(out)
            }
        }
        FftKind::R2C => {
            let code = if double { cufft::D2Z } else { cufft::R2C };
            let p = plan(dev, key(code))?;
            let input = if src.dims == pdims && scale == 1.0 && src.dtype == rtype && aligned(src) {
                src.clone()
            } else {
                reshape_copy(ordinal, src, pdims, rtype, [0; 4], scale)?
            };
            let out = alloc(half, ctype)?;
            execute(dev, &p, code, false, device_ptr(&input), device_ptr(&out))?;
            Ok(out)
        }
        FftKind::C2R => {
            let code = if double { cufft::Z2D } else { cufft::C2R };
            let p = plan(dev, key(code))?;
            // cuFFT overwrites a complex-to-real transform's input: always work on a copy.
            let scratch = reshape_copy(ordinal, src, half, ctype, [0; 4], scale)?;
            let out = alloc(pdims, rtype)?;
            execute(dev, &p, code, true, device_ptr(&scratch), device_ptr(&out))?;
            Ok(out)
        }
    }
}
