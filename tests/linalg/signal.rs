//! Signal processing against references computed here in f64: naive O(n^2) DFTs for small
//! sizes, Parseval's theorem and round trips for large ones, direct convolution loops, the
//! IIR recursion, and interpolation formulas written out independently.

use crate::common;

use common::{coords, Elem, Rng64, SeedableRng, Tol, V};
use emberfire::*;

type C = c64;

// ---- references ---------------------------------------------------------------------------

fn us(d: Dim4) -> [usize; 4] {
    std::array::from_fn(|k| d[k] as usize)
}

fn count(d: [usize; 4]) -> usize {
    d.iter().product()
}

fn index(c: [usize; 4], d: [usize; 4]) -> usize {
    c[0] + d[0] * (c[1] + d[1] * (c[2] + d[2] * c[3]))
}

fn coord(lin: usize, d: [usize; 4]) -> [usize; 4] {
    let c = coords(Dim4::new(&d.map(|x| x as u64)), lin);
    c.map(|x| x as usize)
}

/// Unnormalised DFT of every line along `axis`, by the definition.
fn dft_axis(x: &[C], d: [usize; 4], axis: usize, inverse: bool) -> Vec<C> {
    let n = d[axis];
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut out = vec![C::new(0.0, 0.0); x.len()];
    for (lin, o) in out.iter_mut().enumerate() {
        let c = coord(lin, d);
        let k = c[axis];
        let mut acc = C::new(0.0, 0.0);
        for j in 0..n {
            let mut cj = c;
            cj[axis] = j;
            let t = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
            acc += x[index(cj, d)] * C::new(t.cos(), t.sin());
        }
        *o = acc;
    }
    out
}

fn dft(x: &[C], d: [usize; 4], rank: usize, inverse: bool) -> Vec<C> {
    (0..rank).fold(x.to_vec(), |acc, axis| dft_axis(&acc, d, axis, inverse))
}

/// `x` (shape `d`) truncated or zero-padded to shape `nd`.
fn resize(x: &[C], d: [usize; 4], nd: [usize; 4]) -> Vec<C> {
    (0..count(nd))
        .map(|lin| {
            let c = coord(lin, nd);
            if (0..4).all(|k| c[k] < d[k]) {
                x[index(c, d)]
            } else {
                C::new(0.0, 0.0)
            }
        })
        .collect()
}

/// `out[o] = sum_f s[o + start - f] f[f]` over the first `rank` dimensions, batches
/// broadcast.
fn conv_ref(
    s: &[C],
    sd: [usize; 4],
    f: &[C],
    fd: [usize; 4],
    rank: usize,
    od: [usize; 4],
    start: [i64; 4],
) -> Vec<C> {
    (0..count(od))
        .map(|lin| {
            let o = coord(lin, od);
            let mut acc = C::new(0.0, 0.0);
            for (flin, fv) in f.iter().enumerate() {
                let fc = coord(flin, fd);
                let mut sc = [0usize; 4];
                let mut ok = true;
                for k in 0..4 {
                    if k < rank {
                        let v = o[k] as i64 + start[k] - fc[k] as i64;
                        ok &= v >= 0 && (v as usize) < sd[k];
                        sc[k] = v.max(0) as usize;
                    } else {
                        // batch: the filter index must be this output's (or 0 when broadcast)
                        ok &= fc[k] == if fd[k] == 1 { 0 } else { o[k] };
                        sc[k] = if sd[k] == 1 { 0 } else { o[k] };
                    }
                }
                if ok {
                    acc += s[index(sc, sd)] * fv;
                }
            }
            acc
        })
        .collect()
}

/// A random signal and filter of these shapes, as arrays and as complex f64 values.
fn conv_inputs<T: Elem>(
    r: &mut Rng64,
    sd: [usize; 4],
    fd: [usize; 4],
) -> (Array<T>, Array<T>, Vec<C>, Vec<C>) {
    let s: Vec<T> = random(r, count(sd));
    let f: Vec<T> = random(r, count(fd));
    let sa = Array::new(&s, d4(sd[0], sd[1], sd[2], sd[3]));
    let fa = Array::new(&f, d4(fd[0], fd[1], fd[2], fd[3]));
    let c = |v: &[T]| v.iter().map(|v| v.to_v().c()).collect::<Vec<C>>();
    (sa, fa, c(&s), c(&f))
}

/// A convolution's output shape and the offset of its first output in the expanded result:
/// `rank` dimensions convolved in `mode`, the others batched.
fn conv_out(sd: [usize; 4], fd: [usize; 4], rank: usize, mode: ConvMode) -> ([usize; 4], [i64; 4]) {
    let mut od = [0usize; 4];
    let mut start = [0i64; 4];
    for k in 0..4 {
        od[k] = if k >= rank {
            sd[k].max(fd[k])
        } else if mode == ConvMode::EXPAND {
            sd[k] + fd[k] - 1
        } else {
            start[k] = (fd[k] / 2) as i64;
            sd[k]
        };
    }
    (od, start)
}

fn values<T: Elem>(v: &[C]) -> Vec<V> {
    v.iter().map(|&c| if T::TY.dtype.is_complex() { V::C(c) } else { V::F(c.re) }).collect()
}

fn random<T: Elem>(r: &mut Rng64, n: usize) -> Vec<T> {
    (0..n).map(|_| T::small(r)).collect()
}

fn l1(x: &[C]) -> f64 {
    x.iter().map(|v| v.norm()).sum::<f64>().max(1.0)
}

/// Asserts `got` matches `want` within `factor` times the type's tolerance, relative to the
/// largest value the result could hold (`scale`).
fn assert_close<O: Elem>(
    got: &Array<O>,
    dims: Dim4,
    want: &[C],
    factor: f64,
    scale: f64,
    what: &str,
) {
    common::assert_array(got, dims, &values::<O>(want), Tol::x(factor).scale(scale), what);
}

fn d4(a: usize, b: usize, c: usize, e: usize) -> Dim4 {
    dim4!(a, b, c, e)
}

// ---- FFTs -----------------------------------------------------------------------------------

const SIZES: [usize; 12] = [1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 31, 64];

