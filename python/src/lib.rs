//! The `emberfire` Python module: emberfire's lazily evaluated, JIT-fused arrays in Python,
//! exchanged with PyTorch, CuPy, JAX and NumPy without a copy through DLPack
//! (`__dlpack__`, `__dlpack_device__`, `from_dlpack`), NumPy's array interface and
//! `__array__` for host arrays, and the CUDA array interface (version 3, with its stream) for
//! CUDA arrays; emberfire's stream speaks the stream protocol (`__cuda_stream__`).
//!
//! Imported host memory stays on the host (an array of the CPU backend) whichever backend is
//! active, CUDA memory stays on its device; operations follow their operands, and operands on
//! two devices are a `ValueError` that says how to move one (`Array.to_device`).
//!
//! Built with maturin (`pyproject.toml`), as an abi3 module that loads in any CPython from
//! 3.8 on. The layout rules, ownership and stream order are emberfire's DLPack module's (see
//! `emberfire::dlpack`); the book's "Exchanging arrays" chapter shows them from Python.
//!
//! As a Rust library this crate only declares the module; its tests are Python
//! (`python/tests/test_exchange.py`, run by `python/run-tests`).

mod any;
mod array;
mod exchange;

use emberfire::{dim4, Backend, DType, Dim4};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use any::{dtype_from_name, each, AnyArray};
use array::{unary, PyArray};

/// A dtype given as a NumPy name or object (anything whose `str` is a name, e.g.
/// `numpy.float32`'s `numpy.dtype(...).name`).
fn parse_dtype(name: &str) -> PyResult<DType> {
    dtype_from_name(name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "emberfire has no element type {name:?} (it has float16/32/64, complex64/128, bool, \
             uint8, int16, uint16, int32, uint32, int64, uint64)"
        ))
    })
}

fn dtype_arg(py: Python<'_>, dtype: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    match dtype {
        None => Ok(default),
        Some(d) => {
            let np = py.import("numpy")?;
            let name: String = np.call_method1("dtype", (d,))?.getattr("name")?.extract()?;
            parse_dtype(&name)
        }
    }
}

/// A shape given as an int or a sequence of at most four ints.
fn shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<(Dim4, usize)> {
    let v: Vec<u64> = match shape.extract::<u64>() {
        Ok(n) => vec![n],
        Err(_) => shape.extract()?,
    };
    if v.len() > 4 {
        return Err(PyValueError::new_err(format!(
            "emberfire arrays have at most 4 dimensions, not {}",
            v.len()
        )));
    }
    let mut d = [1u64; 4];
    d[..v.len()].copy_from_slice(&v);
    Ok((Dim4::new(&d), v.len()))
}

/// An array of zeros.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None))]
fn zeros(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (dims, nd) = shape_arg(shape)?;
    Ok(PyArray::new(array::filled(0.0, dims, dtype_arg(py, dtype, DType::F32)?), nd))
}

/// An array of ones.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None))]
fn ones(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (dims, nd) = shape_arg(shape)?;
    Ok(PyArray::new(array::filled(1.0, dims, dtype_arg(py, dtype, DType::F32)?), nd))
}

/// An array of `shape` with every element `value`.
#[pyfunction]
#[pyo3(signature = (shape, value, dtype=None))]
fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    value: f64,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (dims, nd) = shape_arg(shape)?;
    Ok(PyArray::new(array::filled(value, dims, dtype_arg(py, dtype, DType::F32)?), nd))
}

/// `0, 1, ..., n - 1`.
#[pyfunction]
#[pyo3(signature = (n, dtype=None))]
fn arange(py: Python<'_>, n: u64, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    Ok(PyArray::new(array::arange(n, dtype_arg(py, dtype, DType::S64)?), 1))
}

