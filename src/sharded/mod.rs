//! `ShardedArray`: one logical array held in parts (shards) on several devices.
//!
//! An array is split along one dimension into contiguous runs, one per device
//! ([`Sharding::Split`]), or held whole on every device ([`Sharding::Replicated`]), the form a
//! matrix product's shared operand takes. Each shard is an ordinary [`Array`] on its device:
//! element-wise work on a sharded array is the same lazy graph and the same fused kernels,
//! built once per shard with that shard's device active, and queued on every device before any
//! is waited for, so the devices work at the same time.
//!
//! A reduction along the split dimension reduces each shard where it lives, then combines the
//! partial results with one collective (NCCL's all-reduce on CUDA, where the shards are on
//! distinct devices), which leaves the result replicated. Shards may also share a device (on
//! the CPU, whose one device can hold several); the partial results are then combined by
//! copies and element-wise operations instead.
//!
//! ```
//! use emberfire::{dim4, ShardedArray, Sharding};
//! let devices = vec![0; 3]; // three shards; on a machine with three GPUs: [0, 1, 2]
//! let values: Vec<f32> = (0..10).map(|i| i as f32).collect();
//! let x = ShardedArray::from_host(&values, dim4!(10), &devices, 0);
//! assert_eq!(x.sharding(), Sharding::Split(0));
//! let y = x.map(|s| s * 2.0f32 + 1.0f32); // fused per shard
//! assert_eq!(y.sum(0).to_vec(), vec![100.0]);
//! assert_eq!(y.to_vec()[9], 19.0);
//! ```

mod compute;
mod operators;
mod processes;

pub(crate) use processes::Across;

use crate::array::Array;
use crate::backend::BackendKind;
use crate::device::with_active;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;

/// How a [`ShardedArray`] is laid out over its devices.
///
/// ```
/// use emberfire::Sharding;
/// assert_ne!(Sharding::Split(0), Sharding::Replicated);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharding {
    /// Split along this dimension into contiguous runs, shard `i` holding the `i`-th.
    Split(usize),
    /// Every shard holds the whole array.
    Replicated,
}

/// One array held in shards on several devices: split along one dimension into contiguous
/// runs, one per device ([`Sharding::Split`]), or whole on every device
/// ([`Sharding::Replicated`]). Each shard is an ordinary [`Array`] on its device; element-wise
/// work ([`ShardedArray::map`], [`ShardedArray::zip_with`]) fuses per shard, reductions along
/// the split dimension combine the shards' partial results with one all-reduce, and
/// [`ShardedArray::matmul`] multiplies shard by shard. The book's "Several GPUs" chapter shows
/// the whole.
///
/// ```
/// use emberfire::{dim4, Array, ShardedArray};
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let s = ShardedArray::from_array(&a, &[0, 0], 1);
/// assert_eq!(s.shards()[1].to_vec(), vec![3.0, 4.0]);
/// assert_eq!(s.gather(0).to_vec(), a.to_vec());
/// ```
#[derive(Clone)]
pub struct ShardedArray<T: HasAfEnum> {
    /// The shards this process holds.
    shards: Vec<Array<T>>,
    sharding: Sharding,
    /// The whole array's shape, over every process.
    dims: Dim4,
    /// For an array whose shards live in several processes: the group and every rank's
    /// extent along the split dimension.
    across: Option<std::sync::Arc<Across>>,
}

impl<T: HasAfEnum> std::fmt::Debug for ShardedArray<T> {
    /// The shape, layout and devices; not the values, which live on the devices.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedArray")
            .field("dims", &self.dims)
            .field("sharding", &self.sharding)
            .field("devices", &self.devices())
            .finish()
    }
}

/// The extents of `n` elements split into `parts` contiguous runs, the first `n % parts` one
/// longer than the rest.
fn split_extents(n: u64, parts: usize) -> Vec<u64> {
    let p = parts as u64;
    (0..p).map(|i| n / p + u64::from(i < n % p)).collect()
}

fn check_split_dim(func: &str, dim: usize) {
    assert!(dim < 4, "{func}: `dim` is {dim}; arrays have dimensions 0 to 3");
}

fn check_devices(func: &str, devices: &[i32]) {
    assert!(
        !devices.is_empty(),
        "{func}: `devices` is empty; a sharded array has at least one shard"
    );
}

