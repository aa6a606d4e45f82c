//! A bool element is a byte, as ArrayFire's `b8`: true when it is not zero, its value read by
//! casts to numbers, arithmetic, `sum` and sorting; comparisons, logical operations and casts to
//! bool give 0 or 1; reading to the host gives proper Rust `bool`s. The convolution of a bool
//! signal keeps its numbers (ArrayFire stores the float result in the signal's bytes), which
//! arrayfire-rust's `conway` example relies on. References are computed on the host.

use crate::common;

use common::{Rng, Rng64, SeedableRng};
use emberfire::*;

fn board(dims: [usize; 4], seed: u64, share: f64) -> Vec<bool> {
    let mut r = Rng64::seed_from_u64(seed);
    (0..dims.iter().product::<usize>()).map(|_| r.gen::<f64>() < share).collect()
}

fn arr<T: HasAfEnum + Copy>(v: &[T], d: [usize; 4]) -> Array<T> {
    Array::new(v, Dim4::new(&d.map(|x| x as u64)))
}

/// The convolution over the first `rank` dimensions on the host (zero outside the signal),
/// `start` per dimension as ArrayFire's modes give it, the filter shared by every batch.
fn host_conv(
    s: &[f64],
    sd: [usize; 4],
    f: &[f64],
    fd: [usize; 4],
    rank: usize,
    expand: bool,
) -> (Vec<f64>, [usize; 4]) {
    let mut od = sd;
    let mut start = [0i64; 4];
    for k in 0..rank {
        if expand {
            od[k] = sd[k] + fd[k] - 1;
        } else {
            start[k] = (fd[k] / 2) as i64;
        }
    }
    let at = |d: [usize; 4], c: [usize; 4]| c[0] + d[0] * (c[1] + d[1] * (c[2] + d[2] * c[3]));
    let mut out = vec![0.0; od.iter().product()];
    for o3 in 0..od[3] {
        for o2 in 0..od[2] {
            for o1 in 0..od[1] {
                for o0 in 0..od[0] {
                    let o = [o0, o1, o2, o3];
                    let mut acc = 0.0;
                    for j3 in 0..fd[3] {
                        for j2 in 0..fd[2] {
                            for j1 in 0..fd[1] {
                                for j0 in 0..fd[0] {
                                    let j = [j0, j1, j2, j3];
                                    let mut c = o;
                                    let mut inside = true;
                                    for k in 0..rank {
                                        let i = o[k] as i64 + start[k] - j[k] as i64;
                                        inside &= i >= 0 && i < sd[k] as i64;
                                        c[k] = i.max(0) as usize;
                                    }
                                    if inside {
                                        acc += s[at(sd, c)] * f[at(fd, j)];
                                    }
                                }
                            }
                        }
                    }
                    out[at(od, o)] = acc;
                }
            }
        }
    }
    (out, od)
}

/// The byte a bool convolution stores: the rounded value saturated into 0..=255.
fn byte_of(x: f64) -> u8 {
    x.round().clamp(0.0, 255.0) as u8
}

fn counts_of(
    b: &[bool],
    d: [usize; 4],
    f: &[f64],
    fd: [usize; 4],
    rank: usize,
    expand: bool,
) -> (Vec<u8>, [usize; 4]) {
    let s: Vec<f64> = b.iter().map(|&x| x as u8 as f64).collect();
    let (o, od) = host_conv(&s, d, f, fd, rank, expand);
    (o.iter().map(|&x| byte_of(x)).collect(), od)
}

const LIFE_KERNEL: [f32; 9] = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0];

fn life_kernel() -> Array<f32> {
    Array::new(&LIFE_KERNEL, dim4!(3, 3))
}

/// Checks every way of reading a bool array of counts against the host bytes.
fn check_counts(func: &str, n: &Array<bool>, want: &[u8]) {
    let as_f32 = n.cast::<f32>().to_vec();
    let as_u8 = n.cast::<u8>().to_vec();
    let as_i32 = n.cast::<i32>().to_vec();
    let as_bool = n.to_vec();
    let mut host = vec![false; n.elements()];
    n.host(&mut host);
    assert_eq!(as_f32.len(), want.len(), "{func}: length");
    for (i, &w) in want.iter().enumerate() {
        assert_eq!(as_f32[i], w as f32, "{func}: f32 at {i}");
        assert_eq!(as_u8[i], w, "{func}: u8 at {i}");
        assert_eq!(as_i32[i], w as i32, "{func}: i32 at {i}");
        assert_eq!(as_bool[i], w != 0, "{func}: to_vec at {i}");
        assert_eq!(host[i], w != 0, "{func}: host at {i}");
        assert!(as_bool[i] as u8 <= 1 && host[i] as u8 <= 1, "{func}: bool byte at {i}");
    }
}

