# Host memory stays on the host, whatever backend is active. Run by python/tests/test_exchange.py.
# ANCHOR: example
import numpy as np
import emberfire as ef

x = np.linspace(0.0, 1.0, 12).reshape(3, 4)
a = ef.from_dlpack(x)  # an array of the CPU backend over x's memory, even with CUDA active
assert a.device == "cpu" and a.data_ptr == x.ctypes.data

y = ef.sqrt(a) * 2.0 + 1.0  # operations run where their operands live
n = y.to_numpy()  # a read-only NumPy view of y's memory: no copy
assert n.ctypes.data == y.data_ptr and not n.flags.writeable
assert np.allclose(n, np.sqrt(x) * 2.0 + 1.0)
# mixing arrays of two devices is an error that says how to move one:
# (a + g) with g on "cuda:0" raises ValueError; a.to_device("cuda:0") + g works
# ANCHOR_END: example

# ANCHOR: bools
flags = ef.from_dlpack(np.array([True, False, True]))
twice = flags + flags  # bool arithmetic keeps counts in the bytes (here 2, 0, 2)
assert twice.astype("uint8").to_numpy().tolist() == [2, 0, 2]
out = np.from_dlpack(twice)  # exports hold only 0 and 1 (here a normalised copy)
assert out.view(np.uint8).tolist() == [1, 0, 1]
# ANCHOR_END: bools
