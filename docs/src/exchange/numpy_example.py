# NumPy and emberfire share memory both ways (CPU backend). Run by python/tests/test_exchange.py.
# ANCHOR: example
import numpy as np
import emberfire as ef

ef.set_backend("cpu")
x = np.arange(12.0).reshape(3, 4)  # C order (row-major)
a = ef.from_dlpack(x)  # a strided view of x's memory: no copy
assert a.shape == (3, 4) and a.data_ptr == x.ctypes.data

y = ef.tanh(a) * 2.0 + 1.0  # lazy: one fused kernel when a value is needed
n = np.from_dlpack(y)  # NumPy reads emberfire's memory, in Fortran order
assert n.ctypes.data == y.data_ptr and n.flags["F_CONTIGUOUS"]
assert np.allclose(n, np.tanh(x) * 2.0 + 1.0)
# ANCHOR_END: example
