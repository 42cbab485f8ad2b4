"""autograd.detect_anomaly / set_detect_anomaly (the C engine's NaN check of each backward node,
PyTorch's message) and autograd.gradgradcheck, against PyTorch where it is installed."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch

LIBS = [minitorch] + ([torch] if torch is not None else [])


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    minitorch.set_anomaly_enabled(False, True)
    if torch is not None:
        torch.set_anomaly_enabled(False, True)


def _sqrt_nan(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    return x


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_detect_anomaly_raises_naming_the_node(lib):
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = lib.autograd.detect_anomaly()
    with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\.$"):
        with ctx:
            _sqrt_nan(lib)
    assert lib.is_anomaly_enabled() is False
    assert _sqrt_nan(lib).grad[0] != _sqrt_nan(lib).grad[0]  # off again: the NaN comes through


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_set_detect_anomaly_as_call_and_context(lib):
    lib.autograd.set_detect_anomaly(True)
    assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
    with pytest.raises(RuntimeError, match="SqrtBackward0"):
        _sqrt_nan(lib)
    with lib.autograd.set_detect_anomaly(False):
        assert not lib.is_anomaly_enabled()
        _sqrt_nan(lib)
    assert lib.is_anomaly_enabled()
    lib.autograd.set_detect_anomaly(False)
    assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_check_nan_false_and_forward_nan_allowed(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly(check_nan=False):
            x = lib.tensor([-1.0], requires_grad=True)
            x.sqrt().sum().backward()
            assert x.grad[0] != x.grad[0]
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        with lib.autograd.detect_anomaly():
            y = lib.tensor([-1.0, 2.0], requires_grad=True)
            (g,) = lib.autograd.grad(y.log().sum(), y)  # NaN forward, finite gradient: no error
            assert np.allclose(g.detach().numpy(), [-1.0, 0.5])


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_anomaly_in_a_later_input_and_custom_function(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g * float("nan")

    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match=r"Function 'BadBackward' returned nan values in its 1th output\."):
            with lib.autograd.detect_anomaly():
                Bad.apply(a, b).sum().backward()


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_gradgradcheck(lib):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    y = lib.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    assert lib.autograd.gradgradcheck(lambda a, b: (a.tanh() @ b).sin(), (x, y))
    assert lib.autograd.gradgradcheck(lambda a: a.pow(3).sum(), (x,))
    go = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    assert lib.autograd.gradgradcheck(lambda a: a.exp() * a, (x,), (go,))


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class WrongSecond(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * a.detach() ** 2  # detached: its derivative in a is lost

    x = minitorch.tensor([0.5, -1.5], dtype=minitorch.float64, requires_grad=True)
    assert minitorch.autograd.gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        minitorch.autograd.gradgradcheck(WrongSecond.apply, (x,))
    assert minitorch.autograd.gradgradcheck(WrongSecond.apply, (x,), raise_exception=False) is False
