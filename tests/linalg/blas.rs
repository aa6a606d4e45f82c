//! Matrix products (`matmul`, `gemm`, `dot`) on every element type they take (f16, bf16, f32,
//! f64, c32, c64), against references computed here in c64 with a naive triple loop: every
//! combination of `MatProp`s, non-square and degenerate shapes (an inner size of 0, empty
//! results, rows, columns, vectors), batches over dimensions 2 and 3 with broadcasting, lazy
//! operands, `gemm` accumulating into an output (also one shared with other arrays), `dot` with
//! conjugation, and the panics for bad arguments.
//!
//! Tolerances follow the error bound of a sum of `k` products: a few units of the type's
//! rounding error times `k` times Σ|a||b|, the sum of the magnitudes of the terms. bf16
//! products accumulate in f32, so their sums are held to f32's rounding error and only the
//! final rounding to bf16's (half an ulp at the result's magnitude).

use crate::common;

use common::{Elem, Rng64, SeedableRng};
use emberfire::*;
use rand::Rng;

/// The unit roundoff of an element type (of its real part).
fn unit_roundoff(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2f64.powi(-11),
        DType::BF16 => 2f64.powi(-8),
        DType::F32 | DType::C32 => 2f64.powi(-24),
        _ => 2f64.powi(-53),
    }
}

/// `n` random moderate values of `T` (|x| <= 8), and their exact values.
fn random<T: Elem>(r: &mut Rng64, n: usize) -> (Vec<T>, Vec<c64>) {
    let v: Vec<T> = (0..n).map(|_| T::small(r)).collect();
    let exact = v.iter().map(|x| x.to_v().c()).collect();
    (v, exact)
}

/// A random array of shape `dims` and its exact values.
fn random_array<T: Elem>(r: &mut Rng64, dims: Dim4) -> (Array<T>, Vec<c64>) {
    let (v, exact) = random::<T>(r, dims.elements() as usize);
    (Array::new(&v, dims), exact)
}

/// `(transpose, conjugate)` of a product operand.
fn op_of(p: MatProp) -> (bool, bool) {
    match p {
        MatProp::NONE => (false, false),
        MatProp::TRANS => (true, false),
        MatProp::CTRANS => (true, true),
        MatProp::CONJ => (false, true),
        other => panic!("test bug: {other:?}"),
    }
}

/// A stored operand: values (column-major), shape and `op`.
struct Operand<'a> {
    v: &'a [c64],
    dims: Dim4,
    prop: MatProp,
}

impl Operand<'_> {
    /// Rows and columns of op(x).
    fn shape(&self) -> (u64, u64) {
        let (t, _) = op_of(self.prop);
        if t {
            (self.dims[1], self.dims[0])
        } else {
            (self.dims[0], self.dims[1])
        }
    }

    /// Element (i, j) of op(x) in batch (b2, b3); a batch dimension of 1 broadcasts.
    fn at(&self, i: u64, j: u64, b2: u64, b3: u64) -> c64 {
        let (t, c) = op_of(self.prop);
        let (r, col) = if t { (j, i) } else { (i, j) };
        let d = self.dims;
        let b2 = if d[2] == 1 { 0 } else { b2 };
        let b3 = if d[3] == 1 { 0 } else { b3 };
        let x = self.v[(r + d[0] * (col + d[1] * (b2 + d[2] * b3))) as usize];
        if c {
            x.conj()
        } else {
            x
        }
    }
}

/// The product op(a)·op(b) by the definition: result dims, values, Σ|a||b| per element, k.
fn reference(a: &Operand, b: &Operand) -> (Dim4, Vec<c64>, Vec<f64>, u64) {
    let ((m, k), (_, n)) = (a.shape(), b.shape());
    let batch = |d: usize| if a.dims[d] == 1 { b.dims[d] } else { a.dims[d] };
    let (b2, b3) = (batch(2), batch(3));
    let dims = Dim4::new(&[m, n, b2, b3]);
    let mut want = Vec::new();
    let mut mag = Vec::new();
    for l in 0..b3 {
        for q in 0..b2 {
            for j in 0..n {
                for i in 0..m {
                    let (mut s, mut t) = (c64::new(0.0, 0.0), 0.0);
                    for p in 0..k {
                        let (x, y) = (a.at(i, p, q, l), b.at(p, j, q, l));
                        s += x * y;
                        t += x.norm() * y.norm();
                    }
                    want.push(s);
                    mag.push(t);
                }
            }
        }
    }
    (dims, want, mag, k)
}

