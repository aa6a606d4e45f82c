//! Signal processing kernels of the CPU backend on dense host data of the four floating
//! types: copies that pad, crop, convert and scale; batched FFTs (through `fft.rs`);
//! broadcasting complex products; direct convolution; IIR recursions; interpolation.
//!
//! Every function works on dense column-major slices with their shapes as `[usize; 4]`, and
//! runs in parallel over independent lines of its output on rayon's pool.

use num_complex::Complex;
use rayon::prelude::*;

use super::fft::{c2c_axis, c2r_lines, r2c_lines, FftReal};
use crate::backend::dense::Dense;
use crate::backend::signal::{approx1_dims, approx2_dims, dim4_of, dims_usize, FftKind, Interp};
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::dtype::{c32, c64};
use crate::error::Error;
use crate::storage::{alloc_uninit, try_filled, with_float, Element};

/// The element types signal kernels compute in: f32, f64, c32 and c64.
pub(crate) trait Sample:
    Element + Default + num_traits::NumAssign + std::fmt::Debug + Send + Sync
{
    /// The real type of the same precision.
    type Real: FftReal + Sample;
    /// Widens to c64 (reals get a zero imaginary part).
    fn to_c64(self) -> c64;
    /// Narrows from c64 (reals keep the real part).
    fn from_c64(c: c64) -> Self;
}

impl Sample for f32 {
    type Real = f32;
    fn to_c64(self) -> c64 {
        c64::new(self as f64, 0.0)
    }
    fn from_c64(c: c64) -> Self {
        c.re as f32
    }
}

impl Sample for f64 {
    type Real = f64;
    fn to_c64(self) -> c64 {
        c64::new(self, 0.0)
    }
    fn from_c64(c: c64) -> Self {
        c.re
    }
}

impl Sample for c32 {
    type Real = f32;
    fn to_c64(self) -> c64 {
        c64::new(self.re as f64, self.im as f64)
    }
    fn from_c64(c: c64) -> Self {
        c32::new(c.re as f32, c.im as f32)
    }
}

impl Sample for c64 {
    type Real = f64;
    fn to_c64(self) -> c64 {
        self
    }
    fn from_c64(c: c64) -> Self {
        c
    }
}

/// Column-major strides of a dense shape.
pub(crate) fn strides(d: [usize; 4]) -> [usize; 4] {
    [1, d[0], d[0] * d[1], d[0] * d[1] * d[2]]
}

/// Elements of a dense shape; `usize::MAX` when the count overflows (a size no allocation
/// serves, so it fails as out of memory instead of wrapping to a small one).
fn count(d: [usize; 4]) -> usize {
    d.iter().fold(1usize, |n, &x| n.saturating_mul(x))
}

/// Runs `line(out_line, [o1, o2, o3])` for every line along dimension 0 of an output of shape
/// `od`, in parallel.
fn for_lines<D: Send>(out: &mut [D], od: [usize; 4], line: impl Fn(&mut [D], [usize; 3]) + Sync) {
    if out.is_empty() {
        return;
    }
    out.par_chunks_mut(od[0]).enumerate().for_each(|(j, l)| {
        let o1 = j % od[1];
        let o2 = (j / od[1]) % od[2];
        let o3 = j / (od[1] * od[2]);
        line(l, [o1, o2, o3])
    });
}

/// A copy of `src` (shape `sd`) into a new array of shape `od`: element `o` takes
/// `scale * src[o + offset]` converted to `D` (complex to real keeps the real part) where that
/// lies inside `src`, else zero. Pads, crops, converts and scales in one pass.
pub(crate) fn reshape_copy<S: Sample, D: Sample>(
    src: &[S],
    sd: [usize; 4],
    od: [usize; 4],
    offset: [i64; 4],
    scale: f64,
) -> Result<Vec<D>, Error> {
    if sd == od && offset == [0; 4] {
        // a plain conversion: in parallel over flat chunks (one long line is split too)
        let mut out = alloc_uninit(src.len())?;
        out.par_extend(
            src.par_iter().with_min_len(1 << 14).map(|f| D::from_c64(f.to_c64() * scale)),
        );
        return Ok(out);
    }
    let mut out = try_filled(count(od), D::default())?;
    let ss = strides(sd);
    let inside = |k: usize, o: usize| -> Option<usize> {
        let s = o as i64 + offset[k];
        (s >= 0 && (s as usize) < sd[k]).then_some(s as usize)
    };
    for_lines(&mut out, od, |line, [o1, o2, o3]| {
        let (Some(s1), Some(s2), Some(s3)) = (inside(1, o1), inside(2, o2), inside(3, o3)) else {
            return; // the whole line is padding
        };
        let base = s1 * ss[1] + s2 * ss[2] + s3 * ss[3];
        let lo = (-offset[0]).max(0) as usize;
        let hi = ((sd[0] as i64 - offset[0]).max(0) as usize).min(od[0]);
        if lo >= hi {
            return;
        }
        let first = (lo as i64 + offset[0]) as usize + base;
        for (t, f) in line[lo..hi].iter_mut().zip(&src[first..first + (hi - lo)]) {
            // through c64, which holds every value of the four types exactly
            *t = D::from_c64(f.to_c64() * scale);
        }
    });
    Ok(out)
}

