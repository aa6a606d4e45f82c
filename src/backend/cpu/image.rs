//! Image kernels on the CPU: geometric warps (split between rayon tasks by output column) and
//! histograms (by chunk, each task counting into its own bins). They compute what the CUDA
//! kernels of `cuda/kernels/image.cu` compute, in the same types and the same order of
//! operations, so both backends give the same bins and the same samples. The image family
//! (`backend::image::Image`) of the CPU backend runs them on dense host data.

use num_traits::Float;
use rayon::prelude::*;

use crate::backend::dense::Dense;
use crate::backend::image::{histogram_real_type, warp_real_type, WarpMaps, WindowFilter};
use crate::backend::signal::Interp;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::storage::{try_filled, Element};

/// The two types the kernels compute in.
pub(crate) trait WarpReal: Element + Float + Default + Send + Sync {
    fn of(v: f64) -> Self;
}

/// The element types the kernels read and write, with the conversions the CUDA kernels make:
/// to the computing type rounded to nearest, back truncated toward zero and saturated (NaN
/// as 0).
pub(crate) trait Pixel: Element + Copy + Default + Send + Sync {
    fn to_real<R: WarpReal>(self) -> R;
    fn from_real<R: WarpReal>(v: R) -> Self;
}

macro_rules! pixel {
    ($($t:ty),*) => {$(
        impl Pixel for $t {
            fn to_real<R: WarpReal>(self) -> R {
                // through f64: exact for every type computed in f32, one rounding for the rest
                R::of(self as f64)
            }
            fn from_real<R: WarpReal>(v: R) -> Self {
                v.to_f64().unwrap_or(0.0) as $t
            }
        }
    )*};
}
pixel!(f32, f64, u8, i16, u16, i32, u32, i64, u64);

impl WarpReal for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
}

impl WarpReal for f64 {
    fn of(v: f64) -> Self {
        v
    }
}

fn cubic<T: WarpReal>(v: [T; 4], t: T, spline: bool) -> T {
    let k = T::of;
    let (a0, a1, a2) = if spline {
        (
            k(-0.5) * v[0] + k(1.5) * v[1] + k(-1.5) * v[2] + k(0.5) * v[3],
            v[0] + k(-2.5) * v[1] + k(2.0) * v[2] + k(-0.5) * v[3],
            k(0.5) * (v[2] - v[0]),
        )
    } else {
        let a0 = v[3] - v[2] - v[0] + v[1];
        (a0, v[0] - v[1] - a0, v[2] - v[0])
    };
    ((a0 * t + a1) * t + a2) * t + v[1]
}

/// The sample of one image at the point (`xi`, `yi`), by the rules of `ef_warp`.
fn sample<P: Pixel, T: WarpReal>(
    img: &[P],
    n0: usize,
    n1: usize,
    xi: T,
    yi: T,
    m: Interp,
    clamp_nearest: bool,
) -> P {
    let k = T::of;
    let (f0, f1) = (k(n0 as f64), k(n1 as f64));
    let px = |x: i64, y: i64| {
        let x = x.clamp(0, n0 as i64 - 1) as usize;
        let y = y.clamp(0, n1 as i64 - 1) as usize;
        img[x + y * n0].to_real::<T>()
    };
    match m {
        Interp::Nearest | Interp::Lower => {
            let (mut rx, mut ry) = if m == Interp::Lower {
                (xi.floor(), yi.floor())
            } else {
                (xi.round(), yi.round())
            };
            if clamp_nearest {
                rx = rx.max(T::zero()).min(f0 - T::one());
                ry = ry.max(T::zero()).min(f1 - T::one());
            }
            // a copy of the sample, not a conversion: exact for every type
            if rx >= T::zero() && rx < f0 && ry >= T::zero() && ry < f1 {
                img[rx.to_usize().unwrap_or(0) + ry.to_usize().unwrap_or(0) * n0]
            } else {
                P::default()
            }
        }
        _ => {
            let low = k(-1e-4);
            if !(xi >= low && xi < f0 && yi >= low && yi < f1) {
                return P::default();
            }
            let (xi, yi) = (xi.max(T::zero()), yi.max(T::zero()));
            let (gx, gy) = (xi.floor(), yi.floor());
            let (mut tx, mut ty) = (xi - gx, yi - gy);
            let (ix, iy) = (gx.to_i64().unwrap_or(0), gy.to_i64().unwrap_or(0));
            P::from_real(match m {
                Interp::Linear | Interp::LinearCosine => {
                    if m == Interp::LinearCosine {
                        let pi = k(std::f64::consts::PI);
                        tx = (T::one() - (tx * pi).cos()) / k(2.0);
                        ty = (T::one() - (ty * pi).cos()) / k(2.0);
                    }
                    let r0 = px(ix, iy) * (T::one() - tx) + px(ix + 1, iy) * tx;
                    let r1 = px(ix, iy + 1) * (T::one() - tx) + px(ix + 1, iy + 1) * tx;
                    r0 * (T::one() - ty) + r1 * ty
                }
                _ => {
                    let spline = m == Interp::CubicSpline;
                    let row = |y: i64| {
                        cubic([px(ix - 1, y), px(ix, y), px(ix + 1, y), px(ix + 2, y)], tx, spline)
                    };
                    cubic([row(iy - 1), row(iy), row(iy + 1), row(iy + 2)], ty, spline)
                }
            })
        }
    }
}

