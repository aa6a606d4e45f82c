//! Import: a producer's DLPack tensor as an array over the producer's memory, which keeps the
//! producer alive (and calls its deleter once) until the last array using it drops.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use dlpack_ffi::{
    DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLTensor,
    DLPACK_FLAG_BITMASK_READ_ONLY,
};

use super::dtype::dtype_of;
use super::export::{is_own_legacy, is_own_versioned, ExportCtx};
use super::stream;
use crate::array::Array;
use crate::backend::cpu::host_table::borrow_host;
use crate::backend::{BackendKind, Buffer};
use crate::device::with_active;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::error::{Error, Result};
use crate::jit::{Data, Node};
use crate::storage::HostVec;

/// The producer of imported memory: dropping it calls the tensor's deleter, once.
pub(super) struct Producer {
    tensor: *mut c_void,
    release: unsafe fn(*mut c_void),
    read_only: bool,
}

// SAFETY: DLPack deleters may be called from any thread (the protocol requires it), and the
// pointer is only used to call it, once, from `Drop`.
unsafe impl Send for Producer {}
// SAFETY: a shared `Producer` gives access to nothing but `read_only`.
unsafe impl Sync for Producer {}

impl Drop for Producer {
    fn drop(&mut self) {
        // SAFETY: `tensor` is the managed tensor this producer was made for, whose deleter has
        // not run: only this drop runs it.
        unsafe { (self.release)(self.tensor) }
    }
}

/// The two managed tensor structures, seen the same way.
trait Managed {
    /// The import function, for messages.
    const FUNC: &'static str;
    /// Calls the deleter, if any.
    ///
    /// # Safety
    /// `p` is a live managed tensor of this type whose deleter has not run.
    unsafe fn release(p: *mut c_void);
    /// The tensor, flags, and emberfire's own context if emberfire exported it.
    ///
    /// # Safety
    /// `p` is a live managed tensor of this type.
    unsafe fn parts<'a>(p: *mut Self) -> Result<(&'a DLTensor, u64, Option<&'a ExportCtx>)>;
}

impl Managed for DLManagedTensorVersioned {
    const FUNC: &'static str = "from_dlpack";

    unsafe fn release(p: *mut c_void) {
        let t = p as *mut DLManagedTensorVersioned;
        // SAFETY: the caller's contract; reading `deleter` is allowed whatever the version.
        if let Some(d) = unsafe { (*t).deleter } {
            // SAFETY: the deleter of this tensor, run once.
            unsafe { d(t) }
        }
    }

    unsafe fn parts<'a>(p: *mut Self) -> Result<(&'a DLTensor, u64, Option<&'a ExportCtx>)> {
        // SAFETY: the caller's contract.
        let t = unsafe { &*p };
        if t.version.major != 1 {
            return Err(Error::Exchange(format!(
                "from_dlpack: the tensor is of DLPack {}.{}; emberfire reads DLPack 1.x",
                t.version.major, t.version.minor
            )));
        }
        // SAFETY: our deleter means our context.
        let own =
            is_own_versioned(t.deleter).then(|| unsafe { &*(t.manager_ctx as *const ExportCtx) });
        Ok((&t.dl_tensor, t.flags, own))
    }
}

impl Managed for DLManagedTensor {
    const FUNC: &'static str = "from_dlpack_legacy";

    unsafe fn release(p: *mut c_void) {
        let t = p as *mut DLManagedTensor;
        // SAFETY: the caller's contract.
        if let Some(d) = unsafe { (*t).deleter } {
            // SAFETY: the deleter of this tensor, run once.
            unsafe { d(t) }
        }
    }

    unsafe fn parts<'a>(p: *mut Self) -> Result<(&'a DLTensor, u64, Option<&'a ExportCtx>)> {
        // SAFETY: the caller's contract.
        let t = unsafe { &*p };
        // SAFETY: our deleter means our context.
        let own =
            is_own_legacy(t.deleter).then(|| unsafe { &*(t.manager_ctx as *const ExportCtx) });
        Ok((&t.dl_tensor, 0, own))
    }
}

