//! Data movement (moddims, flat, flip, reorder, transpose, tile, shift, pad, join) against host
//! references, for every element type, on random shapes (empty and size-1 dimensions included)
//! and on inputs that are ready, lazy trees, permuted views and flipped (negative-stride)
//! views.
//!
//! Every reference is computed here from the test's own input values: element positions are
//! moved on the host, and the values compared exactly.

use crate::common;

use common::*;
use emberfire::*;

/// How a test input is made: the same values reached four ways.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// Dense data.
    Ready,
    /// A lazy tree that evaluates to the values (an identity `select`).
    Lazy,
    /// A view with permuted strides (`reorder_v2` of data laid out in another order).
    Permuted([u64; 4]),
    /// A view with a negative stride (`flip` of the values reversed along a dimension).
    Flipped(u32),
}

impl Form {
    fn random(r: &mut Rng64) -> Form {
        match r.gen_range(0..4) {
            0 => Form::Ready,
            1 => Form::Lazy,
            2 => Form::Permuted(permutation(r)),
            _ => Form::Flipped(r.gen_range(0..4)),
        }
    }
}

/// A random permutation of 0..4.
fn permutation(r: &mut Rng64) -> [u64; 4] {
    let mut p = [0u64, 1, 2, 3];
    for i in (1..4).rev() {
        p.swap(i, r.gen_range(0..=i));
    }
    p
}

/// Column-major position of coordinates `c` in `dims`.
fn pos(dims: Dim4, c: [u64; 4]) -> usize {
    (c[0] + dims[0] * (c[1] + dims[1] * (c[2] + dims[2] * c[3]))) as usize
}

/// The values of shape `out`, element `c` given by `f(c)`.
fn build(out: Dim4, f: impl Fn([u64; 4]) -> V) -> Vec<V> {
    (0..out.elements() as usize).map(|i| f(coords(out, i))).collect()
}

fn zero<T: Elem>() -> V {
    T::from_v(V::I(0)).to_v()
}

/// An array holding `vals` (shape `dims`), made as `form` says.
fn make<T: Elem>(vals: &[T], dims: Dim4, form: Form) -> Array<T> {
    match form {
        Form::Ready => Array::new(vals, dims),
        Form::Lazy => {
            let a = Array::new(vals, dims);
            select(&a, &constant(true, dims), &a)
        }
        Form::Permuted(p) => {
            // stored with dimension p[k] of the storage being dimension k of the result
            let mut e = [0u64; 4];
            for k in 0..4 {
                e[p[k] as usize] = dims[k];
            }
            let stored_dims = Dim4::new(&e);
            let mut stored = vals.to_vec();
            for (i, v) in vals.iter().enumerate() {
                let c = coords(dims, i);
                let mut cs = [0u64; 4];
                for k in 0..4 {
                    cs[p[k] as usize] = c[k];
                }
                stored[pos(stored_dims, cs)] = *v;
            }
            let x =
                reorder_v2(&Array::new(&stored, stored_dims), p[0], p[1], Some(vec![p[2], p[3]]));
            assert_eq!(x.dims(), dims, "test bug: permuted input");
            x
        }
        Form::Flipped(k) => {
            let k = k as usize;
            let mut stored = vals.to_vec();
            for (i, v) in vals.iter().enumerate() {
                let mut c = coords(dims, i);
                c[k] = dims[k] - 1 - c[k];
                stored[pos(dims, c)] = *v;
            }
            flip(&Array::new(&stored, dims), k as u32)
        }
    }
}

/// Compares an array with the expected shape and values (exactly: moving data changes no
/// value).
fn expect<T: Elem>(
    what: &str,
    got: &Array<T>,
    dims: Dim4,
    want: &[V],
) -> std::result::Result<(), String> {
    if got.get_type() != T::TY.dtype || got.dims() != dims {
        return Err(format!(
            "{what}: type {:?} dims {}, want dims {dims}",
            got.get_type(),
            got.dims()
        ));
    }
    check_all(&got.to_vec(), want, Tol::EXACT, &|i| format!("{what}, element {i} of {dims}"))
}

