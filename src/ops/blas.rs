//! Matrix multiplication with arrayfire-rust's names and signatures: [`matmul`], [`gemm()`],
//! [`dot`], the matrix properties [`MatProp`] and the cuBLAS math mode ([`set_cublas_mode`]).
//!
//! Semantics shared by the products here:
//! - Arrays are column-major matrices of `dims[0]` rows and `dims[1]` columns. Dimensions 2
//!   and 3 are batches: each batch of the result is the product of the matching batches of the
//!   operands, and a batch dimension of size 1 in one operand is used for every batch of the
//!   other (ArrayFire's broadcasting).
//! - Element types: f32, f64, c32 and c64 (arrayfire-rust's [`FloatingPoint`]), f16 and bf16
//!   ([`GemmType`]). f16 and bf16 products accumulate in f32 and are rounded once.
//! - Operands are read where they are: a transposed, conjugated or strided (view) operand
//!   costs no copy on the CPU; lazy operands are evaluated first. On CUDA, cuBLAS reads any
//!   operand whose rows or columns are contiguous; others are gathered first.
//! - Shapes that do not fit panic with a message naming the function and both shapes.
//! - Products with no terms (an inner dimension of 0) are zero; products with no elements are
//!   empty arrays of the result's shape.
//!
//! On the CPU the products run on faer, emberfire's AVX-512 kernels or the `gemm` crate (all
//! cores; bf16 through the f32 product of its widened operands); on CUDA on
//! cuBLAS, on emberfire's stream, in full f32 precision unless [`set_cublas_mode`] allows
//! TF32 tensor cores. [`dot`] is a reduction instead: the element-wise products fuse into the
//! sum, one pass over both vectors on either backend, and no vendor library is loaded for it.

use std::sync::Arc;

use crate::array::Array;
use crate::backend::blas::{GemmParams, MatArg};
use crate::backend::reduce::Reduction;
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::dtype::{FloatingPoint, HasAfEnum};
use crate::error::Result;
use crate::error_handler::OrRaise;
use crate::jit::{BinOp, Data, Expr, Node, Program, UnOp};
use crate::ops::build::common_backend;
use crate::storage::{HostVec, Lit};

/// Properties of a matrix operand, as in arrayfire-rust (the same names and values).
///
/// Matrix products ([`matmul`], [`gemm()`]) accept `NONE`, `TRANS`, `CTRANS` and `CONJ`
/// (ArrayFire itself refuses `CONJ` there; emberfire conjugates without transposing). [`dot`]
/// accepts `NONE` and `CONJ`. The other values describe matrices for the linear algebra
/// solvers and are refused by the products with a panic naming the value.
///
/// ```
/// use emberfire::{c32, dim4, matmul, Array, MatProp};
/// let a = Array::new(&[c32::new(0.0, 1.0)], dim4!(1, 1));
/// // a^H a = (-i)(i) = 1
/// assert_eq!(matmul(&a, &a, MatProp::CTRANS, MatProp::NONE).to_vec(), vec![c32::new(1.0, 0.0)]);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatProp {
    /// Use the matrix as it is.
    NONE = 0,
    /// Use the transpose.
    TRANS = 1,
    /// Use the conjugate transpose (the transpose for real types).
    CTRANS = 2,
    /// Use the conjugate, without transposing (the matrix itself for real types).
    CONJ = 4,
    /// The matrix is upper triangular (solvers only).
    UPPER = 32,
    /// The matrix is lower triangular (solvers only).
    LOWER = 64,
    /// The diagonal holds ones (solvers only).
    DIAGUNIT = 128,
    /// The matrix is symmetric (solvers only).
    SYM = 512,
    /// The matrix is positive definite (solvers only).
    POSDEF = 1024,
    /// The matrix is orthogonal (solvers only).
    ORTHOG = 2048,
    /// The matrix is tri-diagonal (solvers only).
    TRIDIAG = 4096,
    /// The matrix is block-diagonal (solvers only).
    BLOCKDIAG = 8192,
}

impl MatProp {
    const ALL: [MatProp; 12] = [
        MatProp::NONE,
        MatProp::TRANS,
        MatProp::CTRANS,
        MatProp::CONJ,
        MatProp::UPPER,
        MatProp::LOWER,
        MatProp::DIAGUNIT,
        MatProp::SYM,
        MatProp::POSDEF,
        MatProp::ORTHOG,
        MatProp::TRIDIAG,
        MatProp::BLOCKDIAG,
    ];
}

