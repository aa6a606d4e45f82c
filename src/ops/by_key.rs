//! Reductions over runs of equal keys, with arrayfire-rust's names and signatures:
//! `sum_by_key`, `product_by_key`, `min_by_key`, `max_by_key`, `all_true_by_key`,
//! `any_true_by_key` and `count_by_key`, and the NaN-replacing `sum_by_key_nan` and
//! `product_by_key_nan`.
//!
//! `keys` is a vector (i32 or u32) with one key per index along `dim` of `vals`. Every run of
//! consecutive equal keys becomes one output index: the result keys are the runs' keys, in
//! order (a key that comes back after another key starts a new run), and the result values
//! have `vals`' shape with `dim` set to the number of runs. Value semantics follow the plain
//! reductions (`sum`, `min`, ...): float sums and products accumulate in f64 and round once,
//! integer ones wrap in the output type, `min`/`max` ignore NaN and compare complex values by
//! magnitude, and the boolean reductions and `count_by_key` count non-zero values (NaN is
//! non-zero). As in arrayfire-rust, every result type but the product's is
//! `ValueType::AggregateOutType` (1 and 0 for the boolean reductions).
//!
//! The `_nan` forms replace every NaN value by a given number before reducing, as `sum_nan` and
//! `product_nan` do: a complex value with a NaN part becomes `(replacement, 0)`. Integer and
//! boolean values are never NaN, so for them the `_nan` forms equal the plain ones.
//!
//! The reduction runs on the host; on CUDA the inputs are downloaded and the result uploaded.

use rayon::prelude::*;

use crate::array::Array;
use crate::backend::sort::Segments;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, ReduceByKeyInput};
use crate::ops::locate::lit_is_nonzero;
use crate::ops::sort::{array_on, dims_usize, host_of};
use crate::storage::{Element, Lit};

#[derive(Clone, Copy)]
enum KeyOp {
    Sum,
    Product,
    Min,
    Max,
    AllTrue,
    AnyTrue,
    Count,
}

fn resolve_dim(func: &str, dims: Dim4, dim: i32) -> usize {
    match dim {
        0..=3 => dim as usize,
        -1 => (0..4).find(|&k| dims[k] > 1).unwrap_or(0),
        _ => panic!(
            "{func}: `dim` is {dim}, but it must be 0, 1, 2 or 3 (or -1 for the first dimension \
             larger than 1); the dims of `vals` are {dims}"
        ),
    }
}

/// Whether `b` replaces `a` as the minimum (`want_less`) or maximum: NaN never wins, and of
/// equal complex magnitudes the first is kept.
fn better(a: Lit, b: Lit, want_less: bool) -> bool {
    let pick = |x: f64, y: f64| if want_less { y < x } else { y > x };
    match (a, b) {
        (Lit::Real(x), Lit::Real(y)) => x.is_nan() && !y.is_nan() || pick(x, y),
        (Lit::Int(x), Lit::Int(y)) => {
            if want_less {
                y < x
            } else {
                y > x
            }
        }
        (Lit::Uint(x), Lit::Uint(y)) => {
            if want_less {
                y < x
            } else {
                y > x
            }
        }
        (Lit::Cplx(x), Lit::Cplx(y)) => {
            let (nx, ny) = (x.norm(), y.norm());
            nx.is_nan() && !ny.is_nan() || pick(nx, ny)
        }
        _ => unreachable!("by-key reduction: mixed literal kinds"),
    }
}