/// Whether `got` has shape `dims` and values within the bound of a `k`-term sum of each
/// reference value; the error names the first difference.
fn compare<T: Elem>(
    got: &Array<T>,
    dims: Dim4,
    want: &[c64],
    mag: &[f64],
    k: u64,
    what: &str,
) -> std::result::Result<(), String> {
    if got.get_type() != T::TY.dtype || got.dims() != dims {
        return Err(format!(
            "{what}: got a {} array of dims {}, want {} of dims {dims}",
            got.get_type().name(),
            got.dims(),
            T::TY.name
        ));
    }
    let values = got.to_vec();
    if values.len() != want.len() {
        return Err(format!("{what}: {} elements, want {}", values.len(), want.len()));
    }
    let u = unit_roundoff(T::TY.dtype);
    let sum_u = if T::TY.dtype == DType::BF16 { unit_roundoff(DType::F32) } else { u };
    for (i, (g, (w, m))) in values.iter().zip(want.iter().zip(mag)).enumerate() {
        let g = g.to_v().c();
        // Accumulation error (k terms, complex products count twice) and the final rounding.
        let allowed = 4.0 * (k as f64 + 1.0) * sum_u * m + u * w.norm() + 1e-300;
        if (g - w).norm() > allowed || g.re.is_nan() || g.im.is_nan() {
            return Err(format!(
                "{what}: element {i} is {g}, want {w} (allowed error {allowed:e}, Σ|a||b| = {m})"
            ));
        }
    }
    Ok(())
}

/// Asserts what [`compare`] checks.
fn check<T: Elem>(got: &Array<T>, dims: Dim4, want: &[c64], mag: &[f64], k: u64, what: &str) {
    if let Err(e) = compare(got, dims, want, mag, k, what) {
        panic!("{e}");
    }
}

const PROPS: [MatProp; 4] = [MatProp::NONE, MatProp::TRANS, MatProp::CTRANS, MatProp::CONJ];

/// The stored shape whose op has `rows`×`cols`, with batch dimensions `b2`, `b3`.
fn stored(prop: MatProp, rows: u64, cols: u64, b2: u64, b3: u64) -> Dim4 {
    if op_of(prop).0 {
        dim4!(cols, rows, b2, b3)
    } else {
        dim4!(rows, cols, b2, b3)
    }
}

/// One product with op(a) m×k and op(b) k×n and the given batches, checked against the
/// reference.
fn product_case<T: Elem + GemmType>(
    r: &mut Rng64,
    (m, n, k): (u64, u64, u64),
    (pa, pb): (MatProp, MatProp),
    (ba, bb): ([u64; 2], [u64; 2]),
) {
    let ad = stored(pa, m, k, ba[0], ba[1]);
    let bd = stored(pb, k, n, bb[0], bb[1]);
    let (a, av) = random_array::<T>(r, ad);
    let (b, bv) = random_array::<T>(r, bd);
    let got = matmul(&a, &b, pa, pb);
    let (dims, want, mag, k) =
        reference(&Operand { v: &av, dims: ad, prop: pa }, &Operand { v: &bv, dims: bd, prop: pb });
    let what = format!("{}: matmul(lhs {ad}, rhs {bd}, {pa:?}, {pb:?})", T::TY.name);
    check(&got, dims, &want, &mag, k, &what);
}

fn every_prop_combination<T: Elem + GemmType>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for pa in PROPS {
        for pb in PROPS {
            for _ in 0..3 {
                let (m, n, k) = (r.gen_range(1..=9), r.gen_range(1..=9), r.gen_range(1..=9));
                product_case::<T>(&mut r, (m, n, k), (pa, pb), ([1, 1], [1, 1]));
            }
            // large enough for the blocked kernels (and several threads) to take over
            product_case::<T>(&mut r, (67, 45, 130), (pa, pb), ([1, 1], [1, 1]));
        }
    }
}

/// Shapes that cross each kind of block of the CPU's own f32 and f64 kernels (on AVX-512
/// machines): `A` is packed in blocks of 480 rows by 384 (f64: 256) of the depth, `B` in
/// blocks of the depth by 3072 columns, and tiles are 32 (f64: 16) x 12. Each shape crosses
/// one kind of block and ends in partial tiles, and the larger side is split over the threads.
fn products_cross_every_block_edge<T: Elem + GemmType>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let one = ([1, 1], [1, 1]);
    product_case::<T>(&mut r, (513, 37, 400), (MatProp::NONE, MatProp::NONE), one);
    product_case::<T>(&mut r, (45, 3085, 7), (MatProp::TRANS, MatProp::NONE), one);
    product_case::<T>(&mut r, (97, 25, 770), (MatProp::TRANS, MatProp::TRANS), one);
    product_case::<T>(&mut r, (1000, 3, 33), (MatProp::NONE, MatProp::TRANS), one);
}

#[test]
fn f32_products_cross_every_block_edge() {
    products_cross_every_block_edge::<f32>(41);
}

#[test]
fn f64_products_cross_every_block_edge() {
    products_cross_every_block_edge::<f64>(42);
}

