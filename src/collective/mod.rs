//! Collective operations: arrays combined across devices, and across processes and machines.
//!
//! A [`Communicator`] is a group of ranks, one per device; each rank holds an array and the
//! collective calls combine them: [`all_reduce`](Communicator::all_reduce),
//! [`broadcast`](Communicator::broadcast), [`reduce`](Communicator::reduce),
//! [`all_gather`](Communicator::all_gather), [`reduce_scatter`](Communicator::reduce_scatter),
//! and point-to-point [`send`](Communicator::send) and [`recv`](Communicator::recv).
//!
//! On CUDA the work is NCCL's, loaded at run time like the other CUDA libraries, on each
//! device's current stream: a call queues the transfer and returns, and the arrays it returns
//! are ready for the next operation on their device in stream order, like any other result.
//! On the CPU backend a communicator has one rank (the CPU is one device), so that a program
//! written for several GPUs runs, and its tests pass, on a machine without one.
//!
//! A communicator made by [`Communicator::new`] holds every one of its ranks in this process:
//! each call takes one array per rank, in rank order, and returns one per rank. One made by
//! [`Communicator::from_unique_id`] holds one rank of a group that spans processes (or
//! machines): each process passes its own array, and the group's ranks meet inside NCCL.
//!
//! ## One process per GPU
//!
//! Under a launcher (torchrun, `mpirun`, `srun`) each process calls
//! [`Communicator::from_env`]: it reads its rank, the group's size and its local rank from the
//! launcher's environment (see [`ProcessGroup`]), makes its local rank's device the active one,
//! meets the other ranks at rank 0's address over TCP (rank 0 hands out NCCL's unique id) and
//! joins the NCCL communicator. Whatever goes wrong on the way (a rank that does not come, a
//! group that disagrees on its size, a port in use) is an [`Error::Collective`] at the group's
//! timeout, never a hang.
//!
//! ```no_run
//! use emberfire::collective::{Communicator, ReduceOp};
//! use emberfire::{dim4, Array};
//!
//! // torchrun --nproc-per-node 2 ./target/release/examples/my_program
//! let comm = Communicator::from_env().unwrap();
//! let mine = Array::new(&[comm.ranks()[0] as f32; 4], dim4!(4));
//! let total = comm.all_reduce(&[mine], ReduceOp::Sum).unwrap();
//! ```
//!
//! ```
//! use emberfire::collective::{Communicator, ReduceOp};
//! use emberfire::{dim4, Array};
//!
//! let comm = Communicator::new(&[0]).unwrap(); // every device: &[0, 1, ...]
//! let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
//! let total = comm.all_reduce(&[x], ReduceOp::Sum).unwrap();
//! assert_eq!(total[0].to_vec(), vec![1.0, 2.0, 3.0]); // one rank: its own values
//! ```

mod calls;
mod layout;
mod process_group;
mod rendezvous;

pub use process_group::{Launcher, ProcessGroup, DEFAULT_PORT, DEFAULT_TIMEOUT};

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::backend::native::nccl;
use crate::backend::BackendKind;
use crate::device::active_kind;
use crate::error::{Error, Result};

/// How a reduction combines the ranks' elements.
///
/// ```
/// use emberfire::collective::ReduceOp;
/// assert_ne!(ReduceOp::Sum, ReduceOp::Avg);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The product.
    Prod,
    /// The smallest value.
    Min,
    /// The largest value.
    Max,
    /// The mean over the ranks (the sum divided by the number of ranks, in the element type:
    /// integers are divided as integers).
    Avg,
}

impl ReduceOp {
    fn nccl(self) -> nccl::Op {
        match self {
            ReduceOp::Sum => nccl::Op::Sum,
            ReduceOp::Prod => nccl::Op::Prod,
            ReduceOp::Min => nccl::Op::Min,
            ReduceOp::Max => nccl::Op::Max,
            ReduceOp::Avg => nccl::Op::Avg,
        }
    }
}

