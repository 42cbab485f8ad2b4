"""trapezoid/trapz, cumulative_trapezoid, gradient (spacing as a number, numbers or coordinates;
dim; edge_order 1 and 2), vander, and channel_shuffle (functional and nn.ChannelShuffle):
against NumPy (float64) and PyTorch (values, dtypes, shapes, empty and NaN inputs, layouts),
gradients with check_grad, PyTorch's errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, check, check_grad, same_as_torch, to_layout, torch

RNG = np.random.default_rng(20)
NAN = float("nan")


def np_areas(y, x=None, dx=1.0, axis=-1):
    """The trapezoids' areas along axis, in float64: (y[i+1] + y[i]) / 2 times x[i+1] - x[i] or dx."""
    y = np.asarray(y, dtype=np.float64)
    d = np.diff(x) if x is not None else dx
    if x is not None and np.ndim(x) == 1:
        shape = [1] * y.ndim
        shape[axis] = -1
        d = d.reshape(shape)
    y0 = np.take(y, range(1, y.shape[axis]), axis)
    y1 = np.take(y, range(0, y.shape[axis] - 1), axis)
    return d * (y0 + y1) / 2.0


def np_trapezoid(y, x=None, dx=1.0, axis=-1):
    return np_areas(y, x, dx, axis).sum(axis)


def np_cumulative(y, x=None, dx=1.0, axis=-1):
    return np.cumsum(np_areas(y, x, dx, axis), axis)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_trapezoid_and_cumulative(layout, dim):
    y = RNG.standard_normal((4, 5, 6))
    y[0, 0, 0] = NAN
    x = np.cumsum(RNG.uniform(0.1, 1, y.shape[dim]))
    check(lambda m, t: m.trapezoid(t, dim=dim), lambda t: np_trapezoid(t, axis=dim), [y], layout=layout)
    check(lambda m, t: m.trapezoid(t, dx=0.25, dim=dim), lambda t: np_trapezoid(t, dx=0.25, axis=dim), [y],
          layout=layout)
    check(lambda m, t, c: m.trapezoid(t, c, dim=dim), lambda t, c: np_trapezoid(t, c, axis=dim), [y, x],
          layout=layout)
    check(lambda m, t, c: m.trapz(t, c, dim=dim), lambda t, c: np_trapezoid(t, c, axis=dim), [y, x], layout=layout)
    check(lambda m, t: m.cumulative_trapezoid(t, dim=dim), lambda t: np_cumulative(t, axis=dim), [y], layout=layout)
    check(lambda m, t: m.cumulative_trapezoid(t, dx=3, dim=dim), lambda t: np_cumulative(t, dx=3, axis=dim), [y],
          layout=layout)
    check(lambda m, t, c: m.cumulative_trapezoid(t, c, dim=dim), lambda t, c: np_cumulative(t, c, axis=dim), [y, x],
          layout=layout)


def test_trapezoid_shapes_and_dtypes_as_torch():
    if torch is None:
        pytest.skip("needs PyTorch")
    yi = np.arange(6).reshape(2, 3)
    same_as_torch(lambda m, t: m.trapezoid(t), [yi], grad=False)
    same_as_torch(lambda m, t: m.trapezoid(t, dx=2), [yi], grad=False)
    same_as_torch(lambda m, t, c: m.trapezoid(t, c), [yi, np.array([1, 2, 4])], grad=False)
    same_as_torch(lambda m, t, c: m.trapezoid(t, c), [yi.astype(np.float32), np.ones((2, 3), np.float32)])
    same_as_torch(lambda m, t, c: m.trapezoid(t, c), [yi.astype(np.float32), np.ones(3, np.float32)])
    same_as_torch(lambda m, t: m.trapezoid(t), [np.zeros((2, 0), np.float32)])
    same_as_torch(lambda m, t: m.trapezoid(t, dim=0), [np.ones((1, 3))])
    same_as_torch(lambda m, t: m.cumulative_trapezoid(t), [np.zeros((2, 0), np.float32)])
    same_as_torch(lambda m, t: m.cumulative_trapezoid(t), [yi], grad=False)
    same_as_torch(lambda m, t, c: m.trapezoid(t, c), [yi.astype(np.float32), np.ones(2, np.float32)])
    same_as_torch(lambda m, t: m.trapezoid(t), [np.float32(3.0)])


def test_trapezoid_gradients():
    y = RNG.standard_normal((3, 5))
    x = np.cumsum(RNG.uniform(0.1, 1, 5))
    check_grad(lambda m, t: m.trapezoid(t, dx=0.5), [y])
    check_grad(lambda m, t, c: m.trapezoid(t, c), [y, x])
    check_grad(lambda m, t, c: m.cumulative_trapezoid(t, c, dim=1), [y, x])


GRADIENT_CASES = [
    ({}, {}),
    ({"spacing": 2.0}, {"varargs": (2.0, 2.0, 2.0)}),
    ({"spacing": [0.5, 2.0, 3.0]}, {"varargs": (0.5, 2.0, 3.0)}),
    ({"dim": 1}, {"axis": 1}),
    ({"dim": [0, 2], "spacing": [1.5, 0.25]}, {"axis": (0, 2), "varargs": (1.5, 0.25)}),
    ({"edge_order": 2}, {"edge_order": 2}),
    ({"edge_order": 2, "dim": -1, "spacing": 0.5}, {"edge_order": 2, "axis": -1, "varargs": (0.5,)}),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(GRADIENT_CASES)))