/// Every function of this family on one random input of shape `dims`.
fn case<T: Elem>(dims: Dim4, seed: u64) -> std::result::Result<(), String> {
    let mut r = Rng64::seed_from_u64(seed);
    let n = dims.elements() as usize;
    let vals: Vec<T> = gen_vec(&mut r, n, &T::any);
    let v = vs(&vals);
    let at = |c: [u64; 4]| v[pos(dims, c)];
    let t = T::TY.name;
    // each function gets a fresh input, so that lazy inputs reach every function lazy
    let input = |r: &mut Rng64| {
        let form = Form::random(r);
        (make(&vals, dims, form), form)
    };

    // moddims to a permutation of the sizes, and flat
    let p = permutation(&mut r);
    let nd = Dim4::new(&p.map(|k| dims[k as usize]));
    let (a, form) = input(&mut r);
    expect(&format!("moddims({t}, {form:?}, {dims} -> {nd})"), &moddims(&a, nd), nd, &v)?;
    let (a, form) = input(&mut r);
    expect(&format!("flat({t}, {form:?}, {dims})"), &flat(&a), dim4!(n), &v)?;

    // flip along each dimension
    for k in 0..4 {
        let (a, form) = input(&mut r);
        let want = build(dims, |mut c| {
            c[k] = dims[k] - 1 - c[k];
            at(c)
        });
        expect(&format!("flip({t}, {form:?}, {dims}, {k})"), &flip(&a, k as u32), dims, &want)?;
    }

    // reorder_v2 with a random permutation, in each of its argument forms
    let p = permutation(&mut r);
    let od = Dim4::new(&p.map(|k| dims[k as usize]));
    let want = build(od, |c| {
        let mut ci = [0u64; 4];
        for k in 0..4 {
            ci[p[k] as usize] = c[k];
        }
        at(ci)
    });
    let (a, form) = input(&mut r);
    let got = match (p[2], p[3]) {
        (2, 3) => reorder_v2(&a, p[0], p[1], None),
        (_, 3) => reorder_v2(&a, p[0], p[1], Some(vec![p[2]])),
        _ => reorder_v2(&a, p[0], p[1], Some(vec![p[2], p[3]])),
    };
    expect(&format!("reorder_v2({t}, {form:?}, {dims}, {p:?})"), &got, od, &want)?;

    // transpose, plain and conjugate
    for conj in [false, true] {
        let td = dim4!(dims[1], dims[0], dims[2], dims[3]);
        let want = build(td, |c| match at([c[1], c[0], c[2], c[3]]) {
            V::C(z) if conj => V::C(z.conj()),
            x => x,
        });
        let (a, form) = input(&mut r);
        let what = format!("transpose({t}, {form:?}, {dims}, conj {conj})");
        expect(&what, &transpose(&a, conj), td, &want)?;
        let (mut a, _) = input(&mut r);
        transpose_inplace(&mut a, conj);
        expect(&format!("transpose_inplace of {what}"), &a, td, &want)?;
    }

    // tile by 0 to 3 along each dimension (1 where the result would be large)
    let mut reps = [0u64; 4].map(|_| r.gen_range(0..=3u64));
    while (0..4).map(|k| dims[k] * reps[k]).product::<u64>() > 50_000 {
        let big = (0..4).max_by_key(|&k| reps[k]).unwrap();
        reps[big] = 1;
    }
    let reps = Dim4::new(&reps);
    let td = Dim4::new(&std::array::from_fn(|k| dims[k] * reps[k]));
    let want = build(td, |c| at(std::array::from_fn(|k| c[k] % dims[k])));
    let (a, form) = input(&mut r);
    expect(&format!("tile({t}, {form:?}, {dims}, {reps})"), &tile(&a, reps), td, &want)?;

    // circular shifts, both directions, larger than the size too
    let offsets = [0; 4].map(|_: i32| r.gen_range(-12..=12));
    let want = build(dims, |c| {
        at(std::array::from_fn(|k| {
            (c[k] as i64 - offsets[k] as i64).rem_euclid(dims[k] as i64) as u64
        }))
    });
    let (a, form) = input(&mut r);
    let what = format!("shift({t}, {form:?}, {dims}, {offsets:?})");
    expect(&what, &shift(&a, &offsets), dims, &want)?;

    // pad with each border type
    for border in
        [BorderType::ZERO, BorderType::SYMMETRIC, BorderType::CLAMP_TO_EDGE, BorderType::PERIODIC]
    {
        let b = Dim4::new(&[0; 4].map(|_: u64| r.gen_range(0..=3)));
        let e = Dim4::new(&[0; 4].map(|_: u64| r.gen_range(0..=3)));
        let pd = Dim4::new(&std::array::from_fn(|k| dims[k] + b[k] + e[k]));
        let want = build(pd, |c| {
            if n == 0 {
                return zero::<T>();
            }
            let mut ci = [0u64; 4];
            for k in 0..4 {
                let (x, len) = (c[k] as i64 - b[k] as i64, dims[k] as i64);
                let src = match border {
                    _ if (0..len).contains(&x) => x,
                    BorderType::ZERO => return zero::<T>(),
                    BorderType::CLAMP_TO_EDGE => x.clamp(0, len - 1),
                    BorderType::PERIODIC => x.rem_euclid(len),
                    // ArrayFire's symmetric rule: the edge repeats, then the period restarts
                    BorderType::SYMMETRIC if x < 0 => (-x - 1) % len,
                    BorderType::SYMMETRIC => len - 1 - x % len,
                };
                ci[k] = src as u64;
            }
            at(ci)
        });
        let (a, form) = input(&mut r);
        let what = format!("pad({t}, {form:?}, {dims}, {b}, {e}, {border:?})");
        expect(&what, &pad(&a, b, e, border), pd, &want)?;
    }

    // join and join_many along a random dimension, with parts of other lengths along it
    let k = r.gen_range(0..4usize);
    let mut parts: Vec<(Vec<T>, Dim4)> = vec![(vals.clone(), dims)];
    for _ in 0..2 {
        let mut pd = dims;
        pd[k] = r.gen_range(0..=3);
        parts.push((gen_vec(&mut r, pd.elements() as usize, &T::any), pd));
    }
    let joined = |parts: &[(Vec<T>, Dim4)]| -> (Dim4, Vec<V>) {
        let kept: Vec<&(Vec<T>, Dim4)> = parts.iter().filter(|(p, _)| !p.is_empty()).collect();
        let mut out = kept.first().map_or(parts[0].1, |p| p.1);
        out[k] = if kept.is_empty() {
            parts.iter().map(|p| p.1[k]).sum()
        } else {
            kept.iter().map(|p| p.1[k]).sum()
        };
        let want = build(out, |mut c| {
            for (vals, pd) in &kept {
                if c[k] < pd[k] {
                    return vals[pos(*pd, c)].to_v();
                }
                c[k] -= pd[k];
            }
            unreachable!()
        });
        (out, want)
    };
    let arrays: Vec<Array<T>> =
        parts.iter().map(|(p, d)| make(p, *d, Form::random(&mut r))).collect();
    let (jd, want) = joined(&parts[..2]);
    expect(
        &format!("join({t}, {k}, {dims} and {})", parts[1].1),
        &join(k as i32, &arrays[0], &arrays[1]),
        jd,
        &want,
    )?;
    let arrays: Vec<Array<T>> =
        parts.iter().map(|(p, d)| make(p, *d, Form::random(&mut r))).collect();
    let (jd, want) = joined(&parts);
    let shapes: Vec<String> = parts.iter().map(|p| p.1.to_string()).collect();
    let got = join_many(k as i32, arrays.iter().collect());
    expect(&format!("join_many({t}, {k}, {})", shapes.join(", ")), &got, jd, &want)
}

