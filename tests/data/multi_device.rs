//! Several devices: arrays on any device, copies between devices, collectives and sharded
//! arrays.
//!
//! Every test runs on every device the backend has: on the CPU (one device) and on a machine
//! with one GPU the communicators have one rank and copies stay on the device; on a machine
//! with several GPUs the same tests move arrays between all of them and combine across all of
//! them. Sharded arrays are also tested with several shards on one device (the only way the
//! CPU holds several), which combines partial results by copies instead of NCCL. References
//! are computed on the host from the tests' own inputs.

use crate::common;

use common::{close, Elem, Tol, V};
use emberfire::collective::{Communicator, ReduceOp, UniqueId};
use emberfire::*;

fn all_devices() -> Vec<i32> {
    (0..device_count()).collect()
}

/// Device lists to shard over: every device, and several shards on one device.
fn shard_layouts() -> Vec<Vec<i32>> {
    let mut l = vec![all_devices(), vec![0, 0, 0]];
    if device_count() > 1 {
        l.push(all_devices().into_iter().rev().collect());
    }
    l
}

/// A small non-negative integer for element `i` of rank `r`, exact in every type.
fn k(r: usize, i: usize) -> i128 {
    ((r * 7 + i * 3) % 5) as i128
}

fn rank_values<T: Elem>(r: usize, n: usize) -> Vec<T> {
    (0..n).map(|i| T::from_v(V::I(k(r, i)))).collect()
}

/// `values` as an array on `device`.
fn on<T: Elem>(values: &[T], dims: Dim4, device: i32) -> Array<T> {
    let a = Array::new(values, dims).to_device(device);
    assert_eq!(a.get_device_id(), device);
    a
}

