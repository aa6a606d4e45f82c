"""Exchange of emberfire arrays with NumPy, PyTorch, CuPy and JAX through DLPack.

Runs as a script (``python test_exchange.py``) or under pytest. Each check runs where its
packages (and, for the CUDA checks, a GPU) are present, and the run ends with a list of what
was skipped and why. Values are checked against NumPy references computed from the inputs.

Where the checks run:
- NumPy, on emberfire's CPU backend: ``numpy.from_dlpack`` of an emberfire array and
  ``emberfire.from_dlpack`` of a NumPy array see the same memory and values, for every
  element type, for strided views; the producer stays alive as long as the array.
- PyTorch, CuPy, JAX, on emberfire's CUDA backend: the same, both ways, with each library's
  ``from_dlpack``; CuPy also through ``__cuda_array_interface__``; and a PyTorch training step
  whose loss and gradient come from emberfire matches PyTorch's autograd.
"""

import gc
import os
import sys
import traceback

import numpy as np

import emberfire as ef

SKIPPED = []


class Skipped(Exception):
    """A whole check that cannot run here."""


def skip(name, why):
    """Records a part of a check that cannot run here."""
    SKIPPED.append((name, why))


def skip_test(name, why):
    """Records and ends a check that cannot run here."""
    SKIPPED.append((name, why))
    if "pytest" in sys.modules:
        import pytest
        pytest.skip(why)
    raise Skipped(why)


def have(module):
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001 - any import failure means "not here"
        return False


def cuda_ok():
    if os.environ.get("EMBERFIRE_PY_NO_CUDA"):
        return False
    try:
        ef.set_backend("cuda")
        ef.set_backend("cpu")
        return True
    except BaseException:  # noqa: BLE001 - no CUDA device: a panic from the backend
        return False


RNG = np.random.default_rng(7)

# Every element type emberfire has, by NumPy name.
DTYPES = [
    "float16", "float32", "float64", "complex64", "complex128", "bool",
    "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
]


def sample(dtype, shape):
    """Random values of a type: never all zeros, small enough for every type."""
    if dtype == "bool":
        return RNG.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("complex"):
        return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)
    if dtype.startswith("float"):
        return RNG.normal(size=shape).astype(dtype)
    return RNG.integers(1, 100, size=shape).astype(dtype)


# ---- NumPy, on the CPU backend --------------------------------------------------------------


def test_numpy_takes_emberfire_arrays():
    ef.set_backend("cpu")
    for dtype in DTYPES:
        ref = sample(dtype, (3, 5))
        a = ef.asarray(ref)
        n = np.from_dlpack(a)
        assert n.ctypes.data == a.data_ptr, dtype
        assert n.dtype == np.dtype(dtype), (dtype, n.dtype)
        assert n.shape == (3, 5)
        np.testing.assert_array_equal(n, ref)
        # emberfire arrays are column-major: NumPy sees Fortran order, no copy
        assert n.flags["F_CONTIGUOUS"], dtype


def test_emberfire_takes_numpy_arrays():
    ef.set_backend("cpu")
    for dtype in DTYPES:
        x = sample(dtype, (4, 6))
        a = ef.from_dlpack(x)
        assert a.data_ptr == x.ctypes.data, dtype
        assert a.shape == (4, 6) and a.dtype == dtype
        np.testing.assert_array_equal(a.to_numpy(), x)
    # a strided view of a C-order array imports as a view: same memory, same values
    x = RNG.normal(size=(8, 10))
    v = x[1::2, 2:9:3]
    a = ef.from_dlpack(v)
    assert a.data_ptr == v.ctypes.data
    np.testing.assert_array_equal(a.to_numpy(), v)
    # the memory is shared: a write by NumPy shows through
    x[1, 2] = 1234.5
    assert a.to_numpy()[0, 0] == 1234.5
    # emberfire keeps the producer alive after the last NumPy reference goes
    del x, v
    gc.collect()
    assert a.to_numpy()[0, 0] == 1234.5


