//! Random numbers on CUDA: the handwritten kernel `kernels/random.cu`, compiled through the device's
//! kernel cache once per kind of output, and launched with one thread per 16-byte block.

use std::sync::Arc;

use super::kernel::{grid_stride_blocks, Family, KernelArgs, KernelFn, KernelKey};
use super::memory::DeviceMem;
use super::runtime::{self, Device};
use crate::dtype::DType;
use crate::error::Error;
use crate::random::stream::{blocks_for, Distribution, Draw, Generator};

/// The kernel's source; the entry name and the kind of output are defined before it, and the
/// generators ([`GENERATORS`]) come first.
const SOURCE: &str = include_str!("kernels/random.cu");
/// The generators, shared with the random leaves of fused kernels (`codegen/random.rs`), so
/// that both compute a request's numbers with the same code; the sines and cosines of their
/// Box-Muller transform come first.
pub(crate) const GENERATORS: &str =
    concat!(include_str!("kernels/trig.cu"), include_str!("kernels/random_core.cu"));
/// Threads per block.
const THREADS: u32 = 256;
/// Blocks per multiprocessor the grid is capped at (as for element-wise kernels); past that
/// the threads loop over the blocks of the output.
const BLOCKS_PER_SM: u32 = 16;

/// What a kernel turns words into (the `EF_KIND` values of `random.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    UniformF32 = 0,
    UniformF64 = 1,
    UniformF16 = 2,
    UniformBits = 3,
    UniformBool = 4,
    NormalF32 = 5,
    NormalF64 = 6,
}

impl Kind {
    fn of(dist: Distribution, dtype: DType) -> Kind {
        match (dist, dtype) {
            (Distribution::Uniform, DType::F32 | DType::C32) => Kind::UniformF32,
            (Distribution::Uniform, DType::F64 | DType::C64) => Kind::UniformF64,
            (Distribution::Uniform, DType::F16) => Kind::UniformF16,
            (Distribution::Uniform, DType::B8) => Kind::UniformBool,
            (Distribution::Uniform, _) => Kind::UniformBits,
            (Distribution::Normal, DType::F32 | DType::C32) => Kind::NormalF32,
            (Distribution::Normal, DType::F64 | DType::C64) => Kind::NormalF64,
            (Distribution::Normal, t) => {
                unreachable!("internal error: normal numbers of type {}", t.name())
            }
        }
    }

    fn entry(self) -> &'static str {
        match self {
            Kind::UniformF32 => "ef_random_uniform_f32",
            Kind::UniformF64 => "ef_random_uniform_f64",
            Kind::UniformF16 => "ef_random_uniform_f16",
            Kind::UniformBits => "ef_random_uniform_bits",
            Kind::UniformBool => "ef_random_uniform_bool",
            Kind::NormalF32 => "ef_random_normal_f32",
            Kind::NormalF64 => "ef_random_normal_f64",
        }
    }

    fn source(self) -> String {
        format!(
            "#define EF_ENTRY {}\n#define EF_KIND {}\n{GENERATORS}\n{SOURCE}",
            self.entry(),
            self as u32
        )
    }
}

/// The kernel for `kind`, compiled on first use.
fn kernel(dev: &Device, kind: Kind) -> Result<Arc<KernelFn>, Error> {
    let key = KernelKey::new(Family::Random, [kind as u8]);
    dev.kernels().kernel(dev, key, kind.entry(), || kind.source())
}

/// A new buffer on device `ordinal` holding `n` elements of `dtype` with the numbers of `draw`.
/// The kernel is queued on the device's stream; the host does not wait for it.
pub(crate) fn generate(
    ordinal: usize,
    draw: &Draw,
    dtype: DType,
    n: usize,
) -> Result<DeviceMem, Error> {
    let dev = runtime::device(ordinal)?;
    let bytes = n * dtype.size();
    let mem = dev.memory().alloc(bytes.max(1))?;
    if n == 0 {
        return Ok(mem);
    }
    let func = kernel(dev, Kind::of(draw.dist, dtype))?;

    let mut args = KernelArgs::with_capacity(6);
    args.u64(mem.ptr()).u64(bytes as u64).u64(draw.base).value(draw.keys);
    args.u32(draw.lane).u32((draw.generator == Generator::Threefry) as u32);
    let blocks = blocks_for(n, dtype.size());
    let grid = grid_stride_blocks(blocks, THREADS, dev.sm_count(), BLOCKS_PER_SM);
    // SAFETY: the parameters match the kernel's signature in order and type (`out` a device
    // pointer as u64, `nbytes` and `base` u64, `keys` the 80-byte `ef_keys` struct of 20 u32,
    // `lane` and `threefry` u32); `out` is a live allocation of this device of at least
    // `nbytes` bytes, 256-byte aligned as the 16-byte stores need, and the kernel writes only
    // below `nbytes`; `mem` is returned to the caller, and its reuse after a drop is ordered on
    // this stream.
    unsafe { func.launch(dev, (grid, 1, 1), (THREADS, 1, 1), 0, &mut args)? };
    Ok(mem)
}

impl crate::backend::random::Random for super::Cuda {
    fn random(&self, draw: &Draw, dtype: DType, n: usize) -> Result<crate::backend::Buffer, Error> {
        Ok(crate::backend::Buffer::Cuda(generate(self.ordinal, draw, dtype, n)?))
    }
}
