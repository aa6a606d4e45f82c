//! The Python side of DLPack: capsules (named `dltensor_versioned` or `dltensor`, renamed
//! `used_...` once consumed, as the protocol states), `__dlpack__`'s arguments, and
//! `from_dlpack` of any object that has `__dlpack__`.

use std::ffi::{c_void, CStr};

use emberfire::dlpack::{self, ffi as dl};
use emberfire::{Backend, DType};
use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::any::{each, with_type, AnyArray};

const VERSIONED: &CStr = c"dltensor_versioned";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
const LEGACY: &CStr = c"dltensor";
const USED_LEGACY: &CStr = c"used_dltensor";

/// An emberfire error as a Python exception: what cannot be exchanged is a `BufferError`
/// (the protocol's choice), anything else a `RuntimeError`.
pub fn to_py(e: emberfire::Error) -> PyErr {
    match e {
        emberfire::Error::Exchange(m) => PyBufferError::new_err(m),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A capsule that nobody consumed still owns its tensor: its destructor calls the deleter.
unsafe extern "C" fn drop_versioned(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: Python calls this with the capsule being destroyed; a capsule still named
    // `dltensor_versioned` holds a tensor whose deleter has not run.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let t = pyo3::ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr())
                as *mut dl::DLManagedTensorVersioned;
            if let Some(d) = (*t).deleter {
                d(t);
            }
        }
    }
}

unsafe extern "C" fn drop_legacy(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: as in `drop_versioned`, for `dltensor` capsules.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let t = pyo3::ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr())
                as *mut dl::DLManagedTensor;
            if let Some(d) = (*t).deleter {
                d(t);
            }
        }
    }
}

/// A capsule owning `ptr`, named `name`.
///
/// # Safety
///
/// `ptr` is a live tensor of the kind `name` says, whose deleter has not run; `destructor`
/// is the matching one above.
unsafe fn capsule(
    py: Python<'_>,
    ptr: *mut c_void,
    name: &'static CStr,
    destructor: unsafe extern "C" fn(*mut pyo3::ffi::PyObject),
) -> PyResult<PyObject> {
    // SAFETY: the caller's contract; the name is static, as capsules require.
    unsafe {
        let raw = pyo3::ffi::PyCapsule_New(ptr, name.as_ptr(), Some(destructor));
        Bound::from_owned_ptr_or_err(py, raw).map(Bound::unbind)
    }
}

/// The protocol's `stream` argument as emberfire's stream value: on CUDA, `None` (and 0) is
/// the legacy default stream (1); on the CPU only `None` (or -1) is allowed.
fn stream_value(backend: Backend, stream: Option<isize>) -> PyResult<isize> {
    match (backend, stream) {
        // 0 is ambiguous in the protocol; consumers that pass it mean the default stream
        (Backend::CUDA, None) | (Backend::CUDA, Some(0)) => Ok(1),
        (Backend::CUDA, Some(s)) => Ok(s),
        (_, None) | (_, Some(-1)) => Ok(-1),
        (_, Some(s)) => Err(PyValueError::new_err(format!(
            "__dlpack__: stream {s} given for an array in host memory, where it must be None"
        ))),
    }
}

/// `__dlpack__` of an array whose Python view has `ndim` dimensions.
pub fn dlpack_capsule(
    py: Python<'_>,
    array: &AnyArray,
    ndim: usize,
    stream: Option<isize>,
    max_version: Option<(u32, u32)>,
    dl_device: Option<(i32, i32)>,
    copy: Option<bool>,
) -> PyResult<PyObject> {
    let backend = each!(array, x, T => x.get_backend());
    let own = each!(array, x, T => dlpack::dlpack_device(x));
    if let Some((ty, id)) = dl_device {
        if ty as u32 != own.device_type.0 || id != own.device_id {
            return Err(PyBufferError::new_err(format!(
                "__dlpack__: the array is on device ({}, {}); emberfire does not copy it to \
                 device ({ty}, {id})",
                own.device_type.0, own.device_id
            )));
        }
    }
    let stream = stream_value(backend, stream)?;
    let copied = copy == Some(true);
    let source =
        if copied { each!(array, x, T => AnyArray::from(x.copy())) } else { array.clone() };
    let versioned = max_version.is_some_and(|(major, _)| major >= 1);
    if versioned {
        // SAFETY: on CUDA the stream value comes from the consumer, which the protocol makes
        // responsible for passing a live stream of the array's device.
        let t = each!(&source, x, T => unsafe { dlpack::to_dlpack_for_stream(x, stream) })
            .map_err(to_py)?;
        // SAFETY: a live tensor we own until the capsule takes it; `ndim` is at most 4 and the
        // shape and strides arrays hold four entries.
        unsafe {
            (*t.as_ptr()).dl_tensor.ndim = ndim as i32;
            if copied {
                (*t.as_ptr()).flags |= dl::DLPACK_FLAG_BITMASK_IS_COPIED as u64;
            }
            capsule(py, t.as_ptr() as *mut c_void, VERSIONED, drop_versioned)
        }
    } else {
        // SAFETY: as above.
        let t = each!(&source, x, T => unsafe { dlpack::to_dlpack_legacy_for_stream(x, stream) })
            .map_err(to_py)?;
        // SAFETY: as above.
        unsafe {
            (*t.as_ptr()).dl_tensor.ndim = ndim as i32;
            capsule(py, t.as_ptr() as *mut c_void, LEGACY, drop_legacy)
        }
    }
}