/// The backend kind of `device` on the active backend; panics, naming `func`, if there is no
/// such device.
fn kind_of_device(func: &str, device: i32) -> BackendKind {
    let count = crate::device::device_count();
    if device < 0 || device >= count {
        let e = crate::Error::InvalidDevice { requested: device, count };
        panic!("{func}: {e}");
    }
    match crate::device::active_kind() {
        BackendKind::Cpu => BackendKind::Cpu,
        BackendKind::Cuda(_) => BackendKind::Cuda(device as usize),
    }
}

impl<T: HasAfEnum> ShardedArray<T> {
    /// Splits host `values` of shape `dims` along `dim` over `devices` of the active backend,
    /// copying each part straight to its device. Shards get equal runs, the first ones one
    /// element longer where the extent does not divide. Panics if `values` does not hold
    /// `dims`' elements, `devices` is empty or `dim` is not below 4; a device that does not
    /// exist panics as [`crate::set_device`] does.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1, 2, 3, 4, 5], dim4!(5), &[0, 0], 0);
    /// assert_eq!(s.shards()[0].to_vec(), vec![1, 2, 3]);
    /// assert_eq!(s.shards()[1].to_vec(), vec![4, 5]);
    /// ```
    pub fn from_host(values: &[T], dims: Dim4, devices: &[i32], dim: usize) -> ShardedArray<T> {
        const F: &str = "ShardedArray::from_host";
        check_devices(F, devices);
        check_split_dim(F, dim);
        assert_eq!(
            values.len() as u64,
            dims.elements(),
            "{F}: `values` holds {} elements; `dims` ({dims}) needs {}",
            values.len(),
            dims.elements()
        );
        let d = *dims.get();
        let mut start = 0u64;
        let mut shards = Vec::with_capacity(devices.len());
        for (&device, len) in devices.iter().zip(split_extents(d[dim], devices.len())) {
            let mut part = d;
            part[dim] = len;
            let host = host_part(values, d, dim, start, len);
            start += len;
            let kind = kind_of_device(F, device);
            shards.push(with_active(kind, || Array::new(&host, Dim4::new(&part))));
        }
        ShardedArray { shards, sharding: Sharding::Split(dim), dims, across: None }
    }

    /// Splits `array` along `dim` over `devices` (of the array's backend), as
    /// [`ShardedArray::from_host`] does, copying each part from the array's device.
    ///
    /// ```
    /// use emberfire::{dim4, Array, ShardedArray};
    /// let a = Array::new(&[1u32, 2, 3, 4, 5, 6], dim4!(3, 2));
    /// let s = ShardedArray::from_array(&a, &[0, 0], 0);
    /// assert_eq!(s.shards()[0].dims(), dim4!(2, 2));
    /// assert_eq!(s.shards()[1].to_vec(), vec![3, 6]);
    /// ```
    pub fn from_array(array: &Array<T>, devices: &[i32], dim: usize) -> ShardedArray<T> {
        const F: &str = "ShardedArray::from_array";
        check_devices(F, devices);
        check_split_dim(F, dim);
        let dims = array.dims();
        let mut start = 0u64;
        let mut shards = Vec::with_capacity(devices.len());
        for (&device, len) in devices.iter().zip(split_extents(dims[dim], devices.len())) {
            let part = compute::slice_along(array, dim, start, len);
            start += len;
            shards.push(part.to_device(device));
        }
        ShardedArray { shards, sharding: Sharding::Split(dim), dims, across: None }
    }

    /// A sharded array made of `shards` (kept where they are), split along `dim`: shard `i`
    /// is the `i`-th run along `dim`. Panics if `shards` is empty or the shards differ in
    /// shape other than along `dim`, or in backend.
    ///
    /// ```
    /// use emberfire::{dim4, Array, ShardedArray};
    /// let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    /// let b = Array::new(&[3.0f32], dim4!(1));
    /// let s = ShardedArray::from_shards(vec![a, b], 0);
    /// assert_eq!(s.dims(), dim4!(3));
    /// ```
    pub fn from_shards(shards: Vec<Array<T>>, dim: usize) -> ShardedArray<T> {
        const F: &str = "ShardedArray::from_shards";
        assert!(!shards.is_empty(), "{F}: `shards` is empty");
        check_split_dim(F, dim);
        let first = shards[0].dims();
        let mut total = 0;
        for (i, s) in shards.iter().enumerate() {
            let d = s.dims();
            for k in (0..4).filter(|&k| k != dim) {
                assert_eq!(
                    d[k], first[k],
                    "{F}: shard {i} has shape {d}, shard 0 has {first}; shards may differ only \
                     along dimension {dim}"
                );
            }
            assert_eq!(
                s.get_backend(),
                shards[0].get_backend(),
                "{F}: shard {i} lives on another backend than shard 0"
            );
            total += d[dim];
        }
        let mut dims = first;
        dims[dim] = total;
        ShardedArray { shards, sharding: Sharding::Split(dim), dims, across: None }
    }