#[test]
fn gemm_accumulates_across_depth_blocks_f32() {
    // beta scales C once, in the first block of the depth, and later blocks add to it
    gemm_shape_case::<f32>(43, (70, 30, 800));
}

#[test]
fn gemm_accumulates_across_depth_blocks_f64() {
    gemm_shape_case::<f64>(44, (70, 30, 600));
}

#[test]
fn matmul_every_matprop_f32() {
    every_prop_combination::<f32>(1);
}

#[test]
fn matmul_every_matprop_f64() {
    every_prop_combination::<f64>(2);
}

#[test]
fn matmul_every_matprop_c32() {
    every_prop_combination::<c32>(3);
}

#[test]
fn matmul_every_matprop_c64() {
    every_prop_combination::<c64>(4);
}

#[test]
fn matmul_every_matprop_f16() {
    every_prop_combination::<f16>(5);
}

#[test]
fn matmul_every_matprop_bf16() {
    every_prop_combination::<bf16>(6);
}

#[test]
fn bf16_products_accumulate_in_f32() {
    // a depth of 4096 terms of about 1 each: a bf16 accumulator would stop growing at 256
    // (where 1 is below half an ulp) and be off by thousands; the f32 sum is within k ulps
    // of f32 before the one rounding to bf16
    let mut r = Rng64::seed_from_u64(77);
    let k = 4096u64;
    let (a, av) = random_array::<bf16>(&mut r, dim4!(3, k));
    let ones: Vec<bf16> = vec![common::bf16_nearest(1.0); 2 * k as usize];
    let b = Array::new(&ones, dim4!(k, 2));
    let bv: Vec<c64> = ones.iter().map(|x| c64::new(x.to_f64(), 0.0)).collect();
    let got = matmul(&(&a + common::bf16_nearest(8.0)), &b, MatProp::NONE, MatProp::NONE);
    let shifted: Vec<c64> =
        av.iter().map(|x| c64::new(common::bf16_nearest(x.re + 8.0).to_f64(), 0.0)).collect();
    let (dims, want, mag, k) = reference(
        &Operand { v: &shifted, dims: dim4!(3, k), prop: MatProp::NONE },
        &Operand { v: &bv, dims: dim4!(k, 2), prop: MatProp::NONE },
    );
    check(&got, dims, &want, &mag, k, "bf16 depth 4096");
}

fn degenerate<T: Elem + GemmType>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let none = (MatProp::NONE, MatProp::NONE);
    let single = ([1, 1], [1, 1]);
    // rows, columns, vectors, outer and inner products, scalars
    for (m, n, k) in [(1, 1, 1), (1, 7, 5), (7, 1, 5), (5, 6, 1), (1, 1, 9), (9, 8, 1), (3, 1, 1)] {
        for props in [none, (MatProp::TRANS, MatProp::NONE), (MatProp::NONE, MatProp::CTRANS)] {
            product_case::<T>(&mut r, (m, n, k), props, single);
        }
    }
    // an inner size of 0: every element is an empty sum
    for (m, n) in [(3, 4), (1, 1), (5, 1)] {
        let a = Array::<T>::new_empty(dim4!(m, 0));
        let b = Array::<T>::new_empty(dim4!(0, n));
        let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE);
        assert_eq!(c.dims(), dim4!(m, n), "{}: k = 0", T::TY.name);
        assert!(c.to_vec().iter().all(|x| x.to_v().c() == c64::new(0.0, 0.0)));
        let at = Array::<T>::new_empty(dim4!(0, m));
        assert_eq!(matmul(&at, &b, MatProp::TRANS, MatProp::NONE).dims(), dim4!(m, n));
    }
    // no rows, no columns, no batches: empty results of the right shape
    for (ad, bd, want) in [
        (dim4!(0, 3), dim4!(3, 4), dim4!(0, 4)),
        (dim4!(2, 3), dim4!(3, 0), dim4!(2, 0)),
        (dim4!(0, 0), dim4!(0, 0), dim4!(0, 0)),
        (dim4!(2, 3, 0), dim4!(3, 4), dim4!(2, 4, 0)),
        (dim4!(2, 3), dim4!(3, 4, 1, 0), dim4!(2, 4, 1, 0)),
    ] {
        let (a, _) = random_array::<T>(&mut r, ad);
        let (b, _) = random_array::<T>(&mut r, bd);
        let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE);
        assert_eq!(c.dims(), want, "{}: matmul({ad}, {bd})", T::TY.name);
        assert!(c.is_empty());
    }
}

#[test]
fn degenerate_shapes_f32() {
    degenerate::<f32>(11);
}

#[test]
fn degenerate_shapes_f64() {
    degenerate::<f64>(12);
}

#[test]
fn degenerate_shapes_c32() {
    degenerate::<c32>(13);
}

