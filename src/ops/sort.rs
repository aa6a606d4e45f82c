//! Sorting along a dimension, with arrayfire-rust's names and signatures: `sort`,
//! `sort_index` and `sort_by_key`.
//!
//! The order, for every function here and in the set functions:
//! - integers and `bool` in their natural order;
//! - floats as `-inf < ... < -0.0 < 0.0 < ... < inf < NaN`: every NaN compares equal to every
//!   other NaN and sorts **last in both directions** (like NumPy's ascending sort); `sort`
//!   returns NaNs as the canonical quiet NaN;
//! - the sort is stable: equal keys keep their input order, ascending and descending alike,
//!   so `sort_index` and `sort_by_key` are reproducible.
//!
//! Complex and f16 elements do not sort (arrayfire-rust's `RealNumber` bound rejects them at
//! compile time, as ArrayFire does).
//!
//! Both backends sort order-preserving integer words with a radix sort. The CPU partitions the
//! elements by their top varying bits and sorts each part in cache, in parallel
//! (`backend::cpu::radix`); a dense CPU array is read in place. On CUDA the data stays on the
//! device: a stable LSD radix sort with 8-bit digits (`backend::cuda::sort`) on the device's
//! current stream, batched over the other dimensions (`ops::sort_device`). On CUDA a sort
//! takes at most 2^31 - 1 elements.

use crate::array::Array;
use crate::backend::cpu::sort::{gather_along, sort_along, sort_slice};
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, RealNumber};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};
use crate::ops::sort_device;
use crate::storage::{with_vec, Element, HostVec};

/// Runs `$body` with `$v` bound to the typed vector of a sortable `HostVec` (by value or by
/// reference, as `$hv` is given); panics naming `$func` for types that do not sort.
macro_rules! with_sortable {
    ($func:expr, $hv:expr, $v:ident => $body:expr) => {{
        use $crate::storage::HostVec as H;
        match $hv {
            H::F32($v) => $body,
            H::F64($v) => $body,
            H::B8($v) => $body,
            H::S32($v) => $body,
            H::U32($v) => $body,
            H::U8($v) => $body,
            H::S64($v) => $body,
            H::U64($v) => $body,
            H::S16($v) => $body,
            H::U16($v) => $body,
            other => panic!(
                "{}: {} elements have no order (complex and f16 do not sort)",
                $func,
                other.dtype().name()
            ),
        }
    }};
}
pub(crate) use with_sortable;

/// An array on `backend` holding `h`.
pub(crate) fn array_on<T: HasAfEnum>(
    func: &str,
    backend: BackendKind,
    h: HostVec,
    dims: Dim4,
) -> Array<T> {
    debug_assert_eq!(h.dtype(), T::DTYPE);
    let buf = backend.upload(h).or_raise(func);
    Array::from_node(Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims)))
}

/// The elements of an array on the host, column-major: the array's own memory when it is a
/// dense array of the CPU backend (no copy), else a downloaded copy.
pub(crate) struct HostElements {
    data: Option<Data>,
    copy: Option<HostVec>,
    range: std::ops::Range<usize>,
}

impl HostElements {
    pub(crate) fn of<T: HasAfEnum>(func: &str, a: &Array<T>) -> HostElements {
        let n = a.elements();
        let data = a.node().try_eval().or_raise(func);
        if matches!(&*data.buf, Buffer::Host(_)) && data.is_contiguous(a.dims()) {
            let range = data.offset..data.offset + n;
            return HostElements { data: Some(data), copy: None, range };
        }
        HostElements { data: None, copy: Some(host_of(func, a)), range: 0..n }
    }

    /// The vector holding the elements, and their range in it.
    pub(crate) fn get(&self) -> (&HostVec, std::ops::Range<usize>) {
        match (&self.data, &self.copy) {
            (Some(d), _) => match &*d.buf {
                Buffer::Host(h) => (h, self.range.clone()),
                Buffer::Cuda(_) => unreachable!("internal error: device data taken as host"),
            },
            (None, Some(h)) => (h, self.range.clone()),
            (None, None) => unreachable!("internal error: no host elements"),
        }
    }
}

/// The elements of `a` on the host, column-major.
pub(crate) fn host_of<T: HasAfEnum>(func: &str, a: &Array<T>) -> HostVec {
    a.try_host_vec().or_raise(func)
}

pub(crate) fn dims_usize(d: Dim4) -> [usize; 4] {
    d.get().map(|x| x as usize)
}

fn check_dim(func: &str, dims: Dim4, dim: u32) -> usize {
    assert!(
        dim < 4,
        "{func}: `dim` is {dim}, but it must be 0, 1, 2 or 3; the input's dims are {dims}"
    );
    dim as usize
}

fn check_index_range(func: &str, dims: Dim4, dim: usize) {
    assert!(
        dims[dim] <= u32::MAX as u64,
        "{func}: dims {dims} have more than u32::MAX elements along dim {dim}, which u32 indices cannot name"
    );
}

