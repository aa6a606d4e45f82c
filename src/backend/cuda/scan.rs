//! Scans on a CUDA device: the handwritten kernels of `kernels/scan.cu`, specialised for one input,
//! output and key type and one operation by a short generated header, compiled once through
//! the device's kernel cache, and launched on the device's stream.
//!
//! Which kernels run depends on the shape only (so results are the same on every run):
//! - a line (the elements one scan runs along) that is contiguous in the output (`inner == 1`)
//!   and short, or one of many: a warp per line (`ef_scan_rows_warp`);
//! - contiguous lines that are long and few: three phases over tiles of 2048 elements (reduce
//!   each tile, scan each line's tile totals into carries, rescan each tile from its carry);
//! - lines along a strided dimension (`inner > 1`): a thread per line, consecutive threads on
//!   consecutive lines so that reads are coalesced; when lines are few and long, each is cut
//!   into blocks of rows and the same three phases run (`ef_scan_cols_*`).
//!
//! The input and the keys are read in place through their offsets and strides.

use super::codegen::storage_type;
use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey, KernelParam};
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::backend::scan::BinaryOp;
use crate::backend::scan::ScanSpec;
use crate::backend::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Data;
use crate::jit::Node;
use std::sync::Arc;

/// The kernels' text, after the generated header.
const KERNELS: &str = include_str!("kernels/scan.cu");

/// Threads per block of the scan kernels (`EF_TPB` in `scan.cu`; the summed-area kernels have their own).
const TPB: u32 = 256;
/// Elements per tile of the tile kernels (`EF_TILE`).
const TILE: i64 = 2048;
/// Contiguous lines longer than this, when there are fewer than `MANY_LINES` of them, are
/// scanned in tiles; shorter or more numerous ones by a warp each.
const WARP_LINE_MAX: i64 = 2048;
const MANY_LINES: i64 = 8192;
/// Threads the column kernels aim for when they cut lines into blocks of rows.
const COL_THREADS: i64 = 1 << 18;
/// The fewest rows in a block of a column scan.
const COL_MIN_ROWS: i64 = 32;

/// An array the scan reads: evaluated data and its element type.
pub(crate) struct Input<'a> {
    pub data: &'a Data,
    pub dtype: DType,
}

impl Input<'_> {
    fn ptr(&self) -> u64 {
        match self.data.buffer() {
            Buffer::Cuda(m) => m.ptr() + (self.data.offset * self.dtype.size()) as u64,
            Buffer::Host(_) => unreachable!("internal error: host buffer in a CUDA scan"),
        }
    }

    /// Strides in elements, 0 along dimensions of size 1.
    fn strides(&self, dims: Dim4) -> [i64; 4] {
        std::array::from_fn(|k| if dims[k] == 1 { 0 } else { self.data.strides[k] })
    }
}

/// The kernels' one parameter; the layout matches `struct ScanArgs` in `scan.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct ScanArgs {
    input: u64,
    keys: u64,
    out: u64,
    part: u64,
    carry: u64,
    part_flag: u64,
    dims: [i64; 4],
    in_st: [i64; 4],
    key_st: [i64; 4],
    lines: i64,
    len: i64,
    inner: i64,
    blocks: i64,
    block_len: i64,
    dim: i32,
    inclusive: i32,
}

// SAFETY: 8-byte fields, then two 4-byte ones that fill a word: no padding.
unsafe impl KernelParam for ScanArgs {}