#[test]
fn convolve2_of_a_bool_board_holds_neighbour_counts() {
    for (d, seed) in
        [([37usize, 29, 1, 1], 1u64), ([16, 16, 3, 1], 2), ([1, 1, 1, 1], 3), ([5, 1, 2, 2], 4)]
    {
        let b = board(d, seed, 0.45);
        let (want, od) = counts_of(&b, d, &LIFE_KERNEL.map(f64::from), [3, 3, 1, 1], 2, false);
        assert_eq!(od, d);
        let state = arr(&b, d);
        for domain in [ConvDomain::SPATIAL, ConvDomain::FREQUENCY, ConvDomain::AUTO] {
            let n = convolve2(&state, &life_kernel(), ConvMode::DEFAULT, domain);
            check_counts(&format!("convolve2 {d:?} {domain:?}"), &n, &want);
            // eq with 2 and 3: the cells with exactly two or three live neighbours
            let two = eq(&n, &constant::<f32>(2.0, dim4!(1)), false).to_vec();
            let three = eq(&n, &constant::<f32>(3.0, dim4!(1)), false).to_vec();
            for i in 0..want.len() {
                assert_eq!(two[i], want[i] == 2, "eq 2 at {i}");
                assert_eq!(three[i], want[i] == 3, "eq 3 at {i}");
            }
        }
        let n = fft_convolve2(&state, &life_kernel(), ConvMode::DEFAULT);
        check_counts("fft_convolve2", &n, &want);
    }
}

#[test]
fn convolve1_and_3_and_expand_keep_counts_saturated_into_a_byte() {
    // 1-D: 300 ones against 300 ones reach 300, which saturates at 255
    let d = [300usize, 2, 1, 1];
    let mut b = board(d, 7, 0.5);
    b[..300].iter_mut().for_each(|x| *x = true);
    let f = vec![1.0f64; 300];
    for expand in [false, true] {
        let (want, od) = counts_of(&b, d, &f, [300, 1, 1, 1], 1, expand);
        assert!(want.contains(&255) && want.contains(&0) || !expand);
        let mode = if expand { ConvMode::EXPAND } else { ConvMode::DEFAULT };
        let ff = Array::new(&vec![1.0f32; 300], dim4!(300));
        for domain in [ConvDomain::SPATIAL, ConvDomain::FREQUENCY] {
            let n = convolve1(&arr(&b, d), &ff, mode, domain);
            assert_eq!(n.dims(), Dim4::new(&od.map(|x| x as u64)));
            check_counts(&format!("convolve1 expand={expand} {domain:?}"), &n, &want);
        }
        let n = fft_convolve1(&arr(&b, d), &ff, mode);
        check_counts("fft_convolve1", &n, &want);
    }
    // 3-D: a 3x3x3 filter of weights 0..2 on a 7x6x5 board, in both modes
    let d = [7usize, 6, 5, 1];
    let b = board(d, 8, 0.6);
    let fv: Vec<f64> = (0..27).map(|i| (i % 3) as f64).collect();
    let ff = Array::new(&fv.iter().map(|&x| x as f32).collect::<Vec<_>>(), dim4!(3, 3, 3));
    for expand in [false, true] {
        let (want, _) = counts_of(&b, d, &fv, [3, 3, 3, 1], 3, expand);
        let mode = if expand { ConvMode::EXPAND } else { ConvMode::DEFAULT };
        for domain in [ConvDomain::SPATIAL, ConvDomain::FREQUENCY] {
            let n = convolve3(&arr(&b, d), &ff, mode, domain);
            check_counts(&format!("convolve3 expand={expand} {domain:?}"), &n, &want);
        }
        check_counts("fft_convolve3", &fft_convolve3(&arr(&b, d), &ff, mode), &want);
    }
}

#[test]
fn convolve2_sep_of_a_bool_board_keeps_counts() {
    let d = [19usize, 23, 2, 1];
    let b = board(d, 9, 0.5);
    let col = [1.0f32, 2.0, 1.0];
    let row = [1.0f32, 1.0, 1.0, 1.0, 1.0];
    // the separable filter is the outer product of the column and row filters
    let full: Vec<f64> = (0..15).map(|i| col[i % 3] as f64 * row[i / 3] as f64).collect();
    for expand in [false, true] {
        let (want, _) = counts_of(&b, d, &full, [3, 5, 1, 1], 2, expand);
        let mode = if expand { ConvMode::EXPAND } else { ConvMode::DEFAULT };
        let n = convolve2_sep(
            &Array::new(&col, dim4!(3)),
            &Array::new(&row, dim4!(5)),
            &arr(&b, d),
            mode,
        );
        check_counts(&format!("convolve2_sep expand={expand}"), &n, &want);
    }
}