fn assert_values<T: Elem>(got: &Array<T>, want: &[V], what: &str) {
    let g = got.to_vec();
    assert_eq!(g.len(), want.len(), "{what}: element count");
    for (i, (x, w)) in g.iter().zip(want).enumerate() {
        assert!(close(*x, *w, Tol::x(4.0)), "{what}: element {i} is {x:?}, want {w:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Arrays on any device, and copies between them

fn copies_to_every_device<T: Elem>() {
    let mut r = <common::Rng64 as common::SeedableRng>::seed_from_u64(7);
    let values: Vec<T> = (0..37).map(|_| T::small(&mut r)).collect();
    let a = Array::new(&values, dim4!(37));
    for d in all_devices() {
        let b = a.to_device(d);
        assert_eq!(b.get_device_id(), d, "{}", T::TY.name);
        assert_eq!(b.to_vec(), values, "{} to device {d}", T::TY.name);
        for back in all_devices() {
            assert_eq!(b.to_device(back).to_vec(), values, "{} {d} -> {back}", T::TY.name);
        }
    }
}

#[test]
fn to_device_copies_every_type_to_every_device_and_back() {
    copies_to_every_device::<f32>();
    copies_to_every_device::<f64>();
    copies_to_every_device::<c32>();
    copies_to_every_device::<c64>();
    copies_to_every_device::<f16>();
    copies_to_every_device::<bool>();
    copies_to_every_device::<u8>();
    copies_to_every_device::<i16>();
    copies_to_every_device::<u16>();
    copies_to_every_device::<i32>();
    copies_to_every_device::<u32>();
    copies_to_every_device::<i64>();
    copies_to_every_device::<u64>();
}

#[test]
fn to_device_copies_views_lazy_trees_and_empty_arrays() {
    let host: Vec<f32> = (0..60).map(|i| i as f32 * 0.5).collect();
    let a = Array::new(&host, dim4!(6, 10));
    let view = index(&a, &[Seq::new(1.0, 4.0, 1.0), Seq::new(0.0, 9.0, 3.0)]);
    let want_view: Vec<f32> =
        [0, 3, 6, 9].iter().flat_map(|&c| (1..=4).map(move |r| (c * 6 + r) as f32 * 0.5)).collect();
    let lazy = &a * 2.0f32 + 1.0f32;
    let want_lazy: Vec<f32> = host.iter().map(|x| x * 2.0 + 1.0).collect();
    let empty = Array::<u16>::new_empty(dim4!(0, 3));
    for d in all_devices() {
        let v = view.to_device(d);
        assert_eq!((v.dims(), v.to_vec()), (dim4!(4, 4), want_view.clone()), "view to {d}");
        assert_eq!(lazy.to_device(d).to_vec(), want_lazy, "lazy tree to {d}");
        let e = empty.to_device(d);
        assert_eq!((e.dims(), e.elements(), e.get_device_id()), (dim4!(0, 3), 0, d));
    }
}

#[test]
fn a_copy_follows_its_producer_and_the_source_is_not_reused_too_early() {
    // A large lazy tree is copied at once, its source dropped, and new work queued on the
    // source's device that may reuse the memory: the copy must hold the tree's values.
    let n = 1 << 22;
    for from in all_devices() {
        for to in all_devices() {
            set_device(from);
            let x = range::<f32>(dim4!(n), 0);
            let y = sin(&x) * 3.0f32 + &x;
            let copied = y.to_device(to);
            drop(y);
            let churn = constant(-1.0f32, dim4!(n)) + 0.0f32;
            churn.eval();
            let got = copied.to_vec();
            for i in [0usize, 1, 12_345, n - 1] {
                let w = (i as f32).sin() * 3.0 + i as f32;
                assert!((got[i] - w).abs() <= 1e-3 * w.abs().max(1.0), "{from}->{to} [{i}]");
            }
        }
    }
    set_device(0);
}

#[test]
fn to_device_refuses_a_device_that_does_not_exist() {
    let a = Array::new(&[1.0f32], dim4!(1));
    let n = device_count();
    assert_eq!(a.try_to_device(n).unwrap_err(), Error::InvalidDevice { requested: n, count: n });
    assert!(a.try_to_device(-1).is_err());
    assert_eq!(a.to_vec(), vec![1.0]);
}

#[test]
fn every_device_runs_fused_work_reductions_products_and_sorts_where_its_arrays_live() {
    let host: Vec<f32> = (0..48).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
    for d in all_devices() {
        set_device(d);
        let a = Array::new(&host, dim4!(8, 6));
        let fused = abs(&a) * 2.0f32 - 1.0f32;
        assert_eq!(fused.get_device_id(), d);
        let want: Vec<f32> = host.iter().map(|x| x.abs() * 2.0 - 1.0).collect();
        assert_eq!(fused.to_vec(), want, "device {d}");
        let s = sum(&a, 0);
        let want_s: Vec<f32> = (0..6).map(|c| host[c * 8..c * 8 + 8].iter().sum()).collect();
        assert_eq!((s.get_device_id(), s.to_vec()), (d, want_s));
        let p = matmul(&transpose(&a, false), &a, MatProp::NONE, MatProp::NONE);
        let mut want_p = vec![0f64; 36];
        for i in 0..6 {
            for j in 0..6 {
                want_p[j * 6 + i] =
                    (0..8).map(|r| host[i * 8 + r] as f64 * host[j * 8 + r] as f64).sum();
            }
        }
        for (g, w) in p.to_vec().iter().zip(&want_p) {
            assert!((*g as f64 - w).abs() <= 1e-4 * w.abs().max(1.0), "device {d}: {g} vs {w}");
        }
        let sorted = sort(&flat(&a), 0, true);
        let mut want_sorted = host.clone();
        want_sorted.sort_by(f32::total_cmp);
        assert_eq!((sorted.get_device_id(), sorted.to_vec()), (d, want_sorted));
    }
    set_device(0);
}

#[test]
fn arrays_of_two_devices_never_mix_silently() {
    if device_count() < 2 {
        // One device: nothing to mix; the CPU/CUDA mix is covered by the backend tests.
        let a = Array::new(&[1i32, 2], dim4!(2));
        assert_eq!((&a + &a).to_vec(), vec![2, 4]);
        return;
    }
    set_device(0);
    let a = Array::new(&[1.0f32, 2.0], dim4!(2));
    let b = a.to_device(1);
    let err = std::panic::catch_unwind(|| (&a + &b).to_vec()).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("different backends or devices"), "{msg}");
    assert_eq!((&a + &b.to_device(0)).to_vec(), vec![2.0, 4.0]);
}

// ---------------------------------------------------------------------------------------------
// Collectives

/// One array per rank of `comm`, rank `r` holding `rank_values(r)`, of shape `dims`.
fn per_rank<T: Elem>(comm: &Communicator, dims: Dim4) -> Vec<Array<T>> {
    let n = dims.elements() as usize;
    comm.ranks()
        .iter()
        .zip(comm.devices())
        .map(|(&r, d)| on(&rank_values::<T>(r, n), dims, d))
        .collect()
}

fn reduce_ref(op: ReduceOp, world: usize, i: usize, float: bool) -> V {
    let ks: Vec<i128> = (0..world).map(|r| k(r, i)).collect();
    match op {
        ReduceOp::Sum => V::I(ks.iter().sum()),
        ReduceOp::Prod => V::I(ks.iter().product()),
        ReduceOp::Min => V::I(*ks.iter().min().unwrap()),
        ReduceOp::Max => V::I(*ks.iter().max().unwrap()),
        ReduceOp::Avg if float => V::F(ks.iter().sum::<i128>() as f64 / world as f64),
        ReduceOp::Avg => V::I(ks.iter().sum::<i128>() / world as i128),
    }
}

fn all_reduce_case<T: Elem>(comm: &Communicator, ops: &[ReduceOp]) {
    let w = comm.world_size();
    let dims = dim4!(3, 2 * w);
    let n = dims.elements() as usize;
    let float = matches!(T::TY.class, common::Class::Float | common::Class::Complex);
    for &op in ops {
        let out = comm.all_reduce(&per_rank::<T>(comm, dims), op).unwrap();
        let want: Vec<V> = (0..n).map(|i| reduce_ref(op, w, i, float)).collect();
        for (a, d) in out.iter().zip(comm.devices()) {
            assert_eq!((a.dims(), a.get_device_id()), (dims, d));
            assert_values(a, &want, &format!("all_reduce {op:?} of {}", T::TY.name));
        }
        for root in 0..w {
            let got = comm.reduce(&per_rank::<T>(comm, dims), op, root).unwrap();
            assert_eq!(got.is_some(), comm.ranks().contains(&root));
            if let Some(a) = got {
                assert_values(&a, &want, &format!("reduce {op:?} of {} to {root}", T::TY.name));
            }
        }
        let parts = comm.reduce_scatter(&per_rank::<T>(comm, dims), op).unwrap();
        for (a, &r) in parts.iter().zip(&comm.ranks()) {
            assert_eq!(a.dims(), dim4!(3, 2));
            assert_values(
                a,
                &want[r * 6..r * 6 + 6],
                &format!("reduce_scatter {op:?} of {}", T::TY.name),
            );
        }
    }
}

#[test]
fn collectives_reduce_every_type_with_every_operation_over_every_device() {
    use ReduceOp::*;
    let comm = Communicator::new(&all_devices()).unwrap();
    assert_eq!(comm.world_size(), all_devices().len());
    all_reduce_case::<f32>(&comm, &[Sum, Prod, Min, Max, Avg]);
    all_reduce_case::<f64>(&comm, &[Sum, Prod, Min, Max, Avg]);
    all_reduce_case::<f16>(&comm, &[Sum, Max]);
    all_reduce_case::<i32>(&comm, &[Sum, Prod, Min, Max]);
    all_reduce_case::<u32>(&comm, &[Sum, Min, Max]);
    all_reduce_case::<i64>(&comm, &[Sum, Prod, Min, Max]);
    all_reduce_case::<u64>(&comm, &[Sum, Max]);
    all_reduce_case::<u8>(&comm, &[Sum, Min, Max]);
    all_reduce_case::<c32>(&comm, &[Sum, Avg]);
    all_reduce_case::<c64>(&comm, &[Sum]);
    all_reduce_case::<bool>(&comm, &[Min, Max]);
}

fn moves_case<T: Elem>(comm: &Communicator) {
    let w = comm.world_size();
    let dims = dim4!(4, 3);
    let n = 12;
    for root in 0..w {
        let out = comm.broadcast(&per_rank::<T>(comm, dims), root).unwrap();
        let want: Vec<V> = (0..n).map(|i| T::from_v(V::I(k(root, i))).to_v()).collect();
        for a in &out {
            assert_values(a, &want, &format!("broadcast of {} from {root}", T::TY.name));
        }
    }
    let gathered = comm.all_gather(&per_rank::<T>(comm, dims)).unwrap();
    let want: Vec<V> =
        (0..w).flat_map(|r| (0..n).map(move |i| T::from_v(V::I(k(r, i))).to_v())).collect();
    for a in &gathered {
        assert_eq!(a.dims(), dim4!(4, 3, w));
        assert_values(a, &want, &format!("all_gather of {}", T::TY.name));
    }
    // A ring: every rank sends to the next and receives from the one before.
    let sent = per_rank::<T>(comm, dims);
    let received = comm
        .group(|| {
            let ranks = comm.ranks();
            for (a, &r) in sent.iter().zip(&ranks) {
                comm.send(a, (r + 1) % w).unwrap();
            }
            ranks
                .iter()
                .map(|&r| comm.recv::<T>(r, dims, (r + w - 1) % w).unwrap())
                .collect::<Vec<_>>()
        })
        .unwrap();
    for (a, &r) in received.iter().zip(&comm.ranks()) {
        let from = (r + w - 1) % w;
        let want: Vec<V> = (0..n).map(|i| T::from_v(V::I(k(from, i))).to_v()).collect();
        assert_values(a, &want, &format!("ring of {} into {r}", T::TY.name));
    }
}

#[test]
fn collectives_move_every_type_over_every_device() {
    let comm = Communicator::new(&all_devices()).unwrap();
    moves_case::<f32>(&comm);
    moves_case::<f64>(&comm);
    moves_case::<c32>(&comm);
    moves_case::<c64>(&comm);
    moves_case::<f16>(&comm);
    moves_case::<bool>(&comm);
    moves_case::<u8>(&comm);
    moves_case::<i16>(&comm);
    moves_case::<u16>(&comm);
    moves_case::<i32>(&comm);
    moves_case::<u32>(&comm);
    moves_case::<i64>(&comm);
    moves_case::<u64>(&comm);
}

#[test]
fn collectives_of_empty_and_one_element_arrays() {
    let comm = Communicator::new(&all_devices()).unwrap();
    let empty: Vec<Array<f32>> =
        comm.devices().iter().map(|&d| Array::<f32>::new_empty(dim4!(0)).to_device(d)).collect();
    let out = comm.all_reduce(&empty, ReduceOp::Sum).unwrap();
    assert!(out.iter().all(|a| a.elements() == 0));
    let one = per_rank::<i64>(&comm, dim4!(1));
    let out = comm.all_reduce(&one, ReduceOp::Sum).unwrap();
    let want = (0..comm.world_size()).map(|r| k(r, 0) as i64).sum::<i64>();
    assert!(out.iter().all(|a| a.to_vec() == vec![want]));
}

#[test]
fn ranks_in_threads_meet_through_a_unique_id() {
    if get_active_backend() == Backend::CPU {
        assert!(UniqueId::new().is_err());
        let id = UniqueId::from_bytes([0; 128]);
        assert!(Communicator::from_unique_id(&id, 0, 1).is_err());
        return;
    }
    let id = UniqueId::new().unwrap();
    let world = device_count() as usize;
    let results: Vec<Vec<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..world)
            .map(|rank| {
                s.spawn(move || {
                    set_device(rank as i32);
                    let comm = Communicator::from_unique_id(&id, rank, world).unwrap();
                    assert_eq!((comm.ranks(), comm.world_size()), (vec![rank], world));
                    let x = Array::new(&rank_values::<f64>(rank, 5), dim4!(5));
                    comm.all_reduce(&[x], ReduceOp::Sum).unwrap()[0].to_vec()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let want: Vec<f64> = (0..5).map(|i| (0..world).map(|r| k(r, i) as f64).sum()).collect();
    for r in results {
        assert_eq!(r, want);
    }
}

/// The environment through which `ranks_in_processes_meet_through_a_unique_id` hands a child
/// process its part.
const CHILD_ID: &str = "EMBERFIRE_TEST_NCCL_ID";
const CHILD_RANK: &str = "EMBERFIRE_TEST_RANK";

#[test]
fn ranks_in_processes_meet_through_a_unique_id() {
    if get_active_backend() == Backend::CPU {
        return; // no NCCL on the CPU: `ranks_in_threads_meet_through_a_unique_id` checks the error
    }
    let id = UniqueId::new().unwrap();
    let hex: String = id.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let world = device_count();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..world)
        .map(|rank| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "multi_device::one_rank_of_a_group_spanning_processes",
                    "--include-ignored",
                    "--nocapture",
                ])
                .env(CHILD_ID, &hex)
                .env(CHILD_RANK, rank.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (rank, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "rank {rank}'s process failed: {text}");
        assert!(text.contains(&format!("rank {rank} of {world}: all-reduce checked")), "{text}");
    }
}

#[test]
#[ignore = "one rank of `ranks_in_processes_meet_through_a_unique_id`, which runs it in a process of its own"]
fn one_rank_of_a_group_spanning_processes() {
    let (Ok(hex), Ok(rank)) = (std::env::var(CHILD_ID), std::env::var(CHILD_RANK)) else {
        return; // run directly rather than by the test above: nothing to join
    };
    let mut bytes = [0u8; 128];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    let rank: usize = rank.parse().unwrap();
    let world = device_count() as usize;
    set_device(rank as i32);
    let comm = Communicator::from_unique_id(&UniqueId::from_bytes(bytes), rank, world).unwrap();
    let x = Array::new(&rank_values::<i64>(rank, 6), dim4!(6));
    let got = comm.all_reduce(&[x], ReduceOp::Sum).unwrap()[0].to_vec();
    let want: Vec<i64> = (0..6).map(|i| (0..world).map(|r| k(r, i) as i64).sum()).collect();
    assert_eq!(got, want);
    println!("rank {rank} of {world}: all-reduce checked");
}

fn panic_text(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(f).unwrap_err();
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The text of a collective's error; panics if the call did not fail that way.
fn collective_error<T: std::fmt::Debug>(r: emberfire::error::Result<T>) -> String {
    match r {
        Err(Error::Collective(m)) => m,
        other => panic!("expected Error::Collective, got {other:?}"),
    }
}

#[test]
fn collectives_refuse_bad_arguments_with_errors_that_name_them() {
    let comm = Communicator::new(&all_devices()).unwrap();
    let w = comm.world_size();
    let m = collective_error(comm.all_reduce::<f32>(&[], ReduceOp::Sum));
    assert!(m.contains("all_reduce") && m.contains("one array per rank"), "{m}");
    let m = collective_error(comm.all_reduce(&per_rank::<i16>(&comm, dim4!(2)), ReduceOp::Sum));
    assert!(m.contains("all_reduce") && m.contains("S16"), "{m}");
    let m = collective_error(comm.all_reduce(&per_rank::<c32>(&comm, dim4!(2)), ReduceOp::Max));
    assert!(m.contains("Max") && m.contains("complex"), "{m}");
    let m = collective_error(comm.broadcast(&per_rank::<f32>(&comm, dim4!(2)), w));
    assert!(m.contains("broadcast") && m.contains("`root`"), "{m}");
    let m = collective_error(comm.send(&Array::new(&[1.0f32], dim4!(1)), w));
    assert!(m.contains("send") && m.contains("`peer`"), "{m}");
    let m = collective_error(comm.recv::<f32>(w, dim4!(1), 0));
    assert!(m.contains("recv") && m.contains("`rank`"), "{m}");
    if w > 1 {
        let uneven = per_rank::<f32>(&comm, dim4!(2 * w + 1));
        let m = collective_error(comm.all_to_all(&uneven));
        assert!(m.contains("all_to_all") && m.contains("equal parts"), "{m}");
        let m = collective_error(comm.reduce_scatter(&uneven, ReduceOp::Sum));
        assert!(m.contains("equal parts"), "{m}");
        let mut arrays = per_rank::<f32>(&comm, dim4!(2));
        arrays.swap(0, 1);
        let m = collective_error(comm.all_reduce(&arrays, ReduceOp::Sum));
        assert!(m.contains("not on the rank's device"), "{m}");
    }
    if get_active_backend() == Backend::CPU {
        // Nothing sent: the CPU rank's mailbox is empty; a receive of another size keeps
        // what was sent for the right receive.
        assert!(collective_error(comm.recv::<f32>(0, dim4!(1), 0)).contains("nothing was sent"));
        comm.send(&Array::new(&[1.0f32, 2.0], dim4!(2)), 0).unwrap();
        let m = collective_error(comm.recv::<f32>(0, dim4!(3), 0));
        assert!(m.contains("sent 2"), "{m}");
        assert_eq!(comm.recv::<f32>(0, dim4!(2), 0).unwrap().to_vec(), vec![1.0, 2.0]);
    }
    assert!(collective_error(Communicator::new(&[0, 0])).contains("listed twice"));
    assert!(collective_error(Communicator::new(&[])).contains("empty"));
    assert_eq!(
        Communicator::new(&[device_count()]).unwrap_err(),
        Error::InvalidDevice { requested: device_count(), count: device_count() }
    );
    let id = UniqueId::from_bytes([0; 128]);
    assert!(collective_error(Communicator::from_unique_id(&id, 2, 2)).contains("not below"));
}

#[test]
fn all_to_all_gives_each_rank_its_part_of_every_rank() {
    let comm = Communicator::new(&all_devices()).unwrap();
    let w = comm.world_size();
    // Rank r's array is 3 x (2w): column block s (two columns) goes to rank s.
    let dims = dim4!(3, 2 * w as u64);
    let n = 6 * w;
    let value = |r: usize, i: usize| (r * 1000 + i) as f64;
    let arrays: Vec<Array<f64>> = comm
        .devices()
        .iter()
        .zip(comm.ranks())
        .map(|(&d, r)| on(&(0..n).map(|i| value(r, i)).collect::<Vec<_>>(), dims, d))
        .collect();
    let out = comm.all_to_all(&arrays).unwrap();
    let part = n / w;
    for (got, r) in out.iter().zip(comm.ranks()) {
        assert_eq!(got.dims(), dims);
        let want: Vec<f64> =
            (0..w).flat_map(|s| (0..part).map(move |i| value(s, r * part + i))).collect();
        assert_eq!(got.to_vec(), want, "rank {r}");
    }
    // Empty arrays go through too, and the barrier returns once every rank is there.
    let empty: Vec<Array<u8>> = per_rank::<u8>(&comm, dim4!(0));
    assert!(comm.all_to_all(&empty).unwrap().iter().all(|a| a.elements() == 0));
    comm.barrier().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Sharded arrays

fn host_dims(d: [u64; 4]) -> Dim4 {
    Dim4::new(&d)
}

#[test]
fn sharded_arrays_split_along_every_dimension_and_gather_back() {
    let d = [5u64, 4, 3, 2];
    let host: Vec<i32> = (0..120).map(|i| i * 3 - 50).collect();
    let whole = Array::new(&host, host_dims(d));
    for devices in shard_layouts() {
        for dim in 0..4 {
            let s = ShardedArray::from_host(&host, host_dims(d), &devices, dim);
            assert_eq!(
                (s.dims(), s.sharding(), s.devices()),
                (host_dims(d), Sharding::Split(dim), devices.clone())
            );
            let extents: Vec<u64> = s.shards().iter().map(|a| a.dims()[dim]).collect();
            assert_eq!(extents.iter().sum::<u64>(), d[dim]);
            assert!(extents.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1), "{extents:?}");
            assert_eq!(s.to_vec(), host, "{devices:?} along {dim}");
            for target in all_devices() {
                let g = s.gather(target);
                assert_eq!(
                    (g.get_device_id(), g.dims(), g.to_vec()),
                    (target, host_dims(d), host.clone())
                );
            }
            let t = ShardedArray::from_array(&whole, &devices, dim);
            assert_eq!(t.to_vec(), host);
            for (a, b) in s.shards().iter().zip(t.shards()) {
                assert_eq!(
                    (a.dims(), a.get_device_id(), a.to_vec()),
                    (b.dims(), b.get_device_id(), b.to_vec())
                );
            }
        }
    }
}

#[test]
fn sharded_arrays_with_more_shards_than_elements_keep_empty_shards() {
    let devices = vec![0; 4];
    let s = ShardedArray::from_host(&[1.5f64, 2.5], dim4!(2), &devices, 0);
    assert_eq!(s.shards().iter().map(|a| a.elements()).collect::<Vec<_>>(), vec![1, 1, 0, 0]);
    assert_eq!(s.to_vec(), vec![1.5, 2.5]);
    assert_eq!(s.gather(0).to_vec(), vec![1.5, 2.5]);
    assert_eq!(s.map(|x| x * 2.0).sum(0).to_vec(), vec![8.0]);
    assert_eq!(s.max(0).to_vec(), vec![2.5]);
}

#[test]
fn sharded_element_wise_work_is_fused_per_shard_with_the_shards_device_active() {
    let n = 1001;
    let x: Vec<f32> = (0..n).map(|i| (i as f32) * 0.01 - 3.0).collect();
    let y: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    for devices in shard_layouts() {
        let sx = ShardedArray::from_host(&x, dim4!(n), &devices, 0);
        let sy = ShardedArray::from_host(&y, dim4!(n), &devices, 0);
        // constants created inside the closure live on the shard's device
        let chain = sx.zip_with(&sy, |a, b| sin(a) * cos(b) + a * b - constant(0.5f32, a.dims()));
        let got = chain.to_vec();
        for i in 0..n {
            let w = (x[i] as f64).sin() * (y[i] as f64).cos() + x[i] as f64 * y[i] as f64 - 0.5;
            assert!(
                (got[i] as f64 - w).abs() <= 1e-5 * w.abs().max(1.0),
                "{devices:?} [{i}]: {} vs {w}",
                got[i]
            );
        }
        assert_eq!(chain.devices(), devices);
        let casted = sx.map(|a| a.cast::<i32>());
        assert_eq!(casted.to_vec(), x.iter().map(|&v| v as i32).collect::<Vec<_>>());
    }
}

#[test]
fn sharded_reductions_along_and_across_the_split_match_the_host() {
    let d = [7u64, 6, 1, 1];
    let host: Vec<f64> = (0..42).map(|i| ((i * 11) % 17) as f64 * 0.25 - 2.0).collect();
    let col = |c: usize| &host[c * 7..c * 7 + 7];
    for devices in shard_layouts() {
        for split in 0..2 {
            let s = ShardedArray::from_host(&host, host_dims(d), &devices, split);
            // along dimension 0
            let sum0: Vec<f64> = (0..6).map(|c| col(c).iter().sum()).collect();
            let prod0: Vec<f64> = (0..6).map(|c| col(c).iter().product()).collect();
            let min0: Vec<f64> =
                (0..6).map(|c| col(c).iter().cloned().fold(f64::INFINITY, f64::min)).collect();
            let max0: Vec<f64> =
                (0..6).map(|c| col(c).iter().cloned().fold(f64::NEG_INFINITY, f64::max)).collect();
            // along dimension 1
            let sum1: Vec<f64> = (0..7).map(|r| (0..6).map(|c| host[c * 7 + r]).sum()).collect();
            let max1: Vec<f64> = (0..7)
                .map(|r| (0..6).map(|c| host[c * 7 + r]).fold(f64::NEG_INFINITY, f64::max))
                .collect();
            let mean0: Vec<f64> = sum0.iter().map(|v| v / 7.0).collect();
            let mean1: Vec<f64> = sum1.iter().map(|v| v / 6.0).collect();
            let cases: [(&str, ShardedArray<f64>, &Vec<f64>, usize); 8] = [
                ("mean0", s.mean(0), &mean0, 0),
                ("mean1", s.mean(1), &mean1, 1),
                ("sum0", s.sum(0), &sum0, 0),
                ("prod0", s.product(0), &prod0, 0),
                ("min0", s.min(0), &min0, 0),
                ("max0", s.max(0), &max0, 0),
                ("sum1", s.sum(1), &sum1, 1),
                ("max1", s.max(1), &max1, 1),
            ];
            for (what, got, want, dim) in cases {
                let layout =
                    if dim == split { Sharding::Replicated } else { Sharding::Split(split) };
                assert_eq!(got.sharding(), layout, "{what} split {split}");
                let g = got.to_vec();
                assert_eq!(g.len(), want.len(), "{what}");
                for (a, b) in g.iter().zip(want.iter()) {
                    assert!(
                        (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                        "{devices:?} split {split} {what}: {a} vs {b}"
                    );
                }
                if layout == Sharding::Replicated {
                    for shard in got.shards() {
                        assert_eq!(&shard.to_vec(), &g, "every replica holds the result");
                    }
                }
            }
        }
    }
}

#[test]
fn sharded_integer_sums_widen_like_sum() {
    let host: Vec<u8> = (0..300).map(|i| (i % 251) as u8).collect();
    for devices in shard_layouts() {
        let s = ShardedArray::from_host(&host, dim4!(300), &devices, 0);
        let total: u32 = host.iter().map(|&v| v as u32).sum();
        assert_eq!(s.sum(0).to_vec(), vec![total]);
        let s16 = ShardedArray::from_host(&[3i16, -9, 4, 12], dim4!(4), &devices, 0);
        assert_eq!(s16.min(0).to_vec(), vec![-9]);
        // A mean over more shards than elements: the empty shards add nothing.
        let few = ShardedArray::from_host(
            &[1i32, 2, 4],
            dim4!(3),
            &[devices.clone(), devices.clone()].concat(),
            0,
        );
        let m = few.mean(0).to_vec();
        assert!((m[0] - 7.0f32 / 3.0).abs() < 1e-6, "{m:?}");
    }
}

#[test]
fn sharded_operators_between_arrays_and_with_scalars_match_the_host() {
    let a: Vec<f32> = (0..20).map(|i| i as f32 * 0.25 - 1.0).collect();
    let b: Vec<f32> = (0..20).map(|i| 3.0 + (i % 7) as f32).collect();
    for devices in shard_layouts() {
        for split in 0..2 {
            let x = ShardedArray::from_host(&a, dim4!(4, 5), &devices, split);
            let y = ShardedArray::from_host(&b, dim4!(4, 5), &devices, split);
            let got = (&(&(&x * &y) - &(2.0f32 / &y)) + 0.5f32).to_vec();
            for i in 0..20 {
                let want = a[i] as f64 * b[i] as f64 - 2.0 / b[i] as f64 + 0.5;
                assert!(close(got[i], V::F(want), Tol::x(4.0)), "{devices:?} {split} {i}");
            }
        }
    }
}

fn host_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            c[j * m + i] = (0..k).map(|p| a[p * m + i] * b[j * k + p]).sum();
        }
    }
    c
}

#[test]
fn sharded_matrix_products_in_every_layout_match_the_host() {
    let (m, k, n) = (9usize, 5usize, 4usize);
    let a: Vec<f64> = (0..m * k).map(|i| ((i * 13) % 7) as f64 - 3.0).collect();
    let b: Vec<f64> = (0..k * n).map(|i| ((i * 5) % 11) as f64 * 0.5 - 2.0).collect();
    let want = host_matmul(&a, &b, m, k, n);
    let check = |got: &ShardedArray<f64>, layout: Sharding, what: &str| {
        assert_eq!((got.dims(), got.sharding()), (dim4!(m, n), layout), "{what}");
        for (g, w) in got.to_vec().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{what}: {g} vs {w}");
        }
    };
    let (ha, hb) = (Array::new(&a, dim4!(m, k)), Array::new(&b, dim4!(k, n)));
    for devices in shard_layouts() {
        let rows = ShardedArray::from_array(&ha, &devices, 0);
        let rep_b = ShardedArray::replicate(&hb, &devices);
        check(&rows.matmul(&rep_b), Sharding::Split(0), "rows x replicated");
        let rep_a = ShardedArray::replicate(&ha, &devices);
        let cols = ShardedArray::from_array(&hb, &devices, 1);
        check(&rep_a.matmul(&cols), Sharding::Split(1), "replicated x columns");
        let inner_a = ShardedArray::from_array(&ha, &devices, 1);
        let inner_b = ShardedArray::from_array(&hb, &devices, 0);
        check(&inner_a.matmul(&inner_b), Sharding::Replicated, "inner split");
    }
    let m = panic_text(|| {
        let x = ShardedArray::from_array(&ha, &[0, 0], 1);
        let _ = x.matmul(&ShardedArray::replicate(&hb, &[0, 0]));
    });
    assert!(m.contains("not available"), "{m}");
}

#[test]
fn sharded_maps_that_change_shapes_or_layouts_that_differ_are_refused() {
    let s = ShardedArray::from_host(&[1.0f32; 6], dim4!(6), &[0, 0], 0);
    let m = panic_text(|| {
        let _ = s.map(|a| sum(a, 0));
    });
    assert!(m.contains("map") && m.contains("element by element"), "{m}");
    let t = ShardedArray::from_host(&[1.0f32; 6], dim4!(6), &[0, 0, 0], 0);
    let m = panic_text(|| {
        let _ = s.zip_with(&t, |a, b| a + b);
    });
    assert!(m.contains("zip_with"), "{m}");
    let m = panic_text(|| {
        let _ = ShardedArray::from_host(&[1.0f32; 5], dim4!(6), &[0], 0);
    });
    assert!(m.contains("from_host") && m.contains("`values`"), "{m}");
    let m = panic_text(|| {
        let _ = ShardedArray::from_host(&[1.0f32; 6], dim4!(6), &[device_count()], 0);
    });
    assert!(m.contains("from_host") && m.contains("invalid device"), "{m}");
}
