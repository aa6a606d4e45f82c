//! The Python `Array`: an emberfire array and the number of dimensions Python sees (emberfire
//! arrays have four; a NumPy array of shape `(3, 1)` keeps its second dimension here).
//!
//! Shapes and axes: `shape[k]` is emberfire's dimension `k` and `axis=k` reduces it, so an
//! array's shape is the shape NumPy sees once it is exported (a Fortran-order array, as
//! emberfire is column-major), and `a.to_numpy().sum(axis=k)` is `a.sum(axis=k)`.
//!
//! Operators build the same lazy expressions as in Rust, so `a * b + 1.0` is one fused kernel
//! when its value is needed. Operands of different types are promoted (see `any::promote`);
//! Python numbers take the array's type (a float with an integer array gives float64).
//! Shapes broadcast where a dimension is 1, as emberfire's `batch` does. Arrays are values:
//! `a += b` makes `a` name a new array (as for Python numbers), and no other array or view
//! changes; indexing makes views that share memory but are never written through.

use std::sync::Mutex;

use emberfire::{dim4, Array, Backend, DType, Dim4, MatProp, Seq};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyComplex, PyDict, PyEllipsis, PyFloat, PyInt, PySlice, PyTuple};

use crate::any::{dtype_name, each, each_pair, promote, with_type, AnyArray};
use crate::exchange;

/// An emberfire array.
#[pyclass(name = "Array", module = "emberfire", frozen)]
pub struct PyArray {
    pub inner: AnyArray,
    pub ndim: usize,
    /// The export the array interfaces point at, made on first use.
    pinned: Mutex<Option<exchange::Pinned>>,
}

impl PyArray {
    pub fn new(inner: AnyArray, ndim: usize) -> PyArray {
        PyArray { inner, ndim: ndim.min(4), pinned: Mutex::new(None) }
    }

    fn shape_vec(&self) -> Vec<u64> {
        let d = self.inner.dims();
        (0..self.ndim).map(|k| d[k]).collect()
    }

    fn backend(&self) -> Backend {
        each!(&self.inner, x, T => x.get_backend())
    }
}

/// `"cpu"` or `"cuda:N"`: where an array lives.
pub fn device_of(a: &AnyArray) -> String {
    each!(a, x, T => match x.get_backend() {
        Backend::CUDA => format!("cuda:{}", x.get_device_id()),
        _ => "cpu".to_string(),
    })
}

/// The error for operands on two devices, saying how to move one.
pub fn check_same_device(func: &str, a: &AnyArray, b: &AnyArray) -> PyResult<()> {
    let (da, db) = (device_of(a), device_of(b));
    if da != db {
        return Err(PyValueError::new_err(format!(
            "{func}: the operands live on {da} and {db}; emberfire does not copy between them \
             silently: move one with `.to_device({da:?})` or `.to_device({db:?})` first"
        )));
    }
    Ok(())
}

/// The other operand of a binary operator: an array, or a Python number.
enum Operand {
    Array(AnyArray, usize),
    Real(f64, bool),
    Complex(f64, f64),
}

fn operand(x: &Bound<'_, PyAny>) -> PyResult<Operand> {
    if let Ok(a) = x.downcast::<PyArray>() {
        let a = a.get();
        return Ok(Operand::Array(a.inner.clone(), a.ndim));
    }
    if x.is_instance_of::<PyComplex>() {
        let c = x.downcast::<PyComplex>()?;
        return Ok(Operand::Complex(c.real(), c.imag()));
    }
    if x.is_instance_of::<PyFloat>() {
        return Ok(Operand::Real(x.extract()?, true));
    }
    if x.is_instance_of::<PyInt>() {
        return Ok(Operand::Real(x.extract::<f64>()?, false));
    }
    Err(PyTypeError::new_err(format!(
        "emberfire arrays combine with arrays and numbers, not {}",
        x.get_type().name()?
    )))
}