macro_rules! every_type {
    ($($name:ident: $t:ty),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_cases(40, case::<$t>);
            }
        )*
    };
}

every_type! {
    random_shapes_f32: f32,
    random_shapes_f64: f64,
    random_shapes_c32: c32,
    random_shapes_c64: c64,
    random_shapes_f16: f16,
    random_shapes_bf16: bf16,
    random_shapes_bool: bool,
    random_shapes_u8: u8,
    random_shapes_i16: i16,
    random_shapes_u16: u16,
    random_shapes_i32: i32,
    random_shapes_u32: u32,
    random_shapes_i64: i64,
    random_shapes_u64: u64,
}

/// Matrices large enough for several transpose tiles and several CPU tasks, with ragged
/// edges, batches, and each kind of strided input.
#[test]
fn transpose_of_large_batched_and_strided_matrices() {
    let mut r = Rng64::seed_from_u64(7);
    for dims in [dim4!(300, 257), dim4!(65, 1000, 3), dim4!(1031, 67, 2, 2), dim4!(4096, 33)] {
        let n = dims.elements() as usize;
        let vals: Vec<c32> = gen_vec(&mut r, n, &c32::small);
        let v = vs(&vals);
        let td = dim4!(dims[1], dims[0], dims[2], dims[3]);
        let want = build(td, |c| match v[pos(dims, [c[1], c[0], c[2], c[3]])] {
            V::C(z) => V::C(z.conj()),
            x => x,
        });
        for form in [
            Form::Ready,
            Form::Lazy,
            Form::Permuted([1, 0, 2, 3]),
            Form::Permuted([0, 1, 3, 2]),
            Form::Flipped(1),
            Form::Flipped(0),
        ] {
            let a = make(&vals, dims, form);
            expect(&format!("transpose({dims}, {form:?})"), &transpose(&a, true), td, &want)
                .unwrap();
        }
        // a transpose of a transpose is the input again; the conjugate twice too
        let a = Array::new(&vals, dims);
        expect("transpose twice", &transpose(&transpose(&a, true), true), dims, &v).unwrap();
    }
}