/// The output of `fft`: the real result (C2R) or the complex one (C2C, R2C), and its shape;
/// or [`Error::OutOfMemory`].
pub(crate) type FftOut<R> = Result<(Vec<R>, Vec<Complex<R>>, [usize; 4]), Error>;

/// Batched, unnormalised FFT over the first `rank` dimensions, with the input first padded
/// with zeros or truncated to `pdims` (for C2R: the real output shape) and multiplied by
/// `scale`. `src` has shape `sd`; for C2R, dimension 0 of the spectrum read is
/// `pdims[0] / 2 + 1`. Returns the output and its shape.
pub(crate) fn fft<S: Sample>(
    src: &[S],
    sd: [usize; 4],
    kind: FftKind,
    rank: usize,
    pdims: [usize; 4],
    scale: f64,
) -> FftOut<S::Real>
where
    Complex<S::Real>: Sample,
{
    match kind {
        FftKind::C2C { inverse } => {
            let mut out: Vec<Complex<S::Real>> = reshape_copy(src, sd, pdims, [0; 4], scale)?;
            for axis in 0..rank {
                c2c_axis(&mut out, pdims, axis, inverse);
            }
            Ok((Vec::new(), out, pdims))
        }
        FftKind::R2C => {
            let mut real: Vec<S::Real> = reshape_copy(src, sd, pdims, [0; 4], scale)?;
            let mut hd = pdims;
            hd[0] = pdims[0] / 2 + 1;
            let zero = Complex::new(<S::Real as num_traits::Zero>::zero(), num_traits::zero());
            let mut out = try_filled(count(hd), zero)?;
            if pdims[0] > 0 {
                r2c_lines(&mut real, &mut out, pdims[0]);
            }
            for axis in 1..rank {
                c2c_axis(&mut out, hd, axis, false);
            }
            Ok((Vec::new(), out, hd))
        }
        FftKind::C2R => {
            let mut hd = pdims;
            hd[0] = pdims[0] / 2 + 1;
            let mut half: Vec<Complex<S::Real>> = reshape_copy(src, sd, hd, [0; 4], scale)?;
            for axis in 1..rank {
                c2c_axis(&mut half, hd, axis, true);
            }
            let mut out = try_filled(count(pdims), <S::Real as num_traits::Zero>::zero())?;
            if pdims[0] > 0 {
                c2r_lines(&mut half, &mut out, pdims[0]);
            }
            Ok((out, Vec::new(), pdims))
        }
    }
}

/// The index of output coordinate `o` in an operand of shape `d` broadcast to the output (a
/// dimension of size 1 repeats).
fn bcast_index(o: [usize; 4], d: [usize; 4]) -> usize {
    let s = strides(d);
    (0..4).map(|k| if d[k] == 1 { 0 } else { o[k] * s[k] }).sum()
}

/// `a * b` element by element, broadcasting dimensions of size 1, into shape `od`.
pub(crate) fn mul_bcast<S: Sample>(
    a: &[S],
    ad: [usize; 4],
    b: &[S],
    bd: [usize; 4],
    od: [usize; 4],
) -> Result<Vec<S>, Error> {
    let mut out = try_filled(count(od), S::default())?;
    for_lines(&mut out, od, |line, [o1, o2, o3]| {
        let ia = bcast_index([0, o1, o2, o3], ad);
        let ib = bcast_index([0, o1, o2, o3], bd);
        let (sa, sb) = (usize::from(ad[0] != 1), usize::from(bd[0] != 1));
        for (i, v) in line.iter_mut().enumerate() {
            *v = a[ia + i * sa] * b[ib + i * sb];
        }
    });
    Ok(out)
}

