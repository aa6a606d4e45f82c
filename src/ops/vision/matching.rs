//! Nearest neighbours of descriptors: [`nearest_neighbour`] for every [`MatchType`] and
//! [`hamming_matcher`].
//!
//! The distances between a block of queries and every train descriptor are one reduction
//! along the descriptor dimension of broadcast differences, fused so the differences are
//! never stored ([`distances`]); SSD of floating descriptors with many pairs is a matrix
//! product instead (`|t|^2 + |q|^2 - 2 t.q`). Queries go in blocks so that a block's
//! distance matrix stays a few hundred megabytes. The `k` best of each query are a minimum
//! (`k = 1`) or a sort along the train dimension.

use super::MatchType;
use crate::array::Array;
use crate::backend::dense::Dense;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum, ImageFilterType, RealNumber};
use crate::error_handler::OrRaise;
use crate::jit::{BinOp, UnOp};
use crate::ops::blas::{matmul, MatProp};
use crate::ops::build::with_backend_of;
use crate::ops::image::calc::Val;
use crate::ops::index::{cols, rows};
use crate::ops::movement::{join_many, moddims, transpose};
use crate::ops::reduce::{imax, imin, sum};
use crate::ops::sort::sort_index;

/// Element types the distances are computed in: f32, f64, i64 (integer SAD and SSD) and
/// u32, u64 (Hamming).
pub(crate) trait Compute: HasAfEnum + RealNumber {
    /// SSD as a matrix product, where that is how this type computes it.
    fn ssd_by_product(_q: &Array<Self>, _t: &Array<Self>) -> Option<Array<Self>> {
        None
    }
}

macro_rules! float_compute {
    ($($t:ty),*) => { $(
        impl Compute for $t {
            fn ssd_by_product(q: &Array<$t>, t: &Array<$t>) -> Option<Array<$t>> {
                let (d, nq, nt) = (q.dims()[0], q.dims()[1], t.dims()[1]);
                if d * nq * nt < 1 << 22 {
                    return None;
                }
                let qq = sum(&(q * q), 0); // 1 x nq
                let tt = transpose(&sum(&(t * t), 0), false); // nt x 1
                let cross = matmul(t, q, MatProp::TRANS, MatProp::NONE); // nt x nq
                let ty = <$t as HasAfEnum>::get_af_dtype();
                let v = Val::of(&tt, ty) + Val::of(&qq, ty) - Val::of(&cross, ty) * 2.0;
                Some(v.max(&v.k(0.0)).array())
            }
        }
    )* };
}
float_compute!(f32, f64);
impl Compute for i64 {}
impl Compute for u32 {}
impl Compute for u64 {}

/// The sum along dimension 0 of `v`, as `C`.
fn sum0<C: Compute>(v: &Val) -> Val {
    let s = sum(&v.array::<C>(), 0).cast::<C>();
    Val::of(&s, C::get_af_dtype())
}

/// The number of set bits of each element of `x` (u32 or u64), by the usual halving sums.
fn popcount(x: &Val) -> Val {
    let wide = x.dtype() == DType::U64;
    let k = |v: u64| x.k(v as f64);
    let m1 = if wide { 0x5555_5555_5555_5555 } else { 0x5555_5555 };
    let m2 = if wide { 0x3333_3333_3333_3333 } else { 0x3333_3333 };
    let m4 = if wide { 0x0F0F_0F0F_0F0F_0F0F } else { 0x0F0F_0F0F };
    let shr = |v: &Val, s: u64| v.bin(BinOp::Shr, &k(s));
    let and = |v: &Val, m: u64| v.bin(BinOp::BitAnd, &k(m));
    let x = x - &and(&shr(x, 1), m1);
    let x = and(&x, m2) + and(&shr(&x, 2), m2);
    let x = and(&(&x + &shr(&x, 4)), m4);
    let x = &x + &shr(&x, 8);
    let mut x = &x + &shr(&x, 16);
    if wide {
        x = &x + &shr(&x, 32);
    }
    and(&x, 0x7F)
}