/// A number as a one-element array of type `d` (broadcast by the operation).
fn scalar(re: f64, im: f64, d: DType) -> AnyArray {
    if d.is_complex() {
        let c = emberfire::constant(emberfire::c64::new(re, im), dim4!(1));
        return AnyArray::from(c).cast(d);
    }
    AnyArray::from(emberfire::constant(re, dim4!(1))).cast(d)
}

/// Both operands as arrays of one type, and the result's number of dimensions.
fn operands(
    a: &PyArray,
    b: Operand,
    swap: bool,
    true_div: bool,
) -> PyResult<(AnyArray, AnyArray, usize)> {
    let ad = a.inner.dtype();
    let (b, bnd) = match b {
        Operand::Array(x, n) => {
            check_same_device("operator", &a.inner, &x)?;
            (x, n)
        }
        Operand::Real(v, is_float) => {
            let d = if is_float && !ad.is_floating() { DType::F64 } else { ad };
            (scalar(v, 0.0, d), 0)
        }
        Operand::Complex(re, im) => {
            let d = if ad.is_complex() { ad } else { promote(ad, DType::C64) };
            (scalar(re, im, d), 0)
        }
    };
    let mut d = promote(ad, b.dtype());
    if true_div && !d.is_floating() {
        d = DType::F64;
    }
    let (x, y) = (a.inner.cast(d), b.cast(d));
    let nd = a.ndim.max(bnd);
    Ok(if swap { (y, x, nd) } else { (x, y, nd) })
}

/// The arithmetic operators.
#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// `a op other` (or `other op a` with `swap`), broadcasting dimensions of size 1.
fn binary(a: &PyArray, other: &Bound<'_, PyAny>, op: Op, swap: bool) -> PyResult<PyArray> {
    let (x, y, nd) = operands(a, operand(other)?, swap, matches!(op, Op::Div))?;
    let out = each_pair!(&x, &y, p, q => AnyArray::from(match op {
        Op::Add => emberfire::add(p, q, true),
        Op::Sub => emberfire::sub(p, q, true),
        Op::Mul => emberfire::mul(p, q, true),
        Op::Div => emberfire::div(p, q, true),
        Op::Pow => emberfire::pow(p, q, true),
    }));
    Ok(PyArray::new(out, nd))
}

/// Applies a floating point function; integer and bool arrays are computed in float64.
macro_rules! unary {
    ($self_:expr, $func:ident) => {{
        let x = if $self_.inner.dtype().is_floating() {
            $self_.inner.clone()
        } else {
            $self_.inner.cast(DType::F64)
        };
        PyArray::new(each!(&x, a, T => AnyArray::from(emberfire::$func(a))), $self_.ndim)
    }};
}
pub(crate) use unary;

/// The reductions that take an `axis`.
#[derive(Clone, Copy)]
pub enum Reduce {
    Sum,
    Mean,
    Min,
    Max,
}

/// A full reduction to a Python number, computed in float64 (complex128 for complex arrays).
fn reduce_all(py: Python<'_>, a: &AnyArray, kind: Reduce) -> PyResult<PyObject> {
    let n = a.dims().elements() as f64;
    // bools count as 0 and 1, whatever their bytes hold
    let a = match a {
        AnyArray::B8(x) => {
            AnyArray::from(emberfire::neq(x, &emberfire::constant(false, dim4!(1)), true))
        }
        other => other.clone(),
    };
    let scale = if matches!(kind, Reduce::Mean) { 1.0 / n } else { 1.0 };
    if a.dtype().is_complex() {
        let AnyArray::C64(x) = a.cast(DType::C64) else { unreachable!() };
        let (re, im) = match kind {
            Reduce::Sum | Reduce::Mean => emberfire::sum_all(&x),
            Reduce::Min => emberfire::min_all(&x),
            Reduce::Max => emberfire::max_all(&x),
        };
        return Ok(PyComplex::from_doubles(py, re * scale, im * scale).into_any().unbind());
    }
    let AnyArray::F64(x) = a.cast(DType::F64) else { unreachable!() };
    let v = match kind {
        Reduce::Sum | Reduce::Mean => emberfire::sum_all(&x).0,
        Reduce::Min => emberfire::min_all(&x).0,
        Reduce::Max => emberfire::max_all(&x).0,
    };
    Ok((v * scale).into_pyobject(py)?.into_any().unbind())
}