def test_gradient_uniform_spacing(case, layout):
    kw, np_kw = GRADIENT_CASES[case]
    f = RNG.standard_normal((4, 5, 6))
    f[1, 1, 1] = NAN
    want = np.gradient(f, *np_kw.get("varargs", ()), **{k: v for k, v in np_kw.items() if k != "varargs"})
    want = want if isinstance(want, (list, tuple)) else [want]
    got = minitorch.gradient(to_layout(f, layout), **kw)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(as_numpy(g), w, rtol=1e-12, atol=1e-12)
    if torch is not None:
        for g, w in zip(got, torch.gradient(torch.tensor(f), **kw)):
            np.testing.assert_allclose(as_numpy(g), w.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order):
    f = RNG.standard_normal((5, 7))
    xs = [np.cumsum(RNG.uniform(0.1, 1, n)) for n in f.shape]
    got = minitorch.gradient(minitorch.tensor(f), spacing=[minitorch.tensor(c) for c in xs], edge_order=edge_order)
    want = np.gradient(f, *xs, edge_order=edge_order)
    for g, w in zip(got, want):
        np.testing.assert_allclose(as_numpy(g), w, rtol=1e-11, atol=1e-12)
    one = minitorch.gradient(minitorch.tensor(f), spacing=(minitorch.tensor(xs[1]),), dim=1, edge_order=edge_order)
    np.testing.assert_allclose(as_numpy(one[0]), want[1], rtol=1e-11, atol=1e-12)
    if torch is not None:
        t = torch.gradient(torch.tensor(f), spacing=[torch.tensor(c) for c in xs], edge_order=edge_order)
        for g, w in zip(got, t):
            np.testing.assert_allclose(as_numpy(g), w.numpy(), rtol=1e-11, atol=1e-12)


def test_gradient_dtypes_and_gradients():
    if torch is not None:
        same_as_torch(lambda m, t: m.gradient(t)[1], [np.arange(12).reshape(3, 4)], grad=False)
        same_as_torch(lambda m, t: m.gradient(t, spacing=2, edge_order=2)[0], [RNG.standard_normal((3, 4))])
        assert minitorch.gradient(minitorch.tensor(3.0)) == ()
    check_grad(lambda m, t: m.gradient(t, edge_order=2)[0] * 2 + m.gradient(t)[1], [RNG.standard_normal((4, 5))])
    check_grad(lambda m, t, c: m.gradient(t, spacing=[c], dim=1, edge_order=2)[0],
               [RNG.standard_normal((3, 5)), np.cumsum(RNG.uniform(0.5, 1, 5))])


@pytest.mark.parametrize("fn", [
    lambda m, t: m.gradient(t, dim=1, edge_order=3),
    lambda m, t: m.gradient(t, edge_order=2),
    lambda m, t: m.gradient(t, spacing=[2.0]),
    lambda m, t: m.gradient(t, spacing=[1.0, 2.0, 3.0], dim=[0]),
    lambda m, t: m.gradient(t, spacing=[m.ones(2, 2)], dim=0),
    lambda m, t: m.gradient(t, dim=2),
    lambda m, t: m.gradient(t.to(m.uint8)),
    lambda m, t: m.trapezoid(t, m.tensor([1.0, 2.0])),
    lambda m, t: m.trapezoid(t[0, 0]),
    lambda m, t: m.vander(t),
    lambda m, t: m.vander(t[0], N=-1),
    lambda m, t: m.nn.functional.channel_shuffle(t, 2),
    lambda m, t: m.nn.functional.channel_shuffle(t[None], 0),
    lambda m, t: m.nn.functional.channel_shuffle(t[None], -2),
    lambda m, t: m.nn.functional.channel_shuffle(t[None], 3),
])
def test_errors_as_torch(fn):
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(Exception) as got:
        fn(minitorch, minitorch.tensor(a))
    if torch is not None:
        with pytest.raises(Exception) as want:
            fn(torch, torch.tensor(a))
        assert isinstance(got.value, type(want.value)) or isinstance(want.value, type(got.value))
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_vander(dtype):
    x = np.array([1, 2, 0, 3, 1]) if dtype != "bool" else np.array([True, False, True])
    x = x.astype(dtype)
    for n, increasing in ((None, False), (3, True), (0, False), (1, False), (6, True)):
        out = minitorch.vander(minitorch.tensor(x), N=n, increasing=increasing)
        np.testing.assert_array_equal(as_numpy(out), np.vander(x.astype(np.int64) if dtype == "bool" else x, n,
                                                                increasing))
        if torch is not None:
            same_as_torch(lambda m, t: m.vander(t, N=n, increasing=increasing), [x], grad=False)
    # finite differences only: PyTorch 2.13's own vander backward fails (a saved view its in-place
    # cumprod_ modifies)
    x = minitorch.tensor(RNG.standard_normal(3), requires_grad=True)
    assert minitorch.autograd.gradcheck(lambda t: minitorch.vander(t, 4), (x,))


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_channel_shuffle(groups):
    x = RNG.standard_normal((2, 6, 3, 4))
    ref = lambda a: a.reshape(2, groups, 6 // groups, 3, 4).swapaxes(1, 2).reshape(2, 6, 3, 4)  # noqa: E731
    for layout in LAYOUTS:
        check(lambda m, t: m.nn.functional.channel_shuffle(t, groups), ref, [x], layout=layout)
    check(lambda m, t: m.channel_shuffle(t, groups), ref, [x])
    check(lambda m, t: m.nn.ChannelShuffle(groups)(t), ref, [x])
    check_grad(lambda m, t: m.nn.functional.channel_shuffle(t, groups), [x[:1, :, :2, :2]])
    assert repr(minitorch.nn.ChannelShuffle(groups)) == f"ChannelShuffle(groups={groups})"
    check(lambda m, t: m.nn.functional.channel_shuffle(t, 2),
          lambda a: a.reshape(1, 2, 2, 2).swapaxes(1, 2).reshape(1, 4, 2), [np.arange(8.0).reshape(1, 4, 2)])