/// The property with ArrayFire's value `t`. Panics for a value that is no single property
/// (arrayfire-rust would hold an invalid enum value).
///
/// ```
/// use emberfire::MatProp;
/// assert_eq!(MatProp::from(2), MatProp::CTRANS);
/// assert_eq!(MatProp::from(MatProp::LOWER as u32), MatProp::LOWER);
/// ```
impl From<u32> for MatProp {
    fn from(t: u32) -> Self {
        MatProp::ALL
            .into_iter()
            .find(|p| *p as u32 == t)
            .unwrap_or_else(|| panic!("MatProp::from: {t} is not a MatProp value"))
    }
}

/// The property whose value is the bitwise or of both values, as in arrayfire-rust. Since an
/// enum holds one value, the result must itself be a property: `NONE | p` and `p | p` are `p`,
/// while `TRANS | CTRANS` has the value 3, which no property has, so it panics.
///
/// ```
/// use emberfire::MatProp;
/// assert_eq!(MatProp::NONE | MatProp::UPPER, MatProp::UPPER);
/// assert_eq!(MatProp::LOWER | MatProp::LOWER, MatProp::LOWER);
/// assert!(std::panic::catch_unwind(|| MatProp::TRANS | MatProp::CTRANS).is_err());
/// ```
impl std::ops::BitOr for MatProp {
    type Output = MatProp;
    fn bitor(self, rhs: MatProp) -> MatProp {
        MatProp::from(self as u32 | rhs as u32)
    }
}

/// How cuBLAS may compute f32 and c32 products, as in arrayfire-rust.
///
/// `DEFAULT` computes in full f32 precision. `TENSOR_OP` lets cuBLAS use TF32 tensor cores for
/// f32 and c32 products (inputs rounded to 10 mantissa bits, several times faster on Ampere
/// and later GPUs). f64 products are unaffected, and f16 and bf16 products accumulate in f32 on
/// tensor cores in both modes. The CPU backend always computes in full precision.
///
/// ```
/// use emberfire::{get_cublas_mode, CublasMathMode};
/// assert_eq!(get_cublas_mode(), CublasMathMode::DEFAULT);
/// ```
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CublasMathMode {
    /// Let cuBLAS use TF32 tensor cores for f32 and c32 products.
    TENSOR_OP = 1,
    /// Full f32 precision (the default).
    DEFAULT = 0,
}

/// The element types of matrix products: f32, f64, c32, c64 (every [`FloatingPoint`] type),
/// f16 and bf16 (both accumulated in f32 and rounded once).
///
/// It is implemented for every `FloatingPoint` type, so generic code written for
/// arrayfire-rust's `T: HasAfEnum + FloatingPoint` bound calls [`matmul`] unchanged.
///
/// ```
/// use emberfire::{dim4, matmul, Array, FloatingPoint, HasAfEnum, MatProp};
/// fn square<T: HasAfEnum + FloatingPoint>(a: &Array<T>) -> Array<T> {
///     matmul(a, a, MatProp::NONE, MatProp::NONE)
/// }
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2));
/// assert_eq!(square(&a).to_vec(), vec![7.0, 10.0, 15.0, 22.0]);
/// ```
pub trait GemmType: HasAfEnum {}

impl<T: HasAfEnum + FloatingPoint> GemmType for T {}
impl GemmType for half::f16 {}
impl GemmType for half::bf16 {}

/// `(transpose, conjugate)` for a product operand; panics for properties products do not take.
fn product_op(func: &str, arg: &str, prop: MatProp) -> (bool, bool) {
    match prop {
        MatProp::NONE => (false, false),
        MatProp::TRANS => (true, false),
        MatProp::CTRANS => (true, true),
        MatProp::CONJ => (false, true),
        other => panic!(
            "{func}: `{arg}` is MatProp::{other:?}, which describes a matrix for the solvers; \
             matrix products take NONE, TRANS, CTRANS or CONJ"
        ),
    }
}

fn prop_name(trans: bool, conj: bool) -> &'static str {
    match (trans, conj) {
        (false, false) => "NONE",
        (true, false) => "TRANS",
        (true, true) => "CTRANS",
        (false, true) => "CONJ",
    }
}