fn fft_1d_case<T>(seed: u64)
where
    T: Elem + FloatingPoint,
    T::ComplexOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for &n in &SIZES {
        for cols in [1usize, 3] {
            let d = [n, cols, 1, 1];
            let x: Vec<T> = random(&mut r, n * cols);
            let a = Array::new(&x, d4(n, cols, 1, 1));
            let xc: Vec<C> = x.iter().map(|v| v.to_v().c()).collect();
            let want = dft(&xc, d, 1, false);
            let scale = l1(&xc);
            let got = fft(&a, 1.0, 0);
            assert_close(&got, a.dims(), &want, 40.0, scale, &format!("fft n={n} cols={cols}"));
            let half: Vec<C> = want.iter().map(|v| v * 0.5).collect();
            assert_close(&fft(&a, 0.5, 0), a.dims(), &half, 40.0, scale, "fft norm 0.5");
            let inv: Vec<C> = dft(&xc, d, 1, true).iter().map(|v| v / n as f64).collect();
            let got = ifft(&a, 1.0 / n as f64, 0);
            assert_close(&got, a.dims(), &inv, 40.0, scale / n as f64, &format!("ifft n={n}"));
        }
    }
}

#[test]
fn fft_1d_matches_the_definition_for_every_type() {
    fft_1d_case::<f32>(1);
    fft_1d_case::<f64>(2);
    fft_1d_case::<c32>(3);
    fft_1d_case::<c64>(4);
}

fn fft_nd_case<T>(seed: u64)
where
    T: Elem + FloatingPoint,
    T::ComplexOutType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for d in [[4, 3, 1, 1], [5, 2, 3, 1], [3, 7, 2, 2], [2, 1, 5, 3], [1, 4, 4, 1], [6, 5, 3, 2]] {
        let x: Vec<T> = random(&mut r, count(d));
        let dims = d4(d[0], d[1], d[2], d[3]);
        let a = Array::new(&x, dims);
        let xc: Vec<C> = x.iter().map(|v| v.to_v().c()).collect();
        let scale = l1(&xc);
        let n2 = (d[0] * d[1]) as f64;
        let n3 = n2 * d[2] as f64;
        assert_close(&fft2(&a, 1.0, 0, 0), dims, &dft(&xc, d, 2, false), 60.0, scale, "fft2");
        assert_close(
            &fft3(&a, 2.0, 0, 0, 0),
            dims,
            &dft(&xc, d, 3, false).iter().map(|v| v * 2.0).collect::<Vec<_>>(),
            60.0,
            2.0 * scale,
            "fft3",
        );
        let i2: Vec<C> = dft(&xc, d, 2, true).iter().map(|v| v / n2).collect();
        assert_close(&ifft2(&a, 1.0 / n2, 0, 0), dims, &i2, 60.0, scale / n2, "ifft2");
        let i3: Vec<C> = dft(&xc, d, 3, true).iter().map(|v| v / n3).collect();
        assert_close(&ifft3(&a, 1.0 / n3, 0, 0, 0), dims, &i3, 60.0, scale / n3, "ifft3");
    }
}

#[test]
fn fft2_fft3_and_inverses_match_the_definition_batched() {
    fft_nd_case::<f32>(5);
    fft_nd_case::<f64>(6);
    fft_nd_case::<c32>(7);
    fft_nd_case::<c64>(8);
}

#[test]
fn padding_and_truncation_set_the_transformed_size() {
    let mut r = Rng64::seed_from_u64(9);
    let x: Vec<c64> = random(&mut r, 6 * 4);
    let a = Array::new(&x, dim4!(6, 4));
    let d = [6, 4, 1, 1];
    for (o0, o1) in [(9usize, 0usize), (4, 0), (8, 7), (3, 2), (0, 5), (11, 1)] {
        let nd = [if o0 == 0 { 6 } else { o0 }, if o1 == 0 { 4 } else { o1 }, 1, 1];
        let xr = resize(&x, d, nd);
        let nd4 = d4(nd[0], nd[1], 1, 1);
        let s = l1(&xr);
        if o1 == 0 {
            let y1 = resize(&x, d, [nd[0], 4, 1, 1]);
            assert_close(
                &fft(&a, 1.0, o0 as i64),
                d4(nd[0], 4, 1, 1),
                &dft(&y1, [nd[0], 4, 1, 1], 1, false),
                40.0,
                s,
                "fft pad",
            );
            assert_close(
                &ifft(&a, 1.0, o0 as i64),
                d4(nd[0], 4, 1, 1),
                &dft(&y1, [nd[0], 4, 1, 1], 1, true),
                40.0,
                s,
                "ifft pad",
            );
        }
        assert_close(
            &fft2(&a, 1.0, o0 as i64, o1 as i64),
            nd4,
            &dft(&xr, nd, 2, false),
            40.0,
            s,
            &format!("fft2 {o0}x{o1}"),
        );
        assert_close(
            &ifft2(&a, 1.0, o0 as i64, o1 as i64),
            nd4,
            &dft(&xr, nd, 2, true),
            40.0,
            s,
            "ifft2 pad",
        );
    }
    // fft3 of a 2D array padded along dimension 2
    let nd = [6, 4, 3, 1];
    let xr = resize(&x, d, nd);
    let got = fft3(&a, 1.0, 0, 0, 3);
    assert_close(&got, dim4!(6, 4, 3), &dft(&xr, nd, 3, false), 40.0, l1(&xr), "fft3 pad");
    let got = ifft3(&a, 1.0, 5, 2, 2);
    let nd = [5, 2, 2, 1];
    let xr = resize(&x, d, nd);
    assert_close(&got, dim4!(5, 2, 2), &dft(&xr, nd, 3, true), 40.0, l1(&xr), "ifft3 truncate");
}

