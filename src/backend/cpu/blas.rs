//! Matrix products on the CPU: faer for f32, f64, c32 and c64, the `gemm` crate for f16.
//!
//! Why: both take any row and column strides and conjugation flags, so transposed, conjugated
//! and strided operands are read where they are, with no copy (only lazy operands are
//! evaluated first, by the caller), and both run on rayon. faer (which the factorizations use
//! too) multiplies with x86 kernels chosen at run time, AVX-512 where the processor has it;
//! the `gemm` crate's stable build stops at AVX2 (its AVX-512 feature, shared with faer through
//! `pulp`, made the compiler crash here), which on an AVX-512 machine is half the speed. faer
//! has no f16, so half-precision products stay with `gemm`.
//!
//! Batches: one product per batch of the result. A batch large enough to thread runs on all
//! cores; smaller ones run one per core, in parallel over the batches.

use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, MatMut, MatRef, Par};
use gemm::Parallelism;
use rayon::prelude::*;

use super::lapack::Field;

use crate::backend::blas::{GemmParams, MatArg};
use crate::backend::Buffer;
use crate::dtype::{c32, c64, DType};
use crate::storage::{with_vec, Element, HostVec};

/// Below this many multiply-adds per batch the crate runs single-threaded, so batches are
/// spread over the cores instead (the crate's own threading threshold).
const THREADED_PRODUCT: usize = 48 * 48 * 256;

/// Computes `C = alpha * op(A) op(B) + beta * C` into `c` (dense, owned) or a new buffer.
pub(crate) fn gemm(a: &MatArg, b: &MatArg, c: Option<Buffer>, p: &GemmParams) -> Buffer {
    let read_c = c.is_some() && !p.beta_is_zero();
    let mut out = c.unwrap_or_else(|| Buffer::host(HostVec::zeros(p.dtype, p.out_len())));
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every type but u8
    let dst = match &mut out {
        Buffer::Host(h) => with_vec!(h, v, E => v.as_mut_ptr() as *mut u8),
        Buffer::Cuda(_) => unreachable!("internal error: device buffer in a CPU product"),
    };
    match p.dtype {
        DType::F32 => with_faer::<f32>(a, b, dst, read_c, p),
        DType::F64 => with_faer::<f64>(a, b, dst, read_c, p),
        DType::C32 => with_faer::<c32>(a, b, dst, read_c, p),
        DType::C64 => with_faer::<c64>(a, b, dst, read_c, p),
        DType::F16 => typed::<half::f16>(a, b, dst, read_c, p),
        other => unreachable!("internal error: matrix product of {} arrays", other.name()),
    }
    out
}