/// Takes a DLPack 1.x tensor as an array over its memory (see the module documentation for
/// layouts, ownership and streams). The tensor is consumed whatever the outcome: on an error
/// its deleter has run. With `producer_stream` (on CUDA), everything emberfire does with the
/// memory waits for the work queued on that stream so far; `None` means the producer's work
/// is already complete or ordered before emberfire's stream (as the Python protocol's
/// `__dlpack__(stream=...)` arranges).
///
/// Errors ([`Error::Exchange`]): an element type other than `T`'s, one emberfire does not
/// have, more than four dimensions, a device emberfire does not drive or that does not exist.
///
/// i8 tensors (`kDLInt` of 8 bits: NumPy's and PyTorch's `int8`), a type emberfire lacks,
/// import as `Array<i16>`: a lazy cast that reads the producer's bytes where they are and
/// widens them with their sign, fused into whatever reads it (no copy of the tensor first;
/// evaluating the array itself stores the i16 values and lets the tensor go).
///
/// A tensor in host memory becomes an array of the CPU backend and a CUDA tensor an array of
/// its own CUDA device, whichever backend and device are active: operations on it run there,
/// and mixing it with arrays of another backend or device is an error that says how to move
/// one ([`Array::to_backend`], [`Array::to_device`]).
///
/// # Safety
///
/// `tensor` is a live managed tensor whose deleter has not run, describing memory that holds
/// its elements, stays valid until its deleter runs, and is not written by others while arrays
/// use it (unless ordered with `producer_stream`). On CUDA, `producer_stream` is `-1`, `1`,
/// `2` or a live stream of the primary context of the tensor's device.
///
/// ```
/// use emberfire::{dim4, dlpack, Array};
/// // A row-major 2x3 tensor made by hand: it imports as a strided view of `values`.
/// static DELETED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// unsafe extern "C" fn deleter(_: *mut dlpack::ffi::DLManagedTensorVersioned) {
///     DELETED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
/// }
/// let mut values = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let (mut shape, mut strides) = ([2i64, 3], [3i64, 1]);
/// let mut t = dlpack::ffi::DLManagedTensorVersioned {
///     version: dlpack::ffi::DLPackVersion { major: 1, minor: 0 },
///     manager_ctx: std::ptr::null_mut(),
///     deleter: Some(deleter),
///     flags: 0,
///     dl_tensor: dlpack::ffi::DLTensor {
///         data: values.as_mut_ptr().cast(),
///         device: dlpack::ffi::DLDevice {
///             device_type: dlpack::ffi::DLDeviceType::kDLCPU,
///             device_id: 0,
///         },
///         ndim: 2,
///         dtype: dlpack::dl_data_type(emberfire::DType::F64),
///         shape: shape.as_mut_ptr(),
///         strides: strides.as_mut_ptr(),
///         byte_offset: 0,
///     },
/// };
/// // SAFETY: `values` outlives the array, which is dropped below.
/// let a: Array<f64> = unsafe { dlpack::from_dlpack((&mut t).into(), None) }.unwrap();
/// assert_eq!(a.dims(), dim4!(2, 3));
/// assert_eq!(a.to_vec(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]); // column-major read-out
/// drop(a);
/// assert_eq!(DELETED.load(std::sync::atomic::Ordering::SeqCst), 1);
/// ```
pub unsafe fn from_dlpack<T: HasAfEnum>(
    tensor: NonNull<DLManagedTensorVersioned>,
    producer_stream: Option<isize>,
) -> Result<Array<T>> {
    // SAFETY: the caller's contract.
    unsafe { import(tensor.as_ptr(), producer_stream) }
}

