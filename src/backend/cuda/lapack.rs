//! Dense factorizations on CUDA: cuSOLVER's `getrf`, `getrs`, `potrf`, `geqrf`, `orgqr`
//! (`ungqr`) and `gesvd`, and cuBLAS's `trsm`.
//!
//! - **One cuSOLVER handle per device**, made on first use and kept for the process, bound to
//!   the current stream before each use (a mutex makes uses exclusive), so the routines run
//!   in order with every other kernel and copy, without synchronisation.
//! - **Memory from emberfire's pool**: the factored copies, pivots, `tau`, `info` and each
//!   routine's workspace (sized by its `_bufferSize` query) are pool blocks allocated for the
//!   current stream; a workspace goes back to the pool as soon as its calls are queued, and
//!   the pool reuses it in stream order.
//! - **Inputs are never written**: a routine that works in place gets a device copy; inputs
//!   that are only read are ordered after the work that wrote them (`order_use`).
//! - **Batches** are one call per matrix, queued back to back.
//! - **`info`** is read back (one small download, which waits for the stream) where it is
//!   part of the result: `getrf` (for `det` and the callers' checks), `potrf` (ArrayFire's
//!   `info`) and `gesvd` (convergence). Other routines' `info` only reports arguments, which
//!   the callers have checked.
//! - `gesvd` needs at least as many rows as columns: a wide matrix is decomposed through its
//!   conjugate transpose (`Aᴴ = U'·S·V'ᴴ` gives `U = V'` and `Vᴴ = U'ᴴ`), with emberfire's
//!   transpose kernel.

use std::ffi::{c_char, c_int, c_void};
use std::sync::{Mutex, Once};

use cudarc::cublas::sys as cb;
use cudarc::driver::result as cu;
use cudarc::driver::sys::CUstream;

use super::super::cpu::Cpu;
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use super::vendor::cusolver::{self, cusolver, Handle, FILL_LOWER, FILL_UPPER, OP_N};
use crate::backend::dense::Dense;
use crate::backend::lapack::{batched_dims, shape, Svd};
use crate::backend::{BackendKind, Buffer};
use crate::dtype::DType;
use crate::error::Error;
use crate::storage::HostVec;
use crate::sync::lock;

type Ptr = *mut c_void;

/// A device's cuSOLVER handle and the stream it is bound to.
pub(crate) struct Solver {
    raw: Handle,
    stream: CUstream,
}

// SAFETY: a cuSOLVER handle may be used from any thread; the mutex around it makes uses
// exclusive.
unsafe impl Send for Solver {}

