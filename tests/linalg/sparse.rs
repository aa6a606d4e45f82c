//! Sparse arrays: making them (from arrays, host slices and dense matrices), converting between
//! every pair of formats, reading their parts, products with dense matrices under every
//! `MatProp` a sparse operand takes, arithmetic by ArrayFire's rules, printing, and the
//! refusals of bad input. Every type (f32, f64, c32, c64) and every format, on random sparsity
//! patterns with empty rows and columns, empty matrices, a single nonzero and a 2-D Poisson
//! matrix.
//!
//! References are computed here on the host, in c64, from the test's own dense matrices:
//! the CSR, CSC and COO forms by walking the matrix, products by a naive loop.

use crate::common;

use common::{Elem, Rng64, SeedableRng, Tol, V};
use emberfire::*;
use rand::Rng;

/// A dense matrix held on the host, column-major, with its exact values.
#[derive(Clone)]
struct Host<T> {
    rows: usize,
    cols: usize,
    v: Vec<T>,
}

impl<T: Elem> Host<T> {
    /// A random matrix whose elements are nonzero with probability `density`; every third row
    /// and every fourth column are left empty when `holes` is set.
    fn random(r: &mut Rng64, rows: usize, cols: usize, density: f64, holes: bool) -> Self {
        let zero = T::from_v(V::F(0.0));
        let v = (0..rows * cols)
            .map(|k| {
                let (i, j) = (k % rows, k / rows);
                let hole = holes && (i % 3 == 1 || j % 4 == 2);
                if !hole && r.gen_bool(density) {
                    loop {
                        let x = T::small(r);
                        if x.to_v().nz() {
                            break x;
                        }
                    }
                } else {
                    zero
                }
            })
            .collect();
        Host { rows, cols, v }
    }

    fn at(&self, i: usize, j: usize) -> T {
        self.v[i + j * self.rows]
    }

    fn array(&self) -> Array<T> {
        Array::new(&self.v, dim4!(self.rows, self.cols))
    }

    /// (values, row part, column part) of the matrix in `format`, as the module documents
    /// them: CSR row by row, CSC and COO column by column.
    fn parts(&self, format: SparseFormat) -> (Vec<T>, Vec<i32>, Vec<i32>) {
        let nz = |i, j| self.at(i, j).to_v().nz();
        let (mut vals, mut rp, mut cp) = (vec![], vec![], vec![]);
        match format {
            SparseFormat::CSR => {
                rp.push(0);
                for i in 0..self.rows {
                    for j in 0..self.cols {
                        if nz(i, j) {
                            vals.push(self.at(i, j));
                            cp.push(j as i32);
                        }
                    }
                    rp.push(vals.len() as i32);
                }
            }
            _ => {
                if format == SparseFormat::CSC {
                    cp.push(0);
                }
                for j in 0..self.cols {
                    for i in 0..self.rows {
                        if nz(i, j) {
                            vals.push(self.at(i, j));
                            rp.push(i as i32);
                            if format == SparseFormat::COO {
                                cp.push(j as i32);
                            }
                        }
                    }
                    if format == SparseFormat::CSC {
                        cp.push(vals.len() as i32);
                    }
                }
            }
        }
        (vals, rp, cp)
    }
}

const FORMATS: [SparseFormat; 3] = [SparseFormat::CSR, SparseFormat::CSC, SparseFormat::COO];

/// Shapes with their densities: empty matrices, a single element, a row, a column, odd sizes
/// and a larger one with holes.
fn shapes() -> Vec<(usize, usize, f64, bool)> {
    vec![
        (0, 0, 0.5, false),
        (0, 4, 0.5, false),
        (5, 0, 0.5, false),
        (1, 1, 1.0, false),
        (1, 1, 0.0, false),
        (1, 9, 0.5, false),
        (7, 1, 0.5, false),
        (3, 5, 0.4, false),
        (4, 4, 0.0, false),
        (37, 23, 0.2, true),
        (64, 80, 0.05, true),
    ]
}