def test_round_trip_keeps_the_memory():
    ef.set_backend("cpu")
    a = ef.asarray(RNG.normal(size=(5, 7)).astype(np.float32))
    n = np.from_dlpack(a)
    b = ef.from_dlpack(n)
    assert a.data_ptr == n.ctypes.data == b.data_ptr
    np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())


def test_arithmetic_matches_numpy():
    ef.set_backend("cpu")
    x = RNG.normal(size=(6, 4)).astype(np.float64)
    y = RNG.normal(size=(6, 4)).astype(np.float64)
    a, b = ef.from_dlpack(x), ef.from_dlpack(y)
    got = (a * b + 2.0 * ef.exp(a) - b / 3.0).to_numpy()
    np.testing.assert_allclose(got, x * y + 2.0 * np.exp(x) - y / 3.0, rtol=1e-12)
    np.testing.assert_allclose(ef.sum(a), x.sum(), rtol=1e-12)
    np.testing.assert_allclose(ef.mean(a), x.mean(), rtol=1e-12)
    assert ef.min(a) == x.min() and ef.max(a) == x.max()
    np.testing.assert_allclose(ef.sum(a, axis=0).to_numpy(), x.sum(axis=0))
    np.testing.assert_allclose(ef.sum(a, axis=0, keepdims=True).to_numpy(),
                               x.sum(axis=0, keepdims=True))
    np.testing.assert_allclose((a.T @ b).to_numpy(), x.T @ y, rtol=1e-12)
    np.testing.assert_allclose(ef.tanh(a).to_numpy(), np.tanh(x), rtol=1e-12)


def test_int8_imports_as_int16():
    # emberfire has no int8: the bytes are read where they are and widened with their sign
    ef.set_backend("cpu")
    x = np.array([[-128, -1, 0], [1, 64, 127]], dtype=np.int8)
    a = ef.from_dlpack(x)
    assert a.dtype == "int16" and a.shape == (2, 3)
    np.testing.assert_array_equal(a.to_numpy(), x.astype(np.int16))


def test_what_cannot_be_exchanged_is_an_error():
    ef.set_backend("cpu")
    try:
        ef.from_dlpack(np.zeros((1, 1, 1, 1, 2), dtype=np.float32))
    except BufferError as e:
        assert "at most 4" in str(e), e
    else:
        raise AssertionError("a tensor of five dimensions was accepted")
    try:
        ef.from_dlpack(object())
    except TypeError as e:
        assert "__dlpack__" in str(e), e
    else:
        raise AssertionError("an object without __dlpack__ was accepted")


# ---- host memory on any backend, bools, NumPy views, array interfaces -----------------------


def test_host_tensors_become_cpu_arrays_whatever_the_backend():
    backends = ["cpu"] + (["cuda"] if cuda_ok() else [])
    if len(backends) == 1:
        skip("host import with CUDA active", "no CUDA device")
    for backend in backends:
        ef.set_backend(backend)
        x = RNG.normal(size=(6, 5))
        a = ef.from_dlpack(x)
        assert a.device == "cpu", (backend, a.device)
        assert ef.get_backend() == backend, "the active backend is left alone"
        assert a.data_ptr == x.ctypes.data, "zero copy"
        # operations follow their operands: numbers on either side, reductions, @
        np.testing.assert_allclose((2.0 - a * 3.0 + 1).to_numpy(), 2.0 - x * 3.0 + 1)
        np.testing.assert_allclose(a.sum(axis=1).to_numpy(), x.sum(axis=1))
        np.testing.assert_allclose((a.T @ a).to_numpy(), x.T @ x, rtol=1e-12)
        assert (a * 2).device == "cpu"
        if backend == "cuda":
            g = ef.asarray(x)
            assert g.device.startswith("cuda")
            try:
                a + g
            except ValueError as e:
                assert "to_device" in str(e), e
            else:
                raise AssertionError("a host array and a CUDA array were mixed")
            np.testing.assert_allclose((a.to_device(g.device) + g).to_numpy(), 2 * x)
            np.testing.assert_allclose((a + g.to_device("cpu")).to_numpy(), 2 * x)
    ef.set_backend("cpu")


