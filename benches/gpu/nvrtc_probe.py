#!/usr/bin/env python3
"""Where a kernel compile's time goes on this machine: compiles one CUDA C source with NVRTC
(to a CUBIN for sm_90, with the options emberfire uses) several times in one process, each time
under a new program name so nothing is reused, and prints per compile the wall time, the
process's user and system time and its minor page faults. Needs no GPU: run it on a freshly
started device machine (what a user's first run sees) and again minutes later, and on the build
machine with NVRTC from its pip wheel.

    python3 nvrtc_probe.py SOURCE.cu [COMPILES] [--lib PATH/libnvrtc.so.13] [--opt OPTION ...]

Each `--opt` adds an NVRTC option to emberfire's own (`-Ofast-compile=min`, say).

Compare runs with `GLIBC_TUNABLES=glibc.malloc.trim_threshold=1000000000:glibc.malloc.mmap_threshold=1000000000`
set (freed memory kept in the process): if the later compiles' faults fall and their time with
them, the compiles are paying for fresh pages.
"""
import ctypes
import ctypes.util
import glob
import os
import resource
import sys
import time


def find_nvrtc(explicit):
    if explicit:
        return explicit
    for pattern in ["/usr/local/cuda/lib64/libnvrtc.so*", "/usr/lib/x86_64-linux-gnu/libnvrtc.so*"]:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    for mod in ["nvidia.cu13", "nvidia.cuda_nvrtc", "nvidia"]:
        try:
            m = __import__(mod, fromlist=["_"])
            for root in m.__path__:
                hits = sorted(glob.glob(os.path.join(root, "**", "libnvrtc.so*"), recursive=True))
                hits = [h for h in hits if "builtins" not in h and ".alt." not in h]
                if hits:
                    return hits[-1]
        except ImportError:
            pass
    return ctypes.util.find_library("nvrtc")


def main():
    args, extra, lib = [], [], None
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--lib":
            lib = next(it)
        elif a == "--opt":
            extra.append(next(it).encode())
        else:
            args.append(a)
    src = open(args[0], "rb").read()
    count = int(args[1]) if len(args) > 1 else 5
    path = find_nvrtc(lib)
    nvrtc = ctypes.CDLL(path)
    print(f"nvrtc {path}, source {len(src)} bytes")
    opts = [b"--gpu-architecture=sm_90", b"-minimal"] + extra
    print("options", b" ".join(opts).decode())
    copts = (ctypes.c_char_p * len(opts))(*opts)
    for k in range(count):
        before = resource.getrusage(resource.RUSAGE_SELF)
        t = time.perf_counter()
        prog = ctypes.c_void_p()
        name = f"probe{k}.cu".encode()
        rc = nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, name, 0, None, None)
        assert rc == 0, f"nvrtcCreateProgram: {rc}"
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), copts)
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        if rc != 0:
            log_size = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size))
            log = ctypes.create_string_buffer(log_size.value)
            nvrtc.nvrtcGetProgramLog(prog, log)
            sys.exit(f"compile failed ({rc}):\n{log.value.decode()[:2000]}")
        nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
        wall = (time.perf_counter() - t) * 1e3
        after = resource.getrusage(resource.RUSAGE_SELF)
        print(
            f"compile {k}: {wall:7.1f} ms  user {1e3 * (after.ru_utime - before.ru_utime):7.1f} ms"
            f"  sys {1e3 * (after.ru_stime - before.ru_stime):6.1f} ms"
            f"  minor faults {after.ru_minflt - before.ru_minflt:6d}"
            f"  major {after.ru_majflt - before.ru_majflt:3d}  cubin {size.value} bytes"
            f"  peak rss {after.ru_maxrss / 1024:.0f} MB"
        )


if __name__ == "__main__":
    main()
