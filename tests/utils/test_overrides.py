"""minitorch.overrides: the __torch_function__ helpers, compared with torch.overrides."""
import pytest

import minitorch


def _libs():
    torch = pytest.importorskip("torch")
    return [minitorch, torch]


def _classes(lib):
    class Base:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("base", func.__name__, [t.__name__ for t in types], len(args))

    class Child(Base):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented if kwargs.get("defer") else ("child", [t.__name__ for t in types])

    class Refuses:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    return Base, Child, Refuses


def test_has_and_handle_as_torch():
    results = []
    for lib in _libs():
        o = lib.overrides
        Base, Child, Refuses = _classes(lib)
        t = lib.ones(2)

        def api(*args, **kwargs):
            return "plain"

        b, c = Base(), Child()
        row = [o.has_torch_function((t, 1)), o.has_torch_function((t, b)), o.has_torch_function_unary(t),
               o.has_torch_function_unary(c), o.has_torch_function_variadic(t, 2, c),
               o.handle_torch_function(api, (b, c), b, c), o.handle_torch_function(api, (b, c), b, c, defer=True),
               o.is_tensor_like(t), o.is_tensor_like(b), o.is_tensor_like([1])]
        with pytest.raises(TypeError) as err:
            o.handle_torch_function(api, (Refuses(),), 1)
        row.append(str(err.value).split(":")[0])
        results.append(row)
    assert results[0] == results[1]


def test_wrap_torch_function_dispatches():
    for lib in _libs():
        Base, _, _ = _classes(lib)

        @lib.overrides.wrap_torch_function(lambda x, y=None: (x,))
        def f(x, y=None):
            return "own"

        assert f(1) == "own"
        assert f(Base())[0] == "base"


def test_ignored_functions_are_torch_s():
    torch = pytest.importorskip("torch")
    ours = minitorch.overrides.get_ignored_functions()
    assert len(ours) > 40
    theirs = torch.overrides.get_ignored_functions()
    for f in ours:
        assert getattr(torch, f.__name__) in theirs, f.__name__
    assert minitorch.add not in ours


def test_tensor_method_or_property():
    assert minitorch.overrides.is_tensor_method_or_property(minitorch.Tensor.backward)
    assert not minitorch.overrides.is_tensor_method_or_property(len)


def _scalar_tensor_example(lib):
    """The tensor-like class of PyTorch's "Extending torch" notes: a multiple of the identity that
    implements mean and add itself and refuses everything else."""
    handled = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self.n, self.value = n, value

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func not in handled:
                return NotImplemented
            return handled[func](*args, **(kwargs or {}))

    handled[lib.mean] = lambda x: float(x.value) / x.n
    handled[lib.add] = lambda input, other, alpha=1: ("add", type(input).__name__, type(other).__name__, alpha)
    handled[lib.cat] = lambda tensors, dim=0: ("cat", len(tensors), dim)
    handled[lib.Tensor.mul] = lambda a, b: ("Tensor.mul", type(b).__name__)
    return ScalarTensor


def _run_example(lib):
    ScalarTensor = _scalar_tensor_example(lib)
    d = ScalarTensor(5, 2)
    out = [lib.mean(d), lib.add(lib.ones(2), d, alpha=3), lib.add(input=d, other=lib.ones(1)),
           lib.cat([lib.ones(2), d], dim=0), lib.ones(2).mul(d)]
    for call in (lambda: lib.sum(d), lambda: lib.stack([d, d])):
        with pytest.raises(TypeError, match=r"Multiple dispatch failed for '(torch|minitorch)\.(sum|stack)'; all "
                                            r"__torch_function__ handlers returned NotImplemented:\n\n  - tensor "
                                            r"subclass <class '.*ScalarTensor'>\n"):
            call()
    return out


def test_ops_hand_tensor_likes_to_their_torch_function():
    got = _run_example(minitorch)
    assert got == [0.4, ("add", "Tensor", "ScalarTensor", 3), ("add", "ScalarTensor", "Tensor", 1),
                   ("cat", 2, 0), ("Tensor.mul", "ScalarTensor")]
    try:
        import torch
    except ImportError:
        return
    assert _run_example(torch) == got


def test_failed_calls_without_tensor_likes_keep_their_error():
    class Plain:
        pass

    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor, not Plain"):
        minitorch.add(minitorch.ones(2), Plain())
    with pytest.raises(TypeError, match=r"must be Tensor, not str"):
        minitorch.mul(minitorch.ones(2), "x")
    t = minitorch.ones(3)
    assert minitorch.add(t, t).tolist() == [2.0, 2.0, 2.0]


def test_a_torch_function_that_raises_propagates_its_error():
    class Raises:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            raise KeyError("inner")

    with pytest.raises(KeyError, match="inner"):
        minitorch.exp(Raises())
