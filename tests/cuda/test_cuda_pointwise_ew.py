"""The everyday pointwise ops on the CUDA device (a GPU or the emulated one) against
the CPU: the generated elementwise kernels of each new row (contiguous, transposed, sliced,
broadcast, NaN and inf), logcumsumexp's scan kernel, the composites, gradients, and errors."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device, raises_alike
from unary_table import UNARY, draw_values

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(19)
NAN, INF = float("nan"), float("inf")


def values(shape, dtype=minitorch.float32, low=-3.0, high=3.0, special=True):
    a = RNG.uniform(low, high, shape)
    if special and a.size > 6:
        a.flat[:6] = [NAN, INF, -INF, 0.0, -0.0, 1.0]
    return minitorch.tensor(a).to(dtype)


def layouts(x):
    yield x
    if x.dim() == 2:
        yield x.t().contiguous().t()
        yield minitorch.cat([x, x], 1)[:, ::2]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_unary(name, dtype):
    """Each row of the unary table (tests/unary_table.py) on the device against the CPU: values
    drawn in its domain with NaN, +-inf and +-0, every layout, 0-dim and empty, and its in-place
    form; a dtype the CPU refuses is refused alike."""
    row = UNARY[name]
    f = lambda x: row.fn(minitorch, x)  # noqa: E731
    x = minitorch.tensor(draw_values(RNG, name, (6, 5), dtype)).to(getattr(minitorch, dtype))
    try:
        f(x)
    except (RuntimeError, NotImplementedError) as e:  # the CUDA kernel refuses the dtype too
        with pytest.raises(type(e)):
            f(x.cuda())
        return
    for a in layouts(x):
        check_device(f, a, atol=1e-5, rtol=1e-4)
    zero_dim = minitorch.tensor(draw_values(RNG, name, (), dtype)).to(x.dtype)
    check_device(f, zero_dim, atol=1e-5, rtol=1e-4)
    check_device(f, x[:0], atol=1e-5, rtol=1e-4)
    if row.inplace is not None:
        try:
            want = row.inplace(x.clone())
        except (RuntimeError, NotImplementedError) as e:  # an integer self refuses a float result
            with pytest.raises(type(e)):
                row.inplace(x.cuda())
            return
        got = x.cuda()
        assert row.inplace(got) is got
        assert_same(got, want, atol=1e-5, rtol=1e-4)


BINARY = {
    "atan2": minitorch.atan2, "copysign": minitorch.copysign, "logaddexp": minitorch.logaddexp,
    "logaddexp2": minitorch.logaddexp2, "xlogy": minitorch.xlogy, "fmax": minitorch.fmax, "fmin": minitorch.fmin,
    "heaviside": minitorch.heaviside, "float_power": minitorch.float_power,
    "logical_xor": minitorch.logical_xor, "isclose": minitorch.isclose,
    "isclose_nan": lambda a, b: minitorch.isclose(a, b, rtol=0.5, equal_nan=True),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_binary(name, dtype):
    f = BINARY[name]
    x, y = values((6, 5), dtype), values((5,), dtype)
    for a in layouts(x):
        check_device(f, a, y, atol=1e-5, rtol=1e-4)
    check_device(f, y, x, atol=1e-5, rtol=1e-4)
    check_device(f, values((), dtype, special=False), y, atol=1e-5, rtol=1e-4)


def test_integer_binaries_and_operators():
    i = minitorch.tensor(RNG.integers(-20, 20, (6, 5)))
    k = minitorch.tensor(RNG.integers(-3, 70, (5,)))
    for f in (lambda a, b: a ^ b, lambda a, b: a << b, lambda a, b: a >> b, lambda a, b: 3 << b,
              lambda a, b: a.to(minitorch.int32) >> b.to(minitorch.int32), lambda a, b: minitorch.fmax(a, b),
              lambda a, b: minitorch.heaviside(a, b), lambda a, b: minitorch.logical_xor(a, b),
              lambda a, b: minitorch.isclose(a, b, atol=2), lambda a, b: abs(a), lambda a, b: (a > 0) ^ (b > 0),
              lambda a, b: minitorch.addcmul(a, a, b, value=2), lambda a, b: minitorch.count_nonzero(a, 1)):
        for a in layouts(i):
            check_device(f, a, k)
    g = i.cuda()
    g ^= 5
    g <<= 1
    assert_same(g, (i ^ 5) << 1)
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        i.cuda() << 1.5


def test_ternaries_and_in_place():
    x, y, w = values((4, 5)), values((5,)), values((4, 1), low=0.5, high=2, special=False)
    for f in (lambda a, b, c: minitorch.lerp(a, b, 0.3), lambda a, b, c: minitorch.lerp(a, b, c),
              lambda a, b, c: minitorch.lerp(a, b, c.sum()), lambda a, b, c: minitorch.addcmul(a, b, c, value=0.5),
              lambda a, b, c: minitorch.addcdiv(a, b, c, value=-2), lambda a, b, c: a.clone().lerp_(b, 0.8),
              lambda a, b, c: a.clone().addcdiv_(b, c), lambda a, b, c: a.clone().addcmul_(b, c),
              lambda a, b, c: a.clone().nan_to_num_(posinf=9.0), lambda a, b, c: a.clone().atan2_(b),
              lambda a, b, c: a.clone().floor_(), lambda a, b, c: a.clone().erfinv_(),
              lambda a, b, c: a.clone().clip_(max=0.5), lambda a, b, c: a.double().float_power_(b)):
        for a in layouts(x):
            check_device(f, a, y, w, atol=1e-5, rtol=1e-4)
    raises_alike(lambda a: minitorch.lerp(a, a.double(), 0.5), x)
    raises_alike(lambda a: minitorch.addcdiv(a, a.long(), a.long()), x)
    raises_alike(lambda a: a.float_power_(2), x)


def test_logcumsumexp():
    for dtype in (minitorch.float32, minitorch.float64):
        x = values((5, 7), dtype)
        for d in (0, 1, -1):
            for a in layouts(x):
                check_device(lambda t: minitorch.logcumsumexp(t, d), a, atol=1e-5, rtol=1e-5)
        check_device(lambda t: t.logcumsumexp(0), values((), dtype, special=False))
        check_device(lambda t: t.logcumsumexp(1), values((2, 0), dtype))
    with pytest.raises(NotImplementedError, match="\"logcumsumexp_out_cuda\" not implemented for 'Long'"):
        minitorch.logcumsumexp(minitorch.tensor([1, 2], device="cuda"), 0)


def test_gradients_on_the_device():
    a = RNG.uniform(0.5, 2, (3, 4))
    fns = (lambda m: m.logcumsumexp(1), lambda m: m.lgamma() + m.digamma(), lambda m: (m / 3).erfinv(),
           lambda m: minitorch.lerp(m, m * 2, m / 4), lambda m: minitorch.atan2(m, m + 1),
           lambda m: minitorch.addcdiv(m, m, m + 1), lambda m: minitorch.xlogy(m, m), lambda m: m.nan_to_num())
    for f in fns:
        grads = []
        for dev in ("cpu", "cuda"):
            x = minitorch.tensor(a, device=dev).requires_grad_(True)
            f(x).sum().backward()
            grads.append(x.grad)
        assert_same(grads[1], grads[0], atol=1e-10, rtol=1e-9)


def test_composites_views_and_comparisons():
    x = values((4, 6))
    for f in (lambda a: minitorch.broadcast_to(a[:, :1], (4, 3)), lambda a: minitorch.broadcast_tensors(a, a[0])[1],
              lambda a: a.view(minitorch.int32), lambda a: a[:, 2:].view(minitorch.float64),
              lambda a: a.type_as(a[0].double())):
        check_device(f, x)
    g = x.cuda()
    assert minitorch.equal(g, g.clone()) is False  # NaN in it
    assert minitorch.equal(g.nan_to_num(), g.nan_to_num().clone())
    assert minitorch.allclose(g, g, equal_nan=True)
    with pytest.raises(RuntimeError, match="Cannot compare two tensors on different devices. Got: cpu and cuda:0"):
        minitorch.equal(x, g)
    assert minitorch.as_tensor(g) is g and minitorch.as_tensor(x, device="cuda").is_cuda