fn combine(op: KeyOp, a: Lit, b: Lit) -> Lit {
    match (op, a, b) {
        (KeyOp::Sum, Lit::Real(x), Lit::Real(y)) => Lit::Real(x + y),
        (KeyOp::Sum, Lit::Cplx(x), Lit::Cplx(y)) => Lit::Cplx(x + y),
        (KeyOp::Sum, Lit::Int(x), Lit::Int(y)) => Lit::Int(x.wrapping_add(y)),
        (KeyOp::Sum, Lit::Uint(x), Lit::Uint(y)) => Lit::Uint(x.wrapping_add(y)),
        (KeyOp::Product, Lit::Real(x), Lit::Real(y)) => Lit::Real(x * y),
        (KeyOp::Product, Lit::Cplx(x), Lit::Cplx(y)) => Lit::Cplx(x * y),
        (KeyOp::Product, Lit::Int(x), Lit::Int(y)) => Lit::Int(x.wrapping_mul(y)),
        (KeyOp::Product, Lit::Uint(x), Lit::Uint(y)) => Lit::Uint(x.wrapping_mul(y)),
        // bool's product type is bool: the product of 0s and 1s is their AND
        (KeyOp::Product, Lit::Bool(x), Lit::Bool(y)) => Lit::Bool(x && y),
        (KeyOp::Min, a, b) => {
            if better(a, b, true) {
                b
            } else {
                a
            }
        }
        (KeyOp::Max, a, b) => {
            if better(a, b, false) {
                b
            } else {
                a
            }
        }
        _ => unreachable!("by-key reduction: mixed literal kinds"),
    }
}

/// `x` with NaN replaced by `by` (a complex value with a NaN part becomes `(by, 0)`), as the
/// plain `sum_nan` and `product_nan` replace it.
fn nan_to(x: Lit, by: Option<f64>) -> Lit {
    match (x, by) {
        (Lit::Real(v), Some(r)) if v.is_nan() => Lit::Real(r),
        (Lit::Cplx(c), Some(r)) if c.is_nan() => Lit::Cplx(num_complex::Complex64::new(r, 0.0)),
        _ => x,
    }
}

/// Reduces one run of values (never empty).
fn reduce_run(op: KeyOp, run: impl Iterator<Item = Lit>) -> Lit {
    match op {
        KeyOp::AllTrue | KeyOp::AnyTrue | KeyOp::Count => {
            let (mut n, mut nonzero) = (0u64, 0u64);
            for x in run {
                n += 1;
                nonzero += lit_is_nonzero(x) as u64;
            }
            Lit::Uint(match op {
                KeyOp::AllTrue => (nonzero == n) as u64,
                KeyOp::AnyTrue => (nonzero > 0) as u64,
                _ => nonzero,
            })
        }
        _ => run.reduce(|a, b| combine(op, a, b)).expect("runs are never empty"),
    }
}

fn reduce_by_key<K, V, O>(
    func: &str,
    keys: &Array<K>,
    vals: &Array<V>,
    dim: i32,
    op: KeyOp,
    nan: Option<f64>,
) -> (Array<K>, Array<O>)
where
    K: ReduceByKeyInput,
    V: HasAfEnum,
    O: HasAfEnum,
{
    let vdims = vals.dims();
    let d = resolve_dim(func, vdims, dim);
    let kdims = keys.dims();
    assert!(
        kdims.get().iter().filter(|&&x| x != 1).count() <= 1 && keys.elements() as u64 == vdims[d],
        "{func}: `keys` must be a vector with one key per index along dim {d} of `vals`, but \
         `keys` has dims {kdims} and `vals` has dims {vdims}"
    );
    let hk = host_of(func, keys);
    let key_words = hk.cast(DType::S64).into_vec::<i64>();
    let starts: Vec<usize> =
        (0..key_words.len()).filter(|&i| i == 0 || key_words[i] != key_words[i - 1]).collect();
    let runs = starts.len();
    let ends: Vec<usize> = starts.iter().skip(1).copied().chain([key_words.len()]).collect();

    let hv = host_of(func, vals).cast(O::DTYPE);
    let values = hv.view::<O>();
    let mut odims = vdims;
    odims[d] = runs as u64;
    let (iseg, oseg) =
        (Segments::along(dims_usize(vdims), d), Segments::along(dims_usize(odims), d));
    let per_segment: Vec<Vec<O>> = (0..iseg.count)
        .into_par_iter()
        .map(|s| {
            (0..runs)
                .map(|r| {
                    let run =
                        (starts[r]..ends[r]).map(|j| nan_to(values[iseg.at(s, j)].to_lit(), nan));
                    O::from_lit(reduce_run(op, run))
                })
                .collect()
        })
        .collect();
    let mut out: Vec<O> = vec![O::from_lit(Lit::Uint(0)); runs * iseg.count];
    for (s, reduced) in per_segment.into_iter().enumerate() {
        for (r, x) in reduced.into_iter().enumerate() {
            out[oseg.at(s, r)] = x;
        }
    }
    let key_values = hk.view::<K>();
    let out_keys: Vec<K> = starts.iter().map(|&i| key_values[i]).collect();
    let kd = Dim4::new(&[runs as u64, 1, 1, 1]);
    (
        array_on(func, keys.node().backend, Element::wrap(out_keys), kd),
        array_on(func, vals.node().backend, Element::wrap(out), odims),
    )
}

