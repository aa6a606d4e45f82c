//! Sharded arrays whose shards live in several processes, one shard per process: each process
//! of a group holds its rank's run along the split dimension, and the group's communicator
//! carries what crosses processes (the partial results of reductions, the gathering of the
//! whole).
//!
//! Element-wise work needs nothing of the other processes; a reduction along the split
//! dimension is one all-reduce in the group, as it is between the devices of one process.
//! Every process of the group must make the same calls in the same order, as with any
//! collective.

use std::sync::Arc;

use super::{ShardedArray, Sharding};
use crate::array::Array;
use crate::collective::{Communicator, ReduceOp};
use crate::device::with_active;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error::{Error, Result};

/// The group a sharded array spans and every rank's extent along its split dimension.
pub(crate) struct Across {
    comm: Arc<Communicator>,
    /// Rank `r`'s extent along the split dimension.
    extents: Vec<u64>,
}

/// Panics, naming `func`, unless both arrays are held by the same group (or both by this
/// process alone).
pub(super) fn check_same_group(func: &str, a: &Option<Arc<Across>>, b: &Option<Arc<Across>>) {
    let same = match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(&a.comm, &b.comm),
        _ => false,
    };
    assert!(
        same,
        "{func}: one array's shards live in a group of processes and the other's do not, or \
         in another group; both must be sharded over the same communicator"
    );
}

impl Across {
    /// The group's sum (or other `op`) of the one partial result this process holds, on
    /// every process.
    pub(super) fn all_reduce<U: HasAfEnum>(
        &self,
        func: &str,
        partials: &[Array<U>],
        op: ReduceOp,
    ) -> Vec<Array<U>> {
        self.comm
            .all_reduce(partials, op)
            .unwrap_or_else(|e| panic!("{func}: combining the processes' partial results: {e}"))
    }

    /// The whole array (of shape `dims`) on this process's device: every rank's shard,
    /// gathered in the group and joined along `dim`. Shards of unequal extents are padded to
    /// the longest for the gathering, and the padding dropped after.
    pub(super) fn gather<T: HasAfEnum>(
        &self,
        local: &Array<T>,
        dim: usize,
        dims: Dim4,
    ) -> Array<T> {
        const F: &str = "ShardedArray::gather";
        let kind = local.node().backend;
        let longest = self.extents.iter().copied().max().unwrap_or(0);
        let mut padded_dims = local.dims();
        padded_dims[dim] = longest;
        with_active(kind, || {
            if padded_dims.elements() == 0 {
                return Array::new_empty(dims);
            }
            let padded = if local.dims()[dim] == longest {
                local.clone()
            } else {
                let mut pad = local.dims();
                pad[dim] = longest - local.dims()[dim];
                // Never read: the padding is sliced off below.
                let filler = Array::<T>::new_empty(pad);
                if local.elements() == 0 {
                    filler
                } else {
                    crate::join(dim as i32, local, &filler)
                }
            };
            let gathered = self
                .comm
                .all_gather(&[padded])
                .unwrap_or_else(|e| panic!("{F}: gathering the processes' shards: {e}"))
                .remove(0);
            // Rank r's padded shard is the r-th run of the gathered elements.
            let n = padded_dims.elements();
            let world = self.extents.len() as u64;
            let columns = crate::moddims(&gathered, Dim4::new(&[n, world, 1, 1]));
            let parts: Vec<Array<T>> = self
                .extents
                .iter()
                .enumerate()
                .filter(|&(_, &e)| e > 0)
                .map(|(r, &e)| {
                    let col = super::compute::slice_along(&columns, 1, r as u64, 1);
                    let shard = crate::moddims(&col, padded_dims);
                    super::compute::slice_along(&shard, dim, 0, e)
                })
                .collect();
            match parts.len() {
                0 => Array::new_empty(dims),
                1 => parts[0].clone(),
                _ => crate::join_many(dim as i32, parts.iter().collect()),
            }
        })
    }
}