/// See `Image::warp`: `input` has shape `id`, the result `od`.
pub(crate) fn warp<P: Pixel, T: WarpReal>(
    input: &[P],
    id: [usize; 4],
    maps: &WarpMaps,
    od: [usize; 4],
    m: Interp,
    clamp_nearest: bool,
) -> Result<Vec<P>, Error> {
    let mut out = try_filled(od.iter().product(), P::default())?;
    if out.is_empty() {
        return Ok(out);
    }
    let (n0, n1) = (id[0], id[1]);
    let [t2, t3] = maps.batch.map(|b| b as usize);
    out.par_chunks_mut(od[0]).enumerate().for_each(|(j, col)| {
        let y = j % od[1];
        let (z, w) = ((j / od[1]) % od[2], j / (od[1] * od[2]));
        let image = (if id[2] > 1 { z } else { 0 }) + id[2] * (if id[3] > 1 { w } else { 0 });
        let img = &input[image * n0 * n1..(image + 1) * n0 * n1];
        let t = &maps.maps[(if t2 > 1 { z } else { 0 }) + t2 * (if t3 > 1 { w } else { 0 })];
        let c = t.map(T::of);
        let projective = t[6] != 0.0 || t[7] != 0.0 || t[8] != 1.0;
        let fy = T::of(y as f64);
        for (x, v) in col.iter_mut().enumerate() {
            let fx = T::of(x as f64);
            let (mut xi, mut yi) = (c[0] * fx + c[1] * fy + c[2], c[3] * fx + c[4] * fy + c[5]);
            if projective {
                let q = c[6] * fx + c[7] * fy + c[8];
                xi = xi / q;
                yi = yi / q;
            }
            *v = sample(img, n0, n1, xi, yi, m, clamp_nearest);
        }
    });
    Ok(out)
}

/// Elements a histogram task counts at least.
const CHUNK: usize = 1 << 16;

/// Where `v` falls among `nbins` bins of width `1 / scale` from `lo`, computed in `R` as the
/// CUDA kernel computes it (values below the range count in the first bin, above in the
/// last); `None` for NaN, which no bin counts.
#[inline(always)]
fn bin_of<T: Pixel, R: WarpReal>(v: T, lo: R, s: R, top: R, nbins: usize) -> Option<usize> {
    let v = v.to_real::<R>();
    if v.is_nan() {
        return None;
    }
    let f = ((v - lo) * s).floor();
    Some(if f < R::zero() {
        0
    } else if f >= top {
        nbins - 1
    } else {
        f.to_usize().unwrap_or(0)
    })
}

/// Counts `part` into `bins` through `lut` (the bin of every byte value): four sets of
/// counters taken in turn, so that a run of equal bytes does not make every increment wait
/// for the one before it.
fn count_bytes(part: &[u8], lut: &[u16; 256], bins: &mut [u32]) {
    let mut sets = [[0u32; 256]; 4];
    debug_assert!(bins.len() <= 256);
    let mut quads = part.chunks_exact(4);
    for q in &mut quads {
        sets[0][usize::from(lut[usize::from(q[0])])] += 1;
        sets[1][usize::from(lut[usize::from(q[1])])] += 1;
        sets[2][usize::from(lut[usize::from(q[2])])] += 1;
        sets[3][usize::from(lut[usize::from(q[3])])] += 1;
    }
    for &v in quads.remainder() {
        sets[0][usize::from(lut[usize::from(v)])] += 1;
    }
    for (b, bin) in bins.iter_mut().enumerate() {
        *bin += sets[0][b] + sets[1][b] + sets[2][b] + sets[3][b];
    }
}

