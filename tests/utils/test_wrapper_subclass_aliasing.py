"""Wrapper subclasses (Tensor._make_wrapper_subclass with __torch_dispatch__) that implement views
with return_and_correct_aliasing, their .data, and double backward through them: the same
program under minitorch and PyTorch, what each observes compared."""
import importlib

import pytest

import minitorch

try:
    import torch
except ImportError:
    torch = None

LIBS = [minitorch] + ([torch] if torch is not None else [])
needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def wrapper_class(lib, log=None, correct_aliasing=True):
    """A wrapper of one tensor (elem) whose __torch_dispatch__ runs each op on the elems and
    wraps the tensor results, as PyTorch's subclass_zoo WrapperTensor does."""
    dispatch = importlib.import_module(f"{lib.__name__}.utils._python_dispatch")
    pytree = importlib.import_module(f"{lib.__name__}.utils._pytree")

    class W(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem, requires_grad=False):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(),
                                                  storage_offset=elem.storage_offset(), dtype=elem.dtype,
                                                  device=elem.device, requires_grad=requires_grad)
            r.elem = elem
            return r

        def __tensor_flatten__(self):
            return ["elem"], None

        @staticmethod
        def __tensor_unflatten__(inner, meta, outer_size, outer_stride):
            return W(inner["elem"])

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if log is not None:
                log.append(str(func))

            def unwrap(t):
                return t.elem if isinstance(t, W) else t

            def wrap(t):
                return W(t) if isinstance(t, lib.Tensor) and not isinstance(t, W) else t

            out = pytree.tree_map(wrap, func(*pytree.tree_map(unwrap, args), **pytree.tree_map(unwrap, kwargs)))
            if correct_aliasing:
                return dispatch.return_and_correct_aliasing(func, args, kwargs, out)
            return out

    return W