/// Each element type through the materialising paths at sizes where several tiles and
/// several parallel tasks run (the random-shape cases are mostly small).
#[test]
fn transpose_and_join_of_every_element_size() {
    fn one<T: Elem>(seed: u64) {
        let mut r = Rng64::seed_from_u64(seed);
        let dims = dim4!(129, 70, 2);
        let vals: Vec<T> = gen_vec(&mut r, dims.elements() as usize, &T::any);
        let v = vs(&vals);
        let a = Array::new(&vals, dims);
        let td = dim4!(70, 129, 2);
        let want = build(td, |c| v[pos(dims, [c[1], c[0], c[2], c[3]])]);
        expect(T::TY.name, &transpose(&a, false), td, &want).unwrap();
        // The conjugate transpose of a real type is the plain one (an 8-byte f64 or i64 must
        // not be conjugated as if it were a c32).
        if !matches!(T::TY.dtype, DType::C32 | DType::C64) {
            let what = format!("{} conjugate", T::TY.name);
            expect(&what, &transpose(&a, true), td, &want).unwrap();
        }
        for k in 0..3 {
            let mut jd = dims;
            jd[k] *= 2;
            let want = build(jd, |mut c| {
                c[k] %= dims[k];
                v[pos(dims, c)]
            });
            let flipped = flip(&flip(&a, 1), 1); // the same values through a strided view
            expect(&format!("join {} {k}", T::TY.name), &join(k as i32, &a, &flipped), jd, &want)
                .unwrap();
        }
    }
    one::<bool>(1);
    one::<u8>(2);
    one::<i16>(3);
    one::<f16>(4);
    one::<bf16>(9);
    one::<f32>(5);
    one::<u32>(6);
    one::<f64>(7);
    one::<i64>(8);
    one::<c32>(9);
    one::<c64>(10);
}

#[test]
fn views_read_back_through_every_path() {
    // a flipped view downloaded, used in arithmetic, flipped back, permuted and reshaped
    let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(3, 2));
    let f = flip(&a, 0);
    assert_eq!(f.to_vec(), vec![3, 2, 1, 6, 5, 4]);
    assert_eq!((&f * 10i32).to_vec(), vec![30, 20, 10, 60, 50, 40]);
    assert_eq!(flip(&f, 0).to_vec(), a.to_vec());
    assert_eq!(reorder_v2(&f, 1, 0, None).to_vec(), vec![3, 6, 2, 5, 1, 4]);
    assert_eq!(moddims(&f, dim4!(6)).to_vec(), vec![3, 2, 1, 6, 5, 4]);
    assert_eq!(sum_all(&f), (21, 0));
    // strides() and offset(): a flipped view cannot report a negative stride, so it takes
    // its own copy, and both describe that copy
    let f2 = flip(&a, 1);
    assert_eq!(f2.offset(), 0);
    assert_eq!(f2.strides(), dim4!(1, 3, 6, 6));
    let s = f.strides();
    assert_eq!(s, dim4!(1, 3, 6, 6));
    assert_eq!(f.offset(), 0);
    assert_eq!(f.to_vec(), vec![3, 2, 1, 6, 5, 4]);
    assert_eq!(f2.to_vec(), vec![4, 5, 6, 1, 2, 3]);
    // a permuted view reports its permuted strides as they are
    let p = reorder_v2(&a, 1, 0, None);
    assert_eq!((p.strides(), p.offset()), (dim4!(3, 1, 6, 6), 0));
    // a view's host copy into a slice
    let g = flip(&reorder_v2(&a, 1, 0, None), 1);
    let mut host = [0i32; 6];
    g.host(&mut host);
    assert_eq!(host, [3, 6, 2, 5, 1, 4]);
    // a tiled view of stride 0 read by arithmetic and by a reduction
    let col = Array::new(&[1.0f64, 2.0], dim4!(2));
    let wide = tile(&col, dim4!(1, 3));
    assert_eq!(wide.to_vec(), vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    assert_eq!(sum(&wide, 1).to_vec(), vec![3.0, 6.0]);
}