/// See `Image::histogram`: `R` is the type the bins are computed in (f32, or f64
/// for 64-bit elements), as on the device.
///
/// u8 images (the common case) take a table of the 256 values' bins, made with the same
/// arithmetic as every other element type, so the counts are the same; counting is then one
/// load and one increment per pixel instead of a conversion, a floor and two comparisons.
pub(crate) fn histogram<T: Pixel, R: WarpReal>(
    input: &[T],
    slices: usize,
    nbins: usize,
    minval: f64,
    scale: f64,
) -> Result<Vec<u32>, Error> {
    let mut out = try_filled(slices * nbins, 0u32)?;
    if slices == 0 || input.is_empty() {
        return Ok(out);
    }
    let per_slice = input.len() / slices;
    let (lo, s) = (R::of(minval), R::of(scale));
    let top = R::of(nbins as f64);
    // u8 elements with at most 256 bins: the bytes, and the bin of every byte value (each fits
    // a u16), by the same arithmetic as every other element.
    let bytes: Option<(&[u8], [u16; 256])> = (T::DTYPE == DType::U8 && nbins <= 256).then(|| {
        // SAFETY: `T` is u8 (its dtype says so), so the slice is bytes.
        let b = unsafe { std::slice::from_raw_parts(input.as_ptr().cast::<u8>(), input.len()) };
        let lut = std::array::from_fn(|v| {
            bin_of::<u8, R>(v as u8, lo, s, top, nbins).unwrap_or(0) as u16
        });
        (b, lut)
    });
    let count = |part: &[T], bins: &mut [u32]| {
        for &v in part {
            if let Some(b) = bin_of(v, lo, s, top, nbins) {
                bins[b] += 1;
            }
        }
    };
    let task = CHUNK.max(per_slice / (rayon::current_num_threads() * 4).max(1));
    for (k, bins) in out.chunks_mut(nbins).enumerate() {
        let range = k * per_slice..(k + 1) * per_slice;
        let parts: Vec<Vec<u32>> = match bytes {
            Some((b, lut)) => b[range]
                .par_chunks(task)
                .map(|part| {
                    let mut local = vec![0u32; nbins];
                    count_bytes(part, &lut, &mut local);
                    local
                })
                .collect(),
            None => input[range]
                .par_chunks(task)
                .map(|part| {
                    let mut local = vec![0u32; nbins];
                    count(part, &mut local);
                    local
                })
                .collect(),
        };
        for local in parts {
            for (b, c) in bins.iter_mut().zip(local) {
                *b += c;
            }
        }
    }
    Ok(out)
}

/// Runs `$body` with `$T` bound to the Rust type of a real `DType` (not f16 or bool) and `$R`
/// to the Rust type of the real type `$real` (f32 or f64).
macro_rules! with_pixel {
    ($dt:expr, $real:expr, $T:ident, $R:ident => $body:expr) => {{
        macro_rules! real {
            ($t:ty) => {{
                type $T = $t;
                match $real {
                    DType::F32 => {
                        type $R = f32;
                        $body
                    }
                    _ => {
                        type $R = f64;
                        $body
                    }
                }
            }};
        }
        match $dt {
            DType::F32 => real!(f32),
            DType::F64 => real!(f64),
            DType::U8 => real!(u8),
            DType::S16 => real!(i16),
            DType::U16 => real!(u16),
            DType::S32 => real!(i32),
            DType::U32 => real!(u32),
            DType::S64 => real!(i64),
            DType::U64 => real!(u64),
            other => unreachable!("internal error: image kernel for {}", other.name()),
        }
    }};
}

fn shape(d: Dim4) -> [usize; 4] {
    std::array::from_fn(|k| d[k] as usize)
}

/// The image family on host data: warps and histograms by the functions above; the tiled
/// window filters do not run here (`window_runs` is false, and the callers compose them).
impl crate::backend::image::Image for super::Cpu {
    fn window_runs(&self, _size: [u64; 2]) -> Result<bool, Error> {
        Ok(false)
    }

    fn window(
        &self,
        _input: &Dense,
        _mask: Option<&Dense>,
        _filter: &WindowFilter,
        _out_type: DType,
    ) -> Result<(Dense, Option<Dense>), Error> {
        unreachable!("internal error: the window kernel on the CPU")
    }

    fn warp(
        &self,
        input: &Dense,
        maps: &WarpMaps,
        od: Dim4,
        m: Interp,
        clamp_nearest: bool,
    ) -> Result<Dense, Error> {
        let (id, o) = (shape(input.dims), shape(od));
        let real = warp_real_type(input.dtype);
        Ok(with_pixel!(input.dtype, real, T, R => Dense::from_host(
            warp::<T, R>(input.host(), id, maps, o, m, clamp_nearest)?,
            od,
        )))
    }

    fn histogram(
        &self,
        input: &Dense,
        slices: u64,
        nbins: u32,
        minval: f64,
        scale: f64,
    ) -> Result<Dense, Error> {
        let od = Dim4::new(&[u64::from(nbins), slices, 1, 1]);
        let (s, b) = (slices as usize, nbins as usize);
        let real = histogram_real_type(input.dtype);
        let counts = with_pixel!(input.dtype, real, T, R => {
            histogram::<T, R>(input.host(), s, b, minval, scale)?
        });
        Ok(Dense::from_host(counts, od))
    }
}