/// `axis` as an emberfire dimension, checked against the array's number of dimensions
/// (negative counts from the last, as in NumPy).
fn check_axis(axis: i64, ndim: usize) -> PyResult<usize> {
    let nd = ndim.max(1) as i64;
    let k = if axis < 0 { axis + nd } else { axis };
    if !(0..nd).contains(&k) {
        return Err(PyValueError::new_err(format!(
            "axis {axis} is out of bounds for an array of {ndim} dimensions"
        )));
    }
    Ok(k as usize)
}

/// `sum`, `mean`, `min` or `max` of all elements (a Python number), or along `axis` (an
/// array without that axis, or with it of size 1 with `keepdims`), as NumPy does.
pub fn reduce(
    py: Python<'_>,
    a: &PyArray,
    kind: Reduce,
    axis: Option<i64>,
    keepdims: bool,
) -> PyResult<PyObject> {
    let Some(axis) = axis else { return reduce_all(py, &a.inner, kind) };
    let k = check_axis(axis, a.ndim)?;
    let x = match &a.inner {
        AnyArray::B8(x) if matches!(kind, Reduce::Sum | Reduce::Mean) => AnyArray::from(
            emberfire::neq(x, &emberfire::constant(false, dim4!(1)), true).cast::<u32>(),
        ),
        other => other.clone(),
    };
    let r = match kind {
        Reduce::Sum => each!(&x, x, T => AnyArray::from(emberfire::sum(x, k as i32))),
        Reduce::Mean => each!(&x, x, T => AnyArray::from(emberfire::mean(x, k as i64))),
        Reduce::Min => each!(&x, x, T => AnyArray::from(emberfire::min(x, k as i32))),
        Reduce::Max => each!(&x, x, T => AnyArray::from(emberfire::max(x, k as i32))),
    };
    let ndim = a.ndim.max(1);
    let (r, nd) = if keepdims { (r, ndim) } else { drop_axes(r, ndim, &[k]) };
    Ok(Py::new(py, PyArray::new(r, nd))?.into_any())
}

/// The array without the axes `drop` (each of size 1) among its first `ndim`: they are moved
/// past the others (a view, no copy), and the Python view has `ndim - drop.len()` dimensions.
fn drop_axes(a: AnyArray, ndim: usize, drop: &[usize]) -> (AnyArray, usize) {
    if drop.is_empty() {
        return (a, ndim);
    }
    let mut perm: Vec<u64> = (0..ndim).filter(|k| !drop.contains(k)).map(|k| k as u64).collect();
    perm.extend(drop.iter().map(|&k| k as u64));
    perm.extend((ndim as u64)..4);
    let nd = ndim - drop.len();
    if perm.iter().enumerate().all(|(i, &p)| i as u64 == p) {
        return (a, nd);
    }
    let rest = perm[2..].to_vec();
    let moved = each!(&a, x, T => AnyArray::from(emberfire::reorder_v2(
        x,
        perm[0],
        perm[1],
        Some(rest.clone())
    )));
    (moved, nd)
}

/// Runs `f` with `a`'s backend and device active (what it creates lives beside `a`), then
/// makes the ones before active again.
fn beside<R>(a: &AnyArray, f: impl FnOnce() -> R) -> R {
    let (backend, device) = each!(a, x, T => (x.get_backend(), x.get_device_id()));
    let before = emberfire::get_active_backend();
    let before_device = emberfire::get_device();
    emberfire::set_backend(backend);
    if backend == Backend::CUDA {
        emberfire::set_device(device);
    }
    let r = f();
    emberfire::set_backend(before);
    if before == Backend::CUDA {
        emberfire::set_device(before_device);
    }
    r
}

