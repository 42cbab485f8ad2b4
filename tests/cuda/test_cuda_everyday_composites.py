"""The everyday composites on the CUDA device against the CPU: the ops of
csrc/ops/composite_special.c (nansum, nanmean, logit, dist, inner, ldexp, msort, addr, addbmm,
matrix_power, mvlgamma, sinc, special ndtr/xlog1py/entr, cov, corrcoef), index_reduce, put and
the new linalg functions run on the device through their parts: same values, dtypes, shapes,
errors, and gradients reach the device inputs."""
import numpy as np
import pytest

import minitorch
from helpers import check_device, raises_alike

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(193)
m = minitorch


def values(*shape, low=-2.0, high=2.0):
    return minitorch.tensor(RNG.uniform(low, high, shape))


X = values(3, 6)
X.view(-1)[::5] = float("nan")
P = values(3, 6, low=0.05, high=0.95)
V = values(6)
SQ = values(2, 3, 3) + 3 * minitorch.eye(3, dtype=minitorch.float64)

CASES = {
    "nansum": (lambda x: m.nansum(x, 1), X),
    "nanmean": (lambda x: m.nanmean(x, 0, keepdim=True), X),
    "logit": (lambda x: m.logit(x, 0.1), P),
    "dist": (lambda x, y: m.dist(x, y, 3), P, V),
    "inner": (lambda x, y: m.inner(x, y), P, V),
    "ldexp": (lambda x, y: m.ldexp(x, y), P, V),
    "msort": (lambda x: m.msort(x), X),
    "addr": (lambda s, a, b: m.addr(s, a, b, beta=0.5), P, V[:3], V),
    "addbmm": (lambda s, a, b: m.addbmm(s, a, b, alpha=2), P[:, :2], SQ, SQ[..., :2]),
    "matrix_power": (lambda x: m.matrix_power(x, 3), SQ),
    "matrix_power_0": (lambda x: m.matrix_power(x, 0), SQ),
    "matrix_power_neg": (lambda x: m.matrix_power(x, -2), SQ),
    "mvlgamma": (lambda x: m.mvlgamma(x + 2, 3), P),
    "sinc": (lambda x: m.sinc(x), X),
    "ndtr": (lambda x: m.special.ndtr(x), X),
    "entr": (lambda x: m.special.entr(x), X),
    "xlog1py": (lambda x, y: m.special.xlog1py(x, y), X, P),
    "cov": (lambda x, f, w: m.cov(x, correction=2, fweights=f, aweights=w), P, minitorch.tensor([1, 2, 0, 3, 1, 1]),
            values(6, low=0.1, high=2)),
    "corrcoef": (lambda x: m.corrcoef(x), P),
    "index_reduce": (lambda x, i, s: x.index_reduce(0, i, s, "amax"), P, minitorch.tensor([0, 2]), P[:2]),
    "put": (lambda x, i, s: x.put(i, s, accumulate=True), P, minitorch.tensor([0, 5, 5]), V[:3]),
    "multi_dot": (lambda a, b, c: m.linalg.multi_dot([a, b, c]), P, P.T, V[:3]),
    "vecdot": (lambda x, y: m.linalg.vecdot(x, y), P, V),
    "cond": (lambda x: m.linalg.cond(x), SQ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_on_the_device(name):
    fn, *args = CASES[name]
    check_device(fn, *args)


@pytest.mark.parametrize("name", ["logit", "dist", "inner", "addr", "cov", "corrcoef", "sinc", "matrix_power"])
def test_gradients_reach_device_inputs(name):
    fn, *args = CASES[name]
    grads = []
    for device in ("cpu", "cuda"):
        leaves = [a.to(device).detach().requires_grad_(a.dtype.is_floating_point) for a in args]
        fn(*leaves).sum().backward()
        grads.append([leaf.grad for leaf in leaves if leaf.requires_grad])
    for g_cpu, g_dev in zip(*grads):
        assert g_dev.device.type == "cuda"
        np.testing.assert_allclose(g_dev.cpu().numpy(), g_cpu.numpy(), rtol=1e-5, atol=1e-8)


def test_errors_alike():
    raises_alike(lambda x, w: m.cov(x, aweights=w), P, -V)
    raises_alike(lambda x: m.matrix_power(x, 2), P)
    raises_alike(lambda x, y: m.inner(x, y), P, V[:2])