def bool_counts():
    """A bool array computed by arithmetic, whose bytes hold counts (0 to 3), and the bools
    it means (a byte that is not zero is true), computed by NumPy."""
    x = RNG.integers(0, 2, size=(7, 9)).astype(bool)
    y = RNG.integers(0, 2, size=(7, 9)).astype(bool)
    a, b = ef.asarray(x), ef.asarray(y)
    c = a + b + a  # bool + bool stays bool, holding 2 * x + y in its bytes
    counts = 2 * x.astype(np.uint8) + y.astype(np.uint8)
    np.testing.assert_array_equal(c.astype("uint8").to_numpy(), counts)
    assert counts.max() > 1
    return c, counts != 0


def test_computed_bools_export_as_zero_and_one():
    ef.set_backend("cpu")
    c, want = bool_counts()
    for how, n in [("np.from_dlpack", np.from_dlpack(c)), ("to_numpy", c.to_numpy()),
                   ("np.asarray", np.asarray(c)), ("np.array", np.array(c)),
                   ("view", c[1:, ::2].to_numpy())]:
        ref = want[1:, ::2] if how == "view" else want
        assert n.dtype == np.bool_, how
        assert n.view(np.uint8).max() <= 1, f"{how}: bytes above 1"
        np.testing.assert_array_equal(n, ref, err_msg=how)
    # the array itself keeps its counts
    assert c.astype("uint8").to_numpy().max() > 1
    # bools that are 0 and 1 already leave without a copy
    m = ef.asarray(RNG.normal(size=(5, 5))) > 0.0
    m.eval()
    assert np.from_dlpack(m).ctypes.data == m.data_ptr == m.to_numpy().ctypes.data
    if not have("torch"):
        skip("computed bools to PyTorch", "torch not installed")
        return
    import torch
    t = torch.from_dlpack(c)
    assert t.dtype == torch.bool
    assert t.view(torch.uint8).max().item() <= 1
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(torch.tensor(c).numpy(), want)


def test_to_numpy_is_a_view_of_host_arrays():
    ef.set_backend("cpu")
    x = RNG.normal(size=(6, 8))
    a = ef.asarray(x)
    n = a.to_numpy()
    assert n.ctypes.data == a.data_ptr, "no copy"
    assert not n.flags.writeable, "emberfire arrays are values: the view is read-only"
    assert n.flags["F_CONTIGUOUS"]
    np.testing.assert_array_equal(n, x)
    # the view keeps the array alive
    ptr = a.data_ptr
    del a
    gc.collect()
    assert n.ctypes.data == ptr
    np.testing.assert_array_equal(n, x)
    # a lazy expression is evaluated once, then viewed
    b = ef.asarray(x) * 2.0 + 1.0
    nb = b.to_numpy()
    assert nb.ctypes.data == b.data_ptr
    np.testing.assert_allclose(nb, x * 2.0 + 1.0)
    # np.asarray views, np.array copies (a writable array of its own)
    c = ef.asarray(x)
    assert np.shares_memory(np.asarray(c), c.to_numpy())
    d = np.array(c)
    assert d.flags.writeable and not np.shares_memory(d, c.to_numpy())
    np.testing.assert_array_equal(d, x)
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        assert np.shares_memory(np.asarray(c, copy=False), c.to_numpy())
    # empty arrays come as empty NumPy arrays
    e = c[2:2]
    assert e.shape == (0, 8) and e.to_numpy().shape == (0, 8)


def test_array_interface_describes_views_with_their_own_strides():
    ef.set_backend("cpu")
    x = RNG.normal(size=(10, 12))  # C order
    a = ef.from_dlpack(x)
    for key in [(slice(None), slice(None)), (slice(1, None, 2), slice(None, None, 3)),
                (slice(2, 9), 4), (3, slice(None)), (slice(None, None, -1), slice(2, 3))]:
        v, ref = a[key], x[key]
        iface = v.__array_interface__
        assert iface["shape"] == ref.shape, key
        if ref.size and all(s >= 0 for s in ref.strides):
            # a view leaves as it is: same address, the producer's own strides
            assert iface["data"][0] == ref.ctypes.data, key
            assert tuple(s for s, n in zip(iface["strides"], ref.shape) if n > 1) == \
                tuple(s for s, n in zip(ref.strides, ref.shape) if n > 1), key
        np.testing.assert_array_equal(np.asarray(v), ref, err_msg=str(key))
    assert not hasattr(ef.asarray(np.zeros(0)), "__array_interface__")
    try:
        a.__cuda_array_interface__
    except AttributeError as e:
        assert "host memory" in str(e), e
    else:
        raise AssertionError("a host array has a CUDA array interface")


