//! Convolutions on a CUDA device with cuDNN (`cudnn.rs`): the forward pass and the data and
//! filter gradients of `backend::ml` (its `Ml` family for this backend), called directly on
//! the arrays' memory.
//!
//! - **Layout.** emberfire's `[w, h, c, n]` column-major array is cuDNN's packed NCHW tensor
//!   (`w` innermost) and its `[fw, fh, c, f]` filter cuDNN's KCRS filter, so nothing is
//!   copied. Index 0 of emberfire's strides, padding and dilation is cuDNN's `w` (its second
//!   value), index 1 its `h`. The mode is `CUDNN_CONVOLUTION` (flipped filter), as ArrayFire
//!   computes.
//! - **Algorithms.** The fastest algorithm of each pass is measured once per device, type and
//!   shape (`cudnnFind*AlgorithmEx`, on the call's own arrays and a work area from the pool
//!   of at most [`FIND_WORKSPACE`] bytes) and kept for the process. f32 uses the FMA math type
//!   only: no TF32 tensor-core results, whose 10-bit mantissas would not match the other
//!   backends' f32. A shape cuDNN refuses is remembered, and runs on the lowered path.
//! - **Streams and memory.** One cuDNN handle per device, bound to the current emberfire
//!   stream before each call; work areas come from emberfire's memory manager and return to
//!   it once the call is queued (reuse is stream-ordered). Nothing waits for the device,
//!   except the one-time measurement of a new shape.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use super::runtime::{self, Device};
use super::vendor::cudnn::{self, cudnn, AlgoPerf, Cudnn, Desc, Handle};
use crate::backend::dense::Dense;
use crate::backend::ml::{result_dims, Geometry, Pass};
use crate::backend::{BackendKind, Buffer};
use crate::dtype::DType;
use crate::error::Error;
use crate::sync::lock;

/// The largest work area the measurement of algorithms offers cuDNN (also bounded by a
/// sixteenth of the device's memory).
const FIND_WORKSPACE: usize = 1 << 30;

/// Whether cuDNN runs the convolutions: it loads and `EMBERFIRE_CUDNN` does not turn it off.
pub(crate) fn enabled() -> bool {
    !cudnn::turned_off() && cudnn().is_ok()
}

/// A cuDNN handle, used by one thread at a time (behind its mutex).
pub(crate) struct OwnedHandle(Handle);

// SAFETY: a cuDNN handle may be used from any thread, one at a time; the mutex around it
// ensures that.
unsafe impl Send for OwnedHandle {}