/// One as a value of `T`.
fn one<T: HasAfEnum>() -> T {
    T::from_lit(Lit::Real(1.0))
}

/// Rows and columns of `op(x)` for a stored shape `dims`.
fn op_shape(dims: Dim4, trans: bool) -> (usize, usize) {
    let (r, c) = (dims[0] as usize, dims[1] as usize);
    if trans {
        (c, r)
    } else {
        (r, c)
    }
}

/// An operand before evaluation: its array and `op`.
struct Side<'a, T: HasAfEnum> {
    array: &'a Array<T>,
    name: &'static str,
    trans: bool,
    conj: bool,
}

impl<T: HasAfEnum> Side<'_, T> {
    fn describe(&self) -> String {
        let (r, c) = op_shape(self.array.dims(), self.trans);
        let name = self.name;
        format!(
            "op({name}) is {r}×{c} ({name} dims {}, opt{name} {})",
            self.array.dims(),
            prop_name(self.trans, self.conj)
        )
    }

    /// The operand as stored, evaluated.
    fn arg(&self) -> Result<MatArg> {
        Ok(MatArg {
            data: ready(self.array)?,
            dims: self.array.dims(),
            trans: self.trans,
            conj: self.conj,
        })
    }
}

/// The result shape of `op(a) op(b)` and the inner size `k`; panics naming `func` when the
/// inner sizes differ or the batches do not broadcast.
fn product_shape<T: HasAfEnum>(func: &str, a: &Side<T>, b: &Side<T>) -> (Dim4, usize) {
    let (ad, bd) = (a.array.dims(), b.array.dims());
    let ((m, ka), (kb, n)) = (op_shape(ad, a.trans), op_shape(bd, b.trans));
    if ka != kb {
        panic!("{func}: inner dimensions differ: {} but {}", a.describe(), b.describe());
    }
    let mut dims = Dim4::new(&[m as u64, n as u64, 1, 1]);
    for d in 2..4 {
        let (x, y) = (ad[d], bd[d]);
        if x != y && x != 1 && y != 1 {
            panic!(
                "{func}: batch dimensions do not broadcast: lhs dims {ad} and rhs dims {bd} (each \
                 of dimensions 2 and 3 must be equal, or 1 in one of them)"
            );
        }
        dims[d] = if x == 1 { y } else { x };
    }
    (dims, ka)
}

/// Ready data of `array`, evaluating it if it is lazy.
fn ready<T: HasAfEnum>(array: &Array<T>) -> Result<Data> {
    array.node().try_eval()
}

/// A ready array from a buffer holding `dims` densely.
fn from_buffer<T: HasAfEnum>(buf: Buffer, dims: Dim4, backend: BackendKind) -> Array<T> {
    Array::from_node(Node::ready(T::DTYPE, dims, backend, Data::dense(buf, dims)))
}

/// `value` in every element of shape `dims`, lazily.
fn filled<T: HasAfEnum>(value: T, dims: Dim4, backend: BackendKind) -> Array<T> {
    Array::lazy(dims, backend, Expr::Scalar(T::wrap(vec![value])))
}

/// A checked product `alpha * op(A) op(B) (+ beta * C)` whose operands are not yet evaluated.
struct Product<'a, T: GemmType> {
    a: Side<'a, T>,
    b: Side<'a, T>,
    dims: Dim4,
    k: usize,
    backend: BackendKind,
}

impl<'a, T: GemmType> Product<'a, T> {
    /// Checks the operands' backends and shapes (before anything is evaluated, so a bad call
    /// costs nothing).
    fn new(
        func: &str,
        lhs: &'a Array<T>,
        rhs: &'a Array<T>,
        optlhs: MatProp,
        optrhs: MatProp,
    ) -> Self {
        let backend = common_backend(func, &[lhs.node(), rhs.node()]);
        let (trans, conj) = product_op(func, "optlhs", optlhs);
        let a = Side { array: lhs, name: "lhs", trans, conj };
        let (trans, conj) = product_op(func, "optrhs", optrhs);
        let b = Side { array: rhs, name: "rhs", trans, conj };
        let (dims, k) = product_shape(func, &a, &b);
        Product { a, b, dims, k, backend }
    }

