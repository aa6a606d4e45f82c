//! Creating arrays (constants, ranges, identity, diagonals, triangles) and choosing between
//! arrays element by element (`select`, `replace`).

use crate::array::Array;
use crate::device::active_kind;
use crate::dim4::Dim4;
use crate::dtype::HasAfEnum;
use crate::error_handler::OrRaise;
use crate::jit::Expr;
use crate::ops::build;
use crate::storage::try_filled;

/// Types that can fill an array with a constant, as in arrayfire-rust.
///
/// ```
/// use emberfire::{ConstGenerator, dim4};
/// assert_eq!(3u8.generate(dim4!(2)).to_vec(), vec![3, 3]);
/// ```
pub trait ConstGenerator: HasAfEnum {
    /// The element type of the generated array.
    type OutType: HasAfEnum;
    /// An array of shape `dims` with every element equal to `self`.
    fn generate(&self, dims: Dim4) -> Array<Self::OutType>;
}

impl<T: HasAfEnum> ConstGenerator for T {
    type OutType = T;
    fn generate(&self, dims: Dim4) -> Array<T> {
        Array::lazy(dims, active_kind(), Expr::Scalar(T::wrap(vec![*self])))
    }
}

/// An array of shape `dims` with every element equal to `cnst`. Lazy and free: nothing is
/// stored until it is needed.
///
/// ```
/// use emberfire::{constant, dim4};
/// assert_eq!(constant(2.5f32, dim4!(3)).to_vec(), vec![2.5; 3]);
/// ```
pub fn constant<T: ConstGenerator>(cnst: T, dims: Dim4) -> Array<T::OutType> {
    cnst.generate(dims)
}

/// The index along dimension `seq_dim`, for every element of shape `dims`. A negative
/// `seq_dim` means dimension 0, as in ArrayFire (whose C++ default is -1); 4 or more panics.
///
/// ```
/// use emberfire::{range, dim4};
/// assert_eq!(range::<i32>(dim4!(2, 3), 1).to_vec(), vec![0, 0, 1, 1, 2, 2]);
/// assert_eq!(range::<i32>(dim4!(2, 3), -1).to_vec(), vec![0, 1, 0, 1, 0, 1]);
/// ```
pub fn range<T: HasAfEnum>(dims: Dim4, seq_dim: i32) -> Array<T> {
    assert!(seq_dim < 4, "range: dimension {seq_dim} is not in 0..4");
    let d = seq_dim.max(0) as u8;
    Array::lazy(dims, active_kind(), Expr::Range(d))
}

/// `0..dims.elements()` laid out in shape `dims`, then tiled `tile_dims` times along each
/// dimension.
///
/// ```
/// use emberfire::{iota, dim4};
/// assert_eq!(iota::<u32>(dim4!(3), dim4!(2)).to_vec(), vec![0, 1, 2, 0, 1, 2]);
/// ```
pub fn iota<T: HasAfEnum>(dims: Dim4, tile_dims: Dim4) -> Array<T> {
    let out: [u64; 4] = std::array::from_fn(|k| dims[k] * tile_dims[k]);
    let block: [u64; 4] = std::array::from_fn(|k| dims[k].max(1));
    Array::lazy(Dim4::new(&out), active_kind(), Expr::Iota(block))
}

/// Ones on the diagonal of each 2-D slice, zeros elsewhere.
///
/// ```
/// use emberfire::{identity, dim4};
/// assert_eq!(identity::<f32>(dim4!(2, 2)).to_vec(), vec![1.0, 0.0, 0.0, 1.0]);
/// ```
pub fn identity<T: HasAfEnum>(dims: Dim4) -> Array<T> {
    let diag = crate::ops::arith::eq(&range::<u64>(dims, 0), &range::<u64>(dims, 1), false);
    diag.cast::<T>()
}