/// The identity that the ranks of a communicator spanning processes share: rank 0's process
/// makes it with [`UniqueId::new`] and hands its bytes to every other process (a file, a
/// socket, an environment variable, MPI), which rebuild it with [`UniqueId::from_bytes`].
///
/// ```no_run
/// use emberfire::collective::UniqueId;
/// let id = UniqueId::new().unwrap();
/// let bytes: [u8; 128] = *id.as_bytes();
/// assert_eq!(UniqueId::from_bytes(bytes).as_bytes(), id.as_bytes());
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UniqueId([u8; 128]);

impl UniqueId {
    /// A new id, from NCCL. An error where NCCL cannot be loaded, or on the CPU backend (whose
    /// communicators have one rank and need no id).
    ///
    /// ```no_run
    /// let id = emberfire::collective::UniqueId::new().unwrap();
    /// ```
    pub fn new() -> Result<UniqueId> {
        if active_kind() == BackendKind::Cpu {
            return Err(Error::BackendUnavailable(
                "UniqueId::new: communicators spanning processes need the CUDA backend and NCCL"
                    .into(),
            ));
        }
        let raw = nccl::unique_id()?;
        Ok(UniqueId(raw.internal.map(|c| c as u8)))
    }

    /// The 128 bytes to hand to the other processes.
    ///
    /// ```
    /// use emberfire::collective::UniqueId;
    /// assert_eq!(UniqueId::from_bytes([7; 128]).as_bytes()[0], 7);
    /// ```
    pub fn as_bytes(&self) -> &[u8; 128] {
        &self.0
    }

    /// The id whose bytes another process's [`UniqueId::as_bytes`] gave.
    ///
    /// ```
    /// use emberfire::collective::UniqueId;
    /// let id = UniqueId::from_bytes([1; 128]);
    /// assert_eq!(id, UniqueId::from_bytes(*id.as_bytes()));
    /// ```
    pub fn from_bytes(bytes: [u8; 128]) -> UniqueId {
        UniqueId(bytes)
    }
}

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId(")?;
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "..)")
    }
}

/// Where a communicator's ranks live.
enum Ranks {
    /// One rank on the CPU; `mailbox` holds what it sent to itself until it receives it.
    Cpu { mailbox: Mutex<VecDeque<crate::storage::HostVec>> },
    /// NCCL communicators, one per local rank, in rank order.
    Cuda(Vec<nccl::Comm>),
}

/// A group of ranks, one per device, that combine arrays with collective calls. See the
/// [module documentation](self).
///
/// A communicator may be shared between threads; its calls are issued one at a time.
///
/// ```
/// use emberfire::collective::Communicator;
/// let comm = Communicator::new(&[0]).unwrap();
/// assert_eq!((comm.world_size(), comm.ranks(), comm.devices()), (1, vec![0], vec![0]));
/// ```
pub struct Communicator {
    backend_is_cuda: bool,
    ranks: Ranks,
    /// The ranks this process holds, in order, and their devices.
    local: Vec<(usize, i32)>,
    world: usize,
    /// Serialises calls: NCCL communicators must not be used by two threads at once.
    calls: Mutex<()>,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("cuda", &self.backend_is_cuda)
            .field("world_size", &self.world)
            .field("local_ranks", &self.local)
            .finish()
    }
}

impl Communicator {
    /// A communicator whose ranks are `devices` of the active backend, all in this process:
    /// rank `i` on device `devices[i]`. An [`Error::Collective`] if the list is empty or
    /// names a device twice, an [`Error::InvalidDevice`] if a device does not exist (on the
    /// CPU backend, any but device 0), an error if NCCL cannot be loaded or fails.
    ///
    /// ```
    /// let comm = emberfire::collective::Communicator::new(&[0]).unwrap();
    /// assert_eq!(comm.world_size(), 1);
    /// ```
    pub fn new(devices: &[i32]) -> Result<Communicator> {
        if devices.is_empty() {
            return Err(Error::Collective("Communicator::new: `devices` is empty".into()));
        }
        for (i, d) in devices.iter().enumerate() {
            if devices[..i].contains(d) {
                return Err(Error::Collective(format!(
                    "Communicator::new: device {d} is listed twice in `devices` ({devices:?}); \
                     a device holds one rank"
                )));
            }
        }
        let count = crate::device::device_count();
        if let Some(&bad) = devices.iter().find(|&&d| d < 0 || d >= count) {
            return Err(Error::InvalidDevice { requested: bad, count });
        }
        let local: Vec<(usize, i32)> = devices.iter().copied().enumerate().collect();
        let calls = Mutex::new(());
        match active_kind() {
            BackendKind::Cpu => Ok(Communicator {
                backend_is_cuda: false,
                ranks: Ranks::Cpu { mailbox: Mutex::new(VecDeque::new()) },
                local,
                world: 1,
                calls,
            }),
            BackendKind::Cuda(_) => {
                let ordinals: Vec<usize> = devices.iter().map(|&d| d as usize).collect();
                let comms = nccl::init_all(&ordinals)?;
                Ok(Communicator {
                    backend_is_cuda: true,
                    ranks: Ranks::Cuda(comms),
                    world: devices.len(),
                    local,
                    calls,
                })
            }
        }
    }