    /// An empty result, when the product has no elements.
    fn empty(&self) -> Result<Array<T>> {
        let buf = self.backend.ops().upload(HostVec::zeros(T::DTYPE, 0))?;
        Ok(from_buffer(buf, self.dims, self.backend))
    }

    /// Computes the product (which must have elements and terms) into `c`, a dense buffer of
    /// the result's shape that nothing else uses, or into a new buffer (beta then does not
    /// matter).
    fn run(&self, alpha: T, beta: T, c: Option<Buffer>) -> Result<Array<T>> {
        let dims = self.dims;
        let params = GemmParams::new(dims, self.k, alpha, beta);
        let (a, b) = (self.a.arg()?, self.b.arg()?);
        let buf = self.backend.ops().gemm(&a, &b, c, &params)?;
        Ok(from_buffer(buf, dims, self.backend))
    }
}

/// The matrix product `op(lhs) · op(rhs)`, batched over dimensions 2 and 3.
///
/// `optlhs` and `optrhs` choose `op` for each side: `NONE`, `TRANS`, `CTRANS` or `CONJ`. The
/// result has `op(lhs)`'s rows, `op(rhs)`'s columns, and in dimensions 2 and 3 the larger of
/// the operands' sizes (a size of 1 is used for every batch). Panics if the inner dimensions
/// differ, if the batches do not broadcast, or for another [`MatProp`].
///
/// ```
/// use emberfire::{dim4, matmul, Array, MatProp};
/// // column-major: a = [1 3 5; 2 4 6] (2×3), b = [1 0; 0 1; 1 1] (3×2)
/// let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
/// let b = Array::new(&[1.0f32, 0.0, 1.0, 0.0, 1.0, 1.0], dim4!(3, 2));
/// let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE);
/// assert_eq!(c.dims(), dim4!(2, 2));
/// assert_eq!(c.to_vec(), vec![6.0, 8.0, 8.0, 10.0]);
/// // aᵀ·a is 3×3
/// assert_eq!(matmul(&a, &a, MatProp::TRANS, MatProp::NONE).dims(), dim4!(3, 3));
/// ```
pub fn matmul<T>(lhs: &Array<T>, rhs: &Array<T>, optlhs: MatProp, optrhs: MatProp) -> Array<T>
where
    T: GemmType,
{
    matmul_in("matmul", lhs, rhs, optlhs, optrhs).or_raise("matmul")
}

/// Like [`matmul`], returning an error instead of panicking when the backend fails (no cuBLAS,
/// out of memory, a failed launch). Still panics for bad shapes and properties, which are
/// programmer errors.
///
/// ```
/// use emberfire::{dim4, try_matmul, Array, MatProp};
/// let a = Array::new(&[2.0f32], dim4!(1, 1));
/// let c = try_matmul(&a, &a, MatProp::NONE, MatProp::NONE).expect("a working backend");
/// assert_eq!(c.to_vec(), vec![4.0]);
/// ```
pub fn try_matmul<T>(
    lhs: &Array<T>,
    rhs: &Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
) -> Result<Array<T>>
where
    T: GemmType,
{
    matmul_in("try_matmul", lhs, rhs, optlhs, optrhs)
}

fn matmul_in<T: GemmType>(
    func: &str,
    lhs: &Array<T>,
    rhs: &Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
) -> Result<Array<T>> {
    if lhs.is_sparse() {
        return crate::ops::sparse::matmul::product(func, lhs, rhs, optlhs, optrhs);
    }
    assert!(
        !rhs.is_sparse(),
        "{func}: a sparse `rhs` is not supported; only the left operand may be sparse"
    );
    let product = Product::new(func, lhs, rhs, optlhs, optrhs);
    if product.dims.elements() == 0 {
        return product.empty();
    }
    if product.k == 0 {
        return Ok(filled(T::default(), product.dims, product.backend));
    }
    // No check that BLAS can run before the product, as `gemm` makes: nothing is overwritten
    // if it cannot (the error comes from the product), and the products a GPU computes without
    // cuBLAS (two small sizes) then never load it, which takes a first run about 90 ms.
    product.run(one(), T::default(), None)
}

