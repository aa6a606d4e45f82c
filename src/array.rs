//! `Array<T>`: a handle to lazily evaluated data of one element type on one backend.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::backend::{download, BackendKind};
use crate::device::{active_kind, Backend};
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::error::Result;
use crate::error_handler::OrRaise;
use crate::jit::{Data, Expr, Node};
use crate::storage::{alloc_uninit, try_copied, with_vec, HostVec};

/// An array of up to four dimensions, stored column-major, evaluated lazily.
///
/// `Clone` is shallow (both handles share the data or the expression); [`Array::copy`] makes
/// an independent copy. Arrays are `Send + Sync`.
///
/// ```
/// use emberfire::{Array, dim4};
/// let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// let b = &a * 2.0f32 + 1.0f32; // nothing is computed yet
/// assert_eq!(b.to_vec(), vec![3.0, 5.0, 7.0, 9.0]);
/// ```
pub struct Array<T: HasAfEnum> {
    node: Arc<Node>,
    _t: PhantomData<T>,
}

impl<T: HasAfEnum> Clone for Array<T> {
    fn clone(&self) -> Self {
        Array::from_node(self.node.clone())
    }
}

/// Checks `dims` fits the address space and returns the element count.
fn checked_len(func: &str, dims: Dim4) -> usize {
    let d = dims.get();
    d.iter()
        .try_fold(1u64, |acc, &x| acc.checked_mul(x))
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or_else(|| panic!("{func}: dims {dims} have more elements than fit in memory"))
}

impl<T: HasAfEnum> Array<T> {
    pub(crate) fn from_node(node: Arc<Node>) -> Self {
        debug_assert_eq!(node.dtype, T::DTYPE);
        Array { node, _t: PhantomData }
    }

    pub(crate) fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// The node handle itself: assignment writes in place when this handle is the node's only
    /// owner, and otherwise replaces it with a node of its own (copy-on-write).
    pub(crate) fn node_mut(&mut self) -> &mut Arc<Node> {
        &mut self.node
    }

    /// An array on the active backend holding the given host elements.
    pub(crate) fn from_host(h: HostVec, dims: Dim4) -> Self {
        Self::try_from_host(h, dims).or_raise("creating an array")
    }

    /// Like `from_host`, returning the backend's failure.
    pub(crate) fn try_from_host(h: HostVec, dims: Dim4) -> Result<Self> {
        let kind = active_kind();
        // host bools are checked on their way in, so that an export need not normalise them
        let clean = matches!(&h, HostVec::B8(v) if v.iter().all(|b| b.0 <= 1));
        let data = Data::dense(kind.ops().upload(h)?, dims);
        let node = Node::ready(T::DTYPE, dims, kind, data);
        if clean {
            node.mark_clean_bools();
        }
        Ok(Array::from_node(node))
    }

    /// A lazy array computing `expr`, on the backend of `like` (or the active one).
    pub(crate) fn lazy(dims: Dim4, backend: BackendKind, expr: Expr) -> Self {
        Array::from_node(Node::lazy(T::DTYPE, dims, backend, expr))
    }

    /// Copies `values` (column-major) into a new array of shape `dims`.
    ///
    /// Panics if `values.len()` differs from `dims.elements()`.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1, 2, 3, 4, 5, 6], dim4!(2, 3));
    /// assert_eq!(a.dims(), dim4!(2, 3));
    /// ```
    pub fn new(values: &[T], dims: Dim4) -> Self {
        let n = checked_len("Array::new", dims);
        assert!(
            values.len() == n,
            "Array::new: `values` has {} elements but dims {dims} need {n}",
            values.len()
        );
        try_copied(values)
            .and_then(|v| Array::try_from_host(T::wrap(v), dims))
            .or_raise("Array::new")
    }

