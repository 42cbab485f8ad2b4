"""Tensor.register_hook and register_post_accumulate_grad_hook, and reading .grad of a non-leaf,
each run the same way in minitorch and PyTorch (where installed) and compared."""
import gc
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch

LIBS = [minitorch] + ([torch] if torch is not None else [])


def both(program):
    """program(lib) in each library; the results (nested lists/tuples of numbers or tensors)
    must agree."""
    results = [program(lib) for lib in LIBS]

    def plain(r):
        if isinstance(r, (list, tuple)):
            return [plain(x) for x in r]
        if hasattr(r, "detach"):
            return np.asarray(r.detach().tolist(), dtype=float)
        return r

    first = plain(results[0])
    for other in results[1:]:
        np.testing.assert_equal(plain(other), first)
    return results[0]


def test_a_hook_on_a_non_leaf_sees_and_replaces_its_gradient():
    def program(lib):
        seen = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: seen.append(g.clone()))
        y.register_hook(lambda g: g * 10)  # the next hooks and the graph see this one's result
        y.register_hook(lambda g: seen.append(g.clone()))
        (y * y).sum().backward()
        return seen, x.grad

    seen, grad = both(program)
    assert grad.tolist() == [80.0, 160.0, 240.0]


def test_a_hook_on_a_leaf_changes_what_is_accumulated():
    def program(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        x.register_hook(lambda g: g.clamp(min=0))
        (x * lib.tensor([3.0, -4.0])).sum().backward()
        (x * 2).sum().backward()
        return x.grad

    assert both(program).tolist() == [5.0, 2.0]


def test_removing_a_hook_and_hooks_outliving_their_tensor():
    def program(lib):
        calls = []
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        h = y.register_hook(lambda g: calls.append("removed"))
        y.register_hook(lambda g: calls.append("kept"))
        h.remove()
        z = y.sum()
        del y  # the hook belongs to the graph, as in PyTorch
        gc.collect()
        z.backward()
        return calls, x.grad

    calls, _ = both(program)
    assert calls == ["kept"]


def test_retain_grad_keeps_the_hooked_gradient():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        y = x + 1
        y.retain_grad()
        y.register_hook(lambda g: g + 100)
        (y * 2).sum().backward()
        return y.grad, x.grad

    y_grad, x_grad = both(program)
    assert y_grad.tolist() == [102.0, 102.0] and x_grad.tolist() == [102.0, 102.0]


def test_hooks_run_for_autograd_grad_and_with_create_graph():
    def program(lib):
        x = lib.tensor([2.0], requires_grad=True)
        x.register_hook(lambda g: g * 3)
        y = x ** 3
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    g, gg = both(program)
    assert g.tolist() == [36.0]


def test_post_accumulate_grad_hook_sees_the_accumulated_leaf():
    def program(lib):
        seen = []
        w = lib.tensor([1.0, 2.0], requires_grad=True)

        def sgd(p):
            seen.append(p.grad.clone())
            with lib.no_grad():
                p.sub_(0.5 * p.grad)

        w.register_post_accumulate_grad_hook(sgd)
        (w * w).sum().backward()
        return seen, w

    seen, w = both(program)
    assert w.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("case", ["no_grad", "post_on_non_leaf", "changes_size", "changes_dtype", "not_a_tensor"])
def test_hook_errors_match_pytorch(case):
    def program(lib):
        x = lib.ones(3, requires_grad=case != "no_grad")
        try:
            if case == "no_grad":
                x.register_hook(lambda g: g)
            elif case == "post_on_non_leaf":
                (x * 2).register_post_accumulate_grad_hook(lambda p: None)
            else:
                y = x * 2

                def bad(g):
                    return {"changes_size": lambda: g[:2], "changes_dtype": lambda: g.double(),
                            "not_a_tensor": lambda: 3}[case]()

                y.register_hook(bad)
                y.sum().backward()
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e).replace("minitorch.", "torch.").split("\n")[0]
        return "no error"

    message = both(program)
    assert message != "no error"


def test_reading_the_grad_of_a_non_leaf_warns_as_pytorch_does():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert y.grad is None
            assert x.grad is None  # a leaf: no warning
            y.retain_grad()
            assert y.grad is None  # retained: no warning
        assert len(w) == 1 and issubclass(w[0].category, UserWarning), lib.__name__
        assert "not a leaf Tensor is being accessed" in str(w[0].message)
