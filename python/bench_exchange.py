"""Per-call cost of an exchange: `from_dlpack` and `__dlpack__`, emberfire beside CuPy and
PyTorch on the same GPU (and NumPy on the host), in one run.

    python python/bench_exchange.py [--calls N]

Prints one line per case, `case=<name> impl=<library> us=<median microseconds per call>`
(`consumer<-producer` for imports),
for the libraries that are installed. Each case exchanges a 1 MiB float32 array (the cost does
not depend on the size: nothing is copied); the median is over 21 runs of N calls.
"""

import statistics
import sys
import time

import numpy as np

import emberfire as ef


def per_call(fn, calls):
    for _ in range(calls // 10 + 1):  # warm-up
        fn()
    runs = []
    for _ in range(21):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(runs)


def report(case, impl, us):
    print(f"case={case} impl={impl} us={us:.2f}", flush=True)


def main():
    calls = 2000
    if "--calls" in sys.argv:
        calls = int(sys.argv[sys.argv.index("--calls") + 1])
    n = 1 << 18
    host = np.random.default_rng(0).normal(size=n).astype(np.float32)

    ef.set_backend("cpu")
    a = ef.asarray(host)
    report("host_from_dlpack", "emberfire<-numpy", per_call(lambda: ef.from_dlpack(host), calls))
    report("host_from_dlpack", "numpy<-emberfire", per_call(lambda: np.from_dlpack(a), calls))
    report("host_from_dlpack", "numpy<-numpy", per_call(lambda: np.from_dlpack(host), calls))
    report("host_dlpack", "emberfire", per_call(lambda: a.__dlpack__(), calls))
    report("host_dlpack", "numpy", per_call(lambda: host.__dlpack__(), calls))

    try:
        ef.set_backend("cuda")
    except BaseException:  # noqa: BLE001 - no CUDA device
        print("no CUDA device: host cases only")
        return
    g = ef.asarray(host)
    g.eval()
    ef.sync()
    s = ef.current_stream().handle
    report("cuda_dlpack", "emberfire", per_call(lambda: g.__dlpack__(stream=s), calls))
    try:
        import cupy as cp
        c = cp.asarray(host)
        cs = cp.cuda.get_current_stream().ptr or 1
        report("cuda_from_dlpack", "emberfire<-cupy", per_call(lambda: ef.from_dlpack(c), calls))
        report("cuda_from_dlpack", "cupy<-emberfire", per_call(lambda: cp.from_dlpack(g), calls))
        report("cuda_from_dlpack", "cupy<-cupy", per_call(lambda: cp.from_dlpack(c), calls))
        report("cuda_dlpack", "cupy", per_call(lambda: c.__dlpack__(stream=cs), calls))
    except ImportError:
        print("cupy not installed")
    try:
        import torch
        t = torch.from_numpy(host).cuda()
        ts = torch.cuda.current_stream().cuda_stream or 1
        report("cuda_from_dlpack", "emberfire<-torch", per_call(lambda: ef.from_dlpack(t), calls))
        report("cuda_from_dlpack", "torch<-emberfire",
               per_call(lambda: torch.from_dlpack(g), calls))
        report("cuda_from_dlpack", "torch<-torch", per_call(lambda: torch.from_dlpack(t), calls))
        report("cuda_dlpack", "torch", per_call(lambda: t.__dlpack__(stream=ts), calls))
    except ImportError:
        print("torch not installed")
    ef.set_backend("cpu")


if __name__ == "__main__":
    main()