#[test]
fn tile_shift_and_pad_compose_and_feed_arithmetic() {
    let a = Array::new(&[1i64, 2, 3, 4, 5, 6], dim4!(2, 3));
    // shift of a tile and tile of a shift read the input once, through one map
    let t = tile(&a, dim4!(2, 2));
    let st = shift(&t, &[1, -1, 0, 0]);
    let ts = tile(&shift(&a, &[1, -1, 0, 0]), dim4!(2, 2));
    let want: Vec<i64> = (0..24)
        .map(|i| {
            let (r, c) = ((i % 4) as i64, (i / 4) as i64);
            let (r, c) = ((r - 1).rem_euclid(4) % 2, (c + 1).rem_euclid(6) % 3);
            1 + r + 2 * c
        })
        .collect();
    assert_eq!(st.to_vec(), want);
    assert_eq!(ts.to_vec(), want);
    // fused into arithmetic, with broadcasting and a reduction
    let b = Array::new(&[10i64, 20, 30, 40], dim4!(4));
    let fused = mul(&st, &b, true) + 1i64;
    let got = fused.to_vec();
    for i in 0..24 {
        assert_eq!(got[i], want[i] * [10, 20, 30, 40][i % 4] + 1, "element {i}");
    }
    let padded =
        pad(&a, Dim4::new(&[1, 1, 0, 0]), Dim4::new(&[1, 0, 0, 0]), BorderType::CLAMP_TO_EDGE);
    assert_eq!(sum_all(&(&padded - 1i64)).0, {
        // rows 0 and 3 repeat rows 1 and 2 of a padded input; column 0 repeats column 1
        let p: Vec<i64> = vec![1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6];
        p.iter().map(|x| x - 1).sum::<i64>()
    });
    // a pad of a pad, a shift of a pad, a tile of a periodic pad
    let pp = pad(
        &pad(&a, Dim4::new(&[1, 0, 0, 0]), Dim4::new(&[0; 4]), BorderType::ZERO),
        Dim4::new(&[0, 1, 0, 0]),
        Dim4::new(&[0; 4]),
        BorderType::ZERO,
    );
    assert_eq!(pp.to_vec(), vec![0, 0, 0, 0, 1, 2, 0, 3, 4, 0, 5, 6]);
    let sp = shift(
        &pad(&a, Dim4::new(&[0; 4]), Dim4::new(&[1, 0, 0, 0]), BorderType::ZERO),
        &[1, 0, 0, 0],
    );
    assert_eq!(sp.to_vec(), vec![0, 1, 2, 0, 3, 4, 0, 5, 6]);
    let tp = tile(
        &pad(&a, Dim4::new(&[0; 4]), Dim4::new(&[1, 0, 0, 0]), BorderType::PERIODIC),
        dim4!(2),
    );
    assert_eq!(tp.to_vec(), vec![1, 2, 1, 1, 2, 1, 3, 4, 3, 3, 4, 3, 5, 6, 5, 5, 6, 5]);
}

#[test]
fn moddims_of_lazy_trees() {
    let a = Array::new(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], dim4!(2, 3));
    let b = Array::new(&[0.5f32, 0.25, 0.125, 1.0, 2.0, 4.0], dim4!(2, 3));
    // element-wise throughout: stays lazy, and the tree it came from is not evaluated
    let tree = sqrt(&a) * &b + 1.0f32;
    let m = moddims(&tree, dim4!(3, 2));
    assert!(!tree.is_linear() && !m.is_linear(), "no evaluation yet");
    let want: Vec<f32> = (0..6)
        .map(|i| ((i + 1) as f32).sqrt() * [0.5, 0.25, 0.125, 1.0, 2.0, 4.0][i] + 1.0)
        .collect();
    assert_eq!(m.dims(), dim4!(3, 2));
    assert_eq!(m.to_vec(), want);
    assert!(!tree.is_linear(), "the reshaped tree was evaluated on its own");
    // broadcasting inside, or a range: evaluated first, still right
    let row = Array::new(&[1.0f32, 2.0, 3.0], dim4!(1, 3));
    let bc = add(&a, &row, true);
    assert_eq!(moddims(&bc, dim4!(6)).to_vec(), vec![2.0, 3.0, 5.0, 6.0, 8.0, 9.0]);
    let r = range::<f32>(dim4!(2, 3), 1) + &a;
    assert_eq!(flat(&r).to_vec(), vec![1.0, 2.0, 4.0, 5.0, 7.0, 8.0]);
    // a reshaped tree used with the original in one evaluation
    let s = &moddims(&tree, dim4!(6)) - &flat(&tree);
    assert_eq!(s.to_vec(), vec![0.0; 6]);
}

