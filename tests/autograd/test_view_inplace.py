"""In-place ops and views under autograd, against PyTorch (csrc/autograd/views.c).

A view knows its base and shares its version counter. An in-place op on a view gives the base a
CopySlices node; a view whose base (or another view of it) changed in place gets an
AsStridedBackward0 over the base's new history when its grad_fn is next read. Views PyTorch will
not rebase (made in no_grad mode, by unbind/split/chunk, by an autograd.Function, of a leaf)
raise PyTorch's errors. Each case runs in both libraries from the same inputs: the same values,
gradients, requires_grad and node names, or the same error."""
import numpy as np
import pytest

import minitorch
from helpers import torch

pytestmark = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
Y = rng.standard_normal(4)


def name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def fresh(lib):
    """A tensor that needs no grad (an input that does joins it through a view)."""
    return lib.zeros(3, 4, dtype=lib.float64)


# Each case is fn(lib, x, y) -> (output, [tensors whose grad_fn names and requires_grad are
# compared]); x (3, 4) and y (4,) are leaves that require grad.

def base_changed_then_view(lib, x, y):
    """The issue's first case: PyTorch rebases v (AsStridedBackward0 over a's MulBackward0)."""
    a = x.clone()
    v = a[:2]
    a.mul_(3)
    return v * 1, [v, a]


def view_changed_then_base(lib, x, y):
    a = x.clone()
    v = a[1:]
    v.mul_(2)
    return a * 1, [a, v]


def sibling_after_view_changed(lib, x, y):
    a = x.clone()
    v, w = a[1:], a[:2]
    v.mul_(2)
    return w * w, [w, v, a]


def view_of_view(lib, x, y):
    a = x.clone()
    v = a[1:]
    w = v[:, 1:]
    assert w._base is a and v._base is a
    w.mul_(y[1:])
    return a + v.sum(), [w, v, a]


def several_in_sequence(lib, x, y):
    a = x.clone()
    v = a[1:]
    v.mul_(2)
    v.add_(y)
    a.sin_()
    v.div_(y.exp())
    a[0].mul_(3)
    a.exp_()  # saves its result: the last change
    return a * v.sum(), [a, v]


def steps(lib, x, y):
    a = x.clone()
    a[:, ::2].mul_(y[::2])
    a[::2, 1:3].add_(1)
    a[::2].div_(y.exp())
    return a, [a]


def transposes(lib, x, y):
    h = x.clone()
    h.t().mul_(2)
    h.t()[1].mul_(y[:3])
    h.t().add_(y[1:])
    return h * h, [h]


def permuted_chain(lib, x, y):
    a = x.clone().view(3, 2, 2)
    a.permute(2, 0, 1)[0].mul_(2)
    a.transpose(0, 2)[1, :, 0].add_(y[:2])
    return a.view(3, 4), [a]


def inplace_transpose_of_view(lib, x, y):
    """t_()/transpose_() change a view's geometry, not its base's data: no CopySlices; the view
    is rebased with its new geometry when its base changes."""
    a = x.clone()
    v = a[1:]
    v.t_()
    w = v * 2
    v.mul_(3)
    a[0].transpose_(0, 0)
    a.add_(1)
    return a * w.sum() + v.t().sum(0), [v, a, w]


def setitem(lib, x, y):
    a = x.clone()
    a[0] = y
    a[1:, 2] = 5.0
    a[2, :2] = y[2:] * 3
    return a * 2, [a]


def augmented_assignment_on_views(lib, x, y):
    """a[:, 1] += v is an in-place op on the view, then a copy of it into a new view."""
    a = x.clone()
    a[:, 1] += y[:3]
    a[0] *= 2
    a[1:, 2:] /= y[2:].exp()
    return a, [a]


def setitem_into_zeros(lib, x, y):
    a = fresh(lib)
    w = a[2]
    a[1] = y * 2
    a[:, 0] = x[:, 1]
    return w + a[0], [a, w]


def copy_into_fresh(lib, x, y):
    a = lib.zeros(4, dtype=lib.float64)
    a[1:3].copy_(y[:2])
    return a, [a]


def relu_inplace_on_view(lib, x, y):
    a = x.clone()
    lib.nn.functional.relu(a[1:], inplace=True)
    return a * y, [a]


def index_put_on_view(lib, x, y):
    a = x.clone()
    a[1:][lib.tensor([0, 1]), lib.tensor([2, 3])] = y[:2]
    a[0].index_put_((lib.tensor([1, 3]),), y[2:], accumulate=True)
    return a, [a]