    /// Rank `rank` of a communicator of `world_size` ranks spanning processes (or machines),
    /// on this thread's active device. Every rank's process calls this with the same `id`
    /// (see [`UniqueId`]) and the same `world_size`; the call returns once all have joined.
    /// An error if `rank >= world_size`, on the CPU backend, or if NCCL fails.
    ///
    /// ```no_run
    /// use emberfire::collective::{Communicator, UniqueId};
    /// // In each of two processes, with the id made by the first one:
    /// # let id = UniqueId::new().unwrap(); let rank = 0;
    /// let comm = Communicator::from_unique_id(&id, rank, 2).unwrap();
    /// ```
    pub fn from_unique_id(id: &UniqueId, rank: usize, world_size: usize) -> Result<Communicator> {
        if rank >= world_size {
            return Err(Error::Collective(format!(
                "Communicator::from_unique_id: `rank` {rank} is not below `world_size` \
                 {world_size}"
            )));
        }
        let ordinal = match active_kind() {
            BackendKind::Cpu => {
                return Err(Error::BackendUnavailable(
                    "Communicator::from_unique_id: communicators spanning processes need the \
                     CUDA backend and NCCL"
                        .into(),
                ))
            }
            BackendKind::Cuda(d) => d,
        };
        let raw = nccl::RawUniqueId { internal: id.0.map(|b| b as std::ffi::c_char) };
        let comm = nccl::init_rank(ordinal, raw, rank, world_size)?;
        Ok(Communicator {
            backend_is_cuda: true,
            ranks: Ranks::Cuda(vec![comm]),
            local: vec![(rank, ordinal as i32)],
            world: world_size,
            calls: Mutex::new(()),
        })
    }