macro_rules! by_key {
    ($(#[$doc:meta])* $name:ident, $assoc:ident, $op:expr) => {
        $(#[$doc])*
        pub fn $name<KeyType, ValueType>(
            keys: &Array<KeyType>,
            vals: &Array<ValueType>,
            dim: i32,
        ) -> (Array<KeyType>, Array<ValueType::$assoc>)
        where
            KeyType: ReduceByKeyInput,
            ValueType: HasAfEnum,
            ValueType::$assoc: HasAfEnum,
        {
            reduce_by_key(stringify!($name), keys, vals, dim, $op, None)
        }
    };
}

macro_rules! by_key_nan {
    ($(#[$doc:meta])* $name:ident, $assoc:ident, $op:expr) => {
        $(#[$doc])*
        pub fn $name<KeyType, ValueType>(
            keys: &Array<KeyType>,
            vals: &Array<ValueType>,
            dim: i32,
            replace_value: f64,
        ) -> (Array<KeyType>, Array<ValueType::$assoc>)
        where
            KeyType: ReduceByKeyInput,
            ValueType: HasAfEnum,
            ValueType::$assoc: HasAfEnum,
        {
            reduce_by_key(stringify!($name), keys, vals, dim, $op, Some(replace_value))
        }
    };
}

by_key!(
    /// Sums the values of each run of equal keys along `dim`.
    ///
    /// ```
    /// use emberfire::{dim4, sum_by_key, Array};
    /// let keys = Array::new(&[0i32, 0, 1, 1, 1, 0], dim4!(6));
    /// let vals = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(6));
    /// let (k, v) = sum_by_key(&keys, &vals, 0);
    /// assert_eq!(k.to_vec(), vec![0, 1, 0]);
    /// assert_eq!(v.to_vec(), vec![3.0, 12.0, 6.0]);
    /// ```
    sum_by_key, AggregateOutType, KeyOp::Sum
);

by_key!(
    /// Multiplies the values of each run of equal keys along `dim`.
    ///
    /// ```
    /// use emberfire::{dim4, product_by_key, Array};
    /// let keys = Array::new(&[7u32, 7, 9], dim4!(3));
    /// let vals = Array::new(&[2i32, 3, 4, 5, 6, 7], dim4!(2, 3));
    /// let (k, v) = product_by_key(&keys, &vals, 1);
    /// assert_eq!(k.to_vec(), vec![7, 9]);
    /// assert_eq!(v.to_vec(), vec![8, 15, 6, 7]);
    /// ```
    product_by_key, ProductOutType, KeyOp::Product
);

by_key!(
    /// The smallest value of each run of equal keys along `dim`, ignoring NaN.
    ///
    /// ```
    /// use emberfire::{dim4, min_by_key, Array};
    /// let keys = Array::new(&[1i32, 1, 2], dim4!(3));
    /// let vals = Array::new(&[f64::NAN, 4.0, 3.0], dim4!(3));
    /// assert_eq!(min_by_key(&keys, &vals, 0).1.to_vec(), vec![4.0, 3.0]);
    /// ```
    min_by_key, AggregateOutType, KeyOp::Min
);

by_key!(
    /// The largest value of each run of equal keys along `dim`, ignoring NaN.
    ///
    /// ```
    /// use emberfire::{dim4, max_by_key, Array};
    /// let keys = Array::new(&[1i32, 1, 2], dim4!(3));
    /// let vals = Array::new(&[5u8, 9, 3], dim4!(3));
    /// assert_eq!(max_by_key(&keys, &vals, 0).1.to_vec(), vec![9, 3]);
    /// ```
    max_by_key, AggregateOutType, KeyOp::Max
);

by_key!(
    /// 1 where every value of a run of equal keys along `dim` is non-zero, else 0.
    ///
    /// ```
    /// use emberfire::{dim4, all_true_by_key, Array};
    /// let keys = Array::new(&[1u32, 1, 2, 2], dim4!(4));
    /// let vals = Array::new(&[1.0f32, 2.0, 0.0, 3.0], dim4!(4));
    /// assert_eq!(all_true_by_key(&keys, &vals, 0).1.to_vec(), vec![1.0, 0.0]);
    /// ```
    all_true_by_key, AggregateOutType, KeyOp::AllTrue
);

by_key!(
    /// 1 where any value of a run of equal keys along `dim` is non-zero, else 0.
    ///
    /// ```
    /// use emberfire::{dim4, any_true_by_key, Array};
    /// let keys = Array::new(&[1u32, 1, 2, 2], dim4!(4));
    /// let vals = Array::new(&[0i32, 0, 0, 3], dim4!(4));
    /// assert_eq!(any_true_by_key(&keys, &vals, 0).1.to_vec(), vec![0, 1]);
    /// ```
    any_true_by_key, AggregateOutType, KeyOp::AnyTrue
);

by_key!(
    /// The number of non-zero values in each run of equal keys along `dim`.
    ///
    /// ```
    /// use emberfire::{dim4, count_by_key, Array};
    /// let keys = Array::new(&[3i32, 3, 3, 4], dim4!(4));
    /// let vals = Array::new(&[true, false, true, true], dim4!(4));
    /// assert_eq!(count_by_key(&keys, &vals, 0).1.to_vec(), vec![2, 1]);
    /// ```
    count_by_key, AggregateOutType, KeyOp::Count
);

by_key_nan!(
    /// Sums the values of each run of equal keys along `dim`, with every NaN value replaced by
    /// `replace_value` first (see [`sum_by_key`] for runs and result types).
    ///
    /// ```
    /// use emberfire::{dim4, sum_by_key_nan, Array};
    /// let keys = Array::new(&[0i32, 0, 1, 1], dim4!(4));
    /// let vals = Array::new(&[1.0f32, f32::NAN, f32::NAN, 4.0], dim4!(4));
    /// let (k, v) = sum_by_key_nan(&keys, &vals, 0, 10.0);
    /// assert_eq!(k.to_vec(), vec![0, 1]);
    /// assert_eq!(v.to_vec(), vec![11.0, 14.0]);
    /// ```
    sum_by_key_nan, AggregateOutType, KeyOp::Sum
);

by_key_nan!(
    /// Multiplies the values of each run of equal keys along `dim`, with every NaN value
    /// replaced by `replace_value` first (see [`product_by_key`] for runs and result types).
    ///
    /// ```
    /// use emberfire::{dim4, product_by_key_nan, Array};
    /// let keys = Array::new(&[5u32, 5, 6], dim4!(3));
    /// let vals = Array::new(&[2.0f64, f64::NAN, 3.0], dim4!(3));
    /// let (k, v) = product_by_key_nan(&keys, &vals, 0, 4.0);
    /// assert_eq!(k.to_vec(), vec![5, 6]);
    /// assert_eq!(v.to_vec(), vec![8.0, 3.0]);
    /// ```
    product_by_key_nan, ProductOutType, KeyOp::Product
);
