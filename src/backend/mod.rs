//! Backends: where an array's memory lives and what evaluates its expression graph.
//!
//! Every array belongs to one backend (and, on CUDA, one device). The expression graph is
//! backend-neutral; a backend receives flattened `Program`s and returns buffers.

pub(crate) mod blas;
pub(crate) mod cpu;
pub(crate) mod cuda;
pub(crate) mod dense;
pub(crate) mod image;
pub(crate) mod ml;
pub(crate) mod movement;
pub(crate) mod random;
pub(crate) mod reduce;
pub(crate) mod scan;
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
use crate::jit::{Data, Program};
pub(crate) use crate::place::BackendKind;
use crate::storage::HostVec;
use cpu::host_table::{self, HostRelease, HOST_BUFFERS, HOST_BYTES};

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

impl BackendKind {
    /// Evaluates a program; one buffer per output, contiguous, in order.
    pub(crate) fn run(self, p: &Program) -> Result<Vec<Buffer>, Error> {
        match self {
            BackendKind::Cpu => Ok(cpu::eval::run(p)?.into_iter().map(Buffer::host).collect()),
            BackendKind::Cuda(d) => {
                Ok(cuda::launch::run(d, p)?.into_iter().map(Buffer::Cuda).collect())
            }
        }
    }

    /// Moves host elements into a new buffer of this backend.
    pub(crate) fn upload(self, h: HostVec) -> Result<Buffer, Error> {
        match self {
            BackendKind::Cpu => Ok(Buffer::host(h)),
            BackendKind::Cuda(d) => {
                let dev = cuda::runtime::device(d)?;
                let bytes = h.as_bytes();
                let mem = dev.memory().alloc(bytes.len().max(1))?;
                dev.write(&mem, 0, bytes)?;
                Ok(Buffer::Cuda(mem))
            }
        }
    }
}

/// Copies the elements of ready data with shape `dims` to a contiguous host vector.
pub(crate) fn download(d: &Data, dims: Dim4, dtype: crate::dtype::DType) -> Result<HostVec, Error> {
    let n = dims.elements() as usize;
    if !d.is_contiguous(dims) {
        // gather into a contiguous buffer on the data's own backend first
        let p = Program::copy_of(d.clone(), dtype, dims);
        let kind = match d.buffer() {
            Buffer::Host(_) => BackendKind::Cpu,
            Buffer::Cuda(m) => BackendKind::Cuda(m.ordinal()),
        };
        let buf = kind.run(&p)?.pop().expect("one output");
        return download(&Data::dense(buf, dims), dims, dtype);
    }
    match d.buffer() {
        Buffer::Host(h) => h.try_sub(d.offset..d.offset + n),
        Buffer::Cuda(m) => {
            let dev = cuda::runtime::device(m.ordinal())?;
            let size = dtype.size();
            // the host copy of a device array can be what does not fit
            let mut bytes = crate::storage::try_filled(n * size, 0u8)?;
            dev.download(m, d.offset * size, &mut bytes)?;
            HostVec::try_from_bytes(dtype, &bytes)
        }
    }
}

pub(crate) mod devices;
pub(crate) mod native;
pub(crate) mod peer;