def saving_formulas_on_views(lib, x, y):
    a = x.clone()
    v = a[:, 1:]
    v.masked_fill_(v > 0, 0.5)
    a[1].clamp_(-0.5, 0.5)
    a[:, 0].pow_(2)
    a[0].div_(y.exp())
    a[2].exp_()  # saves its result: the last change
    return a * 1, [a]


def fills_on_views(lib, x, y):
    a = x.clone()
    a[1].zero_()
    a[:, 1].fill_(y.sum())
    a.as_strided((2, 2), (4, 1), 1).mul_(3)
    return a, [a]


def other_view_ops(lib, x, y):
    a = x.clone()
    a.unsqueeze(0)[0, 1].mul_(2)
    a.narrow(1, 1, 2).mul_(y[:2])
    a.reshape(12)[::3].mul_(2)  # a view of a, or of a copy when a is stored transposed
    a.reshape(2, 6)[1].add_(1)
    a.as_strided((3,), (5,)).mul_(y[:3])  # the diagonal
    a.unsqueeze(1).squeeze(1)[2].neg_()
    a.flatten()[5:].sub_(1)
    return a, [a]


def expanded_view_read(lib, x, y):
    a = x.clone()
    e = a[:1].expand(3, 4)
    a.mul_(2)
    return e * y, [e, a]


def scaled_then_changed(lib, x, y):
    """`v * 2` keeps no v (PyTorch's MulBackward keeps self only for other's gradient): changing
    v's base afterwards is no error (test_saved_tensors_changed_later: `v * v` keeps v)."""
    a = x.clone()
    e = a.expand(2, 3, 4)
    out = e * 2 + a[1:].mul(3).sum() + y
    a.mul_(2)
    return out + e, [e, a]


def modified_under_no_grad(lib, x, y):
    a = x.clone()
    v = a[1:]
    w = a[:2]
    with lib.no_grad():
        a[0].mul_(2)
    return v * w, [v, w, a]


def inplace_on_composite_results(lib, x, y):
    """matmul's and reshape's results are no views of their intermediates (PyTorch's
    _unsafe_view): an in-place op on them is an ordinary one, no CopySlices."""
    r = lib.matmul(x.reshape(3, 1, 4), y)
    t = x.clone().t().reshape(-1)  # a copy of the clone, or a view of it when x is stored transposed
    r.mul_(2)
    t.add_(1)
    assert r._base is None
    return r.sum() * t, [r, t]


def other_view_of_fresh_base(lib, x, y):
    a = fresh(lib)
    w = a[0]
    assert not w.requires_grad
    a[1:].copy_(x[1:])
    return w + a[2], [w, a]


CASES = {}
for fn in (augmented_assignment_on_views, base_changed_then_view, view_changed_then_base, sibling_after_view_changed,
           view_of_view, several_in_sequence, steps, transposes, inplace_transpose_of_view, permuted_chain, setitem, setitem_into_zeros,
           copy_into_fresh, relu_inplace_on_view, index_put_on_view, saving_formulas_on_views, fills_on_views,
           other_view_ops, expanded_view_read, scaled_then_changed, modified_under_no_grad, inplace_on_composite_results,
           other_view_of_fresh_base):
    CASES[fn.__name__] = fn


def run(lib, fn, layout):
    """fn's output, the names and requires_grad of its probes, and x's and y's gradients. In the
    transposed layout x (and so x.clone(), a base) is stored column by column."""
    x = lib.tensor(X) if layout == "contiguous" else lib.tensor(np.ascontiguousarray(X.T)).t()
    x = x.detach().requires_grad_()
    y = lib.tensor(Y, requires_grad=True)
    out, probes = fn(lib, x, y)
    seen = [(name(p), p.requires_grad) for p in probes]
    w = np.random.default_rng(1).standard_normal(tuple(out.shape))
    (out * lib.tensor(w)).sum().backward()
    grads = [None if t.grad is None else np.asarray(t.grad.tolist()) for t in (x, y)]
    return np.asarray(out.tolist()), seen, grads


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_as_pytorch(case, layout):
    out, seen, grads = run(minitorch, CASES[case], layout)
    t_out, t_seen, t_grads = run(torch, CASES[case], layout)
    np.testing.assert_allclose(out, t_out, rtol=1e-10, atol=1e-12)
    assert seen == t_seen
    for g, tg in zip(grads, t_grads):
        assert (g is None) == (tg is None)
        if tg is not None:
            np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)