fn assert_parts<T: Elem + FloatingPoint>(
    s: &Array<T>,
    want: &(Vec<T>, Vec<i32>, Vec<i32>),
    what: &str,
) {
    assert!(s.is_sparse(), "{what}: not sparse");
    assert_eq!(sparse_get_values(s).to_vec(), want.0, "{what}: values");
    assert_eq!(sparse_get_row_indices(s).to_vec(), want.1, "{what}: row indices");
    assert_eq!(sparse_get_col_indices(s).to_vec(), want.2, "{what}: column indices");
    assert_eq!(sparse_get_nnz(s), want.0.len() as i64, "{what}: nnz");
}

fn from_dense_and_back<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (rows, cols, density, holes) in shapes() {
        let m = Host::<T>::random(&mut r, rows, cols, density, holes);
        for format in FORMATS {
            let what = format!("{rows}x{cols} {format:?} {:?}", T::TY.dtype);
            let s = sparse_from_dense(&m.array(), format);
            assert_eq!(sparse_get_format(&s), format, "{what}");
            assert_eq!(s.dims(), dim4!(rows, cols), "{what}: dims");
            assert_parts(&s, &m.parts(format), &what);
            assert_eq!(sparse_to_dense(&s).to_vec(), m.v, "{what}: back to dense");
            let (v, ri, ci, f) = sparse_get_info(&s);
            assert_eq!((v.to_vec(), ri.to_vec(), ci.to_vec(), f), {
                let p = m.parts(format);
                (p.0, p.1, p.2, format)
            });
        }
    }
}

#[test]
fn from_dense_gives_each_format_and_back() {
    from_dense_and_back::<f32>(1);
    from_dense_and_back::<f64>(2);
    from_dense_and_back::<c32>(3);
    from_dense_and_back::<c64>(4);
}

fn made_from_parts<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (rows, cols, density, holes) in shapes() {
        let m = Host::<T>::random(&mut r, rows, cols, density, holes);
        for format in FORMATS {
            let what = format!("{rows}x{cols} {format:?} {:?}", T::TY.dtype);
            let p = m.parts(format);
            let nnz = p.0.len() as u64;
            let h = sparse_from_host(rows as u64, cols as u64, nnz, &p.0, &p.1, &p.2, format);
            assert_parts(&h, &p, &format!("{what} from host"));
            assert_eq!(sparse_to_dense(&h).to_vec(), m.v, "{what}: from host, dense");
            let vec_of = |n: usize| dim4!(n);
            let a = sparse(
                rows as u64,
                cols as u64,
                &Array::new(&p.0, vec_of(p.0.len())),
                &Array::new(&p.1, vec_of(p.1.len())),
                &Array::new(&p.2, vec_of(p.2.len())),
                format,
            );
            assert_parts(&a, &p, &format!("{what} from arrays"));
            assert_eq!(sparse_to_dense(&a).to_vec(), m.v, "{what}: from arrays, dense");
        }
    }
}

#[test]
fn sparse_and_sparse_from_host_keep_their_parts() {
    made_from_parts::<f32>(11);
    made_from_parts::<f64>(12);
    made_from_parts::<c32>(13);
    made_from_parts::<c64>(14);
}

fn converts<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    for (rows, cols, density, holes) in shapes() {
        let m = Host::<T>::random(&mut r, rows, cols, density, holes);
        for from in FORMATS {
            let s = sparse_from_dense(&m.array(), from);
            for to in FORMATS {
                let what = format!("{rows}x{cols} {from:?} -> {to:?} {:?}", T::TY.dtype);
                let c = sparse_convert_to(&s, to);
                assert_eq!(sparse_get_format(&c), to, "{what}");
                assert_eq!(sparse_to_dense(&c).to_vec(), m.v, "{what}: dense");
                if to != SparseFormat::COO || from != SparseFormat::CSR {
                    // CSR and CSC are sorted; COO keeps its source's order (CSC's and COO's
                    // are column-major, CSR's row-major)
                    assert_parts(&c, &m.parts(to), &what);
                }
            }
            let d = sparse_convert_to(&s, SparseFormat::DENSE);
            assert!(!d.is_sparse());
            assert_eq!(d.to_vec(), m.v);
        }
        // a dense matrix converts as sparse_from_dense does
        let c = sparse_convert_to(&m.array(), SparseFormat::CSC);
        assert_parts(&c, &m.parts(SparseFormat::CSC), "dense -> CSC");
    }
}