/// A square matrix with `input` (a vector) on diagonal `num` (0 the main diagonal, positive
/// above, negative below) and zeros elsewhere. A matrix input gives one matrix per column,
/// stacked along dimension 2.
///
/// ```
/// use emberfire::{diag_create, Array, dim4};
/// let m = diag_create(&Array::new(&[1, 2], dim4!(2)), 1);
/// assert_eq!(m.dims(), dim4!(3, 3));
/// assert_eq!(m.to_vec(), vec![0, 0, 0, 1, 0, 0, 0, 2, 0]);
/// ```
pub fn diag_create<T: HasAfEnum>(input: &Array<T>, num: i32) -> Array<T> {
    let d = input.dims();
    assert!(
        d[2] == 1 && d[3] == 1,
        "diag_create: input must be a vector or a matrix, got dims {d}"
    );
    let (len, batches) = (d[0] as usize, d[1] as usize);
    let k = num.unsigned_abs() as usize;
    let n = len + k;
    let v = input.to_vec();
    // n² elements from n: the result can be what does not fit in memory
    let elements = n.saturating_mul(n).saturating_mul(batches);
    let mut out = try_filled(elements, T::default()).or_raise("diag_create");
    for b in 0..batches {
        for i in 0..len {
            let (r, c) = if num >= 0 { (i, i + k) } else { (i + k, i) };
            out[b * n * n + c * n + r] = v[b * len + i];
        }
    }
    let dims = Dim4::new(&[n as u64, n as u64, batches as u64, 1]);
    build::with_backend_of(input, || Array::try_from_host(T::wrap(out), dims))
        .or_raise("diag_create")
}

/// Diagonal `num` of each 2-D slice, as a column (0 the main diagonal, positive above,
/// negative below).
///
/// ```
/// use emberfire::{diag_extract, Array, dim4};
/// let m = Array::new(&[1, 2, 3, 4], dim4!(2, 2));
/// assert_eq!(diag_extract(&m, 0).to_vec(), vec![1, 4]);
/// assert_eq!(diag_extract(&m, -1).to_vec(), vec![2]);
/// ```
pub fn diag_extract<T: HasAfEnum>(input: &Array<T>, num: i32) -> Array<T> {
    let d = input.dims();
    let (rows, cols) = (d[0] as i64, d[1] as i64);
    let (r0, c0) = if num >= 0 { (0, num as i64) } else { (-(num as i64), 0) };
    let len = (rows - r0).min(cols - c0).max(0) as usize;
    let v = input.to_vec();
    let slices = (d[2] * d[3]) as usize;
    let mut out = Vec::with_capacity(len * slices);
    for s in 0..slices {
        for i in 0..len as i64 {
            let idx = s as i64 * rows * cols + (c0 + i) * rows + (r0 + i);
            out.push(v[idx as usize]);
        }
    }
    build::with_backend_of(input, || Array::new(&out, Dim4::new(&[len as u64, 1, d[2], d[3]])))
}

/// Keeps the part of each matrix selected by `keep(row, col)`, zero elsewhere, with ones on
/// the diagonal if `unit`.
fn triangle<T: HasAfEnum>(func: &str, input: &Array<T>, unit: bool, lower: bool) -> Array<T> {
    use crate::ops::arith::{eq, ge, le};
    let d = input.dims();
    // the row and column numbers combine with `input`, so they live where it does
    let (r, c) = build::with_backend_of(input, || (range::<i64>(d, 0), range::<i64>(d, 1)));
    let keep = if lower { ge(&r, &c, false) } else { le(&r, &c, false) };
    let zero = constant(T::from_lit(crate::storage::Lit::Int(0)), Dim4::default());
    let kept: Array<T> = build::select_nodes(func, keep.node(), input.node(), zero.node());
    if unit {
        let one = constant(T::from_lit(crate::storage::Lit::Int(1)), Dim4::default());
        build::select_nodes(func, eq(&r, &c, false).node(), one.node(), kept.node())
    } else {
        kept
    }
}

/// The lower triangle of each matrix (zeros above the diagonal); with `is_unit_diag`, ones on
/// the diagonal.
///
/// ```
/// use emberfire::{lower, Array, dim4};
/// let m = Array::new(&[1, 2, 3, 4], dim4!(2, 2));
/// assert_eq!(lower(&m, false).to_vec(), vec![1, 2, 0, 4]);
/// assert_eq!(lower(&m, true).to_vec(), vec![1, 2, 0, 1]);
/// ```
pub fn lower<T: HasAfEnum>(input: &Array<T>, is_unit_diag: bool) -> Array<T> {
    triangle("lower", input, is_unit_diag, true)
}

