//! Export: an array's memory as a DLPack tensor, kept alive until the consumer's deleter runs.

use std::ffi::c_void;
use std::ptr::NonNull;

use dlpack_ffi::{
    DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
};

use super::dtype::dl_data_type;
use super::stream;
use crate::array::Array;
use crate::backend::{BackendKind, Buffer};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::dtype::HasAfEnum;
use crate::error::{Error, Result};
use crate::jit::{BinOp, Data, Expr, Node};
use crate::storage::{BoolByte, HostVec};
use std::sync::Arc;

/// What an exported tensor keeps alive: the buffer (one more reference to it, so emberfire
/// neither frees, reuses nor writes it in place), and the shape and strides the tensor points
/// at. Boxed, so those arrays do not move.
pub(super) struct ExportCtx {
    pub(super) data: Data,
    pub(super) dims: crate::Dim4,
    shape: [i64; 4],
    strides: [i64; 4],
    /// The consumer stream the tensor was exported for, if a default stream (see the module
    /// documentation on deleters).
    default_stream: Option<isize>,
}

impl Drop for ExportCtx {
    fn drop(&mut self) {
        if let (Some(s), Buffer::Cuda(m)) = (self.default_stream, self.data.buffer()) {
            // The buffer's reuse waits for what the consumer queued on its stream. A failure
            // means the context is gone (process exit): nothing is left to order.
            // SAFETY: a default stream lives as long as the context.
            let _ = unsafe { stream::emberfire_waits("deleter", m, s) };
        }
    }
}

/// The device a tensor of `array`'s memory is on: `kDLCPU` 0 on the CPU backend, `kDLCUDA` and
/// the CUDA ordinal on CUDA (what Python's `__dlpack_device__` returns).
///
/// ```
/// use emberfire::{dim4, dlpack, Array, Backend};
/// let a = Array::new(&[1u8], dim4!(1));
/// let d = dlpack::dlpack_device(&a);
/// if a.get_backend() == Backend::CPU {
///     assert_eq!((d.device_type, d.device_id), (dlpack::ffi::DLDeviceType::kDLCPU, 0));
/// }
/// ```
pub fn dlpack_device<T: HasAfEnum>(array: &Array<T>) -> DLDevice {
    match array.node().backend {
        BackendKind::Cpu => DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
        // the backend holds the CUDA ordinal, which is what DLPack's device id is
        BackendKind::Cuda(d) => {
            DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: d as i32 }
        }
    }
}

/// `node != false`: the bool array with every byte that is not zero made 1, as DLPack
/// consumers read bools (they may treat a byte of 2 as neither true nor false).
fn normalised_bools(node: &Arc<Node>) -> Arc<Node> {
    let zero = Node::lazy(
        DType::B8,
        Dim4::new(&[1, 1, 1, 1]),
        node.backend,
        Expr::Scalar(HostVec::B8(vec![BoolByte(0)])),
    );
    let n = Node::lazy(
        DType::B8,
        node.dims,
        node.backend,
        Expr::Binary(BinOp::Neq, node.clone(), zero),
    );
    debug_assert!(n.has_clean_bools());
    n
}

/// Whether the bytes of a host bool array's elements are all 0 or 1 (scanning the span of
/// memory its layout covers: a superset of its elements for a gapped view). `false` for
/// device memory, which is not read here.
fn host_bools_clean(data: &Data, dims: Dim4) -> bool {
    let Buffer::Host(h) = data.buffer() else { return false };
    if dims.elements() == 0 {
        return true;
    }
    let reach = |pick: fn(i64) -> i64| -> i64 {
        (0..4).map(|k| pick(data.strides[k]) * (dims[k] as i64 - 1)).sum()
    };
    let first = data.offset as i64 + reach(|s| s.min(0));
    let last = data.offset as i64 + reach(|s| s.max(0));
    let bytes = h.as_bytes();
    match (usize::try_from(first), usize::try_from(last)) {
        (Ok(a), Ok(b)) if b < bytes.len() => bytes[a..=b].iter().all(|&x| x <= 1),
        _ => false,
    }
}

