"""The small dtypes (uint8, int8, int16, float16, bfloat16) on CUDA: copies both ways and casts
between every pair of dtypes on the device (cuda/kernels.cu's cast and fill tables), and ops
through the dispatcher's widening (csrc/dispatch/widen.c), equal to the CPU's results: the same
float32 kernels' formulas rounded once, so elementwise results equal exactly; reductions and
products within two units in the last place of the dtype (the devices sum in other orders)."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
SMALL = ["uint8", "int8", "int16", "float16", "bfloat16"]
VALUES = [0.0, 1.0, -1.0, 2.5, -3.75, 127.9, 200.0, 255.0, -128.0, 1e-3, 65519.0, 65520.0, 1e6, float("inf"),
          float("nan")]


def values(t):
    return np.asarray(t.cpu().double().tolist(), dtype=np.float64)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_casts_on_the_device_equal_the_cpu(src, dst):
    finite = [v for v in VALUES if np.isfinite(v) and abs(v) < 2 ** 31] if dst not in ("float16", "bfloat16",
                                                                                       "float32", "float64") else VALUES
    x = minitorch.tensor(finite, dtype=minitorch.float64).to(getattr(minitorch, src))
    want = x.to(getattr(minitorch, dst))
    got = x.cuda().to(getattr(minitorch, dst))
    assert got.device.type == "cuda" and got.dtype == want.dtype
    np.testing.assert_array_equal(values(got), values(want))
    # strided, and across devices with a cast in the copy
    np.testing.assert_array_equal(values(x.cuda()[::2].to(getattr(minitorch, dst))), values(want[::2]))


@pytest.mark.parametrize("name", SMALL)
def test_copies_and_fills(name):
    dt = getattr(minitorch, name)
    x = minitorch.arange(12, dtype=dt).reshape(3, 4)
    d = x.cuda()
    assert d.dtype == dt and d.cpu().tolist() == x.tolist()
    d.fill_(5)
    assert d.cpu().tolist() == [[5] * 4] * 3
    d.copy_(x.t().t())
    assert d.t().contiguous().cpu().tolist() == x.t().tolist()
    assert minitorch.zeros(2, dtype=dt, device="cuda").cpu().tolist() == [0, 0]
    assert minitorch.full((2,), 3, dtype=dt, device="cuda").cpu().tolist() == [3, 3]


@pytest.mark.parametrize("name", SMALL)
def test_ops_equal_the_cpu(name):
    dt = getattr(minitorch, name)
    rng = np.random.default_rng(0)
    a = rng.uniform(-4, 4, (5, 6)) if dt.is_floating_point else rng.integers(-20, 100, (5, 6))
    x = minitorch.tensor(a).to(dt)
    exact = [lambda v: v + v, lambda v: v * 3, lambda v: v.max(-1).values, lambda v: v.abs(), lambda v: v > 1,
             lambda v: minitorch.where(v > 0, v, v * 2), lambda v: v.t().contiguous(), lambda v: v[1:, ::2] - 1]
    if dt.is_floating_point:
        exact += [lambda v: v.exp(), lambda v: v.sigmoid(), lambda v: v.relu()]
    else:
        exact += [lambda v: v // 3, lambda v: v % 7, lambda v: v & 6, lambda v: v + 250]
    for f in exact:
        want, got = f(x), f(x.cuda())
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(values(got), values(want))
    if dt.is_floating_point:
        eps = minitorch.finfo(dt).eps
        for f in (lambda v: v.sum(-1), lambda v: v @ v.t(), lambda v: v.softmax(-1), lambda v: v.mean()):
            want, got = f(x), f(x.cuda())
            assert got.dtype == want.dtype == dt
            np.testing.assert_allclose(values(got), values(want), rtol=2 * eps, atol=2 * eps * np.abs(a).max())


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_autograd_on_the_device(name):
    dt = getattr(minitorch, name)
    a = np.random.default_rng(1).standard_normal((3, 4))
    grads = []
    for dev in ("cpu", "cuda"):
        x = minitorch.tensor(a).to(dt).to(dev).requires_grad_()
        (x.tanh() * x).sum().backward()
        assert x.grad.dtype == dt and x.grad.device.type == dev
        grads.append(values(x.grad))
    np.testing.assert_array_equal(grads[0], grads[1])
