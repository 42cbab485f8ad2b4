"""Tensors of 17 to 64 dims (PyTorch's limit, 64 dims as NumPy's since 2.0) through the ops of
every kind, against NumPy and PyTorch; 65 dims refused with PyTorch's error."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, check, check_grad, to_layout

NDIMS = (17, 33, 64)


def shape_of(n):
    """n dims, mostly 1 (a size-1 dim is the one that fits 64 dims in memory), a few 2s and a 3 so
    that no two neighbours merge everywhere."""
    s = [1] * n
    for d, v in ((0, 2), (n // 3, 3), (n // 2, 2), (n - 1, 2)):
        s[d] = v
    return tuple(s)


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", NDIMS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_elementwise_broadcast(n, layout):
    s = shape_of(n)
    b = list(s[3:])  # fewer dims; a 1 where a has its 2 at n // 2
    b[n // 2 - 3] = 1
    a_, b_ = data(s), data(tuple(b), 1)
    b_[(0,) * b_.ndim] = np.nan
    check(lambda m, x, y: x * y + x, lambda x, y: x * y + x, [a_, b_], layout=layout)


@pytest.mark.parametrize("n", NDIMS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reductions(n, layout):
    a = data(shape_of(n))
    dims = [0, n // 3, n - 1]
    check(lambda m, x: x.sum(dims), lambda x: x.sum(tuple(dims)), [a], layout=layout, atol=1e-5)
    check(lambda m, x: x.amax(n // 2, keepdim=True), lambda x: x.max(n // 2, keepdims=True), [a], layout=layout)
    check(lambda m, x: x.mean(), lambda x: x.mean(), [a], layout=layout)
    check(lambda m, x: x.cumsum(n // 3), lambda x: x.cumsum(n // 3), [a], layout=layout, atol=1e-5)


@pytest.mark.parametrize("n", NDIMS)
def test_permute_view_reshape(n):
    a = data(shape_of(n))
    perm = [int(p) for p in np.random.default_rng(n).permutation(n)]
    check(lambda m, x: x.permute(perm), lambda x: x.transpose(perm), [a])
    check(lambda m, x: x.permute(perm).reshape(tuple(reversed(a.shape))),
          lambda x: x.transpose(perm).reshape(tuple(reversed(a.shape))), [a])
    flat = (a.size,) + (1,) * (n - 1)
    check(lambda m, x: x.view(flat).view(a.shape), lambda x: x, [a])
    check(lambda m, x: x.flip([0, n - 1]), lambda x: np.flip(x, (0, n - 1)), [a])


@pytest.mark.parametrize("n", NDIMS)
def test_indexing(n):
    a = data(shape_of(n))
    check(lambda m, x: x[1, ..., 0], lambda x: x[1, ..., 0], [a])
    idx = np.array([1, 0, 1, 2])
    check(lambda m, x: x[:, idx] if n // 3 == 1 else x.select(0, 0)[..., 0], lambda x: x[:, idx] if n // 3 == 1
          else x[0][..., 0], [a])
    pick = [0] * n
    pick[n // 3] = idx
    check(lambda m, x: x[tuple(m.tensor(p) if isinstance(p, np.ndarray) else p for p in pick)],
          lambda x: x[tuple(pick)], [a])
    t = minitorch.tensor(a)
    t[0, ..., 1] = 5.0
    want = a.copy()
    want[0, ..., 1] = 5.0
    np.testing.assert_array_equal(as_numpy(t), want)


@pytest.mark.parametrize("n", NDIMS)
def test_cat_stack(n):
    a = data(shape_of(n))
    check(lambda m, x, y: m.cat([x, y, x], n // 3), lambda x, y: np.concatenate([x, y, x], n // 3), [a, a + 1])
    if n < 64:
        check(lambda m, x, y: m.stack([x, y], n // 2), lambda x, y: np.stack([x, y], n // 2), [a, a - 1])


@pytest.mark.parametrize("n", NDIMS)
def test_matmul_batch_dims(n):
    batch = list(shape_of(n - 2))
    x = data(tuple(batch) + (2, 3))
    batch[n // 3] = 1  # broadcast against x's 3
    y = data(tuple(batch) + (3, 4), 1)
    check(lambda m, p, q: m.matmul(p, q), lambda p, q: np.matmul(p, q), [x, y], atol=1e-5)


@pytest.mark.parametrize("n", NDIMS)
def test_printing_like_torch(n):
    torch = pytest.importorskip("torch")
    a = data(shape_of(n))
    assert repr(minitorch.tensor(a)) == repr(torch.tensor(a))
    assert repr(minitorch.zeros([0] + [1] * (n - 1))) == repr(torch.zeros([0] + [1] * (n - 1)))


@pytest.mark.parametrize("n", (17, 64))
def test_numpy_round_trip(n):
    a = data(shape_of(n))
    t = minitorch.from_numpy(a)
    assert tuple(t.shape) == a.shape
    back = t.numpy()
    assert back.shape == a.shape and np.shares_memory(a, back)
    p = minitorch.tensor(a).permute(list(reversed(range(n)))).numpy()
    np.testing.assert_array_equal(p, a.transpose())


def test_autograd_of_a_40_dim_op():
    s = shape_of(40)
    a, b = data(s).astype(np.float64), data(s[5:], 1).astype(np.float64)
    dims = [1, 40 // 3, 39]
    check_grad(lambda m, x, y: (x * y.exp()).sum(dims).permute(*reversed(range(37))), [a, b])
    check_grad(lambda m, x: m.cat([x, x * 2], 40 // 2).amax(0), [a])


def test_65_dims_raise_like_torch():
    msg = "only tensors with up to 64 dims are supported"
    with pytest.raises(RuntimeError, match=msg):
        minitorch.zeros([1] * 65)
    x = minitorch.zeros([1] * 64)
    for f in (lambda: x.unsqueeze(0), lambda: x.view([1] * 65), lambda: x.reshape([1] * 65),
              lambda: x[None], lambda: x.expand([1] * 65), lambda: minitorch.tensor(np.zeros(1)).view([1] * 65)):
        with pytest.raises(RuntimeError, match=msg):
            f()
    # where PyTorch itself refuses (a dim list over 65 dims), the same message
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=msg):
        torch.zeros([1] * 65).sum([0])


# ---- int lists that are not shapes: any length ----

@pytest.mark.parametrize("form", ["method", "split_with_sizes", "function", "C"])
def test_split_with_100_sizes(form):
    rng = np.random.default_rng(1)
    sizes = [int(s) for s in rng.integers(0, 4, 100)]
    a = data((3, sum(sizes), 2))
    fn = {"method": lambda m, x: x.split(sizes, 1),
          "split_with_sizes": lambda m, x: x.split_with_sizes(sizes, dim=1),
          "function": lambda m, x: m.split(x, sizes, 1),
          "C": lambda m, x: (m._C if m is minitorch else m).split_with_sizes(x, tuple(sizes), 1)}[form]
    for layout in LAYOUTS:
        pieces = fn(minitorch, to_layout(a, layout))
        want = np.split(a, np.cumsum(sizes)[:-1], 1)
        assert len(pieces) == 100
        for p, w in zip(pieces, want):
            np.testing.assert_array_equal(as_numpy(p), w)
    torch = pytest.importorskip("torch")
    x = minitorch.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    w = rng.standard_normal(100)
    sum(p.sum() * float(k) for p, k in zip(fn(minitorch, x), w)).backward()
    sum(p.sum() * float(k) for p, k in zip(fn(torch, tx), w)).backward()
    np.testing.assert_allclose(as_numpy(x.grad), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert [type(p.grad_fn).__name__ for p in fn(minitorch, x)[:2]] == [type(p.grad_fn).__name__
                                                                         for p in fn(torch, tx)[:2]]


def test_long_split_lists_errors_like_torch():
    torch = pytest.importorskip("torch")
    a = np.zeros((3, 200))
    for sizes in ([2] * 99, [2] * 99 + [4, -2], [2] * 98 + [2.0, 2]):
        errs = []
        for lib in (minitorch, torch):
            with pytest.raises((RuntimeError, TypeError)) as e:
                lib.tensor(a).split_with_sizes(sizes, 1)
            errs.append(e)
        assert errs[0].type is errs[1].type
        if errs[0].type is RuntimeError:
            assert str(errs[0].value).split("=[")[0] == str(errs[1].value).split("=[")[0]


def test_tensor_split_with_100_indices():
    idx = list(range(0, 200, 2))
    a = data((201, 2))
    got = minitorch.tensor(a).tensor_split(idx)
    want = np.split(a, idx)
    assert len(got) == len(want) == 101
    for g, w in zip(got, want):
        np.testing.assert_array_equal(as_numpy(g), w)


def test_shape_lists_still_stop_at_64():
    with pytest.raises(RuntimeError, match="only tensors with up to 64 dims are supported"):
        minitorch.zeros(1).view([1] * 100)
    with pytest.raises(RuntimeError, match="only tensors with up to 64 dims are supported"):
        minitorch.zeros([1] * 3).permute(list(range(100)))