/// The only value of a scalar argument of `gemm`; panics unless there is exactly one.
fn single<T: Copy>(func: &str, arg: &str, values: &[T]) -> T {
    match values {
        [v] => *v,
        _ => panic!(
            "{func}: `{arg}` holds {} values; it must hold exactly one (the same {arg} is used \
             for every batch)",
            values.len()
        ),
    }
}

/// General matrix multiply: `output = alpha · op(lhs) · op(rhs) + beta · output`, batched over
/// dimensions 2 and 3 with one `alpha` and one `beta` for every batch (BLAS's GEMM, with
/// arrayfire-rust's signature).
///
/// `output` must have the product's shape, or no elements at all, in which case it is replaced
/// by the product scaled by `alpha` (beta then does not matter). When `beta` is zero the old
/// values are not read, so NaN in `output` does not propagate (as in BLAS). `alpha` and `beta`
/// hold exactly one value each. Panics as [`matmul`] does, and if `output` has another shape.
///
/// `output` is updated as a value: arrays that share its data (clones of it, expressions
/// built on it) keep the old values. When nothing else shares it, its memory is reused.
///
/// ```
/// use emberfire::{dim4, gemm, Array, MatProp};
/// let a = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let i = Array::new(&[1.0f64, 0.0, 0.0, 1.0], dim4!(2, 2));
/// let mut c = Array::new(&[10.0f64, 20.0, 30.0, 40.0], dim4!(2, 2));
/// let before = c.clone();
/// gemm(&mut c, MatProp::NONE, MatProp::NONE, vec![2.0], &a, &i, vec![1.0]);
/// assert_eq!(c.to_vec(), vec![12.0, 24.0, 36.0, 48.0]);
/// assert_eq!(before.to_vec(), vec![10.0, 20.0, 30.0, 40.0]); // the clone is unchanged
/// ```
pub fn gemm<T>(
    output: &mut Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
    alpha: Vec<T>,
    lhs: &Array<T>,
    rhs: &Array<T>,
    beta: Vec<T>,
) where
    T: GemmType,
{
    gemm_in("gemm", output, (optlhs, optrhs), (alpha, beta), lhs, rhs).or_raise("gemm")
}

/// Like [`gemm()`], returning an error instead of panicking when the backend fails (no cuBLAS,
/// out of memory, a failed launch); `output` is unchanged when the backend cannot run
/// products at all. Still panics for bad shapes, properties and scalars.
///
/// ```
/// use emberfire::{dim4, try_gemm, Array, MatProp};
/// let a = Array::new(&[3.0f64], dim4!(1, 1));
/// let mut c = Array::new(&[1.0f64], dim4!(1, 1));
/// try_gemm(&mut c, MatProp::NONE, MatProp::NONE, vec![1.0], &a, &a, vec![1.0]).unwrap();
/// assert_eq!(c.to_vec(), vec![10.0]);
/// ```
pub fn try_gemm<T>(
    output: &mut Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
    alpha: Vec<T>,
    lhs: &Array<T>,
    rhs: &Array<T>,
    beta: Vec<T>,
) -> Result<()>
where
    T: GemmType,
{
    gemm_in("try_gemm", output, (optlhs, optrhs), (alpha, beta), lhs, rhs)
}

fn gemm_in<T: GemmType>(
    func: &str,
    output: &mut Array<T>,
    (optlhs, optrhs): (MatProp, MatProp),
    (alpha, beta): (Vec<T>, Vec<T>),
    lhs: &Array<T>,
    rhs: &Array<T>,
) -> Result<()> {
    let (alpha, beta) = (single(func, "alpha", &alpha), single(func, "beta", &beta));
    common_backend(func, &[output.node(), lhs.node(), rhs.node()]);
    let product = Product::new(func, lhs, rhs, optlhs, optrhs);
    let fresh = output.elements() == 0;
    assert!(
        fresh || output.dims() == product.dims,
        "{func}: `output` has dims {} but op(lhs)·op(rhs) has dims {} (lhs dims {}, optlhs \
         {:?}; rhs dims {}, optrhs {:?})",
        output.dims(),
        product.dims,
        lhs.dims(),
        optlhs,
        rhs.dims(),
        optrhs
    );
    let keep = !fresh && beta != T::default();
    *output = if product.dims.elements() == 0 {
        product.empty()?
    } else if product.k == 0 {
        // no terms: beta * C, or zeros when C is not read
        if keep {
            let beta = filled(beta, Dim4::new(&[1, 1, 1, 1]), product.backend);
            let expr = Expr::Binary(BinOp::Mul, output.node().clone(), beta.node().clone());
            Array::lazy(product.dims, product.backend, expr)
        } else {
            filled(T::default(), product.dims, product.backend)
        }
    } else {
        // Fail before touching `output` where products cannot run at all.
        product.backend.ops().blas_available()?;
        let c = if fresh { None } else { take_buffer(output, keep)? };
        product.run(alpha, beta, c)?
    };
    Ok(())
}

