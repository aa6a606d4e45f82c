"""PyTorch's NCCL all-reduce of 1 GiB of f32 per rank over every GPU, one process per GPU, in
the line format of benches/multi_gpu.rs (median of the timed runs; busbw as NCCL reports it:
the algorithm bandwidth times 2(n-1)/n).

    python3 benches/gpu/nccl_torch.py [--quick]
"""
import os, sys, time
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

QUICK = "--quick" in sys.argv


def worker(rank, world, port):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    n = (1 << 30) // 4
    x = torch.ones(n, dtype=torch.float32, device="cuda")
    reps = 5 if QUICK else 20
    for _ in range(2):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        s = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - s) * 1e3)
    times.sort()
    ms = times[len(times) // 2]
    if rank == 0:
        algbw = n * 4 / ms / 1e6
        busbw = algbw * 2 * (world - 1) / world
        print(f"case=allreduce_1g_f32 impl=torch ms={ms:.4f} devices={world} algbw={algbw:.1f} busbw={busbw:.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    world = torch.cuda.device_count()
    mp.spawn(worker, args=(world, 29517), nprocs=world, join=True)