/// The distance (or, for NCC and ZNCC, the correlation) between every train descriptor
/// and every query descriptor: `q` is `d x nq`, `t` is `d x nt`, the result `nt x nq`.
///
/// This is the one place that computes distances. (SSD with `k = 1` on f32 descriptors
/// on CUDA never comes here: [`fused_nearest_ssd`] keeps each query's minimum as it computes,
/// so the `nt x nq` matrix is never stored.)
pub(crate) fn distances<C: Compute>(q: &Array<C>, t: &Array<C>, mt: MatchType) -> Array<C> {
    let ty = C::get_af_dtype();
    let (d, nq, nt) = (q.dims()[0], q.dims()[1], t.dims()[1]);
    if mt == MatchType::SSD {
        if let Some(out) = C::ssd_by_product(q, t) {
            return out;
        }
    }
    let q3 = Val::of(&moddims(q, Dim4::new(&[d, 1, nq, 1])), ty);
    let t3 = Val::of(&moddims(t, Dim4::new(&[d, nt, 1, 1])), ty);
    let mean = |v: &Val| sum0::<C>(v) / d as f64;
    // integer descriptors compute in i64, which has no absolute value of its own
    let abs = |v: &Val| {
        if ty.is_integer() {
            v.max(&(v.k(0.0) - v))
        } else {
            v.unary(UnOp::Abs)
        }
    };
    let out = match mt {
        MatchType::SAD => sum0::<C>(&abs(&(&t3 - &q3))),
        MatchType::SSD => {
            let e = &t3 - &q3;
            sum0::<C>(&(&e * &e))
        }
        MatchType::ZSAD | MatchType::ZSSD => {
            let e = (&t3 - &mean(&t3)) - (&q3 - &mean(&q3));
            if mt == MatchType::ZSAD {
                sum0::<C>(&abs(&e))
            } else {
                sum0::<C>(&(&e * &e))
            }
        }
        MatchType::LSAD | MatchType::LSSD => {
            let e = &t3 - &(&(mean(&t3) / mean(&q3)) * &q3);
            if mt == MatchType::LSAD {
                sum0::<C>(&abs(&e))
            } else {
                sum0::<C>(&(&e * &e))
            }
        }
        MatchType::NCC | MatchType::ZNCC => {
            let (a, b) = if mt == MatchType::ZNCC {
                (&t3 - &mean(&t3), &q3 - &mean(&q3))
            } else {
                (t3.clone(), q3.clone())
            };
            let num = sum0::<C>(&(&a * &b));
            let den = (sum0::<C>(&(&a * &a)) * sum0::<C>(&(&b * &b))).unary(UnOp::Sqrt);
            num / den
        }
        MatchType::SHD => sum0::<C>(&popcount(&t3.bin(BinOp::BitXor, &q3))),
    };
    moddims(&out.array::<C>(), Dim4::new(&[nt, nq, 1, 1]))
}

/// The `k` best train descriptors of every query (`q` is `d x nq`, `t` is `d x nt`): their
/// indices and distances, each `k x nq`.
fn best_matches<C: Compute>(
    q: &Array<C>,
    t: &Array<C>,
    k: u32,
    mt: MatchType,
) -> (Array<u32>, Array<C>) {
    let (nq, nt) = (q.dims()[1], t.dims()[1]);
    let largest = matches!(mt, MatchType::NCC | MatchType::ZNCC);
    // a block's distance matrix stays bounded (the differences that feed a reduction are
    // fused into it, never stored)
    let budget: u64 = 1 << 26;
    let block = (budget / nt.max(1)).clamp(1, nq.max(1));
    let (mut idx, mut dist) = (Vec::new(), Vec::new());
    let mut first = 0;
    while first < nq {
        let last = (first + block).min(nq) - 1;
        let qb = if first == 0 && last == nq - 1 {
            q.clone()
        } else {
            cols(q, first as i64, last as i64)
        };
        let dm = distances(&qb, t, mt);
        let (v, i) = if k == 1 {
            let (v, i) = if largest { imax(&dm, 0) } else { imin(&dm, 0) };
            (v.cast::<C>(), i)
        } else {
            let (v, i) = sort_index(&dm, 0, !largest);
            (rows(&v, 0, i64::from(k) - 1), rows(&i, 0, i64::from(k) - 1))
        };
        v.eval();
        i.eval();
        dist.push(v);
        idx.push(i);
        first = last + 1;
    }
    if idx.len() == 1 {
        return (idx.pop().expect("one block"), dist.pop().expect("one block"));
    }
    (join_many(1, idx.iter().collect()), join_many(1, dist.iter().collect()))
}