impl<T: HasAfEnum> ShardedArray<T> {
    /// The sharded array whose shard in this process is `shard`, split along `dim` over the
    /// processes of `comm` (a communicator of one rank per process, such as
    /// [`Communicator::join`] makes): rank `r`'s shard is the `r`-th run along `dim`. Every
    /// process of the group calls this with its own shard; they exchange their shapes, so
    /// shards may differ in extent along `dim` but nowhere else.
    ///
    /// An [`Error::Collective`] where `comm` holds several ranks in this process, the shard is
    /// not on this process's rank's device, `dim` is not below 4, or the processes' shards
    /// differ in shape other than along `dim`.
    ///
    /// ```
    /// use emberfire::collective::{Communicator, ProcessGroup};
    /// use emberfire::{dim4, Array, ShardedArray};
    /// use std::sync::Arc;
    /// // In each process of the group (here a group of one):
    /// let comm = Arc::new(Communicator::join(&ProcessGroup::new(0, 1, "127.0.0.1", 29500).unwrap()).unwrap());
    /// let mine = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    /// let x = ShardedArray::from_process_shard(mine, 0, &comm).unwrap();
    /// assert_eq!(x.dims(), dim4!(3)); // the whole, over every process
    /// assert_eq!((&x * 2.0f32).sum(0).to_vec(), vec![12.0]);
    /// ```
    pub fn from_process_shard(
        shard: Array<T>,
        dim: usize,
        comm: &Arc<Communicator>,
    ) -> Result<ShardedArray<T>> {
        const F: &str = "ShardedArray::from_process_shard";
        let fail = |m: String| Err(Error::Collective(format!("{F}: {m}")));
        if dim >= 4 {
            return fail(format!("`dim` is {dim}; arrays have dimensions 0 to 3"));
        }
        if comm.ranks().len() != 1 {
            return fail(format!(
                "the communicator holds {} ranks in this process; a process holds one shard \
                 (for the devices of one process, use `ShardedArray::from_shards`)",
                comm.ranks().len()
            ));
        }
        let kind = shard.node().backend;
        let device = comm.devices()[0];
        let on_rank = match kind {
            crate::backend::BackendKind::Cpu => true,
            crate::backend::BackendKind::Cuda(d) => d as i32 == device,
        };
        if !on_rank {
            return fail(format!(
                "the shard lives on {kind:?}, not on this process's rank's device {device}; move \
                 it with `to_device` first"
            ));
        }
        let mine: Vec<u64> = shard.dims().get().to_vec();
        let shape = with_active(kind, || Array::new(&mine, Dim4::new(&[4, 1, 1, 1])));
        let all = comm.all_gather(&[shape])?.remove(0).to_vec();
        let world = comm.world_size();
        let mut extents = Vec::with_capacity(world);
        for r in 0..world {
            let theirs = &all[4 * r..4 * r + 4];
            if let Some(k) = (0..4).find(|&k| k != dim && theirs[k] != mine[k]) {
                return fail(format!(
                    "rank {r}'s shard has shape {:?}, this process's {:?}: they differ along \
                     dimension {k}, and shards may differ only along dimension {dim}",
                    theirs, mine
                ));
            }
            extents.push(theirs[dim]);
        }
        let mut dims = shard.dims();
        dims[dim] = extents.iter().sum();
        Ok(ShardedArray {
            shards: vec![shard],
            sharding: Sharding::Split(dim),
            dims,
            across: Some(Arc::new(Across { comm: comm.clone(), extents })),
        })
    }

    /// The communicator of the processes this array's shards live in; `None` for an array
    /// held by this process alone.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let x = ShardedArray::from_host(&[1u8, 2], dim4!(2), &[0, 0], 0);
    /// assert!(x.communicator().is_none());
    /// ```
    pub fn communicator(&self) -> Option<&Arc<Communicator>> {
        self.across.as_ref().map(|a| &a.comm)
    }
}