fn r2c_case<T>(seed: u64)
where
    T: Elem + RealFloating,
    num_complex::Complex<T>: Elem + ComplexFloating,
    <num_complex::Complex<T> as HasAfEnum>::BaseType: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    for d in [
        [1, 1, 1, 1],
        [2, 3, 1, 1],
        [5, 1, 1, 1],
        [8, 3, 2, 1],
        [7, 4, 3, 2],
        [6, 5, 2, 1],
        [13, 2, 1, 3],
    ] {
        let x: Vec<T> = random(&mut r, count(d));
        let dims = d4(d[0], d[1], d[2], d[3]);
        let a = Array::new(&x, dims);
        let xc: Vec<C> = x.iter().map(|v| v.to_v().c()).collect();
        let s = l1(&xc);
        let h = [d[0] / 2 + 1, d[1], d[2], d[3]];
        let hd = d4(h[0], h[1], h[2], h[3]);
        for rank in 1..=3 {
            let full = dft(&xc, d, rank, false);
            let want = resize(&full, d, h);
            let got = match rank {
                1 => fft_r2c(&a, 1.0, 0),
                2 => fft2_r2c(&a, 1.0, 0, 0),
                _ => fft3_r2c(&a, 1.0, 0, 0, 0),
            };
            assert_close(&got, hd, &want, 60.0, s, &format!("r2c rank {rank} dims {d:?}"));
            // and back: a half spectrum of a real signal returns the signal
            let n: usize = d[..rank].iter().product();
            let odd = d[0] % 2 == 1;
            let back = match rank {
                1 => fft_c2r(&got, 1.0 / n as f64, odd),
                2 => fft2_c2r(&got, 1.0 / n as f64, odd),
                _ => fft3_c2r(&got, 1.0 / n as f64, odd),
            };
            assert_close(&back, dims, &xc, 200.0, s / n as f64, &format!("c2r rank {rank}"));
        }
        // padded and truncated real transforms
        let nd = [d[0] + 3, d[1], d[2], d[3]];
        let want =
            resize(&dft(&resize(&xc, d, nd), nd, 1, false), nd, [nd[0] / 2 + 1, d[1], d[2], d[3]]);
        assert_close(
            &fft_r2c(&a, 2.0, nd[0] as i64),
            d4(nd[0] / 2 + 1, d[1], d[2], d[3]),
            &want.iter().map(|v| v * 2.0).collect::<Vec<_>>(),
            60.0,
            2.0 * s,
            "r2c pad",
        );
        if d[1] > 1 {
            let nd = [d[0], d[1] - 1, d[2], d[3]];
            let want =
                resize(&dft(&resize(&xc, d, nd), nd, 2, false), nd, [h[0], nd[1], d[2], d[3]]);
            assert_close(
                &fft2_r2c(&a, 1.0, 0, nd[1] as i64),
                d4(h[0], nd[1], d[2], d[3]),
                &want,
                60.0,
                s,
                "r2c2 truncate",
            );
        }
    }
}

#[test]
fn real_transforms_match_the_definition_and_invert() {
    r2c_case::<f32>(10);
    r2c_case::<f64>(11);
}

/// The real signal whose half spectrum is `h` (length `n / 2 + 1`): the Hermitian extension,
/// with the imaginary parts of the first (and, for even `n`, the last) value dropped.
fn c2r_ref(h: &[C], n: usize) -> Vec<f64> {
    let mut full = vec![C::new(0.0, 0.0); n];
    for k in 0..n {
        full[k] = if k < h.len() { h[k] } else { h[n - k].conj() };
    }
    full[0].im = 0.0;
    if n.is_multiple_of(2) {
        full[n / 2].im = 0.0;
    }
    dft(&full, [n, 1, 1, 1], 1, true).iter().map(|c| c.re).collect()
}

#[test]
fn c2r_of_any_half_spectrum_is_the_hermitian_extension() {
    let mut r = Rng64::seed_from_u64(12);
    for n in [1usize, 2, 5, 6, 9, 16] {
        let h: Vec<c64> = random(&mut r, n / 2 + 1);
        let want: Vec<C> = c2r_ref(&h, n).iter().map(|&v| C::new(v, 0.0)).collect();
        let got = fft_c2r(&Array::new(&h, dim4!(n / 2 + 1)), 1.0, n % 2 == 1);
        assert_close(&got, dim4!(n), &want, 40.0, l1(&h), &format!("c2r n={n}"));
        let h32: Vec<c32> = h.iter().map(|c| c32::new(c.re as f32, c.im as f32)).collect();
        let got = fft_c2r(&Array::new(&h32, dim4!(n / 2 + 1)), 0.5, n % 2 == 1);
        let half: Vec<C> = want.iter().map(|v| v * 0.5).collect();
        assert_close(&got, dim4!(n), &half, 40.0, l1(&h), "c2r c32");
    }
}

#[test]
fn inplace_forms_match_the_out_of_place_ones() {
    let mut r = Rng64::seed_from_u64(13);
    let x: Vec<c32> = random(&mut r, 5 * 4 * 3);
    let a = Array::new(&x, dim4!(5, 4, 3));
    type F = fn(&mut Array<c32>, f64);
    let cases: [(F, Array<c32>); 6] = [
        (fft_inplace, fft(&a, 0.5, 0)),
        (ifft_inplace, ifft(&a, 0.5, 0)),
        (fft2_inplace, fft2(&a, 0.5, 0, 0)),
        (ifft2_inplace, ifft2(&a, 0.5, 0, 0)),
        (fft3_inplace, fft3(&a, 0.5, 0, 0, 0)),
        (ifft3_inplace, ifft3(&a, 0.5, 0, 0, 0)),
    ];
    for (i, (f, want)) in cases.into_iter().enumerate() {
        let mut b = a.copy();
        let keep = b.clone();
        f(&mut b, 0.5);
        assert_eq!(b.to_vec(), want.to_vec(), "in-place form {i}");
        assert_eq!(keep.to_vec(), x, "a clone keeps the old values");
    }
    let y: Vec<c64> = random(&mut r, 8);
    let mut b = Array::new(&y, dim4!(8));
    fft_inplace(&mut b, 1.0);
    ifft_inplace(&mut b, 1.0 / 8.0);
    assert_close(&b, dim4!(8), &y, 20.0, l1(&y), "c64 in-place round trip");
}

#[test]
fn large_transforms_keep_energy_and_invert() {
    let mut r = Rng64::seed_from_u64(14);
    for n in [1usize << 16, 3 * 5 * 7 * 11 * 13, 65537] {
        let x: Vec<c32> = random(&mut r, n);
        let a = Array::new(&x, dim4!(n));
        let y = fft(&a, 1.0, 0);
        let e_in: f64 = x.iter().map(|v| (v.norm() as f64).powi(2)).sum();
        let e_out: f64 =
            y.to_vec().iter().map(|v| (v.norm() as f64).powi(2)).sum::<f64>() / n as f64;
        assert!((e_in - e_out).abs() <= 1e-4 * e_in, "Parseval n={n}: {e_in} vs {e_out}");
        let back = ifft(&y, 1.0 / n as f64, 0).to_vec();
        let err = back.iter().zip(&x).map(|(a, b)| (a - b).norm()).fold(0f32, f32::max);
        assert!(err < 1e-4, "round trip n={n}: max error {err}");
    }
    // a large batch of short real transforms, f64
    let x: Vec<f64> = random(&mut r, 12 * 5000);
    let a = Array::new(&x, dim4!(12, 5000));
    let back = fft_c2r(&fft_r2c(&a, 1.0, 0), 1.0 / 12.0, false).to_vec();
    assert!(back.iter().zip(&x).all(|(a, b)| (a - b).abs() < 1e-12));
}