/// Takes the tensor out of a DLPack capsule: renames the capsule (consumed) and imports the
/// tensor as an array of its own element type. Returns the array and its number of
/// dimensions.
fn import_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<(AnyArray, usize)> {
    let raw = capsule.as_ptr();
    // SAFETY: checking a capsule's name is valid for any object.
    let versioned = unsafe { pyo3::ffi::PyCapsule_IsValid(raw, VERSIONED.as_ptr()) } == 1;
    // SAFETY: as above.
    let legacy = unsafe { pyo3::ffi::PyCapsule_IsValid(raw, LEGACY.as_ptr()) } == 1;
    if !versioned && !legacy {
        return Err(PyTypeError::new_err(
            "from_dlpack: __dlpack__ returned neither a `dltensor_versioned` nor a `dltensor` \
             capsule (was it consumed already?)",
        ));
    }
    let (name, used) = if versioned { (VERSIONED, USED_VERSIONED) } else { (LEGACY, USED_LEGACY) };
    // SAFETY: a valid capsule of that name; renaming it hands its tensor to us (its destructor
    // then leaves it alone), as the protocol says.
    let ptr = unsafe {
        let p = pyo3::ffi::PyCapsule_GetPointer(raw, name.as_ptr());
        if pyo3::ffi::PyCapsule_SetName(raw, used.as_ptr()) != 0 {
            return Err(PyErr::fetch(capsule.py()));
        }
        p
    };
    // SAFETY: the capsule held a live tensor, now ours.
    let (tensor, flags) = unsafe {
        if versioned {
            let t = ptr as *mut dl::DLManagedTensorVersioned;
            ((*t).dl_tensor, (*t).flags)
        } else {
            ((*(ptr as *mut dl::DLManagedTensor)).dl_tensor, 0)
        }
    };
    let _ = flags;
    let ndim = tensor.ndim.clamp(0, 4) as usize;
    let t = tensor.dtype;
    let i8 = t.code as u32 == dl::DLDataTypeCode::kDLInt.0 && t.bits == 8 && t.lanes == 1;
    let dtype = match dlpack::dtype_of(tensor.dtype) {
        Ok(d) => d,
        // emberfire has no i8: such tensors import as int16, widened lazily from their bytes
        Err(_) if i8 => DType::S16,
        Err(e) => {
            // still ours: release it
            // SAFETY: the tensor's deleter, run once.
            unsafe { release(ptr, versioned) };
            return Err(to_py(e));
        }
    };
    let array = with_type!(dtype, T => {
        // SAFETY: a live tensor, consumed by the import whatever its outcome; the producer
        // ordered its work before the stream we named (see `from_dlpack`).
        let r = unsafe {
            if versioned {
                dlpack::from_dlpack::<T>(std::ptr::NonNull::new_unchecked(ptr.cast()), None)
            } else {
                dlpack::from_dlpack_legacy::<T>(std::ptr::NonNull::new_unchecked(ptr.cast()), None)
            }
        };
        AnyArray::from(r.map_err(to_py)?)
    });
    Ok((array, ndim))
}

/// Runs a consumed tensor's deleter.
///
/// # Safety
///
/// `ptr` is a live tensor of the kind `versioned` says, whose deleter has not run.
unsafe fn release(ptr: *mut c_void, versioned: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        if versioned {
            let t = ptr as *mut dl::DLManagedTensorVersioned;
            if let Some(d) = (*t).deleter {
                d(t)
            }
        } else {
            let t = ptr as *mut dl::DLManagedTensor;
            if let Some(d) = (*t).deleter {
                d(t)
            }
        }
    }
}

