//! Products of views (operands with offsets, padding, transposed or arbitrary strides, and
//! broadcast batches) on the active backend, against references computed here by the
//! definition. Views are made directly from `Data` because no public operation makes them yet;
//! the integration tests in `tests/linalg/blas.rs` cover everything else.

use super::*;
use crate::device::active_kind;
use crate::dtype::c64;
use crate::storage::Element;

/// A view of shape `dims` into a new buffer holding `values`.
fn view<T: HasAfEnum>(values: &[T], offset: usize, dims: Dim4, strides: [i64; 4]) -> Array<T> {
    let kind = active_kind();
    let buf = kind.ops().upload(T::wrap(values.to_vec())).expect("upload");
    let data = Data { buf: Arc::new(buf), offset, strides };
    Array::from_node(Node::ready(T::DTYPE, dims, kind, data))
}

/// Deterministic values of moderate size, complex when `T` is.
fn values<T: HasAfEnum>(n: usize, seed: u64) -> Vec<T> {
    (0..n)
        .map(|i| {
            let x = ((i as u64 * 2654435761 + seed * 97) % 1999) as f64 / 250.0 - 4.0;
            let y = ((i as u64 * 40503 + seed * 31) % 1013) as f64 / 130.0 - 3.9;
            T::from_lit(Lit::Cplx(c64::new(x, y)))
        })
        .collect()
}

/// Element `(i, j, b2, b3)` of a view, exactly.
fn at<T: HasAfEnum>(v: &[T], offset: usize, strides: [i64; 4], idx: [u64; 4]) -> c64 {
    let pos = offset as i64 + (0..4).map(|d| idx[d] as i64 * strides[d]).sum::<i64>();
    match v[pos as usize].to_lit() {
        Lit::Cplx(c) => c,
        Lit::Real(r) => c64::new(r, 0.0),
        other => panic!("not a float: {other:?}"),
    }
}

/// One view operand: values, offset, dims, strides.
type View<'a, T> = (&'a [T], usize, Dim4, [i64; 4]);

/// Checks `matmul(a, b, pa, pb)` against the definition, for views `a` and `b`.
fn check_views<T: GemmType>(a: View<T>, b: View<T>, pa: MatProp, pb: MatProp, eps: f64) {
    let (va, vb) = (view(a.0, a.1, a.2, a.3), view(b.0, b.1, b.2, b.3));
    let got = matmul(&va, &vb, pa, pb).to_vec();
    let op = |x: &View<T>, p: MatProp, i: u64, j: u64, b2: u64, b3: u64| {
        let (t, c) = product_op("test", "op", p);
        let (r, col) = if t { (j, i) } else { (i, j) };
        let b2 = if x.2[2] == 1 { 0 } else { b2 };
        let b3 = if x.2[3] == 1 { 0 } else { b3 };
        let e = at(x.0, x.1, x.3, [r, col, b2, b3]);
        if c && T::DTYPE.is_complex() {
            e.conj()
        } else {
            e
        }
    };
    let (m, k) = op_shape(a.2, product_op("test", "op", pa).0);
    let n = op_shape(b.2, product_op("test", "op", pb).0).1;
    let (b2, b3) = (a.2[2].max(b.2[2]) as usize, a.2[3].max(b.2[3]) as usize);
    assert_eq!(got.len(), m * n * b2 * b3);
    for l in 0..b3 {
        for q in 0..b2 {
            for j in 0..n {
                for i in 0..m {
                    let (mut want, mut mag) = (c64::new(0.0, 0.0), 0.0);
                    for p in 0..k {
                        let (idx, q, l) = ((i as u64, j as u64, p as u64), q as u64, l as u64);
                        let x = op(&a, pa, idx.0, idx.2, q, l);
                        let y = op(&b, pb, idx.2, idx.1, q, l);
                        want += x * y;
                        mag += x.norm() * y.norm();
                    }
                    let g = got[i + m * (j + n * (q + b2 * l))];
                    let g = match g.to_lit() {
                        Lit::Cplx(c) => c,
                        other => c64::new(f64::from_lit(other), 0.0),
                    };
                    assert!(
                        (g - want).norm() <= 4.0 * (k as f64 + 1.0) * eps * mag + 1e-300,
                        "matmul of views {:?} {pa:?}, {:?} {pb:?}: element ({i}, {j}, {q}, {l}) \
                         is {g}, want {want}",
                        (a.1, a.2, a.3),
                        (b.1, b.2, b.3)
                    );
                }
            }
        }
    }
}