/// Checks the arguments of a matcher and returns `(query, train)` as `d x n` arrays.
fn layout<T: HasAfEnum>(
    func: &str,
    query: &Array<T>,
    train: &Array<T>,
    dist_dim: i64,
    n_dist: u32,
) -> (Array<T>, Array<T>) {
    let (qd, td) = (query.dims(), train.dims());
    assert!(dist_dim == 0 || dist_dim == 1, "{func}: `dist_dim` must be 0 or 1 (got {dist_dim})");
    for (name, d) in [("query", qd), ("train", td)] {
        assert!(d[2] == 1 && d[3] == 1, "{func}: `{name}` must be 2D, but its dims are {d}");
    }
    let dd = dist_dim as usize;
    assert!(
        qd[dd] == td[dd],
        "{func}: `query` (dims {qd}) and `train` (dims {td}) must have the same length along \
         `dist_dim` {dist_dim}"
    );
    let n_train = td[1 - dd];
    assert!(
        (1..=256).contains(&n_dist) && u64::from(n_dist) <= n_train,
        "{func}: `n_dist` must be 1 to 256 and at most the {n_train} train descriptors (got \
         {n_dist})"
    );
    if dist_dim == 0 {
        (query.clone(), train.clone())
    } else {
        (transpose(query, false), transpose(train, false))
    }
}

/// Runs [`best_matches`] in `C` and returns the distances as `O`.
fn run<T: HasAfEnum, C: Compute, O: HasAfEnum>(
    q: &Array<T>,
    t: &Array<T>,
    k: u32,
    mt: MatchType,
) -> (Array<u32>, Array<O>) {
    let (i, d) = best_matches::<C>(&q.cast(), &t.cast(), k, mt);
    (i, d.cast())
}

/// The `n_dist` nearest train descriptors of each query descriptor.
///
/// `query` and `train` are 2D; `dist_dim` (0 or 1) is the dimension along which each
/// descriptor lies, of the same length in both, and the other dimension counts the
/// descriptors. The results are `n_dist x nq` (one column per query, as in ArrayFire): the
/// indices of the train descriptors, best first, and their distances by `dist_type` (see
/// [`MatchType`]). For `NCC` and `ZNCC` the values are correlations and the best is the
/// largest. For the `L` forms, the query is scaled by the ratio of the train descriptor's
/// mean to its own. Ties keep the lower train index first.
///
/// Floating descriptors take every [`MatchType`] but `SHD`; integer descriptors take
/// `SAD` and `SSD` (computed exactly, in i64) and `SHD` (the number of differing bits).
/// Distances have the type of sums of `T` (u32 for u8, for example), as in arrayfire-rust.
///
/// ```
/// use emberfire::{dim4, nearest_neighbour, Array, MatchType};
/// // three train points and two queries in 2 dimensions (one per column)
/// let train = Array::new(&[0.0f32, 0.0, 10.0, 0.0, 0.0, 10.0], dim4!(2, 3));
/// let query = Array::new(&[9.0f32, 1.0, 1.0, 8.0], dim4!(2, 2));
/// let (idx, dist) = nearest_neighbour(&query, &train, 0, 1, MatchType::SSD);
/// assert_eq!(idx.to_vec(), vec![1, 2]);
/// assert_eq!(dist.to_vec(), vec![2.0, 5.0]);
/// ```
///
/// Panics if an array is not 2D, `dist_dim` is not 0 or 1, the descriptor lengths differ,
/// `n_dist` is 0, above 256 or above the number of train descriptors, or `dist_type` does
/// not apply to `T`.
pub fn nearest_neighbour<T>(
    query: &Array<T>,
    train: &Array<T>,
    dist_dim: i64,
    n_dist: u32,
    dist_type: MatchType,
) -> (Array<u32>, Array<T::AggregateOutType>)
where
    T: HasAfEnum + ImageFilterType,
    T::AggregateOutType: HasAfEnum,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(query, || {
        const FUNC: &str = "nearest_neighbour";
        let (q, t) = layout(FUNC, query, train, dist_dim, n_dist);
        let ty = T::get_af_dtype();
        let floating = matches!(ty, DType::F32 | DType::F64);
        if q.dims()[1] == 0 {
            let e = Dim4::new(&[u64::from(n_dist), 0, 1, 1]);
            return (Array::new_empty(e), Array::new_empty(e));
        }
        match dist_type {
            MatchType::SHD => {
                assert!(
                    !floating,
                    "{FUNC}: `dist_type` SHD needs integer descriptors (got {ty:?})"
                );
                match ty {
                    DType::S16 => run::<u16, u32, _>(&q.cast(), &t.cast(), n_dist, dist_type),
                    DType::S64 | DType::U64 => run::<T, u64, _>(&q, &t, n_dist, dist_type),
                    _ => run::<T, u32, _>(&q, &t, n_dist, dist_type),
                }
            }
            MatchType::SAD | MatchType::SSD if !floating => {
                run::<T, i64, _>(&q, &t, n_dist, dist_type)
            }
            _ => {
                assert!(
                    floating,
                    "{FUNC}: `dist_type` {dist_type:?} needs f32 or f64 descriptors (got {ty:?}); \
                 integer descriptors take SAD, SSD and SHD"
                );
                if ty == DType::F64 {
                    run::<T, f64, _>(&q, &t, n_dist, dist_type)
                } else if let Some(found) = (dist_type == MatchType::SSD && n_dist == 1)
                    .then(|| fused_nearest_ssd(FUNC, &q, &t))
                    .flatten()
                {
                    found
                } else {
                    run::<T, f32, _>(&q, &t, n_dist, dist_type)
                }
            }
        }
    })
}

