"""In-place ops through views that count in other elements than their base, against PyTorch:
view_as_real of a complex tensor, view_as_complex of a real one (csrc/autograd/views.c's
base_and_view). They are views of the base (._base), so writing through them gives the base a
CopySlices node, and a view whose base changed gets its history replayed (PyTorch names the node
after the view op: ViewAsRealBackward0). Each case runs in both libraries from the same inputs: the
same values, gradients and node names, or the same error."""
import numpy as np
import pytest

import minitorch
from helpers import torch

pytestmark = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

W = np.array([1 + 2j, 3 - 1j, 0.5 + 0.5j, -2 + 0.25j])
R = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.5]])


def name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def through_real(lib, case):
    """c = w * 2 (complex, a history), r = view_as_real(c) or of a part of c, written in place;
    the loss reads c."""
    w = lib.tensor(W, dtype=lib.complex128, requires_grad=True)
    s = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
    c = w * 2
    r = lib.view_as_real(c[1:] if case == "part" else c)
    if case == "setitem":
        r[0, 1] = 7.0
    elif case == "mul_":
        r.mul_(3)
    elif case == "column_add_":
        r[:, 0].add_(lib.arange(4, dtype=lib.float64))
    elif case == "from_tensor":
        r[:, 1] = s * 2
    elif case == "zero_":
        r.zero_()
    elif case == "part":
        r[1].mul_(-1)
    elif case == "base_changed":
        c.mul_(1j)
    weight = lib.tensor([1 + 1j, 2, 3j, -1], dtype=lib.complex128)
    loss = (c * weight).abs().sum() + (r * lib.arange(r.numel(), dtype=lib.float64).reshape(r.shape)).sum()
    loss.backward()
    return (c.detach().numpy(), r.detach().numpy(), name(c), name(r), w.grad.numpy(),
            None if s.grad is None else s.grad.numpy(), r._base is c)


@pytest.mark.parametrize("case", ["setitem", "mul_", "column_add_", "from_tensor", "zero_", "part", "base_changed"])
def test_writes_through_view_as_real_reach_the_base(case):
    got, want = through_real(minitorch, case), through_real(torch, case)
    for g, w in zip(got[:2], want[:2]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert got[2:4] == want[2:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-12, atol=1e-12)
    if want[5] is not None:
        np.testing.assert_allclose(got[5], want[5], rtol=1e-12)
    assert got[6] == want[6]


def through_complex(lib, case):
    """x = a * 1 (real (3, 2), a history), z = view_as_complex(x) written in place; the loss reads x."""
    a = lib.tensor(R, dtype=lib.float64, requires_grad=True)
    x = a * 1
    z = lib.view_as_complex(x)
    if case == "mul_":
        z.mul_(1j)
    elif case == "setitem":
        z[1] = 2 - 3j
    elif case == "base_changed":
        x.mul_(2)
    loss = (x * lib.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], dtype=lib.float64)).sum() + z.abs().sum()
    loss.backward()
    return x.detach().numpy(), name(x), name(z), a.grad.numpy(), z._base is x


@pytest.mark.parametrize("case", ["mul_", "setitem", "base_changed"])
def test_writes_through_view_as_complex_reach_the_base(case):
    got, want = through_complex(minitorch, case), through_complex(torch, case)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[1:3] == want[1:3]
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12)
    assert got[4] == want[4]


def test_view_as_real_of_a_leaf_refuses_in_place_writes():
    errors = []
    for lib in (minitorch, torch):
        w = lib.tensor(W, dtype=lib.complex128, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.view_as_real(w).mul_(2)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