/// `from_dlpack(obj)`: asks `obj` for a tensor for emberfire's stream (on CUDA), preferring
/// DLPack 1.x, and imports it without a copy.
pub fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<(AnyArray, usize)> {
    let py = obj.py();
    if !obj.hasattr("__dlpack__")? {
        return Err(PyTypeError::new_err(format!(
            "from_dlpack: {} has no __dlpack__ method",
            obj.get_type().name()?
        )));
    }
    let (dev_type, dev_id): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
    let kwargs = PyDict::new(py);
    if dev_type == dl::DLDeviceType::kDLCUDA.0 as i32
        || dev_type == dl::DLDeviceType::kDLCUDAManaged.0 as i32
    {
        // The producer makes emberfire's current stream on that device wait for its work.
        let s = emberfire::cuda::current_stream(dev_id).map_err(to_py)?;
        kwargs.set_item("stream", s as usize)?;
    }
    kwargs.set_item("max_version", PyTuple::new(py, [1u32, 0])?)?;
    let capsule = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            // producers of DLPack 0.x know no `max_version`
            kwargs.del_item("max_version")?;
            obj.call_method("__dlpack__", (), Some(&kwargs))?
        }
        Err(e) => return Err(e),
    };
    import_capsule(&capsule)
}

/// NumPy's type string of an element type (`__cuda_array_interface__`'s `typestr`).
pub fn typestr(d: DType) -> &'static str {
    match d {
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::F16 => "<f2",
        // NumPy has no bf16: two opaque bytes, which bf16-aware consumers reinterpret
        DType::BF16 => "<V2",
        DType::C32 => "<c8",
        DType::C64 => "<c16",
        DType::B8 => "|b1",
        DType::U8 => "|u1",
        DType::S16 => "<i2",
        DType::U16 => "<u2",
        DType::S32 => "<i4",
        DType::U32 => "<u4",
        DType::S64 => "<i8",
        DType::U64 => "<u8",
    }
}

/// A DLPack export of an array kept for as long as its Python array lives: the memory that
/// `__array_interface__` and `__cuda_array_interface__` point consumers at (the array's own,
/// or the copy the export had to make), and the stream it was ordered for.
pub struct Pinned {
    tensor: std::ptr::NonNull<dl::DLManagedTensorVersioned>,
    stream: isize,
}

// SAFETY: the tensor is only read (its shape, strides and address) and deleted once, from
// `Drop`; DLPack deleters may run on any thread.
unsafe impl Send for Pinned {}
// SAFETY: as above; a shared `Pinned` only reads the tensor.
unsafe impl Sync for Pinned {}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: a live tensor from `to_dlpack_for_stream`, deleted once, here.
        unsafe {
            let t = self.tensor.as_ptr();
            if let Some(d) = (*t).deleter {
                d(t)
            }
        }
    }
}

/// Byte strides of the first `ndim` dimensions of a layout given in elements: what the array
/// interfaces (NumPy's and CUDA's) take. Dimensions of size 1 get the stride a dense
/// Fortran-order array would have there (any value is right for them; this one keeps
/// consumers' contiguity checks simple).
pub fn interface_strides(shape: &[u64], strides: &[i64], itemsize: usize) -> Vec<i64> {
    let mut dense = itemsize as i64;
    shape
        .iter()
        .zip(strides)
        .map(|(&n, &s)| {
            let b = if n == 1 { dense } else { s * itemsize as i64 };
            dense *= n.max(1) as i64;
            b
        })
        .collect()
}