#[test]
fn fft_of_a_peak_and_of_a_tone() {
    // a delta at index 1 has spectrum exp(-2 pi i k / n)
    let n = 12;
    let mut x = vec![0.0f64; n];
    x[1] = 1.0;
    let got = fft(&Array::new(&x, dim4!(n)), 1.0, 0).to_vec();
    for (k, v) in got.iter().enumerate() {
        let t = -2.0 * std::f64::consts::PI * k as f64 / n as f64;
        assert!((v - c64::new(t.cos(), t.sin())).norm() < 1e-12, "bin {k}");
    }
    // a cosine of 5 cycles puts n/2 into bins 5 and n - 5
    let n = 64;
    let x: Vec<f32> =
        (0..n).map(|i| (2.0 * std::f32::consts::PI * 5.0 * i as f32 / n as f32).cos()).collect();
    let y = fft_r2c(&Array::new(&x, dim4!(n)), 1.0, 0).to_vec();
    for (k, v) in y.iter().enumerate() {
        let want = if k == 5 { 32.0 } else { 0.0 };
        assert!((v.norm() - want).abs() < 1e-3, "bin {k}: {v}");
    }
}

#[test]
fn lazy_inputs_are_evaluated_first() {
    let mut r = Rng64::seed_from_u64(15);
    let x: Vec<f32> = random(&mut r, 40);
    let a = Array::new(&x, dim4!(8, 5));
    let lazy = &a * 2.0f32 + 1.0f32;
    let direct: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    let b = Array::new(&direct, dim4!(8, 5));
    assert_eq!(fft(&lazy, 1.0, 0).to_vec(), fft(&b, 1.0, 0).to_vec());
    assert_eq!(fft2_r2c(&lazy, 1.0, 0, 0).to_vec(), fft2_r2c(&b, 1.0, 0, 0).to_vec());
    let f = Array::new(&[1.0f32, -1.0], dim4!(2));
    assert_eq!(
        convolve1(&lazy, &f, ConvMode::EXPAND, ConvDomain::SPATIAL).to_vec(),
        convolve1(&b, &f, ConvMode::EXPAND, ConvDomain::SPATIAL).to_vec()
    );
    // an input built from a strided host layout
    let s = Array::new_strided(&direct, 0, dim4!(4, 5), dim4!(2, 8, 40, 40));
    let dense: Vec<f32> = (0..20).map(|i| direct[(i % 4) * 2 + (i / 4) * 8]).collect();
    assert_eq!(fft(&s, 1.0, 0).to_vec(), fft(&Array::new(&dense, dim4!(4, 5)), 1.0, 0).to_vec());
}

#[test]
fn empty_inputs_give_empty_outputs() {
    let e = Array::<f32>::new_empty(dim4!(0, 3));
    let y = fft(&e, 1.0, 0);
    assert_eq!((y.dims(), y.get_type()), (dim4!(0, 3), DType::C32));
    assert_eq!(fft2(&e, 1.0, 4, 4).dims(), dim4!(0, 3));
    assert_eq!(fft3_r2c(&e, 1.0, 0, 0, 0).elements(), 0);
    let ec = Array::<c64>::new_empty(dim4!(3, 0));
    assert_eq!(fft_c2r(&ec, 1.0, false).get_type(), DType::F64);
    assert_eq!(ifft3(&ec, 1.0, 0, 0, 0).elements(), 0);
    let s = Array::new(&[1.0f32, 2.0], dim4!(2));
    let ef = Array::<f32>::new_empty(dim4!(0));
    assert_eq!(convolve1(&s, &ef, ConvMode::EXPAND, ConvDomain::AUTO).to_vec(), vec![1.0, 2.0]);
    assert_eq!(convolve2(&e, &s, ConvMode::EXPAND, ConvDomain::AUTO).dims(), dim4!(0, 3));
    assert_eq!(fir(&s, &ef).elements(), 0);
    assert_eq!(approx1(&s, &ef, InterpType::LINEAR, 0.0).elements(), 0);
}

#[test]
#[should_panic(expected = "fft2: output size -3 along dimension 1 is negative")]
fn negative_output_sizes_panic() {
    fft2(&Array::new(&[1.0f32; 4], dim4!(2, 2)), 1.0, 2, -3);
}

// ---- convolution ------------------------------------------------------------------------------

fn conv_case<T>(seed: u64, tol: f64)
where
    T: Elem,
{
    let mut r = Rng64::seed_from_u64(seed);
    // (signal dims, filter dims, rank): plain, signal batch, filter batch, same batch, mixed
    let cases: [([usize; 4], [usize; 4], usize); 12] = [
        ([9, 1, 1, 1], [3, 1, 1, 1], 1),
        ([10, 1, 1, 1], [4, 1, 1, 1], 1),
        ([7, 3, 2, 1], [2, 1, 1, 1], 1),
        ([6, 1, 1, 1], [3, 4, 1, 1], 1),
        ([5, 3, 1, 1], [3, 3, 1, 1], 1),
        ([6, 5, 1, 1], [3, 3, 1, 1], 2),
        ([7, 4, 1, 1], [4, 2, 1, 1], 2),
        ([5, 6, 3, 1], [3, 2, 1, 1], 2),
        ([5, 4, 1, 1], [2, 3, 3, 1], 2),
        ([4, 5, 2, 3], [3, 3, 1, 3], 2),
        ([5, 4, 3, 2], [3, 2, 2, 1], 3),
        ([4, 3, 5, 1], [2, 3, 4, 2], 3),
    ];
    for (sd, fd, rank) in cases {
        let (sa, fa, sc, fc) = conv_inputs::<T>(&mut r, sd, fd);
        let scale = l1(&sc) * l1(&fc);
        for mode in [ConvMode::DEFAULT, ConvMode::EXPAND] {
            let (od, start) = conv_out(sd, fd, rank, mode);
            let mut want = conv_ref(&sc, sd, &fc, fd, rank, od, start);
            if T::TY.dtype.is_integer() {
                want.iter_mut().for_each(|v| *v = C::new(v.re.round(), 0.0));
            }
            let odims = d4(od[0], od[1], od[2], od[3]);
            for domain in [ConvDomain::SPATIAL, ConvDomain::FREQUENCY, ConvDomain::AUTO] {
                let got = match rank {
                    1 => convolve1(&sa, &fa, mode, domain),
                    2 => convolve2(&sa, &fa, mode, domain),
                    _ => convolve3(&sa, &fa, mode, domain),
                };
                let what = format!("convolve{rank} {sd:?} * {fd:?} {mode:?} {domain:?}");
                assert_close(&got, odims, &want, tol, scale, &what);
            }
            let got = match rank {
                1 => fft_convolve1(&sa, &fa, mode),
                2 => fft_convolve2(&sa, &fa, mode),
                _ => fft_convolve3(&sa, &fa, mode),
            };
            assert_close(
                &got,
                odims,
                &want,
                tol,
                scale,
                &format!("fft_convolve{rank} {sd:?} {mode:?}"),
            );
        }
    }
}

