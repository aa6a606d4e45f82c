//! Matrix products on the CPU: f32 and f64 with kernels of our own where the processor has
//! AVX-512 (`gemm_avx512.rs`, which says why), else faer, which does c32 and c64 too; the
//! `gemm` crate for f16; bf16 through the f32 product (`gemm_bf16`).
//!
//! Why faer and `gemm`: both take any row and column strides and conjugation flags, so
//! transposed, conjugated and strided operands are read where they are, with no copy (only
//! lazy operands are evaluated first, by the caller), and both run on rayon. Both stop at AVX2
//! in this build: their AVX-512 kernels need the `gemm` crate's `x86-v4` feature (shared with
//! faer through `pulp`), which made the compiler crash here; on an AVX-512 machine that is
//! half the width, hence the f32 and f64 kernels of our own. faer has no f16, so half-precision
//! products stay with `gemm`.
//!
//! Batches: one product per batch of the result. A batch large enough to thread runs on all
//! cores; smaller ones run one per core, in parallel over the batches.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use gemm::Parallelism;
use rayon::prelude::*;

use super::lapack::Field;
use super::shared_ptr::SharedPtr;

use crate::backend::blas::{GemmParams, MatArg};
use crate::backend::Buffer;
use crate::dtype::{c32, c64, DType};
use crate::error::Error;
use crate::storage::{with_vec, Element, HostVec};

/// Below this many multiply-adds per batch the crate runs single-threaded, so batches are
/// spread over the cores instead (the crate's own threading threshold).
const THREADED_PRODUCT: usize = 48 * 48 * 256;

/// Computes `C = alpha * op(A) op(B) + beta * C` into `c` (dense, owned) or a new buffer;
/// fails with [`Error::OutOfMemory`] when a new buffer does not fit.
pub(crate) fn gemm(
    a: &MatArg,
    b: &MatArg,
    c: Option<Buffer>,
    p: &GemmParams,
) -> Result<Buffer, Error> {
    if p.dtype == DType::BF16 {
        return gemm_bf16(a, b, c, p);
    }
    let read_c = c.is_some() && !p.beta_is_zero();
    let mut out = match c {
        Some(c) => c,
        None => Buffer::host(HostVec::try_zeros(p.dtype, p.out_len())?),
    };
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every type but u8
    let dst = match &mut out {
        Buffer::Host(h) => with_vec!(h, v, E => v.as_mut_ptr() as *mut u8),
        Buffer::Cuda(_) => unreachable!("internal error: device buffer in a CPU product"),
    };
    match p.dtype {
        #[cfg(target_arch = "x86_64")]
        DType::F32 if super::gemm_avx512::available() => with_avx512::<f32>(a, b, dst, read_c, p),
        #[cfg(target_arch = "x86_64")]
        DType::F64 if super::gemm_avx512::available() => with_avx512::<f64>(a, b, dst, read_c, p),
        DType::F32 => with_faer::<f32>(a, b, dst, read_c, p),
        DType::F64 => with_faer::<f64>(a, b, dst, read_c, p),
        DType::C32 => with_faer::<c32>(a, b, dst, read_c, p),
        DType::C64 => with_faer::<c64>(a, b, dst, read_c, p),
        DType::F16 => with_gemm::<half::f16>(a, b, dst, read_c, p),
        other => unreachable!("internal error: matrix product of {} arrays", other.name()),
    }
    Ok(out)
}

/// A bf16 product: the operands widened to f32 (exactly: every bf16 is an f32), multiplied by
/// the f32 product, which accumulates in f32, and the result rounded to bf16 once, as cuBLAS's
/// bf16 `GemmEx` with f32 compute does on CUDA. Neither faer nor the `gemm` crate has bf16
/// kernels, and widening reads each operand once where the product reads it many times.
fn gemm_bf16(a: &MatArg, b: &MatArg, c: Option<Buffer>, p: &GemmParams) -> Result<Buffer, Error> {
    fn to_f32(b: &Buffer) -> HostVec {
        match b {
            Buffer::Host(h) => h.cast(DType::F32),
            Buffer::Cuda(_) => unreachable!("internal error: device buffer in a CPU product"),
        }
    }
    // the same offset and strides address the widened copy of the whole buffer
    let widen = |x: &MatArg| MatArg {
        data: crate::jit::Data {
            buf: std::sync::Arc::new(Buffer::host(to_f32(x.data.buffer()))),
            offset: x.data.offset,
            strides: x.data.strides,
        },
        dims: x.dims,
        trans: x.trans,
        conj: x.conj,
    };
    let p32 = GemmParams {
        dtype: DType::F32,
        alpha: p.alpha.cast(DType::F32),
        beta: p.beta.cast(DType::F32),
        ..p.clone()
    };
    let c32 = c.as_ref().map(|c| Buffer::host(to_f32(c)));
    let product = gemm(&widen(a), &widen(b), c32, &p32)?;
    Ok(Buffer::host(to_f32(&product).cast(DType::BF16)))
}

