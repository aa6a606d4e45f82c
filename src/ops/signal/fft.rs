//! Fast Fourier transforms in one to three dimensions: complex (`fft`, `ifft`, ...), in place
//! (`fft_inplace`, ...), real to complex (`fft_r2c`, ...) and complex to real (`fft_c2r`,
//! ...), with ArrayFire's normalisation factor and output sizes.
//!
//! - `norm_factor` multiplies the result: the transforms themselves are unnormalised, so an
//!   inverse that undoes a forward transform of `n` points uses `1.0 / n as f64`.
//! - `odim`/`pad` arguments set the size of the transformed input along each dimension: the
//!   input is truncated, or padded with zeros, to that size first. 0 keeps the input's size
//!   along that dimension (ArrayFire pads a 2D or 3D transform only when every size given is
//!   positive; emberfire applies each positive size); a negative size panics.
//! - Transforms of rank r work on the first r dimensions, batched over the rest.
//! - An empty input gives an empty output of the input's shape, as in ArrayFire.

use std::sync::Arc;

use num_complex::Complex;

use crate::array::Array;
use crate::backend::signal::{Dense, FftKind};
use crate::dim4::Dim4;
use crate::dtype::{ComplexFloating, FloatingPoint, HasAfEnum, RealFloating};
use crate::error_handler::OrRaise;
use crate::jit::Node;

/// The shape the input is padded or truncated to.
fn padded(func: &str, dims: Dim4, pads: &[i64]) -> Dim4 {
    let mut p = dims;
    for (k, &pad) in pads.iter().enumerate() {
        assert!(
            pad >= 0,
            "{func}: output size {pad} along dimension {k} is negative (0 keeps the input's size \
             {}); the input's dims are {dims}",
            dims[k]
        );
        if pad > 0 {
            p[k] = pad as u64;
        }
    }
    p
}

/// A transform of `node` of the given kind and rank, returned as `O`.
fn transform<O: HasAfEnum>(
    func: &str,
    node: &Arc<Node>,
    kind: FftKind,
    rank: usize,
    norm_factor: f64,
    pads: &[i64],
    odd: bool,
) -> Array<O> {
    let run = || -> crate::error::Result<Dense> {
        let src = Dense::of(node)?;
        if node.dims.elements() == 0 {
            return src.backend.ops().reshape_copy(&src, node.dims, O::DTYPE, [0; 4], 1.0);
        }
        let pdims = match kind {
            FftKind::C2R => {
                let mut d = node.dims;
                d[0] = 2 * (d[0] - 1) + u64::from(odd);
                d
            }
            _ => padded(func, node.dims, pads),
        };
        src.backend.ops().fft(&src, kind, rank, pdims, norm_factor)
    };
    let out = run().or_raise(func);
    debug_assert_eq!(out.dtype, O::DTYPE);
    Array::from_node(out.into_node())
}

