//! Matrix products on CUDA with cuBLAS.
//!
//! Why these choices:
//! - **Loaded at run time.** cuBLAS is opened with `dlopen` (cudarc's `dynamic-loading`) the
//!   first time a product runs on CUDA, from the loader's path or the places
//!   [`loader`](super::vendor::loader) searches (toolkits, NVIDIA's wheels, `$EMBERFIRE_CUBLAS`).
//!   When it is missing, or too old to have an entry point, the product returns
//!   [`Error::BackendUnavailable`] saying so; nothing panics, and nothing else needs cuBLAS.
//! - **One handle per device**, created on first use and kept for the process (like the
//!   devices themselves), bound to emberfire's stream for that device, so products are ordered
//!   with every other kernel and copy without synchronisation. A mutex serialises the short,
//!   asynchronous calls that use it.
//! - **The workspace comes from emberfire's pool.** Each call takes a workspace block from the
//!   device's memory manager and returns it right after queueing the product. The pool reuses
//!   blocks in stream order, so the next user of the block runs after the product; the memory
//!   is counted, cached and collected like any other, and cuBLAS allocates nothing beside the
//!   pool (by default it would keep its own workspace, invisible to `device_mem_info` and to
//!   out-of-memory recovery).
//! - **One routine for every type**: `cublasGemmEx` (one matrix) and
//!   `cublasGemmStridedBatchedEx` (batches) with the element type as a parameter: f32, f64,
//!   c32, c64, and f16 and bf16 with f32 accumulation. f32 and c32 compute in full precision unless
//!   [`set_tf32`] allows TF32 tensor cores (arrayfire-rust's `set_cublas_mode`).
//! - **Operands are read where they are** when their rows or columns are contiguous (cuBLAS's
//!   `lda`), including transposed storage and broadcast batches (batch stride 0). Anything
//!   else (other strides, a conjugate without a transpose, which cuBLAS cannot express) is
//!   gathered into a dense copy by a generated kernel first.
//! - **Batches**: one strided-batched call when the batch dimensions 2 and 3 of every operand
//!   collapse into one stride, else one call per index of dimension 3.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::cublas::result as blas_result;
use cudarc::cublas::sys as cb;
use cudarc::driver::sys::CUstream;

use super::runtime::{self, Device};
use super::vendor::loader::{self, Dependencies, First, Library, OnPath, Places};
use super::vendor::search::Search;
use crate::backend::blas::{GemmParams, MatArg};
use crate::backend::Buffer;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::program::Step;
use crate::jit::{Data, Instr, Program, UnOp};
use crate::sync::lock;

static TF32: AtomicBool = AtomicBool::new(false);

/// Allows (or forbids, the default) TF32 tensor cores for f32 and c32 products.
pub(crate) fn set_tf32(allowed: bool) {
    TF32.store(allowed, Ordering::Relaxed);
}

/// Whether TF32 is allowed.
pub(crate) fn tf32() -> bool {
    TF32.load(Ordering::Relaxed)
}

/// cuBLAS, which cudarc binds, as the loader makes it loadable when it is not on the loader's
/// path. It loads cublasLt by name: that is opened from the same place first.
static CUBLAS: Library = Library {
    name: "cuBLAS",
    wanted: "cuBLAS (libcublas.so.13 or .12)",
    needed_for: Some("matrix products"),
    install: "the CUDA toolkit's cuBLAS",
    prefix: "CUDA: ",
    missing_symbol_hint: " (too old?)",
    search: Search {
        stem: "cublas",
        override_var: "EMBERFIRE_CUBLAS",
        wheel_dirs: &["cu13/lib", "cublas/lib", "cu12/lib"],
    },
    majors: &["13", "12"],
    on_path: OnPath::Cudarc,
    first: First::LoaderPath,
    places: Places::Toolkits,
    dependencies: Dependencies::Companions(&["libcublasLt.so"]),
    global: false,
};

/// Makes cuBLAS loadable once per process, or says why it is not.
fn load_cublas() -> Result<(), Error> {
    static LOADED: OnceLock<Result<(), Error>> = OnceLock::new();
    LOADED.get_or_init(|| loader::make_loadable(&CUBLAS)).clone()
}

/// The text of a failed cuBLAS call.
fn blas_error(doing: &str, status: cb::cublasStatus_t) -> Error {
    Error::Driver(format!("cuBLAS {doing}: {status:?}"))
}