/// A buffer holding `output`'s values densely (when `keep_values`) that nothing else uses:
/// `output`'s own buffer when `output` is its only user, else a copy; or, when the values are
/// not needed and the buffer is shared, `None` (the product then gets a new buffer). `output`
/// is left holding zeros, to be replaced by the caller.
fn take_buffer<T: GemmType>(output: &mut Array<T>, keep_values: bool) -> Result<Option<Buffer>> {
    let dims = output.dims();
    let backend = output.node().backend;
    let data = ready(output)?;
    let whole = data.offset == 0 && data.is_contiguous(dims);
    // A buffer the user locked (`device_ptr`) is theirs: never written behind their back.
    let sole_user = Arc::strong_count(output.node()) == 1 && !output.is_locked();
    // Dropping `output`'s node leaves `data` the last holder of the buffer, unless a view, a
    // program or another array's node also holds it.
    drop(std::mem::replace(output, filled(T::default(), dims, backend)));
    let data = if whole && sole_user {
        match data.into_buffer() {
            Ok(buf) => return Ok(Some(buf)),
            Err(data) => data,
        }
    } else {
        data
    };
    if !keep_values {
        return Ok(None);
    }
    let program = Program::copy_of(data, T::DTYPE, dims);
    Ok(backend.ops().run(&program)?.into_iter().next())
}

/// `(conjugate)` for a `dot` operand; panics for other properties.
fn dot_op(func: &str, arg: &str, prop: MatProp) -> bool {
    match prop {
        MatProp::NONE => false,
        MatProp::CONJ => true,
        other => panic!("{func}: `{arg}` is MatProp::{other:?}; dot takes NONE or CONJ"),
    }
}

/// Length and the stride between elements of a vector (at most one dimension larger than 1).
fn vector_layout(dims: Dim4, strides: [i64; 4]) -> Option<(usize, i64)> {
    let long: Vec<usize> = (0..4).filter(|&d| dims[d] > 1).collect();
    match long[..] {
        [] => Some((dims.elements() as usize, 1)),
        [d] => Some((dims[d] as usize, strides[d])),
        _ => None,
    }
}

/// The dot product `sum(op(lhs) * op(rhs))` of two vectors of the same length, as a
/// one-element array. `op` is `NONE` or `CONJ` (conjugate), so `dot(x, y, CONJ, NONE)` is the
/// inner product xᴴy of complex vectors.
///
/// The vectors may lie along any dimension (a column, a row, ...). Panics if either is not a
/// vector, if the lengths differ, or for another [`MatProp`].
///
/// ```
/// use emberfire::{c64, dim4, dot, Array, MatProp};
/// let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
/// let y = Array::new(&[4.0f32, 5.0, 6.0], dim4!(1, 3)); // a row: any orientation works
/// assert_eq!(dot(&x, &y, MatProp::NONE, MatProp::NONE).to_vec(), vec![32.0]);
///
/// let z = Array::new(&[c64::new(1.0, 1.0), c64::new(0.0, 2.0)], dim4!(2));
/// // zᴴz = |z|² = 2 + 4
/// assert_eq!(dot(&z, &z, MatProp::CONJ, MatProp::NONE).to_vec(), vec![c64::new(6.0, 0.0)]);
/// ```
pub fn dot<T>(lhs: &Array<T>, rhs: &Array<T>, optlhs: MatProp, optrhs: MatProp) -> Array<T>
where
    T: GemmType,
{
    dot_in("dot", lhs, rhs, optlhs, optrhs).or_raise("dot")
}

