"""The helpers of torch.optim.optimizer that optimizers written after PyTorch's import
(_use_grad_for_differentiable, _get_value, _default_to_fused_or_foreach, _get_scalar_dtype,
_view_as_real, Optimizer._group_tensors_by_device_and_dtype, the doc fragments), against PyTorch's
where installed, and a Lion-style optimizer written with them and torch._foreach_* stepping as
PyTorch's does."""
import numpy as np
import pytest

import minitorch
from helpers import torch

LIBS = [minitorch] + ([torch] if torch is not None else [])


def _lion(lib):
    """An optimizer as third-party code writes one: PyTorch's helpers and foreach calls."""
    from importlib import import_module

    opt = import_module(lib.__name__ + ".optim.optimizer")

    class Lion(opt.Optimizer):
        def __init__(self, params, lr=1e-2, betas=(0.9, 0.99), weight_decay=0.1, foreach=None):
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay, foreach=foreach,
                                          differentiable=False))

        @opt._use_grad_for_differentiable
        def step(self, closure=None):
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                grads = [p.grad for p in params]
                avgs = [self.state[p].setdefault("exp_avg", lib.zeros_like(p)) for p in params]
                b1, b2 = group["betas"]
                grouped = opt.Optimizer._group_tensors_by_device_and_dtype([params, grads, avgs])
                for (ps, gs, ms), _ in grouped.values():
                    lib._foreach_mul_(ps, 1 - group["lr"] * group["weight_decay"])
                    update = lib._foreach_lerp(ms, gs, 1 - b1)
                    lib._foreach_add_(ps, lib._foreach_sign(update), alpha=-group["lr"])
                    lib._foreach_lerp_(ms, gs, 1 - b2)
            return None

    return Lion


def test_lion_written_with_foreach_as_torch():
    rng = np.random.default_rng(0)
    w0, x, y = rng.standard_normal((3, 4)), rng.standard_normal((8, 4)), rng.standard_normal((8, 3))
    results = []
    for lib in LIBS:
        w = lib.tensor(w0, requires_grad=True)
        b = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        optimizer = _lion(lib)([w, b], lr=0.05)
        for _ in range(5):
            optimizer.zero_grad()
            loss = ((lib.tensor(x) @ w.T + b - lib.tensor(y)) ** 2).mean()
            loss.backward()
            optimizer.step()
            assert not w.requires_grad or w.grad_fn is None
        results.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    assert not np.allclose(results[0][0], w0)
    if len(results) == 2:
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_helpers(lib):
    from importlib import import_module

    opt = import_module(lib.__name__ + ".optim.optimizer")
    p = [lib.ones(2), lib.nn.Parameter(lib.ones(1))]
    assert opt._default_to_fused_or_foreach(p, False, False) == (False, False)
    assert opt._default_to_fused_or_foreach(p, False, True) == (True, False)
    assert opt._default_to_fused_or_foreach(p, True, True) == (False, False)
    assert opt._default_to_fused_or_foreach([lib.ones(2, dtype=lib.int64)], False, True) == (False, False)
    assert opt._get_scalar_dtype() == lib.float32 and opt._get_value(lib.tensor(2.5)) == 2.5
    assert opt._get_value(3) == 3 and opt._stack_if_compiling([1]) == [1]
    assert opt._get_capturable_supported_devices() == ["cuda", "xpu", "hpu", "privateuseone", "xla"]
    assert opt._get_capturable_supported_devices(False)[-1] == "privateuseone"
    params, grads = [lib.ones(2, dtype=lib.complex64), lib.ones(2)], [lib.zeros(2, dtype=lib.complex64), lib.ones(2)]
    opt._view_as_real(params, grads)
    assert tuple(params[0].shape) == (2, 2) and tuple(grads[0].shape) == (2, 2) and tuple(params[1].shape) == (2,)
    for name in ("_params_doc", "_foreach_doc", "_fused_doc", "_capturable_doc", "_differentiable_doc",
                 "_maximize_doc"):
        assert isinstance(getattr(opt, name), str)
    with lib.no_grad():
        prev = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            assert opt._get_scalar_dtype() == lib.float64
        finally:
            lib.set_default_dtype(prev)


def test_use_grad_for_differentiable_sets_grad_mode():
    from minitorch.optim.optimizer import Optimizer, _use_grad_for_differentiable

    seen = []

    class Probe(Optimizer):
        @_use_grad_for_differentiable
        def step(self, closure=None):
            """docs kept"""
            seen.append(minitorch.is_grad_enabled())

    Probe([minitorch.ones(1, requires_grad=True)], dict(differentiable=False)).step()
    Probe([minitorch.ones(1, requires_grad=True)], dict(differentiable=True)).step()
    with minitorch.no_grad():
        Probe([minitorch.ones(1, requires_grad=True)], dict(differentiable=True)).step()
    assert seen == [False, True, True] and minitorch.is_grad_enabled()
    assert Probe.step.__doc__ == "docs kept"