#[test]
fn every_pair_of_formats_converts() {
    converts::<f32>(21);
    converts::<f64>(22);
    converts::<c32>(23);
    converts::<c64>(24);
}

#[test]
fn unsorted_coordinates_convert_to_sorted_forms() {
    // COO in a shuffled order, with an empty row and column
    let (rows, cols) = (4u64, 5u64);
    let coo = [(3, 4, 1.0f64), (0, 1, 2.0), (2, 0, 3.0), (0, 0, 4.0), (3, 1, 5.0), (2, 4, 6.0)];
    let v: Vec<f64> = coo.iter().map(|c| c.2).collect();
    let ri: Vec<i32> = coo.iter().map(|c| c.0).collect();
    let ci: Vec<i32> = coo.iter().map(|c| c.1).collect();
    let s = sparse_from_host(rows, cols, 6, &v, &ri, &ci, SparseFormat::COO);
    let mut dense = vec![0.0; 20];
    for &(i, j, x) in &coo {
        dense[i as usize + j as usize * 4] = x;
    }
    let m = Host { rows: 4, cols: 5, v: dense };
    assert_eq!(sparse_to_dense(&s).to_vec(), m.v);
    for to in [SparseFormat::CSR, SparseFormat::CSC] {
        assert_parts(&sparse_convert_to(&s, to), &m.parts(to), &format!("{to:?}"));
    }
}

/// `d` in the element type `T`.
fn from_f64<T: Elem>(d: &[f64]) -> Vec<T> {
    d.iter().map(|&e| T::from_v(V::F(e))).collect()
}

/// The 5-point Laplacian of an `n x n` grid (rows ordered x fastest), in CSR, as host parts.
fn poisson(n: usize) -> (Vec<f64>, Vec<i32>, Vec<i32>) {
    let (mut v, mut off, mut col) = (vec![], vec![0i32], vec![]);
    for y in 0..n {
        for x in 0..n {
            let row = y * n + x;
            let mut push = |c: usize, w: f64| {
                v.push(w);
                col.push(c as i32);
            };
            if y > 0 {
                push(row - n, -1.0);
            }
            if x > 0 {
                push(row - 1, -1.0);
            }
            push(row, 4.0);
            if x + 1 < n {
                push(row + 1, -1.0);
            }
            if y + 1 < n {
                push(row + n, -1.0);
            }
            off.push(v.len() as i32);
        }
    }
    (v, off, col)
}

#[test]
fn poisson_matrix_times_a_vector_is_the_stencil() {
    let n = 23;
    let (v, off, col) = poisson(n);
    let nn = (n * n) as u64;
    let a = sparse_from_host(nn, nn, v.len() as u64, &v, &off, &col, SparseFormat::CSR);
    let mut r = Rng64::seed_from_u64(7);
    let x: Vec<f64> = (0..n * n).map(|_| r.gen_range(-1.0..1.0)).collect();
    let y = matmul(&a, &Array::new(&x, dim4!(nn)), MatProp::NONE, MatProp::NONE);
    assert_eq!(y.dims(), dim4!(nn, 1));
    let y = y.to_vec();
    for yy in 0..n {
        for xx in 0..n {
            let k = yy * n + xx;
            let get = |dx: i64, dy: i64| {
                let (px, py) = (xx as i64 + dx, yy as i64 + dy);
                if px < 0 || py < 0 || px >= n as i64 || py >= n as i64 {
                    0.0
                } else {
                    x[(py as usize) * n + px as usize]
                }
            };
            let want = 4.0 * x[k] - get(-1, 0) - get(1, 0) - get(0, -1) - get(0, 1);
            assert!((y[k] - want).abs() <= 1e-14 * 8.0, "row {k}: {} vs {want}", y[k]);
        }
    }
    // the transpose of a symmetric matrix gives the same product
    let yt = matmul(&a, &Array::new(&x, dim4!(nn)), MatProp::TRANS, MatProp::NONE).to_vec();
    for (a, b) in y.iter().zip(&yt) {
        assert!((a - b).abs() <= 1e-13, "{a} vs {b}");
    }
}