/// Scans `input` (shape `dims`) on device `ordinal` into a new dense buffer of `out` elements.
pub(crate) fn scan(
    ordinal: usize,
    dims: Dim4,
    input: Input,
    keys: Option<Input>,
    spec: ScanSpec,
    out: DType,
) -> Result<DeviceMem, Error> {
    let dev = runtime::device(ordinal)?;
    let n = dims.elements() as i64;
    let result = dev.memory().alloc((n as usize * out.size()).max(1))?;
    if n == 0 {
        return Ok(result);
    }
    let k = kernels(dev, input.dtype, out, keys.as_ref().map(|k| k.dtype), spec.op)?;
    let d = spec.dim;
    let inner: i64 = (0..d).map(|k| dims[k] as i64).product();
    let len = dims[d] as i64;
    let lines = n / len;
    let mut a = ScanArgs {
        input: input.ptr(),
        keys: keys.as_ref().map_or(0, |k| k.ptr()),
        out: result.ptr(),
        dims: std::array::from_fn(|k| dims[k] as i64),
        in_st: input.strides(dims),
        key_st: keys.as_ref().map_or([0; 4], |k| k.strides(dims)),
        lines,
        len,
        inner,
        dim: d as i32,
        inclusive: spec.inclusive as i32,
        ..ScanArgs::default()
    };
    let acc = acc_size(out) as i64;
    // Temporary tile or block totals and carries; dropped (returned to the stream-ordered
    // pool) once the kernels that use them are queued.
    let mut temps: Vec<DeviceMem> = Vec::new();
    let mut with_partials = |a: &mut ScanArgs, count: i64| -> Result<(), Error> {
        let bytes = (count * acc) as usize;
        for (slot, size) in
            [(&mut a.part, bytes), (&mut a.carry, bytes), (&mut a.part_flag, count as usize)]
        {
            let m = dev.memory().alloc(size.max(1))?;
            *slot = m.ptr();
            temps.push(m);
        }
        Ok(())
    };
    let grid_1d = |threads: i64| -> u32 {
        grid_stride_blocks(threads.max(0) as u64, TPB, dev.sm_count(), 32)
    };
    if inner == 1 {
        if len <= WARP_LINE_MAX || lines >= MANY_LINES {
            launch(dev, &k.rows_warp, (grid_1d(lines * 32), 1, 1), &mut a)?;
        } else {
            a.blocks = ceil_div(len, TILE);
            let count = lines * a.blocks;
            with_partials(&mut a, count)?;
            let gy = lines.min(65535) as u32;
            let gx = a.blocks.min(1 << 20) as u32;
            launch(dev, &k.tiles_reduce, (gx, gy, 1), &mut a)?;
            launch(dev, &k.tiles_carry, (lines.min(1 << 20) as u32, 1, 1), &mut a)?;
            launch(dev, &k.tiles_apply, (gx, gy, 1), &mut a)?;
        }
    } else {
        let want = ceil_div(COL_THREADS, lines).max(1);
        let blocks = want.min(ceil_div(len, COL_MIN_ROWS)).max(1);
        a.block_len = ceil_div(len, blocks);
        a.blocks = ceil_div(len, a.block_len);
        if a.blocks > 1 {
            let count = lines * a.blocks;
            with_partials(&mut a, count)?;
            launch(dev, &k.cols_reduce, (grid_1d(lines * (a.blocks - 1)), 1, 1), &mut a)?;
            launch(dev, &k.cols_carry, (grid_1d(lines), 1, 1), &mut a)?;
        }
        launch(dev, &k.cols_apply, (grid_1d(lines * a.blocks), 1, 1), &mut a)?;
    }
    drop(temps);
    Ok(result)
}

/// Threads of the summed-area kernels' blocks (`EF_SAT_TPB`).
const SAT_TPB: u32 = 256;
/// Consecutive elements of dimension 0 a thread of the summed-area kernels owns (`EF_SAT_EPT`);
/// a warp's 32 times as many are its chunk.
const SAT_EPT: i64 = 4;
/// Indices of dimension 1 in a strip of the summed-area kernels: fewer strips make fewer
/// carries to sum between the passes, more leave multiprocessors idle (a 4096 x 4096 f32
/// image on an H100: 0.1099, 0.0983, 0.0917 and 0.1059 ms for strips of 8, 16, 32 and 64).
const SAT_STRIP: i64 = 32;
/// Groups of strips `ef_sat_carries` sums in parallel (`EF_SAT_GROUPS`).
const SAT_GROUPS: u32 = 16;