/// The first element of an operand's host buffer as a typed pointer, after checking that
/// every element the operand's shape and strides address lies in the buffer (the products
/// below read through raw pointers).
fn host_ptr<T: Element>(x: &MatArg) -> *const T {
    let slice = match x.data.buffer() {
        Buffer::Host(h) => h.as_slice::<T>(),
        Buffer::Cuda(_) => unreachable!("internal error: device buffer in a CPU product"),
    };
    let (mut lo, mut hi) = (x.data.offset as i64, x.data.offset as i64);
    for d in 0..4 {
        let reach = (x.dims[d] as i64 - 1) * x.data.strides[d];
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    assert!(
        x.dims.elements() > 0 && lo >= 0 && (hi as usize) < slice.len(),
        "internal error: a product operand (dims {}, strides {:?}, offset {}) reaches outside \
         its {} elements",
        x.dims,
        x.data.strides,
        x.data.offset,
        slice.len()
    );
    slice.as_ptr()
}

/// (row stride, column stride) of `op(stored)`.
fn op_strides(x: &MatArg) -> (isize, isize) {
    let (s0, s1) = (x.data.strides[0] as isize, x.data.strides[1] as isize);
    if x.trans {
        (s1, s0)
    } else {
        (s0, s1)
    }
}

/// Runs `one(batch, threaded)` for every batch: the batches in parallel, each on one thread,
/// when they are many and small, else one after the other, each on all threads.
fn for_batches(p: &GemmParams, one: impl Fn(usize, bool) + Sync) {
    let batches = p.batch[0] * p.batch[1];
    if batches > 1 && p.m * p.n * p.k < THREADED_PRODUCT {
        (0..batches).into_par_iter().for_each(|i| one(i, false));
    } else {
        for i in 0..batches {
            one(i, true);
        }
    }
}

/// What every batch of one product needs: the operands, their strides as `op(A)` and `op(B)`,
/// the scalars, and where the result goes.
struct Product<'a, T> {
    a: &'a MatArg,
    b: &'a MatArg,
    a_ptr: SharedPtr<T>,
    b_ptr: SharedPtr<T>,
    dst: SharedPtr<T>,
    /// (row stride, column stride) of `op(A)` and of `op(B)`.
    a_strides: (isize, isize),
    b_strides: (isize, isize),
    alpha: T,
    beta: T,
    m: usize,
    n: usize,
    k: usize,
}

impl<'a, T: Element> Product<'a, T> {
    fn new(a: &'a MatArg, b: &'a MatArg, dst: *mut u8, p: &GemmParams) -> Self {
        Product {
            a,
            b,
            a_ptr: SharedPtr(host_ptr::<T>(a) as *mut T),
            b_ptr: SharedPtr(host_ptr::<T>(b) as *mut T),
            dst: SharedPtr(dst as *mut T),
            a_strides: op_strides(a),
            b_strides: op_strides(b),
            alpha: p.alpha.as_slice::<T>()[0],
            beta: p.beta.as_slice::<T>()[0],
            m: p.m,
            n: p.n,
            k: p.k,
        }
    }

    /// The first elements of batch `batch` of `op(A)`, `op(B)` and `C` (`C` holds `m * n`
    /// column-major elements per batch).
    fn at(&self, batch: usize, p: &GemmParams) -> (*const T, *const T, *mut T) {
        let (i2, i3) = (batch % p.batch[0], batch / p.batch[0]);
        // SAFETY: the offsets address elements of the operands' buffers (`host_ptr` checked
        // the reach of their shapes and strides) and of the result's `batches * m * n`.
        unsafe {
            (
                self.a_ptr.get().offset(self.a.batch_offset(i2, i3)),
                self.b_ptr.get().offset(self.b.batch_offset(i2, i3)),
                self.dst.get().add(batch * self.m * self.n),
            )
        }
    }
}