/// Direct convolution over the first `rank` dimensions, batched (with broadcasting of size-1
/// dimensions) over the others:
/// `out[o] = sum_f signal[o + start - f] * filter[f]` over the filter's extent, with samples
/// outside the signal taken as zero. `od` is the output shape.
pub(crate) fn convolve<S: Sample>(
    signal: &[S],
    sd: [usize; 4],
    filter: &[S],
    fd: [usize; 4],
    rank: usize,
    od: [usize; 4],
    start: [i64; 4],
) -> Result<Vec<S>, Error> {
    let mut out = try_filled(count(od), S::default())?;
    let (ss, fs) = (strides(sd), strides(fd));
    for_lines(&mut out, od, |line, [o1, o2, o3]| {
        // The (signal offset, filter offset) pairs that dimensions 1..3 contribute.
        let mut pairs: Vec<(usize, usize)> = vec![(0, 0)];
        for (k, o) in [(1, o1), (2, o2), (3, o3)] {
            let mut next = Vec::with_capacity(pairs.len() * fd[k]);
            if k < rank {
                for f in 0..fd[k] {
                    let s = o as i64 + start[k] - f as i64;
                    if s < 0 || s as usize >= sd[k] {
                        continue;
                    }
                    for &(ps, pf) in &pairs {
                        next.push((ps + s as usize * ss[k], pf + f * fs[k]));
                    }
                }
            } else {
                let s = if sd[k] == 1 { 0 } else { o * ss[k] };
                let f = if fd[k] == 1 { 0 } else { o * fs[k] };
                next.extend(pairs.iter().map(|&(ps, pf)| (ps + s, pf + f)));
            }
            pairs = next;
        }
        // Tap by tap, the whole line at once: for each (line pair, tap f) the outputs `i`
        // with `0 <= i + start0 - f < n0` gain `filter[f] * signal[i + start0 - f]`, a
        // multiply-add over contiguous runs that the compiler vectorises (per output, a loop
        // over taps would not be).
        let (n0, len) = (sd[0] as i64, line.len() as i64);
        let s0 = start[0];
        for &(ps, pf) in &pairs {
            for f in 0..fd[0] as i64 {
                let w = filter[pf + f as usize];
                let lo = (f - s0).clamp(0, len);
                let hi = (n0 + f - s0).clamp(lo, len);
                if lo == hi {
                    continue;
                }
                let from = (ps as i64 + lo + s0 - f) as usize;
                let src = &signal[from..from + (hi - lo) as usize];
                for (v, &x) in line[lo as usize..hi as usize].iter_mut().zip(src) {
                    *v += x * w;
                }
            }
        }
    });
    Ok(out)
}

/// The recursion of an IIR filter: for every line along dimension 0 of `c` (the feed-forward
/// part already applied), `y[i] = (c[i] - sum_{k>=1} a[k] y[i-k]) / a[0]`. `a` holds the
/// feedback coefficients along dimension 0, one set for all lines or one per line (size-1
/// dimensions broadcast).
pub(crate) fn iir<S: Sample>(
    c: &[S],
    cd: [usize; 4],
    a: &[S],
    ad: [usize; 4],
) -> Result<Vec<S>, Error> {
    let mut out = try_filled(count(cd), S::default())?;
    let na = ad[0];
    for_lines(&mut out, cd, |line, [o1, o2, o3]| {
        let ia = bcast_index([0, o1, o2, o3], ad);
        let coef = &a[ia..ia + na];
        let ic = bcast_index([0, o1, o2, o3], cd);
        let inv0 = S::one() / coef[0];
        for i in 0..line.len() {
            let mut y = c[ic + i];
            for k in 1..na.min(i + 1) {
                y -= coef[k] * line[i - k];
            }
            line[i] = y * inv0;
        }
    });
    Ok(out)
}