/// The summed-area table of each image of `input`: running sums along dimensions 0 and 1 in
/// `out`, in three launches that read the image twice and write it once (see `scan.cu`).
/// Integer sums wrap in `out`; floating sums accumulate in f64 and are rounded once.
pub(crate) fn summed_area(
    ordinal: usize,
    dims: Dim4,
    input: Input,
    out: DType,
) -> Result<DeviceMem, Error> {
    let dev = runtime::device(ordinal)?;
    let n = dims.elements() as i64;
    let result = dev.memory().alloc((n as usize * out.size()).max(1))?;
    if n == 0 {
        return Ok(result);
    }
    let k = kernels(dev, input.dtype, out, None, BinaryOp::ADD)?;
    let sat = k.sat.as_ref().expect("sum kernels include the summed-area table's");
    let (w, h) = (dims[0] as i64, dims[1] as i64);
    let images = dims[2] as i64 * dims[3] as i64;
    let size = input.dtype.size() as i64;
    // a thread's elements read `vec` at a time (`EF_SAT_VEC`: 16 bytes, at most its elements)
    let vec = (16 / size).min(SAT_EPT);
    let in_st = input.strides(dims);
    // wide reads where every row starts on a boundary of `vec` elements and the input is
    // contiguous along dimension 0
    let bytes = (vec * size) as u64;
    let aligned = input.ptr().is_multiple_of(bytes)
        && (in_st[0] == 1 || w == 1)
        && (1..4).all(|d| dims[d] == 1 || (in_st[d] * size) % bytes as i64 == 0);
    let strip = sat_strip();
    let strips = ceil_div(h, strip);
    let chunks = ceil_div(w, 32 * SAT_EPT);
    // a row of the strips' sums: the positions', then their chunks'
    let ld = w + chunks;
    let mut a = ScanArgs {
        input: input.ptr(),
        out: result.ptr(),
        dims: std::array::from_fn(|k| dims[k] as i64),
        in_st,
        lines: images,
        inner: ld,
        blocks: strips,
        block_len: strip,
        inclusive: aligned as i32,
        ..ScanArgs::default()
    };
    // the strips' sums and the rows' chunk totals, then (in place) their carries: dropped into
    // the stream-ordered pool once the kernels that use them are queued
    let acc = acc_size(out);
    let sums = dev.memory().alloc((images * strips * ld) as usize * acc)?;
    let chunk_totals = dev.memory().alloc((images * h * chunks) as usize * acc)?;
    a.part = sums.ptr();
    a.carry = chunk_totals.ptr();
    let x_blocks = ceil_div(w, SAT_TPB as i64 * SAT_EPT) as u32;
    let image_blocks = images.min(65_535) as u32;
    let per_strip = (x_blocks, strips.min(65_535) as u32, image_blocks);
    let carry_blocks = (ceil_div(ld, 32) + ceil_div(h, SAT_GROUPS as i64)) as u32;
    launch_block(dev, &sat[0], per_strip, (SAT_TPB, 1, 1), &mut a)?;
    launch_block(dev, &sat[1], (carry_blocks, image_blocks, 1), (32, SAT_GROUPS, 1), &mut a)?;
    launch_block(dev, &sat[2], per_strip, (SAT_TPB, 1, 1), &mut a)?;
    drop((sums, chunk_totals));
    Ok(result)
}

/// Rows the summed-area kernels take at a time (`EF_SAT_ROWS`): four of inputs of at most 4
/// bytes (f32 on an H100: 0.0917 ms against 0.0948 with two and 0.1067 with one), two of wider
/// ones (four spill registers there); `EMBERFIRE_SAT_ROWS` (1 to 8) names another for
/// measuring.
fn sat_rows(input: DType) -> u32 {
    static TUNED: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let tuned = *TUNED.get_or_init(|| {
        let v = std::env::var("EMBERFIRE_SAT_ROWS").ok()?.trim().parse::<u32>().ok()?;
        (1..=8).contains(&v).then_some(v)
    });
    tuned.unwrap_or(if input.size() <= 4 { 4 } else { 2 })
}

/// Rows in a strip of the summed-area kernels: [`SAT_STRIP`], or `EMBERFIRE_SAT_STRIP` (1 to
/// 4096) for measuring.
fn sat_strip() -> i64 {
    static TUNED: std::sync::OnceLock<Option<i64>> = std::sync::OnceLock::new();
    let tuned = *TUNED.get_or_init(|| {
        let v = std::env::var("EMBERFIRE_SAT_STRIP").ok()?.trim().parse::<i64>().ok()?;
        (1..=4096).contains(&v).then_some(v)
    });
    tuned.unwrap_or(SAT_STRIP)
}

/// `a / b` rounded up, for positive values.
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

fn launch(
    dev: &Device,
    k: &KernelFn,
    grid: (u32, u32, u32),
    a: &mut ScanArgs,
) -> Result<(), Error> {
    launch_block(dev, k, grid, (TPB, 1, 1), a)
}

fn launch_block(
    dev: &Device,
    k: &KernelFn,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    a: &mut ScanArgs,
) -> Result<(), Error> {
    let mut args = KernelArgs::with_capacity(1);
    args.value(*a);
    // SAFETY: every scan kernel takes one `ScanArgs` by value, whose layout this struct
    // matches; its pointers are the input and keys (live for the caller's borrow, and kept
    // alive by their nodes until the stream has run the kernels: memory is reused in stream
    // order), the result, and temporaries sized for `lines * blocks` entries (the summed-area
    // kernels: `lines * blocks * dims[0]` accumulators); the kernels read only the elements
    // the shape and strides describe, and `ef_sat_carries` takes the (32, SAT_GROUPS) block
    // it is written for.
    unsafe { k.launch(dev, grid, block, 0, &mut args) }
}