/// A banded matrix multiplied again and again (as an iterative solver does): from the second
/// product on, the CPU reads it by diagonals. Every product, with several right-hand columns
/// and an infinity in `x` at a grid edge, is the first product's bits and the f64 stencil;
/// transposed products of the CSC form too.
fn repeated_banded_products<T: Elem + FloatingPoint>() {
    let n = 21; // 441 rows: the last vectors of sixteen and eight rows are partial
    let nn = n * n;
    let (v, off, col) = poisson(n);
    let a = sparse_from_host(
        nn as u64,
        nn as u64,
        v.len() as u64,
        &from_f64::<T>(&v),
        &off,
        &col,
        SparseFormat::CSR,
    );
    let csc = sparse_convert_to(&a, SparseFormat::CSC);
    let mut r = Rng64::seed_from_u64(11);
    let mut x: Vec<f64> = (0..nn * 3).map(|_| r.gen_range(-1.0..1.0)).collect();
    x[2 * nn + n - 1] = f64::INFINITY; // the right edge of the third column's first grid row
    let xs = Array::new(&from_f64::<T>(&x), dim4!(nn as u64, 3));
    let stencil = |c: usize, k: usize| -> f64 {
        let (xx, yy) = ((k % n) as i64, (k / n) as i64);
        let at = |dx: i64, dy: i64| {
            let (px, py) = (xx + dx, yy + dy);
            let inside = px >= 0 && py >= 0 && px < n as i64 && py < n as i64;
            inside.then(|| x[c * nn + py as usize * n + px as usize])
        };
        let mut s = 4.0 * at(0, 0).unwrap();
        for (dx, dy) in [(0, -1), (-1, 0), (1, 0), (0, 1)] {
            s -= at(dx, dy).unwrap_or(0.0);
        }
        s
    };
    let tol = 8.0 * unit_roundoff(T::DTYPE);
    let first: Vec<T> = matmul(&a, &xs, MatProp::NONE, MatProp::NONE).to_vec();
    for (lhs, prop) in [(&a, MatProp::NONE), (&csc, MatProp::TRANS), (&csc, MatProp::CTRANS)] {
        for round in 0..3 {
            let got: Vec<T> = matmul(lhs, &xs, prop, MatProp::NONE).to_vec();
            for (e, g) in got.iter().enumerate() {
                let (c, k) = (e / nn, e % nn);
                let want = stencil(c, k);
                let g = g.to_v().c().re;
                if want.is_infinite() {
                    assert_eq!(g, want, "{prop:?} round {round}, element {e}");
                } else {
                    let ok = (g - want).abs() <= tol * (1.0 + want.abs());
                    assert!(ok, "{prop:?} round {round}, element {e}: {g} against {want}");
                }
            }
            if prop == MatProp::NONE {
                // (as text, so that NaNs compare)
                let text =
                    |v: &[T]| v.iter().map(|e| format!("{:?}", e.to_v())).collect::<Vec<_>>();
                let same = text(&got) == text(&first);
                assert!(same, "round {round} differs from the first product");
            }
        }
    }
}

#[test]
fn repeated_products_of_a_banded_matrix_agree_with_the_first_and_the_stencil() {
    repeated_banded_products::<f32>();
    repeated_banded_products::<f64>();
    repeated_banded_products::<c32>();
    repeated_banded_products::<c64>();
}