/// A copy of `obj` (a NumPy array, or anything `numpy.asarray` takes) on the active backend.
/// An emberfire array is returned as it is (converted if `dtype` differs).
#[pyfunction]
#[pyo3(signature = (obj, dtype=None))]
fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    if let Ok(a) = obj.downcast::<PyArray>() {
        let a = a.get();
        let d = dtype_arg(py, dtype, a.inner.dtype())?;
        return Ok(PyArray::new(a.inner.cast(d), a.ndim));
    }
    let np = py.import("numpy")?;
    let x = match dtype {
        Some(d) => np.call_method1("asarray", (obj, d))?,
        None => np.call_method1("asarray", (obj,))?,
    };
    let name: String = x.getattr("dtype")?.getattr("name")?.extract()?;
    let d = parse_dtype(&name)?;
    let (dims, nd) = shape_arg(&x.getattr("shape")?)?;
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("order", "F")?;
    let bytes: Vec<u8> = x.call_method("tobytes", (), Some(&kwargs))?.extract()?;
    Ok(PyArray::new(array::from_bytes(&bytes, dims, d), nd))
}

/// The array of any object with `__dlpack__` (a PyTorch tensor, a CuPy, JAX or NumPy array,
/// an emberfire array), over the same memory: no copy. Where the tensor lives decides where
/// the array does, whatever backend is active: host memory gives an array of the CPU
/// backend, CUDA memory an array of that CUDA device (whose producer orders its pending work
/// before emberfire's stream there).
#[pyfunction]
fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (a, nd) = exchange::from_dlpack(obj)?;
    Ok(PyArray::new(a, nd))
}

/// The matrix product.
#[pyfunction]
fn matmul(a: &PyArray, b: &PyArray) -> PyResult<PyArray> {
    array::check_same_device("matmul", &a.inner, &b.inner)?;
    array::matmul(&a.inner, &b.inner).map(|m| PyArray::new(m, 2))
}

macro_rules! reduction {
    ($(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (a, axis=None, keepdims=false))]
        fn $name(
            py: Python<'_>,
            a: &PyArray,
            axis: Option<i64>,
            keepdims: bool,
        ) -> PyResult<PyObject> {
            array::reduce(py, a, array::Reduce::$kind, axis, keepdims)
        }
    };
}

reduction!(
    /// The sum of all elements (a number, computed in float64 or complex128), or along `axis`
    /// (an array without that axis, or keeping it with size 1 with `keepdims`), as in NumPy.
    sum, Sum
);
reduction!(
    /// The mean of all elements, or along `axis` (see `sum`).
    mean, Mean
);
reduction!(
    /// The smallest element, or the smallest along `axis` (see `sum`).
    min, Min
);
reduction!(
    /// The largest element, or the largest along `axis` (see `sum`).
    max, Max
);

