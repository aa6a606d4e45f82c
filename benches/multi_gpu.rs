//! Several GPUs: an NCCL all-reduce of 1 GiB over every device, and `chain_f32` of 2^28
//! elements on one device beside the same work sharded over every device.
//!
//! ```text
//! cargo bench --bench multi_gpu [-- --quick]
//! ```
//!
//! Lines have the peers' format (`case=... impl=... ms=...`) plus the figures each case is
//! judged by: the all-reduce's bus bandwidth (`busbw`, NCCL's convention: the algorithm
//! bandwidth times 2(n-1)/n) and the sharded chain's speed-up over one device. PyTorch's
//! all-reduce for the same size is measured by `benches/gpu/nccl_torch.py`.

use std::time::Instant;

use emberfire::collective::{Communicator, ReduceOp};
use emberfire::*;

/// The median of `reps` timed runs of `f` (after two untimed ones), in milliseconds; `f` must
/// wait for its own work.
fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn sync_all(devices: &[i32]) {
    for &d in devices {
        set_device(d);
        sync(d);
    }
    set_device(devices[0]);
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = if quick { 5 } else { 20 };
    let devices: Vec<i32> = (0..device_count()).collect();
    let n_dev = devices.len();
    eprintln!("backend {:?}, {n_dev} device(s)", get_active_backend());

    // All-reduce of 1 GiB of f32 per rank.
    if get_active_backend() == Backend::CUDA {
        let comm = Communicator::new(&devices).expect("a communicator over every device");
        let n = (1usize << 30) / 4;
        let arrays: Vec<Array<f32>> = devices
            .iter()
            .map(|&d| {
                set_device(d);
                constant(1.0f32, dim4!(n))
            })
            .collect();
        for a in &arrays {
            a.eval();
        }
        sync_all(&devices);
        let ms = median_ms(reps, || {
            let out = comm.all_reduce(&arrays, ReduceOp::Sum).unwrap();
            sync_all(&devices);
            drop(out);
        });
        let bytes = (n * 4) as f64;
        let algbw = bytes / ms / 1e6;
        let busbw = algbw * 2.0 * (n_dev as f64 - 1.0) / n_dev as f64;
        println!(
            "case=allreduce_1g_f32 impl=emberfire ms={ms:.4} devices={n_dev} algbw={algbw:.1} \
             busbw={busbw:.1}"
        );
    }

    // chain_f32 (sin(x) * cos(y) + x * y - 0.5) over 2^28 elements.
    let n: u64 = if quick { 1 << 26 } else { 1 << 28 };
    set_device(devices[0]);
    let x = randu::<f32>(dim4!(n));
    let y = randu::<f32>(dim4!(n));
    x.eval();
    y.eval();
    let chain = |a: &Array<f32>, b: &Array<f32>| sin(a) * cos(b) + a * b - 0.5f32;
    sync_all(&devices);
    let one = median_ms(reps, || {
        let z = chain(&x, &y);
        z.eval();
        sync(devices[0]);
    });
    let bytes = 12.0 * n as f64;
    println!(
        "case=chain_f32_2e28 impl=emberfire devices=1 ms={one:.4} gbs={:.1}",
        bytes / one / 1e6
    );
    drop((x, y));

    let shard = |seed: u64| {
        let parts: Vec<Array<f32>> = devices
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                set_device(d);
                set_seed(seed + i as u64);
                let len = n / n_dev as u64 + u64::from((i as u64) < n % n_dev as u64);
                let a = randu::<f32>(dim4!(len));
                a.eval();
                a
            })
            .collect();
        set_device(devices[0]);
        ShardedArray::from_shards(parts, 0)
    };
    let (sx, sy) = (shard(1), shard(100));
    sync_all(&devices);
    let many = median_ms(reps, || {
        let z = sx.zip_with(&sy, chain);
        z.sync();
    });
    println!(
        "case=chain_f32_2e28 impl=emberfire.sharded devices={n_dev} ms={many:.4} gbs={:.1} \
         speedup={:.3} per_device={:.3}",
        bytes / many / 1e6,
        one / many,
        one / many / n_dev as f64
    );
}
