//! Work on sharded arrays: element-wise maps per shard, reductions (local, then one
//! collective), matrix products and gathering.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{ShardedArray, Sharding};
use crate::array::Array;
use crate::backend::BackendKind;
use crate::collective::{Communicator, ReduceOp};
use crate::device::with_active;
use crate::dtype::HasAfEnum;
use crate::jit::BinOp;
use crate::ops::blas::{GemmType, MatProp};
use crate::ops::build;
use crate::ops::seq::Seq;
use crate::sync::lock;

/// The run `start..start + len` of `array` along `dim`, on the array's device.
pub(super) fn slice_along<T: HasAfEnum>(
    array: &Array<T>,
    dim: usize,
    start: u64,
    len: u64,
) -> Array<T> {
    let kind = array.node().backend;
    if len == 0 {
        let mut d = array.dims();
        d[dim] = 0;
        return with_active(kind, || Array::new_empty(d));
    }
    let mut seqs = [Seq::<f64>::default(); 4];
    seqs[dim] = Seq::new(start as f64, (start + len - 1) as f64, 1.0);
    with_active(kind, || crate::index(array, &seqs))
}

/// The whole of `s` on `device`.
pub(super) fn gather<T: HasAfEnum>(s: &ShardedArray<T>, device: i32) -> Array<T> {
    let dim = match s.sharding {
        Sharding::Replicated => return s.shards[0].to_device(device),
        Sharding::Split(dim) => dim,
    };
    if let Some(across) = &s.across {
        return across.gather(&s.shards[0], dim, s.dims).to_device(device);
    }
    let parts: Vec<Array<T>> =
        s.shards.iter().filter(|a| a.elements() > 0).map(|a| a.to_device(device)).collect();
    let kind = match s.shards[0].node().backend {
        BackendKind::Cpu => BackendKind::Cpu,
        BackendKind::Cuda(_) => BackendKind::Cuda(device as usize),
    };
    with_active(kind, || match parts.len() {
        0 => Array::new_empty(s.dims),
        1 => parts[0].clone(),
        _ => crate::join_many(dim as i32, parts.iter().collect()),
    })
}

/// The communicator over `devices` (distinct, CUDA), made once per list and kept: making one
/// takes NCCL a while.
fn communicator(devices: &[i32]) -> Option<Arc<Communicator>> {
    static MADE: Mutex<Option<HashMap<Vec<i32>, Arc<Communicator>>>> = Mutex::new(None);
    let mut made = lock(&MADE);
    let map = made.get_or_insert_with(HashMap::new);
    if let Some(c) = map.get(devices) {
        return Some(c.clone());
    }
    let comm = Arc::new(Communicator::new(devices).ok()?);
    map.insert(devices.to_vec(), comm.clone());
    Some(comm)
}

/// Whether the partial results on `shards` can be combined by NCCL: CUDA, several shards, each
/// on its own device.
fn collective_devices<T: HasAfEnum>(shards: &[Array<T>]) -> Option<Vec<i32>> {
    if shards.len() < 2 || shards.iter().any(|s| s.node().backend == BackendKind::Cpu) {
        return None;
    }
    let devices: Vec<i32> = shards.iter().map(|s| s.get_device_id()).collect();
    let distinct = devices.iter().enumerate().all(|(i, d)| !devices[..i].contains(d));
    distinct.then_some(devices)
}

/// Combines `partials` (one per shard, same shape) element by element, leaving the result on
/// every shard's device: one NCCL all-reduce where it can, else copies to the first shard's
/// device, element-wise operations there, and copies back. Shards in several processes
/// (`across`) meet in their group's all-reduce.
fn combine<U: HasAfEnum>(
    func: &str,
    partials: Vec<Array<U>>,
    op: ReduceOp,
    bin: BinOp,
    across: Option<&super::Across>,
) -> Vec<Array<U>> {
    if let Some(across) = across {
        return across.all_reduce(func, &partials, op);
    }
    if partials.len() == 1 {
        return partials;
    }
    let nccl_can = crate::backend::native::nccl::reducing_type(U::DTYPE).is_some()
        || (U::DTYPE.is_complex() && op == ReduceOp::Sum);
    if let (true, Some(devices)) = (nccl_can, collective_devices(&partials)) {
        if let Some(comm) = communicator(&devices) {
            if let Ok(out) = comm.all_reduce(&partials, op) {
                return out;
            }
        }
    }
    let first = partials[0].clone();
    let home = first.node().backend;
    let device = first.get_device_id();
    let total = with_active(home, || {
        partials[1..].iter().fold(first, |acc, p| {
            let p = p.to_device(device);
            build::binary::<U>(func, bin, acc.node(), p.node(), U::DTYPE, false)
        })
    });
    total.eval();
    partials.iter().map(|p| total.to_device(p.get_device_id())).collect()
}