#[test]
#[allow(deprecated)]
fn reorder_takes_the_axes_as_a_shape() {
    let a = Array::new(&[1u16, 2, 3, 4, 5, 6, 7, 8], dim4!(2, 2, 2));
    let r = reorder(&a, dim4!(2, 0, 1, 3));
    assert_eq!(r.dims(), dim4!(2, 2, 2));
    // element (i, j, k) of r is element (j, k, i) of a
    let av = a.to_vec();
    let rv = r.to_vec();
    for i in 0..2 {
        for j in 0..2 {
            for k in 0..2 {
                assert_eq!(rv[i + 2 * j + 4 * k], av[j + 2 * k + 4 * i]);
            }
        }
    }
}

// ---- panics: the message names the function and the shapes ---------------------------------

#[test]
#[should_panic(
    expected = "moddims: cannot reshape dims [2 3 1 1] (6 elements) into dims [4 1 1 1] (4 elements)"
)]
fn moddims_with_another_element_count() {
    moddims(&Array::new(&[0u8; 6], dim4!(2, 3)), dim4!(4));
}

#[test]
#[should_panic(expected = "join: shapes [2 3 1 1], [2 4 1 1] differ outside dimension 0")]
fn join_of_mismatched_shapes() {
    join(0, &Array::new(&[0f32; 6], dim4!(2, 3)), &Array::new(&[0f32; 8], dim4!(2, 4)));
}

#[test]
#[should_panic(
    expected = "join_many: shapes [2 1 1 1], [2 1 1 1], [3 1 1 1] differ outside dimension 1"
)]
fn join_many_of_mismatched_shapes() {
    let (a, b) = (Array::new(&[1i32, 2], dim4!(2)), Array::new(&[1i32, 2, 3], dim4!(3)));
    join_many(1, vec![&a, &a, &b]);
}

#[test]
#[should_panic(expected = "join: dimension 4 is not in 0..4 (shapes [2 1 1 1], [2 1 1 1])")]
fn join_along_a_fifth_dimension() {
    let a = Array::new(&[1i32, 2], dim4!(2));
    join(4, &a, &a);
}

#[test]
#[should_panic(expected = "join_many: no arrays to join")]
fn join_many_of_nothing() {
    join_many::<f32>(0, vec![]);
}

#[test]
#[should_panic(expected = "flip: dimension 4 is not in 0..4 (input dims [2 1 1 1])")]
fn flip_along_a_fifth_dimension() {
    flip(&Array::new(&[1i32, 2], dim4!(2)), 4);
}

#[test]
#[should_panic(
    expected = "reorder_v2: axes [1, 1, 2, 3] are not a permutation of 0, 1, 2, 3 (input dims [2 3 1 1])"
)]
fn reorder_with_a_repeated_axis() {
    reorder_v2(&Array::new(&[0u8; 6], dim4!(2, 3)), 1, 1, None);
}

#[test]
#[should_panic(
    expected = "reorder_v2: at most 2 axes after the first two, got [2, 3, 4] (input dims [2 3 1 1])"
)]
fn reorder_with_too_many_axes() {
    reorder_v2(&Array::new(&[0u8; 6], dim4!(2, 3)), 1, 0, Some(vec![2, 3, 4]));
}

#[test]
#[should_panic(expected = "tile: dims [4294967296 1 1 1] times [4294967296 1 1 1]")]
fn tile_beyond_the_address_space() {
    let a = constant(1u8, dim4!(1u64 << 32));
    tile(&a, dim4!(1u64 << 32));
}

// ---- arrayfire-rust's documented examples, with the `use arrayfire::...` line changed -------

/// arrayfire-rust's examples draw inputs with `randu`, which arrives with the random-number
/// functions; until then this stand-in (uniform values in [0, 1) from a fixed seed) lets the
/// examples' code run unchanged.
mod af {
    pub use emberfire::*;
    pub fn randu<T: HasAfEnum + common::Elem>(dims: Dim4) -> Array<T> {
        use common::{Rng, SeedableRng};
        let mut r = common::Rng64::seed_from_u64(dims.elements());
        let v: Vec<T> =
            (0..dims.elements()).map(|_| T::from_v(common::V::F(r.gen_range(0.0..1.0)))).collect();
        Array::new(&v, dims)
    }
    use super::common;
}

#[test]
fn example_reorder_v2() {
    use af::{print, randu, reorder_v2, Array, Dim4};
    let a = randu::<f32>(Dim4::new(&[5, 3, 1, 1]));
    let b = reorder_v2(&a, 1, 0, None);
    print(&a);
    print(&b);
    let c = reorder_v2(&a, 2, 0, Some(vec![1]));
    print(&c);
    // what the example shows
    let av: Array<f32> = a.clone();
    assert_eq!(b.dims(), Dim4::new(&[3, 5, 1, 1]));
    assert_eq!(c.dims(), Dim4::new(&[1, 5, 3, 1]));
    let (va, vb, vc) = (av.to_vec(), b.to_vec(), c.to_vec());
    for i in 0..5 {
        for j in 0..3 {
            assert_eq!(vb[j + 3 * i], va[i + 5 * j]);
            assert_eq!(vc[i + 5 * j], va[i + 5 * j]);
        }
    }
}