/// The size of the accumulator (`ef_acc`) for output type `out`.
fn acc_size(out: DType) -> usize {
    match out {
        DType::F32 | DType::F64 => 8,
        DType::C32 | DType::C64 => 16,
        t => t.size(),
    }
}

/// The compiled scan kernels for one combination of types and operation.
struct ScanKernels {
    rows_warp: KernelFn,
    tiles_reduce: KernelFn,
    tiles_carry: KernelFn,
    tiles_apply: KernelFn,
    cols_reduce: KernelFn,
    cols_carry: KernelFn,
    cols_apply: KernelFn,
    /// The summed-area table's three kernels, in launch order (unkeyed sums only).
    sat: Option<[KernelFn; 3]>,
}

fn kernels(
    dev: &Device,
    input: DType,
    out: DType,
    key: Option<DType>,
    op: BinaryOp,
) -> Result<std::sync::Arc<ScanKernels>, Error> {
    let id = [input as u8, out as u8, key.map_or(u8::MAX, |k| k as u8), op as u8];
    dev.kernels().get_or_build(KernelKey::new(Family::Scan, id), || {
        let first = dev.kernels().compile(
            dev,
            &source(input, out, key, op),
            "ef_scan_rows_warp",
            super::kernel::Origin::Own,
        )?;
        let other = |entry: &str| first.sibling(entry);
        let sat = if op == BinaryOp::ADD && key.is_none() {
            Some([other("ef_sat_strips")?, other("ef_sat_carries")?, other("ef_sat_apply")?])
        } else {
            None
        };
        Ok(ScanKernels {
            sat,
            tiles_reduce: other("ef_scan_tiles_reduce")?,
            tiles_carry: other("ef_scan_tiles_carry")?,
            tiles_apply: other("ef_scan_tiles_apply")?,
            cols_reduce: other("ef_scan_cols_reduce")?,
            cols_carry: other("ef_scan_cols_carry")?,
            cols_apply: other("ef_scan_cols_apply")?,
            rows_warp: first,
        })
    })
}

const NAN: &str = "__longlong_as_double(0x7ff8000000000000LL)";
const INF: &str = "__longlong_as_double(0x7ff0000000000000LL)";

/// The full source for one combination: the header defining the types and the operation,
/// then the kernels.
pub(crate) fn source(input: DType, out: DType, key: Option<DType>, op: BinaryOp) -> String {
    let mut s = String::with_capacity(KERNELS.len() + 2048);
    s.push_str("struct cf { float re, im; };\nstruct cd { double re, im; };\n");
    s.push_str(
        "__device__ __forceinline__ float ef_h2f(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n",
    );
    // bf16 is the top half of a float: widening it is a shift
    s.push_str(
        "__device__ __forceinline__ float ef_b2f(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }\n",
    );
    let acc = match out {
        DType::F32 | DType::F64 => "double",
        DType::C32 | DType::C64 => "cd",
        t => storage_type(t),
    };
    s += &format!(
        "typedef {} ef_in;\ntypedef {acc} ef_acc;\ntypedef {} ef_out;\ntypedef {} ef_key;\n#define KEYED {}\n#define EF_SUM {}\n",
        storage_type(input),
        storage_type(out),
        key.map_or("int", storage_type),
        key.is_some() as u8,
        (op == BinaryOp::ADD && key.is_none()) as u8
    );
    s += &format!("#define EF_SAT_ROWS {}\n", sat_rows(input));
    s += "__device__ __forceinline__ cd ef_cd(double re, double im) { cd z; z.re = re; z.im = im; return z; }\n";
    // conversions in and out
    let load = match (input, out) {
        (DType::F16, _) => "(double)ef_h2f(x)".to_string(),
        (DType::BF16, _) => "(double)ef_b2f(x)".to_string(),
        (DType::C32, _) => "ef_cd((double)x.re, (double)x.im)".to_string(),
        (DType::C64, _) => "x".to_string(),
        _ => format!("({acc})x"),
    };
    let store = match out {
        DType::F32 => "(float)a",
        DType::C32 => "ef_cf((float)a.re, (float)a.im)",
        _ => "a",
    };
    s += "__device__ __forceinline__ cf ef_cf(float re, float im) { cf z; z.re = re; z.im = im; return z; }\n";
    s += &format!("__device__ __forceinline__ ef_acc ef_load(ef_in x) {{ return {load}; }}\n");
    s += &format!("__device__ __forceinline__ ef_out ef_store(ef_acc a) {{ return {store}; }}\n");
    // the operation
    let (empty, first, apply) = op_text(out, op);
    s += &format!("__device__ __forceinline__ ef_acc ef_empty() {{ return {empty}; }}\n");
    s += &format!("__device__ __forceinline__ ef_acc ef_first() {{ return {first}; }}\n");
    s += &format!("__device__ __forceinline__ ef_acc ef_apply(ef_acc a, ef_acc b) {{ {apply} }}\n");
    // shuffles
    if acc == "cd" {
        s += "__device__ __forceinline__ cd ef_shfl_up(cd v, int d) { return ef_cd(__shfl_up_sync(0xffffffffu, v.re, d), __shfl_up_sync(0xffffffffu, v.im, d)); }\n";
        s += "__device__ __forceinline__ cd ef_shfl_idx(cd v, int l) { return ef_cd(__shfl_sync(0xffffffffu, v.re, l), __shfl_sync(0xffffffffu, v.im, l)); }\n";
        s += "__device__ __forceinline__ cd ef_shfl_xor(cd v, int m) { return ef_cd(__shfl_xor_sync(0xffffffffu, v.re, m), __shfl_xor_sync(0xffffffffu, v.im, m)); }\n";
    } else {
        s += "__device__ __forceinline__ ef_acc ef_shfl_up(ef_acc v, int d) { return __shfl_up_sync(0xffffffffu, v, d); }\n";
        s += "__device__ __forceinline__ ef_acc ef_shfl_idx(ef_acc v, int l) { return __shfl_sync(0xffffffffu, v, l); }\n";
        s += "__device__ __forceinline__ ef_acc ef_shfl_xor(ef_acc v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }\n";
    }
    s.push_str(KERNELS);
    s
}