impl<T: HasAfEnum> ShardedArray<T> {
    /// Applies `f` to every shard, with the shard's device active (so constants and other
    /// arrays `f` creates live there), and returns the results as a sharded array of the same
    /// layout. `f` is element-wise work: it keeps each shard's shape. The results are lazy,
    /// like `f`'s: the work of several maps fuses into one kernel per shard when evaluated.
    ///
    /// Panics if `f` changes the shape of a shard of a split array, or returns arrays that
    /// differ between the shards of a replicated one.
    ///
    /// ```
    /// use emberfire::{dim4, sin, ShardedArray};
    /// let x = ShardedArray::from_host(&[0.0f32, 1.0, 2.0], dim4!(3), &[0, 0], 0);
    /// let y = x.map(|s| sin(s) * 2.0f32);
    /// assert!((y.to_vec()[1] - 2.0 * 1f32.sin()).abs() < 1e-6);
    /// ```
    pub fn map<U: HasAfEnum>(&self, f: impl Fn(&Array<T>) -> Array<U>) -> ShardedArray<U> {
        let shards: Vec<Array<U>> =
            self.shards.iter().map(|s| with_active(s.node().backend, || f(s))).collect();
        self.check_mapped("ShardedArray::map", &shards);
        ShardedArray {
            dims: self.dims_of_mapped(&shards),
            shards,
            sharding: self.sharding,
            across: self.across.clone(),
        }
    }

    /// Applies `f` to the matching shards of `self` and `other`, with their device active, as
    /// [`ShardedArray::map`] does. Panics unless both have the same layout, shard shapes and
    /// devices.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let x = ShardedArray::from_host(&[1.0f64, 2.0, 3.0], dim4!(3), &[0, 0], 0);
    /// let y = ShardedArray::from_host(&[10.0f64, 20.0, 30.0], dim4!(3), &[0, 0], 0);
    /// assert_eq!(x.zip_with(&y, |a, b| a * b + 1.0).to_vec(), vec![11.0, 41.0, 91.0]);
    /// ```
    pub fn zip_with<U: HasAfEnum, V: HasAfEnum>(
        &self,
        other: &ShardedArray<U>,
        f: impl Fn(&Array<T>, &Array<U>) -> Array<V>,
    ) -> ShardedArray<V> {
        const F: &str = "ShardedArray::zip_with";
        assert_eq!(
            self.sharding, other.sharding,
            "{F}: the arrays are laid out differently ({:?} and {:?})",
            self.sharding, other.sharding
        );
        assert_eq!(
            self.shards.len(),
            other.shards.len(),
            "{F}: the arrays have different numbers of shards"
        );
        super::processes::check_same_group(F, &self.across, &other.across);
        for (i, (a, b)) in self.shards.iter().zip(&other.shards).enumerate() {
            assert!(
                a.dims() == b.dims() && a.node().backend == b.node().backend,
                "{F}: shard {i} is {} on {:?} in one array and {} on {:?} in the other",
                a.dims(),
                a.node().backend,
                b.dims(),
                b.node().backend
            );
        }
        let shards: Vec<Array<V>> = self
            .shards
            .iter()
            .zip(&other.shards)
            .map(|(a, b)| with_active(a.node().backend, || f(a, b)))
            .collect();
        self.check_mapped(F, &shards);
        ShardedArray {
            dims: self.dims_of_mapped(&shards),
            shards,
            sharding: self.sharding,
            across: self.across.clone(),
        }
    }

    fn check_mapped<U: HasAfEnum>(&self, func: &str, shards: &[Array<U>]) {
        match self.sharding {
            Sharding::Split(_) => {
                for (i, (a, b)) in self.shards.iter().zip(shards).enumerate() {
                    assert_eq!(
                        a.dims(),
                        b.dims(),
                        "{func}: the function changed shard {i}'s shape from {} to {}; it must \
                         work element by element",
                        a.dims(),
                        b.dims()
                    );
                }
            }
            Sharding::Replicated => {
                let d = shards[0].dims();
                assert!(
                    shards.iter().all(|s| s.dims() == d),
                    "{func}: the function gave the replicas different shapes"
                );
            }
        }
        for (i, (a, b)) in self.shards.iter().zip(shards).enumerate() {
            assert_eq!(
                a.node().backend,
                b.node().backend,
                "{func}: the function moved shard {i} to another device"
            );
        }
    }

