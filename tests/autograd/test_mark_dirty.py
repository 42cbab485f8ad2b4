"""autograd.Function's ctx.mark_dirty (forward changes an input in place and returns it: the
output is that input, its history now the Function's, a view's base rebased through CopySlices)
and ctx.set_materialize_grads; PyTorch's rules and errors. Compared with torch: identity,
versions, grad_fn names, gradients, error classes and messages."""
import numpy as np
import pytest

import minitorch
from helpers import same_error

torch = pytest.importorskip("torch")

W = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def add_one(ctx, x):
    x.add_(1)
    ctx.mark_dirty(x)
    return x


def mul_by(ctx, x, w):
    x.mul_(w)
    ctx.mark_dirty(x)
    ctx.save_for_backward(x, w)
    return x


def mul_by_backward(ctx, g):
    x, w = ctx.saved_tensors
    return g * w, g * x / w


def forgets(ctx, x):  # marks x dirty and returns another tensor
    x.add_(1)
    ctx.mark_dirty(x)
    return x * 1


def functions(lib):
    """AddOne, MulBy, Forgets: Functions of lib made from the forwards and backwards above."""
    def make(name, forward, backward):
        return type(name, (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    return (make("AddOne", add_one, lambda ctx, g: g * 2), make("MulBy", mul_by, mul_by_backward),
            make("Forgets", forgets, lambda ctx, g: g))


def grad_of(t):
    return np.array(t.grad.tolist())


def nonleaf(lib):
    leaf = lib.tensor(W, requires_grad=True)
    return leaf, leaf * 1


def case_nonleaf(lib):
    AddOne, _, _ = functions(lib)
    leaf, a = nonleaf(lib)
    v0 = a._version
    out = AddOne.apply(a)
    facts = (out is a, a._version - v0, type(a.grad_fn).__name__, a.is_leaf, a.tolist())
    (a * lib.tensor(W)).sum().backward()
    return facts, grad_of(leaf)


def case_input_without_grad(lib):
    _, MulBy, _ = functions(lib)
    x = lib.ones(2, 3)
    w = lib.tensor(W, requires_grad=True)
    out = MulBy.apply(x, w)
    facts = (out is x, x.requires_grad, type(x.grad_fn).__name__, x.is_leaf, x.tolist())
    (out ** 2).sum().backward()
    return facts, grad_of(w)


def case_view_of_nonleaf(lib):
    AddOne, _, _ = functions(lib)
    leaf, base = nonleaf(lib)
    row = base[1]
    out = AddOne.apply(row)
    facts = (out is row, type(base.grad_fn).__name__, type(row.grad_fn).__name__,
             [type(f).__name__ for f, _ in base.grad_fn.next_functions], base.tolist())
    (base * lib.tensor(W)).sum().backward()
    return facts, grad_of(leaf)


def case_no_grad_needed(lib):
    AddOne, _, _ = functions(lib)
    x = lib.ones(3)
    out = AddOne.apply(x)
    return (out is x, x.requires_grad, x.grad_fn is None, x.tolist()), None


@pytest.mark.parametrize("case", [case_nonleaf, case_input_without_grad, case_view_of_nonleaf, case_no_grad_needed])
def test_mark_dirty_like_torch(case):
    got_facts, got_grad = case(minitorch)
    want_facts, want_grad = case(torch)
    assert got_facts == want_facts
    if want_grad is not None:
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)


ERRORS = {
    "leaf_requires_grad": lambda lib: functions(lib)[0].apply(lib.ones(3, requires_grad=True)),
    "not_returned": lambda lib: functions(lib)[2].apply(lib.ones(3, requires_grad=True) * 1),
    "multi_output_view": lambda lib: functions(lib)[0].apply((lib.ones(3, requires_grad=True) * 1).unbind()[0]),
    "view_of_leaf": lambda lib: functions(lib)[0].apply(lib.ones(2, 3, requires_grad=True)[0]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_mark_dirty_errors_like_torch(name):
    same_error(ERRORS[name])


def test_saved_dirty_tensor_then_changed_again_is_caught():
    _, MulBy, _ = functions(minitorch)
    x = minitorch.ones(3)
    w = minitorch.full((3,), 2.0, requires_grad=True)
    out = MulBy.apply(x, w)
    out.add_(1)  # the saved x changes after the Function saved it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def materialize_case(lib, materialize):
    class TwoOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 * 2 if g1 is not None else None

    seen = []
    x = lib.ones(3, requires_grad=True)
    a, _ = TwoOut.apply(x)
    a.sum().backward()
    return seen, grad_of(x)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads_like_torch(materialize):
    got_seen, got_grad = materialize_case(minitorch, materialize)
    want_seen, want_grad = materialize_case(torch, materialize)
    assert got_seen == want_seen
    np.testing.assert_allclose(got_grad, want_grad)