/// Like [`dot`], returning an error instead of panicking when the backend fails. Still panics
/// for arguments that are not vectors of the same length, and for other properties.
///
/// ```
/// use emberfire::{dim4, try_dot, Array, MatProp};
/// let x = Array::new(&[1.0f64, 2.0], dim4!(2));
/// assert_eq!(try_dot(&x, &x, MatProp::NONE, MatProp::NONE).unwrap().to_vec(), vec![5.0]);
/// ```
pub fn try_dot<T>(
    lhs: &Array<T>,
    rhs: &Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
) -> Result<Array<T>>
where
    T: GemmType,
{
    dot_in("try_dot", lhs, rhs, optlhs, optrhs)
}

fn dot_in<T: GemmType>(
    func: &str,
    lhs: &Array<T>,
    rhs: &Array<T>,
    optlhs: MatProp,
    optrhs: MatProp,
) -> Result<Array<T>> {
    let backend = common_backend(func, &[lhs.node(), rhs.node()]);
    let (ca, cb) = (dot_op(func, "optlhs", optlhs), dot_op(func, "optrhs", optrhs));
    let lengths = [lhs.dims(), rhs.dims()].map(|d| vector_layout(d, [0; 4]).map(|(n, _)| n));
    let n = match lengths {
        [Some(x), Some(y)] if x == y => x,
        _ => panic!(
            "{func}: `lhs` (dims {}) and `rhs` (dims {}) must be vectors of the same length",
            lhs.dims(),
            rhs.dims()
        ),
    };
    let one_dims = Dim4::new(&[1, 1, 1, 1]);
    if n == 0 {
        return Ok(filled(T::default(), one_dims, backend));
    }
    // The products summed by the reduction they fuse into: one pass over both vectors, and no
    // vendor library (whose first use in a process costs far more than the pass).
    let column = |x: &Array<T>, conj: bool| -> Arc<Node> {
        let col = crate::ops::movement::moddims(x, Dim4::new(&[n as u64, 1, 1, 1]));
        if conj && T::DTYPE.is_complex() {
            let n = col.node();
            Node::lazy(T::DTYPE, n.dims, n.backend, Expr::Unary(UnOp::Conjg, n.clone()))
        } else {
            col.node().clone()
        }
    };
    // f16 and bf16 multiply and sum in f32 (the products of two 16-bit floats are exact in
    // f32, where rounding each to its own type would add up to half an ulp per term), and the
    // result is rounded once
    let acc = if T::DTYPE.is_16bit_float() { DType::F32 } else { T::DTYPE };
    let (a, b) = (column(lhs, ca), column(rhs, cb));
    let (a, b) = (crate::ops::build::cast_node(&a, acc), crate::ops::build::cast_node(&b, acc));
    let product = Node::lazy(acc, a.dims, backend, Expr::Binary(BinOp::Mul, a, b));
    let buf = backend.ops().reduce_dim(&product, Reduction::Sum, 0, acc)?;
    let total = Node::ready(acc, one_dims, backend, Data::dense(buf, one_dims));
    Ok(Array::from_node(crate::ops::build::cast_node(&total, T::DTYPE)))
}

/// Sets how cuBLAS computes f32 and c32 products on every device, from the next product on:
/// `DEFAULT` (full f32 precision, the default) or `TENSOR_OP` (TF32 tensor cores allowed). The
/// CPU backend is not affected. (arrayfire-rust sets the mode of the active device's handle;
/// emberfire's setting is one for the process.)
///
/// ```
/// use emberfire::{get_cublas_mode, set_cublas_mode, CublasMathMode};
/// set_cublas_mode(CublasMathMode::TENSOR_OP);
/// assert_eq!(get_cublas_mode(), CublasMathMode::TENSOR_OP);
/// set_cublas_mode(CublasMathMode::DEFAULT);
/// ```
pub fn set_cublas_mode(mode: CublasMathMode) {
    crate::backend::blas::set_tf32(mode == CublasMathMode::TENSOR_OP);
}

/// The mode [`set_cublas_mode`] set last (`DEFAULT` until it is called).
///
/// ```
/// use emberfire::{get_cublas_mode, CublasMathMode};
/// assert_eq!(get_cublas_mode(), CublasMathMode::DEFAULT);
/// ```
pub fn get_cublas_mode() -> CublasMathMode {
    if crate::backend::blas::tf32() {
        CublasMathMode::TENSOR_OP
    } else {
        CublasMathMode::DEFAULT
    }
}

#[cfg(test)]
#[path = "blas_tests.rs"]
mod tests;
