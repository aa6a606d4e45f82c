# A PyTorch training step whose loss and gradient are emberfire functions, checked against
# PyTorch's autograd. Needs PyTorch and a CUDA device; run by python/tests/test_exchange.py.
# ANCHOR: example
import torch
import emberfire as ef

ef.set_backend("cuda")


def mse(X, w, y):  # emberfire arrays in, a Python float out
    r = X @ w - y
    return ef.mean(r * r)


def mse_grad(X, w, y):  # d mse / d w
    r = X @ w - y
    return (X.T @ r) * (2.0 / r.size)


class EmberfireMSE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, w, y):
        ctx.save_for_backward(X, w, y)
        # from_dlpack: same memory; torch's pending work is ordered before emberfire's stream
        loss = mse(*(ef.from_dlpack(t.detach()) for t in (X, w, y)))
        return torch.tensor(loss, device=X.device, dtype=X.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        X, w, y = ctx.saved_tensors
        g = mse_grad(*(ef.from_dlpack(t.detach()) for t in (X, w, y)))
        # torch.from_dlpack: torch's stream waits for emberfire's kernels, no host sync
        return None, torch.from_dlpack(g) * grad_out, None


torch.manual_seed(0)
X = torch.randn(256, 16, device="cuda", dtype=torch.float64)
y = torch.randn(256, 1, device="cuda", dtype=torch.float64)
w = torch.zeros(16, 1, device="cuda", dtype=torch.float64, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.05)
for step in range(20):
    opt.zero_grad()
    loss = EmberfireMSE.apply(X, w, y)
    loss.backward()
    opt.step()

# the same steps with PyTorch's own loss and autograd reach the same weights
w_ref = torch.zeros(16, 1, device="cuda", dtype=torch.float64, requires_grad=True)
opt = torch.optim.SGD([w_ref], lr=0.05)
for step in range(20):
    opt.zero_grad()
    ((X @ w_ref - y) ** 2).mean().backward()
    opt.step()
torch.testing.assert_close(w.detach(), w_ref.detach(), rtol=1e-10, atol=1e-12)
# ANCHOR_END: example
ef.set_backend("cpu")