    /// Copies a strided host layout into a new array: element `(i, j, k, l)` is read from
    /// `values[offset + i*strides[0] + j*strides[1] + k*strides[2] + l*strides[3]]`.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// // every other element of a 6-element slice
    /// let a = Array::new_strided(&[1, 0, 2, 0, 3, 0], 0, dim4!(3), dim4!(2, 6, 6, 6));
    /// assert_eq!(a.to_vec(), vec![1, 2, 3]);
    /// ```
    pub fn new_strided(values: &[T], offset: i64, dims: Dim4, strides: Dim4) -> Self {
        let n = checked_len("Array::new_strided", dims);
        // zero strides repeat values: `n` can be far more than `values` holds
        let mut out = alloc_uninit(n).or_raise("Array::new_strided");
        for l in 0..dims[3] {
            for k in 0..dims[2] {
                for j in 0..dims[1] {
                    for i in 0..dims[0] {
                        let idx = offset as u64
                            + i * strides[0]
                            + j * strides[1]
                            + k * strides[2]
                            + l * strides[3];
                        let v = values.get(idx as usize).unwrap_or_else(|| {
                            panic!(
                                "Array::new_strided: element ({i},{j},{k},{l}) is at index \
                                 {idx}, past the {} values given (dims {dims}, strides \
                                 {strides}, offset {offset})",
                                values.len()
                            )
                        });
                        out.push(*v);
                    }
                }
            }
        }
        Array::from_host(T::wrap(out), dims)
    }

    /// A new array of shape `dims` with every element zero. (ArrayFire leaves it
    /// uninitialised; emberfire never exposes uninitialised memory.)
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::<f64>::new_empty(dim4!(2, 2));
    /// assert_eq!(a.to_vec(), vec![0.0; 4]);
    /// ```
    pub fn new_empty(dims: Dim4) -> Self {
        // a count past usize::MAX fails as out of memory, as evaluating such a shape does
        let n = usize::try_from(dims.elements()).unwrap_or(usize::MAX);
        HostVec::try_zeros(T::DTYPE, n)
            .and_then(|h| Array::try_from_host(h, dims))
            .or_raise("Array::new_empty")
    }

    /// The backend the array lives on.
    ///
    /// ```
    /// use emberfire::{Array, dim4, get_active_backend};
    /// assert_eq!(Array::new(&[1u8], dim4!(1)).get_backend(), get_active_backend());
    /// ```
    pub fn get_backend(&self) -> Backend {
        match self.node.backend {
            BackendKind::Cpu => Backend::CPU,
            BackendKind::Cuda(_) => Backend::CUDA,
        }
    }

    /// The device the array lives on.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::new(&[1u8], dim4!(1)).get_device_id(), emberfire::get_device());
    /// ```
    pub fn get_device_id(&self) -> i32 {
        match self.node.backend {
            BackendKind::Cpu => 0,
            BackendKind::Cuda(d) => d as i32,
        }
    }

    /// Number of elements.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::<f32>::new_empty(dim4!(3, 4)).elements(), 12);
    /// ```
    pub fn elements(&self) -> usize {
        self.node.dims.elements() as usize
    }

    /// The element type.
    ///
    /// ```
    /// use emberfire::{Array, DType, dim4};
    /// assert_eq!(Array::new(&[1i16], dim4!(1)).get_type(), DType::S16);
    /// ```
    pub fn get_type(&self) -> DType {
        self.node.dtype
    }

    /// The shape.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::<u8>::new_empty(dim4!(3, 1, 2)).dims(), dim4!(3, 1, 2));
    /// ```
    pub fn dims(&self) -> Dim4 {
        self.node.dims
    }

    /// The strides of the array's memory, in elements (column-major for evaluated arrays; a
    /// view's own, see [`index`](crate::index)). A `Dim4` holds no negative values, so a view
    /// made with a negative step first takes a contiguous copy of its elements and reports
    /// that copy's strides.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::<u8>::new_empty(dim4!(3, 2)).strides(), dim4!(1, 3, 6, 6));
    /// ```
    pub fn strides(&self) -> Dim4 {
        let d = self.layout();
        Dim4::new(&std::array::from_fn(|k| d.strides[k] as u64))
    }

    /// The evaluated data as `strides` and `offset` describe it: a flipped view cannot report
    /// its negative stride in a `Dim4`, so the array first takes a contiguous copy of its
    /// elements, as `device_ptr` does for views.
    fn layout(&self) -> Data {
        let d = self.node.eval();
        if d.strides.iter().all(|&s| s >= 0) {
            return d;
        }
        let d = self.copy().node().eval();
        self.node.set_ready(d.clone());
        d
    }

    /// The offset of the first element in the array's memory, in elements.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::<u8>::new_empty(dim4!(3)).offset(), 0);
    /// ```
    pub fn offset(&self) -> i64 {
        self.layout().offset as i64
    }