/// CSR products whose rows a CPU with AVX-512 sums sixteen (f32) or eight (f64) at a time:
/// many blocks of short rows with a tail, then blocks where one row is far longer than the
/// others (left to the scalar loop), and empty rows. Checked against f64 sums.
fn lanes_of_rows<T: Elem + FloatingPoint>() {
    let rows = 16 * 9 + 5;
    let cols = 301;
    let (mut v, mut off, mut col) = (vec![], vec![0i32], vec![]);
    for r in 0..rows {
        let len = match r {
            _ if r % 13 == 7 => 0,
            _ if r >= 16 * 6 && r % 16 == 3 => 250,
            _ => 1 + r % 6,
        };
        for j in 0..len {
            v.push(((r * 31 + j * 7) % 17) as f64 * 0.125 - 1.0);
            col.push(((r * 11 + j * 29) % cols) as i32);
        }
        off.push(v.len() as i32);
    }
    let x: Vec<f64> = (0..cols).map(|i| ((i * 13) % 23) as f64 * 0.25 - 2.5).collect();
    let a = sparse_from_host(
        rows as u64,
        cols as u64,
        v.len() as u64,
        &from_f64::<T>(&v),
        &off,
        &col,
        SparseFormat::CSR,
    );
    let got = matmul(
        &a,
        &Array::new(&from_f64::<T>(&x), dim4!(cols as u64)),
        MatProp::NONE,
        MatProp::NONE,
    );
    let got = got.to_vec();
    let u = unit_roundoff(T::TY.dtype);
    for r in 0..rows {
        let (s, e) = (off[r] as usize, off[r + 1] as usize);
        let want: f64 = (s..e).map(|k| v[k] * x[col[k] as usize]).sum();
        let mag: f64 = (s..e).map(|k| (v[k] * x[col[k] as usize]).abs()).sum();
        let g = got[r].to_v().c().re;
        assert!(
            (g - want).abs() <= 4.0 * u * (e - s + 1) as f64 * mag,
            "{:?} row {r}: {g} against {want}",
            T::TY.dtype
        );
    }
}

#[test]
fn rows_summed_in_lanes_and_alone_agree_with_f64() {
    lanes_of_rows::<f32>();
    lanes_of_rows::<f64>();
}

fn unit_roundoff(t: DType) -> f64 {
    if matches!(t, DType::F32 | DType::C32) {
        2f64.powi(-24)
    } else {
        2f64.powi(-53)
    }
}

