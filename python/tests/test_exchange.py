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
    np.testing.assert_allclose(ef.sum(a, axis=0).to_numpy(), x.sum(axis=0, keepdims=True))
    np.testing.assert_allclose((a.T @ b).to_numpy(), x.T @ y, rtol=1e-12)
    np.testing.assert_allclose(ef.tanh(a).to_numpy(), np.tanh(x), rtol=1e-12)


def test_what_cannot_be_exchanged_is_an_error():
    ef.set_backend("cpu")
    try:
        ef.from_dlpack(np.zeros(3, dtype=np.int8))
    except BufferError as e:
        assert "signed 8-bit" in str(e), e
    else:
        raise AssertionError("int8 was accepted")
    try:
        ef.from_dlpack(object())
    except TypeError as e:
        assert "__dlpack__" in str(e), e
    else:
        raise AssertionError("an object without __dlpack__ was accepted")


# ---- the book's examples --------------------------------------------------------------------


def test_book_examples():
    here = os.path.dirname(os.path.abspath(__file__))
    book = os.path.join(here, "..", "..", "docs", "src", "exchange")
    for name, needs in [("numpy_example.py", ["numpy"]), ("torch_example.py", ["torch"]),
                        ("cupy_example.py", ["cupy"])]:
        path = os.path.join(book, name)
        missing = [m for m in needs if not have(m)]
        if missing:
            skip(f"book example {name}", f"{', '.join(missing)} not installed")
            continue
        if name != "numpy_example.py" and not cuda_ok():
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
