"""Backward formulas whose chain of ops grows with the input: cumprod's backward under
create_graph (PyTorch's O(n^2) path) keeps about seven intermediates per element of a line, past
the 32 its scratch list holds in place (ops/op_chain.h), so the list grows on the heap. Values and
second derivatives against PyTorch; tests/leaks checks that nothing is left behind."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")


def grads(lib, a, w, dim):
    x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
    y = (x.cumprod(dim) * lib.tensor(w, dtype=lib.float64)).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    return np.array(g.detach().tolist()), np.array(gg.tolist())


@pytest.mark.parametrize("n", [3, 12, 40])
@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_double_backward_with_zeros_on_long_lines(n, dim):
    rng = np.random.default_rng(n)
    a = rng.uniform(0.5, 1.5, (3, n))
    a[0, 1] = 0.0  # one zero
    a[1, 0] = a[1, n - 1] = 0.0  # two, at the ends
    a = a if dim == 1 else a.T.copy()
    w = rng.uniform(-1, 1, a.shape)
    got_g, got_gg = grads(minitorch, a, w, dim)
    want_g, want_gg = grads(torch, a, w, dim)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_gg, want_gg, rtol=1e-10, atol=1e-12)
    assert np.any(got_gg != 0)  # the second derivative went through the ops, not zeros