/// Sorts `input` along `dim`, ascending or descending (stable; NaN last in both directions).
///
/// ```
/// use emberfire::{dim4, sort, Array};
/// let a = Array::new(&[3.0f32, f32::NAN, 1.0, 2.0, 9.0, -1.0], dim4!(3, 2));
/// assert_eq!(sort(&a, 0, true).to_vec()[..2], [1.0, 3.0]);
/// assert!(sort(&a, 0, true).to_vec()[2].is_nan());
/// assert_eq!(sort(&a, 0, false).to_vec()[3..], [9.0, 2.0, -1.0]);
/// assert_eq!(sort(&a, 1, true).to_vec()[..2], [2.0, 9.0]); // each row on its own
/// ```
pub fn sort<T>(input: &Array<T>, dim: u32, ascending: bool) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    let dims = input.dims();
    let d = check_dim("sort", dims, dim);
    if let BackendKind::Cuda(_) = input.node().backend {
        return sort_device::sort("sort", input, d, ascending, false).0;
    }
    let elements = HostElements::of("sort", input);
    let (h, range) = elements.get();
    let du = dims_usize(dims);
    let single_segment = du[d] == du.iter().product::<usize>();
    let out = with_sortable!("sort", h, v => {
        let v = &v[range];
        if single_segment {
            Element::wrap(sort_slice(v, !ascending).or_raise("sort"))
        } else {
            Element::wrap(sort_along(v, du, d, !ascending, false).or_raise("sort").0)
        }
    });
    array_on("sort", input.node().backend, out, dims)
}

/// Sorts `input` along `dim` and returns the sorted values with each one's original position
/// along `dim` (u32). Stable: equal values keep increasing positions.
///
/// ```
/// use emberfire::{dim4, sort_index, Array};
/// let a = Array::new(&[5i32, 1, 5, 0], dim4!(4));
/// let (values, index) = sort_index(&a, 0, false);
/// assert_eq!(values.to_vec(), vec![5, 5, 1, 0]);
/// assert_eq!(index.to_vec(), vec![0, 2, 1, 3]);
/// ```
pub fn sort_index<T>(input: &Array<T>, dim: u32, ascending: bool) -> (Array<T>, Array<u32>)
where
    T: HasAfEnum + RealNumber,
{
    let dims = input.dims();
    let d = check_dim("sort_index", dims, dim);
    check_index_range("sort_index", dims, d);
    if let BackendKind::Cuda(_) = input.node().backend {
        let (values, index) = sort_device::sort("sort_index", input, d, ascending, true);
        return (values, index.expect("an index was asked for"));
    }
    let h = host_of("sort_index", input);
    let (values, index) = with_sortable!("sort_index", &h, v => {
        let (s, i) = sort_along(v, dims_usize(dims), d, !ascending, true).or_raise("sort_index");
        (Element::wrap(s), i)
    });
    let backend = input.node().backend;
    (
        array_on("sort_index", backend, values, dims),
        array_on("sort_index", backend, HostVec::U32(index), dims),
    )
}

/// Sorts `keys` along `dim` and moves `vals` (any element type, same dims) with them.
/// Stable: values of equal keys keep their order.
///
/// ```
/// use emberfire::{dim4, sort_by_key, Array};
/// let keys = Array::new(&[2u8, 1, 2, 0], dim4!(4));
/// let vals = Array::new(&[10.0f64, 20.0, 30.0, 40.0], dim4!(4));
/// let (k, v) = sort_by_key(&keys, &vals, 0, true);
/// assert_eq!(k.to_vec(), vec![0, 1, 2, 2]);
/// assert_eq!(v.to_vec(), vec![40.0, 20.0, 10.0, 30.0]);
/// ```
pub fn sort_by_key<K, V>(
    keys: &Array<K>,
    vals: &Array<V>,
    dim: u32,
    ascending: bool,
) -> (Array<K>, Array<V>)
where
    K: HasAfEnum + RealNumber,
    V: HasAfEnum,
{
    let dims = keys.dims();
    assert!(
        dims == vals.dims(),
        "sort_by_key: `keys` dims {dims} and `vals` dims {} differ; they must be equal",
        vals.dims()
    );
    let d = check_dim("sort_by_key", dims, dim);
    check_index_range("sort_by_key", dims, d);
    if let BackendKind::Cuda(_) = keys.node().backend {
        return sort_device::sort_by_key("sort_by_key", keys, vals, d, ascending);
    }
    let hk = host_of("sort_by_key", keys);
    let hv = host_of("sort_by_key", vals);
    let du = dims_usize(dims);
    let (sorted_keys, index) = with_sortable!("sort_by_key", &hk, v => {
        let (s, i) = sort_along(v, du, d, !ascending, true).or_raise("sort_by_key");
        (Element::wrap(s), i)
    });
    let sorted_vals = with_vec!(&hv, v, E => {
        Element::wrap(gather_along::<E>(v, du, d, &index).or_raise("sort_by_key"))
    });
    let backend = keys.node().backend;
    (
        array_on("sort_by_key", backend, sorted_keys, dims),
        array_on("sort_by_key", vals.node().backend, sorted_vals, dims),
    )
}
