//! Backends: where an array's memory lives and what evaluates its expression graph.
//!
//! Every array belongs to one backend (and, on CUDA, one device). The expression graph is
//! backend-neutral; a backend receives flattened `Program`s and returns buffers.

pub(crate) mod cpu;
pub(crate) mod cuda;

use crate::dim4::Dim4;
use crate::jit::{Data, Program};
use crate::device::{HOST_BUFFERS, HOST_BYTES};
use crate::storage::HostVec;
use std::sync::atomic::Ordering;

/// The backend (and device) an array lives on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BackendKind {
    Cpu,
}

/// Memory owned by a backend.
#[derive(Debug)]
pub(crate) enum Buffer {
    Host(HostVec),
}

impl Buffer {
    /// Wraps host memory, counting it in `device_mem_info`.
    pub(crate) fn host(h: HostVec) -> Buffer {
        HOST_BYTES.fetch_add(h.len() * h.dtype().size(), Ordering::Relaxed);
        HOST_BUFFERS.fetch_add(1, Ordering::Relaxed);
        Buffer::Host(h)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        match self {
            Buffer::Host(h) => {
                HOST_BYTES.fetch_sub(h.len() * h.dtype().size(), Ordering::Relaxed);
                HOST_BUFFERS.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

impl BackendKind {
    /// Evaluates a program; one buffer per output, contiguous, in order.
    pub(crate) fn run(self, p: &Program) -> Vec<Buffer> {
        match self {
            BackendKind::Cpu => cpu::eval::run(p).into_iter().map(Buffer::host).collect(),
        }
    }

    /// Moves host elements into a new buffer of this backend.
    pub(crate) fn upload(self, h: HostVec) -> Buffer {
        match self {
            BackendKind::Cpu => Buffer::host(h),
        }
    }
}

/// Copies the elements of ready data with shape `dims` to a contiguous host vector.
pub(crate) fn download(d: &Data, dims: Dim4) -> HostVec {
    let n = dims.elements() as usize;
    match &*d.buf {
        Buffer::Host(h) => {
            if d.is_contiguous(dims) {
                h.sub(d.offset..d.offset + n)
            } else {
                let p = Program {
                    steps: vec![crate::jit::program::Step {
                        instr: crate::jit::Instr::Input(d.clone()),
                        dtype: h.dtype(),
                        dims,
                    }],
                    outputs: vec![0],
                    dims,
                };
                cpu::eval::run(&p).pop().expect("one output")
            }
        }
    }
}