    /// Number of dimensions (ignoring trailing dimensions of size 1).
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::<u8>::new_empty(dim4!(3, 2)).numdims(), 2);
    /// ```
    pub fn numdims(&self) -> u32 {
        self.node.dims.ndims() as u32
    }

    /// True when the array has no elements.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::<u8>::new_empty(dim4!(0, 3)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.elements() == 0
    }

    /// True for a single element.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f32], dim4!(1)).is_scalar());
    /// ```
    pub fn is_scalar(&self) -> bool {
        self.elements() == 1
    }

    /// True for a 1×n array with n > 1 (as in ArrayFire, a single element is not a row).
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::<u8>::new_empty(dim4!(1, 5)).is_row());
    /// assert!(!Array::<u8>::new_empty(dim4!(1)).is_row());
    /// ```
    pub fn is_row(&self) -> bool {
        let d = self.dims();
        d[0] == 1 && d[1] > 1 && d[2] == 1 && d[3] == 1
    }

    /// True for an n×1 array with n > 1 (as in ArrayFire, a single element is not a column).
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::<u8>::new_empty(dim4!(5)).is_column());
    /// assert!(!Array::<u8>::new_empty(dim4!(1)).is_column());
    /// ```
    pub fn is_column(&self) -> bool {
        let d = self.dims();
        d[0] > 1 && d[1] == 1 && d[2] == 1 && d[3] == 1
    }

    /// True when exactly one dimension is larger than 1 and the others are 1 (as in ArrayFire:
    /// a single element or an empty array is not a vector).
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::<u8>::new_empty(dim4!(1, 1, 7)).is_vector());
    /// assert!(!Array::<u8>::new_empty(dim4!(1)).is_vector());
    /// ```
    pub fn is_vector(&self) -> bool {
        let d = self.dims();
        d.get().iter().filter(|&&x| x > 1).count() == 1
            && d.get().iter().filter(|&&x| x == 1).count() == 3
    }

    /// True for c32 and c64.
    ///
    /// ```
    /// use emberfire::{Array, c32, dim4};
    /// assert!(Array::new(&[c32::new(1.0, 2.0)], dim4!(1)).is_complex());
    /// ```
    pub fn is_complex(&self) -> bool {
        self.get_type().is_complex()
    }

    /// True for types other than c32 and c64.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1u8], dim4!(1)).is_real());
    /// ```
    pub fn is_real(&self) -> bool {
        !self.is_complex()
    }

    /// True for f64 and c64.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f64], dim4!(1)).is_double());
    /// ```
    pub fn is_double(&self) -> bool {
        matches!(self.get_type(), DType::F64 | DType::C64)
    }

    /// True for f32 and c32.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f32], dim4!(1)).is_single());
    /// ```
    pub fn is_single(&self) -> bool {
        matches!(self.get_type(), DType::F32 | DType::C32)
    }

    /// True for f16 (as in arrayfire-rust; bf16 is not ArrayFire's half type).
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[half::f16::ONE], dim4!(1)).is_half());
    /// ```
    pub fn is_half(&self) -> bool {
        self.get_type() == DType::F16
    }

    /// True for f16, bf16, f32 and f64.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f64], dim4!(1)).is_realfloating());
    /// assert!(Array::new(&[half::bf16::ONE], dim4!(1)).is_realfloating());
    /// ```
    pub fn is_realfloating(&self) -> bool {
        self.get_type().is_real_float()
    }

    /// True for real and complex floating point types.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(!Array::new(&[1i32], dim4!(1)).is_floating());
    /// ```
    pub fn is_floating(&self) -> bool {
        self.get_type().is_floating()
    }

    /// True for integer types (bool excluded).
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1u64], dim4!(1)).is_integer());
    /// ```
    pub fn is_integer(&self) -> bool {
        self.get_type().is_integer()
    }

    /// True for bool.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[true], dim4!(1)).is_bool());
    /// ```
    pub fn is_bool(&self) -> bool {
        self.get_type() == DType::B8
    }

    /// True when the array is evaluated and its elements are contiguous in memory.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f32, 2.0], dim4!(2)).is_linear());
    /// ```
    pub fn is_linear(&self) -> bool {
        self.node.data().is_some_and(|d| d.is_contiguous(self.dims()))
    }

    /// True when the array owns its memory rather than viewing another array's.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f32, 2.0], dim4!(2)).is_owner());
    /// ```
    pub fn is_owner(&self) -> bool {
        self.node.data().is_none_or(|d| d.offset == 0 && d.is_contiguous(self.dims()))
    }

    /// Computes the array now if it is lazy.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1.0f32], dim4!(1)) + 1.0f32;
    /// a.eval();
    /// assert!(a.is_linear());
    /// ```
    pub fn eval(&self) {
        if !self.is_sparse() {
            self.node.eval();
        }
    }

    /// Like [`Array::eval`], returning an error instead of panicking when the backend fails.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert!(Array::new(&[1.0f32], dim4!(1)).try_eval().is_ok());
    /// ```
    pub fn try_eval(&self) -> Result<()> {
        if self.is_sparse() {
            return Ok(()); // always ready
        }
        self.node.try_eval().map(|_| ())
    }

    /// An independent deep copy.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1, 2], dim4!(2));
    /// let b = a.copy();
    /// assert_eq!(b.to_vec(), a.to_vec());
    /// ```
    pub fn copy(&self) -> Self {
        if let Some(p) = self.node.sparse() {
            // a deep copy of each part, in a matrix of its own (parts are never changed once
            // made, so this is for an independent memo and buffers, as for a dense array)
            let part = |n: &Arc<Node>, t: DType| {
                let data = n.eval();
                let buf = n.backend.ops().run(&crate::jit::Program::copy_of(data, t, n.dims));
                let buf = buf.or_raise("Array::copy").pop().expect("one output");
                Node::ready(t, n.dims, n.backend, Data::dense(buf, n.dims))
            };
            let parts = crate::jit::sparse::SparseParts {
                format: p.format,
                values: part(&p.values, T::DTYPE),
                rows: part(&p.rows, DType::S32),
                cols: part(&p.cols, DType::S32),
                memo: Default::default(),
            };
            return Array::from_node(Node::sparse_matrix(
                T::DTYPE,
                self.dims(),
                self.node.backend,
                parts,
            ));
        }
        let dims = self.dims();
        let program = crate::jit::Program::copy_of(self.node.eval(), T::DTYPE, dims);
        let buf = self
            .node
            .backend
            .ops()
            .run(&program)
            .or_raise("Array::copy")
            .pop()
            .expect("one output");
        let data = Data::dense(buf, dims);
        let node = Node::ready(T::DTYPE, dims, self.node.backend, data);
        if self.node.has_clean_bools() {
            node.mark_clean_bools();
        }
        Array::from_node(node)
    }

    /// The elements as a contiguous host vector of any type.
    pub(crate) fn host_vec(&self) -> HostVec {
        self.try_host_vec().or_raise("reading an array")
    }

    /// Like `host_vec`, returning the backend's failure.
    pub(crate) fn try_host_vec(&self) -> Result<HostVec> {
        let d = self.node.try_eval()?;
        download(&d, self.dims(), self.get_type())
    }

    /// Copies the elements, column-major, into `data`.
    ///
    /// Panics if `data.len()` differs from [`Array::elements`]. (arrayfire-rust's `host` takes a
    /// slice of any type and copies raw bytes; emberfire's is typed, so it cannot corrupt.)
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1.5f64, 2.5], dim4!(2));
    /// let mut v = vec![0.0; 2];
    /// a.host(&mut v);
    /// assert_eq!(v, vec![1.5, 2.5]);
    /// ```
    pub fn host(&self, data: &mut [T]) {
        self.try_host(data).or_raise("Array::host")
    }

    /// Like [`Array::host`], returning an error when the backend fails. Still panics on a
    /// slice of the wrong length, which is a programmer error.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let mut v = [0u8; 1];
    /// Array::new(&[7u8], dim4!(1)).try_host(&mut v).unwrap();
    /// assert_eq!(v, [7]);
    /// ```
    pub fn try_host(&self, data: &mut [T]) -> Result<()> {
        assert!(
            data.len() == self.elements(),
            "Array::host: `data` has {} elements but the array {} has {}",
            data.len(),
            self.dims(),
            self.elements()
        );
        let h = self.try_host_vec()?;
        data.copy_from_slice(&h.view::<T>());
        Ok(())
    }

    /// The elements, column-major, in a new vector.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// assert_eq!(Array::new(&[3u16, 4], dim4!(2)).to_vec(), vec![3, 4]);
    /// ```
    pub fn to_vec(&self) -> Vec<T> {
        self.host_vec().into_vec::<T>()
    }

    /// Converts to another element type, lazily.
    ///
    /// Floats to integers truncate toward zero and saturate (NaN gives 0); integers wrap;
    /// complex to real keeps the real part; anything to bool is "not zero"; bool gives 0 or 1.
    ///
    /// ```
    /// use emberfire::{Array, dim4};
    /// let a = Array::new(&[1.7f32, -2.5, 300.0], dim4!(3));
    /// assert_eq!(a.cast::<u8>().to_vec(), vec![1, 0, 255]);
    /// ```
    pub fn cast<O: HasAfEnum>(&self) -> Array<O> {
        if O::DTYPE == T::DTYPE {
            return Array::from_node(self.node.clone());
        }
        Array::lazy(self.dims(), self.node.backend, Expr::Cast(self.node.clone()))
    }
}