#[test]
fn degenerate_shapes_c64() {
    degenerate::<c64>(14);
}

#[test]
fn degenerate_shapes_f16() {
    degenerate::<f16>(15);
}

#[test]
fn degenerate_shapes_bf16() {
    degenerate::<bf16>(16);
}

fn batches<T: Elem + GemmType>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    // Every way the two batch dimensions can be shared or broadcast, including the mixed
    // cases (lhs batched along 3 only, rhs along 2 only) that cannot be one strided batch.
    let shapes = [[1, 1], [3, 1], [1, 2], [3, 2]];
    for ba in shapes {
        for bb in shapes {
            let props = [(MatProp::NONE, MatProp::NONE), (MatProp::CTRANS, MatProp::TRANS)];
            for (pa, pb) in props {
                product_case::<T>(&mut r, (4, 5, 3), (pa, pb), (ba, bb));
            }
        }
    }
    // many small batches (spread over the cores) and a few large ones
    product_case::<T>(&mut r, (6, 5, 7), (MatProp::NONE, MatProp::NONE), ([40, 3], [40, 1]));
    product_case::<T>(&mut r, (70, 65, 80), (MatProp::TRANS, MatProp::NONE), ([2, 1], [1, 2]));
}

#[test]
fn batched_and_broadcast_f32() {
    batches::<f32>(21);
}

#[test]
fn batched_and_broadcast_f64() {
    batches::<f64>(22);
}

#[test]
fn batched_and_broadcast_c32() {
    batches::<c32>(23);
}

#[test]
fn batched_and_broadcast_c64() {
    batches::<c64>(24);
}

#[test]
fn batched_and_broadcast_f16() {
    batches::<f16>(25);
}

#[test]
fn batched_and_broadcast_bf16() {
    batches::<bf16>(26);
}

#[test]
fn random_shapes_including_empty_and_size_one() {
    // op(a) is d0×d1, op(b) d1×d2, batches along dimension 3 (broadcast from a or b in turn).
    common::run_cases(48, |d, seed| {
        let mut r = Rng64::seed_from_u64(seed);
        let (m, k, n, b) = (d[0], d[1], d[2], d[3]);
        let (pa, pb) = (PROPS[(seed % 4) as usize], PROPS[(seed / 4 % 4) as usize]);
        let (ba, bb) = if seed % 2 == 0 { ([1, b], [1, 1]) } else { ([1, 1], [1, b]) };
        let ad = stored(pa, m, k, ba[0], ba[1]);
        let bd = stored(pb, k, n, bb[0], bb[1]);
        let (a, av) = random_array::<c32>(&mut r, ad);
        let (bm, bv) = random_array::<c32>(&mut r, bd);
        let got = matmul(&a, &bm, pa, pb);
        let (dims, want, mag, k) = reference(
            &Operand { v: &av, dims: ad, prop: pa },
            &Operand { v: &bv, dims: bd, prop: pb },
        );
        compare(&got, dims, &want, &mag, k, &format!("matmul({ad}, {bd}, {pa:?}, {pb:?})"))
    });
}

#[test]
fn lazy_operands_are_evaluated() {
    let mut r = Rng64::seed_from_u64(31);
    let (a, av) = random_array::<f64>(&mut r, dim4!(6, 4));
    let (b, bv) = random_array::<f64>(&mut r, dim4!(4, 5));
    // lazy trees: 2a + 1 and b * b
    let la = &a * 2.0f64 + 1.0f64;
    let lb = &b * &b;
    let av2: Vec<c64> = av.iter().map(|x| x * 2.0 + 1.0).collect();
    let bv2: Vec<c64> = bv.iter().map(|x| x * x).collect();
    for (pa, pb) in [(MatProp::NONE, MatProp::NONE), (MatProp::CONJ, MatProp::CONJ)] {
        let got = matmul(&la, &lb, pa, pb);
        let (dims, want, mag, k) = reference(
            &Operand { v: &av2, dims: dim4!(6, 4), prop: pa },
            &Operand { v: &bv2, dims: dim4!(4, 5), prop: pb },
        );
        check(&got, dims, &want, &mag, k, "lazy operands");
    }
    // the same lazy array on both sides, through a transpose
    let got = matmul(&la, &la, MatProp::TRANS, MatProp::NONE);
    let ops = Operand { v: &av2, dims: dim4!(6, 4), prop: MatProp::TRANS };
    let (dims, want, mag, k) = reference(&ops, &Operand { prop: MatProp::NONE, ..ops });
    check(&got, dims, &want, &mag, k, "lazyᵀ·lazy");
}