/// The upper triangle of each matrix (zeros below the diagonal); with `is_unit_diag`, ones on
/// the diagonal.
///
/// ```
/// use emberfire::{upper, Array, dim4};
/// let m = Array::new(&[1, 2, 3, 4], dim4!(2, 2));
/// assert_eq!(upper(&m, false).to_vec(), vec![1, 0, 3, 4]);
/// ```
pub fn upper<T: HasAfEnum>(input: &Array<T>, is_unit_diag: bool) -> Array<T> {
    triangle("upper", input, is_unit_diag, false)
}

/// `a` where `cond` is true, `b` elsewhere. Size-1 dimensions broadcast.
///
/// ```
/// use emberfire::{select, Array, dim4};
/// let c = Array::new(&[true, false], dim4!(2));
/// let a = Array::new(&[1, 2], dim4!(2));
/// let b = Array::new(&[10, 20], dim4!(2));
/// assert_eq!(select(&a, &c, &b).to_vec(), vec![1, 20]);
/// ```
pub fn select<T: HasAfEnum>(a: &Array<T>, cond: &Array<bool>, b: &Array<T>) -> Array<T> {
    build::select_nodes("select", cond.node(), a.node(), b.node())
}

fn scalar_of<T: HasAfEnum>(v: f64) -> Array<T> {
    constant(T::from_lit(crate::storage::Lit::Real(v)), Dim4::default())
}

/// The scalar `a` where `cond` is true, `b` elsewhere.
///
/// ```
/// use emberfire::{selectl, Array, dim4};
/// let c = Array::new(&[true, false], dim4!(2));
/// assert_eq!(selectl(0.0, &c, &Array::new(&[1.0f32, 2.0], dim4!(2))).to_vec(), vec![0.0, 2.0]);
/// ```
pub fn selectl<T: HasAfEnum>(a: f64, cond: &Array<bool>, b: &Array<T>) -> Array<T> {
    build::select_nodes("selectl", cond.node(), scalar_of::<T>(a).node(), b.node())
}

/// `a` where `cond` is true, the scalar `b` elsewhere.
///
/// ```
/// use emberfire::{selectr, Array, dim4};
/// let c = Array::new(&[true, false], dim4!(2));
/// assert_eq!(selectr(&Array::new(&[1.0f32, 2.0], dim4!(2)), &c, 9.0).to_vec(), vec![1.0, 9.0]);
/// ```
pub fn selectr<T: HasAfEnum>(a: &Array<T>, cond: &Array<bool>, b: f64) -> Array<T> {
    build::select_nodes("selectr", cond.node(), a.node(), scalar_of::<T>(b).node())
}

/// Keeps `a` where `cond` is true and takes `b` elsewhere, in place.
///
/// ```
/// use emberfire::{replace, Array, dim4};
/// let mut a = Array::new(&[1, 2], dim4!(2));
/// replace(&mut a, &Array::new(&[true, false], dim4!(2)), &Array::new(&[7, 8], dim4!(2)));
/// assert_eq!(a.to_vec(), vec![1, 8]);
/// ```
pub fn replace<T: HasAfEnum>(a: &mut Array<T>, cond: &Array<bool>, b: &Array<T>) {
    let dims = a.dims();
    let r: Array<T> = build::select_nodes("replace", cond.node(), a.node(), b.node());
    assert!(
        r.dims() == dims,
        "replace: cond {} and b {} would change the shape of a {dims}",
        cond.dims(),
        b.dims()
    );
    *a = r;
}

/// Keeps `a` where `cond` is true and takes the scalar `b` elsewhere, in place.
///
/// ```
/// use emberfire::{replace_scalar, Array, dim4};
/// let mut a = Array::new(&[1.0f64, 2.0], dim4!(2));
/// replace_scalar(&mut a, &Array::new(&[false, true], dim4!(2)), 0.5);
/// assert_eq!(a.to_vec(), vec![0.5, 2.0]);
/// ```
pub fn replace_scalar<T: HasAfEnum>(a: &mut Array<T>, cond: &Array<bool>, b: f64) {
    let dims = a.dims();
    let r: Array<T> =
        build::select_nodes("replace_scalar", cond.node(), a.node(), scalar_of::<T>(b).node());
    assert!(
        r.dims() == dims,
        "replace_scalar: cond {} would change the shape of a {dims}",
        cond.dims()
    );
    *a = r;
}