/// `a[key]` for integers, slices (any step) and one `...`, one per axis from the first, as in
/// NumPy: an integer drops its axis, a slice keeps it. The result is a view of `a`'s memory.
fn index(a: &PyArray, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let items: Vec<Bound<'_, PyAny>> = match key.downcast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let nd = a.ndim;
    let ellipses = items.iter().filter(|k| k.is_instance_of::<PyEllipsis>()).count();
    if ellipses > 1 {
        return Err(PyIndexError::new_err("an index can only have a single ellipsis ('...')"));
    }
    let real = items.len() - ellipses;
    if real > nd {
        return Err(PyIndexError::new_err(format!(
            "too many indices: the array has {nd} dimensions but {real} were indexed"
        )));
    }
    let mut per_axis: Vec<Option<Bound<'_, PyAny>>> = Vec::with_capacity(nd);
    for k in items {
        if k.is_instance_of::<PyEllipsis>() {
            per_axis.extend((0..nd - real).map(|_| None));
        } else {
            per_axis.push(Some(k));
        }
    }
    per_axis.resize_with(nd, || None);
    let dims = a.inner.dims();
    let mut seqs = [Seq::<f64>::default(); 4];
    let mut out = [dims[0], dims[1], dims[2], dims[3]];
    let mut drop = Vec::new();
    for (k, item) in per_axis.iter().enumerate() {
        let Some(item) = item else { continue };
        let n = dims[k] as i64;
        if item.is_instance_of::<PyInt>() && !item.is_instance_of::<pyo3::types::PyBool>() {
            let i: i64 = item.extract()?;
            let j = if i < 0 { i + n } else { i };
            if !(0..n).contains(&j) {
                return Err(PyIndexError::new_err(format!(
                    "index {i} is out of bounds for axis {k} with size {n}"
                )));
            }
            seqs[k] = Seq::new(j as f64, j as f64, 1.0);
            out[k] = 1;
            drop.push(k);
        } else if let Ok(sl) = item.downcast::<PySlice>() {
            let ind = sl.indices(n as isize)?;
            let len = ind.slicelength as u64;
            out[k] = len;
            if len > 0 {
                let last = ind.start + (len as isize - 1) * ind.step;
                seqs[k] = Seq::new(ind.start as f64, last as f64, ind.step as f64);
            }
        } else {
            return Err(PyTypeError::new_err(format!(
                "emberfire arrays are indexed with integers, slices and `...`, not {}",
                item.get_type().name()?
            )));
        }
    }
    let view = if out.contains(&0) {
        let d = a.inner.dtype();
        beside(&a.inner, || filled(0.0, Dim4::new(&out), d))
    } else {
        each!(&a.inner, x, T => AnyArray::from(emberfire::index(x, &seqs)))
    };
    let (r, nd) = drop_axes(view, nd, &drop);
    Ok(PyArray::new(r, nd))
}

/// `a op b` for the comparison operators: a bool array (or `NotImplemented` for operands
/// emberfire does not combine with).
fn compare(a: &PyArray, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<PyObject> {
    let py = other.py();
    let Ok(b) = operand(other) else { return Ok(py.NotImplemented()) };
    let (x, y, nd) = operands(a, b, false, false)?;
    if x.dtype().is_complex() && !matches!(op, CompareOp::Eq | CompareOp::Ne) {
        return Err(PyTypeError::new_err("complex numbers have no order (only == and !=)"));
    }
    let r = each_pair!(&x, &y, p, q => match op {
        CompareOp::Lt => emberfire::lt(p, q, true),
        CompareOp::Le => emberfire::le(p, q, true),
        CompareOp::Gt => emberfire::gt(p, q, true),
        CompareOp::Ge => emberfire::ge(p, q, true),
        CompareOp::Eq => emberfire::eq(p, q, true),
        CompareOp::Ne => emberfire::neq(p, q, true),
    });
    Ok(Py::new(py, PyArray::new(AnyArray::from(r), nd))?.into_any())
}

/// A copy of the values in a new NumPy array (Fortran order, the array's own layout; bools
/// as 0 and 1).
#[allow(clippy::unnecessary_cast)] // the cast is needed for every type but u8
fn numpy_copy<'py>(py: Python<'py>, a: &PyArray) -> PyResult<Bound<'py, PyAny>> {
    let bytes = each!(&a.inner, x, T => {
        let v = x.to_vec();
        // SAFETY: plain element types without padding (bool is one byte, 0 or 1).
        let b = unsafe {
            std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..]))
        };
        PyBytes::new(py, b)
    });
    let np = py.import("numpy")?;
    let flat = np.call_method1("frombuffer", (bytes, dtype_name(a.inner.dtype())))?;
    let shape = PyTuple::new(py, a.shape_vec())?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("order", "F")?;
    // frombuffer's array is read-only over the bytes object: copy into a writable one
    flat.call_method("reshape", (shape,), Some(&kwargs))?.call_method0("copy")
}