impl<T: HasAfEnum + crate::print_format::PrintElem> fmt::Display for Array<T> {
    /// ArrayFire's printed layout, without a name line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let precision = f.precision().map(|p| p as i32);
        if self.is_sparse() {
            return f.write_str(&format_gen("", self, precision));
        }
        let d = self.dims();
        let s = crate::print_format::format_array(
            "",
            *d.get(),
            &self.to_vec(),
            f.precision().unwrap_or(crate::print_format::DEFAULT_PRECISION),
        );
        f.write_str(&s)
    }
}

impl<T: HasAfEnum + crate::print_format::PrintElem> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_sparse() {
            return f.write_str(&format_gen("", self, None));
        }
        f.write_str(&crate::print_format::format_debug(*self.dims().get(), &self.to_vec()))
    }
}

/// Prints an array in ArrayFire's layout, with no name line.
///
/// ```
/// use emberfire::{Array, dim4, print};
/// print(&Array::new(&[1.0f32, 2.0], dim4!(2)));
/// ```
pub fn print<T: HasAfEnum>(input: &Array<T>) {
    print_gen(String::new(), input, None)
}

/// Prints an array in ArrayFire's layout with a name line and `precision` digits after the
/// point for floating point types (4 by default).
///
/// ```
/// use emberfire::{Array, dim4, print_gen};
/// print_gen("x".to_string(), &Array::new(&[1.0f32, 2.0], dim4!(2)), Some(2));
/// ```
pub fn print_gen<T: HasAfEnum>(msg: String, input: &Array<T>, precision: Option<i32>) {
    print!("{}", format_gen(&msg, input, precision));
}