/// Like [`from_dlpack`], for a legacy tensor (`DLManagedTensor`, DLPack before 1.0), which
/// carries no read-only flag: emberfire may write it in place, as DLPack 0.x allowed.
///
/// # Safety
///
/// As for [`from_dlpack`].
///
/// ```
/// use emberfire::{dim4, dlpack, Array};
/// let a = Array::new(&[1u64, 2, 3], dim4!(3));
/// let t = dlpack::to_dlpack_legacy(&a).unwrap();
/// // SAFETY: a live tensor from `to_dlpack_legacy`.
/// let b: Array<u64> = unsafe { dlpack::from_dlpack_legacy(t, None) }.unwrap();
/// assert_eq!(b.to_vec(), vec![1, 2, 3]);
/// ```
pub unsafe fn from_dlpack_legacy<T: HasAfEnum>(
    tensor: NonNull<DLManagedTensor>,
    producer_stream: Option<isize>,
) -> Result<Array<T>> {
    // SAFETY: the caller's contract.
    unsafe { import(tensor.as_ptr(), producer_stream) }
}

fn err<X>(func: &str, why: String) -> Result<X> {
    Err(Error::Exchange(format!("{func}: {why}")))
}

/// A readable name of a DLPack device type.
fn device_name(t: DLDeviceType) -> String {
    let name = match t {
        DLDeviceType::kDLOpenCL => "OpenCL",
        DLDeviceType::kDLVulkan => "Vulkan",
        DLDeviceType::kDLMetal => "Metal",
        DLDeviceType::kDLROCM => "ROCm",
        DLDeviceType::kDLROCMHost => "ROCm host memory",
        DLDeviceType::kDLOneAPI => "oneAPI",
        DLDeviceType::kDLWebGPU => "WebGPU",
        _ => "an unknown device",
    };
    format!("{name} (DLPack device type {})", t.0)
}

/// The backend a tensor of `tensor`'s device is read on, whatever the active one: host memory
/// (`kDLCPU`, CUDA's pinned `kDLCUDAHost`) is read by the CPU backend, CUDA memory (`kDLCUDA`,
/// `kDLCUDAManaged`) by the CUDA backend on the tensor's own device. Operations on the array
/// then run where it lives, as for every array.
fn backend_for(func: &str, tensor: &DLTensor) -> Result<BackendKind> {
    let dev = tensor.device;
    match dev.device_type {
        DLDeviceType::kDLCPU | DLDeviceType::kDLCUDAHost => Ok(BackendKind::Cpu),
        DLDeviceType::kDLCUDA | DLDeviceType::kDLCUDAManaged => {
            let count = crate::backend::devices::cuda_device_count().map_err(|e| {
                Error::Exchange(format!(
                    "{func}: the tensor is on CUDA device {} but CUDA is not available here \
                     ({e})",
                    dev.device_id
                ))
            })?;
            match usize::try_from(dev.device_id) {
                Ok(ord) if ord < count => Ok(BackendKind::Cuda(ord)),
                _ => err(
                    func,
                    format!(
                        "the tensor is on CUDA device {}, which does not exist here ({count} \
                         CUDA devices)",
                        dev.device_id
                    ),
                ),
            }
        }
        other => err(func, format!("emberfire has no backend for {}", device_name(other))),
    }
}

/// The shape and strides of `t`, in elements, padded to four dimensions.
///
/// # Safety
///
/// `t`'s shape and strides point at `ndim` values (strides may be null: row-major).
unsafe fn layout(func: &str, t: &DLTensor) -> Result<([u64; 4], [i64; 4])> {
    let ndim = t.ndim;
    if !(0..=4).contains(&ndim) {
        return err(
            func,
            format!("the tensor has {ndim} dimensions; emberfire arrays have at most 4"),
        );
    }
    let ndim = ndim as usize;
    let shape: &[i64] = if ndim == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }
    };
    let mut dims = [1u64; 4];
    for (k, &s) in shape.iter().enumerate() {
        if s < 0 {
            return err(func, format!("dimension {k} has negative size {s}"));
        }
        dims[k] = s as u64;
    }
    let mut strides = [0i64; 4];
    if ndim > 0 && !t.strides.is_null() {
        // SAFETY: the caller's contract.
        strides[..ndim].copy_from_slice(unsafe { std::slice::from_raw_parts(t.strides, ndim) });
    } else {
        // row-major (C order), what a null stride pointer meant before DLPack 1.2
        let mut s = 1i64;
        for k in (0..ndim).rev() {
            strides[k] = s;
            s = s.saturating_mul(shape[k].max(1));
        }
    }
    // dimensions past the tensor's: contiguous after the last, for a layout that reads as
    // dense when the tensor is
    let mut next = (0..ndim).map(|k| strides[k].saturating_mul(dims[k] as i64)).max().unwrap_or(1);
    for stride in strides.iter_mut().skip(ndim) {
        *stride = next.max(1);
        next = *stride;
    }
    Ok((dims, strides))
}