#[test]
fn f32_products_keep_full_precision_by_default() {
    // 1 + 2^-20 is exact in f32 but rounds to 1 in TF32 (10 mantissa bits): A·I must give A
    // exactly unless the user allows TF32 (`set_cublas_mode`).
    assert_eq!(get_cublas_mode(), CublasMathMode::DEFAULT);
    let n = 256;
    let x = 1.0f32 + 2f32.powi(-20);
    let a: Vec<f32> = (0..n * n).map(|i| if i % 3 == 0 { x } else { -x }).collect();
    let eye: Vec<f32> = (0..n * n).map(|i| if i % (n + 1) == 0 { 1.0 } else { 0.0 }).collect();
    let (a, eye) = (Array::new(&a, dim4!(n, n)), Array::new(&eye, dim4!(n, n)));
    assert_eq!(matmul(&a, &eye, MatProp::NONE, MatProp::NONE).to_vec(), a.to_vec());
    let z: Vec<c32> = (0..n * n).map(|i| c32::new(x, if i % 2 == 0 { x } else { 0.0 })).collect();
    let z = Array::new(&z, dim4!(n, n));
    let eye_c = eye.cast::<c32>();
    assert_eq!(matmul(&eye_c, &z, MatProp::NONE, MatProp::NONE).to_vec(), z.to_vec());
}

fn gemm_case<T: Elem + GemmType>(seed: u64) {
    gemm_shape_case::<T>(seed, (5, 4, 6));
}

fn gemm_shape_case<T: Elem + GemmType>(seed: u64, (m, n, k): (u64, u64, u64)) {
    let mut r = Rng64::seed_from_u64(seed);
    for (pa, pb) in [(MatProp::NONE, MatProp::NONE), (MatProp::CTRANS, MatProp::CONJ)] {
        for batch in [[1u64, 1u64], [2, 3]] {
            let ad = stored(pa, m, k, batch[0], batch[1]);
            let bd = stored(pb, k, n, 1, batch[1]);
            let (a, av) = random_array::<T>(&mut r, ad);
            let (b, bv) = random_array::<T>(&mut r, bd);
            let cd = dim4!(m, n, batch[0], batch[1]);
            let (c0, cv) = random_array::<T>(&mut r, cd);
            let (alpha, al) = random::<T>(&mut r, 1);
            let (beta, be) = random::<T>(&mut r, 1);
            let mut c = c0.copy();
            let shared = c.clone();
            gemm(&mut c, pa, pb, alpha.clone(), &a, &b, beta.clone());
            let (dims, prod, mag, k) = reference(
                &Operand { v: &av, dims: ad, prop: pa },
                &Operand { v: &bv, dims: bd, prop: pb },
            );
            let want: Vec<c64> = prod.iter().zip(&cv).map(|(p, c)| al[0] * p + be[0] * c).collect();
            let bound: Vec<f64> = mag
                .iter()
                .zip(&cv)
                .map(|(m, c)| al[0].norm() * m + be[0].norm() * c.norm())
                .collect();
            let what = format!("{}: gemm({pa:?}, {pb:?}, batch {batch:?})", T::TY.name);
            check(&c, dims, &want, &bound, k + 1, &what);
            // the clone still holds the old values
            assert_eq!(shared.to_vec(), c0.to_vec(), "{what}: a clone of the output changed");
        }
    }
}

#[test]
fn gemm_accumulates_f32() {
    gemm_case::<f32>(41);
}

#[test]
fn gemm_accumulates_f64() {
    gemm_case::<f64>(42);
}

#[test]
fn gemm_accumulates_c32() {
    gemm_case::<c32>(43);
}

#[test]
fn gemm_accumulates_c64() {
    gemm_case::<c64>(44);
}

#[test]
fn gemm_accumulates_f16() {
    gemm_case::<f16>(45);
}

#[test]
fn gemm_accumulates_bf16() {
    gemm_case::<bf16>(46);
}