def test_everyday_array_surface():
    ef.set_backend("cpu")
    x = RNG.normal(size=(5, 6))
    y = RNG.normal(size=(5, 6))
    a, b = ef.asarray(x), ef.asarray(y)
    assert a.shape == (5, 6) and a.ndim == 2 and a.size == 30
    assert a.dtype == "float64" and a.device == "cpu"
    r = repr(ef.asarray(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)))
    assert r.startswith("emberfire.Array([[1., 2.],") and "dtype=float32" in r, r
    assert "device='cpu'" in r, r
    assert len(a) == 5
    # indexing: integers, slices, steps, negative steps, ..., as NumPy
    for key in [1, -1, (slice(None), 2), (slice(1, 4), slice(None, None, 2)),
                (slice(None, None, -1), 1), (Ellipsis, 3), (4, slice(5, 0, -2)), (2, 3),
                (slice(3, 3),), slice(-2, None), (slice(-1, -6, -1), Ellipsis)]:
        got, ref = a[key], x[key]
        assert got.shape == np.shape(ref), (key, got.shape, np.shape(ref))
        np.testing.assert_array_equal(got.to_numpy(), ref, err_msg=str(key))
    assert float(a[2, 3]) == x[2, 3] and a[2, 3].ndim == 0
    v = a[1:4, ::2]  # a view of a's memory
    assert v.data_ptr == a.data_ptr + 8 * 1
    for bad, err in [(7, IndexError), ((1, 2, 3), IndexError), ("x", TypeError),
                     ((Ellipsis, Ellipsis), IndexError)]:
        try:
            a[bad]
        except err:
            pass
        else:
            raise AssertionError(f"a[{bad!r}] did not raise {err.__name__}")
    # comparisons, with arrays and numbers on either side
    for got, ref in [(a < b, x < y), (a <= 0.5, x <= 0.5), (0.5 < a, 0.5 < x),
                     (a == a[:, :], x == x), (a != 1, x != 1), (a >= b, x >= y)]:
        assert got.dtype == "bool"
        np.testing.assert_array_equal(got.to_numpy(), ref)
    # arithmetic with numbers on both sides, unary operators, @
    for got, ref in [(2 - a, 2 - x), (2 / a, 2 / x), (a ** 2, x ** 2), (2 ** a, 2 ** x),
                     (-a, -x), (+a, x), (abs(a), abs(x)), (a @ b.T, x @ y.T),
                     (1 + a * b - 3 * b, 1 + x * y - 3 * y), (a / 4, x / 4)]:
        np.testing.assert_allclose(got.to_numpy(), ref, rtol=1e-12)
    m = a > 0
    np.testing.assert_array_equal((~m).to_numpy(), ~(x > 0))
    i = ef.asarray(np.arange(6, dtype=np.int32))
    np.testing.assert_array_equal((~i).to_numpy(), ~np.arange(6, dtype=np.int32))
    # in-place operators rebind the name; other references keep their values
    c = a
    c += 1
    c *= 2.0
    c -= b
    c /= 4
    c **= 2
    np.testing.assert_allclose(c.to_numpy(), (((x + 1) * 2.0 - y) / 4) ** 2, rtol=1e-12)
    np.testing.assert_array_equal(a.to_numpy(), x)
    # reductions: all, or along an axis (dropped, or kept with keepdims), NumPy's axes
    z = RNG.normal(size=(3, 4, 5))
    e = ef.asarray(z)
    for name in ["sum", "mean", "max", "min"]:
        np.testing.assert_allclose(getattr(a, name)(), getattr(x, name)(), rtol=1e-12)
        np.testing.assert_allclose(getattr(ef, name)(a), getattr(x, name)(), rtol=1e-12)
        for axis in [0, 1, -1]:
            for keepdims in [False, True]:
                got = getattr(a, name)(axis=axis, keepdims=keepdims)
                ref = getattr(x, name)(axis=axis, keepdims=keepdims)
                assert got.shape == ref.shape, (name, axis, keepdims)
                np.testing.assert_allclose(got.to_numpy(), ref, rtol=1e-12)
        for axis in [0, 1, 2]:
            got, ref = getattr(e, name)(axis=axis), getattr(z, name)(axis=axis)
            assert got.shape == ref.shape, (name, axis)
            np.testing.assert_allclose(got.to_numpy(), ref, rtol=1e-12)
    assert m.sum() == (x > 0).sum()
    # astype and copy
    f = a.astype("float32")
    assert f.dtype == "float32"
    np.testing.assert_allclose(f.to_numpy(), x.astype(np.float32))
    assert a.astype(np.int32).dtype == "int32"
    k = a.copy()
    assert k.data_ptr != a.data_ptr
    np.testing.assert_array_equal(k.to_numpy(), x)
    try:
        bool(a)
    except ValueError:
        pass
    else:
        raise AssertionError("the truth of a 30-element array")
    assert bool(a[0, 0] == a[0, 0])


