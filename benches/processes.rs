//! One process per GPU: an all-reduce of 1 GiB of f32 per rank, and `chain_f32`
//! (`sin(x) * cos(y) + x * y - 0.5`) over 2^28 elements sharded one shard per process, with
//! every process of a launcher's group (torchrun, mpirun, srun) running this program. Rank 0
//! prints, in the line format of `benches/multi_gpu.rs`:
//!
//! ```text
//! case=allreduce_1g_f32 impl=emberfire.processes ms=<median> ranks=<n> algbw=<GB/s> busbw=<GB/s>
//! case=chain_f32_2e28 impl=emberfire.processes ranks=<n> ms=<median> gbs=<GB/s>
//! ```
//!
//! `busbw` is NCCL's bus bandwidth (the algorithm bandwidth times `2 (n - 1) / n`), as
//! `benches/gpu/nccl_torch.py` reports PyTorch's with one process per GPU. Run directly (no
//! launcher's variables), it starts one copy of itself per device with torchrun's variables on
//! the loopback address. `benches/gpu/processes.sh` runs both sides and the two-machine
//! simulation on a machine with several GPUs.
//!
//! Usage: `cargo bench --bench processes [-- --quick]`, or the built binary under a launcher.

use std::sync::Arc;
use std::time::Instant;

use emberfire::collective::{Communicator, ProcessGroup, ReduceOp};
use emberfire::*;

fn median_ms(comm: &Communicator, reps: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..2 {
        f();
    }
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        comm.barrier().unwrap();
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let Ok(pg) = ProcessGroup::from_env() else {
        return launch_one_process_per_device(quick);
    };
    let reps = if quick { 5 } else { 20 };
    let comm = Arc::new(Communicator::join(&pg).expect("joining the group"));
    let (rank, world) = (pg.rank(), pg.world_size());
    let device = get_device();
    let sync_here = || sync(device);

    if get_active_backend() == Backend::CUDA {
        let n = (1u64 << 30) / 4;
        let x = constant(1.0f32, dim4!(n));
        x.eval();
        sync_here();
        let ms = median_ms(&comm, reps, || {
            let out = comm.all_reduce(std::slice::from_ref(&x), ReduceOp::Sum).unwrap();
            out[0].eval();
            sync_here();
        });
        let out = comm.all_reduce(std::slice::from_ref(&x), ReduceOp::Sum).unwrap();
        let first = first_element(&out[0]);
        assert_eq!(first, world as f32, "the all-reduce's sum");
        let algbw = (n * 4) as f64 / ms / 1e6;
        let busbw = algbw * 2.0 * (world as f64 - 1.0) / world as f64;
        if rank == 0 {
            println!(
                "case=allreduce_1g_f32 impl=emberfire.processes ms={ms:.4} ranks={world} \
                 algbw={algbw:.1} busbw={busbw:.1}"
            );
        }
    }

    let total = if quick { 1u64 << 24 } else { 1u64 << 28 };
    let mine = total / world as u64 + u64::from((rank as u64) < total % world as u64);
    let a = randu::<f32>(dim4!(mine));
    let b = randu::<f32>(dim4!(mine));
    let sx = ShardedArray::from_process_shard(a, 0, &comm).unwrap();
    let sy = ShardedArray::from_process_shard(b, 0, &comm).unwrap();
    assert_eq!(sx.dims(), dim4!(total));
    sx.sync();
    sy.sync();
    let ms = median_ms(&comm, reps, || {
        let z = sx.zip_with(&sy, |x, y| sin(x) * cos(y) + x * y - 0.5f32);
        z.sync();
    });
    if rank == 0 {
        let gbs = (12 * total) as f64 / ms / 1e6;
        println!(
            "case=chain_f32_2e28 impl=emberfire.processes ranks={world} ms={ms:.4} gbs={gbs:.1}"
        );
    }
    comm.barrier().unwrap();
}

/// The first element of `a`, read on the host.
fn first_element(a: &Array<f32>) -> f32 {
    let mut one = [0.0f32];
    index(a, &[Seq::new(0.0, 0.0, 1.0)]).host(&mut one);
    one[0]
}

fn launch_one_process_per_device(quick: bool) {
    let world = device_count().max(1) as usize;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..world)
        .map(|rank| {
            let mut c = std::process::Command::new(&exe);
            if quick {
                c.arg("--quick");
            }
            c.env("RANK", rank.to_string())
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
}