    /// `array` copied whole to each of `devices`: the form of a matrix product's operand
    /// that every shard of the other operand needs.
    ///
    /// ```
    /// use emberfire::{dim4, Array, ShardedArray, Sharding};
    /// let w = ShardedArray::replicate(&Array::new(&[1i32, 2], dim4!(2)), &[0, 0]);
    /// assert_eq!(w.sharding(), Sharding::Replicated);
    /// assert_eq!(w.shards()[1].to_vec(), vec![1, 2]);
    /// ```
    pub fn replicate(array: &Array<T>, devices: &[i32]) -> ShardedArray<T> {
        check_devices("ShardedArray::replicate", devices);
        let shards = devices.iter().map(|&d| array.to_device(d)).collect();
        ShardedArray { shards, sharding: Sharding::Replicated, dims: array.dims(), across: None }
    }

    /// The shape of the whole array.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[0u8; 12], dim4!(4, 3), &[0, 0], 1);
    /// assert_eq!(s.dims(), dim4!(4, 3));
    /// ```
    pub fn dims(&self) -> Dim4 {
        self.dims
    }

    /// How the array is laid out over its devices.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray, Sharding};
    /// let s = ShardedArray::from_host(&[0u8; 12], dim4!(4, 3), &[0], 1);
    /// assert_eq!(s.sharding(), Sharding::Split(1));
    /// ```
    pub fn sharding(&self) -> Sharding {
        self.sharding
    }

    /// The shards, in order, each on its device.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1i64, 2, 3, 4], dim4!(4), &[0, 0], 0);
    /// assert_eq!(s.shards().len(), 2);
    /// ```
    pub fn shards(&self) -> &[Array<T>] {
        &self.shards
    }

    /// The shards, taken out.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1i64, 2, 3, 4], dim4!(4), &[0, 0], 0);
    /// assert_eq!(s.into_shards()[1].to_vec(), vec![3, 4]);
    /// ```
    pub fn into_shards(self) -> Vec<Array<T>> {
        self.shards
    }

    /// The device of each shard.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1.0f32; 4], dim4!(4), &[0, 0], 0);
    /// assert_eq!(s.devices(), vec![0, 0]);
    /// ```
    pub fn devices(&self) -> Vec<i32> {
        self.shards.iter().map(|s| s.get_device_id()).collect()
    }

    /// Queues the evaluation of every shard on its device, all devices first, and returns
    /// without waiting (see [`ShardedArray::sync`]).
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1.0f32; 4], dim4!(4), &[0, 0], 0).map(|x| x * 2.0f32);
    /// s.eval();
    /// ```
    pub fn eval(&self) {
        let nodes: Vec<_> = self.shards.iter().collect();
        for s in nodes {
            s.eval();
        }
    }

    /// Evaluates every shard and waits until every device holding one has finished its
    /// queued work.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1.0f32; 4], dim4!(4), &[0, 0], 0);
    /// s.sync();
    /// ```
    pub fn sync(&self) {
        self.eval();
        let mut done: Vec<BackendKind> = Vec::new();
        for s in &self.shards {
            let kind = s.node().backend;
            if !done.contains(&kind) {
                done.push(kind);
                with_active(kind, || crate::sync(s.get_device_id()));
            }
        }
    }

    /// The whole array on `device` (of the shards' backend): the shards copied there and
    /// joined, or one copy of a replicated array. For an array whose shards live in several
    /// processes, every process of the group must call it (it is an all-gather).
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1, 2, 3, 4, 5, 6], dim4!(2, 3), &[0, 0], 1);
    /// assert_eq!(s.gather(0).to_vec(), vec![1, 2, 3, 4, 5, 6]);
    /// ```
    pub fn gather(&self, device: i32) -> Array<T> {
        compute::gather(self, device)
    }

    /// The whole array's elements on the host, in column-major order (for an array whose
    /// shards live in several processes, a collective every process of the group calls).
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let s = ShardedArray::from_host(&[1u16, 2, 3], dim4!(3), &[0, 0, 0], 0);
    /// assert_eq!(s.to_vec(), vec![1, 2, 3]);
    /// ```
    pub fn to_vec(&self) -> Vec<T> {
        match self.sharding {
            Sharding::Replicated => self.shards[0].to_vec(),
            Sharding::Split(_) if self.across.is_some() => {
                compute::gather(self, self.shards[0].get_device_id()).to_vec()
            }
            Sharding::Split(dim) => {
                let parts: Vec<Vec<T>> = self.shards.iter().map(|s| s.to_vec()).collect();
                join_host(&parts, &self.shards, self.dims, dim)
            }
        }
    }
}