/// Evaluates `array` and describes its memory: the context to keep, and the tensor over it.
fn describe<T: HasAfEnum>(
    func: &str,
    array: &Array<T>,
    consumer_stream: isize,
) -> Result<(Box<ExportCtx>, DLTensor)> {
    if array.is_sparse() {
        return Err(Error::Exchange(format!(
            "{func}: a sparse array has no DLPack form; convert it with `sparse_to_dense` first"
        )));
    }
    stream::check_value(func, consumer_stream)?;
    let dims = array.dims();
    let node = array.node();
    let is_bool = T::DTYPE == DType::B8;
    let mut data = if is_bool && !node.has_clean_bools() && node.backend != BackendKind::Cpu {
        // Device bytes are not read back to check them: one kernel computes `!= 0` (fused
        // with the array's own expression when it is lazy).
        normalised_bools(node).try_eval()?
    } else {
        node.try_eval()?
    };
    if is_bool && node.backend == BackendKind::Cpu && !node.has_clean_bools() {
        if host_bools_clean(&data, dims) {
            node.mark_clean_bools();
        } else {
            data = normalised_bools(node).try_eval()?;
        }
    }
    if data.strides.iter().any(|&s| s < 0) {
        // Some consumers refuse negative strides: a flipped view leaves as a copy.
        data = array.copy().node().try_eval()?;
    }
    let d = dims.get();
    let ndim = d.iter().rposition(|&x| x != 1).map_or(1, |i| i + 1);
    let size = T::DTYPE.size();
    let (device, base) = match data.buffer() {
        Buffer::Host(h) => (
            DLDevice { device_type: DLDeviceType::kDLCPU, device_id: 0 },
            h.as_bytes().as_ptr() as usize,
        ),
        Buffer::Cuda(m) => {
            // SAFETY: the caller of the public function vouches for the stream.
            unsafe { stream::consumer_waits(func, m, consumer_stream) }?;
            (
                DLDevice { device_type: DLDeviceType::kDLCUDA, device_id: m.ordinal() as i32 },
                m.ptr() as usize,
            )
        }
    };
    // A tensor of no elements has no memory: DLPack asks for a null pointer.
    let ptr = if array.elements() == 0 { 0 } else { base + data.offset * size };
    let mut ctx = Box::new(ExportCtx {
        data,
        dims,
        shape: std::array::from_fn(|k| d[k] as i64),
        strides: [0; 4],
        default_stream: stream::is_default(consumer_stream).then_some(consumer_stream),
    });
    ctx.strides = ctx.data.strides;
    if !matches!(ctx.data.buffer(), Buffer::Cuda(_)) {
        ctx.default_stream = None;
    }
    let tensor = DLTensor {
        data: ptr as *mut c_void,
        device,
        ndim: ndim as i32,
        dtype: dl_data_type(T::DTYPE),
        shape: ctx.shape.as_mut_ptr(),
        strides: ctx.strides.as_mut_ptr(),
        byte_offset: 0,
    };
    Ok((ctx, tensor))
}

/// Whether `deleter` is emberfire's versioned deleter (a tensor emberfire exported).
pub(super) fn is_own_versioned(
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
) -> bool {
    deleter.is_some_and(|f| f as *const () == delete_versioned as *const ())
}

/// Whether `deleter` is emberfire's legacy deleter.
pub(super) fn is_own_legacy(deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>) -> bool {
    deleter.is_some_and(|f| f as *const () == delete_legacy as *const ())
}

unsafe extern "C" fn delete_versioned(t: *mut DLManagedTensorVersioned) {
    if t.is_null() {
        return;
    }
    // SAFETY: `t` and its context are the boxes `to_dlpack_for_stream` leaked; DLPack's
    // contract is that the deleter runs once, so they are rebuilt and dropped once.
    unsafe {
        let t = Box::from_raw(t);
        drop(Box::from_raw(t.manager_ctx as *mut ExportCtx));
    }
}

unsafe extern "C" fn delete_legacy(t: *mut DLManagedTensor) {
    if t.is_null() {
        return;
    }
    // SAFETY: as in `delete_versioned`, for `to_dlpack_legacy_for_stream`'s boxes.
    unsafe {
        let t = Box::from_raw(t);
        drop(Box::from_raw(t.manager_ctx as *mut ExportCtx));
    }
}

