# CuPy arrays through an emberfire pipeline and back, without copies. Needs CuPy and a CUDA
# device; run by python/tests/test_exchange.py.
# ANCHOR: example
import cupy as cp
import numpy as np
import emberfire as ef

ef.set_backend("cuda")
x = cp.random.standard_normal((1024, 1024), dtype=cp.float32)
a = ef.from_dlpack(x)  # CuPy's stream work is ordered before emberfire's
assert a.data_ptr == x.data.ptr  # the same device memory

b = ef.sigmoid(a) * a - 0.5  # one fused JIT kernel
c = cp.from_dlpack(b)  # CuPy's stream waits for that kernel on the device
assert c.data.ptr == b.data_ptr

d = cp.asarray(b)  # the CUDA array interface works too (version 3, with its stream)
ref = 1 / (1 + np.exp(-cp.asnumpy(x))) * cp.asnumpy(x) - 0.5
assert np.allclose(cp.asnumpy(c), ref, atol=1e-5) and np.allclose(cp.asnumpy(d), ref, atol=1e-5)
# ANCHOR_END: example
ef.set_backend("cpu")