def test_numpy_and_torch_take_arrays_through_the_protocols():
    import time
    ef.set_backend("cpu")
    x = RNG.normal(size=(1000, 1000))
    a = ef.asarray(x)
    start = time.perf_counter()
    n = np.array(a)
    np.testing.assert_array_equal(n, x)
    # element by element, a million reads would take far longer than this
    assert time.perf_counter() - start < 2.0, "np.array read element by element"
    np.testing.assert_array_equal(np.asarray(a * 1.0), x)
    if not have("torch"):
        skip("torch.tensor of emberfire arrays", "torch not installed")
        return
    import torch
    start = time.perf_counter()
    t = torch.tensor(a)
    assert time.perf_counter() - start < 2.0, "torch.tensor read element by element"
    np.testing.assert_array_equal(t.numpy(), x)
    if cuda_ok() and torch.cuda.is_available():
        ef.set_backend("cuda")
        g = ef.asarray(x)
        start = time.perf_counter()
        tg = torch.tensor(g, device="cuda")
        assert time.perf_counter() - start < 2.0
        np.testing.assert_array_equal(tg.cpu().numpy(), x)
        ef.set_backend("cpu")


class FakeStream:
    def __init__(self, version, handle):
        self.version, self.handle = version, handle

    def __cuda_stream__(self):
        return (self.version, self.handle)


def test_stream_arguments_take_the_stream_protocol():
    ef.set_backend("cpu")
    a = ef.asarray(RNG.normal(size=(3, 3)))
    # on the CPU a stream must mean "none" (-1), given as an int or through the protocol
    for s in [None, -1, FakeStream(0, -1)]:
        np.testing.assert_array_equal(np.from_dlpack(DLPackWith(a, s)), a.to_numpy())
    for s, err in [(FakeStream(1, 5), ValueError), ("x", TypeError), (7, ValueError)]:
        try:
            a.__dlpack__(stream=s)
        except err:
            pass
        else:
            raise AssertionError(f"stream {s!r} accepted")
    if not cuda_ok():
        skip("emberfire streams", "no CUDA device")
        try:
            ef.current_stream()
        except Exception:  # noqa: BLE001 - no CUDA: any clear error
            pass
        else:
            raise AssertionError("a CUDA stream without CUDA")
        return
    ef.set_backend("cuda")
    s = ef.current_stream()
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.handle and handle != 0
    g = ef.asarray(RNG.normal(size=(64, 64)))
    cap = g.__dlpack__(stream=s)  # emberfire's own stream: nothing to wait for
    assert type(cap).__name__ == "PyCapsule"
    del cap
    ef.set_backend("cpu")