/// The nearest train descriptor of each query by SSD (`k = 1`), where a backend fuses the
/// search (f32 descriptors on CUDA, see `backend::vision`): indices and distances of shape
/// `(1, nq)`. `None` where the general path must run.
fn fused_nearest_ssd<T, D>(func: &str, q: &Array<T>, t: &Array<T>) -> Option<(Array<u32>, Array<D>)>
where
    T: HasAfEnum,
    D: HasAfEnum,
{
    if !q.node().backend.ops().fuses_nearest_ssd().or_raise(func) {
        return None;
    }
    let query = Dense::of(q.node()).or_raise(func);
    let train = Dense::of(t.node()).or_raise(func);
    let (idx, dist) = query.backend.ops().nearest_ssd(&query, &train).or_raise(func)?;
    debug_assert_eq!(dist.dtype, D::get_af_dtype());
    Some((Array::from_node(idx.into_node()), Array::from_node(dist.into_node())))
}

/// The `n_dist` train descriptors nearest to each query descriptor by Hamming distance
/// (the number of differing bits): [`nearest_neighbour`] with [`MatchType::SHD`], for
/// integer descriptors (such as [`orb`](crate::orb)'s, eight u32 words each).
///
/// ```
/// use emberfire::{dim4, hamming_matcher, Array};
/// let train = Array::new(&[0b0111u8, 0b0000, 0b1011], dim4!(1, 3));
/// let query = Array::new(&[0b1011u8], dim4!(1, 1));
/// let (idx, dist) = hamming_matcher(&query, &train, 0, 2);
/// assert_eq!(idx.to_vec(), vec![2, 0]);
/// assert_eq!(dist.to_vec(), vec![0, 2]);
/// ```
///
/// Panics as [`nearest_neighbour`] does, and for floating descriptors.
pub fn hamming_matcher<T>(
    query: &Array<T>,
    train: &Array<T>,
    dist_dims: i64,
    n_dist: u32,
) -> (Array<u32>, Array<T::AggregateOutType>)
where
    T: HasAfEnum + ImageFilterType,
    T::AggregateOutType: HasAfEnum,
{
    let ty = T::get_af_dtype();
    assert!(
        !matches!(ty, DType::F32 | DType::F64),
        "hamming_matcher: `query` and `train` must be integer descriptors (got {ty:?})"
    );
    nearest_neighbour(query, train, dist_dims, n_dist, MatchType::SHD)
}