/// The span of memory a strided layout reads: the offset of element 0 from the lowest address
/// read, and the number of elements from there to the highest, or `None` on overflow.
fn span(dims: &[u64; 4], strides: &[i64; 4]) -> Option<(usize, usize)> {
    let (mut lo, mut hi) = (0i128, 0i128);
    for k in 0..4 {
        let reach = strides[k] as i128 * (dims[k] as i128 - 1);
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let extent = usize::try_from(hi - lo + 1).ok()?;
    Some((usize::try_from(-lo).ok()?, extent))
}

/// The import itself: an i8 tensor asked for as i16 through its bytes, any other as `T`.
///
/// # Safety
///
/// As for [`from_dlpack`].
unsafe fn import<T: HasAfEnum, M: Managed>(
    tensor: *mut M,
    producer_stream: Option<isize>,
) -> Result<Array<T>> {
    let i8_tensor = T::DTYPE == DType::S16
        // SAFETY: the caller's contract; `parts` only reads the tensor (an error here is
        // reported by the import below, which also releases the tensor)
        && matches!(unsafe { M::parts(tensor) }, Ok((t, _, _)) if is_i8(t.dtype));
    if i8_tensor {
        // SAFETY: the caller's contract.
        let bytes = unsafe { import_elements::<u8, M>(tensor, producer_stream, true) }?;
        return Ok(sign_extended(&bytes).cast::<T>());
    }
    // SAFETY: the caller's contract.
    unsafe { import_elements::<T, M>(tensor, producer_stream, false) }
}

/// Whether a DLPack element type is i8.
fn is_i8(t: dlpack_ffi::DLDataType) -> bool {
    t.code as u32 == dlpack_ffi::DLDataTypeCode::kDLInt.0 && t.bits == 8 && t.lanes == 1
}

/// The i8 values whose bytes `bytes` holds, as i16: flipping the sign bit and subtracting 128
/// maps the bytes 0..=127 to themselves and 128..=255 to -128..=-1.
fn sign_extended(bytes: &Array<u8>) -> Array<i16> {
    (bytes.cast::<i16>() ^ 128i16) - 128i16
}

/// The import of a tensor of `T` elements (of its bytes as `u8`, when `i8_bytes` says that the
/// tensor holds i8); `producer` drops (running the deleter) on every early return.
///
/// # Safety
///
/// As for [`from_dlpack`].
unsafe fn import_elements<T: HasAfEnum, M: Managed>(
    tensor: *mut M,
    producer_stream: Option<isize>,
    i8_bytes: bool,
) -> Result<Array<T>> {
    let func = M::FUNC;
    let mut producer =
        Producer { tensor: tensor as *mut c_void, release: M::release, read_only: false };
    // SAFETY: the caller's contract.
    let (t, flags, own) = unsafe { M::parts(tensor) }?;
    let dtype = if i8_bytes {
        DType::U8
    } else {
        dtype_of(t.dtype).map_err(|e| match e {
            Error::Exchange(m) => Error::Exchange(m.replacen("dtype_of", func, 1)),
            e => e,
        })?
    };
    if dtype != T::DTYPE {
        return err(
            func,
            format!("the tensor holds {dtype:?} elements, not {:?} as asked", T::DTYPE),
        );
    }
    if let Some(ctx) = own {
        // emberfire's own export: the original buffer, layout and backend, and the tensor
        // goes (its context's reference to the buffer with it).
        let backend = match ctx.data.buffer() {
            Buffer::Host(_) => BackendKind::Cpu,
            Buffer::Cuda(m) => BackendKind::Cuda(m.ordinal()),
        };
        let node = Node::ready(T::DTYPE, ctx.dims, backend, ctx.data.clone());
        // an exported bool array holds 0 and 1 only (the export normalises it)
        node.mark_clean_bools();
        drop(producer);
        return Ok(Array::from_node(node));
    }
    let kind = backend_for(func, t)?;
    if let Some(s) = producer_stream {
        stream::check_value(func, s)?;
    }
    // SAFETY: the caller's contract.
    let (d, strides) = unsafe { layout(func, t) }?;
    let dims = Dim4::new(&d);
    let n = d.iter().try_fold(1u64, |a, &x| a.checked_mul(x));
    if n == Some(0) {
        // no elements, no memory to share
        drop(producer);
        return with_active(kind, || Array::try_from_host(HostVec::try_zeros(T::DTYPE, 0)?, dims));
    }
    let size = T::DTYPE.size();
    let Some((offset, extent)) = span(&d, &strides).filter(|&(_, e)| e.checked_mul(size).is_some())
    else {
        return err(func, format!("the layout (shape {d:?}, strides {strides:?}) overflows"));
    };
    let first = (t.data as usize).wrapping_add(t.byte_offset as usize);
    let base = first.wrapping_sub(offset * size);
    if t.data.is_null() {
        return err(func, "the tensor has elements but a null data pointer".into());
    }
    producer.read_only = flags & DLPACK_FLAG_BITMASK_READ_ONLY as u64 != 0;
    let aligned = base % std::mem::align_of::<T>() == 0;
    let clean_bools: bool;
    let buf = match kind {
        BackendKind::Cpu => {
            // SAFETY: the caller's contract: the tensor's elements, which the span covers.
            let bytes = unsafe { std::slice::from_raw_parts(base as *const u8, extent * size) };
            let valid_bools = T::DTYPE != crate::DType::B8 || bytes.iter().all(|&b| b <= 1);
            clean_bools = T::DTYPE == crate::DType::B8 && valid_bools;
            if aligned && valid_bools {
                let read_only = producer.read_only;
                // SAFETY: aligned, initialised elements (bools checked), valid until the
                // producer's deleter runs, which dropping `producer` does.
                unsafe { borrow_host::<T>(base as *mut T, extent, Box::new(producer), read_only) }
            } else {
                let h = HostVec::try_from_bytes(T::DTYPE, bytes)?;
                drop(producer);
                Buffer::host(h)
            }
        }
        BackendKind::Cuda(ord) => {
            if !aligned {
                return err(
                    func,
                    format!(
                        "the device address {base:#x} is not aligned for {:?} elements",
                        T::DTYPE
                    ),
                );
            }
            // Device bytes are not read back to check them: a CUDA bool tensor is taken to
            // hold 0 and 1, as every producer's bools do.
            clean_bools = T::DTYPE == crate::DType::B8;
            let dev = crate::backend::native::device(ord)?;
            let read_only = producer.read_only;
            // SAFETY: the caller's contract: device memory of the tensor's device valid while
            // the producer lives, whose deleter runs when the memory's last array drops.
            let mem = unsafe {
                dev.memory().borrow(base as u64, extent * size, Arc::new(producer), read_only)
            };
            if let Some(s) = producer_stream {
                // SAFETY: the caller vouches for the stream.
                unsafe { stream::emberfire_waits(func, &mem, s) }?;
            }
            Buffer::Cuda(mem)
        }
    };
    let data = Data { buf: Arc::new(buf), offset, strides };
    let node = Node::ready(T::DTYPE, dims, kind, data);
    if clean_bools {
        node.mark_clean_bools();
    }
    Ok(Array::from_node(node))
}