/// The cuSOLVER handle of `dev`, created on first use.
fn solver(dev: &'static Device) -> Result<&'static Mutex<Solver>, Error> {
    let lib = cusolver()?;
    dev.handles().cusolver(|| {
        dev.bind()?;
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device's context is current.
        cusolver::check("creating a handle", unsafe { (lib.create)(&mut raw) })?;
        Ok(Solver { raw, stream: std::ptr::null_mut() })
    })
}

/// Whether the routines here can run on device `ordinal`: cuBLAS (which cuSOLVER needs, and
/// which runs the triangular solves) and cuSOLVER are loaded and the device's handles exist.
pub(crate) fn available(ordinal: usize) -> Result<(), Error> {
    let dev = runtime::device(ordinal)?;
    super::blas::available(ordinal)?;
    solver(dev).map(|_| ())
}

/// Runs `f` with `dev`'s cuSOLVER handle bound to the current stream.
fn with_solver<R>(
    dev: &'static Device,
    f: impl FnOnce(Handle) -> Result<R, Error>,
) -> Result<R, Error> {
    let handle = solver(dev)?;
    let lib = cusolver()?;
    dev.bind()?;
    let mut s = lock(handle);
    let stream = dev.stream_raw();
    if s.stream != stream {
        // SAFETY: the handle is live and the stream belongs to its device's context.
        cusolver::check("binding the stream", unsafe { (lib.set_stream)(s.raw, stream as Ptr) })?;
        s.stream = stream;
    }
    f(s.raw)
}

/// The device memory of CUDA data.
fn mem_of(d: &Dense) -> &DeviceMem {
    match d.data.buffer() {
        Buffer::Cuda(m) => m,
        Buffer::Host(_) => unreachable!("internal error: host data in a CUDA factorization"),
    }
}

/// A new block holding a copy of `d`'s elements (queued on the current stream).
fn copy_of(dev: &Device, d: &Dense) -> Result<DeviceMem, Error> {
    let size = d.dtype.size();
    let bytes = d.dims.elements() as usize * size;
    let out = dev.memory().alloc(bytes.max(1))?;
    dev.copy(mem_of(d), d.data.offset * size, &out, 0, bytes)?;
    Ok(out)
}

/// The address of `d`'s first element, once the current stream waits for the work that wrote
/// it.
fn read(dev: &Device, d: &Dense) -> Result<u64, Error> {
    let mem = mem_of(d);
    dev.memory().order_use(mem, dev.current_stream_id())?;
    Ok(mem.ptr() + (d.data.offset * d.dtype.size()) as u64)
}

fn dense(mem: DeviceMem, dims: crate::dim4::Dim4, dtype: DType, ordinal: usize) -> Dense {
    Dense::new(Buffer::Cuda(mem), dims, dtype, BackendKind::Cuda(ordinal))
}

/// A size as cuSOLVER's 32-bit integer, or an error naming it.
fn int(what: &str, v: usize) -> Result<c_int, Error> {
    c_int::try_from(v).map_err(|_| {
        Error::Driver(format!("cuSOLVER: {what} = {v} is beyond the 32-bit sizes cuSOLVER takes"))
    })
}

/// The real type of the same precision.
fn real_of(dtype: DType) -> DType {
    match dtype {
        DType::F32 | DType::C32 => DType::F32,
        _ => DType::F64,
    }
}

/// A workspace of `elements` elements of `size` bytes (at least one).
fn workspace(dev: &Device, elements: c_int, size: usize) -> Result<DeviceMem, Error> {
    dev.memory().alloc(elements.max(1) as usize * size)
}

/// `count` `info` values, read back (waits for the work queued so far).
fn infos(dev: &Device, info: &DeviceMem, count: usize) -> Result<Vec<i32>, Error> {
    let mut bytes = vec![0u8; count * 4];
    dev.download(info, 0, &mut bytes)?;
    Ok(bytes.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// `base` plus `index` blocks of `block` bytes, as a pointer.
fn at(base: u64, index: usize, block: usize) -> Ptr {
    (base + (index * block) as u64) as Ptr
}

/// Queues a routine on each of `count` matrices with one workspace: `query` is its
/// `_bufferSize` call (the workspace's length in elements of `size` bytes), `call(h, i, ws,
/// lwork)` its call on matrix `i`; `what` names it in errors. The workspace returns to the
/// pool once the calls are queued.
fn batched(
    dev: &'static Device,
    size: usize,
    count: usize,
    what: &str,
    query: impl FnOnce(Handle, &mut c_int) -> c_int,
    call: impl Fn(Handle, usize, Ptr, c_int) -> c_int,
) -> Result<(), Error> {
    with_solver(dev, |h| {
        let mut lwork: c_int = 0;
        cusolver::check(&format!("sizing the workspace of {what}"), query(h, &mut lwork))?;
        let ws = workspace(dev, lwork, size)?;
        for i in 0..count {
            cusolver::check(what, call(h, i, ws.ptr() as Ptr, lwork))?;
        }
        Ok(())
    })
}

/// LU factorization of each matrix: the packed factors, 1-based pivots and `info`.
pub(crate) fn getrf(ordinal: usize, a: &Dense) -> Result<(Dense, Dense, Vec<i32>), Error> {
    let dev = runtime::device(ordinal)?;
    let r = cusolver()?.routines(a.dtype);
    let size = a.dtype.size();
    let (m, n, count) = shape(a);
    let k = m.min(n);
    let (mi, ni) = (int("rows", m)?, int("columns", n)?);
    let lda = mi.max(1);
    dev.bind()?;
    let lu = copy_of(dev, a)?;
    let ipiv = dev.memory().alloc((k * count * 4).max(1))?;
    let info = dev.memory().alloc((count * 4).max(1))?;
    batched(
        dev,
        size,
        count,
        "LU factorization (getrf)",
        // SAFETY: `lu` holds `count` m×n matrices of the type; the query only reads sizes.
        |h, lwork| unsafe { (r.getrf_buffer_size)(h, mi, ni, lu.ptr() as Ptr, lda, lwork) },
        // SAFETY: matrix i, its k pivots and its info lie in the blocks allocated above for
        // this device; the workspace holds `lwork` elements; all stay alive until queued.
        |h, i, ws, _| unsafe {
            (r.getrf)(
                h,
                mi,
                ni,
                at(lu.ptr(), i, m * n * size),
                lda,
                ws,
                at(ipiv.ptr(), i, k * 4) as *mut c_int,
                at(info.ptr(), i, 4) as *mut c_int,
            )
        },
    )?;
    let info = infos(dev, &info, count)?;
    let ipiv = dense(ipiv, batched_dims(k, 1, a.dims), DType::S32, ordinal);
    Ok((dense(lu, a.dims, a.dtype, ordinal), ipiv, info))
}

/// Solves `A·X = B` for each square `A` from its packed LU factors and 1-based pivots.
pub(crate) fn getrs(ordinal: usize, lu: &Dense, ipiv: &Dense, b: &Dense) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let r = cusolver()?.routines(lu.dtype);
    let size = lu.dtype.size();
    let (n, _, count) = shape(lu);
    let (_, nrhs, _) = shape(b);
    let (ni, ki) = (int("rows", n)?, int("right-hand sides", nrhs)?);
    dev.bind()?;
    let x = copy_of(dev, b)?;
    let (f, p) = (read(dev, lu)?, read(dev, ipiv)?);
    let info = dev.memory().alloc((count * 4).max(1))?;
    with_solver(dev, |h| {
        for i in 0..count {
            // SAFETY: matrix i of the factors (n×n), its n pivots (checked to lie in 1..=n by
            // the callers) and right-hand sides i (n×nrhs) lie in live blocks of this device.
            let status = unsafe {
                (r.getrs)(
                    h,
                    OP_N,
                    ni,
                    ki,
                    at(f, i, n * n * size),
                    ni.max(1),
                    at(p, i, n * 4) as *const c_int,
                    at(x.ptr(), i, n * nrhs * size),
                    ni.max(1),
                    at(info.ptr(), i, 4) as *mut c_int,
                )
            };
            cusolver::check("solving from LU factors (getrs)", status)?;
        }
        Ok(())
    })?;
    Ok(dense(x, b.dims, b.dtype, ordinal))
}

/// Cholesky factorization of each matrix from its `upper` or lower triangle, and `info`. The
/// other triangle (and, on failure, what lies outside the leading factor) is as cuSOLVER
/// leaves it: the caller masks it.
pub(crate) fn potrf(ordinal: usize, a: &Dense, upper: bool) -> Result<(Dense, Vec<i32>), Error> {
    let dev = runtime::device(ordinal)?;
    let r = cusolver()?.routines(a.dtype);
    let size = a.dtype.size();
    let (n, _, count) = shape(a);
    let ni = int("rows", n)?;
    let uplo = if upper { FILL_UPPER } else { FILL_LOWER };
    dev.bind()?;
    let f = copy_of(dev, a)?;
    let info = dev.memory().alloc((count * 4).max(1))?;
    batched(
        dev,
        size,
        count,
        "Cholesky factorization (potrf)",
        // SAFETY: `f` holds n×n matrices of the type; the query only reads sizes.
        |h, lwork| unsafe { (r.potrf_buffer_size)(h, uplo, ni, f.ptr() as Ptr, ni.max(1), lwork) },
        // SAFETY: matrix i and its info lie in live blocks of this device; the workspace holds
        // `lwork` elements.
        |h, i, ws, lwork| unsafe {
            (r.potrf)(
                h,
                uplo,
                ni,
                at(f.ptr(), i, n * n * size),
                ni.max(1),
                ws,
                lwork,
                at(info.ptr(), i, 4) as *mut c_int,
            )
        },
    )?;
    let info = infos(dev, &info, count)?;
    Ok((dense(f, a.dims, a.dtype, ordinal), info))
}

/// QR factorization of each matrix: the packed result and `tau`.
pub(crate) fn geqrf(ordinal: usize, a: &Dense) -> Result<(Dense, Dense), Error> {
    let dev = runtime::device(ordinal)?;
    let r = cusolver()?.routines(a.dtype);
    let size = a.dtype.size();
    let (m, n, count) = shape(a);
    let k = m.min(n);
    let (mi, ni) = (int("rows", m)?, int("columns", n)?);
    dev.bind()?;
    let qr = copy_of(dev, a)?;
    let tau = dev.memory().alloc((k * count * size).max(1))?;
    let info = dev.memory().alloc((count * 4).max(1))?;
    batched(
        dev,
        size,
        count,
        "QR factorization (geqrf)",
        // SAFETY: `qr` holds m×n matrices of the type; the query only reads sizes.
        |h, lwork| unsafe { (r.geqrf_buffer_size)(h, mi, ni, qr.ptr() as Ptr, mi.max(1), lwork) },
        // SAFETY: matrix i, its k scalars and its info lie in live blocks of this device; the
        // workspace holds `lwork` elements.
        |h, i, ws, lwork| unsafe {
            (r.geqrf)(
                h,
                mi,
                ni,
                at(qr.ptr(), i, m * n * size),
                mi.max(1),
                at(tau.ptr(), i, k * size),
                ws,
                lwork,
                at(info.ptr(), i, 4) as *mut c_int,
            )
        },
    )?;
    let tau = dense(tau, batched_dims(k, 1, a.dims), a.dtype, ordinal);
    Ok((dense(qr, a.dims, a.dtype, ordinal), tau))
}

/// The first `q` columns of each `Q` from `geqrf`'s result (`min(m, n) <= q <= m`).
pub(crate) fn orgqr(ordinal: usize, qr: &Dense, tau: &Dense, q: usize) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let r = cusolver()?.routines(qr.dtype);
    let size = qr.dtype.size();
    let (m, n, count) = shape(qr);
    let k = m.min(n);
    let (mi, qi, ki) = (int("rows", m)?, int("columns", q)?, int("reflectors", k)?);
    dev.bind()?;
    // Each output matrix starts as the reflectors' columns (the first min(n, q) of the packed
    // matrix), and zeros beyond (orgqr sets the columns past k itself).
    let out = dev.memory().alloc((m * q * count * size).max(1))?;
    let kept = n.min(q);
    for i in 0..count {
        let src = (qr.data.offset + i * m * n) * size;
        dev.copy(mem_of(qr), src, &out, i * m * q * size, m * kept * size)?;
        if q > kept {
            let rest = out.ptr() + ((i * m * q + m * kept) * size) as u64;
            // SAFETY: the range lies in `out`, a block of this device allocated for the
            // current stream, on which the memset is queued.
            unsafe { cu::memset_d8_async(rest, 0, m * (q - kept) * size, dev.stream_raw()) }
                .map_err(|e| super::driver_error("clearing a matrix", e))?;
        }
    }
    let t = read(dev, tau)?;
    let info = dev.memory().alloc((count * 4).max(1))?;
    batched(
        dev,
        size,
        count,
        "forming Q (orgqr/ungqr)",
        // SAFETY: `out` holds m×q matrices and `t` k scalars of the type; the query reads
        // sizes only.
        |h, lwork| unsafe {
            (r.orgqr_buffer_size)(h, mi, qi, ki, out.ptr() as Ptr, mi.max(1), t as Ptr, lwork)
        },
        // SAFETY: matrix i (m×q), its k scalars and its info lie in live blocks of this
        // device; the workspace holds `lwork` elements.
        |h, i, ws, lwork| unsafe {
            (r.orgqr)(
                h,
                mi,
                qi,
                ki,
                at(out.ptr(), i, m * q * size),
                mi.max(1),
                at(t, i, k * size),
                ws,
                lwork,
                at(info.ptr(), i, 4) as *mut c_int,
            )
        },
    )?;
    Ok(dense(out, batched_dims(m, q, qr.dims), qr.dtype, ordinal))
}

/// The conjugate transpose of each matrix of `d`, on the device.
fn adjoint(ordinal: usize, d: &Dense) -> Result<Dense, Error> {
    let backend = BackendKind::Cuda(ordinal);
    let (r, c, _) = shape(d);
    let buf = backend.ops().transpose(&d.data, d.dims, d.dtype, true)?;
    Ok(Dense::new(buf, batched_dims(c, r, d.dims), d.dtype, backend))
}

/// The singular value decomposition of each matrix: `U`, `s` and `Vᴴ` (the matrices only when
/// `vectors`).
pub(crate) fn gesvd(ordinal: usize, a: &Dense, vectors: bool) -> Result<Svd, Error> {
    let (m, n, count) = shape(a);
    if m < n {
        let t = gesvd(ordinal, &adjoint(ordinal, a)?, vectors)?;
        let flip = |x: Option<Dense>| x.map(|d| adjoint(ordinal, &d)).transpose();
        return Ok(Svd { u: flip(t.vt)?, s: t.s, vt: flip(t.u)? });
    }
    let dev = runtime::device(ordinal)?;
    let r = cusolver()?.routines(a.dtype);
    let size = a.dtype.size();
    let real = real_of(a.dtype);
    let k = n;
    let (mi, ni) = (int("rows", m)?, int("columns", n)?);
    dev.bind()?;
    let work = copy_of(dev, a)?;
    let s = dev.memory().alloc((k * count * real.size()).max(1))?;
    let (u, vt) = if vectors {
        (
            Some(dev.memory().alloc((m * m * count * size).max(1))?),
            Some(dev.memory().alloc((n * n * count * size).max(1))?),
        )
    } else {
        (None, None)
    };
    let rwork = dev.memory().alloc(k.max(2) * real.size())?;
    let info = dev.memory().alloc((count * 4).max(1))?;
    let job = if vectors { b'A' } else { b'N' } as c_char;
    let base = |x: &Option<DeviceMem>| x.as_ref().map_or(0, |b| b.ptr());
    let (up, vp) = (base(&u), base(&vt));
    let pick = |p: u64, i: usize, block: usize| {
        if p == 0 {
            std::ptr::null_mut()
        } else {
            at(p, i, block)
        }
    };
    batched(
        dev,
        size,
        count,
        "singular value decomposition (gesvd)",
        // SAFETY: a size query.
        |h, lwork| unsafe { (r.gesvd_buffer_size)(h, mi, ni, lwork) },
        // SAFETY: matrix i (m×n, overwritten), its k singular values, U (m×m) and Vᴴ (n×n)
        // when asked for (not referenced otherwise), and its info lie in live blocks of this
        // device; the workspace holds `lwork` elements and `rwork` k real ones.
        |h, i, ws, lwork| unsafe {
            (r.gesvd)(
                h,
                job,
                job,
                mi,
                ni,
                at(work.ptr(), i, m * n * size),
                mi.max(1),
                at(s.ptr(), i, k * real.size()),
                pick(up, i, m * m * size),
                mi.max(1),
                pick(vp, i, n * n * size),
                ni.max(1),
                ws,
                lwork,
                rwork.ptr() as Ptr,
                at(info.ptr(), i, 4) as *mut c_int,
            )
        },
    )?;
    let info = infos(dev, &info, count)?;
    if let Some(bad) = info.iter().find(|&&i| i != 0) {
        return Err(Error::Driver(format!(
            "cuSOLVER: the singular value decomposition of a {m}×{n} matrix did not converge \
             (gesvd info {bad})"
        )));
    }
    let s = dense(s, batched_dims(k, 1, a.dims), real, ordinal);
    let u = u.map(|u| dense(u, batched_dims(m, m, a.dims), a.dtype, ordinal));
    let vt = vt.map(|v| dense(v, batched_dims(n, n, a.dims), a.dtype, ordinal));
    Ok(Svd { u, s, vt })
}

/// cuBLAS's `trsm` of every element type, with element pointers as `void *` and the status
/// as a plain integer.
type Trsm = unsafe extern "C" fn(
    cb::cublasHandle_t,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    *mut c_void,
    c_int,
) -> c_int;

/// Solves `op(A)·X = B` for each triangular `A` (cuBLAS's `trsm` from the left).
pub(crate) fn trsm(
    ordinal: usize,
    a: &Dense,
    b: &Dense,
    lower: bool,
    adjoint: bool,
    unit: bool,
) -> Result<Dense, Error> {
    let dev = runtime::device(ordinal)?;
    let size = a.dtype.size();
    let (n, _, count) = shape(a);
    let (_, nrhs, _) = shape(b);
    let (ni, ki) = (int("rows", n)?, int("right-hand sides", nrhs)?);
    let name = match a.dtype {
        DType::F32 => "cublasStrsm_v2",
        DType::F64 => "cublasDtrsm_v2",
        DType::C32 => "cublasCtrsm_v2",
        DType::C64 => "cublasZtrsm_v2",
        other => unreachable!("internal error: triangular solve of {} data", other.name()),
    };
    let one = HostVec::F64(vec![1.0]).cast(a.dtype);
    dev.bind()?;
    let x = copy_of(dev, b)?;
    let f = read(dev, a)?;
    super::blas::with_handle(dev, |h| {
        // SAFETY: the handle exists, so cuBLAS is loaded; `name` is its trsm of this element
        // type, whose C signature `Trsm` matches with `void *` element pointers.
        let lib = unsafe { cb::culib() };
        // SAFETY: as above: the symbol `name` has the C signature `Trsm`.
        let solve: Trsm = *unsafe { lib.get::<Trsm>(name.as_bytes()) }.map_err(|_| {
            Error::BackendUnavailable(format!("CUDA: the cuBLAS library found has no `{name}`"))
        })?;
        let (uplo, op, diag) =
            (if lower { 0 } else { 1 }, if adjoint { 2 } else { 0 }, unit as c_int);
        for i in 0..count {
            // SAFETY: matrix i of A (n×n) and right-hand sides i (n×nrhs) lie in live blocks of
            // this device; alpha is a host value of the element type (host pointer mode).
            let status = unsafe {
                solve(
                    h,
                    0, // from the left
                    uplo,
                    op,
                    diag,
                    ni,
                    ki,
                    one.as_bytes().as_ptr() as *const c_void,
                    at(f, i, n * n * size),
                    ni.max(1),
                    at(x.ptr(), i, n * nrhs * size),
                    ni.max(1),
                )
            };
            if status != 0 {
                return Err(Error::Driver(format!(
                    "cuBLAS: triangular solve ({name}) failed with status {status}"
                )));
            }
        }
        Ok(())
    })?;
    Ok(dense(x, b.dims, b.dtype, ordinal))
}

/// CPU data with the same elements as `d` (device data): a download.
fn to_host(d: &Dense) -> Result<Dense, Error> {
    let h = crate::backend::download(&d.data, d.dims, d.dtype)?;
    Ok(Dense::new(Buffer::host(h), d.dims, d.dtype, BackendKind::Cpu))
}

/// `d` (CPU data) on `backend` (a CUDA device): an upload.
fn to_backend(d: Dense, backend: BackendKind) -> Result<Dense, Error> {
    let h = crate::backend::download(&d.data, d.dims, d.dtype)?;
    Ok(Dense::new(backend.ops().upload(h)?, d.dims, d.dtype, backend))
}

/// Whether the CUDA routines can run on device `ordinal`; when not, notes once why the CPU
/// code is used instead.
fn cuda_ready(ordinal: usize) -> bool {
    match available(ordinal) {
        Ok(()) => true,
        Err(why) => {
            static NOTE: Once = Once::new();
            NOTE.call_once(|| {
                eprintln!(
                    "emberfire: linear algebra on CUDA runs on the CPU through host copies, \
                     because {why}"
                )
            });
            false
        }
    }
}

/// The linear algebra family on a CUDA device: the routines above where cuSOLVER (and
/// cuBLAS) can be loaded; otherwise the operands go through the host to `cpu::Cpu`'s
/// implementation and the results come back to the device.
impl crate::backend::lapack::Lapack for super::Cuda {
    fn getrf(&self, a: &Dense) -> Result<(Dense, Dense, Vec<i32>), Error> {
        if cuda_ready(self.ordinal) {
            return getrf(self.ordinal, a);
        }
        let (lu, ipiv, info) = Cpu.getrf(&to_host(a)?)?;
        Ok((to_backend(lu, a.backend)?, to_backend(ipiv, a.backend)?, info))
    }

    fn getrs(&self, lu: &Dense, ipiv: &Dense, b: &Dense) -> Result<Dense, Error> {
        if cuda_ready(self.ordinal) {
            return getrs(self.ordinal, lu, ipiv, b);
        }
        let x = Cpu.getrs(&to_host(lu)?, &to_host(ipiv)?, &to_host(b)?)?;
        to_backend(x, lu.backend)
    }

    fn potrf(&self, a: &Dense, upper: bool) -> Result<(Dense, Vec<i32>), Error> {
        if cuda_ready(self.ordinal) {
            return potrf(self.ordinal, a, upper);
        }
        let (f, info) = Cpu.potrf(&to_host(a)?, upper)?;
        Ok((to_backend(f, a.backend)?, info))
    }

    fn geqrf(&self, a: &Dense) -> Result<(Dense, Dense), Error> {
        if cuda_ready(self.ordinal) {
            return geqrf(self.ordinal, a);
        }
        let (qr, tau) = Cpu.geqrf(&to_host(a)?)?;
        Ok((to_backend(qr, a.backend)?, to_backend(tau, a.backend)?))
    }

    fn orgqr(&self, qr: &Dense, tau: &Dense, q: usize) -> Result<Dense, Error> {
        if cuda_ready(self.ordinal) {
            return orgqr(self.ordinal, qr, tau, q);
        }
        let out = Cpu.orgqr(&to_host(qr)?, &to_host(tau)?, q)?;
        to_backend(out, qr.backend)
    }

    fn gesvd(&self, a: &Dense, vectors: bool) -> Result<Svd, Error> {
        if cuda_ready(self.ordinal) {
            return gesvd(self.ordinal, a, vectors);
        }
        let r = Cpu.gesvd(&to_host(a)?, vectors)?;
        let back = |x: Option<Dense>| x.map(|d| to_backend(d, a.backend)).transpose();
        Ok(Svd { u: back(r.u)?, s: to_backend(r.s, a.backend)?, vt: back(r.vt)? })
    }

    fn trsm(
        &self,
        a: &Dense,
        b: &Dense,
        lower: bool,
        adjoint: bool,
        unit: bool,
    ) -> Result<Dense, Error> {
        if cuda_ready(self.ordinal) {
            return trsm(self.ordinal, a, b, lower, adjoint, unit);
        }
        let x = Cpu.trsm(&to_host(a)?, &to_host(b)?, lower, adjoint, unit)?;
        to_backend(x, a.backend)
    }
}