/// A device's cuBLAS handle and the settings last given to it.
pub(crate) struct Handle {
    raw: cb::cublasHandle_t,
    stream: CUstream,
    tf32: bool,
}

// SAFETY: a cuBLAS handle may be used from any thread; the mutex around it makes uses
// exclusive.
unsafe impl Send for Handle {}

/// The cuBLAS entry points emberfire calls. They are looked up when the handle is made, so a
/// library too old to have one is reported as an error, not met as a panic inside cudarc at
/// its first call.
const ENTRY_POINTS: [&str; 6] = [
    "cublasCreate_v2",
    "cublasSetStream_v2",
    "cublasSetMathMode",
    "cublasSetWorkspace_v2",
    "cublasGemmEx",
    "cublasGemmStridedBatchedEx",
];

impl Handle {
    /// Creates a handle on `dev` (whose context is current), bound to its stream, in full
    /// precision.
    fn create(dev: &Device) -> Result<Handle, Error> {
        // SAFETY: `culib` opens the library `load_cublas` found; looking a symbol up runs
        // nothing.
        let lib = unsafe { cb::culib() };
        let missing = |n: &str| {
            // SAFETY: looking a symbol up runs nothing; the address is only tested, not used.
            unsafe { lib.get::<*const c_void>(n.as_bytes()) }.is_err()
        };
        if let Some(name) = ENTRY_POINTS.iter().find(|n| missing(n)) {
            return Err(Error::BackendUnavailable(format!(
                "CUDA: the cuBLAS library found has no `{name}` (too old?)"
            )));
        }
        let raw = blas_result::create_handle().map_err(|e| blas_error("creating a handle", e.0))?;
        let mut h = Handle { raw, stream: std::ptr::null_mut(), tf32: true };
        h.prepare(dev.stream_raw(), false)?;
        Ok(h)
    }

    /// Binds the handle to `stream` and sets the math mode, where they changed.
    fn prepare(&mut self, stream: CUstream, tf32: bool) -> Result<(), Error> {
        if self.stream != stream {
            // SAFETY: the handle is live and the stream belongs to its device's context.
            unsafe { blas_result::set_stream(self.raw, stream as cb::cudaStream_t) }
                .map_err(|e| blas_error("binding the stream", e.0))?;
            self.stream = stream;
        }
        if self.tf32 != tf32 {
            let mode = if tf32 {
                cb::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH
            } else {
                cb::cublasMath_t::CUBLAS_DEFAULT_MATH
            };
            // SAFETY: the handle is live.
            unsafe { cb::cublasSetMathMode(self.raw, mode) }
                .result()
                .map_err(|e| blas_error("setting the math mode", e.0))?;
            self.tf32 = tf32;
        }
        Ok(())
    }
}