#[test]
fn convolution_matches_direct_loops_in_every_domain_and_batch() {
    conv_case::<f32>(20, 40.0);
    conv_case::<f64>(21, 40.0);
    conv_case::<c32>(22, 40.0);
    conv_case::<c64>(23, 40.0);
    conv_case::<i32>(24, 1.0);
    conv_case::<i16>(25, 1.0);
}

/// Two-dimensional convolutions of images large enough for whole tiles inside them (the CUDA
/// backend's tiled kernel, with its pairs of columns for f32 and filters of up to 25
/// elements, its interior tiles stored without bounds checks), beside tiles cut by every
/// edge: odd widths (no pairs of outputs a row), several images, every filter shape the tiled
/// kernel takes (1 x 1 to 9 x 9, even and odd), in both modes.
fn tiled_conv_case<T: Elem>(seed: u64, tol: f64) {
    let mut r = Rng64::seed_from_u64(seed);
    let cases: [([usize; 4], [usize; 4]); 9] = [
        ([200, 150, 1, 1], [5, 5, 1, 1]),
        ([199, 131, 1, 1], [5, 5, 1, 1]),
        ([130, 70, 2, 1], [3, 4, 1, 1]),
        ([130, 70, 1, 1], [4, 3, 2, 1]),
        ([64, 64, 1, 1], [5, 5, 1, 1]),
        ([128, 128, 1, 1], [1, 1, 1, 1]),
        ([96, 80, 1, 1], [2, 7, 1, 1]),
        ([140, 66, 1, 1], [9, 2, 1, 1]),
        ([257, 65, 1, 1], [9, 9, 1, 1]),
    ];
    for (sd, fd) in cases {
        let (sa, fa, sc, fc) = conv_inputs::<T>(&mut r, sd, fd);
        // (an output sums at most the filter's elements times the largest signal element)
        let scale = sc.iter().map(|v| v.norm()).fold(1.0, f64::max) * l1(&fc);
        for mode in [ConvMode::DEFAULT, ConvMode::EXPAND] {
            let (od, start) = conv_out(sd, fd, 2, mode);
            let want = conv_ref(&sc, sd, &fc, fd, 2, od, start);
            let got = convolve2(&sa, &fa, mode, ConvDomain::SPATIAL);
            let what = format!("convolve2 {sd:?} * {fd:?} {mode:?}");
            assert_close(&got, d4(od[0], od[1], od[2], od[3]), &want, tol, scale, &what);
        }
    }
}

#[test]
fn tiled_convolution_matches_direct_loops_over_whole_and_cut_tiles() {
    tiled_conv_case::<f32>(40, 25.0);
    tiled_conv_case::<f64>(41, 25.0);
    tiled_conv_case::<c32>(42, 25.0);
}

#[test]
fn convolution_of_bytes_rounds_to_nearest() {
    let s = Array::new(&[10u8, 20, 30, 40], dim4!(4));
    // Spatial sums of these products are exact: 2.5, 10, 17.5, 25, 20, so the ties show that
    // halves round away from zero.
    let f = Array::new(&[0.25f32, 0.5], dim4!(2));
    let got = convolve1(&s, &f, ConvMode::EXPAND, ConvDomain::SPATIAL).to_vec();
    assert_eq!(got, vec![3, 10, 18, 25, 20]);
    // Transforms carry rounding error of their own, so an exact tie may land on either side
    // there; away from ties both domains round to the nearest integer (not towards zero).
    let f = Array::new(&[0.26f32, 0.5], dim4!(2));
    let want: Vec<u8> = [2.6f64, 10.2, 17.8, 25.4, 20.0].iter().map(|v| v.round() as u8).collect();
    for domain in [ConvDomain::SPATIAL, ConvDomain::FREQUENCY] {
        let got = convolve1(&s, &f, ConvMode::EXPAND, domain).to_vec();
        assert_eq!(got, want, "{domain:?}");
    }
    // a complex filter on a real signal uses its real part, as ArrayFire does
    let fc = Array::new(&[c32::new(1.0, 5.0)], dim4!(1));
    assert_eq!(
        convolve1(&s, &fc, ConvMode::DEFAULT, ConvDomain::SPATIAL).to_vec(),
        vec![10, 20, 30, 40]
    );
}

#[test]
fn separable_convolution_is_the_outer_product_filter() {
    let mut r = Rng64::seed_from_u64(26);
    for (sd, cn, rn) in
        [([7usize, 6, 1, 1], 3usize, 2usize), ([5, 8, 3, 2], 4, 5), ([6, 1, 1, 1], 1, 3)]
    {
        let s: Vec<f64> = random(&mut r, count(sd));
        let c: Vec<f64> = random(&mut r, cn);
        let rw: Vec<f64> = random(&mut r, rn);
        let sa = Array::new(&s, d4(sd[0], sd[1], sd[2], sd[3]));
        // column filter as a column, row filter as a row
        let ca = Array::new(&c, dim4!(cn));
        let ra = Array::new(&rw, dim4!(1, rn));
        let fd = [cn, rn, 1, 1];
        let outer: Vec<C> = (0..cn * rn).map(|i| C::new(c[i % cn] * rw[i / cn], 0.0)).collect();
        let sc: Vec<C> = s.iter().map(|&v| C::new(v, 0.0)).collect();
        for mode in [ConvMode::DEFAULT, ConvMode::EXPAND] {
            let (od, start) = if mode == ConvMode::EXPAND {
                ([sd[0] + cn - 1, sd[1] + rn - 1, sd[2], sd[3]], [0i64; 4])
            } else {
                (sd, [(cn / 2) as i64, (rn / 2) as i64, 0, 0])
            };
            let want = conv_ref(&sc, sd, &outer, fd, 2, od, start);
            let got = convolve2_sep(&ca, &ra, &sa, mode);
            assert_close(
                &got,
                d4(od[0], od[1], od[2], od[3]),
                &want,
                20.0,
                l1(&sc) * l1(&outer),
                &format!("sep {sd:?} {mode:?}"),
            );
        }
    }
    // integer images round
    let img = Array::new(&[1i32, 2, 3, 4, 5, 6, 7, 8, 9], dim4!(3, 3));
    let k = Array::new(&[1.0f32, 1.0, 1.0], dim4!(3));
    let got = convolve2_sep(&k, &k, &img, ConvMode::DEFAULT).to_vec();
    assert_eq!(got, vec![12, 21, 16, 27, 45, 33, 24, 39, 28]);
}