#[test]
fn gemm_output_cases() {
    let mut r = Rng64::seed_from_u64(51);
    let (a, av) = random_array::<f64>(&mut r, dim4!(3, 4));
    let (b, bv) = random_array::<f64>(&mut r, dim4!(4, 2));
    let (dims, prod, mag, k) = reference(
        &Operand { v: &av, dims: dim4!(3, 4), prop: MatProp::NONE },
        &Operand { v: &bv, dims: dim4!(4, 2), prop: MatProp::NONE },
    );
    let none = MatProp::NONE;

    // An output with no elements is replaced by alpha·a·b (beta does not matter).
    let mut fresh = Array::<f64>::new_empty(dim4!(0));
    gemm(&mut fresh, none, none, vec![2.0], &a, &b, vec![5.0]);
    let twice: Vec<c64> = prod.iter().map(|p| p * 2.0).collect();
    let mag2: Vec<f64> = mag.iter().map(|m| m * 2.0).collect();
    check(&fresh, dims, &twice, &mag2, k, "gemm into an empty output");

    // beta = 0: the old values are not read, so NaN does not propagate.
    let mut c = Array::new(&[f64::NAN; 6], dims);
    gemm(&mut c, none, none, vec![1.0], &a, &b, vec![0.0]);
    check(&c, dims, &prod, &mag, k, "gemm over NaN with beta = 0");

    // An output that is a lazy expression, and a tree built on the output, which must keep
    // seeing the old values.
    let base: Vec<f64> = (0..6).map(|i| i as f64).collect();
    let mut c = Array::new(&base, dims) * 1.0f64 + 1.0f64;
    let tree = &c * 10.0f64;
    gemm(&mut c, none, none, vec![1.0], &a, &b, vec![-1.0]);
    let want: Vec<c64> = prod.iter().zip(&base).map(|(p, x)| p - (x + 1.0)).collect();
    let bound: Vec<f64> = mag.iter().zip(&base).map(|(m, x)| m + x + 1.0).collect();
    check(&c, dims, &want, &bound, k + 1, "gemm into a lazy output");
    let old: Vec<f64> = base.iter().map(|x| (x + 1.0) * 10.0).collect();
    assert_eq!(tree.to_vec(), old, "a tree built on the output changed");

    // An output used by nothing else is updated in its own memory.
    let mut c = Array::new(&base, dims);
    let before = c.device_ptr();
    c.unlock();
    gemm(&mut c, none, none, vec![1.0], &a, &b, vec![1.0]);
    let after = c.device_ptr();
    c.unlock();
    assert_eq!(before, after, "gemm copied an output nothing else used");
    let want: Vec<c64> = prod.iter().zip(&base).map(|(p, x)| p + x).collect();
    let bound: Vec<f64> = mag.iter().zip(&base).map(|(m, x)| m + x).collect();
    check(&c, dims, &want, &bound, k + 1, "gemm in place");

    // A locked output is the user's: the result goes elsewhere and the memory is untouched.
    let mut c = Array::new(&base, dims);
    let ptr = c.device_ptr();
    let locked = c.clone();
    gemm(&mut c, none, none, vec![1.0], &a, &b, vec![1.0]);
    assert_ne!(c.device_ptr(), ptr);
    c.unlock();
    assert_eq!(locked.to_vec(), base);
    locked.unlock();

    // An inner size of 0: output = beta · output.
    let e = Array::<f64>::new_empty(dim4!(3, 0));
    let f = Array::<f64>::new_empty(dim4!(0, 2));
    let mut c = Array::new(&base, dims);
    gemm(&mut c, none, none, vec![3.0], &e, &f, vec![0.5]);
    assert_eq!(c.to_vec(), base.iter().map(|x| x * 0.5).collect::<Vec<_>>());
    let mut c = Array::new(&[f64::NAN; 6], dims);
    gemm(&mut c, none, none, vec![3.0], &e, &f, vec![0.0]);
    assert_eq!(c.to_vec(), vec![0.0; 6]);
}

fn dot_case<T: Elem + GemmType>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let shapes = |n: u64| [dim4!(n), dim4!(1, n), dim4!(1, 1, n), dim4!(1, 1, 1, n)];
    for n in [1u64, 2, 7, 300] {
        for (i, xd) in shapes(n).into_iter().enumerate() {
            let yd = shapes(n)[(i + 1) % 4];
            let (x, xv) = random_array::<T>(&mut r, xd);
            let (y, yv) = random_array::<T>(&mut r, yd);
            for pa in [MatProp::NONE, MatProp::CONJ] {
                for pb in [MatProp::NONE, MatProp::CONJ] {
                    let got = dot(&x, &y, pa, pb);
                    let f = |v: c64, p: MatProp| if p == MatProp::CONJ { v.conj() } else { v };
                    let want: c64 = xv.iter().zip(&yv).map(|(a, b)| f(*a, pa) * f(*b, pb)).sum();
                    let mag: f64 = xv.iter().zip(&yv).map(|(a, b)| a.norm() * b.norm()).sum();
                    let what = format!("{}: dot({xd}, {yd}, {pa:?}, {pb:?})", T::TY.name);
                    check(&got, dim4!(1), &[want], &[mag], n, &what);
                }
            }
        }
    }
    // empty vectors: an empty sum
    let e = Array::<T>::new_empty(dim4!(0));
    let got = dot(&e, &e, MatProp::NONE, MatProp::NONE);
    assert_eq!(got.dims(), dim4!(1));
    assert_eq!(got.to_vec()[0].to_v().c(), c64::new(0.0, 0.0));
    // lazy operands
    let (x, xv) = random_array::<T>(&mut r, dim4!(9));
    let lazy = &x * &x;
    let want: c64 = xv.iter().map(|a| a * a * a * a).sum();
    let mag: f64 = xv.iter().map(|a| a.norm().powi(4)).sum();
    check(&dot(&lazy, &lazy, MatProp::NONE, MatProp::NONE), dim4!(1), &[want], &[mag], 9, "lazy");
}

