"""The comparison the tests/api audits share: one call written once as fn(lib), run under minitorch
and under PyTorch (when installed), its results or its exception compared through tests/helpers.py's
as_numpy and _related."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import _related, as_numpy

try:
    import torch
except ImportError:
    torch = None

# The inputs the audit tables share (float32 unless named otherwise).
R = np.random.default_rng(0)
A = R.standard_normal((3, 4)).astype(np.float32)
B = R.standard_normal((3, 4)).astype(np.float32)
V = R.standard_normal((4,)).astype(np.float32)
I = R.integers(0, 5, (3, 4)).astype(np.int64)  # noqa: E741 - int64
BO = R.random((3, 4)) > 0.5  # bool
SQ = R.standard_normal((4, 4)).astype(np.float32)


def _maker(array):
    """fn(lib): the array as a fresh tensor of lib."""
    return lambda lib: lib.tensor(array)


a, b, v, i, bo, sq = (_maker(x) for x in (A, B, V, I, BO, SQ))


def _is_tensor(x):
    return isinstance(x, minitorch.Tensor) or (torch is not None and isinstance(x, torch.Tensor))


def _plain(x):
    """A result in comparable form: tensors as (shape, dtype name, float64 or bool values,
    requires_grad); sequences item by item; dtypes and sizes by name and tuple."""
    if _is_tensor(x):
        got = as_numpy(x) if isinstance(x, minitorch.Tensor) else x.detach().cpu().numpy()
        kind = got.dtype.kind
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1],
                got if kind == "b" else got.astype(np.float64), x.requires_grad)
    if isinstance(x, (tuple, list)):
        return [_plain(y) for y in x]
    if isinstance(x, dict):
        return {k: _plain(y) for k, y in x.items()}
    if isinstance(x, minitorch.dtype) or (torch is not None and isinstance(x, torch.dtype)):
        return str(x).split(".")[-1]
    return x


def _assert_same(got, want, where="result"):
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys {got!r} vs PyTorch's {want!r}"
        for k in want:
            _assert_same(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r} vs PyTorch's {want!r}"
        for k, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{k}]")
    elif isinstance(want, tuple) and want and want[0] == "tensor":
        assert isinstance(got, tuple) and got[0] == "tensor", f"{where}: {got!r} is not a tensor"
        assert got[1] == want[1], f"{where}: shape {got[1]} != PyTorch's {want[1]}"
        assert got[2] == want[2], f"{where}: dtype {got[2]} != PyTorch's {want[2]}"
        assert got[4] == want[4], f"{where}: requires_grad {got[4]} != PyTorch's {want[4]}"
        np.testing.assert_allclose(got[3], want[3], atol=1e-4, rtol=1e-4, err_msg=where)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-5, nan_ok=True), f"{where}: {got} != {want}"
    else:
        assert got == want, f"{where}: {got!r} != PyTorch's {want!r}"


def _call(lib, fn):
    try:
        return _plain(fn(lib)), None
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return None, e


def same_call(fn):
    """fn(minitorch) and fn(torch) agree: both raise alike (related classes, the same first line),
    or both return the same results."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, err = _call(minitorch, fn)
        if torch is None:
            return
        want, t_err = _call(torch, fn)
    if err or t_err:
        assert err and t_err, f"minitorch: {err!r}, PyTorch: {t_err!r}"
        # related classes, or each library's own class of the same name (linalg.LinAlgError)
        assert _related(err, t_err) or type(err).__name__ == type(t_err).__name__, f"{err!r} vs PyTorch's {t_err!r}"
        # minitorch spells the legacy type names in its messages with its own name
        mine = str(err).split("\n")[0].replace("minitorch.", "torch.")
        assert mine == str(t_err).split("\n")[0], f"{err} != PyTorch's {t_err}"
        return
    _assert_same(got, want)


def table(known=frozenset()):
    """(cases, add): add(name, fn) appends fn as a pytest case named name to cases, expected to
    fail (strictly) where name is in `known`, the differences an audit found and left (with
    PyTorch installed: without it only minitorch's side runs, and passes)."""
    cases = []

    def add(name, fn):
        differs = torch is not None and name in known
        marks = [pytest.mark.xfail(strict=True, reason="a known difference")] if differs else []
        cases.append(pytest.param(fn, id=name, marks=marks))

    return cases, add


def missing_public_names(theirs, ours) -> list:
    """The public names (no leading underscore) of PyTorch's module or class `theirs` that
    minitorch's `ours` lacks: the audit's list of what is left to write."""
    return sorted(n for n in dir(theirs) if not n.startswith("_") and not hasattr(ours, n))