#[test]
#[should_panic(expected = "convolve2_sep: `rfilt` must be a vector")]
fn separable_filters_must_be_vectors() {
    let img = Array::new(&[1.0f32; 9], dim4!(3, 3));
    let k = Array::new(&[1.0f32; 4], dim4!(2, 2));
    convolve2_sep(&Array::new(&[1.0f32], dim4!(1)), &k, &img, ConvMode::DEFAULT);
}

#[test]
#[should_panic(
    expected = "convolve2: the signal's dims [4 4 3 1] and the filter's dims [3 3 2 1] differ along batch dimension 2"
)]
fn mismatched_batches_panic() {
    let s = Array::new(&[1.0f32; 48], dim4!(4, 4, 3));
    let f = Array::new(&[1.0f32; 18], dim4!(3, 3, 2));
    convolve2(&s, &f, ConvMode::DEFAULT, ConvDomain::SPATIAL);
}

#[test]
fn long_filters_choose_the_frequency_domain_with_the_same_result() {
    let mut r = Rng64::seed_from_u64(27);
    let s: Vec<f64> = random(&mut r, 1000);
    let f: Vec<f64> = random(&mut r, 200);
    let (sa, fa) = (Array::new(&s, dim4!(1000)), Array::new(&f, dim4!(200)));
    let auto = convolve1(&sa, &fa, ConvMode::DEFAULT, ConvDomain::AUTO).to_vec();
    let spatial = convolve1(&sa, &fa, ConvMode::DEFAULT, ConvDomain::SPATIAL).to_vec();
    let sc: Vec<C> = s.iter().map(|&v| C::new(v, 0.0)).collect();
    let fc: Vec<C> = f.iter().map(|&v| C::new(v, 0.0)).collect();
    let want =
        conv_ref(&sc, [1000, 1, 1, 1], &fc, [200, 1, 1, 1], 1, [1000, 1, 1, 1], [100, 0, 0, 0]);
    let scale = l1(&sc) * l1(&fc);
    for (i, w) in want.iter().enumerate() {
        assert!((auto[i] - w.re).abs() < 1e-12 * scale, "auto {i}");
        assert!((spatial[i] - w.re).abs() < 1e-12 * scale, "spatial {i}");
    }
}

// ---- filters --------------------------------------------------------------------------------

#[test]
fn fir_is_the_start_of_the_full_convolution() {
    let mut r = Rng64::seed_from_u64(30);
    for (xd, bd) in [
        ([10usize, 1, 1, 1], [3usize, 1, 1, 1]),
        ([9, 4, 1, 1], [4, 1, 1, 1]),
        ([8, 3, 2, 1], [2, 3, 2, 1]),
        ([300, 2, 1, 1], [150, 1, 1, 1]),
    ] {
        let x: Vec<f32> = random(&mut r, count(xd));
        let b: Vec<f32> = random(&mut r, count(bd));
        let xc: Vec<C> = x.iter().map(|&v| C::new(v as f64, 0.0)).collect();
        let bc: Vec<C> = b.iter().map(|&v| C::new(v as f64, 0.0)).collect();
        let want = conv_ref(&xc, xd, &bc, bd, 1, xd, [0; 4]);
        let got = fir(
            &Array::new(&b, d4(bd[0], bd[1], bd[2], bd[3])),
            &Array::new(&x, d4(xd[0], xd[1], xd[2], xd[3])),
        );
        assert_close(
            &got,
            d4(xd[0], xd[1], xd[2], xd[3]),
            &want,
            60.0,
            l1(&xc) * l1(&bc),
            &format!("fir {xd:?} {bd:?}"),
        );
    }
    let x = Array::new(&[c64::new(1.0, 1.0), c64::new(2.0, 0.0)], dim4!(2));
    let b = Array::new(&[c64::new(0.0, 1.0), c64::new(1.0, 0.0)], dim4!(2));
    assert_eq!(fir(&b, &x).to_vec(), vec![c64::new(-1.0, 1.0), c64::new(1.0, 3.0)]);
}

fn iir_ref(b: &[C], a: &[C], x: &[C]) -> Vec<C> {
    let mut y = vec![C::new(0.0, 0.0); x.len()];
    for n in 0..x.len() {
        let mut acc = C::new(0.0, 0.0);
        for (k, bk) in b.iter().enumerate().take(n + 1) {
            acc += bk * x[n - k];
        }
        for (k, ak) in a.iter().enumerate().skip(1).take(n) {
            acc -= ak * y[n - k];
        }
        y[n] = acc / a[0];
    }
    y
}