/// The identity a run starts from, the first element of an exclusive scan, and the body of
/// `ef_apply(a, b)`, for accumulators of output type `out`.
fn op_text(out: DType, op: BinaryOp) -> (String, String, String) {
    let s = |x: &str| x.to_string();
    match out {
        DType::F32 | DType::F64 => match op {
            BinaryOp::ADD => (s("0.0"), s("0.0"), s("return a + b;")),
            BinaryOp::MUL => (s("1.0"), s("1.0"), s("return a * b;")),
            // fmin and fmax return the other operand when one is NaN
            BinaryOp::MIN => (s(NAN), s(INF), s("return fmin(a, b);")),
            BinaryOp::MAX => (s(NAN), format!("-{INF}"), s("return fmax(a, b);")),
        },
        DType::C32 | DType::C64 => {
            let nan = format!("ef_cd({NAN}, {NAN})");
            // magnitudes compare as squared norms, rounded as the CPU rounds them (no fused
            // multiply-add); NaN parts are skipped; a tie keeps `a`
            let pick = |cmp: &str| {
                format!(
                    "bool an = a.re != a.re || a.im != a.im, bn = b.re != b.re || b.im != b.im; \
                     double na = __dadd_rn(__dmul_rn(a.re, a.re), __dmul_rn(a.im, a.im)); \
                     double nb = __dadd_rn(__dmul_rn(b.re, b.re), __dmul_rn(b.im, b.im)); \
                     return (an || (!bn && nb {cmp} na)) ? b : a;"
                )
            };
            match op {
                BinaryOp::ADD => (
                    s("ef_cd(0.0, 0.0)"),
                    s("ef_cd(0.0, 0.0)"),
                    s("return ef_cd(a.re + b.re, a.im + b.im);"),
                ),
                BinaryOp::MUL => (
                    s("ef_cd(1.0, 0.0)"),
                    s("ef_cd(1.0, 0.0)"),
                    s("return ef_cd(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);"),
                ),
                BinaryOp::MIN => (nan, format!("ef_cd({INF}, 0.0)"), pick("<")),
                BinaryOp::MAX => (nan, s("ef_cd(0.0, 0.0)"), pick(">")),
            }
        }
        t => {
            let (min, max) = match t {
                DType::S32 => ("(-2147483647 - 1)", "2147483647"),
                DType::U32 => ("0u", "0xffffffffu"),
                DType::S64 => ("(-9223372036854775807LL - 1)", "9223372036854775807LL"),
                _ => ("0ull", "0xffffffffffffffffull"),
            };
            // wrapping arithmetic in the unsigned type of the same width (signed overflow is
            // undefined in C++)
            let u = if t.size() == 8 { "unsigned long long" } else { "unsigned int" };
            match op {
                BinaryOp::ADD => (s("0"), s("0"), format!("return (ef_acc)(({u})a + ({u})b);")),
                BinaryOp::MUL => (s("1"), s("1"), format!("return (ef_acc)(({u})a * ({u})b);")),
                BinaryOp::MIN => {
                    (format!("(ef_acc){max}"), format!("(ef_acc){max}"), s("return b < a ? b : a;"))
                }
                BinaryOp::MAX => {
                    (format!("(ef_acc){min}"), format!("(ef_acc){min}"), s("return b > a ? b : a;"))
                }
            }
        }
    }
}