/// The first element of an operand's host buffer as a typed pointer, after checking that
/// every element the operand's shape and strides address lies in the buffer (the products
/// below read through raw pointers).
fn host_ptr<T: Element>(x: &MatArg) -> *const T {
    let slice = match &*x.data.buf {
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

/// A pointer that may cross to rayon's threads: each batch writes its own part of the result
/// and only reads the operands.
#[derive(Clone, Copy)]
struct SendPtr<T>(*mut T);
// SAFETY: see the type's comment; the buffers outlive the parallel loop.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the whole `SendPtr`, not its field).
    fn get(self) -> *mut T {
        self.0
    }
}

/// (row stride, column stride) of `op(stored)` for the crate.
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

/// The product of one element type through faer.
fn with_faer<T: Field>(a: &MatArg, b: &MatArg, dst: *mut u8, read_c: bool, p: &GemmParams) {
    let (m, n, k) = (p.m, p.n, p.k);
    let b2 = p.batch[0];
    let alpha: T = p.alpha.as_slice::<T>()[0];
    let beta: T = p.beta.as_slice::<T>()[0];
    let (a_rs, a_cs) = op_strides(a);
    let (b_rs, b_cs) = op_strides(b);
    let a_ptr = SendPtr(host_ptr::<T>(a) as *mut T);
    let b_ptr = SendPtr(host_ptr::<T>(b) as *mut T);
    let dst = SendPtr(dst as *mut T);
    let (a_conj, b_conj) = (a.conj, b.conj);
    for_batches(p, |batch, threaded| {
        let (i2, i3) = (batch % b2, batch / b2);
        let par = if threaded { Par::rayon(0) } else { Par::Seq };
        // SAFETY: every offset addresses an element of the operand's buffer (`host_ptr`
        // checked the reach of the shapes and strides); the destination holds `m * n`
        // column-major elements per batch, written by this batch only.
        let (lhs, rhs, mut out) = unsafe {
            (
                MatRef::from_raw_parts(
                    a_ptr.get().offset(a.batch_offset(i2, i3)) as *const T,
                    m,
                    k,
                    a_rs,
                    a_cs,
                ),
                MatRef::from_raw_parts(
                    b_ptr.get().offset(b.batch_offset(i2, i3)) as *const T,
                    k,
                    n,
                    b_rs,
                    b_cs,
                ),
                MatMut::from_raw_parts_mut(dst.get().add(batch * m * n), m, n, 1, m as isize),
            )
        };
        // C = alpha op(A) op(B) + beta C: scale C first where beta is not one, then add
        let accum = if read_c {
            if beta != T::one() {
                for j in 0..n {
                    for i in 0..m {
                        let c = out.rb_mut().get_mut(i, j);
                        *c *= beta;
                    }
                }
            }
            Accum::Add
        } else {
            Accum::Replace
        };
        match (a_conj, b_conj) {
            (false, false) => matmul(out, accum, lhs, rhs, alpha, par),
            (true, false) => matmul(out, accum, lhs.conjugate(), rhs, alpha, par),
            (false, true) => matmul(out, accum, lhs, rhs.conjugate(), alpha, par),
            (true, true) => matmul(out, accum, lhs.conjugate(), rhs.conjugate(), alpha, par),
        }
    });
}

/// The product of one element type through the `gemm` crate (f16).
fn typed<T: Element>(a: &MatArg, b: &MatArg, dst: *mut u8, read_c: bool, p: &GemmParams) {
    let (m, n, k) = (p.m, p.n, p.k);
    let [b2, b3] = p.batch;
    let alpha: T = p.alpha.as_slice::<T>()[0];
    let beta: T = p.beta.as_slice::<T>()[0];
    let (a_rs, a_cs) = op_strides(a);
    let (b_rs, b_cs) = op_strides(b);
    let a_ptr = SendPtr(host_ptr::<T>(a) as *mut T);
    let b_ptr = SendPtr(host_ptr::<T>(b) as *mut T);
    let dst = SendPtr(dst as *mut T);
    let one = move |batch: usize, parallelism: Parallelism| {
        let (i2, i3) = (batch % b2, batch / b2);
        // SAFETY: every offset addresses an element of the operand's buffer (the caller's
        // shapes and strides describe ready data); the destination holds `m * n` elements per
        // batch, written by this call only; the crate reads `dst` only when `read_c` is set,
        // and then it holds `C`. The crate names the scalars the other way round:
        // dst = alpha * dst + beta * lhs * rhs.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                dst.get().add(batch * m * n),
                m as isize,
                1,
                read_c,
                a_ptr.get().offset(a.batch_offset(i2, i3)),
                a_cs,
                a_rs,
                b_ptr.get().offset(b.batch_offset(i2, i3)),
                b_cs,
                b_rs,
                beta,
                alpha,
                false,
                a.conj,
                b.conj,
                parallelism,
            )
        }
    };
    let batches = b2 * b3;
    if batches > 1 && m * n * k < THREADED_PRODUCT {
        (0..batches).into_par_iter().for_each(|i| one(i, Parallelism::None));
    } else {
        for i in 0..batches {
            one(i, Parallelism::Rayon(0));
        }
    }
}