    fn dims_of_mapped<U: HasAfEnum>(&self, shards: &[Array<U>]) -> crate::Dim4 {
        match self.sharding {
            Sharding::Split(_) => self.dims,
            Sharding::Replicated => shards[0].dims(),
        }
    }

    /// Reduces along `dim` with `local` on every shard; along the split dimension the partial
    /// results are then combined, which leaves the result replicated.
    fn reduce_with<U: HasAfEnum>(
        &self,
        func: &str,
        dim: i32,
        local: impl Fn(&Array<T>, i32) -> Array<U>,
        op: ReduceOp,
        bin: BinOp,
    ) -> ShardedArray<U> {
        assert!((0..4).contains(&dim), "{func}: `dim` is {dim}; arrays have dimensions 0 to 3");
        let partials: Vec<Array<U>> =
            self.shards.iter().map(|s| with_active(s.node().backend, || local(s, dim))).collect();
        let mut dims = self.dims;
        dims[dim as usize] = 1;
        let across = self.across.clone();
        match self.sharding {
            Sharding::Split(d) if d == dim as usize => ShardedArray {
                shards: combine(func, partials, op, bin, across.as_deref()),
                sharding: Sharding::Replicated,
                dims,
                across,
            },
            sharding => ShardedArray { shards: partials, sharding, dims, across },
        }
    }

    /// The sum along `dim`, as [`crate::sum`] computes it per shard; along the split
    /// dimension the shards' sums are added across devices (one all-reduce) and the result is
    /// replicated, along another dimension it stays split.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray, Sharding};
    /// let x = ShardedArray::from_host(&[1, 2, 3, 4, 5, 6], dim4!(3, 2), &[0, 0], 0);
    /// let total = x.sum(0);
    /// assert_eq!(total.sharding(), Sharding::Replicated);
    /// assert_eq!(total.to_vec(), vec![6, 15]);
    /// assert_eq!(x.sum(1).to_vec(), vec![5, 7, 9]);
    /// ```
    pub fn sum(&self, dim: i32) -> ShardedArray<T::AggregateOutType> {
        self.reduce_with(
            "ShardedArray::sum",
            dim,
            |s, d| crate::sum(s, d),
            ReduceOp::Sum,
            BinOp::Add,
        )
    }

    /// The product along `dim`, combined across shards as [`ShardedArray::sum`] is.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let x = ShardedArray::from_host(&[1.0f32, 2.0, 3.0, 4.0], dim4!(4), &[0, 0, 0], 0);
    /// assert_eq!(x.product(0).to_vec(), vec![24.0]);
    /// ```
    pub fn product(&self, dim: i32) -> ShardedArray<T::ProductOutType> {
        self.reduce_with(
            "ShardedArray::product",
            dim,
            |s, d| crate::product(s, d),
            ReduceOp::Prod,
            BinOp::Mul,
        )
    }

    /// The smallest element along `dim`, combined across shards as [`ShardedArray::sum`] is.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let x = ShardedArray::from_host(&[5i32, -2, 7, 0], dim4!(4), &[0, 0], 0);
    /// assert_eq!(x.min(0).to_vec(), vec![-2]);
    /// ```
    pub fn min(&self, dim: i32) -> ShardedArray<T::InType> {
        self.reduce_with(
            "ShardedArray::min",
            dim,
            |s, d| crate::min(s, d),
            ReduceOp::Min,
            BinOp::Min,
        )
    }

    /// The largest element along `dim`, combined across shards as [`ShardedArray::sum`] is.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let x = ShardedArray::from_host(&[5i32, -2, 7, 0], dim4!(4), &[0, 0], 0);
    /// assert_eq!(x.max(0).to_vec(), vec![7]);
    /// ```
    pub fn max(&self, dim: i32) -> ShardedArray<T::InType> {
        self.reduce_with(
            "ShardedArray::max",
            dim,
            |s, d| crate::max(s, d),
            ReduceOp::Max,
            BinOp::Max,
        )
    }

