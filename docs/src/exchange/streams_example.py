# emberfire's stream, seen by PyTorch through the stream protocol. Needs torch and a GPU.
# Run by python/tests/test_exchange.py.
# ANCHOR: example
import numpy as np
import torch
import emberfire as ef

ef.set_backend("cuda")
s = ef.current_stream()  # emberfire's stream on the active device
assert s.__cuda_stream__() == (0, s.handle)  # the stream protocol
ours = torch.cuda.ExternalStream(s.handle)  # torch queues its work on emberfire's stream

x = ef.asarray(np.random.default_rng(0).normal(size=(512, 512)).astype(np.float32))
y = x @ x  # queued by emberfire, not waited for
side = torch.cuda.Stream()
# the export makes `side` wait for y's kernels on the device; the host does not wait
cap = y.__dlpack__(stream=side if hasattr(side, "__cuda_stream__") else side.cuda_stream)
with torch.cuda.stream(side):
    t = torch.utils.dlpack.from_dlpack(cap)
    total = t.sum()
assert np.isclose(total.item(), ef.sum(y), rtol=1e-3)
with torch.cuda.stream(ours):
    z = torch.ones(4, device="cuda")  # runs in order with emberfire's kernels
ef.set_backend("cpu")
# ANCHOR_END: example
