//! The collective calls of [`Communicator`]: checking their arguments, then NCCL on CUDA or the
//! one-rank answer on the CPU.

use std::ffi::c_int;

use super::layout::{gathered, scattered};
use super::{Communicator, Ranks, ReduceOp};
use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::native::{self, nccl, DeviceMem};
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::error::{Error, Result};
use crate::jit::{Data, Node};
use crate::sync::lock;

/// NCCL's type and the number of NCCL elements per element for reducing `dtype` with `op`;
/// an error, naming `func`, where NCCL cannot.
fn reduction_type(func: &str, dtype: DType, op: ReduceOp) -> Result<(c_int, usize)> {
    if let Some(t) = nccl::reducing_type(dtype) {
        return Ok((t, 1));
    }
    match (dtype, op) {
        (DType::B8, ReduceOp::Min | ReduceOp::Max) => Ok((nccl::moving_type(DType::U8).0, 1)),
        (DType::C32 | DType::C64, ReduceOp::Sum | ReduceOp::Avg) => Ok(nccl::moving_type(dtype)),
        _ => Err(misuse(format!(
            "{func}: {op:?} of {dtype:?} elements is not available: NCCL reduces u8, i32, u32, \
             i64, u64, f16, f32 and f64, complex numbers by Sum and Avg, and bool by Min and \
             Max; cast the arrays first"
        ))),
    }
}

fn misuse(msg: String) -> Error {
    Error::Collective(msg)
}

/// The array of shape `dims` that NCCL calls queued on device `ordinal`'s current stream write
/// into `mem`: the next operation on that stream (or one that waits for it) sees it whole.
fn written<T: HasAfEnum>(ordinal: usize, mem: DeviceMem, dims: Dim4) -> Result<Array<T>> {
    let dev = native::device(ordinal)?;
    dev.memory().producer_waits_for(&mem, dev.current_stream_id())?;
    let kind = BackendKind::Cuda(ordinal);
    let data = Data::dense(Buffer::Cuda(mem), dims);
    Ok(Array::from_node(Node::ready(T::DTYPE, dims, kind, data)))
}

/// What one rank passes to NCCL: its evaluated, dense array.
struct Part {
    dense: Dense,
    ordinal: usize,
}

impl Part {
    fn mem(&self) -> &DeviceMem {
        match self.dense.data.buffer() {
            Buffer::Cuda(m) => m,
            Buffer::Host(_) => unreachable!("a CUDA rank's array is on the device"),
        }
    }

    fn ptr(&self) -> u64 {
        self.mem().ptr() + (self.dense.data.offset * self.dense.dtype.size()) as u64
    }
}

impl Communicator {
    /// Checks that `arrays` holds one array per local rank, on that rank's device, all of one
    /// shape; returns the shape.
    fn check_parts<T: HasAfEnum>(&self, func: &str, arrays: &[Array<T>]) -> Result<Dim4> {
        if arrays.len() != self.local.len() {
            return Err(misuse(format!(
                "{func}: `arrays` holds {} arrays; this communicator holds {} rank(s) here \
                 (ranks {:?}), and takes one array per rank",
                arrays.len(),
                self.local.len(),
                self.ranks()
            )));
        }
        for (i, (a, &(rank, device))) in arrays.iter().zip(&self.local).enumerate() {
            self.check_on(func, a.node(), rank, device, i)?;
        }
        let dims = arrays[0].dims();
        if let Some(a) = arrays.iter().find(|a| a.dims() != dims) {
            return Err(misuse(format!(
                "{func}: the arrays differ in shape ({dims} and {}); every rank passes the same \
                 shape",
                a.dims()
            )));
        }
        Ok(dims)
    }

    fn check_on(&self, func: &str, node: &Node, rank: usize, device: i32, i: usize) -> Result<()> {
        let expected = if self.backend_is_cuda {
            BackendKind::Cuda(device as usize)
        } else {
            BackendKind::Cpu
        };
        if node.backend != expected {
            return Err(misuse(format!(
                "{func}: `arrays[{i}]` (rank {rank}) lives on {:?}, not on the rank's device \
                 {expected:?}; move it with `to_device` first",
                node.backend
            )));
        }
        Ok(())
    }

