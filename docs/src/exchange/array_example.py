# The array surface of the Python module, beside NumPy. Run by python/tests/test_exchange.py.
# ANCHOR: example
import numpy as np
import emberfire as ef

x = np.arange(24.0).reshape(4, 6)
a = ef.asarray(x)
assert (a.shape, a.ndim, a.dtype, a.device) == ((4, 6), 2, "float64", "cpu")

v = a[1:, ::2]  # a view: integers, slices, steps and ... index as in NumPy
assert v.shape == (3, 3) and np.array_equal(v.to_numpy(), x[1:, ::2])
assert a[2].shape == (6,) and float(a[2, 3]) == x[2, 3]

b = 1.0 - a / 2  # numbers on either side
b += 3  # rebinds b to a new array; a and its views are unchanged

assert np.array_equal((b > 0).to_numpy(), (1.0 - x / 2 + 3) > 0)

# shape[k] is emberfire's dimension k, and axis=k reduces it, as NumPy sees the exported array
assert np.allclose(a.sum(axis=0).to_numpy(), x.sum(axis=0))
assert np.allclose(a.max(axis=1, keepdims=True).to_numpy(), x.max(axis=1, keepdims=True))
assert np.allclose((a @ a.T).to_numpy(), x @ x.T)
assert np.array_equal(np.asarray(a.astype("int32")), x.astype(np.int32))
# ANCHOR_END: example