/// A read-only NumPy view of a host array's memory (no copy), whose base object keeps the
/// array alive; `None` where there is no such view (CUDA memory, no elements).
fn numpy_view<'py>(slf: &Bound<'py, PyArray>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = slf.py();
    let a = slf.get();
    if a.backend() == Backend::CUDA || a.inner.dims().elements() == 0 {
        return Ok(None);
    }
    let iface = exchange::array_interface(py, &a.inner, &a.shape_vec(), &a.pinned, false)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("__array_interface__", iface)?;
    kwargs.set_item("array", slf)?;
    let holder = py.import("types")?.getattr("SimpleNamespace")?.call((), Some(&kwargs))?;
    Ok(Some(py.import("numpy")?.call_method1("asarray", (holder,))?))
}

#[pymethods]
impl PyArray {
    /// The shape NumPy sees once the array is exported: `shape[k]` is emberfire's dimension
    /// `k` (see the module documentation).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.shape_vec())
    }

    /// The number of dimensions Python sees (0 to 4).
    #[getter]
    fn ndim(&self) -> usize {
        self.ndim
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.dims().elements()
    }

    /// The element type's NumPy name.
    #[getter]
    fn dtype(&self) -> &'static str {
        dtype_name(self.inner.dtype())
    }

    /// `"cpu"` or `"cuda:N"`.
    #[getter]
    fn device(&self) -> String {
        device_of(&self.inner)
    }

    /// The address of the first element (device memory on CUDA): what DLPack consumers see.
    #[getter]
    fn data_ptr(&self) -> PyResult<usize> {
        exchange::data_ptr(&self.inner)
    }

    /// The transpose of a matrix (dimensions 0 and 1 swapped).
    #[getter(T)]
    fn transposed(&self) -> PyArray {
        let t = each!(&self.inner, x, T => AnyArray::from(emberfire::transpose(x, false)));
        PyArray::new(t, self.ndim.max(2))
    }

    /// The values as NumPy prints them (for arrays of up to 1000 elements), then the type and
    /// the device.
    fn __repr__(&self, py: Python<'_>) -> String {
        let values = (self.inner.dims().elements() <= 1000)
            .then(|| -> PyResult<String> {
                let n = numpy_copy(py, self)?;
                let kwargs = PyDict::new(py);
                kwargs.set_item("separator", ", ")?;
                kwargs.set_item("prefix", "emberfire.Array(")?;
                py.import("numpy")?.call_method("array2string", (n,), Some(&kwargs))?.extract()
            })
            .and_then(Result::ok);
        match values {
            Some(v) => {
                format!("emberfire.Array({v}, dtype={}, device='{}')", self.dtype(), self.device())
            }
            None => format!(
                "emberfire.Array(shape={:?}, dtype={}, device='{}')",
                self.shape_vec(),
                self.dtype(),
                self.device()
            ),
        }
    }

    /// The size of the first axis (a 0-dimensional array has none).
    fn __len__(&self) -> PyResult<usize> {
        if self.ndim == 0 {
            return Err(PyTypeError::new_err("len() of a 0-dimensional array"));
        }
        Ok(self.inner.dims()[0] as usize)
    }

    /// A view of part of the array: integers, slices (any step) and `...`, as in NumPy.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        index(self, key)
    }

    /// The truth of a one-element array; others are ambiguous, as in NumPy.
    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        if self.inner.dims().elements() != 1 {
            return Err(PyValueError::new_err(
                "the truth value of an array with more than one element is ambiguous",
            ));
        }
        self.item(py)?.bind(py).is_truthy()
    }

    /// The values as NumPy: for an array in host memory, a read-only view of its memory (no
    /// copy; the view keeps the array alive); for one in CUDA memory, a copy.
    fn to_numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        match numpy_view(slf)? {
            Some(v) => Ok(v),
            None => numpy_copy(slf.py(), slf.get()),
        }
    }

    /// NumPy's conversion (`np.asarray`, `np.array`): the view of `to_numpy` for host arrays
    /// (copied when `copy` is true), a copy from CUDA memory (refused when `copy` is false).
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = match numpy_view(slf)? {
            Some(v) if copy == Some(true) => v.call_method0("copy")?,
            Some(v) => v,
            None if copy == Some(false) => {
                return Err(PyValueError::new_err(
                    "__array__(copy=False): the array is in CUDA memory, which NumPy cannot \
                     view; take a copy (np.asarray, a.to_numpy())",
                ))
            }
            None => numpy_copy(slf.py(), slf.get())?,
        };
        match dtype {
            Some(d) => a.call_method1("astype", (d,)),
            None => Ok(a),
        }
    }

    /// NumPy's array interface (version 3) of an array in host memory: its address and its own
    /// strides, read-only (no copy but where DLPack copies: see `__dlpack__`). Absent
    /// (`AttributeError`) for arrays in CUDA memory and arrays without elements.
    #[getter]
    fn __array_interface__(&self, py: Python<'_>) -> PyResult<PyObject> {
        exchange::array_interface(py, &self.inner, &self.shape_vec(), &self.pinned, false)
    }

    /// The CUDA array interface (version 3) of an array in CUDA memory: its device address,
    /// its own strides (a view is described as it is, without a copy), and emberfire's stream,
    /// which the consumer waits for. Absent (`AttributeError`) for arrays in host memory.
    #[getter]
    fn __cuda_array_interface__(&self, py: Python<'_>) -> PyResult<PyObject> {
        exchange::array_interface(py, &self.inner, &self.shape_vec(), &self.pinned, true)
    }

    /// The single element of a one-element array, as a Python number.
    fn item(&self, py: Python<'_>) -> PyResult<PyObject> {
        if self.inner.dims().elements() != 1 {
            return Err(PyValueError::new_err("item: the array has more than one element"));
        }
        let (re, im) = emberfire::sum_all(&match self.inner.cast(DType::C64) {
            AnyArray::C64(c) => c,
            _ => unreachable!(),
        });
        Ok(match self.inner.dtype() {
            d if d.is_complex() => PyComplex::from_doubles(py, re, im).into_any().unbind(),
            DType::B8 => (re != 0.0).into_pyobject(py)?.to_owned().into_any().unbind(),
            d if d.is_floating() => re.into_pyobject(py)?.into_any().unbind(),
            _ => (re as i64).into_pyobject(py)?.into_any().unbind(),
        })
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        self.item(py)?.extract(py)
    }

    fn __int__(&self, py: Python<'_>) -> PyResult<i64> {
        let v = self.item(py)?;
        match v.extract::<i64>(py) {
            Ok(i) => Ok(i),
            Err(_) => Ok(v.extract::<f64>(py)?.trunc() as i64),
        }
    }

    /// Computes the array now (emberfire is lazy), without waiting for the device.
    fn eval(&self) {
        each!(&self.inner, x, T => x.eval())
    }

    /// The array converted to `dtype` (a NumPy name or type).
    fn astype(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let d = crate::dtype_arg(py, Some(dtype), self.inner.dtype())?;
        Ok(PyArray::new(self.inner.cast(d), self.ndim))
    }

    /// An independent copy (memory of its own).
    fn copy(&self) -> PyArray {
        PyArray::new(each!(&self.inner, x, T => AnyArray::from(x.copy())), self.ndim)
    }

    /// The array on `device`: `"cpu"`, `"cuda"` (the active CUDA device), `"cuda:N"` or `N`
    /// (a CUDA device). A copy, unless the array is already there.
    fn to_device(&self, device: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        // None: the CPU; Some(None): this thread's CUDA device; Some(Some(n)): CUDA device n
        let target: Option<Option<i32>> = match device.extract::<i32>() {
            Ok(n) => Some(Some(n)),
            Err(_) => {
                let name: String = device.str()?.extract()?;
                match name.as_str() {
                    "cpu" => None,
                    "cuda" => Some(None),
                    other => match other.strip_prefix("cuda:").map(str::parse::<i32>) {
                        Some(Ok(n)) => Some(Some(n)),
                        _ => {
                            return Err(PyValueError::new_err(format!(
                                "to_device: {name:?} is not \"cpu\", \"cuda\" or \"cuda:N\""
                            )))
                        }
                    },
                }
            }
        };
        let moved = each!(&self.inner, x, T => {
            let r = match target {
                None => x.try_to_backend(Backend::CPU),
                Some(None) => x.try_to_backend(Backend::CUDA),
                Some(Some(n)) => x.try_to_backend(Backend::CUDA).and_then(|y| y.try_to_device(n)),
            };
            AnyArray::from(r.map_err(exchange::to_py)?)
        });
        Ok(PyArray::new(moved, self.ndim))
    }

    /// The sum of all elements (a number), or along `axis` (without it, or keeping it with
    /// size 1 with `keepdims`).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn sum(&self, py: Python<'_>, axis: Option<i64>, keepdims: bool) -> PyResult<PyObject> {
        reduce(py, self, Reduce::Sum, axis, keepdims)
    }

    /// The mean of all elements, or along `axis` (see `sum`).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn mean(&self, py: Python<'_>, axis: Option<i64>, keepdims: bool) -> PyResult<PyObject> {
        reduce(py, self, Reduce::Mean, axis, keepdims)
    }

    /// The smallest element, or the smallest along `axis` (see `sum`).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn min(&self, py: Python<'_>, axis: Option<i64>, keepdims: bool) -> PyResult<PyObject> {
        reduce(py, self, Reduce::Min, axis, keepdims)
    }

    /// The largest element, or the largest along `axis` (see `sum`).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn max(&self, py: Python<'_>, axis: Option<i64>, keepdims: bool) -> PyResult<PyObject> {
        reduce(py, self, Reduce::Max, axis, keepdims)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<PyObject> {
        compare(self, other, op)
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Add, false)
    }

    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Add, true)
    }

    fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Sub, false)
    }

    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Sub, true)
    }

    fn __mul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Mul, false)
    }

    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Mul, true)
    }

    fn __truediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Div, false)
    }

    fn __rtruediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(self, other, Op::Div, true)
    }

    fn __pow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        if modulo.is_some() {
            return Err(PyTypeError::new_err("pow: emberfire has no modular power"));
        }
        binary(self, other, Op::Pow, false)
    }

    fn __rpow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        if modulo.is_some() {
            return Err(PyTypeError::new_err("pow: emberfire has no modular power"));
        }
        binary(self, other, Op::Pow, true)
    }

    fn __neg__(&self) -> PyResult<PyArray> {
        let (x, y, nd) = operands(self, Operand::Real(-1.0, false), false, false)?;
        Ok(PyArray::new(each_pair!(&x, &y, p, q => AnyArray::from(emberfire::mul(p, q, true))), nd))
    }

    fn __pos__(&self) -> PyArray {
        PyArray::new(self.inner.clone(), self.ndim)
    }

    fn __abs__(&self) -> PyArray {
        PyArray::new(each!(&self.inner, x, T => AnyArray::from(emberfire::abs(x))), self.ndim)
    }

    /// `~a`: logical not of a bool array, bitwise complement of an integer one.
    fn __invert__(&self) -> PyResult<PyArray> {
        let d = self.inner.dtype();
        if d == DType::B8 {
            let AnyArray::B8(x) = &self.inner else { unreachable!() };
            return Ok(PyArray::new(AnyArray::from(emberfire::not(x)), self.ndim));
        }
        if d.is_floating() {
            return Err(PyTypeError::new_err(format!(
                "~ is defined for bool and integer arrays, not {}",
                dtype_name(d)
            )));
        }
        Ok(PyArray::new(
            each!(&self.inner, x, T => AnyArray::from(emberfire::bitnot(x))),
            self.ndim,
        ))
    }

    fn __matmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let Operand::Array(b, _) = operand(other)? else {
            return Err(PyTypeError::new_err("matmul: both operands must be arrays"));
        };
        check_same_device("matmul", &self.inner, &b)?;
        matmul(&self.inner, &b).map(|m| PyArray::new(m, 2))
    }

    /// A DLPack capsule of the array (the array API standard's signature). `stream` is the
    /// consumer's: an int, or any object with `__cuda_stream__`; on CUDA that stream waits
    /// (on the device, through an event) for the work that writes the array.
    #[pyo3(signature = (stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<PyObject> {
        let stream = exchange::stream_arg(stream)?;
        exchange::dlpack_capsule(py, &self.inner, self.ndim, stream, max_version, dl_device, copy)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        let d = each!(&self.inner, x, T => emberfire::dlpack::dlpack_device(x));
        (d.device_type.0 as i32, d.device_id)
    }
}