    /// Evaluates each rank's array densely.
    fn parts<T: HasAfEnum>(&self, arrays: &[Array<T>]) -> Result<Vec<Part>> {
        arrays
            .iter()
            .zip(&self.local)
            .map(|(a, &(_, d))| Ok(Part { dense: Dense::of(a.node())?, ordinal: d as usize }))
            .collect()
    }

    fn comms(&self) -> &[nccl::Comm] {
        match &self.ranks {
            Ranks::Cuda(c) => c,
            Ranks::Cpu { .. } => &[],
        }
    }

    /// Queues one NCCL call per local rank (together, in one group), each writing a new buffer
    /// of `out_bytes` on its rank's device (none where `out_bytes` gives `None`), and returns
    /// those buffers as arrays of shape `out_dims`.
    fn run<T: HasAfEnum>(
        &self,
        func: &str,
        parts: &[Part],
        call: nccl::Call,
        count: usize,
        nccl_type: c_int,
        out: impl Fn(usize) -> Option<(Dim4, usize)>,
    ) -> Result<Vec<Option<Array<T>>>> {
        let _serial = lock(&self.calls);
        let mut outs: Vec<Option<(Dim4, DeviceMem)>> = Vec::with_capacity(parts.len());
        for (i, p) in parts.iter().enumerate() {
            let dev = native::device(p.ordinal)?;
            outs.push(match out(i) {
                Some((dims, bytes)) => Some((dims, dev.memory().alloc(bytes.max(1))?)),
                None => None,
            });
        }
        nccl::group(func, || {
            for ((p, o), comm) in parts.iter().zip(&outs).zip(self.comms()) {
                let dev = native::device(p.ordinal)?;
                dev.bind()?;
                let stream = dev.current_stream_id();
                dev.memory().order_use(p.mem(), stream)?;
                let recv = match o {
                    Some((_, m)) => {
                        dev.memory().order_use(m, stream)?;
                        m.ptr()
                    }
                    None => 0,
                };
                if count == 0 {
                    continue;
                }
                // SAFETY: `p` is live, dense device memory of the rank's device holding the
                // elements the call reads (checked shapes); `recv` is a new buffer of the size
                // the call writes, or null where NCCL writes nothing (reduce off the root);
                // both are ordered on this stream, so neither is reused before the call ends.
                unsafe { nccl::launch(comm, call, p.ptr(), recv, count, nccl_type, func)? };
            }
            Ok(())
        })?;
        let mut arrays = Vec::with_capacity(parts.len());
        for (p, o) in parts.iter().zip(outs) {
            arrays.push(match o {
                Some((dims, mem)) => Some(written(p.ordinal, mem, dims)?),
                None => None,
            });
        }
        Ok(arrays)
    }

