//! Backends: where an array's memory lives and what evaluates its expression graph.
//!
//! Every array belongs to one backend (and, on CUDA, one device). The expression graph is
//! backend-neutral; a backend receives flattened `Program`s and returns buffers.

pub(crate) mod blas;
pub(crate) mod cpu;
pub(crate) mod cuda;
pub(crate) mod dense;
pub(crate) mod evaluate;
pub(crate) mod image;
pub(crate) mod ml;
pub(crate) mod movement;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod schedule;
pub(crate) mod siblings;
pub(crate) mod sort;
pub(crate) mod sparse;
pub(crate) mod vision;

pub(crate) mod index_copy;
pub(crate) mod signal;
pub(crate) mod write_into;

pub(crate) mod lapack;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::dim4::Dim4;
use crate::error::Error;
use crate::jit::memory::Memory;
use crate::jit::Data;
pub(crate) use crate::place::BackendKind;
use crate::storage::HostVec;
use blas::Blas;
use cpu::host_table::{self, HostRelease, HOST_BUFFERS, HOST_BYTES};
use devices::Devices;
use evaluate::Evaluate;
use image::Image;
use index_copy::IndexCopy;
use lapack::Lapack;
use ml::Ml;
use movement::Movement;
use random::Random;
use reduce::Reduce;
use scan::Scan;
use signal::Signal;
use sort::Sort;
use sparse::Sparse;
use vision::Vision;
use write_into::WriteInto;

/// Memory owned by a backend.
#[derive(Debug)]
pub(crate) enum Buffer {
    Host(HostVec),
    Cuda(cuda::memory::DeviceMem),
}

impl Buffer {
    /// The buffer's length in bytes.
    pub(crate) fn byte_len(&self) -> usize {
        match self {
            Buffer::Host(h) => h.len() * h.dtype().size(),
            Buffer::Cuda(m) => m.len(),
        }
    }

    /// Wraps host memory, counting it in `device_mem_info`.
    pub(crate) fn host(h: HostVec) -> Buffer {
        HOST_BYTES.fetch_add(h.len() * h.dtype().size(), Ordering::Relaxed);
        HOST_BUFFERS.fetch_add(1, Ordering::Relaxed);
        Buffer::Host(h)
    }
}

impl Memory for Buffer {
    fn byte_len(&self) -> usize {
        Buffer::byte_len(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}

/// The backends' view of ready data: the graph holds a buffer as `dyn Memory`, and `Buffer` is
/// the only type that implements it.
impl Data {
    /// The buffer the data lives in.
    pub(crate) fn buffer(&self) -> &Buffer {
        self.buf.as_any().downcast_ref().expect("internal error: data in memory of no backend")
    }

    /// The buffer, mutably, if this is its only reference.
    pub(crate) fn buffer_mut(&mut self) -> Option<&mut Buffer> {
        Arc::get_mut(&mut self.buf).map(|m| {
            m.as_any_mut().downcast_mut().expect("internal error: data in memory of no backend")
        })
    }

    /// The buffer itself if this was its last reference; the data again otherwise.
    pub(crate) fn into_buffer(self) -> Result<Buffer, Data> {
        let Data { buf, offset, strides } = self;
        let any = buf.into_any();
        let shared: Arc<Buffer> =
            any.downcast().expect("internal error: data in memory of no backend");
        Arc::try_unwrap(shared).map_err(|shared| Data { buf: shared, offset, strides })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Buffer::Host(h) = self {
            // A locked buffer stays allocated (and counted) for the user's pointer; a locked
            // adopted one is the user's again (not freed, no longer counted).
            let h = std::mem::replace(h, HostVec::zeros(h.dtype(), 0));
            let bytes = h.len() * h.dtype().size();
            let uncount = || {
                HOST_BYTES.fetch_sub(bytes, Ordering::Relaxed);
                HOST_BUFFERS.fetch_sub(1, Ordering::Relaxed);
            };
            match host_table::release_host(h) {
                HostRelease::Free(h) => {
                    uncount();
                    crate::storage::cache::give(h);
                }
                HostRelease::GivenBack => uncount(),
                HostRelease::Kept => {}
            }
        }
    }
}

/// The address of `b`'s memory (host or device): what identifies a buffer to the user's
/// pointer and to the records of locked host buffers.
pub(crate) fn buffer_addr(b: &Buffer) -> usize {
    match b {
        Buffer::Host(h) => h.as_bytes().as_ptr() as usize,
        Buffer::Cuda(m) => m.ptr() as usize,
    }
}

/// Whether the user holds a lock on `b` (and may be reading or writing it through a pointer),
/// or `b` is memory another library lent read-only: either way emberfire must not write it in
/// place.
pub(crate) fn buffer_locked(b: &Buffer) -> bool {
    match b {
        Buffer::Host(h) => {
            let addr = buffer_addr(b);
            host_table::is_locked(addr) || host_table::is_read_only(addr, h.len())
        }
        Buffer::Cuda(m) => m.is_locked() || m.is_read_only(),
    }
}

/// Copies the elements of ready data with shape `dims` to a contiguous host vector, on the
/// backend the data lives on.
pub(crate) fn download(d: &Data, dims: Dim4, dtype: crate::dtype::DType) -> Result<HostVec, Error> {
    d.backend().ops().download(d, dims, dtype)
}

impl Data {
    /// The backend whose memory the data lives in.
    pub(crate) fn backend(&self) -> BackendKind {
        match self.buffer() {
            Buffer::Host(_) => BackendKind::Cpu,
            Buffer::Cuda(m) => BackendKind::Cuda(m.ordinal()),
        }
    }
}

/// One backend: the CPU, or one CUDA device. Each operation family is a trait of its own,
/// declared beside the family's shared types in `backend/<family>.rs` and implemented with the
/// same signatures by `cpu::Cpu` (in `backend/cpu/<family>.rs`) and by `cuda::Cuda` (in
/// `backend/cuda/<family>.rs`); this trait is all of them together. A family's caller picks
/// the backend of its operands and calls the family's method on it:
/// `node.backend.ops().reduce_dim(...)`.
pub(crate) trait Backend:
    Devices
    + Evaluate
    + Random
    + Reduce
    + Scan
    + Sort
    + Movement
    + IndexCopy
    + WriteInto
    + Blas
    + Signal
    + Lapack
    + Image
    + Vision
    + Ml
    + Sparse
{
}

// Each backend states that it is one; the compiler checks that it implements every family.
impl Backend for cpu::Cpu {}
impl Backend for cuda::Cuda {}

/// The backend that runs a `BackendKind`'s arrays (see [`BackendKind::ops`]); it derefs to the
/// family traits.
pub(crate) enum Ops {
    Cpu(cpu::Cpu),
    Cuda(cuda::Cuda),
}

impl std::ops::Deref for Ops {
    type Target = dyn Backend;

    fn deref(&self) -> &(dyn Backend + 'static) {
        match self {
            Ops::Cpu(b) => b,
            Ops::Cuda(b) => b,
        }
    }
}

impl BackendKind {
    /// The backend of this kind, whose family methods run the operations.
    pub(crate) fn ops(self) -> Ops {
        match self {
            BackendKind::Cpu => Ops::Cpu(cpu::Cpu),
            BackendKind::Cuda(ordinal) => Ops::Cuda(cuda::Cuda { ordinal }),
        }
    }
}

pub(crate) mod devices;
pub(crate) mod native;
pub(crate) mod peer;