/// The matrix product, for the floating point types (others are converted to float64).
pub fn matmul(a: &AnyArray, b: &AnyArray) -> PyResult<AnyArray> {
    let mut d = promote(a.dtype(), b.dtype());
    if !d.is_floating() {
        d = DType::F64;
    }
    let (x, y) = (a.cast(d), b.cast(d));
    let n = MatProp::NONE;
    Ok(match (&x, &y) {
        (AnyArray::F32(p), AnyArray::F32(q)) => emberfire::matmul(p, q, n, n).into(),
        (AnyArray::F64(p), AnyArray::F64(q)) => emberfire::matmul(p, q, n, n).into(),
        (AnyArray::F16(p), AnyArray::F16(q)) => emberfire::matmul(p, q, n, n).into(),
        (AnyArray::BF16(p), AnyArray::BF16(q)) => emberfire::matmul(p, q, n, n).into(),
        (AnyArray::C32(p), AnyArray::C32(q)) => emberfire::matmul(p, q, n, n).into(),
        (AnyArray::C64(p), AnyArray::C64(q)) => emberfire::matmul(p, q, n, n).into(),
        _ => unreachable!("promoted to a floating point type"),
    })
}

/// An array of `dims` with every element `value`, of type `d`.
pub fn filled(value: f64, dims: Dim4, d: DType) -> AnyArray {
    AnyArray::from(emberfire::constant(value, dims)).cast(d)
}