#[test]
fn counts_in_bool_arrays_follow_the_rule_everywhere() {
    let d = [23usize, 17, 2, 1];
    let b = board(d, 11, 0.4);
    let (want, _) = counts_of(&b, d, &LIFE_KERNEL.map(f64::from), [3, 3, 1, 1], 2, false);
    let other = board(d, 12, 0.5);
    let o = arr(&other, d);
    let lazy = convolve2(&arr(&b, d), &life_kernel(), ConvMode::DEFAULT, ConvDomain::SPATIAL);
    let evaluated = lazy.copy();
    evaluated.eval();
    for (which, n) in [("lazy", &lazy), ("evaluated", &evaluated)] {
        let nz: Vec<bool> = want.iter().map(|&w| w != 0).collect();
        let and_ = and(n, &o, false).to_vec();
        let or_ = or(n, &o, false).to_vec();
        let not_ = (!n).to_vec();
        let a = Array::new(&(0..want.len()).map(|i| i as f32).collect::<Vec<_>>(), n.dims());
        let z = constant::<f32>(-1.0, n.dims());
        let sel = select(&a, n, &z).to_vec();
        for i in 0..want.len() {
            assert_eq!(and_[i], nz[i] && other[i], "{which}: and at {i}");
            assert_eq!(or_[i], nz[i] || other[i], "{which}: or at {i}");
            assert_eq!(not_[i], !nz[i], "{which}: not at {i}");
            assert_eq!(sel[i], if nz[i] { i as f32 } else { -1.0 }, "{which}: select at {i}");
        }
        // reductions: count, any and all test "not zero"; sum adds the bytes
        let live = nz.iter().filter(|&&x| x).count() as u64;
        assert_eq!(count_all(n).0, live, "{which}: count_all");
        assert_eq!(
            sum_all(n).0 as f64,
            want.iter().map(|&w| w as f64).sum::<f64>(),
            "{which}: sum_all"
        );
        assert_eq!(any_true_all(n).0, live > 0, "{which}: any_true_all");
        assert_eq!(all_true_all(n).0, live == want.len() as u64, "{which}: all_true_all");
        let ones = constant::<f32>(1.0, n.dims());
        let more = add(&ones, &n.cast::<f32>(), false);
        assert!(all_true_all(&gt(&more, &constant::<f32>(0.0, dim4!(1)), false)).0);
        let col_count = count(n, 0).cast::<f64>().to_vec();
        let col_sum = sum(n, 0).cast::<f64>().to_vec();
        let col_any = any_true(n, 0).to_vec();
        let col_all = all_true(n, 0).to_vec();
        for c in 0..d[1] * d[2] {
            let run = &want[c * d[0]..(c + 1) * d[0]];
            assert_eq!(
                col_count[c],
                run.iter().filter(|&&w| w != 0).count() as f64,
                "{which}: count col {c}"
            );
            assert_eq!(
                col_sum[c],
                run.iter().map(|&w| w as f64).sum::<f64>(),
                "{which}: sum col {c}"
            );
            assert_eq!(col_any[c], run.iter().any(|&w| w != 0), "{which}: any col {c}");
            assert_eq!(col_all[c], run.iter().all(|&w| w != 0), "{which}: all col {c}");
        }
        // locate finds the non-zero bytes
        let at: Vec<u32> = (0..want.len() as u32).filter(|&i| want[i as usize] != 0).collect();
        assert_eq!(locate(n).to_vec(), at, "{which}: locate");
        // sorting orders by the byte
        let sorted = sort(n, 0, true).cast::<u8>().to_vec();
        for c in 0..d[1] * d[2] {
            let mut run = want[c * d[0]..(c + 1) * d[0]].to_vec();
            run.sort();
            assert_eq!(&sorted[c * d[0]..(c + 1) * d[0]], &run[..], "{which}: sort col {c}");
        }
        // casts to bool and comparisons give 0 or 1
        assert_eq!(
            n.cast::<f32>().cast::<bool>().cast::<u8>().to_vec(),
            nz.iter().map(|&x| x as u8).collect::<Vec<_>>()
        );
        let ge1 = ge(n, &constant::<f32>(1.0, dim4!(1)), false).cast::<u8>().to_vec();
        assert_eq!(ge1, nz.iter().map(|&x| x as u8).collect::<Vec<_>>(), "{which}: ge");
        // arithmetic works on the bytes: n + n doubles each count
        let twice = (n + n).cast::<u8>().to_vec();
        assert_eq!(
            twice,
            want.iter().map(|&w| w.wrapping_add(w)).collect::<Vec<_>>(),
            "{which}: n + n"
        );
    }
}