/// The f32 or f64 product through the AVX-512 kernels of `gemm_avx512.rs`.
#[cfg(target_arch = "x86_64")]
fn with_avx512<T: Element + super::gemm_avx512::Avx512Gemm>(
    a: &MatArg,
    b: &MatArg,
    dst: *mut u8,
    read_c: bool,
    p: &GemmParams,
) {
    use super::gemm_avx512::{gemm, Operand};
    let q = Product::<T>::new(a, b, dst, p);
    let (m, n, k) = (q.m, q.n, q.k);
    for_batches(p, |batch, threaded| {
        let (pa, pb, pc) = q.at(batch, p);
        let tasks = if threaded { rayon::current_num_threads() } else { 1 };
        let (a_rs, a_cs) = q.a_strides;
        let (b_rs, b_cs) = q.b_strides;
        // SAFETY: `host_ptr` checked that the operands' shapes and strides stay in their
        // buffers; this batch's `m * n` elements of the destination are written by this batch
        // only; `available()` said the CPU has AVX-512.
        unsafe {
            gemm(
                m,
                n,
                k,
                q.alpha,
                Operand { ptr: pa, rs: a_rs, cs: a_cs },
                Operand { ptr: pb, rs: b_rs, cs: b_cs },
                q.beta,
                read_c,
                pc,
                m,
                tasks,
            )
        }
    });
}

/// The product of one element type through faer.
fn with_faer<T: Field>(a: &MatArg, b: &MatArg, dst: *mut u8, read_c: bool, p: &GemmParams) {
    let q = Product::<T>::new(a, b, dst, p);
    let (m, n, k) = (q.m, q.n, q.k);
    for_batches(p, |batch, threaded| {
        let (pa, pb, pc) = q.at(batch, p);
        let par = if threaded { Par::rayon(0) } else { Par::Seq };
        // C = alpha op(A) op(B) + beta C: scale C first where beta is not one, then add
        let accum = if read_c {
            if q.beta != T::one() {
                // SAFETY: this batch's `m * n` elements of the destination, written by this
                // batch only.
                let c = unsafe { std::slice::from_raw_parts_mut(pc, m * n) };
                c.iter_mut().for_each(|x| *x *= q.beta);
            }
            Accum::Add
        } else {
            Accum::Replace
        };
        // SAFETY: the operands are read-only views inside their buffers; the destination's
        // `m * n` elements of this batch are written by this batch only.
        let (lhs, rhs, out) = unsafe {
            (
                MatRef::from_raw_parts(pa, m, k, q.a_strides.0, q.a_strides.1),
                MatRef::from_raw_parts(pb, k, n, q.b_strides.0, q.b_strides.1),
                MatMut::from_raw_parts_mut(pc, m, n, 1, m as isize),
            )
        };
        let alpha = q.alpha;
        match (a.conj, b.conj) {
            (false, false) => matmul(out, accum, lhs, rhs, alpha, par),
            (true, false) => matmul(out, accum, lhs.conjugate(), rhs, alpha, par),
            (false, true) => matmul(out, accum, lhs, rhs.conjugate(), alpha, par),
            (true, true) => matmul(out, accum, lhs.conjugate(), rhs.conjugate(), alpha, par),
        }
    });
}

/// The product of one element type through the `gemm` crate (f16).
fn with_gemm<T: Element>(a: &MatArg, b: &MatArg, dst: *mut u8, read_c: bool, p: &GemmParams) {
    let q = Product::<T>::new(a, b, dst, p);
    let ((a_rs, a_cs), (b_rs, b_cs)) = (q.a_strides, q.b_strides);
    for_batches(p, |batch, threaded| {
        let (pa, pb, pc) = q.at(batch, p);
        let parallelism = if threaded { Parallelism::Rayon(0) } else { Parallelism::None };
        // SAFETY: as in `with_faer`; the crate reads `dst` only when `read_c` is set, and then
        // it holds `C`. The crate names the scalars the other way round:
        // dst = alpha * dst + beta * lhs * rhs.
        unsafe {
            gemm::gemm(
                q.m,
                q.n,
                q.k,
                pc,
                q.m as isize,
                1,
                read_c,
                pa,
                a_cs,
                a_rs,
                pb,
                b_cs,
                b_rs,
                q.beta,
                q.alpha,
                false,
                a.conj,
                b.conj,
                parallelism,
            )
        }
    });
}

impl crate::backend::blas::Blas for super::Cpu {
    fn blas_available(&self) -> Result<(), Error> {
        Ok(())
    }

    fn gemm(
        &self,
        a: &MatArg,
        b: &MatArg,
        c: Option<Buffer>,
        p: &GemmParams,
    ) -> Result<Buffer, Error> {
        debug_assert!(p.m > 0 && p.n > 0 && p.k > 0 && p.batch.iter().all(|&x| x > 0));
        gemm(a, b, c, p)
    }
}