/// Layouts of a stored `r`×`c` matrix with batches `b2`, `b3`: (offset, strides, elements
/// needed).
fn layouts(r: u64, c: u64, b2: u64, b3: u64) -> Vec<(usize, [i64; 4], usize)> {
    let (r, c, b2, b3) = (r as i64, c as i64, b2 as i64, b3 as i64);
    let with_batches = |offset: i64, s0: i64, s1: i64, mat: i64| {
        // padded batches, and a dimension-3 stride that is not dimension 2's times its size
        let s2 = mat + 5;
        let s3 = s2 * b2 + 7;
        let len = offset + s3 * b3 + 1;
        (offset as usize, [s0, s1, s2, s3], len as usize)
    };
    let span = |s0: i64, s1: i64| (r - 1) * s0 + (c - 1) * s1 + 1;
    vec![
        with_batches(0, 1, r, span(1, r)),                 // dense columns
        with_batches(3, 1, r + 2, span(1, r + 2)),         // padded columns, offset
        with_batches(1, c, 1, span(c, 1)),                 // rows contiguous (transposed)
        with_batches(2, c + 3, 1, span(c + 3, 1)),         // padded rows
        with_batches(0, 2, 2 * r + 1, span(2, 2 * r + 1)), // no unit stride at all
        (4, [1, r, 0, r * c], (4 + r * c * b3 + 1) as usize), // batches broadcast by stride 0
    ]
}

fn all_views<T: GemmType>(eps: f64) {
    // On CUDA, tests of the memory manager's counters must not see these allocations.
    let _gpu = crate::backend::devices::exclusive_gpu();
    let props = [MatProp::NONE, MatProp::TRANS, MatProp::CTRANS, MatProp::CONJ];
    let (m, n, k) = (4u64, 3u64, 5u64);
    for (i, pa) in props.into_iter().enumerate() {
        let pb = props[(i + 1) % 4];
        let (ta, tb) = (product_op("t", "a", pa).0, product_op("t", "b", pb).0);
        let ad = |b2, b3| if ta { Dim4::new(&[k, m, b2, b3]) } else { Dim4::new(&[m, k, b2, b3]) };
        let bd = |b2, b3| if tb { Dim4::new(&[n, k, b2, b3]) } else { Dim4::new(&[k, n, b2, b3]) };
        let (a_dims, b_dims) = (ad(2, 3), bd(2, 3));
        for (la, (oa, sa, na)) in layouts(a_dims[0], a_dims[1], 2, 3).into_iter().enumerate() {
            for (ob, sb, nb) in layouts(b_dims[0], b_dims[1], 2, 3) {
                let va = values::<T>(na, la as u64);
                let vb = values::<T>(nb, 7);
                check_views((&va, oa, a_dims, sa), (&vb, ob, b_dims, sb), pa, pb, eps);
                // the same views with the right operand broadcast along both batches
                let b1 = bd(1, 1);
                check_views((&va, oa, a_dims, sa), (&vb, ob, b1, sb), pa, pb, eps);
            }
        }
    }
}

#[test]
fn views_f32() {
    all_views::<f32>(2f64.powi(-24));
}

#[test]
fn views_c64() {
    all_views::<c64>(2f64.powi(-53));
}

#[test]
fn views_c32() {
    all_views::<crate::dtype::c32>(2f64.powi(-24));
}

#[test]
fn gemm_into_a_view_and_dot_of_strided_vectors() {
    let _gpu = crate::backend::devices::exclusive_gpu();
    // gemm into an output that is a view (offset and padding): the result is dense and the
    // buffer under the view is left alone.
    let a = view(&values::<f64>(6, 1), 0, Dim4::new(&[2, 3, 1, 1]), [1, 2, 6, 6]);
    let b = view(&values::<f64>(6, 2), 0, Dim4::new(&[3, 2, 1, 1]), [1, 3, 6, 6]);
    let base = values::<f64>(9, 3);
    let mut c = view(&base, 1, Dim4::new(&[2, 2, 1, 1]), [1, 4, 8, 8]);
    gemm(&mut c, MatProp::NONE, MatProp::NONE, vec![1.5], &a, &b, vec![-2.0]);
    let (av, bv) = (a.to_vec(), b.to_vec());
    let got = c.to_vec();
    for j in 0..2 {
        for i in 0..2 {
            let s: f64 = (0..3).map(|p| av[i + 2 * p] * bv[p + 3 * j]).sum();
            let want = 1.5 * s - 2.0 * base[1 + i + 4 * j];
            assert!((got[i + 2 * j] - want).abs() <= 1e-13 * (1.0 + want.abs()), "{got:?}");
        }
    }
    // dot of vectors read every third element, lying along different dimensions
    let xs = values::<crate::dtype::c32>(40, 4);
    let ys = values::<crate::dtype::c32>(40, 5);
    let x = view(&xs, 2, Dim4::new(&[1, 1, 12, 1]), [0, 0, 3, 0]);
    let y = view(&ys, 1, Dim4::new(&[12, 1, 1, 1]), [3, 0, 0, 0]);
    let got = dot(&x, &y, MatProp::CONJ, MatProp::NONE).to_vec()[0];
    let want: c64 = (0..12)
        .map(|i| {
            let (p, q) = (xs[2 + 3 * i], ys[1 + 3 * i]);
            c64::new(p.re as f64, -p.im as f64) * c64::new(q.re as f64, q.im as f64)
        })
        .sum();
    let got = c64::new(got.re as f64, got.im as f64);
    assert!((got - want).norm() <= 1e-4 * (1.0 + want.norm()), "{got} vs {want}");
}