/// The cuBLAS handle of `dev`, created on first use.
fn handle(dev: &'static Device) -> Result<&'static Mutex<Handle>, Error> {
    load_cublas()?;
    dev.handles().cublas(|| {
        dev.bind()?;
        // A library without an entry point cudarc needs panics inside cudarc: report it.
        match catch_unwind(AssertUnwindSafe(|| Handle::create(dev))) {
            Ok(r) => r,
            Err(_) => Err(Error::BackendUnavailable(
                "CUDA: the cuBLAS library found lacks entry points emberfire needs (too \
                 old?)"
                    .into(),
            )),
        }
    })
}

/// Whether products can run on device `ordinal`: cuBLAS is loaded and the device's handle
/// exists (created here on first use).
pub(crate) fn available(ordinal: usize) -> Result<(), Error> {
    handle(runtime::device(ordinal)?).map(|_| ())
}

/// Workspace bytes per call: what NVIDIA recommends for Hopper and later, and cuBLAS's own
/// default elsewhere.
fn workspace_bytes(dev: &Device) -> usize {
    if dev.compute_capability().0 >= 9 {
        32 << 20
    } else {
        4 << 20
    }
}

/// cuBLAS's element type, compute type, and the scalars' bytes (in the compute type) for a
/// product of `p.dtype`.
fn types(p: &GemmParams, tf32: bool) -> (cb::cudaDataType, cb::cublasComputeType_t, [Vec<u8>; 2]) {
    use cb::cublasComputeType_t::*;
    use cb::cudaDataType::*;
    let f32_compute = if tf32 { CUBLAS_COMPUTE_32F_FAST_TF32 } else { CUBLAS_COMPUTE_32F };
    let bytes =
        |dt: DType| [p.alpha.cast(dt).as_bytes().to_vec(), p.beta.cast(dt).as_bytes().to_vec()];
    match p.dtype {
        DType::F32 => (CUDA_R_32F, f32_compute, bytes(DType::F32)),
        DType::C32 => (CUDA_C_32F, f32_compute, bytes(DType::C32)),
        DType::F64 => (CUDA_R_64F, CUBLAS_COMPUTE_64F, bytes(DType::F64)),
        DType::C64 => (CUDA_C_64F, CUBLAS_COMPUTE_64F, bytes(DType::C64)),
        // f16 storage, f32 accumulation and f32 scalars
        DType::F16 => (CUDA_R_16F, CUBLAS_COMPUTE_32F, bytes(DType::F32)),
        // bf16 storage, f32 accumulation (tensor cores on sm_80 and later) and f32 scalars:
        // the result is rounded to bf16 once, as the CPU's product does
        DType::BF16 => (CUDA_R_16BF, CUBLAS_COMPUTE_32F, bytes(DType::F32)),
        other => unreachable!("internal error: matrix product of {} arrays", other.name()),
    }
}

/// An operand as cuBLAS reads it: a column-major matrix at `ptr` with leading dimension `ld`,
/// used through `op`, with an element stride per batch dimension (0 when broadcast).
struct Operand {
    ptr: u64,
    op: cb::cublasOperation_t,
    ld: i64,
    batch_strides: [i64; 2],
    /// A gathered copy the operand reads, kept until the product is queued.
    _copy: Option<Data>,
}

/// `op` and `ld` for reading `x` where it is, if cuBLAS can.
fn in_place(x: &MatArg, complex: bool) -> Option<(cb::cublasOperation_t, i64)> {
    use cb::cublasOperation_t::*;
    let (r, c) = (x.dims[0] as i64, x.dims[1] as i64);
    let [s0, s1, ..] = x.data.strides;
    let conj = x.conj && complex;
    // Stored column-major: element (i, j) at i + j*ld.
    if (r <= 1 || s0 == 1) && (c <= 1 || s1 >= r.max(1)) {
        let ld = if c <= 1 { r.max(1) } else { s1 };
        let op = match (x.trans, conj) {
            (false, false) => CUBLAS_OP_N,
            (true, false) => CUBLAS_OP_T,
            (true, true) => CUBLAS_OP_C,
            (false, true) => return None,
        };
        return Some((op, ld));
    }
    // Stored row-major: the transpose Y (c×r) is column-major with ld = s0, and op(X) is
    // op'(Y) with the transposition flipped.
    if (c <= 1 || s1 == 1) && (r <= 1 || s0 >= c.max(1)) {
        let ld = if r <= 1 { c.max(1) } else { s0 };
        let op = match (x.trans, conj) {
            (false, false) => CUBLAS_OP_T,
            (true, false) => CUBLAS_OP_N,
            (false, true) => CUBLAS_OP_C,
            (true, true) => return None,
        };
        return Some((op, ld));
    }
    None
}

/// The device address of a buffer.
fn buffer_ptr(buf: &Buffer) -> u64 {
    match buf {
        Buffer::Cuda(m) => m.ptr(),
        Buffer::Host(_) => unreachable!("internal error: host buffer in a CUDA product"),
    }
}

/// The device address of element 0 of `data`, whose elements have `size` bytes.
fn data_ptr(data: &Data, size: usize) -> u64 {
    buffer_ptr(data.buffer()) + (data.offset * size) as u64
}

impl Operand {
    fn new(ordinal: usize, x: &MatArg, dtype: DType) -> Result<Operand, Error> {
        let size = dtype.size();
        let batch = |data: &Data| {
            std::array::from_fn(|i| if x.dims[2 + i] == 1 { 0 } else { data.strides[2 + i] })
        };
        let strides: [i64; 2] = batch(&x.data);
        if let Some((op, ld)) = in_place(x, dtype.is_complex()) {
            if strides.iter().all(|&s| s >= 0) {
                let ptr = data_ptr(&x.data, size);
                return Ok(Operand { ptr, op, ld, batch_strides: strides, _copy: None });
            }
        }
        // Gather a dense copy (conjugated when cuBLAS cannot conjugate this operand).
        let conj_now = x.conj && dtype.is_complex() && !x.trans;
        let mut steps = vec![Step { instr: Instr::Input(x.data.clone()), dtype, dims: x.dims }];
        if conj_now {
            steps.push(Step { instr: Instr::Unary(UnOp::Conjg, 0), dtype, dims: x.dims });
        }
        let program = Program { outputs: vec![steps.len() - 1], steps, dims: x.dims };
        let copy = super::launch::run(ordinal, &program)?.pop().expect("one output");
        let dense = Data::dense(Buffer::Cuda(copy), x.dims);
        let arg = MatArg { data: dense, dims: x.dims, trans: x.trans, conj: x.conj && !conj_now };
        let (op, ld) = in_place(&arg, dtype.is_complex()).expect("a dense copy is column-major");
        let batch_strides = batch(&arg.data);
        let ptr = data_ptr(&arg.data, size);
        Ok(Operand { ptr, op, ld, batch_strides, _copy: Some(arg.data) })
    }
}

/// How the batches of a product are issued: `calls` calls of `count` products each, call `i`
/// starting at element offsets `i * step` of A, B and C, its products `stride` elements apart.
#[derive(Debug, PartialEq, Eq)]
struct BatchPlan {
    calls: usize,
    step: [i64; 3],
    count: usize,
    stride: [i64; 3],
}

impl BatchPlan {
    /// The plan for result batches `[b2, b3]`, A's and B's batch strides (0 where broadcast)
    /// and `mn` elements per result matrix (C is dense).
    fn new([b2, b3]: [usize; 2], sa: [i64; 2], sb: [i64; 2], mn: i64) -> BatchPlan {
        // Dimensions 2 and 3 form one run of equally spaced batches when one of them is 1, or
        // when each operand's dimension-3 stride is its dimension-2 stride times b2.
        let collapses = |s: [i64; 2]| b2 == 1 || b3 == 1 || s[1] == s[0] * b2 as i64;
        if collapses(sa) && collapses(sb) {
            let stride = |s: [i64; 2]| if b2 == 1 { s[1] } else { s[0] };
            BatchPlan {
                calls: 1,
                step: [0; 3],
                count: b2 * b3,
                stride: [stride(sa), stride(sb), mn],
            }
        } else {
            let step = [sa[1], sb[1], mn * b2 as i64];
            BatchPlan { calls: b3, step, count: b2, stride: [sa[0], sb[0], mn] }
        }
    }
}

/// A size as cuBLAS's 32-bit integer, or an error naming it.
fn int(what: &str, v: i64) -> Result<i32, Error> {
    i32::try_from(v).map_err(|_| {
        Error::Driver(format!("cuBLAS: {what} = {v} is beyond the 32-bit sizes cuBLAS takes"))
    })
}

/// Computes `C = alpha * op(A) op(B) + beta * C` on device `ordinal` into `c` (dense, owned)
/// or a new buffer.
pub(crate) fn gemm(
    ordinal: usize,
    a: &MatArg,
    b: &MatArg,
    c: Option<Buffer>,
    p: &GemmParams,
) -> Result<Buffer, Error> {
    super::kernel::nvrtc::trace_event(|| {
        format!("product of {} x {} x {} ({:?})", p.m, p.n, p.k, p.dtype)
    });
    if let Some(shape) = super::skinny::shape(a, b, p) {
        return super::skinny::gemm(ordinal, shape, a, b, c, p);
    }
    let dev = runtime::device(ordinal)?;
    let handle = handle(dev)?;
    dev.bind()?;
    let size = p.dtype.size();
    let (a, b) = (Operand::new(ordinal, a, p.dtype)?, Operand::new(ordinal, b, p.dtype)?);
    let read_c = c.is_some() && !p.beta_is_zero();
    let out = match c {
        Some(buf) => buf,
        None => Buffer::Cuda(dev.memory().alloc(p.out_len().saturating_mul(size).max(1))?),
    };
    let out_ptr = buffer_ptr(&out);
    let tf32 = tf32();
    let (dtype, compute, [alpha, beta]) = types(p, tf32);
    let zero = vec![0u8; beta.len()];
    let beta = if read_c { beta } else { zero };
    let (m, n, k) = (int("m", p.m as i64)?, int("n", p.n as i64)?, int("k", p.k as i64)?);
    let (lda, ldb) = (int("lda", a.ld)?, int("ldb", b.ld)?);
    let mn = (p.m * p.n) as i64;
    let workspace = dev.memory().alloc(workspace_bytes(dev))?;

    let mut h = lock(handle);
    h.prepare(dev.stream_raw(), tf32)?;
    // SAFETY: the workspace is live device memory of this device, at least as large as given;
    // it stays allocated until the calls below are queued, and the pool orders its next use
    // after them on this stream.
    unsafe { cb::cublasSetWorkspace_v2(h.raw, workspace.ptr() as *mut c_void, workspace.len()) }
        .result()
        .map_err(|e| blas_error("setting the workspace", e.0))?;

    // One call: `count` products whose operands are `stride` elements apart, starting at
    // element offsets `base` of A, B and C.
    let call = |base: [i64; 3], count: usize, stride: [i64; 3]| -> Result<(), Error> {
        let ptr = |p0: u64, off: i64| (p0 as i64 + off * size as i64) as u64 as *const c_void;
        let (pa, pb) = (ptr(a.ptr, base[0]), ptr(b.ptr, base[1]));
        let pc = ptr(out_ptr, base[2]) as *mut c_void;
        let alg = cb::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT;
        let (al, be) = (alpha.as_ptr() as *const c_void, beta.as_ptr() as *const c_void);
        // SAFETY: every pointer addresses device memory of this device holding the elements
        // the sizes, leading dimensions and strides describe (checked by the callers' shapes
        // and kept alive until queued); the scalars are host values of the compute type.
        let status = unsafe {
            if count == 1 {
                cb::cublasGemmEx(
                    h.raw, a.op, b.op, m, n, k, al, pa, dtype, lda, pb, dtype, ldb, be, pc, dtype,
                    m, compute, alg,
                )
            } else {
                cb::cublasGemmStridedBatchedEx(
                    h.raw,
                    a.op,
                    b.op,
                    m,
                    n,
                    k,
                    al,
                    pa,
                    dtype,
                    lda,
                    stride[0],
                    pb,
                    dtype,
                    ldb,
                    stride[1],
                    be,
                    pc,
                    dtype,
                    m,
                    stride[2],
                    int("batch count", count as i64)?,
                    compute,
                    alg,
                )
            }
        };
        status.result().map_err(|e| blas_error("multiplying matrices", e.0))
    };

    let plan = BatchPlan::new(p.batch, a.batch_strides, b.batch_strides, mn);
    let result = (0..plan.calls as i64).try_for_each(|i| {
        let base = plan.step.map(|s| i * s);
        call(base, plan.count, plan.stride)
    });
    drop(h);
    // Returned to the pool only now that the calls are queued (also when one failed).
    drop(workspace);
    result.map(|()| out)
}

/// Runs `f` with device `dev`'s cuBLAS handle, bound to the current stream and given a
/// workspace from the pool that is returned once `f`'s calls are queued (for routines other
/// than the products here, such as the triangular solves of the linear algebra functions).
pub(crate) fn with_handle<R>(
    dev: &'static Device,
    f: impl FnOnce(cb::cublasHandle_t) -> Result<R, Error>,
) -> Result<R, Error> {
    let handle = handle(dev)?;
    dev.bind()?;
    let workspace = dev.memory().alloc(workspace_bytes(dev))?;
    let mut h = lock(handle);
    h.prepare(dev.stream_raw(), tf32())?;
    // SAFETY: as in `gemm`: live memory of this device, returned to the pool only after the
    // calls are queued, and reused in stream order.
    unsafe { cb::cublasSetWorkspace_v2(h.raw, workspace.ptr() as *mut c_void, workspace.len()) }
        .result()
        .map_err(|e| blas_error("setting the workspace", e.0))?;
    let result = f(h.raw);
    drop(h);
    drop(workspace);
    result
}

impl crate::backend::blas::Blas for super::Cuda {
    fn blas_available(&self) -> Result<(), Error> {
        available(self.ordinal)
    }

    fn gemm(
        &self,
        a: &MatArg,
        b: &MatArg,
        c: Option<Buffer>,
        p: &GemmParams,
    ) -> Result<Buffer, Error> {
        debug_assert!(p.m > 0 && p.n > 0 && p.k > 0 && p.batch.iter().all(|&x| x > 0));
        gemm(self.ordinal, a, b, c, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dim4::Dim4;
    use crate::storage::HostVec;
    use cb::cublasOperation_t::*;

    fn arg(dims: [u64; 4], strides: [i64; 4], trans: bool, conj: bool) -> MatArg {
        let buf = std::sync::Arc::new(Buffer::Host(HostVec::zeros(DType::C32, 0)));
        MatArg { data: Data { buf, offset: 0, strides }, dims: Dim4::new(&dims), trans, conj }
    }

    #[test]
    fn operands_are_read_in_place_when_rows_or_columns_are_contiguous() {
        let cases = [
            // dense columns: op as asked, ld = rows
            ([4, 3, 1, 1], [1, 4, 12, 12], false, false, true, Some((CUBLAS_OP_N, 4))),
            ([4, 3, 1, 1], [1, 4, 12, 12], true, true, true, Some((CUBLAS_OP_C, 4))),
            // padded columns
            ([4, 3, 1, 1], [1, 9, 27, 27], true, false, true, Some((CUBLAS_OP_T, 9))),
            // a conjugate without a transpose cannot be read from columns
            ([4, 3, 1, 1], [1, 4, 12, 12], false, true, true, None),
            // ... but is, for real types, the matrix itself
            ([4, 3, 1, 1], [1, 4, 12, 12], false, true, false, Some((CUBLAS_OP_N, 4))),
            // contiguous rows: the transpose of a column-major matrix with ld = row stride
            ([4, 3, 1, 1], [3, 1, 12, 12], false, false, true, Some((CUBLAS_OP_T, 3))),
            ([4, 3, 1, 1], [5, 1, 20, 20], true, false, true, Some((CUBLAS_OP_N, 5))),
            ([4, 3, 1, 1], [3, 1, 12, 12], false, true, true, Some((CUBLAS_OP_C, 3))),
            ([4, 3, 1, 1], [3, 1, 12, 12], true, true, true, None),
            // neither rows nor columns contiguous
            ([4, 3, 1, 1], [2, 9, 27, 27], false, false, true, None),
            // overlapping rows are not a matrix cuBLAS can read
            ([4, 3, 1, 1], [1, 2, 12, 12], false, false, true, None),
            // vectors: any stride along a size-1 dimension
            ([4, 1, 1, 1], [1, 0, 4, 4], false, false, true, Some((CUBLAS_OP_N, 4))),
            ([1, 4, 1, 1], [0, 3, 12, 12], true, false, true, Some((CUBLAS_OP_T, 3))),
            ([4, 1, 1, 1], [3, 0, 12, 12], true, false, true, Some((CUBLAS_OP_N, 3))),
            ([1, 1, 1, 1], [7, 7, 7, 7], false, false, true, Some((CUBLAS_OP_N, 1))),
        ];
        for (dims, strides, trans, conj, complex, want) in cases {
            let got = in_place(&arg(dims, strides, trans, conj), complex);
            assert_eq!(got, want, "dims {dims:?} strides {strides:?} trans {trans} conj {conj}");
        }
    }

    #[test]
    fn batches_collapse_into_one_call_where_strides_allow() {
        let mn = 6;
        // no batches, or batches along one dimension: one call
        let one = |count, sa, sb| BatchPlan { calls: 1, step: [0; 3], count, stride: [sa, sb, mn] };
        assert_eq!(BatchPlan::new([1, 1], [0, 0], [0, 0], mn), one(1, 0, 0));
        assert_eq!(BatchPlan::new([5, 1], [12, 0], [0, 0], mn), one(5, 12, 0));
        assert_eq!(BatchPlan::new([1, 4], [0, 12], [20, 20], mn), one(4, 12, 20));
        // dense batches along both dimensions, or a fully broadcast operand: one call
        assert_eq!(BatchPlan::new([3, 2], [12, 36], [0, 0], mn), one(6, 12, 0));
        // padded dimension 3, or an operand batched along one dimension only: one call per
        // index of dimension 3
        let per_d3 = BatchPlan::new([3, 2], [12, 40], [20, 60], mn);
        assert_eq!(
            per_d3,
            BatchPlan { calls: 2, step: [40, 60, 18], count: 3, stride: [12, 20, mn] }
        );
        let mixed = BatchPlan::new([3, 2], [0, 12], [20, 0], mn);
        assert_eq!(mixed, BatchPlan { calls: 2, step: [12, 0, 18], count: 3, stride: [0, 20, mn] });
    }
}
