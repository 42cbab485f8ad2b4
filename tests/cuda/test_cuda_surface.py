"""The Python surface over tensor ops on the CUDA device (real or emulated): distributions keep
their parameters' device, GradScaler scales and unscales there, autocast's switch, and
assert_close's device check. Values equal the CPU's."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

D = minitorch.distributions


def _both(make):
    """make(device) on the CPU and on CUDA: equal values, the CUDA one on CUDA."""
    assert_same(make("cuda"), make("cpu"), rtol=1e-5, atol=1e-6)


def test_distributions_on_cuda():
    loc = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], dtype=np.float32)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]], dtype=np.float32)
    t = lambda a, d: minitorch.tensor(a, device=d)  # noqa: E731
    _both(lambda d: D.Normal(t(loc, d), 2.0).log_prob(t(loc[::-1].copy(), d)))
    _both(lambda d: D.Categorical(t(probs, d)).entropy())
    _both(lambda d: D.Categorical(t(probs, d)).log_prob(t(np.array([2, 0]), d)))
    _both(lambda d: D.MultivariateNormal(t(loc[:2], d), t(cov, d)).log_prob(t(loc[1:], d)))
    _both(lambda d: D.kl_divergence(D.Normal(t(loc, d), 1.0), D.Normal(t(loc * 2, d), 3.0)))
    assert D.Categorical(t(probs, "cuda")).sample((5,)).device.type == "cuda"
    assert D.Normal(t(loc, "cuda"), 1.0).rsample((2,)).device.type == "cuda"


def test_grad_scaler_on_cuda():
    w = minitorch.ones(2, device="cuda", requires_grad=True)
    opt = minitorch.optim.SGD([w], lr=0.1)
    scaler = minitorch.amp.GradScaler("cuda", init_scale=4.0, growth_interval=1)
    scaler.scale((w * w).sum()).backward()
    assert w.grad.device.type == "cuda" and w.grad.cpu().tolist() == [8.0, 8.0]
    scaler.step(opt)
    scaler.update()
    assert w.detach().cpu().tolist() == pytest.approx([0.8, 0.8]) and scaler.get_scale() == 8.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with minitorch.autocast("cuda"):
            assert minitorch.is_autocast_enabled()


def test_assert_close_device_check():
    minitorch.testing.assert_close(minitorch.ones(2, device="cuda"), minitorch.ones(2, device="cuda"))
    with pytest.raises(AssertionError, match="The values for attribute 'device' do not match: cuda:0 != cpu."):
        minitorch.testing.assert_close(minitorch.ones(2, device="cuda"), minitorch.ones(2))
    minitorch.testing.assert_close(minitorch.ones(2, device="cuda"), minitorch.ones(2), check_device=False)