#[test]
fn example_shift() {
    use af::{print, randu, shift, Dim4};
    let a = randu::<f32>(Dim4::new(&[5, 1, 1, 1]));
    let _a = shift(&a, &[-1i32, 1, 1, 1]); //shift data one step backward
    let a_ = shift(&a, &[1i32, 1, 1, 1]); //shift data one step forward
    print(&a);
    print(&_a);
    print(&a_);
    let v = a.to_vec();
    assert_eq!(_a.to_vec(), vec![v[1], v[2], v[3], v[4], v[0]]);
    assert_eq!(a_.to_vec(), vec![v[4], v[0], v[1], v[2], v[3]]);
}

#[test]
fn example_join_many_macro() {
    use af::{join_many, print, randu, Dim4};
    let a = &randu::<f32>(Dim4::new(&[5, 3, 1, 1]));
    let b = &randu::<f32>(Dim4::new(&[5, 3, 1, 1]));
    let c = &randu::<f32>(Dim4::new(&[5, 3, 1, 1]));
    let d = join_many![2; a, b, c];
    print(&d);
    assert_eq!(d.dims(), Dim4::new(&[5, 3, 3, 1]));
    let want: Vec<f32> = [a, b, c].iter().flat_map(|x| x.to_vec()).collect();
    assert_eq!(d.to_vec(), want);
}