fn iir_case<T: Elem>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (n, cols, nb, na, per_col) in [
        (12usize, 1usize, 3usize, 3usize, false),
        (20, 3, 2, 4, false),
        (15, 2, 3, 2, true),
        (9, 4, 1, 1, false),
        (7, 2, 4, 1, true),
    ] {
        let x: Vec<T> = random(&mut r, n * cols);
        let fc = if per_col { cols } else { 1 };
        let b: Vec<T> = random(&mut r, nb * fc);
        // a stable recursion: a[0] = 2 + small, other taps small
        let a: Vec<T> = (0..na * fc)
            .map(|i| {
                let v = T::small(&mut r).to_v().c() * 0.03;
                T::from_v(if T::TY.dtype.is_complex() {
                    V::C(if i % na == 0 { v + C::new(2.0, 0.0) } else { v })
                } else {
                    V::F(if i % na == 0 { v.re + 2.0 } else { v.re })
                })
            })
            .collect();
        let got = iir(
            &Array::new(&b, dim4!(nb, fc)),
            &Array::new(&a, dim4!(na, fc)),
            &Array::new(&x, dim4!(n, cols)),
        );
        let (xc, bc, ac): (Vec<C>, Vec<C>, Vec<C>) = (
            x.iter().map(|v| v.to_v().c()).collect(),
            b.iter().map(|v| v.to_v().c()).collect(),
            a.iter().map(|v| v.to_v().c()).collect(),
        );
        let mut want = Vec::new();
        for c in 0..cols {
            let f = if per_col { c } else { 0 };
            want.extend(iir_ref(
                &bc[f * nb..(f + 1) * nb],
                &ac[f * na..(f + 1) * na],
                &xc[c * n..(c + 1) * n],
            ));
        }
        assert_close(
            &got,
            dim4!(n, cols),
            &want,
            100.0,
            l1(&xc) * l1(&bc),
            &format!("iir n={n} na={na}"),
        );
    }
}

#[test]
fn iir_matches_the_recursion() {
    iir_case::<f32>(31);
    iir_case::<f64>(32);
    iir_case::<c32>(33);
    iir_case::<c64>(34);
}

#[test]
#[should_panic(expected = "iir: defined for f32, f64, c32 and c64 arrays, not i32")]
fn iir_rejects_integers() {
    let v = Array::new(&[1i32, 2], dim4!(2));
    iir(&v, &v, &v);
}

// ---- interpolation ----------------------------------------------------------------------------

/// ArrayFire's interpolation of `v` at `x`, written out: neighbours clamped to the edges,
/// `None` off the grid.
fn interp_ref(v: &[C], x: f64, m: InterpType) -> Option<C> {
    let n = v.len();
    if x.is_nan() || x < 0.0 || x > n as f64 - 1.0 {
        return None;
    }
    let at = |i: i64| v[i.clamp(0, n as i64 - 1) as usize];
    let g = x.floor() as i64;
    let t = x - x.floor();
    Some(match m {
        InterpType::NEAREST => at(x.round() as i64),
        InterpType::LOWER => at(g),
        InterpType::LINEAR | InterpType::BILINEAR => at(g) + (at(g + 1) - at(g)) * t,
        InterpType::LINEAR_COSINE | InterpType::BILINEAR_COSINE => {
            let w = 0.5 - 0.5 * (std::f64::consts::PI * t).cos();
            at(g) + (at(g + 1) - at(g)) * w
        }
        InterpType::CUBIC | InterpType::BICUBIC => {
            let (p0, p1, p2, p3) = (at(g - 1), at(g), at(g + 1), at(g + 2));
            let a = p3 - p2 - p0 + p1;
            a * t * t * t + (p0 - p1 - a) * t * t + (p2 - p0) * t + p1
        }
        _ => {
            // Catmull-Rom
            let (p0, p1, p2, p3) = (at(g - 1), at(g), at(g + 1), at(g + 2));
            (p1 * 2.0
                + (p2 - p0) * t
                + (p0 * 2.0 - p1 * 5.0 + p2 * 4.0 - p3) * t * t
                + (p1 * 3.0 - p0 - p2 * 3.0 + p3) * t * t * t)
                * 0.5
        }
    })
}

const METHODS_1D: [InterpType; 6] = [
    InterpType::NEAREST,
    InterpType::LOWER,
    InterpType::LINEAR,
    InterpType::LINEAR_COSINE,
    InterpType::CUBIC,
    InterpType::CUBIC_SPLINE,
];

fn approx1_case<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let (n, cols) = (7usize, 3usize);
    let y: Vec<T> = random(&mut r, n * cols);
    let yc: Vec<C> = y.iter().map(|v| v.to_v().c()).collect();
    let ya = Array::new(&y, dim4!(n, cols));
    let mut pos: Vec<f64> = (0..9).map(|_| common::Rng::gen_range(&mut r, -1.0..7.5)).collect();
    pos.extend([0.0, 6.0, 2.5, f64::NAN, 3.0]);
    for m in METHODS_1D {
        // shared positions
        let got = approx1(&ya, &Array::new(&pos, dim4!(pos.len())), m, -3.0);
        let want: Vec<C> = (0..cols)
            .flat_map(|c| pos.iter().map(move |&x| (c, x)))
            .map(|(c, x)| interp_ref(&yc[c * n..(c + 1) * n], x, m).unwrap_or(C::new(-3.0, 0.0)))
            .collect();
        assert_close(&got, dim4!(pos.len(), cols), &want, 40.0, 8.0, &format!("approx1 {m:?}"));
        // positions per column, as f32
        let pc: Vec<f32> =
            (0..4 * cols).map(|i| pos[i % pos.len()] as f32 + (i / 4) as f32 * 0.5).collect();
        let got = approx1(&ya, &Array::new(&pc, dim4!(4, cols)), m, 0.0);
        let want: Vec<C> = (0..4 * cols)
            .map(|i| {
                interp_ref(&yc[(i / 4) * n..(i / 4 + 1) * n], pc[i] as f64, m).unwrap_or_default()
            })
            .collect();
        assert_close(&got, dim4!(4, cols), &want, 40.0, 8.0, &format!("approx1 per column {m:?}"));
    }
}

#[test]
fn approx1_matches_the_formulas() {
    approx1_case::<f32>(40);
    approx1_case::<f64>(41);
    approx1_case::<c32>(42);
    approx1_case::<c64>(43);
}