def test_copy_slices_links_as_pytorch():
    for lib in (minitorch, torch):
        x = lib.tensor(X, requires_grad=True)
        a = x.clone()
        a[1:].mul_(lib.tensor(Y, requires_grad=True))
        nexts = [None if f is None else type(f).__name__ for f, _ in a.grad_fn.next_functions]
        assert nexts == ["CloneBackward0", "AccumulateGrad"], lib
        v = a[1:]
        a.add_(1)
        assert [type(f).__name__ for f, _ in v.grad_fn.next_functions] == ["AddBackward0"]


# ---- errors: the same class and message ----

def leaf_view(lib, x):
    x[:2].mul_(2)


def leaf_view_setitem(lib, x):
    x[0] = 1.0


def leaf(lib, x):
    x.add_(1)


def no_grad_view_of_leaf(lib, x):
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)


def no_grad_view_modified(lib, x):
    a = x.clone()
    with lib.no_grad():
        v = a[:2]
    v.mul_(2)


def no_grad_view_base_modified(lib, x):
    a = x.clone()
    with lib.no_grad():
        v = a[:2]
    a.mul_(2)
    v.sum()


def view_of_no_grad_view(lib, x):
    a = x.clone()
    with lib.no_grad():
        v = a[1:]
    v[:1].mul_(2)


def no_grad_view_of_view(lib, x):
    a = x.clone()
    v = a[1:]
    with lib.no_grad():
        w = v[:1]
    w.mul_(2)


def no_grad_view_of_fresh_base(lib, x):
    a = lib.zeros(3, 4, dtype=lib.float64)
    with lib.no_grad():
        v = a[0]
    v.mul_(x[0])


def multi(op, then):
    def fn(lib, x):
        a = x.clone()
        pieces = eval(f"a.{op}")  # noqa: S307 - our own source
        if then == "piece":
            pieces[1].mul_(2)
        elif then == "piece_view":
            pieces[1][0].mul_(2)
        else:
            a.mul_(2)
            pieces[1].sum()
    return fn


def multi_of_fresh_base(lib, x):
    a = lib.zeros(3, 4, dtype=lib.float64)
    a.unbind()[1].mul_(x[0])


def expanded_overlap(lib, x):
    a = x.clone()
    a[:1].expand(3, 4).mul_(2)


def expanded_overlap_fresh(lib, x):
    lib.zeros(1, 4, dtype=lib.float64).expand(3, 4).add_(x)


def twice_without_retain_graph(lib, x):
    a = x.clone()
    a[1:].add_(1)
    s = a.sum()
    s.backward()
    s.backward()


class _Functions:
    """autograd.Function subclasses per library, made once."""

    cache = {}

    @classmethod
    def get(cls, lib, kind):
        key = (lib.__name__, kind)
        if key not in cls.cache:
            class F(lib.autograd.Function):
                @staticmethod
                def forward(ctx, t):
                    return t.view_as(t) if kind == "view" else t

                @staticmethod
                def backward(ctx, g):
                    return g

            cls.cache[key] = F
        return cls.cache[key]


def function_view_base_modified(lib, x):
    a = x * 1
    y = _Functions.get(lib, "view").apply(a)
    a.mul_(2)
    y.sum()


def function_view_modified(lib, x):
    y = _Functions.get(lib, "view").apply(x * 1)
    y.mul_(2)


def function_input_returned_modified(lib, x):
    y = _Functions.get(lib, "identity").apply(x * 1)
    y.add_(1)


ERRORS = {f.__name__: f for f in (leaf_view, leaf_view_setitem, leaf, no_grad_view_of_leaf, no_grad_view_modified,
                                  no_grad_view_base_modified, view_of_no_grad_view, no_grad_view_of_view,
                                  no_grad_view_of_fresh_base, multi_of_fresh_base, expanded_overlap,
                                  expanded_overlap_fresh, twice_without_retain_graph, function_view_base_modified,
                                  function_view_modified, function_input_returned_modified)}
for op in ("unbind()", "split(2)", "chunk(2)", "split([1, 2])", "unbind(1)"):
    for then in ("piece", "piece_view", "base"):
        ERRORS[f"{op}_{then}"] = multi(op, then)


def error_of(lib, fn):
    x = lib.tensor(X, requires_grad=True)
    with pytest.raises(Exception) as info:
        fn(lib, x)
    return info.value


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_pytorch(case):
    e, t_e = error_of(minitorch, ERRORS[case]), error_of(torch, ERRORS[case])
    assert type(e) is type(t_e)
    assert str(e) == str(t_e)