#[test]
fn dot_with_conjugation_f32() {
    dot_case::<f32>(61);
}

#[test]
fn dot_with_conjugation_f64() {
    dot_case::<f64>(62);
}

#[test]
fn dot_with_conjugation_c32() {
    dot_case::<c32>(63);
}

#[test]
fn dot_with_conjugation_c64() {
    dot_case::<c64>(64);
}

#[test]
fn dot_with_conjugation_f16() {
    dot_case::<f16>(65);
}

#[test]
fn dot_with_conjugation_bf16() {
    dot_case::<bf16>(66);
}

#[test]
fn threads_share_arrays() {
    // Products from several threads at once on the same operands.
    let mut r = Rng64::seed_from_u64(71);
    let (a, av) = random_array::<f32>(&mut r, dim4!(40, 30));
    let (b, bv) = random_array::<f32>(&mut r, dim4!(30, 20));
    let (dims, want, mag, k) = reference(
        &Operand { v: &av, dims: dim4!(40, 30), prop: MatProp::NONE },
        &Operand { v: &bv, dims: dim4!(30, 20), prop: MatProp::NONE },
    );
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    let c = matmul(&a, &b, MatProp::NONE, MatProp::NONE);
                    check(&c, dims, &want, &mag, k, "from a thread");
                }
            });
        }
    });
}

// ---- panics for bad arguments --------------------------------------------------------------

fn ones(dims: Dim4) -> Array<f32> {
    Array::new(&vec![1.0f32; dims.elements() as usize], dims)
}

#[test]
#[should_panic(expected = "matmul: inner dimensions differ: op(lhs) is 3×4 (lhs dims [4 3 1 1], \
                           optlhs TRANS) but op(rhs) is 5×2 (rhs dims [5 2 1 1], optrhs NONE)")]
fn matmul_inner_mismatch_panics() {
    matmul(&ones(dim4!(4, 3)), &ones(dim4!(5, 2)), MatProp::TRANS, MatProp::NONE);
}

#[test]
#[should_panic(expected = "matmul: batch dimensions do not broadcast: lhs dims [2 3 4 1] and rhs \
                           dims [3 2 5 1]")]
fn matmul_batch_mismatch_panics() {
    matmul(&ones(dim4!(2, 3, 4)), &ones(dim4!(3, 2, 5)), MatProp::NONE, MatProp::NONE);
}

#[test]
#[should_panic(expected = "matmul: `optrhs` is MatProp::UPPER")]
fn matmul_solver_property_panics() {
    matmul(&ones(dim4!(2, 2)), &ones(dim4!(2, 2)), MatProp::NONE, MatProp::UPPER);
}

#[test]
#[should_panic(
    expected = "gemm: `output` has dims [2 2 1 1] but op(lhs)·op(rhs) has dims [2 3 1 1]"
)]
fn gemm_output_shape_panics() {
    let mut c = ones(dim4!(2, 2));
    gemm(
        &mut c,
        MatProp::NONE,
        MatProp::NONE,
        vec![1.0],
        &ones(dim4!(2, 4)),
        &ones(dim4!(4, 3)),
        vec![0.0],
    );
}

#[test]
#[should_panic(expected = "gemm: `alpha` holds 2 values; it must hold exactly one")]
fn gemm_alpha_length_panics() {
    let mut c = ones(dim4!(2, 2));
    let x = ones(dim4!(2, 2));
    gemm(&mut c, MatProp::NONE, MatProp::NONE, vec![1.0, 2.0], &x, &x, vec![0.0]);
}

#[test]
#[should_panic(expected = "gemm: `beta` holds 0 values; it must hold exactly one")]
fn gemm_beta_length_panics() {
    let mut c = ones(dim4!(2, 2));
    let x = ones(dim4!(2, 2));
    gemm(&mut c, MatProp::NONE, MatProp::NONE, vec![1.0], &x, &x, vec![]);
}

#[test]
#[should_panic(
    expected = "dot: `lhs` (dims [2 2 1 1]) and `rhs` (dims [4 1 1 1]) must be vectors \
                           of the same length"
)]
fn dot_of_a_matrix_panics() {
    dot(&ones(dim4!(2, 2)), &ones(dim4!(4)), MatProp::NONE, MatProp::NONE);
}

#[test]
#[should_panic(
    expected = "dot: `lhs` (dims [3 1 1 1]) and `rhs` (dims [1 4 1 1]) must be vectors \
                           of the same length"
)]
fn dot_length_mismatch_panics() {
    dot(&ones(dim4!(3)), &ones(dim4!(1, 4)), MatProp::NONE, MatProp::NONE);
}