def _geometry(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


def _views(lib):
    W = wrapper_class(lib)
    x = W(lib.arange(24.0).reshape(2, 3, 4))
    views = {
        "view": x.view(6, 4), "t": x[0].t(), "transpose": x.transpose(0, 2), "permute": x.permute(2, 0, 1),
        "select": x[1], "slice": x[:, 1:], "unsqueeze": x.unsqueeze(1), "squeeze": x[:1].squeeze(0),
        "expand": x[:, :1].expand(2, 5, 4), "diagonal": x.diagonal(0, 1, 2), "alias": lib.ops.aten.alias.default(x),
        "as_strided": x.as_strided((3, 2), (1, 3), 2),
    }
    return x, views


@needs_torch
def test_view_results_are_views_of_the_wrapper_as_torch():
    got, want = _views(minitorch), _views(torch)
    for name in want[1]:
        g, w = got[1][name], want[1][name]
        base = got[0] if g._base is not None and g._base is got[0] else g._base
        assert type(g).__name__ == type(w).__name__ == "W", name
        assert _geometry(g) == _geometry(w), name
        assert g._is_view() == w._is_view() and (base is got[0]) == (w._base is want[0]), name
        assert g.elem.tolist() == w.elem.tolist(), name


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_version_counter_shared_with_views_and_detach(lib):
    W = wrapper_class(lib)
    x = W(lib.arange(6.0).reshape(2, 3))
    v, s, d = x.view(3, 2), x[0], x.detach()
    assert (x._version, v._version, s._version, d._version) == (0, 0, 0, 0)
    x.add_(1)
    assert (x._version, v._version, s._version, d._version) == (1, 1, 1, 1)
    v.mul_(2)
    assert (x._version, v._version, s._version, d._version) == (2, 2, 2, 2)
    assert not d._is_view() and d._base is None and type(d) is W
    assert x.elem.tolist() == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_inplace_view_ops_change_the_wrappers_geometry(lib):
    W = wrapper_class(lib)
    x = W(lib.arange(6.0).reshape(2, 3))
    assert x.t_() is x and _geometry(x) == ((3, 2), (1, 3), 0) == _geometry(x.elem)
    assert x.unsqueeze_(0) is x and _geometry(x) == ((1, 3, 2), (3, 1, 3), 0)
    assert x.squeeze_(0) is x and _geometry(x) == ((3, 2), (1, 3), 0)
    assert x.transpose_(0, 1) is x and _geometry(x) == ((2, 3), (3, 1), 0)
    assert x.swapdims_(0, 1) is x and _geometry(x) == ((3, 2), (1, 3), 0)
    # without return_and_correct_aliasing the wrapper keeps its geometry (its elem changes), as in PyTorch
    Plain = wrapper_class(lib, correct_aliasing=False)
    y = Plain(lib.arange(6.0).reshape(2, 3))
    y.t_()
    assert _geometry(y) == ((2, 3), (3, 1), 0) and _geometry(y.elem) == ((3, 2), (1, 3), 0)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_inplace_and_out_return_the_argument(lib):
    W = wrapper_class(lib)
    x = W(lib.ones(2, 3))
    assert x.add_(1) is x and x.elem.tolist() == [[2.0] * 3] * 2
    out = W(lib.empty(2, 3))
    assert lib.add(x, 1, out=out) is out and out.elem.tolist() == [[3.0] * 3] * 2
    assert type(x + 1) is W and (x + 1) is not x


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_aliasing_checks_as_torch(lib):
    dispatch = importlib.import_module(f"{lib.__name__}.utils._python_dispatch")
    x = lib.ones(2)
    out = dispatch.return_and_correct_aliasing(lib.ops.aten.add.Tensor, (x, x), {}, x + x)
    assert out.tolist() == [2.0, 2.0]
    w = wrapper_class(lib)(lib.ones(6))
    with pytest.raises(AssertionError, match="But expected types to match"):
        dispatch.return_and_correct_aliasing(lib.ops.aten.view.default, (w, [3, 2]), {}, lib.ones(3, 2))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_data_of_a_wrapper_is_its_class_detach(lib):
    log = []
    W = wrapper_class(lib, log)
    x = W(lib.arange(3.0), requires_grad=True)
    log.clear()
    d = x.data
    assert log == ["aten.detach.default"]
    assert type(d) is W and not d.requires_grad and d.grad_fn is None and not d._is_view()
    assert d.elem.tolist() == [0.0, 1.0, 2.0]
    d.add_(1)  # .data's counter is its own: x's does not move
    assert x._version == 0 and x.elem.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_double_backward_through_a_wrapper(lib):
    W = wrapper_class(lib)
    a = W(lib.tensor([1.0, 2.0, 3.0]), requires_grad=True)
    (g,) = lib.autograd.grad((a * a * a).sum(), a, create_graph=True)
    assert type(g) is W and g.requires_grad and g.elem.tolist() == [3.0, 12.0, 27.0]
    g.sum().backward()
    assert type(a.grad) is W and a.grad.elem.tolist() == [6.0, 12.0, 18.0]
    b = W(lib.tensor([0.5, -1.0]), requires_grad=True)
    (gb,) = lib.autograd.grad((b.sin() * b).sum(), b, create_graph=True)
    (ggb,) = lib.autograd.grad(gb.sum(), b)
    plain = lib.tensor([0.5, -1.0], dtype=lib.float32)
    want = (2 * plain.cos() - plain * plain.sin()).tolist()
    assert type(ggb) is W and ggb.elem.tolist() == pytest.approx(want, rel=1e-6)


SECOND_ORDER = {
    "view": lambda lib, a: (a.view(2, 2) ** 3).sum(),
    "t_matmul": lambda lib, a: (a.view(2, 2).t() @ a.view(2, 2)).sum(),
    "slices": lambda lib, a: (a[1:] * a[:-1]).pow(2).sum(),
    "exp": lambda lib, a: a.exp().mul(a).sum(),
    "mean": lambda lib, a: (a - a.mean()).pow(2).mean(),
    "tanh": lambda lib, a: lib.tanh(a).sum(),
    "sigmoid": lambda lib, a: lib.sigmoid(a * 2).sum(),
    "softmax": lambda lib, a: lib.softmax(a, 0).pow(2).sum(),
    "mm": lambda lib, a: (a.view(2, 2) @ a.view(2, 2)).sum(),
}


@needs_torch
@pytest.mark.parametrize("case", list(SECOND_ORDER))
def test_second_derivatives_through_a_wrapper_as_torch(case):
    """create_graph=True, then a backward of the gradient: the formulas' saved outputs and the
    zeros an index's gradient is written into are of the wrapper's class too."""
    def go(lib):
        W = wrapper_class(lib)
        a = W(lib.tensor([0.5, -1.0, 2.0, 0.3]), requires_grad=True)
        (g,) = lib.autograd.grad(SECOND_ORDER[case](lib, a), a, create_graph=True)
        (gg,) = lib.autograd.grad(g.pow(2).sum(), a)
        return type(g).__name__, type(gg).__name__, gg.elem.tolist()

    got, want = go(minitorch), go(torch)
    assert got[:2] == want[:2] == ("W", "W")
    assert got[2] == pytest.approx(want[2], rel=1e-5, abs=1e-6)
