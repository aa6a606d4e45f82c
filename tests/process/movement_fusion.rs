//! What data movement costs, observed through the memory and kernel counters: views allocate
//! nothing, `tile`, `shift` and `pad` are read inside the consumer's single kernel without a
//! buffer of their own, and their kernels are keyed by structure, not by tile counts or shift
//! amounts. The tests of this file run one at a time, as every test of this binary does
//! (`serial`): they read global counters.

use std::sync::MutexGuard;

use emberfire::*;

/// The binary's `serial` lock, which every test of it takes.
fn serial() -> MutexGuard<'static, ()> {
    crate::serial()
}

/// Live buffers on the active device.
fn buffers() -> usize {
    device_mem_info().1
}

/// Kernels loaded so far (compiled or read from the disk cache); a kernel used before in this
/// process is a memory hit and does not count.
fn kernels_loaded() -> u64 {
    let s = jit_stats();
    s.compiles + s.disk_hits
}

/// 1 on CUDA, where each new structure loads one kernel; 0 on the CPU, which generates none.
fn per_new_structure() -> u64 {
    (get_active_backend() == Backend::CUDA) as u64
}

#[test]
fn views_allocate_nothing() {
    let _turn = serial();
    let a = Array::new(&[1u32, 2, 3, 4, 5, 6], dim4!(2, 3));
    a.eval();
    let before = buffers();
    let views = [
        moddims(&a, dim4!(3, 2)),
        flat(&a),
        flip(&a, 1),
        reorder_v2(&a, 1, 0, None),
        tile(&moddims(&a, dim4!(1, 6)), dim4!(4)), // along a dimension of size 1: stride 0
        transpose(&flat(&a), false),               // a vector's transpose
    ];
    for v in &views {
        v.eval();
    }
    assert_eq!(buffers(), before, "a view allocated memory");
    assert_eq!(views[2].to_vec(), vec![5, 6, 3, 4, 1, 2]);
    let tiled: Vec<u32> = (0..24).map(|i| [1, 2, 3, 4, 5, 6][i / 4]).collect();
    assert_eq!(views[4].to_vec(), tiled);
}

#[test]
fn tile_shift_and_pad_are_read_inside_one_kernel() {
    let _turn = serial();
    // a structure used nowhere else in this process: u16 inputs, a multiply and a subtract
    let a = Array::new(&[1u16, 2, 3, 4, 5, 6], dim4!(2, 3));
    let b = Array::new(&(0..36).map(|x| x as u16).collect::<Vec<_>>(), dim4!(6, 6));
    let t = tile(&a, dim4!(3, 2));
    let (buf0, k0) = (buffers(), kernels_loaded());
    let r = &t * &b - 1u16;
    r.eval();
    assert_eq!(buffers(), buf0 + 1, "only the result was allocated: the tile was not stored");
    assert_eq!(kernels_loaded(), k0 + per_new_structure(), "one kernel for the whole tree");
    let want: Vec<u16> = (0..36)
        .map(|i| {
            ([1u16, 2, 3, 4, 5, 6][(i % 6) % 2 + 2 * ((i / 6) % 3)] * i as u16).wrapping_sub(1)
        })
        .collect();
    assert_eq!(r.to_vec(), want);

    // other tile counts and shift amounts: the same kernel (sizes and offsets are arguments)
    let k1 = kernels_loaded();
    let a2 = Array::new(&[7u16, 8, 9], dim4!(3));
    let b2 = Array::new(&(0..18).map(|x| x as u16).collect::<Vec<_>>(), dim4!(3, 6));
    let r2 = &shift(&tile(&a2, dim4!(1, 6)), &[1, 0, 0, 0]) * &b2 - 1u16;
    // a tile along a dimension of size 1 is a stride-0 view, so this is another structure;
    // its first use may load one kernel, and the second shape below reuses it
    r2.eval();
    let k2 = kernels_loaded();
    assert!(k2 - k1 <= per_new_structure());
    let r3 = &shift(&tile(&a2, dim4!(1, 6)), &[2, 0, 0, 0]) * &b2 - 1u16;
    r3.eval();
    assert_eq!(kernels_loaded(), k2, "a different shift compiled a new kernel");
    assert_eq!(
        r3.to_vec(),
        (0..18).map(|i| ([8u16, 9, 7][i % 3] * i as u16).wrapping_sub(1)).collect::<Vec<_>>()
    );

    let t4 = tile(&a, dim4!(2, 5)); // other counts than above, same rules
    let b4 = Array::new(&(0..60).map(|x| x as u16).collect::<Vec<_>>(), dim4!(4, 15));
    let k3 = kernels_loaded();
    let r4 = &t4 * &b4 - 1u16;
    r4.eval();
    assert_eq!(kernels_loaded(), k3, "other tile counts compiled a new kernel");

    // a zero-padded input feeding arithmetic: one result buffer, nothing else
    let (buf1, _) = (buffers(), kernels_loaded());
    let p = pad(&a, Dim4::new(&[1, 0, 0, 0]), Dim4::new(&[1, 1, 0, 0]), BorderType::ZERO);
    let q = &p + &p;
    q.eval();
    assert_eq!(buffers(), buf1 + 1);
    assert_eq!(q.to_vec(), vec![0, 2, 4, 0, 0, 6, 8, 0, 0, 10, 12, 0, 0, 0, 0, 0]);
}

#[test]
fn moddims_of_a_lazy_tree_is_computed_once_in_its_consumer() {
    let _turn = serial();
    let a = Array::new(&[1i32, 2, 3, 4, 5, 6], dim4!(2, 3));
    let b = Array::new(&[6i32, 5, 4, 3, 2, 1], dim4!(3, 2));
    let tree = &a * 3i32 + 1i32;
    let before = buffers();
    let r = moddims(&tree, dim4!(3, 2)) - &b;
    r.eval();
    assert_eq!(buffers(), before + 1, "the reshaped tree was not stored");
    assert_eq!(r.to_vec(), vec![-2, 2, 6, 10, 14, 18]);
}

#[test]
fn transpose_and_join_allocate_only_their_result() {
    let _turn = serial();
    let a = Array::new(&(0..64 * 48).map(|x| x as f32).collect::<Vec<_>>(), dim4!(64, 48));
    let b = Array::new(&(0..64 * 16).map(|x| -(x as f32)).collect::<Vec<_>>(), dim4!(64, 16));
    a.eval();
    b.eval();
    let before = buffers();
    let t = transpose(&a, false);
    let j = join(1, &a, &b);
    t.eval();
    j.eval();
    assert_eq!(buffers(), before + 2);
    let tv = t.to_vec();
    assert_eq!(tv[5 + 48 * 7], (7 + 64 * 5) as f32);
    let jv = j.to_vec();
    assert_eq!(jv[64 * 48 + 3], -3.0);
}