/// The array as a DLPack 1.x tensor (`DLManagedTensorVersioned`) over its own memory, for a
/// consumer that reads it on the legacy default stream (on CUDA; on the CPU nothing needs
/// ordering). The caller owns the tensor and must call its deleter exactly once (from any
/// thread), or hand it to a consumer that will ([`from_dlpack`](super::from_dlpack), a Python
/// capsule). Lazy arrays are evaluated first; see the module documentation for layouts and
/// ownership.
///
/// ```
/// use emberfire::{dim4, dlpack, Array};
/// let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(3, 2));
/// let t = dlpack::to_dlpack(&a).unwrap();
/// // SAFETY: a live tensor from `to_dlpack`; its deleter runs once, below.
/// unsafe {
///     let dl = &(*t.as_ptr()).dl_tensor;
///     assert_eq!((dl.ndim, *dl.shape, *dl.shape.add(1)), (2, 3, 2));
///     assert_eq!((*dl.strides, *dl.strides.add(1)), (1, 3)); // column-major
///     assert_eq!(*(dl.data as *const i32).add(4), 5);
///     ((*t.as_ptr()).deleter.unwrap())(t.as_ptr());
/// }
/// ```
pub fn to_dlpack<T: HasAfEnum>(array: &Array<T>) -> Result<NonNull<DLManagedTensorVersioned>> {
    // SAFETY: the legacy default stream exists as long as the context.
    unsafe { to_dlpack_for_stream(array, stream::LEGACY_DEFAULT) }
}

/// Like [`to_dlpack`], for a consumer that reads the tensor on `stream` (on CUDA, that stream
/// waits for the work that wrote the array; `-1` orders nothing; see the module
/// documentation for the values).
///
/// # Safety
///
/// On CUDA, `stream` is `-1`, `1`, `2`, or a live stream of the array's device's primary
/// context.
///
/// ```
/// use emberfire::{dim4, dlpack, Array};
/// let a = Array::new(&[1.0f64, 2.0], dim4!(2));
/// // SAFETY: no stream is named.
/// let t = unsafe { dlpack::to_dlpack_for_stream(&a, -1) }.unwrap();
/// // SAFETY: the tensor's deleter, run once.
/// unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
/// ```
pub unsafe fn to_dlpack_for_stream<T: HasAfEnum>(
    array: &Array<T>,
    stream: isize,
) -> Result<NonNull<DLManagedTensorVersioned>> {
    let (ctx, dl_tensor) = describe("to_dlpack", array, stream)?;
    let managed = Box::new(DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 0 },
        manager_ctx: Box::into_raw(ctx) as *mut c_void,
        deleter: Some(delete_versioned),
        flags: 0,
        dl_tensor,
    });
    Ok(NonNull::from(Box::leak(managed)))
}

/// The array as a legacy DLPack tensor (`DLManagedTensor`, DLPack before 1.0: no version, no
/// flags), for consumers that know no other; otherwise as [`to_dlpack`].
///
/// ```
/// use emberfire::{dim4, dlpack, Array};
/// let a = Array::new(&[true, false], dim4!(2));
/// let t = dlpack::to_dlpack_legacy(&a).unwrap();
/// // SAFETY: a tensor from `to_dlpack_legacy`, given to the matching import.
/// let b: Array<bool> = unsafe { dlpack::from_dlpack_legacy(t, None) }.unwrap();
/// assert_eq!(b.to_vec(), vec![true, false]);
/// ```
pub fn to_dlpack_legacy<T: HasAfEnum>(array: &Array<T>) -> Result<NonNull<DLManagedTensor>> {
    // SAFETY: the legacy default stream exists as long as the context.
    unsafe { to_dlpack_legacy_for_stream(array, stream::LEGACY_DEFAULT) }
}

/// Like [`to_dlpack_legacy`], for a consumer that reads the tensor on `stream` (see
/// [`to_dlpack_for_stream`]).
///
/// # Safety
///
/// As for [`to_dlpack_for_stream`].
///
/// ```
/// use emberfire::{dim4, dlpack, Array};
/// let a = Array::new(&[7u16], dim4!(1));
/// // SAFETY: no stream is named.
/// let t = unsafe { dlpack::to_dlpack_legacy_for_stream(&a, -1) }.unwrap();
/// // SAFETY: the tensor's deleter, run once.
/// unsafe { ((*t.as_ptr()).deleter.unwrap())(t.as_ptr()) };
/// ```
pub unsafe fn to_dlpack_legacy_for_stream<T: HasAfEnum>(
    array: &Array<T>,
    stream: isize,
) -> Result<NonNull<DLManagedTensor>> {
    let (ctx, dl_tensor) = describe("to_dlpack_legacy", array, stream)?;
    let managed = Box::new(DLManagedTensor {
        dl_tensor,
        manager_ctx: Box::into_raw(ctx) as *mut c_void,
        deleter: Some(delete_legacy),
    });
    Ok(NonNull::from(Box::leak(managed)))
}
