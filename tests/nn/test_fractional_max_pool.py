"""F.fractional_max_pool2d/3d (and _with_indices), nn.FractionalMaxPool2d/3d against PyTorch: given
_random_samples, the same outputs and indices exactly (float32, float64, float16) and the same
gradients; drawing their own, windows of the right size at valid starts (the first at 0, the last
at size - k) whose maxima the outputs are; shapes from output_ratio; PyTorch's errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check_grad, same_as_torch, same_error, torch

RNG = np.random.default_rng(41)
F = minitorch.nn.functional


def pool(nd):
    return "fractional_max_pool2d" if nd == 2 else "fractional_max_pool3d"


CASES = [
    (2, (2, 3, 7, 9), (2, 3), (4, 5)),
    (2, (3, 8, 6), 2, 3),
    (2, (1, 2, 5, 5), 1, (5, 5)),
    (2, (2, 2, 6, 6), 3, 1),
    (3, (2, 3, 5, 6, 7), (2, 2, 3), (3, 4, 4)),
    (3, (2, 6, 5, 7), 2, (2, 3, 4)),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("nd,shape,k,out", CASES)
def test_given_samples_same_as_torch(nd, shape, k, out, dtype, layout):
    x = RNG.standard_normal(shape).astype(dtype)
    n = shape[0] if len(shape) == nd + 2 else 1
    s = RNG.random((n, shape[-nd - 1], nd)).astype(dtype)

    def run(m, x):
        f = getattr(m.nn.functional, pool(nd))
        return f(x, k, out, return_indices=True, _random_samples=m.tensor(s))

    same_as_torch(lambda m, x: run(m, x)[0], [x], layout=layout, grad=dtype != "float16", atol=0, rtol=0)
    same_as_torch(lambda m, x: run(m, x)[1], [x], layout=layout, grad=False)


@pytest.mark.parametrize("nd,shape,k,out", CASES)
def test_gradients(nd, shape, k, out):
    x = RNG.standard_normal(shape)
    n = shape[0] if len(shape) == nd + 2 else 1
    s = RNG.random((n, shape[-nd - 1], nd))
    check_grad(lambda m, x: getattr(m.nn.functional, pool(nd))(x, k, out, _random_samples=m.tensor(s)), [x])


def numpy_starts(u, size, out, k):
    """The window starts of Graham's fractional pooling as PyTorch documents them."""
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((j + u) * alpha) - int(u * alpha) for j in range(out - 1)] + [size - k]


@pytest.mark.parametrize("nd", [2, 3])
def test_own_draws_are_maxima_of_valid_windows(nd):
    sizes, k, outs = ((9, 11), (2, 3), (5, 6)) if nd == 2 else ((6, 7, 8), (2, 3, 2), (3, 4, 5))
    x = RNG.standard_normal((2, 3) + sizes)
    minitorch.manual_seed(3)
    out, idx = getattr(F, pool(nd))(minitorch.tensor(x), k, outs, return_indices=True)
    assert tuple(out.shape) == (2, 3) + outs and tuple(idx.shape) == (2, 3) + outs
    minitorch.manual_seed(3)
    u = minitorch.rand(2, 3, nd, dtype=minitorch.float64).numpy()  # the draws it made
    assert ((u >= 0) & (u < 1)).all()
    column = (1, 0) if nd == 2 else (0, 1, 2)  # PyTorch's: (W, H) in 2-D, (T, H, W) in 3-D
    out, idx = out.numpy(), idx.numpy()
    for b in range(2):
        for c in range(3):
            starts = [numpy_starts(u[b, c, column[d]], sizes[d], outs[d], k[d]) for d in range(nd)]
            for d in range(nd):
                assert starts[d][0] == 0 and starts[d][-1] == sizes[d] - k[d]
                assert all(0 <= s1 - s0 <= k[d] + 1 for s0, s1 in zip(starts[d], starts[d][1:]))
            for o in np.ndindex(*outs):
                window = x[(b, c) + tuple(slice(starts[d][o[d]], starts[d][o[d]] + k[d]) for d in range(nd))]
                assert out[(b, c) + o] == window.max()
                assert x[b, c].flat[idx[(b, c) + o]] == window.max()