fn approx2_case<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let (w, h, imgs) = (6usize, 5usize, 2usize);
    let z: Vec<T> = random(&mut r, w * h * imgs);
    let zc: Vec<C> = z.iter().map(|v| v.to_v().c()).collect();
    let za = Array::new(&z, dim4!(w, h, imgs));
    let (pw, ph) = (4usize, 3usize);
    let px: Vec<f64> = (0..pw * ph).map(|_| common::Rng::gen_range(&mut r, -0.5..5.5)).collect();
    let py: Vec<f64> = (0..pw * ph).map(|_| common::Rng::gen_range(&mut r, -0.2..4.3)).collect();
    let methods = [
        InterpType::NEAREST,
        InterpType::LOWER,
        InterpType::LINEAR,
        InterpType::BILINEAR,
        InterpType::BILINEAR_COSINE,
        InterpType::CUBIC,
        InterpType::BICUBIC,
        InterpType::BICUBIC_SPLINE,
    ];
    for m in methods {
        let got =
            approx2(&za, &Array::new(&px, dim4!(pw, ph)), &Array::new(&py, dim4!(pw, ph)), m, 7.0);
        let mut want = Vec::new();
        for img in 0..imgs {
            for i in 0..pw * ph {
                let rows: Vec<Option<C>> = (0..h)
                    .map(|row| {
                        interp_ref(
                            &zc[img * w * h + row * w..img * w * h + (row + 1) * w],
                            px[i],
                            m,
                        )
                    })
                    .collect();
                let v = match rows[0] {
                    None => None,
                    Some(_) => {
                        let col: Vec<C> = rows.iter().map(|v| v.unwrap()).collect();
                        interp_ref(&col, py[i], m)
                    }
                };
                want.push(v.unwrap_or(C::new(7.0, 0.0)));
            }
        }
        assert_close(&got, dim4!(pw, ph, imgs), &want, 40.0, 8.0, &format!("approx2 {m:?}"));
    }
}

#[test]
fn approx2_matches_the_formulas() {
    approx2_case::<f32>(44);
    approx2_case::<f64>(45);
    approx2_case::<c32>(46);
    approx2_case::<c64>(47);
}

#[test]
fn catmull_rom_reproduces_lines_and_samples() {
    let y: Vec<f64> = (0..6).map(|i| 3.0 * i as f64 - 1.0).collect();
    let pos: Vec<f64> = vec![1.0, 1.25, 2.5, 3.75];
    let got = approx1(
        &Array::new(&y, dim4!(6)),
        &Array::new(&pos, dim4!(4)),
        InterpType::CUBIC_SPLINE,
        0.0,
    )
    .to_vec();
    for (g, p) in got.iter().zip(&pos) {
        assert!((g - (3.0 * p - 1.0)).abs() < 1e-12, "at {p}: {g}");
    }
}

#[test]
#[should_panic(expected = "approx1: BILINEAR is a 2D method")]
fn approx1_rejects_2d_methods() {
    let y = Array::new(&[1.0f32, 2.0], dim4!(2));
    approx1(&y, &y, InterpType::BILINEAR, 0.0);
}

#[test]
#[should_panic(
    expected = "approx1: `pos` (dims [2 3 1 1]) must be a column of positions, or match the input (dims [4 2 1 1])"
)]
fn approx1_rejects_mismatched_positions() {
    let y = Array::new(&[1.0f32; 8], dim4!(4, 2));
    let p = Array::new(&[1.0f32; 6], dim4!(2, 3));
    approx1(&y, &p, InterpType::LINEAR, 0.0);
}

#[test]
#[should_panic(
    expected = "approx2: `pos0` (dims [2 1 1 1]) and `pos1` (dims [3 1 1 1]) must have the same shape"
)]
fn approx2_rejects_mismatched_positions() {
    let y = Array::new(&[1.0f32; 4], dim4!(2, 2));
    approx2(
        &y,
        &Array::new(&[0.0f32; 2], dim4!(2)),
        &Array::new(&[0.0f32; 3], dim4!(3)),
        InterpType::LINEAR,
        0.0,
    );
}

// ---- arrayfire-rust's example, unchanged but for the `use` line --------------------------------

mod arrayfire_example_fft {
    use emberfire::*;
    use num::Complex;
    use num_complex as num;

    #[allow(dead_code)]
    type Complex32 = Complex<f32>;

    #[allow(unused_must_use)]
    #[allow(unused_variables)]
    pub fn main() -> Array<Complex<f64>> {
        set_device(0);
        info();
        let samples = 10;
        let dims = Dim4::new(&[samples, 1, 1, 1]);

        let values = vec![
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
            Complex::new(0.0, 2.0),
        ];

        let signal = Array::new(&values, dims);

        af_print!("signal", signal);

        // Used length of input signal as norm_factor
        let output = fft(&signal, 0.1, samples as i64);

        af_print!("Output", output);
        output
    }
}

#[test]
fn arrayfire_rust_fft_example_runs_unchanged() {
    // a constant 2i of 10 samples, scaled by 0.1: 2i in bin 0, nothing elsewhere
    let out = arrayfire_example_fft::main().to_vec();
    assert!((out[0] - c64::new(0.0, 2.0)).norm() < 1e-12);
    assert!(out[1..].iter().all(|v| v.norm() < 1e-12));
}

// ---- random shapes ------------------------------------------------------------------------------

#[test]
fn random_shapes_round_trip_and_convolve() {
    common::run_cases(24, |d, seed| {
        let mut r = Rng64::seed_from_u64(seed);
        let n = d.elements() as usize;
        let x: Vec<c32> = random(&mut r, n);
        let xc: Vec<C> = x.iter().map(|v| v.to_v().c()).collect();
        let a = Array::new(&x, d);
        let tol = Tol::x(200.0).scale(8.0);
        let what = |s: &'static str| move |i: usize| format!("{s} dims {d} element {i}");
        let n0 = d[0].max(1) as f64;
        let back = ifft(&fft(&a, 1.0, 0), 1.0 / n0, 0);
        common::check_all(&back.to_vec(), &common::vs(&x), tol, &what("fft round trip"))?;
        let n01 = (d[0] * d[1]).max(1) as f64;
        let back = ifft2(&fft2(&a, 1.0, 0, 0), 1.0 / n01, 0, 0);
        common::check_all(&back.to_vec(), &common::vs(&x), tol, &what("fft2 round trip"))?;
        // a 3-tap filter down the columns, in both domains
        let f: Vec<c32> = random(&mut r, 3);
        let fc: Vec<C> = f.iter().map(|v| v.to_v().c()).collect();
        let fa = Array::new(&f, dim4!(3));
        let sd = us(d);
        let od = if n == 0 { sd } else { [sd[0] + 2, sd[1], sd[2], sd[3]] };
        let want: Vec<V> = if n == 0 {
            Vec::new()
        } else {
            conv_ref(&xc, sd, &fc, [3, 1, 1, 1], 1, od, [0; 4]).into_iter().map(V::C).collect()
        };
        for domain in [ConvDomain::SPATIAL, ConvDomain::FREQUENCY] {
            let got = convolve1(&a, &fa, ConvMode::EXPAND, domain);
            common::check_all(&got.to_vec(), &want, Tol::x(100.0).scale(64.0), &what("convolve1"))?;
        }
        Ok(())
    });
}