/// The handle of `dev`, created on first use; `None` where cuDNN cannot create one.
fn handle(dev: &'static Device, lib: &Cudnn) -> Result<Option<&'static Mutex<OwnedHandle>>, Error> {
    dev.bind()?;
    Ok(dev.handles().cudnn(|| {
        let mut h: Handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device's context is current.
        let status = unsafe { (lib.create)(&mut h) };
        (status == 0).then_some(OwnedHandle(h))
    }))
}

/// What is known of one convolution: the algorithm measured fastest, or `None` where cuDNN
/// refused it.
type Choice = Option<AlgoPerf>;

/// A convolution on one device: the pass, the element type and the shape.
type Key = (usize, Pass, DType, Geometry);

fn choices() -> &'static Mutex<HashMap<Key, Choice>> {
    static CHOICES: OnceLock<Mutex<HashMap<Key, Choice>>> = OnceLock::new();
    CHOICES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A descriptor, destroyed when dropped.
struct Owned<'a> {
    raw: Desc,
    destroy: unsafe extern "C" fn(Desc) -> i32,
    _lib: &'a Cudnn,
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` was created by the matching create call and is destroyed only here.
        unsafe { (self.destroy)(self.raw) };
    }
}

/// The descriptors of one convolution: signal, filter, output and the convolution itself.
struct Descriptors<'a> {
    x: Owned<'a>,
    w: Owned<'a>,
    y: Owned<'a>,
    conv: Owned<'a>,
}

/// A size as cuDNN's `int`, or `None` where it does not fit.
fn int(v: u64) -> Option<i32> {
    i32::try_from(v).ok()
}

impl<'a> Descriptors<'a> {
    /// `Ok(None)` where the shape does not fit cuDNN's 32-bit sizes or cuDNN refuses it.
    fn new(lib: &'a Cudnn, g: &Geometry, dt: DType) -> Option<Descriptors<'a>> {
        let ty = if dt == DType::F64 { cudnn::DATA_DOUBLE } else { cudnn::DATA_FLOAT };
        let [w, h, c, n] = g.signal.map(int);
        let [fw, fh, _, f] = g.filter.map(int);
        let [ow, oh] = g.out.map(int);
        let [sx, sy] = g.stride.map(int);
        let [px, py] = g.padding.map(int);
        let [dx, dy] = g.dilation.map(int);
        // cuDNN's legacy interface indexes tensors with 32-bit integers
        let small = |e: u64| e < (1 << 31);
        let elements =
            [g.signal.iter().product(), g.filter.iter().product(), g.out_dims().elements()];
        if !elements.into_iter().all(small) {
            return None;
        }
        let make = |create: unsafe extern "C" fn(*mut Desc) -> i32,
                    destroy: unsafe extern "C" fn(Desc) -> i32|
         -> Option<Owned<'a>> {
            let mut raw: Desc = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            (unsafe { create(&mut raw) } == 0).then_some(Owned { raw, destroy, _lib: lib })
        };
        let d = Descriptors {
            x: make(lib.create_tensor, lib.destroy_tensor)?,
            w: make(lib.create_filter, lib.destroy_filter)?,
            y: make(lib.create_tensor, lib.destroy_tensor)?,
            conv: make(lib.create_conv, lib.destroy_conv)?,
        };
        let math = if dt == DType::F32 { cudnn::FMA_MATH } else { cudnn::DEFAULT_MATH };
        // SAFETY: fresh descriptors of the right kinds; every argument is a plain integer.
        let statuses = unsafe {
            [
                (lib.set_tensor_4d)(d.x.raw, cudnn::NCHW, ty, n?, c?, h?, w?),
                (lib.set_filter_4d)(d.w.raw, ty, cudnn::NCHW, f?, c?, fh?, fw?),
                (lib.set_tensor_4d)(d.y.raw, cudnn::NCHW, ty, n?, f?, oh?, ow?),
                (lib.set_conv_2d)(d.conv.raw, py?, px?, sy?, sx?, dy?, dx?, cudnn::CONVOLUTION, ty),
                (lib.set_conv_math_type)(d.conv.raw, math),
            ]
        };
        statuses.iter().all(|&s| s == 0).then_some(d)
    }
}

fn ptr(d: &Dense) -> u64 {
    match d.data.buffer() {
        Buffer::Cuda(m) => m.ptr() + (d.data.offset * d.dtype.size()) as u64,
        Buffer::Host(_) => unreachable!("internal error: host data on the CUDA path"),
    }
}

/// The three arrays of a pass, as (descriptor, device address) in the order cuDNN's
/// routines take them: the two inputs, then the output.
fn operands(pass: Pass, d: &Descriptors, a: u64, b: u64, out: u64) -> [(Desc, u64); 3] {
    match pass {
        // x, w -> y
        Pass::Forward => [(d.x.raw, a), (d.w.raw, b), (d.y.raw, out)],
        // w, dy -> dx (a is dy, b is w)
        Pass::Data => [(d.w.raw, b), (d.y.raw, a), (d.x.raw, out)],
        // x, dy -> dw (a is dy, b is x)
        Pass::Filter => [(d.x.raw, b), (d.y.raw, a), (d.w.raw, out)],
    }
}

/// Measures the algorithms of `pass` on the call's arrays and returns the fastest that
/// succeeds (in full precision for f32), or `None`.
fn measure(
    dev: &Device,
    lib: &Cudnn,
    h: Handle,
    pass: Pass,
    d: &Descriptors,
    ops: &[(Desc, u64); 3],
    dt: DType,
) -> Result<Choice, Error> {
    // Where the pool cannot give the whole work area, the algorithms that need none compete.
    let work = dev.memory().alloc(FIND_WORKSPACE.min(dev.total_memory() / 16)).ok();
    let limit = work.as_ref().map_or(0, |w| w.len());
    let work_ptr = work.as_ref().map_or(std::ptr::null_mut(), |w| w.ptr() as *mut c_void);
    let find = match pass {
        Pass::Forward => lib.find_forward,
        Pass::Data => lib.find_backward_data,
        Pass::Filter => lib.find_backward_filter,
    };
    let mut perf = [AlgoPerf::default(); 10];
    let mut returned = 0;
    let [(d0, p0), (d1, p1), (d2, p2)] = *ops;
    // SAFETY: the descriptors describe the arrays at these addresses, live device memory of
    // this device (the output is written, and is the call's own fresh buffer); the work area
    // (null when `limit` is 0) holds `limit` bytes and returns to the pool only after the
    // measurement, which cuDNN runs on the handle's stream (emberfire's) and waits for;
    // `perf` has room for 10.
    let status = unsafe {
        find(
            h,
            d0,
            p0 as *const c_void,
            d1,
            p1 as *const c_void,
            d.conv.raw,
            d2,
            p2 as *mut c_void,
            perf.len() as i32,
            &mut returned,
            perf.as_mut_ptr(),
            work_ptr,
            limit,
        )
    };
    drop(work);
    if status != 0 {
        return Ok(None);
    }
    let full_precision = |p: &AlgoPerf| {
        dt != DType::F32 || p.math_type == cudnn::FMA_MATH || p.math_type == cudnn::DEFAULT_MATH
    };
    Ok(perf[..returned.clamp(0, 10) as usize]
        .iter()
        .find(|p| p.status == 0 && p.memory <= limit && full_precision(p))
        .copied())
}

/// See `Ml::run_convolution`: `Ok(None)` where cuDNN is missing or refuses the convolution.
pub(crate) fn run(
    ordinal: usize,
    pass: Pass,
    a: &Dense,
    b: &Dense,
    g: &Geometry,
) -> Result<Option<Dense>, Error> {
    let Ok(lib) = cudnn() else { return Ok(None) };
    let dev = runtime::device(ordinal)?;
    let dt = a.dtype;
    let Some(handle) = handle(dev, lib)? else { return Ok(None) };
    let Some(desc) = Descriptors::new(lib, g, dt) else { return Ok(None) };
    let dims = result_dims(pass, g);
    let mem = dev.memory().alloc((dims.elements() as usize * dt.size()).max(1))?;
    let out = Dense::new(Buffer::Cuda(mem), dims, dt, BackendKind::Cuda(ordinal));
    let ops = operands(pass, &desc, ptr(a), ptr(b), ptr(&out));
    let h = lock(handle);
    dev.bind()?;
    // SAFETY: a live handle, used by this thread alone (its lock is held); the stream is
    // emberfire's current stream of this device, alive while work is queued on it.
    if unsafe { (lib.set_stream)(h.0, dev.stream_raw() as *mut c_void) } != 0 {
        return Ok(None);
    }
    let key = (ordinal, pass, dt, *g);
    let known = lock(choices()).get(&key).copied();
    let choice = match known {
        Some(c) => c,
        None => {
            let c = measure(dev, lib, h.0, pass, &desc, &ops, dt)?;
            lock(choices()).insert(key, c);
            c
        }
    };
    let Some(perf) = choice else { return Ok(None) };
    // f32 keeps the FMA math type the descriptor was made with (cuDNN's default math would
    // allow TF32 on Ampere and later); f64 takes the math type the measurement used.
    // SAFETY: a live convolution descriptor; the math type is one cuDNN reported.
    if dt == DType::F64 && unsafe { (lib.set_conv_math_type)(desc.conv.raw, perf.math_type) } != 0 {
        return Ok(None);
    }
    let work = if perf.memory > 0 { Some(dev.memory().alloc(perf.memory)?) } else { None };
    let work_ptr = work.as_ref().map_or(std::ptr::null_mut(), |w| w.ptr() as *mut c_void);
    let call = match pass {
        Pass::Forward => lib.forward,
        Pass::Data => lib.backward_data,
        Pass::Filter => lib.backward_filter,
    };
    let (one32, zero32, one64, zero64) = (1.0f32, 0.0f32, 1.0f64, 0.0f64);
    let (alpha, beta): (*const c_void, *const c_void) = if dt == DType::F64 {
        (&one64 as *const f64 as _, &zero64 as *const f64 as _)
    } else {
        (&one32 as *const f32 as _, &zero32 as *const f32 as _)
    };
    let [(d0, p0), (d1, p1), (d2, p2)] = ops;
    // SAFETY: as in `measure`: the descriptors describe live device arrays of this device at
    // these addresses, the output is the fresh `out`; the work area holds the bytes cuDNN
    // asked for for this algorithm and returns to the pool only after the call is queued on
    // emberfire's stream (stream-ordered reuse); alpha and beta point to host scalars of the
    // type cuDNN reads for `dt`, alive across the call (cuDNN reads them while queueing).
    let status = unsafe {
        call(
            h.0,
            alpha,
            d0,
            p0 as *const c_void,
            d1,
            p1 as *const c_void,
            desc.conv.raw,
            perf.algo,
            work_ptr,
            perf.memory,
            beta,
            d2,
            p2 as *mut c_void,
        )
    };
    drop(work);
    drop(h);
    if status != 0 {
        // cuDNN refused after all: remember it, and let the lowered path run
        lock(choices()).insert(key, None);
        return Ok(None);
    }
    Ok(Some(out))
}

/// The ml family on a CUDA device: cuDNN, where it loads.
impl crate::backend::ml::Ml for super::Cuda {
    fn may_run(&self, dtype: DType) -> Result<bool, Error> {
        Ok(matches!(dtype, DType::F32 | DType::F64) && enabled())
    }

    fn run_convolution(
        &self,
        pass: Pass,
        a: &Dense,
        b: &Dense,
        g: &Geometry,
    ) -> Result<Option<Dense>, Error> {
        run(self.ordinal, pass, a, b, g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dim4::Dim4;
    use crate::storage::Element;

    /// The three passes of a strided, padded, dilated convolution of batches of images and
    /// filters, on device 0 through cuDNN, against loops over every term in f64.
    fn passes<T: Element + Into<f64> + Copy>(of: impl Fn(f64) -> T, tol: f64) {
        let _gpu = super::super::tests::exclusive();
        let (s, f) = ([7u64, 6, 3, 2], [3u64, 2, 3, 4]);
        let g = Geometry::new(
            "test",
            Dim4::new(&s),
            Dim4::new(&f),
            Dim4::new(&[2, 1, 1, 1]),
            Dim4::new(&[1, 2, 0, 0]),
            Dim4::new(&[1, 2, 1, 1]),
        );
        let o = [g.out[0], g.out[1], f[3], s[3]];
        let len = |d: [u64; 4]| d.iter().product::<u64>() as usize;
        let values = |n: usize, k: u64| -> Vec<f64> {
            (0..n).map(|i| ((i as u64 * 7919 + k * 104_729) % 1000) as f64 / 500.0 - 1.0).collect()
        };
        let (x, w, dy) = (values(len(s), 1), values(len(f), 2), values(len(o), 3));
        let up = |v: &[f64], d: [u64; 4]| -> Dense {
            let h = T::wrap(v.iter().map(|&e| of(e)).collect());
            let buf = BackendKind::Cuda(0).ops().upload(h).expect("an upload");
            Dense::new(buf, Dim4::new(&d), T::DTYPE, BackendKind::Cuda(0))
        };
        let (xd, wd, dyd) = (up(&x, s), up(&w, f), up(&dy, o));
        // every term: signal index, filter index, output index
        let mut terms = Vec::new();
        for (m, k, b, a) in output_pixels(o) {
            for (ch, j, i) in (0..s[2])
                .flat_map(|c| (0..f[1]).flat_map(move |j| (0..f[0]).map(move |i| (c, j, i))))
            {
                let px = (a * g.stride[0] + i * g.dilation[0]) as i64 - g.padding[0] as i64;
                let py = (b * g.stride[1] + j * g.dilation[1]) as i64 - g.padding[1] as i64;
                if px < 0 || py < 0 || px >= s[0] as i64 || py >= s[1] as i64 {
                    continue;
                }
                let si = px as u64 + s[0] * (py as u64 + s[1] * (ch + s[2] * m));
                let fi = (f[0] - 1 - i) + f[0] * ((f[1] - 1 - j) + f[1] * (ch + f[2] * k));
                let oi = a + o[0] * (b + o[1] * (k + o[2] * m));
                terms.push((si as usize, fi as usize, oi as usize));
            }
        }
        let mut want = [vec![0.0; len(o)], vec![0.0; len(s)], vec![0.0; len(f)]];
        for &(si, fi, oi) in &terms {
            want[0][oi] += x[si] * w[fi];
            want[1][si] += dy[oi] * w[fi];
            want[2][fi] += dy[oi] * x[si];
        }
        let runs = [(Pass::Forward, &xd, &wd), (Pass::Data, &dyd, &wd), (Pass::Filter, &dyd, &xd)];
        for ((pass, a, b), want) in runs.into_iter().zip(want) {
            let got = run(0, pass, a, b, &g).expect("no failure").expect("cuDNN ran the pass");
            let host = crate::backend::download(&got.data, got.dims, got.dtype).unwrap();
            for (i, (&v, w)) in host.as_slice::<T>().iter().zip(&want).enumerate() {
                let v: f64 = v.into();
                assert!((v - w).abs() <= tol, "{pass:?} element {i}: {v} vs {w}");
            }
        }
    }

    /// (image, filter, row, column) of every output pixel, slowest first.
    fn output_pixels(o: [u64; 4]) -> impl Iterator<Item = (u64, u64, u64, u64)> {
        (0..o[3]).flat_map(move |m| {
            (0..o[2]).flat_map(move |k| {
                (0..o[1]).flat_map(move |b| (0..o[0]).map(move |a| (m, k, b, a)))
            })
        })
    }

    #[test]
    #[ignore = "needs a CUDA device with cuDNN 9"]
    fn cudnn_runs_every_pass_f32() {
        passes::<f32>(|v| v as f32, 1e-4);
    }

    #[test]
    #[ignore = "needs a CUDA device with cuDNN 9"]
    fn cudnn_runs_every_pass_f64() {
        passes::<f64>(|v| v, 1e-12);
    }
}