class DLPackWith:
    """An exporter that passes a fixed stream to an emberfire array's __dlpack__."""

    def __init__(self, a, stream):
        self.a, self.stream = a, stream

    def __dlpack__(self, stream=None, **kwargs):
        return self.a.__dlpack__(stream=self.stream, **kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


# ---- on CUDA: the CUDA array interface, streams ---------------------------------------------


def test_cupy_cuda_array_interface_keeps_views():
    gpu_or_skip("cupy cuda array interface", "cupy")
    import cupy as cp
    c = cp.asarray(RNG.normal(size=(16, 16)))  # row-major f64
    a = ef.from_dlpack(c)
    assert a.data_ptr == c.data.ptr
    assert cp.from_dlpack(a).data.ptr == c.data.ptr
    iface = a.__cuda_array_interface__
    assert iface["data"][0] == c.data.ptr, "the interface describes the view, no copy"
    assert tuple(iface["strides"]) == c.strides, (iface["strides"], c.strides)
    assert iface["stream"] not in (0, None)
    back = cp.asarray(a)
    assert back.data.ptr == c.data.ptr
    np.testing.assert_array_equal(cp.asnumpy(back), cp.asnumpy(c))
    v = a[1::2, ::3]
    cv = c[1::2, ::3]
    assert v.__cuda_array_interface__["data"][0] == cv.data.ptr
    assert tuple(v.__cuda_array_interface__["strides"]) == cv.strides
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(v)), cp.asnumpy(cv))
    # computed bools: 0 and 1 through the interface too
    cb, want = bool_counts()
    got = cp.asarray(cb)
    assert int(got.view(cp.uint8).max()) <= 1
    np.testing.assert_array_equal(cp.asnumpy(got), want)
    assert not hasattr(ef.from_dlpack(np.zeros(3)), "__cuda_array_interface__")
    ef.set_backend("cpu")


def test_torch_streams_order_exports_without_blocking():
    gpu_or_skip("torch streams", "torch")
    import torch
    if not torch.cuda.is_available():
        skip_test("torch streams", "torch sees no CUDA device")
    s = ef.current_stream()
    ext = torch.cuda.ExternalStream(s.handle)
    assert ext.cuda_stream == s.handle
    # work queued by emberfire, exported for a stream of torch's: torch's stream waits on the
    # device, the host does not
    x = ef.asarray(RNG.normal(size=(2048, 2048)).astype(np.float32))
    y = x @ x
    side = torch.cuda.Stream()
    stream_arg = side if hasattr(side, "__cuda_stream__") else side.cuda_stream
    cap = y.__dlpack__(stream=stream_arg)  # a legacy capsule, which every torch reads
    with torch.cuda.stream(side):
        t = torch.utils.dlpack.from_dlpack(cap)
        total = t.sum()
    side.synchronize()
    np.testing.assert_allclose(total.item(), ef.sum(y), rtol=1e-3)
    # a CUDA array computed by arithmetic on bools reaches torch as 0 and 1
    c, want = bool_counts()
    tb = torch.from_dlpack(c)
    assert tb.view(torch.uint8).max().item() <= 1
    np.testing.assert_array_equal(tb.cpu().numpy(), want)
    ef.set_backend("cpu")


# ---- the book's examples --------------------------------------------------------------------


CPU_EXAMPLES = ["numpy_example.py", "host_arrays_example.py", "array_example.py"]


def test_book_examples():
    here = os.path.dirname(os.path.abspath(__file__))
    book = os.path.join(here, "..", "..", "docs", "src", "exchange")
    for name, needs in [("numpy_example.py", ["numpy"]), ("torch_example.py", ["torch"]),
                        ("cupy_example.py", ["cupy"]), ("host_arrays_example.py", ["numpy"]),
                        ("array_example.py", ["numpy"]), ("streams_example.py", ["torch"])]:
        path = os.path.join(book, name)
        missing = [m for m in needs if not have(m)]
        if missing:
            skip(f"book example {name}", f"{', '.join(missing)} not installed")
            continue
        if name not in CPU_EXAMPLES and not cuda_ok():
            skip(f"book example {name}", "no CUDA device")
            continue
        with open(path) as f:
            code = f.read()
        exec(compile(code, path, "exec"), {"__name__": "__main__"})
        ef.set_backend("cpu")