impl crate::backend::scan::Scan for super::Cuda {
    fn summed_area(&self, values: &Arc<Node>, out: DType) -> Result<crate::backend::Buffer, Error> {
        let data = values.try_eval()?;
        let input = Input { data: &data, dtype: values.dtype };
        let mem = summed_area(self.ordinal, values.dims, input, out)?;
        Ok(crate::backend::Buffer::Cuda(mem))
    }

    fn scan(
        &self,
        values: &Arc<Node>,
        keys: Option<&Arc<Node>>,
        spec: ScanSpec,
        out: DType,
    ) -> Result<crate::backend::Buffer, Error> {
        let data = values.try_eval()?;
        let key_data = match keys {
            Some(k) => Some((k.try_eval()?, k.dtype)),
            None => None,
        };
        let input = Input { data: &data, dtype: values.dtype };
        let keys = key_data.as_ref().map(|(d, t)| Input { data: d, dtype: *t });
        let mem = scan(self.ordinal, values.dims, input, keys, spec, out)?;
        Ok(crate::backend::Buffer::Cuda(mem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination the public functions can ask for: each input type with its scan
    /// output type (`AggregateOutType`), each operation, with and without each key type.
    fn combinations() -> Vec<(DType, DType, Option<DType>, BinaryOp)> {
        let agg = |t: DType| match t {
            DType::B8 | DType::U8 | DType::U16 => DType::U32,
            DType::S16 => DType::S32,
            DType::F16 | DType::BF16 => DType::F32,
            t => t,
        };
        let keys = [None, Some(DType::S32), Some(DType::U32), Some(DType::S64), Some(DType::U64)];
        let ops = [BinaryOp::ADD, BinaryOp::MUL, BinaryOp::MIN, BinaryOp::MAX];
        let mut v = Vec::new();
        for t in DType::ALL {
            for op in ops {
                for k in keys {
                    v.push((t, agg(t), k, op));
                }
            }
        }
        v
    }

    /// The generated header defines what `scan.cu` uses, for every combination. When
    /// `EMBERFIRE_DUMP_SCAN_CU` names a directory, one source per input type and operation
    /// (keyed by i64, the widest key) is written there, for an offline NVRTC check.
    #[test]
    fn sources_define_everything_the_kernels_use() {
        let dump = std::env::var_os("EMBERFIRE_DUMP_SCAN_CU").map(std::path::PathBuf::from);
        for (t, o, k, op) in combinations() {
            let src = source(t, o, k, op);
            for name in [
                "ef_in;",
                "ef_acc;",
                "ef_out;",
                "ef_key;",
                "ef_load(",
                "ef_store(",
                "ef_empty()",
                "ef_first()",
                "ef_apply(",
                "ef_shfl_up(",
                "ef_shfl_idx(",
                "ef_shfl_xor(",
            ] {
                assert!(src.contains(name), "{} -> {} {op:?}: no {name}", t.name(), o.name());
            }
            assert!(src.contains(&format!("#define KEYED {}", k.is_some() as u8)));
            if let (Some(dir), Some(DType::S64) | None) = (&dump, k) {
                let keyed = if k.is_some() { "_keyed" } else { "" };
                let file = dir.join(format!("scan_{}_{op:?}{keyed}.cu", t.name()));
                std::fs::write(file, &src).unwrap();
            }
        }
    }

    #[test]
    fn args_match_the_kernel_struct() {
        // 6 pointers, 12 strides and sizes, 5 counts, 2 ints: no padding anywhere
        assert_eq!(std::mem::size_of::<ScanArgs>(), 6 * 8 + 12 * 8 + 5 * 8 + 2 * 4);
        assert_eq!(std::mem::align_of::<ScanArgs>(), 8);
    }
}
