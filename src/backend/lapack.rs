//! Where the factorizations of the linear algebra functions run: `cpu::lapack` (LU and QR of
//! emberfire's own, faer for the rest) or cuSOLVER and cuBLAS on CUDA (`cuda::lapack`).
//!
//! Each primitive takes dense, column-major data of f32, f64, c32 or c64 whose dimensions 2
//! and 3 are a batch of matrices, leaves its inputs untouched and returns new data on the same
//! backend, in LAPACK's conventions (1-based `ipiv`, packed LU and QR, `tau`, `info`). The
//! public functions in `ops::lapack` compose them with the graph's operations.
//!
//! On CUDA, when cuSOLVER (or cuBLAS, for triangular solves) cannot be loaded, the data goes
//! through the host to the CPU code and back, after one note on standard error: slower, never
//! a failure.

use std::sync::Once;

use rayon::prelude::*;

use super::cpu::lapack::{self as cpu, Field};
use super::dense::Dense;
use super::{cuda, BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::{c32, c64, DType};
use crate::error::Error;
use crate::storage::{alloc_uninit, try_copied, Element};

/// Runs `$body` with `$T` bound to the Rust type of one of the four floating `DType`s.
macro_rules! with_field {
    ($dt:expr, $T:ident => $body:expr) => {{
        match $dt {
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::C32 => {
                type $T = c32;
                $body
            }
            DType::C64 => {
                type $T = c64;
                $body
            }
            other => unreachable!("internal error: factorization of {} data", other.name()),
        }
    }};
}

/// Rows, columns and the number of matrices of dense data.
pub(crate) fn shape(d: &Dense) -> (usize, usize, usize) {
    let s = d.shape();
    (s[0], s[1], s[2] * s[3])
}

/// The dims of `rows`×`cols` matrices batched like `like`.
pub(crate) fn batched_dims(rows: usize, cols: usize, like: Dim4) -> Dim4 {
    Dim4::new(&[rows as u64, cols as u64, like[2], like[3]])
}

/// A copy of CPU data's elements, or [`Error::OutOfMemory`].
fn host_vec<T: Element>(d: &Dense) -> Result<Vec<T>, Error> {
    match d.data.buffer() {
        Buffer::Host(h) => {
            let n = d.dims.elements() as usize;
            try_copied(&h.as_slice::<T>()[d.data.offset..d.data.offset + n])
        }
        Buffer::Cuda(_) => unreachable!("internal error: device data on the CPU path"),
    }
}

/// The matrices of a batch one after another, or [`Error::OutOfMemory`]; a batch of one is
/// returned as it is, without a copy.
fn concat<T: Copy>(mut parts: Vec<Vec<T>>) -> Result<Vec<T>, Error> {
    if parts.len() == 1 {
        return Ok(parts.pop().expect("one part"));
    }
    let mut all = alloc_uninit(parts.iter().map(Vec::len).sum())?;
    for p in &parts {
        all.extend_from_slice(p);
    }
    Ok(all)
}

/// Runs `f` on each `size`-element matrix of `v`, in parallel over the matrices.
fn each<T: Send, R: Send>(
    v: &mut [T],
    size: usize,
    f: impl Fn(&mut [T]) -> R + Sync + Send,
) -> Vec<R> {
    if size == 0 {
        return Vec::new();
    }
    v.par_chunks_mut(size).map(f).collect()
}

/// CPU data with the same elements as `d` (a download on CUDA).
fn to_host(d: &Dense) -> Result<Dense, Error> {
    match d.backend {
        BackendKind::Cpu => Ok(d.clone()),
        BackendKind::Cuda(_) => {
            let h = super::download(&d.data, d.dims, d.dtype)?;
            Ok(Dense::new(Buffer::host(h), d.dims, d.dtype, BackendKind::Cpu))
        }
    }
}

/// `d` (CPU data) on `backend` (an upload on CUDA).
fn to_backend(d: Dense, backend: BackendKind) -> Result<Dense, Error> {
    match backend {
        BackendKind::Cpu => Ok(d),
        BackendKind::Cuda(_) => {
            let h = super::download(&d.data, d.dims, d.dtype)?;
            Ok(Dense::new(backend.ops().upload(h)?, d.dims, d.dtype, backend))
        }
    }
}

/// Whether the CUDA routines can run on device `ordinal`; when not, notes once why the CPU
/// code is used instead.
fn cuda_ready(ordinal: usize) -> bool {
    match cuda::lapack::available(ordinal) {
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

/// LU factorization with partial pivoting of each matrix (`getrf`): the packed factors, the
/// 1-based pivots (i32, `min(m, n)` per matrix) and `info` per matrix.
pub(crate) fn getrf(a: &Dense) -> Result<(Dense, Dense, Vec<i32>), Error> {
    if let BackendKind::Cuda(d) = a.backend {
        if cuda_ready(d) {
            return cuda::lapack::getrf(d, a);
        }
        let (lu, ipiv, info) = getrf(&to_host(a)?)?;
        return Ok((to_backend(lu, a.backend)?, to_backend(ipiv, a.backend)?, info));
    }
    let (m, n, _) = shape(a);
    let k = m.min(n);
    with_field!(a.dtype, T => {
        let mut v = host_vec::<T>(a)?;
        let results = each(&mut v, m * n, |x| cpu::getrf(x, m, n));
        let mut ipiv = Vec::with_capacity(k * results.len());
        let mut info = Vec::with_capacity(results.len());
        for (p, i) in results {
            ipiv.extend(p);
            info.push(i);
        }
        Ok((Dense::from_host(v, a.dims), Dense::from_host(ipiv, batched_dims(k, 1, a.dims)), info))
    })
}

/// Solves `A·X = B` for each square `A` from its `getrf` factors (`getrs`).
pub(crate) fn getrs(lu: &Dense, ipiv: &Dense, b: &Dense) -> Result<Dense, Error> {
    if let BackendKind::Cuda(d) = lu.backend {
        if cuda_ready(d) {
            return cuda::lapack::getrs(d, lu, ipiv, b);
        }
        let x = getrs(&to_host(lu)?, &to_host(ipiv)?, &to_host(b)?)?;
        return to_backend(x, lu.backend);
    }
    let (n, _, _) = shape(lu);
    let (_, nrhs, _) = shape(b);
    with_field!(lu.dtype, T => {
        let f = host_vec::<T>(lu)?;
        let p = host_vec::<i32>(ipiv)?;
        let mut x = host_vec::<T>(b)?;
        if n * nrhs > 0 {
            x.par_chunks_mut(n * nrhs).enumerate().for_each(|(i, xb)| {
                cpu::getrs(&f[i * n * n..(i + 1) * n * n], &p[i * n..(i + 1) * n], xb, n, nrhs)
            });
        }
        Ok(Dense::from_host(x, b.dims))
    })
}

/// Cholesky factorization of each matrix (`potrf`, from the `upper` or lower triangle) and
/// `info` per matrix. The CPU code zeroes the other triangle (and, on failure, all but the
/// leading factor); cuSOLVER leaves them as they were, so callers mask them.
pub(crate) fn potrf(a: &Dense, upper: bool) -> Result<(Dense, Vec<i32>), Error> {
    if let BackendKind::Cuda(d) = a.backend {
        if cuda_ready(d) {
            return cuda::lapack::potrf(d, a, upper);
        }
        let (f, info) = potrf(&to_host(a)?, upper)?;
        return Ok((to_backend(f, a.backend)?, info));
    }
    let (n, _, _) = shape(a);
    with_field!(a.dtype, T => {
        let mut v = host_vec::<T>(a)?;
        let info = each(&mut v, n * n, |x| cpu::potrf(x, n, upper));
        Ok((Dense::from_host(v, a.dims), info))
    })
}

/// QR factorization of each matrix (`geqrf`): the packed result and `tau` (`min(m, n)` per
/// matrix).
pub(crate) fn geqrf(a: &Dense) -> Result<(Dense, Dense), Error> {
    if let BackendKind::Cuda(d) = a.backend {
        if cuda_ready(d) {
            return cuda::lapack::geqrf(d, a);
        }
        let (qr, tau) = geqrf(&to_host(a)?)?;
        return Ok((to_backend(qr, a.backend)?, to_backend(tau, a.backend)?));
    }
    let (m, n, _) = shape(a);
    let k = m.min(n);
    with_field!(a.dtype, T => {
        let mut v = host_vec::<T>(a)?;
        let taus = each(&mut v, m * n, |x| cpu::geqrf(x, m, n));
        let tau: Vec<T> = taus.into_iter().flatten().collect();
        Ok((Dense::from_host(v, a.dims), Dense::from_host(tau, batched_dims(k, 1, a.dims))))
    })
}

/// The first `q` columns of each `Q` from `geqrf`'s result (`orgqr`/`ungqr`); requires
/// `min(m, n) <= q <= m`.
pub(crate) fn orgqr(qr: &Dense, tau: &Dense, q: usize) -> Result<Dense, Error> {
    if let BackendKind::Cuda(d) = qr.backend {
        if cuda_ready(d) {
            return cuda::lapack::orgqr(d, qr, tau, q);
        }
        let out = orgqr(&to_host(qr)?, &to_host(tau)?, q)?;
        return to_backend(out, qr.backend);
    }
    let (m, n, count) = shape(qr);
    let k = m.min(n);
    with_field!(qr.dtype, T => {
        let f = host_vec::<T>(qr)?;
        let t = host_vec::<T>(tau)?;
        let parts: Vec<Vec<T>> = (0..count)
            .into_par_iter()
            .map(|i| cpu::orgqr(&f[i * m * n..(i + 1) * m * n], m, &t[i * k..(i + 1) * k], q))
            .collect::<Result<_, Error>>()?;
        Ok(Dense::from_host(concat(parts)?, batched_dims(m, q, qr.dims)))
    })
}

/// The parts of a batched singular value decomposition: `U` and `Vᴴ` (when asked for) and the
/// singular values in the real type.
pub(crate) struct Svd {
    pub u: Option<Dense>,
    pub s: Dense,
    pub vt: Option<Dense>,
}

/// The singular value decomposition of each matrix (`gesvd`): `U` (`m`×`m`), `s`
/// (`min(m, n)` values, non-increasing, real) and `Vᴴ` (`n`×`n`), the matrices only when
/// `vectors`.
pub(crate) fn gesvd(a: &Dense, vectors: bool) -> Result<Svd, Error> {
    if let BackendKind::Cuda(d) = a.backend {
        if cuda_ready(d) {
            return cuda::lapack::gesvd(d, a, vectors);
        }
        let r = gesvd(&to_host(a)?, vectors)?;
        let back = |x: Option<Dense>| x.map(|d| to_backend(d, a.backend)).transpose();
        return Ok(Svd { u: back(r.u)?, s: to_backend(r.s, a.backend)?, vt: back(r.vt)? });
    }
    let (m, n, count) = shape(a);
    let k = m.min(n);
    with_field!(a.dtype, T => {
        let v = host_vec::<T>(a)?;
        let parts: Vec<_> = (0..count)
            .into_par_iter()
            .map(|i| cpu::gesvd(&v[i * m * n..(i + 1) * m * n], m, n, vectors))
            .collect::<Result<_, Error>>()?;
        let mut u = Vec::new();
        let mut s: Vec<<T as Field>::Scalar> = Vec::with_capacity(k * count);
        let mut vt = Vec::new();
        for part in parts {
            let (pu, ps, pvt) = part.ok_or_else(|| {
                Error::Driver(format!(
                    "the singular value decomposition of a {m}×{n} matrix did not converge"
                ))
            })?;
            u.push(pu);
            s.extend(ps);
            vt.push(pvt);
        }
        let s = Dense::from_host(s, batched_dims(k, 1, a.dims));
        Ok(if vectors {
            Svd {
                u: Some(Dense::from_host(concat(u)?, batched_dims(m, m, a.dims))),
                s,
                vt: Some(Dense::from_host(concat(vt)?, batched_dims(n, n, a.dims))),
            }
        } else {
            Svd { u: None, s, vt: None }
        })
    })
}

/// Solves `op(A)·X = B` for each triangular `A` (`n`×`n`, its `lower` or upper triangle read),
/// `op` the conjugate transpose when `adjoint`, with a unit diagonal when `unit` (`trsm`).
pub(crate) fn trsm(
    a: &Dense,
    b: &Dense,
    lower: bool,
    adjoint: bool,
    unit: bool,
) -> Result<Dense, Error> {
    if let BackendKind::Cuda(d) = a.backend {
        if cuda_ready(d) {
            return cuda::lapack::trsm(d, a, b, lower, adjoint, unit);
        }
        let x = trsm(&to_host(a)?, &to_host(b)?, lower, adjoint, unit)?;
        return to_backend(x, a.backend);
    }
    let (n, _, _) = shape(a);
    let (_, nrhs, _) = shape(b);
    with_field!(a.dtype, T => {
        let f = host_vec::<T>(a)?;
        let mut x = host_vec::<T>(b)?;
        if n * nrhs > 0 {
            x.par_chunks_mut(n * nrhs).enumerate().for_each(|(i, xb)| {
                cpu::trsm(&f[i * n * n..(i + 1) * n * n], xb, n, nrhs, lower, adjoint, unit)
            });
        }
        Ok(Dense::from_host(x, b.dims))
    })
}