@pytest.mark.parametrize("nd", [2, 3])
def test_ratio_shapes_and_module(nd):
    shape = (2, 3, 10, 7) if nd == 2 else (2, 3, 10, 7, 9)
    x = minitorch.randn(*shape)
    ratio = (0.5,) * nd
    want = tuple(int(s * 0.5) for s in shape[2:])
    assert tuple(getattr(F, pool(nd))(x, 2, output_ratio=ratio).shape) == (2, 3) + want
    cls = getattr(minitorch.nn, f"FractionalMaxPool{nd}d")
    m = cls(2, output_ratio=0.5, return_indices=True)
    out, idx = m(x)
    assert tuple(out.shape) == (2, 3) + want and idx.dtype == minitorch.int64
    samples = minitorch.rand(2, 3, nd)
    fixed = cls(2, output_size=3, _random_samples=samples)
    assert "_random_samples" in dict(fixed.named_buffers())
    np.testing.assert_array_equal(fixed(x).numpy(), getattr(F, pool(nd))(x, 2, 3, _random_samples=samples).numpy())
    with_idx = getattr(F, pool(nd) + "_with_indices")(x, 2, 3, _random_samples=samples)
    np.testing.assert_array_equal(with_idx[0].numpy(), fixed(x).numpy())


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("nd", [2, 3])
def test_module_args_and_repr(nd):
    name = f"FractionalMaxPool{nd}d"
    for kw in [dict(output_size=3), dict(output_ratio=0.4), dict(output_size=(2,) * nd)]:
        a, b = getattr(minitorch.nn, name)(2, **kw), getattr(torch.nn, name)(2, **kw)
        assert repr(a) == repr(b)
        assert (a.kernel_size, a.output_size, a.output_ratio) == (b.kernel_size, b.output_size, b.output_ratio)
    for kw in [dict(), dict(output_size=3, output_ratio=0.5), dict(output_ratio=1.5), dict(output_ratio=0)]:
        with pytest.raises(ValueError) as got:
            getattr(minitorch.nn, name)(2, **kw)
        with pytest.raises(ValueError) as want:
            getattr(torch.nn, name)(2, **kw)
        assert str(got.value) == str(want.value)


def s2(n=2, c=3, nd=2, dtype=None):
    return lambda m: m.rand(n, c, nd, dtype=dtype)


ERRORS = [
    (2, (2, 3, 7, 9), dict(kernel_size=8, output_size=(4, 5))),
    (2, (2, 3, 7, 9), dict(kernel_size=2, output_size=(7, 5))),
    (2, (2, 3, 7, 9), dict(kernel_size=(2, 3, 2), output_size=3)),
    (2, (2, 3, 7, 9), dict(kernel_size=2, output_size=(3, 3, 3))),
    (2, (2, 3, 7, 9), dict(kernel_size=2)),
    (2, (2, 3, 7, 9), dict(kernel_size=2, output_size=3, _random_samples=s2(nd=3))),
    (2, (2, 3, 7, 9), dict(kernel_size=2, output_size=3, _random_samples=s2(n=1))),
    (2, (2, 3, 7, 9), dict(kernel_size=2, output_size=3, _random_samples=s2(c=2))),
    (2, (2, 3, 7, 9), dict(kernel_size=2, output_size=3, _random_samples=lambda m: m.rand(2, 3))),
    (2, (7, 9), dict(kernel_size=2, output_size=3, _random_samples=s2(1, 3))),
    (2, (2, 3, 0, 9), dict(kernel_size=1, output_size=2)),
    (3, (2, 3, 5, 6, 7), dict(kernel_size=2, output_size=(2, 5, 2))),
    (3, (2, 3, 5, 6, 7), dict(kernel_size=2, output_size=(2, 2, 6))),
    (3, (2, 3, 5, 6, 7), dict(kernel_size=2, output_size=(4, 2, 2))),
    (3, (2, 3, 5, 6, 7), dict(kernel_size=(2, 2), output_size=2)),
    (3, (2, 3, 5, 6, 7), dict(kernel_size=2, output_size=2, _random_samples=s2(nd=2))),
    (3, (2, 3, 0, 6, 7), dict(kernel_size=2, output_size=2)),
]


@pytest.mark.parametrize("nd,shape,kw", ERRORS)
def test_errors(nd, shape, kw):
    def run(m, x):
        args = dict(kw)
        if "_random_samples" in args:
            args["_random_samples"] = args["_random_samples"](m)
        return getattr(m.nn.functional, pool(nd))(x, **args)

    same_error(run, np.zeros(shape, np.float32))


def test_dtype_errors():
    same_error(lambda m, x: F.fractional_max_pool2d(x, 2, 3, _random_samples=m.rand(2, 3, 2).double())
               if m is minitorch else m.nn.functional.fractional_max_pool2d(
                   x, 2, 3, _random_samples=m.rand(2, 3, 2).double()), np.zeros((2, 3, 7, 9), np.float32))
    same_error(lambda m, x: m.nn.functional.fractional_max_pool2d(x, 2, 3, _random_samples=m.zeros(2, 3, 2).int()),
               np.zeros((2, 3, 7, 9), np.int32))
