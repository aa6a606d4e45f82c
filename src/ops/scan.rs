//! Scans and finite differences along a dimension, with arrayfire-rust's names and signatures:
//! `accum`, `scan`, `scan_by_key` (running sums, products, minima and maxima, optionally
//! restarted wherever a key changes), `diff1` and `diff2`.
//!
//! The semantics every scan shares are documented on [`scan`], where users read them.
//!
//! How inputs are read: on the CPU the scan evaluates a lazy input (and lazy keys) chunk by
//! chunk as it scans, so `accum(&(&a * &b), 0)` never stores `a * b`. On CUDA a lazy input is
//! evaluated first; the scan kernels then read it, or any ready array with offsets and strides,
//! in place.
//!
//! `diff1` and `diff2` compute no kernel of their own: they are element-wise differences of
//! offset views of the same (evaluated) data, lazy nodes that fuse into whatever reads them.

use std::sync::Arc;

use crate::array::Array;
pub use crate::backend::scan::BinaryOp;
use crate::backend::scan::ScanSpec;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, Scanable};
use crate::error_handler::OrRaise;
use crate::jit::{BinOp, Data, Expr, Node};
use crate::storage::HostVec;

/// The dimension `dim` names; panics (naming `func` and the shape) unless it is 0 to 3.
fn check_dim(func: &str, dims: Dim4, dim: i32) -> usize {
    match dim {
        0..=3 => dim as usize,
        _ => panic!(
            "{func}: `dim` is {dim}, but it must be 0, 1, 2 or 3; the input's dims are {dims}"
        ),
    }
}

fn scan_nodes<O: HasAfEnum>(
    func: &str,
    values: &Arc<Node>,
    keys: Option<&Arc<Node>>,
    dim: i32,
    op: BinaryOp,
    inclusive: bool,
) -> Array<O> {
    let dims = values.dims;
    let dim = check_dim(func, dims, dim);
    if let Some(k) = keys {
        if k.dims != dims {
            panic!(
                "{func}: `key` has dims {} but `input` has dims {dims}; they must match",
                k.dims
            );
        }
        crate::ops::build::common_backend(func, &[k, values]);
    }
    let spec = ScanSpec { op, dim, inclusive };
    let buf = values.backend.ops().scan(values, keys, spec, O::DTYPE).or_raise(func);
    Array::from_node(Node::ready(O::DTYPE, dims, values.backend, Data::dense(buf, dims)))
}

/// Running sums along `dim`: the inclusive `ADD` [`scan`], whose documentation gives the
/// rules (integer sums wrap in `T::AggregateOutType`, floating sums accumulate in f64).
///
/// ```
/// use emberfire::{accum, dim4, Array};
/// let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(3, 2));
/// assert_eq!(accum(&a, 0).to_vec(), vec![1, 3, 6, 4, 9, 15]);
/// assert_eq!(accum(&a, 1).to_vec(), vec![1, 2, 3, 5, 7, 9]);
/// // bool counts: the output is u32
/// let b = Array::new(&[true, false, true], dim4!(3));
/// assert_eq!(accum(&b, 0).to_vec(), vec![1u32, 1, 2]);
/// ```
pub fn accum<T>(input: &Array<T>, dim: i32) -> Array<T::AggregateOutType>
where
    T: HasAfEnum,
    T::AggregateOutType: HasAfEnum,
{
    scan_nodes("accum", input.node(), None, dim, BinaryOp::ADD, true)
}

/// A generalised scan along `dim`: running sums, products, minima or maxima (`op`), inclusive
/// (element `j` combines elements `0..=j`) or exclusive (elements `0..j`, the identity first).
///
/// # Semantics
///
/// - `dim` is 0, 1, 2 or 3; the result has the input's shape.
/// - The result type is `T::AggregateOutType` (bool, u8 and u16 give u32, i16 gives i32, f16
///   and bf16 give f32; other types keep theirs), and the scan is computed in it: integer sums and
///   products wrap in the output type, exactly as if every step were computed in it.
/// - Floating sums and products are accumulated in f64 (c64 for complex), f16, bf16 and f32 included,
///   and every output element is rounded once to the output type.
/// - `MIN` and `MAX` ignore NaN, as the `min` and `max` reductions do: an element of an
///   inclusive scan is NaN only when every element so far is NaN. Complex values compare by
///   magnitude; of equal magnitudes the earlier value is kept.
/// - An exclusive scan is the inclusive scan shifted by one along `dim`, with the operation's
///   identity first: 0 for `ADD`, 1 for `MUL`; for `MIN` the largest value of the output type
///   (+∞ for floats, (+∞, 0) for complex), for `MAX` the smallest (−∞ for floats, 0 for
///   complex, whose magnitude cannot be smaller). `scan_by_key` restarts at every key change,
///   so the first element of every run of equal keys holds the identity.
/// - Results are reproducible: work is split by shape only, never by thread count, and partial
///   results are combined in a fixed order. Floating results may differ in the last bits
///   between the CPU and CUDA backends, which group the additions differently.
///
/// On the CPU backend a lazy input is computed chunk by chunk as it is scanned, never stored;
/// on CUDA it is evaluated first, and the scan reads it (or any view) in place.
///
/// # Examples
///
/// ```
/// use emberfire::{dim4, scan, Array, BinaryOp};
/// let a = Array::new(&[2.0f32, 3.0, 1.0, 4.0], dim4!(4));
/// assert_eq!(scan(&a, 0, BinaryOp::MUL, true).to_vec(), vec![2.0, 6.0, 6.0, 24.0]);
/// assert_eq!(scan(&a, 0, BinaryOp::ADD, false).to_vec(), vec![0.0, 2.0, 5.0, 6.0]);
/// assert_eq!(scan(&a, 0, BinaryOp::MIN, false).to_vec(), vec![f32::INFINITY, 2.0, 2.0, 1.0]);
/// ```
pub fn scan<T>(
    input: &Array<T>,
    dim: i32,
    op: BinaryOp,
    inclusive: bool,
) -> Array<T::AggregateOutType>
where
    T: HasAfEnum,
    T::AggregateOutType: HasAfEnum,
{
    scan_nodes("scan", input.node(), None, dim, op, inclusive)
}