# ---- PyTorch, CuPy, JAX on CUDA -------------------------------------------------------------

TORCH_DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "bool", "uint8",
                "int16", "int32", "int64"]


def gpu_or_skip(name, module):
    if not have(module):
        skip_test(name, f"{module} not installed")
    if not cuda_ok():
        skip_test(name, "no CUDA device for emberfire")
    ef.set_backend("cuda")


def test_torch_both_ways():
    gpu_or_skip("torch exchange", "torch")
    import torch
    if not torch.cuda.is_available():
        skip_test("torch exchange", "torch sees no CUDA device")
    for dtype in TORCH_DTYPES:
        ref = sample(dtype, (4, 5))
        a = ef.asarray(ref)
        t = torch.from_dlpack(a)
        assert t.device.type == "cuda"
        assert t.data_ptr() == a.data_ptr, dtype
        np.testing.assert_array_equal(t.cpu().numpy(), ref)
        src = torch.from_numpy(sample(dtype, (3, 7))).cuda()
        b = ef.from_dlpack(src)
        assert b.data_ptr == src.data_ptr(), dtype
        np.testing.assert_array_equal(b.to_numpy(), src.cpu().numpy())
    # a non-contiguous torch view imports as a view
    big = torch.randn(8, 9, device="cuda")
    v = big[::2, 1:]
    b = ef.from_dlpack(v)
    assert b.data_ptr == v.data_ptr()
    np.testing.assert_array_equal(b.to_numpy(), v.cpu().numpy())
    # work torch queued on its stream is finished when emberfire reads (stream order)
    x = torch.randn(2048, 2048, device="cuda")
    y = x @ x
    e = ef.from_dlpack(y)
    np.testing.assert_allclose(ef.sum(e), y.sum().item(), rtol=1e-3)
    ef.set_backend("cpu")


def test_torch_bfloat16_both_ways():
    gpu_or_skip("torch bfloat16 exchange", "torch")
    import torch
    if not torch.cuda.is_available():
        skip_test("torch bfloat16 exchange", "torch sees no CUDA device")
    src = torch.randn(6, 5, device="cuda").to(torch.bfloat16)
    b = ef.from_dlpack(src)
    assert b.dtype == "bfloat16" and b.data_ptr == src.data_ptr()
    t = torch.from_dlpack(b)
    assert t.dtype == torch.bfloat16 and t.data_ptr() == src.data_ptr()
    assert torch.equal(t, src)
    # arithmetic on bf16 rounds each f32 result once, as torch's does for + and *
    c = torch.from_dlpack(b * b + b)
    assert c.dtype == torch.bfloat16
    assert torch.equal(c, src * src + src)
    # int8 imports as int16 (emberfire has no int8)
    i8 = torch.arange(-128, 128, dtype=torch.int8, device="cuda")
    w = ef.from_dlpack(i8)
    assert w.dtype == "int16"
    np.testing.assert_array_equal(w.to_numpy(), i8.cpu().numpy().astype(np.int16))
    ef.set_backend("cpu")


class EmberfireMSE:
    """A loss whose value and gradient are emberfire functions: ``mean((X @ w - y) ** 2)``
    and ``2 / n * X.T @ (X @ w - y)``."""

    @staticmethod
    def loss(X, w, y):
        r = X @ w - y
        return ef.mean(r * r)

    @staticmethod
    def grad(X, w, y):
        r = X @ w - y
        return (X.T @ r) * (2.0 / r.size)