/// The sample interpolated at `x` (in index units) from `n` samples read by `at`, or `None`
/// when `x` is outside `[0, n - 1]` (or NaN). Neighbours past an edge repeat the edge.
fn interp1(at: &impl Fn(usize) -> c64, n: usize, x: f64, m: Interp) -> Option<c64> {
    if !(x >= 0.0 && x <= (n as f64 - 1.0)) {
        return None;
    }
    let last = n as i64 - 1;
    let clamp = |i: i64| at(i.clamp(0, last) as usize);
    let g = x.floor();
    let t = x - g;
    let g = g as i64;
    Some(match m {
        Interp::Nearest => at(x.round() as usize),
        Interp::Lower => at(g as usize),
        Interp::Linear => clamp(g) * (1.0 - t) + clamp(g + 1) * t,
        Interp::LinearCosine => {
            let t = (1.0 - (t * std::f64::consts::PI).cos()) / 2.0;
            clamp(g) * (1.0 - t) + clamp(g + 1) * t
        }
        Interp::Cubic | Interp::CubicSpline => {
            cubic([clamp(g - 1), clamp(g), clamp(g + 1), clamp(g + 2)], t, m == Interp::CubicSpline)
        }
    })
}

/// ArrayFire's cubic through four neighbours at `t` in [0, 1) past the second: a cubic
/// convolution kernel, or Catmull-Rom for `spline`.
fn cubic(v: [c64; 4], t: f64, spline: bool) -> c64 {
    let (a0, a1, a2, a3) = if spline {
        (
            v[0] * -0.5 + v[1] * 1.5 + v[2] * -1.5 + v[3] * 0.5,
            v[0] - v[1] * 2.5 + v[2] * 2.0 - v[3] * 0.5,
            (v[2] - v[0]) * 0.5,
            v[1],
        )
    } else {
        let a0 = v[3] - v[2] - v[0] + v[1];
        (a0, v[0] - v[1] - a0, v[2] - v[0], v[1])
    };
    ((a0 * t + a1) * t + a2) * t + a3
}

/// Interpolation along dimension 0: `out[i, j, k, l]` is `input` column `(j, k, l)` at
/// position `pos[i (, j, k, l)]`; `pos` is one column shared by all, or one per column. The
/// output shape is the input's with dimension 0 taken from `pos`.
pub(crate) fn approx1<S: Sample>(
    input: &[S],
    id: [usize; 4],
    pos: &[S::Real],
    pd: [usize; 4],
    m: Interp,
    off_grid: f64,
) -> Result<Vec<S>, Error> {
    let od = [pd[0], id[1], id[2], id[3]];
    let mut out = try_filled(count(od), S::default())?;
    let is = strides(id);
    let off = S::from_c64(c64::new(off_grid, 0.0));
    for_lines(&mut out, od, |line, [o1, o2, o3]| {
        let base = o1 * is[1] + o2 * is[2] + o3 * is[3];
        let at = |i: usize| input[base + i].to_c64();
        let pbase = bcast_index([0, o1, o2, o3], pd);
        for (i, v) in line.iter_mut().enumerate() {
            let x = num_traits::ToPrimitive::to_f64(&pos[pbase + i]).unwrap_or(f64::NAN);
            *v = interp1(&at, id[0], x, m).map_or(off, S::from_c64);
        }
    });
    Ok(out)
}

/// Interpolation over dimensions 0 and 1: `out[i, j, k, l]` is image `(k, l)` of `input` at
/// `(pos0[i, j], pos1[i, j])`; the positions are shared by all images or given per image.
/// Separable: the method runs along dimension 0 in each needed row, then along dimension 1.
#[allow(clippy::too_many_arguments)]
pub(crate) fn approx2<S: Sample>(
    input: &[S],
    id: [usize; 4],
    pos0: &[S::Real],
    pos1: &[S::Real],
    pd: [usize; 4],
    m: Interp,
    off_grid: f64,
) -> Result<Vec<S>, Error> {
    let od = [pd[0], pd[1], id[2], id[3]];
    let mut out = try_filled(count(od), S::default())?;
    let is = strides(id);
    let off = S::from_c64(c64::new(off_grid, 0.0));
    for_lines(&mut out, od, |line, [o1, o2, o3]| {
        let image = o2 * is[2] + o3 * is[3];
        let pbase = bcast_index([0, o1, o2, o3], pd);
        for (i, v) in line.iter_mut().enumerate() {
            let x = num_traits::ToPrimitive::to_f64(&pos0[pbase + i]).unwrap_or(f64::NAN);
            let y = num_traits::ToPrimitive::to_f64(&pos1[pbase + i]).unwrap_or(f64::NAN);
            // the value at `x` in row `r` of the image
            let row = |r: usize| {
                let at = |c: usize| input[image + r * is[1] + c].to_c64();
                interp1(&at, id[0], x, m)
            };
            let col = |r: usize| row(r).unwrap_or_default();
            // Both positions are checked before any sample is read: an image with no rows
            // has no row 0 to probe (the CUDA kernel checks the same way).
            let inside = id[1] > 0 && row(0).is_some();
            *v = if inside { interp1(&col, id[1], y, m).map_or(off, S::from_c64) } else { off };
        }
    });
    Ok(out)
}

