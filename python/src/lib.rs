//! The `emberfire` Python module: emberfire's lazily evaluated, JIT-fused arrays in Python,
//! exchanged with PyTorch, CuPy, JAX and NumPy without a copy through DLPack
//! (`__dlpack__`, `__dlpack_device__`, `from_dlpack`) and, for CUDA arrays, the CUDA array
//! interface (version 3, with its stream).
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
/// an emberfire array), over the same memory: no copy. On CUDA the producer orders its
/// pending work before emberfire's stream; the tensor must be on the active backend's
/// device.
#[pyfunction]
fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (a, nd) = exchange::from_dlpack(obj)?;
    Ok(PyArray::new(a, nd))
}

/// The matrix product.
#[pyfunction]
fn matmul(a: &PyArray, b: &PyArray) -> PyResult<PyArray> {
    array::matmul(&a.inner, &b.inner).map(|m| PyArray::new(m, 2))
}

/// A full reduction to a Python number, computed in float64 (complex128 for complex arrays).
fn reduce_all(
    py: Python<'_>,
    a: &PyArray,
    f: fn(&emberfire::Array<emberfire::c64>) -> (f64, f64),
    g: fn(&emberfire::Array<f64>) -> (f64, f64),
) -> PyResult<PyObject> {
    if a.inner.dtype().is_complex() {
        let AnyArray::C64(x) = a.inner.cast(DType::C64) else { unreachable!() };
        let (re, im) = f(&x);
        return Ok(pyo3::types::PyComplex::from_doubles(py, re, im).into_any().unbind());
    }
    let AnyArray::F64(x) = a.inner.cast(DType::F64) else { unreachable!() };
    Ok(g(&x).0.into_pyobject(py)?.into_any().unbind())
}

fn check_axis(axis: i32, a: &PyArray) -> PyResult<i32> {
    let nd = a.ndim.max(1) as i32;
    let k = if axis < 0 { axis + nd } else { axis };
    if !(0..4).contains(&k) {
        return Err(PyValueError::new_err(format!("axis {axis} is out of range")));
    }
    Ok(k)
}

macro_rules! reduction {
    ($(#[$doc:meta])* $name:ident, $all:ident, $dim:ident) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (a, axis=None))]
        fn $name(py: Python<'_>, a: &PyArray, axis: Option<i32>) -> PyResult<PyObject> {
            match axis {
                None => reduce_all(py, a, emberfire::$all, emberfire::$all),
                Some(axis) => {
                    let k = check_axis(axis, a)?;
                    let r = each!(&a.inner, x, T => AnyArray::from(emberfire::$dim(x, k)));
                    Ok(Py::new(py, PyArray::new(r, a.ndim))?.into_any())
                }
            }
        }
    };
}

reduction!(
    /// The sum of all elements (a number), or along `axis` (an array that keeps the axis with
    /// size 1).
    sum, sum_all, sum
);
reduction!(
    /// The smallest element, or the smallest along `axis`.
    min, min_all, min
);
reduction!(
    /// The largest element, or the largest along `axis`.
    max, max_all, max
);

/// The mean of all elements (a number), or along `axis` (keeping it with size 1).
#[pyfunction]
#[pyo3(signature = (a, axis=None))]
fn mean(py: Python<'_>, a: &PyArray, axis: Option<i32>) -> PyResult<PyObject> {
    match axis {
        None => {
            let n = a.inner.dims().elements() as f64;
            let s = reduce_all(py, a, emberfire::sum_all, emberfire::sum_all)?;
            let s = s.bind(py);
            Ok(s.call_method1("__truediv__", (n,))?.unbind())
        }
        Some(axis) => {
            let k = check_axis(axis, a)?;
            let r = each!(&a.inner, x, T => AnyArray::from(emberfire::mean(x, k as i64)));
            Ok(Py::new(py, PyArray::new(r, a.ndim))?.into_any())
        }
    }
}

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
            Ok(b) => b.get().inner.clone(),
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

/// emberfire's arrays for Python.
#[pymodule]
#[pyo3(name = "emberfire")]
fn emberfire_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArray>()?;
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