/// The run `start..start + len` along `dim` of host `values` of shape `d`, densely.
fn host_part<T: Copy>(values: &[T], d: [u64; 4], dim: usize, start: u64, len: u64) -> Vec<T> {
    let mut part = d;
    part[dim] = len;
    let mut out = Vec::with_capacity((part.iter().product::<u64>()) as usize);
    let stride = |k: usize| d[..k].iter().product::<u64>();
    let mut lo = [0u64; 4];
    lo[dim] = start;
    for i3 in 0..part[3] {
        for i2 in 0..part[2] {
            for i1 in 0..part[1] {
                let base =
                    (lo[1] + i1) * stride(1) + (lo[2] + i2) * stride(2) + (lo[3] + i3) * stride(3);
                let first = (base + lo[0]) as usize;
                out.extend_from_slice(&values[first..first + part[0] as usize]);
            }
        }
    }
    out
}

/// Host parts split along `dim`, joined back into the whole of shape `dims`.
fn join_host<T: HasAfEnum>(
    parts: &[Vec<T>],
    shards: &[Array<T>],
    dims: Dim4,
    dim: usize,
) -> Vec<T> {
    let d = *dims.get();
    let stride = |k: usize| d[..k].iter().product::<u64>();
    // Any element serves to size the output before the parts overwrite it all.
    let Some(fill) = parts.iter().find_map(|p| p.first().copied()) else { return Vec::new() };
    let mut out = vec![fill; dims.elements() as usize];
    let mut start = 0u64;
    for (p, s) in parts.iter().zip(shards) {
        let sd = *s.dims().get();
        let mut src = 0usize;
        for i3 in 0..sd[3] {
            for i2 in 0..sd[2] {
                for i1 in 0..sd[1] {
                    let mut idx = [0, i1, i2, i3];
                    idx[dim] += start;
                    let base =
                        idx[1] * stride(1) + idx[2] * stride(2) + idx[3] * stride(3) + idx[0];
                    let n = sd[0] as usize;
                    out[base as usize..base as usize + n].copy_from_slice(&p[src..src + n]);
                    src += n;
                }
            }
        }
        start += sd[dim];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_split_as_evenly_as_possible() {
        assert_eq!(split_extents(10, 3), vec![4, 3, 3]);
        assert_eq!(split_extents(2, 4), vec![1, 1, 0, 0]);
        assert_eq!(split_extents(0, 2), vec![0, 0]);
        assert_eq!(split_extents(8, 1), vec![8]);
    }

    #[test]
    fn host_parts_join_back_along_every_dimension() {
        let d = [3u64, 4, 2, 5];
        let values: Vec<i32> = (0..120).collect();
        for dim in 0..4 {
            let mut start = 0;
            let mut parts = Vec::new();
            let mut shards = Vec::new();
            for len in split_extents(d[dim], 3) {
                let p = host_part(&values, d, dim, start, len);
                let mut pd = d;
                pd[dim] = len;
                shards.push(Array::new(&p, Dim4::new(&pd)));
                parts.push(p);
                start += len;
            }
            assert_eq!(join_host(&parts, &shards, Dim4::new(&d), dim), values, "dim {dim}");
        }
    }
}
