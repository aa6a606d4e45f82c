//! The code of the book's "One process per GPU" section: each process of a group started by a
//! launcher (torchrun, mpirun, srun) joins one communicator, combines arrays with the other
//! processes and holds one shard of a sharded array. It checks every result.
//!
//! Run under a launcher, each process is one rank:
//!
//! ```text
//! torchrun --no-python --nproc-per-node 2 target/release/examples/one_process_per_gpu
//! mpirun -n 2 target/release/examples/one_process_per_gpu
//! ```
//!
//! Run directly (`cargo run --example one_process_per_gpu`), it is its own launcher: it starts
//! one copy of itself per device (one on the CPU) with torchrun's variables, on the loopback
//! address, and waits for them. `EMBERFIRE_ALLREDUCE_GIB=1` adds a timing of an all-reduce of
//! that many GiB of f32 per rank, with the bus bandwidth as NCCL's tests count it.

use std::sync::Arc;

use emberfire::collective::{Communicator, ProcessGroup, ReduceOp};
use emberfire::*;

fn main() {
    match ProcessGroup::from_env() {
        Ok(pg) => one_rank(pg),
        Err(_) => launch_one_process_per_device(),
    }
}

fn one_rank(pg: ProcessGroup) {
    // ANCHOR: rank
    // Every process: its rank and the group's size come from the launcher, its local rank
    // picks its device, and rank 0 hands out NCCL's id at MASTER_ADDR:MASTER_PORT.
    let comm = Communicator::join(&pg).unwrap();
    let (rank, world) = (pg.rank(), pg.world_size());
    assert_eq!(get_device(), pg.local_rank() as i32);

    // Collectives take this process's one array and return its result.
    let mine = range::<f32>(dim4!(4), 0) + (10 * rank) as f32;
    let total = comm.all_reduce(&[mine], ReduceOp::Sum).unwrap().remove(0);
    let want: Vec<f32> = (0..4).map(|i| (0..world).map(|r| (i + 10 * r) as f32).sum()).collect();
    assert_eq!(total.to_vec(), want);

    // A sharded array with one shard per process: rank r holds rows 2r and 2r + 1.
    let comm = Arc::new(comm);
    let rows = range::<f64>(dim4!(2, 3), 0) + (2 * rank) as f64;
    let x = ShardedArray::from_process_shard(rows, 0, &comm).unwrap();
    assert_eq!(x.dims(), dim4!(2 * world as u64, 3));
    let y = &(&x * 0.5f64) + 1.0f64; // element-wise, in each process
    let n = 2 * world;
    let mean = (0..n).map(|i| i as f64 * 0.5 + 1.0).sum::<f64>() / n as f64;
    let got = y.mean(0).to_vec(); // one all-reduce in the group
    assert!(got.iter().all(|m| (m - mean).abs() < 1e-12), "{got:?} vs {mean}");
    // ANCHOR_END: rank

    if let Ok(gib) = std::env::var("EMBERFIRE_ALLREDUCE_GIB") {
        time_all_reduce(&comm, gib.parse().expect("EMBERFIRE_ALLREDUCE_GIB: a number"));
    }
    comm.barrier().unwrap();
    println!("rank {rank} of {world} on device {}: results checked", get_device());
}

/// Times an all-reduce of `gib` GiB of f32 on every rank and prints, on rank 0, the best of
/// 20 runs and its bus bandwidth (`2 (n - 1) / n` times the bytes over the time).
fn time_all_reduce(comm: &Communicator, gib: f64) {
    let n = (gib * (1u64 << 30) as f64 / 4.0) as u64;
    let x = constant(1.0f32, dim4!(n));
    x.eval();
    let mut best = f64::INFINITY;
    for _ in 0..25 {
        comm.barrier().unwrap();
        let t = std::time::Instant::now();
        let out = comm.all_reduce(std::slice::from_ref(&x), ReduceOp::Sum).unwrap();
        out[0].eval();
        sync(get_device());
        best = best.min(t.elapsed().as_secs_f64());
    }
    let w = comm.world_size() as f64;
    let bus = 2.0 * (w - 1.0) / w * (n * 4) as f64 / best / 1e9;
    if comm.ranks()[0] == 0 {
        println!(
            "all-reduce of {gib} GiB f32 over {w} processes: {:.3} ms, bus {bus:.1} GB/s",
            best * 1e3
        );
    }
}

/// Starts one copy of this program per device, as torchrun would on one machine, and waits
/// for every one of them.
fn launch_one_process_per_device() {
    let world = device_count().max(1) as usize;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..world)
        .map(|rank| {
            std::process::Command::new(&exe)
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for (rank, mut child) in children.into_iter().enumerate() {
        assert!(child.wait().unwrap().success(), "rank {rank}'s process failed");
    }
    println!("{world} process(es), one per device: every rank checked its results");
}
