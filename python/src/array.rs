//! The Python `Array`: an emberfire array and the number of dimensions Python sees (emberfire
//! arrays have four; a NumPy array of shape `(3, 1)` keeps its second dimension here).
//!
//! Operators build the same lazy expressions as in Rust, so `a * b + 1.0` is one fused kernel
//! when its value is needed. Operands of different types are promoted (see `any::promote`);
//! Python numbers take the array's type (a float with an integer array gives float64).
//! Shapes broadcast where a dimension is 1, as emberfire's `batch` does.

use emberfire::{dim4, Array, Backend, DType, Dim4, MatProp};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyComplex, PyFloat, PyInt, PyTuple};

use crate::any::{dtype_name, each, each_pair, promote, with_type, AnyArray};
use crate::exchange;

/// An emberfire array.
#[pyclass(name = "Array", module = "emberfire", frozen)]
pub struct PyArray {
    pub inner: AnyArray,
    pub ndim: usize,
}

impl PyArray {
    pub fn new(inner: AnyArray, ndim: usize) -> PyArray {
        PyArray { inner, ndim: ndim.min(4) }
    }

    fn shape_vec(&self) -> Vec<u64> {
        let d = self.inner.dims();
        (0..self.ndim).map(|k| d[k]).collect()
    }
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
fn operands(a: &PyArray, b: Operand, swap: bool, true_div: bool) -> (AnyArray, AnyArray, usize) {
    let ad = a.inner.dtype();
    let (b, bnd) = match b {
        Operand::Array(x, n) => (x, n),
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
    if swap {
        (y, x, nd)
    } else {
        (x, y, nd)
    }
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
    let (x, y, nd) = operands(a, operand(other)?, swap, matches!(op, Op::Div));
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

#[pymethods]
impl PyArray {
    /// The shape Python sees.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.shape_vec())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.ndim
    }

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
        each!(&self.inner, x, T => match x.get_backend() {
            Backend::CUDA => format!("cuda:{}", x.get_device_id()),
            _ => "cpu".to_string(),
        })
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

    fn __repr__(&self) -> String {
        format!(
            "emberfire.Array(shape={:?}, dtype={}, device={})",
            self.shape_vec(),
            self.dtype(),
            self.device()
        )
    }

    fn __len__(&self) -> usize {
        if self.ndim == 0 {
            1
        } else {
            self.inner.dims()[0] as usize
        }
    }

    /// A copy of the values in a new NumPy array (Fortran order, the array's own layout).
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every type but u8
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let bytes = each!(&self.inner, x, T => {
            let v = x.to_vec();
            // SAFETY: plain element types without padding (bool is one byte, 0 or 1).
            let b = unsafe {
                std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..]))
            };
            PyBytes::new(py, b)
        });
        let np = py.import("numpy")?;
        let flat = np.call_method1("frombuffer", (bytes, self.dtype()))?;
        let shape = PyTuple::new(py, self.shape_vec())?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("order", "F")?;
        // frombuffer's array is read-only over the bytes object: copy into a writable one
        flat.call_method("reshape", (shape,), Some(&kwargs))?.call_method0("copy")
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = copy;
        let a = self.to_numpy(py)?;
        match dtype {
            Some(d) => a.call_method1("astype", (d,)),
            None => Ok(a),
        }
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

    /// Computes the array now (emberfire is lazy), without waiting for the device.
    fn eval(&self) {
        each!(&self.inner, x, T => x.eval())
    }

    /// The array converted to `dtype` (a NumPy name).
    fn astype(&self, dtype: &str) -> PyResult<PyArray> {
        let d = crate::parse_dtype(dtype)?;
        Ok(PyArray::new(self.inner.cast(d), self.ndim))
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

    fn __neg__(&self) -> PyArray {
        let (x, y, nd) = operands(self, Operand::Real(-1.0, false), false, false);
        PyArray::new(each_pair!(&x, &y, p, q => AnyArray::from(emberfire::mul(p, q, true))), nd)
    }

    fn __matmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let Operand::Array(b, _) = operand(other)? else {
            return Err(PyTypeError::new_err("matmul: both operands must be arrays"));
        };
        matmul(&self.inner, &b).map(|m| PyArray::new(m, 2))
    }

    #[pyo3(signature = (stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<isize>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<PyObject> {
        exchange::dlpack_capsule(py, &self.inner, self.ndim, stream, max_version, dl_device, copy)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        let d = each!(&self.inner, x, T => emberfire::dlpack::dlpack_device(x));
        (d.device_type.0 as i32, d.device_id)
    }

    #[getter]
    fn __cuda_array_interface__(&self, py: Python<'_>) -> PyResult<PyObject> {
        exchange::cuda_array_interface(py, &self.inner, &self.shape_vec())
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