/// The tutorial's "combining functions to enumerate grid coordinates".
#[test]
fn example_grid_coordinates() {
    use af::{flat, iota, join, print, transpose, Dim4};
    let a = iota::<u32>(Dim4::new(&[3, 1, 1, 1]), Dim4::new(&[1, 3, 1, 1]));
    let b = transpose(&a, false);
    let coords = join(1, &flat(&a), &flat(&b));
    print(&coords);
    assert_eq!(coords.dims(), Dim4::new(&[9, 2, 1, 1]));
    assert_eq!(coords.to_vec(), vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
}

/// Long columns: each evaluation chunk lies inside one column, where shifts and tiles read
/// their source in place (or as one zero for padding) instead of gathering.
#[test]
fn long_columns_read_shifted_tiled_and_padded_sources_in_place() {
    let (rows, cols) = (9000u64, 3u64);
    let host: Vec<i32> = (0..(rows * cols) as i32).map(|i| i * 7 - 1000).collect();
    let a = Array::new(&host, dim4!(rows, cols));
    let at = |r: u64, c: u64| host[(c * rows + r) as usize];
    let (r_n, c_n) = (rows as i64, cols as i64);
    for (dy, dx) in [(0i32, 1i32), (5, 0), (-5, 2), (3, -1), (8999, 0)] {
        let got = shift(&a, &[dy, dx, 0, 0]).to_vec();
        for c in 0..cols {
            for r in (0..rows).step_by(97).chain([0, rows - 1]) {
                let sr = (r as i64 - dy as i64).rem_euclid(r_n) as u64;
                let sc = (c as i64 - dx as i64).rem_euclid(c_n) as u64;
                assert_eq!(
                    got[(c * rows + r) as usize],
                    at(sr, sc),
                    "shift ({dy}, {dx}) at ({r}, {c})"
                );
            }
        }
    }
    let t = tile(&a, dim4!(2, 2)).to_vec();
    for (r, c) in [(0u64, 0u64), (rows + 17, 4), (2 * rows - 1, 5), (123, 3)] {
        assert_eq!(t[(c * 2 * rows + r) as usize], at(r % rows, c % cols), "tile at ({r}, {c})");
    }
    let p = pad(&a, dim4!(0, 1, 0, 0), dim4!(0, 1, 0, 0), BorderType::ZERO);
    let pv = p.to_vec();
    assert_eq!(p.dims(), dim4!(rows, cols + 2));
    for r in (0..rows).step_by(101) {
        assert_eq!(pv[r as usize], 0, "left padding");
        assert_eq!(pv[(rows + r) as usize], at(r, 0));
        assert_eq!(pv[((cols + 1) * rows + r) as usize], 0, "right padding");
    }
}

/// A stencil of circular shifts on the shapes a GPU kernel takes in runs of whole warps along
/// dimension 0 (the first extent a multiple of 32 times the vector width): one row, row counts
/// the tile height divides and ones it does not (few and many), and rows that span dimensions
/// 2 and 3. Neighbours up to a lane's width along dimension 0 are the ones a GPU kernel takes
/// from the registers of the same row's wide read and of the adjacent lane, the warp's first
/// and last lanes reading the element past its run (wrapped at a row's ends); a shift of three
/// is past an f64 lane's two elements, so f64 is read element by element. Every element is
/// checked against the host.
fn stencil_case<T>(dims: Dim4, value: impl Fn(usize) -> T, sum: impl Fn(&[T]) -> T)
where
    T: Elem + Copy + PartialEq + std::fmt::Debug,
{
    let n = dims.elements() as usize;
    let vals: Vec<T> = (0..n).map(&value).collect();
    let a = Array::new(&vals, dims);
    // neighbours along dimension 0 within two (read directly away from the ends of a row) and
    // beyond
    let offsets = [
        [1, 0, 0, 0],
        [-1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, -1, 0, 0],
        [0, 0, 1, -1],
        [1, 1, 0, 0],
        [-1, 1, 0, 0],
        [1, -1, 0, 0],
        [-1, -1, 0, 0],
        [2, 0, 0, 0],
        [-2, 1, 0, 0],
        [3, 0, 0, 0],
    ];
    let mut r = a.clone();
    for o in &offsets {
        r += shift(&a, o);
    }
    let got = r.to_vec();
    for i in 0..n {
        let c = coords(dims, i);
        let mut terms = vec![vals[i]];
        for o in &offsets {
            let mut s = [0u64; 4];
            for k in 0..4 {
                s[k] = (c[k] as i64 - o[k] as i64).rem_euclid(dims[k] as i64) as u64;
            }
            terms.push(vals[pos(dims, s)]);
        }
        assert_eq!(got[i], sum(&terms), "{dims} element {i}");
    }
}

#[test]
fn shifted_stencils_over_whole_warp_runs_of_any_row_count() {
    // (extent of dimension 0, rows as dimensions 1 to 3)
    let shapes = [
        (512, [1, 1, 1]),
        (512, [3, 1, 1]),
        (512, [8, 1, 1]),
        (512, [9, 1, 1]),
        (1024, [67, 1, 1]),
        (512, [16, 3, 1]),
        (512, [5, 3, 2]),
        (512, [4, 2, 9]),
    ];
    for (d0, rows) in shapes {
        let dims = dim4!(d0, rows[0], rows[1], rows[2]);
        stencil_case(dims, |i| (i * 7 % 23) as u8, |t| t.iter().sum());
        stencil_case(dims, |i| (i % 97) as f32 * 0.25, |t| t.iter().fold(0.0, |s, x| s + x));
        stencil_case(dims, |i| (i % 89) as f64 * 0.5, |t| t.iter().fold(0.0, |s, x| s + x));
        stencil_case(dims, |i| (i % 113) as i16 - 50, |t| t.iter().sum());
        stencil_case(
            dims,
            |i| c32::new((i % 31) as f32 * 0.5, -((i % 7) as f32)),
            |t| t.iter().fold(c32::new(0.0, 0.0), |s, x| s + x),
        );
    }
}

/// `gradient` reads its neighbours along one dimension with clamped borders: on shapes a GPU
/// kernel walks in runs with tiles of rows, the neighbours inside a tile come from shared
/// memory and those past its edges (and the clamped ones at the image's edges) directly.
/// Checked against central differences in f64.
#[test]
fn clamped_neighbours_over_whole_warp_runs() {
    for dims in [dim4!(512, 16), dim4!(256, 13, 2), dim4!(1024, 3)] {
        let n = dims.elements() as usize;
        let vals: Vec<f32> = (0..n).map(|i| ((i * 37 % 101) as f32) * 0.125).collect();
        let (dx, dy) = gradient(&Array::new(&vals, dims));
        let (dx, dy) = (dx.to_vec(), dy.to_vec());
        for i in 0..n {
            let c = coords(dims, i);
            for (k, got) in [(0, dx[i]), (1, dy[i])] {
                let at = |x: u64| {
                    let mut s = c;
                    s[k] = x;
                    vals[pos(dims, s)] as f64
                };
                let last = dims[k] - 1;
                let (lo, hi) = (c[k].saturating_sub(1), (c[k] + 1).min(last));
                let factor = if c[k] == 0 || c[k] == last { 1.0 } else { 0.5 };
                let want = (at(hi) - at(lo)) * factor;
                assert!(
                    (got as f64 - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "{dims} element {i} along {k}: {got} against {want}"
                );
            }
        }
    }
}