/// Panics for a type no signal kernel exists for (the public functions convert those).
fn not_float(t: DType) -> ! {
    unreachable!("internal error: signal kernel for {}", t.name())
}

fn host_dense<T: Sample>(v: Vec<T>, dims: [usize; 4]) -> Dense {
    Dense::from_host(v, dim4_of(dims))
}

/// The signal family on host data: the functions above, on the operands' elements.
impl crate::backend::signal::Signal for super::Cpu {
    fn reshape_copy(
        &self,
        src: &Dense,
        od: Dim4,
        to: DType,
        offset: [i64; 4],
        scale: f64,
    ) -> Result<Dense, Error> {
        Ok(with_float!(src.dtype, S => with_float!(to, D => {
            let v: Vec<D> = reshape_copy(
                src.host::<S>(), src.shape(), dims_usize(od), offset, scale)?;
            host_dense(v, dims_usize(od))
        }, other => not_float(other)), other => not_float(other)))
    }

    fn fft(
        &self,
        src: &Dense,
        kind: FftKind,
        rank: usize,
        pdims: Dim4,
        scale: f64,
    ) -> Result<Dense, Error> {
        Ok(with_float!(src.dtype, S => {
            let (re, cx, od) =
                fft::<S>(src.host::<S>(), src.shape(), kind, rank, dims_usize(pdims), scale)?;
            if kind == FftKind::C2R { host_dense(re, od) } else { host_dense(cx, od) }
        }, other => not_float(other)))
    }

    fn mul_bcast(&self, a: &Dense, b: &Dense, od: Dim4) -> Result<Dense, Error> {
        Ok(with_float!(a.dtype, S => {
            let v = mul_bcast::<S>(
                a.host(), a.shape(), b.host(), b.shape(), dims_usize(od))?;
            host_dense(v, dims_usize(od))
        }, other => not_float(other)))
    }

    fn convolve(
        &self,
        signal: &Dense,
        filter: &Dense,
        rank: usize,
        od: Dim4,
        start: [i64; 4],
    ) -> Result<Dense, Error> {
        Ok(with_float!(signal.dtype, S => {
            let v = convolve::<S>(signal.host(), signal.shape(), filter.host(),
                filter.shape(), rank, dims_usize(od), start)?;
            host_dense(v, dims_usize(od))
        }, other => not_float(other)))
    }

    fn iir(&self, c: &Dense, a: &Dense) -> Result<Dense, Error> {
        Ok(with_float!(c.dtype, S => {
            host_dense(iir::<S>(c.host(), c.shape(), a.host(), a.shape())?, c.shape())
        }, other => not_float(other)))
    }

    fn approx1(&self, input: &Dense, pos: &Dense, m: Interp, off: f64) -> Result<Dense, Error> {
        let od = approx1_dims(input, pos);
        Ok(with_float!(input.dtype, S => {
            let v = approx1::<S>(input.host(), input.shape(),
                pos.host::<<S as Sample>::Real>(), pos.shape(), m, off)?;
            host_dense(v, dims_usize(od))
        }, other => not_float(other)))
    }

    fn approx2(
        &self,
        input: &Dense,
        pos0: &Dense,
        pos1: &Dense,
        m: Interp,
        off: f64,
    ) -> Result<Dense, Error> {
        let od = approx2_dims(input, pos0);
        Ok(with_float!(input.dtype, S => {
            let v = approx2::<S>(input.host(), input.shape(),
                pos0.host::<<S as Sample>::Real>(), pos1.host::<<S as Sample>::Real>(),
                pos0.shape(), m, off)?;
            host_dense(v, dims_usize(od))
        }, other => not_float(other)))
    }
}