/// `0, 1, ..., n-1` of type `d`.
pub fn arange(n: u64, d: DType) -> AnyArray {
    with_type!(d, T => AnyArray::from(emberfire::range::<T>(dim4!(n), 0)))
}

/// Elements of type `d` from their bytes in Fortran order (what NumPy's `tobytes(order="F")`
/// gives), as an array of shape `dims` on the active backend.
#[allow(clippy::unnecessary_cast)] // the casts are needed for every type but u8
pub fn from_bytes(bytes: &[u8], dims: Dim4, d: DType) -> AnyArray {
    with_type!(d, T => {
        let n = bytes.len() / std::mem::size_of::<T>();
        let v: Vec<T> = (0..n)
            .map(|i| {
                let at = bytes[i * std::mem::size_of::<T>()..].as_ptr() as *const T;
                if d == DType::B8 {
                    // SAFETY: one byte, read as "not zero" into a valid bool below.
                    let b = unsafe { *(at as *const u8) } != 0;
                    // SAFETY: T is bool here: same size and a valid value.
                    unsafe { std::mem::transmute_copy::<bool, T>(&b) }
                } else {
                    // SAFETY: `n` whole elements lie in `bytes`; every bit pattern is a valid
                    // value of the non-bool element types.
                    unsafe { at.read_unaligned() }
                }
            })
            .collect();
        AnyArray::from(Array::new(&v, dims))
    })
}