    /// Combines every rank's array element by element with `op`; every rank receives the
    /// result. Takes and returns one array per local rank, in rank order.
    ///
    /// An [`Error::Collective`] if the arrays are not one per local rank on its device, differ
    /// in shape, or are of a type NCCL cannot reduce with `op` (i16 and u16; complex numbers
    /// except by Sum and Avg; bool except by Min and Max); an [`Error::Driver`] if NCCL fails.
    /// Shapes are checked among this process's ranks; ranks in other processes must pass the
    /// same shape, which NCCL cannot check.
    ///
    /// ```
    /// use emberfire::collective::{Communicator, ReduceOp};
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[4i32, -1], dim4!(2));
    /// assert_eq!(comm.all_reduce(&[x], ReduceOp::Max).unwrap()[0].to_vec(), vec![4, -1]);
    /// ```
    pub fn all_reduce<T: HasAfEnum>(
        &self,
        arrays: &[Array<T>],
        op: ReduceOp,
    ) -> Result<Vec<Array<T>>> {
        const F: &str = "Communicator::all_reduce";
        let dims = self.check_parts(F, arrays)?;
        let (t, per) = reduction_type(F, T::DTYPE, op)?;
        if !self.backend_is_cuda {
            return Ok(arrays.to_vec());
        }
        let n = dims.elements() as usize;
        let parts = self.parts(arrays)?;
        let bytes = n * T::DTYPE.size();
        let out = self.run(F, &parts, nccl::Call::AllReduce(op.nccl()), n * per, t, |_| {
            Some((dims, bytes))
        })?;
        Ok(out.into_iter().flatten().collect())
    }

    /// Rank `root`'s array, copied to every rank. Every local rank passes an array of the
    /// shape being sent (off the root only the shape is read: `Array::new_empty` serves).
    ///
    /// An error as [`Communicator::all_reduce`] gives for misplaced or mismatched arrays, or if
    /// `root` is not a rank.
    ///
    /// ```
    /// use emberfire::collective::Communicator;
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[1u16, 2, 3], dim4!(3));
    /// assert_eq!(comm.broadcast(&[x], 0).unwrap()[0].to_vec(), vec![1, 2, 3]);
    /// ```
    pub fn broadcast<T: HasAfEnum>(
        &self,
        arrays: &[Array<T>],
        root: usize,
    ) -> Result<Vec<Array<T>>> {
        const F: &str = "Communicator::broadcast";
        let dims = self.check_parts(F, arrays)?;
        self.check_rank(F, "root", root)?;
        if !self.backend_is_cuda {
            return Ok(arrays.to_vec());
        }
        let (t, per) = nccl::moving_type(T::DTYPE);
        let n = dims.elements() as usize;
        let parts = self.parts(arrays)?;
        let bytes = n * T::DTYPE.size();
        let out =
            self.run(F, &parts, nccl::Call::Broadcast(root), n * per, t, |_| Some((dims, bytes)))?;
        Ok(out.into_iter().flatten().collect())
    }

    /// Combines every rank's array element by element with `op` into rank `root`: `Some`
    /// result where this process holds the root, `None` elsewhere.
    ///
    /// An error as [`Communicator::all_reduce`] gives, or if `root` is not a rank.
    ///
    /// ```
    /// use emberfire::collective::{Communicator, ReduceOp};
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[2.0f64, 3.0], dim4!(2));
    /// let r = comm.reduce(&[x], ReduceOp::Prod, 0).unwrap();
    /// assert_eq!(r.unwrap().to_vec(), vec![2.0, 3.0]);
    /// ```
    pub fn reduce<T: HasAfEnum>(
        &self,
        arrays: &[Array<T>],
        op: ReduceOp,
        root: usize,
    ) -> Result<Option<Array<T>>> {
        const F: &str = "Communicator::reduce";
        let dims = self.check_parts(F, arrays)?;
        self.check_rank(F, "root", root)?;
        let (t, per) = reduction_type(F, T::DTYPE, op)?;
        if !self.backend_is_cuda {
            return Ok(Some(arrays[0].clone()));
        }
        let n = dims.elements() as usize;
        let parts = self.parts(arrays)?;
        let bytes = n * T::DTYPE.size();
        let local = self.local.clone();
        let out = self.run(F, &parts, nccl::Call::Reduce(op.nccl(), root), n * per, t, |i| {
            (local[i].0 == root).then_some((dims, bytes))
        })?;
        Ok(out.into_iter().flatten().next())
    }

    /// Every rank's array, stacked in rank order along the dimension after the arrays' last
    /// dimension longer than 1 (vectors of `n` make an `n x world` matrix, matrices a
    /// three-dimensional array; arrays using all four dimensions are joined along the
    /// fourth). Every rank receives the whole.
    ///
    /// ```
    /// use emberfire::collective::Communicator;
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[1.0f32, 2.0], dim4!(2));
    /// let all = comm.all_gather(&[x]).unwrap();
    /// assert_eq!(all[0].dims(), dim4!(2, 1)); // one rank
    /// ```
    pub fn all_gather<T: HasAfEnum>(&self, arrays: &[Array<T>]) -> Result<Vec<Array<T>>> {
        const F: &str = "Communicator::all_gather";
        let dims = self.check_parts(F, arrays)?;
        let out_dims = gathered(dims, self.world);
        if !self.backend_is_cuda {
            return Ok(arrays.iter().map(|a| crate::moddims(a, out_dims)).collect());
        }
        let (t, per) = nccl::moving_type(T::DTYPE);
        let n = dims.elements() as usize;
        let parts = self.parts(arrays)?;
        let bytes = n * self.world * T::DTYPE.size();
        let out =
            self.run(F, &parts, nccl::Call::AllGather, n * per, t, |_| Some((out_dims, bytes)))?;
        Ok(out.into_iter().flatten().collect())
    }

    /// Combines every rank's array element by element with `op` and gives rank `r` the `r`-th
    /// of `world_size` equal parts of the result, split along the arrays' last dimension
    /// longer than 1 (which must divide evenly).
    ///
    /// An error as [`Communicator::all_reduce`] gives, or if that dimension does not divide.
    ///
    /// ```
    /// use emberfire::collective::{Communicator, ReduceOp};
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[1i64, 2, 3, 4], dim4!(2, 2));
    /// let part = comm.reduce_scatter(&[x], ReduceOp::Sum).unwrap();
    /// assert_eq!(part[0].dims(), dim4!(2, 2)); // one rank keeps the whole
    /// ```
    pub fn reduce_scatter<T: HasAfEnum>(
        &self,
        arrays: &[Array<T>],
        op: ReduceOp,
    ) -> Result<Vec<Array<T>>> {
        const F: &str = "Communicator::reduce_scatter";
        let dims = self.check_parts(F, arrays)?;
        let (t, per) = reduction_type(F, T::DTYPE, op)?;
        let out_dims = scattered(F, dims, self.world)?;
        if !self.backend_is_cuda {
            return Ok(arrays.iter().map(|a| crate::moddims(a, out_dims)).collect());
        }
        let part = out_dims.elements() as usize;
        let parts = self.parts(arrays)?;
        let bytes = part * T::DTYPE.size();
        let out =
            self.run(F, &parts, nccl::Call::ReduceScatter(op.nccl()), part * per, t, |_| {
                Some((out_dims, bytes))
            })?;
        Ok(out.into_iter().flatten().collect())
    }

    /// Every rank's array split into `world_size` equal parts along its last dimension longer
    /// than 1 (which must divide evenly): rank `r` receives part `r` of every rank's array,
    /// placed in rank order, in an array of the same shape. With `world_size` parts of `n`
    /// elements, element `i` of part `s` of rank `r`'s result is element `i` of part `r` of
    /// rank `s`'s array (the transpose of the ranks' parts).
    ///
    /// An error as [`Communicator::all_reduce`] gives for misplaced or mismatched arrays, or if
    /// that dimension does not divide.
    ///
    /// ```
    /// use emberfire::collective::Communicator;
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[1i32, 2, 3, 4], dim4!(4));
    /// assert_eq!(comm.all_to_all(&[x]).unwrap()[0].to_vec(), vec![1, 2, 3, 4]); // one rank
    /// ```
    pub fn all_to_all<T: HasAfEnum>(&self, arrays: &[Array<T>]) -> Result<Vec<Array<T>>> {
        const F: &str = "Communicator::all_to_all";
        let dims = self.check_parts(F, arrays)?;
        let part = scattered(F, dims, self.world)?.elements() as usize;
        if !self.backend_is_cuda {
            return Ok(arrays.to_vec());
        }
        let (t, per) = nccl::moving_type(T::DTYPE);
        let part_bytes = part * T::DTYPE.size();
        let parts = self.parts(arrays)?;
        let _serial = lock(&self.calls);
        let mut outs = Vec::with_capacity(parts.len());
        for p in &parts {
            outs.push(native::device(p.ordinal)?.memory().alloc((part_bytes * self.world).max(1))?);
        }
        nccl::group(F, || {
            for ((p, out), comm) in parts.iter().zip(&outs).zip(self.comms()) {
                let dev = native::device(p.ordinal)?;
                dev.bind()?;
                let stream = dev.current_stream_id();
                dev.memory().order_use(p.mem(), stream)?;
                dev.memory().order_use(out, stream)?;
                if part == 0 {
                    continue;
                }
                for peer in 0..self.world {
                    let at = (peer * part_bytes) as u64;
                    // SAFETY: part `peer` of the rank's dense input and of its new output
                    // buffer, both of `part` elements on the rank's device and ordered on the
                    // stream these calls are queued on; one group pairs every send with the
                    // peer's receive.
                    unsafe {
                        nccl::launch(
                            comm,
                            nccl::Call::Send(peer),
                            p.ptr() + at,
                            0,
                            part * per,
                            t,
                            F,
                        )?;
                        nccl::launch(
                            comm,
                            nccl::Call::Recv(peer),
                            0,
                            out.ptr() + at,
                            part * per,
                            t,
                            F,
                        )?;
                    }
                }
            }
            Ok(())
        })?;
        parts.iter().zip(outs).map(|(p, mem)| written(p.ordinal, mem, dims)).collect()
    }

    /// Waits, blocking this thread, until every rank of the group has come to its barrier and
    /// the work queued before it on this process's ranks' streams has finished.
    ///
    /// ```
    /// let comm = emberfire::collective::Communicator::new(&[0]).unwrap();
    /// comm.barrier().unwrap(); // one rank: returns at once
    /// ```
    pub fn barrier(&self) -> Result<()> {
        if !self.backend_is_cuda {
            return Ok(());
        }
        let tokens: Vec<Array<i32>> = self
            .local
            .iter()
            .map(|&(_, d)| {
                crate::device::with_active(BackendKind::Cuda(d as usize), || {
                    Array::new(&[0i32], Dim4::new(&[1, 1, 1, 1]))
                })
            })
            .collect();
        let met = self.all_reduce(&tokens, ReduceOp::Sum)?;
        for (a, &(_, d)) in met.iter().zip(&self.local) {
            a.eval();
            native::device(d as usize)?.sync()?;
        }
        Ok(())
    }

    fn check_rank(&self, func: &str, what: &str, rank: usize) -> Result<()> {
        if rank >= self.world {
            return Err(misuse(format!(
                "{func}: `{what}` {rank} is not a rank of this communicator (0..{})",
                self.world
            )));
        }
        Ok(())
    }

    /// The local rank (index into `local`) whose device holds `node`; an error otherwise.
    fn local_of(&self, func: &str, node: &Node) -> Result<usize> {
        self.local
            .iter()
            .position(|&(_, d)| {
                let kind = if self.backend_is_cuda {
                    BackendKind::Cuda(d as usize)
                } else {
                    BackendKind::Cpu
                };
                node.backend == kind
            })
            .ok_or_else(|| {
                misuse(format!(
                    "{func}: the array lives on {:?}, the device of none of this process's \
                     ranks ({:?} on devices {:?})",
                    node.backend,
                    self.ranks(),
                    self.devices()
                ))
            })
    }

    /// Sends `array` from the rank whose device holds it to rank `peer`, which must post a
    /// matching [`Communicator::recv`] of the same shape. Where one thread drives both ends
    /// (two ranks of this process), post both inside [`Communicator::group`].
    ///
    /// ```
    /// use emberfire::collective::Communicator;
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// let x = Array::new(&[5u8, 6], dim4!(2));
    /// let y = comm
    ///     .group(|| {
    ///         comm.send(&x, 0)?;
    ///         comm.recv::<u8>(0, dim4!(2), 0)
    ///     })
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(y.to_vec(), vec![5, 6]);
    /// ```
    pub fn send<T: HasAfEnum>(&self, array: &Array<T>, peer: usize) -> Result<()> {
        const F: &str = "Communicator::send";
        self.check_rank(F, "peer", peer)?;
        let i = self.local_of(F, array.node())?;
        match &self.ranks {
            Ranks::Cpu { mailbox } => {
                let h = array.try_host_vec()?;
                lock(mailbox).push_back(h);
                Ok(())
            }
            Ranks::Cuda(comms) => {
                let part = Part { dense: Dense::of(array.node())?, ordinal: comms[i].ordinal() };
                let (t, per) = nccl::moving_type(T::DTYPE);
                let n = array.elements();
                let _serial = lock(&self.calls);
                let dev = native::device(part.ordinal)?;
                dev.bind()?;
                dev.memory().order_use(part.mem(), dev.current_stream_id())?;
                if n == 0 {
                    return Ok(());
                }
                // SAFETY: the array's dense memory on its rank's device, ordered on the stream
                // the send is queued on, so it is not reused before the send has read it.
                unsafe {
                    nccl::launch(&comms[i], nccl::Call::Send(peer), part.ptr(), 0, n * per, t, F)
                }
            }
        }
    }

    /// Receives into a new array of shape `dims` on local rank `rank` what rank `peer` sends
    /// with [`Communicator::send`].
    ///
    /// An [`Error::Collective`] if `rank` is not a rank of this process or `peer` not a rank,
    /// or on the CPU if nothing (or another number of elements) was sent before (the CPU's one
    /// rank sends to itself); an [`Error::Driver`] if NCCL fails.
    ///
    /// ```
    /// use emberfire::collective::Communicator;
    /// use emberfire::{dim4, Array};
    /// let comm = Communicator::new(&[0]).unwrap();
    /// comm.send(&Array::new(&[1.5f32], dim4!(1)), 0).unwrap();
    /// assert_eq!(comm.recv::<f32>(0, dim4!(1), 0).unwrap().to_vec(), vec![1.5]);
    /// ```
    pub fn recv<T: HasAfEnum>(&self, rank: usize, dims: Dim4, peer: usize) -> Result<Array<T>> {
        const F: &str = "Communicator::recv";
        self.check_rank(F, "peer", peer)?;
        let i = self.local.iter().position(|&(r, _)| r == rank).ok_or_else(|| {
            misuse(format!(
                "{F}: `rank` {rank} is not one of this process's ranks ({:?})",
                self.ranks()
            ))
        })?;
        let n = dims.elements() as usize;
        match &self.ranks {
            Ranks::Cpu { mailbox } => {
                let h = lock(mailbox).pop_front().ok_or_else(|| {
                    misuse(format!("{F}: nothing was sent to rank {rank} before this receive"))
                })?;
                if h.len() != n {
                    let sent = h.len();
                    lock(mailbox).push_front(h);
                    return Err(misuse(format!(
                        "{F}: `dims` ({dims}) holds {n} elements; the matching send sent {sent}"
                    )));
                }
                let h = if h.dtype() == T::DTYPE { h } else { h.cast(T::DTYPE) };
                crate::device::with_active(BackendKind::Cpu, || Array::try_from_host(h, dims))
            }
            Ranks::Cuda(comms) => {
                let ordinal = comms[i].ordinal();
                let (t, per) = nccl::moving_type(T::DTYPE);
                let _serial = lock(&self.calls);
                let dev = native::device(ordinal)?;
                let mem = dev.memory().alloc((n * T::DTYPE.size()).max(1))?;
                dev.bind()?;
                let stream = dev.current_stream_id();
                dev.memory().order_use(&mem, stream)?;
                if n > 0 {
                    // SAFETY: a new buffer of the received size on the rank's device, ordered
                    // on the stream the receive is queued on.
                    unsafe {
                        nccl::launch(
                            &comms[i],
                            nccl::Call::Recv(peer),
                            0,
                            mem.ptr(),
                            n * per,
                            t,
                            F,
                        )?
                    };
                }
                written(ordinal, mem, dims)
            }
        }
    }

    /// Runs `f`, whose sends and receives (and collectives) are issued together when it
    /// returns: one thread that drives several ranks must group a send with its receive, or
    /// NCCL would wait for the receive before returning from the send.
    ///
    /// ```
    /// use emberfire::collective::Communicator;
    /// let comm = Communicator::new(&[0]).unwrap();
    /// assert_eq!(comm.group(|| 42).unwrap(), 42);
    /// ```
    pub fn group<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        match &self.ranks {
            Ranks::Cpu { .. } => Ok(f()),
            Ranks::Cuda(_) => nccl::group("Communicator::group", || Ok(f())),
        }
    }
}