def test_torch_training_step_with_emberfire_loss():
    gpu_or_skip("torch training step", "torch")
    import torch
    if not torch.cuda.is_available():
        skip_test("torch training step", "torch sees no CUDA device")

    class Loss(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X, w, y):
            ctx.save_for_backward(X, w, y)
            ex, ew, ey = (ef.from_dlpack(t.detach()) for t in (X, w, y))
            return torch.tensor(EmberfireMSE.loss(ex, ew, ey), device=X.device, dtype=X.dtype)

        @staticmethod
        def backward(ctx, g):
            X, w, y = ctx.saved_tensors
            ex, ew, ey = (ef.from_dlpack(t.detach()) for t in (X, w, y))
            gw = torch.from_dlpack(EmberfireMSE.grad(ex, ew, ey))
            return None, gw * g, None

    torch.manual_seed(0)
    X = torch.randn(64, 8, device="cuda", dtype=torch.float64)
    y = torch.randn(64, 1, device="cuda", dtype=torch.float64)
    w0 = torch.randn(8, 1, device="cuda", dtype=torch.float64)

    w_ef = w0.clone().requires_grad_(True)
    opt = torch.optim.SGD([w_ef], lr=0.1)
    loss_ef = Loss.apply(X, w_ef, y)
    loss_ef.backward()
    grad_ef = w_ef.grad.clone()
    opt.step()

    w_pt = w0.clone().requires_grad_(True)
    opt = torch.optim.SGD([w_pt], lr=0.1)
    loss_pt = ((X @ w_pt - y) ** 2).mean()
    loss_pt.backward()
    grad_pt = w_pt.grad.clone()
    opt.step()

    torch.testing.assert_close(loss_ef, loss_pt.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad_ef, grad_pt, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(w_ef.detach(), w_pt.detach(), rtol=1e-12, atol=1e-12)
    ef.set_backend("cpu")


def test_cupy_both_ways():
    gpu_or_skip("cupy exchange", "cupy")
    import cupy as cp
    for dtype in DTYPES:
        ref = sample(dtype, (4, 5))
        a = ef.asarray(ref)
        c = cp.from_dlpack(a)
        assert c.data.ptr == a.data_ptr, dtype
        np.testing.assert_array_equal(cp.asnumpy(c), ref)
        src = cp.asarray(sample(dtype, (3, 7)))
        b = ef.from_dlpack(src)
        assert b.data_ptr == src.data.ptr, dtype
        np.testing.assert_array_equal(b.to_numpy(), cp.asnumpy(src))
    # the CUDA array interface: CuPy reads the same memory
    a = ef.asarray(sample("float32", (6, 2)))
    c = cp.asarray(a)
    assert c.data.ptr == a.data_ptr
    np.testing.assert_array_equal(cp.asnumpy(c), a.to_numpy())
    ef.set_backend("cpu")


def test_jax_both_ways():
    gpu_or_skip("jax exchange", "jax")
    import jax
    import jax.dlpack
    if not any(d.platform == "gpu" for d in jax.devices()):
        ef.set_backend("cpu")
        skip_test("jax exchange", "jax sees no GPU")
    for dtype in ["float32", "float64", "int32", "uint8", "bool", "complex64"]:
        if dtype in ("float64", "complex128") and not jax.config.jax_enable_x64:
            continue
        ref = sample(dtype, (9,))  # one dimension: every layout is JAX's default one
        a = ef.asarray(ref)
        j = jax.dlpack.from_dlpack(a)
        assert j.unsafe_buffer_pointer() == a.data_ptr, dtype
        np.testing.assert_array_equal(np.asarray(j), ref)
        b = ef.from_dlpack(j)
        assert b.data_ptr == j.unsafe_buffer_pointer(), dtype
        np.testing.assert_array_equal(b.to_numpy(), np.asarray(j))
    # two dimensions: JAX reads emberfire's column-major layout (it may copy to its own)
    ref = sample("float32", (3, 4))
    j = jax.dlpack.from_dlpack(ef.asarray(ref))
    np.testing.assert_array_equal(np.asarray(j), ref)
    ef.set_backend("cpu")


# ---- runner ---------------------------------------------------------------------------------


def main():
    tests = [(k, v) for k, v in sorted(globals().items()) if k.startswith("test_")]
    failed = []
    skipped = 0
    for name, fn in tests:
        try:
            fn()
            print(f"ok      {name}")
        except Skipped:
            skipped += 1
            print(f"skip    {name}")
        except Exception:  # noqa: BLE001 - report every failure, then exit non-zero
            failed.append(name)
            print(f"FAILED  {name}")
            traceback.print_exc()
    for what, why in SKIPPED:
        print(f"skipped {what}: {why}")
    passed = len(tests) - len(failed) - skipped
    print(f"{passed} passed, {len(failed)} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
