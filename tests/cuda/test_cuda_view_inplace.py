"""In-place ops on views under autograd on the CUDA device, against the CPU: CopySlices (which
lays the base's gradient out on the device and hands the op's formula its slice) and the
AsStridedBackward0 of a view whose base changed (tests/autograd/test_view_inplace.py compares
the same machinery with PyTorch on the CPU)."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal(4).astype(np.float32)


def sliced_and_rebased(x, y):
    a = x.clone()
    v, w = a[1:], a[:2]
    v.mul_(y)
    a.t()[1].add_(1)
    return a * w.sum(), [a, v, w]


def setitem_into_zeros(x, y):
    a = minitorch.zeros(3, 4, device=x.device)
    a[1] = y * 2
    a[:, 0] = x[:, 1]
    a[0][minitorch.tensor([1, 3], device=x.device)] = y[:2]
    return a, [a]


def saving_formulas(x, y):
    a = x.clone()
    a[:, 1:].clamp_(-0.5, 0.5)
    a[::2].div_(y.exp())
    a[1].exp_()
    return a * 1, [a]


@pytest.mark.parametrize("fn", [sliced_and_rebased, setitem_into_zeros, saving_formulas])
def test_view_inplace_on_cuda_as_on_cpu(fn):
    results = []
    for dev in ("cpu", "cuda"):
        x = minitorch.tensor(X, device=dev, requires_grad=True)
        y = minitorch.tensor(Y, device=dev, requires_grad=True)
        out, probes = fn(x, y)
        names = [type(p.grad_fn).__name__ for p in probes]
        (out * minitorch.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4), device=dev)).sum().backward()
        results.append((out.cpu().tolist(), names, x.grad.cpu().tolist(), y.grad.cpu().tolist()))
    (o, n, gx, gy), (t_o, t_n, t_gx, t_gy) = results
    assert n == t_n
    for got, want in ((o, t_o), (gx, t_gx), (gy, t_gy)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