/// A [`scan`] along `dim` that restarts wherever the key changes: each run of equal
/// consecutive keys along `dim` is scanned on its own, and in an exclusive scan starts with the
/// identity. `key` must have the input's shape.
///
/// ```
/// use emberfire::{dim4, scan_by_key, Array, BinaryOp};
/// let key = Array::new(&[0i32, 0, 1, 1, 1, 0], dim4!(6));
/// let val = Array::new(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(6));
/// let sums = scan_by_key(&key, &val, 0, BinaryOp::ADD, true);
/// assert_eq!(sums.to_vec(), vec![1.0, 3.0, 3.0, 7.0, 12.0, 6.0]);
/// let before = scan_by_key(&key, &val, 0, BinaryOp::ADD, false);
/// assert_eq!(before.to_vec(), vec![0.0, 1.0, 0.0, 3.0, 7.0, 0.0]);
/// ```
pub fn scan_by_key<K, V>(
    key: &Array<K>,
    input: &Array<V>,
    dim: i32,
    op: BinaryOp,
    inclusive: bool,
) -> Array<V::AggregateOutType>
where
    V: HasAfEnum,
    V::AggregateOutType: HasAfEnum,
    K: HasAfEnum + Scanable,
{
    scan_nodes("scan_by_key", input.node(), Some(key.node()), dim, op, inclusive)
}

/// `order`-th differences along `dim` as a lazy node: offset views of the evaluated input,
/// subtracted element-wise.
fn differences(func: &str, input: &Arc<Node>, dim: i32, order: u64) -> Arc<Node> {
    let d = check_dim(func, input.dims, dim);
    let (t, backend) = (input.dtype, input.backend);
    let mut dims = input.dims;
    dims[d] = dims[d].saturating_sub(order);
    if dims.elements() == 0 {
        let buf = backend.ops().upload(HostVec::zeros(t, 0)).or_raise(func);
        return Node::ready(t, dims, backend, Data::dense(buf, dims));
    }
    let data = input.try_eval().or_raise(func);
    // element (.., j + k, ..) of the input is element (.., j, ..) of view k
    let view = |k: u64| {
        let offset = data.offset as i64 + k as i64 * data.strides[d];
        let v = Data { buf: data.buf.clone(), offset: offset as usize, strides: data.strides };
        Node::ready(t, dims, backend, v)
    };
    let sub =
        |a: Arc<Node>, b: Arc<Node>| Node::lazy(t, dims, backend, Expr::Binary(BinOp::Sub, a, b));
    let v1 = view(1);
    let first = sub(v1.clone(), view(0));
    if order == 1 {
        first
    } else {
        sub(sub(view(2), v1), first)
    }
}

/// First differences along `dim`: element `j` is `input[j + 1] - input[j]`. The result is one
/// shorter along `dim` (empty when `dim` has fewer than 2 elements). Integers wrap; for bool
/// the difference is true where neighbours differ. Lazy: no kernel runs until the result is
/// read, and then the difference fuses into the reader.
///
/// ```
/// use emberfire::{diff1, dim4, Array};
/// let a = Array::new(&[1.0f32, 4.0, 9.0, 16.0, 25.0, 36.0], dim4!(3, 2));
/// assert_eq!(diff1(&a, 0).dims(), dim4!(2, 2));
/// assert_eq!(diff1(&a, 0).to_vec(), vec![3.0, 5.0, 9.0, 11.0]);
/// assert_eq!(diff1(&a, 1).to_vec(), vec![15.0, 21.0, 27.0]);
/// ```
pub fn diff1<T>(input: &Array<T>, dim: i32) -> Array<T::InType>
where
    T: HasAfEnum,
    T::InType: HasAfEnum,
{
    Array::from_node(differences("diff1", input.node(), dim, 1))
}

/// Second differences along `dim`: element `j` is `input[j + 2] - 2 input[j + 1] + input[j]`,
/// computed as `(input[j + 2] - input[j + 1]) - (input[j + 1] - input[j])`. The result is two
/// shorter along `dim` (empty when `dim` has fewer than 3 elements). Lazy, like [`diff1`].
///
/// ```
/// use emberfire::{diff2, dim4, Array};
/// let a = Array::new(&[1i32, 4, 9, 16, 25], dim4!(5));
/// assert_eq!(diff2(&a, 0).to_vec(), vec![2, 2, 2]);
/// ```
pub fn diff2<T>(input: &Array<T>, dim: i32) -> Array<T::InType>
where
    T: HasAfEnum,
    T::InType: HasAfEnum,
{
    Array::from_node(differences("diff2", input.node(), dim, 2))
}