macro_rules! math {
    ($($(#[$doc:meta])* $name:ident),*) => {$(
        $(#[$doc])*
        #[pyfunction]
        fn $name(a: &PyArray) -> PyArray {
            unary!(a, $name)
        }
    )*};
}

math!(
    /// e to the power of each element.
    exp,
    /// The natural logarithm of each element.
    log,
    /// The sine of each element.
    sin,
    /// The cosine of each element.
    cos,
    /// The hyperbolic tangent of each element.
    tanh,
    /// The square root of each element.
    sqrt,
    /// The logistic function of each element.
    sigmoid
);

/// The absolute value (magnitude for complex numbers) of each element.
#[pyfunction]
fn abs(a: &PyArray) -> PyArray {
    PyArray::new(each!(&a.inner, x, T => AnyArray::from(emberfire::abs(x))), a.ndim)
}

/// The larger of two arrays (or an array and a number), element by element.
#[pyfunction]
fn maximum(a: &Bound<'_, PyArray>, b: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let a = a.get();
    let (x, y, nd) = {
        let other = a.inner.clone();
        let b = match b.downcast::<PyArray>() {
            Ok(b) => {
                array::check_same_device("maximum", &other, &b.get().inner)?;
                b.get().inner.clone()
            }
            Err(_) => array::filled(b.extract::<f64>()?, dim4!(1), other.dtype()),
        };
        let d = any::promote(other.dtype(), b.dtype());
        (other.cast(d), b.cast(d), a.ndim)
    };
    Ok(PyArray::new(
        any::each_pair!(&x, &y, p, q => AnyArray::from(emberfire::maxof(p, q, true))),
        nd,
    ))
}

/// Makes `"cpu"` or `"cuda"` the active backend of the calling thread.
#[pyfunction]
fn set_backend(name: &str) -> PyResult<()> {
    let b = match name {
        "cpu" => Backend::CPU,
        "cuda" => Backend::CUDA,
        other => {
            return Err(PyValueError::new_err(format!(
                "set_backend: {other:?} is not \"cpu\" or \"cuda\""
            )))
        }
    };
    emberfire::set_backend(b);
    Ok(())
}

/// The active backend: `"cpu"` or `"cuda"`.
#[pyfunction]
fn get_backend() -> &'static str {
    match emberfire::get_active_backend() {
        Backend::CUDA => "cuda",
        _ => "cpu",
    }
}

/// Blocks until the active device has finished all queued work.
#[pyfunction]
fn sync() {
    emberfire::sync(-1)
}

/// A CUDA stream of emberfire's: what `current_stream` returns. It speaks the stream
/// protocol (`__cuda_stream__`), so CuPy, PyTorch, Numba and cuda.core take it as a stream,
/// and every function of this module that takes a stream takes it, any other object with
/// `__cuda_stream__`, or a raw handle.
#[pyclass(name = "Stream", module = "emberfire", frozen)]
struct PyStream {
    handle: usize,
    device: i32,
}

#[pymethods]
impl PyStream {
    /// The stream protocol: `(0, handle)` (version 0 of the protocol, the `CUstream`).
    fn __cuda_stream__(&self) -> (u32, usize) {
        (0, self.handle)
    }

    /// The raw `CUstream` handle.
    #[getter]
    fn handle(&self) -> usize {
        self.handle
    }

    /// The CUDA device the stream belongs to.
    #[getter]
    fn device(&self) -> i32 {
        self.device
    }

    fn __int__(&self) -> usize {
        self.handle
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .downcast::<PyStream>()
            .is_ok_and(|o| o.get().handle == self.handle && o.get().device == self.device)
    }

    fn __hash__(&self) -> u64 {
        self.handle as u64 ^ ((self.device as u64) << 56)
    }

    fn __repr__(&self) -> String {
        format!("emberfire.Stream(handle={:#x}, device=cuda:{})", self.handle, self.device)
    }
}

/// The stream emberfire runs on, on CUDA device `device` (default: the active device):
/// pass it to other libraries (`torch.cuda.ExternalStream(s.handle)`, `cupy.cuda.
/// ExternalStream(s.handle)`, or anything that takes `__cuda_stream__`). A `BufferError` or
/// `RuntimeError` without CUDA.
#[pyfunction]
#[pyo3(signature = (device=None))]
fn current_stream(device: Option<i32>) -> PyResult<PyStream> {
    let device = device.unwrap_or_else(emberfire::get_device);
    let s = emberfire::cuda::current_stream(device).map_err(exchange::to_py)?;
    Ok(PyStream { handle: s as usize, device })
}

/// emberfire's arrays for Python.
#[pymodule]
#[pyo3(name = "emberfire")]
fn emberfire_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArray>()?;
    m.add_class::<PyStream>()?;
    m.add_function(wrap_pyfunction!(current_stream, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(sum, m)?)?;
    m.add_function(wrap_pyfunction!(mean, m)?)?;
    m.add_function(wrap_pyfunction!(min, m)?)?;
    m.add_function(wrap_pyfunction!(max, m)?)?;
    m.add_function(wrap_pyfunction!(exp, m)?)?;
    m.add_function(wrap_pyfunction!(log, m)?)?;
    m.add_function(wrap_pyfunction!(sin, m)?)?;
    m.add_function(wrap_pyfunction!(cos, m)?)?;
    m.add_function(wrap_pyfunction!(tanh, m)?)?;
    m.add_function(wrap_pyfunction!(sqrt, m)?)?;
    m.add_function(wrap_pyfunction!(sigmoid, m)?)?;
    m.add_function(wrap_pyfunction!(abs, m)?)?;
    m.add_function(wrap_pyfunction!(maximum, m)?)?;
    m.add_function(wrap_pyfunction!(set_backend, m)?)?;
    m.add_function(wrap_pyfunction!(get_backend, m)?)?;
    m.add_function(wrap_pyfunction!(sync, m)?)?;
    Ok(())
}