    /// This process's rank of the group `pg` describes, on the device of its local rank
    /// (which becomes this thread's active device): every process of the group calls this;
    /// rank 0 makes NCCL's unique id and hands it to the others over TCP at `pg`'s address,
    /// then all join the NCCL communicator. Returns once every rank has joined.
    ///
    /// An [`Error::Collective`] where a rank does not arrive within `pg`'s timeout (on every
    /// rank that did), where the processes disagree on the group's size, where rank 0's port
    /// is in use, or where the local rank has no device; an [`Error::BackendUnavailable`] for
    /// a group of several processes on the CPU backend (a group of one is the CPU's one-rank
    /// communicator). Where NCCL itself does not finish joining within the timeout, the
    /// error says so and the thread left waiting inside NCCL is abandoned.
    ///
    /// ```
    /// use emberfire::collective::{Communicator, ProcessGroup};
    /// let pg = ProcessGroup::new(0, 1, "127.0.0.1", 29500).unwrap();
    /// let comm = Communicator::join(&pg).unwrap();
    /// assert_eq!((comm.world_size(), comm.ranks()), (1, vec![0]));
    /// ```
    pub fn join(pg: &ProcessGroup) -> Result<Communicator> {
        const F: &str = "Communicator::join";
        let (rank, world) = (pg.rank(), pg.world_size());
        let count = crate::device::device_count();
        let device = i32::try_from(pg.local_rank()).unwrap_or(i32::MAX);
        if device >= count {
            return Err(Error::Collective(format!(
                "{F}: rank {rank}'s local rank is {device}, but this machine has {count} \
                 device(s): start at most one process per device"
            )));
        }
        match active_kind() {
            BackendKind::Cpu if world == 1 => Communicator::new(&[0]),
            BackendKind::Cpu => Err(Error::BackendUnavailable(format!(
                "{F}: a group of {world} processes needs the CUDA backend and NCCL; the CPU \
                 backend's communicators have one rank"
            ))),
            BackendKind::Cuda(_) => {
                crate::device::try_set_device(device)?;
                let mine = if rank == 0 { UniqueId::new()?.0.to_vec() } else { Vec::new() };
                let shared = rendezvous::share(F, pg, &mine)?;
                let id: [u8; 128] = shared.as_slice().try_into().map_err(|_| {
                    Error::Collective(format!(
                        "{F}: rank 0 sent {} bytes, not a 128-byte unique id",
                        shared.len()
                    ))
                })?;
                let raw = nccl::RawUniqueId { internal: id.map(|b| b as std::ffi::c_char) };
                let ordinal = device as usize;
                let (tx, rx) = std::sync::mpsc::channel();
                // NCCL's join blocks until every rank has come; on its own thread, so that a
                // rank that dies after the meeting above ends in an error here, not a hang.
                std::thread::Builder::new()
                    .name(format!("emberfire-nccl-join-{rank}"))
                    .spawn(move || {
                        let _ = tx.send(nccl::init_rank(ordinal, raw, rank, world));
                    })
                    .map_err(|e| Error::Collective(format!("{F}: cannot start a thread: {e}")))?;
                let comm = match rx.recv_timeout(pg.timeout()) {
                    Ok(r) => r?,
                    Err(_) => {
                        return Err(Error::Collective(format!(
                            "{F}: rank {rank}: NCCL did not finish joining the {world} ranks \
                             within {:?}; a rank left after the meeting at {}:{}",
                            pg.timeout(),
                            pg.addr(),
                            pg.port()
                        )))
                    }
                };
                Ok(Communicator {
                    backend_is_cuda: true,
                    ranks: Ranks::Cuda(vec![comm]),
                    local: vec![(rank, device)],
                    world,
                    calls: Mutex::new(()),
                })
            }
        }
    }

    /// [`Communicator::join`] of the group the launcher's environment describes
    /// ([`ProcessGroup::from_env`]).
    ///
    /// ```no_run
    /// // In each process started by `torchrun --nproc-per-node 2 ...`:
    /// let comm = emberfire::collective::Communicator::from_env().unwrap();
    /// ```
    pub fn from_env() -> Result<Communicator> {
        Communicator::join(&ProcessGroup::from_env()?)
    }

    /// How many ranks the group has, in all processes.
    ///
    /// ```
    /// let comm = emberfire::collective::Communicator::new(&[0]).unwrap();
    /// assert_eq!(comm.world_size(), 1);
    /// ```
    pub fn world_size(&self) -> usize {
        self.world
    }

    /// The ranks this process holds, in the order the calls take and return their arrays.
    ///
    /// ```
    /// let comm = emberfire::collective::Communicator::new(&[0]).unwrap();
    /// assert_eq!(comm.ranks(), vec![0]);
    /// ```
    pub fn ranks(&self) -> Vec<usize> {
        self.local.iter().map(|&(r, _)| r).collect()
    }

    /// The device of each rank this process holds, in the order of [`Communicator::ranks`].
    ///
    /// ```
    /// let comm = emberfire::collective::Communicator::new(&[0]).unwrap();
    /// assert_eq!(comm.devices(), vec![0]);
    /// ```
    pub fn devices(&self) -> Vec<i32> {
        self.local.iter().map(|&(_, d)| d).collect()
    }

    /// The NCCL version (`major * 10000 + minor * 100 + patch`) the CUDA backend uses; an error
    /// where NCCL cannot be loaded.
    ///
    /// ```no_run
    /// assert!(emberfire::collective::Communicator::nccl_version().unwrap() >= 20000);
    /// ```
    pub fn nccl_version() -> Result<i32> {
        nccl::version()
    }
}