#[test]
#[should_panic(expected = "dot: `optlhs` is MatProp::TRANS; dot takes NONE or CONJ")]
fn dot_transpose_panics() {
    dot(&ones(dim4!(3)), &ones(dim4!(3)), MatProp::TRANS, MatProp::NONE);
}

// ---- arrayfire-rust's documented examples, unchanged but for the crate's name ---------------

/// Uniform random values in [0, 1) (arrayfire-rust's `randu`), for the examples below.
fn randu<T: Elem>(dims: Dim4) -> Array<T> {
    let mut r = Rng64::seed_from_u64(dims.elements());
    let v: Vec<T> = (0..dims.elements()).map(|_| T::from_v(common::V::F(r.gen::<f64>()))).collect();
    Array::new(&v, dims)
}

#[test]
#[allow(clippy::unnecessary_cast)] // the example's own spelling
fn arrayfire_rust_gemm_example() {
    // From arrayfire-rust's documentation of `gemm` (with `arrayfire::` read as `emberfire::`).
    let dims = Dim4::new(&[5, 5, 1, 1]);

    let alpha = vec![1.0 as f32];
    let beta = vec![2.0 as f32];

    let lhs = randu::<f32>(dims);
    let rhs = randu::<f32>(dims);

    let mut result = Array::new_empty(dims);
    gemm(&mut result, emberfire::MatProp::NONE, emberfire::MatProp::NONE, alpha, &lhs, &rhs, beta);

    // emberfire's `new_empty` is zero-filled, so the result is lhs·rhs.
    print(&result);
    let want = matmul(&lhs, &rhs, MatProp::NONE, MatProp::NONE).to_vec();
    for (g, w) in result.to_vec().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
    }
}

/// Products with two small sizes and one large one (the GPU computes them without cuBLAS, see
/// `backend/cuda/skinny.rs`): a tall product (many rows of A times a small op(B), either
/// orientation of B) and a long one (A transposed times B over many rows), at the smallest and
/// largest small sizes and odd ones between, on operands that are views into larger arrays,
/// and through `gemm` with alpha and beta.
fn two_small_sizes<T: Elem + GemmType>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let (none, trans) = (MatProp::NONE, MatProp::TRANS);
    for (m, n, k) in [(8192, 32, 16), (9000, 1, 1), (8200, 3, 32), (8193, 32, 32)] {
        for pb in [none, trans] {
            product_case::<T>(&mut r, (m, n, k), (none, pb), ([1, 1], [1, 1]));
        }
    }
    for (m, n, k) in [(32, 16, 8192), (3, 5, 9001), (32, 32, 8320), (1, 1, 8192)] {
        product_case::<T>(&mut r, (m, n, k), (trans, none), ([1, 1], [1, 1]));
    }
    // views: the first rows of taller arrays (A's columns 9000 + 5 apart), and gemm's
    // alpha and beta on both shapes
    for (pa, (m, n, k)) in [(none, (9000u64, 7u64, 5u64)), (trans, (6, 7, 9000))] {
        let ad = stored(pa, m, k, 1, 1);
        let (big, bigv) = random_array::<T>(&mut r, dim4!(ad[0] + 5, ad[1]));
        let a = rows(&big, 0, ad[0] as i64 - 1);
        let av: Vec<c64> = (0..ad[1])
            .flat_map(|j| (0..ad[0]).map(move |i| (i, j)))
            .map(|(i, j)| bigv[(i + (ad[0] + 5) * j) as usize])
            .collect();
        let bd = stored(none, k, n, 1, 1);
        let (b, bv) = random_array::<T>(&mut r, bd);
        let (c0, cv) = random_array::<T>(&mut r, dim4!(m, n));
        let (alpha, al) = random::<T>(&mut r, 1);
        let (beta, be) = random::<T>(&mut r, 1);
        let mut c = c0.copy();
        gemm(&mut c, pa, none, alpha, &a, &b, beta);
        let (dims, prod, mag, k) = reference(
            &Operand { v: &av, dims: ad, prop: pa },
            &Operand { v: &bv, dims: bd, prop: none },
        );
        let want: Vec<c64> = prod.iter().zip(&cv).map(|(p, c)| al[0] * p + be[0] * c).collect();
        let bound: Vec<f64> =
            mag.iter().zip(&cv).map(|(m, c)| al[0].norm() * m + be[0].norm() * c.norm()).collect();
        let what = format!("{}: gemm of a view ({pa:?}, {m} x {n} x {k})", T::TY.name);
        check(&c, dims, &want, &bound, k + 1, &what);
    }
}

#[test]
fn products_with_two_small_sizes_f32() {
    two_small_sizes::<f32>(71);
}

#[test]
fn products_with_two_small_sizes_f64() {
    two_small_sizes::<f64>(72);
}