macro_rules! complex_fft {
    ($(#[$doc:meta])* $name:ident, $rank:expr, $inverse:expr, ($($pad:ident),*)) => {
        $(#[$doc])*
        pub fn $name<T>(input: &Array<T>, norm_factor: f64, $($pad: i64),*) -> Array<T::ComplexOutType>
        where
            T: HasAfEnum + FloatingPoint,
            <T as HasAfEnum>::ComplexOutType: HasAfEnum,
        {
            transform(stringify!($name), input.node(), FftKind::C2C { inverse: $inverse }, $rank,
                norm_factor, &[$($pad),*], false)
        }
    };
}

complex_fft!(
    /// The discrete Fourier transform along dimension 0 (every column), multiplied by
    /// `norm_factor`, of the input truncated or zero-padded to `odim0` points (0: its own
    /// length). Real input gives the full complex spectrum.
    ///
    /// ```
    /// use emberfire::{c32, dim4, fft, Array};
    /// let x = Array::new(&[1.0f32, 0.0, -1.0, 0.0], dim4!(4));
    /// let y = fft(&x, 1.0, 0);
    /// assert_eq!(y.to_vec(), vec![c32::new(0.0, 0.0), c32::new(2.0, 0.0),
    ///                             c32::new(0.0, 0.0), c32::new(2.0, 0.0)]);
    /// ```
    fft, 1, false, (odim0)
);

complex_fft!(
    /// The inverse transform along dimension 0, unnormalised and then multiplied by
    /// `norm_factor` (pass `1.0 / n` to undo [`fft`] of `n` points); `odim0` truncates or
    /// pads the input first (0: its own length).
    ///
    /// ```
    /// use emberfire::{c64, dim4, fft, ifft, Array};
    /// let x = Array::new(&[c64::new(1.0, 2.0), c64::new(-3.0, 0.5), c64::new(0.0, 1.0)], dim4!(3));
    /// let back = ifft(&fft(&x, 1.0, 0), 1.0 / 3.0, 0).to_vec();
    /// for (b, a) in back.iter().zip(x.to_vec()) {
    ///     assert!((b - a).norm() < 1e-12);
    /// }
    /// ```
    ifft, 1, true, (odim0)
);

complex_fft!(
    /// The 2D transform over dimensions 0 and 1 (batched over 2 and 3), multiplied by
    /// `norm_factor`; `odim0`, `odim1` truncate or pad the input first (0: keep).
    ///
    /// ```
    /// use emberfire::{dim4, fft2, Array};
    /// let x = Array::new(&[1.0f64, 2.0, 3.0, 4.0], dim4!(2, 2));
    /// let y = fft2(&x, 1.0, 0, 0).to_vec();
    /// assert!((y[0].re - 10.0).abs() < 1e-12); // the sum
    /// assert!((y[3].re - 0.0).abs() < 1e-12); // 1 - 2 - 3 + 4
    /// ```
    fft2, 2, false, (odim0, odim1)
);

complex_fft!(
    /// The inverse 2D transform, unnormalised, multiplied by `norm_factor`.
    ///
    /// ```
    /// use emberfire::{dim4, fft2, ifft2, Array};
    /// let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    /// let back = ifft2(&fft2(&x, 1.0, 0, 0), 1.0 / 6.0, 0, 0).to_vec();
    /// assert!((back[5].re - 6.0).abs() < 1e-5 && back[5].im.abs() < 1e-5);
    /// ```
    ifft2, 2, true, (odim0, odim1)
);

complex_fft!(
    /// The 3D transform over dimensions 0, 1 and 2 (batched over 3), multiplied by
    /// `norm_factor`; `odim0..odim2` truncate or pad the input first (0: keep).
    ///
    /// ```
    /// use emberfire::{dim4, fft3, Array};
    /// let x = Array::new(&[1.0f64; 8], dim4!(2, 2, 2));
    /// let y = fft3(&x, 1.0, 0, 0, 0).to_vec();
    /// assert!((y[0].re - 8.0).abs() < 1e-12 && y[1..].iter().all(|v| v.norm() < 1e-12));
    /// ```
    fft3, 3, false, (odim0, odim1, odim2)
);

complex_fft!(
    /// The inverse 3D transform, unnormalised, multiplied by `norm_factor`.
    ///
    /// ```
    /// use emberfire::{dim4, fft3, ifft3, Array};
    /// let x = Array::new(&[1.0f64, -2.0, 0.5, 4.0, 3.0, 0.0, 1.0, 2.0], dim4!(2, 2, 2));
    /// let back = ifft3(&fft3(&x, 1.0, 0, 0, 0), 1.0 / 8.0, 0, 0, 0).to_vec();
    /// assert!((back[3].re - 4.0).abs() < 1e-12);
    /// ```
    ifft3, 3, true, (odim0, odim1, odim2)
);

macro_rules! inplace_fft {
    ($(#[$doc:meta])* $name:ident, $rank:expr, $inverse:expr) => {
        $(#[$doc])*
        pub fn $name<T>(input: &mut Array<T>, norm_factor: f64)
        where
            T: HasAfEnum + ComplexFloating,
        {
            *input = transform::<T>(stringify!($name), input.node(),
                FftKind::C2C { inverse: $inverse }, $rank, norm_factor, &[], false);
        }
    };
}

inplace_fft!(
    /// [`fft`] of a complex array, replacing it. Other handles to the old array (clones) keep
    /// the old values: emberfire arrays are values, never changed behind a handle's back.
    ///
    /// ```
    /// use emberfire::{c32, dim4, fft_inplace, Array};
    /// let mut x = Array::new(&[c32::new(1.0, 0.0), c32::new(1.0, 0.0)], dim4!(2));
    /// fft_inplace(&mut x, 0.5);
    /// assert_eq!(x.to_vec(), vec![c32::new(1.0, 0.0), c32::new(0.0, 0.0)]);
    /// ```
    fft_inplace, 1, false
);

inplace_fft!(
    /// [`ifft`] of a complex array, replacing it.
    ///
    /// ```
    /// use emberfire::{c64, dim4, ifft_inplace, Array};
    /// let mut x = Array::new(&[c64::new(2.0, 0.0), c64::new(0.0, 0.0)], dim4!(2));
    /// ifft_inplace(&mut x, 0.5);
    /// assert_eq!(x.to_vec(), vec![c64::new(1.0, 0.0), c64::new(1.0, 0.0)]);
    /// ```
    ifft_inplace, 1, true
);

inplace_fft!(
    /// [`fft2`] of a complex array, replacing it.
    ///
    /// ```
    /// use emberfire::{c32, dim4, fft2_inplace, Array};
    /// let mut x = Array::new(&[c32::new(1.0, 0.0); 4], dim4!(2, 2));
    /// fft2_inplace(&mut x, 1.0);
    /// assert_eq!(x.to_vec()[0], c32::new(4.0, 0.0));
    /// ```
    fft2_inplace, 2, false
);

inplace_fft!(
    /// [`ifft2`] of a complex array, replacing it.
    ///
    /// ```
    /// use emberfire::{c32, dim4, ifft2_inplace, Array};
    /// let mut x = Array::new(&[c32::new(4.0, 0.0), c32::new(0.0, 0.0), c32::new(0.0, 0.0), c32::new(0.0, 0.0)], dim4!(2, 2));
    /// ifft2_inplace(&mut x, 0.25);
    /// assert_eq!(x.to_vec(), vec![c32::new(1.0, 0.0); 4]);
    /// ```
    ifft2_inplace, 2, true
);

inplace_fft!(
    /// [`fft3`] of a complex array, replacing it.
    ///
    /// ```
    /// use emberfire::{c64, dim4, fft3_inplace, Array};
    /// let mut x = Array::new(&[c64::new(0.5, 0.0); 8], dim4!(2, 2, 2));
    /// fft3_inplace(&mut x, 1.0);
    /// assert_eq!(x.to_vec()[0], c64::new(4.0, 0.0));
    /// ```
    fft3_inplace, 3, false
);

inplace_fft!(
    /// [`ifft3`] of a complex array, replacing it.
    ///
    /// ```
    /// use emberfire::{c64, dim4, fft3_inplace, ifft3_inplace, Array};
    /// let v: Vec<c64> = (0..8).map(|i| c64::new(i as f64, 1.0)).collect();
    /// let mut x = Array::new(&v, dim4!(2, 2, 2));
    /// fft3_inplace(&mut x, 1.0);
    /// ifft3_inplace(&mut x, 1.0 / 8.0);
    /// assert!(x.to_vec().iter().zip(&v).all(|(a, b)| (a - b).norm() < 1e-12));
    /// ```
    ifft3_inplace, 3, true
);

macro_rules! r2c_fft {
    ($(#[$doc:meta])* $name:ident, $rank:expr, ($($pad:ident),*)) => {
        $(#[$doc])*
        pub fn $name<T>(input: &Array<T>, norm_factor: f64, $($pad: i64),*) -> Array<Complex<T>>
        where
            T: HasAfEnum + RealFloating,
            Complex<T>: HasAfEnum,
        {
            transform(stringify!($name), input.node(), FftKind::R2C, $rank, norm_factor,
                &[$($pad),*], false)
        }
    };
}

r2c_fft!(
    /// The transform of real input along dimension 0, keeping the non-redundant half of the
    /// spectrum: `n / 2 + 1` values for `n` points (after padding or truncating to `pad0`;
    /// 0 keeps the length), multiplied by `norm_factor`.
    ///
    /// ```
    /// use emberfire::{c32, dim4, fft_r2c, Array};
    /// let x = Array::new(&[1.0f32, 0.0, -1.0, 0.0], dim4!(4));
    /// let y = fft_r2c(&x, 1.0, 0);
    /// assert_eq!(y.dims(), dim4!(3));
    /// let want = [c32::new(0.0, 0.0), c32::new(2.0, 0.0), c32::new(0.0, 0.0)];
    /// assert!(y.to_vec().iter().zip(want).all(|(a, b)| (a - b).norm() < 1e-6));
    /// ```
    fft_r2c, 1, (pad0)
);

r2c_fft!(
    /// The 2D transform of real input: dimension 0 of the result holds `n0 / 2 + 1` values.
    ///
    /// ```
    /// use emberfire::{dim4, fft2_r2c, Array};
    /// let x = Array::new(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(3, 2));
    /// let y = fft2_r2c(&x, 1.0, 0, 0);
    /// assert_eq!(y.dims(), dim4!(2, 2));
    /// assert!((y.to_vec()[0].re - 21.0).abs() < 1e-12);
    /// ```
    fft2_r2c, 2, (pad0, pad1)
);

r2c_fft!(
    /// The 3D transform of real input: dimension 0 of the result holds `n0 / 2 + 1` values.
    ///
    /// ```
    /// use emberfire::{dim4, fft3_r2c, Array};
    /// let x = Array::new(&[1.0f32; 8], dim4!(2, 2, 2));
    /// let y = fft3_r2c(&x, 1.0, 0, 0, 0);
    /// assert_eq!(y.dims(), dim4!(2, 2, 2));
    /// assert!((y.to_vec()[0].re - 8.0).abs() < 1e-6);
    /// ```
    fft3_r2c, 3, (pad0, pad1, pad2)
);

macro_rules! c2r_fft {
    ($(#[$doc:meta])* $name:ident, $rank:expr) => {
        $(#[$doc])*
        pub fn $name<T>(input: &Array<T>, norm_factor: f64, is_odd: bool) -> Array<T::BaseType>
        where
            T: HasAfEnum + ComplexFloating,
            <T as HasAfEnum>::BaseType: HasAfEnum,
        {
            transform(stringify!($name), input.node(), FftKind::C2R, $rank, norm_factor, &[],
                is_odd)
        }
    };
}

c2r_fft!(
    /// The inverse transform of a half spectrum (as [`fft_r2c`] makes) to real values along
    /// dimension 0: `2 * (m - 1) + is_odd` points from `m` values, unnormalised, multiplied
    /// by `norm_factor`. The imaginary parts of the first value (and, for an even length, the
    /// last) are ignored, as a real signal's spectrum has none there.
    ///
    /// ```
    /// use emberfire::{dim4, fft_c2r, fft_r2c, Array};
    /// let x = Array::new(&[1.0f64, 2.0, 3.0, 4.0, 5.0], dim4!(5));
    /// let back = fft_c2r(&fft_r2c(&x, 1.0, 0), 1.0 / 5.0, true).to_vec();
    /// assert!(back.iter().zip(x.to_vec()).all(|(a, b)| (a - b).abs() < 1e-12));
    /// ```
    fft_c2r, 1
);

c2r_fft!(
    /// The inverse 2D transform of a half spectrum (as [`fft2_r2c`] makes) to real values.
    ///
    /// ```
    /// use emberfire::{dim4, fft2_c2r, fft2_r2c, Array};
    /// let x = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    /// let back = fft2_c2r(&fft2_r2c(&x, 1.0, 0, 0), 1.0 / 6.0, false).to_vec();
    /// assert!(back.iter().zip(x.to_vec()).all(|(a, b)| (a - b).abs() < 1e-5));
    /// ```
    fft2_c2r, 2
);

c2r_fft!(
    /// The inverse 3D transform of a half spectrum (as [`fft3_r2c`] makes) to real values.
    ///
    /// ```
    /// use emberfire::{dim4, fft3_c2r, fft3_r2c, Array};
    /// let v: Vec<f64> = (0..12).map(|i| (i * i) as f64).collect();
    /// let x = Array::new(&v, dim4!(3, 2, 2));
    /// let back = fft3_c2r(&fft3_r2c(&x, 1.0, 0, 0, 0), 1.0 / 12.0, true).to_vec();
    /// assert!(back.iter().zip(&v).all(|(a, b)| (a - b).abs() < 1e-9));
    /// ```
    fft3_c2r, 3
);