/// `__array_interface__` (host memory, `cuda` unset) or `__cuda_array_interface__` (version
/// 3, CUDA memory) of an array whose Python view has shape `shape`: the export's address and
/// its own strides, so a view is described as it is, without a copy. What DLPack copies is
/// copied here too (a view with negative steps, bool bytes other than 0 and 1); the copy is
/// kept in `pinned`, alive as long as the Python array. On CUDA the export is ordered for
/// emberfire's current stream, which the interface names: the consumer waits for it.
pub fn array_interface(
    py: Python<'_>,
    array: &AnyArray,
    shape: &[u64],
    pinned: &std::sync::Mutex<Option<Pinned>>,
    cuda: bool,
) -> PyResult<PyObject> {
    let backend = each!(array, x, T => x.get_backend());
    let name = if cuda { "__cuda_array_interface__" } else { "__array_interface__" };
    let on_cuda = backend == Backend::CUDA;
    if on_cuda != cuda {
        let (here, other) = if on_cuda {
            ("CUDA memory", "use __cuda_array_interface__, __dlpack__ or to_numpy() (a copy)")
        } else {
            ("host memory", "use __array_interface__ or __dlpack__")
        };
        return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "{name}: the array is in {here}; {other}"
        )));
    }
    if !cuda && array.dims().elements() == 0 {
        // no memory to point at: NumPy then takes `__array__`, which makes an empty array
        return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "{name}: the array has no elements"
        )));
    }
    let stream = if cuda {
        let device = each!(array, x, T => x.get_device_id());
        let s = emberfire::cuda::current_stream(device).map_err(to_py)? as isize;
        // the null stream is the legacy default stream, 1 in the protocol
        if s == 0 {
            1
        } else {
            s
        }
    } else {
        -1
    };
    let mut guard = pinned.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_none_or(|p| p.stream != stream) {
        // SAFETY: -1, or emberfire's current stream of the array's device, which lives as
        // long as the context.
        let t = each!(array, x, T => unsafe { dlpack::to_dlpack_for_stream(x, stream) })
            .map_err(to_py)?;
        *guard = Some(Pinned { tensor: t, stream });
    }
    let pin = guard.as_ref().expect("set above");
    // SAFETY: a live tensor (kept by `pinned`) with four shape and stride entries.
    let (ptr, strides) = unsafe {
        let dl = &(*pin.tensor.as_ptr()).dl_tensor;
        let strides: Vec<i64> = std::slice::from_raw_parts(dl.strides, 4).to_vec();
        (dl.data as usize + dl.byte_offset as usize, strides)
    };
    let size = each!(array, x, T => x.get_type().size());
    let d = PyDict::new(py);
    d.set_item("shape", PyTuple::new(py, shape)?)?;
    d.set_item("typestr", typestr(array.dtype()))?;
    // host views are read-only: emberfire arrays are values, which lazy expressions may
    // still read
    d.set_item("data", (ptr, !cuda))?;
    d.set_item("version", 3)?;
    d.set_item("strides", PyTuple::new(py, interface_strides(shape, &strides, size))?)?;
    if cuda {
        // never 0, which would mean "no stream" (see above)
        d.set_item("stream", stream)?;
    }
    Ok(d.into_any().unbind())
}

/// A stream argument as the DLPack protocol's integer: `None`, an int (a raw `CUstream`
/// handle, or 1, 2, -1 as the protocol says), or any object with `__cuda_stream__` (CuPy,
/// PyTorch, Numba, cuda.core and emberfire streams), whose handle it gives.
pub fn stream_arg(stream: Option<&Bound<'_, PyAny>>) -> PyResult<Option<isize>> {
    let Some(s) = stream else { return Ok(None) };
    if s.is_none() {
        return Ok(None);
    }
    if let Ok(v) = s.extract::<isize>() {
        return Ok(Some(v));
    }
    if s.hasattr("__cuda_stream__")? {
        let got = s.call_method0("__cuda_stream__")?;
        let (version, handle): (i64, Bound<'_, PyAny>) = got.extract().map_err(|_| {
            PyTypeError::new_err("__cuda_stream__ must return a tuple (version, handle)")
        })?;
        if version != 0 {
            return Err(PyValueError::new_err(format!(
                "__cuda_stream__ returned version {version}; emberfire reads version 0"
            )));
        }
        // a handle is an address (as large as `usize`), or one of the protocol's small values
        let handle = match handle.extract::<isize>() {
            Ok(h) => h,
            Err(_) => handle.extract::<usize>()? as isize,
        };
        return Ok(Some(handle));
    }
    Err(PyTypeError::new_err(format!(
        "a stream is an int (a CUstream handle) or an object with __cuda_stream__, not {}",
        s.get_type().name()?
    )))
}

/// The address of an array's first element, as a DLPack consumer sees it (evaluates the array;
/// no copy, no lock).
pub fn data_ptr(array: &AnyArray) -> PyResult<usize> {
    each!(array, x, T => {
        // SAFETY: no stream is named.
        let t = unsafe { dlpack::to_dlpack_for_stream(x, -1) }.map_err(to_py)?;
        // SAFETY: a live tensor, deleted once after reading its address.
        unsafe {
            let dl = &(*t.as_ptr()).dl_tensor;
            let p = dl.data as usize + dl.byte_offset as usize;
            ((*t.as_ptr()).deleter.expect("emberfire's tensors have a deleter"))(t.as_ptr());
            Ok(p)
        }
    })
}