/// The text [`print_gen`] prints.
pub(crate) fn format_gen<T: HasAfEnum>(
    msg: &str,
    input: &Array<T>,
    precision: Option<i32>,
) -> String {
    let p = precision.map_or(crate::print_format::DEFAULT_PRECISION, |p| p.max(0) as usize);
    if let Some(parts) = input.node().sparse() {
        return crate::print_sparse::format_sparse(msg, *input.dims().get(), &parts, p);
    }
    let h = input.host_vec();
    with_vec!(&h, v, E => crate::print_format::format_array(msg, *input.dims().get(), v, p))
}

// Compile-time proof that arrays can cross threads.
const _: fn() = || {
    fn check<X: Send + Sync>() {}
    check::<Array<f32>>();
};

/// Evaluates several arrays together: trees of the same shape on the same backend are computed
/// in one pass (one kernel on CUDA), with sub-expressions they share computed once. Trees too
/// many or too large for one kernel's parameters are computed in as few passes as they fit.
///
/// ```
/// use emberfire::{Array, dim4, eval_multiple};
/// let x = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
/// let t = &x * 2.0f32;
/// let (a, b) = (&t + 1.0f32, &t - 1.0f32);
/// eval_multiple(vec![&a, &b]);
/// assert_eq!(a.to_vec(), vec![3.0, 5.0, 7.0]);
/// assert_eq!(b.to_vec(), vec![1.0, 3.0, 5.0]);
/// ```
pub fn eval_multiple<T: HasAfEnum>(arrays: Vec<&Array<T>>) {
    let nodes: Vec<Arc<Node>> = arrays.iter().map(|a| a.node().clone()).collect();
    crate::backend::schedule::eval_nodes(&nodes).or_raise("eval_multiple");
}