fn products<T: Elem + FloatingPoint>(seed: u64) {
    let mut r = Rng64::seed_from_u64(seed);
    let u = unit_roundoff(T::TY.dtype);
    for (rows, cols, density, holes) in shapes() {
        let a = Host::<T>::random(&mut r, rows, cols, density, holes);
        for prop in [MatProp::NONE, MatProp::TRANS, MatProp::CTRANS] {
            let t = prop != MatProp::NONE;
            let (m, k) = if t { (cols, rows) } else { (rows, cols) };
            for n in [1usize, 3] {
                let b = Host::<T>::random(&mut r, k, n, 1.0, false);
                for format in FORMATS {
                    let what = format!("{rows}x{cols} {format:?} {prop:?} n={n} {:?}", T::TY.dtype);
                    let s = sparse_from_dense(&a.array(), format);
                    let got = matmul(&s, &b.array(), prop, MatProp::NONE);
                    assert!(!got.is_sparse(), "{what}");
                    assert_eq!(got.dims(), dim4!(m, n), "{what}: dims");
                    let got = got.to_vec();
                    for i in 0..m {
                        for j in 0..n {
                            let (mut want, mut mag) = (c64::new(0.0, 0.0), 0.0);
                            for l in 0..k {
                                let x = if t { a.at(l, i) } else { a.at(i, l) }.to_v().c();
                                let x = if prop == MatProp::CTRANS { x.conj() } else { x };
                                let term = x * b.at(l, j).to_v().c();
                                want += term;
                                mag += term.norm();
                            }
                            let g = got[i + j * m].to_v().c();
                            let allowed = 4.0 * u * (k as f64 + 1.0) * mag + 1e-300;
                            assert!(
                                (g - want).norm() <= allowed,
                                "{what}: ({i}, {j}) = {g} but want {want}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn sparse_times_dense_for_every_prop_format_and_type() {
    products::<f32>(31);
    products::<f64>(32);
    products::<c32>(33);
    products::<c64>(34);
}

/// Element-wise reference: `f` over two dense host matrices of one shape.
fn zip_with<T: Elem>(a: &Host<T>, b: &Host<T>, f: impl Fn(c64, c64) -> c64) -> Vec<V> {
    a.v.iter()
        .zip(&b.v)
        .map(|(x, y)| {
            let z = f(x.to_v().c(), y.to_v().c());
            if matches!(T::TY.dtype, DType::C32 | DType::C64) {
                V::C(z)
            } else {
                V::F(z.re)
            }
        })
        .collect()
}

fn arithmetic<T: Elem + FloatingPoint>(seed: u64)
where
    Array<T>: std::ops::Add<Array<T>, Output = Array<T>>,
{
    let mut r = Rng64::seed_from_u64(seed);
    let tol = Tol::x(2.0);
    for (rows, cols) in [(1usize, 1usize), (3, 5), (29, 17)] {
        let a = Host::<T>::random(&mut r, rows, cols, 0.3, false);
        let b = Host::<T>::random(&mut r, rows, cols, 0.3, false);
        // a dense operand with no zeros, so that division is defined everywhere
        let d = Host::<T>::random(&mut r, rows, cols, 1.0, false);
        let dims = dim4!(rows, cols);
        for format in FORMATS {
            let what = |op: &str| format!("{rows}x{cols} {format:?} {op} {:?}", T::TY.dtype);
            let (sa, sb) =
                (sparse_from_dense(&a.array(), format), sparse_from_dense(&b.array(), format));
            let dd = d.array();
            // sparse ± dense and dense ± sparse are dense
            let sum = add(&sa, &dd, false);
            assert!(!sum.is_sparse());
            common::assert_array(&sum, dims, &zip_with(&a, &d, |x, y| x + y), tol, &what("s+d"));
            let diff = sub(&dd, &sa, false);
            assert!(!diff.is_sparse());
            common::assert_array(&diff, dims, &zip_with(&d, &a, |x, y| x - y), tol, &what("d-s"));
            // sparse × dense, dense × sparse, sparse ÷ dense keep the sparse pattern
            for (got, f, op) in [
                (mul(&sa, &dd, false), (|x: c64, y: c64| x * y) as fn(c64, c64) -> c64, "s*d"),
                (mul(&dd, &sa, false), |x, y| x * y, "d*s"),
                (div(&sa, &dd, false), |x, y| x / y, "s/d"),
            ] {
                assert!(got.is_sparse(), "{}", what(op));
                assert_eq!(sparse_get_format(&got), format, "{}", what(op));
                assert_eq!(sparse_get_nnz(&got), sparse_get_nnz(&sa), "{}", what(op));
                common::assert_array(
                    &sparse_to_dense(&got),
                    dims,
                    &zip_with(&a, &d, f),
                    tol,
                    &what(op),
                );
            }
            // with a scalar: the pattern is kept by a product, a sum is dense
            let two = T::from_v(V::F(2.0));
            let scaled = mul(&sa, &constant(two, dim4!(1)), false);
            assert!(scaled.is_sparse());
            let twos = Host { rows, cols, v: vec![two; rows * cols] };
            common::assert_array(
                &sparse_to_dense(&scaled),
                dims,
                &zip_with(&a, &twos, |x, y| x * y),
                tol,
                &what("s*2"),
            );
            // sparse ± sparse is sparse (CSR), the union of the patterns
            for (got, f, op) in [
                (add(&sa, &sb, false), (|x: c64, y: c64| x + y) as fn(c64, c64) -> c64, "s+s"),
                (sub(&sa, &sb, false), |x, y| x - y, "s-s"),
            ] {
                assert!(got.is_sparse(), "{}", what(op));
                assert_eq!(sparse_get_format(&got), SparseFormat::CSR, "{}", what(op));
                let union =
                    a.v.iter().zip(&b.v).filter(|(x, y)| x.to_v().nz() || y.to_v().nz()).count();
                assert_eq!(sparse_get_nnz(&got), union as i64, "{}", what(op));
                common::assert_array(
                    &sparse_to_dense(&got),
                    dims,
                    &zip_with(&a, &b, f),
                    tol,
                    &what(op),
                );
            }
            // the operator forms route the same way
            let op_sum = sa.clone() + dd.clone();
            assert!(!op_sum.is_sparse());
        }
    }
}

#[test]
fn arithmetic_follows_arrayfire_rules() {
    arithmetic::<f32>(41);
    arithmetic::<f64>(42);
    arithmetic::<c32>(43);
    arithmetic::<c64>(44);
}

#[test]
fn a_copy_is_independent_and_eval_is_a_no_op() {
    let a = Array::new(&[1.0f32, 0.0, 0.0, 2.0, 0.0, 3.0], dim4!(2, 3));
    let s = sparse_from_dense(&a, SparseFormat::CSR);
    s.eval();
    s.try_eval().unwrap();
    let c = s.copy();
    assert!(c.is_sparse());
    assert_eq!(sparse_to_dense(&c).to_vec(), a.to_vec());
    assert_eq!(sparse_get_values(&c).to_vec(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn printing_shows_format_shape_and_parts() {
    let a = Array::new(&[1.5f32, 0.0, 0.0, 2.0, 0.0, 3.0], dim4!(2, 3));
    let s = sparse_from_dense(&a, SparseFormat::CSR);
    let text = format!("{s}");
    let values = format!("{}", sparse_get_values(&s));
    let rows = format!("{}", sparse_get_row_indices(&s));
    let cols = format!("{}", sparse_get_col_indices(&s));
    let want = format!(
        "No Name Sparse Array\nStorage Format : AF_STORAGE_CSR\n[2 3 1 1]\n\
         No Name Sparse Array: Values\n{values}No Name Sparse Array: RowIdx\n{rows}\
         No Name Sparse Array: ColIdx\n{cols}"
    );
    assert_eq!(text, want);
    assert!(values.contains("1.5000") && values.contains("3.0000"), "{values}");
    assert_eq!(format!("{s:?}"), want);
}

#[test]
#[should_panic(expected = "sparse_from_host: `row_indices` has 3 elements, but CSR needs 4")]
fn wrong_offset_length_is_refused() {
    sparse_from_host(3, 3, 2, &[1.0f32, 2.0], &[0, 1, 2], &[0, 1], SparseFormat::CSR);
}

#[test]
#[should_panic(expected = "sparse_from_host: offsets `row_indices` decrease at position 2")]
fn decreasing_offsets_are_refused() {
    sparse_from_host(3, 3, 2, &[1.0f32, 2.0], &[0, 2, 1, 2], &[0, 1], SparseFormat::CSR);
}

#[test]
#[should_panic(
    expected = "sparse_from_host: offsets `col_indices` must start at 0 and end at nnz = 2"
)]
fn offsets_that_do_not_end_at_nnz_are_refused() {
    sparse_from_host(2, 2, 2, &[1.0f64, 2.0], &[0, 1], &[0, 1, 1], SparseFormat::CSC);
}

#[test]
#[should_panic(expected = "sparse_from_host: `col_indices` holds 3 at position 1, outside [0, 3)")]
fn host_index_out_of_range_is_refused() {
    sparse_from_host(2, 3, 2, &[1.0f32, 2.0], &[0, 1], &[0, 3], SparseFormat::COO);
}

#[test]
#[should_panic(expected = "sparse: `col_indices` holds values from -1 to 1, outside [0, 2)")]
fn array_index_out_of_range_is_refused() {
    let v = Array::new(&[1.0f32, 2.0], dim4!(2));
    let off = Array::new(&[0i32, 1, 2], dim4!(3));
    let col = Array::new(&[1i32, -1], dim4!(2));
    sparse(2, 2, &v, &off, &col, SparseFormat::CSR);
}

#[test]
#[should_panic(expected = "sparse: offsets `row_indices` decrease somewhere")]
fn array_offsets_that_decrease_are_refused() {
    let v = Array::new(&[1.0f32, 2.0], dim4!(2));
    let off = Array::new(&[0i32, 2, 1, 2], dim4!(4));
    let col = Array::new(&[1i32, 0], dim4!(2));
    sparse(3, 2, &v, &off, &col, SparseFormat::CSR);
}

#[test]
#[should_panic(expected = "sparse_from_host: `values` has 1 elements but `nzz` is 2")]
fn value_count_must_match_nzz() {
    sparse_from_host(2, 2, 2, &[1.0f32], &[0, 1], &[0, 1], SparseFormat::COO);
}

#[test]
#[should_panic(expected = "sparse_from_dense: `format` DENSE is not a sparse format")]
fn dense_is_not_a_sparse_format() {
    sparse_from_dense(&Array::new(&[1.0f32], dim4!(1)), SparseFormat::DENSE);
}

#[test]
#[should_panic(expected = "sparse_from_dense: `dense` must be a matrix")]
fn only_matrices_become_sparse() {
    sparse_from_dense(&Array::new(&[1.0f32; 8], dim4!(2, 2, 2)), SparseFormat::CSR);
}

#[test]
#[should_panic(expected = "`*` of two sparse arrays is not supported")]
fn product_of_two_sparse_arrays_is_refused() {
    let s = sparse_from_dense(&Array::new(&[1.0f32, 0.0], dim4!(2)), SparseFormat::CSR);
    let _ = mul(&s, &s, false);
}

#[test]
#[should_panic(expected = "dividing by a sparse array is not supported")]
fn division_by_a_sparse_array_is_refused() {
    let d = Array::new(&[1.0f32, 2.0], dim4!(2));
    let s = sparse_from_dense(&d, SparseFormat::CSR);
    let _ = div(&d, &s, false);
}

#[test]
#[should_panic(expected = "the array is sparse (CSR) and this operation takes dense arrays only")]
fn dense_only_operations_refuse_sparse_arrays() {
    let s = sparse_from_dense(&Array::new(&[1.0f32, 0.0], dim4!(2)), SparseFormat::CSR);
    let _ = sum(&s, 0);
}

#[test]
#[should_panic(expected = "exp: the array is sparse (COO)")]
fn element_wise_functions_refuse_sparse_arrays() {
    let s = sparse_from_dense(&Array::new(&[1.0f32, 0.0], dim4!(2)), SparseFormat::COO);
    let _ = exp(&s);
}

#[test]
#[should_panic(expected = "matmul: `optrhs` must be NONE when `lhs` is sparse")]
fn sparse_products_take_no_rhs_property() {
    let s =
        sparse_from_dense(&Array::new(&[1.0f32, 0.0, 0.0, 1.0], dim4!(2, 2)), SparseFormat::CSR);
    let _ = matmul(&s, &Array::new(&[1.0f32, 2.0], dim4!(2)), MatProp::NONE, MatProp::TRANS);
}

#[test]
#[should_panic(expected = "matmul: inner dimensions differ")]
fn sparse_products_check_the_inner_dimension() {
    let s = sparse_from_dense(
        &Array::new(&[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], dim4!(2, 3)),
        SparseFormat::CSR,
    );
    let _ = matmul(&s, &Array::new(&[1.0f32, 2.0], dim4!(2)), MatProp::NONE, MatProp::NONE);
}

#[test]
#[should_panic(expected = "matmul: a sparse `rhs` is not supported")]
fn a_sparse_right_operand_is_refused() {
    let d = Array::new(&[1.0f32, 0.0, 0.0, 1.0], dim4!(2, 2));
    let s = sparse_from_dense(&d, SparseFormat::CSR);
    let _ = matmul(&d, &s, MatProp::NONE, MatProp::NONE);
}