    /// The mean along `dim`, as [`crate::mean`] computes it per shard; along the split
    /// dimension each shard's mean is weighted by its share of the extent and the weighted
    /// means are added across devices (one all-reduce), which leaves the result replicated.
    ///
    /// ```
    /// use emberfire::{dim4, ShardedArray};
    /// let x = ShardedArray::from_host(&[1.0f64, 2.0, 3.0, 4.0, 5.0], dim4!(5), &[0, 0], 0);
    /// assert_eq!(x.mean(0).to_vec(), vec![3.0]);
    /// ```
    pub fn mean(&self, dim: i32) -> ShardedArray<T::MeanOutType>
    where
        T::MeanOutType: HasAfEnum,
    {
        const F: &str = "ShardedArray::mean";
        assert!((0..4).contains(&dim), "{F}: `dim` is {dim}; arrays have dimensions 0 to 3");
        let whole = self.dims[dim as usize];
        let along_split = self.sharding == Sharding::Split(dim as usize);
        self.reduce_with(
            F,
            dim,
            |s, d| {
                if along_split && s.dims()[d as usize] == 0 {
                    // An empty shard adds nothing (its own mean would be NaN).
                    return crate::sum(s, d).cast::<T::MeanOutType>();
                }
                let m = crate::mean(s, d as i64);
                if !along_split || whole == 0 {
                    return m;
                }
                // This shard's share of the whole extent: the weighted means add up to the mean.
                let share = s.dims()[d as usize] as f64 / whole as f64;
                // A scalar constant, fused into the product's kernel (no upload).
                let w = crate::constant(share, crate::Dim4::new(&[1, 1, 1, 1]))
                    .cast::<T::MeanOutType>();
                build::binary::<T::MeanOutType>(
                    F,
                    BinOp::Mul,
                    m.node(),
                    w.node(),
                    <T::MeanOutType as HasAfEnum>::get_af_dtype(),
                    true,
                )
            },
            ReduceOp::Sum,
            BinOp::Add,
        )
    }
}

impl<T: GemmType> ShardedArray<T> {
    /// The matrix product `self · rhs`, each shard's product computed on its device:
    ///
    /// | `self` | `rhs` | result |
    /// | --- | --- | --- |
    /// | split by rows (`Split(0)`) | replicated | split by rows |
    /// | replicated | split by columns (`Split(1)`) | split by columns |
    /// | split by columns (`Split(1)`) | split by rows (`Split(0)`), matching | replicated (the partial products summed by one all-reduce) |
    ///
    /// Panics for other layouts, for shards on different devices, or for shapes a product
    /// does not take.
    ///
    /// ```
    /// use emberfire::{dim4, Array, ShardedArray};
    /// let a = ShardedArray::from_host(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2), &[0, 0], 0);
    /// let b = ShardedArray::replicate(&Array::new(&[1.0f32, 1.0], dim4!(2, 1)), &[0, 0]);
    /// assert_eq!(a.matmul(&b).to_vec(), vec![4.0, 6.0]); // row sums
    /// ```
    pub fn matmul(&self, rhs: &ShardedArray<T>) -> ShardedArray<T> {
        const F: &str = "ShardedArray::matmul";
        assert_eq!(
            self.shards.len(),
            rhs.shards.len(),
            "{F}: the operands have different numbers of shards"
        );
        for (i, (a, b)) in self.shards.iter().zip(&rhs.shards).enumerate() {
            assert_eq!(
                a.node().backend,
                b.node().backend,
                "{F}: shard {i} of the operands lives on different devices"
            );
        }
        let products = || -> Vec<Array<T>> {
            self.shards
                .iter()
                .zip(&rhs.shards)
                .map(|(a, b)| {
                    with_active(a.node().backend, || {
                        crate::matmul(a, b, MatProp::NONE, MatProp::NONE)
                    })
                })
                .collect()
        };
        let (m, n) = (self.dims[0], rhs.dims[1]);
        let dims = crate::Dim4::new(&[m, n, 1, 1]);
        match (self.sharding, rhs.sharding) {
            (Sharding::Split(0), Sharding::Replicated) => ShardedArray {
                shards: products(),
                sharding: Sharding::Split(0),
                dims,
                across: self.across.clone(),
            },
            (Sharding::Replicated, Sharding::Split(1)) => ShardedArray {
                shards: products(),
                sharding: Sharding::Split(1),
                dims,
                across: rhs.across.clone(),
            },
            (Sharding::Split(1), Sharding::Split(0)) => {
                for (i, (a, b)) in self.shards.iter().zip(&rhs.shards).enumerate() {
                    assert_eq!(
                        a.dims()[1],
                        b.dims()[0],
                        "{F}: shard {i} of the left operand has {} columns, the right one's {} \
                         rows; split both the same way",
                        a.dims()[1],
                        b.dims()[0]
                    );
                }
                super::processes::check_same_group(F, &self.across, &rhs.across);
                let across = self.across.clone();
                let shards = combine(F, products(), ReduceOp::Sum, BinOp::Add, across.as_deref());
                ShardedArray { shards, sharding: Sharding::Replicated, dims, across }
            }
            (l, r) => panic!(
                "{F}: a product of a {l:?} and a {r:?} operand is not available; split the left \
                 operand by rows and replicate the right one (or the converse by columns)"
            ),
        }
    }
}