#[test]
fn conway_loop_matches_the_host_game_of_life() {
    // the loop of arrayfire-rust's `conway` example, without its window
    let d = [64usize, 48, 3];
    let start = board([d[0], d[1], d[2], 1], 21, 0.5);
    let mut host = start.clone();
    let kernel = life_kernel();
    let mut state = arr(&start, [d[0], d[1], d[2], 1]);
    let c0 = constant::<f32>(2.0, Dim4::new(&[1, 1, 1, 1]));
    let c1 = constant::<f32>(3.0, Dim4::new(&[1, 1, 1, 1]));
    for generation in 1..=8 {
        let n_hood = convolve2(&state, &kernel, ConvMode::DEFAULT, ConvDomain::SPATIAL);
        if generation % 2 == 0 {
            n_hood.eval();
        }
        let c0 = &eq(&n_hood, &c0, false);
        let c1 = &eq(&n_hood, &c1, false);
        state = state * c0 + c1;
        host = common::life_step(&host, d);
        assert_eq!(state.to_vec(), host, "generation {generation}");
        assert!(
            state.cast::<u8>().to_vec().iter().all(|&x| x <= 1),
            "generation {generation}: bytes"
        );
        let live = host.iter().filter(|&&x| x).count();
        assert!(live * 20 > host.len(), "generation {generation}: only {live} cells live");
    }
}

#[test]
fn bool_arithmetic_keeps_its_bytes_through_lazy_reductions() {
    // true + true is 2, as in ArrayFire's b8: the lazy sum folds the bytes
    let d = [13usize, 7, 3, 1];
    let (x, y) = (board(d, 31, 0.5), board(d, 32, 0.5));
    let (a, b) = (arr(&x, d), arr(&y, d));
    let bytes: Vec<u8> = x.iter().zip(&y).map(|(&p, &q)| p as u8 + q as u8).collect();
    let s = &a + &b;
    assert_eq!(s.cast::<u8>().to_vec(), bytes);
    assert_eq!(s.to_vec(), bytes.iter().map(|&v| v != 0).collect::<Vec<_>>());
    assert_eq!(sum_all(&s).0 as f64, bytes.iter().map(|&v| v as f64).sum::<f64>());
    assert_eq!(count_all(&s).0, bytes.iter().filter(|&&v| v != 0).count() as u64);
    let col = sum(&s, 1).cast::<f64>().to_vec();
    for i in 0..d[0] {
        for k in 0..d[2] {
            let want: f64 = (0..d[1]).map(|j| bytes[i + d[0] * (j + d[1] * k)] as f64).sum();
            assert_eq!(col[i + d[0] * k], want, "sum along 1 at ({i}, {k})");
        }
    }
    // the product of bytes, the largest byte, and a scan of bytes
    let m = max(&s, 0).cast::<u8>().to_vec();
    let acc = accum(&s, 0).cast::<f64>().to_vec();
    for c in 0..d[1] * d[2] {
        let run = &bytes[c * d[0]..(c + 1) * d[0]];
        assert_eq!(m[c], (*run.iter().max().unwrap() != 0) as u8, "max col {c}");
        let mut t = 0.0;
        for (i, &v) in run.iter().enumerate() {
            t += v as f64;
            assert_eq!(acc[c * d[0] + i], t, "accum col {c} at {i}");
        }
    }
}

#[test]
fn bool_arrays_from_the_host_and_casts_stay_zero_or_one() {
    let v = [true, false, true, true, false];
    let a = Array::new(&v, dim4!(5));
    assert_eq!(a.to_vec(), v);
    assert_eq!(a.cast::<i32>().to_vec(), vec![1, 0, 1, 1, 0]);
    let x = Array::new(&[0.0f32, 2.5, -3.0, f32::NAN, 0.0], dim4!(5));
    assert_eq!(x.cast::<bool>().cast::<u8>().to_vec(), vec![0, 1, 1, 1, 0]);
    let e: Array<bool> = Array::new_empty(dim4!(0));
    assert!(e.to_vec().is_empty());
    let empty_conv = convolve2(
        &Array::<bool>::new_empty(dim4!(0, 3)),
        &life_kernel(),
        ConvMode::DEFAULT,
        ConvDomain::SPATIAL,
    );
    assert_eq!(empty_conv.elements(), 0);
}
