//! Conversions between emberfire arrays and ndarray's, in both directions: logical indices are
//! preserved for every number of axes and every ndarray layout.
#![cfg(feature = "ndarray")]

use emberfire::{dim4, Array, Dim4};
use ndarray::{s, ArrayD, IxDyn, ShapeBuilder};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Column-major position of `idx` in a shape.
fn column_major_index(idx: &[usize], shape: &[usize]) -> usize {
    let mut pos = 0;
    let mut stride = 1;
    for (i, n) in idx.iter().zip(shape) {
        pos += i * stride;
        stride *= n;
    }
    pos
}

/// Every multi-index of a shape.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut lin| {
            shape
                .iter()
                .map(|&d| {
                    let i = lin % d;
                    lin /= d;
                    i
                })
                .collect()
        })
        .collect()
}

fn random_values(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-100.0..100.0)).collect()
}

fn dim4_of(shape: &[usize]) -> Dim4 {
    let mut d = [1u64; 4];
    for (k, &n) in shape.iter().enumerate() {
        d[k] = n as u64;
    }
    Dim4::new(&d)
}

#[test]
fn to_ndarray_keeps_logical_indices_for_1_to_4_dims() {
    let shapes: [&[usize]; 4] = [&[7], &[3, 5], &[2, 3, 4], &[2, 3, 2, 3]];
    for (seed, shape) in shapes.iter().enumerate() {
        let values = random_values(shape.iter().product(), seed as u64);
        let a = Array::new(&values, dim4_of(shape));
        let m = a.to_ndarray();
        assert_eq!(m.shape(), *shape);
        assert!(m.is_standard_layout(), "shape {shape:?}: result is not row-major");
        for idx in indices(shape) {
            assert_eq!(
                m[IxDyn(&idx)],
                values[column_major_index(&idx, shape)],
                "shape {shape:?}, index {idx:?}"
            );
        }
    }
}

#[test]
fn from_ndarray_keeps_logical_indices_for_0_to_4_axes() {
    let shapes: [&[usize]; 5] = [&[], &[6], &[4, 3], &[3, 2, 4], &[2, 3, 2, 2]];
    for (seed, shape) in shapes.iter().enumerate() {
        let values = random_values(shape.iter().product(), 10 + seed as u64);
        let m = ArrayD::from_shape_vec(IxDyn(shape), values).unwrap();
        let a = Array::from_ndarray(&m);
        assert_eq!(a.dims(), dim4_of(shape), "shape {shape:?}");
        let host = a.to_vec();
        for idx in indices(shape) {
            assert_eq!(
                host[column_major_index(&idx, shape)],
                m[IxDyn(&idx)],
                "shape {shape:?}, index {idx:?}"
            );
        }
    }
}

#[test]
fn round_trip_through_ndarray_is_identity() {
    let values = random_values(24, 99);
    let a = Array::new(&values, dim4!(2, 3, 4));
    let back = Array::from_ndarray(&a.to_ndarray());
    assert_eq!(back.dims(), a.dims());
    assert_eq!(back.to_vec(), values);
}

#[test]
fn two_dim_element_i_j_matches() {
    // Column-major: element (i, j) of a 3x2 array is values[i + 3 * j].
    let a = Array::new(&[0i32, 1, 2, 10, 11, 12], dim4!(3, 2));
    let m = a.to_ndarray();
    for i in 0..3 {
        for j in 0..2 {
            assert_eq!(m[[i, j]], (10 * j + i) as i32);
        }
    }
}

#[test]
fn from_column_major_ndarray() {
    let values = random_values(12, 3);
    let f = ArrayD::from_shape_vec(IxDyn(&[3, 4]).f(), values.clone()).unwrap();
    // A column-major ndarray has the same memory order as emberfire.
    assert_eq!(Array::from_ndarray(&f).to_vec(), values);
}

#[test]
fn from_transposed_view() {
    let m = ndarray::Array::from_shape_vec((3, 4), random_values(12, 4)).unwrap();
    let t = m.t();
    let a = Array::from_ndarray(&t);
    assert_eq!(a.dims(), dim4!(4, 3));
    let host = a.to_vec();
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(host[i + 4 * j], m[[j, i]]);
        }
    }
}

#[test]
fn from_stepped_and_reversed_slices() {
    let m = ndarray::Array::from_shape_vec((6, 5, 4), random_values(120, 5)).unwrap();
    let v = m.slice(s![1..;2, ..;-2, 1..3]);
    assert_eq!(v.shape(), &[3, 3, 2]);
    let a = Array::from_ndarray(&v);
    assert_eq!(a.dims(), dim4!(3, 3, 2));
    let host = a.to_vec();
    for idx in indices(&[3, 3, 2]) {
        assert_eq!(host[column_major_index(&idx, &[3, 3, 2])], v[[idx[0], idx[1], idx[2]]]);
    }
}

#[test]
fn from_permuted_4d_view() {
    let m = ndarray::Array::from_shape_vec((2, 3, 4, 5), random_values(120, 6)).unwrap();
    let p = m.view().permuted_axes([2, 0, 3, 1]);
    let a = Array::from_ndarray(&p);
    assert_eq!(a.dims(), dim4!(4, 2, 5, 3));
    let host = a.to_vec();
    for idx in indices(&[4, 2, 5, 3]) {
        assert_eq!(
            host[column_major_index(&idx, &[4, 2, 5, 3])],
            p[[idx[0], idx[1], idx[2], idx[3]]]
        );
    }
}

#[test]
fn from_owned_value_and_reference_agree() {
    let m = ndarray::array![[1u16, 2], [3, 4], [5, 6]];
    let by_ref = Array::from(&m);
    let by_value: Array<u16> = m.into();
    assert_eq!(by_ref.to_vec(), vec![1, 3, 5, 2, 4, 6]);
    assert_eq!(by_value.to_vec(), by_ref.to_vec());
}

#[test]
fn lazy_results_convert() {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
    let m = ArrayD::from(&(&a * 10.0f32 + 1.0f32));
    assert_eq!(m, ndarray::array![[11.0f32, 31.0], [21.0, 41.0]].into_dyn());
}

#[test]
fn empty_arrays_keep_their_shape() {
    let a = Array::<f32>::new_empty(dim4!(0, 4));
    let m = a.to_ndarray();
    assert_eq!(m.shape(), &[0, 4]);
    assert_eq!(m.len(), 0);

    let a = Array::<f32>::new_empty(dim4!(3, 0));
    assert_eq!(a.to_ndarray().shape(), &[3, 0]);

    let e = ArrayD::<i64>::zeros(IxDyn(&[2, 0, 3]));
    let b = Array::from_ndarray(&e);
    assert_eq!(b.dims(), dim4!(2, 0, 3));
    assert!(b.is_empty());
    assert_eq!(b.to_ndarray().shape(), &[2, 0, 3]);
}

#[test]
fn trailing_unit_axes_are_dropped() {
    let a = Array::new(&[1u8, 2, 3], dim4!(3, 1, 1, 1));
    assert_eq!(a.to_ndarray().shape(), &[3]);
    let one = Array::new(&[9u8], dim4!(1));
    assert_eq!(one.to_ndarray().shape(), &[1]);
    let row = Array::new(&[1u8, 2, 3], dim4!(1, 3));
    assert_eq!(row.to_ndarray().shape(), &[1, 3]);
}

#[test]
#[should_panic(expected = "at most 4 dimensions")]
fn five_axes_panic() {
    let m = ArrayD::<f32>::zeros(IxDyn(&[1, 2, 1, 2, 2]));
    let _ = Array::from_ndarray(&m);
}
