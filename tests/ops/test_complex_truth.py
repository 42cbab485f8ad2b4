"""A complex value is true when either part is nonzero (NaN included), as NumPy and PyTorch read
it: casts to bool, bool(), any/all and the logical ops. The cast took the real part alone, so
3e-5j was False (a silent wrong answer), and any/all/logical_* raised for complex."""
import warnings

import numpy as np
import pytest

import minitorch

VALUES = np.array([3e-5j, 0j, 1 + 0j, complex("nan"), complex(0, float("nan")), -2j, 0.5 + 0.5j, -0.0j],
                  dtype=np.complex128)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_cast_to_bool_keeps_both_parts_without_a_warning(dtype):
    x = minitorch.tensor(VALUES.astype(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # only a cast to a real dtype drops the imaginary part
        got = [x.to(minitorch.bool), x.bool(), x.type(minitorch.bool)]
        into = minitorch.zeros(len(VALUES), dtype=minitorch.bool)
        into.copy_(x)
    for g in got + [into, x[::2].bool()]:
        want = VALUES[::2] if g.shape[0] != len(VALUES) else VALUES
        assert g.tolist() == (want != 0).tolist()
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        assert x.to(minitorch.float64)[0].item() == 0.0
    assert [bool(minitorch.tensor(v)) for v in VALUES] == [bool(v) for v in VALUES]


@pytest.mark.parametrize("dims", [None, 0, 1, (0, 1)])
def test_any_all_of_complex(dims):
    v = VALUES.reshape(2, 4)
    x = minitorch.tensor(v.astype(np.complex64))
    for name in ("any", "all"):
        got = getattr(minitorch, name)(x) if dims is None else getattr(minitorch, name)(x, dim=dims)
        want = getattr(np, name)(v != 0, axis=dims)
        assert np.array_equal(got.numpy(), want), name


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_of_complex(name):
    rng = np.random.default_rng(0)
    a = VALUES
    b = rng.permutation(VALUES)
    mixed = np.array([1.0, 0.0, 0.0, 2.0, 0.0, -1.0, 0.0, 3.0])
    for left, right in ((a, b), (a, mixed), (mixed, a), (a[:, None], b[None, :])):
        got = getattr(minitorch, name)(minitorch.tensor(left), minitorch.tensor(right))
        want = getattr(np, name)(left, right)
        assert np.array_equal(got.numpy(), want)
    if name == "logical_xor":  # minitorch's logical_xor has no out= yet
        return
    out = minitorch.empty(len(a), dtype=minitorch.bool)
    assert getattr(minitorch, name)(minitorch.tensor(a), minitorch.tensor(b), out=out) is out
    assert np.array_equal(out.numpy(), getattr(np, name)(a, b))
    assert np.array_equal(minitorch.logical_not(minitorch.tensor(a)).numpy(), np.logical_not(a))


def test_matches_torch():
    torch = pytest.importorskip("torch")
    v = VALUES.reshape(2, 4)
    m, t = minitorch.tensor(v), torch.tensor(v)
    for f in (lambda M, x: x.bool(), lambda M, x: M.any(x, 1), lambda M, x: M.all(x, 0),
              lambda M, x: M.logical_not(x), lambda M, x: M.logical_xor(x, x.flip(1))):
        assert f(minitorch, m).tolist() == f(torch, t).tolist()
