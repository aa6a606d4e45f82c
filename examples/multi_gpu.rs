//! The code of the book's "Several GPUs" chapter: arrays on every device, copies between them,
//! collectives, and an array sharded over every device. It uses every device the machine has
//! (one on the CPU, one per GPU) and checks every result, so running it verifies the chapter
//! on any machine.

use emberfire::collective::{Communicator, ReduceOp, UniqueId};
use emberfire::*;

fn main() {
    // ANCHOR: devices
    let devices: Vec<i32> = (0..device_count()).collect();
    println!("{} device(s)", devices.len());
    // Arrays are created on the thread's active device...
    set_device(*devices.last().unwrap());
    let a = range::<f32>(dim4!(8), 0) * 0.5f32;
    assert_eq!(a.get_device_id(), *devices.last().unwrap());
    // ...and operations run where their operands live.
    let b = sin(&a) + 1.0f32;
    assert_eq!(b.get_device_id(), a.get_device_id());
    // `to_device` copies an array to another device (peer to peer where the GPUs can).
    set_device(0);
    let on_first = b.to_device(0);
    assert_eq!(on_first.get_device_id(), 0);
    assert_eq!(on_first.to_vec(), b.to_vec());
    // ANCHOR_END: devices

    // ANCHOR: collectives
    // One rank per device, all in this process.
    let comm = Communicator::new(&devices).unwrap();
    let world = comm.world_size();
    // Rank r holds [r, r, r, r] on its device.
    let parts: Vec<Array<f32>> = comm
        .ranks()
        .iter()
        .zip(comm.devices())
        .map(|(&r, d)| constant(r as f32, dim4!(4)).to_device(d))
        .collect();
    let summed = comm.all_reduce(&parts, ReduceOp::Sum).unwrap();
    let total = (0..world).sum::<usize>() as f32;
    for (s, d) in summed.iter().zip(comm.devices()) {
        assert_eq!(s.get_device_id(), d);
        assert_eq!(s.to_vec(), vec![total; 4]);
    }
    // Every rank's array, stacked along a new dimension: 4 x world on every rank.
    let gathered = comm.all_gather(&parts).unwrap();
    assert_eq!(gathered[0].dims(), dim4!(4, world));
    // ANCHOR_END: collectives

    // ANCHOR: processes
    // Across processes (or machines): rank 0 makes an id and sends its 128 bytes to the
    // others, which each join with their own rank. Here, threads stand in for the processes.
    if get_active_backend() == Backend::CUDA {
        let id = UniqueId::new().unwrap();
        let bytes: [u8; 128] = *id.as_bytes(); // what travels between processes
        let sums: Vec<Vec<f64>> = std::thread::scope(|s| {
            let ranks: Vec<_> = (0..world)
                .map(|rank| {
                    s.spawn(move || {
                        set_device(rank as i32);
                        let id = UniqueId::from_bytes(bytes);
                        let comm = Communicator::from_unique_id(&id, rank, world).unwrap();
                        let x = constant(1.0f64, dim4!(3));
                        comm.all_reduce(&[x], ReduceOp::Sum).unwrap()[0].to_vec()
                    })
                })
                .collect();
            ranks.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert!(sums.iter().all(|s| s == &vec![world as f64; 3]));
    }
    // ANCHOR_END: processes

    // ANCHOR: sharded
    // A million elements, split over every device along dimension 0.
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let sx = ShardedArray::from_host(&x, dim4!(n), &devices, 0);
    let sy = ShardedArray::from_host(&y, dim4!(n), &devices, 0);
    // One fused kernel per shard, all devices at once.
    let z = sx.zip_with(&sy, |a, b| sin(a) * cos(b) + a * b - 0.5f32);
    // Reduced where each shard lives, then one all-reduce: every device holds the total.
    let total = z.sum(0);
    assert_eq!(total.sharding(), Sharding::Replicated);
    let want: f64 = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| (a as f64).sin() * (b as f64).cos() + a as f64 * b as f64 - 0.5)
        .sum();
    let got = total.to_vec()[0] as f64;
    assert!((got - want).abs() <= 1e-4 * want.abs(), "{got} vs {want}");
    // The whole array back on one device.
    let whole = z.gather(0);
    assert_eq!(whole.elements(), n);
    // ANCHOR_END: sharded

    // ANCHOR: matmul
    // A product with the left operand split by rows and the right one on every device.
    let (m, k) = (1000, 64);
    let w: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 13) as f32 * 0.1).collect();
    let v: Vec<f32> = (0..k).map(|i| i as f32).collect();
    let rows = ShardedArray::from_host(&w, dim4!(m, k), &devices, 0);
    let vector = ShardedArray::replicate(&Array::new(&v, dim4!(k, 1)), &devices);
    let product = rows.matmul(&vector); // m x 1, split by rows
    let got = product.to_vec();
    for i in [0, 499, 999] {
        let want: f32 = (0..k).map(|p| w[p * m + i] * v[p]).sum();
        assert!((got[i] - want).abs() <= 1e-3 * want.abs().max(1.0));
    }
    // ANCHOR_END: matmul
    println!("every result checked");
}