def test_saved_tensors_changed_later():
    """`a.mul_(a)` saves its other input before the op changes it: backward raises, as in PyTorch
    (it read the changed values, a wrong gradient); so does a saved result of an in-place op on a
    view once another view of the same base changes."""
    for lib in (minitorch, torch):
        x = lib.tensor(X, requires_grad=True)
        a = x * 1
        a.mul_(a)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            a.sum().backward()
        v = (x * 1)[1:]
        v.mul_(v)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            v.sum().backward()
        a = x.clone()
        a[2].exp_()  # saves its result, a view of a
        a[0].mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            a.sum().backward()


def test_retain_graph_and_retain_grad():
    results = []
    for lib in (minitorch, torch):
        x = lib.tensor(X, requires_grad=True)
        a = x.clone()
        v = a[1:]
        v.retain_grad()
        a.retain_grad()
        w = a[:2]
        w.retain_grad()
        v.mul_(2)
        s = (a * a).sum() + (v * w[1:]).sum()
        s.backward(retain_graph=True)
        s.backward()
        results.append([np.asarray(t.grad.tolist()) for t in (x, a, v, w)])
    for g, tg in zip(*results):
        np.testing.assert_allclose(g, tg)


def test_double_backward_through_copy_slices():
    results = []
    for lib in (minitorch, torch):
        x = lib.tensor(X, requires_grad=True)
        a = x * x
        a[1:].mul_(x[:2])
        (g,) = lib.autograd.grad((a * a).sum(), x, create_graph=True)
        (g * g).sum().backward()
        results.append((np.asarray(g.tolist()), np.asarray(x.grad.tolist())))
    for m, t in zip(*results):
        np.testing.assert_allclose(m, t)


def test_double_backward_through_saved_self():
    """An in-place op keeps self as it was for its backward, with self's history before the op
    (PyTorch's self.clone()): the second derivative reaches it."""
    results = []
    for lib in (minitorch, torch):
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(Y + 1, requires_grad=True)
        a = x * x
        a.mul_(y)
        a.div_(y.exp())
        gx, gy = lib.autograd.grad((a * a).sum(), (x, y), create_graph=True)
        ((gx * gx).sum() + (gy * gy).sum()).backward()
        results.append([np.asarray(t.tolist()) for t in (gx, gy, x.grad, y.grad)])
    for m, t in zip(*results):
        np.testing.assert_allclose(m, t, rtol=1e-10)


def test_view_bookkeeping_as_pytorch():
    for lib in (minitorch, torch):
        x = lib.tensor(X, requires_grad=True)
        a = x.clone()
        v = a[1:]
        assert v._is_view() and v._base is a and v[0]._base is a and not a._is_view() and a._base is None
        d, data = a.detach(), a.data
        assert not d._is_view() and d._base is None and not data._is_view()
        v.mul_(2)
        assert v._version == a._version == d._version == 1 and data._version == 0
        i = lib.arange(6)
        assert i[2:]._is_view() and i[2:]._base is i
        with lib.no_grad():
            w = a[:1]
        assert w.requires_grad and w.grad_fn is None and w._is_view()
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            v.detach_()
        z = lib.zeros(3)
        u = z[1:]
        assert not u.requires_grad
        z[:1].copy_(lib.ones(1, requires_grad=True))
        assert u.requires_grad and z.requires_grad and type(z.grad_fn).__name__ == "CopySlices"


def test_graphs_are_freed():
    """A saved view does not hold its base, whose later history may lead back to the node that
    saved it: no cycle, where PyTorch's SavedVariable keeps one."""

    def live():
        return minitorch._C._live_objects()["nodes"]

    def step():
        x = minitorch.tensor(X, requires_grad=True)
        a = x.clone()
        v, w = a[1:], a[:2]
        v.mul_(2)
        a.add_(1)
        (w * v[:1]).sum().backward()
        b = minitorch.zeros(3, 4, dtype=minitorch.float64)
        b[0] = x[1]
        b.sum()  # dropped without a backward
        h = minitorch.zeros(3, 4, dtype=minitorch.float64)
        h[1:] = h[:-1] * x[1:]  # h's CopySlices reaches the mul that saved h[:-1]: PyTorch leaks it
        a = x.clone()
        a.add_(a[0] * x[0])

    for _ in range(3):
        step()
    start = live()
    for _ in range(50):
        step()
    assert live() - start <= 2
